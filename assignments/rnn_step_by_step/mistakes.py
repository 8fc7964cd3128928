"""The catalog of mistakes learners make, as data.

Each mistake is a few textual edits of the reference function. Compiling the edited source
gives a "mutant": the grader names a mistake when a submission's outputs match the mutant's
on every hidden case, and the tests check that every mutant fails its hidden tests.
"""
import inspect
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from . import reference


@dataclass(frozen=True)
class Mistake:
    code: str
    function: str
    edits: tuple        # (old, new) text replacements in the reference function's source
    feedback: str       # what is wrong, why it matters, where to look; never the answer


CATALOG = (
    Mistake(
        "rnn_grads_not_accumulated", "rnn_backward",
        (('dWax += grads["dWax"]', 'dWax = grads["dWax"]'),
         ('dWaa += grads["dWaa"]', 'dWaa = grads["dWaa"]'),
         ('dba += grads["dba"]', 'dba = grads["dba"]')),
        "dWax, dWaa and dba hold the gradient of a single time step. The same weights are "
        "used at every step, so their gradient is the sum of every step's contribution: "
        "add each step's gradient to the running total (+=) instead of replacing it."),
    Mistake(
        "lstm_grads_not_accumulated", "lstm_backward",
        (("grads[name] += step[name]", "grads[name] = step[name]"),),
        "dWf, dWi, dWc, dWo and the biases hold the gradient of a single time step. The "
        "gates share their weights across time, so sum every step's gradient (+=) instead "
        "of keeping only the last one computed."),
    Mistake(
        "lstm_stale_dc_prev", "lstm_backward",
        (('dc_prevt = step["dc_prev"]', "dc_prevt = dc_prevt"),),
        "The cell-state gradient carried backwards through time is never updated: each "
        "step should pass the dc_prev returned by lstm_cell_backward on to the step before "
        "it. Without it, the long-term memory path of the LSTM gets no gradient."),
)

BY_CODE = {m.code: m for m in CATALOG}


def for_function(name):
    return [m for m in CATALOG if m.function == name]


def mutant(function, codes):
    """The reference ``function`` with the edits of the mistakes ``codes`` applied."""
    source = inspect.getsource(getattr(reference, function))
    for code in codes:
        for old, new in BY_CODE[code].edits:
            if old not in source:
                raise ValueError(f"mistake {code}: {old!r} is not in the reference {function}")
            source = source.replace(old, new)
    namespace = dict(vars(reference))
    exec(compile(source, f"<mutant {'+'.join(codes)}>", "exec"), namespace)
    return namespace[function]


def candidates(function, max_together=2):
    """Every single mistake of ``function``, then every pair (learners make two at once)."""
    codes = [m.code for m in for_function(function)]
    for k in range(1, max_together + 1):
        yield from combinations(codes, k)


def run(fn, args):
    """Call a mutant on a private copy of its arguments."""
    return fn(*_copy(args))


def _copy(x):
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, tuple):
        return tuple(_copy(v) for v in x)
    if isinstance(x, list):
        return [_copy(v) for v in x]
    if isinstance(x, dict):
        return {k: _copy(v) for k, v in x.items()}
    return x
