"""The rules for scipy.signal (mindgrad/rules/scipy_signal.py), in both directions: convolve in
every mode (full, same, valid, with either input the larger) and method (auto, direct, fft),
1-d and n-d, real and complex, against central differences and autograd's own convolve;
second order through the transformer. The checks: tests/support/rule_check.py. Skipped where
SciPy is not installed.
"""

import numpy as np
import pytest

ss = pytest.importorskip("scipy.signal")

import mindgrad  # noqa: E402
from mindgrad.rules import jvp_of, vjp_of  # noqa: E402
from tests.support.inputs import Draw  # noqa: E402
from tests.support.rule_check import Cases, rule_tests  # noqa: E402

draw = Draw(20261128)
r, x32 = draw.r, draw.x32
CASES = Cases()
case = CASES.add

for mode in ("full", "same", "valid"):
    for method in ("auto", "direct", "fft"):
        case(ss.convolve, r(5), r(3), mode, method)
    case(ss.convolve, r(3), r(5), mode=mode)
    case(ss.convolve, r(4, 3), r(2, 2), mode=mode)
    case(ss.convolve, r(2, 3, 4), r(2, 2, 3), mode, "fft")
    case(ss.convolve, r(1), r(1), mode)
    case(ss.convolve, r(4) + 1j * r(4), r(2), mode, "direct")
    case(ss.convolve, r(4) + 1j * r(4), r(3) - 0.5j * r(3), mode)
case(ss.convolve, r(6), r(6), "same")
# the convolution the rules call on a tangent: the same rules
from mindgrad.rules.scipy_signal import linear_convolve  # noqa: E402  (SciPy imported above)

case(linear_convolve, r(5), r(3), "same")
case(linear_convolve, r(4, 3), r(2, 2), "valid", "direct")
case(ss.convolve, np.float64(1.3), np.float64(-0.4), label="convolve-0d")

FLOAT32 = Cases()
FLOAT32.add(ss.convolve, x32(5), x32(3))
FLOAT32.add(ss.convolve, x32(4, 3), x32(2, 2), "same", "fft")

globals().update(rule_tests(CASES, FLOAT32))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", [((6,), (3,)), ((3,), (6,)), ((4, 5), (2, 3))])
def test_every_method_gives_the_same_derivative(mode, shapes):
    a, b = r(*shapes[0]), r(*shapes[1])
    out = ss.convolve(a, b, mode)
    g, ta, tb = r(*out.shape), r(*a.shape), r(*b.shape)
    grads, tangents = [], []
    for method in ("auto", "direct", "fft"):
        grads.append(vjp_of(ss.convolve, a, b, mode, method)[1](g))
        tangents.append(jvp_of(ss.convolve, a, b, mode, method)[1](ta, tb))
    for other in grads[1:]:
        np.testing.assert_allclose(other[0], grads[0][0], atol=1e-12)
        np.testing.assert_allclose(other[1], grads[0][1], atol=1e-12)
    for other in tangents[1:]:
        np.testing.assert_allclose(other, tangents[0], atol=1e-12)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_matches_autograd(mode):
    ag = pytest.importorskip("autograd")
    ags = pytest.importorskip("autograd.scipy.signal")
    a, b = r(4, 5), r(2, 3)

    def loss(convolve):
        def f(a, b):
            out = convolve(a, b, mode=mode)
            return (out * np.arange(out.size).reshape(out.shape)).sum() + (out ** 2).sum()
        return f

    want = ag.grad(loss(ags.convolve), (0, 1))(a, b)
    got = mindgrad.grad(loss(ss.convolve), (0, 1))(a, b)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10)


def smoothed(x, k):
    y = ss.convolve(x, k, mode="same")
    return np.sum(np.tanh(y) * ss.convolve(y, k * k, "valid", "fft")[0])


def image(x, k):
    return np.sum(ss.convolve(x, k) ** 3)


@pytest.mark.parametrize("fn, args", [
    (smoothed, (r(7), r(3))),
    (image, (r(3, 4), r(2, 2))),
])
def test_to_second_order(fn, args):
    mindgrad.check_grads(fn, args, order=2, modes=("rev", "fwd"))
