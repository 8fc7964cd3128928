# Eve: rnn_cell_forward predicts from a_prev instead of a_next. Her rnn_forward is right,
# and is graded with a correct cell, so it keeps its marks.
def rnn_cell_forward(xt, a_prev, parameters):
    a_next = np.tanh(parameters["Wax"] @ xt + parameters["Waa"] @ a_prev + parameters["ba"])
    yt_pred = softmax(parameters["Wya"] @ a_prev + parameters["by"])
    return a_next, yt_pred, (a_next, a_prev, xt, parameters)
