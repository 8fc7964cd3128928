"""The eight graded functions as data: signature, outputs, points and what each calls.

The judge, the public checks, the notebook builder and the report all read this table,
so adding an output or changing points happens here and nowhere else.
"""
from ..grading.contract.assignment import Exercise, Family
from ..grading.contract.protocols import backward_loop, forward_loop

RNN_CACHE = ("a_next", "a_prev", "xt", "parameters")
LSTM_CACHE = ("a_next", "c_next", "a_prev", "c_prev", "ft", "it", "cct", "ot", "xt", "parameters")
RNN_PARAMS = ("Wax", "Waa", "Wya", "ba", "by")
LSTM_PARAMS = ("Wf", "bf", "Wi", "bi", "Wc", "bc", "Wo", "bo", "Wy", "by")
RNN = Family(parameters=RNN_PARAMS, cache=RNN_CACHE)
LSTM = Family(parameters=LSTM_PARAMS, cache=LSTM_CACHE)
LSTM_GRADS = ("dWf", "dbf", "dWi", "dbi", "dWc", "dbc", "dWo", "dbo")

EXERCISES: tuple[Exercise, ...] = (
    Exercise("rnn_cell_forward", 10, ("xt", "a_prev", "parameters"),
             ("a_next", "yt_pred", "cache"), False, {"a_next": 2, "yt_pred": 2}, **RNN),
    Exercise("rnn_forward", 10, ("x", "a0", "parameters"),
             ("a", "y_pred", "caches"), False, {"a": 2, "y_pred": 2},
             callees=("rnn_cell_forward",), **RNN),
    Exercise("lstm_cell_forward", 15, ("xt", "a_prev", "c_prev", "parameters"),
             ("a_next", "c_next", "yt_pred", "cache"), False,
             {"a_next": 2, "c_next": 2, "yt_pred": 2}, **LSTM),
    Exercise("lstm_forward", 10, ("x", "a0", "parameters"),
             ("a", "y", "c", "caches"), False, {"a": 2, "y": 2, "c": 2},
             callees=("lstm_cell_forward",), **LSTM),
    Exercise("rnn_cell_backward", 10, ("da_next", "cache"),
             ("dxt", "da_prev", "dWax", "dWaa", "dba"), True,
             forward="rnn_cell_forward", **RNN),
    Exercise("rnn_backward", 15, ("da", "caches"),
             ("dx", "da0", "dWax", "dWaa", "dba"), True,
             callees=("rnn_cell_backward",), forward="rnn_forward", **RNN),
    Exercise("lstm_cell_backward", 15, ("da_next", "dc_next", "cache"),
             ("dxt", "da_prev", "dc_prev") + LSTM_GRADS, True,
             forward="lstm_cell_forward", **LSTM),
    Exercise("lstm_backward", 15, ("da", "caches"),
             ("dx", "da0") + LSTM_GRADS, True,
             callees=("lstm_cell_backward",), forward="lstm_forward", **LSTM),
)

# How each sequence function must drive its cell (grading/contract/protocols.py).
PROTOCOLS = {
    "rnn_forward": forward_loop("rnn_cell_forward", {"a": ["stack", "a_next"], "y_pred": ["stack", "yt_pred"],
                                                        "caches": ["caches", "cache"]}),
    "lstm_forward": forward_loop("lstm_cell_forward", {"a": ["stack", "a_next"], "y": ["stack", "yt_pred"],
                                                     "c": ["stack", "c_next"], "caches": ["caches", "cache"]}, memory=True),
    "rnn_backward": backward_loop("rnn_cell_backward", ("dWax", "dWaa", "dba")),
    "lstm_backward": backward_loop("lstm_cell_backward", LSTM_GRADS, memory=True),
}

# Each quantity the reference computes, as the notebook writes its equation (in symbols, so
# every edition reads them alike): what the checks say a wrong line should compute.
_FORWARD_LOOP = {"a_next": "a_next(t) = cell(x[:, :, t], a_next(t−1), parameters)[0],  a_next(−1) = a0",
                 "a": "a[:, :, t] = a_next(t)", "yt_pred": "yt_pred(t) = cell(...)[1]"}
_BACKWARD_LOOP = {"da_prevt": "da_prevt = da_prev(t+1), zeros at t = T_x − 1; step t gets da[:, :, t] + da_prevt",
                  "dx": "dx[:, :, t] = dxt(t)", "da0": "da0 = da_prev(0)"}
_LSTM_GATES = {"z": "z = [a_prev; xt] (a_prev stacked on xt)", "ft": "ft = σ(Wf z + bf)", "it": "it = σ(Wi z + bi)",
               "cct": "cct = tanh(Wc z + bc)", "c_next": "c_next = ft ⊙ c_prev + it ⊙ cct", "ot": "ot = σ(Wo z + bo)"}
EQUATIONS = {
    "rnn_cell_forward": {"a_next": "a_next = tanh(Wax xt + Waa a_prev + ba)",
                         "yt_pred": "yt_pred = softmax(Wya a_next + by)"},
    "rnn_forward": {**_FORWARD_LOOP, "y_pred": "y_pred[:, :, t] = yt_pred(t)"},
    "lstm_cell_forward": {**_LSTM_GATES, "a_next": "a_next = ot ⊙ tanh(c_next)",
                          "yt_pred": "yt_pred = softmax(Wy a_next + by)"},
    "lstm_forward": {**_FORWARD_LOOP, "c_next": "c_next(t) = cell(...)[1],  c_next(−1) = zeros",
                     "y": "y[:, :, t] = yt_pred(t)", "c": "c[:, :, t] = c_next(t)", "yt": "yt(t) = cell(...)[2]"},
    "rnn_cell_backward": {"g": "δa = (1 − a_next²) ⊙ da_next", "dxt": "dxt = Waxᵀ δa", "da_prev": "da_prev = Waaᵀ δa",
                          "dWax": "dWax = δa xtᵀ", "dWaa": "dWaa = δa a_prevᵀ", "dba": "dba = Σ_batch δa  (n_a, 1)"},
    "rnn_backward": {**_BACKWARD_LOOP, **{g: f"{g} = Σ_t {g}(t)" for g in ("dWax", "dWaa", "dba")},
                     "grads": "grads(t) = rnn_cell_backward(da[:, :, t] + da_prevt, caches[t])"},
    "lstm_cell_backward": {
        "z": "z = [a_prev; xt]", "tanh_c": "tanh(c_next)",
        "dc": "dc = dc_next + ot ⊙ (1 − tanh²(c_next)) ⊙ da_next",
        "dot": "δo = dot = da_next ⊙ tanh(c_next) ⊙ ot (1 − ot)",
        "dcct": "δc̃ = dcct = dc ⊙ it ⊙ (1 − cct²)",
        "dit": "δi = dit = dc ⊙ cct ⊙ it (1 − it)",
        "dft": "δf = dft = dc ⊙ c_prev ⊙ ft (1 − ft)",
        **{f"dW{g}": f"dW{g} = d{g}t zᵀ".replace("dct", "dcct") for g in "fico"},
        **{f"db{g}": f"db{g} = Σ_batch d{g}t  (n_a, 1)".replace("dct", "dcct") for g in "fico"},
        "da_prev": "da_prev = Wf[:, :n_a]ᵀ dft + Wi[:, :n_a]ᵀ dit + Wc[:, :n_a]ᵀ dcct + Wo[:, :n_a]ᵀ dot",
        "dxt": "dxt = Wf[:, n_a:]ᵀ dft + Wi[:, n_a:]ᵀ dit + Wc[:, n_a:]ᵀ dcct + Wo[:, n_a:]ᵀ dot",
        "dc_prev": "dc_prev = dc ⊙ ft"},
    "lstm_backward": {**_BACKWARD_LOOP, "dc_prevt": "dc_prevt = dc_prev(t+1), zeros at t = T_x − 1",
                      "step": "step(t) = lstm_cell_backward(da[:, :, t] + da_prevt, dc_prevt, caches[t])",
                      **{g: f"{g} = Σ_t {g}(t)" for g in LSTM_GRADS}},
}
EXERCISES = tuple(Exercise(**{**e.__dict__, "protocol": PROTOCOLS.get(e.name, {}), "equations": EQUATIONS[e.name]})
                  for e in EXERCISES)
BY_NAME = {e.name: e for e in EXERCISES}

_LSTM_PARAMS = ("Wf", "bf", "Wi", "bi", "Wc", "bc", "Wo", "bo")
# For each backward pass: which forward input or parameter each returned gradient is for.
GRADIENTS = {
    "rnn_cell_backward": {"dxt": "xt", "da_prev": "a_prev", "dWax": "Wax", "dWaa": "Waa", "dba": "ba"},
    "rnn_backward": {"dx": "x", "da0": "a0", "dWax": "Wax", "dWaa": "Waa", "dba": "ba"},
    "lstm_cell_backward": {"dxt": "xt", "da_prev": "a_prev", "dc_prev": "c_prev", **{f"d{p}": p for p in _LSTM_PARAMS}},
    "lstm_backward": {"dx": "x", "da0": "a0", **{f"d{p}": p for p in _LSTM_PARAMS}},
}
