"""The eight graded functions as data: signature, outputs, points and what each calls.

The judge, the public checks, the notebook builder and the report all read this table,
so adding an output or changing points happens here and nowhere else.
"""
from ..grading.contract.assignment import Exercise
from ..grading.contract.protocols import backward_loop, forward_loop

RNN_CACHE = ("a_next", "a_prev", "xt", "parameters")
LSTM_CACHE = ("a_next", "c_next", "a_prev", "c_prev", "ft", "it", "cct", "ot", "xt", "parameters")
RNN_PARAMS = ("Wax", "Waa", "Wya", "ba", "by")
LSTM_PARAMS = ("Wf", "bf", "Wi", "bi", "Wc", "bc", "Wo", "bo", "Wy", "by")
RNN = {"parameters": RNN_PARAMS, "cache": RNN_CACHE}
LSTM = {"parameters": LSTM_PARAMS, "cache": LSTM_CACHE}
LSTM_GRADS = ("dWf", "dbf", "dWi", "dbi", "dWc", "dbc", "dWo", "dbo")

EXERCISES = (
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
EXERCISES = tuple(Exercise(**{**e.__dict__, "protocol": PROTOCOLS.get(e.name, {})}) for e in EXERCISES)
BY_NAME = {e.name: e for e in EXERCISES}

_LSTM_PARAMS = ("Wf", "bf", "Wi", "bi", "Wc", "bc", "Wo", "bo")
# For each backward pass: which forward input or parameter each returned gradient is for.
GRADIENTS = {
    "rnn_cell_backward": {"dxt": "xt", "da_prev": "a_prev", "dWax": "Wax", "dWaa": "Waa", "dba": "ba"},
    "rnn_backward": {"dx": "x", "da0": "a0", "dWax": "Wax", "dWaa": "Waa", "dba": "ba"},
    "lstm_cell_backward": {"dxt": "xt", "da_prev": "a_prev", "dc_prev": "c_prev", **{f"d{p}": p for p in _LSTM_PARAMS}},
    "lstm_backward": {"dx": "x", "da0": "a0", **{f"d{p}": p for p in _LSTM_PARAMS}},
}
