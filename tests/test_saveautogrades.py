"""SaveAutoGradesAtOnce (grading/upstream/saveautogrades.py) against nbgrader's own SaveAutoGrades:
the same rows in the gradebook, in one transaction instead of one per cell."""
import nbformat
import pytest
from helpers import commits_made, course_gradebook, gradebook_savings, graded_release, sql_statements
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import SaveAutoGrades

from assignments.grading.upstream.saveautogrades import SaveAutoGradesAtOnce
from assignments.rnn_step_by_step import ASSIGNMENT as A


def rows(config):
    with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
        sub = gb.find_submission_notebook(A.notebook, A.id, "ada")
        return ({g.name: (g.auto_score, g.needs_manual_grade) for g in sub.grades},
                {c.name: c.auto_comment for c in sub.comments})


def commits(config, resources, step, nb):
    """How many commits ``step`` makes to the course's gradebook, through any engine (the
    shared one of upstream/speedups.py, or nbgrader's own in stock mode)."""
    return commits_made(config.CourseDirectory.db_url, lambda: step(config=config).preprocess(nb, resources))[1]


def test_same_rows_as_nbgraders_own_in_one_transaction(tmp_path):
    (stock, res_stock), (ours, res_ours) = course_gradebook(tmp_path / "stock"), course_gradebook(tmp_path / "ours")
    nb = graded_release(stock)
    assert rows(stock) == rows(ours)   # nothing graded yet
    n_stock = commits(stock, res_stock, SaveAutoGrades, nbformat.from_dict(nb))
    with gradebook_savings():   # as the course runs ours, even in a stock-mode run
        (n_ours, selects) = sql_statements(ours.CourseDirectory.db_url,
                                           lambda: commits(ours, res_ours, SaveAutoGradesAtOnce, nbformat.from_dict(nb)))
    grades, comments = rows(ours)
    assert (grades, comments) == rows(stock)
    assert len({score for score, _ in grades.values()}) >= 3   # full, partial and none were stored
    assert comments["rnn_forward"] == "No response." and comments["rnn_cell_forward"] is None
    assert n_ours == 1 and n_stock > 10, (n_ours, n_stock)
    assert selects["SELECT"] <= 8, selects   # the rows and their cells, not a query per cell


def test_a_grade_the_gradebook_lacks_raises_as_nbgrader_does(tmp_path):
    config, resources = course_gradebook(tmp_path / "c")
    nb = graded_release(config)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("test_"))
    cell.metadata["nbgrader"]["grade_id"] = "test_not_in_the_gradebook"
    with pytest.raises(MissingEntry):
        commits(config, resources, SaveAutoGradesAtOnce, nb)
