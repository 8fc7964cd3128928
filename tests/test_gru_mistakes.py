"""The GRU catalog of mistakes: every variant applies to the reference (each edit's text
occurs exactly once), compiles, changes the function's outputs on some hidden case, and no
two codes of a function can be mistaken for each other on the hidden cases."""
import inspect
import itertools
import re

import numpy as np
import pytest

from assignments.gru_step_by_step import cases, mistakes, reference
from assignments.gru_step_by_step.exercises import BY_NAME

OUTPUT_VARIANTS = [(m, i) for m in mistakes.CATALOG if not m.detector for i in range(len(m.variants))]
DETECTED = [(m, i) for m in mistakes.CATALOG if m.detector for i in range(len(m.variants))]
RTOL, ATOL = 1e-5, 1e-7   # the tolerance of the course's comparisons


def mutant_source(function, variant):
    source = inspect.getsource(getattr(reference, function))
    for old, new in variant:
        assert source.count(old) == 1, f"{old!r} occurs {source.count(old)} times in {function}"
        source = source.replace(old, new)
    return source


def compile_mutant(function, variant, namespace=None):
    namespace = dict(vars(reference)) if namespace is None else namespace
    exec(compile(mutant_source(function, variant), f"<mutant {function}>", "exec"), namespace)
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


HIDDEN = {f: [cases.inputs(r) for r in cases.hidden_recipes(f)] for f in BY_NAME}
REFERENCE = {f: [getattr(reference, f)(*copy(args)) for args in HIDDEN[f]] for f in BY_NAME}
_OUTPUTS = {}


def outputs(mistake, index):
    key = (mistake.code, index)
    if key not in _OUTPUTS:
        fn = compile_mutant(mistake.function, mistake.variants[index])
        _OUTPUTS[key] = [fn(*copy(args)) for args in HIDDEN[mistake.function]]
    return _OUTPUTS[key]


def test_catalog_shape():
    codes = [m.code for m in mistakes.CATALOG]
    assert len(codes) == len(set(codes)) >= 12
    assert all(c.startswith("gru_") for c in codes)
    for m in mistakes.CATALOG:
        assert m.function in BY_NAME and set(m.also) <= set(BY_NAME)
        assert m.variants or m.raises, m.code
        assert m.feedback.strip() and m.feedback == m.feedback.strip()
    # every graded function has mistakes of its own
    assert {m.function for m in mistakes.CATALOG} == set(BY_NAME)


@pytest.mark.parametrize("mistake,index", OUTPUT_VARIANTS, ids=[f"{m.code}[{i}]" for m, i in OUTPUT_VARIANTS])
def test_variant_applies_compiles_and_changes_outputs(mistake, index):
    got = outputs(mistake, index)
    assert any(not same(g, r) for g, r in zip(got, REFERENCE[mistake.function])), \
        "this variant gives the reference's outputs on every hidden case"


@pytest.mark.parametrize("mistake,index", OUTPUT_VARIANTS, ids=[f"{m.code}[{i}]" for m, i in OUTPUT_VARIANTS])
def test_feedback_does_not_hand_over_the_corrected_line(mistake, index):
    for old, _ in mistake.variants[index]:
        if len(old.strip()) > 12:
            assert old.strip() not in mistake.feedback


PAIRS = [(a, b) for a, b in itertools.combinations(OUTPUT_VARIANTS, 2)
         if a[0].function == b[0].function and a[0].code != b[0].code]


def test_no_two_codes_are_indistinguishable():
    """For every two variants of different codes of one function, some hidden case tells
    them apart (otherwise the grader could not say which mistake was made)."""
    clashes = [f"{a.code}[{i}] ~ {b.code}[{j}]" for (a, i), (b, j) in PAIRS
               if all(same(x, y) for x, y in zip(outputs(a, i), outputs(b, j)))]
    print(f"[measure] {len(PAIRS)} pairs of variants of different codes compared")
    assert not clashes, clashes


@pytest.mark.parametrize("mistake,index", DETECTED, ids=[f"{m.code}[{i}]" for m, i in DETECTED])
def test_detected_variant_raises_what_the_catalog_says(mistake, index):
    """A function reading weights it was not given fails in a kernel that has none."""
    namespace = {k: v for k, v in vars(reference).items() if k not in ("parameters",)}
    fn = compile_mutant(mistake.function, mistake.variants[index], namespace)
    args = copy(HIDDEN[mistake.function][0])
    with pytest.raises(NameError) as info:
        fn(*args)
    assert re.search(mistake.raises, f"NameError: {info.value}")
