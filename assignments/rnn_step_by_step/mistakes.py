"""The catalog of mistakes learners make, as data.

Each mistake has one or more variants (the ways learners make it), and each variant is a
few textual edits of the reference function. Compiling an edited source gives a "mutant".
The grader names a mistake when a submission's outputs match a mutant's on every hidden
case (one mistake, or two together); the student checks do the same against fingerprints
of the mutants' outputs on the public inputs; and the tests check that every mutant fails.
A mistake that no output comparison can reveal reliably is found by a detector instead:
``reads_globals`` (the function reads the notebook's variables instead of its arguments).
"""
import functools
import inspect
import itertools
from dataclasses import dataclass

import numpy as np

from . import reference


@dataclass(frozen=True)
class Mistake:
    code: str
    function: str
    variants: tuple     # each a tuple of (old, new) replacements in the reference source
    feedback: str       # what is wrong, why it matters, where to look; never the answer
    detector: str = ""  # a harness observation that also reveals it (see module docstring)


def edits(*pairs):
    """One variant made of these replacements."""
    return (tuple(pairs),)


def each(*pairs):
    """One variant per replacement."""
    return tuple((p,) for p in pairs)


def _gate_swaps():
    """A gate computed with another gate's weights, bias, or both."""
    variants = []
    for x, y in itertools.permutations("fico", 2):
        act = "np.tanh" if x == "c" else "sigmoid"
        old = f"{act}(W{x} @ z + b{x})"
        for w, b in ((y, y), (y, x), (x, y)):
            variants.append(((old, f"{act}(W{w} @ z + b{b})"),))
    return tuple(variants)


LSTM_CACHE = "(a_next, c_next, a_prev, c_prev, ft, it, cct, ot, xt, parameters)"


def _cache_swaps():
    """Two entries of the LSTM cache exchanged."""
    names = LSTM_CACHE.strip("()").split(", ")
    variants = []
    for i, j in itertools.combinations(range(len(names)), 2):
        order = list(names)
        order[i], order[j] = order[j], order[i]
        variants.append(((f"cache = {LSTM_CACHE}", f"cache = ({', '.join(order)})"),))
    return tuple(variants)


def _missing_gate_terms():
    """One gate's term left out of both input gradients, or of da_prev only, or dxt only."""
    terms = {"f": "Wf.T @ dft", "i": "Wi.T @ dit", "c": "Wc.T @ dcct", "o": "Wo.T @ dot"}
    full = "dz = Wf.T @ dft + Wi.T @ dit + Wc.T @ dcct + Wo.T @ dot"
    variants = []
    for term in terms.values():
        variants.append(((full, full.replace(" + " + term, "").replace(term + " + ", "")),))
        variants.append((("da_prev = dz[:n_a]", f"da_prev = dz[:n_a] - ({term})[:n_a]"),))
        variants.append((("dxt = dz[n_a:]", f"dxt = dz[n_a:] - ({term})[n_a:]"),))
    return tuple(variants)


CATALOG = (
    # --- rnn_cell_forward
    Mistake("rnn_output_from_a_prev", "rnn_cell_forward",
            edits(("softmax(Wya @ a_next + by)", "softmax(Wya @ a_prev + by)")),
            "yt_pred is computed from a_prev, the state before this step. The prediction at step t "
            "should read the new state a_next, which already includes the input xt."),
    Mistake("rnn_missing_bias", "rnn_cell_forward",
            each(("Waa @ a_prev + ba)", "Waa @ a_prev)"), ("Wya @ a_next + by)", "Wya @ a_next)"))
            + edits(("Waa @ a_prev + ba)", "Waa @ a_prev)"), ("Wya @ a_next + by)", "Wya @ a_next)")),
            "A bias is missing: ba belongs inside the tanh of the hidden state and by inside the "
            "softmax of the prediction. Without it each unit's output is forced through zero."),
    Mistake("rnn_wrong_activation", "rnn_cell_forward",
            each(("a_next = np.tanh(", "a_next = sigmoid("), ("a_next = np.tanh(", "a_next = (")),
            "The hidden state should go through tanh. Sigmoid (or no activation at all) gives "
            "states with a different range, and the backward pass's 1 - a² assumes tanh."),
    # --- rnn_forward
    Mistake("rnn_a0_ignored", "rnn_forward",
            edits(("a_next = a0", "a_next = np.zeros_like(a0)")),
            "The first step starts from zeros instead of the a0 you were given. The initial "
            "hidden state is an input of the network: feed it to the first cell."),
    Mistake("rnn_state_not_carried", "rnn_forward",
            edits(("rnn_cell_forward(x[:, :, t], a_next, parameters)", "rnn_cell_forward(x[:, :, t], a0, parameters)")),
            "Every step is fed a0 instead of the state computed by the previous step, so the "
            "network has no memory. Keep the state in a variable and update it in the loop."),
    # --- lstm_cell_forward
    Mistake("lstm_concat_order", "lstm_cell_forward",
            edits(("np.concatenate([a_prev, xt], axis=0)", "np.concatenate([xt, a_prev], axis=0)")),
            "The stacked input is [xt; a_prev], but the weights expect the hidden state on top: "
            "[a_prev; xt]. The shapes agree either way, so only the values show it."),
    Mistake("lstm_output_uses_c_prev", "lstm_cell_forward",
            edits(("a_next = ot * np.tanh(c_next)", "a_next = ot * np.tanh(c_prev)")),
            "a_next uses tanh of the previous cell state. The output gate shows the new memory: "
            "compute c_next first, then a_next from tanh(c_next)."),
    Mistake("lstm_gate_weights_swapped", "lstm_cell_forward", _gate_swaps(),
            "A gate is computed with another gate's weights or bias. Each gate (forget, update, "
            "candidate, output) has its own W and b: check each line pairs the right ones."),
    Mistake("lstm_candidate_activation", "lstm_cell_forward",
            edits(("cct = np.tanh(Wc @ z + bc)", "cct = sigmoid(Wc @ z + bc)")),
            "The candidate value uses sigmoid. It should use tanh, so that it can be negative "
            "and push the cell state both ways; only the gates use sigmoid."),
    Mistake("lstm_cache_order", "lstm_cell_forward", _cache_swaps(),
            "The cache's entries are in the wrong order. The backward pass unpacks it as "
            "(a_next, c_next, a_prev, c_prev, ft, it, cct, ot, xt, parameters)."),
    # --- lstm_forward
    Mistake("lstm_a0_ignored", "lstm_forward",
            edits(("a_next = a0", "a_next = np.zeros((n_a, m))")),
            "The first step starts from a zero hidden state instead of a0. Only the cell state "
            "starts at zeros; the hidden state starts at the a0 you were given."),
    Mistake("lstm_c_aliasing", "lstm_forward",
            edits(("c_next = np.zeros((n_a, m))", "c_next = c[:, :, 0]")),
            "The running cell state is a view into c (such as c[:, :, 0]), so writing c[:, :, t] "
            "later changes values already stored in the caches. Start from a fresh array "
            "(np.zeros) and carry what the cell returns."),
    Mistake("lstm_return_order", "lstm_forward",
            edits(("return a, y, c, (caches, x)", "return a, c, y, (caches, x)")),
            "The values are returned in the wrong order. lstm_forward returns a, y, c, caches."),
    # --- rnn_cell_backward
    Mistake("rnn_dtanh_wrong", "rnn_cell_backward",
            each(("(1 - a_next ** 2)", "(1 - np.tanh(a_next) ** 2)"), ("(1 - a_next ** 2)", "(1 - a_prev ** 2)"),
                 ("(1 - a_next ** 2)", "(1 - a_next)")),
            "The tanh derivative is taken at the wrong point. a_next is already tanh(...), so the "
            "derivative is 1 - a_next² (no second tanh, not a_prev, and squared)."),
    Mistake("rnn_grad_transposed", "rnn_cell_backward",
            each(("dWax = g @ xt.T", "dWax = (xt @ g.T)"), ("dWaa = g @ a_prev.T", "dWaa = a_prev @ g.T"),
                 ("dWaa = g @ a_prev.T", "dWaa = g @ a_next.T"), ("dWax = g @ xt.T", "dWax = da_next @ xt.T"),
                 ("dWaa = g @ a_prev.T", "dWaa = da_next @ a_prev.T")),
            "A weight gradient is built with the wrong transpose or the wrong factor. For a "
            "product W @ v, the gradient of W is (gradient at the output) @ vᵀ, where the gradient "
            "at the output already includes the tanh derivative."),
    # --- rnn_backward
    Mistake("rnn_upstream_da_ignored", "rnn_backward",
            edits(("rnn_cell_backward(da[:, :, t] + da_prevt, caches[t])", "rnn_cell_backward(da_prevt, caches[t])")),
            "Each step is fed only the gradient carried from the step after it. The gradient "
            "arriving from above at this step, da[:, :, t], must be added to it."),
    Mistake("rnn_stale_da_prev", "rnn_backward",
            edits(('da_prevt = grads["da_prev"]', "da_prevt = da_prevt")),
            "The gradient carried to the previous time step is never updated: after each step, "
            "keep the da_prev that rnn_cell_backward returned and feed it to the step before."),
    Mistake("rnn_grads_not_accumulated", "rnn_backward",
            edits(('dWax += grads["dWax"]', 'dWax = grads["dWax"]'), ('dWaa += grads["dWaa"]', 'dWaa = grads["dWaa"]'),
                  ('dba += grads["dba"]', 'dba = grads["dba"]')),
            "dWax, dWaa and dba hold the gradient of a single time step. The same weights are "
            "used at every step, so their gradient is the sum of every step's contribution: add "
            "each step's gradient to the running total (+=) instead of replacing it."),
    Mistake("rnn_time_order", "rnn_backward",
            edits(("for t in reversed(range(T_x)):", "for t in range(T_x):")),
            "Time is walked forwards. Backpropagation through time starts at the last step, "
            "whose gradient is complete, and carries gradients back to earlier steps."),
    # --- lstm_cell_backward
    Mistake("lstm_dc_prev_missing_da_term", "lstm_cell_backward",
            edits(("dc_prev = dc * ft", "dc_prev = dc_next * ft")),
            "dc_prev only passes on dc_next. The cell state also reached the loss through "
            "a_next = ot * tanh(c_next): use the total cell-state gradient (dc_next plus that "
            "path) before multiplying by ft."),
    Mistake("lstm_gate_grads_missing_dc_next", "lstm_cell_backward",
            edits(("dcct = dc * it", "dcct = (dc - dc_next) * it"), ("dit = dc * cct", "dit = (dc - dc_next) * cct"),
                  ("dft = dc * c_prev", "dft = (dc - dc_next) * c_prev")),
            "The gate gradients ignore dc_next, the gradient arriving on the cell state from "
            "the next step. The total cell-state gradient, dc_next plus the path through a_next, "
            "flows into the candidate, update and forget gates."),
    Mistake("lstm_dxt_wrong_slice", "lstm_cell_backward",
            each(("dxt = dz[n_a:]", "dxt = dz[:xt.shape[0]]"), ("da_prev = dz[:n_a]", "da_prev = dz[-n_a:]"))
            + edits(("dxt = dz[n_a:]", "dxt = dz[:xt.shape[0]]"), ("da_prev = dz[:n_a]", "da_prev = dz[xt.shape[0]:]")),
            "dxt or da_prev comes from the wrong block of the weights. The gates multiply "
            "[a_prev; xt]: the first n_a columns of each W act on a_prev, the rest on xt."),
    Mistake("lstm_da_prev_missing_gate", "lstm_cell_backward", _missing_gate_terms(),
            "One gate's contribution is missing from da_prev or dxt. All four gates read "
            "[a_prev; xt], so their four terms must all be added."),
    Mistake("lstm_dot_wrong", "lstm_cell_backward",
            each(("dot = da_next * tanh_c * ot * (1 - ot)", "dot = da_next * np.tanh(c_prev) * ot * (1 - ot)"),
                 ("dot = da_next * tanh_c * ot * (1 - ot)", "dot = da_next * tanh_c")),
            "The output gate's gradient is wrong: it is da_next ⊙ tanh(c_next) times the sigmoid "
            "derivative ot(1 - ot), using the new cell state."),
    Mistake("lstm_candidate_derivative", "lstm_cell_backward",
            edits(("(1 - cct ** 2)", "(1 - np.tanh(cct) ** 2)")),
            "The candidate's derivative applies tanh twice. cct is already tanh(...), so the "
            "derivative is 1 - cct²."),
    Mistake("lstm_uses_globals", "lstm_cell_backward",
            edits(("ot, xt, parameters = cache", "ot, xt, _ = cache")),
            "The weights come from a variable of your notebook instead of the cache. Use the "
            "parameters stored in the cache: the function must only depend on its arguments.",
            detector="reads_globals"),
    # --- lstm_backward
    Mistake("lstm_upstream_da_ignored", "lstm_backward",
            edits(("lstm_cell_backward(da[:, :, t] + da_prevt, dc_prevt", "lstm_cell_backward(da_prevt, dc_prevt")),
            "Each step is fed only the hidden-state gradient carried from the step after it. "
            "Add the gradient arriving from above at this step, da[:, :, t]."),
    Mistake("lstm_stale_da_prev", "lstm_backward",
            edits(('da_prevt = step["da_prev"]', "da_prevt = da_prevt")),
            "The hidden-state gradient carried to the previous time step is never updated: pass "
            "the da_prev returned by lstm_cell_backward on to the step before."),
    Mistake("lstm_stale_dc_prev", "lstm_backward",
            edits(('dc_prevt = step["dc_prev"]', "dc_prevt = dc_prevt")),
            "The cell-state gradient carried backwards through time is never updated: each "
            "step should pass the dc_prev returned by lstm_cell_backward on to the step before "
            "it. Without it, the long-term memory path of the LSTM gets no gradient."),
    Mistake("lstm_grads_not_accumulated", "lstm_backward",
            edits(("grads[name] += step[name]", "grads[name] = step[name]")),
            "dWf, dWi, dWc, dWo and the biases hold the gradient of a single time step. The "
            "gates share their weights across time, so sum every step's gradient (+=) instead "
            "of keeping only the last one computed."),
    Mistake("lstm_da0_wrong", "lstm_backward",
            each(("da0 = da_prevt", "da0 = da[:, :, 0]"), ("da0 = da_prevt", "da0 = np.zeros_like(da_prevt)"),
                 ("da0 = da_prevt", "da0 = da_prevt + da[:, :, 0]")),
            "da0 is not the gradient carried out of the first time step. After the loop, the "
            "da_prev returned by the step t = 0 is exactly the gradient of a0."),
)

BY_CODE = {m.code: m for m in CATALOG}


def for_function(name):
    return [m for m in CATALOG if m.function == name]


def variants(name):
    """Every (code, variant index) of ``name``'s mistakes that outputs reveal (those with a
    detector are found another way)."""
    return [(m.code, i) for m in for_function(name) if not m.detector for i in range(len(m.variants))]


def mutant_source(function, picks):
    """The reference ``function``'s source with the given (code, variant index) picks
    applied. A code alone stands for its first variant."""
    source = inspect.getsource(getattr(reference, function))
    for pick in picks:
        code, index = (pick, 0) if isinstance(pick, str) else pick
        for old, new in BY_CODE[code].variants[index]:
            if old not in source:
                raise ValueError(f"mistake {code}[{index}]: {old!r} is not in {function}")
            source = source.replace(old, new, 1)
    return source


@functools.lru_cache(maxsize=8192)
def mutant(function, picks):
    """The compiled mutant, its callees being the reference's."""
    namespace = dict(vars(reference))
    exec(compile(mutant_source(function, picks), f"<mutant {function}>", "exec"), namespace)
    return namespace[function]


def pairs(function, first=None):
    """Pairs of variants of two different mistakes; those involving ``first`` variants first."""
    found = variants(function)
    all_pairs = [(a, b) for a, b in itertools.combinations(found, 2) if a[0] != b[0]]
    first = set(first or ())
    return sorted(all_pairs, key=lambda p: not (p[0] in first or p[1] in first))


def run(fn, args):
    """Call a function on a private copy of its arguments."""
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
