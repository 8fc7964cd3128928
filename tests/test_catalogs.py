"""Every assignment's catalog of mistakes: each variant applies to the reference (each
edit's text occurs exactly once), compiles and changes the function's outputs on some
hidden case, and no two codes of a function that are proved by their outputs can be
mistaken for each other on the hidden cases."""
import inspect
import itertools
import re

import numpy as np
import pytest

from assignments.grading.contract import assignment as contract

ASSIGNMENTS = {aid: contract.load(aid) for aid in contract.known()}
OUTPUT_VARIANTS = [(a, m, i) for a in ASSIGNMENTS.values() for m in a.catalog if not m.detector
                   for i in range(len(m.variants))]
DETECTED = [(a, m, i) for a in ASSIGNMENTS.values() for m in a.catalog if m.detector and m.raises
            for i in range(len(m.variants))]
RTOL, ATOL = 1e-5, 1e-7   # the tolerance of the course's comparisons


def mutant_source(assignment, function, variant):
    source = inspect.getsource(getattr(assignment.reference, function))
    for old, new in variant:
        assert source.count(old) == 1, f"{old!r} occurs {source.count(old)} times in {function}"
        source = source.replace(old, new)
    return source


def compile_mutant(assignment, function, variant, namespace=None):
    namespace = dict(vars(assignment.reference)) if namespace is None else namespace
    exec(compile(mutant_source(assignment, function, variant), f"<mutant {function}>", "exec"), namespace)
    return namespace[function]


def copy(x):
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, (tuple, list)):
        return type(x)(copy(v) for v in x)
    if isinstance(x, dict):
        return {k: copy(v) for k, v in x.items()}
    return x


def same(a, b):
    """Whether two nested outputs agree within the course's tolerance."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and bool(np.allclose(a, b, rtol=RTOL, atol=ATOL))
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


HIDDEN = {(a.id, e.name): [args for _, args, _ in a.hidden_cases(e.name)] for a in ASSIGNMENTS.values() for e in a.exercises}
REFERENCE = {(aid, f): [getattr(ASSIGNMENTS[aid].reference, f)(*copy(args)) for args in cases] for (aid, f), cases in HIDDEN.items()}
_OUTPUTS = {}


def outputs(assignment, mistake, index):
    key = (assignment.id, mistake.code, index)
    if key not in _OUTPUTS:
        fn = compile_mutant(assignment, mistake.function, mistake.variants[index])
        _OUTPUTS[key] = [run(fn, args) for args in HIDDEN[assignment.id, mistake.function]]
    return _OUTPUTS[key]


def run(fn, args):
    """A mutant's outputs on a case, or the exception it raises there (a behaviour too)."""
    try:
        return fn(*copy(args))
    except Exception as exc:
        return f"raised {type(exc).__name__}"


def ids(items):
    return [f"{m.code}[{i}]" for _, m, i in items]


@pytest.mark.parametrize("aid", sorted(ASSIGNMENTS))
def test_catalog_shape(aid):
    assignment = ASSIGNMENTS[aid]
    names = {e.name for e in assignment.exercises}
    codes = [m.code for m in assignment.catalog]
    assert len(codes) == len(set(codes)) >= 12
    assert all(c.startswith(assignment.short + "_") or c.startswith(("lstm_", "rnn_")) for c in codes)
    for m in assignment.catalog:
        assert m.function in names and set(m.also) <= names
        assert m.variants or m.raises, m.code
        assert m.feedback.strip() and m.feedback == m.feedback.strip()
    # every graded function has mistakes of its own
    assert {m.function for m in assignment.catalog} == names


@pytest.mark.parametrize("assignment,mistake,index", OUTPUT_VARIANTS, ids=ids(OUTPUT_VARIANTS))
def test_variant_applies_compiles_and_changes_outputs(assignment, mistake, index):
    got = outputs(assignment, mistake, index)
    assert any(not same(g, r) for g, r in zip(got, REFERENCE[assignment.id, mistake.function])), \
        "this variant gives the reference's outputs on every hidden case"


@pytest.mark.parametrize("assignment,mistake,index", OUTPUT_VARIANTS, ids=ids(OUTPUT_VARIANTS))
def test_feedback_does_not_hand_over_the_corrected_line(assignment, mistake, index):
    for old, _ in mistake.variants[index]:
        if len(old.strip()) > 12:
            assert old.strip() not in mistake.feedback


PAIRS = [(a, b) for a, b in itertools.combinations(OUTPUT_VARIANTS, 2)
         if a[0] is b[0] and a[1].function == b[1].function and a[1].code != b[1].code]


def test_no_two_codes_are_indistinguishable():
    """For every two variants of different codes of one function, some hidden case tells
    them apart (otherwise the grader could not say which mistake was made)."""
    clashes = [f"{a.code}[{i}] ~ {b.code}[{j}]" for (x, a, i), (_, b, j) in PAIRS
               if all(same(p, q) for p, q in zip(outputs(x, a, i), outputs(x, b, j)))]
    print(f"[measure] {len(PAIRS)} pairs of variants of different codes compared")
    assert not clashes, clashes


@pytest.mark.parametrize("assignment,mistake,index", DETECTED, ids=ids(DETECTED))
def test_detected_variant_raises_what_the_catalog_says(assignment, mistake, index):
    """A function reading weights it was not given fails in a kernel that has none."""
    namespace = {k: v for k, v in vars(assignment.reference).items() if k not in ("parameters",)}
    fn = compile_mutant(assignment, mistake.function, mistake.variants[index], namespace)
    args = copy(HIDDEN[assignment.id, mistake.function][0])
    with pytest.raises(NameError) as info:
        fn(*args)
    assert re.search(mistake.raises, f"NameError: {info.value}")
