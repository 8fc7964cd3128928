# Chloe: gru_cell_backward forgets the direct path from a_prev to a_next (the share 1 - zt
# that is copied): da_prev has only the paths through the candidate and the gates.
def gru_cell_backward(da_next, cache):
    a_next, a_prev, xt, rt, zt, cct, parameters = cache
    n_a = a_prev.shape[0]
    Wr, Wz, Wc = parameters["Wr"], parameters["Wz"], parameters["Wc"]
    dc = da_next * zt * (1 - cct ** 2)
    du = da_next * (cct - a_prev) * zt * (1 - zt)
    dr = (Wc[:, :n_a].T @ dc) * a_prev * rt * (1 - rt)
    da_prev = rt * (Wc[:, :n_a].T @ dc) + Wr[:, :n_a].T @ dr + Wz[:, :n_a].T @ du
    dxt = Wc[:, n_a:].T @ dc + Wr[:, n_a:].T @ dr + Wz[:, n_a:].T @ du
    s = np.concatenate([a_prev, xt])
    sr = np.concatenate([rt * a_prev, xt])
    return {"dxt": dxt, "da_prev": da_prev,
            "dWr": dr @ s.T, "dbr": np.sum(dr, axis=1, keepdims=True),
            "dWz": du @ s.T, "dbz": np.sum(du, axis=1, keepdims=True),
            "dWc": dc @ sr.T, "dbc": np.sum(dc, axis=1, keepdims=True)}
