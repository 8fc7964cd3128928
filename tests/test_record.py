"""record.py: the grading process stores a worker's result in the class's gradebook as
nbgrader's steps would, in one transaction, and says whether a grader's own scoring stands."""
import nbformat
import pytest
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


def gradebook_rows(db_url, student):
    """Every column of ``student``'s rows in the gradebook, each id written as what it names
    (the rows' own ids are random): the student, the submission, its notebooks, grades and comments."""
    import sqlite3

    from sqlalchemy.engine import make_url
    with sqlite3.connect(make_url(db_url).database) as db:
        def rows(query):
            return sorted(map(tuple, db.execute(query, (student,))), key=repr)
        sub = ("JOIN submitted_notebook sn ON sn.id = x.notebook_id JOIN submitted_assignment sa ON sa.id = sn.assignment_id"
               " JOIN base_cell b ON b.id = x.cell_id WHERE sa.student_id = ?")
        return [rows("SELECT * FROM student WHERE id = ?"),
                rows("SELECT a.name, sa.student_id, sa.timestamp, sa.extension FROM submitted_assignment sa"
                     " JOIN assignment a ON a.id = sa.assignment_id WHERE sa.student_id = ?"),
                rows("SELECT n.name, sn.flagged, sn.late_submission_penalty FROM submitted_notebook sn JOIN notebook n"
                     " ON n.id = sn.notebook_id JOIN submitted_assignment sa ON sa.id = sn.assignment_id"
                     " WHERE sa.student_id = ?"),
                rows("SELECT b.name, x.auto_score, x.manual_score, x.extra_credit, x.needs_manual_grade FROM grade x " + sub),
                rows("SELECT b.name, x.auto_comment, x.manual_comment FROM comment x " + sub)]


def test_a_first_submission_on_time_is_inserted_scored_with_every_column_the_orm_path_writes(tmp_path, monkeypatch):
    """upstream/first_record.py: a new submission's rows go in already scored, in one commit;
    every column equals what nbgrader's own steps (the ORM's path, record.py) write, for a new
    student, one already on the roster and one with no timestamp. A notebook with a cell the
    gradebook does not know writes nothing there and is refused as nbgrader refuses it."""
    from nbgrader.api import MissingEntry

    from assignments.grading.run import record
    from assignments.grading.upstream import first_record, is_stock
    config, _ = course_gradebook(tmp_path)
    nb = graded_release(config)
    took = []
    fast = first_record.record

    def watched(*a, **k):
        took.append(fast(*a, **k))
        return took[-1]
    monkeypatch.setattr(first_record, "record", watched)
    if is_stock(config):   # stock mode records through nbgrader's own steps only (the test above)
        record.record(config, A.id, A.notebook, "eve", nbformat.from_dict(nb), "2026-01-01 00:00:00")
        assert took == [] and gradebook_rows(config.CourseDirectory.db_url, "eve")[3]
        return
    with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
        gb.update_or_create_student("fay")
        gb.update_or_create_student("gus")
    for student, timestamp in (("eve", "2026-01-01 00:00:00"), ("fay", "2026-01-02 00:00:00"), ("hal", None)):
        with gradebook_savings():
            flag, count = commits_made(config.CourseDirectory.db_url, lambda: record.record(
                config, A.id, A.notebook, student, nbformat.from_dict(nb), timestamp))
        assert (flag, count, took.pop()) == (False, 1, True)
        ours = gradebook_rows(config.CourseDirectory.db_url, student)
        with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
            gb.remove_submission(A.id, student)
            gb.remove_student(student)
        if student == "fay":
            with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
                gb.update_or_create_student("fay")
        monkeypatch.setattr(first_record, "record", lambda *a, **k: False)
        with gradebook_savings():
            record.record(config, A.id, A.notebook, student, nbformat.from_dict(nb), timestamp)
        monkeypatch.setattr(first_record, "record", watched)
        assert gradebook_rows(config.CourseDirectory.db_url, student) == ours
        assert any(row[1] == 0.0 for row in ours[3]) and any(row[1] == "No response." for row in ours[4])
    odd = nbformat.from_dict(nb)
    test_cell = next(c for c in odd.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("test_"))
    test_cell.metadata.nbgrader.grade_id = "test_not_in_the_gradebook"
    with gradebook_savings(), pytest.raises(MissingEntry):
        record.record(config, A.id, A.notebook, "gus", odd, "2026-01-01 00:00:00")
    assert took == [False]
    assert gradebook_rows(config.CourseDirectory.db_url, "gus")[1:] == [[], [], [], []]
