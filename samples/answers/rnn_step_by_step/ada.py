# Ada: a correct solution in her own style (np.dot, vstack, one stacked matmul for the gates).
import numpy as np
from rnn_utils import sigmoid, softmax


def rnn_cell_forward(xt, a_prev, parameters):
    a_next = np.tanh(np.dot(parameters["Waa"], a_prev) + np.dot(parameters["Wax"], xt) + parameters["ba"])
    yt_pred = softmax(np.dot(parameters["Wya"], a_next) + parameters["by"])
    return a_next, yt_pred, (a_next, a_prev, xt, parameters)


def rnn_forward(x, a0, parameters):
    n_x, m, T_x = x.shape
    n_y = parameters["Wya"].shape[0]
    a = np.zeros((a0.shape[0], m, T_x))
    y_pred = np.zeros((n_y, m, T_x))
    caches = []
    state = a0
    for t in range(T_x):
        state, y_t, cache = rnn_cell_forward(x[:, :, t], state, parameters)
        a[:, :, t], y_pred[:, :, t] = state, y_t
        caches.append(cache)
    return a, y_pred, (caches, x)


def lstm_cell_forward(xt, a_prev, c_prev, parameters):
    n_a = a_prev.shape[0]
    W = np.vstack([parameters["Wf"], parameters["Wi"], parameters["Wc"], parameters["Wo"]])
    b = np.vstack([parameters["bf"], parameters["bi"], parameters["bc"], parameters["bo"]])
    pre = np.dot(W, np.vstack([a_prev, xt])) + b
    ft = sigmoid(pre[:n_a])
    it = sigmoid(pre[n_a:2 * n_a])
    cct = np.tanh(pre[2 * n_a:3 * n_a])
    ot = sigmoid(pre[3 * n_a:])
    c_next = ft * c_prev + it * cct
    a_next = ot * np.tanh(c_next)
    yt_pred = softmax(np.dot(parameters["Wy"], a_next) + parameters["by"])
    return a_next, c_next, yt_pred, (a_next, c_next, a_prev, c_prev, ft, it, cct, ot, xt, parameters)


def lstm_forward(x, a0, parameters):
    n_x, m, T_x = x.shape
    n_a = a0.shape[0]
    n_y = parameters["Wy"].shape[0]
    a, c, y = np.zeros((n_a, m, T_x)), np.zeros((n_a, m, T_x)), np.zeros((n_y, m, T_x))
    caches = []
    h, cell = a0, np.zeros_like(a0)
    for t in range(T_x):
        h, cell, y_t, cache = lstm_cell_forward(x[:, :, t], h, cell, parameters)
        a[:, :, t], c[:, :, t], y[:, :, t] = h, cell, y_t
        caches.append(cache)
    return a, y, c, (caches, x)


def rnn_cell_backward(da_next, cache):
    a_next, a_prev, xt, parameters = cache
    dtanh = (1 - np.square(a_next)) * da_next
    return {"dxt": np.dot(parameters["Wax"].T, dtanh), "da_prev": np.dot(parameters["Waa"].T, dtanh),
            "dWax": np.dot(dtanh, xt.T), "dWaa": np.dot(dtanh, a_prev.T),
            "dba": dtanh.sum(axis=1, keepdims=True)}


def rnn_backward(da, caches):
    step_caches, x = caches
    n_a, m, T_x = da.shape
    parameters = step_caches[0][3]
    dx = np.zeros((x.shape[0], m, T_x))
    dWax, dWaa, dba = np.zeros_like(parameters["Wax"]), np.zeros_like(parameters["Waa"]), np.zeros((n_a, 1))
    carried = np.zeros((n_a, m))
    for t in range(T_x - 1, -1, -1):
        g = rnn_cell_backward(da[:, :, t] + carried, step_caches[t])
        dx[:, :, t] = g["dxt"]
        carried = g["da_prev"]
        dWax += g["dWax"]
        dWaa += g["dWaa"]
        dba += g["dba"]
    return {"dx": dx, "da0": carried, "dWax": dWax, "dWaa": dWaa, "dba": dba}


def lstm_cell_backward(da_next, dc_next, cache):
    a_next, c_next, a_prev, c_prev, ft, it, cct, ot, xt, parameters = cache
    n_a = a_next.shape[0]
    z = np.vstack([a_prev, xt])
    tc = np.tanh(c_next)
    dc = dc_next + da_next * ot * (1 - tc ** 2)
    d_o = da_next * tc * ot * (1 - ot)
    d_c = dc * it * (1 - cct ** 2)
    d_i = dc * cct * it * (1 - it)
    d_f = dc * c_prev * ft * (1 - ft)
    grads = {}
    dz = np.zeros_like(z)
    for gate, d in (("f", d_f), ("i", d_i), ("c", d_c), ("o", d_o)):
        grads["dW" + gate] = np.dot(d, z.T)
        grads["db" + gate] = np.sum(d, axis=1, keepdims=True)
        dz += np.dot(parameters["W" + gate].T, d)
    grads["da_prev"], grads["dxt"], grads["dc_prev"] = dz[:n_a], dz[n_a:], dc * ft
    return grads


def lstm_backward(da, caches):
    step_caches, x = caches
    n_a, m, T_x = da.shape
    parameters = step_caches[0][9]
    dx = np.zeros((x.shape[0], m, T_x))
    totals = {k: np.zeros_like(parameters[k[1:]]) for k in ("dWf", "dbf", "dWi", "dbi", "dWc", "dbc", "dWo", "dbo")}
    da_carry, dc_carry = np.zeros((n_a, m)), np.zeros((n_a, m))
    for t in reversed(range(T_x)):
        g = lstm_cell_backward(da[:, :, t] + da_carry, dc_carry, step_caches[t])
        dx[:, :, t] = g["dxt"]
        da_carry, dc_carry = g["da_prev"], g["dc_prev"]
        for k in totals:
            totals[k] += g[k]
    return {"dx": dx, "da0": da_carry, **totals}
