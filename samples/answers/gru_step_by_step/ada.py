# Ada: a correct GRU in her own style (np.dot, both gates from one stacked product, the
# gradient of each stacked input computed whole and then split into its two parts).
import numpy as np
from gru_utils import sigmoid, softmax


def gru_cell_forward(xt, a_prev, parameters):
    n_a = a_prev.shape[0]
    W_gates = np.vstack([parameters["Wr"], parameters["Wz"]])
    b_gates = np.vstack([parameters["br"], parameters["bz"]])
    gates = sigmoid(np.dot(W_gates, np.vstack([a_prev, xt])) + b_gates)
    rt, zt = gates[:n_a], gates[n_a:]
    cct = np.tanh(np.dot(parameters["Wc"], np.vstack([rt * a_prev, xt])) + parameters["bc"])
    a_next = a_prev + zt * (cct - a_prev)
    yt_pred = softmax(np.dot(parameters["Wy"], a_next) + parameters["by"])
    return a_next, yt_pred, (a_next, a_prev, xt, rt, zt, cct, parameters)


def gru_forward(x, a0, parameters):
    n_x, m, T_x = x.shape
    n_a, n_y = a0.shape[0], parameters["Wy"].shape[0]
    a, y_pred = np.zeros((n_a, m, T_x)), np.zeros((n_y, m, T_x))
    caches = []
    h = a0
    for t in range(T_x):
        h, y_t, cache = gru_cell_forward(x[:, :, t], h, parameters)
        a[:, :, t], y_pred[:, :, t] = h, y_t
        caches.append(cache)
    return a, y_pred, (caches, x)


def gru_cell_backward(da_next, cache):
    a_next, a_prev, xt, rt, zt, cct, p = cache
    n_a = a_prev.shape[0]
    d_cand = da_next * zt * (1 - np.square(cct))
    d_upd = da_next * (cct - a_prev) * zt * (1 - zt)
    d_cand_in = np.dot(p["Wc"].T, d_cand)                                 # of [rt * a_prev; xt]
    d_rst = d_cand_in[:n_a] * a_prev * rt * (1 - rt)
    d_gates_in = np.dot(p["Wr"].T, d_rst) + np.dot(p["Wz"].T, d_upd)    # of [a_prev; xt]
    gates_in, cand_in = np.vstack([a_prev, xt]), np.vstack([rt * a_prev, xt])
    return {"dxt": d_cand_in[n_a:] + d_gates_in[n_a:],
            "da_prev": da_next * (1 - zt) + rt * d_cand_in[:n_a] + d_gates_in[:n_a],
            "dWr": np.dot(d_rst, gates_in.T), "dbr": d_rst.sum(axis=1, keepdims=True),
            "dWz": np.dot(d_upd, gates_in.T), "dbz": d_upd.sum(axis=1, keepdims=True),
            "dWc": np.dot(d_cand, cand_in.T), "dbc": d_cand.sum(axis=1, keepdims=True)}


def gru_backward(da, caches):
    step_caches, x = caches
    n_a, m, T_x = da.shape
    p = step_caches[0][6]
    dx = np.zeros((x.shape[0], m, T_x))
    totals = {k: np.zeros_like(p[k[1:]]) for k in ("dWr", "dbr", "dWz", "dbz", "dWc", "dbc")}
    carried = np.zeros((n_a, m))
    for t in range(T_x - 1, -1, -1):
        g = gru_cell_backward(da[:, :, t] + carried, step_caches[t])
        dx[:, :, t] = g["dxt"]
        carried = g["da_prev"]
        for k in totals:
            totals[k] = totals[k] + g[k]
    return {"dx": dx, "da0": carried, **totals}
