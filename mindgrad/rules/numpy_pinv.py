"""Rules for ``np.linalg.pinv``, in both directions, for real and complex matrices (stacks too),
of full rank or not.

``pinv`` inverts the singular values above its cutoff (``rcond`` or ``rtol`` times the largest)
and drops the others. Where no singular value is dropped, the derivative is Golub and Pereyra's
(1973), made of ``pinv`` itself and products, so higher orders follow. Where some are dropped,
the pseudo-inverse is a function of the SVD ``a = U S V^H`` (``U``, ``V`` square):
``pinv(a) = V f(S)^T U^H`` with ``f(s) = 1/s`` kept, ``0`` dropped, whose derivative in the
direction ``t`` is ``V X U^H`` with ``P = U^H t V`` (padded with zeros to a square) and::

    X_ij = -f_i f_j P_ij                                       i, j both kept
    X_ij = ((f_j s_i - f_i s_j) P_ij + (f_j s_j - f_i s_i) conj(P_ji)) / (s_j^2 - s_i^2)
                                                               one kept, one dropped
    X_ij = 0                                                   both dropped

This is the derivative wherever the rank ``pinv`` keeps is locally constant: with a cutoff that
perturbations do not cross (a singular value dropped stays dropped). A singular value exactly
at the cutoff has none. With the default cutoff a matrix of lower rank gains rank under almost
every perturbation, and the pseudo-inverse jumps; the formula then gives the derivative along
the perturbations that keep the rank (the matrices of that rank), as JAX does. Its second
derivative is not implemented: it raises ``NotImplementedError``.
"""

import numpy as np

from mindgrad.rules import adjoint, d, nondifferentiable, tangent, transpose, transpose_of
from mindgrad.rules.helpers import astype_grad, conj_if_complex
from mindgrad.rules.numpy_decompositions import conj_transpose, triangle_grad, triangle_tangent
from mindgrad.rules.numpy_linalg import pinv_grad, pinv_tangent
from mindgrad.runtime import zero, zero_in, zero_in_zero_out
from mindgrad.runtime.arrays import as_array
from mindgrad.runtime.tangents import as_dtype_of


def cutoff_of(s, a, rcond=None, rtol="unset"):
    """The singular values ``np.linalg.pinv(a, rcond, rtol=rtol)`` keeps are those above this
    (one per matrix of a stack); ``rtol="unset"`` stands for the keyword left out."""
    if rcond is None:
        if rtol == "unset":
            rcond = 1e-15
        elif rtol is None:
            rcond = max(np.shape(a)[-2:]) * np.finfo(np.result_type(a, 1.0)).eps
        else:
            rcond = rtol
    return as_array(rcond)[..., None] * np.max(s, axis=-1, keepdims=True)


def read_matrix(a, hermitian=False):
    """The matrix ``pinv`` inverts: ``a``, or with ``hermitian`` the Hermitian matrix of its
    lower triangle."""
    return triangle_tangent(a, "L") if hermitian else a


def drops_any(a, rcond=None, hermitian=False, rtol="unset"):
    """Whether ``pinv`` drops a singular value of (a matrix of) ``a``."""
    s = np.linalg.svd(read_matrix(a, hermitian), compute_uv=False)
    return bool(np.any(s <= cutoff_of(s, a, rcond, rtol)))


nondifferentiable(cutoff_of, drops_any)


def no_second_derivative(a):
    """``a`` itself: marks where the derivative of ``pinv`` of a matrix it drops singular
    values of reads ``a``, so that differentiating that derivative again raises."""
    return a


def refuse_second_derivative(a):
    raise NotImplementedError(
        "the second derivative of np.linalg.pinv of a matrix some of whose singular values it "
        "drops (a rank-deficient matrix, or rcond/rtol cutting some off) is not implemented; "
        "the first derivative is")


nondifferentiable(refuse_second_derivative)


@adjoint(no_second_derivative)
def _(out, a):
    d[a] = refuse_second_derivative(a)


@tangent(no_second_derivative)
def _(out, a):
    d[out] = refuse_second_derivative(a)


def pad_square(x, size):
    """``x`` with zero rows and columns after its own, ``size`` by ``size``."""
    m, n = np.shape(x)[-2:]
    pad = [(0, 0)] * (np.ndim(x) - 2) + [(0, size - m), (0, size - n)]
    return np.pad(x, pad)


def truncated_coefficients(s, kept, size):
    """``(alpha, beta)``: ``X = alpha o P + beta o P^H`` (the module's docstring), ``size`` by
    ``size``, for the singular values ``s`` and which of them are ``kept``."""
    pad = [(0, 0)] * (np.ndim(s) - 1) + [(0, size - np.shape(s)[-1])]
    s = np.pad(s, pad)
    kept = np.pad(kept, pad)
    f = np.where(kept, 1.0 / np.where(kept, s, 1.0), 0.0)
    s_i, s_j = s[..., :, None], s[..., None, :]
    f_i, f_j = f[..., :, None], f[..., None, :]
    k_i, k_j = kept[..., :, None], kept[..., None, :]
    one = np.not_equal(k_i, k_j)
    gap = np.where(one, s_j * s_j - s_i * s_i, 1.0)
    both = np.logical_and(k_i, k_j)
    alpha = np.where(both, -f_i * f_j, np.where(one, (f_j * s_i - f_i * s_j) / gap, 0.0))
    beta = np.where(one, (f_j * s_j - f_i * s_i) / gap, 0.0)
    return alpha, beta


def truncated_svd(a, rcond=None, hermitian=False, rtol="unset"):
    """The full SVD of the matrix ``pinv`` reads and which singular values it keeps."""
    u, s, vh = np.linalg.svd(read_matrix(no_second_derivative(a), hermitian))
    return u, vh, s, s > cutoff_of(s, a, rcond, rtol)


def truncated_pinv_grad(g, a, rcond=None, hermitian=False, rtol="unset"):
    """Gradient of ``pinv(a)`` dropping some singular values (the module's docstring):
    ``conj(U) [G~ o alpha + (conj(G~) o beta)^T] V^T`` for ``G~ = V^T g conj(U)`` (padded),
    the square bracket cut to ``a``'s shape."""
    u, vh, s, kept = truncated_svd(a, rcond, hermitian, rtol)
    m, n = np.shape(a)[-2:]
    size = max(m, n)
    alpha, beta = truncated_coefficients(s, kept, size)
    gt = pad_square(conj_if_complex(vh) @ g @ conj_if_complex(u), size)
    h = gt * alpha + np.swapaxes(conj_if_complex(gt) * beta, -1, -2)
    return conj_if_complex(u) @ h[..., :m, :n] @ conj_if_complex(vh)


def truncated_pinv_tangent(t, a, rcond=None, hermitian=False, rtol="unset"):
    """Tangent of ``pinv(a)`` dropping some singular values: ``V X U^H`` (the module's
    docstring)."""
    u, vh, s, kept = truncated_svd(a, rcond, hermitian, rtol)
    m, n = np.shape(a)[-2:]
    size = max(m, n)
    alpha, beta = truncated_coefficients(s, kept, size)
    p = pad_square(conj_transpose(u) @ t @ conj_transpose(vh), size)
    x = alpha * p + beta * conj_transpose(p)
    return conj_transpose(vh) @ x[..., :n, :m] @ conj_transpose(u)


@zero_in_zero_out("g")
def pinv_any_rank_grad(g, a, p, rcond=None, hermitian=False, rtol="unset"):
    """Gradient of ``p = np.linalg.pinv(a, rcond, hermitian, rtol=rtol)``; with ``hermitian``
    the lower triangle, read as a Hermitian matrix, gets it."""
    if zero_in(g):
        return zero
    if not drops_any(a, rcond, hermitian, rtol):
        return pinv_grad(g, a, p, hermitian)
    grad = truncated_pinv_grad(g, a, rcond, hermitian, rtol)
    if hermitian:
        grad = triangle_grad(grad, "L")
    return astype_grad(grad, a)


@zero_in_zero_out("t")
def pinv_any_rank_tangent(t, a, p, rcond=None, hermitian=False, rtol="unset"):
    """Tangent of ``p = np.linalg.pinv(a, rcond, hermitian, rtol=rtol)``."""
    if zero_in(t):
        return zero
    if not drops_any(a, rcond, hermitian, rtol):
        return pinv_tangent(t, a, p, hermitian)
    if hermitian:
        t = triangle_tangent(t, "L")
    return as_dtype_of(truncated_pinv_tangent(t, a, rcond, hermitian, rtol), p)


# the tangent transposed in t (@transpose reads it): it moves with the matrix too
@transpose_of(pinv_any_rank_tangent)
def _(out, t, a, p, rcond=None, hermitian=False, rtol="unset"):
    d[t] = pinv_any_rank_grad(d[out], a, p, rcond, hermitian, rtol)


@transpose(np.linalg.pinv)
@tangent(np.linalg.pinv)
def _(out, a, rcond=None, hermitian=False, *, rtol="unset"):
    """Real or complex ``a``; where ``rcond``/``rtol`` drop singular values, the derivative
    where the rank is locally constant (along rank-keeping perturbations otherwise), to first
    order only."""
    d[out] = pinv_any_rank_tangent(d[a], a, out, rcond, hermitian, rtol)
