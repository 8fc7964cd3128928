"""autograde.py: nbgrader's Autograde in one conversion per notebook writes the autograded
notebooks and records the grades that nbgrader's two conversions do, on the sample class
and on tampered submissions (the sanitising steps restore what a learner changed)."""
import glob
import importlib.util
import json
import os

import pytest
from helpers import REPO, A, build_samples, comparable_notebook, course_pieces, gradebook_dump
from nbgrader.converters import Autograde

from assignments.grading.run import pipeline, worker
from assignments.grading.upstream import autograde


def comparable(path):
    """An autograded notebook as comparable_notebook makes it, the submitted cells' ids
    known (a deleted test cell comes back with a random id)."""
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    with open(path.replace("/autograded/", "/.nbgrader/submitted/"), encoding="utf-8") as f:
        submitted = {c.get("id") for c in json.load(f)["cells"]}
    return comparable_notebook(nb, submitted)


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    subs = build_samples(str(tmp_path_factory.mktemp("onepass")))
    spec = importlib.util.spec_from_file_location("hostile_build", os.path.join(REPO, "tests", "fixtures", "hostile", "build.py"))
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    hostile = str(tmp_path_factory.mktemp("tampered"))
    build.build(hostile)
    for case in build.TAMPERING:   # the tampered submissions join the sample class
        os.rename(os.path.join(hostile, case), os.path.join(subs, "submitted", case))
    students = ["ada", "dev", "eve", *build.TAMPERING]   # right, noisy, wrong, and tampered with
    graded = {}
    for converter in (Autograde, autograde.OnePassAutograde):
        mp = pytest.MonkeyPatch()
        mp.setattr(worker, "OnePassAutograde", converter)
        out = str(tmp_path_factory.mktemp(converter.__name__))
        try:
            with course_pieces():   # stock mode would run nbgrader's Autograde both times
                graded[converter] = (out, pipeline.grade(A, subs, out, workers=1, students=students))
        finally:
            mp.undo()
    return graded


def test_one_conversion_writes_what_two_do(both):
    (stock, stock_results), (ours, ours_results) = both[Autograde], both[autograde.OnePassAutograde]
    assert ours_results == stock_results
    paths = sorted(glob.glob(os.path.join(stock, "autograded", "*", A.id, "*.ipynb")))
    assert len(paths) >= 7
    for path in paths:
        assert comparable(path.replace(stock, ours)) == comparable(path), path
    assert gradebook_dump(f"sqlite:///{ours}/gradebook.db") == gradebook_dump(f"sqlite:///{stock}/gradebook.db")


def test_tampering_is_still_undone_and_flagged(both):
    _, results = both[autograde.OnePassAutograde]
    by = {s["student"]: s for s in results["submissions"]}
    assert by["edited_test_cell"]["score"] == by["ada"]["score"] == A.max_score
    assert any(f.startswith("tampered:edited:") for f in by["edited_imports"]["flags"])
