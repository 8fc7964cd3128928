"""The grader's channel to the kernel and the output budget, in process (grading/channel.py),
and the harness as an ordinary module over the students' checks (grading/harness.py)."""
import json

import numpy as np

from assignments.grading import harness
from assignments.grading.channel import ENTRY, Channel, OutputBudget
from assignments.rnn_step_by_step import ASSIGNMENT as A


def reply(nonce, case, **extra):
    return {"data": {harness.MIME: {"nonce": nonce, "case": case, **extra}}}


def test_only_replies_to_the_call_under_way_are_accepted():
    ch = Channel("", max_reply_bytes=1000)
    ch.setup_code()
    code = ch.call_code({"name": "f", "cases": []})
    assert ENTRY.split("{")[0] in code and ch.nonce in code and ch.token in code
    nonce = ch.nonce
    assert json.loads(code[code.index("call(") + 5:-1].strip("'")) == {"name": "f", "cases": [], "nonce": nonce}
    mine = {harness.MIME: {"nonce": nonce, "case": 0}}
    assert ch.accepts(mine)
    assert not ch.accepts({harness.MIME: {"nonce": "forged", "case": 0}})
    assert not ch.accepts({harness.MIME: {"nonce": nonce, "case": 0, "pad": "x" * 2000}})   # too big
    for data in (reply(nonce, 0), reply("forged", 1), reply(nonce, 2), reply(nonce, 1), {"text/plain": "1"}):
        ch.keep(data.get("data", data))
    ch.done()
    assert not ch.keep(mine)   # no call under way: nothing is kept
    assert [r["case"] for r in ch.replies(nonce)] == [0, 1]
    assert ch.replies("forged") == []
    ch.call_code('{"name": "f"}')   # a request's JSON text, as a judge caches it
    assert ch.received == [] and ch.replies(nonce) == []   # a new call forgets the last one's replies


def test_kept_texts_are_named_not_sent():
    """A warm kernel was forked with the harness and the requests (kernel.py's keep): the
    set-up and the calls then carry their keys, not their texts."""
    ch = Channel("HARNESS_SOURCE", max_reply_bytes=1000)
    assert "HARNESS_SOURCE" in ch.setup_code() and "HARNESS_SOURCE" not in ch.setup_code(kept="k1")
    code = ch.call_code('{"name": "f", "cases": ["HIDDEN"]}', kept="k2", extra='{"callees": {"g": "REF"}}')
    assert "HIDDEN" not in code and code.endswith(f".call('k2', {ch.nonce!r}, '{{\"callees\": {{\"g\": \"REF\"}}}}')")
    code = ch.call_code('{"name": "f", "cases": ["HIDDEN"]}', extra='{"callees": {"g": "REF"}}')   # a cold kernel
    assert json.loads(code[code.index("call(") + 5:-1].strip("'")) == {
        "name": "f", "cases": ["HIDDEN"], "callees": {"g": "REF"}, "nonce": ch.nonce}


def test_harness_main_reads_a_kept_request(monkeypatch):
    sent = []
    monkeypatch.setattr(harness, "_kept", {"k": json.dumps({"name": "square", "cases": [A.checks.encode((np.arange(2.0),))]})})
    monkeypatch.setattr(harness, "_shell", type("Shell", (), {"user_ns": {"square": lambda x: x * x}})())
    monkeypatch.setattr(harness, "_publish", lambda data: sent.append(data[harness.MIME]))
    harness.main("k", "n1", json.dumps({"callees": {"cube": "def cube(x):\n    return x ** 3\n"}}))
    assert [(r["status"], r["nonce"], r["case"]) for r in sent] == [("ok", "n1", 0)]


def test_request_text_is_the_request_encoded_once():
    from assignments.grading.judge import Judge, request
    judge = Judge(A)
    texts = judge.request_text("rnn_forward", ["rnn_cell_forward"])
    assert judge.request_text("rnn_forward", ["rnn_cell_forward"]) is texts
    cases = [c[1] for c in judge.cases("rnn_forward")]
    whole = json.loads(json.dumps(request(A, "rnn_forward", cases, ["rnn_cell_forward"], defer_calls=True)))
    assert dict(json.loads(texts[0]), **json.loads(texts[1])) == whole
    assert whole["record"]["defer"] is True   # a loop's calls stay in the kernel until asked for


def test_no_reference_source_is_kept_in_a_warm_kernel():
    """A warm kernel is forked with the requests of every function, before any learner code
    runs: none may hold a reference solution (a callee's source goes with its caller's call,
    after the callee itself was judged)."""
    from assignments.grading.preprocessors import prepared
    from assignments.gru_step_by_step import ASSIGNMENT as GRU
    for assignment in (A, GRU):
        keep = prepared(assignment)[2]
        sources = [assignment.callee_source(c) for ex in assignment.exercises for c in ex.callees]
        assert sources and len(keep) == len(assignment.exercises) + 1
        for item in keep.values():
            assert not any(src in item["text"] or json.dumps(src)[1:-1] in item["text"] for src in sources)


def test_each_kernel_gets_its_own_token():
    ch = Channel("x = 1", max_reply_bytes=10)
    first, second = ch.setup_code(), ch.setup_code()
    assert first != second and repr("x = 1") in first


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

    from assignments.grading import judge
    ns = {"np": np}
    exec(inspect.getsource(A.reference), ns)
    cases = [c[1] for c in judge.Judge(A).cases("rnn_forward")]
    inline = json.loads(json.dumps(judge.request(A, "rnn_forward", cases, ["rnn_cell_forward"])))
    deferred = json.loads(json.dumps(judge.request(A, "rnn_forward", cases, ["rnn_cell_forward"], defer_calls=True)))
    whole = list(harness.call(ns, inline))
    kept = list(harness.call(ns, deferred))
    assert all("calls" in r["observed"] for r in whole) and not any("calls" in r["observed"] for r in kept)
    assert [r["observed"]["calls_recorded"] for r in kept] == [len(r["observed"]["calls"]) for r in whole] != []
    sent = []
    monkeypatch.setattr(harness, "_publish", lambda data: sent.append(data[harness.MIME]))
    harness.recorded("n2")
    assert [(r["nonce"], r["case"]) for r in sent] == [("n2", i) for i in range(len(whole))]
    assert [json.loads(json.dumps(r["calls"])) for r in sent] == [r["observed"]["calls"] for r in whole]
    status, _, observed = judge.read_reply(A, json.loads(json.dumps(kept[0])))
    assert status == "ok" and observed == {"reads_globals": [], "calls_recorded": True}
    list(harness.call(ns, json.loads(json.dumps(judge.request(A, "rnn_cell_forward", judge.Judge(A).cases(
        "rnn_cell_forward")[0][1:2], [])))))
    sent.clear()
    harness.recorded("n3")
    assert sent == []


def test_the_judge_fetches_recorded_calls_only_for_a_wrong_loop():
    from assignments.grading import judge, local
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
