"""nbgrader's grade export (CsvExportPlugin.export) in a few queries for the whole class.

nbgrader's plugin looks every student's submission up on its own (a query or more per
student): for a rerun that grades one new submission of a class of a thousand, exporting
grades.csv cost more than grading. ``export`` reads the assignment's students and
submissions at once and writes the very lines the plugin writes, in the same order, with the
same formatting (nothing quoted; ``None`` as an empty field; ``str`` of every value), so the
file is the same byte for byte (tests/test_receipts.py compares them).
Rule (upstream/): relies on nbgrader.plugins.export.CsvExportPlugin.export, fingerprinted.
"""
from nbgrader.api import Assignment, Student, SubmittedAssignment

KEYS = ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
        "raw_score", "late_submission_penalty", "score", "max_score"]


def export(gb, path, assignment_ids):
    """grades.csv for ``assignment_ids`` (every student of the gradebook, 0 for one without a
    submission), as nbgrader's CsvExportPlugin(to=path, assignment=assignment_ids) writes it."""
    fmt = ",".join("{" + k + "}" for k in KEYS) + "\n"
    students = list(gb.db.query(Student.id, Student.last_name, Student.first_name, Student.email).order_by(Student.id))
    with open(path, "w") as fh:
        fh.write(",".join(KEYS) + "\n")
        for assignment in gb.db.query(Assignment).order_by(Assignment.duedate, Assignment.name):
            if assignment.name not in assignment_ids:
                continue
            # the columns used, not the whole row: each of its other computed scores is a subquery
            submissions = {s.student_id: s for s in gb.db.query(
                SubmittedAssignment.student_id, SubmittedAssignment.timestamp, SubmittedAssignment.score,
                SubmittedAssignment.late_submission_penalty).filter(SubmittedAssignment.assignment_id == assignment.id)}
            for student in students:
                score = {"assignment": assignment.name, "duedate": assignment.duedate, "student_id": student.id,
                         "last_name": student.last_name, "first_name": student.first_name, "email": student.email,
                         "max_score": assignment.max_score}
                submission = submissions.get(student.id)
                if submission is None:
                    score.update(timestamp="", raw_score=0.0, late_submission_penalty=0.0, score=0.0)
                else:
                    penalty = submission.late_submission_penalty
                    score.update(timestamp=submission.timestamp, raw_score=submission.score, late_submission_penalty=penalty,
                                 score=max(0.0, submission.score - penalty))
                fh.write(fmt.format(**{k: "" if v is None else v if isinstance(v, str) else str(v) for k, v in score.items()}))
