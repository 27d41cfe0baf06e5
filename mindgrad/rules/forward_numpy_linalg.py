"""Tangent rules for NumPy's products and ``np.linalg``.

Products are bilinear: the tangent from one factor is the same product with that factor
replaced by its tangent. Batched matrix rules use ``swapaxes(., -1, -2)`` for the transpose.
"""

import numpy as np

from mindgrad.rules import d, tangent, tangent_method
from mindgrad.rules.forward_numpy_reductions import as_dtype_of
from mindgrad.rules.forward_operators import TangentTuple, float_dtype
from mindgrad.rules.numpy_linalg import norm_grad, swap_last_axes
from mindgrad.runtime import is_zero

# ----- dot, inner, outer, vdot, vecdot -----------------------------------------------------


@tangent_method("dot")
@tangent(np.dot)
def _(ans, a, b, out=None):
    d[ans] = np.dot(d[a], b)
    d[ans] = np.dot(a, d[b])


@tangent(np.inner)
def _(out, a, b):
    d[out] = np.inner(d[a], b)
    d[out] = np.inner(a, d[b])


@tangent(np.outer)
def _(ans, a, b, out=None):
    d[ans] = np.outer(d[a], b)
    d[ans] = np.outer(a, d[b])


@tangent(np.multiply.outer)
def _(out, a, b):
    d[out] = np.multiply.outer(d[a], b)
    d[out] = np.multiply.outer(a, d[b])


@tangent(np.vdot)
def _(out, a, b):
    d[out] = np.vdot(d[a], b)
    d[out] = np.vdot(a, d[b])


if hasattr(np, "vecdot"):  # NumPy >= 2.0

    @tangent(np.linalg.vecdot, np.vecdot)
    def _(out, x1, x2, *, axis=-1):
        d[out] = np.vecdot(d[x1], x2, axis=axis)
        d[out] = np.vecdot(x1, d[x2], axis=axis)


# ----- tensordot and einsum ----------------------------------------------------------------


@tangent(np.tensordot)
def _(out, a, b, axes=2):
    d[out] = np.tensordot(d[a], b, axes)
    d[out] = np.tensordot(a, d[b], axes)


def einsum_tangent(ts, subscripts, operands, ans, optimize=False):
    """Tangent of ``np.einsum(subscripts, *operands)``: one einsum per operand with a tangent,
    that operand replaced by its tangent (product rule), added up."""
    total = 0
    for k, t in enumerate(ts):
        if is_zero(t):
            continue
        replaced = list(operands)
        replaced[k] = t
        total = total + np.einsum(subscripts, *replaced, optimize=optimize)
    if is_zero(total):
        total = np.zeros(np.shape(ans))
    return as_dtype_of(total, ans)


@tangent(np.einsum)
def _(ans, subscripts, *operands, out=None, dtype=None, order="K", casting="safe",
      optimize=False):
    d[ans] = einsum_tangent(d[operands], subscripts, operands, ans, optimize)


# ----- norms -------------------------------------------------------------------------------


def norm_axes(x, ord=None, axis=None):
    """The axes ``np.linalg.norm(x, ord, axis)`` reduces, as non-negative ints."""
    x = np.asarray(x)
    if axis is None:
        axes = tuple(range(x.ndim)) if ord is None or x.ndim == 1 else (0, 1)
    else:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(int(a) % max(x.ndim, 1) for a in axes)


def norm_tangent(t, x, ans, ord=None, axis=None, keepdims=False):
    """Tangent of ``np.linalg.norm``: ``t`` weighted by the norm's gradient, summed over the
    reduced axes (the gradient of each kind of norm is ``norm_grad``'s)."""
    slope = norm_grad(np.ones(np.shape(ans)), x, ans, ord, axis, keepdims)
    return as_dtype_of(np.sum(np.real(np.conj(slope) * t), axis=norm_axes(x, ord, axis),
                              keepdims=keepdims), ans)


@tangent(np.linalg.norm)
def _(out, x, ord=None, axis=None, keepdims=False):
    d[out] = norm_tangent(d[x], x, out, ord, axis, keepdims)


# ----- inverse, determinants, solving ------------------------------------------------------


@tangent(np.linalg.inv)
def _(out, a):
    d[out] = -np.matmul(out, np.matmul(d[a], out))


def det_tangent(t, a, ans):
    """Tangent of ``det(a)``: ``det(a) trace(inv(a) t)`` (for stacks of matrices too)."""
    return ans * np.sum(swap_last_axes(np.linalg.inv(a)) * t, axis=(-2, -1))


def logdet_tangent(t, a):
    """Tangent of ``log|det(a)|``: ``trace(inv(a) t)``."""
    return np.sum(swap_last_axes(np.linalg.inv(a)) * t, axis=(-2, -1))


@tangent(np.linalg.det)
def _(out, a):
    d[out] = det_tangent(d[a], a, out)


def slogdet_tangent(t, a, out):
    """Tangent of ``slogdet(a) = (sign, log|det|)``: the sign is piecewise constant (zeros)."""
    sign, logdet = out
    return TangentTuple((np.zeros(np.shape(sign), float_dtype(sign)),
                         as_dtype_of(logdet_tangent(t, a), logdet)))


@tangent(np.linalg.slogdet)
def _(out, a):
    d[out] = slogdet_tangent(d[a], a, out)


def solve_tangent_a(t, a, b, x):
    """Tangent of ``x = solve(a, b)`` from ``a``: ``-solve(a, t x)``."""
    if np.ndim(b) == 1:
        return -np.linalg.solve(a, np.matmul(t, np.expand_dims(x, -1)))[..., 0]
    return -np.linalg.solve(a, np.matmul(t, x))


@tangent(np.linalg.solve)
def _(out, a, b):
    d[out] = np.linalg.solve(a, d[b])
    d[out] = solve_tangent_a(d[a], a, b, out)
