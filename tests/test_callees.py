"""Issue 39: no reference code and no expected value in a learner's kernel. A caller is judged
with stand-ins for its cells (harness.stand_in), answered by the grader (judging/callees.py).
Each attack is run twice: with the protection, it gets nothing; with it switched off (the old
harness, which ran the reference callee's source in the kernel, or the Desk without its
oracle check), the same attack passes a wrong function: the test shows the protection is
what stops it."""
import json
import textwrap
import tracemalloc

import numpy as np
import pytest
from helpers import A

from assignments.grading.judging import callees, inprocess
from assignments.grading.judging.callees import Desk
from assignments.grading.judging.judge import Judge

# The planter: its cell is wrong (and keeps the hidden inputs it is judged on); its loop, when
# judged, takes what it can of the callee it is handed and writes it into a channel shared
# with other kernels (here a file: the page cache, a pty, a lock... carried as much).
PLANTER = '''
import base64, inspect, json, marshal
import numpy as np
seen = []

def rnn_cell_forward(xt, a_prev, parameters):
    seen.append((xt.copy(), a_prev.copy(), {k: v.copy() for k, v in parameters.items()}))
    return np.zeros_like(a_prev), np.zeros((parameters["Wya"].shape[0], xt.shape[1])), None

def _key(xt):
    return str(np.round(xt, 6).tolist())

def _variants(xt, a_prev, p):
    """The hidden inputs as they are, nudged, with their examples reversed, with one more,
    one example at a time."""
    yield (lambda o: o), (xt, a_prev, p)
    yield (lambda o: o), (xt * (1 + 1e-9), a_prev * (1 + 1e-9), {k: v * (1 + 1e-9) for k, v in p.items()})
    flip = lambda o: tuple(x[:, ::-1] if isinstance(x, np.ndarray) else x for x in o[:2])
    yield flip, (xt[:, ::-1].copy(), a_prev[:, ::-1].copy(), p)
    cut = lambda o: tuple(x[:, :-1] if isinstance(x, np.ndarray) else x for x in o[:2])
    yield cut, (np.hstack([xt, xt[:, :1] + 1]), np.hstack([a_prev, a_prev[:, :1]]), p)
    # one example at a time
    columns = [cell_one(xt[:, j:j + 1], a_prev[:, j:j + 1], p) for j in range(xt.shape[1])]
    if all(c is not None for c in columns):
        yield (lambda o: o), None, tuple(np.hstack([c[i] for c in columns]) for i in range(2))

def cell_one(xt, a_prev, p):
    try:
        return globals()["rnn_cell_forward"](xt, a_prev, p)
    except Exception:
        return None

def rnn_forward(x, a0, parameters):
    stolen = {"source": None, "code": None, "answers": {}}
    cell = globals()["rnn_cell_forward"]
    try:
        stolen["source"] = inspect.getsource(getattr(cell, "fn", cell))
    except Exception:
        pass
    target = getattr(cell, "fn", cell)   # under the grader's Recorder, which watches the loop
    stolen["code"] = base64.b64encode(marshal.dumps(target.__code__)).decode()
    for xt, a_prev, p in seen:
        for back, args, *done in _variants(xt, a_prev, p):
            try:
                out = done[0] if done else back(cell(*args))
            except Exception:
                continue
            stolen["answers"][_key(xt)] = [o.tolist() for o in out[:2]]
    with open(SHARED, "w") as f:
        json.dump(stolen, f)
    n_x, m, T_x = x.shape
    n_y, n_a = parameters["Wya"].shape
    a, y, a_next, caches = np.zeros((n_a, m, T_x)), np.zeros((n_y, m, T_x)), a0, []
    for t in range(T_x):
        a_next, yt, cache = cell(x[:, :, t], a_next, parameters)
        a[:, :, t], y[:, :, t] = a_next, yt
        caches.append(cache)
    return a, y, (caches, x)
'''

# The thief, in another kernel: a cell that answers from what the planter left, or copies
# the reference it stole; wrong otherwise.
THIEF = '''
import base64, json, marshal, types
import numpy as np

def rnn_cell_forward(xt, a_prev, parameters):
    with open(SHARED) as f:
        stolen = json.load(f)
    try:
        code = marshal.loads(base64.b64decode(stolen["code"]))
        return types.FunctionType(code, {"np": np, "softmax": softmax})(xt, a_prev, parameters)
    except Exception:
        pass
    found = stolen["answers"].get(str(np.round(xt, 6).tolist()))
    if found:
        a_next, yt = (np.array(v) for v in found)
        return a_next, yt, (a_next, a_prev, xt, parameters)
    return np.zeros_like(a_prev), np.zeros((parameters["Wya"].shape[0], xt.shape[1])), None
'''


def softmax(x):   # the notebook's helper (rnn_utils), in every learner's namespace
    e = np.exp(x - np.max(x, axis=0))
    return e / e.sum(axis=0)


def stolen_names(stolen):
    """The names the stolen function's code uses."""
    import base64
    import marshal
    return set(marshal.loads(base64.b64decode(stolen["code"])).co_names)


def judged(functions, names):
    """Verdicts without the search for named mistakes (the score and outcome alone)."""
    j = Judge(A)
    return {n: j.judge(n, inprocess.caller(A, functions), diagnose=False) for n in names}


def learner(text, shared):
    space = {"SHARED": str(shared), "softmax": softmax}
    exec(compile(textwrap.dedent(text), "learner_notebook.py", "exec"), space)   # named as a cell is, not "<string>"
    return space


def old_harness(monkeypatch):
    """The protection switched off: the harness as it was, the reference callee's source run
    in the learner's kernel in place of its cell."""
    made = inprocess.kernel_namespace

    def namespace(assignment):
        ns = made(assignment)

        def reference(callee, _args):
            helpers = {}
            exec(compile(assignment.callee_source(callee), f"<reference {callee}>", "exec"), helpers)
            return helpers[callee]
        ns["stand_in"] = reference
        return ns
    monkeypatch.setattr(inprocess, "kernel_namespace", namespace)


def collude(tmp_path):
    """The planter graded, then the thief: the thief's verdict on its cell."""
    shared = tmp_path / "channel.json"
    planter = learner(PLANTER, shared)
    verdicts = judged(planter, ["rnn_cell_forward", "rnn_forward"])
    assert not verdicts["rnn_cell_forward"].passed and verdicts["rnn_forward"].passed
    return judged(learner(THIEF, shared), ["rnn_cell_forward"])["rnn_cell_forward"], \
        json.loads(shared.read_text())


@pytest.fixture(autouse=True)
def fresh_desk():
    inprocess.desk.cache_clear()
    yield
    inprocess.desk.cache_clear()


def test_colluders_steal_nothing(tmp_path):
    """With the stand-in, the planter's kernel holds no reference code and the grader answers
    none of the callee's hidden inputs (as they are, nudged, reordered or with one more
    example): the thief's wrong cell stays wrong."""
    thief, stolen = collude(tmp_path)
    assert "np.tanh" not in (stolen["source"] or "") and "tanh" not in stolen_names(stolen)
    assert stolen["answers"] == {}
    assert not thief.passed and thief.score == 0


def test_colluders_pass_a_wrong_cell_with_the_reference_in_the_kernel(tmp_path, monkeypatch):
    old_harness(monkeypatch)
    thief, stolen = collude(tmp_path)
    assert "tanh" in stolen_names(stolen)
    assert thief.passed   # the attack works without the protection


def test_colluders_pass_a_wrong_cell_through_an_oracle(tmp_path, monkeypatch):
    """The Desk without its oracle check: the planter's loop asks the grader for the answers
    to the callee's hidden cases, and the thief passes."""
    monkeypatch.setattr(Desk, "oracle", lambda self, callee, args: False)
    thief, stolen = collude(tmp_path)
    assert "tanh" not in stolen_names(stolen) and len(stolen["answers"]) == len(A.hidden_cases("rnn_cell_forward"))
    assert thief.passed


def test_the_grade_is_the_same_with_the_stand_in(monkeypatch):
    """The reference's functions judged with stand-ins and with the reference in the kernel:
    the same verdicts, feedback and recorded calls, and the Desk refuses none of a loop's calls."""
    import inspect
    ns = {"np": np}
    exec(inspect.getsource(A.reference), ns)
    names = [e.name for e in A.exercises if e.callees]
    now = inprocess.judge_all(A, ns, names=names)
    assert inprocess.desk(A).refused == [] and inprocess.desk(A).calls > 0
    old_harness(monkeypatch)
    before = inprocess.judge_all(A, ns, names=names)
    assert {n: v.to_json() for n, v in now.items()} == {n: v.to_json() for n, v in before.items()}


def test_no_reference_text_in_any_request():
    """What a kernel is sent for a caller: the callees' names and arguments, no code."""
    j = Judge(A)
    for ex in A.exercises:
        text, extra = j.request_text(ex.name, ex.callees)
        for c in ex.callees:
            source = A.callee_source(c)
            body = source.split("def " + c)[1]
            assert body[:200] not in text + extra and json.dumps(body[:200])[1:-1] not in text + extra
        assert json.loads(extra) == {"callees": {c: list(A.by_name[c].args) for c in ex.callees}}


def test_the_desk_bounds_what_a_call_costs_the_grader(monkeypatch):
    """A call whose reference would build 3000 x 3000 matrices from 144 kB of arguments is
    refused before it runs; without the bound, the grader's memory grows by that much."""
    desk = Desk(A)
    desk.begin(["rnn_cell_forward"])
    n = 3000
    args = [np.ones((1, n)), np.ones((1, n)), {"Wax": np.ones((n, 1)), "Waa": np.ones((n, 1)),
                                                    "Wya": np.ones((1, n)), "ba": np.ones((n, 1)), "by": np.ones((1, 1))}]
    question = json.loads(json.dumps({"nonce": "x", "callee": "rnn_cell_forward", "args": A.checks.encode(args)}))

    def peak(answer):
        tracemalloc.start()
        try:
            got = answer(question)
            return got, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    got, used = peak(desk.answer)
    assert got["type"] == "RuntimeError" and "shape" in got["text"] and used < 5e6
    monkeypatch.setattr(callees, "MAX_DIM", 10**6)
    desk = Desk(A)   # a desk of its own: this one remembers its refusal
    desk.begin(["rnn_cell_forward"])
    got, used = peak(desk.answer)
    assert "output" in got and used > 50e6   # the attack works without the bound


def test_the_desk_answers_a_question_asked_again_as_it_did_and_refuses_it_again():
    """A class's right loops ask the same questions: the second answer is the first,
    remembered (not computed again), and a refusal is counted again in its job."""
    desk = Desk(A)
    desk.begin(["rnn_cell_forward"])
    x, a, p = A.hidden_cases("rnn_forward")[0][1]
    question = {"callee": "rnn_cell_forward", "args": A.checks.encode([x[:, :, 0], a, p])}
    first = desk.answer(json.loads(json.dumps(question)))
    assert "output" in first and not desk.refused
    calls = []
    desk._answer = lambda *args: calls.append(args)   # computing again would be seen here
    assert desk.answer(json.loads(json.dumps(question))) == first and not calls
    refused = {"callee": "rnn_cell_forward", "args": A.checks.encode(list(A.hidden_cases("rnn_cell_forward")[0][1]))}
    desk = Desk(A)
    for job in (1, 2):
        desk.begin(["rnn_cell_forward"])
        got = desk.answer(json.loads(json.dumps(refused)))
        assert got["type"] == "RuntimeError" and len(desk.refused) == 1 and "hidden cases" in desk.refused[0], job


def test_a_remembered_answer_line_is_what_answering_again_would_send_and_count():
    """``remembered_line`` gives the bytes ``answer_line`` sent for the same question's line,
    counts the call and its refusal in the job as ``answer`` would, and gives nothing (the
    question is then read) for a callee the job does not stand in for, past the job's limit,
    or for a line carrying another "nonce" or an "end"."""
    desk = Desk(A)
    x, a, p = A.hidden_cases("rnn_forward")[0][1]

    def line(args, extra=""):
        question = {"callee": "rnn_cell_forward", "args": A.checks.encode(args)}
        return question, json.dumps(question).encode()[1:-1].replace(b'"callee"', b', "callee"', 1) + extra.encode() + b"}"
    question, tail = line([x[:, :, 0], a, p])
    desk.begin(["rnn_cell_forward"])
    sent = desk.answer_line(question, tail)
    assert sent == json.dumps(desk.answer(question)).encode() + b"\n" and desk.calls == 2
    desk.begin(["rnn_cell_forward"])
    assert desk.remembered_line(tail) == sent and desk.calls == 1 and not desk.refused
    desk.begin(["lstm_cell_forward"])
    assert desk.remembered_line(tail) is None and desk.calls == 0   # read, then refused as not its job
    refused, refused_tail = line(list(A.hidden_cases("rnn_cell_forward")[0][1]))
    for job in (1, 2):   # a refusal remembered is counted again in its job
        desk.begin(["rnn_cell_forward"])
        got = desk.answer_line(refused, refused_tail) if job == 1 else desk.remembered_line(refused_tail)
        assert b"hidden cases" in got and len(desk.refused) == 1, job
    for extra in (', "end": true', ', "nonce": "x"'):
        q, t = line([x[:, :, 1], a, p], extra)
        desk.begin(["rnn_cell_forward"])
        desk.answer_line(q, t)
        assert desk.remembered_line(t) is None, extra
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(callees, "MAX_CALLS", 1)
    try:
        desk.begin(["rnn_cell_forward"])
        assert desk.remembered_line(tail) == sent and desk.remembered_line(tail) is None and desk.calls == 1
    finally:
        monkeypatch.undo()


def test_the_desk_refuses_what_is_not_its_job():
    desk = Desk(A)
    desk.begin(["rnn_cell_forward"])
    assert "no function of this job" in desk.answer({"callee": "lstm_cell_forward", "args": {"list": []}})["text"]
    assert "could not be read" in desk.answer({"callee": "rnn_cell_forward", "args": {"bogus": 1}})["text"]
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(callees, "MAX_CALLS", 2)
    try:
        desk.begin(["rnn_cell_forward"])
        for _ in range(2):
            desk.answer({"callee": "rnn_cell_forward", "args": {"list": []}})
        assert "more than 2 calls" in desk.answer({"callee": "rnn_cell_forward", "args": {"list": []}})["text"]
    finally:
        monkeypatch.undo()


def test_a_refusal_and_a_reference_error_reach_the_learner_as_exceptions(tmp_path):
    """The stand-in raises what the reference raised (same type and words) and the refusal."""
    space = learner('''
import numpy as np
def rnn_cell_forward(xt, a_prev, parameters):
    return np.zeros_like(a_prev), np.zeros((parameters["Wya"].shape[0], xt.shape[1])), None
def rnn_forward(x, a0, parameters):
    return rnn_cell_forward(x, a0[:1], parameters)   # shapes that do not fit
''', tmp_path / "x")
    v = inprocess.judge_all(A, space, names=["rnn_forward"])["rnn_forward"]
    assert v.outcome == "raised" and "ValueError: matmul" in v.feedback and "(in rnn_forward, line 6" in v.feedback


@pytest.mark.parametrize("protected", [True, False], ids=["oracle refused", "without the oracle check"])
def test_the_oracle_over_the_kernels_channel(tmp_path, monkeypatch, protected):
    """The planter's loop served by harness.serve over a real socket, as in a kernel: its
    stand-in's calls on the callee's hidden inputs reach the grader's Desk as lines of the
    job and are refused there (the grader flags them); without the check they are answered."""
    import socket
    import threading

    from assignments.grading.judging.channel import Channel
    from assignments.grading.shipped import harness
    if not protected:
        monkeypatch.setattr(Desk, "oracle", lambda self, callee, args: False)
    shared = tmp_path / "channel.json"
    planter = learner(PLANTER, shared)
    for _, args, _ in A.hidden_cases("rnn_cell_forward"):   # as when its cell was judged
        planter["rnn_cell_forward"](*args)
    planter["rnn_cell_forward"] = None   # the stand-in takes its place while rnn_forward is judged
    text, extra = Judge(A).request_text("rnn_forward", ["rnn_cell_forward"])
    ch = Channel("", max_reply_bytes=4_000_000)
    ch.listen(str(tmp_path))
    ch.setup_code()
    link = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    link.connect(ch.path)
    link.sendall(json.dumps({"hello": ch.token}).encode() + b"\n")
    ch.connect(timeout=5)
    for name, value in (("_stash", {"k": text}), ("_shell", type("Shell", (), {"user_ns": planter})()),
                        ("_send", link.sendall), ("_recv", link.recv), ("_pending", b"")):
        monkeypatch.setattr(harness, name, value)
    ch.serve_code()   # a fresh nonce for the request that serves
    thread = threading.Thread(target=harness.serve, args=(ch.nonce,))
    thread.start()
    ch.started(5)
    desk = Desk(A)
    desk.begin(["rnn_cell_forward"])
    replies = ch.ask({"op": "call", "key": "k", "extra": extra}, timeout=30, callees=desk)
    ch.close()
    thread.join(5)
    stolen = json.loads(shared.read_text())
    assert [r["status"] for r in replies] == ["ok"] * 5   # the loop itself is served as ever
    if protected:
        assert stolen["answers"] == {} and any("hidden cases" in why for why in desk.refused)
    else:
        assert len(stolen["answers"]) == 5 and desk.refused == []


def test_a_stand_ins_question_is_the_text_json_writes(monkeypatch):
    """A loop's stand-in writes each question as json.dumps writes it (the Desk remembers
    answers by those bytes), a dict of arrays passed again unchanged taken from what it wrote
    before; changed in place, given other keys, a view, another byte order, something not an
    array: written anew."""
    from assignments.grading.shipped import harness
    monkeypatch.setattr(harness, "_nonce", "n0nce")
    monkeypatch.setattr(harness, "_args_written", {})
    rng = np.random.default_rng(3)
    p = {"Waa": rng.standard_normal((5, 5)), "Wax": rng.standard_normal((5, 3)), "ba": np.zeros((5, 1))}
    x = rng.standard_normal((3, 10, 4))

    def same(*named):
        written = harness._question_line("rnn_cell_forward", list(named))
        assert written == json.dumps({"nonce": "n0nce", "callee": "rnn_cell_forward", "args": harness.encode(list(named))})
        return written
    first = same(x[:, :, 0], np.ones((5, 10)), p)
    assert same(x[:, :, 0], np.ones((5, 10)), p) == first and len(harness._args_written) == 1
    p["ba"] += 1   # in place: the same dict and arrays, other bytes
    assert same(x[:, :, 0], np.ones((5, 10)), p) != first and len(harness._args_written) == 2
    for other in ({**p, "extra": 1.5}, {"Wax": p["Wax"], "Waa": p["Waa"], "ba": p["ba"]}, {"Waa": x[:, :, 1].T[:3]},
                  {"Waa": p["Waa"].astype(">f8")}, {"Waa": p["Waa"].astype(np.float32)}, {1: p["Waa"]}, {},
                  {"Waa": [p["Waa"]]}, {"Waa": np.array(["a"])}, {"Waa": np.ma.masked_array(p["Waa"])},
                  {"big": np.zeros(10_000)}, {f"w{i}": np.zeros(1_000) for i in range(9)}):
        same(x[:, :, 0], other, None, 2.5, (p, [p]))
    assert len(harness._args_written) == 6   # the reordered dict, the view, the two dtypes: dicts of small arrays
    same()
    monkeypatch.setattr(harness, "MAX_ITEMS", 2)
    same(1.0, 2.0, 3.0)
    same({"a": np.ones(2), "b": np.ones(2), "c": np.ones(2)})
