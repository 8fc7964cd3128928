# Dev: correct everywhere but noisy (prints and warnings on stderr), except a transposed
# rnn_cell_forward, and lstm_backward not attempted.
import sys
import warnings


def rnn_cell_forward(xt, a_prev, parameters):
    print("debug: computing a step")
    a_next = np.tanh(xt.T @ parameters["Wax"].T + a_prev.T @ parameters["Waa"].T + parameters["ba"].T)
    yt_pred = softmax(parameters["Wya"] @ a_next.T + parameters["by"])
    return a_next, yt_pred, (a_next, a_prev, xt, parameters)


def rnn_cell_backward(da_next, cache):
    warnings.warn("this is a noisy but correct function")
    print("debug: dtanh", file=sys.stderr)
    a_next, a_prev, xt, parameters = cache
    dtanh = (1 - a_next ** 2) * da_next
    return {"dxt": parameters["Wax"].T @ dtanh, "da_prev": parameters["Waa"].T @ dtanh,
            "dWax": dtanh @ xt.T, "dWaa": dtanh @ a_prev.T, "dba": np.sum(dtanh, 1, keepdims=True)}


def lstm_backward(da, caches):
    # YOUR CODE HERE
    raise NotImplementedError()
