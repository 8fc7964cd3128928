"""Mutation testing. Every variant of every catalogued mistake, and realistic mistakes
outside the catalog, must fail the hidden tests; catalogued ones must be named by their
code, by the judge and by the students' own checks. The score is printed at the end."""
import inspect
import itertools

import numpy as np
import pytest

from assignments.grading.judging import inprocess as local
from assignments.rnn_step_by_step import ASSIGNMENT, cases, reference

mistakes = ASSIGNMENT.mistakes

SCORE = {}   # kind -> {mutant id: passed}

CATALOGUED = [(m, i) for m in mistakes.mistakes for i in range(len(m.variants))]

# Realistic mistakes the catalog does not name: (function, what is replaced, by what).
UNCATALOGUED = [
    ("rnn_cell_forward", "yt_pred = softmax(Wya @ a_next + by)", "yt_pred = softmax((Wya @ a_next + by).T).T"),
    ("rnn_forward", "caches.append(cache)", "pass"),
    ("rnn_forward", 'n_y, n_a = parameters["Wya"].shape', "n_y, n_a = 2, 5"),   # tuned to the example's sizes
    ("lstm_cell_forward", "c_next = ft * c_prev + it * cct", "c_next = ft * c_prev + cct"),
    ("lstm_cell_forward", "a_next = ot * np.tanh(c_next)", "a_next = np.tanh(c_next)"),
    ("lstm_forward", "y[:, :, t] = yt", "y[:, :, t - 1] = yt"),
    ("lstm_forward", "c[:, :, t] = c_next", "pass"),
    ("rnn_cell_backward", "dba = np.sum(g, axis=1, keepdims=True)", "dba = np.sum(g, axis=0, keepdims=True).T"),
    ("rnn_cell_backward", "dba = np.sum(g, axis=1, keepdims=True)", "dba = g.squeeze().sum(axis=-1, keepdims=True)"),  # m = 1 only
    ("rnn_backward", "dx = np.zeros((n_x, m, T_x))", "dx = np.zeros((n_a, m, T_x))"),   # shows when n_x != n_a
    ("rnn_backward", "for t in reversed(range(T_x)):", "for t in range(T_x - 1, 0, -1):"),  # forgets step 0
    ("lstm_cell_backward", "dWi = dit @ z.T", "dWi = dft @ z.T"),   # copy-paste of the wrong gate
    ("lstm_cell_backward", "dbf = np.sum(dft, axis=1, keepdims=True)", "dbf = np.sum(dft, axis=0, keepdims=True)"),
    ("lstm_backward", "dx[:, :, t] = step[\"dxt\"]", "dx[:, :, t] = step[\"dxt\"] + da[:, :, t][:dx.shape[0]]"),
]


def notebook_with(function, source, assignment):
    """A learner's notebook: the reference functions as cells, a stray notebook variable
    `parameters` (as worked examples leave behind), and ``source`` redefining ``function``."""
    namespace = {}
    exec(inspect.getsource(reference), namespace)
    rng = np.random.RandomState(99)
    namespace["parameters"] = {k: rng.randn(*v.shape) for k, v in
                               cases.inputs(cases.EXAMPLES["lstm_cell_forward"])[3].items()}
    exec(compile(source, f"<cell {function}>", "exec"), namespace)
    return namespace


def record(kind, key, ok):
    SCORE.setdefault(kind, {})[key] = ok
    return ok


def public_check_text(checks, name, namespace):
    try:
        checks.check(name, namespace)
    except checks.CheckFailed as exc:
        return str(exc)
    return ""


@pytest.mark.parametrize("mistake,variant", CATALOGUED, ids=[f"{m.code}[{i}]" for m, i in CATALOGUED])
def test_catalogued_mutant_is_killed_and_named(assignment, release_checks_module, mistake, variant, capsys):
    source = mistakes.mutant_source(mistake.function, ((mistake.code, variant),))
    namespace = notebook_with(mistake.function, source, assignment)
    v = local.judge_all(assignment, namespace, [mistake.function])[mistake.function]
    key = f"{mistake.code}[{variant}]"
    assert record("hidden: killed", key, not v.passed and v.score < v.max_score)
    assert record("hidden: named", key, mistake.code in v.diagnoses), v.feedback
    assert mistake.code in v.feedback
    text = public_check_text(release_checks_module, mistake.function, namespace)
    assert record("public check: failed", key, bool(text))
    assert record("public check: named", key, f"[{mistake.code}]" in text), text


FUNCTION_CODES = {}
for m in mistakes.mistakes:
    if not m.detector and m.variants:
        FUNCTION_CODES.setdefault(m.function, []).append(m.code)
PAIRS = [(f, a, b) for f, codes in FUNCTION_CODES.items() for a, b in itertools.combinations(codes, 2)]
MUST_NAME_PAIRS = {
    ("lstm_backward", "lstm_stale_da_prev", "lstm_stale_dc_prev"),
    ("lstm_backward", "lstm_grads_not_accumulated", "lstm_stale_dc_prev"),
    ("rnn_backward", "rnn_grads_not_accumulated", "rnn_stale_da_prev"),
    ("rnn_cell_forward", "rnn_output_from_a_prev", "rnn_wrong_activation"),
    ("lstm_cell_forward", "lstm_concat_order", "lstm_cache_order"),
    ("lstm_cell_backward", "lstm_candidate_derivative", "lstm_dc_prev_missing_da_term"),
    ("lstm_forward", "lstm_a0_ignored", "lstm_return_order"),
}


@pytest.mark.parametrize("function,a,b", PAIRS, ids=[f"{a}+{b}" for _, a, b in PAIRS])
def test_two_mistakes_together(assignment, function, a, b):
    """Every pair fails, and both mistakes are named unless one masks the other: then the
    pair's outputs are those of the single mistake that is named (e.g. with da ignored every
    gradient is zero, whatever else is wrong). The pairs learners make most must be named."""
    try:
        fn = mistakes.mutant(function, (a, b))
    except ValueError:
        pytest.skip("the two mistakes edit the same line: they cannot be made together")
    # defined in the notebook's namespace, as a learner's cell is: its cell is looked up there
    namespace = notebook_with(function, mistakes.mutant_source(function, (a, b)), assignment)
    v = local.judge_all(assignment, namespace, [function])[function]
    assert not v.passed
    both = record("pairs: both named", f"{a}+{b}", {a, b} <= set(v.diagnoses))
    if (function, a, b) in MUST_NAME_PAIRS:
        assert both, v.diagnoses
    if not both:
        (named,) = v.diagnoses
        assert named in (a, b)
        if mistakes.by_code[named].behaviour:   # named from the loop's behaviour, which hides the other
            record("pairs: one named from the loop's behaviour", f"{a}+{b}", True)
            return
        for _, args, _ in assignment.hidden_cases(function):
            try:
                alone = mistakes.run(mistakes.mutant(function, (named,)), args)
            except Exception as exc:   # a mistake that makes the function raise masks all others
                with pytest.raises(type(exc)):
                    mistakes.run(fn, args)
                continue
            together = mistakes.run(fn, args)
            assert not assignment.checks.compare(assignment.spec(function), together, alone)[0]
        record("pairs: masked, the masking one named", f"{a}+{b}", True)


@pytest.mark.parametrize("function,old,new", UNCATALOGUED, ids=[f"{f}:{n[:40]}" for f, _, n in UNCATALOGUED])
def test_uncatalogued_mutant_is_killed(assignment, release_checks_module, function, old, new):
    source = inspect.getsource(getattr(reference, function))
    assert old in source, "the mutation must edit the reference"
    namespace = notebook_with(function, source.replace(old, new), assignment)
    v = local.judge_all(assignment, namespace, [function])[function]
    assert record("uncatalogued: killed", f"{function}:{new}", not v.passed and v.score < v.max_score), v.feedback
    assert "hidden case" in v.feedback


def test_mutation_score(capsys):
    """Prints the suite's figures (the assertions above already require every mutant killed)."""
    assert len(UNCATALOGUED) >= 10 and len({m.code for m in mistakes.mistakes}) >= 31
    with capsys.disabled():
        print()
        for kind, results in sorted(SCORE.items()):
            print(f"[measure] mutation score, {kind}: {sum(results.values())}/{len(results)}")
