"""Second and third derivatives of functions with piecewise-constant parts (``np.sign``,
``np.floor``, ``np.ceil``, whose derivative is zero away from their jumps) and of a function
reading one variable twice, in every nesting of the two modes, against closed forms.

Each function is a sum of ``h(x_i)``: its gradient is ``h'(x)``, its second derivative along
``v`` is ``h''(x) v`` and its third along ``v`` and ``w`` is ``h'''(x) v w``. The points keep
clear of the jumps. Every derivative comes back as an array of ``x``'s shape and dtype, never
a bare 0."""

import numpy as np
import pytest

import mindgrad as mg


def sign_cubed(x):
    return np.sum(np.sign(x) * x ** 3)          # |x|^3: 3 s x^2, 6 s x, 6 s


def floor_and_ceil(x):
    return np.sum(np.floor(x) * x * x + np.ceil(x) * x)  # 2 fl x + ce, 2 fl, 0


def read_twice(x):
    y = x * x
    return np.sum(y * y * x)                    # x^5: 5 x^4, 20 x^3, 60 x^2


CLOSED = {
    sign_cubed: (lambda x: 3 * np.sign(x) * x ** 2, lambda x: 6 * np.sign(x) * x,
                 lambda x: 6 * np.sign(x)),
    floor_and_ceil: (lambda x: 2 * np.floor(x) * x + np.ceil(x), lambda x: 2 * np.floor(x),
                     lambda x: np.zeros_like(x)),
    read_twice: (lambda x: 5 * x ** 4, lambda x: 20 * x ** 3, lambda x: 60 * x ** 2),
}

POINTS = {
    "0-d": np.array(1.3),
    "vector": np.array([-2.6, -0.4, 0.7, 1.9]),
    "matrix float32": np.array([[0.6, -1.2, 2.4], [-0.3, 1.6, -2.2]], dtype=np.float32),
}


def _directions(x):
    rng = np.random.default_rng(7)
    return (rng.standard_normal(x.shape).astype(x.dtype),
            rng.standard_normal(x.shape).astype(x.dtype))


def _close(got, want, x):
    assert isinstance(got, np.ndarray) and got.shape == x.shape, (type(got), np.shape(got))
    assert got.dtype == x.dtype
    tol = 1e-4 if x.dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("point", POINTS, ids=list(POINTS))
@pytest.mark.parametrize("f", CLOSED, ids=lambda f: f.__name__)
def test_second_order_in_every_nesting(f, point):
    x = POINTS[point]
    v, _ = _directions(x)
    first, second, _ = CLOSED[f]
    g = mg.grad(f)
    _close(g(x), first(x), x)
    _close(mg.jvp(g, (x,), (v,))[1], second(x) * v, x)                      # forward over reverse
    _close(mg.grad(lambda y: np.sum(g(y) * v))(x), second(x) * v, x)        # reverse over reverse
    tangent = lambda y: mg.jvp(f, (y,), (v,))[1]                           # noqa: E731
    _close(mg.grad(tangent)(x), second(x) * v, x)                           # reverse over forward
    np.testing.assert_allclose(mg.jvp(tangent, (x,), (v,))[1], np.sum(second(x) * v * v),
                               rtol=1e-4 if x.dtype == np.float32 else 1e-10)  # forward twice


@pytest.mark.parametrize("point", POINTS, ids=list(POINTS))
@pytest.mark.parametrize("f", CLOSED, ids=lambda f: f.__name__)
def test_third_order_in_every_nesting(f, point):
    x = POINTS[point]
    v, w = _directions(x)
    third = CLOSED[f][2]
    g = mg.grad(f)
    hv = lambda y: mg.jvp(g, (y,), (v,))[1]                                # noqa: E731
    _close(mg.jvp(hv, (x,), (w,))[1], third(x) * v * w, x)                  # fwd over fwd over rev
    _close(mg.grad(lambda y: np.sum(hv(y) * w))(x), third(x) * v * w, x)    # rev over fwd over rev
    gg = mg.grad(lambda y: np.sum(g(y) * v))
    _close(mg.grad(lambda y: np.sum(gg(y) * w))(x), third(x) * v * w, x)    # reverse three times
