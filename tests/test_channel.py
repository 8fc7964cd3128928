"""The grader's channel to the kernel and the output budget, in process (grading/channel.py),
and the harness as an ordinary module over the students' checks (grading/harness.py)."""
import json

import numpy as np

from assignments.grading import harness
from assignments.grading.channel import ENTRY, Channel, OutputBudget
from assignments.rnn_step_by_step import ASSIGNMENT as A


def reply(nonce, case, **extra):
    return {"output_type": "display_data", "data": {harness.MIME: {"nonce": nonce, "case": case, **extra}}}


def test_only_replies_to_the_call_under_way_are_accepted():
    ch = Channel("", max_reply_bytes=1000)
    ch.setup_code()
    code = ch.call_code({"name": "f", "cases": []})
    assert ENTRY.split("{")[0] in code and ch.nonce in code and ch.token in code
    mine = {harness.MIME: {"nonce": ch.nonce, "case": 0}}
    assert ch.accepts(mine)
    assert not ch.accepts({harness.MIME: {"nonce": "forged", "case": 0}})
    assert not ch.accepts({harness.MIME: {"nonce": ch.nonce, "case": 0, "pad": "x" * 2000}})   # too big
    nonce = ch.nonce
    ch.done()
    assert not ch.accepts(mine)   # no call under way: nothing is kept
    outputs = [reply(nonce, 0), reply("forged", 1), reply(nonce, 2), reply(nonce, 1), {"output_type": "stream"}]
    assert [r["case"] for r in ch.replies(outputs, nonce)] == [0, 1]


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
