"""Nothing a submission leaves behind reaches the next one its worker grades.

Warm kernels are forked from the zygote the workers share (assignments/grading/shipped/zygote.py). The
LEFTOVERS pairs of the hostile corpus (tests/fixtures/hostile/build.py) are graded in
order by a single worker: each "leave_<case>" plants traces (files in /tmp, /dev/shm, the
scratch folder, home and the environment; a detached daemon ignoring SIGTERM and SIGHUP;
attributes added to numpy, json and builtins, os.environ, sys.modules and sys.path) and
checks that it sees them, then "leave_<case>_next" checks that it sees none of them.
"""
import importlib.util
import os

import pytest
from helpers import REPO, A, tree_digest

from assignments.grading.run import pipeline

HOSTILE = os.path.join(REPO, "tests", "fixtures", "hostile")


def build_leftovers(folder):
    spec = importlib.util.spec_from_file_location("hostile_build", os.path.join(HOSTILE, "build.py"))
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    build.build(folder, leftovers=True)
    return sorted(build.LEFTOVERS)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    submitted = str(tmp_path_factory.mktemp("leftovers"))
    cases = build_leftovers(submitted)
    before = tree_digest(submitted)
    results = pipeline.grade(A, submitted, str(tmp_path_factory.mktemp("graded")), workers=1)
    return {"cases": cases, "results": {s["student"]: s for s in results["submissions"]},
            "unchanged": tree_digest(submitted) == before}


def verdict(graded, student, name="rnn_cell_forward"):
    s = graded["results"][student]
    (e,) = [e for e in s["exercises"] if e["id"] == name]
    return e


def test_every_pair_was_graded(graded):
    assert set(graded["results"]) == {f"leave_{c}{n}" for c in graded["cases"] for n in ("", "_next")}
    assert graded["unchanged"]
    for s in graded["results"].values():
        assert s["status"] == "graded", (s["student"], s["message"], s["flags"])


@pytest.mark.parametrize("case", ["files", "module_state", "process"])
def test_the_planter_sees_what_it_planted(graded, case):
    """Else the next submission would find nothing because nothing was planted."""
    e = verdict(graded, f"leave_{case}")
    assert e["passed"], e["feedback"]


@pytest.mark.parametrize("case", ["environment", "files", "module_state", "process"])
def test_the_next_submission_finds_nothing(graded, case):
    e = verdict(graded, f"leave_{case}_next")
    assert e["passed"], e["feedback"]
    s = graded["results"][f"leave_{case}_next"]
    assert s["score"] == sum(x["max_score"] for x in s["exercises"])
