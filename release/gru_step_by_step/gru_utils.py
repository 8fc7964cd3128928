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
    """max |a - b| / (|a| + |b|): about 1e-7 or less means two gradients agree."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b))))
