"""The GRU reference solution: the spec's equations, written as plainly as possible.

Every expected value (the notebook's, the public checks', the hidden tests') is computed
from here, and the catalog of mistakes is written as small edits of this source, so keep
each statement on one line and in this canonical form.
"""
import numpy as np

from assignments.shared.utils import sigmoid, softmax  # the notebook's own activations (its utils)


def gru_cell_forward(xt, a_prev, parameters):
    Wr, br, Wz, bz = parameters["Wr"], parameters["br"], parameters["Wz"], parameters["bz"]
    Wc, bc, Wy, by = parameters["Wc"], parameters["bc"], parameters["Wy"], parameters["by"]
    z = np.concatenate([a_prev, xt], axis=0)
    rt = sigmoid(Wr @ z + br)
    zt = sigmoid(Wz @ z + bz)
    zr = np.concatenate([rt * a_prev, xt], axis=0)
    cct = np.tanh(Wc @ zr + bc)
    a_next = zt * cct + (1 - zt) * a_prev
    yt_pred = softmax(Wy @ a_next + by)
    cache = (a_next, a_prev, xt, rt, zt, cct, parameters)
    return a_next, yt_pred, cache


def gru_forward(x, a0, parameters):
    n_x, m, T_x = x.shape
    n_y, n_a = parameters["Wy"].shape
    a = np.zeros((n_a, m, T_x))
    y_pred = np.zeros((n_y, m, T_x))
    caches = []
    a_next = a0
    for t in range(T_x):
        a_next, yt_pred, cache = gru_cell_forward(x[:, :, t], a_next, parameters)
        a[:, :, t] = a_next
        y_pred[:, :, t] = yt_pred
        caches.append(cache)
    return a, y_pred, (caches, x)


def gru_cell_backward(da_next, cache):
    a_next, a_prev, xt, rt, zt, cct, parameters = cache
    n_a = a_next.shape[0]
    Wr, Wz, Wc = parameters["Wr"], parameters["Wz"], parameters["Wc"]
    z = np.concatenate([a_prev, xt], axis=0)
    zr = np.concatenate([rt * a_prev, xt], axis=0)
    dcct = da_next * zt * (1 - cct ** 2)
    dzt = da_next * (cct - a_prev) * zt * (1 - zt)
    dra = Wc[:, :n_a].T @ dcct
    drt = dra * a_prev * rt * (1 - rt)
    dWr = drt @ z.T
    dWz = dzt @ z.T
    dWc = dcct @ zr.T
    dbr = np.sum(drt, axis=1, keepdims=True)
    dbz = np.sum(dzt, axis=1, keepdims=True)
    dbc = np.sum(dcct, axis=1, keepdims=True)
    da_prev = da_next * (1 - zt) + rt * dra + Wr[:, :n_a].T @ drt + Wz[:, :n_a].T @ dzt
    dxt = Wc[:, n_a:].T @ dcct + Wr[:, n_a:].T @ drt + Wz[:, n_a:].T @ dzt
    return {"dxt": dxt, "da_prev": da_prev, "dWr": dWr, "dbr": dbr,
            "dWz": dWz, "dbz": dbz, "dWc": dWc, "dbc": dbc}


def gru_backward(da, caches):
    caches, x = caches
    parameters = caches[0][6]
    n_a, m, T_x = da.shape
    n_x = x.shape[0]
    dx = np.zeros((n_x, m, T_x))
    grads = {}
    for name in ("Wr", "br", "Wz", "bz", "Wc", "bc"):
        grads["d" + name] = np.zeros_like(parameters[name])
    da_prevt = np.zeros((n_a, m))
    for t in reversed(range(T_x)):
        step = gru_cell_backward(da[:, :, t] + da_prevt, caches[t])
        dx[:, :, t] = step["dxt"]
        da_prevt = step["da_prev"]
        for name in grads:
            grads[name] += step[name]
    da0 = da_prevt
    return {"dx": dx, "da0": da0, **grads}
