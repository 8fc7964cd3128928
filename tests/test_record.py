"""record.py: the grading process stores a worker's result in the class's gradebook as
nbgrader's steps would, in one transaction, and says whether a grader's own scoring stands."""
import nbformat
from helpers import commits_made, course_gradebook, gradebook_savings, graded_release
from nbgrader.api import Gradebook

from assignments.rnn_step_by_step import ASSIGNMENT as A


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
                flag, count = commits_made(config.CourseDirectory.db_url, lambda: record.record(
                    config, A.id, A.notebook, student, nbformat.from_dict(nb), timestamp))
            assert flag == record.graded_by_hand_or_late(config, A.id, A.notebook, student)
            said.append((flag, count))
        assert recorded(stock, student) == recorded(ours, student)
        return said

    (flag_stock, n_stock), (flag_ours, n_ours) = both("bo")
    assert not flag_stock and not flag_ours
    if not is_stock(ours):
        assert n_ours == 1 and n_stock >= 5, (n_ours, n_stock)   # ours: all at once, when on time
    for config in (stock, ours):   # a grader scores a test cell in formgrader
        with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
            gb.find_grade("test_rnn_cell_forward", A.notebook, A.id, "bo").manual_score = 0.5
            gb.db.commit()
    assert [flag for flag, _ in both("bo")] == [True, True]
    for config in (stock, ours):   # due before it came, with a penalty that takes the whole score
        config.LateSubmissionPlugin.penalty_method = "zero"
        with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
            gb.update_or_create_assignment(A.id, duedate="2025-12-31 00:00:00")
    late = both("cy")
    assert [flag for flag, _ in late] == [True, True]
    assert recorded(ours, "cy")[-1] > 0
    if not is_stock(ours):
        assert late[1][1] == 2   # ours: the rows, then the late penalty's own, which reads them
    for config in (stock, ours):   # the due date moved past it: on time now, its penalty gone
        with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
            gb.update_or_create_assignment(A.id, duedate="2026-02-01 00:00:00")
    assert [flag for flag, _ in both("cy")] == [False, False]
    assert recorded(ours, "cy")[-1] is None
    assert [flag for flag, _ in both("di", timestamp=None)] == [False, False]   # no timestamp: not late
