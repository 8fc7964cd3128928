"""Nothing lost: a run killed halfway is repaired by the next one, and grading without a
sandbox is refused unless asked for (then every result says so)."""
import functools
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time

import pytest
from helpers import REPO, build_samples

from assignments.grading.run import pipeline
from assignments.grading.sandbox import kernel


@functools.lru_cache(maxsize=None)
def samples():
    return build_samples(tempfile.mkdtemp(prefix="samples-"))


def grade_command(out, *extra):
    return [sys.executable, "-m", "assignments", "grade", "--submissions", samples(),
            "--out", str(out), "--quiet", *extra]


def test_run_killed_halfway_then_rerun_completes(sample_class, tmp_path):
    process = subprocess.Popen(grade_command(tmp_path), cwd=REPO, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    # kill it once the first students are autograded, while others are still running
    while time.monotonic() < deadline and not os.path.exists(tmp_path / "autograded" / "ben"):
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert not (tmp_path / "results.json").exists()
    run = subprocess.run(grade_command(tmp_path), cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    with open(tmp_path / "results.json", encoding="utf-8") as f:
        assert json.load(f) == sample_class["results"]
    with open(tmp_path / "grades.csv", encoding="utf-8") as f:
        assert len(f.read().strip().splitlines()) == 1 + 6   # header + every student, finn with 0


def test_grading_refuses_without_a_sandbox(assignment, tmp_path, monkeypatch):
    monkeypatch.setattr(kernel.shutil, "which", lambda name: None)   # as on a machine without bwrap
    with pytest.raises(pipeline.SandboxUnavailable, match="bubblewrap.*--no-sandbox"):
        pipeline.grade(assignment, samples(), str(tmp_path))
    assert not (tmp_path / "results.json").exists()


def test_cli_explains_the_refusal_and_the_opt_out(tmp_path):
    env = dict(os.environ, PATH="/nonexistent")   # no bwrap on PATH
    run = subprocess.run(grade_command(tmp_path), cwd=REPO, capture_output=True, text=True, env=env)
    assert run.returncode == 2 and "--no-sandbox" in run.stderr and "bubblewrap" in run.stderr


def test_unsandboxed_grading_is_flagged(assignment, sample_class, tmp_path):
    results = pipeline.grade(assignment, samples(), str(tmp_path), sandbox=False)
    for s in results["submissions"]:
        assert "unsandboxed" in s["flags"]
    scores = {s["student"]: s["score"] for s in results["submissions"]}
    assert scores == {s["student"]: s["score"] for s in sample_class["results"]["submissions"]}


def test_an_unsandboxed_kernel_listens_on_no_tcp_port():
    """Its channels are Unix sockets in its own private folder, as a sandboxed kernel's: ports
    jupyter_client picks are free only until another kernel, starting meanwhile, takes one
    (a make test run once lost a submission so: "Kernel died before replying to kernel_info")."""
    from jupyter_core.utils import run_sync
    km = kernel.GradingKernelManager(sandbox=False)
    try:
        run_sync(km.start_kernel)()
        kc = km.client()
        kc.start_channels()
        run_sync(kc.wait_for_ready)(timeout=60)
        info = km.get_connection_info()
        assert info["transport"] == "ipc" and info["ip"].startswith(km.sockets + os.sep)
        assert stat.S_IMODE(os.stat(km.sockets).st_mode) & 0o777 == 0o700   # the owner alone
        kc.stop_channels()
    finally:
        run_sync(km.shutdown_kernel)(now=True)
        km.cleanup_scratch()


def test_student_folder_names_that_nbgrader_would_glob_are_reported(assignment, tmp_path):
    import shutil
    ben = os.path.join(samples(), "submitted", "ben")
    for name in ("ben", "b*", "[ben]"):
        shutil.copytree(ben, tmp_path / "in" / name)
    results = pipeline.grade(assignment, str(tmp_path / "in"), str(tmp_path / "out"))
    status = {s["student"]: s["status"] for s in results["submissions"]}
    assert status == {"ben": "graded", "b*": "unreadable", "[ben]": "unreadable"}


def test_a_kernel_that_cannot_start_is_reported_not_hung(assignment, tmp_path):
    """The grader's own failure to start a kernel: status error, with the reason."""
    import shutil

    from traitlets.config import Config
    shutil.copytree(os.path.join(samples(), "submitted", "ben"), tmp_path / "in" / "ben")
    too_small = Config()
    too_small.GradingKernelManager.memory_limit = "10M"   # Python cannot even start
    results = pipeline.grade(assignment, str(tmp_path / "in"), str(tmp_path / "out"), overrides=too_small)
    (ben,) = results["submissions"]
    assert ben["status"] == "error" and "Kernel died" in ben["message"]
