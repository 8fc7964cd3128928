"""SaveAutoGradesAtOnce (grading/saveautogrades.py) against nbgrader's own SaveAutoGrades:
the same rows in the gradebook, in one transaction instead of one per cell."""
import shutil

import nbformat
import pytest
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import SaveAutoGrades
from sqlalchemy import event

from assignments.grading import record, speedups
from assignments.grading.course import load_config
from assignments.grading.judge import Verdict
from assignments.grading.preprocessors import verdict_outputs
from assignments.grading.saveautogrades import SaveAutoGradesAtOnce
from assignments.rnn_step_by_step import ASSIGNMENT as A


def course(root):
    shutil.copytree(A.source_dir, root / "source" / A.id, ignore=shutil.ignore_patterns("__pycache__"))
    A.write_generated(str(root / "source" / A.id), reuse_release=True)
    config = load_config(str(root))
    record.prepare(config, A.id)
    with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
        gb.update_or_create_student("ada")
        gb.update_or_create_submission(A.id, "ada")
    return config


def graded_notebook(root):
    """The release with its test cells scored as the judge would: full, partial and none,
    and one answer cell left as released (nbgrader's "No response.")."""
    nb = nbformat.read(str(root / "release" / A.id / (A.notebook + ".ipynb")), as_version=4)
    scores = iter([1.0, 0.5, 0.0] * 10)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if grade_id.startswith("test_"):
            points = cell.metadata["nbgrader"]["points"]
            score = next(scores) * points
            cell.outputs = verdict_outputs(Verdict(grade_id[5:], score, points, score == points, feedback="x"))
        elif grade_id == "rnn_forward":
            continue   # unchanged: "No response."
        elif cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source += "\n# answered"
    return nb


def rows(config):
    with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
        sub = gb.find_submission_notebook(A.notebook, A.id, "ada")
        return ({g.name: (g.auto_score, g.needs_manual_grade) for g in sub.grades},
                {c.name: c.auto_comment for c in sub.comments})


def commits(config, step, nb):
    resources = {"nbgrader": {"student": "ada", "assignment": A.id, "notebook": A.notebook,
                              "db_url": config.CourseDirectory.db_url, "course_id": config.CourseDirectory.course_id}}
    engine, count = speedups._engine(config.CourseDirectory.db_url), [0]

    def counted(*_):
        count[0] += 1
    event.listen(engine, "commit", counted)
    try:
        step(config=config).preprocess(nb, resources)
    finally:
        event.remove(engine, "commit", counted)
    return count[0]


def test_same_rows_as_nbgraders_own_in_one_transaction(tmp_path):
    stock, ours = course(tmp_path / "stock"), course(tmp_path / "ours")
    nb = graded_notebook(tmp_path / "stock")
    assert rows(stock) == rows(ours)   # nothing graded yet
    n_stock = commits(stock, SaveAutoGrades, nbformat.from_dict(nb))
    n_ours = commits(ours, SaveAutoGradesAtOnce, nbformat.from_dict(nb))
    grades, comments = rows(ours)
    assert (grades, comments) == rows(stock)
    assert len({score for score, _ in grades.values()}) >= 3   # full, partial and none were stored
    assert comments["rnn_forward"] == "No response." and comments["rnn_cell_forward"] is None
    assert n_ours == 1 and n_stock > 10, (n_ours, n_stock)


def test_a_grade_the_gradebook_lacks_raises_as_nbgrader_does(tmp_path):
    config = course(tmp_path / "c")
    nb = graded_notebook(tmp_path / "c")
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("test_"))
    cell.metadata["nbgrader"]["grade_id"] = "test_not_in_the_gradebook"
    with pytest.raises(MissingEntry):
        commits(config, SaveAutoGradesAtOnce, nb)
