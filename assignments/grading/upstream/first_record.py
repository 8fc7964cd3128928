"""A submission the class's gradebook has not seen, recorded with one insert per table.

record.record stores a worker's result as nbgrader's steps would: the student, the submission
(nbgrader's add_submission makes a grade row for each graded cell and a comment row for each
answer cell, unscored), then SaveAutoGrades finds each of those rows again and scores it. On a
class's first grade nearly every submission is new, and the ORM's loading and flushing of
rows just inserted was most of what the grading process spent storing one (16 ms of CPU a
submission in one process, benchmarks.md). Here SaveAutoGrades's own code scores stand-ins
that start as add_submission's new rows start, and the rows are inserted already scored: the
same fields, one commit.

Only a first submission on time takes this path. A student who already has a submission of the
assignment (a rerun, a regrade, a grader's scores to keep), a late one (AssignLatePenalties reads
the committed rows) and a notebook with a cell the gradebook does not know are left to the ORM's
path, which writes or refuses them as before; nothing is written here before that is known.
Rule (upstream/): relies on another package's internals, and says which (fingerprints.json).
"""
import nbgrader.api as api
import nbgrader.utils
from nbgrader.preprocessors import NbGraderPreprocessor, SaveAutoGrades
from sqlalchemy import insert, select


class _NewRow:
    """A grade or comment as add_submission leaves it (nbgrader's column defaults), in the
    fields SaveAutoGrades reads or sets."""

    def __init__(self):
        self.auto_score = self.manual_score = None
        self.needs_manual_grade = True
        self.auto_comment = None


class _UnknownCell(LookupError):
    """SaveAutoGrades asked for a cell the gradebook's notebook does not hold."""


class _NewRows:
    """What SaveAutoGrades sees as its gradebook: each grade and comment a new row."""

    def __init__(self, graded, answered):
        self.grades = {name: _NewRow() for name in graded}
        self.comments = {name: _NewRow() for name in answered}
        self.db = self

    def commit(self):
        pass

    def find_grade(self, name, *key):
        if name not in self.grades:
            raise _UnknownCell(name)
        return self.grades[name]

    def find_comment(self, name, *key):
        if name not in self.comments:
            raise _UnknownCell(name)
        return self.comments[name]


def scored(config, nb, resources, graded, answered):
    """{cell name: grade fields}, {cell name: comment fields}: what nbgrader's SaveAutoGrades
    sets on a new submission's rows for the cells named ``graded`` and ``answered``, from its
    own per-cell code. Raises _UnknownCell for a cell outside them."""
    saving = SaveAutoGrades(config=config)
    info = resources["nbgrader"]
    saving.notebook_id, saving.assignment_id = info["notebook"], info["assignment"]
    saving.student_id, saving.db_url = info["student"], info["db_url"]
    saving.gradebook = rows = _NewRows(graded, answered)
    NbGraderPreprocessor.preprocess(saving, nb, resources)   # cell by cell, as SaveAutoGrades does
    return ({name: {"auto_score": r.auto_score, "needs_manual_grade": r.needs_manual_grade}
             for name, r in rows.grades.items()},
            {name: {"auto_comment": r.auto_comment} for name, r in rows.comments.items()})


def record(gradebook, config, nb, resources, timestamp=None):
    """Write ``resources``' student (when new), submission, submitted notebooks, grades and
    comments, scored, in ``gradebook``'s session, and commit. Returns False, having written
    nothing, when the submission is not a first one on time with cells the gradebook knows."""
    info = resources["nbgrader"]
    session = gradebook.db
    found = session.execute(select(api.Assignment.id, api.Assignment.duedate)
                            .where(api.Assignment.name == info["assignment"])).all()
    if len(found) != 1:
        return False
    aid, due = found[0]
    when = nbgrader.utils.parse_utc(timestamp) if timestamp else None
    if due is not None and when is not None and when > due:
        return False
    if session.execute(select(api.SubmittedAssignment.id).where(
            api.SubmittedAssignment.assignment_id == aid,
            api.SubmittedAssignment.student_id == info["student"])).first():
        return False
    notebooks = {row.id: (row.name, api.new_uuid()) for row in session.execute(
        select(api.Notebook.id, api.Notebook.name).where(api.Notebook.assignment_id == aid))}
    cells = session.execute(select(api.BaseCell.id, api.BaseCell.notebook_id, api.BaseCell.type, api.BaseCell.name)
                            .where(api.BaseCell.notebook_id.in_(list(notebooks)))).all() if notebooks else []
    mine = [c for c in cells if notebooks[c.notebook_id][0] == info["notebook"]]
    in_mine = {c.id for c in mine}
    try:
        grades, comments = scored(config, nb, resources, [c.name for c in mine if c.type in ("GradeCell", "TaskCell")],
                                  [c.name for c in mine if c.type in ("SolutionCell", "TaskCell")])
    except _UnknownCell:
        return False
    try:
        if not session.execute(select(api.Student.id).where(api.Student.id == info["student"])).first():
            session.execute(insert(api.Student.__table__), [{"id": info["student"]}])
        submission = {"id": api.new_uuid(), "assignment_id": aid, "student_id": info["student"], "timestamp": when}
        session.execute(insert(api.SubmittedAssignment.__table__), [submission])
        if notebooks:
            session.execute(insert(api.SubmittedNotebook.__table__), [
                {"id": sub, "notebook_id": nb_id, "assignment_id": submission["id"], "late_submission_penalty": None}
                for nb_id, (_, sub) in notebooks.items()])
        unscored = _NewRow()
        for kinds, scores, table, fields in (
                (("GradeCell", "TaskCell"), grades, api.Grade.__table__, ("auto_score", "needs_manual_grade")),
                (("SolutionCell", "TaskCell"), comments, api.Comment.__table__, ("auto_comment",))):
            rows = [{"id": api.new_uuid(), "cell_id": c.id, "notebook_id": notebooks[c.notebook_id][1],
                     **(scores[c.name] if c.id in in_mine else {f: getattr(unscored, f) for f in fields})}
                    for c in cells if c.type in kinds]
            if rows:
                session.execute(insert(table), rows)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return True
