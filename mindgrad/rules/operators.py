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
from mindgrad.runtime import is_any_zero, unbroadcast, zero
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


# ----- the sums of matmul gradients a backward loop adds up (compiler/finish/gather.py) ---------


def matmul_grad_x_sum(terms, x):
    """``sum(matmul_grad_x(g, x, y) for g, y in terms)``, the zero for none: the gradient of
    ``x`` in ``x @ y_t`` over the steps of a loop, ``x`` the same at every step. Where ``x`` is
    a NumPy matrix and the ``g`` and ``y`` are NumPy vectors, or matrices, of one shape each,
    one product of the steps stacked (``G.T @ Y``: the sum of the outer products), not one
    product and one addition a step; otherwise the sum step by step."""
    def stacked(gs, ys, vectors):
        if vectors:
            return _rows(gs).T @ _rows(ys)
        return np.concatenate(gs, axis=1) @ np.concatenate(ys, axis=1).T
    return _sum_of_steps(terms, x, lambda g, y: matmul_grad_x(g, x, y), stacked)


def matmul_grad_y_sum(terms, y):
    """``sum(matmul_grad_y(g, x, y) for g, x in terms)``: as ``matmul_grad_x_sum``, for the
    second operand (``X.T @ G`` of the steps stacked)."""
    def stacked(gs, xs, vectors):
        if vectors:
            return _rows(xs).T @ _rows(gs)
        return np.concatenate(xs, axis=0).T @ np.concatenate(gs, axis=0)
    return _sum_of_steps(terms, y, lambda g, x: matmul_grad_y(g, x, y), stacked)


def _rows(vectors):
    """The vectors of one shape as the rows of a matrix (``np.stack``'s, in a third of its
    time)."""
    return np.concatenate(vectors).reshape(len(vectors), -1)


def _sum_of_steps(terms, fixed, step, stacked):
    """The sum of ``step(g, other)`` over the pairs of ``terms`` whose ``g`` is not zero: one
    ``stacked(gs, others, vectors)`` where they stack (``_stackable``), else step by step."""
    if terms and _stackable(fixed, terms):  # arrays of one axis or two: none is the zero
        return stacked([g for g, _ in terms], [o for _, o in terms], terms[0][0].ndim == 1)
    live = [(g, other) for g, other in terms if not is_any_zero(g)]
    if not live:
        return zero
    if _stackable(fixed, live):
        return stacked([g for g, _ in live], [o for _, o in live], live[0][0].ndim == 1)
    total = zero
    for g, other in live:
        part = step(g, other)
        total = part if total is zero else total + part
    return total


def _stackable(fixed, live) -> bool:
    """Whether the steps' products fit one: ``fixed`` a NumPy float matrix, every ``g`` and
    other operand NumPy arrays of one rank (1 or 2) and one shape each, of ``fixed``'s dtype."""
    if fixed.__class__ is not np.ndarray or fixed.ndim != 2 or fixed.dtype.kind != "f":
        return False
    if {g.__class__ for g, _ in live} != _ARRAY or {o.__class__ for _, o in live} != _ARRAY:
        return False
    gs, os = {(g.shape, g.dtype) for g, _ in live}, {(o.shape, o.dtype) for _, o in live}
    if len(gs) != 1 or len(os) != 1:
        return False
    ((g_shape, g_dtype),), ((o_shape, o_dtype),) = gs, os
    return len(g_shape) in (1, 2) and len(o_shape) == len(g_shape) and \
        g_dtype == fixed.dtype and o_dtype == fixed.dtype


_ARRAY = {np.ndarray}

