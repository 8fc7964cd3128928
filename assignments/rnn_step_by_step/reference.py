"""The reference solution: the spec's equations, written as plainly as possible.

Every expected value (the notebook's, the public checks', the hidden tests') is computed
from here, and the catalog of mistakes is written as small edits of this source, so keep
each statement on one line and in this canonical form.
"""
import numpy as np

from assignments.shared.utils import sigmoid, softmax  # the notebook's own activations (its utils)


def rnn_cell_forward(xt, a_prev, parameters):
    Wax, Waa, Wya = parameters["Wax"], parameters["Waa"], parameters["Wya"]
    ba, by = parameters["ba"], parameters["by"]
    a_next = np.tanh(Wax @ xt + Waa @ a_prev + ba)
    yt_pred = softmax(Wya @ a_next + by)
    cache = (a_next, a_prev, xt, parameters)
    return a_next, yt_pred, cache


def rnn_forward(x, a0, parameters):
    n_x, m, T_x = x.shape
    n_y, n_a = parameters["Wya"].shape
    a = np.zeros((n_a, m, T_x))
    y_pred = np.zeros((n_y, m, T_x))
    caches = []
    a_next = a0
    for t in range(T_x):
        a_next, yt_pred, cache = rnn_cell_forward(x[:, :, t], a_next, parameters)
        a[:, :, t] = a_next
        y_pred[:, :, t] = yt_pred
        caches.append(cache)
    return a, y_pred, (caches, x)


def lstm_cell_forward(xt, a_prev, c_prev, parameters):
    Wf, bf, Wi, bi = parameters["Wf"], parameters["bf"], parameters["Wi"], parameters["bi"]
    Wc, bc, Wo, bo = parameters["Wc"], parameters["bc"], parameters["Wo"], parameters["bo"]
    Wy, by = parameters["Wy"], parameters["by"]
    z = np.concatenate([a_prev, xt], axis=0)
    ft = sigmoid(Wf @ z + bf)
    it = sigmoid(Wi @ z + bi)
    cct = np.tanh(Wc @ z + bc)
    c_next = ft * c_prev + it * cct
    ot = sigmoid(Wo @ z + bo)
    a_next = ot * np.tanh(c_next)
    yt_pred = softmax(Wy @ a_next + by)
    cache = (a_next, c_next, a_prev, c_prev, ft, it, cct, ot, xt, parameters)
    return a_next, c_next, yt_pred, cache


def lstm_forward(x, a0, parameters):
    n_x, m, T_x = x.shape
    n_y, n_a = parameters["Wy"].shape
    a = np.zeros((n_a, m, T_x))
    c = np.zeros((n_a, m, T_x))
    y = np.zeros((n_y, m, T_x))
    caches = []
    a_next = a0
    c_next = np.zeros((n_a, m))
    for t in range(T_x):
        a_next, c_next, yt, cache = lstm_cell_forward(x[:, :, t], a_next, c_next, parameters)
        a[:, :, t] = a_next
        c[:, :, t] = c_next
        y[:, :, t] = yt
        caches.append(cache)
    return a, y, c, (caches, x)


def rnn_cell_backward(da_next, cache):
    a_next, a_prev, xt, parameters = cache
    Wax, Waa = parameters["Wax"], parameters["Waa"]
    g = (1 - a_next ** 2) * da_next
    dxt = Wax.T @ g
    da_prev = Waa.T @ g
    dWax = g @ xt.T
    dWaa = g @ a_prev.T
    dba = np.sum(g, axis=1, keepdims=True)
    return {"dxt": dxt, "da_prev": da_prev, "dWax": dWax, "dWaa": dWaa, "dba": dba}


def rnn_backward(da, caches):
    caches, x = caches
    parameters = caches[0][3]
    n_a, m, T_x = da.shape
    n_x = x.shape[0]
    dx = np.zeros((n_x, m, T_x))
    dWax = np.zeros_like(parameters["Wax"])
    dWaa = np.zeros_like(parameters["Waa"])
    dba = np.zeros_like(parameters["ba"])
    da_prevt = np.zeros((n_a, m))
    for t in reversed(range(T_x)):
        grads = rnn_cell_backward(da[:, :, t] + da_prevt, caches[t])
        dx[:, :, t] = grads["dxt"]
        da_prevt = grads["da_prev"]
        dWax += grads["dWax"]
        dWaa += grads["dWaa"]
        dba += grads["dba"]
    da0 = da_prevt
    return {"dx": dx, "da0": da0, "dWax": dWax, "dWaa": dWaa, "dba": dba}


def lstm_cell_backward(da_next, dc_next, cache):
    a_next, c_next, a_prev, c_prev, ft, it, cct, ot, xt, parameters = cache
    n_a = a_next.shape[0]
    Wf, Wi, Wc, Wo = parameters["Wf"], parameters["Wi"], parameters["Wc"], parameters["Wo"]
    z = np.concatenate([a_prev, xt], axis=0)
    tanh_c = np.tanh(c_next)
    dc = dc_next + ot * (1 - tanh_c ** 2) * da_next
    dot = da_next * tanh_c * ot * (1 - ot)
    dcct = dc * it * (1 - cct ** 2)
    dit = dc * cct * it * (1 - it)
    dft = dc * c_prev * ft * (1 - ft)
    dWf = dft @ z.T
    dWi = dit @ z.T
    dWc = dcct @ z.T
    dWo = dot @ z.T
    dbf = np.sum(dft, axis=1, keepdims=True)
    dbi = np.sum(dit, axis=1, keepdims=True)
    dbc = np.sum(dcct, axis=1, keepdims=True)
    dbo = np.sum(dot, axis=1, keepdims=True)
    da_prev = Wf[:, :n_a].T @ dft + Wi[:, :n_a].T @ dit + Wc[:, :n_a].T @ dcct + Wo[:, :n_a].T @ dot
    dxt = Wf[:, n_a:].T @ dft + Wi[:, n_a:].T @ dit + Wc[:, n_a:].T @ dcct + Wo[:, n_a:].T @ dot
    dc_prev = dc * ft
    return {"dxt": dxt, "da_prev": da_prev, "dc_prev": dc_prev,
            "dWf": dWf, "dbf": dbf, "dWi": dWi, "dbi": dbi,
            "dWc": dWc, "dbc": dbc, "dWo": dWo, "dbo": dbo}


def lstm_backward(da, caches):
    caches, x = caches
    parameters = caches[0][9]
    n_a, m, T_x = da.shape
    n_x = x.shape[0]
    dx = np.zeros((n_x, m, T_x))
    grads = {}
    for name in ("Wf", "bf", "Wi", "bi", "Wc", "bc", "Wo", "bo"):
        grads["d" + name] = np.zeros_like(parameters[name])
    da_prevt = np.zeros((n_a, m))
    dc_prevt = np.zeros((n_a, m))
    for t in reversed(range(T_x)):
        step = lstm_cell_backward(da[:, :, t] + da_prevt, dc_prevt, caches[t])
        dx[:, :, t] = step["dxt"]
        da_prevt = step["da_prev"]
        dc_prevt = step["dc_prev"]
        for name in grads:
            grads[name] += step[name]
    da0 = da_prevt
    return {"dx": dx, "da0": da0, **grads}
