"""The rules for scipy.linalg (mindgrad/rules/scipy_linalg.py), in both directions: det, inv,
solve, solve_triangular (every trans, lower, unit_diagonal), solve_sylvester, expm, sqrtm,
cholesky, cho_factor and cho_solve (both triangles; the other triangle gets no gradient),
lu_factor and lu_solve (every trans), on single matrices and stacks; the structures they
refuse; second order through the transformer. The checks: tests/support/rule_check.py.
Skipped where SciPy is not installed.
"""

import numpy as np
import pytest

sl = pytest.importorskip("scipy.linalg")

import mindgrad  # noqa: E402
from mindgrad.rules import vjp_of  # noqa: E402
from tests.support.inputs import Draw  # noqa: E402
from tests.support.rule_check import Cases, rule_tests  # noqa: E402

draw = Draw(20261127)
r, x32, well_conditioned = draw.r, draw.x32, draw.well_conditioned
CASES = Cases()
case = CASES.add

for shape in [(1, 1), (3, 3), (2, 3, 3)]:
    case(sl.det, well_conditioned(*shape))
    case(sl.inv, well_conditioned(*shape))
    case(sl.expm, 0.5 * r(*shape))
case(sl.expm, r(4, 4))
case(sl.inv, well_conditioned(3, 3), assume_a="general")
case(sl.solve, well_conditioned(3, 3), r(3))
case(sl.solve, well_conditioned(3, 3), r(3, 2))
case(sl.solve, well_conditioned(1, 1), r(1))
case(sl.solve, well_conditioned(3, 3), r(3, 1), check_finite=False)
case(sl.solve, well_conditioned(3, 3), r(3), assume_a="gen")
for trans in (0, 1, 2, "N", "T"):
    for lower in (False, True):
        case(sl.solve_triangular, well_conditioned(3, 3), r(3), trans, lower)
        case(sl.solve_triangular, well_conditioned(3, 3), r(3, 2), trans=trans, lower=lower,
             unit_diagonal=True)
case(sl.solve_triangular, well_conditioned(1, 1), r(1, 2))
for shape in [(3, 3), (1, 1), (2, 3, 3)]:
    case(sl.solve_sylvester, well_conditioned(*shape), well_conditioned(*shape), r(*shape))
    case(sl.sqrtm, well_conditioned(*shape))
case(sl.solve_sylvester, well_conditioned(3, 3), well_conditioned(2, 2), r(3, 2))
for shape in [(4, 4), (1, 1), (3, 3)]:
    case(sl.lu_factor, r(*shape))
pivoted = sl.lu_factor(r(4, 4))
for trans in (0, 1, 2):
    case(sl.lu_solve, pivoted, r(4), trans)
    case(sl.lu_solve, pivoted, r(4, 2), trans=trans)
case(sl.lu_solve, sl.lu_factor(r(1, 1)), r(1))


def positive_definite(*shape):
    """Symmetric positive definite matrices, plus noise on the entries off the triangle a
    Cholesky factorization reads: its gradient must stay on that triangle."""
    m = r(*shape)
    spd = np.matmul(m, np.swapaxes(m, -1, -2)) + 3.0 * np.eye(shape[-1])
    return spd + 0.3 * np.triu(r(*shape), 1)


for lower in (False, True):
    for shape in [(3, 3), (1, 1), (2, 3, 3)]:
        a = positive_definite(*shape)
        case(sl.cholesky, a if lower else np.swapaxes(a, -1, -2), lower=lower)
        case(sl.cho_factor, a if lower else np.swapaxes(a, -1, -2), lower)
    factored = sl.cho_factor(positive_definite(3, 3), lower=lower)
    case(sl.cho_solve, factored, r(3))
    case(sl.cho_solve, factored, r(3, 2))
    case(sl.cho_solve, sl.cho_factor(positive_definite(2, 3, 3), lower=lower), r(2, 3, 2))
    case(sl.cho_solve, (factored[0] + 0.5 * np.triu(r(3, 3), 1) if lower else
                        factored[0] + 0.5 * np.tril(r(3, 3), -1), lower), r(3, 1),
         label="cho_solve-other-triangle-ignored")

# the solvers as the rules call them on a gradient or tangent (the zero for the zero): the
# same rules as SciPy's functions, so the same numbers
from mindgrad.rules import scipy_linalg as sl_rules  # noqa: E402  (SciPy imported above)

case(sl_rules.linear_solve_triangular, well_conditioned(3, 3), r(3, 2), "T", True)
case(sl_rules.linear_solve_triangular, well_conditioned(3, 3), r(3), 0, False, True)
case(sl_rules.linear_solve_sylvester, well_conditioned(3, 3), well_conditioned(2, 2), r(3, 2))
case(sl_rules.linear_cho_solve, sl.cho_factor(positive_definite(3, 3), lower=True), r(3, 2))
case(sl_rules.linear_lu_solve, pivoted, r(4), 1)
case(sl_rules.linear_lu_solve, pivoted, r(4, 2))

FLOAT32 = Cases()
FLOAT32.add(sl.expm, x32(3, 3))
FLOAT32.add(sl.inv, well_conditioned(3, 3).astype(np.float32))

globals().update(rule_tests(CASES, FLOAT32))


def test_expm_gradient_matches_scipy_expm_frechet():
    a, g = r(3, 3), r(3, 3)
    _, vjp = vjp_of(sl.expm, a)
    np.testing.assert_allclose(vjp(g)[0], sl.expm_frechet(a.T, g, compute_expm=False),
                               rtol=1e-10, atol=1e-12)


def test_solve_triangular_gives_no_gradient_outside_its_triangle():
    a = well_conditioned(3, 3)
    _, vjp = vjp_of(sl.solve_triangular, a, r(3), lower=True, unit_diagonal=True)
    ga = vjp(r(3))[0]
    assert np.all(np.triu(ga) == 0) and np.any(ga != 0)


@pytest.mark.parametrize("call", [
    lambda a, b: sl.solve(a, b, assume_a="pos"),
    lambda a, b: sl.solve(a, b, transposed=True),
    lambda a, b: sl.inv(a, assume_a="pos") @ b,
])
def test_structured_solves_are_refused(call):
    a = well_conditioned(3, 3)
    a = a @ a.T

    def f(a, b):
        return np.sum(call(a, b))

    with pytest.raises(NotImplementedError, match="general matrix only"):
        mindgrad.grad(f)(a, r(3))
    with pytest.raises(NotImplementedError, match="general matrix only"):
        mindgrad.jvp(f, (a, r(3)), (r(3, 3), r(3)))


def quadratic_form(a, b):
    x = sl.solve(a, b)
    return x @ x + sl.det(a) + np.sum(sl.inv(a) ** 2)


def triangular(a, b):
    return np.sum(sl.solve_triangular(a, b, trans="T", lower=True) ** 2)


def exponential(a):
    return np.sum(sl.expm(a) ** 2)


def square_root(a, q):
    return np.sum(sl.sqrtm(a) * q) + np.sum(sl.solve_sylvester(a, a.T, q) ** 2)


def gaussian_process(a, b):
    factored = sl.cho_factor(a, lower=True)
    alpha = sl.cho_solve(factored, b)
    return b @ alpha + 2.0 * np.sum(np.log(np.diag(factored[0])))


def cholesky_upper(a):
    return np.sum(sl.cholesky(a) ** 3)


def test_cholesky_of_a_symmetric_matrix_matches_the_general_gradient():
    """On a symmetric input, the gradient on the triangle read is what a symmetric
    perturbation of both triangles gives: summed with its mirror, it is the gradient of the
    log-determinant, inv(a), doubled off the diagonal."""
    a = positive_definite(3, 3)
    a = np.triu(a) + np.triu(a, 1).T

    def logdet(a):
        return 2.0 * np.sum(np.log(np.diag(sl.cholesky(a))))

    g = mindgrad.grad(logdet)(a)
    inv = np.linalg.inv(a)
    np.testing.assert_allclose(g, np.triu(2.0 * inv) - np.diag(np.diag(inv)), rtol=1e-10)


def lu_solved(a, b):
    factored = sl.lu_factor(a)
    return np.sum(sl.lu_solve(factored, b, trans=1) ** 2) + np.sum(factored[0] ** 2)


def test_lu_factor_of_a_stack_is_refused():
    with pytest.raises(NotImplementedError, match="one square matrix"):
        mindgrad.grad(lambda a: np.sum(sl.lu_factor(a)[0]))(r(2, 3, 3))


def test_lu_factor_pivots_are_used():
    """The pivots of this matrix swap rows: the gradient puts them back."""
    a = np.array([[1.0, 2.0, 0.5], [4.0, 1.0, 0.3], [0.2, 3.0, 1.0]])
    assert list(sl.lu_factor(a)[1]) != [0, 1, 2]
    mindgrad.check_grads(lambda a: np.sum(sl.lu_factor(a)[0] ** 2), (a,), modes=("rev", "fwd"))


def test_sqrtm_of_a_matrix_with_a_complex_root_is_refused():
    with pytest.raises(NotImplementedError, match="square root is real"):
        mindgrad.grad(lambda a: np.sum(sl.sqrtm(a).real))(np.diag([-1.0, 2.0]))


def test_sqrtm_gradient_by_its_defining_equation():
    """d sqrtm(a)[e] solves x dx + dx x = e, so sqrtm(a + h e) ~ x + h dx."""
    a, e = well_conditioned(3, 3), r(3, 3)
    _, tangent = mindgrad.jvp(sl.sqrtm, (a,), (e,))
    x = sl.sqrtm(a)
    np.testing.assert_allclose(x @ tangent + tangent @ x, e, atol=1e-10)


@pytest.mark.parametrize("fn, args", [
    (quadratic_form, (well_conditioned(3, 3), r(3))),
    (triangular, (well_conditioned(3, 3), r(3, 2))),
    (exponential, (0.5 * r(3, 3),)),
    (square_root, (well_conditioned(3, 3), r(3, 3))),
    (gaussian_process, (positive_definite(3, 3).T, r(3))),
    (cholesky_upper, (positive_definite(3, 3),)),
    (lu_solved, (r(4, 4), r(4, 2))),
])
def test_to_second_order(fn, args):
    mindgrad.check_grads(fn, args, order=2, modes=("rev", "fwd"))


# ----- logm, solve_banded ------------------------------------------------------------------

LATER = Cases()
for shape in [(3, 3), (1, 1), (4, 4)]:
    LATER.add(sl.logm, well_conditioned(*shape))
LATER.add(sl.logm, well_conditioned(3, 3) + 0.5j * r(3, 3), label="logm-complex")


def band(lower, upper, n):
    """A diagonally dominant matrix of bandwidths (lower, upper) in solve_banded's storage."""
    ab = r(lower + upper + 1, n)
    ab[upper] += 4.0
    return ab


for lower, upper in [(1, 1), (0, 2), (2, 0), (1, 2), (0, 0)]:
    LATER.add(sl.solve_banded, (lower, upper), band(lower, upper, 5), r(5))
    LATER.add(sl.solve_banded, (lower, upper), band(lower, upper, 5), r(5, 2))
LATER.add(sl.solve_banded, (1, 1), band(1, 1, 1), r(1))
LATER.add(sl_rules.linear_solve_banded, (1, 2), band(1, 2, 5), r(5, 2))
CASES.extend(LATER)
LATER_F32 = Cases()
LATER_F32.add(sl.solve_banded, (1, 1), band(1, 1, 4).astype(np.float32), x32(4))
LATER_F32.add(sl.logm, well_conditioned(3, 3).astype(np.float32), only=("adjoint",))
globals().update({name + "_logm_banded": test
                  for name, test in rule_tests(LATER, LATER_F32).items()})


def test_logm_tangent_matches_scipy_expm_frechet_inverted():
    """exp(log(a)) = a: the tangent t of logm in e satisfies expm_frechet(log(a), t) = e."""
    a, e = well_conditioned(3, 3), r(3, 3)
    log, t = mindgrad.jvp(sl.logm, (a,), (e,))
    np.testing.assert_allclose(sl.expm_frechet(log, t, compute_expm=False), e, atol=1e-9)


def test_logm_on_the_branch_cut_is_refused():
    with pytest.raises(NotImplementedError, match="branch cut"):
        mindgrad.grad(lambda a: np.sum(np.real(sl.logm(a))))(np.diag([-1.0, 2.0]))


def test_solve_banded_matches_the_dense_solve():
    """The gradient for ab is the dense gradient -g_b x^T read on the band; its unused corners
    get none."""
    ab, b = band(1, 2, 5), r(5)
    dense = sum(np.diag(ab[r_, max(0, 2 - r_):5 + min(0, 2 - r_)], 2 - r_) for r_ in range(4))
    np.testing.assert_allclose(sl.solve_banded((1, 2), ab, b), np.linalg.solve(dense, b))
    g_dense = mindgrad.grad(lambda m: np.sum(np.linalg.solve(m, b) ** 2))(dense)
    g_ab = mindgrad.grad(lambda ab: np.sum(sl.solve_banded((1, 2), ab, b) ** 2))(ab)
    for r_ in range(4):
        k = 2 - r_
        cols = range(max(0, k), 5 + min(0, k))
        np.testing.assert_allclose(g_ab[r_, list(cols)], [g_dense[j - k, j] for j in cols])
    assert g_ab[0, 0] == g_ab[0, 1] == g_ab[3, 4] == 0


def log_and_band(a, ab, b):
    return np.sum(sl.logm(a) ** 2) + np.sum(sl.solve_banded((1, 1), ab, b) ** 3)


def test_logm_and_solve_banded_to_second_order():
    mindgrad.check_grads(log_and_band, (well_conditioned(3, 3), band(1, 1, 4), r(4)), order=2,
                         modes=("rev", "fwd"))


# ----- eigh ----------------------------------------------------------------------------------

from tests.support.linalg_inputs import fix_eigh, symmetric_in  # noqa: E402

EIGH = Cases()
rng = np.random.default_rng(20261130)
for lower in (True, False):
    uplo = "L" if lower else "U"
    for n in (1, 3, 4):
        a = symmetric_in(rng, uplo, n, n)
        EIGH.add(sl.eigh, a, lower=lower, fix=fix_eigh)
        EIGH.add(sl.eigh, a, lower=lower, eigvals_only=True, label="eigh-values")
    a = symmetric_in(rng, uplo, 4, 4)
    EIGH.add(sl.eigh, a, lower=lower, subset_by_index=[1, 2], fix=fix_eigh, label="eigh-index")
    EIGH.add(sl.eigh, a, lower=lower, subset_by_index=(0, 0), eigvals_only=True,
             label="eigh-index-values")
    w = np.linalg.eigvalsh(a, uplo)
    EIGH.add(sl.eigh, a, lower=lower, subset_by_value=(w[0] + 0.1, w[2] + 0.1), fix=fix_eigh,
             label="eigh-value-range")
CASES.extend(EIGH)
EIGH_F32 = Cases()
EIGH_F32.add(sl.eigh, symmetric_in(rng, "L", 3, 3).astype(np.float32), eigvals_only=True)
globals().update({name + "_eigh": test for name, test in rule_tests(EIGH, EIGH_F32).items()})


def hermitian_in(uplo, n):
    """A complex Hermitian matrix in the ``uplo`` triangle, eigenvalues 0.7 apart; noise in the
    other triangle and the diagonal's imaginary part."""
    q = np.linalg.qr(rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)))[0]
    h = (q * (0.8 + 0.7 * np.arange(n))) @ np.conj(q.T)
    noise = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    return h + (np.triu(noise, 1) if uplo == "L" else np.tril(noise, -1)) + \
        1j * np.imag(noise) * np.eye(n)


WEIGHTS = rng.standard_normal((4, 4))


def hermitian_loss(lower, subset=None):
    """A loss of eigh's output that does not depend on the eigenvectors' phases."""
    def loss(a):
        w, v = sl.eigh(a, lower=lower, subset_by_index=subset)
        return np.sum(w ** 3) + np.sum(np.abs(v) ** 2 * WEIGHTS[:, :v.shape[1]]) + \
            np.abs(np.sum(v[:, 0] * WEIGHTS[0])) ** 2
    return loss


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("subset", [None, [1, 3]])
def test_eigh_of_a_complex_hermitian_matrix(lower, subset):
    a = hermitian_in("L" if lower else "U", 4)
    loss = hermitian_loss(lower, subset)
    g = mindgrad.grad(loss)(a)
    for _ in range(2):
        v = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))
        numeric = (loss(a + 1e-6 * v) - loss(a - 1e-6 * v)) / 2e-6
        np.testing.assert_allclose(np.real(np.sum(g * v)), numeric, rtol=1e-6)
        np.testing.assert_allclose(mindgrad.jvp(loss, (a,), (v,))[1], numeric, rtol=1e-6)


def test_eigh_matches_numpy_eigh():
    a = symmetric_in(rng, "L", 4, 4)

    def scipys(a):
        w, v = sl.eigh(a)
        return np.sum(w * np.arange(4)) + np.sum(v ** 4)

    def numpys(a):
        w, v = np.linalg.eigh(a)
        return np.sum(w * np.arange(4)) + np.sum(v ** 4)

    np.testing.assert_allclose(mindgrad.grad(scipys)(a), mindgrad.grad(numpys)(a), rtol=1e-10)


def test_generalized_eigh_is_refused():
    a, b = symmetric_in(rng, "L", 3, 3), positive_definite(3, 3)
    with pytest.raises(NotImplementedError, match="generalized"):
        mindgrad.grad(lambda a: np.sum(sl.eigh(a, b, eigvals_only=True)))(a)
    with pytest.raises(NotImplementedError, match="generalized"):
        mindgrad.jvp(lambda a: sl.eigh(a, b, eigvals_only=True), (a,), (a,))


def eigen_energy(a):
    w, v = sl.eigh(a, subset_by_index=[1, 2])
    return np.sum(w ** 2) + np.sum(v ** 4) + np.sum(sl.eigh(a, eigvals_only=True) ** 3)


def test_eigh_to_second_order():
    mindgrad.check_grads(eigen_energy, (symmetric_in(rng, "L", 4, 4),), order=2,
                         modes=("rev", "fwd"))
