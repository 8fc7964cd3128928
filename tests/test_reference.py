"""The reference solution against the published values and against finite differences."""
import numpy as np
import pytest

from assignments.grading.contract import cases as generic
from assignments.rnn_step_by_step import ASSIGNMENT, cases, reference
from assignments.rnn_step_by_step.exercises import BY_NAME, GRADIENTS

PUBLISHED = [(name, key, value) for name, r in cases.PUBLISHED.items() for key, value in r.published.items()]


@pytest.mark.parametrize("name,key,value", PUBLISHED, ids=[f"{n}:{k}" for n, k, _ in PUBLISHED])
def test_reproduces_published_value(name, key, value):
    outputs = getattr(reference, name)(*cases.inputs(cases.PUBLISHED[name]))
    np.testing.assert_allclose(generic.entry(BY_NAME[name], outputs, key), value, rtol=0, atol=5e-8)


def test_every_published_value_is_checked():
    assert len(PUBLISHED) == 3 + 2 + 3 + 3 + 5 + 5 + 11 + 6


# The objective is sum(a * da) (plus sum(c_next * dc_next) for the LSTM cell).
CASES = [(f, g) for f, grads in GRADIENTS.items() for g in grads]


def numerical_gradient(f, x, h=1e-6):
    grad = np.zeros_like(x)
    for ix in np.ndindex(*x.shape):
        old = x[ix]
        x[ix] = old + h
        plus = f()
        x[ix] = old - h
        minus = f()
        x[ix] = old
        grad[ix] = (plus - minus) / (2 * h)
    return grad


@pytest.mark.parametrize("function,gradient", CASES, ids=[f"{f}:{g}" for f, g in CASES])
def test_backward_matches_central_differences(function, gradient):
    ex = BY_NAME[function]
    shape = cases.Shape(11, n_x=3, n_a=4, n_y=2, m=2, T_x=3)
    values = generic.draw(shape.recipe(function))
    forward = getattr(reference, ex.forward)
    upstream = values["da_next"] if "cell" in function else values["da"]

    def objective():
        out = forward(*generic.arguments(ASSIGNMENT, ex.forward, values))
        total = np.sum(out[0] * upstream)
        if function == "lstm_cell_backward":
            total += np.sum(out[1] * values["dc_next"])
        return total

    analytic = getattr(reference, function)(*generic.arguments(ASSIGNMENT, function, values))[gradient]
    numeric = numerical_gradient(objective, values[GRADIENTS[function][gradient]])
    assert analytic.shape == numeric.shape
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7)
