"""The rules of mindgrad/rules/numpy_decompositions.py, numpy_linalg.py and numpy_products.py
for cholesky, qr, eig, eigvals, pinv, lstsq, matrix_power, multi_dot, cond, and the np.linalg
names of NumPy 2 (vector_norm, matrix_norm,
outer, tensordot, matmul, matrix_transpose, diagonal, trace, cross), in both directions; a
Cholesky log-determinant, least squares and the others through the transformer to second order;
the refusals (complete Q of a tall matrix, rank-deficient pseudo-inverses). The checks:
tests/support/rule_check.py.
"""

import numpy as np
import pytest

import mindgrad
from mindgrad.rules import jvp_of, vjp_of
from tests.support.inputs import Draw
from tests.support.rule_check import ADJOINT, Cases, rule_tests

draw = Draw(20261126)
r, f, x32, well_conditioned = draw.r, draw.f, draw.x32, draw.well_conditioned
separated, symmetric_in = draw.separated, draw.symmetric_in
ARRAY_API = hasattr(np.linalg, "vector_norm")  # NumPy >= 2.0


def positive_definite_in(uplo, *shape):
    """Symmetric positive definite matrices in the ``uplo`` triangle, noise in the other (the
    factorization does not read it)."""
    base = draw.normal(*shape)
    spd = base @ np.swapaxes(base, -1, -2) + shape[-1] * np.eye(shape[-1])
    noise = draw.normal(*shape)
    return spd + (np.triu(noise, 1) if uplo == "L" else np.tril(noise, -1))


def real_eigenvalues(*shape):
    """Real matrices with real eigenvalues 0.7 or more apart (``S diag(w) S^-1``)."""
    n = shape[-1]
    s = well_conditioned(*shape)
    w = 1.0 + 0.8 * np.arange(n)
    return (s * w) @ np.linalg.inv(s)


def complex_pair(*shape):
    """Real matrices with a complex pair of eigenvalues and real ones, all apart."""
    n = shape[-1]
    s = well_conditioned(*shape)
    core = np.diag(1.0 + 0.9 * np.arange(n))
    core[0:2, 0:2] = [[1.0, 1.5], [-1.5, 1.0]]
    return s @ core @ np.linalg.inv(s)


def zero_extra_columns(out, values):
    """mode="complete" of a tall matrix: Q's extra columns are no function of the matrix."""
    k = np.shape(out[1])[-1]
    q = values[0]
    if not np.isscalar(q):
        q = np.concatenate([q[..., :, :k], np.zeros_like(q[..., :, k:])], axis=-1)
    return (q, values[1])


CASES = Cases()
case = CASES.add

for shape in [(1, 1), (3, 3), (2, 4, 4)]:
    case(np.linalg.cholesky, positive_definite_in("L", *shape))
    if ARRAY_API:  # upper=: NumPy >= 2.0
        case(np.linalg.cholesky, positive_definite_in("U", *shape), upper=True)

for shape in [(3, 3), (4, 3), (3, 5), (2, 4, 3), (2, 3, 4)]:
    case(np.linalg.qr, r(*shape))
    case(np.linalg.qr, r(*shape), "r")
case(np.linalg.qr, r(3, 3), mode="complete")
case(np.linalg.qr, r(3, 5), mode="complete")
case(np.linalg.qr, r(4, 3), mode="complete", fix=zero_extra_columns, only=ADJOINT)

for a in (real_eigenvalues(3, 3), complex_pair(3, 3), real_eigenvalues(2, 3, 3),
          complex_pair(2, 4, 4), well_conditioned(3, 3) + 1j * r(3, 3)):
    case(np.linalg.eig, a)
    case(np.linalg.eigvals, a)
case(np.linalg.eig, complex_pair(3, 3), zero_cotangent=(1,), label="eig-values-only",
     only=ADJOINT)

for a in (well_conditioned(3, 3), r(4, 3), r(3, 5), r(2, 4, 3)):
    case(np.linalg.pinv, a)
case(np.linalg.pinv, symmetric_in("L", 3, 3), hermitian=True)
for a, b in [(r(5, 3), r(5)), (r(5, 3), r(5, 2)), (well_conditioned(3, 3), r(3)),
             (r(2, 4), r(2)), (r(2, 4), r(2, 3))]:
    case(np.linalg.lstsq, a, b, rcond=None)

for n in (0, 1, 2, 3, -1, -2):
    case(np.linalg.matrix_power, well_conditioned(3, 3) / 3.0, n)
case(np.linalg.matrix_power, well_conditioned(2, 3, 3) / 3.0, 3)

case(np.linalg.multi_dot, [r(2, 3), r(3, 4)])
case(np.linalg.multi_dot, [r(3), r(3, 4), r(4, 2)])
case(np.linalg.multi_dot, [r(2, 3), r(3, 4), r(4)])
case(np.linalg.multi_dot, [r(3), r(3, 4), r(4, 2), r(2)])

for p in (None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf):
    case(np.linalg.cond, well_conditioned(3, 3), p)
case(np.linalg.cond, separated(2, 3, 3))
case(np.linalg.cond, separated(2, 3, 3), -2)
case(np.linalg.cond, well_conditioned(2, 3, 3), "fro")

if ARRAY_API:
    case(np.linalg.vector_norm, r(5))
    case(np.linalg.vector_norm, f())
    case(np.linalg.vector_norm, r(3, 4))
    case(np.linalg.vector_norm, r(3, 4), axis=-1)
    case(np.linalg.vector_norm, r(2, 3, 4), axis=(0, 2), keepdims=True)
    case(np.linalg.vector_norm, r(2, 3, 4), axis=(2, 1))
    case(np.linalg.vector_norm, r(1, 4), axis=0, keepdims=True)
    for order in (1, np.inf, -np.inf, 3, 0.5, 0):
        case(np.linalg.vector_norm, r(3, 4), ord=order, axis=(0, 1), constant_keywords=("ord",))
    for order in ("fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf):
        case(np.linalg.matrix_norm, r(3, 4), ord=order, constant_keywords=("ord",))
    case(np.linalg.matrix_norm, r(2, 3, 4), keepdims=True)
    case(np.linalg.matrix_norm, r(2, 3, 3), ord="nuc")
    case(np.linalg.outer, r(3), r(4))
    case(np.linalg.tensordot, r(2, 3, 4), r(3, 4, 5))
    case(np.linalg.tensordot, r(2, 3), r(3, 4), axes=1)
    case(np.linalg.tensordot, r(2, 3, 4), r(4, 2, 5), axes=([0, 2], [1, 0]))
    case(np.linalg.matmul, r(2, 3), r(3, 4))
    case(np.linalg.matmul, r(2, 2, 3), r(3))
    case(np.linalg.matmul, r(3), r(2, 3, 4))
    case(np.linalg.matrix_transpose, r(2, 3, 4))
    case(np.linalg.diagonal, r(3, 4))
    case(np.linalg.diagonal, r(2, 3, 4), offset=1)
    case(np.linalg.diagonal, r(2, 4, 3), offset=-1)
    case(np.linalg.trace, r(3, 4))
    case(np.linalg.trace, r(2, 3, 3), offset=1)
    case(np.linalg.cross, r(3), r(4, 3))
    case(np.linalg.cross, r(3, 4), r(3, 4), axis=0)

FLOAT32 = Cases()
FLOAT32.add(np.linalg.cholesky, positive_definite_in("L", 3, 3).astype(np.float32))
FLOAT32.add(np.linalg.qr, x32(4, 3), "r")
FLOAT32.add(np.linalg.pinv, x32(4, 3))
FLOAT32.add(np.linalg.eigvals, real_eigenvalues(3, 3).astype(np.float32))
FLOAT32.add(np.linalg.matrix_power, (well_conditioned(3, 3) / 3.0).astype(np.float32), 3)
FLOAT32.add(np.linalg.multi_dot, [x32(2, 3), x32(3, 4), x32(4)])
FLOAT32.add(np.linalg.cond, well_conditioned(3, 3).astype(np.float32))
if ARRAY_API:
    FLOAT32.add(np.linalg.vector_norm, x32(3, 4), axis=(0, 1))
    FLOAT32.add(np.linalg.matrix_norm, x32(3, 4))

globals().update(rule_tests(CASES, FLOAT32))


# ----- through the transformer, to second order ------------------------------------------


def cholesky_logdet(a):
    return 2.0 * np.sum(np.log(np.diagonal(np.linalg.cholesky(a), 0, -2, -1)))


def test_cholesky_log_determinant_is_the_log_determinant():
    a = positive_definite_in("L", 4, 4)
    symmetric = np.tril(a) + np.tril(a, -1).T
    np.testing.assert_allclose(cholesky_logdet(a), np.linalg.slogdet(symmetric)[1])
    # d logdet / dS = S^-1; the lower triangle reads each off-diagonal entry twice
    inverse = np.linalg.inv(symmetric)
    np.testing.assert_allclose(mindgrad.grad(cholesky_logdet)(a),
                               np.tril(2.0 * inverse, -1) + np.diag(np.diag(inverse)),
                               rtol=1e-10)


def cholesky_quadratic(a, b):
    factor = np.linalg.cholesky(a, upper=True) if ARRAY_API else np.linalg.cholesky(a).T
    return np.sum(np.linalg.solve(factor, b) ** 2) + cholesky_logdet(a)


def qr_loss(a):
    q, r_ = np.linalg.qr(a)
    return np.sum(np.tanh(q) * np.arange(q.shape[-1])) + np.sum(np.triu(r_) ** 3)


def eig_loss(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.real(w) ** 2 + np.imag(w) * np.arange(w.shape[-1])) + \
        np.sum(np.abs(v) ** 3)


def pinv_loss(a):
    return np.sum(np.sin(np.linalg.pinv(a)))


def least_squares(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=None)
    return np.sum(x ** 3) + np.sum(residuals) + np.sum(s)


def powers_and_chains(a):
    return np.sum(np.linalg.matrix_power(a, 3) * np.linalg.matrix_power(a, -1)) + \
        np.sum(np.linalg.multi_dot([a, a.T, a]) ** 2) + np.linalg.cond(a) + np.linalg.cond(a, 1)


SECOND_ORDER = [(cholesky_logdet, (positive_definite_in("L", 3, 3),)),
                (cholesky_quadratic, (positive_definite_in("U", 3, 3), r(3, 2))),
                (qr_loss, (r(4, 3),)), (qr_loss, (r(2, 4),)),
                (eig_loss, (complex_pair(3, 3),)),
                (pinv_loss, (r(4, 3),)), (least_squares, (r(5, 3), r(5))),
                (powers_and_chains, (well_conditioned(3, 3) / 3.0,))]


@pytest.mark.parametrize("fn, args", SECOND_ORDER,
                         ids=[f"{fn.__name__}-{'x'.join(map(str, args[0].shape))}"
                              for fn, args in SECOND_ORDER])
def test_factorizations_to_second_order(fn, args):
    mindgrad.check_grads(fn, args, order=2, modes=("rev", "fwd"), directions=1)


# ----- what has no derivative is refused, not guessed --------------------------------------


def test_complete_q_of_a_tall_matrix_has_no_derivative():
    a = r(4, 3)
    _, vjp = vjp_of(np.linalg.qr, a, "complete")
    with pytest.raises(NotImplementedError, match="complete"):
        vjp((np.ones((4, 4)), 0))
    _, jvp = jvp_of(np.linalg.qr, a, "complete")
    with pytest.raises(NotImplementedError, match="complete"):
        jvp(np.ones_like(a))


def test_rank_deficient_least_squares_is_refused():
    a = r(4, 2) @ r(2, 3)  # rank 2 of 3
    _, vjp = vjp_of(np.linalg.lstsq, a, r(4), rcond=None)
    with pytest.raises(NotImplementedError, match="rank-deficient"):
        vjp((np.ones(3), 0, 0, 0))


def test_qr_of_raw_mode_and_complex_factorizations_say_so():
    _, vjp = vjp_of(np.linalg.qr, r(3, 3), "raw")
    with pytest.raises(NotImplementedError, match="raw"):
        vjp((np.ones((3, 3)), np.ones(3)))
    a = positive_definite_in("L", 3, 3) + 0j
    _, vjp = vjp_of(np.linalg.cholesky, a)
    with pytest.raises(NotImplementedError, match="real matrices"):
        vjp(np.ones((3, 3)))


def test_matrix_rank_is_a_constant():
    def ranked(a):
        return np.sum(a) * np.linalg.matrix_rank(a)

    a = r(3, 3)
    np.testing.assert_allclose(mindgrad.grad(ranked)(a), np.full((3, 3), 3.0))
