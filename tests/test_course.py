"""A course of several assignments on one engine: the engine names no assignment, the GRU
is graded like the RNN, and plain nbgrader's commands work on the course with our config."""
import glob
import os
import re
import shutil
import subprocess
import sys

import pytest
from helpers import REPO, build_samples
from nbgrader.api import Gradebook

from assignments.grading.authoring.generated import write_generated
from assignments.grading.contract.assignment import known, load
from assignments.grading.run import pipeline

GRADING = os.path.join(REPO, "assignments", "grading")


def test_the_engine_names_no_assignment():
    found = []
    for path in glob.glob(os.path.join(GRADING, "**", "*.py"), recursive=True):
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if re.search(r"rnn|lstm|gru|sigmoid|softmax", line, re.I):
                    found.append(f"{os.path.relpath(path, REPO)}:{number}: {line.strip()}")
    assert found == []


def test_every_assignment_keeps_the_contract():
    assert known() == ["gru_step_by_step", "rnn_step_by_step"]
    for aid in known():
        a = load(aid)
        assert a.id == aid and os.path.isfile(os.path.join(a.source_dir, a.notebook + ".ipynb"))
        assert [e.name for e in a.exercises] and a.max_score == 100
        for e in a.exercises:
            assert set(e.callees) <= set(a.by_name) and (not e.forward or e.forward in a.by_name)
        assert {m.function for m in a.catalog} <= set(a.by_name)
    with pytest.raises(KeyError, match="no assignment 'nope'"):
        load("nope")


@pytest.fixture(scope="module")
def gru_class(tmp_path_factory):
    subs = build_samples(str(tmp_path_factory.mktemp("samples")))
    out = tmp_path_factory.mktemp("graded")
    results = pipeline.grade(load("gru_step_by_step"), subs, str(out), workers=2)
    return {s["student"]: s for s in results["submissions"]}, str(out)


def test_an_independent_gru_earns_full_marks(gru_class):
    """Ada's GRU (samples/answers/gru_step_by_step/ada.py) was written apart from the reference."""
    subs, _ = gru_class
    assert subs["ada"]["status"] == "graded" and subs["ada"]["score"] == 100


@pytest.mark.parametrize("student,function,code", [
    ("ben", "gru_cell_forward", "gru_update_swapped"),
    ("chloe", "gru_cell_backward", "gru_da_prev_direct_path"),
    ("eve", "gru_backward", "gru_grads_not_accumulated"),
])
def test_a_planted_gru_mistake_fails_only_its_function(gru_class, student, function, code):
    subs, _ = gru_class
    for e in subs[student]["exercises"]:
        assert e["passed"] == (e["id"] != function), e
        if e["id"] == function:
            assert e["diagnoses"] == [code]


def test_two_assignments_keep_their_own_outputs(gru_class, sample_class):
    _, out = gru_class
    assert os.path.exists(os.path.join(out, "results", "gru_step_by_step", "results.json"))
    assert os.path.exists(os.path.join(sample_class["out"], "results", "rnn_step_by_step", "results.json"))


# the command line grades a class again, in a new process (the sample class is graded in-process): `make test` only
@pytest.mark.slow
def test_grade_command_grades_what_the_submissions_hold(tmp_path):
    subs = build_samples(str(tmp_path / "in"))
    run = subprocess.run([sys.executable, "-m", "assignments", "grade", "--submissions", subs, "--out",
                          str(tmp_path / "out"), "--quiet", "--assignment", "gru_step_by_step"],
                         cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert os.listdir(tmp_path / "out" / "results") == ["gru_step_by_step"]
    run = subprocess.run([sys.executable, "-m", "assignments", "grade", "--submissions", subs, "--out",
                          str(tmp_path / "out2"), "--quiet", "--assignment", "nope"], cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 2 and "no assignment 'nope'" in run.stderr


@pytest.mark.slow
def test_plain_nbgrader_commands_grade_the_course(tmp_path):
    """nbgrader's own command line, in a course folder holding our nbgrader_config.py: both
    assignments are generated, autograded (by our judge, chosen per notebook from nbgrader's
    resources), given feedback and exported."""
    course = tmp_path / "course"
    course.mkdir()
    shutil.copy(os.path.join(REPO, "nbgrader_config.py"), course / "nbgrader_config.py")
    subs = build_samples(str(tmp_path / "samples"))
    for aid in ("rnn_step_by_step", "gru_step_by_step"):
        a = load(aid)
        shutil.copytree(a.source_dir, course / "source" / aid, ignore=shutil.ignore_patterns("*_checks.py", "*_utils.py", "check_data.json"))
        write_generated(a, str(course / "source" / aid))
        for student in ("ada", "ben"):
            shutil.copytree(os.path.join(subs, "submitted", student, aid), course / "submitted" / student / aid)
    nbgrader = os.path.join(os.path.dirname(sys.executable), "nbgrader")
    # as in an activated virtualenv: nbgrader runs the `alembic` command it installs
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    for aid in ("rnn_step_by_step", "gru_step_by_step"):
        for command in (["generate_assignment", aid], ["autograde", aid], ["generate_feedback", aid]):
            run = subprocess.run([nbgrader, *command, "--log-level=ERROR"], cwd=course, capture_output=True, text=True, env=env)
            assert run.returncode == 0, (command, run.stderr[-2000:])
    run = subprocess.run([nbgrader, "export", "--log-level=ERROR"], cwd=course, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    with Gradebook("sqlite:///" + str(course / "gradebook.db"), "rnn-step-by-step") as gb:
        scores = {(s.student.id, s.assignment.name): s.score for a in ("rnn_step_by_step", "gru_step_by_step")
                  for s in gb.assignment_submissions(a)}
    assert scores[("ada", "rnn_step_by_step")] == 100 and scores[("ada", "gru_step_by_step")] == 100
    assert 0 < scores[("ben", "rnn_step_by_step")] < 100 and 0 < scores[("ben", "gru_step_by_step")] < 100
    assert (course / "grades.csv").exists()
    assert (course / "feedback" / "ben" / "gru_step_by_step" / "gru_step_by_step.html").exists()
