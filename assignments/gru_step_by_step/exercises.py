"""The GRU's four graded functions as data: signature, outputs, points and what each calls.

The judge, the public checks, the notebook builder and the report read this table, so
adding an output or changing points happens here and nowhere else.
"""
from ..grading.contract.assignment import Exercise
from ..grading.contract.protocols import backward_loop, forward_loop

GRU_CACHE = ("a_next", "a_prev", "xt", "rt", "zt", "cct", "parameters")
GRU_PARAMS = ("Wr", "br", "Wz", "bz", "Wc", "bc")
GRU_GRADS = tuple("d" + p for p in GRU_PARAMS)
GRU = {"parameters": GRU_PARAMS + ("Wy", "by"), "cache": GRU_CACHE}

EXERCISES = (
    Exercise("gru_cell_forward", 20, ("xt", "a_prev", "parameters"),
             ("a_next", "yt_pred", "cache"), False, {"a_next": 2, "yt_pred": 2}, **GRU),
    Exercise("gru_forward", 20, ("x", "a0", "parameters"),
             ("a", "y_pred", "caches"), False, {"a": 2, "y_pred": 2},
             callees=("gru_cell_forward",), **GRU),
    Exercise("gru_cell_backward", 35, ("da_next", "cache"),
             ("dxt", "da_prev") + GRU_GRADS, True,
             forward="gru_cell_forward", **GRU),
    Exercise("gru_backward", 25, ("da", "caches"),
             ("dx", "da0") + GRU_GRADS, True,
             callees=("gru_cell_backward",), forward="gru_forward", **GRU),
)

# How each sequence function must drive its cell (same vocabulary as the RNN's PROTOCOLS):
# one carried state, a_prev from a0, forwards; one carried gradient, da_prev from zeros
# plus da[:, :, t], backwards; the six parameter gradients summed over the calls.
PROTOCOLS = {
    "gru_forward": forward_loop("gru_cell_forward", {"a": ["stack", "a_next"], "y_pred": ["stack", "yt_pred"],
                                                        "caches": ["caches", "cache"]}),
    "gru_backward": backward_loop("gru_cell_backward", GRU_GRADS),
}
EXERCISES = tuple(Exercise(**{**e.__dict__, "protocol": PROTOCOLS.get(e.name, {})}) for e in EXERCISES)
BY_NAME = {e.name: e for e in EXERCISES}

# For each backward pass: which forward input or parameter each returned gradient is for.
GRADIENTS = {
    "gru_cell_backward": {"dxt": "xt", "da_prev": "a_prev", **{f"d{p}": p for p in GRU_PARAMS}},
    "gru_backward": {"dx": "x", "da0": "a0", **{f"d{p}": p for p in GRU_PARAMS}},
}
