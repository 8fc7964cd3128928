"""The class's gradebook. Only the grading process writes it, one submission at a time as
results come back from the workers, so any number of workers is safe with SQLite (the
default) and with a server database such as PostgreSQL (``CourseDirectory.db_url``).
The grades are written by nbgrader's SaveAutoGrades (in one transaction: saveautogrades.py)
and AssignLatePenalties."""
import copy
import os
import sqlite3

from nbgrader.api import Gradebook
from nbgrader.converters import GenerateAssignment
from nbgrader.preprocessors import AssignLatePenalties
from sqlalchemy import text

from ..upstream import speedups
from ..upstream.saveautogrades import SaveAutoGradesAtOnce
from .course import coursedir

speedups.install()


# What nbgrader's GenerateAssignment records of an assignment, without the rows' ids (which
# differ between gradebooks): its course, its notebooks, their cells with their kind and
# points, and the sources and checksums of the cells it keeps. Not its due date: that is the
# instructor's (`nbgrader db assignment add --duedate`, formgrader), which GenerateAssignment
# keeps, so a gradebook with one holds the assignment as the seed does.
_BY_NAME = "JOIN notebook n ON c.notebook_id = n.id JOIN assignment a ON n.assignment_id = a.id WHERE a.name = :aid"
ASSIGNMENT_ROWS = (
    "SELECT a.name, a.course_id FROM assignment a WHERE a.name = :aid",
    "SELECT n.name, n.kernelspec FROM notebook n JOIN assignment a ON n.assignment_id = a.id WHERE a.name = :aid",
    "SELECT n.name, c.name, c.type, g.max_score, g.cell_type, t.max_score, t.cell_type FROM base_cell c "
    "LEFT JOIN grade_cells g ON g.id = c.id LEFT JOIN task_cells t ON t.id = c.id " + _BY_NAME,
    "SELECT n.name, c.name, c.cell_type, c.locked, c.source, c.checksum FROM source_cell c " + _BY_NAME,
)


def assignment_rows(db_url, assignment_id):
    """The assignment as a gradebook records it (ASSIGNMENT_ROWS), comparable between two."""
    with Gradebook(db_url) as gb:
        return [sorted(tuple(row) for row in gb.db.execute(text(q), {"aid": assignment_id})) for q in ASSIGNMENT_ROWS]


def prepare(config, assignment_id, like=None):
    """Add the assignment (from the run's source folder) to the gradebook at
    ``config.CourseDirectory.db_url``, and write its release. With ``like`` (a gradebook URL
    already prepared from the same folder, such as the seed's), nothing is done when the
    gradebook already holds the assignment exactly as ``like`` does: a rerun of an unchanged
    assignment would only write the same rows again."""
    if like is not None:
        try:
            if assignment_rows(config.CourseDirectory.db_url, assignment_id) == assignment_rows(like, assignment_id):
                return
        except Exception:   # no schema or no such assignment yet: nbgrader makes them
            pass
    GenerateAssignment(coursedir=coursedir(config, assignment_id), config=config).start()


def seed(config, assignment_id, path):
    """The bytes of a fresh SQLite gradebook holding only the assignment: what each worker
    grades against (nbgrader's autograde needs the assignment's cells from a gradebook)."""
    config = copy.deepcopy(config)
    config.CourseDirectory.db_url = "sqlite:///" + os.path.abspath(path)
    speedups.scratch(config.CourseDirectory.db_url)   # only its bytes are kept
    prepare(config, assignment_id)
    with sqlite3.connect(path) as db:
        return db.serialize()


def graded_by_hand_or_late(config, assignment_id, notebook, student):
    """Whether the class's gradebook scores this submission otherwise than its autograded
    notebook alone does: a score or comment given by hand (formgrader), extra credit, or a
    late penalty. Its feedback page must then be made from the class's gradebook."""
    with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
        submission = gb.find_submission_notebook(notebook, assignment_id, student)
        if submission.late_submission_penalty:
            return True
        hand = gb.db.execute(text(
            "SELECT COUNT(*) FROM grade WHERE notebook_id = :id AND (manual_score IS NOT NULL OR COALESCE(extra_credit, 0) != 0)"
            " UNION ALL SELECT COUNT(*) FROM comment WHERE notebook_id = :id AND manual_comment IS NOT NULL"),
            {"id": submission.id}).scalars().all()
        return any(hand)


def record(config, assignment_id, notebook, student, nb, timestamp=None):
    """Store one autograded notebook's grades, as nbgrader's autograde would have."""
    db_url, course_id = config.CourseDirectory.db_url, config.CourseDirectory.course_id
    with Gradebook(db_url, course_id) as gb:
        gb.update_or_create_student(student)
        gb.update_or_create_submission(assignment_id, student, **({"timestamp": timestamp} if timestamp else {}))
    resources = {"nbgrader": {"student": student, "assignment": assignment_id, "notebook": notebook,
                              "db_url": db_url, "course_id": course_id}}
    for step in (SaveAutoGradesAtOnce, AssignLatePenalties):
        nb, resources = step(config=config).preprocess(nb, resources)
    return nb
