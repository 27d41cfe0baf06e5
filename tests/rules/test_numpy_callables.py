"""The rules for the NumPy functions that call the user's function (mindgrad/rules/
numpy_callables.py): np.apply_along_axis (every axis, scalar, vector and matrix results per
slice, extra arguments) and np.piecewise (functions and constants, a default, overlapping
conditions, extra arguments), in both directions against central differences and closed forms;
their second derivatives refused.
"""

import numpy as np
import pytest

import mindgrad
from mindgrad.rules import jvp_of, vjp_of
from mindgrad.rules.numpy_callables import (
    apply_along_axis_grads,
    apply_along_axis_tangent,
    piecewise_grads,
    piecewise_tangent,
)
from tests.support.inputs import Draw
from tests.support.rule_check import Cases, rule_tests

draw = Draw(20261131)
r, x32 = draw.r, draw.x32


def moments(t):
    return np.array([np.sum(t ** 2), np.prod(np.sin(t)), np.max(t)])


def energy(t):
    return np.sum(t ** 3) * t[0]


def outer(t):
    return np.outer(t, np.tanh(t))


def scaled(t, s, shift):
    return np.sum(np.exp(t * s)) + shift * t[-1]


def square(t):
    return t ** 2


def wave(t):
    return 3.0 * np.sin(t)


def normalized(t):
    return t / np.sum(t ** 2)  # not elementwise: each entry depends on all it is given


CASES = Cases()
case = CASES.add
for axis in (0, 1, -1):
    case(np.apply_along_axis, moments, axis, r(3, 4))
    case(np.apply_along_axis, energy, axis, r(2, 3))
case(np.apply_along_axis, energy, 1, r(2, 3, 4))
case(np.apply_along_axis, moments, 0, r(5))
case(np.apply_along_axis, energy, 0, r(5), label="apply_along_axis-0d-result")
case(np.apply_along_axis, outer, 1, r(2, 3))
case(np.apply_along_axis, outer, 0, r(3, 2, 2))
case(np.apply_along_axis, scaled, 0, r(3, 2), 0.7, 1.5)
case(np.apply_along_axis, scaled, 1, r(3, 2), r(2), np.float64(-0.3))

x7 = r(7)
case(np.piecewise, x7, [x7 < 0, x7 >= 0.5], [square, wave, 7.0])
case(np.piecewise, x7, [x7 < 0, x7 > -0.5], [square, normalized], label="piecewise-overlap")
case(np.piecewise, x7, x7 > 0, [wave, 2.5])
x23 = r(2, 3)
case(np.piecewise, x23, [x23 < 0], [square, wave])
case(np.piecewise, x23, [x23 < 0, x23 > 0.3], [-1.5, normalized, 0.25])
case(np.piecewise, x7, [x7 < 0], [scaled, 1.0], 0.4, 2.0, label="piecewise-extra-args")

FLOAT32 = Cases()
FLOAT32.add(np.apply_along_axis, energy, 0, x32(3, 2))
x32_ = x32(5)
FLOAT32.add(np.piecewise, x32_, [x32_ < 0], [square, wave])

globals().update(rule_tests(CASES, FLOAT32))


def test_apply_along_axis_matches_the_reduction_it_computes():
    x = r(3, 4)
    got = mindgrad.grad(lambda x: np.sum(np.apply_along_axis(energy, 0, x) ** 2))(x)
    want = mindgrad.grad(lambda x: np.sum((np.sum(x ** 3, axis=0) * x[0]) ** 2))(x)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_piecewise_matches_where():
    x = r(6)

    def pieces(x):
        return np.sum(np.piecewise(x, [x < 0], [square, wave]) * x)

    def selected(x):
        return np.sum(np.where(x < 0, x ** 2, 3.0 * np.sin(x)) * x)

    np.testing.assert_allclose(mindgrad.grad(pieces)(x), mindgrad.grad(selected)(x), rtol=1e-12)
    t = r(6)
    np.testing.assert_allclose(mindgrad.jvp(pieces, (x,), (t,))[1],
                               mindgrad.jvp(selected, (x,), (t,))[1], rtol=1e-12)


def test_piecewise_gives_its_constants_a_gradient():
    x = np.array([-1.0, 0.5, 2.0, -3.0])

    def f(x, c):
        return np.sum(np.piecewise(x, [x < 0], [square, c]) ** 2)

    g_x, g_c = mindgrad.grad(f, (0, 1))(x, 2.0)
    np.testing.assert_allclose(g_x, [4.0 * -1.0 ** 3, 0.0, 0.0, 4.0 * (-3.0) ** 3])
    assert g_c == pytest.approx(2 * 2.0 * 2)


def energies(x):
    return np.sum(np.apply_along_axis(energy, 1, x) ** 2) + \
        np.sum(np.piecewise(x, [x < 0], [square, wave]))


def test_second_derivatives_are_refused():
    x = r(2, 3)
    for second in (lambda: mindgrad.hessian(energies)(x),
                   lambda: mindgrad.jvp(mindgrad.grad(energies), (x,), (x,)),
                   lambda: mindgrad.jvp(lambda x: mindgrad.jvp(energies, (x,), (x,))[1],
                                        (x,), (x,))):
        with pytest.raises(NotImplementedError, match="second derivative of np.apply_along_ax"):
            second()


@pytest.mark.parametrize("helper, args", [
    (apply_along_axis_grads, lambda x: (np.ones(2), energy, 1, x, np.ones(2))),
    (apply_along_axis_tangent, lambda x: (x, 0, energy, 1, x, np.ones(2))),
    (piecewise_grads, lambda x: (np.ones_like(x), x, [x < 0], [square, wave])),
    (piecewise_tangent, lambda x: (x, 0, 0, x, np.ones_like(x), [x < 0], [square, wave])),
])
def test_the_helpers_refuse_their_derivatives(helper, args):
    x = r(2, 3)
    _, vjp = vjp_of(helper, *args(x))
    out = helper(*args(x))
    with pytest.raises(NotImplementedError, match="second derivative"):
        vjp(out if not isinstance(out, tuple) else tuple(np.ones_like(o)
                                                         if np.ndim(o) else 1.0 for o in out))
    _, jvp = jvp_of(helper, *args(x))
    with pytest.raises(NotImplementedError, match="second derivative"):
        jvp(*[np.ones_like(a) if isinstance(a, np.ndarray) else None for a in args(x)])


def labelled(t, label):
    return np.sum(t) if label == "sum" else np.max(t)


def test_extra_arguments_that_are_not_floats_are_refused():
    with pytest.raises(NotImplementedError, match="floats or float arrays only"):
        mindgrad.grad(lambda x: np.sum(np.apply_along_axis(labelled, 0, x, "sum")))(r(3, 2))


def _piecewise_of_a_lambda_written_in(x):
    return np.sum(np.piecewise(x, [x < 0], [lambda t: t ** 2, 1.0]) * x)


def test_a_lambda_written_in_the_function_is_a_function_value():
    x = np.array([-1.5, -0.5, 0.5, 2.0])
    np.testing.assert_allclose(mindgrad.grad(_piecewise_of_a_lambda_written_in)(x),
                               np.where(x < 0, 3 * x ** 2, 1.0))
    mindgrad.check_grads(_piecewise_of_a_lambda_written_in, (x,), modes=("rev", "fwd"))


PIECES = [lambda t: t ** 2, np.sin, 1.0]  # lambdas and NumPy's functions defined outside f


def test_piecewise_of_lambdas_and_numpy_functions():
    x = np.array([-1.0, 0.5, 2.0])

    def f(x):
        return np.sum(np.piecewise(x, [x < 0, x > 1], PIECES) ** 2)

    np.testing.assert_allclose(mindgrad.grad(f)(x), [-4.0, 0.0, np.sin(4.0)], rtol=1e-12)
    assert mindgrad.jvp(f, (x,), (np.ones(3),))[1] == pytest.approx(-4.0 + np.sin(4.0))
