"""The references: the RNN's against the published values, every assignment's backward
passes against central differences of their own forward passes."""
import numpy as np
import pytest
from helpers import numerical_gradient

from assignments.grading.contract import assignment as contract
from assignments.grading.contract import cases as generic
from assignments.rnn_step_by_step import cases, reference
from assignments.rnn_step_by_step.exercises import BY_NAME

PUBLISHED = [(name, key, value) for name, r in cases.PUBLISHED.items() for key, value in r.published.items()]


@pytest.mark.parametrize("name,key,value", PUBLISHED, ids=[f"{n}:{k}" for n, k, _ in PUBLISHED])
def test_reproduces_published_value(name, key, value):
    outputs = getattr(reference, name)(*cases.inputs(cases.PUBLISHED[name]))
    np.testing.assert_allclose(generic.entry(BY_NAME[name], outputs, key), value, rtol=0, atol=5e-8)


def test_every_published_value_is_checked():
    assert len(PUBLISHED) == 3 + 2 + 3 + 3 + 5 + 5 + 11 + 6


# --- every assignment's backward passes against central differences -----------------------

def gradients(assignment, function):
    """What each gradient a backward pass returns is the gradient of: ``dX`` is that of its
    forward pass's argument or parameter ``X`` (dxt of xt, da0 of a0, dWax of Wax...)."""
    ex = assignment.by_name[function]
    forward = assignment.by_name[ex.forward]
    return {out: out[1:] for out in ex.outputs if out[1:] in forward.args + forward.parameters}


def sizes(assignment):
    """Several sizes, all different within a shape, a single step and a single example too."""
    shape = assignment.cases.Shape
    return {"general": shape(11, n_x=3, n_a=4, n_y=2, m=2, T_x=3), "T_x=1": shape(12, n_x=2, n_a=3, n_y=4, m=3, T_x=1),
            "m=1": shape(13, n_x=4, n_a=2, n_y=3, m=1, T_x=4), "m=1,T_x=1": shape(14, n_x=1, n_a=3, n_y=2, m=1, T_x=1)}


GRAD_CASES = [(a.id, s, ex.name, g) for a in map(contract.load, contract.known()) for s in sizes(a)
              for ex in a.exercises if ex.forward for g in gradients(a, ex.name)]


@pytest.mark.parametrize("aid,shape,function,gradient", GRAD_CASES, ids=["-".join(c) for c in GRAD_CASES])
def test_backward_matches_central_differences(aid, shape, function, gradient):
    """The objective is the sum, over the forward pass's outputs that the backward pass takes
    an upstream gradient for (da for a, dc_next for c_next...), of output times gradient."""
    assignment = contract.load(aid)
    ex = assignment.by_name[function]
    values = generic.draw(sizes(assignment)[shape].recipe(function))
    forward = getattr(assignment.reference, ex.forward)
    outputs = assignment.by_name[ex.forward].outputs
    upstream = {i: "d" + name for i, name in enumerate(outputs) if "d" + name in ex.args}

    def objective():
        out = forward(*generic.arguments(assignment, ex.forward, values))
        return sum(np.sum(out[i] * values[d]) for i, d in upstream.items())

    analytic = getattr(assignment.reference, function)(*generic.arguments(assignment, function, values))[gradient]
    numeric = numerical_gradient(objective, values[gradients(assignment, function)[gradient]])
    assert analytic.shape == numeric.shape
    if shape == "general":
        assert np.max(np.abs(numeric)) > 1e-3, "a gradient that is zero everywhere proves nothing"
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7)


def test_every_gradient_is_checked():
    """Every gradient every backward pass returns is checked against central differences."""
    for aid in contract.known():
        assignment = contract.load(aid)
        for ex in assignment.exercises:
            if ex.forward:
                checked = {g for a, _, f, g in GRAD_CASES if a == aid and f == ex.name}
                assert checked == set(ex.outputs), (aid, ex.name, set(ex.outputs) - checked)
