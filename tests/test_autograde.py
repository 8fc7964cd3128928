"""autograde.py: nbgrader's Autograde in one conversion per notebook writes the autograded
notebooks and records the grades that nbgrader's two conversions do, on the sample class
and on tampered submissions (the sanitising steps restore what a learner changed)."""
import copy
import glob
import importlib.util
import json
import os
import shutil

import pytest
from helpers import REPO, A, build_samples, comparable_notebook, course_gradebook, course_pieces, gradebook_dump
from nbgrader.api import SubmittedAssignment
from nbgrader.converters import Autograde
from nbgrader.converters.base import NbGraderException
from nbgrader.coursedir import CourseDirectory

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


def _autograded(config, student, rows_elsewhere):
    """``student``'s release copy autograded without a kernel (the sanitising steps, then the
    worker's list less the judge): the file written, and the gradebook's submissions."""
    from nbgrader.api import Gradebook

    from assignments.grading.upstream import getgrades
    config = copy.deepcopy(config)
    assert getgrades.in_a_worker(config)
    config.Autograde.autograde_preprocessors = [p for p in config.Autograde.autograde_preprocessors
                                                if not p.endswith("JudgedExecute")]
    config.OnePassAutograde.rows_elsewhere = rows_elsewhere
    root = config.CourseDirectory.root
    submitted = os.path.join(root, "submitted", student, A.id)
    os.makedirs(submitted, exist_ok=True)
    shutil.copy(os.path.join(root, "release", A.id, A.notebook + ".ipynb"), submitted)
    with open(os.path.join(submitted, "notes.txt"), "w") as f:
        f.write("the learner's own file\n")
    coursedir = CourseDirectory(config=config, assignment_id=A.id, student_id=student)
    autograde.OnePassAutograde(coursedir=coursedir, config=config).start()
    graded = os.path.join(root, "autograded", student, A.id)
    with open(os.path.join(graded, A.notebook + ".ipynb"), encoding="utf-8") as f:
        written = json.load(f)
    with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
        rows = sorted((s.student_id, s.assignment.name) for s in gb.db.query(SubmittedAssignment))
    return written, sorted(os.listdir(graded)), rows


def test_a_workers_conversion_writes_no_rows_and_the_same_files(tmp_path, monkeypatch):
    """rows_elsewhere (a worker's): the autograded notebook and the files beside it are those
    nbgrader's init_assignment leaves, and the gradebook gets no student or submission row."""
    monkeypatch.delenv("RNN_COURSE_STOCK_NBGRADER", raising=False)   # the course's own lists, in either mode
    config, _ = course_gradebook(tmp_path / "c")
    with_rows, files, rows = _autograded(config, "bob", False)
    assert ("bob", A.id) in rows and "notes.txt" in files
    without, files_without, rows_without = _autograded(config, "cat", True)
    assert without == with_rows and files_without == files
    assert "cat" not in {s for s, _ in rows_without} and rows_without == rows


def test_a_workers_conversion_refuses_a_gradebook_without_the_assignment(tmp_path, caplog, monkeypatch):
    """As nbgrader's own does, and for the same reason in its log."""
    monkeypatch.delenv("RNN_COURSE_STOCK_NBGRADER", raising=False)
    config, _ = course_gradebook(tmp_path / "c")
    config.CourseDirectory.db_url = f"sqlite:///{tmp_path}/empty.db"
    for rows_elsewhere in (False, True):
        caplog.clear()
        with pytest.raises(NbGraderException):
            _autograded(config, "dan", rows_elsewhere)
        assert f"No assignment with ID '{A.id}' exists in the database" in caplog.text
