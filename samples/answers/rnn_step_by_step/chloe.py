# Chloe: lstm_backward never carries dc_prev and overwrites the gradients at every step.
def lstm_backward(da, caches):
    step_caches, x = caches
    n_a, m, T_x = da.shape
    dx = np.zeros((x.shape[0], m, T_x))
    da_prevt = np.zeros((n_a, m))
    dc_prevt = np.zeros((n_a, m))
    for t in reversed(range(T_x)):
        g = lstm_cell_backward(da[:, :, t] + da_prevt, dc_prevt, step_caches[t])
        dx[:, :, t] = g["dxt"]
        da_prevt = g["da_prev"]
        dWf, dbf, dWi, dbi = g["dWf"], g["dbf"], g["dWi"], g["dbi"]
        dWc, dbc, dWo, dbo = g["dWc"], g["dbc"], g["dWo"], g["dbo"]
    return {"dx": dx, "da0": da_prevt, "dWf": dWf, "dbf": dbf, "dWi": dWi, "dbi": dbi,
            "dWc": dWc, "dbc": dbc, "dWo": dWo, "dbo": dbo}
