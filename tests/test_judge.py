"""The hidden-test judge, in this process (the same harness and JSON round trip as in a
kernel; the kernel path itself is covered end to end in test_grading.py)."""
import json
import re
from dataclasses import asdict

import numpy as np
import pytest

from assignments.grading.judging import inprocess as local
from assignments.rnn_step_by_step import cases
from assignments.rnn_step_by_step.exercises import EXERCISES


def judge_one(assignment, functions, name):
    return local.judge_all(assignment, functions, [name])[name]


def test_reference_earns_full_marks(assignment, reference_functions):
    verdicts = local.judge_all(assignment, reference_functions)
    assert {n: (v.score, v.passed) for n, v in verdicts.items()} == {e.name: (e.points, True) for e in EXERCISES}
    assert sum(v.score for v in verdicts.values()) == 100


def test_hidden_shapes_separate_every_size():
    shapes = cases.HIDDEN_SHAPES
    assert any(s.m == 1 for s in shapes) and any(s.T_x == 1 for s in shapes)
    general = [s for s in shapes if s.m > 1 and s.T_x > 1]
    assert general and all(len({s.n_x, s.n_a, s.n_y, s.m, s.T_x}) == 5 for s in general)
    public = {(s.n_x, s.n_a, s.n_y, s.m, s.T_x) for s in cases.PUBLIC_SHAPES}
    assert not public & {(s.n_x, s.n_a, s.n_y, s.m, s.T_x) for s in shapes}
    assert not {s.seed for s in cases.PUBLIC_SHAPES} & {s.seed for s in shapes}
    seeds = [s.recipe(e.name).seed for s in shapes for e in EXERCISES]
    assert len(seeds) == len(set(seeds)), "every function draws its hidden cases with its own seed"


def test_wrong_callee_does_not_cost_the_caller(assignment, reference_functions):
    def broken_cell(xt, a_prev, parameters):
        raise ValueError("broken on purpose")
    v = judge_one(assignment, dict(reference_functions, rnn_cell_forward=broken_cell), "rnn_forward")
    assert v.passed and v.score == v.max_score


def test_noisy_correct_function_keeps_full_marks(assignment, reference_functions):
    import sys
    import warnings

    def noisy(da_next, cache):
        print("debug output " * 100)
        print("to stderr", file=sys.stderr)
        warnings.warn("a warning", RuntimeWarning)
        return assignment.reference.rnn_cell_backward(da_next, cache)
    assert judge_one(assignment, dict(reference_functions, rnn_cell_backward=noisy), "rnn_cell_backward").passed


def test_answer_tuned_to_the_public_example_fails(assignment, reference_functions, release_checks_module):
    """A function that returns the shipped example's expected outputs, whatever its inputs."""
    case = release_checks_module._load()["cases"]["rnn_cell_forward"][0]
    canned = release_checks_module.decode(case["expected"])
    v = judge_one(assignment, dict(reference_functions, rnn_cell_forward=lambda *a: canned), "rnn_cell_forward")
    assert v.score == 0 and not v.passed


def test_partial_credit_within_a_function(assignment, reference_functions):
    def only_dx_right(da, caches):
        grads = assignment.reference.rnn_backward(da, caches)
        return dict(grads, dWaa=grads["dWaa"] * 2)
    v = judge_one(assignment, dict(reference_functions, rnn_backward=only_dx_right), "rnn_backward")
    assert 0 < v.score < v.max_score and not v.passed
    assert "dWaa" in v.feedback


@pytest.mark.parametrize("bad,expected_words", [
    (lambda *a: None, "returned None"),
    (lambda *a: 1 / 0, "ZeroDivisionError"),
    (lambda *a: (1, 2), "returned 2 values; expected 3"),
], ids=["returns-none", "raises", "too-few-values"])
def test_broken_returns_get_words_not_crashes(assignment, reference_functions, bad, expected_words):
    v = judge_one(assignment, dict(reference_functions, rnn_cell_forward=bad), "rnn_cell_forward")
    assert v.score == 0 and expected_words in v.feedback


def test_missing_function_is_reported(assignment, reference_functions):
    functions = dict(reference_functions)
    del functions["lstm_forward"]
    v = judge_one(assignment, functions, "lstm_forward")
    assert v.score == 0 and v.outcome == "missing" and "not defined" in v.feedback


def test_verdict_outputs_are_nbformats_own_and_valid():
    """verdict_outputs builds its nodes without nbformat's per-output schema check: they must
    be what nbformat's new_output builds, and valid."""
    import nbformat
    from nbformat.v4 import new_output

    from assignments.grading.judging.judge import Verdict
    from assignments.grading.judging.judged_execute import verdict_outputs
    for score, passed, text in ((2.0, True, "all 6 cases right"), (1.0, False, "3 of 6 cases right\nsee x"),
                                (0.0, False, "wrong shape\nline two"), (0.0, False, "")):
        got = verdict_outputs(Verdict("rnn_forward", score, 2.0, passed, feedback=text))
        if score == 0:
            lines = text.splitlines() or ["Failed."]
            want = [new_output("error", ename="HiddenTestsFailed", evalue=lines[0],
                               traceback=["\x1b[0;31m✗ " + lines[0] + "\x1b[0m"] + lines[1:])]
        else:
            want = [new_output("stream", name="stdout", text=f"{'✓' if passed else '✗'} {text}\n"),
                    new_output("execute_result", data={"text/plain": repr(score)}, execution_count=None, metadata={})]
        assert got == want
        for output in got:
            nbformat.validate(output, ref=output.output_type, version=4)


def test_a_diagnosis_stops_at_its_budget_and_says_so(assignment, reference_functions):
    """Naming a function's mistakes searches the catalog's variants and their pairs: for a
    function no variant explains, thousands of steps (7.6 CPU s for one learner's
    lstm_cell_forward). The search stops at ``Judge.budget`` steps, counted, not timed,
    so a cut is the same on every machine; the score is the same, cut or not."""
    from assignments.grading.judging.judge import DIAGNOSIS_BUDGET, Judge
    right = reference_functions["lstm_cell_forward"]

    def off(xt, a_prev, c_prev, parameters):   # every output a little wrong: nothing in the catalog
        a_next, c_next, yt, cache = right(xt, a_prev, c_prev, parameters)
        return a_next * 1.01, c_next * 1.01, yt, cache
    functions = dict(reference_functions, lstm_cell_forward=off)
    verdicts = {}
    for budget in (DIAGNOSIS_BUDGET, 0):
        j = Judge(assignment)
        j.budget.limit = budget
        verdicts[budget] = j.judge("lstm_cell_forward", local.caller(assignment, functions))
        if budget:
            assert j.budget.most == budget   # it ran to the end of its budget, not past it
    cut, whole = verdicts[DIAGNOSIS_BUDGET], verdicts[0]
    assert cut.diagnosis_cut and not whole.diagnosis_cut
    assert (cut.score, cut.passed, cut.diagnoses) == (whole.score, whole.passed, whole.diagnoses) == (cut.score, False, [])


def _sent(assignment, outputs, codec):
    """A ``call`` answering with ``outputs`` as the harness would, through ``codec`` (pack, or
    encode as replies were before) and JSON."""
    from assignments.grading.judging.judge import read_reply
    return lambda name, cases, callees: [read_reply(assignment, json.loads(json.dumps(
        {"status": "ok", "output": codec(o), "observed": {}}))) for o in outputs]


def test_packed_outputs_laid_out_as_the_references_are_right_in_one_comparison(assignment, monkeypatch):
    """Outputs packed as the reference's, every number close, are judged right without
    ``compare``; any other packed output is judged exactly as one sent array by array."""
    from assignments.grading.judging.judge import Judge
    j = Judge(assignment)
    name = "rnn_cell_backward"
    right = [j.expected(name, i) for i in range(len(j.cases(name)))]
    compare = assignment.checks.compare
    with monkeypatch.context() as m:
        m.setattr(assignment.checks, "compare", lambda *a, **k: pytest.fail("compared"))
        assert j.judge(name, _sent(assignment, right, assignment.checks.pack)).passed
        nearly = [{k: v * (1 + 1e-9) for k, v in o.items()} for o in right]   # within tolerance
        assert j.judge(name, _sent(assignment, nearly, assignment.checks.pack)).passed

    variants = {
        "one number off": [{**o, "dxt": o["dxt"] + np.eye(*o["dxt"].shape) * 1e-3} for o in right],
        "the dict in another order": [dict(reversed(list(o.items()))) for o in right],
        "two gradients exchanged": [{**o, "dWaa": o["dWax"], "dWax": o["dWaa"]} for o in right],
        "float32": [{k: v.astype(np.float32) for k, v in o.items()} for o in right],
        "a key too many": [{**o, "extra": np.zeros(2)} for o in right],
        "a list of arrays": [{k: list(v) for k, v in o.items()} for o in right],
    }
    calls = []
    monkeypatch.setattr(assignment.checks, "compare", lambda *a, **k: calls.append(1) or compare(*a, **k))
    for what, outputs in variants.items():
        calls.clear()
        packed = asdict(j.judge(name, _sent(assignment, outputs, assignment.checks.pack)))
        # packed in the order of its keys, a dict in another order is laid out as the reference's
        assert bool(calls) == (what != "the dict in another order"), what
        assert packed == asdict(j.judge(name, _sent(assignment, outputs, assignment.checks.encode))), what
    assert not asdict(j.judge(name, _sent(assignment, variants["one number off"], assignment.checks.pack)))["passed"]


def test_a_packed_references_kept_tolerance_judges_every_number_as_all_close_does(assignment):
    """packed._Kept.close (the tolerance of a finite reference worked out once) against
    student_checks.all_close, on numbers near, at and beyond the tolerance, huge, NaN and
    infinite, and a reference holding NaN and infinities (which takes all_close itself)."""
    from assignments.grading.judging.packed import _Kept
    checks = assignment.checks
    rng = np.random.default_rng(7)
    exp = rng.normal(size=400) * 10.0 ** rng.integers(-9, 4, size=400)
    tol = checks.ATOL + checks.RTOL * np.abs(exp)
    seen = set()
    for reference in (exp, np.where(np.arange(400) % 50 == 0, np.inf, np.where(np.arange(400) % 70 == 1, np.nan, exp))):
        kept = _Kept(checks, "", reference)
        assert (kept._within is None) == (reference is not exp)
        for scale in (0.0, 0.5, 0.999, 1.0, 1.001, 2.0, 1e300):
            for odd in (None, np.nan, np.inf, -np.inf, 1e308):
                got = reference + tol * scale * rng.choice([-1.0, 1.0], size=400)
                if odd is not None:
                    got[rng.integers(400)] = odd
                for where in (got, np.where(np.arange(400) == 3, got, reference)):
                    verdict = checks.all_close(where, reference)
                    assert kept.close(where) == verdict, (scale, odd)
                    seen.add(verdict)
    assert seen == {True, False}
    zeros, at_the_edge = np.zeros(3), np.full(3, checks.ATOL)   # exactly the tolerance away: close
    assert _Kept(checks, "", zeros).close(at_the_edge) and checks.all_close(at_the_edge, zeros)


@pytest.mark.parametrize("tamper", [
    lambda node: {**node, "layout": re.sub(r"\[(\d+), (\d+)\]", r"[-\1, -\2]", node["layout"], count=1)},
    lambda node: {**node, "layout": re.sub(r"\[(\d+), (\d+)\]", r"[-1, \1, \2]", node["layout"], count=1)},
    lambda node: {**node, "layout": re.sub(r"\[(\d+), (\d+)\]", r"[\2, \1]", node["layout"])},
    lambda node: {**node, "packed": node["packed"][:-16]},
    lambda node: {**node, "layout": node["layout"].replace("<f8", "|O", 1)},
    lambda node: {**node, "layout": '{"tuple": [' * 100_000 + "]}" * 100_000},
    lambda node: {"packed": node["packed"]},
])
def test_a_tampered_packed_reply_is_a_fault_or_judged_wrong(assignment, tamper):
    """Packed outputs come from the learner's process: a layout that does not fit its bytes is
    read as data, never trusted, and never judged right."""
    from assignments.grading.judging.judge import Judge, read_reply
    j = Judge(assignment)
    name = "rnn_cell_backward"
    right = [j.expected(name, i) for i in range(len(j.cases(name)))]
    replies = [read_reply(assignment, json.loads(json.dumps({"status": "ok", "output": tamper(
        assignment.checks.pack(o)), "observed": {}}))) for o in right]
    assert all(status in ("ok", "fault") for status, _, _ in replies)
    assert not j.judge(name, lambda *_: replies).passed


HALVED_STORE = '''
def rnn_forward(x, a0, parameters):
    n_x, m, T_x = x.shape
    n_y, n_a = parameters["Wya"].shape
    a, y_pred, caches = np.zeros((n_a, m, T_x)), np.zeros((n_y, m, T_x)), []
    a_next = a0
    for t in range(T_x):
        a_next, yt, cache = rnn_cell_forward(x[:, :, t], a_next, parameters)
        a[:, :, t] = 0.5 * a_next
        y_pred[:, :, t] = yt
        caches.append(cache)
    return a, y_pred, (caches, x)
'''


def test_a_wrong_loop_is_told_each_of_its_faults_once_for_the_case_shown(assignment, reference_functions, monkeypatch):
    """A loop that stores half of each step's a_next goes wrong in the same way on every hidden
    case: the feedback says so once, with the steps of the case it shows (not once per case,
    each with its own steps); and what the recorded calls show is worked out once per case,
    although the diagnosis, the signature and the words all read it."""
    ns = {"np": np, **reference_functions}
    exec(HALVED_STORE, ns)
    protocol, seen = assignment.checks.protocol, []
    monkeypatch.setattr(assignment.checks, "protocol", lambda *a: seen.append(1) or protocol(*a))
    v = judge_one(assignment, ns, "rnn_forward")
    lines = v.feedback.splitlines()
    shown = int(re.search(r"T_x=(\d+)", lines[1]).group(1))
    told = [line for line in lines if "is not the a_next returned for step t" in line]
    assert "How the loop drives its cell:" in lines and len(told) == 1
    assert told[0].endswith("at t = " + ", ".join(map(str, range(shown))))
    assert not v.passed and len(seen) == v.cases == len(assignment.hidden_cases("rnn_forward"))


def test_unexplained_says_each_aspect_once_first_case_first(release_checks_module):
    checks = release_checks_module
    findings = [{"order": ("ok", "")}, None,
                {"a": ("unknown", "a: steps 0, 1"), "order": ("reversed", "order: 1, 0")},
                {"a": ("unknown", "a: steps 0, 1, 2"), "c": ("unknown", "c: step 2")}]
    assert checks.unexplained(findings) == ["a: steps 0, 1", "order: 1, 0", "c: step 2"]
    assert checks.unexplained(findings, explained_aspects=("a",)) == ["order: 1, 0", "c: step 2"]
