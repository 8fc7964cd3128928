"""The catalog of mistakes learners make in this assignment, as data: each a few textual
edits of the reference (see grading/contract/mutation.py for how mutants are made and used)."""
import itertools

from ..grading.contract.mutation import Mistake, each, edits


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


GATE_GRADS = {"f": "dft", "i": "dit", "c": "dcct", "o": "dot"}
DB_FROM_DW = tuple((f"db{g} = np.sum({d}, axis=1, keepdims=True)", f"db{g} = np.sum(dW{g}, axis=1, keepdims=True)")
                   for g, d in GATE_GRADS.items())


def _term(block, gate):
    return f"W{gate}[:, {block}].T @ {GATE_GRADS[gate]}"


def _missing_gate_terms():
    """One gate's term left out of da_prev, of dxt, or of both."""
    variants = []
    for gate in "fico":
        for block in (":n_a", "n_a:"):
            variants.append(((" + " + _term(block, gate), ""),) if gate != "f" else ((_term(block, gate) + " + ", ""),))
        both = tuple(((" + " + _term(b, gate), "") if gate != "f" else (_term(b, gate) + " + ", "")) for b in (":n_a", "n_a:"))
        variants.append(both)
    return tuple(variants)


def _wrong_blocks():
    """dxt (or da_prev) built from the wrong columns of one gate's weights, or of every gate's."""
    variants = []
    for block, wrong in (("n_a:", ":xt.shape[0]"), (":n_a", "-n_a:")):
        for gate in "fico":
            variants.append(((_term(block, gate), _term(wrong, gate)),))
        variants.append(tuple((_term(block, g), _term(wrong, g)) for g in "fico"))
    return tuple(variants)


# Reading a weight the function was not given: in a fresh kernel it is not defined at all.
LSTM_GLOBALS = r"NameError: name '(W[fico]|b[fico]|Wy|by|parameters)' is not defined"
RNN_GLOBALS = r"NameError: name '(Wax|Waa|Wya|ba|by|parameters)' is not defined"
# The same words for every function (a forward pass has no cache; the GRU's catalog says them too).
GLOBALS_FEEDBACK = ("The weights come from a variable of your notebook instead of the arguments. Use "
                    "the parameters you were given (in the backward pass, those stored in the cache): "
                    "the function must only depend on its arguments.")

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
            "hidden state is an input of the network: feed it to the first cell.",
            behaviour=(('a_prev', 'first:zeros'),)),
    Mistake("rnn_state_not_carried", "rnn_forward",
            edits(("rnn_cell_forward(x[:, :, t], a_next, parameters)", "rnn_cell_forward(x[:, :, t], a0, parameters)")),
            "Every step is fed a0 instead of the state computed by the previous step, so the "
            "network has no memory. Keep the state in a variable and update it in the loop.",
            behaviour=(('a_prev', 'init'),)),
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
            "A gate is computed with another gate's weights or bias. Each gate (forget, input, "
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
            "starts at zeros; the hidden state starts at the a0 you were given.",
            behaviour=(('a_prev', 'first:zeros'),)),
    Mistake("lstm_c_aliasing", "lstm_forward",
            edits(("c_next = np.zeros((n_a, m))", "c_next = c[:, :, 0]")),
            "The running cell state is a view into c (such as c[:, :, 0]), so writing c[:, :, t] "
            "later changes values already stored in the caches. Start from a fresh array "
            "(np.zeros) and carry what the cell returns.",
            behaviour=(('caches', 'changed'),)),
    Mistake("lstm_return_order", "lstm_forward",
            edits(("return a, y, c, (caches, x)", "return a, c, y, (caches, x)")),
            "The values are returned in the wrong order. lstm_forward returns a, y, c, caches.",
            behaviour=(('y', 'from:c_next'), ('c', 'from:yt_pred'))),
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
            "arriving from above at this step, da[:, :, t], must be added to it.",
            behaviour=(('da_next', 'carry_only'),)),
    Mistake("rnn_stale_da_prev", "rnn_backward",
            edits(('da_prevt = grads["da_prev"]', "da_prevt = da_prevt")),
            "The gradient carried to the previous time step is never updated: after each step, "
            "keep the da_prev that rnn_cell_backward returned and feed it to the step before.",
            behaviour=(('da_next', 'upstream_only'),)),
    Mistake("rnn_grads_not_accumulated", "rnn_backward",
            edits(('dWax += grads["dWax"]', 'dWax = grads["dWax"]'), ('dWaa += grads["dWaa"]', 'dWaa = grads["dWaa"]'),
                  ('dba += grads["dba"]', 'dba = grads["dba"]')),
            "Only the gradient of a single time step is kept in {outputs}. The same weights are "
            "used at every step, so their gradient is the sum of every step's contribution: add "
            "each step's gradient to the running total (+=) instead of replacing it.",
            behaviour=(('sum', 'last'),)),
    Mistake("rnn_time_order", "rnn_backward",
            edits(("for t in reversed(range(T_x)):", "for t in range(T_x):")),
            "Time is walked forwards. Backpropagation through time starts at the last step, "
            "whose gradient is complete, and carries gradients back to earlier steps.",
            behaviour=(('order', 'reversed'),)),
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
            "flows into the candidate, input and forget gates."),
    Mistake("lstm_dc_missing_da_path", "lstm_cell_backward",
            edits(("dc = dc_next + ot * (1 - tanh_c ** 2) * da_next", "dc = dc_next")),
            "The cell-state gradient is dc_next alone. c_next also reaches the loss through "
            "this step's output, a_next = ot * tanh(c_next), so da_next contributes to it as "
            "well: the gates and dc_prev need the total of both paths."),
    Mistake("lstm_dc_prev_missing_ft", "lstm_cell_backward",
            edits(("dc_prev = dc * ft", "dc_prev = dc")),
            "dc_prev is the total cell-state gradient passed on unchanged. The old cell state "
            "enters the new one only after the forget gate has scaled it, so the gradient that "
            "flows back to it is scaled by ft too, element by element."),
    Mistake("lstm_dxt_wrong_slice", "lstm_cell_backward",
            _wrong_blocks(),
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
            GLOBALS_FEEDBACK, detector="reads_globals", raises=LSTM_GLOBALS,
            also=("lstm_cell_forward", "lstm_forward", "lstm_backward")),
    # --- lstm_backward
    Mistake("lstm_upstream_da_ignored", "lstm_backward",
            edits(("lstm_cell_backward(da[:, :, t] + da_prevt, dc_prevt", "lstm_cell_backward(da_prevt, dc_prevt")),
            "Each step is fed only the hidden-state gradient carried from the step after it. "
            "Add the gradient arriving from above at this step, da[:, :, t].",
            behaviour=(('da_next', 'carry_only'),)),
    Mistake("lstm_stale_da_prev", "lstm_backward",
            edits(('da_prevt = step["da_prev"]', "da_prevt = da_prevt")),
            "The hidden-state gradient carried to the previous time step is never updated: pass "
            "the da_prev returned by lstm_cell_backward on to the step before.",
            behaviour=(('da_next', 'upstream_only'),)),
    Mistake("lstm_stale_dc_prev", "lstm_backward",
            edits(('dc_prevt = step["dc_prev"]', "dc_prevt = dc_prevt")),
            "The cell-state gradient carried backwards through time is never updated: each "
            "step should pass the dc_prev returned by lstm_cell_backward on to the step before "
            "it. Without it, the long-term memory path of the LSTM gets no gradient.",
            behaviour=(('dc_next', 'init'),)),
    Mistake("lstm_grads_not_accumulated", "lstm_backward",
            edits(("grads[name] += step[name]", "grads[name] = step[name]")),
            "Only the gradient of a single time step is kept in {outputs}. The "
            "gates share their weights across time, so sum every step's gradient (+=) instead "
            "of keeping only the last one computed.",
            behaviour=(('sum', 'last'),)),
    Mistake("lstm_da0_wrong", "lstm_backward",
            each(("da0 = da_prevt", "da0 = da[:, :, 0]"), ("da0 = da_prevt", "da0 = np.zeros_like(da_prevt)"),
                 ("da0 = da_prevt", "da0 = da_prevt + da[:, :, 0]")),
            "da0 is not the gradient carried out of the first time step. After the loop, the "
            "da_prev returned by the step t = 0 is exactly the gradient of a0.",
            behaviour=(('final', 'upstream'), ('final', 'first_call'), ('final', 'plus_upstream'), ('final', 'zeros'))),

    # --- added for the patterns real learners write (the codes above keep their names)
    Mistake("rnn_uses_globals", "rnn_cell_forward",
            edits(("def rnn_cell_forward(xt, a_prev, parameters):", "def rnn_cell_forward(xt, a_prev, params):")),
            GLOBALS_FEEDBACK, detector="reads_globals", raises=RNN_GLOBALS,
            also=("rnn_forward", "rnn_cell_backward", "rnn_backward")),
    Mistake("rnn_output_sigmoid", "rnn_cell_forward",
            edits(("yt_pred = softmax(", "yt_pred = sigmoid(")),
            "The prediction goes through sigmoid. It should go through softmax, which turns each "
            "column into probabilities over the n_y classes that add up to 1."),
    Mistake("rnn_caches_layout", "rnn_forward",
            edits(("return a, y_pred, (caches, x)", "return a, y_pred, caches")),
            "caches is not laid out as the backward pass expects: a tuple (list of the caches of "
            "every step, x), built by appending each step's cache to a list.",
            behaviour=(("caches", "layout"),)),
    Mistake("lstm_output_missing_tanh", "lstm_cell_forward",
            edits(("a_next = ot * np.tanh(c_next)", "a_next = ot * c_next")),
            "a_next multiplies the output gate by the cell state itself. The cell state goes through "
            "tanh first: a_next = ot times tanh of the new cell state."),
    Mistake("lstm_output_sigmoid", "lstm_cell_forward",
            edits(("yt_pred = softmax(Wy", "yt_pred = sigmoid(Wy")),
            "The prediction goes through sigmoid. It should go through softmax, which turns each "
            "column into probabilities over the n_y classes that add up to 1."),
    Mistake("lstm_state_not_carried", "lstm_forward",
            edits(("lstm_cell_forward(x[:, :, t], a_next, c_next, parameters)",
                   "lstm_cell_forward(x[:, :, t], a0, np.zeros((n_a, m)), parameters)")),
            "Every step starts again from the initial states instead of the hidden and cell states "
            "the previous step returned, so the network has no memory. Keep both in variables and "
            "update them in the loop.",
            behaviour=(("a_prev", "init"), ("c_prev", "init"))),
    Mistake("lstm_c0_from_a0", "lstm_forward",
            edits(("c_next = np.zeros((n_a, m))", "c_next = a0")),
            "The first cell state is a0. Only the hidden state starts at a0; the cell state starts "
            "at zeros.",
            behaviour=(("c_prev", "first:a0"),)),
    Mistake("lstm_c_is_a", "lstm_forward",
            edits(("c[:, :, t] = c_next", "c[:, :, t] = a_next")),
            "c holds the hidden states. Store the cell state each step returned (c_next) in c.",
            behaviour=(("c", "from:a_next"),)),
    Mistake("lstm_caches_layout", "lstm_forward",
            edits(("return a, y, c, (caches, x)", "return a, y, c, caches")),
            "caches is not laid out as the backward pass expects: a tuple (list of the caches of "
            "every step, x), built by appending each step's cache to a list.",
            behaviour=(("caches", "layout"),)),
    Mistake("rnn_dba_averaged", "rnn_cell_backward",
            edits(("dba = np.sum(g, axis=1, keepdims=True)", "dba = np.mean(g, axis=1, keepdims=True)")),
            "dba is averaged over the batch. Like dWax and dWaa (whose products sum over the "
            "examples), the bias gradient is a sum over the batch."),
    Mistake("rnn_caches_not_indexed", "rnn_backward",
            edits(("rnn_cell_backward(da[:, :, t] + da_prevt, caches[t])", "rnn_cell_backward(da[:, :, t] + da_prevt, caches)")),
            "rnn_cell_backward is given the whole list of caches. Unpack caches into the list and x "
            "first, then give each step its own cache, caches[t].",
            behaviour=(("cache", "whole"),)),
    Mistake("rnn_grad_added_twice", "rnn_backward",
            edits(('dWax += grads["dWax"]', 'dWax += 2 * grads["dWax"]'), ('dWaa += grads["dWaa"]', 'dWaa += 2 * grads["dWaa"]'),
                  ('dba += grads["dba"]', 'dba += 2 * grads["dba"]')),
            "Each step's weight gradients are added twice to the running total (for example the total "
            "added to itself as well as the step's gradient). Add each step's gradient once.",
            behaviour=(("sum", "twice"), ("sum", "twice_last"), ("sum", "doubling"))),
    Mistake("lstm_gate_derivatives_missing", "lstm_cell_backward",
            edits(("dcct = dc * it * (1 - cct ** 2)", "dcct = dc * it"), ("dit = dc * cct * it * (1 - it)", "dit = dc * cct"),
                  ("dft = dc * c_prev * ft * (1 - ft)", "dft = dc * c_prev"), ("dot = da_next * tanh_c * ot * (1 - ot)", "dot = da_next * tanh_c")),
            "The gate gradients lack the derivative of their activation: each gate was computed as "
            "sigmoid (or tanh for the candidate) of a weighted sum, so its gradient is multiplied by "
            "g(1 - g) (or 1 - g²) before it reaches the weights."),
    Mistake("lstm_db_from_dW", "lstm_cell_backward",
            edits(*DB_FROM_DW) + each(*DB_FROM_DW),
            "The bias gradients are summed from the weight gradients. A bias adds to each example "
            "directly, so db is the gate's gradient summed over the batch (axis 1), not a sum of dW."),
    Mistake("lstm_dz_wrong_factor", "lstm_cell_backward",
            edits(*[(_term(b, g), "d" + _term(b, g)) for b in (":n_a", "n_a:") for g in "fico"]),
            "da_prev and dxt are built from the weight gradients. The gradient flowing back to the "
            "inputs of a gate goes through the gate's weights: the sum over gates of W.T times the "
            "gate's gradient."),
    Mistake("lstm_caches_not_indexed", "lstm_backward",
            edits(("lstm_cell_backward(da[:, :, t] + da_prevt, dc_prevt, caches[t])",
                   "lstm_cell_backward(da[:, :, t] + da_prevt, dc_prevt, caches)")),
            "lstm_cell_backward is given the whole list of caches. Unpack caches into the list and x "
            "first, then give each step its own cache, caches[t].",
            behaviour=(("cache", "whole"),)),
    Mistake("lstm_grad_added_twice", "lstm_backward",
            edits(("grads[name] += step[name]", "grads[name] += 2 * step[name]")),
            "Each step's weight gradients are added twice to the running total (for example the total "
            "added to itself as well as the step's gradient). Add each step's gradient once.",
            behaviour=(("sum", "twice"), ("sum", "twice_last"), ("sum", "doubling"))),
    Mistake("lstm_time_order", "lstm_backward",
            edits(("for t in reversed(range(T_x)):", "for t in range(T_x):")),
            "Time is walked forwards. Backpropagation through time starts at the last step and "
            "carries the gradients back towards the first.",
            behaviour=(("order", "reversed"),)),
)
