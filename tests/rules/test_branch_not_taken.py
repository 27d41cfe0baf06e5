"""A branch ``np.where`` did not take gets the gradient 0, and stays 0 through functions whose
slope is inf or NaN there (``np.sqrt`` below 0, ``1 / x`` at 0, ``np.log`` at 0, ``x ** 0.5``
below 0): ``0 * nan`` must not reach the branch taken. JAX, autograd and PyTorch give NaN here
(the "double where"); mindgrad gives the derivative of the function computed.

Each function is checked at points inside the branch not taken, away from the boundary, where
it is smooth: ``grad`` and ``jvp`` against central differences of the function, and second
order (forward over reverse, reverse over reverse, forward over forward) against central
differences of its forward-mode derivative; float32 inputs keep their dtype and agree with
float64. Two-argument functions broadcast their arguments.
"""

import math
import warnings

import numpy as np
import pytest

import mindgrad as mg

try:
    import scipy.special as sp
except ImportError:  # the scipy.special case is left out
    sp = None

RNG = np.random.default_rng(2026)
EPS = 1e-6

# where a constant mask keeps the first function (both are smooth there), the second runs: the
# points not kept may be the first one's singular points themselves (0 for 1 / x)
KEEP = np.array([True, False, True, False])
KEEP_COLUMNS = np.array([True, False, True])


def sqrt_where(x):
    return np.sum(np.where(x > 0, np.sqrt(x), x))


def log_where(x):
    return np.sum(np.where(KEEP, np.log(x) + np.log2(x) * np.log10(x), 2.0 * x))


def log1p_where(x):
    return np.sum(np.where(KEEP, np.log1p(x), x * x))


def cbrt_kept(x):
    return np.sum(np.where(KEEP, np.cbrt(x), 3.0 * x))


def entropy_where(x):
    return np.sum(np.where(x > 0, x * np.log(x), x))


def reciprocal_where(x):
    return np.sum(np.where(KEEP, 1 / x + np.reciprocal(x), x))


def inverse_square_where(x):
    return np.sum(np.where(KEEP, x ** -2.0, np.sin(x)))


def fractional_power_where(x):
    return np.sum(np.where(x > 0, np.power(x, 1.5), -x))


def float_power_where(x):
    return np.sum(np.where(x > 0, np.float_power(x, 0.5) * x, x))


def arcsin_arccos_where(x):
    return np.sum(np.where(np.abs(x) < 1, np.arcsin(x) + x * np.arccos(x), x * x))


def arctanh_where(x):
    return np.sum(np.where(KEEP, np.arctanh(x), np.cos(x)))


def arccosh_where(x):
    return np.sum(np.where(x > 1, np.arccosh(x), x))


def nested_where(x):
    return np.sum(np.where(x > 0, np.log(np.sqrt(x)), x))


def chain_where(x):
    # exp and tanh have finite slopes, but here they read log(-2) and sqrt(-2): NaN
    return np.sum(np.where(x > 0, np.exp(np.log(x)) * np.tanh(np.sqrt(x)), x))


def user_log(x):
    return np.log(x)


def user_function_where(x):
    # the user's function computes log(-2) in the branch not taken
    return np.sum(np.where(x > 0, x * user_log(x), x))


def quotient_kept(x, y):
    return np.sum(np.where(KEEP_COLUMNS, x / y, x * y))


def quotient_0d(x, y):
    return np.where(False, x / y, x - y)


def exponent_where(x, y):
    return np.sum(np.where(x > 0, np.power(x, y), x + y))


def hypot_arctan2_kept(x, y):
    return np.sum(np.where(KEEP, np.hypot(x, y) + np.arctan2(y, x), x * y))


def scipy_kept(x):
    return np.sum(np.where(KEEP, sp.logit(x) + sp.gammaln(x) + sp.erfinv(x) + sp.y0(x)
                           + sp.xlogy(x, x), x))


# A whole branch not taken (a scalar condition) whose values feed functions that are not
# elementwise: their adjoints multiply the gradient, 0 there, by the branch's NaNs (the
# product of the others in np.prod, the matrix in @ and solve); the branch gets no gradient.
def reductions_not_taken(x):
    a = np.log(x)
    return np.where(x[0] > 0, np.prod(a) + np.var(a) + np.linalg.norm(a) + a @ a
                    + np.sum(np.outer(a, a) * np.cumprod(a)), np.sum(x * x))


def linalg_not_taken(x):
    a = np.log(x)
    m = np.outer(a, a) + np.eye(a.size)
    return np.where(x[0] > 0, np.sum(np.linalg.solve(m, a)) + np.linalg.det(m), x[0] * x[1])


X = np.array([1.3, -2.0, 0.4, -0.7])
ZEROS = np.array([1.3, 0.0, -0.4, 0.0])
OUTSIDE = np.array([0.3, -1.5, -0.6, 2.5])
CASES = [
    (sqrt_where, (X,)),
    (sqrt_where, (np.array(-2.0),)),
    (sqrt_where, (np.array([[0.5, -3.0], [-1.0, 2.0]]),)),
    (log_where, (np.array([1.3, 0.0, 0.4, -0.7]),)),
    (log1p_where, (np.array([0.2, -1.0, 1.5, -2.5]),)),
    (cbrt_kept, (np.array([1.3, 0.0, -0.4, 0.0]),)),
    (reciprocal_where, (ZEROS,)),
    (entropy_where, (np.array([0.5, -1.0, 2.0, -0.3]),)),
    (inverse_square_where, (ZEROS,)),
    (fractional_power_where, (X,)),
    (float_power_where, (X,)),
    (arcsin_arccos_where, (OUTSIDE,)),
    (arctanh_where, (np.array([0.3, 1.0, -0.5, -1.0]),)),
    (arccosh_where, (np.array([1.5, 0.5, 3.0, -0.2]),)),
    (nested_where, (X,)),
    (chain_where, (X,)),
    (user_function_where, (X,)),
    (quotient_kept, (np.array([[1.0, 2.0, -1.5], [0.5, -0.3, 2.0]]), np.array([0.7, 0.0, -1.2]))),
    (quotient_0d, (np.array(1.5), np.array(0.0))),
    (quotient_0d, (np.array(0.0), np.array(0.0))),
    (exponent_where, (np.array([[1.5, -2.0, 0.8], [-0.5, 2.0, 1.1]]), np.array([0.5, 1.5, 2.5]))),
    (hypot_arctan2_kept, (np.array([1.0, 0.0, -0.5, 0.0]), np.array([0.5, 0.0, 2.0, 0.0]))),
    (reductions_not_taken, (np.array([-0.5, 0.3, 0.8, 1.2]),)),
    (reductions_not_taken, (np.array([0.5, 0.3, 0.8, 1.2]),)),   # taken: all finite
    (linalg_not_taken, (np.array([-0.5, 0.3, 0.8]),)),
    (linalg_not_taken, (np.array([1.5, 0.3, 0.8]),)),
]
if sp is not None:  # poles and domain ends at 0 and 1, not kept
    CASES.append((scipy_kept, (np.array([0.3, 0.0, 0.6, 1.0]),)))
IDS = [f"{fn.__name__}-{'x'.join(str(np.shape(a)) for a in args)}" for fn, args in CASES]


def positions(args):
    return 0 if len(args) == 1 else tuple(range(len(args)))


def gradients(fn, args):
    g = mg.grad(fn, positions(args))(*args)
    return (g,) if len(args) == 1 else g


def central(f, args, v, eps=EPS):
    plus = f(*(a + eps * d for a, d in zip(args, v)))
    minus = f(*(a - eps * d for a, d in zip(args, v)))
    return (plus - minus) / (2 * eps)


def directions(args):
    return tuple(RNG.standard_normal(np.shape(a)) for a in args)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():  # the branch not taken computes sqrt(-2), 1 / 0, ...
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


@pytest.mark.parametrize(("fn", "args"), CASES, ids=IDS)
def test_gradient_and_tangent_of_the_branch_taken(fn, args):
    for _ in range(2):
        v = directions(args)
        truth = central(fn, args, v)
        assert np.isfinite(truth)
        grads = gradients(fn, args)
        for g, a in zip(grads, args):
            assert np.shape(g) == np.shape(a) and np.all(np.isfinite(g))
        np.testing.assert_allclose(sum(np.sum(g * d) for g, d in zip(grads, v)), truth,
                                   rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(mg.jvp(fn, args, v)[1], truth, rtol=1e-5, atol=1e-7)


def second_order_functions(fn, args, v):
    """The first derivative of ``fn`` along ``v``: by forward mode (right before the fix too)
    and by reverse mode, as functions mindgrad can differentiate again."""
    first = mg.grad(fn, positions(args))
    if len(args) == 1:
        (v0,) = v

        def along_v(x):
            return mg.jvp(fn, (x,), (v0,))[1]

        def grad_along_v(x):
            return np.sum(first(x) * v0)
    else:
        v0, v1 = v

        def along_v(x, y):
            return mg.jvp(fn, (x, y), (v0, v1))[1]

        def grad_along_v(x, y):
            gx, gy = first(x, y)
            return np.sum(gx * v0) + np.sum(gy * v1)
    return along_v, grad_along_v


@pytest.mark.parametrize(("fn", "args"), CASES, ids=IDS)
def test_second_order_of_the_branch_taken(fn, args):
    v, w = directions(args), directions(args)
    along_v, grad_along_v = second_order_functions(fn, args, v)
    truth = central(along_v, args, w, eps=1e-5)
    assert np.isfinite(truth)
    hessian_w = gradients(grad_along_v, args)
    for value in (mg.jvp(grad_along_v, args, w)[1],  # forward over reverse
                  sum(np.sum(h * d) for h, d in zip(hessian_w, w)),  # reverse over reverse
                  mg.jvp(along_v, args, w)[1]):  # forward over forward
        np.testing.assert_allclose(value, truth, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(("fn", "args"), CASES, ids=IDS)
def test_float32_keeps_its_dtype_and_agrees(fn, args):
    single = tuple(np.asarray(a, np.float32) for a in args)
    for g, g64, a in zip(gradients(fn, single), gradients(fn, args), single):
        assert np.asarray(g).dtype == np.float32 and np.shape(g) == np.shape(a)
        assert np.all(np.isfinite(g))
        np.testing.assert_allclose(g, g64, rtol=1e-4, atol=1e-5)
    v = directions(args)
    t = mg.jvp(fn, single, tuple(d.astype(np.float32) for d in v))[1]
    np.testing.assert_allclose(t, mg.jvp(fn, args, v)[1], rtol=1e-4, atol=1e-5)


def test_the_readme_case():
    # the example: [0.5, nan, 0.707] before
    np.testing.assert_allclose(mg.grad(sqrt_where)(np.array([1.0, -2.0, 0.5])),
                               [0.5, 1.0, 0.5 / np.sqrt(0.5)])


def test_a_slope_finite_everywhere_stays_a_plain_product():
    # x ** 2 and x * y never meet inf: their gradients read like the math, with no test
    def square(x):
        return np.sum(x ** 2 + x * x)

    code = str(mg.source(mg.grad(square), X))
    assert "times_slope" not in code and "2 * x" in code
    code = str(mg.source(mg.grad(sqrt_where), X))
    assert "times_slope(d_sqrt, quotient(0.5, sqrt))" in code


def test_a_nan_cotangent_is_not_hidden():
    # the product is zeroed only where the gradient is 0: a NaN arriving stays NaN
    def sqrt_all(x):
        return np.sum(np.sqrt(x))

    g = mg.grad(sqrt_all)(np.array([4.0, -1.0]))
    assert g[0] == 0.25 and np.isnan(g[1])


def nan_constant_where(x):
    return np.nansum(np.where(x > 0, np.nan, x) * np.sum(x))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_nan_constant_in_the_branch_not_taken(dtype):
    # f = S * (sum of x_i <= 0), S = sum(x): a product with np.nan where the gradient is 0
    x = np.array([1.0, -2.0, -0.5], dtype)
    kept = np.sum(x[x <= 0])
    truth = kept + np.sum(x) * (x <= 0)
    g = mg.grad(nan_constant_where)(x)
    assert g.dtype == dtype
    np.testing.assert_allclose(g, truth, rtol=1e-6)
    v = RNG.standard_normal(3)
    np.testing.assert_allclose(mg.jvp(nan_constant_where, (x,), (v.astype(dtype),))[1],
                               np.sum(truth * v), rtol=1e-5)


# ----- a function finite at a pole of its slope: no warning f itself does not give -------------
# np.sqrt(0) is 0, quietly; its slope 0.5 / 0 is inf, and NumPy warns of the division where the
# user wrote none. mindgrad computes such slopes without the warning (rules.helpers.quotient,
# power) and holds them at 0 where no gradient flows (seed 24027 of the random-program tester).


# a mask that does not depend on x: the points not kept sit at the pole, and f is smooth there
KEEP_SQUARE = np.array([[True, False], [False, True]])


def sqrt_kept(x):
    return np.sum(np.where(KEEP if np.ndim(x) == 1 else KEEP_SQUARE, np.sqrt(x), x))


def sqrt_not_taken_0d(x):
    return np.where(False, np.sqrt(x), 2.0 * x)


def root_power_kept(x):
    return np.sum(np.where(KEEP, x ** 0.5 + np.power(x, 0.25), x))


def root_power_not_taken_0d(x):
    return np.where(False, x ** 0.5, np.sin(x))


def arcsin_edge_kept(x):
    # one pole in each: forward mode's inf tangents of the branch not taken are not added
    return np.sum(np.where(KEEP, np.arcsin(x), x * x) + np.where(KEEP, x * np.arccos(x), x))


def arccosh_edge_kept(x):
    return np.sum(np.where(KEEP, np.arccosh(x), x))


def var_of_one_where(x):
    v = np.var(0.5 * x + 1.0)  # exactly 0: np.where takes v, not its square root
    return np.sum(np.where(v > 0.0, np.sqrt(v), v) + x * x)


POLE_ZEROS = np.array([1.3, 0.0, 0.4, 0.0])
POLES = [
    (sqrt_kept, (POLE_ZEROS,)),
    (sqrt_kept, (np.array([[0.5, 0.0], [0.0, 2.0]]),)),
    (sqrt_not_taken_0d, (np.array(0.0),)),
    (cbrt_kept, (POLE_ZEROS,)),
    (root_power_kept, (POLE_ZEROS,)),
    (root_power_not_taken_0d, (np.array(0.0),)),
    (arcsin_edge_kept, (np.array([0.3, 1.0, -0.6, -1.0]),)),
    (arccosh_edge_kept, (np.array([1.5, 1.0, 3.0, 1.0]),)),
    (hypot_arctan2_kept, (np.array([1.0, 0.0, -0.5, 0.0]), np.array([0.5, 0.0, 2.0, 0.0]))),
    (var_of_one_where, (np.array([0.7]),)),
]
POLE_IDS = [f"{fn.__name__}-{'x'.join(str(np.shape(a)) for a in args)}" for fn, args in POLES]


def _quiet_forward(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fn(*args)


@pytest.mark.parametrize(("fn", "args"), POLES, ids=POLE_IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_no_warning_at_a_pole_of_the_branch_not_taken(fn, args, dtype):
    args = tuple(np.asarray(a, dtype) for a in args)
    _quiet_forward(fn, args)
    v, w = directions(args), directions(args)
    v = tuple(d.astype(dtype) for d in v)
    truth = central(fn, tuple(a.astype(np.float64) for a in args), v)
    along_v, grad_along_v = second_order_functions(fn, args, v)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as f computes: no warning
        grads = gradients(fn, args)
        tangent = mg.jvp(fn, args, v)[1]
    # second order: the first tangent of the branch not taken is inf at the pole (a tangent is
    # not 0 there; np.where's tangent selects after it), and a product of it with the 0 there
    # (cbrt's out * out) or a sum with -inf is NaN, which NumPy reports: the selection drops it
    # and the numbers are right; the warning is known (forward mode holds no mask to apply).
    second = (mg.jvp(grad_along_v, args, w)[1],  # forward over reverse
              sum(np.sum(h * d) for h, d in zip(gradients(grad_along_v, args), w)),
              mg.jvp(along_v, args, w)[1])  # forward over forward
    tol = 1e-5 if dtype == np.float64 else 1e-3
    np.testing.assert_allclose(sum(np.sum(g * d) for g, d in zip(grads, v)), truth,
                               rtol=tol, atol=tol)
    np.testing.assert_allclose(tangent, truth, rtol=tol, atol=tol)
    # the second derivative along v and w of the branch taken, by central differences of the
    # first derivative (which is smooth there)
    args64 = tuple(a.astype(np.float64) for a in args)
    along_v64, _ = second_order_functions(fn, args64, tuple(d.astype(np.float64) for d in v))
    truth2 = central(along_v64, args64, w, eps=1e-5)
    for value in second:
        np.testing.assert_allclose(value, truth2, rtol=10 * tol, atol=10 * tol)


def test_a_python_float_at_the_pole_gives_the_infinite_derivative():
    # x ** 0.5 at 0.0: ZeroDivisionError (0.0 ** -0.5) before; the derivative is +inf, as
    # NumPy's 0.5 * np.float64(0.0) ** -0.5 and JAX give
    def root(x):
        return x ** 0.5

    def math_root(x):
        return math.sqrt(x)

    def math_power(x):
        return math.pow(x, 0.5)

    def math_asin(x):  # ZeroDivisionError at 1.0 before, its slope 1 / sqrt(1 - x * x)
        return math.asin(x)

    for fn, pole, away, slope in ((root, 0.0, 4.0, 0.25), (math_root, 0.0, 4.0, 0.25),
                                  (math_power, 0.0, 4.0, 0.25),
                                  (math_asin, 1.0, 0.6, 1.25), (math_asin, -1.0, -0.6, 1.25)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert mg.grad(fn)(pole) == np.inf
            assert mg.jvp(fn, (pole,), (1.0,))[1] == np.inf
        assert mg.grad(fn)(away) == pytest.approx(slope, rel=1e-12)
        assert mg.jvp(fn, (away,), (1.0,))[1] == pytest.approx(slope, rel=1e-12)


def test_math_hypot_at_the_origin_gives_the_tangent_s_subgradient():
    # ZeroDivisionError at (0.0, 0.0) before, where the tangent gives 0
    def norm(x, y):
        return math.hypot(x, y)

    assert mg.grad(norm, (0, 1))(0.0, 0.0) == (0.0, 0.0)
    assert mg.jvp(norm, (0.0, 0.0), (1.0, 1.0))[1] == 0.0
    gx, gy = mg.grad(norm, (0, 1))(3.0, -4.0)
    assert (gx, gy) == (pytest.approx(0.6), pytest.approx(-0.8))


def test_a_python_float_at_the_pole_scaled_by_zero():
    # math.sqrt(x) * 0.0 at 0.0: ZeroDivisionError in 0.5 / 0.0 before; no gradient flows
    def scaled(x):
        return math.sqrt(x) * 0.0 + x

    assert mg.grad(scaled)(0.0) == 1.0
    assert mg.grad(scaled)(2.0) == 1.0


def test_the_slope_at_a_pole_reads_as_a_quotient():
    code = str(mg.source(mg.grad(sqrt_where), X))
    assert "times_slope(d_sqrt, quotient(0.5, sqrt))" in code
