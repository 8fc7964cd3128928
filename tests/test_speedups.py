"""The gradebook speedups replace nbgrader internals: they must match the nbgrader they run on."""
import os
import subprocess
import sys

import nbgrader
import pytest
from helpers import gradebook_savings
from sqlalchemy.engine import Engine

from assignments.grading.authoring.generated import write_generated
from assignments.grading.upstream import speedups


@pytest.fixture
def savings():
    """The savings installed for the test, whatever the run's mode (helpers.gradebook_savings)."""
    with gradebook_savings():
        yield


def test_written_for_the_pinned_nbgrader():
    assert nbgrader.__version__ == speedups.WRITTEN_FOR


# the alembic command in a new process (4 s of imports): `make test` only
@pytest.mark.slow
def test_schema_version_is_what_alembic_heads_says(tmp_path):
    """The revision read from nbgrader's files equals the one the real alembic command reports
    (nbgrader's alembic.ini leaves the scripts' folder as a placeholder it fills in itself)."""
    ini = tmp_path / "alembic.ini"
    ini.write_text(f"[alembic]\nscript_location = {os.path.join(os.path.dirname(nbgrader.__file__), 'alembic')}\n")
    alembic = os.path.join(os.path.dirname(sys.executable), "alembic")
    out = subprocess.run([alembic, "-c", str(ini), "heads"], capture_output=True, text=True, check=True).stdout
    assert out.split()[0] == speedups.alembic_head()


def test_not_installed_on_another_nbgrader(monkeypatch):
    import warnings
    stock = nbgrader.api.Gradebook.__init__
    monkeypatch.setattr(nbgrader, "__version__", "9.9.9")
    monkeypatch.setattr(nbgrader.api.Gradebook, "__init__", stock)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert speedups.install() is False
    assert nbgrader.api.Gradebook.__init__ is stock
    assert any("written for nbgrader" in str(w.message) for w in caught)


def test_cached_metadata_validation_raises_what_jsonschema_raises():
    """nbgrader's metadata validator with the cached jsonschema: valid metadata passes, and
    invalid metadata fails with jsonschema.validate's own error."""
    import jsonschema
    import pytest
    from nbgrader.nbgraderformat.v3 import MetadataValidatorV3
    schema = MetadataValidatorV3().schema
    cached = speedups.CachedJsonschema()
    good = {"grade": True, "solution": False, "locked": True, "grade_id": "t", "points": 1, "schema_version": 3}
    cached.validate(good, schema)
    for bad in (dict(good, points="many"), dict(good, grade_id=3), {"grade": True}):
        with pytest.raises(jsonschema.ValidationError) as stock:
            jsonschema.validate(bad, schema)
        for _ in range(2):   # checked again: the same error, never a remembered pass
            with pytest.raises(jsonschema.ValidationError) as ours:
                cached.validate(bad, schema)
            assert ours.value.message == stock.value.message


def test_metadata_is_checked_once_and_a_change_is_checked_again(monkeypatch):
    """The cache remembers only metadata found valid, by its whole JSON text under its schema's:
    the same metadata is not checked twice; changed metadata, or another schema, is checked."""
    import jsonschema
    import pytest
    from nbgrader.nbgraderformat.v3 import MetadataValidatorV3
    schema = MetadataValidatorV3().schema
    cached = speedups.CachedJsonschema()
    checks = []
    stock = speedups._validator

    def counted(text):
        checks.append(text)
        return stock(text)
    monkeypatch.setattr(speedups, "_validator", counted)
    good = {"grade": True, "solution": False, "locked": True, "grade_id": "t", "points": 1, "schema_version": 3}
    for _ in range(3):
        cached.validate(dict(good), schema)
    assert len(checks) == 1
    with pytest.raises(jsonschema.ValidationError):
        cached.validate(dict(good, points=True), schema)   # JSON's true is no number
    cached.validate(dict(good, points=2.0), schema)
    assert len(checks) == 3
    stricter = dict(schema, required=[*schema.get("required", []), "task"])
    with pytest.raises(jsonschema.ValidationError):
        cached.validate(dict(good), stricter)   # the same metadata under another schema
    assert len(checks) == 4
    for _ in range(3 * cached.SCHEMAS_KEPT):   # nbgrader reads a schema anew for each validator it makes
        cached.validate(dict(good), MetadataValidatorV3().schema)
    assert len(cached._schemas) <= cached.SCHEMAS_KEPT


def test_a_scratch_gradebook_holds_the_same_rows_without_flushes(tmp_path, savings):
    """record.seed's gradebook (scratch: only its bytes are kept) against the class's: the
    same assignment rows; its commits skip the journal file and the flushes to disk, the
    class's keep SQLite's defaults."""
    import shutil
    import sqlite3

    from nbgrader.api import Gradebook
    from sqlalchemy import event

    from assignments.grading.run import record
    from assignments.grading.run.course import load_config
    from assignments.rnn_step_by_step import ASSIGNMENT as A
    shutil.copytree(A.source_dir, tmp_path / "source" / A.id, ignore=shutil.ignore_patterns("__pycache__"))
    write_generated(A, str(tmp_path / "source" / A.id), reuse_release=True)
    config = load_config(str(tmp_path))
    config.Upstream.stock = False   # the course's savings, even in a stock-mode run
    config.GenerateAssignment.force = True   # as grading does: the seed's release is made again
    modes = []

    def mode(conn):
        modes.append((str(conn.engine.url).endswith("seed.db"), conn.exec_driver_sql("PRAGMA journal_mode").scalar(),
                      conn.exec_driver_sql("PRAGMA synchronous").scalar()))
    event.listen(Engine, "commit", mode)
    try:
        seed = record.seed(config, A.id, str(tmp_path / "seed.db"))
        record.prepare(config, A.id)
        with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
            gb.update_or_create_student("ada")
    finally:
        event.remove(Engine, "commit", mode)
    scratch, kept = [m[1:] for m in modes if m[0]], [m[1:] for m in modes if not m[0]]
    assert len(scratch) > 20 and scratch.count(("memory", 0)) >= len(scratch) - 5, scratch   # but the first few
    assert kept and set(kept) == {("delete", 2)}, set(kept)   # SQLite's defaults: journal file, FULL
    dump = sqlite3.connect(":memory:")
    dump.deserialize(seed)
    ours = sqlite3.connect(config.CourseDirectory.db_url[len("sqlite:///"):])
    for table in ("assignment", "notebook", "base_cell", "grade_cells", "solution_cells", "source_cell"):
        rows = [sorted(db.execute(f"SELECT * FROM {table}").fetchall()) for db in (dump, ours)]
        assert rows[0] and len(rows[0]) == len(rows[1]), table


def test_a_gradebook_closed_keeps_the_shared_pool_and_a_fork_gets_its_own(tmp_path, savings):
    """Opening and closing the class's gradebook again and again connects once (nbgrader's
    close would dispose of the engine, and each opening would connect anew). A process
    forked with a connection in the pool leaves it to its parent, which goes on using it."""
    from nbgrader.api import Gradebook
    from sqlalchemy import event

    db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(db_url):
        pass   # the new database's schema and course row, through nbgrader's own engine
    engine, connects = speedups._engine(db_url), []
    event.listen(engine, "connect", lambda *_: connects.append(os.getpid()))
    for student in ("ada", "grace", "alan"):
        with Gradebook(db_url) as gb:
            gb.update_or_create_student(student)
    assert connects == [os.getpid()]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child reads through a connection of its own
        code = 1
        try:
            with Gradebook(db_url) as gb:
                names = ",".join(sorted(s.id for s in gb.students))
            os.write(write, f"{names};{connects.count(os.getpid())}".encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    assert os.waitpid(pid, 0)[1] == 0
    with os.fdopen(read) as f:
        assert f.read() == "ada,alan,grace;1"
    with Gradebook(db_url) as gb:   # the parent's pooled connection still works
        gb.update_or_create_student("edsger")
        assert len(gb.students) == 4
    assert connects == [os.getpid()]


def test_a_submission_added_in_one_insert_per_table_has_nbgraders_rows(tmp_path):
    """speedups' add_submission against nbgrader's own, on the course's assignment: the same
    rows in every table (ids aside), the same submission returned, the same error twice."""
    import sqlite3

    import pytest
    from helpers import course_gradebook
    from nbgrader.api import Gradebook, InvalidEntry
    config, _ = course_gradebook(tmp_path)
    url = config.CourseDirectory.db_url
    with Gradebook(url, config.CourseDirectory.course_id) as gb:
        for student in ("stock", "ours"):
            gb.update_or_create_student(student)
        made = {"stock": speedups._stock_add_submission(gb, "rnn_step_by_step", "stock", timestamp="2026-01-02 03:04:05"),
                "ours": speedups._add_submission(gb, "rnn_step_by_step", "ours", timestamp="2026-01-02 03:04:05")}
        assert made["ours"].student_id == "ours" and made["ours"].timestamp == made["stock"].timestamp
        assert [n.notebook.name for n in made["ours"].notebooks] == [n.notebook.name for n in made["stock"].notebooks]
        with pytest.raises(InvalidEntry):
            speedups._add_submission(gb, "rnn_step_by_step", "ours")
        assert gb.find_submission("rnn_step_by_step", "ours").id == made["ours"].id
    db = sqlite3.connect(url[len("sqlite:///"):])

    def rows(student):
        sub = db.execute("SELECT id, assignment_id, timestamp, extension FROM submitted_assignment WHERE student_id = ?",
                         (student,)).fetchall()
        (sid, *fields), = sub
        nbs = db.execute("SELECT id, notebook_id, flagged, late_submission_penalty FROM submitted_notebook "
                         "WHERE assignment_id = ?", (sid,)).fetchall()
        found = [tuple(fields), sorted(n[1:] for n in nbs)]
        for table, columns in (("grade", "auto_score, manual_score, extra_credit, needs_manual_grade"),
                               ("comment", "auto_comment, manual_comment")):
            found.append(sorted(db.execute(f"SELECT c.name, c.type, {columns} FROM {table} t JOIN base_cell c "
                                           f"ON t.cell_id = c.id WHERE t.notebook_id IN ({','.join('?' * len(nbs))})",
                                           [n[0] for n in nbs]).fetchall()))
        return found
    stock, ours = rows("stock"), rows("ours")
    assert len(stock[2]) == 8 and len(stock[3]) == 8
    assert ours == stock


def test_an_unchanged_assignment_is_not_generated_again_for_the_class(tmp_path, monkeypatch):
    """record.prepare(..., like=seed) leaves a gradebook that already holds the assignment as
    the seed holds it, and prepares one that does not (a first run, a changed source)."""
    from helpers import course_gradebook
    from nbgrader.converters import GenerateAssignment

    from assignments.grading.run import record
    config, _ = course_gradebook(tmp_path)   # the class's gradebook, prepared by nbgrader
    config.GenerateAssignment.force = True
    seed = f"sqlite:///{tmp_path / 'seed.db'}"
    record.seed(config, "rnn_step_by_step", str(tmp_path / "seed.db"))
    runs = []
    monkeypatch.setattr(GenerateAssignment, "start", lambda self: runs.append(self.coursedir.db_url))
    record.prepare(config, "rnn_step_by_step", like=seed)
    assert runs == []   # the same rows: nothing to write
    assert record.assignment_rows(config.CourseDirectory.db_url, "rnn_step_by_step")[3]   # sources compared too
    import sqlite3
    with sqlite3.connect(str(tmp_path / "seed.db")) as db:   # the source changed since: one cell's points
        db.execute("UPDATE grade_cells SET max_score = max_score + 1 WHERE id = (SELECT id FROM grade_cells LIMIT 1)")
    record.prepare(config, "rnn_step_by_step", like=seed)
    assert runs == [config.CourseDirectory.db_url]


def test_assignment_rows_read_with_sql_are_what_the_orm_loads(tmp_path):
    """record.assignment_rows (plain SQL on nbgrader's tables) gives, for a prepared
    gradebook, the rows nbgrader's own objects hold; a gradebook without the assignment is an
    error, as find_assignment's is."""
    from helpers import course_gradebook
    from nbgrader.api import Gradebook

    from assignments.grading.run import record
    config, _ = course_gradebook(tmp_path)
    url = config.CourseDirectory.db_url
    with Gradebook(url) as gb:
        found = gb.find_assignment("rnn_step_by_step")
        nbs = sorted(found.notebooks, key=lambda nb: nb.name)
        cells = sorted(((nb.name, c.name, kind, getattr(c, "max_score", None), getattr(c, "cell_type", None))
                        for nb in nbs for kind, group in (("GradeCell", nb.grade_cells), ("SolutionCell", nb.solution_cells),
                                                          ("TaskCell", nb.task_cells)) for c in group), key=repr)
        sources = sorted(((nb.name, c.name, c.cell_type, c.locked, c.source, c.checksum)
                          for nb in nbs for c in nb.source_cells), key=repr)
        orm = [[(found.name, found.course_id)], [(nb.name, nb.kernelspec) for nb in nbs], cells, sources]
    rows = record.assignment_rows(url, "rnn_step_by_step")
    assert rows == orm and len(rows[2]) > 0 and any(r[2] == "SolutionCell" for r in rows[2])
    with pytest.raises(ValueError, match="holds 0 assignments"):
        record.assignment_rows(url, "no_such_assignment")
