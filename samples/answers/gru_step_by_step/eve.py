# Eve: gru_backward keeps only one time step's weight and bias gradients (= instead of +=).
def gru_backward(da, caches):
    step_caches, x = caches
    n_a, m, T_x = da.shape
    dx = np.zeros((x.shape[0], m, T_x))
    da_prev = np.zeros((n_a, m))
    for t in reversed(range(T_x)):
        g = gru_cell_backward(da[:, :, t] + da_prev, step_caches[t])
        dx[:, :, t] = g["dxt"]
        da_prev = g["da_prev"]
        dWr, dbr, dWz, dbz, dWc, dbc = g["dWr"], g["dbr"], g["dWz"], g["dbz"], g["dWc"], g["dbc"]
    return {"dx": dx, "da0": da_prev, "dWr": dWr, "dbr": dbr, "dWz": dWz, "dbz": dbz,
            "dWc": dWc, "dbc": dbc}
