"""A numerical gradient check of a learner's backward pass, for the feedback.

The forward inputs are recovered from the cache the backward pass received, the loss is
sum(a * da) (plus sum(c_next * dc_next) for the LSTM cell), and each wrong gradient is
compared with central differences of the reference forward pass, using the same
``numerical_gradient`` students have in rnn_utils.py.
"""
import functools

import numpy as np

from . import reference
from .exercises import BY_NAME, GRADIENTS


@functools.lru_cache(maxsize=None)
def _utils():
    from . import ASSIGNMENT
    return ASSIGNMENT.shipped_module("rnn_utils.py")


def forward_problem(name, args):
    """(values, f, dout): private copies of the forward inputs by name, a function of them
    giving the forward outputs that the backward pass differentiates, and their upstream
    gradient."""
    ex = BY_NAME[name]
    fields = ex.cache
    if "cell" in name:
        values = dict(zip(fields, args[-1]))
        upstream = args[:-1]
    else:
        (steps, x), upstream = args[1], args[:1]
        values = dict(zip(fields, steps[0]), x=x)
        values["a0"] = values["a_prev"]
    params = {k: np.array(v, dtype=float) for k, v in values["parameters"].items()}
    values = {k: np.array(v, dtype=float) for k, v in values.items() if k != "parameters"}
    values.update(params, parameters=params)
    forward = getattr(reference, ex.forward)
    names = BY_NAME[ex.forward].args

    def f():
        out = forward(*(values[n] for n in names))
        return np.concatenate([out[0], out[1]]) if name == "lstm_cell_backward" else out[0]
    dout = np.concatenate(upstream) if name == "lstm_cell_backward" else upstream[0]
    return values, f, dout


def lines(name, args, got, wrong, most=3, tr=lambda template, **fields: template.format(**fields)):
    """Sentences comparing the learner's wrong gradients with a numerical estimate, in the
    language of ``tr`` (the students' checks' ``tr``, which the judge set to the learner's)."""
    if name not in GRADIENTS or not isinstance(got, dict):
        return []
    out = []
    utils = _utils()
    values, f, dout = forward_problem(name, args)   # numerical_gradient restores what it nudges
    for key in [k for k in GRADIENTS[name] if k in wrong][:most]:
        target, yours = values[GRADIENTS[name][key]], got.get(key)
        if not isinstance(yours, np.ndarray) or yours.shape != target.shape:
            continue
        numeric = utils.numerical_gradient(f, target, dout)
        out.append("  " + tr("A numerical gradient check of {key} (central differences through the forward pass) "
                             "disagrees with yours: relative error {error}, where a correct gradient gives 1e-8 or "
                             "less.", key=key, error=f"{utils.relative_error(yours, numeric):.2g}"))
    return out
