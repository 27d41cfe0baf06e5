"""The FFT rules (mindgrad/rules/numpy_fft.py), in both directions: every transform of np.fft with
n/s, axis/axes and each norm, on real and complex inputs, lengths padded and cut, even and odd;
the helpers their gradients call; real losses of real signals through rfft/irfft, fft2 and
hfft/ihfft through the transformer to second order, against central differences and against the
DFT written out as a matrix. The checks: tests/support/rule_check.py (complex values follow the
README's convention: a cotangent c of w means dL = Re(c dw)).
"""

import numpy as np
import pytest

import mindgrad
from mindgrad.rules import numpy_fft as nf
from mindgrad.rules import vjp_of
from tests.support.inputs import Draw
from tests.support.rule_check import TANGENTS, Cases, rule_tests

draw = Draw(20261125)
r, x32 = draw.r, draw.x32


def c(*shape):
    """Complex entries."""
    return r(*shape) + 1j * r(*shape)


CASES = Cases()
case = CASES.add
NORMS = (None, "ortho", "forward", "backward")

for fn in (np.fft.fft, np.fft.ifft):
    case(fn, r(5))
    case(fn, c(4))
    case(fn, r(4), 6)  # padded
    case(fn, c(6), n=3)  # cut
    case(fn, r(3, 4), axis=0)
    case(fn, c(2, 3, 4), axis=-2)
    case(fn, r(1, 3), axis=0)  # a size-1 axis
    for norm in NORMS[1:]:
        case(fn, c(5), norm=norm)
for fn in (np.fft.fft2, np.fft.ifft2):
    case(fn, r(3, 4))
    case(fn, c(2, 3, 4), axes=(0, 2))
    case(fn, r(3, 4), s=(4, 2))  # one padded, one cut
    case(fn, c(3, 4), norm="ortho")
for fn in (np.fft.fftn, np.fft.ifftn):
    case(fn, r(2, 3, 4))
    case(fn, c(2, 3, 4), axes=(-1, 0))
    case(fn, r(2, 3, 4), s=(5, 2), axes=(1, 2))
    case(fn, c(3, 4), norm="forward")

for n in (None, 4, 7):
    case(np.fft.rfft, r(6), n)
    case(np.fft.rfft, r(5), n)
case(np.fft.rfft, r(4, 3), axis=0)
case(np.fft.rfft, r(2, 5, 3), axis=-2, n=6)
for norm in NORMS[1:]:
    case(np.fft.rfft, r(7), norm=norm)
for n in (None, 3, 6, 7, 12):  # the default 6, cut, even, odd, padded
    case(np.fft.irfft, c(4), n)
case(np.fft.irfft, r(4))  # a real half spectrum
case(np.fft.irfft, c(4, 3), axis=0)
case(np.fft.irfft, c(2, 3, 5), axis=1, n=5)
for norm in NORMS[1:]:
    case(np.fft.irfft, c(5), n=8, norm=norm)
    case(np.fft.irfft, c(5), n=9, norm=norm)
case(np.fft.rfft2, r(4, 5))
case(np.fft.rfft2, r(3, 4, 5), axes=(0, 1), s=(3, 6))
case(np.fft.rfft2, r(4, 5), norm="ortho")
case(np.fft.irfft2, c(4, 3))
case(np.fft.irfft2, c(3, 4, 3), axes=(0, 2), s=(4, 5))
case(np.fft.irfft2, c(4, 3), norm="forward")
case(np.fft.rfftn, r(2, 3, 4))
case(np.fft.rfftn, r(2, 3, 4), axes=(2, 0))
case(np.fft.rfftn, r(3, 4), s=(2, 7), axes=(0, 1), norm="ortho")
case(np.fft.irfftn, c(2, 3, 4))
case(np.fft.irfftn, c(2, 3, 4), axes=(1, 2), s=(3, 7))
case(np.fft.irfftn, c(3, 4), s=(5, 6), axes=(0, 1), norm="forward")
for n in (None, 5, 8):
    case(np.fft.hfft, c(4), n)
case(np.fft.hfft, r(3, 4), axis=0)
for norm in NORMS[1:]:
    case(np.fft.hfft, c(4), n=7, norm=norm)
for n in (None, 4, 9):
    case(np.fft.ihfft, r(6), n)
case(np.fft.ihfft, r(3, 5), axis=0, norm="ortho")
case(np.fft.ihfft, r(5), norm="forward")

for fn in (np.fft.fftshift, np.fft.ifftshift):
    case(fn, r(5))
    case(fn, c(4, 5))
    case(fn, r(3, 4), axes=0)
    case(fn, r(3, 4), axes=(1, 0))

case(nf.fit_lengths, c(3, 4), (5, 2), [0, 1], label="fit_lengths")
case(nf.fit_lengths, r(3, 4), (3, 6), [-1], label="fit_lengths")
# the gradient helpers (forward over reverse; reverse over reverse differentiates their source)
helper = CASES.helper
helper(nf.fft_grad, c(3, 4), r(3, 2), [1], None, only=TANGENTS)
helper(nf.fft_grad, c(3, 4), c(3, 5), [0, 1], "ortho", True, only=TANGENTS)
helper(nf.rfft_grad, c(3, 4), r(3, 5), [6], [1], only=TANGENTS)
helper(nf.irfft_grad, r(3, 7), c(3, 5), [7], [1], "forward", only=TANGENTS)
helper(nf.irfft_grad, r(4, 6), c(2, 4), [4, 6], [0, 1], only=TANGENTS)

FLOAT32 = Cases()
for fn in (np.fft.fft, np.fft.rfft, np.fft.ihfft, np.fft.fft2, np.fft.rfftn, np.fft.fftshift):
    FLOAT32.add(fn, x32(4, 6))
for fn in (np.fft.irfft, np.fft.hfft, np.fft.irfft2):
    FLOAT32.add(fn, x32(3, 4))

globals().update(rule_tests(CASES, FLOAT32))


# ----- against the DFT as a matrix ----------------------------------------------------------


def dft(n, m):
    """The first ``m`` rows of the length-``n`` DFT matrix: ``F[k, j] = exp(-2 pi i jk / n)``."""
    return np.exp(-2j * np.pi * np.outer(np.arange(m), np.arange(n)) / n)


def test_rfft_gradient_is_the_real_transpose_of_its_half_dft():
    # dL = Re(sum(c * R x)) for the half DFT R: the gradient of real x is Re(R^T c)
    for n in (6, 7):
        x, cot = r(n), c(n // 2 + 1)
        _, vjp = vjp_of(np.fft.rfft, x)
        np.testing.assert_allclose(vjp(cot)[0], np.real(dft(n, n // 2 + 1).T @ cot), atol=1e-12)


def test_irfft_gradient_counts_each_entry_as_often_as_it_is_read():
    # irfft(X, n)_j = (1/n) sum_k w_k Re(X_k e^{2 pi i jk/n}), w = 1 for k = 0 and k = n/2, else 2
    for n in (6, 7):
        m = n // 2 + 1
        weights = np.where((np.arange(m) == 0) | (2 * np.arange(m) == n), 1.0, 2.0)
        inverse = weights[:, None] * np.conj(dft(n, m)) / n  # Re(X @ inverse) is irfft(X)
        spectrum, g = c(m), r(n)
        np.testing.assert_allclose(np.fft.irfft(spectrum, n), np.real(spectrum @ inverse),
                                   atol=1e-12)
        _, vjp = vjp_of(np.fft.irfft, spectrum, n)
        np.testing.assert_allclose(vjp(g)[0], inverse @ g, atol=1e-12)


# ----- through the transformer: real losses of real signals, to second order ---------------

WEIGHTS = np.linspace(0.5, 1.5, 5)


def spectral_energy(x):
    spectrum = np.fft.rfft(x, norm="ortho")
    return np.sum(np.abs(spectrum) ** 2 * WEIGHTS) + np.sum(np.real(spectrum) ** 3)


def low_pass(x):
    spectrum = np.fft.rfft(x)
    smooth = np.fft.irfft(spectrum * np.exp(-np.arange(5.0)), n=8)
    return np.sum(smooth ** 3 * x)


def image_filter(x):
    blurred = np.fft.ifft2(np.fft.fft2(x) * np.exp(-np.arange(4.0)))
    return np.sum(np.real(blurred) ** 2 + np.imag(np.fft.fftshift(blurred)) * x)


def hermitian_round_trip(x):
    return np.sum(np.fft.hfft(np.fft.ihfft(x) * (1 + 0.5j), 8) * np.sin(x))


def n_dimensional(x):
    squared = np.fft.rfftn(x, (3, 6), (0, 1)) ** 2
    return np.sum(np.fft.irfftn(squared, (3, 6), (0, 1)) * np.cos(x[0, 0]))


@pytest.mark.parametrize("fn, x", [(spectral_energy, r(8)), (low_pass, r(8)),
                                   (image_filter, r(3, 4)), (hermitian_round_trip, r(8)),
                                   (n_dimensional, r(3, 5))],
                         ids=["spectral_energy", "low_pass", "image_filter",
                              "hermitian_round_trip", "n_dimensional"])
def test_real_losses_through_ffts_to_second_order(fn, x):
    mindgrad.check_grads(fn, (x,), order=2, modes=("rev", "fwd"), directions=1)


def test_parseval_gradient():
    # sum |fft(x)|^2 = n sum x^2, so its gradient is 2 n x
    x = r(6)
    np.testing.assert_allclose(mindgrad.grad(lambda x: np.sum(np.abs(np.fft.fft(x)) ** 2))(x),
                               12.0 * x, rtol=1e-12)
