# Ben: rnn_backward keeps only one time step's weight gradients (= instead of +=).
def rnn_backward(da, caches):
    step_caches, x = caches
    n_a, m, T_x = da.shape
    dx = np.zeros((x.shape[0], m, T_x))
    da_prev = np.zeros((n_a, m))
    for t in reversed(range(T_x)):
        g = rnn_cell_backward(da[:, :, t] + da_prev, step_caches[t])
        dx[:, :, t] = g["dxt"]
        da_prev = g["da_prev"]
        dWax = g["dWax"]
        dWaa = g["dWaa"]
        dba = g["dba"]
    return {"dx": dx, "da0": da_prev, "dWax": dWax, "dWaa": dWaa, "dba": dba}
