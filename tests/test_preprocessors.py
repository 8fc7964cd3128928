"""preprocessors.py: JudgedExecute runs the learner's cells as jobs of the one request that
serves the judge (serve_cells), and must give the notebook that one execute request per
cell gives; outputs are checked against the notebook format by a compiled validator."""
import asyncio
import glob
import json
import os
import threading

import nbformat
import pytest
from helpers import REPO, A, build_samples, comparable_notebook, course_pieces
from nbformat.v4 import output_from_msg
from nbformat.validator import ValidationError
from traitlets.config import Config

from assignments.grading.authoring.submissions import answer_cells, fill
from assignments.grading.run import pipeline
from assignments.grading.upstream.served_cells import ServedCells, output_node

# Cells a learner may add: every kind of output, an error, IPython's own syntax, a display
# updated later, the last result reused, top-level await (run with a request of its own), a
# cell nbclient skips, an empty one, a syntax error, one that reads its execution count, and one
# whose printing reaches the grader in two messages.
EXTRA_CELLS = [
    "print('to stdout'); import sys; print('to stderr', file=sys.stderr)\n6 * 7",
    "_ + 1",
    "from IPython.display import display, HTML, Markdown\ndisplay(HTML('<b>bold</b>'), Markdown('*md*'))\n"
    "handle = display('first', display_id=True)",
    "handle.update('updated later')\nx = %pwd\nfiles = !echo shell\nprint(len(files))",
    "import asyncio\nawait asyncio.sleep(0)\nprint('awaited')",
    "print('after the await')\n{'a': [1, 2]}",
    "raise ValueError('a learner error')",
    "def broken(:\n    pass",
    "from IPython.display import clear_output\nprint('gone'); clear_output(wait=True); print('kept')",
    "",
    "get_ipython().execution_count",
    "print('one', flush=True)\nprint('two')",
]


def learner_notebook():
    with open(os.path.join(REPO, "samples", "answers", A.id, "ada.py"), encoding="utf-8") as f:
        nb = fill(os.path.join(REPO, "release", A.id, A.notebook + ".ipynb"), answer_cells(f.read()))
    for i, src in enumerate(EXTRA_CELLS):
        nb.cells.insert(3 + i, nbformat.v4.new_code_cell(src))
    skipped = nbformat.v4.new_code_cell("print('never run')")
    skipped.metadata["tags"] = ["skip-execution"]
    nb.cells.insert(3 + len(EXTRA_CELLS), skipped)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
    return nb


def without_receipts(results):
    return dict(results, submissions=[{k: v for k, v in s.items() if k != "receipt"} for s in results["submissions"]])


def comparable(path):
    with open(path, encoding="utf-8") as f:
        return comparable_notebook(json.load(f))


# Right work, noisy work, a wrong function (diagnosed, located, repaired), and extra cells.
SERVED = ["ada", "dev", "eve", "learner"]


@pytest.fixture(scope="module")
def both_ways(tmp_path_factory):
    subs = build_samples(str(tmp_path_factory.mktemp("served")))
    folder = os.path.join(subs, "submitted", "learner", A.id)
    os.makedirs(folder)
    nbformat.write(learner_notebook(), os.path.join(folder, A.notebook + ".ipynb"))
    graded = {}
    for serve in (False, True):
        config = Config()
        config.JudgedExecute.serve_cells = serve
        out = str(tmp_path_factory.mktemp(f"serve-{serve}"))
        with course_pieces():   # stock mode would run nbclient's own cells both times
            graded[serve] = (out, pipeline.grade(A, subs, out, overrides=config, workers=1, students=SERVED))
    return graded


def test_served_cells_give_the_notebook_a_request_per_cell_gives(both_ways):
    (off, off_results), (on, on_results) = both_ways[False], both_ways[True]
    # the grades alike; the receipts differ in the sandbox settings alone (serve_cells is one)
    assert without_receipts(on_results) == without_receipts(off_results)
    differ = {k for a, b in zip(on_results["submissions"], off_results["submissions"]) if "receipt" in a
              for k in a["receipt"] if a["receipt"][k] != b["receipt"][k]}
    assert differ == {"sandbox"}, differ
    paths = sorted(glob.glob(os.path.join(off, "autograded", "*", A.id, "*.ipynb")))
    assert len(paths) == len(SERVED)
    for path in paths:
        assert comparable(path.replace(off, on)) == comparable(path), path


def test_the_learners_extra_cells_ran_as_in_jupyter(both_ways):
    out, results = both_ways[True]
    (learner,) = [s for s in results["submissions"] if s["student"] == "learner"]
    assert learner["status"] == "graded" and learner["score"] == A.max_score, learner
    nb = nbformat.read(os.path.join(out, "autograded", "learner", A.id, A.notebook + ".ipynb"), as_version=4)
    cells = {c.source: c for c in nb.cells if c.cell_type == "code"}

    def said(src):
        return [o.get("text") or o.get("data", {}).get("text/plain") or o.get("ename") for o in cells[src].outputs]
    first = cells[EXTRA_CELLS[0]]
    assert said(EXTRA_CELLS[0]) == ["to stdout\n", "to stderr\n", "42"]
    assert said(EXTRA_CELLS[1]) == ["43"] and cells[EXTRA_CELLS[1]]["execution_count"] == first["execution_count"] + 1
    assert said(EXTRA_CELLS[2])[-1] == "'updated later'"
    assert said(EXTRA_CELLS[3]) == ["1\n"]
    assert said(EXTRA_CELLS[4]) == ["awaited\n"] and said(EXTRA_CELLS[5]) == ["after the await\n", "{'a': [1, 2]}"]
    assert said(EXTRA_CELLS[6]) == ["ValueError"] and said(EXTRA_CELLS[7]) == ["SyntaxError"]
    assert said(EXTRA_CELLS[8]) == ["kept\n"]
    assert cells[""]["execution_count"] is None and cells["print('never run')"]["outputs"] == []
    counted = cells[EXTRA_CELLS[10]]
    assert said(EXTRA_CELLS[10]) == [str(counted["execution_count"] + 1)]   # IPython counts the cell first
    assert said(EXTRA_CELLS[11]) == ["one\ntwo\n"]   # one output, however the kernel cut it into messages
    counts = [c["execution_count"] for c in cells.values() if c["execution_count"] is not None]
    assert counts == list(range(1, len(counts) + 1))   # every cell run once, in order


MESSAGES = [
    ("stream", {"name": "stdout", "text": "hello\n"}),
    ("display_data", {"data": {"text/plain": "x", "text/html": "<b>x</b>"}, "metadata": {"isolated": True},
                      "transient": {"display_id": "d1"}}),
    ("execute_result", {"data": {"text/plain": "42", "application/json": {"a": [1]}}, "metadata": {},
                        "execution_count": 3}),
    ("error", {"ename": "ValueError", "evalue": "bad", "traceback": ["line 1", "line 2"]}),
]


@pytest.mark.parametrize("kind,content", MESSAGES)
def test_an_output_is_what_nbformat_makes_of_the_message(kind, content):
    msg = {"msg_type": kind, "header": {"msg_type": kind}, "content": content}
    assert output_node(msg) == output_from_msg(msg)


@pytest.mark.parametrize("kind,content", [
    ("display_data", {"data": {"text/plain": 5}, "metadata": {}}),
    ("stream", {"name": "stdout"}),
    ("error", {"ename": "E", "evalue": "v", "traceback": [1]}),
    ("execute_result", {"data": {}, "metadata": {}, "execution_count": "three"}),
])
def test_an_output_a_notebook_cannot_hold_is_refused_as_nbformat_refuses_it(kind, content):
    msg = {"msg_type": kind, "header": {"msg_type": kind}, "content": content}
    with pytest.raises(ValidationError):
        output_node(msg)
    with pytest.raises((ValidationError, KeyError)):
        output_from_msg(msg)


def test_messages_that_are_not_outputs_make_none():
    assert output_node({"msg_type": "status", "content": {"execution_state": "idle"}}) is None


# two classes graded, inside an event loop and outside, to compare: `make test` only
@pytest.mark.slow
def test_inside_a_running_event_loop_the_kernel_sockets_are_read_from_one_thread(tmp_path, monkeypatch):
    """formgrader's Autograde button runs nbgrader inside the Jupyter server's request, whose
    thread runs an event loop. There nbclient would run its coroutines on a helper thread of
    jupyter_core's (" - runner") while the served cells read the same kernel sockets from the
    request's thread: ZeroMQ's sockets are not thread-safe (each Autograde took 1.6 to 10.5 s
    instead of 0.6, and libzmq once aborted the process). The judged run moves to the
    engine's own thread, and grades as it does outside a loop."""
    subs = build_samples(str(tmp_path / "class"))
    readers, real = [], ServedCells._next_iopub
    monkeypatch.setattr(ServedCells, "_next_iopub",
                        lambda self, timeout: readers.append(threading.current_thread().name) or real(self, timeout))

    async def in_a_request():
        return pipeline.grade(A, subs, str(tmp_path / "in-loop"), workers=1, students=["ada", "ben"])

    with course_pieces():
        inside = asyncio.run(in_a_request())
        assert readers and set(readers) == {"grader_0"}
        assert not [t.name for t in threading.enumerate() if t.name.endswith(" - runner")]
        readers.clear()
        outside = pipeline.grade(A, subs, str(tmp_path / "plain"), workers=1, students=["ada", "ben"])
        assert readers and set(readers) == {"MainThread"}
    assert without_receipts(inside) == without_receipts(outside)
