"""Tangent rules for NumPy's products and ``np.linalg``.

Products are bilinear: the tangent from one factor is the same product with that factor
replaced by its tangent. Batched matrix rules use ``swapaxes(., -1, -2)`` for the transpose.
The decompositions (``svd``, ``eigh``) are for real matrices with distinct singular values
(eigenvalues), as in ``numpy_linalg.py``.
"""

import numpy as np

from mindgrad.rules import d, tangent, tangent_method
from mindgrad.rules.numpy_linalg import (
    einsum_list,
    full_matrices_message,
    inverse_gaps,
    norm_grad,
    reject_complex,
    swap_last_axes,
)
from mindgrad.rules.numpy_reductions import as_dtype_of
from mindgrad.runtime import is_zero
from mindgrad.runtime.tangents import TangentTuple, float_dtype

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
    for k in range(len(ts)):
        if is_zero(ts[k]):
            continue
        replaced = list(operands)
        replaced[k] = ts[k]
        total = total + einsum_list(subscripts, replaced, optimize)
    if is_zero(total):
        total = np.zeros(np.shape(ans))
    return as_dtype_of(total, ans)


@tangent(np.einsum)
def _(ans, subscripts, *operands, out=None, dtype=None, order="K", casting="safe",
      optimize=False):
    d[ans] = einsum_tangent(d[operands], subscripts, operands, ans, optimize)


@tangent(einsum_list)
def _(out, subscripts, operands, optimize=False):
    d[out] = einsum_tangent(d[operands], subscripts, operands, out, optimize)


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
    return as_dtype_of(np.sum(np.real(slope * t), axis=norm_axes(x, ord, axis),
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


# ----- decompositions: svd, eigh -----------------------------------------------------------


def triangle_tangent(t, uplo="L"):
    """The tangent of the symmetric matrix that ``eigh`` reads from ``a``'s ``uplo``
    triangle: ``tril(t) + tril(t, -1)^T``."""
    if uplo.upper() == "U":
        return np.triu(t) + swap_last_axes(np.triu(t, 1))
    return np.tril(t) + swap_last_axes(np.tril(t, -1))


def svd_tangent(t, a, out, full_matrices=True, compute_uv=True, hermitian=False):
    """Tangent of ``np.linalg.svd``. With ``a = U S V^T`` reduced, ``P = U^T t V`` and
    ``F_ij = 1 / (s_j^2 - s_i^2)``::

        ds = diag(P)
        dU = U (F o (P S + S P^T)) + (I - U U^T) t V S^-1
        dV = V (F o (S P + P^T S)) + (I - V V^T) t^T U S^-1

    ``full_matrices=True`` of a non-square matrix is refused: the extra columns of U (rows of
    V^T) are an arbitrary basis of a complement, with no tangent to give."""
    reject_complex(a, "np.linalg.svd")
    if hermitian:
        t = triangle_tangent(t, "L")
    m = np.shape(a)[-2]
    n = np.shape(a)[-1]
    k = min(m, n)
    if compute_uv:
        u = out[0]
        s = out[1]
        vt = out[2]
        if full_matrices and m != n:
            raise NotImplementedError(full_matrices_message(
                "columns of U" if m > n else "rows of V^T"))
    else:
        reduced = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
        u = reduced[0]
        s = reduced[1]
        vt = reduced[2]
    v = swap_last_axes(vt)
    p = swap_last_axes(u) @ t @ v
    ds = np.diagonal(p, 0, -2, -1)
    if not compute_uv:
        return as_dtype_of(ds, out)
    f = inverse_gaps(s * s)
    right = np.expand_dims(s, -2)  # X * right = X S
    left = np.expand_dims(s, -1)  # left * X = S X
    du = u @ (f * (p * right + left * swap_last_axes(p)))
    dv = v @ (f * (left * p + swap_last_axes(p) * right))
    if m > k:
        du = du + (t @ v - u @ p) / right
    if n > k:
        dv = dv + (swap_last_axes(t) @ u - v @ swap_last_axes(p)) / right
    return TangentTuple((as_dtype_of(du, u), as_dtype_of(ds, s),
                         as_dtype_of(swap_last_axes(dv), vt)))


@tangent(np.linalg.svd)
def _(out, a, full_matrices=True, compute_uv=True, hermitian=False):
    d[out] = svd_tangent(d[a], a, out, full_matrices, compute_uv, hermitian)


def eigh_tangent(t, a, out, UPLO="L", vectors=True):
    """Tangent of ``np.linalg.eigh(a, UPLO)`` (``vectors``; else of ``eigvalsh``). With
    ``a = V diag(w) V^T``, ``P = V^T ts V`` for the symmetric matrix's tangent ``ts`` and
    ``F_ij = 1 / (w_j - w_i)``: ``dw = diag(P)``, ``dV = V (F o P)``."""
    reject_complex(a, "np.linalg.eigh")
    if vectors:
        w = out[0]
        v = out[1]
    else:
        both = np.linalg.eigh(a, UPLO)
        w = both[0]
        v = both[1]
    p = swap_last_axes(v) @ triangle_tangent(t, UPLO) @ v
    dw = np.diagonal(p, 0, -2, -1)
    if not vectors:
        return as_dtype_of(dw, out)
    return TangentTuple((as_dtype_of(dw, w), as_dtype_of(v @ (inverse_gaps(w) * p), v)))


@tangent(np.linalg.eigh)
def _(out, a, UPLO="L"):
    d[out] = eigh_tangent(d[a], a, out, UPLO)


@tangent(np.linalg.eigvalsh)
def _(out, a, UPLO="L"):
    d[out] = eigh_tangent(d[a], a, out, UPLO, False)


if hasattr(np.linalg, "svdvals"):  # NumPy >= 2.0

    @tangent(np.linalg.svdvals)
    def _(out, x):
        d[out] = svd_tangent(d[x], x, out, False, False)
