# Ben: gru_cell_forward follows another library's convention for the update gate (zt keeps
# the old state, 1 - zt takes the candidate). His gru_forward is right, and is graded with a
# correct cell, so it keeps its marks.
def gru_cell_forward(xt, a_prev, parameters):
    z = np.concatenate([a_prev, xt])
    r = sigmoid(parameters["Wr"] @ z + parameters["br"])
    u = sigmoid(parameters["Wz"] @ z + parameters["bz"])
    c = np.tanh(parameters["Wc"] @ np.concatenate([r * a_prev, xt]) + parameters["bc"])
    h = u * a_prev + (1 - u) * c
    y = softmax(parameters["Wy"] @ h + parameters["by"])
    return h, y, (h, a_prev, xt, r, u, c, parameters)
