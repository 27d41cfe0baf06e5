"""Rules for ``scipy.linalg``, in both directions: ``det``, ``inv``, ``solve``,
``solve_triangular``, ``solve_banded``, ``solve_sylvester``, ``expm``, ``logm``, ``sqrtm``,
``cholesky``, ``cho_factor``, ``cho_solve``, ``lu_factor``, ``lu_solve`` and ``eigh``, for real
matrices (stacks of them too, as SciPy batches, but for the LU rules: one square matrix);
``logm`` and ``eigh`` for complex ones too.

SciPy is optional: this module is imported by the registry once the program has imported
``scipy.linalg`` (``DEFERRED`` in ``mindgrad/rules/registry.py``).

``det``, ``inv`` and ``solve`` are the same maps as NumPy's and share their helpers
(``numpy_linalg.py``, ``numpy_decompositions.py``). ``inv`` and ``solve`` are differentiated as
general matrices: told a
structure (``assume_a="pos"``, ``"sym"``, ...) SciPy reads one triangle only, a different
function of the entries, and ``transposed=True`` solves with the transpose; these raise
``NotImplementedError`` rather than give the general gradient. ``solve_triangular`` reads the
triangle ``lower`` names (its diagonal too unless ``unit_diagonal``): the other entries get no
gradient. ``expm``'s derivative in a direction ``e`` is the upper right block of
``expm([[a, e], [0, a]])``, itself made of functions with rules, so higher orders follow.
``sqrtm``'s derivative solves a Sylvester equation (``x dx + dx x = da``) with
``solve_sylvester``, whose rule makes it twice differentiable; a real matrix whose square
root is complex (a negative eigenvalue) raises ``NotImplementedError``.

A Cholesky factorization reads one triangle of ``a`` (the one ``lower`` names, as LAPACK
does), as the symmetric matrix that triangle stands for: the gradient lies on that triangle,
and a tangent reads that triangle of the input's tangent. ``cho_factor``'s result ``c`` holds
the factor on that triangle and, before SciPy 1.18, ``a``'s own entries on the other, which
pass their gradient back unchanged (SciPy 1.18 zeroes them: then they pass none);
``cho_solve`` reads the factor's triangle of ``c`` only. ``lu_factor``'s ``lu`` packs the
unit lower factor below the diagonal and the upper one on and above it, with ``p a = l u`` for
the row permutation ``p`` its pivots make (constants, as the pivots).

``solve_banded((l, u), ab, b)`` solves with the matrix ``a[i, j] = ab[u + i - j, j]``: the
gradient for ``ab`` is ``-g_b x^T`` read on that band, and its unused corners get none.
``logm``'s derivative, like ``expm``'s, is the upper right block of ``logm([[a, e], [0, a]])``;
an eigenvalue on the branch cut (a real number <= 0) has none and is refused. ``eigh`` is
``np.linalg.eigh``'s rule (real symmetric or complex Hermitian, the triangle ``lower`` names),
with ``eigvals_only``, and a subset (``subset_by_index``, or ``subset_by_value`` where no
eigenvalue sits at a bound) through the whole spectrum; the generalized problem (``b``) is
refused.
"""

import numpy as np
import scipy.linalg as sl

from mindgrad.rules import adjoint, d, nondifferentiable, tangent, transpose, transpose_of
from mindgrad.rules.helpers import astype_grad, swap_last_axes
from mindgrad.rules.numpy_decompositions import eigh_grad, eigh_tangent
from mindgrad.rules.numpy_linalg import (
    det_tangent,
    inv_tangent,
    solve_tangent_a,
)
from mindgrad.runtime import is_zero, zero, zero_in, zero_in_zero_out
from mindgrad.runtime.arrays import as_array
from mindgrad.runtime.tangents import TangentTuple, as_dtype_of

# ----- the solvers as linear maps of their right-hand side ----------------------------------
# The rules call these on a gradient or a tangent, not SciPy's functions, which would take the
# symbolic zero for the number 0: the zero for the zero. Each has its SciPy function's rules.


@zero_in_zero_out("b")
def linear_solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False):
    """``scipy.linalg.solve_triangular(a, b, trans, lower, unit_diagonal)``."""
    if zero_in(b):
        return zero
    return sl.solve_triangular(a, b, trans, lower, unit_diagonal)


@zero_in_zero_out("q")
def linear_solve_sylvester(a, b, q):
    """``scipy.linalg.solve_sylvester(a, b, q)``."""
    if zero_in(q):
        return zero
    return sl.solve_sylvester(a, b, q)


@zero_in_zero_out("b")
def linear_cho_solve(c_and_lower, b):
    """``scipy.linalg.cho_solve(c_and_lower, b)``."""
    if zero_in(b):
        return zero
    return sl.cho_solve(c_and_lower, b)


@zero_in_zero_out("b")
def linear_lu_solve(lu_and_piv, b, trans=0):
    """``scipy.linalg.lu_solve(lu_and_piv, b, trans)``."""
    if zero_in(b):
        return zero
    return sl.lu_solve(lu_and_piv, b, trans)


@zero_in_zero_out("b")
def linear_solve_banded(l_and_u, ab, b):
    """``scipy.linalg.solve_banded(l_and_u, ab, b)``."""
    if zero_in(b):
        return zero
    return sl.solve_banded(l_and_u, ab, b)


# ----- det, inv, solve: as NumPy's ---------------------------------------------------------


@transpose(sl.det)
@tangent(sl.det)
def _(out, a, overwrite_a=False, check_finite=True):
    d[out] = det_tangent(d[a], a, out)


def general(a, assume_a, transposed=False):
    """``a``, checked to be read as a general matrix (``assume_a`` None or general, not
    transposed): the only way the rules of ``inv`` and ``solve`` differentiate it."""
    if assume_a not in (None, "gen", "general") or transposed:
        raise NotImplementedError(
            "mindgrad differentiates scipy.linalg.inv and solve for a general matrix only "
            f"(assume_a=None, transposed=False), not assume_a={assume_a!r}, "
            f"transposed={transposed!r}: call it without them")
    return a


@transpose(sl.inv)  # np.linalg.inv's, transposed
@tangent(sl.inv)
def _(out, a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
    inv = general(out, assume_a)
    d[out] = inv_tangent(d[a], inv)


@transpose(sl.solve)
@tangent(sl.solve)
def _(out, a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
      assume_a=None, transposed=False):
    m = general(a, assume_a, transposed)
    d[out] = np.linalg.solve(m, d[b])
    d[out] = solve_tangent_a(d[a], m, b, out)


# ----- triangular solves -------------------------------------------------------------------


def triangle(a, lower=False, unit_diagonal=False):
    """The entries of ``a`` that ``solve_triangular(a, ..., lower, unit_diagonal)`` reads,
    the others zero: the mask its gradient for ``a`` is taken through."""
    n = np.shape(a)[-1]
    mask = np.tri(n, k=-1 if unit_diagonal else 0)
    return a * (mask if lower else swap_last_axes(mask))


def op_transpose(trans):
    """Whether ``solve_triangular``'s ``trans`` solves with the transpose (1, "T", 2, "C";
    the conjugate transpose is the transpose for real matrices)."""
    return trans in (1, 2, "T", "C")


def opposite(trans):
    """The ``trans`` of the transposed solve, as the gradient for ``b`` needs."""
    return 0 if op_transpose(trans) else 1


@zero_in_zero_out("g_b")
def solve_triangular_grad_a(g_b, a, x, trans=0, lower=False, unit_diagonal=False):
    """Gradient of ``x = solve_triangular(a, b, trans, lower, unit_diagonal)`` for ``a`` from
    ``g_b``, its gradient for ``b``: ``-g_b x^T`` (``-x g_b^T`` for the transposed solve)
    on the triangle it reads."""
    if zero_in(g_b):
        return zero
    if np.ndim(x) == 1:
        g_b, x = np.expand_dims(g_b, -1), np.expand_dims(x, -1)
    outer = np.matmul(x, swap_last_axes(g_b)) if op_transpose(trans) else \
        np.matmul(g_b, swap_last_axes(x))
    return -triangle(outer, lower, unit_diagonal)


@zero_in_zero_out("t")
def solve_triangular_tangent_a(t, a, x, trans=0, lower=False, unit_diagonal=False):
    """Tangent of ``x = solve_triangular(a, b, ...)`` from ``a``: ``-op(a)^-1 op(t) x``, with
    ``t`` on the triangle read."""
    if zero_in(t):
        return zero
    t = triangle(t, lower, unit_diagonal)
    return -sl.solve_triangular(a, np.matmul(swap_last_axes(t) if op_transpose(trans) else t, x),
                                trans, lower, unit_diagonal)


# the tangent transposed in its tangents (@transpose reads them): the solve in b, whose
# transpose is the transposed solve, and the tangent from a, from that same solve
@transpose_of(sl.solve_triangular, linear_solve_triangular)
def _(out, a, b, trans=0, lower=False, unit_diagonal=False):
    d[b] = linear_solve_triangular(a, d[out], opposite(trans), lower, unit_diagonal)


@transpose_of(solve_triangular_tangent_a)
def _(out, t, a, x, trans=0, lower=False, unit_diagonal=False):
    d[t] = solve_triangular_grad_a(linear_solve_triangular(a, d[out], opposite(trans), lower,
                                                       unit_diagonal), a, x, trans, lower,
                                   unit_diagonal)


@transpose(sl.solve_triangular, linear_solve_triangular)
@tangent(sl.solve_triangular, linear_solve_triangular)
def _(out, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
      check_finite=True):
    d[out] = linear_solve_triangular(a, d[b], trans, lower, unit_diagonal)
    d[out] = solve_triangular_tangent_a(d[a], a, out, trans, lower, unit_diagonal)


# ----- the matrix exponential --------------------------------------------------------------


@zero_in_zero_out("e")
def expm_frechet_block(a, e):
    """The derivative of ``expm`` at ``a`` in the direction ``e``: the upper right block of
    ``expm([[a, e], [0, a]])`` (for stacks of matrices too)."""
    if zero_in(e):
        return zero
    n = np.shape(a)[-1]
    top = np.concatenate([a, e], axis=-1)
    bottom = np.concatenate([np.zeros_like(a), a], axis=-1)
    return sl.expm(np.concatenate([top, bottom], axis=-2))[..., :n, n:]


# the Frechet derivative is linear in e; its transpose is the derivative at a's transpose
@transpose_of(expm_frechet_block)
def _(out, a, e):
    d[e] = expm_frechet_block(swap_last_axes(a), d[out])


@transpose(sl.expm)
@tangent(sl.expm)
def _(out, A):
    d[out] = expm_frechet_block(A, d[A])


# ----- Sylvester equations and the matrix square root --------------------------------------


@adjoint(sl.solve_sylvester, linear_solve_sylvester)
def _(out, a, b, q):
    g_q = linear_solve_sylvester(swap_last_axes(a), swap_last_axes(b), d[out])
    d[q] = g_q
    d[a] = -np.matmul(g_q, swap_last_axes(out))
    d[b] = -np.matmul(swap_last_axes(out), g_q)


@tangent(sl.solve_sylvester, linear_solve_sylvester)
def _(out, a, b, q):
    d[out] = linear_solve_sylvester(a, b, d[q])
    d[out] = linear_solve_sylvester(a, b, -np.matmul(d[a], out))
    d[out] = linear_solve_sylvester(a, b, -np.matmul(out, d[b]))


def real_root(root, a):
    """``sqrtm(a)``, checked to be real where ``a`` is: a real matrix with a negative
    eigenvalue has a complex square root, whose derivative the rules below do not give."""
    if np.iscomplexobj(root) and not np.iscomplexobj(a):
        raise NotImplementedError("mindgrad differentiates scipy.linalg.sqrtm of a real matrix "
                                  "whose square root is real (no negative eigenvalue) only")
    return root


# solve_sylvester is linear in q, its transpose the equation of the transposes
@transpose_of(sl.solve_sylvester, linear_solve_sylvester)
def _(out, a, b, q):
    d[q] = linear_solve_sylvester(swap_last_axes(a), swap_last_axes(b), d[out])


# d[A] = sl.solve_sylvester(x^T, x^T, d[out]) for x the real root
@transpose(sl.sqrtm)
@tangent(sl.sqrtm)
def _(out, A, disp=None, blocksize=None):
    x = real_root(out, A)
    d[out] = linear_solve_sylvester(x, x, d[A])


# ----- Cholesky: cholesky, cho_factor, cho_solve -------------------------------------------


def read_triangle(a, lower=False):
    """The triangle of ``a`` a Cholesky factorization reads (diagonal included), the other
    entries zero."""
    return np.tril(a) if lower else np.triu(a)


def symmetric_from(t, lower=False):
    """The symmetric matrix the triangle ``t`` of a Cholesky input stands for."""
    t = read_triangle(t, lower)
    return t + swap_last_axes(t) - t * np.eye(np.shape(t)[-1])


def lower_factor(factor, lower=False):
    """The lower Cholesky factor ``L`` (``a = L L^T``) from ``cholesky(a, lower)``'s
    result."""
    return read_triangle(factor, lower) if lower else swap_last_axes(np.triu(factor))


@zero_in_zero_out("g")
def cholesky_grad(g, factor, lower=False):
    """Gradient of ``factor = cholesky(a, lower)`` for ``a`` from ``g``, on the triangle read:
    with ``L`` the lower factor and ``s = L^-T phi(L^T g_L) L^-1`` (``phi``: the lower triangle,
    its diagonal halved), ``tril(s) + tril(s^T, -1)``, transposed for an upper factor."""
    if is_zero(g):
        return zero
    low = lower_factor(factor, lower)
    g_l = np.tril(g if lower else swap_last_axes(g))
    p = np.matmul(swap_last_axes(low), g_l)
    p = np.tril(p) - 0.5 * p * np.eye(np.shape(p)[-1])
    y = sl.solve_triangular(low, p, trans=1, lower=True)
    s = swap_last_axes(sl.solve_triangular(low, swap_last_axes(y), trans=1, lower=True))
    grad = np.tril(s) + np.tril(swap_last_axes(s), -1)
    return grad if lower else swap_last_axes(grad)


@zero_in_zero_out("t")
def cholesky_tangent(t, factor, lower=False):
    """Tangent of ``cholesky(a, lower)`` from ``a``: ``L phi(L^-1 t_sym L^-T)`` for the lower
    factor ``L``, ``t_sym`` the symmetric matrix of the triangle of ``t`` read."""
    if zero_in(t):
        return zero
    low = lower_factor(factor, lower)
    w = sl.solve_triangular(low, symmetric_from(t, lower), lower=True)
    m = swap_last_axes(sl.solve_triangular(low, swap_last_axes(w), lower=True))
    m = np.tril(m) - 0.5 * m * np.eye(np.shape(m)[-1])
    dl = np.matmul(low, m)
    return dl if lower else swap_last_axes(dl)


# the tangent transposed in t (@transpose reads it): it moves with the matrix too
@transpose_of(cholesky_tangent)
def _(out, t, factor, lower=False):
    d[t] = cholesky_grad(d[out], factor, lower)


@transpose(sl.cholesky)
@tangent(sl.cholesky)
def _(out, a, lower=False, overwrite_a=False, check_finite=True):
    d[out] = cholesky_tangent(d[a], out, lower)


def factor_of(c_and_lower):
    """``(c, lower)`` of ``cho_factor``'s result, ``lower`` one bool (SciPy gives one per matrix
    of a stack)."""
    c, lower = c_and_lower
    return c, bool(np.all(lower))


# whether cho_factor leaves a's entries in the triangle it does not factor (SciPy before 1.18)
# or zeroes them (1.18)
CHO_FACTOR_KEEPS_A = bool(sl.cho_factor(np.array([[4.0, 1.0], [1.0, 3.0]]))[0][1, 0] != 0)


@zero_in_zero_out("g")
def cho_factor_grad(g, out):
    """Gradient of ``(c, lower) = cho_factor(a, lower)`` for ``a``: the factor's on the triangle
    read, ``g_c`` itself on the other where ``c`` holds ``a``'s entries there."""
    if zero_in(g):
        return zero
    c, lower = factor_of(out)
    g_c = g[0]
    if is_zero(g_c):
        return zero
    grad = cholesky_grad(read_triangle(g_c, lower), c, lower)
    if CHO_FACTOR_KEEPS_A:
        grad = grad + g_c - read_triangle(g_c, lower)
    return grad


@zero_in_zero_out("t")
def cho_factor_tangent(t, out):
    """Tangent of ``cho_factor(a, lower)``: the factor's on its triangle, ``t``'s own entries on
    the other where ``c`` holds ``a``'s entries there; the flag ``lower`` has none."""
    if zero_in(t):
        return zero
    c, lower = factor_of(out)
    t_c = cholesky_tangent(t, c, lower)
    if CHO_FACTOR_KEEPS_A:
        t_c = t_c + t - read_triangle(t, lower)
    return TangentTuple((t_c, 0.0))


# the tangent transposed in t (@transpose reads it): it moves with the matrix too
@transpose_of(cho_factor_tangent)
def _(ans, t, out):
    d[t] = cho_factor_grad(d[ans], out)


@transpose(sl.cho_factor)
@tangent(sl.cho_factor)
def _(out, a, lower=False, overwrite_a=False, check_finite=True):
    d[out] = cho_factor_tangent(d[a], out)


@zero_in_zero_out("g_b")
def cho_solve_grad_c(g_b, c_and_lower, x):
    """Gradient of ``x = cho_solve((c, lower), b)`` for ``(c, lower)`` from ``g_b``, the
    gradient for ``b``: with ``a = L L^T``, ``g_a = -g_b x^T``, so ``g_L = -(g_b x^T + x g_b^T)
    L`` on the factor's triangle of ``c`` (transposed for an upper factor)."""
    if zero_in(g_b):
        return zero
    c, lower = factor_of(c_and_lower)
    if np.ndim(x) == np.ndim(c) - 1:
        g_b, x = np.expand_dims(g_b, -1), np.expand_dims(x, -1)
    outer = np.matmul(g_b, swap_last_axes(x))
    g_l = -np.tril(np.matmul(outer + swap_last_axes(outer), lower_factor(c, lower)))
    return [g_l if lower else swap_last_axes(g_l), 0]


@zero_in_zero_out("t")
def cho_solve_tangent_c(t, c_and_lower, x):
    """Tangent of ``x = cho_solve((c, lower), b)`` from ``(c, lower)``: ``-a^-1 t_a x`` with
    ``t_a = t_L L^T + L t_L^T`` for ``t_L`` the tangent on the factor's triangle."""
    if zero_in(t):
        return zero
    c, lower = factor_of(c_and_lower)
    low = lower_factor(c, lower)
    t_l = lower_factor(t[0], lower)
    t_a = np.matmul(t_l, swap_last_axes(low))
    t_a = t_a + swap_last_axes(t_a)
    if np.ndim(x) == np.ndim(c) - 1:
        return -sl.cho_solve(c_and_lower, np.matmul(t_a, np.expand_dims(x, -1)))[..., 0]
    return -sl.cho_solve(c_and_lower, np.matmul(t_a, x))


# the tangent transposed in its tangents (@transpose reads them): the solve in b is its own
# transpose (a symmetric matrix), the tangent from the factor reads that same solve
@transpose_of(sl.cho_solve, linear_cho_solve)
def _(out, c_and_lower, b):
    d[b] = linear_cho_solve(c_and_lower, d[out])


@transpose_of(cho_solve_tangent_c)
def _(out, t, c_and_lower, x):
    d[t] = cho_solve_grad_c(linear_cho_solve(c_and_lower, d[out]), c_and_lower, x)


@transpose(sl.cho_solve, linear_cho_solve)
@tangent(sl.cho_solve, linear_cho_solve)
def _(out, c_and_lower, b, overwrite_b=False, check_finite=True):
    d[out] = linear_cho_solve(c_and_lower, d[b])
    d[out] = cho_solve_tangent_c(d[c_and_lower], c_and_lower, out)


# ----- LU: lu_factor, lu_solve -------------------------------------------------------------


def row_order(piv):
    """The rows of ``a`` in the order ``lu_factor``'s pivots put them: ``a[row_order(piv)] =
    l u`` (LAPACK swaps row ``i`` with row ``piv[i]``, for each ``i`` in turn)."""
    piv = as_array(piv)
    if piv.ndim != 1:
        raise NotImplementedError("mindgrad differentiates scipy.linalg.lu_factor and lu_solve "
                                  "of one square matrix, not of a stack")
    order = np.arange(len(piv))
    for i, j in enumerate(piv):
        order[[i, j]] = order[[j, i]]
    return order


nondifferentiable(row_order)


def lu_factors(lu):
    """The unit lower and the upper factor ``lu`` packs."""
    return np.tril(lu, -1) + np.eye(np.shape(lu)[-1]), np.triu(lu)


@zero_in_zero_out("g")
def lu_factor_grad(g, out):
    """Gradient of ``(lu, piv) = lu_factor(a)`` for ``a``: with ``m = tril(l^T g, -1) +
    triu(g u^T)`` (``g`` read as the gradients of both factors), ``l^-T m u^-T`` with its rows
    put back in ``a``'s order."""
    if zero_in(g):
        return zero
    lu, piv = out
    g_lu = g[0]
    if is_zero(g_lu):
        return zero
    low, up = lu_factors(lu)
    m = np.tril(np.matmul(swap_last_axes(low), g_lu), -1) + np.triu(np.matmul(g_lu,
                                                                            swap_last_axes(up)))
    y = sl.solve_triangular(low, m, trans=1, lower=True, unit_diagonal=True)
    grad_rows = swap_last_axes(sl.solve_triangular(up, swap_last_axes(y)))
    return grad_rows[np.argsort(row_order(piv))]


@zero_in_zero_out("t")
def lu_factor_tangent(t, out):
    """Tangent of ``lu_factor(a)``: with ``f = l^-1 t[rows] u^-1``, ``l tril(f, -1) + triu(f)
    u`` packed as ``lu``; the pivots have none."""
    if zero_in(t):
        return zero
    lu, piv = out
    low, up = lu_factors(lu)
    y = sl.solve_triangular(low, t[row_order(piv)], lower=True, unit_diagonal=True)
    f = swap_last_axes(sl.solve_triangular(up, swap_last_axes(y), trans=1))
    return TangentTuple((np.matmul(low, np.tril(f, -1)) + np.matmul(np.triu(f), up),
                         np.zeros(np.shape(piv))))


# the tangent transposed in t (@transpose reads it): it moves with the matrix too
@transpose_of(lu_factor_tangent)
def _(ans, t, out):
    d[t] = lu_factor_grad(d[ans], out)


@transpose(sl.lu_factor)
@tangent(sl.lu_factor)
def _(out, a, overwrite_a=False, check_finite=True):
    d[out] = lu_factor_tangent(d[a], out)


@zero_in_zero_out("g_b")
def lu_solve_grad_lu(g_b, lu_and_piv, x, trans=0):
    """Gradient of ``x = lu_solve((lu, piv), b, trans)`` for ``(lu, piv)`` from ``g_b``, the
    gradient for ``b``: ``g_a = -g_b x^T`` (``-x g_b^T`` for the transposed solve) for
    ``a = p^T l u``, taken to the factors ``lu`` packs."""
    if zero_in(g_b):
        return zero
    lu, piv = lu_and_piv
    if np.ndim(x) == 1:
        g_b, x = np.expand_dims(g_b, -1), np.expand_dims(x, -1)
    g_a = -(np.matmul(x, swap_last_axes(g_b)) if op_transpose(trans) else
            np.matmul(g_b, swap_last_axes(x)))
    low, up = lu_factors(lu)
    g_rows = g_a[row_order(piv)]
    return [np.tril(np.matmul(g_rows, swap_last_axes(up)), -1) +
            np.triu(np.matmul(swap_last_axes(low), g_rows)), 0]


@zero_in_zero_out("t")
def lu_solve_tangent_lu(t, lu_and_piv, x, trans=0):
    """Tangent of ``x = lu_solve((lu, piv), b, trans)`` from ``(lu, piv)``: ``-a^-1 t_a x``
    (``-a^-T t_a^T x``), ``t_a = p^T (t_l u + l t_u)`` for the factors' tangents ``t[0]``
    packs."""
    if zero_in(t):
        return zero
    lu, piv = lu_and_piv
    low, up = lu_factors(lu)
    t_rows = np.matmul(np.tril(t[0], -1), up) + np.matmul(low, np.triu(t[0]))
    t_a = t_rows[np.argsort(row_order(piv))]
    if op_transpose(trans):
        t_a = swap_last_axes(t_a)
    return -sl.lu_solve(lu_and_piv, np.matmul(t_a, x), trans)


# the tangent transposed in its tangents (@transpose reads them): the solve in b, whose
# transpose is the transposed solve, and the tangent from the factors, from that same solve
@transpose_of(sl.lu_solve, linear_lu_solve)
def _(out, lu_and_piv, b, trans=0):
    d[b] = linear_lu_solve(lu_and_piv, d[out], opposite(trans))


@transpose_of(lu_solve_tangent_lu)
def _(out, t, lu_and_piv, x, trans=0):
    d[t] = lu_solve_grad_lu(linear_lu_solve(lu_and_piv, d[out], opposite(trans)), lu_and_piv, x,
                            trans)


@transpose(sl.lu_solve, linear_lu_solve)
@tangent(sl.lu_solve, linear_lu_solve)
def _(out, lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    d[out] = linear_lu_solve(lu_and_piv, d[b], trans)
    d[out] = lu_solve_tangent_lu(d[lu_and_piv], lu_and_piv, out, trans)


# ----- the matrix logarithm ----------------------------------------------------------------


def off_branch_cut(a):
    """``a``, checked to have no eigenvalue of ``a`` on the logarithm's branch cut (the
    real numbers <= 0), where it has no derivative."""
    w = np.linalg.eigvals(a)
    if np.any((np.imag(w) == 0) & (np.real(w) <= 0)):
        raise NotImplementedError("mindgrad differentiates scipy.linalg.logm of a matrix with "
                                  "no eigenvalue on the logarithm's branch cut (a real number "
                                  "<= 0) only: it has no derivative there")
    return a


@zero_in_zero_out("e")
def logm_frechet_block(a, e):
    """The derivative of ``logm`` at ``a`` in the direction ``e``: the upper right block of
    ``logm([[a, e], [0, a]])``."""
    if zero_in(e):
        return zero
    n = np.shape(a)[-1]
    top = np.concatenate([a, e], axis=-1)
    bottom = np.concatenate([np.zeros_like(a), a], axis=-1)
    return sl.logm(np.concatenate([top, bottom], axis=-2))[..., :n, n:]


@zero_in_zero_out("t")
def logm_tangent(t, m, out):
    """Tangent of ``out = logm(m)`` from ``m``, in ``out``'s dtype."""
    if zero_in(t):
        return zero
    return as_dtype_of(logm_frechet_block(m, t), out)


# the Frechet derivative is linear in its direction; its transpose is the derivative at the
# matrix's transpose, in the dtype of what t is the tangent of
@transpose_of(logm_tangent)
def _(ans, t, m, out):
    d[t] = astype_grad(logm_frechet_block(swap_last_axes(m), d[ans]), t)


@transpose(sl.logm)
@tangent(sl.logm)
def _(out, A, disp=True):
    """A square matrix with no eigenvalue on the branch cut (a real number <= 0). The
    derivative is a block of ``logm`` of a matrix twice the size, itself differentiable."""
    m = off_branch_cut(A)
    d[out] = logm_tangent(d[A], m, out)


# ----- banded solves -----------------------------------------------------------------------


def shifted(v, s):
    """``w`` with ``w[i] = v[i + s]`` along the first axis, zero where ``i + s`` is outside."""
    n = np.shape(v)[0]
    s = min(max(s, -n), n)
    zeros = np.zeros((abs(s),) + np.shape(v)[1:], dtype=np.result_type(v))
    return np.concatenate([v[s:], zeros]) if s >= 0 else np.concatenate([zeros, v[:n + s]])


def band_row(row, x):
    """A row of ``ab`` shaped to multiply ``x`` (a vector or the columns of a matrix)."""
    return np.reshape(row, np.shape(row) + (1,) * (np.ndim(x) - 1))


@zero_in_zero_out("ab")
def banded_matmul(l_and_u, ab, x):
    """``a @ x`` for the matrix ``a`` that ``ab`` holds in the band storage of
    ``solve_banded`` (``ab[u + i - j, j] = a[i, j]``)."""
    if zero_in(ab):
        return zero
    lower, upper = l_and_u
    return sum(shifted(band_row(ab[r], x) * x, upper - r) for r in range(lower + upper + 1))


def banded_transpose(l_and_u, ab):
    """The band storage of ``a^T`` (lower and upper bandwidths swapped)."""
    lower, upper = l_and_u
    return np.stack([shifted(ab[upper + lower - k], k - lower) for k in range(lower + upper + 1)])


@zero_in_zero_out("g")
def banded_outer(l_and_u, g, x):
    """The band of ``g x^T`` (summed over the columns of matrices) in band storage: the
    gradient of ``a @ x`` for ``ab`` from ``g``."""
    if zero_in(g):
        return zero
    lower, upper = l_and_u
    if np.ndim(x) == 1:
        return np.stack([shifted(g, r - upper) * x for r in range(lower + upper + 1)])
    return np.stack([np.sum(shifted(g, r - upper) * x, axis=-1)
                     for r in range(lower + upper + 1)])


nondifferentiable(band_row)


@adjoint(sl.solve_banded, linear_solve_banded)
def _(out, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """The entries of ``ab`` outside the band's matrix (its unused corners) get no gradient;
    the bandwidths ``l_and_u`` are integers."""
    g_b = linear_solve_banded(l_and_u[::-1], banded_transpose(l_and_u, ab), d[out])
    d[b] = g_b
    d[ab] = -banded_outer(l_and_u, g_b, out)


@tangent(sl.solve_banded, linear_solve_banded)
def _(out, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    d[out] = linear_solve_banded(l_and_u, ab, d[b])
    d[out] = -linear_solve_banded(l_and_u, ab, banded_matmul(l_and_u, d[ab], out))


# ----- Hermitian eigenproblems ---------------------------------------------------------------


def standard_problem(b=None, type=1):
    """Refuse the generalized problem ``a v = w b v``: the rules are for ``b=None``."""
    if b is not None:
        raise NotImplementedError("mindgrad differentiates scipy.linalg.eigh of the standard "
                                  "problem (b=None) only, not the generalized one")
    return type


def subset_indices(w, subset_by_index=None, subset_by_value=None):
    """The indices in the whole spectrum ``w`` (ascending) of the eigenvalues ``eigh`` returned:
    ``subset_by_index``'s inclusive range, or those in ``subset_by_value``'s ``(low, high]``."""
    if subset_by_index is not None:
        return np.arange(subset_by_index[0], subset_by_index[1] + 1)
    low, high = subset_by_value
    return np.flatnonzero((w[..., :] > low) & (w[..., :] <= high))


nondifferentiable(standard_problem, subset_indices)


def whole_spectrum(a, out, lower=True, eigvals_only=False, subset_by_index=None,
                   subset_by_value=None):
    """``(w, v, pick)``: the whole spectrum of ``a``, its vectors with the columns ``eigh``
    returned replaced by those (a vector's sign or phase is the call's), and the matrix
    ``pick`` (n by k) that selects the columns returned."""
    w, v = np.linalg.eigh(a, "L" if lower else "U")
    pick = np.eye(np.shape(w)[-1])[:, subset_indices(w, subset_by_index, subset_by_value)]
    if not eigvals_only:
        v = v - v @ pick @ swap_last_axes(pick) + out[1] @ swap_last_axes(pick)
    return w, v, pick


@zero_in_zero_out("g")
def scipy_eigh_grad(g, a, out, b=None, lower=True, eigvals_only=False, type=1,
                    subset_by_index=None, subset_by_value=None):
    """Gradient of ``scipy.linalg.eigh`` (``np.linalg.eigh``'s, ``eigh_grad``), a subset's
    through the whole spectrum with zero gradients for the values and vectors not returned."""
    if zero_in(g):
        return zero
    standard_problem(b, type)
    uplo = "L" if lower else "U"
    if subset_by_index is None and subset_by_value is None:
        return eigh_grad(g, a, out, uplo, not eigvals_only)
    w, v, pick = whole_spectrum(a, out, lower, eigvals_only, subset_by_index, subset_by_value)
    g_w = g if eigvals_only else g[0]
    g_v = zero if eigvals_only else g[1]
    g_w = zero if is_zero(g_w) else g_w @ swap_last_axes(pick)
    g_v = zero if is_zero(g_v) else g_v @ swap_last_axes(pick)
    if is_zero(g_w) and is_zero(g_v):
        return zero
    return eigh_grad((g_w, g_v), a, (w, v), uplo)


@zero_in_zero_out("t")
def scipy_eigh_tangent(t, a, out, b=None, lower=True, eigvals_only=False, type=1,
                       subset_by_index=None, subset_by_value=None):
    """Tangent of ``scipy.linalg.eigh`` (``eigh_tangent``), a subset's that of the whole
    spectrum's values and vectors returned."""
    if zero_in(t):
        return zero
    standard_problem(b, type)
    uplo = "L" if lower else "U"
    if subset_by_index is None and subset_by_value is None:
        return eigh_tangent(t, a, out, uplo, not eigvals_only)
    w, v, pick = whole_spectrum(a, out, lower, eigvals_only, subset_by_index, subset_by_value)
    whole = eigh_tangent(t, a, (w, v), uplo)
    dw = as_dtype_of(whole[0] @ pick, w)
    if eigvals_only:
        return dw
    return TangentTuple((dw, as_dtype_of(whole[1] @ pick, v)))


# the tangent transposed in t (@transpose reads it): it moves with the matrix too
@transpose_of(scipy_eigh_tangent)
def _(ans, t, a, out, b=None, lower=True, eigvals_only=False, type=1, subset_by_index=None,
      subset_by_value=None):
    d[t] = scipy_eigh_grad(d[ans], a, out, b, lower, eigvals_only, type, subset_by_index,
                           subset_by_value)


@transpose(sl.eigh)
@tangent(sl.eigh)
def _(out, a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
      type=1, check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    """Real symmetric or complex Hermitian ``a`` (the triangle ``lower`` names) with distinct
    eigenvalues, all of them or a subset (by index, or by value where none is at a bound);
    the generalized problem (``b``) is refused. Complex eigenvectors: only losses that do not
    depend on each vector's phase have a derivative."""
    d[out] = scipy_eigh_tangent(d[a], a, out, b, lower, eigvals_only, type, subset_by_index,
                                subset_by_value)
