"""Third order: jvp over jvp over grad, against central differences of the second derivative.

The second derivative (jvp of grad, checked against differences of the gradient) is the oracle's
function; its own derivative along a random direction is compared with central differences in
float64.
"""

import numpy as np
import pytest

import mindgrad as mg

EPS = 1e-5


def _parts(value):
    return value if isinstance(value, tuple) else (value,)


def _difference(fn, xs, d):
    ahead = _parts(fn(*(x + EPS * di for x, di in zip(xs, d))))
    behind = _parts(fn(*(x - EPS * di for x, di in zip(xs, d))))
    return [(a - b) / (2 * EPS) for a, b in zip(ahead, behind)]


def check_third(f, *xs, positions=0, seed=0, tol=1e-6):
    """The third derivative of ``f`` along two random directions by jvp(jvp(grad(f))), against
    central differences of the second derivative; each part an array of its input's shape."""
    rng = np.random.default_rng(seed)
    v = tuple(rng.standard_normal(np.shape(x)) for x in xs)
    w = tuple(rng.standard_normal(np.shape(x)) for x in xs)
    g = mg.grad(f, positions)

    v0, v1 = v + v[:1] * (2 - len(v))
    if len(xs) == 1:
        def second(x):
            _, slope = mg.jvp(g, (x,), (v0,))
            return slope
    else:
        def second(x, y):
            _, slope = mg.jvp(g, (x, y), (v0, v1))
            return slope

    # the second derivative itself against differences of the gradient
    for got, want in zip(_parts(second(*xs)), _difference(g, xs, v), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    value, third = mg.jvp(second, xs, w)
    for got, want in zip(_parts(value), _parts(second(*xs)), strict=True):
        assert isinstance(got, np.ndarray) and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    for got, want in zip(_parts(third), _difference(second, xs, w), strict=True):
        assert isinstance(got, np.ndarray) and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


X = np.array([0.3, -0.7, 1.1, 0.4])


# ----- a second derivative that is zero for an input --------------------------------------------


def ignores_x(x, y):
    return np.sum(np.tanh(y * y))


def last_of_y(x, y):
    c = y[-1]
    c += np.mean(x)
    lst = [c, c * 0.5]
    s = c * 0.5
    for item in lst:
        s = s + item
    return np.sum(np.tanh(np.sin(x)))


@pytest.mark.parametrize("f, shapes", [(ignores_x, ((3,), (3,))), (last_of_y, ((2,), (1,)))],
                         ids=["ignores_x", "last_of_y"])
def test_third_order_where_an_input_has_a_zero_second_derivative(f, shapes):
    # the jvp inside gave the symbolic zero 0 for x's part, which the outer jvp returned as the
    # value (0 for an array of zeros) and as a tangent of shape ()
    rng = np.random.default_rng(3)
    xs = tuple(rng.standard_normal(s) for s in shapes)
    check_third(f, *xs, positions=(0, 1))
