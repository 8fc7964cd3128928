"""The hostile corpus (tests/fixtures/hostile/): cheats earn nothing, faults cost only the
function or cell that caused them, nothing outside a submission changes, no loopback server
is reached, and grading finishes. Graded once, with real nbgrader, kernels and sandbox."""
import importlib.util
import json
import os
import socket
import subprocess
import threading

import pytest
from helpers import REPO, A, schema_problems, tree_digest
from traitlets.config import Config

from assignments.grading.run import pipeline

HOSTILE = os.path.join(REPO, "tests", "fixtures", "hostile")
PORT = 47811
SENTINEL = "/tmp/hostile_sentinel.txt"

# case -> (functions that must score 0 (all others must earn full marks), flags that must
# appear (prefixes), status)
EXPECT = {
    "patch_np_testing": ({"rnn_cell_forward"}, ["attempt:grader_machinery"], "graded"),
    "patch_checks": ({"lstm_forward"}, ["attempt:grader_machinery"], "graded"),
    "swallow_tracebacks": ({"rnn_backward"}, ["attempt:grader_machinery"], "graded"),
    "rebind_builtins": (set(), ["attempt:grader_machinery"], "graded"),
    "hide_displays": (set(), ["attempt:grader_machinery"], "graded"),
    "patch_sockets": (set(), ["attempt:grader_machinery"], "graded"),
    "close_channel": (set(), ["attempt:network"], "graded"),
    "invalid_outputs": (set(), ["invalid_output:cell", "attempt:grader_machinery"], "incomplete"),
    # its line lacks the job's nonce: dropped unparsed (a line with it, nested too deep, is
    # refused and flagged: tests/test_channel.py)
    "deep_reply": (set(), ["attempt:network"], "incomplete"),
    "read_reference": ({"lstm_cell_backward"}, ["attempt:reach_files"], "graded"),
    "read_other_submissions": ({"rnn_cell_backward"}, ["attempt:reach_files"], "graded"),
    "loopback_server": ({"rnn_forward"}, ["attempt:network"], "graded"),
    "write_outside": (set(), ["attempt:reach_files"], "graded"),
    "infinite_loop": ({"rnn_forward"}, ["timeout:rnn_forward"], "incomplete"),
    "ignores_signals": ({"lstm_forward"}, ["timeout:lstm_forward", "attempt:processes"], "incomplete"),
    "memory_hog": ({"lstm_cell_forward"}, ["memory:lstm_cell_forward"], "incomplete"),
    "kills_kernel": ({"rnn_cell_backward"}, ["dead_kernel:rnn_cell_backward", "attempt:processes"], "incomplete"),
    "floods_output": (set(), ["output_flood:cell"], "incomplete"),
    "huge_message": (set(), [], "graded"),
    "system_exit": ({"lstm_cell_forward"}, ["exit:lstm_cell_forward", "exit:cell"], "incomplete"),
    "loop_in_a_cell": (set(), ["timeout:cell", "attempt:processes"], "incomplete"),
    "fork_bomb": (set(), ["timeout:cell", "attempt:processes"], "incomplete"),
    "edited_test_cell": (set(), ["tampered:edited:test_rnn_cell_forward"], "graded"),
    "deleted_test_cells": (set(), ["tampered:deleted:test_lstm_backward"], "graded"),
    "repointed_test_cell": (set(), ["tampered:duplicated:rnn_forward", "tampered:edited:test_lstm_cell_forward"], "graded"),
    "edited_imports": (set(), ["tampered:edited:imports"], "graded"),
    "emptied_notebook": ({"rnn_cell_forward", "rnn_forward", "lstm_cell_forward", "lstm_forward", "rnn_cell_backward",
                          "rnn_backward", "lstm_cell_backward", "lstm_backward"}, ["tampered:deleted:lstm_backward"], "graded"),
    "not_json": (None, [], "unreadable"),
    "binary_garbage": (None, [], "unreadable"),
    "empty_file": (None, [], "unreadable"),
    "json_not_notebook": (None, [], "unreadable"),
}

FAST = Config()
FAST.JudgedExecute.call_timeout = 4
FAST.JudgedExecute.timeout = 8
FAST.JudgedExecute.iopub_timeout = 2


def tracked_digest():
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True).stdout.decode().split("\0")
    import hashlib
    h = hashlib.sha256()
    for f in sorted(x for x in files if x and os.path.isfile(os.path.join(REPO, x))):
        with open(os.path.join(REPO, f), "rb") as fh:
            h.update(f.encode() + fh.read())
    return h.hexdigest()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    connections = []
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", PORT))
    server.listen(8)
    server.settimeout(0.5)
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                conn, addr = server.accept()
                connections.append(addr)
                conn.close()
            except OSError:
                pass
    processes = []

    def count():   # how many processes the machine has, while the corpus is graded
        while not stop.is_set():
            processes.append(sum(name.isdigit() for name in os.listdir("/proc")))
            stop.wait(0.2)
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    counter = threading.Thread(target=count, daemon=True)
    counter.start()
    if os.path.exists(SENTINEL):
        os.remove(SENTINEL)
    spec = importlib.util.spec_from_file_location("hostile_build", os.path.join(HOSTILE, "build.py"))
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    submitted = str(tmp_path_factory.mktemp("hostile_submitted"))
    build.build(submitted)
    before = (tree_digest(submitted), tracked_digest())
    out = tmp_path_factory.mktemp("hostile")
    try:
        results = pipeline.grade(A, submitted, str(out), overrides=FAST)
    finally:
        stop.set()
        thread.join(5)
        counter.join(5)
        server.close()
    after = (tree_digest(submitted), tracked_digest())
    return {"results": {s["student"]: s for s in results["submissions"]}, "raw": results, "out": str(out),
            "connections": connections, "before": before, "after": after, "processes": processes}


def test_every_case_is_reported(hostile):
    assert set(hostile["results"]) == set(EXPECT)


@pytest.mark.parametrize("case", sorted(EXPECT))
def test_case_earns_what_it_should(hostile, case):
    zero, flags, status = EXPECT[case]
    s = hostile["results"][case]
    assert s["status"] == status, (s["status"], s["flags"], s["message"])
    for flag in flags:
        assert any(f.startswith(flag) for f in s["flags"]), (flag, s["flags"])
    if zero is None:
        assert s["score"] == 0 and s["message"]
        return
    earned = {e["id"]: e["score"] for e in s["exercises"]}
    for e in s["exercises"]:
        if e["id"] in zero:
            assert e["score"] == 0, (e["id"], e["feedback"])
        else:
            assert e["passed"], (e["id"], e["feedback"], s["flags"])
    assert s["score"] == sum(earned.values())


def test_results_follow_the_documented_schema(hostile):
    assert schema_problems(hostile["raw"]) == []


def test_nothing_outside_a_submission_changed(hostile):
    assert hostile["before"] == hostile["after"]
    assert not os.path.exists(SENTINEL)


def test_no_loopback_server_was_reached(hostile):
    assert hostile["connections"] == []


def test_fork_bomb_is_contained(hostile):
    """The kernel may hold at most GradingKernelManager.process_limit processes (128): two
    workers' kernels and the grader stay far below 600 more than the machine had before.
    An unbounded bomb passes thousands within a second."""
    assert hostile["processes"], "the process count was never sampled"
    assert max(hostile["processes"]) - hostile["processes"][0] < 600, max(hostile["processes"])


def test_outputs_a_notebook_cannot_hold_are_dropped_and_the_cell_goes_on(hostile):
    """Before, one such output failed the whole submission when nbgrader validated the notebook."""
    path = os.path.join(hostile["out"], "autograded", "invalid_outputs", "rnn_step_by_step", "rnn_step_by_step.ipynb")
    with open(path, encoding="utf-8") as f:
        texts = ["".join(o.get("text", "")) for c in json.load(f)["cells"] for o in c.get("outputs", [])]
    assert sum("dropped an output that a notebook cannot hold" in t for t in texts) == 2
    assert any("still here" in t for t in texts)


def test_flooded_notebook_stays_small(hostile):
    path = os.path.join(hostile["out"], "autograded", "floods_output", "rnn_step_by_step", "rnn_step_by_step.ipynb")
    assert os.path.getsize(path) < 2_000_000


def test_class_report_groups_the_hostile_class(hostile):
    """report.json and report.html, written beside results.json, flag each case where it belongs."""
    from assignments.grading.reports.report import FAULT_KINDS
    with open(os.path.join(hostile["out"], "report.json"), encoding="utf-8") as f:
        flagged = {g: {r["student"] for r in rows} for g, rows in json.load(f)["flagged"].items()}
    subs = hostile["results"].items()

    def having(prefixes):
        return {s for s, r in subs if any(f.split(":")[0] in prefixes for f in r["flags"])}
    assert flagged["unreadable"] == {s for s, r in subs if r["status"] == "unreadable"}
    assert flagged["faults"] == {s for s, r in subs if r["status"] == "incomplete"} | having(FAULT_KINDS)
    assert flagged["tampering"] == having({"tampered"}) and len(flagged["tampering"]) >= 5
    assert flagged["attempts"] == having({"attempt"}) and len(flagged["attempts"]) >= 10
    with open(os.path.join(hostile["out"], "report.html"), encoding="utf-8") as f:
        page = f.read()
    for group, title in (("unreadable", "Unreadable submissions"), ("faults", "Faults"), ("tampering", "Tampering"),
                         ("attempts", "Attempts on the grader")):
        assert f"{title}: {len(flagged[group])}</h3>" in page
