"""Helpers for the GRU notebook: activations and a numerical gradient check."""
import numpy as np


def sigmoid(x):
    """The logistic function 1 / (1 + e^-x), applied element by element."""
    return 1 / (1 + np.exp(-x))


def softmax(x):
    """Softmax of each column of x (one column per example)."""
    e = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e / np.sum(e, axis=0, keepdims=True)


def numerical_gradient(f, x, dout, h=1e-5):
    """Estimate d(sum(f(x) * dout)) / dx by central differences.

    ``f`` takes no arguments and reads ``x``, which is nudged in place one entry at a
    time (and always restored). ``dout`` is the gradient flowing into f's output, so the
    result is what your backward pass should return for ``x``.
    """
    grad = np.zeros_like(x, dtype=float)
    for ix in np.ndindex(*x.shape):
        old = x[ix]
        x[ix] = old + h
        plus = np.sum(np.asarray(f()) * dout)
        x[ix] = old - h
        minus = np.sum(np.asarray(f()) * dout)
        x[ix] = old
        grad[ix] = (plus - minus) / (2 * h)
    return grad


def relative_error(a, b):
    """How far apart two gradients are, relative to their size: |a - b| / (|a| + |b|),
    with |.| the Euclidean norm of the whole array (0 when both are zero).

    The norm is taken over all entries at once, so a few entries that are nearly zero
    (where a ratio entry by entry would blow up) do not raise a false alarm. With
    ``numerical_gradient``'s default step, a correct gradient gives 1e-8 or less on the
    notebook's small examples; above 1e-5 something is wrong.

    The arrays must have the same shape: numpy would otherwise broadcast them (a (5,)
    array against a (5, 1) one makes a (5, 5) difference) and compare the wrong entries.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"relative_error 比较的是形状相同的数组，但收到的是 {a.shape} 和 {b.shape}：请改正形状不对的那个（例如，偏置的梯度应该是 (n, 1)）")
    scale = np.linalg.norm(a) + np.linalg.norm(b)
    return float(np.linalg.norm(a - b) / scale) if scale > 0 else 0.0
