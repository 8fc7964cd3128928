"""The class's gradebook. Only the grading process writes it, one submission at a time as
results come back from the workers, so any number of workers is safe with SQLite (the
default) and with a server database such as PostgreSQL (``CourseDirectory.db_url``).
The grades are written by nbgrader's SaveAutoGrades (batched by saveautogrades.py, in one
transaction with the student's and the submission's rows) and AssignLatePenalties.
Rule (run/): only the grading process writes the class's gradebook and folders."""
import copy
import os
import sqlite3

from nbgrader.api import Gradebook
from nbgrader.converters import GenerateAssignment
from nbgrader.preprocessors import AssignLatePenalties, SaveAutoGrades

from ..upstream import first_record, is_stock, speedups
from ..upstream.saveautogrades import SaveAutoGradesAtOnce, one_transaction
from .course import coursedir


def assignment_rows(db_url, assignment_id):
    """What nbgrader's GenerateAssignment records of an assignment, comparable between two
    gradebooks (the rows' ids differ): its course, its notebooks, their cells with their
    kind and points, and the sources and checksums of the cells it keeps. Not its due date:
    that is the instructor's (`nbgrader db assignment add --duedate`, formgrader), which
    GenerateAssignment keeps, so a gradebook with one holds the assignment as the seed does.
    Read with plain SQL (upstream/speedups.py), whichever gradebook class is installed."""
    return speedups.assignment_rows(db_url, assignment_id)


def prepare(config, assignment_id, like=None):
    """Add the assignment (from the run's source folder) to the gradebook at
    ``config.CourseDirectory.db_url``, and write its release. With ``like`` (a gradebook URL
    already prepared from the same folder, such as the seed's), nothing is done when the
    gradebook already holds the assignment exactly as ``like`` does: a rerun of an unchanged
    assignment would only write the same rows again."""
    speedups.use(not is_stock(config))
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
    speedups.use(not is_stock(config))
    speedups.scratch(config.CourseDirectory.db_url)   # only its bytes are kept
    prepare(config, assignment_id)
    with sqlite3.connect(path) as db:
        return db.serialize()


def start_from_seed(config, seed):
    """Write a class's gradebook that is to be a new SQLite file as the seed's bytes (``seed``):
    the seed holds what GenerateAssignment writes into a new gradebook from the same source and
    configuration, so ``prepare`` then finds the assignment there and writes nothing, where it
    would run GenerateAssignment again and create nbgrader's tables (half a second to a second).
    A gradebook that exists, a server's, or stock mode's is left to ``prepare``. Returns whether
    the seed was written."""
    from sqlalchemy.engine import make_url
    url = make_url(config.CourseDirectory.db_url)
    path = url.database
    if is_stock(config) or url.get_backend_name() != "sqlite" or not path or path == ":memory:" or url.query:
        return False
    if os.path.exists(path):
        return False
    part = f"{path}.{os.getpid()}.seed"
    try:
        with open(part, "wb") as f:
            f.write(seed)
        os.link(part, path)   # never over a gradebook made meanwhile
    except OSError:   # made meanwhile, or a folder without hard links: prepare makes it as nbgrader does
        return False
    finally:
        if os.path.exists(part):
            os.unlink(part)
    return True


def graded_by_hand_or_late(config, assignment_id, notebook, student):
    """Whether the class's gradebook scores this submission otherwise than its autograded
    notebook alone does: a score or comment given by hand (formgrader), extra credit, or a
    late penalty. Its feedback page must then be made from the class's gradebook."""
    with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
        submission = gb.find_submission_notebook(notebook, assignment_id, student)
        if submission.late_submission_penalty:
            return True
        return (any(g.manual_score is not None or (g.extra_credit or 0) != 0 for g in submission.grades)
                or any(c.manual_comment is not None for c in submission.comments))


def submitted_students(config, assignment_id):
    """Two sets of student ids, in a few queries for the whole class: those whose submission
    of the assignment the class's gradebook holds, and those among them scored otherwise
    than by their autograded notebook alone (``graded_by_hand_or_late``)."""
    from nbgrader.api import Assignment, Comment, Grade, SubmittedAssignment, SubmittedNotebook
    from sqlalchemy import and_, or_
    with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
        base = (gb.db.query(SubmittedAssignment.student_id)
                .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
                .filter(Assignment.name == assignment_id))
        submitted = {row[0] for row in base}
        notebooks = base.join(SubmittedNotebook, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
        by_hand = {row[0] for row in notebooks.filter(SubmittedNotebook.late_submission_penalty > 0)}
        by_hand |= {row[0] for row in notebooks.join(Grade, Grade.notebook_id == SubmittedNotebook.id).filter(
            or_(Grade.manual_score.isnot(None), and_(Grade.extra_credit.isnot(None), Grade.extra_credit != 0)))}
        by_hand |= {row[0] for row in notebooks.join(Comment, Comment.notebook_id == SubmittedNotebook.id)
                    .filter(Comment.manual_comment.isnot(None))}
    return submitted, by_hand


def record(config, assignment_id, notebook, student, nb, timestamp=None):
    """Store one autograded notebook's grades, as nbgrader's autograde would have. Returns
    whether the class's gradebook now scores it otherwise than the notebook alone does
    (``graded_by_hand_or_late``), read from the rows just written where it can be: the
    student, the submission and the grades are written in one transaction, and the grader's
    own scores and comments are among the rows SaveAutoGrades reads; only a late submission
    has its penalty read back."""
    db_url, course_id = config.CourseDirectory.db_url, config.CourseDirectory.course_id
    stock = is_stock(config)
    speedups.use(not stock)
    resources = {"nbgrader": {"student": student, "assignment": assignment_id, "notebook": notebook,
                              "db_url": db_url, "course_id": course_id}}
    when = {"timestamp": timestamp} if timestamp else {}
    if stock:
        with Gradebook(db_url, course_id) as gb:
            gb.update_or_create_student(student)
            gb.update_or_create_submission(assignment_id, student, **when)
        for step in (SaveAutoGrades, AssignLatePenalties):
            nb, resources = step(config=config).preprocess(nb, resources)
        return graded_by_hand_or_late(config, assignment_id, notebook, student)
    with Gradebook(db_url, course_id) as gb:
        if first_record.record(gb, config, nb, resources, timestamp):
            return False   # new rows, on time: none scored by hand
        with one_transaction(gb):
            gb.update_or_create_student(student)
            late = gb.update_or_create_submission(assignment_id, student, **when).total_seconds_late > 0
            saving = SaveAutoGradesAtOnce(config=config)
            by_hand = saving.save_in(gb, nb, resources)
            if not late:   # all AssignLatePenalties does to a submission on time, in the same transaction
                saving.gradebook.submission.late_submission_penalty = None
    if late:
        AssignLatePenalties(config=config).preprocess(nb, resources)   # reads the committed scores
    return by_hand or (late and graded_by_hand_or_late(config, assignment_id, notebook, student))
