"""The catalog of mistakes learners make in the GRU assignment, as data.

Each mistake has one or more variants (the ways learners make it), and each variant is a
few textual edits of the GRU reference function (see reference.py), in the format of the
RNN assignment's catalog: the grader names a mistake when a submission's outputs match a
mutant's. Feedback says what is wrong and where to look, in the learner's terms, without
handing over the corrected line.
"""
import itertools

# Generic pieces still living with the RNN assignment (to move to assignments/grading/).
from ..grading.contract.mutation import Mistake, each, edits

CACHE = "(a_next, a_prev, xt, rt, zt, cct, parameters)"
CANDIDATE = "cct = np.tanh(Wc @ zr + bc)"
RESET_INPUT = "zr = np.concatenate([rt * a_prev, xt], axis=0)"
MIX = "a_next = zt * cct + (1 - zt) * a_prev"
DA_PREV = "da_prev = da_next * (1 - zt) + rt * dra + Wr[:, :n_a].T @ drt + Wz[:, :n_a].T @ dzt"
DXT = "dxt = Wc[:, n_a:].T @ dcct + Wr[:, n_a:].T @ drt + Wz[:, n_a:].T @ dzt"
GATE_GRADS = {"r": "drt", "z": "dzt", "c": "dcct"}
CELL_BWD = "gru_cell_backward(da[:, :, t] + da_prevt, caches[t])"


def _gate_swaps():
    """The reset gate computed with the update gate's weights, bias or both, or the other
    way round, or both gates exchanged."""
    variants = []
    for x, y in (("r", "z"), ("z", "r")):
        old = f"sigmoid(W{x} @ z + b{x})"
        for w, b in ((y, y), (y, x), (x, y)):
            variants.append(((old, f"sigmoid(W{w} @ z + b{b})"),))
    variants.append((("rt = sigmoid(Wr @ z + br)", "rt = sigmoid(Wz @ z + bz)"),
                     ("zt = sigmoid(Wz @ z + bz)", "zt = sigmoid(Wr @ z + br)")))
    return tuple(variants)


def _cache_swaps():
    """Two entries of the cache exchanged."""
    names = CACHE.strip("()").split(", ")
    variants = []
    for i, j in itertools.combinations(range(len(names)), 2):
        order = list(names)
        order[i], order[j] = order[j], order[i]
        variants.append(((f"cache = {CACHE}", f"cache = ({', '.join(order)})"),))
    return tuple(variants)


def _term(block, gate):
    return f"W{gate}[:, {block}].T @ {GATE_GRADS[gate]}"


def _wrong_blocks():
    """dxt from the first columns of a weight (those that act on the state), or da_prev from
    its last ones; for one weight or for all three."""
    variants = []
    for block, wrong, gates in (("n_a:", ":xt.shape[0]", "crz"), (":n_a", "-n_a:", "rz")):
        for gate in gates:
            variants.append(((_term(block, gate), _term(wrong, gate)),))
        variants.append(tuple((_term(block, g), _term(wrong, g)) for g in gates))
    variants.append((("dra = Wc[:, :n_a].T @ dcct", "dra = Wc[:, -n_a:].T @ dcct"),))
    return tuple(variants)


BIAS_SUMS = tuple((f"db{g} = np.sum({d}, axis=1, keepdims=True)", f"db{g} = np.mean({d}, axis=1, keepdims=True)")
                  for g, d in GATE_GRADS.items())
# Reading a weight the function was not given: in a fresh kernel it is not defined at all.
GRU_GLOBALS = r"NameError: name '(W[rzcy]|b[rzcy]|parameters)' is not defined"

CATALOG = (
    # --- gru_cell_forward
    Mistake("gru_reset_not_applied", "gru_cell_forward",
            edits((RESET_INPUT, "zr = np.concatenate([a_prev, xt], axis=0)")),
            "The reset gate rt is computed but never used: the candidate reads the old state "
            "unchanged. The reset gate's job is to decide how much of a_prev the candidate may "
            "see, so it must scale a_prev before the candidate's weights act on it."),
    Mistake("gru_reset_misplaced", "gru_cell_forward",
            edits((CANDIDATE, "cct = np.tanh(Wc[:, a_prev.shape[0]:] @ xt + rt * (Wc[:, :a_prev.shape[0]] @ a_prev) + bc)"))
            + edits((RESET_INPUT, "zr = np.concatenate([a_prev, xt], axis=0)"), (CANDIDATE, "cct = rt * np.tanh(Wc @ zr + bc)"))
            + edits((RESET_INPUT, "zr = np.concatenate([a_prev, xt], axis=0)"), (MIX, "a_next = zt * cct + (1 - zt) * rt * a_prev"))
            + edits((RESET_INPUT, "zr = np.concatenate([a_prev, xt], axis=0)"), (CANDIDATE, "cct = np.tanh(rt * (Wc @ zr) + bc)")),
            "The reset gate acts in the wrong place. In this course it multiplies the previous "
            "hidden state element by element before that state enters the candidate's "
            "weights, not the result of the product with the weights, the candidate itself, or "
            "the old state that is kept in a_next. Look at what you stack under xt for the "
            "candidate."),
    Mistake("gru_update_swapped", "gru_cell_forward",
            edits((MIX, "a_next = (1 - zt) * cct + zt * a_prev")),
            "The update gate's two shares are exchanged: your a_next keeps a share zt of the old "
            "state and takes 1 - zt of the candidate. Some libraries use that convention, but "
            "here zt is the share of the new candidate (Exercise 1's equation for a_next)."),
    Mistake("gru_state_mix_wrong", "gru_cell_forward",
            each((MIX, "a_next = zt * cct + a_prev"), (MIX, "a_next = zt * cct"), (MIX, "a_next = cct + (1 - zt) * a_prev")),
            "a_next is not a blend of the candidate and the previous state. The update gate "
            "splits each unit between the two, so the two shares must add up to one: check both "
            "terms of a_next and their factors."),
    Mistake("gru_gate_weights_swapped", "gru_cell_forward", _gate_swaps(),
            "A gate is computed with the other gate's weights or bias. The reset gate uses Wr "
            "and br, the update gate Wz and bz: check that each line pairs its own."),
    Mistake("gru_concat_order", "gru_cell_forward",
            each(("z = np.concatenate([a_prev, xt], axis=0)", "z = np.concatenate([xt, a_prev], axis=0)"),
                 (RESET_INPUT, "zr = np.concatenate([xt, rt * a_prev], axis=0)"))
            + edits(("z = np.concatenate([a_prev, xt], axis=0)", "z = np.concatenate([xt, a_prev], axis=0)"),
                    (RESET_INPUT, "zr = np.concatenate([xt, rt * a_prev], axis=0)")),
            "A stacked input has xt on top. Every weight expects the hidden-state part first, "
            "then xt, for the gates and for the candidate alike. The shapes agree either way, so "
            "only the values show it."),
    Mistake("gru_missing_bias", "gru_cell_forward",
            each(("Wr @ z + br)", "Wr @ z)"), ("Wz @ z + bz)", "Wz @ z)"), ("Wc @ zr + bc)", "Wc @ zr)"),
                 ("Wy @ a_next + by)", "Wy @ a_next)"))
            + edits(("Wr @ z + br)", "Wr @ z)"), ("Wz @ z + bz)", "Wz @ z)"), ("Wc @ zr + bc)", "Wc @ zr)")),
            "A bias is missing: br, bz and bc belong inside the two gates and the candidate, and "
            "by inside the softmax of the prediction. Check every weighted sum of the cell."),
    Mistake("gru_candidate_activation", "gru_cell_forward",
            each((CANDIDATE, "cct = sigmoid(Wc @ zr + bc)"), (CANDIDATE, "cct = (Wc @ zr + bc)")),
            "The candidate does not go through tanh. It should be able to push the state both "
            "ways, between -1 and 1; only the two gates use sigmoid."),
    Mistake("gru_gate_activation", "gru_cell_forward",
            each(("rt = sigmoid(", "rt = np.tanh("), ("zt = sigmoid(", "zt = np.tanh(")),
            "A gate goes through tanh. Gates are shares between 0 and 1, so both the reset and "
            "the update gate use sigmoid."),
    Mistake("gru_output_from_a_prev", "gru_cell_forward",
            edits(("softmax(Wy @ a_next + by)", "softmax(Wy @ a_prev + by)")),
            "yt_pred is computed from a_prev, the state before this step. The prediction at step "
            "t reads the new state, the one that already includes xt."),
    Mistake("gru_output_sigmoid", "gru_cell_forward",
            edits(("yt_pred = softmax(", "yt_pred = sigmoid(")),
            "The prediction goes through sigmoid. It should go through softmax, which turns each "
            "column into probabilities over the n_y classes that add up to 1."),
    Mistake("gru_cache_order", "gru_cell_forward", _cache_swaps(),
            "The cache's entries are in the wrong order. The backward pass unpacks it as "
            "(a_next, a_prev, xt, rt, zt, cct, parameters)."),
    # --- gru_forward
    Mistake("gru_a0_ignored", "gru_forward",
            edits(("a_next = a0", "a_next = np.zeros_like(a0)")),
            "The first step starts from zeros instead of the a0 you were given. The initial "
            "hidden state is an input of the network: feed it to the first cell.",
            behaviour=(("a_prev", "first:zeros"),)),
    Mistake("gru_state_not_carried", "gru_forward",
            edits(("gru_cell_forward(x[:, :, t], a_next, parameters)", "gru_cell_forward(x[:, :, t], a0, parameters)")),
            "Every step is fed a0 instead of the state the previous step returned, so the network "
            "has no memory. Keep the state in a variable and update it in the loop.",
            behaviour=(("a_prev", "init"),)),
    Mistake("gru_caches_layout", "gru_forward",
            edits(("return a, y_pred, (caches, x)", "return a, y_pred, caches")),
            "caches is not laid out as the backward pass expects: a tuple (list of the caches of "
            "every step, x), built by appending each step's cache to a list.",
            behaviour=(("caches", "layout"),)),
    # --- gru_cell_backward
    Mistake("gru_da_prev_direct_path", "gru_cell_backward",
            each((DA_PREV, DA_PREV.replace("da_next * (1 - zt) + ", "")),
                 (DA_PREV, DA_PREV.replace("da_next * (1 - zt)", "da_next")),
                 (DA_PREV, DA_PREV.replace("da_next * (1 - zt)", "da_next * zt"))),
            "da_prev gets the direct path wrong. Part of a_prev is copied straight into a_next, "
            "with the coefficient 1 - zt; that share of da_next flows straight "
            "back to a_prev, besides the paths through the candidate and the gates."),
    Mistake("gru_da_prev_candidate_path", "gru_cell_backward",
            each((DA_PREV, DA_PREV.replace(" + rt * dra", "")), (DA_PREV, DA_PREV.replace("rt * dra", "dra"))),
            "da_prev gets the path through the candidate wrong. The candidate read a_prev only "
            "after the reset gate scaled it, so the gradient that comes back out of the "
            "candidate's weights must be scaled the same way before it reaches a_prev."),
    Mistake("gru_da_prev_missing_gate", "gru_cell_backward",
            each((" + Wr[:, :n_a].T @ drt", ""), (" + Wz[:, :n_a].T @ dzt", ""))
            + edits((" + Wr[:, :n_a].T @ drt", ""), (" + Wz[:, :n_a].T @ dzt", "")),
            "da_prev lacks the path through a gate. Both gates read a_prev (as the top of the "
            "stacked input), so each contributes a term through its weights' first n_a columns."),
    Mistake("gru_dxt_missing_term", "gru_cell_backward",
            each(("dxt = Wc[:, n_a:].T @ dcct + ", "dxt = "), (" + Wr[:, n_a:].T @ drt", ""),
                 (" + Wz[:, n_a:].T @ dzt", "")),
            "dxt lacks a term. xt enters the reset gate, the update gate and the candidate, so "
            "its gradient adds up three contributions, one through each weight's last n_x "
            "columns."),
    Mistake("gru_dxt_wrong_slice", "gru_cell_backward", _wrong_blocks(),
            "dxt or da_prev comes from the wrong block of a weight. Each weight multiplies a "
            "stack with the hidden-state part on top: its first n_a columns act on that part, "
            "the remaining n_x columns on xt."),
    Mistake("gru_dzt_wrong", "gru_cell_backward",
            each(("(cct - a_prev) * zt", "cct * zt"), ("(cct - a_prev) * zt", "(a_prev - cct) * zt")),
            "The update gate's gradient is wrong. zt appears twice in a_next (once with the "
            "candidate, once through 1 - zt with a_prev): differentiate both terms, signs "
            "included, before the sigmoid's derivative."),
    Mistake("gru_drt_wrong", "gru_cell_backward",
            each(("drt = dra * a_prev * rt", "drt = dra * rt"), ("drt = dra * a_prev * rt", "drt = dra * a_next * rt")),
            "The reset gate's gradient is wrong. The reset gate multiplies the previous state "
            "inside the candidate's input, so the gradient reaching that product must be "
            "multiplied by what rt multiplied, then by the sigmoid's derivative."),
    Mistake("gru_gate_derivatives_missing", "gru_cell_backward",
            edits(("dcct = da_next * zt * (1 - cct ** 2)", "dcct = da_next * zt"),
                  ("dzt = da_next * (cct - a_prev) * zt * (1 - zt)", "dzt = da_next * (cct - a_prev)"),
                  ("drt = dra * a_prev * rt * (1 - rt)", "drt = dra * a_prev"))
            + each(("dcct = da_next * zt * (1 - cct ** 2)", "dcct = da_next * zt"),
                   ("dzt = da_next * (cct - a_prev) * zt * (1 - zt)", "dzt = da_next * (cct - a_prev)"),
                   ("drt = dra * a_prev * rt * (1 - rt)", "drt = dra * a_prev")),
            "A gradient lacks the derivative of its activation. The gates are sigmoids and the "
            "candidate a tanh of weighted sums, so each gradient is multiplied by that "
            "function's derivative (written with the cached output) before it reaches the "
            "weights."),
    Mistake("gru_candidate_derivative", "gru_cell_backward",
            edits(("(1 - cct ** 2)", "(1 - np.tanh(cct) ** 2)")),
            "The candidate's derivative applies tanh twice. cct is already a tanh, so its "
            "derivative is written with cct itself."),
    Mistake("gru_dcct_missing_zt", "gru_cell_backward",
            edits(("dcct = da_next * zt * (1 - cct ** 2)", "dcct = da_next * (1 - cct ** 2)")),
            "The candidate's gradient ignores the update gate. Only the share zt of the "
            "candidate reaches a_next, so only that share of da_next flows back into it."),
    Mistake("gru_dWc_input", "gru_cell_backward",
            edits(("dWc = dcct @ zr.T", "dWc = dcct @ z.T")),
            "dWc is built from the wrong input. The candidate's weights multiplied the stack "
            "whose hidden-state part was scaled by the reset gate, not the plain [a_prev; xt] "
            "the gates read."),
    Mistake("gru_db_averaged", "gru_cell_backward",
            edits(*BIAS_SUMS) + each(*BIAS_SUMS),
            "A bias gradient is averaged over the batch. Like the weight gradients (whose products "
            "sum over the examples), each bias gradient is a sum over the batch."),
    Mistake("gru_uses_globals", "gru_cell_backward",
            edits(("zt, cct, parameters = cache", "zt, cct, _ = cache")),
            "The weights come from a variable of your notebook instead of the arguments. Use "
            "the parameters you were given (in the backward pass, those stored in the cache): "
            "the function must only depend on its arguments.",
            detector="reads_globals", raises=GRU_GLOBALS,
            also=("gru_cell_forward", "gru_forward", "gru_backward")),
    # --- gru_backward
    Mistake("gru_upstream_da_ignored", "gru_backward",
            edits((CELL_BWD, "gru_cell_backward(da_prevt, caches[t])")),
            "Each step is fed only the gradient carried from the step after it. The gradient "
            "arriving from above at this step, da[:, :, t], must be added to it.",
            behaviour=(("da_next", "carry_only"),)),
    Mistake("gru_stale_da_prev", "gru_backward",
            each(('da_prevt = step["da_prev"]', "da_prevt = da_prevt"), (CELL_BWD, "gru_cell_backward(da[:, :, t], caches[t])")),
            "The gradient carried back from the step after never reaches this step: keep the "
            "da_prev that gru_cell_backward returns and add it to what the step before receives.",
            behaviour=(("da_next", "upstream_only"),)),
    Mistake("gru_grads_not_accumulated", "gru_backward",
            edits(("grads[name] += step[name]", "grads[name] = step[name]")),
            "Only a single time step's contribution is kept in {outputs}. The same "
            "weights act at every step, so their gradient is the sum over all steps.",
            behaviour=(("sum", "last"),)),
    Mistake("gru_grad_added_twice", "gru_backward",
            edits(("grads[name] += step[name]", "grads[name] += 2 * step[name]")),
            "Each step's weight gradients are added twice to the running total (for example the "
            "total added to itself as well as the step's gradient). Add each step's gradient once.",
            behaviour=(("sum", "twice"), ("sum", "twice_last"), ("sum", "doubling"))),
    Mistake("gru_time_order", "gru_backward",
            edits(("for t in reversed(range(T_x)):", "for t in range(T_x):")),
            "Time is walked forwards. Backpropagation through time starts at the last step, "
            "whose gradient is complete, and carries gradients back towards the first.",
            behaviour=(("order", "reversed"),)),
    Mistake("gru_da0_wrong", "gru_backward",
            each(("da0 = da_prevt", "da0 = da[:, :, 0]"), ("da0 = da_prevt", "da0 = np.zeros_like(da_prevt)"),
                 ("da0 = da_prevt", "da0 = da_prevt + da[:, :, 0]")),
            "da0 is not the gradient carried out of the first time step. After the loop, the "
            "da_prev returned by the step t = 0 is the gradient of a0.",
            behaviour=(("final", "upstream"), ("final", "first_call"), ("final", "plus_upstream"), ("final", "zeros"))),
)

BY_CODE = {m.code: m for m in CATALOG}
