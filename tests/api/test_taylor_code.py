"""jet's Taylor code: each value carries its truncated Taylor series, each nonlinear operation
a rule of ``runtime.taylor``. Orders 1 to 8 against closed forms (the derivatives of x^p, log,
cosh and sinh, rational functions, quadratic forms, constants added), against forward mode
nested once per order (``taylor.nested``, what jet runs where it has no Taylor code), and against
JAX's ``jax.experimental.jet`` where JAX is installed; on 0-d, vector and matrix inputs and
float32; a function without Taylor code falls back, exactly."""

import math

import numpy as np
import pytest

import mindgrad
from mindgrad.api import taylor
from mindgrad.runtime import taylor as series_rules

ORDERS = range(1, 9)
SHAPES = [(), (3,), (2, 3)]
A = np.array([[1.0, 0.5, -0.3], [0.2, 2.0, 0.1], [-0.4, 0.3, 1.5]])


def _x(shape, low=0.5, high=1.5, seed=0):
    return np.random.default_rng(seed).uniform(low, high, shape)


def _falling(p, k):
    return math.prod(p - i for i in range(k))


def power_sum(x):
    return np.sum(x ** 2.5 + np.sqrt(x) - x ** -1.5)


def log_cosh_sinh(x):
    return np.sum(np.log(x) + np.cosh(x) + np.sinh(2.0 * x))


def rational(x):
    return np.sum(x / (2.0 + x))


def with_constants(x):
    return np.sum((x + 1.0) ** 2) * 3.0 - 7.0


CLOSED = {
    # d^k along the direction of ones (every element moves with t)
    power_sum: lambda x, k: np.sum(_falling(2.5, k) * x ** (2.5 - k) +
                                   _falling(0.5, k) * x ** (0.5 - k) -
                                   _falling(-1.5, k) * x ** (-1.5 - k)),
    log_cosh_sinh: lambda x, k: np.sum((-1) ** (k - 1) * math.factorial(k - 1) / x ** k +
                                       (np.cosh(x) if k % 2 == 0 else np.sinh(x)) +
                                       2.0 ** k * (np.sinh(2 * x) if k % 2 == 0 else
                                                   np.cosh(2 * x))),
    # x / (2 + x) = 1 - 2 / (2 + x)
    rational: lambda x, k: np.sum(2.0 * (-1) ** (k + 1) * math.factorial(k) /
                                  (2.0 + x) ** (k + 1)),
    with_constants: lambda x, k: (6.0 * np.sum(x + 1.0) if k == 1 else
                                  6.0 * np.size(x) if k == 2 else 0.0),
}


@pytest.mark.parametrize("fn", list(CLOSED), ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", SHAPES)
def test_orders_one_to_eight_match_the_closed_form(fn, shape):
    x = _x(shape)
    assert "series." in str(mindgrad.source(mindgrad.jet, fn, x, np.ones((1,) + shape)))
    for k in ORDERS:
        out, d = mindgrad.derivative(fn, x, k)
        expected = CLOSED[fn](x, k)
        np.testing.assert_allclose(out, fn(x), rtol=1e-14)
        np.testing.assert_allclose(d, expected, rtol=1e-10, atol=1e-10 * (1 + abs(expected)))


def squares_at_zero(x):
    return np.sum(x ** 2.0 + x ** 3)


def test_a_whole_power_is_right_where_the_base_is_zero():
    # x ** 2.0 by the recurrence would divide by x = 0; by products it is exact
    x = np.array([0.0, 1.0])
    for k, expected in ((1, 3.0 + 2.0), (2, 2 * 2 + 6.0 * 1), (3, 12.0), (4, 0.0)):
        np.testing.assert_allclose(mindgrad.derivative(squares_at_zero, x, k)[1], expected,
                                   atol=1e-12)


def quadratic_form(x):
    return x @ A @ x


def test_a_product_of_two_series_is_the_cauchy_product():
    # along x + t v: f = (x + tv) A (x + tv): f' = v (A + A^T) x, f'' = 2 v A v, then zeros
    x, v = _x((3,)), _x((3,), -1.0, 1.0, seed=1)
    out, s = mindgrad.jet(quadratic_form, x, np.stack([v] + [np.zeros(3)] * 4))
    assert "series.matmul(" in str(mindgrad.source(mindgrad.jet, quadratic_form, x, v[None]))
    np.testing.assert_allclose(s[0], v @ (A + A.T) @ x, rtol=1e-13)
    np.testing.assert_allclose(s[1], 2 * v @ A @ v, rtol=1e-13)
    np.testing.assert_allclose(s[2:], 0.0, atol=1e-13)


def smooth(x, y):
    h = np.tanh(x @ y + 1.0)
    return np.sum(np.exp(-h * h) / (1.0 + x[0] ** 2)) + np.sin(y).sum() + \
        np.arctan(np.mean(x)) + np.log1p(np.sum(x * x)) + np.sum(np.expm1(0.1 * y))


@pytest.mark.parametrize("order", [1, 2, 3])
def test_the_taylor_code_matches_nested_forward_mode(order):
    rng = np.random.default_rng(order)
    x, y = rng.normal(size=3), rng.normal(size=(3, 2))
    sx, sy = rng.normal(size=(order, 3)), rng.normal(size=(order, 3, 2))
    out, got = mindgrad.jet(smooth, (x, y), (sx, sy))
    coefficients = [s[k] / math.factorial(k + 1) for s in (sx, sy) for k in range(order)]
    expected = taylor.nested(smooth, (x, y), coefficients, order, out)
    np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-12)


def smooth_numpy(x, y):
    h = np.tanh(x @ y + 1.0)
    return np.sum(np.exp(-h * h) / (1.0 + x[0] ** 2)) + np.sin(y).sum() + \
        np.log1p(np.sum(x * x)) + np.sum(np.expm1(0.1 * y)) + np.sqrt(np.sum(y * y))


def test_jax_jet_agrees_at_order_eight():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax.experimental import jet as jax_jet

    rng = np.random.default_rng(3)
    x, y = rng.normal(size=3), rng.normal(size=(3, 2))
    sx, sy = rng.normal(size=(8, 3)), rng.normal(size=(8, 3, 2))

    def smooth_jax(x, y):  # smooth without arctan, which JAX's jet has no rule for
        h = jnp.tanh(x @ y + 1.0)
        return jnp.sum(jnp.exp(-h * h) / (1.0 + x[0] ** 2)) + jnp.sin(y).sum() + \
            jnp.log1p(jnp.sum(x * x)) + jnp.sum(jnp.expm1(0.1 * y)) + jnp.sqrt(jnp.sum(y * y))

    out, got = mindgrad.jet(smooth_numpy, (x, y), (sx, sy))
    jout, jseries = jax_jet.jet(smooth_jax, (x, y), (list(sx), list(sy)))
    np.testing.assert_allclose(out, jout, rtol=1e-13)
    np.testing.assert_allclose(got, np.stack(jseries), rtol=1e-9)


def test_float32_stays_float32_through_the_taylor_code():
    x = _x((3,)).astype(np.float32)
    out, d = mindgrad.derivative(log_cosh_sinh, x, 3)
    assert d.dtype == np.float32
    np.testing.assert_allclose(d, CLOSED[log_cosh_sinh](x.astype(np.float64), 3), rtol=1e-5)


def branches_on_the_curve(x):
    if np.sum(x) > 0:
        return np.sum(np.exp(x))
    return np.sum(np.sin(x))


def test_a_branch_on_the_curve_takes_the_branch_at_the_point():
    for x, expected in ((_x((3,)), lambda x, k: np.sum(np.exp(x))),
                        (-_x((3,)), lambda x, k: np.sum(np.sin(x + k * np.pi / 2)))):
        code = str(mindgrad.source(mindgrad.jet, branches_on_the_curve, x, np.ones((1, 3))))
        assert "if cond:" in code and "[0] > 0" in code  # the test, on the primal
        for k in (1, 4, 7):
            _, d = mindgrad.derivative(branches_on_the_curve, x, k)
            np.testing.assert_allclose(d, expected(x, k), rtol=1e-12)


def inverse_trace(a):
    return np.trace(np.linalg.inv(a))


def test_a_function_without_taylor_code_runs_nested_forward_mode():
    a = np.eye(2) * 2.0 + 0.1
    with pytest.raises(TypeError, match="nested once per order"):
        mindgrad.source(mindgrad.jet, inverse_trace, a, np.ones((1, 2, 2)))
    # along a + t I: tr((a + tI)^-1) = sum 1 / (l + t) over a's eigenvalues l
    eigenvalues = np.linalg.eigvalsh(a)
    _, d = mindgrad.jet(inverse_trace, a, np.stack([np.eye(2), np.zeros((2, 2)),
                                                    np.zeros((2, 2))]))
    for k in (1, 2, 3):
        np.testing.assert_allclose(d[k - 1], np.sum((-1) ** k * math.factorial(k) /
                                                    eigenvalues ** (k + 1)), rtol=1e-10)


@pytest.mark.parametrize("rule, fn", [(series_rules.FUNCTIONS[f], f)
                                      for f in series_rules.FUNCTIONS],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_each_rule_matches_nested_forward_mode_of_numpys_function(rule, fn):
    """Every rule of runtime.taylor, along a curve with four coefficients, to order 3."""
    x = np.array([0.3, 0.7])
    curve = np.stack([x, [0.9, -0.4], [-0.3, 0.2], [0.25, 0.1]])
    got = rule(curve)

    def through(t):
        return fn(t)

    expected = taylor.nested(through, (x,), list(curve[1:]), 3, fn(x))
    np.testing.assert_allclose(got[0], fn(x), rtol=1e-14)
    np.testing.assert_allclose(got[1:] * [[math.factorial(k)] for k in range(1, 4)],
                               expected, rtol=1e-11, atol=1e-12)
