"""Rules for Python's arithmetic operators, shared with the NumPy ufuncs that implement them."""

import operator

import numpy as np

from mindgrad.rules import adjoint, d, nondifferentiable
from mindgrad.runtime import is_zero, takes_zero, unbroadcast

# ----- addition and subtraction ------------------------------------------------------------


@adjoint(operator.add, np.add)
def _(out, x, y):
    d[x] = unbroadcast(d[out], x)
    d[y] = unbroadcast(d[out], y)


@adjoint(operator.sub, np.subtract)
def _(out, x, y):
    d[x] = unbroadcast(d[out], x)
    d[y] = unbroadcast(-d[out], y)


@adjoint(operator.neg, np.negative)
def _(out, x):
    d[x] = -d[out]


@adjoint(operator.pos, np.positive)
def _(out, x):
    d[x] = d[out]


# ----- products and quotients --------------------------------------------------------------


@adjoint(operator.mul, np.multiply)
def _(out, x, y):
    d[x] = unbroadcast(d[out] * y, x)
    d[y] = unbroadcast(d[out] * x, y)


@adjoint(operator.truediv, np.divide, np.true_divide)
def _(out, x, y):
    d[x] = unbroadcast(d[out] / y, x)
    d[y] = unbroadcast(-d[out] * out / y, y)


@adjoint(operator.pow, np.power)
def _(out, x, y):
    d[x] = unbroadcast(d[out] * y * x ** (y - 1), x)
    d[y] = unbroadcast(d[out] * out * np.log(np.where(x == 0, 1, x)), y)


@adjoint(operator.mod, np.mod, np.remainder)
def _(out, x, y):
    d[x] = unbroadcast(d[out], x)
    d[y] = unbroadcast(-d[out] * np.floor_divide(x, y), y)


nondifferentiable(operator.floordiv, np.floor_divide)

# ----- matrix product ----------------------------------------------------------------------


@takes_zero
def matmul_grad_x(g, x, y):
    """Gradient of ``x @ y`` with respect to ``x``, for any ranks NumPy's matmul accepts."""
    if is_zero(g) or is_zero(y):  # symbolic zeros reach here under forward over reverse
        return 0
    if getattr(x, "ndim", 0) == 2:  # no broadcasting to undo
        ndim = getattr(y, "ndim", 0)
        if ndim == 2:
            return g @ y.T
        if ndim == 1:
            return np.outer(g, y)
    if np.ndim(y) == 1:
        g = np.multiply.outer(g, y) if np.ndim(x) > 1 else g * y
        return unbroadcast(g, x)
    if np.ndim(x) == 1:
        return unbroadcast(np.matmul(y, np.expand_dims(g, -1))[..., 0], x)
    return unbroadcast(np.matmul(g, np.swapaxes(y, -1, -2)), x)


@takes_zero
def matmul_grad_y(g, x, y):
    """Gradient of ``x @ y`` with respect to ``y``."""
    if is_zero(g) or is_zero(x):
        return 0
    if getattr(x, "ndim", 0) == 2 and getattr(y, "ndim", 0) in (1, 2):
        return x.T @ g
    if np.ndim(x) == 1:  # x is a row (1, n): g's last axis is y's column axis
        g = np.expand_dims(x, -1) * np.expand_dims(g, -2) if np.ndim(y) > 1 else g * x
        return unbroadcast(g, y)
    if np.ndim(y) == 1:
        return unbroadcast(np.matmul(np.swapaxes(x, -1, -2), np.expand_dims(g, -1))[..., 0], y)
    return unbroadcast(np.matmul(np.swapaxes(x, -1, -2), g), y)


@adjoint(operator.matmul, np.matmul)
def _(out, x, y):
    d[x] = matmul_grad_x(d[out], x, y)
    d[y] = matmul_grad_y(d[out], x, y)
