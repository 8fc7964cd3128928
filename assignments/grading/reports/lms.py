"""Grades in the CSV layouts that Canvas's and Moodle's gradebook imports read.

Students are identified as nbgrader's gradebook holds them (``Student``: ``id``,
``first_name``, ``last_name``, ``email``, ``lms_user_id``), and the grade is the
gradebook's (``max(0, raw score - late penalty)``, the ``score`` of nbgrader's
``grades.csv``), so that the three files agree. The exact columns, and what each LMS does
with them, are in docs/report.md ("Grades for an LMS").
Rule (reports/): reads results, never grades.
"""
import csv
import re

FORMATS = ("canvas", "moodle")
FILENAMES = {"canvas": "grades_canvas.csv", "moodle": "grades_moodle.csv"}

# Canvas's importer drops these columns (it computes them itself), and matches these
# header names to its own student columns: an assignment may not be called so.
CANVAS_RESERVED = re.compile(r"Current Score|Current Points|Current Grade|Final Score|Final Points|Final Grade|"
                             r"Override Score|Override Grade|Override Status")
CANVAS_STUDENT_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_COLUMNS = ("Student ID", "Email address", "LMS user id", "First name", "Last name")


class ExportError(ValueError):
    """The grades cannot be written in the asked layout (and nothing was written)."""


def roster(db_url, course_id, assignment_id, students, gb=None):
    """Each of ``students`` as the gradebook has them: names, email, LMS id and the
    assignment's score. Two queries, whatever the size of the class or the gradebook.
    ``gb``: the gradebook, already open (then ``db_url`` and ``course_id`` are not used)."""
    if gb is None:
        # imported here: the command line imports this module at its start
        from nbgrader.api import Gradebook
        with Gradebook(db_url, course_id) as gb:
            return roster(db_url, course_id, assignment_id, students, gb)
    from nbgrader.api import Assignment, Student, SubmittedAssignment
    found = {sid: {"first_name": "", "last_name": "", "email": "", "lms_user_id": "", "score": 0.0}
             for sid in students}
    # every row, the students wanted picked here: a filter naming hundreds of ids costs SQLAlchemy
    # ten times what reading the few rows it leaves out does
    for st in gb.db.query(Student.id, Student.first_name, Student.last_name, Student.email, Student.lms_user_id):
        if st.id in found:
            found[st.id].update(first_name=st.first_name or "", last_name=st.last_name or "",
                                email=st.email or "", lms_user_id=st.lms_user_id or "")
    # the two columns used, not the whole row: each of its other computed scores is a subquery
    rows = (gb.db.query(SubmittedAssignment.student_id, SubmittedAssignment.score, SubmittedAssignment.late_submission_penalty)
            .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
            .filter(Assignment.name == assignment_id))
    for sub in rows:
        if sub.student_id not in found:
            continue
        found[sub.student_id]["score"] = max(0.0, float(sub.score or 0.0) - float(sub.late_submission_penalty or 0.0))
    return found


def roster_from_results(results):
    """Without a gradebook: the ids and scores of results.json, no names or LMS ids."""
    return {s["student"]: {"first_name": "", "last_name": "", "email": "", "lms_user_id": "",
                           "score": float(s["score"])} for s in results["submissions"]}


def _points(x):
    """A grade as both LMSs parse it: a dot for decimals, at most two decimals."""
    text = f"{float(x):.2f}".rstrip("0").rstrip(".")
    return text if text != "-0" else "0"


def _display_name(person, sid):
    last, first = person["last_name"].strip(), person["first_name"].strip()
    if last and first:
        return f"{last}, {first}"
    return last or first or sid


def canvas_rows(people, title, max_score):
    """Canvas's gradebook import: the student columns of its own export, a "Points
    Possible" row, then one row per student."""
    if not title.strip() or CANVAS_RESERVED.search(title) or title in CANVAS_STUDENT_COLUMNS:
        raise ExportError(f"{title!r} cannot name a Canvas assignment column: Canvas reads that header as one of "
                          f"its own columns; pass another title")
    rows = [list(CANVAS_STUDENT_COLUMNS) + [title],
            ["    Points Possible", "", "", "", "", _points(max_score)]]
    for sid in sorted(people):
        p = people[sid]
        rows.append([_display_name(p, sid), p["lms_user_id"], "", sid, "", _points(p["score"])])
    return rows


def moodle_rows(people, title):
    """Moodle's CSV grade import: a header row, then one row per student; the import page
    maps one column to a user field and the grade column to a grade item."""
    if not title.strip() or title in MOODLE_COLUMNS:
        raise ExportError(f"{title!r} cannot name the Moodle grade column: pass another title")
    rows = [list(MOODLE_COLUMNS) + [title]]
    for sid in sorted(people):
        p = people[sid]
        rows.append([sid, p["email"], p["lms_user_id"], p["first_name"], p["last_name"], _points(p["score"])])
    return rows


def notes(people):
    """What an instructor should know before importing (e.g. no emails to match on)."""
    said = []
    n = len(people)
    for field, what in (("lms_user_id", "LMS user id"), ("email", "email address")):
        missing = sum(1 for p in people.values() if not p[field])
        if missing:
            said.append(f"{missing} of {n} students have no {what} in the gradebook (Student.{field})")
    return said


def write(fmt, people, path, title, max_score):
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}: choose from {', '.join(FORMATS)}")
    rows = canvas_rows(people, title, max_score) if fmt == "canvas" else moodle_rows(people, title)
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return path
