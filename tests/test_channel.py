"""The grader's channel to the kernel and the output budget, in process (grading/judging/channel.py),
and the harness as an ordinary module over the students' checks (grading/shipped/harness.py)."""
import json
import os
import socket
import threading
import time

import numpy as np
import pytest

from assignments.grading.judging.channel import ENTRY, Channel, ChannelClosed, ChannelTimeout, OutputBudget
from assignments.grading.shipped import harness
from assignments.rnn_step_by_step import ASSIGNMENT as A

CLOSE = object()


class FakeHarness:
    """The kernel's end of a channel, played by a test: connects and says the token as the
    set-up code does, then answers each job it reads with ``lines(job)``."""

    def __init__(self, ch, lines, hello=None):
        self.link = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.link.connect(ch.path)
        self.link.sendall(json.dumps({"hello": hello or ch.token}).encode() + b"\n")
        self.reader = self.link.makefile("rb")
        self.lines = lines
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        for line in self.reader:
            for out in self.lines(json.loads(line)):
                if out is CLOSE:
                    self.link.shutdown(socket.SHUT_RDWR)
                    return
                self.link.sendall(out if isinstance(out, bytes) else json.dumps(out).encode() + b"\n")


def channel(tmp_path, lines, max_reply_bytes=1000):
    ch = Channel("", max_reply_bytes=max_reply_bytes)
    ch.listen(str(tmp_path))
    ch.setup_code()
    fake = FakeHarness(ch, lines)
    ch.connect(timeout=5)
    fake.thread.start()
    return ch


def test_only_replies_to_the_job_under_way_are_read(tmp_path):
    def lines(job):
        n = job["nonce"]
        return [{"nonce": n, "case": 0}, {"nonce": "forged", "case": 1}, b"not json\n",
                {"nonce": n, "case": 2}, {"nonce": n, "case": 1, "pad": "x" * 2000},   # too big: dropped
                {"nonce": n, "case": 1}, {"nonce": "forged", "end": True}, {"nonce": n, "end": True}]
    ch = channel(tmp_path, lines)
    assert not os.path.exists(ch.path)   # nothing else can connect once the harness did
    first = ch.ask({"op": "call", "key": "k"}, timeout=5)
    assert [r["case"] for r in first] == [0, 1]
    nonce = ch.nonce
    again = ch.ask({"op": "call", "key": "k"}, timeout=5)
    assert ch.nonce != nonce and [r["case"] for r in again] == [0, 1]   # a fresh nonce per job
    ch.close()


def test_a_line_that_is_no_reply_to_the_job_is_never_parsed(tmp_path, monkeypatch):
    """Parsing costs the worker many times a line's size (a 45 MB line grew one by 1.1 GB): a
    line that does not begin with the job's nonce is dropped unparsed, however it is made."""
    import types

    from assignments.grading.judging import channel as module
    parsed = []
    counting = types.SimpleNamespace(dumps=json.dumps, loads=lambda text: parsed.append(len(text)) or json.loads(text))
    monkeypatch.setattr(module, "json", counting)   # the channel's parsing alone, not the fake harness's

    def lines(job):
        n = job["nonce"]
        junk = "[" + ",".join(["0"] * 450) + "]"   # under the limit, costly to parse
        return [(junk + "\n").encode(), {"forged": junk, "nonce": n}, {"nonce": "forged", "pad": junk},
                {"nonce": n, "case": 0}, {"nonce": n, "end": True}]
    ch = channel(tmp_path, lines)
    before = len(parsed)
    assert [r["case"] for r in ch.ask({"op": "call", "key": "k"}, timeout=5)] == [0]
    assert len(parsed) - before == 2   # the reply and the end, nothing else
    assert max(parsed[before:]) < 100


def test_a_reply_nested_too_deeply_is_refused_and_said(tmp_path):
    def lines(job):
        prefix = '{"nonce": "' + job["nonce"] + '", "x": '
        return [(prefix + "[" * 5000 + "]" * 5000 + "}\n").encode(), {"nonce": job["nonce"], "end": True}]
    ch = channel(tmp_path, lines, max_reply_bytes=100_000)
    assert ch.ask({"op": "call", "key": "k"}, timeout=5) == []
    assert ch.refused == ["a reply nested too deeply to be read"]


def test_a_job_that_hangs_or_loses_its_harness_says_so(tmp_path):
    ch = channel(tmp_path, lambda job: [{"nonce": job["nonce"], "case": 0}])   # never ends its job
    with pytest.raises(ChannelTimeout) as info:
        ch.ask({"op": "call"}, timeout=0.5)
    assert [r["case"] for r in info.value.replies] == [0]
    ch = channel(tmp_path, lambda job: [{"nonce": job["nonce"], "case": 0}, CLOSE])   # the kernel dies
    with pytest.raises(ChannelClosed) as info:
        ch.ask({"op": "call"}, timeout=5)
    assert [r["case"] for r in info.value.replies] == [0]


def test_a_line_cut_short_while_the_harness_did_not_serve_is_dropped(tmp_path):
    """A learner's cell run by a request of its own (stock nbgrader) writes to the socket and
    is interrupted mid-line: the stray bytes are dropped when the harness is started, and
    its "serving" line and the job's replies are read whole. Without the drop, the cut line
    swallows the harness's first line (the check can fail)."""
    def serving(ch, drop):
        fake.link.sendall(b"[" * 5000)   # a line the learner never ended (on a Unix socket, queued now)
        if drop:
            ch.serve_code()
        fake.link.sendall(json.dumps({"serving": "n1"}).encode() + b"\n")   # the harness, once started
        ch.nonce = "n1"
        try:
            ch.started(timeout=1)
        except ChannelTimeout:
            return False
        return ch.serving

    for drop, expected in ((False, False), (True, True)):
        ch = Channel("", max_reply_bytes=1000)
        ch.listen(str(tmp_path))
        ch.setup_code()
        fake = FakeHarness(ch, lambda job: [{"nonce": job["nonce"], "case": 0}, {"nonce": job["nonce"], "end": True}])
        ch.connect(timeout=5)
        assert serving(ch, drop) is expected
        if drop:
            fake.thread.start()
            assert [r["case"] for r in ch.ask({"op": "call"}, timeout=5)] == [0] and ch.refused == []
        ch.close()


def test_a_harness_that_does_not_say_the_token_is_refused(tmp_path):
    ch = Channel("", max_reply_bytes=1000)
    ch.listen(str(tmp_path))
    ch.setup_code()
    FakeHarness(ch, lambda job: [], hello="guessed")
    with pytest.raises(RuntimeError, match="token"):
        ch.connect(timeout=5)


def test_the_harness_serves_jobs_in_process(tmp_path, monkeypatch):
    """harness.serve over a real socket, as in the kernel: a kept request, then the calls
    a loop recorded, then the grader closes the channel and serve returns."""
    import inspect

    from assignments.grading.judging import judge
    ns = {"np": np}
    exec(inspect.getsource(A.reference), ns)
    j = judge.Judge(A)
    text, extra = j.request_text("rnn_forward", ["rnn_cell_forward"])
    ch = Channel("", max_reply_bytes=10**7)
    ch.listen(str(tmp_path))
    setup = ch.setup_code()
    link = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    link.connect(ch.path)
    link.sendall(json.dumps({"hello": ch.token}).encode() + b"\n")
    ch.connect(timeout=5)
    monkeypatch.setattr(harness, "_stash", {"k": text})
    monkeypatch.setattr(harness, "_shell", type("Shell", (), {"user_ns": ns})())
    monkeypatch.setattr(harness, "_send", link.sendall)
    monkeypatch.setattr(harness, "_recv", link.recv)
    assert ch.path in setup and ch.token in setup
    code = ch.serve_code()
    assert code == ENTRY.format(cls="Grader_" + ch.token, entry="serve", args=repr(ch.nonce))
    thread = threading.Thread(target=harness.serve, args=(ch.nonce,))
    thread.start()
    ch.started(5)
    from assignments.grading.judging.callees import Desk
    desk = Desk(A)
    desk.begin(["rnn_cell_forward"])
    replies = ch.ask({"op": "call", "key": "k", "extra": extra}, timeout=10, callees=desk)
    assert desk.calls > 0 and not desk.refused   # the cell ran here, never in the "kernel"
    cases = j.cases("rnn_forward")
    assert [r["status"] for r in replies] == ["ok"] * len(cases)
    assert all(r["observed"]["calls_recorded"] for r in replies)
    calls = ch.ask({"op": "recorded"}, timeout=10)
    assert [r["case"] for r in calls] == list(range(len(cases)))
    ch.close()
    thread.join(5)
    assert not thread.is_alive()


def test_a_question_asked_again_is_answered_from_its_bytes_with_the_same_line(tmp_path):
    """A stand-in's question that the Desk answered is answered again from the bytes of its
    line, unread and not answered again, with the same line; a line that also says "end"
    still ends the job, unanswered, as it did before anything was remembered."""
    from assignments.grading.judging.callees import Desk
    x, a, p = A.hidden_cases("rnn_forward")[0][1]
    args = A.checks.encode([x[:, :, 0], a, p])
    sent = []

    def lines(job):
        if "nonce" not in job:   # the grader's answer to a question
            sent.append(job)
            return []
        q = {"nonce": job["nonce"], "callee": "rnn_cell_forward", "args": args}
        return [q, q, dict(q, end=True), {"nonce": job["nonce"], "case": 0}]
    ch = channel(tmp_path, lines, max_reply_bytes=10**6)
    desk, asked = Desk(A), []
    answer = desk.answer
    desk.answer = lambda question: asked.append(question) or answer(question)
    desk.begin(["rnn_cell_forward"])
    assert ch.ask({"op": "call", "key": "k"}, timeout=5, callees=desk) == []   # ended by the third line
    deadline = time.monotonic() + 5
    while len(sent) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(sent) == 2 and sent[0] == sent[1] and "output" in sent[0]
    assert len(asked) == 1 and desk.calls == 2   # read and answered once, counted twice
    ch.close()


def test_harness_answers_a_stashed_request(monkeypatch):
    monkeypatch.setattr(harness, "_stash", {"k": json.dumps({"name": "square", "cases": [A.checks.encode((np.arange(2.0),))]})})
    monkeypatch.setattr(harness, "_shell", type("Shell", (), {"user_ns": {"square": lambda x: x * x}})())
    got = list(harness.answers({"key": "k", "extra": json.dumps({"callees": {"cube": ["x"]}})}))
    assert [(r["status"], r["case"]) for r in got] == [("ok", 0)]
    missing = list(harness.answers({"request": json.dumps({"name": "cube", "cases": []})}))   # a cold kernel's job
    assert [(r["status"], r["case"]) for r in missing] == [("missing", 0)]


def test_request_text_is_the_request_encoded_once():
    from assignments.grading.judging.judge import Judge, request
    judge = Judge(A)
    texts = judge.request_text("rnn_forward", ["rnn_cell_forward"])
    assert judge.request_text("rnn_forward", ["rnn_cell_forward"]) is texts
    cases = [c[1] for c in judge.cases("rnn_forward")]
    whole = json.loads(json.dumps(request(A, "rnn_forward", cases, ["rnn_cell_forward"], defer_calls=True)))
    assert dict(json.loads(texts[0]), **json.loads(texts[1])) == whole
    assert whole["record"]["defer"] is True   # a loop's calls stay in the kernel until asked for


def test_no_reference_source_is_stashed_in_a_warm_kernel():
    """A warm kernel is forked with the requests of every function and the notebook's own
    cells, before any learner code runs: none may hold a reference solution (a callee's source
    goes with its caller's call, after the callee itself was judged), nor a test cell's text
    (its hidden tests)."""
    import nbformat

    from assignments.grading.judging.judged_execute import prepared
    from assignments.gru_step_by_step import ASSIGNMENT as GRU
    for assignment in (A, GRU):
        keep = prepared(assignment)[2]
        sources = [assignment.callee_source(c) for ex in assignment.exercises for c in ex.callees]
        nb = nbformat.read(os.path.join(assignment.source_dir, assignment.notebook + ".ipynb"), as_version=4)
        tests = [c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
        answers = [c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
        assert sources and len(keep) == len(assignment.exercises) + 2
        assert any("BEGIN HIDDEN TESTS" in t for t in tests) and len(answers) >= len(assignment.exercises)
        cells = [json.loads(item["text"]) for item in keep.values() if item.get("cells")]
        assert len(cells) == 1 and len(cells[0]) >= 5
        for item in keep.values():
            for secret in sources + tests + answers:
                assert secret not in item["text"] and json.dumps(secret)[1:-1] not in item["text"]


def test_each_kernel_gets_its_own_token():
    ch = Channel("x = 1", max_reply_bytes=10)
    first, second = ch.setup_code(), ch.setup_code()
    assert first != second and repr("x = 1") in first
    assert repr("x = 1") not in ch.setup_code(stashed="k1") and "'k1'" in ch.setup_code(stashed="k1")


def test_output_budget_keeps_cuts_once_then_drops():
    budget = OutputBudget(120)   # each message below is 52 bytes of JSON
    msg = {"msg_type": "stream", "content": {"text": "y" * 40}}
    assert [budget.take(3, msg) for _ in range(4)] == ["keep", "keep", "cut", "drop"]
    assert budget.take(4, msg) == "keep"   # per cell
    held = budget.hold(3)
    assert budget.take(3, msg) == "keep"   # another piece of code at that index starts afresh
    budget.restore(3, held)
    assert budget.take(3, msg) == "drop"
    assert budget.take(5, {"msg_type": "status", "content": {"execution_state": "busy"}}) == "keep"


def test_harness_runs_in_process():
    """harness.call over a namespace, as in the kernel, with the check module's codec."""
    ns = {"square": lambda x: x * x}
    cases = [A.checks.encode((np.arange(3.0),))]
    replies = list(harness.call(ns, {"name": "square", "cases": cases}))
    assert replies[0]["status"] == "ok"
    assert np.array_equal(A.checks.decode(json.loads(json.dumps(replies[0]["output"]))), np.arange(3.0) ** 2)
    assert list(harness.call(ns, {"name": "cube", "cases": cases}))[0]["status"] == "missing"


def test_a_kernel_stream_that_holds_nothing_is_not_flushed(monkeypatch):
    """Before a cell's end goes out, the harness flushes the kernel's own streams (ipykernel's
    OutStream, real ones here, on a real IOPub thread) only when they hold what the cell wrote:
    an empty one's flush would only wait for the IOPub thread, which sends the cell's end after
    everything queued anyway. A stream the learner put in their place is flushed as before."""
    import io
    import types

    import zmq
    from ipykernel.iostream import IOPubThread, OutStream
    from jupyter_client.session import Session
    context = zmq.Context()
    pub = context.socket(zmq.PUB)
    pub.bind("inproc://harness-flush")
    thread = IOPubThread(pub)
    thread.start()
    flushed = []
    try:
        streams = [OutStream(Session(), thread, name, watchfd=False) for name in ("stdout", "stderr")]
        for stream in streams:
            def flush(stream=stream, stock=stream.flush):
                flushed.append(stream.name)
                stock()
            stream.flush = flush
        monkeypatch.setattr(harness, "_streams", tuple(streams))
        monkeypatch.setattr(harness, "_sys", types.SimpleNamespace(stdout=streams[0], stderr=streams[1]))
        harness._flush()
        assert flushed == []   # nothing written: nothing to wait for
        streams[1].write("a warning\n")
        harness._flush()
        assert flushed == ["stderr"] and not streams[1]._buffers   # sent, and empty again
        flushed.clear()
        harness._flush()
        assert flushed == []
        own = io.StringIO()
        own.flush = lambda: flushed.append("the learner's")
        monkeypatch.setattr(harness, "_sys", types.SimpleNamespace(stdout=own, stderr=streams[1]))
        harness._flush()
        assert flushed == ["the learner's"]
    finally:
        thread.stop()
        thread.close()
        pub.close()
        context.term()


def test_heal_puts_back_rebound_and_deleted_attributes(monkeypatch):
    import types
    module = types.ModuleType("m")
    module.f, module.g, module.pi = len, abs, 3.14
    monkeypatch.setattr(harness, "_pristine", [(module, tuple(vars(module)), tuple(vars(module).values()))])
    harness.heal()   # nothing rebound: nothing changes
    assert (module.f, module.g, module.pi) == (len, abs, 3.14)
    module.f, module.extra = (lambda x: 0), "added"
    del module.g
    module.pi = np.array([1.0, 2.0])   # a value whose == cannot answer yes or no
    harness.heal()
    assert (module.f, module.g, module.pi) == (len, abs, 3.14)
    assert module.extra == "added"   # names the learner adds are left alone


def test_a_loops_recorded_calls_wait_in_the_kernel_until_asked_for(monkeypatch):
    """With record["defer"], each case's reply says how many calls the loop made and the
    calls stay in the harness; ``recorded`` then sends, per case, what the reply would have
    carried. A new judged call forgets them."""
    import inspect

    from assignments.grading.judging import judge
    ns = {"np": np}
    exec(inspect.getsource(A.reference), ns)
    cases = [c[1] for c in judge.Judge(A).cases("rnn_forward")]
    from assignments.grading.judging.callees import Desk
    desk = Desk(A)
    desk.begin(["rnn_cell_forward"])
    monkeypatch.setattr(harness, "_ask_callee", desk.answer)   # the grader's answers, without a socket
    inline = json.loads(json.dumps(judge.request(A, "rnn_forward", cases, ["rnn_cell_forward"])))
    deferred = json.loads(json.dumps(judge.request(A, "rnn_forward", cases, ["rnn_cell_forward"], defer_calls=True)))
    whole = list(harness.call(ns, inline))
    kept = list(harness.call(ns, deferred))
    assert all("calls" in r["observed"] for r in whole) and not any("calls" in r["observed"] for r in kept)
    assert [r["observed"]["calls_recorded"] for r in kept] == [len(r["observed"]["calls"]) for r in whole] != []
    sent = list(harness.answers({"op": "recorded"}))
    assert [r["case"] for r in sent] == list(range(len(whole)))
    assert [json.loads(json.dumps(r["calls"])) for r in sent] == [r["observed"]["calls"] for r in whole]
    status, _, observed = judge.read_reply(A, json.loads(json.dumps(kept[0])))
    layout, raw = observed.pop("packed")   # the outputs as the harness packed them, for the judge
    assert layout.startswith('{"tuple": ') and len(raw) % 8 == 0
    assert status == "ok" and observed == {"reads_globals": [], "calls_recorded": True}
    list(harness.call(ns, json.loads(json.dumps(judge.request(A, "rnn_cell_forward", judge.Judge(A).cases(
        "rnn_cell_forward")[0][1:2], [])))))
    assert list(harness.answers({"op": "recorded"})) == []


def test_the_judge_fetches_recorded_calls_only_for_a_wrong_loop():
    from assignments.grading.judging import inprocess as local
    from assignments.grading.judging import judge
    asked = []

    def caller(functions):
        call = local.caller(A, functions)

        def deferred(name, cases, callees):
            out = []
            for status, value, observed in call(name, cases, callees):
                calls = observed.pop("calls", None)
                if calls is not None:   # as the preprocessor hands them over: fetched on demand
                    observed["calls"] = lambda calls=calls: asked.append(name) or calls
                out.append((status, value, observed))
            return out
        return deferred
    import inspect
    ns = {"np": np}
    exec(inspect.getsource(A.reference), ns)
    assert judge.Judge(A).judge("rnn_backward", caller(ns)).passed and asked == []
    src = inspect.getsource(A.reference.rnn_backward).replace("da_prevt = ", "da_prevt = 0 * ")
    assert "0 * " in src
    exec(src, ns)
    v = judge.Judge(A).judge("rnn_backward", caller(ns))
    assert not v.passed and asked and set(asked) == {"rnn_backward"}


def test_a_socket_file_removed_from_the_kernels_side_is_no_fault(tmp_path):
    """The kernel sees its socket folder: a learner's thread may remove the listening
    socket's file before the grader does. The harness that connected is taken all the same."""
    ch = Channel("", max_reply_bytes=1000)
    ch.listen(str(tmp_path))
    ch.setup_code()
    fake = FakeHarness(ch, lambda job: [{"nonce": job["nonce"], "end": True}])
    os.remove(ch.path)
    ch.connect(timeout=5)
    fake.thread.start()
    assert ch.ask({"op": "recorded"}, timeout=5) == []
    ch.listen(str(tmp_path))   # again, for a reconnection: the file goes before anyone connects
    os.remove(ch.path)
    ch.close()
