"""nbgrader's SaveAutoGrades, with one query per table and one commit per notebook.

The stock preprocessor looks each grade and comment up with its own query (four joins)
and commits after each cell: about fifty round trips per submission, paid twice (in the
worker's private gradebook and in the class's). This one fetches the submission's grades
and comments once and commits once; nbgrader's own code still decides every field. A
grade or comment that is not among the rows fetched is looked up as nbgrader does, so a
missing one raises the same MissingEntry. ``save_in`` writes them into a transaction the caller
holds open (the class's gradebook: record.py adds the submission's own rows in the same one).
Rule (upstream/): relies on another package's internals, and says which (fingerprints.json).
"""
import contextlib

from nbgrader.api import Comment, Grade, Gradebook
from nbgrader.preprocessors import SaveAutoGrades
from sqlalchemy.orm import selectinload, undefer


def grades_of(gradebook, submission):
    """{cell name: Grade} of a submitted notebook, each row's cell (which holds its name) and
    maximum score read with the rows, not in a query per row as they are read."""
    return {g.name: g for g in gradebook.db.query(Grade).filter(Grade.notebook_id == submission.id)
            .options(selectinload(Grade.cell), undefer(Grade.max_score))}


class BatchedGradebook:
    """A gradebook as SaveAutoGrades and GetGrades use it: a submitted notebook's grades and
    comments from rows fetched once, commits left to the end of the notebook."""

    def __init__(self, gradebook, notebook, assignment, student):
        self.submission = submission = gradebook.find_submission_notebook(notebook, assignment, student)
        self._gradebook = gradebook
        self._grades = grades_of(gradebook, submission)
        self._comments = {c.name: c for c in gradebook.db.query(Comment).filter(Comment.notebook_id == submission.id)
                          .options(selectinload(Comment.cell))}
        self.db = _Deferred(gradebook.db)

    def find_grade(self, name, *key):
        return self._grades[name] if name in self._grades else self._gradebook.find_grade(name, *key)

    def find_comment(self, name, *key):
        return self._comments[name] if name in self._comments else self._gradebook.find_comment(name, *key)

    def scored_by_hand(self):
        """Whether the rows hold a grader's own scoring: a score or extra credit given by
        hand, or a comment (what record.graded_by_hand_or_late asks of them, late penalty aside)."""
        return (any(g.manual_score is not None or (g.extra_credit or 0) != 0 for g in self._grades.values())
                or any(c.manual_comment is not None for c in self._comments.values()))


class _Deferred:
    """A session whose commit waits for the whole notebook (or ``one_transaction``'s block)."""

    def __init__(self, session):
        self._session = session

    def commit(self):
        pass

    def __getattr__(self, name):
        return getattr(self._session, name)


@contextlib.contextmanager
def one_transaction(gradebook):
    """Within the block, ``gradebook``'s commits wait for its end, nbgrader's own among them
    (its update_or_create_student and update_or_create_submission commit their rows): one
    commit there, or a rollback if the block raises."""
    session = gradebook.db
    gradebook.db = _Deferred(session)
    try:
        yield gradebook
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        gradebook.db = session


@contextlib.contextmanager
def batched(preprocessor, resources, gradebook=None):
    """What nbgrader's SaveAutoGrades and GetGrades set up before their cell-by-cell pass:
    the submission's ids from ``resources``, and ``preprocessor.gradebook``, here a
    BatchedGradebook over a gradebook open for the block (which it yields): ``gradebook``
    when given (left open), else one opened for the block."""
    info = resources["nbgrader"]
    preprocessor.notebook_id, preprocessor.assignment_id = info["notebook"], info["assignment"]
    preprocessor.student_id, preprocessor.db_url = info["student"], info["db_url"]
    with contextlib.nullcontext(gradebook) if gradebook is not None else Gradebook(preprocessor.db_url) as gradebook:
        preprocessor.gradebook = BatchedGradebook(gradebook, preprocessor.notebook_id, preprocessor.assignment_id,
                                                  preprocessor.student_id)
        yield gradebook


class SaveAutoGradesAtOnce(SaveAutoGrades):
    """SaveAutoGrades writing a notebook's grades and comments in one transaction."""

    def preprocess(self, nb, resources):
        with batched(self, resources) as gradebook:
            nb, resources = super(SaveAutoGrades, self).preprocess(nb, resources)   # cell by cell, as nbgrader's
            gradebook.db.commit()
        return nb, resources

    def save_in(self, gradebook, nb, resources):
        """The same rows, written in ``gradebook``'s open transaction and left for its holder
        to commit. Returns whether they hold a grader's own scoring (``scored_by_hand``)."""
        with batched(self, resources, gradebook):
            super(SaveAutoGrades, self).preprocess(nb, resources)
            return self.gradebook.scored_by_hand()
