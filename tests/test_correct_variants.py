"""No correct function may lose a point: independently written correct implementations in
different styles earn full marks, in the students' checks, in the judge, and graded for real."""
import glob
import inspect
import os
import sys

import nbformat
import pytest
from helpers import RELEASE, REPO

from assignments.grading.authoring.submissions import answer_cells, fill
from assignments.grading.judging import inprocess as local
from assignments.grading.run import pipeline
from assignments.rnn_step_by_step import reference

STYLES = sorted(glob.glob(os.path.join(REPO, "tests", "fixtures", "correct", "*.py"))) + \
    [os.path.join(REPO, "samples", "answers", "rnn_step_by_step", "ada.py")]
NAME = {path: os.path.splitext(os.path.basename(path))[0] for path in STYLES}
CASES = [(path, fn) for path in STYLES for fn in answer_cells(open(path, encoding="utf-8").read())]


def notebook(path):
    """A notebook whose cells are the reference functions, then this style's cells."""
    if RELEASE not in sys.path:
        sys.path.insert(0, RELEASE)   # rnn_utils, as beside a student's notebook
    namespace = {}
    exec(inspect.getsource(reference), namespace)
    with open(path, encoding="utf-8") as f:
        exec(compile(f.read(), path, "exec"), namespace)
    return namespace


def test_there_are_enough_styles():
    assert len(STYLES) >= 10 and len(CASES) >= 30


@pytest.mark.parametrize("path,function", CASES, ids=[f"{NAME[p]}:{f}" for p, f in CASES])
def test_style_earns_full_marks(assignment, release_checks_module, path, function, capsys):
    namespace = notebook(path)
    v = local.judge_all(assignment, namespace, [function])[function]
    assert v.passed and v.score == v.max_score, v.feedback
    release_checks_module.check(function, namespace)
    assert f"✓ {function}: all checks passed" in capsys.readouterr().out


# a class of every style graded again through kernels (each style is judged in-process above): `make test` only
@pytest.mark.slow
def test_every_style_graded_for_real_earns_everything(assignment, tmp_path):
    """Each style as a student (laid over Ada's answers where it has no function of its own),
    through nbgrader, real kernels and the whole pipeline."""
    aid, name = assignment.id, assignment.notebook + ".ipynb"
    base = answer_cells(open(STYLES[-1], encoding="utf-8").read())
    for path in STYLES:
        answers = dict(base, **answer_cells(open(path, encoding="utf-8").read()))
        folder = tmp_path / "in" / NAME[path] / aid
        folder.mkdir(parents=True)
        nbformat.write(fill(os.path.join(RELEASE, name), answers), str(folder / name))
    results = pipeline.grade(assignment, str(tmp_path / "in"), str(tmp_path / "out"))
    scores = {s["student"]: (s["status"], s["score"]) for s in results["submissions"]}
    assert scores == {NAME[p]: ("graded", 100.0) for p in STYLES}, [
        (s["student"], e["id"], e["feedback"]) for s in results["submissions"] for e in s["exercises"] if not e["passed"]]

