"""SaveAutoGradesAtOnce (grading/upstream/saveautogrades.py) against nbgrader's own SaveAutoGrades:
the same rows in the gradebook, in one transaction instead of one per cell."""
import nbformat
import pytest
from helpers import course_gradebook, gradebook_savings, graded_release, sql_statements
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import SaveAutoGrades
from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url

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
    database, count = make_url(config.CourseDirectory.db_url).database, [0]

    def counted(conn):
        count[0] += conn.engine.url.database == database
    event.listen(Engine, "commit", counted)
    try:
        step(config=config).preprocess(nb, resources)
    finally:
        event.remove(Engine, "commit", counted)
    return count[0]


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


def recorded(config, student):
    """What the class's gradebook holds of ``student``'s submission: the submission's own
    fields, its grades and comments by cell, and its late penalty."""
    with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
        submission = gb.find_submission(A.id, student)
        notebook = gb.find_submission_notebook(A.notebook, A.id, student)
        return (str(submission.timestamp), gb.find_student(student).id,
                {g.name: (g.auto_score, g.manual_score, g.needs_manual_grade) for g in notebook.grades},
                {c.name: (c.auto_comment, c.manual_comment) for c in notebook.comments},
                notebook.late_submission_penalty)


def test_record_writes_what_nbgraders_steps_write_in_one_transaction_and_says_what_was_scored_by_hand(tmp_path):
    """record.record (the grading process's storing of a worker's result) against the same
    steps run as stock nbgrader runs them: the same rows for a new student, then after a
    grader's score, then for a late submission; whether the gradebook scores it otherwise
    than the notebook does is what graded_by_hand_or_late reads back; ours commits the
    student, the submission and the grades at once."""
    from assignments.grading.run import record
    from assignments.grading.upstream import is_stock
    stock, _ = course_gradebook(tmp_path / "stock")
    ours, _ = course_gradebook(tmp_path / "ours")
    stock.Upstream.stock = True
    nb = graded_release(stock)

    def both(student, timestamp="2026-01-01 00:00:00"):
        said = []
        for config in (stock, ours):
            with gradebook_savings():   # as the course's run has them; stock's record takes them out
                database, count = make_url(config.CourseDirectory.db_url).database, [0]

                def counted(conn):
                    count[0] += conn.engine.url.database == database
                event.listen(Engine, "commit", counted)
                try:
                    flag = record.record(config, A.id, A.notebook, student, nbformat.from_dict(nb), timestamp)
                finally:
                    event.remove(Engine, "commit", counted)
            assert flag == record.graded_by_hand_or_late(config, A.id, A.notebook, student)
            said.append((flag, count[0]))
        assert recorded(stock, student) == recorded(ours, student)
        return said

    (flag_stock, n_stock), (flag_ours, n_ours) = both("bo")
    assert not flag_stock and not flag_ours
    if not is_stock(ours):
        assert n_ours == 2 and n_stock >= 5, (n_ours, n_stock)   # ours: the rows, then the late penalty's own
    for config in (stock, ours):   # a grader scores a test cell in formgrader
        with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
            gb.find_grade("test_rnn_cell_forward", A.notebook, A.id, "bo").manual_score = 0.5
            gb.db.commit()
    assert [flag for flag, _ in both("bo")] == [True, True]
    for config in (stock, ours):   # due before it came, with a penalty that takes the whole score
        config.LateSubmissionPlugin.penalty_method = "zero"
        with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
            gb.update_or_create_assignment(A.id, duedate="2025-12-31 00:00:00")
    assert [flag for flag, _ in both("cy")] == [True, True]
    assert recorded(ours, "cy")[-1] > 0
    assert [flag for flag, _ in both("di", timestamp=None)] == [False, False]   # no timestamp: not late
