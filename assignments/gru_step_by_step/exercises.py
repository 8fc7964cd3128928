"""The GRU's four graded functions as data: signature, outputs, points and what each calls.

The judge, the public checks, the notebook builder and the report read this table, so
adding an output or changing points happens here and nowhere else.
"""
from ..grading.contract.assignment import Exercise, Family
from ..grading.contract.protocols import backward_loop, forward_loop

GRU_CACHE = ("a_next", "a_prev", "xt", "rt", "zt", "cct", "parameters")
GRU_PARAMS = ("Wr", "br", "Wz", "bz", "Wc", "bc")
GRU_GRADS = tuple("d" + p for p in GRU_PARAMS)
GRU = Family(parameters=GRU_PARAMS + ("Wy", "by"), cache=GRU_CACHE)

EXERCISES: tuple[Exercise, ...] = (
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

# Each quantity the reference computes, as the notebook writes its equation (in symbols, so
# every edition reads them alike): what the checks say a wrong line should compute.
EQUATIONS = {
    "gru_cell_forward": {"z": "v = [a_prev; xt] (a_prev stacked on xt)", "rt": "rt = σ(Wr v + br)",
                         "zt": "zt = σ(Wz v + bz)", "zr": "[rt ⊙ a_prev; xt]",
                         "cct": "cct = tanh(Wc [rt ⊙ a_prev; xt] + bc)",
                         "a_next": "a_next = zt ⊙ cct + (1 − zt) ⊙ a_prev",
                         "yt_pred": "yt_pred = softmax(Wy a_next + by)"},
    "gru_forward": {"a_next": "a_next(t) = gru_cell_forward(x[:, :, t], a_next(t−1), parameters)[0],  a_next(−1) = a0",
                    "a": "a[:, :, t] = a_next(t)", "y_pred": "y_pred[:, :, t] = yt_pred(t)"},
    "gru_cell_backward": {
        "z": "v = [a_prev; xt]", "zr": "[rt ⊙ a_prev; xt]",
        "dcct": "dcct = da_next ⊙ zt ⊙ (1 − cct²)", "dzt": "dzt = da_next ⊙ (cct − a_prev) ⊙ zt (1 − zt)",
        "dra": "d(rt ⊙ a_prev) = Wc[:, :n_a]ᵀ dcct", "drt": "drt = d(rt ⊙ a_prev) ⊙ a_prev ⊙ rt (1 − rt)",
        "dWr": "dWr = drt vᵀ", "dWz": "dWz = dzt vᵀ", "dWc": "dWc = dcct [rt ⊙ a_prev; xt]ᵀ",
        "dbr": "dbr = Σ_batch drt  (n_a, 1)", "dbz": "dbz = Σ_batch dzt  (n_a, 1)", "dbc": "dbc = Σ_batch dcct  (n_a, 1)",
        "da_prev": "da_prev = da_next ⊙ (1 − zt) + rt ⊙ d(rt ⊙ a_prev) + Wr[:, :n_a]ᵀ drt + Wz[:, :n_a]ᵀ dzt",
        "dxt": "dxt = Wc[:, n_a:]ᵀ dcct + Wr[:, n_a:]ᵀ drt + Wz[:, n_a:]ᵀ dzt"},
    "gru_backward": {"da_prevt": "da_prevt = da_prev(t+1), zeros at t = T_x − 1; step t gets da[:, :, t] + da_prevt",
                     "dx": "dx[:, :, t] = dxt(t)", "da0": "da0 = da_prev(0)",
                     "step": "step(t) = gru_cell_backward(da[:, :, t] + da_prevt, caches[t])",
                     **{g: f"{g} = Σ_t {g}(t)" for g in GRU_GRADS}},
}
EXERCISES = tuple(Exercise(**{**e.__dict__, "protocol": PROTOCOLS.get(e.name, {}), "equations": EQUATIONS[e.name]})
                  for e in EXERCISES)
BY_NAME = {e.name: e for e in EXERCISES}

# For each backward pass: which forward input or parameter each returned gradient is for.
GRADIENTS = {
    "gru_cell_backward": {"dxt": "xt", "da_prev": "a_prev", **{f"d{p}": p for p in GRU_PARAMS}},
    "gru_backward": {"dx": "x", "da0": "a0", **{f"d{p}": p for p in GRU_PARAMS}},
}
