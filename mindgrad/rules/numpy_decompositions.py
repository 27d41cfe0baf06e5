"""Rules for the matrix decompositions of ``np.linalg``, in both directions: ``svd``, ``eigh``
(real matrices with distinct singular values or eigenvalues), ``cholesky`` (symmetric positive
definite), ``qr`` (full rank), ``eig`` and ``eigvals`` (distinct eigenvalues).

Their tangents are written out; each adjoint template's docstring states what it assumes. Where
two singular values (eigenvalues) are equal, their vectors are not unique and have infinite
derivatives.

A gradient of a gradient differentiates the helpers below from their source, so they keep to
the Python that mindgrad differentiates: no starred calls, index assignment only on plain names,
and NumPy functions that have rules.
"""


import numpy as np

from mindgrad.rules import d, nondifferentiable, tangent, transpose, transpose_of
from mindgrad.rules.helpers import astype_grad, conj_if_complex, swap_last_axes
from mindgrad.runtime import is_zero, zero, zero_in, zero_in_zero_out
from mindgrad.runtime.tangents import (
    TangentTuple,
    as_dtype_of,
)

# ----- decompositions: svd, eigh -----------------------------------------------------------
# For real matrices (stacks too), with distinct singular values / eigenvalues: where two are
# equal, their singular vectors (eigenvectors) are not unique and have infinite derivatives.


def inverse_gaps(w):
    """``F[..., i, j] = 1 / (w_j - w_i)`` off the diagonal, 0 on it."""
    eye = np.eye(np.shape(w)[-1])
    return (1.0 - eye) / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye)


def conj_transpose(x):
    """The conjugate transpose of (a stack of) matrices; the transpose of real ones."""
    return conj_if_complex(swap_last_axes(x))


def triangle_grad(g, uplo="L"):
    """The gradient for ``a`` of a function of ``a``'s ``uplo`` triangle read as a Hermitian
    (real: symmetric) matrix (``a -> tril(a, -1) + tril(a, -1)^H + real(diag(a))``, as
    ``eigh`` reads it), from the gradient ``g`` of that matrix: each off-diagonal entry of the
    triangle stands for two, the other conjugated; the diagonal's imaginary part is not read."""
    both = g + conj_transpose(g)
    diagonal = np.real(g) * np.eye(np.shape(g)[-1])
    if uplo.upper() == "U":
        return np.triu(both, 1) + diagonal
    return np.tril(both, -1) + diagonal


def triangle_tangent(t, uplo="L"):
    """The tangent of the Hermitian (real: symmetric) matrix that ``eigh`` reads from ``a``'s
    ``uplo`` triangle: ``tril(t, -1) + tril(t, -1)^H + real(diag(t))``."""
    diagonal = np.real(t) * np.eye(np.shape(t)[-1])
    if uplo.upper() == "U":
        return np.triu(t, 1) + conj_transpose(np.triu(t, 1)) + diagonal
    return np.tril(t, -1) + conj_transpose(np.tril(t, -1)) + diagonal


def reject_complex(a, name):
    """Refuse complex matrices: the rules below are for real ones."""
    if np.iscomplexobj(a):
        raise NotImplementedError(f"the derivative of {name} is implemented for real matrices "
                                  "only")


def full_matrices_message(extra):
    """Why the extra columns of U (rows of V^T) of ``full_matrices=True`` have no derivative."""
    return (f"np.linalg.svd(full_matrices=True) of a non-square matrix: its extra {extra} are "
            "an arbitrary basis of a complement, not determined by the matrix, and have no "
            "derivative; pass full_matrices=False (or give them no gradient)")


nondifferentiable(reject_complex, full_matrices_message)


@zero_in_zero_out("g")
def svd_grad(g, a, out, full_matrices=True, compute_uv=True, hermitian=False):
    """Gradient of ``np.linalg.svd(a, full_matrices, compute_uv, hermitian)`` (Townsend 2016,
    "Differentiating the singular value decomposition"). With ``a = U S V^T`` reduced,
    ``F_ij = 1 / (s_j^2 - s_i^2)``, ``J = F o (U^T gU)`` and ``K = F o (V^T gV)``::

        ga = U [diag(gs) + (J + J^T) S + S (K + K^T)] V^T
             + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T)

    The last two terms are for a tall matrix (U has fewer columns than rows) and a wide one.
    With ``compute_uv=False`` only ``gs`` is given, and U, V are computed here. With
    ``full_matrices=True`` a non-square matrix has extra columns of U (or rows of V^T) that
    are an arbitrary basis of a complement: their gradient must be zero. ``hermitian=True``
    reads the lower triangle as a symmetric matrix (through ``eigh``), which gets the
    gradient.

    A complex ``a = U S V^H`` takes the same formula in the inner-product form (``gU`` read as
    ``conj(gU)``, transposes as conjugate transposes, the result conjugated: the README's
    convention) plus ``U diag(i Im(diag(U^H conj(gU))) / s) V^H``, for the phase ``u_i`` and
    ``v_i`` share. Each pair ``(u_i, v_i)`` is defined up to a common phase: the loss must not
    depend on it."""
    if zero_in(g):
        return zero
    m = np.shape(a)[-2]
    n = np.shape(a)[-1]
    k = min(m, n)
    if compute_uv:
        u = out[0]
        s = out[1]
        vt = out[2]
        g_u = g[0]
        g_s = g[1]
        g_vt = g[2]
        if full_matrices and m > n:
            if not is_zero(g_u):
                if np.any(g_u[..., :, k:] != 0):
                    raise NotImplementedError(full_matrices_message("columns of U"))
                g_u = g_u[..., :, :k]
            u = u[..., :, :k]
        if full_matrices and m < n:
            if not is_zero(g_vt):
                if np.any(g_vt[..., k:, :] != 0):
                    raise NotImplementedError(full_matrices_message("rows of V^T"))
                g_vt = g_vt[..., :k, :]
            vt = vt[..., :k, :]
    else:
        reduced = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
        u = reduced[0]
        s = reduced[1]
        vt = reduced[2]
        g_u = zero
        g_s = g
        g_vt = zero
    if is_zero(g_u) and is_zero(g_s) and is_zero(g_vt):
        return zero
    if not is_zero(g_u):
        g_u = conj_if_complex(g_u)
    if not is_zero(g_vt):
        g_vt = conj_if_complex(g_vt)
    core = zero
    if not is_zero(g_s):
        core = np.expand_dims(np.real(g_s), -2) * np.eye(k)
    if not (is_zero(g_u) and is_zero(g_vt)):
        f = inverse_gaps(s * s)
        if not is_zero(g_u):
            uh_gu = conj_transpose(u) @ g_u
            j = f * uh_gu
            core = core + (j + conj_transpose(j)) * np.expand_dims(s, -2)
            if np.iscomplexobj(uh_gu):
                core = core + 1j * np.imag(uh_gu) * np.eye(k) / np.expand_dims(s, -2)
        if not is_zero(g_vt):
            kk = f * (vt @ conj_transpose(g_vt))
            core = core + np.expand_dims(s, -1) * (kk + conj_transpose(kk))
    grad = u @ core @ vt
    if m > k and not is_zero(g_u):
        grad = grad + ((g_u - u @ (conj_transpose(u) @ g_u)) / np.expand_dims(s, -2)) @ vt
    if n > k and not is_zero(g_vt):
        grad = grad + u @ ((g_vt - (g_vt @ conj_transpose(vt)) @ vt) / np.expand_dims(s, -1))
    if hermitian:
        grad = triangle_grad(conj_if_complex(grad), "L")
    else:
        grad = conj_if_complex(grad)
    return astype_grad(grad, a)


@zero_in_zero_out("t")
def svd_tangent(t, a, out, full_matrices=True, compute_uv=True, hermitian=False):
    """Tangent of ``np.linalg.svd``. With ``a = U S V^T`` reduced, ``P = U^T t V`` and
    ``F_ij = 1 / (s_j^2 - s_i^2)``::

        ds = diag(P)
        dU = U (F o (P S + S P^T)) + (I - U U^T) t V S^-1
        dV = V (F o (S P + P^T S)) + (I - V V^T) t^T U S^-1

    ``full_matrices=True`` of a non-square matrix is refused: the extra columns of U (rows of
    V^T) are an arbitrary basis of a complement, with no tangent to give. A complex
    ``a = U S V^H`` takes the same formulas with conjugate transposes, ``ds = real(diag(P))``,
    and ``dU`` gains ``U diag(i Im(diag(P)) / s)``: the phase ``u_i`` and ``v_i`` share
    (``diag(V^H dV)`` is zero in this gauge)."""
    if zero_in(t):
        return zero
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
    v = conj_transpose(vt)
    p = conj_transpose(u) @ t @ v
    ds = np.real(np.diagonal(p, 0, -2, -1))
    if not compute_uv:
        return as_dtype_of(ds, out)
    f = inverse_gaps(s * s)
    right = np.expand_dims(s, -2)  # X * right = X S
    left = np.expand_dims(s, -1)  # left * X = S X
    du = u @ (f * (p * right + left * conj_transpose(p)))
    if np.iscomplexobj(p):
        du = du + u * (1j * np.imag(np.diagonal(p, 0, -2, -1)) / s)[..., None, :]
    dv = v @ (f * (left * p + conj_transpose(p) * right))
    if m > k:
        du = du + (t @ v - u @ p) / right
    if n > k:
        dv = dv + (conj_transpose(t) @ u - v @ conj_transpose(p)) / right
    return TangentTuple((as_dtype_of(du, u), as_dtype_of(ds, s),
                         as_dtype_of(conj_transpose(dv), vt)))


# the tangent transposed in t (@transpose reads it): it moves with the matrix too
@transpose_of(svd_tangent)
def _(ans, t, a, out, full_matrices=True, compute_uv=True, hermitian=False):
    d[t] = svd_grad(d[ans], a, out, full_matrices, compute_uv, hermitian)


@transpose(np.linalg.svd)
@tangent(np.linalg.svd)
def _(out, a, full_matrices=True, compute_uv=True, hermitian=False):
    """Real or complex ``a`` with distinct nonzero singular values; full_matrices of a
    non-square matrix only with no gradient on the extra columns of U (rows of V^T). Complex
    singular vectors: only losses that do not depend on the phase each pair ``(u_i, v_i)``
    shares have a derivative."""
    d[out] = svd_tangent(d[a], a, out, full_matrices, compute_uv, hermitian)


@zero_in_zero_out("g")
def eigh_grad(g, a, out, UPLO="L", vectors=True):
    """Gradient of ``np.linalg.eigh(a, UPLO)`` (``vectors``; else of ``eigvalsh``). With
    ``a = V diag(w) V^H`` and ``F_ij = 1 / (w_j - w_i)``, the Hermitian matrix gets
    ``conj(V) [diag(gw) + F o (V^T gV)] V^T`` (the README's convention: ``dL = Re(sum(g da))``);
    eigh reads it from ``a``'s ``UPLO`` triangle, which receives that gradient
    (``triangle_grad``). A complex ``V`` is defined up to the phase of each column: the loss
    must not depend on it (the imaginary part of ``diag(V^H conj(gV))``, which it would move,
    is taken as zero)."""
    if zero_in(g):
        return zero
    if vectors:
        w = out[0]
        v = out[1]
        g_w = g[0]
        g_v = g[1]
    else:
        both = np.linalg.eigh(a, UPLO)
        w = both[0]
        v = both[1]
        g_w = g
        g_v = zero
    if is_zero(g_w) and is_zero(g_v):
        return zero
    core = zero
    if not is_zero(g_w):
        core = np.expand_dims(np.real(g_w), -2) * np.eye(np.shape(a)[-1])
    if not is_zero(g_v):
        core = core + inverse_gaps(w) * (swap_last_axes(v) @ g_v)
    return astype_grad(triangle_grad(conj_if_complex(v) @ core @ swap_last_axes(v), UPLO), a)


@zero_in_zero_out("t")
def eigh_tangent(t, a, out, UPLO="L", vectors=True):
    """Tangent of ``np.linalg.eigh(a, UPLO)`` (``vectors``; else of ``eigvalsh``). With
    ``a = V diag(w) V^H``, ``P = V^H th V`` for the Hermitian matrix's tangent ``th`` and
    ``F_ij = 1 / (w_j - w_i)``: ``dw = real(diag(P))``, ``dV = V (F o P)`` (in the gauge where
    ``diag(V^H dV)`` is zero)."""
    if zero_in(t):
        return zero
    if vectors:
        w = out[0]
        v = out[1]
    else:
        both = np.linalg.eigh(a, UPLO)
        w = both[0]
        v = both[1]
    p = conj_transpose(v) @ triangle_tangent(t, UPLO) @ v
    dw = np.real(np.diagonal(p, 0, -2, -1))
    if not vectors:
        return as_dtype_of(dw, out)
    return TangentTuple((as_dtype_of(dw, w), as_dtype_of(v @ (inverse_gaps(w) * p), v)))


# the tangent transposed in t (@transpose reads it): it moves with the matrix too
@transpose_of(eigh_tangent)
def _(ans, t, a, out, UPLO="L", vectors=True):
    d[t] = eigh_grad(d[ans], a, out, UPLO, vectors)


@transpose(np.linalg.eigh)
@tangent(np.linalg.eigh)
def _(out, a, UPLO="L"):
    """Real symmetric or complex Hermitian ``a`` with distinct eigenvalues; the ``UPLO``
    triangle gets the gradient. Complex eigenvectors: only losses that do not depend on each
    column's phase have a derivative."""
    d[out] = eigh_tangent(d[a], a, out, UPLO)


@transpose(np.linalg.eigvalsh)
@tangent(np.linalg.eigvalsh)
def _(out, a, UPLO="L"):
    d[out] = eigh_tangent(d[a], a, out, UPLO, False)


if hasattr(np.linalg, "svdvals"):  # NumPy >= 2.0

    @transpose(np.linalg.svdvals)  # d[x] = svd_grad(d[out], x, out, False, False)
    @tangent(np.linalg.svdvals)
    def _(out, x):
        d[out] = svd_tangent(d[x], x, out, False, False)



# ----- cholesky, qr --------------------------------------------------------------------------
# For real matrices (stacks too). cholesky: symmetric positive definite; the factorization reads
# one triangle of ``a`` as a symmetric matrix, and that triangle gets the gradient. qr: full rank
# (nonzero diagonal of R); mode "complete" of a tall matrix has extra columns of Q that are an
# arbitrary basis of a complement, with no derivative.


def lower_with_half_diagonal(x):
    """``Phi(x)``: the lower triangle of ``x``, its diagonal halved."""
    return np.tril(x) - 0.5 * x * np.eye(np.shape(x)[-1])


@zero_in_zero_out("g")
def cholesky_grad(g, a, factor, upper=False):
    """Gradient of ``np.linalg.cholesky(a, upper=upper)`` (Murray 2016, "Differentiation of the
    Cholesky decomposition"). With ``a = L L^T``, the symmetric matrix gets ``L^-T Phi(L^T gL)
    L^-1`` (``Phi``: the lower triangle, its diagonal halved), which the triangle the
    factorization read receives (``triangle_grad``; ``upper`` reads and returns ``U = L^T``).
    Assumes a real, symmetric positive definite matrix."""
    if zero_in(g):
        return zero
    reject_complex(a, "np.linalg.cholesky")
    lower = factor
    g_lower = g
    if upper:
        lower = swap_last_axes(factor)
        g_lower = swap_last_axes(g)
    inverse = np.linalg.inv(lower)
    core = lower_with_half_diagonal(swap_last_axes(lower) @ g_lower)
    return astype_grad(triangle_grad(swap_last_axes(inverse) @ core @ inverse,
                                     "U" if upper else "L"), a)


@zero_in_zero_out("t")
def cholesky_tangent(t, a, factor, upper=False):
    """Tangent of ``np.linalg.cholesky``: ``dL = L Phi(L^-1 dS L^-T)`` for the tangent ``dS`` of
    the symmetric matrix read from ``a``'s triangle (transposed for ``upper``)."""
    if zero_in(t):
        return zero
    reject_complex(a, "np.linalg.cholesky")
    lower = swap_last_axes(factor) if upper else factor
    inverse = np.linalg.inv(lower)
    sym = triangle_tangent(t, "U" if upper else "L")
    change = lower @ lower_with_half_diagonal(inverse @ sym @ swap_last_axes(inverse))
    return as_dtype_of(swap_last_axes(change) if upper else change, factor)


# the tangent transposed in t (@transpose reads it): it moves with the matrix too
@transpose_of(cholesky_tangent)
def _(out, t, a, factor, upper=False):
    d[t] = cholesky_grad(d[out], a, factor, upper)


@transpose(np.linalg.cholesky)
@tangent(np.linalg.cholesky)
def _(out, a, *, upper=False):
    """Real symmetric positive definite ``a``; the triangle read (lower, or upper with
    ``upper``) gets the gradient."""
    d[out] = cholesky_tangent(d[a], a, out, upper)


def qr_message():
    """Why the extra columns of Q of mode "complete" have no derivative."""
    return ('np.linalg.qr(mode="complete") of a tall matrix: its extra columns of Q are an '
            'arbitrary basis of a complement, not determined by the matrix, and have no '
            'derivative; use mode="reduced" (or give them no gradient)')


def qr_mode_check(mode):
    """Refuse the modes without a derivative here."""
    if mode not in ("reduced", "complete", "r"):
        raise NotImplementedError(f'np.linalg.qr(mode="{mode}") has no derivative rule; the '
                                  'modes "reduced", "complete" and "r" have one')


nondifferentiable(qr_message, qr_mode_check)


def copy_lower_to_upper(m):
    """``m``'s lower triangle mirrored onto its upper one."""
    return np.tril(m) + swap_last_axes(np.tril(m, -1))


def qr_square_grad(q, r, g_q, g_r):
    """Gradient of ``(Q, R) = qr(a)`` for a matrix with at least as many rows as columns (Liao et
    al. 2019, "Differentiable programming tensor networks"): with ``M = R gR^T - gQ^T Q``,
    ``ga = (gQ + Q copyltu(M)) R^-T``."""
    m_core = zero
    if not is_zero(g_r):
        m_core = r @ swap_last_axes(g_r)
    if not is_zero(g_q):
        m_core = m_core - swap_last_axes(g_q) @ q
    b = q @ copy_lower_to_upper(m_core)
    if not is_zero(g_q):
        b = b + g_q
    return swap_last_axes(np.linalg.solve(r, swap_last_axes(b)))


@zero_in_zero_out("g")
def qr_grad(g, a, out, mode="reduced"):
    """Gradient of ``np.linalg.qr(a, mode)`` for a real matrix of full rank. A wide matrix
    ``[X, Y]`` (fewer rows than columns) is ``Q [R1, R2]`` with ``X = Q R1`` square: ``Y``
    gets ``Q gR2`` and ``X`` the square gradient with ``gQ + Y gR2^T``."""
    if zero_in(g):
        return zero
    reject_complex(a, "np.linalg.qr")
    qr_mode_check(mode)
    rows = np.shape(a)[-2]
    cols = np.shape(a)[-1]
    k = min(rows, cols)
    if mode == "r":
        both = np.linalg.qr(a)
        q = both[0]
        r = both[1]
        g_q = zero
        g_r = g
    else:
        q = out[0]
        r = out[1]
        g_q = g[0]
        g_r = g[1]
    if mode == "complete" and rows > cols:
        if not is_zero(g_q):
            if np.any(g_q[..., :, k:] != 0):
                raise NotImplementedError(qr_message())
            g_q = g_q[..., :, :k]
        q = q[..., :, :k]
        r = r[..., :k, :]
        if not is_zero(g_r):
            g_r = g_r[..., :k, :]
    if is_zero(g_q) and is_zero(g_r):
        return zero
    if rows >= cols:
        return astype_grad(qr_square_grad(q, r, g_q, g_r), a)
    y = a[..., :, k:]
    g_r1 = zero
    g_y = np.zeros(np.shape(y), np.result_type(a, 1.0))
    if not is_zero(g_r):
        g_r1 = g_r[..., :, :k]
        g_q = g_q + y @ swap_last_axes(g_r[..., :, k:])
        g_y = q @ g_r[..., :, k:]
    g_x = qr_square_grad(q, r[..., :, :k], g_q, g_r1)
    return astype_grad(np.concatenate([g_x, g_y], axis=-1), a)


def qr_square_tangent(t, q, r):
    """Tangent of ``qr`` of a matrix with at least as many rows as columns: with ``C = Q^T t
    R^-1`` and ``W = tril(C, -1) - tril(C, -1)^T`` (``Q^T dQ``), ``dR = (C - W) R`` and
    ``dQ = t R^-1 - Q (C - W)``."""
    t_r_inverse = swap_last_axes(np.linalg.solve(swap_last_axes(r), swap_last_axes(t)))
    c = swap_last_axes(q) @ t_r_inverse
    w = np.tril(c, -1) - swap_last_axes(np.tril(c, -1))
    return t_r_inverse - q @ (c - w), (c - w) @ r


@zero_in_zero_out("t")
def qr_tangent(t, a, out, mode="reduced"):
    """Tangent of ``np.linalg.qr(a, mode)`` for a real matrix of full rank; a wide one's
    ``R2 = Q^T Y`` moves with ``Q`` and ``Y``."""
    if zero_in(t):
        return zero
    reject_complex(a, "np.linalg.qr")
    qr_mode_check(mode)
    rows = np.shape(a)[-2]
    cols = np.shape(a)[-1]
    if mode == "complete" and rows > cols:
        raise NotImplementedError(qr_message())
    if mode == "r":
        both = np.linalg.qr(a)
        q = both[0]
        r = both[1]
    else:
        q = out[0]
        r = out[1]
    if rows >= cols:
        dq, dr = qr_square_tangent(t, q, r)
    else:
        dq, dr1 = qr_square_tangent(t[..., :, :rows], q, r[..., :, :rows])
        dr2 = swap_last_axes(dq) @ a[..., :, rows:] + swap_last_axes(q) @ t[..., :, rows:]
        dr = np.concatenate([dr1, dr2], axis=-1)
    if mode == "r":
        return as_dtype_of(dr, out)
    return TangentTuple((as_dtype_of(dq, q), as_dtype_of(dr, r)))


# the tangent transposed in t (@transpose reads it): it moves with the matrix too
@transpose_of(qr_tangent)
def _(ans, t, a, out, mode="reduced"):
    d[t] = qr_grad(d[ans], a, out, mode)


@transpose(np.linalg.qr)
@tangent(np.linalg.qr)
def _(out, a, mode="reduced"):
    """Real ``a`` of full rank; modes "reduced", "r", and "complete" (of a tall matrix only
    with no gradient on Q's extra columns)."""
    d[out] = qr_tangent(d[a], a, out, mode)



# ----- eig, eigvals: general square matrices -----------------------------------------------
# With distinct eigenvalues. ``a V = V diag(w)``; NumPy (LAPACK's geev) scales each eigenvector
# to norm 1 with its largest entry real: the derivatives below keep both, so they are those of
# the very vectors NumPy returns.


def matched_eigenvectors(a, w):
    """The eigenvectors of ``a`` for the eigenvalues ``w`` (in ``w``'s order)."""
    both = np.linalg.eig(a)
    order = np.argmin(np.abs(np.expand_dims(w, -1) - np.expand_dims(both[0], -2)), axis=-1)
    return np.take_along_axis(both[1], np.expand_dims(order, -2), axis=-1)


def largest_entries(v):
    """The row of each column's entry of largest magnitude, as a ``(..., 1, n)`` index."""
    return np.expand_dims(np.argmax(np.abs(v), axis=-2), -2)


nondifferentiable(matched_eigenvectors, largest_entries)


@zero_in_zero_out("g")
def eig_grad(g, a, out, vectors=True):
    """Gradient of ``np.linalg.eig(a)`` (``vectors``; else of ``eigvals``), the transpose of
    ``eig_tangent``: the eigenvectors' cotangent ``gV`` first takes back the fixing of each
    vector's phase (its largest entry real) and of its norm, then with ``P = V^-1 da V``,
    ``dw = diag(P)`` and ``dV = V (F o P)``: ``ga = V^-T (diag(gw) + F o (V^T gV)) V^T``. A real
    ``a`` takes the real part."""
    if zero_in(g):
        return zero
    if vectors:
        w = out[0]
        v = out[1]
        g_w = g[0]
        g_v = g[1]
    else:
        w = out
        v = matched_eigenvectors(a, w)
        g_w = g
        g_v = zero
    if is_zero(g_w) and is_zero(g_v):
        return zero
    n = np.shape(a)[-1]
    core = zero
    if not is_zero(g_w):
        core = np.expand_dims(g_w, -2) * np.eye(n)
    if not is_zero(g_v):
        rows = largest_entries(v)
        pivot = np.take_along_axis(v, rows, axis=-2)
        turn = np.imag(np.sum(g_v * v, axis=-2, keepdims=True)) / np.real(pivot)
        g_v = g_v - 1j * turn * (np.arange(n)[:, None] == rows)
        g_v = g_v - np.conj(v) * np.real(np.sum(g_v * v, axis=-2, keepdims=True))
        core = core + inverse_gaps(w) * (swap_last_axes(v) @ g_v)
    grad = np.linalg.solve(swap_last_axes(v), core @ swap_last_axes(v))
    return astype_grad(grad, a)


@zero_in_zero_out("t")
def eig_tangent(t, a, out, vectors=True):
    """Tangent of ``np.linalg.eig(a)`` (``vectors``; else of ``eigvals``): with
    ``P = V^-1 t V`` and ``F_ij = 1 / (w_j - w_i)``, ``dw = diag(P)`` and ``dV = V (F o P)``,
    less ``V Re(diag(V^H dV))`` (the norm stays 1) and ``i V Im(dV_jk / V_jk)`` for each
    column's largest entry ``j`` (it stays real)."""
    if zero_in(t):
        return zero
    if vectors:
        w = out[0]
        v = out[1]
    else:
        w = out
        v = matched_eigenvectors(a, w)
    p = np.linalg.solve(v, t @ v)
    dw = np.diagonal(p, 0, -2, -1)
    if not vectors:
        return as_dtype_of(dw if np.iscomplexobj(w) else np.real(dw), w)
    dv = v @ (inverse_gaps(w) * p)
    dv = dv - v * np.real(np.sum(np.conj(v) * dv, axis=-2, keepdims=True))
    rows = largest_entries(v)
    pivot = np.take_along_axis(v, rows, axis=-2)
    dv = dv - 1j * v * np.imag(np.take_along_axis(dv, rows, axis=-2)) / np.real(pivot)
    return TangentTuple((as_dtype_of(dw if np.iscomplexobj(w) else np.real(dw), w),
                         as_dtype_of(dv if np.iscomplexobj(v) else np.real(dv), v)))


# the tangent transposed in t (@transpose reads it): it moves with the matrix too
@transpose_of(eig_tangent)
def _(ans, t, a, out, vectors=True):
    d[t] = eig_grad(d[ans], a, out, vectors)


@transpose(np.linalg.eig)
@tangent(np.linalg.eig)
def _(out, a):
    """Distinct eigenvalues; the eigenvectors as NumPy returns them (norm 1, largest entry
    real)."""
    d[out] = eig_tangent(d[a], a, out)


@transpose(np.linalg.eigvals)
@tangent(np.linalg.eigvals)
def _(out, a):
    """Distinct eigenvalues."""
    d[out] = eig_tangent(d[a], a, out, False)
