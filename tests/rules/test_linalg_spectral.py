"""The derivatives of np.linalg.eigh, eigvalsh, svd and svdvals of complex matrices, and of
np.linalg.pinv of matrices whose singular values it drops (mindgrad/rules/
numpy_decompositions.py, numpy_linalg.py, numpy_pinv.py).

Complex eigenvectors and singular vectors are defined up to a phase per vector (per pair
(u_i, v_i)): only losses that do not depend on it have a derivative, and the checks use such
losses, against central differences along random complex directions (a cotangent c of a real
loss L means dL = Re(sum(c da))), autograd and JAX where installed. The pseudo-inverse is checked
where its rank is locally constant: rcond (rtol) above the singular values it drops, exactly
zero or not, real and complex, tall, wide, square, stacked, hermitian=True.
"""

import numpy as np
import pytest

import mindgrad
from mindgrad.rules import jvp_of, vjp_of
from mindgrad.rules.numpy_pinv import no_second_derivative
from tests.support.inputs import Draw
from tests.support.rule_check import Cases, rule_tests
from tests.support.versions import NUMPY

draw = Draw(20261129)
rng = np.random.default_rng(20261129)
r, x32 = draw.r, draw.x32
EPS = 1e-6


def cplx(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def hermitian(*shape):
    """Complex Hermitian matrices with eigenvalues 0.7 or more apart, with noise in the upper
    triangle and on the diagonal's imaginary part (eigh does not read them)."""
    n = shape[-1]
    q = np.linalg.qr(cplx(*shape))[0]
    w = (0.8 + 0.7 * np.arange(n)) * (-1.0) ** np.arange(n)
    a = (q * w) @ np.conj(np.swapaxes(q, -1, -2))
    noise = cplx(*shape)
    return a + np.triu(noise, 1) + 1j * np.imag(noise) * np.eye(n)


def with_singular_values(s, m, n, complex_=False, batch=()):
    """Matrices ``U diag(s) V^H`` of shape ``batch + (m, n)`` with ``len(s) <= min(m, n)``."""
    draw_ = cplx if complex_ else r
    u = np.linalg.qr(draw_(*batch, m, len(s)))[0]
    v = np.linalg.qr(draw_(*batch, n, len(s)))[0]
    return (u * s) @ np.conj(np.swapaxes(v, -1, -2))


def check_both_directions(fn, a, rtol=1e-6):
    """grad and jvp of the real scalar ``fn`` at complex ``a`` against central differences
    along two random complex directions."""
    g = mindgrad.grad(fn)(a)
    assert g.shape == a.shape and np.iscomplexobj(g)
    for _ in range(2):
        v = cplx(*a.shape)
        numeric = (fn(a + EPS * v) - fn(a - EPS * v)) / (2 * EPS)
        reverse = np.real(np.sum(g * v))
        forward = mindgrad.jvp(fn, (a,), (v,))[1]
        scale = max(abs(numeric), 1.0)
        assert abs(reverse - numeric) <= rtol * scale, (reverse, numeric)
        assert abs(forward - numeric) <= rtol * scale, (forward, numeric)


# ----- complex eigh and svd: gauge-invariant losses ------------------------------------------

C4 = rng.standard_normal((4, 4))
M4 = cplx(4, 4)


def eigh_loss(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w ** 3) + np.sum(np.abs(v) ** 2 * C4[:v.shape[-2], :v.shape[-1]]) + \
        np.sum(np.real(np.sum(np.conj(v[..., :, 1:2]) * (M4[:v.shape[-2], :v.shape[-2]]
                                                         @ v[..., :, 1:2]), axis=-2)))


def eigh_upper_loss(a):
    w, v = np.linalg.eigh(a, UPLO="U")
    return np.sum(np.abs(v) ** 4 * C4[:3, :3]) + np.sum(np.linalg.eigvalsh(a, "U") * w)


def svd_loss(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    m, n = a.shape[-2:]
    k = min(m, n)
    first = u[..., :, :1] @ vt[..., :1, :]  # u_1 v_1^H: the pair's phase cancels
    return np.sum(s ** 3) + np.sum(np.abs(u) ** 2 * C4[:m, :k]) + \
        np.sum(np.abs(vt) ** 2 * C4[:k, :n]) + \
        np.sum(np.real(np.sum(M4[:m, :n] * first, axis=(-2, -1))) * s[..., 0])


def svd_values_loss(a):
    return np.sum(np.linalg.svd(a, compute_uv=False) ** 3) + \
        np.sum(np.linalg.svd(a, hermitian=True)[1] * np.arange(a.shape[-1]))


@pytest.mark.parametrize("shape", [(3, 3), (4, 4), (2, 3, 3), (1, 1)])
def test_complex_eigh(shape):
    check_both_directions(eigh_loss, hermitian(*shape))


def test_complex_eigh_of_the_upper_triangle():
    a = np.conj(np.swapaxes(hermitian(3, 3), -1, -2))
    check_both_directions(eigh_upper_loss, a)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 3), (2, 2, 4)])
def test_complex_svd(shape):
    check_both_directions(svd_loss, cplx(*shape))


def test_complex_singular_values_and_hermitian_svd():
    check_both_directions(svd_values_loss, hermitian(4, 4))


def test_complex_eigh_matches_autograd():
    ag = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    a = hermitian(4, 4)
    a = np.tril(a) + np.conj(np.tril(a, -1)).T  # autograd reads both triangles
    a = np.real(a) * np.eye(4) + a * (1 - np.eye(4))

    def loss(npm):
        def f(a):
            w, v = npm.linalg.eigh(a)
            return npm.sum(w ** 3) + npm.sum(npm.abs(v) ** 2 * C4)
        return f

    want = ag.grad(loss(anp))(a)
    got = mindgrad.grad(loss(np))(a)
    # autograd's gradient is that of a function of the whole matrix, ours of the lower triangle
    # read as a Hermitian matrix: they agree once folded onto that triangle
    fold = np.tril(want, -1) + np.conj(np.triu(want, 1)).T + np.real(want) * np.eye(4)
    np.testing.assert_allclose(got, fold, rtol=1e-9, atol=1e-12)


def test_complex_svd_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    a = cplx(4, 3)

    def loss(npm):
        def f(a):
            u, s, vt = npm.linalg.svd(a, full_matrices=False)
            return npm.sum(s ** 3) + npm.sum(npm.abs(u) ** 2 * C4[:4, :3]) + \
                npm.sum(npm.abs(vt) ** 4 * C4[:3, :3])
        return f

    want = np.asarray(jax.grad(loss(jnp))(a))  # JAX's convention is the README's
    got = mindgrad.grad(loss(np))(a)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def complex_spectra_of_real_parts(x, y):
    """A real function of real inputs through complex eigh and svd: check_grads can take it
    to second order."""
    a = x + 1j * y
    h = a + np.conj(a.T)
    w, v = np.linalg.eigh(h)
    s = np.linalg.svd(a, compute_uv=False)
    return np.sum(w ** 3) + np.sum(np.abs(v) ** 4) + np.sum(s ** 3)


def test_complex_eigh_and_svd_to_second_order():
    mindgrad.check_grads(complex_spectra_of_real_parts, (r(3, 3), r(3, 3)), order=2,
                         modes=("rev", "fwd"))


# ----- pinv of any rank ----------------------------------------------------------------------

CASES = Cases()
case = CASES.add
for complex_ in (False, True):
    for m, n in [(4, 3), (3, 5), (4, 4)]:
        dropped = with_singular_values(np.array([3.0, 1.5, 0.01]), m, n, complex_)
        exact = with_singular_values(np.array([3.0, 1.5]), m, n, complex_)
        case(np.linalg.pinv, dropped, rcond=0.1, label="pinv-drops-a-nonzero-value")
        case(np.linalg.pinv, exact, rcond=1e-3, label="pinv-rank-deficient")
        if NUMPY >= (2, 0):  # pinv's rtol= is NumPy 2's
            case(np.linalg.pinv, exact, rtol=1e-3, label="pinv-rank-deficient-rtol")
        case(np.linalg.pinv, with_singular_values(np.array([2.0, 1.0, 0.5, 0.3])[:min(m, n)], m,
                                                  n, complex_))
    case(np.linalg.pinv, with_singular_values(np.array([2.0, 0.02]), 3, 4, complex_,
                                              batch=(2,)), rcond=np.array([0.1, 0.001]))
q = np.linalg.qr(r(3, 2))[0]
herm = (q * np.array([3.0, -1.5])) @ q.T + 0.3 * np.triu(r(3, 3), 1)  # rank 2, upper noise
case(np.linalg.pinv, herm, rcond=1e-3, hermitian=True, label="pinv-hermitian-rank-deficient")
hc = hermitian(4, 4)
w, v = np.linalg.eigh(hc)
case(np.linalg.pinv, (v[:, 1:] * w[1:]) @ np.conj(v[:, 1:]).T, rcond=1e-3, hermitian=True,
     label="pinv-complex-hermitian-rank-deficient")

FLOAT32 = Cases()
FLOAT32.add(np.linalg.pinv, with_singular_values(np.array([3.0, 1.5]), 4, 3).astype(np.float32),
            rcond=1e-3)

globals().update(rule_tests(CASES, FLOAT32))


def test_pinv_of_a_rank_deficient_matrix_matches_jax():
    """At a matrix of rank 2 of 3 with the default cutoff, the derivative along the matrices
    of that rank: JAX's."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    a = with_singular_values(np.array([3.0, 1.5]), 4, 3)
    g, t = r(3, 4), r(4, 3)
    p, vjp = vjp_of(np.linalg.pinv, a)
    _, jvp = jvp_of(np.linalg.pinv, a)
    want_p, want_t = jax.jvp(jax.numpy.linalg.pinv, (a,), (t,))
    _, jax_vjp = jax.vjp(jax.numpy.linalg.pinv, a)
    np.testing.assert_allclose(jvp(t), np.asarray(want_t), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(vjp(g)[0], np.asarray(jax_vjp(g)[0]), rtol=1e-8, atol=1e-10)


def test_pinv_of_a_rank_deficient_matrix_along_its_rank():
    """Along a perturbation keeping rank 2 (a product of rank-2 factors), with the default
    cutoff: central differences."""
    left, right = r(4, 2), r(2, 3)
    dl, dr = r(4, 2), r(2, 3)

    def along(h):
        return np.linalg.pinv((left + h * dl) @ (right + h * dr))

    t = dl @ right + left @ dr
    _, jvp = jvp_of(np.linalg.pinv, left @ right)
    numeric = (along(EPS) - along(-EPS)) / (2 * EPS)
    np.testing.assert_allclose(jvp(t), numeric, rtol=1e-6, atol=1e-8)


def pinv_sines(a):
    return np.sum(np.sin(np.linalg.pinv(a, 1e-3)))


def test_pinv_of_a_rank_deficient_matrix_refuses_a_second_derivative():
    a = with_singular_values(np.array([3.0, 1.5]), 4, 3)
    assert np.all(np.isfinite(mindgrad.grad(pinv_sines)(a)))
    with pytest.raises(NotImplementedError, match="second derivative of np.linalg.pinv"):
        mindgrad.hessian(pinv_sines)(a)
    with pytest.raises(NotImplementedError, match="second derivative of np.linalg.pinv"):
        mindgrad.jvp(mindgrad.grad(pinv_sines), (a,), (r(4, 3),))
    _, vjp = vjp_of(no_second_derivative, a)
    with pytest.raises(NotImplementedError, match="second derivative of np.linalg.pinv"):
        vjp(a)
    _, jvp = jvp_of(no_second_derivative, a)
    with pytest.raises(NotImplementedError, match="second derivative of np.linalg.pinv"):
        jvp(a)


def test_pinv_of_full_rank_to_second_order():
    mindgrad.check_grads(pinv_sines, (with_singular_values(np.array([3.0, 1.5, 0.5]), 4, 3),),
                         order=2, modes=("rev", "fwd"))
