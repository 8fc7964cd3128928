"""Grading on a Dask cluster into a PostgreSQL gradebook gives what local grading into
SQLite gives. Both are real: a LocalCluster with worker processes, and a PostgreSQL server
started here in a private folder (Debian's postgresql package; .ci/run installs it)."""
import csv
import glob
import os
import pwd
import shutil
import subprocess
import tempfile

import pytest
from helpers import build_samples, gradebook_dump
from traitlets.config import Config

from assignments.grading.run import pipeline
from assignments.grading.run.dispatch import ClusterUnfit
from assignments.rnn_step_by_step import ASSIGNMENT as A  # noqa: E402

PORT = 54329


def _as_postgres(cmd):
    """PostgreSQL refuses to run as root: run its tools as the package's postgres user."""
    return (["runuser", "-u", "postgres", "--"] + cmd) if os.geteuid() == 0 else cmd


@pytest.fixture(scope="module")
def postgres():
    initdb = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb")) or [shutil.which("initdb")]
    if not initdb[-1]:
        pytest.fail("PostgreSQL is not installed (apt-get install postgresql; `make test` does it as root)")
    bindir = os.path.dirname(initdb[-1])
    root = tempfile.mkdtemp(prefix="pg-")
    os.chmod(root, 0o755)
    data, sockets = os.path.join(root, "data"), os.path.join(root, "run")
    os.makedirs(sockets)
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(root, user.pw_uid, user.pw_gid)
        os.chown(sockets, user.pw_uid, user.pw_gid)
    run = dict(check=True, capture_output=True, text=True)
    subprocess.run(_as_postgres([os.path.join(bindir, "initdb"), "-D", data, "-A", "trust", "-U", "grader"]), **run)
    subprocess.run(_as_postgres([os.path.join(bindir, "pg_ctl"), "-D", data, "-w", "-l", os.path.join(root, "log"),
                                 "-o", f"-k {sockets} -p {PORT} -c listen_addresses=''", "start"]), **run)
    try:
        subprocess.run([os.path.join(bindir, "createdb"), "-h", sockets, "-p", str(PORT), "-U", "grader",
                        "gradebook"], **run)
        yield f"postgresql+psycopg://grader@/gradebook?host={sockets}&port={PORT}"
    finally:
        subprocess.run(_as_postgres([os.path.join(bindir, "pg_ctl"), "-D", data, "-m", "immediate", "stop"]),
                       capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster():
    from dask.distributed import LocalCluster
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        yield c


def test_cluster_and_postgres_grade_like_local(sample_class, cluster, postgres, tmp_path):
    local = gradebook_dump("sqlite:///" + os.path.join(sample_class["out"], "gradebook.db"))
    for run in ("first", "again"):   # a rerun into the same gradebook updates, never duplicates
        out = str(tmp_path / run)
        results = pipeline.grade(A, sample_class["submissions"], out, scheduler=cluster.scheduler_address,
                                 db_url=postgres)
        assert results == sample_class["results"]
        assert gradebook_dump(postgres) == local
        with open(os.path.join(out, "grades.csv")) as a, open(os.path.join(sample_class["out"], "grades.csv")) as b:
            assert a.read() == b.read()
        assert not os.path.exists(os.path.join(out, "gradebook.db"))   # the grades went to PostgreSQL
        with open(os.path.join(out, "timings.csv")) as f:
            assert len({row["worker"] for row in csv.DictReader(f)}) == 2   # both Dask workers graded


def test_unreachable_scheduler_is_a_clear_error(tmp_path):
    fast = Config()
    fast.Dispatch.connect_timeout = 2
    with pytest.raises(ClusterUnfit, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        pipeline.grade(A, build_samples(str(tmp_path / "in")), str(tmp_path / "out"), scheduler="tcp://127.0.0.1:9", overrides=fast)
