"""The complex convention (README, "Complex numbers"): for a real loss ``L`` of a complex ``z =
a + ib``, ``grad`` returns ``dL/da - i dL/db`` (JAX's convention); a rule's cotangent ``c`` for a
complex value ``w`` means ``dL = Re(c dw)``. Each rule that takes complex values is checked
against central differences in ``a`` and ``b`` separately; a real loss of real inputs through
complex intermediates has one right answer, checked in both modes and at second order."""

import numpy as np
import pytest

import mindgrad as mg
from mindgrad.runtime import GradientError

RNG = np.random.default_rng(11)
Z = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
W = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
M = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
WEIGHTS = np.arange(1.0, 4.0)


def convention_gradient(f, z, eps=1e-6):
    """``dL/da - i dL/db`` by central differences in the real and imaginary parts."""
    grad = np.zeros_like(z)
    for i in range(z.size):
        e = np.zeros(z.shape)
        e.flat[i] = eps
        along_a = (f(z + e) - f(z - e)) / (2 * eps)
        along_b = (f(z + 1j * e) - f(z - 1j * e)) / (2 * eps)
        grad.flat[i] = along_a - 1j * along_b
    return grad


def np_abs(z):
    return np.sum(np.abs(z) ** 2 * WEIGHTS)


def builtin_abs(z):
    return abs(z[0]) * 2.0 + abs(z[1]) ** 3


def norm_2(z):
    return np.linalg.norm(z)


def norm_1(z):
    return np.linalg.norm(z, 1)


def norms_of_sign(z):
    """The norms whose gradient reads sign(z) = z / |z| (NumPy 1.x's np.sign of a complex number
    is the sign of its real part: the gradient must not use it)."""
    return np.linalg.norm(z, np.inf) + np.linalg.norm(z, 3) + np.linalg.norm(M * z, 1)


def angle(z):
    return np.sum(np.angle(z) * WEIGHTS)


def angle_degrees(z):
    return np.sum(np.angle(z, deg=True) * WEIGHTS)


def real_part(z):
    return np.sum(np.real(z) ** 2 * WEIGHTS)


def imag_part(z):
    return np.sum(np.imag(z) ** 3)


def attributes(z):
    return np.sum(z.real ** 2 + z.imag)


def conjugate(z):
    return np.sum(np.real(np.conj(z) * W))


def exp_log(z):
    return np.sum(np.real(np.exp(z) * W) + np.imag(np.log(z) * W))


def products(z):
    return np.sum(np.real(z * z * W) + np.real(W / z))


def matmul(z):
    return np.real(np.sum((M @ z) * W))


def sums(z):
    return np.real(np.sum(z * W)) + np.imag(np.mean(z) * 3j)


def vdot(z):
    return np.real(np.vdot(z, W) * (1 + 2j)) + np.imag(np.vdot(W, z) * z[0])


def squared_magnitude(z):
    return np.sum(np.real(z * np.conj(z)))


COMPLEX_INPUT = [np_abs, builtin_abs, norm_2, norm_1, norms_of_sign, angle, angle_degrees,
                 real_part, imag_part, attributes, conjugate, exp_log, products, matmul, sums, vdot,
                 squared_magnitude]


@pytest.mark.parametrize("fn", COMPLEX_INPUT, ids=lambda fn: fn.__name__)
def test_complex_gradient_follows_the_convention(fn):
    np.testing.assert_allclose(mg.grad(fn)(Z), convention_gradient(fn, Z), atol=1e-6)
    v = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
    _, tangent = mg.jvp(fn, (Z,), (v,))
    np.testing.assert_allclose(tangent, (fn(Z + 1e-6 * v) - fn(Z - 1e-6 * v)) / 2e-6, atol=1e-6)


def test_convention_on_the_classic_examples():
    z = np.array([1.0 + 2.0j])
    np.testing.assert_allclose(mg.grad(lambda z: np.sum(np.abs(z) ** 2))(z), 2 * np.conj(z))
    np.testing.assert_allclose(mg.grad(lambda z: np.sum(np.real(z ** 2)))(z), 2 * z)


X = np.array([0.3, -1.2, 0.8])


def through_complex_scale(x):
    return np.sum(np.real(x * (1 + 2j)) ** 2 + np.imag(x * (1 + 2j)))


def through_phase(x):
    return np.sum(np.real(np.exp(1j * x)) * x)


def magnitude_of_complex(x):
    return np.sum(np.abs(x * (1 + 2j) + 0.5j) ** 3)


def angle_of_complex(x):
    return np.sum(np.angle(x + 0.7j) * x)


def vdot_of_complex(x):
    return np.real(np.vdot(x * 1j + 1.0, np.exp(1j * x)))


def parts_of_complex(x):
    z = x * (1 + 1j)
    return np.sum(z.imag * z.real + np.abs(z))


@pytest.mark.parametrize("fn", [through_complex_scale, through_phase, magnitude_of_complex,
                                angle_of_complex, vdot_of_complex, parts_of_complex],
                         ids=lambda fn: fn.__name__)
def test_real_function_through_complex_intermediates(fn):
    mg.check_grads(fn, (X,), modes=("rev", "fwd"), order=2)


def test_norm_of_complex_values_at_second_order():
    def norm_of_phases(x):
        return np.linalg.norm(np.exp(1j * x) * x + 1j)

    mg.check_grads(norm_of_phases, (X,), modes=("rev",), order=2)
    with pytest.raises(GradientError, match="complex"):
        mg.check_grads(norm_of_phases, (X,), modes=("fwd",), order=2)
