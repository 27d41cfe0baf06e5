"""Taylor mode, ``mindgrad.jet`` and ``mindgrad.derivative`` (MindSpore's ``ops.jet`` and
``ops.derivative``, whose recorded answers tests/mindspore/test_parity.py compares), against
closed forms: the derivatives of sin, exp and of products of curves (Leibniz's rule, Faa di
Bruno's for exp of a curve), on 0-d, vector and matrix inputs, float64 and float32."""

import math

import numpy as np
import pytest

import mindgrad

SHAPES = [(), (3,), (2, 3)]


def _x(shape, seed=0):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape)


def _sin_times_exp(x):
    return np.sin(x) * np.exp(x)


@pytest.mark.parametrize("order, shape", [(o, s) for o in (1, 2, 3) for s in SHAPES])
def test_derivative_along_ones_is_leibniz(order, shape):
    """d^n (sin x e^x) = sum_k C(n, k) sin(x + k pi / 2) e^x along the direction of ones."""
    x = _x(shape)
    out, d = mindgrad.derivative(_sin_times_exp, x, order)
    expected = sum(math.comb(order, k) * np.sin(x + k * np.pi / 2) for k in range(order + 1))
    np.testing.assert_allclose(out, _sin_times_exp(x))
    np.testing.assert_allclose(d, expected * np.exp(x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", SHAPES)
def test_jet_of_exp_along_a_curve_is_faa_di_bruno(shape):
    """g = exp(x(t)): g' = x1 g, g'' = (x2 + x1^2) g, g''' = (x3 + 3 x1 x2 + x1^3) g."""
    x, x1, x2, x3 = (_x(shape, seed) for seed in range(4))
    out, series = mindgrad.jet(np.exp, x, np.stack([x1, x2, x3]))
    g = np.exp(x)
    np.testing.assert_allclose(out, g)
    np.testing.assert_allclose(series[0], x1 * g, rtol=1e-12)
    np.testing.assert_allclose(series[1], (x2 + x1 ** 2) * g, rtol=1e-12)
    np.testing.assert_allclose(series[2], (x3 + 3 * x1 * x2 + x1 ** 3) * g, rtol=1e-12)
    assert series.shape == (3,) + np.shape(x)


def test_jet_of_two_arguments_and_a_reduction():
    """(sum a b)' = sum(a1 b + a b1), (sum a b)'' = sum(a2 b + 2 a1 b1 + a b2)."""
    a, a1, a2, b, b1, b2 = (_x((2, 3), seed) for seed in range(6))
    out, series = mindgrad.jet(lambda u, v: np.sum(u * v), (a, b),
                               (np.stack([a1, a2]), np.stack([b1, b2])))
    np.testing.assert_allclose(out, np.sum(a * b))
    np.testing.assert_allclose(series[0], np.sum(a1 * b + a * b1), rtol=1e-12)
    np.testing.assert_allclose(series[1], np.sum(a2 * b + 2 * a1 * b1 + a * b2), rtol=1e-12)


def test_float32_stays_float32():
    x = _x((3,)).astype(np.float32)
    out, series = mindgrad.jet(np.sin, x, np.stack([np.ones(3), np.zeros(3)]).astype(np.float32))
    assert out.dtype == np.float32 and series.dtype == np.float32
    np.testing.assert_allclose(series, np.stack([np.cos(x), -np.sin(x)]), rtol=1e-6)


def test_a_second_call_builds_nothing():
    x = _x((3,))
    mindgrad.derivative(_sin_times_exp, x, 3)
    before = mindgrad.cache_stats()["builds"]
    mindgrad.derivative(_sin_times_exp, x * 0.5, 3)
    assert mindgrad.cache_stats()["builds"] == before


@pytest.mark.parametrize("order", [4, 5, 6, 7, 8])
def test_higher_orders(order):
    x = _x((3,))
    _, d = mindgrad.derivative(_sin_times_exp, x, order)
    expected = sum(math.comb(order, k) * np.sin(x + k * np.pi / 2) for k in range(order + 1))
    np.testing.assert_allclose(d, expected * np.exp(x), rtol=1e-10)


@pytest.mark.parametrize("call, message", [
    (lambda: mindgrad.jet(np.sin, np.ones(3), np.ones(3)), "series[0] has shape (3,)"),
    (lambda: mindgrad.jet(np.multiply, (np.ones(2), np.ones(2)),
                          (np.ones((2, 2)), np.ones((3, 2)))), "disagree on the order"),
    (lambda: mindgrad.jet(np.sin, np.ones(2), np.ones((0, 2))), "the series is empty"),
    (lambda: mindgrad.jet(np.multiply, (np.ones(2), np.ones(2)), np.ones((1, 2))),
     "give series as primals are given"),
    (lambda: mindgrad.derivative(np.sin, np.ones(2), 0), "order must be an int >= 1"),
])
def test_errors_name_what_is_wrong(call, message):
    with pytest.raises(ValueError, match=__import__("re").escape(message)):
        call()
