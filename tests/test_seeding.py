"""run/seeding.py: the seed made once while its inputs are the same (on disk, and in this
process for other folders), and a class's new gradebook started as its copy
(record.start_from_seed)."""
import os
import shutil
import sqlite3

import pytest
from nbgrader.converters import GenerateAssignment

from assignments.grading.authoring.generated import write_generated
from assignments.grading.run import record, seeding
from assignments.grading.run.course import load_config
from assignments.rnn_step_by_step import ASSIGNMENT as A


def _course(root):
    """A run's private course folder at ``root``, as prepare_course lays it out, and its config
    with the course's savings (whatever the run's mode)."""
    shutil.copytree(A.source_dir, root / "source" / A.id, ignore=shutil.ignore_patterns("__pycache__"))
    write_generated(A, str(root / "source" / A.id), reuse_release=True)
    config = load_config(str(root))
    config.Upstream.stock = False
    config.GenerateAssignment.force = True   # as grading does
    return config


def _tables(path):
    """Each table's row count, the schema's revision and the course rows of an SQLite gradebook."""
    with sqlite3.connect(path) as db:
        names = [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return ({n: db.execute(f"SELECT count(*) FROM {n}").fetchone()[0] for n in names},
                db.execute("SELECT version_num FROM alembic_version").fetchall(),
                db.execute("SELECT * FROM course").fetchall())


def test_a_new_class_gradebook_is_the_seeds_copy_with_the_rows_nbgrader_writes(tmp_path, monkeypatch):
    ours, theirs = _course(tmp_path / "ours"), _course(tmp_path / "theirs")
    seed = record.seed(ours, A.id, str(tmp_path / "seed.db"))
    record.prepare(theirs, A.id)   # nbgrader's GenerateAssignment into a new gradebook
    runs = []
    monkeypatch.setattr(GenerateAssignment, "start", lambda self: runs.append(self.coursedir.db_url))
    assert record.start_from_seed(ours, seed)
    record.prepare(ours, A.id, like=f"sqlite:///{tmp_path / 'seed.db'}")
    assert runs == []   # nothing left to write
    db = ours.CourseDirectory.db_url
    assert record.assignment_rows(db, A.id) == record.assignment_rows(theirs.CourseDirectory.db_url, A.id)
    assert _tables(db.removeprefix("sqlite:///")) == _tables(theirs.CourseDirectory.db_url.removeprefix("sqlite:///"))
    assert oct(os.stat(db.removeprefix("sqlite:///")).st_mode & 0o777) == \
        oct(os.stat(theirs.CourseDirectory.db_url.removeprefix("sqlite:///")).st_mode & 0o777)
    assert [n for n in os.listdir(tmp_path / "ours") if "seed" in n] == []   # no part left behind


@pytest.mark.parametrize("case", ["exists", "server", "stock", "in memory"])
def test_a_gradebook_that_is_not_a_new_sqlite_file_is_left_to_nbgrader(tmp_path, case):
    config = load_config(str(tmp_path))
    config.Upstream.stock = False
    seed = b"a seed's bytes"
    path = tmp_path / "gradebook.db"
    if case == "exists":
        path.write_bytes(b"another assignment's gradebook")
    elif case == "server":
        config.CourseDirectory.db_url = "postgresql://grader@localhost/course"
    elif case == "stock":
        config.Upstream.stock = True
    else:
        config.CourseDirectory.db_url = "sqlite://"
    assert not record.start_from_seed(config, seed)
    assert path.read_bytes() == b"another assignment's gradebook" if case == "exists" else not path.exists()


def test_a_seed_made_in_this_process_is_not_made_again_for_another_folder(tmp_path, monkeypatch):
    """Two runs in two folders with the same source and settings: nbgrader makes the seed once;
    both get its bytes, the same release (bytes and permissions) and a kept copy. Other
    settings make another."""
    monkeypatch.setattr(seeding, "_made", {})
    made = []
    real = record.seed
    monkeypatch.setattr(record, "seed", lambda *a: made.append(a[2]) or real(*a))
    works = [tmp_path / "one", tmp_path / "two"]
    seeds = [seeding.seeded(_course(w), A.id, str(w)) for w in works]
    assert made == [str(works[0] / "seed.db")]
    assert seeds[0][0] == seeds[1][0] == (works[1] / "seed.db").read_bytes()
    assert os.path.basename(seeds[0][1]) == os.path.basename(seeds[1][1])   # the same digest
    release = [w / "release" / A.id for w in works]
    files = sorted(os.listdir(release[0]))
    assert files and files == sorted(os.listdir(release[1]))
    for name in files:
        a, b = release[0] / name, release[1] / name
        assert a.read_bytes() == b.read_bytes() and os.stat(a).st_mode == os.stat(b).st_mode, name
    assert os.path.isfile(os.path.join(seeds[1][1], "seed.db"))   # kept for the next run in that folder
    other = _course(tmp_path / "three")
    other.LimitOutput.max_lines = 10
    seeding.seeded(other, A.id, str(tmp_path / "three"))
    assert len(made) == 2
