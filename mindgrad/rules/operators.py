"""Rules for Python's arithmetic operators and the NumPy ufuncs that implement them, in both
directions: the adjoint (reverse mode) and the tangent (forward mode) of each.

Most are elementwise: one slope per argument gives both directions (``@elementwise``), the
gradients summed back to each argument's shape and the tangents broadcast to the output's.
``x + y`` also concatenates sequences, so its tangent is written by hand. The matrix product is
bilinear: its tangent applies it to each factor's tangent (``@linear``), and so do those of its
gradient helpers (``@linear_in``).
"""

import operator

import numpy as np

from mindgrad.rules import (
    adjoint,
    d,
    elementwise,
    linear,
    linear_in,
    nondifferentiable,
    slope,
    tangent,
)
from mindgrad.rules.helpers import log_base, power
from mindgrad.runtime import is_any_zero, unbroadcast
from mindgrad.runtime.tangents import add_tangent, zero_for

# ----- addition and subtraction ------------------------------------------------------------


@adjoint(operator.add, np.add)
def _(out, x, y):
    d[x] = unbroadcast(d[out], x)
    d[y] = unbroadcast(d[out], y)


@tangent(operator.add, np.add)  # sequences concatenate, and so do their tangents
def _(out, x, y):
    d[out] = add_tangent(d[x], out, (), y)
    d[out] = add_tangent(d[y], out, x, ())


@elementwise(operator.sub, np.subtract)
def _(out, x, y):
    slope[x] = 1
    slope[y] = -1


@elementwise(operator.neg, np.negative)
def _(out, x):
    slope[x] = -1


@elementwise(operator.pos, np.positive)
def _(out, x):
    slope[x] = 1


# ----- products and quotients --------------------------------------------------------------


@elementwise(operator.mul, np.multiply)
def _(out, x, y):
    slope[x] = y
    slope[y] = x


@elementwise(operator.truediv, np.divide, np.true_divide, singular=True)
def _(out, x, y):
    slope[x] = 1.0 / y
    slope[y] = -out / y


@elementwise(operator.pow, np.power, singular=True)
def _(out, x, y):
    slope[x] = y * power(x, y - 1 + (y == 0))  # 0 for y = 0, also at x = 0 (not 0 * inf)
    slope[y] = out * log_base(x)


@elementwise(operator.mod, np.mod, np.remainder)
def _(out, x, y):
    slope[x] = 1
    slope[y] = -np.floor_divide(x, y)


nondifferentiable(operator.floordiv, np.floor_divide)
# bitwise operators (&, |, ^, ~, <<, >>): integers and booleans in, a constant out
nondifferentiable(operator.and_, operator.or_, operator.xor, operator.invert, operator.lshift,
                  operator.rshift)

# ----- matrix product ----------------------------------------------------------------------


@linear_in("g", "y", keeps_values=True, any_number=True)
def matmul_grad_x(g, x, y):
    """Gradient of ``x @ y`` with respect to ``x``, for any ranks NumPy's matmul accepts."""
    if is_any_zero(g):
        return zero_for(g, x)
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


@linear_in("g", "x", keeps_values=True, any_number=True)
def matmul_grad_y(g, x, y):
    """Gradient of ``x @ y`` with respect to ``y``."""
    if is_any_zero(g):
        return zero_for(g, y)
    if getattr(x, "ndim", 0) == 2 and getattr(y, "ndim", 0) in (1, 2):
        return x.T @ g
    if getattr(y, "ndim", 0) == 2 and getattr(x, "ndim", 0) > 2 and \
            getattr(g, "shape", None) == x.shape[:-1] + y.shape[1:]:
        # a stack of rows times one matrix: one product over all the rows, not a product per
        # matrix of the stack summed after
        return unbroadcast(x.reshape(-1, x.shape[-1]).T @ g.reshape(-1, g.shape[-1]), y)
    if np.ndim(x) == 1:  # x is a row (1, n): g's last axis is y's column axis
        g = np.expand_dims(x, -1) * np.expand_dims(g, -2) if np.ndim(y) > 1 else g * x
        return unbroadcast(g, y)
    if np.ndim(y) == 1:
        return unbroadcast(np.matmul(np.swapaxes(x, -1, -2), np.expand_dims(g, -1))[..., 0], y)
    return unbroadcast(np.matmul(np.swapaxes(x, -1, -2), g), y)


@linear(operator.matmul, np.matmul, wrt=("x", "y"), via=np.matmul)
@adjoint(operator.matmul, np.matmul)
def _(out, x, y):
    d[x] = matmul_grad_x(d[out], x, y)
    d[y] = matmul_grad_y(d[out], x, y)
