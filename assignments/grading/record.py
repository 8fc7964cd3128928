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

from . import speedups
from .course import coursedir
from .saveautogrades import SaveAutoGradesAtOnce

speedups.install()


def prepare(config, assignment_id):
    """Add the assignment (from the run's source folder) to the gradebook at
    ``config.CourseDirectory.db_url``, and write its release."""
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
