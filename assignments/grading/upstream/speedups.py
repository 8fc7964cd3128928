"""Per-process savings in nbgrader's gradebook, which a class pays once per submission.

nbgrader opens its Gradebook half a dozen times per submission, and every opening builds
a new SQLAlchemy engine, checks or creates every table and checks the course row; a new
gradebook also asks the ``alembic`` command for the schema version (a process and ~3 s
of imports). ``install()`` keeps one engine per database for the process and, when the
course row is already there (so is the schema), skips straight to it; it reads the
schema version from nbgrader's revision files. A closing gradebook keeps that engine's
pool of connections too (nbgrader disposes of it, so the next opening connects again); a
process forked afterwards lets go of the pool it inherits, as SQLAlchemy advises. Same
database content, fewer round trips (benchmarks/grading.py measures the whole pipeline).

nbgrader also checks every cell's metadata with ``jsonschema.validate``, which checks the
schema itself and builds a validator at each call (about sixty times per submission):
``install()`` has it build each schema's validator once, check the same metadata once, and
report the same error.
Rule (upstream/): relies on another package's internals, and says which (fingerprints.json)."""
import functools
import glob
import json
import os
import re
import shutil
import sysconfig

import jsonschema
import nbgrader
import nbgrader.api
import nbgrader.nbgraderformat.common
import nbgrader.utils
from sqlalchemy import Engine, create_engine, event, insert, select, text
from sqlalchemy.exc import IntegrityError, StatementError
from sqlalchemy.orm import scoped_session, sessionmaker
from sqlalchemy.orm.exc import FlushError

_ENGINES: dict[str | tuple[object, ...], Engine] = {}
_SCRATCH: set[str] = set()   # databases thrown away after the run (a worker's own gradebook)
_READY: set[tuple[Engine, str]] = set()     # (engine, course id) whose schema and course row were found
_stock_init = nbgrader.api.Gradebook.__init__
_stock_close = nbgrader.api.Gradebook.close
_stock_add_submission = nbgrader.api.Gradebook.add_submission
_stock_alembic_version = nbgrader.api.get_alembic_version


def scratch(db_url):
    """Mark an SQLite gradebook as scratch: thrown away when the run ends, rebuilt by a
    rerun. Its commits then skip the journal file and the flushes to disk that only guard
    against a power cut (SQLite's journal_mode MEMORY, synchronous OFF): a worker's
    private gradebook makes a dozen commits per submission."""
    _SCRATCH.add(db_url)


def is_scratch(db_url):
    """Whether ``db_url`` is a gradebook marked as scratch (``scratch``)."""
    return db_url in _SCRATCH


def _no_flushes(connection, _record):
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode = MEMORY")
    cursor.execute("PRAGMA synchronous = OFF")
    cursor.close()


@functools.lru_cache(maxsize=None)
def alembic_head():
    """The newest revision of nbgrader's gradebook schema: the one no other revision
    builds on (what ``alembic heads`` answers)."""
    revisions, parents = set(), set()
    for path in glob.glob(os.path.join(os.path.dirname(nbgrader.__file__), "alembic", "versions", "*.py")):
        with open(path, encoding="utf-8") as f:
            source = f.read()
        revisions.update(re.findall(r"^revision\s*=\s*['\"](\w+)['\"]", source, re.M))
        parents.update(re.findall(r"^down_revision\s*=\s*['\"](\w+)['\"]", source, re.M))
    heads = revisions - parents
    if len(heads) != 1:
        raise RuntimeError(f"cannot tell nbgrader's gradebook schema version: heads {sorted(heads)}")
    return heads.pop()


def _engine(db_url):
    """One engine per database; an SQLite file deleted and made again (a rerun into the
    same folder) is a new database, so it gets a new engine."""
    key = db_url
    if db_url.startswith("sqlite:///"):
        try:
            st = os.stat(db_url[len("sqlite:///"):])
            key = (db_url, st.st_dev, st.st_ino)
        except OSError:
            key = (db_url, None)
    if key not in _ENGINES:
        for old in [k for k in _ENGINES if k == db_url or (isinstance(k, tuple) and k[0] == db_url)]:
            engine = _ENGINES.pop(old)
            _READY.difference_update([r for r in _READY if r[0] is engine])
            engine.dispose()
        _ENGINES[key] = create_engine(db_url, echo=False, future=True)
        if db_url in _SCRATCH and db_url.startswith("sqlite:"):
            event.listen(_ENGINES[key], "connect", _no_flushes)
    return _ENGINES[key]



def assignment_rows(db_url, assignment_id):
    """What nbgrader's GenerateAssignment records of an assignment (see record.assignment_rows),
    read with four plain queries on its tables instead of loading every cell as an ORM
    object (a tenth of a second or more on a class's gradebook, which a rerun pays at start).
    Raises ValueError when the gradebook does not hold the assignment once."""
    with _engine(db_url).connect() as con:
        found = con.execute(text("SELECT id, name, course_id FROM assignment WHERE name = :name"),
                            {"name": assignment_id}).all()
        if len(found) != 1:
            raise ValueError(f"the gradebook {db_url} holds {len(found)} assignments named {assignment_id!r}")
        key, where = {"aid": found[0][0]}, "FROM notebook n {} WHERE n.assignment_id = :aid"
        notebooks = con.execute(text("SELECT n.name, n.kernelspec " + where.format("")), key).all()
        cells = con.execute(text(
            "SELECT n.name, b.name, b.type, COALESCE(g.max_score, t.max_score), COALESCE(g.cell_type, t.cell_type) "
            + where.format("JOIN base_cell b ON b.notebook_id = n.id LEFT JOIN grade_cells g ON g.id = b.id "
                           "LEFT JOIN task_cells t ON t.id = b.id")), key).all()
        sources = con.execute(text("SELECT n.name, s.name, s.cell_type, s.locked, s.source, s.checksum "
                                   + where.format("JOIN source_cell s ON s.notebook_id = n.id")), key).all()
    return [[(found[0][1], found[0][2])], sorted(tuple(r) for r in notebooks),
            sorted((tuple(r) for r in cells), key=repr), sorted((tuple(r) for r in sources), key=repr)]

def _gradebook_init(self, db_url, course_id="default_course", authenticator=None):
    engine = _engine(db_url)
    ready = (engine, course_id) in _READY   # found once: the schema and the row stay for the run
    if not ready:
        try:
            with engine.connect() as con:
                ready = con.execute(text("SELECT 1 FROM course WHERE id = :id"), {"id": course_id}).first()
        except Exception:   # no schema yet, or not reachable: nbgrader's own path says why
            ready = None
        if ready:
            _READY.add((engine, course_id))
    if not ready:
        _stock_init(self, db_url, course_id, authenticator)
        if db_url in _SCRATCH:   # the schema and the course row are there: go on without flushes
            self.db.remove()
            self.engine.dispose()
            self.engine = _engine(db_url)
            self.db = scoped_session(sessionmaker(autoflush=True, bind=self.engine, future=True))
        return
    self.engine = engine
    self.db = scoped_session(sessionmaker(autoflush=True, bind=engine, future=True))
    self.course_id, self.authenticator = course_id, authenticator


def _add_submission(self, assignment, student, **kwargs):
    """nbgrader's Gradebook.add_submission: the same rows (the submission, a submitted
    notebook for each of the assignment's notebooks, a grade for each graded cell and task,
    a comment for each solution cell and task, with the same defaults), written with one
    insert per table instead of through the ORM's unit of work, and the same errors."""
    if "timestamp" in kwargs:
        kwargs["timestamp"] = nbgrader.utils.parse_utc(kwargs["timestamp"])
    api = nbgrader.api
    try:
        found, who = self.find_assignment(assignment), self.find_student(student)
        submission = {"id": api.new_uuid(), "assignment_id": found.id, "student_id": who.id, **kwargs}
        notebooks = {row.id: api.new_uuid() for row in self.db.execute(
            select(api.Notebook.id).where(api.Notebook.assignment_id == found.id))}
        cells = self.db.execute(select(api.BaseCell.id, api.BaseCell.notebook_id, api.BaseCell.type)
                                .where(api.BaseCell.notebook_id.in_(list(notebooks)))).all() if notebooks else []
        grades = [{"id": api.new_uuid(), "cell_id": c.id, "notebook_id": notebooks[c.notebook_id]}
                  for c in cells if c.type in ("GradeCell", "TaskCell")]
        comments = [{"id": api.new_uuid(), "cell_id": c.id, "notebook_id": notebooks[c.notebook_id]}
                    for c in cells if c.type in ("SolutionCell", "TaskCell")]
        self.db.execute(insert(api.SubmittedAssignment.__table__), [submission])
        if notebooks:
            self.db.execute(insert(api.SubmittedNotebook.__table__),
                            [{"id": sub, "notebook_id": nb, "assignment_id": submission["id"]} for nb, sub in notebooks.items()])
        for table, rows in ((api.Grade.__table__, grades), (api.Comment.__table__, comments)):
            if rows:
                self.db.execute(insert(table), rows)
        self.db.commit()
    except (IntegrityError, FlushError, StatementError) as e:
        self.db.rollback()
        raise api.InvalidEntry(*e.args)
    return self.db.get(api.SubmittedAssignment, submission["id"])


def _gradebook_close(self):
    """nbgrader's close, but an engine shared by the process keeps its connections."""
    if self.engine in _ENGINES.values():
        self.db.remove()
    else:
        _stock_close(self)


def _forget_pools():
    """In a forked process: its parent's connections are the parent's. Leave them open
    (closing one would close the parent's) and start new pools."""
    for engine in _ENGINES.values():
        engine.dispose(close=False)


os.register_at_fork(after_in_child=_forget_pools)


@functools.lru_cache(maxsize=16)
def _validator(schema_text):
    schema = json.loads(schema_text)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


class CachedJsonschema:
    """The jsonschema module as nbgrader's metadata validator uses it, with ``validate``
    building each schema's validator once (and raising what jsonschema.validate raises), and
    checking each cell's metadata once: a class's notebooks carry the release's metadata, the
    same few dictionaries in every submission (seventeen cells, checked twice a conversion)."""

    VALID_KEPT = 4096   # metadata found valid, remembered by its JSON text; then forgotten
    SCHEMAS_KEPT = 8    # schemas' texts remembered: each of nbgrader's validators reads its own copy

    def __init__(self):
        self._schemas = {}   # id(schema) -> (schema, its JSON text), for the validators in use
        self._valid = set()

    def __getattr__(self, name):
        return getattr(jsonschema, name)

    def validate(self, instance, schema):
        known = self._schemas.get(id(schema))
        if known is None or known[0] is not schema:
            if len(self._schemas) >= self.SCHEMAS_KEPT:
                self._schemas.clear()
            known = self._schemas[id(schema)] = (schema, json.dumps(schema, sort_keys=True))
        try:
            key = (known[1], json.dumps(instance, sort_keys=True, allow_nan=False))
        except (TypeError, ValueError):   # not JSON: jsonschema says what it says
            key = None
        if key is not None and key in self._valid:
            return
        error = jsonschema.exceptions.best_match(_validator(known[1]).iter_errors(instance))
        if error is not None:
            raise error
        if key is not None:
            if len(self._valid) >= self.VALID_KEPT:
                self._valid.clear()
            self._valid.add(key)


# The nbgrader release these replacements were written against and tested with: they
# replace Gradebook.__init__, Gradebook.close, Gradebook.add_submission and
# get_alembic_version, whose bodies change
# between releases, and the jsonschema module nbgrader's metadata validator calls.
WRITTEN_FOR = "0.9.6"


def install():
    """Install the savings, only on the nbgrader they were written for: on any other
    release nbgrader runs as it is (slower, never wrong), with a warning."""
    if nbgrader.__version__ != WRITTEN_FOR:
        import warnings
        warnings.warn(f"assignments.grading.speedups was written for nbgrader {WRITTEN_FOR}, "
                      f"found {nbgrader.__version__}: running nbgrader's gradebook unchanged", stacklevel=2)
        return False
    nbgrader.api.get_alembic_version = alembic_head
    nbgrader.api.Gradebook.__init__ = _gradebook_init
    nbgrader.api.Gradebook.close = _gradebook_close
    nbgrader.api.Gradebook.add_submission = _add_submission
    if not isinstance(nbgrader.nbgraderformat.common.jsonschema, CachedJsonschema):
        nbgrader.nbgraderformat.common.jsonschema = CachedJsonschema()
    return True


def uninstall():
    """nbgrader's gradebook as it is (``Upstream.stock``). It runs the ``alembic`` command,
    which is found beside this Python even when its environment is not activated."""
    scripts = sysconfig.get_path("scripts")
    if shutil.which("alembic") is None and os.path.isfile(os.path.join(scripts, "alembic")):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")
    nbgrader.api.get_alembic_version = _stock_alembic_version
    nbgrader.api.Gradebook.__init__ = _stock_init
    nbgrader.api.Gradebook.close = _stock_close
    nbgrader.api.Gradebook.add_submission = _stock_add_submission
    nbgrader.nbgraderformat.common.jsonschema = jsonschema


def use(savings):
    """Install the savings (``savings`` true) or take them out; installing twice is harmless."""
    return install() if savings else uninstall()
