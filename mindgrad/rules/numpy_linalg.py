"""Rules for ``np.linalg`` outside the decompositions, in both directions: norms, inverses,
determinants, solves, ``pinv`` and ``lstsq`` (full rank), ``cond``, ``tensorinv`` and
``tensorsolve``, and the names of the array API (NumPy >= 2.0: ``vecdot``, ``matrix_norm``, ...).

Batched matrix rules use ``swapaxes(., -1, -2)`` for the transpose so that stacks of matrices
work. Their tangents are written out; each adjoint template's docstring states what it assumes.

A gradient of a gradient differentiates the helpers below from their source, so they keep to
the Python that mindgrad differentiates: no starred calls, index assignment only on plain names,
and NumPy functions that have rules.
"""


import numpy as np

from mindgrad import runtime
from mindgrad.rules import (
    adjoint,
    d,
    linear,
    linear_in,
    nondifferentiable,
    tangent,
    transpose,
    transpose_of,
)
from mindgrad.rules.helpers import abs_slope, astype_grad, conj_if_complex, swap_last_axes
from mindgrad.rules.nondiff import moves_refused
from mindgrad.rules.numpy_decompositions import (
    conj_transpose,
    reject_complex,
    svd_grad,
    svd_tangent,
    triangle_grad,
    triangle_tangent,
)
from mindgrad.rules.numpy_products import outer_grad_a, tensordot_grad_a, tensordot_grad_b
from mindgrad.rules.numpy_shape import diagonal_grad, trace_grad
from mindgrad.rules.operators import matmul_grad_x, matmul_grad_y
from mindgrad.runtime import (
    is_any_zero,
    is_zero,
    takes_zero,
    unbroadcast,
    zero,
    zero_in,
    zero_in_zero_out,
)
from mindgrad.runtime.arrays import as_array, whole_matrices
from mindgrad.runtime.tangents import (
    TangentTuple,
    as_dtype_of,
    float_dtype,
    zero_for,
    zero_tangent_of,
)

# ----- norms -------------------------------------------------------------------------------


def sign(x):
    """``x / |x|`` (0 at 0), as NumPy 2's ``np.sign`` gives it for complex ``x`` too: NumPy 1.x's
    gives the sign of the real part."""
    return conj_if_complex(abs_slope(x))


def norm_vector_grad(x, norm, ord, axis):
    """d norm / d x of a vector norm along ``axis``; ``norm`` has that axis kept."""
    if ord is None or ord == 2:
        return x / np.where(norm == 0, 1, norm)
    if ord == 1:
        return sign(x)
    if ord == 0:
        return np.zeros_like(x)
    if np.isinf(ord):
        hits = np.abs(x) == norm
        return sign(x) * hits / np.maximum(np.sum(hits, axis=axis, keepdims=True), 1)
    safe = np.where(norm == 0, 1, norm)
    return sign(x) * (np.abs(x) / safe) ** (ord - 1)


def norm_matrix_grad(x, norm, ord, axes):
    """d norm / d x of a matrix norm over the two ``axes``; ``norm`` has them kept."""
    if ord is None or ord == "fro":
        return x / np.where(norm == 0, 1, norm)
    m = np.moveaxis(x, axes, (-2, -1))
    if ord in ("nuc", 2, -2):
        u, s, vt = np.linalg.svd(m, full_matrices=False)
        if ord == "nuc":
            return np.moveaxis(u @ vt, (-2, -1), axes)
        i = 0 if ord == 2 else s.shape[-1] - 1  # the largest or the smallest singular value
        return np.moveaxis(u[..., :, i:i + 1] @ vt[..., i:i + 1, :], (-2, -1), axes)
    if ord in (1, -1, np.inf, -np.inf):
        # ord 1 picks the column with the largest sum of |m| (inf: the row); -1, -inf the least
        summed, picked = (-2, -1) if ord in (1, -1) else (-1, -2)
        sums = np.sum(np.abs(m), axis=summed, keepdims=True)
        if ord > 0:
            best = np.max(sums, axis=picked, keepdims=True)
        else:
            best = np.min(sums, axis=picked, keepdims=True)
        hits = sums == best
        share = hits / np.sum(hits, axis=picked, keepdims=True)
        return np.moveaxis(sign(m) * share, (-2, -1), axes)
    raise NotImplementedError(f"np.linalg.norm(ord={ord!r}) of a matrix has no gradient rule")


def norm_axes(x, ord=None, axis=None):
    """The axes ``np.linalg.norm(x, ord, axis)`` reduces, as non-negative ints."""
    x = as_array(x)
    if axis is None:
        axes = tuple(range(x.ndim)) if ord is None or x.ndim == 1 else (0, 1)
    else:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(int(a) % max(x.ndim, 1) for a in axes)


nondifferentiable(norm_axes)


@takes_zero(any_number=True)
@zero_in_zero_out("g", keeps_values=True)
def norm_grad(g, x, ans, ord=None, axis=None, keepdims=False):
    """Gradient of ``np.linalg.norm(x, ord, axis, keepdims)``: vector norms (2, 1, inf, -inf,
    any p) along one axis or over the flattened array, matrix norms (fro, nuc, 2, -2, 1, -1,
    inf, -inf) over two."""
    if zero_in(g):
        return zero
    if is_any_zero(g):
        return zero_for(g, x)
    x = as_array(x)
    axes = norm_axes(x, ord, axis)
    if not keepdims:
        g, ans = np.expand_dims(g, axes), np.expand_dims(ans, axes)
    if len(axes) == 2 and not (ord is None and axis is None):
        slope = norm_matrix_grad(x, ans, ord, axes)
    elif ord is None and axis is None:
        slope = x / np.where(ans == 0, 1, ans)
    else:
        slope = norm_vector_grad(x, ans, ord, axes[0])
    return astype_grad(np.real(g) * conj_if_complex(slope), x)  # the README's complex convention


@zero_in_zero_out("t")
def norm_tangent(t, x, ans, ord=None, axis=None, keepdims=False):
    """Tangent of ``np.linalg.norm``: ``t`` weighted by the norm's gradient, summed over the
    reduced axes (the gradient of each kind of norm is ``norm_grad``'s)."""
    if zero_in(t):
        return zero
    slope = norm_grad(np.ones(np.shape(ans)), x, ans, ord, axis, keepdims)
    return as_dtype_of(np.sum(np.real(slope * t), axis=norm_axes(x, ord, axis),
                              keepdims=keepdims), ans)


# a p-norm moves with p, for which no rule gives the derivative: refused where it moves
NORM_ORDER = "the order ord of a norm (np.linalg.norm, vector_norm, matrix_norm)"


@transpose_of(norm_tangent)  # the tangent moves with x too: transposed in t alone
def _(out, t, x, ans, ord=None, axis=None, keepdims=False):
    d[t] = norm_grad(d[out], x, ans, ord, axis, keepdims)


# d[x] = norm_grad(d[out], x, out, ord, axis, keepdims); d[ord] refused
@transpose(np.linalg.norm)
@tangent(np.linalg.norm)
def _(out, x, ord=None, axis=None, keepdims=False):
    d[out] = norm_tangent(d[x], x, out, ord, axis, keepdims)
    d[out] = moves_refused(NORM_ORDER, d[ord])


@zero_in_zero_out("g", "t")
def norm_grad_tangent(g, x, ans, t, wrt, ord=None, axis=None, keepdims=False):
    """Tangent of ``norm_grad(g, x, ans, ...) = g slope(x, ans)`` from ``x`` (wrt 0) or ``ans``
    (1). The slope of the 2-norm/Frobenius norm is ``x / ans``, of a p-norm
    ``sign(x) (|x| / ans)^(p-1)``; those of the 1, inf, 0 norms and of the matrix 1/inf norms
    are piecewise constant; those of the spectral and nuclear norms come from the svd's tangent;
    0 for a zero ``g``, as ``norm_grad`` gives zeros there."""
    if zero_in(g, t):
        return zero
    if is_any_zero(g):
        return zero
    if np.iscomplexobj(x):
        raise runtime.GradientError("forward mode over the gradient of np.linalg.norm of a "
                                    "complex array is not supported; use reverse mode twice")
    x = as_array(x)
    axes = norm_axes(x, ord, axis)
    if not keepdims:
        g, ans = np.expand_dims(g, axes), np.expand_dims(ans, axes)
        if wrt == 1:
            t = np.expand_dims(t, axes)
    safe = np.where(ans == 0, 1, ans)
    matrix = len(axes) == 2 and not (ord is None and axis is None)
    if ord is None or ord == "fro" or (ord == 2 and not matrix):  # 2-norm, Frobenius norm
        p = 2
    elif matrix and ord in ("nuc", 2, -2):
        # the slope is U V^T (nuc) or u_i v_i^T (2, -2): its tangent comes from the svd's
        if wrt == 1:
            return 0  # the slope does not read ans
        m = np.moveaxis(x, axes, (-2, -1))
        tm = np.moveaxis(as_array(t), axes, (-2, -1))
        u, sv, vt = np.linalg.svd(m, full_matrices=False)
        tu, _, tvt = svd_tangent(tm, m, (u, sv, vt), False)
        if ord != "nuc":
            i = 0 if ord == 2 else sv.shape[-1] - 1
            u, vt, tu, tvt = (u[..., :, i:i + 1], vt[..., i:i + 1, :], tu[..., :, i:i + 1],
                              tvt[..., i:i + 1, :])
        change = np.moveaxis(tu @ vt + u @ tvt, (-2, -1), axes)
        return astype_grad(g * change, x)
    elif matrix or ord in (1, 0) or np.isinf(ord):
        return np.zeros(x.shape, np.result_type(x, g, 1.0))
    else:
        p = ord
    ratio = np.abs(x) / safe
    if wrt == 0:
        change = (p - 1) * ratio ** (p - 2) * t / safe
    else:
        change = (1 - p) * np.sign(x) * ratio ** (p - 1) * t / safe
    return astype_grad(g * change, x)


@tangent(norm_grad)  # linear in g; the slope moves with x and ans
def _(out, g, x, ans, ord=None, axis=None, keepdims=False):
    d[out] = norm_grad(d[g], x, ans, ord, axis, keepdims)
    d[out] = norm_grad_tangent(g, x, ans, d[x], 0, ord, axis, keepdims)
    d[out] = norm_grad_tangent(g, x, ans, d[ans], 1, ord, axis, keepdims)



# ----- inverse, determinants ---------------------------------------------------------------


@zero_in_zero_out("t")
def inv_tangent(t, inv):
    """Tangent of ``inv = np.linalg.inv(a)`` from ``a``: ``-inv t inv``."""
    if zero_in(t):
        return zero
    return -np.matmul(inv, np.matmul(t, inv))


# the tangent transposed in t (@transpose reads it): it moves with the inverse too
@transpose_of(inv_tangent)
def _(out, t, inv):
    d[t] = -np.matmul(swap_last_axes(inv), np.matmul(d[out], swap_last_axes(inv)))


@transpose(np.linalg.inv)  # d[a] = -out^T d[out] out^T
@tangent(np.linalg.inv)
def _(out, a):
    d[out] = inv_tangent(d[a], out)


def inverse_transpose_tangent(a, t):
    """Tangent of ``inv(a)^T`` in the direction ``t``: ``-(inv(a) t inv(a))^T``."""
    inv = np.linalg.inv(a)
    return -swap_last_axes(np.matmul(inv, np.matmul(t, inv)))


@zero_in_zero_out("g", "ans")
def det_grad(g, a, ans):
    """Gradient of ``det(a)``: ``g det(a) inv(a)^T`` (for stacks of matrices too)."""
    if zero_in(g, ans):
        return zero
    return np.expand_dims(g * ans, (-2, -1)) * swap_last_axes(np.linalg.inv(whole_matrices(a)))


@zero_in_zero_out("g", "t")
def det_grad_tangent(g, a, ans, t):
    """Tangent of ``det_grad(g, a, ans) = g ans inv(a)^T`` from ``a`` (``ans`` held)."""
    if zero_in(g, t):
        return zero
    return np.expand_dims(g * ans, (-2, -1)) * inverse_transpose_tangent(a, t)


@tangent(det_grad)  # linear in g and ans; inv(a) moves with a
def _(out, g, a, ans):
    d[out] = det_grad(d[g], a, ans)
    d[out] = det_grad(g, a, d[ans])
    d[out] = det_grad_tangent(g, a, ans, d[a])


@zero_in_zero_out("g")
def slogdet_grad(g, a):
    """Gradient of ``slogdet(a) = (sign, log|det|)``: the sign has none; ``log|det|`` gives
    ``g inv(a)^T``."""
    if zero_in(g):
        return zero
    g_logdet = g[1]
    if is_zero(g_logdet):
        return zero
    return np.expand_dims(g_logdet, (-2, -1)) * swap_last_axes(np.linalg.inv(whole_matrices(a)))


@zero_in_zero_out("g", "t")
def slogdet_grad_tangent(g, a, t):
    """Tangent of ``slogdet_grad(g, a) = g[1] inv(a)^T`` from ``a``."""
    if zero_in(g, t):
        return zero
    if is_zero(g[1]):
        return zero
    return np.expand_dims(g[1], (-2, -1)) * inverse_transpose_tangent(a, t)


@tangent(slogdet_grad)  # linear in g; inv(a) moves with a
def _(out, g, a):
    d[out] = slogdet_grad(d[g], a)
    d[out] = slogdet_grad_tangent(g, a, d[a])


@zero_in_zero_out("t")
def det_tangent(t, a, ans):
    """Tangent of ``det(a)``: ``det(a) trace(inv(a) t)`` (for stacks of matrices too)."""
    if zero_in(t):
        return zero
    return ans * np.sum(swap_last_axes(np.linalg.inv(whole_matrices(a))) * t, axis=(-2, -1))


# the tangent transposed in t (@transpose reads it): it moves with the matrix too
@transpose_of(det_tangent)
def _(out, t, a, ans):
    d[t] = det_grad(d[out], a, ans)


@transpose(np.linalg.det)
@tangent(np.linalg.det)
def _(out, a):
    d[out] = det_tangent(d[a], a, out)


def logdet_tangent(t, a):
    """Tangent of ``log|det(a)|``: ``trace(inv(a) t)``."""
    return np.sum(swap_last_axes(np.linalg.inv(whole_matrices(a))) * t, axis=(-2, -1))


@zero_in_zero_out("t")
def slogdet_tangent(t, a, out):
    """Tangent of ``slogdet(a) = (sign, log|det|)``: the sign is piecewise constant (zeros)."""
    if zero_in(t):
        return zero
    sign, logdet = out
    return TangentTuple((np.zeros(np.shape(sign), float_dtype(sign)),
                         as_dtype_of(logdet_tangent(t, a), logdet)))


# the tangent transposed in t (@transpose reads it): it moves with the matrix too
@transpose_of(slogdet_tangent)
def _(ans, t, a, out):
    d[t] = slogdet_grad(d[ans], a)


@transpose(np.linalg.slogdet)
@tangent(np.linalg.slogdet)
def _(out, a):
    d[out] = slogdet_tangent(d[a], a, out)



# ----- solving -----------------------------------------------------------------------------


@takes_zero(keeps_values=False, any_number=True)
@zero_in_zero_out("g")
def solve_adjoint(g, a, b):
    """``solve(a^T, g)``: the gradient of ``x = solve(a, b)`` for ``b`` before it is summed to
    b's shape. (``b`` is a vector only when it is 1-d, as in NumPy 2.)"""
    if is_any_zero(g):
        return zero
    if np.ndim(b) == 1:
        return np.linalg.solve(swap_last_axes(a), np.expand_dims(g, -1))[..., 0]
    return np.linalg.solve(swap_last_axes(a), g)


@zero_in_zero_out("g", "t")
def solve_adjoint_tangent(g, a, b, t):
    """Tangent of ``solve_adjoint(g, a, b) = solve(a^T, g)`` from ``a``:
    ``-solve(a^T, t^T solve(a^T, g))``; 0 for a zero ``g``."""
    if zero_in(g, t):
        return zero
    if is_any_zero(g):
        return zero
    r = solve_adjoint(g, a, b)
    if np.ndim(b) == 1:
        rhs = np.matmul(swap_last_axes(t), np.expand_dims(r, -1))[..., 0]
    else:
        rhs = np.matmul(swap_last_axes(t), r)
    return -solve_adjoint(rhs, a, b)


@tangent(solve_adjoint)  # linear in g; solve(a^T, .) moves with a
def _(out, g, a, b):
    d[out] = solve_adjoint(d[g], a, b)
    d[out] = solve_adjoint_tangent(g, a, b, d[a])


@linear_in("g_b", "x", any_number=True)
def solve_grad_a(g_b, a, b, x):
    """Gradient of ``x = solve(a, b)`` for ``a``, from ``g_b = solve_adjoint(...)``:
    ``-g_b x^T``."""
    if is_any_zero(g_b):
        return zero
    if np.ndim(b) == 1:
        return unbroadcast(-np.expand_dims(g_b, -1) * np.expand_dims(x, -2), a)
    return unbroadcast(-np.matmul(g_b, swap_last_axes(x)), a)


@zero_in_zero_out("t")
def solve_tangent_a(t, a, b, x):
    """Tangent of ``x = solve(a, b)`` from ``a``: ``-solve(a, t x)``."""
    if zero_in(t):
        return zero
    if np.ndim(b) == 1:
        return -np.linalg.solve(a, np.matmul(t, np.expand_dims(x, -1)))[..., 0]
    return -np.linalg.solve(a, np.matmul(t, x))


# the tangent transposed in its tangents (@transpose reads them): solve in b, whose transpose
# is the solve by a's transpose, and solve_tangent_a, from that same solve
@transpose_of(np.linalg.solve)
def _(out, a, b):
    d[b] = unbroadcast(solve_adjoint(d[out], a, b), b)


@transpose_of(solve_tangent_a)
def _(out, t, a, b, x):
    d[t] = solve_grad_a(solve_adjoint(d[out], a, b), a, b, x)


@transpose(np.linalg.solve)
@tangent(np.linalg.solve)
def _(out, a, b):
    d[out] = np.linalg.solve(a, d[b])
    d[out] = solve_tangent_a(d[a], a, b, out)



# ----- pinv, lstsq ---------------------------------------------------------------------------
# Of full rank (no singular value cut by rcond/rtol); pinv's rules, which also take matrices
# whose singular values it drops, are in numpy_pinv.py.


def full_rank_check(a, kept, name):
    """Refuse a rank-deficient matrix: ``kept`` of its ``min(m, n)`` singular values count."""
    if kept < min(np.shape(a)[-2:]):
        raise NotImplementedError(
            f"{name} of a rank-deficient matrix (rank {kept} of {min(np.shape(a)[-2:])}) has "
            "no derivative rule: the pseudo-inverse jumps where singular values are cut off")


def pinv_rank(p):
    """How many singular values ``pinv`` kept: the rank of the pseudo-inverse ``p`` (its
    singular values are the inverses of those kept)."""
    return int(np.min(np.linalg.matrix_rank(p)))


nondifferentiable(full_rank_check, pinv_rank)


def pinv_grad(g, a, p, hermitian=False):
    """Gradient of ``p = np.linalg.pinv(a)`` of full rank (Golub and Pereyra 1973): the
    transpose of ``dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P`` in the
    README's convention. With ``hermitian``, the lower triangle read as a Hermitian matrix
    gets it. The derivative of a rank-deficient matrix's: numpy_pinv.py."""
    full_rank_check(a, pinv_rank(p), "np.linalg.pinv")
    read = triangle_tangent(a, "L") if hermitian else a  # the matrix pinv inverted
    pt = swap_last_axes(p)
    ph = conj_transpose(p)
    gt = swap_last_axes(g)
    left = np.eye(np.shape(a)[-2]) - read @ p
    right = np.eye(np.shape(a)[-1]) - p @ read
    grad = -pt @ g @ pt + conj_if_complex(left @ gt @ p @ ph + ph @ p @ gt @ right)
    if hermitian:
        grad = triangle_grad(grad, "L")
    return astype_grad(grad, a)


def pinv_tangent(t, a, p, hermitian=False):
    """Tangent of ``p = np.linalg.pinv(a)`` of full rank (``pinv_grad``)."""
    full_rank_check(a, pinv_rank(p), "np.linalg.pinv")
    read = a
    if hermitian:
        t = triangle_tangent(t, "L")
        read = triangle_tangent(a, "L")
    ph = conj_transpose(p)
    th = conj_transpose(t)
    left = np.eye(np.shape(a)[-2]) - read @ p
    right = np.eye(np.shape(a)[-1]) - p @ read
    return as_dtype_of(-p @ t @ p + p @ ph @ th @ left + right @ th @ ph @ p, p)


def as_matrix(b):
    """``b`` as a matrix: a vector becomes one column."""
    return np.expand_dims(b, -1) if np.ndim(b) == 1 else b


def from_matrix(m, b):
    """``m`` back in ``b``'s shape: one column becomes a vector again."""
    return m[..., 0] if np.ndim(b) == 1 else m


@zero_in_zero_out("g")
def lstsq_grads(g, a, b, out):
    """Gradients of ``(x, residuals, rank, s) = np.linalg.lstsq(a, b)`` for ``a`` and ``b``, of
    full rank: ``x = pinv(a) b`` (``pinv_grad``); a residual ``|b - a x|^2`` (given for more rows
    than columns) is at its minimum in ``x``, so it moves with ``a`` and ``b`` alone:
    ``2 r`` for ``b``, ``-2 r x^T`` for ``a``; ``s`` are ``a``'s singular values
    (``svd_grad``)."""
    if zero_in(g):
        return zero
    reject_complex(a, "np.linalg.lstsq")
    full_rank_check(a, out[2], "np.linalg.lstsq")
    x = as_matrix(out[0])
    bm = as_matrix(b)
    g_a = zero
    g_b = zero
    if not is_zero(g[0]):
        p = np.linalg.pinv(a)
        g_x = as_matrix(g[0])
        g_a = pinv_grad(g_x @ swap_last_axes(bm), a, p)
        g_b = swap_last_axes(p) @ g_x
    if not is_zero(g[1]) and np.size(out[1]) > 0:
        scaled_residual = 2.0 * (bm - a @ x) * g[1]
        g_a = g_a - scaled_residual @ swap_last_axes(x)
        g_b = g_b + scaled_residual
    if not is_zero(g[3]):
        g_a = g_a + svd_grad(g[3], a, out[3], False, False)
    grad_a = zero if is_zero(g_a) else astype_grad(g_a, a)
    grad_b = zero if is_zero(g_b) else astype_grad(from_matrix(g_b, b), b)
    return grad_a, grad_b


@zero_in_zero_out("t")
def lstsq_tangent(t, a, b, out, wrt):
    """Tangent of ``np.linalg.lstsq(a, b)`` from ``a`` (``wrt`` 0) or ``b`` (1), of full rank:
    ``dx = dP b + P db``; a residual moves by ``2 r . (db - da x)``; ``s`` by ``svd_tangent``;
    the rank not at all."""
    if zero_in(t):
        return zero
    reject_complex(a, "np.linalg.lstsq")
    full_rank_check(a, out[2], "np.linalg.lstsq")
    x = as_matrix(out[0])
    bm = as_matrix(b)
    p = np.linalg.pinv(a)
    if wrt == 0:
        dx = pinv_tangent(t, a, p) @ bm
        moved = -(t @ x)
        ds = svd_tangent(t, a, out[3], False, False)
    else:
        dx = p @ as_matrix(t)
        moved = as_matrix(t)
        ds = np.zeros(np.shape(out[3]))
    residuals = np.zeros(np.shape(out[1]))
    if np.size(out[1]) > 0:
        residuals = 2.0 * np.sum((bm - a @ x) * moved, axis=-2)
    return TangentTuple((as_dtype_of(from_matrix(dx, b), out[0]), as_dtype_of(residuals, out[1]),
                         zero_tangent_of(out[2]), as_dtype_of(ds, out[3])))


# the tangents transposed in their tangents (@transpose reads them)
@transpose_of(lstsq_tangent)
def _(ans, t, a, b, out, wrt):
    d[t] = lstsq_grads(d[ans], a, b, out)[wrt]


@transpose(np.linalg.lstsq)
@tangent(np.linalg.lstsq)
def _(out, a, b, rcond=None):
    """Real ``a`` of full rank (else an error); the residuals at their minimum."""
    d[out] = lstsq_tangent(d[a], a, b, out, 0)
    d[out] = lstsq_tangent(d[b], a, b, out, 1)


nondifferentiable(np.linalg.matrix_rank)



# ----- cond ------------------------------------------------------------------------------------


def cond_by_singular_values(p):
    """Whether ``np.linalg.cond(x, p)`` is a ratio of singular values (p None, 2, -2)."""
    return p is None or p in (2, -2)


nondifferentiable(cond_by_singular_values)


@zero_in_zero_out("g")
def cond_grad(g, x, p=None):
    """Gradient of ``np.linalg.cond(x, p)`` (stacks too), of an invertible real matrix with
    distinct largest and smallest singular values where ``p`` is None, 2 or -2: those make it
    ``s_max / s_min`` (``s_min / s_max``), whose gradient goes through ``svd_grad``; the other
    ``p`` make it ``norm(x, p) norm(inv(x), p)`` (``norm_grad``, and the inverse's gradient)."""
    if zero_in(g):
        return zero
    reject_complex(x, "np.linalg.cond")
    if cond_by_singular_values(p):
        s = np.linalg.svd(x, compute_uv=False)
        first = s[..., :1]
        last = s[..., -1:]
        if p == -2:
            first, last = last, first
        ge = np.expand_dims(g, -1)
        picked = np.arange(np.shape(s)[-1]) == (0 if p != -2 else np.shape(s)[-1] - 1)
        other = np.arange(np.shape(s)[-1]) == (np.shape(s)[-1] - 1 if p != -2 else 0)
        g_s = ge / last * picked - ge * first / (last * last) * other
        return svd_grad(g_s, x, s, False, False)
    axes = (-2, -1)
    inverse = np.linalg.inv(x)
    norm_x = np.linalg.norm(x, p, axes)
    norm_inverse = np.linalg.norm(inverse, p, axes)
    g_inverse = norm_grad(g * norm_x, inverse, norm_inverse, p, axes)
    grad = norm_grad(g * norm_inverse, x, norm_x, p, axes) - \
        swap_last_axes(inverse) @ g_inverse @ swap_last_axes(inverse)
    return astype_grad(grad, x)


@zero_in_zero_out("t")
def cond_tangent(t, x, out, p=None):
    """Tangent of ``np.linalg.cond(x, p)`` (``cond_grad``)."""
    if zero_in(t):
        return zero
    reject_complex(x, "np.linalg.cond")
    if cond_by_singular_values(p):
        s = np.linalg.svd(x, compute_uv=False)
        ds = svd_tangent(t, x, s, False, False)
        first, last, d_first, d_last = s[..., 0], s[..., -1], ds[..., 0], ds[..., -1]
        if p == -2:
            first, last, d_first, d_last = last, first, d_last, d_first
        return as_dtype_of(d_first / last - first * d_last / (last * last), out)
    axes = (-2, -1)
    inverse = np.linalg.inv(x)
    norm_x = np.linalg.norm(x, p, axes)
    norm_inverse = np.linalg.norm(inverse, p, axes)
    d_norm_x = norm_tangent(t, x, norm_x, p, axes)
    d_norm_inverse = norm_tangent(-inverse @ t @ inverse, inverse, norm_inverse, p, axes)
    return as_dtype_of(d_norm_x * norm_inverse + norm_x * d_norm_inverse, out)


# the tangent transposed in t (@transpose reads it): it moves with the matrix too
@transpose_of(cond_tangent)
def _(ans, t, x, out, p=None):
    d[t] = cond_grad(d[ans], x, p)


@transpose(np.linalg.cond)
@tangent(np.linalg.cond)
def _(out, x, p=None):
    """Invertible real ``x``; for p None, 2, -2 its largest and smallest singular values
    distinct."""
    d[out] = cond_tangent(d[x], x, out, p)



# ----- the np.linalg names of the array API (NumPy >= 2.0) ------------------------------------


def vector_norm_axes(x, axis=None):
    """The axes ``np.linalg.vector_norm`` reduces, as a tuple of non-negative ints."""
    ndim = np.ndim(x)
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(int(a) % max(ndim, 1) for a in axes)


def vector_norm_layout(x, axis=None):
    """How ``np.linalg.vector_norm`` of ``x`` over ``axis`` is a norm along one last axis: the
    order to transpose ``x`` to (the kept axes, then the reduced ones), the kept lengths and
    the reduced lengths."""
    shape = np.shape(x)
    axes = vector_norm_axes(x, axis)
    kept = [i for i in range(len(shape)) if i not in axes]
    return kept + list(axes), [shape[i] for i in kept], [shape[i] for i in axes]


nondifferentiable(vector_norm_axes, vector_norm_layout)


@zero_in_zero_out("g", keeps_values=True)
def vector_norm_grad(g, x, ans, axis=None, keepdims=False, ord=2):
    """Gradient of ``np.linalg.vector_norm(x, axis, keepdims, ord)``, a vector norm over any
    number of axes at once: ``norm_grad`` along one axis holding their elements."""
    if zero_in(g):
        return zero
    layout = vector_norm_layout(x, axis)
    order = layout[0]
    kept = layout[1]
    flat = np.reshape(np.transpose(x, order), kept + [-1])
    grad = norm_grad(np.reshape(g, kept + [1]), flat, np.reshape(ans, kept + [1]), ord, -1, True)
    return np.transpose(np.reshape(grad, kept + layout[2]), np.argsort(order))


@zero_in_zero_out("t")
def vector_norm_tangent(t, x, ans, axis=None, keepdims=False, ord=2):
    """Tangent of ``np.linalg.vector_norm``: ``t`` weighted by the gradient's slope, summed."""
    if zero_in(t):
        return zero
    slope = vector_norm_grad(np.ones(np.shape(ans)), x, ans, axis, keepdims, ord)
    return as_dtype_of(np.sum(np.real(slope * t), axis=vector_norm_axes(x, axis),
                              keepdims=keepdims), ans)


if hasattr(np.linalg, "vector_norm"):  # NumPy >= 2.0

    @transpose_of(vector_norm_tangent)
    def _(out, t, x, ans, axis=None, keepdims=False, ord=2):
        d[t] = vector_norm_grad(d[out], x, ans, axis, keepdims, ord)

    @transpose(np.linalg.vector_norm)  # d[x] = vector_norm_grad(d[out], x, out, ...)
    @tangent(np.linalg.vector_norm)
    def _(out, x, *, axis=None, keepdims=False, ord=2):
        d[out] = vector_norm_tangent(d[x], x, out, axis, keepdims, ord)
        d[out] = moves_refused(NORM_ORDER, d[ord])

    @transpose(np.linalg.matrix_norm)  # d[x] = norm_grad(d[out], x, out, ord, (-2, -1), ...)
    @tangent(np.linalg.matrix_norm)
    def _(out, x, *, keepdims=False, ord="fro"):
        d[out] = norm_tangent(d[x], x, out, ord, (-2, -1), keepdims)
        d[out] = moves_refused(NORM_ORDER, d[ord])

    @linear(np.linalg.outer, wrt=("x1", "x2"))
    @adjoint(np.linalg.outer)
    def _(out, x1, x2):
        d[x1] = outer_grad_a(d[out], x1, x2)
        d[x2] = outer_grad_a(np.transpose(d[out]), x2, x1)

    @linear(np.linalg.tensordot, wrt=("x1", "x2"))
    @adjoint(np.linalg.tensordot)
    def _(out, x1, x2, *, axes=2):
        d[x1] = tensordot_grad_a(d[out], x1, x2, axes)
        d[x2] = tensordot_grad_b(d[out], x1, x2, axes)

    @linear(np.linalg.matmul, wrt=("x1", "x2"))
    @adjoint(np.linalg.matmul)
    def _(out, x1, x2):
        d[x1] = matmul_grad_x(d[out], x1, x2)
        d[x2] = matmul_grad_y(d[out], x1, x2)

    @linear(np.linalg.matrix_transpose)
    @adjoint(np.linalg.matrix_transpose)
    def _(out, x):
        d[x] = swap_last_axes(d[out])

    @linear(np.linalg.diagonal)
    @adjoint(np.linalg.diagonal)
    def _(out, x, *, offset=0):
        d[x] = diagonal_grad(d[out], x, offset, -2, -1)

    @linear(np.linalg.trace)
    @adjoint(np.linalg.trace)
    def _(out, x, *, offset=0, dtype=None):
        d[x] = trace_grad(d[out], x, offset, -2, -1)



# ----- tensorinv, tensorsolve: inv and solve of the arrays seen as matrices --------------------


@zero_in_zero_out("g")
def tensorinv_grad(g, a, out, ind=2):
    """Gradient of ``np.linalg.tensorinv(a, ind)``: that of ``inv`` for ``a`` seen as a matrix of
    ``prod(a.shape[:ind])`` rows, ``-B^T G B^T`` for its inverse ``B``."""
    if zero_in(g):
        return zero
    inverse = np.reshape(out, (-1, int(np.prod(np.shape(a)[:ind]))))
    g_matrix = np.reshape(g, np.shape(inverse))
    grad = -(swap_last_axes(inverse) @ g_matrix @ swap_last_axes(inverse))
    return astype_grad(np.reshape(grad, np.shape(a)), a)


@zero_in_zero_out("t")
def tensorinv_tangent(t, a, out, ind=2):
    """Tangent of ``np.linalg.tensorinv(a, ind)``: ``-B dA B`` with the arrays as matrices."""
    if zero_in(t):
        return zero
    inverse = np.reshape(out, (-1, int(np.prod(np.shape(a)[:ind]))))
    t_matrix = np.reshape(np.broadcast_to(t, np.shape(a)), (np.shape(inverse)[1], -1))
    return as_dtype_of(np.reshape(-(inverse @ t_matrix @ inverse), np.shape(out)), out)


# the tangent transposed in t (@transpose reads it): it moves with the matrix too
@transpose_of(tensorinv_tangent)
def _(ans, t, a, out, ind=2):
    d[t] = tensorinv_grad(d[ans], a, out, ind)


@transpose(np.linalg.tensorinv)
@tangent(np.linalg.tensorinv)
def _(out, a, ind=2):
    """A tensor that reshapes to an invertible square matrix."""
    d[out] = tensorinv_tangent(d[a], a, out, ind)


def tensorsolve_order(ndim, axes=None):
    """The order ``np.linalg.tensorsolve(a, b, axes)`` puts ``a``'s axes in (``axes`` last)."""
    order = list(range(ndim))
    if axes is not None:
        for k in axes:
            order.remove(k)
            order.append(k)
    return order


nondifferentiable(tensorsolve_order)


def tensorsolve_matrix(a, b, axes=None):
    """``a`` of ``np.linalg.tensorsolve(a, b, axes)`` as the square matrix it solves with."""
    moved = np.transpose(a, tensorsolve_order(np.ndim(a), axes))
    return np.reshape(moved, (int(np.prod(np.shape(b))), -1))


@zero_in_zero_out("g")
def tensorsolve_grads(g, a, b, out, axes=None):
    """Gradients of ``x = np.linalg.tensorsolve(a, b, axes)``: those of ``solve`` for the
    matrix ``A`` and the vectors: ``b`` gets ``A^-T g``, ``A`` gets ``-(A^-T g) x^T``, put back
    in ``a``'s axis order."""
    if zero_in(g):
        return zero
    matrix = tensorsolve_matrix(a, b, axes)
    g_b = np.linalg.solve(swap_last_axes(matrix), np.ravel(g))
    g_matrix = -np.multiply.outer(g_b, np.ravel(out))
    order = tensorsolve_order(np.ndim(a), axes)
    moved_shape = [np.shape(a)[k] for k in order]
    g_a = np.transpose(np.reshape(g_matrix, moved_shape), np.argsort(order))
    return (astype_grad(g_a, a), astype_grad(np.reshape(g_b, np.shape(b)), b))


@zero_in_zero_out("t_a", "t_b")
def tensorsolve_tangent(t_a, t_b, a, b, out, axes=None):
    """Tangent of ``x = np.linalg.tensorsolve(a, b, axes)``: ``A^-1 (db - dA x)``."""
    if zero_in(t_a) and zero_in(t_b):
        return zero
    matrix = tensorsolve_matrix(a, b, axes)
    change = 0
    if not is_zero(t_b):
        change = np.ravel(np.broadcast_to(t_b, np.shape(b)))
    if not is_zero(t_a):
        t_matrix = tensorsolve_matrix(np.broadcast_to(t_a, np.shape(a)), b, axes)
        change = change - t_matrix @ np.ravel(out)
    return as_dtype_of(np.reshape(np.linalg.solve(matrix, change), np.shape(out)), out)


# the tangents transposed in their tangents (@transpose reads them)
@transpose_of(tensorsolve_tangent)
def _(ans, t_a, t_b, a, b, out, axes=None):
    d[t_a] = tensorsolve_grads(d[ans], a, b, out, axes)[0]
    d[t_b] = tensorsolve_grads(d[ans], a, b, out, axes)[1]


@transpose(np.linalg.tensorsolve)
@tangent(np.linalg.tensorsolve)
def _(out, a, b, axes=None):
    """``a`` reshapes to an invertible square matrix."""
    d[out] = tensorsolve_tangent(d[a], 0, a, b, out, axes)
    d[out] = tensorsolve_tangent(0, d[b], a, b, out, axes)
