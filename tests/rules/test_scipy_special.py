"""The rules for scipy.special (mindgrad/rules/scipy_special.py), in both directions: the
elementwise functions on every shape (0-d, Python floats, size-1 axes, pairs that broadcast),
logsumexp, softmax and log_softmax along every kind of axis (None, negative, tuples, keepdims,
size-1), float32 dtypes; closed forms, domain edges, and second order through the transformer.
The checks: tests/support/rule_check.py. Skipped where SciPy is not installed.
"""

import math

import numpy as np
import pytest

sp = pytest.importorskip("scipy.special")

import mindgrad  # noqa: E402
from mindgrad.errors import NoGradientRuleError  # noqa: E402
from mindgrad.rules import jvp_of, vjp_of  # noqa: E402
from tests.support.inputs import Draw  # noqa: E402
from tests.support.rule_check import TANGENT, Cases, rule_tests  # noqa: E402

draw = Draw(20261125)
r, pos, unit, f, x32 = draw.r, draw.pos, draw.unit, draw.f, draw.x32


def prob(*shape):
    return draw.rng.uniform(0.1, 0.9, shape)


def two(*shape):  # inside erfcinv's domain (0, 2)
    return draw.rng.uniform(0.2, 1.8, shape)


def negative(*shape):  # between the poles of gamma at -1 and 0
    return draw.rng.uniform(-0.9, -0.1, shape)


CASES = Cases()
case = CASES.add

UNARY = [
    (sp.expit, r), (sp.logit, prob), (sp.log_expit, r), (sp.expm1, r), (sp.log1p, pos),
    (sp.exp2, r), (sp.exp10, r), (sp.cbrt, r), (sp.entr, pos), (sp.gamma, pos),
    (sp.gamma, negative), (sp.gammaln, pos), (sp.gammaln, negative), (sp.digamma, pos),
    (sp.psi, pos), (sp.erf, r), (sp.erfc, r), (sp.erfinv, unit), (sp.erfcinv, two),
    (sp.ndtr, r), (sp.log_ndtr, r), (sp.ndtri, prob), (sp.i0, r), (sp.i1, r), (sp.i0e, r),
    (sp.i1e, r), (np.i0, r), (sp.j0, r), (sp.j1, r), (sp.y0, pos), (sp.y1, pos), (sp.rgamma, pos),
    (sp.rgamma, negative),
]
for fn, gen in UNARY:
    case(fn, f(gen))
    case(fn, gen())
    case(fn, gen(3))
    case(fn, gen(1, 3))
    case(fn, gen(2, 3, 4))
case(sp.log_ndtr, np.array([-30.0, -8.0, 5.0]), label="log_ndtr-tails")

BROADCAST_PAIRS = [((), ()), ((3,), (3,)), ((3, 1), (4,)), ((2, 3), ()), ((1, 3), (2, 1)),
                   ((4,), (2, 3, 1))]
for fn, gx, gy in [(sp.xlogy, r, pos), (sp.xlog1py, r, pos), (sp.rel_entr, pos, pos),
                   (sp.kl_div, pos, pos), (sp.beta, pos, pos), (sp.betaln, pos, pos)]:
    for sx, sy in BROADCAST_PAIRS:
        case(fn, gx(*sx), gy(*sy))
    case(fn, f(gx), gy(3))

# the order (an integer) is a constant
for n in (0, 1, 2):
    case(sp.polygamma, n, pos(3))
case(sp.polygamma, np.array([0, 1, 2]), pos(2, 1))
for fn in (sp.iv, sp.ive):
    case(fn, 0, r(3))
    case(fn, 2, r(2, 3))
    case(fn, np.array([[0], [1]]), r(3))

# Bessel functions of integer and real orders, constants (jn is jv)
for fn in (sp.jv, sp.jn):
    case(fn, 0, r(3))
    case(fn, 3, f())
    case(fn, np.array([[0], [1], [4]]), r(2, 1, 3))
case(sp.yn, 0, pos(3))
case(sp.yn, 2, f(pos))
case(sp.yn, np.array([[1], [3]]), pos(3))

# the incomplete gamma and beta functions in x; their shapes, without a closed-form derivative,
# are integers here (floats through grad below)
for fn in (sp.gammainc, sp.gammaincc):
    case(fn, 1, pos(3))
    case(fn, np.array([[1], [2], [5]]), pos(4))
    case(fn, 3, f(pos))
    case(fn, 2, np.asarray(pos()))
case(sp.betainc, 2, 3, prob(3))
case(sp.betainc, np.array([[1], [2]]), np.array([1, 3, 6]), prob(2, 3))
case(sp.betainc, 1, 1, f(prob))

for a, dim in ((draw.big(3), 3), (f(draw.big), 1), (draw.big(2, 3), 2), (np.asarray(4.5), 6)):
    case(sp.multigammaln, a, dim)

AXES = [None, 0, 1, -1, (0, 1), (-1, 0)]
for axis in AXES:
    case(sp.logsumexp, r(3, 4), axis=axis)
    case(sp.logsumexp, r(3, 4), axis=axis, keepdims=True)
    case(sp.softmax, r(3, 4), axis=axis)
    case(sp.log_softmax, r(3, 4), axis=axis)
case(sp.logsumexp, r(3, 4))
case(sp.logsumexp, r(3, 4), 1)  # axis by position
case(sp.logsumexp, r())
case(sp.logsumexp, r(), axis=None, keepdims=True)
case(sp.logsumexp, r(3, 1), axis=1)
case(sp.logsumexp, r(1), axis=0)
case(sp.logsumexp, r(2, 3, 4), axis=(0, 2))
case(sp.logsumexp, r(2, 3, 4), axis=(-1, 0), keepdims=True)
case(sp.logsumexp, r(3, 4), axis=1, b=pos(3, 4))
case(sp.logsumexp, r(3, 4), axis=0, b=pos(4))
case(sp.logsumexp, r(4), axis=-1, b=pos(3, 4), label="logsumexp-b-broadcasts-a")
case(sp.logsumexp, r(3, 4), None, pos(3, 1), True)
for fn in (sp.softmax, sp.log_softmax):
    case(fn, r())
    case(fn, r(5))
    case(fn, r(3, 1), axis=1)
    case(fn, r(2, 3, 4), axis=(0, 2))
    case(fn, r(2, 3, 4), axis=-2)

FLOAT32 = Cases()
for fn, gen in [(sp.expit, r), (sp.erf, r), (sp.gammaln, pos), (sp.log_ndtr, r),
                (sp.ndtri, prob), (sp.i1e, r), (np.i0, r), (sp.j1, r), (sp.y0, pos),
                (sp.rgamma, pos)]:
    FLOAT32.add(fn, x32(3, gen=gen))
FLOAT32.add(sp.xlogy, x32(3, 1), x32(4, gen=pos))
FLOAT32.add(sp.gammainc, 2, x32(3, gen=pos), only=TANGENT)  # float64, as SciPy computes it
FLOAT32.add(sp.betainc, 2, 3, x32(3, gen=prob))
FLOAT32.add(sp.jv, 1, x32(3))
FLOAT32.add(sp.logsumexp, x32(3, 4), axis=-1)
FLOAT32.add(sp.softmax, x32(3, 4), axis=0)
FLOAT32.add(sp.log_softmax, x32(3, 4), axis=1)

globals().update(rule_tests(CASES, FLOAT32))


# ----- closed forms ------------------------------------------------------------------------


def test_slopes_match_closed_forms():
    x = np.array([0.3, 1.2, 2.5])
    closed = {
        sp.gammaln: sp.digamma(x),
        sp.erf: 2.0 / math.sqrt(math.pi) * np.exp(-x * x),
        sp.expit: sp.expit(x) * sp.expit(-x),
        sp.digamma: sp.polygamma(1, x),
        sp.i0: sp.i1(x),
        sp.ndtr: np.exp(-x * x / 2) / math.sqrt(2 * math.pi),
        sp.erfinv: None,
    }
    for fn, want in closed.items():
        if want is None:
            continue
        _, vjp = vjp_of(fn, x)
        np.testing.assert_allclose(vjp(np.ones(3))[0], want, rtol=1e-12, err_msg=str(fn))
        _, jvp = jvp_of(fn, x)
        np.testing.assert_allclose(jvp(np.ones(3)), want, rtol=1e-12, err_msg=str(fn))
    u = np.array([-0.5, 0.2, 0.7])  # erfinv'(u) = 1 / erf'(erfinv(u))
    _, vjp = vjp_of(sp.erfinv, u)
    y = sp.erfinv(u)
    np.testing.assert_allclose(vjp(np.ones(3))[0], math.sqrt(math.pi) / 2 * np.exp(y * y))


def test_logsumexp_gradient_is_the_softmax():
    x = r(3, 4)
    _, vjp = vjp_of(sp.logsumexp, x, axis=1)
    np.testing.assert_allclose(vjp(np.ones(3))[0], sp.softmax(x, axis=1), rtol=1e-12)


def test_log_ndtr_slope_is_finite_far_in_the_left_tail():
    x = np.array([-40.0])  # pdf and cdf both underflow; their ratio is about -x
    _, vjp = vjp_of(sp.log_ndtr, x)
    np.testing.assert_allclose(vjp(np.ones(1))[0], [40.0249], rtol=1e-4)


# ----- domain edges: infinite where the derivative is, never a plausible finite number ------


@pytest.mark.parametrize("fn, at, want", [
    (sp.logit, [0.0, 1.0], [np.inf, np.inf]),
    (sp.erfinv, [-1.0, 1.0], [np.inf, np.inf]),
    (sp.erfcinv, [0.0, 2.0], [-np.inf, -np.inf]),
    (sp.ndtri, [0.0, 1.0], [np.inf, np.inf]),
    (sp.entr, [0.0], [np.inf]),
])
def test_infinite_slopes_at_the_domain_edges(fn, at, want):
    x = np.array(at)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        _, vjp = vjp_of(fn, x)
        got = vjp(np.ones(len(at)))[0]
        _, jvp = jvp_of(fn, x)
        tangent = jvp(np.ones(len(at)))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(tangent, want)


def test_xlogy_at_zero_follows_the_function():
    """xlogy(0, y) = 0 for every y, so the slope in y is 0 there, y = 0 included; in x it is
    log(y), -inf at y = 0 (as JAX)."""
    x, y = np.array([0.0, 0.0, 2.0]), np.array([0.0, 3.0, 3.0])
    with np.errstate(divide="ignore"):
        _, vjp = vjp_of(sp.xlogy, x, y)
        gx, gy = vjp(np.ones(3))
    np.testing.assert_array_equal(gx, [-np.inf, math.log(3.0), math.log(3.0)])
    np.testing.assert_array_equal(gy, [0.0, 0.0, 2.0 / 3.0])


def test_orders_are_not_differentiated():
    def f(v, x):
        return np.sum(sp.iv(v, x))

    with pytest.raises(NotImplementedError, match="the order v of scipy.special.iv"):
        mindgrad.grad(f)(1.0, np.array([0.5, 1.5]))
    assert np.allclose(mindgrad.grad(f, 1)(1.0, np.array([0.5, 1.5])),
                       0.5 * (sp.iv(0, [0.5, 1.5]) + sp.iv(2, [0.5, 1.5])))


def test_logsumexp_return_sign_is_refused():
    def f(x):
        value, sign = sp.logsumexp(x, return_sign=True)
        return value

    with pytest.raises(NotImplementedError, match="return_sign=False"):
        mindgrad.grad(f)(r(3))


# ----- through the public API: grad, jvp, hessian, second order -----------------------------


def lse_rows(x):
    return np.sum(sp.logsumexp(x, axis=-1) ** 2)


def softmax_loss(x, w):
    return np.sum(x * sp.log_softmax(x @ w, axis=(0, -1)))


def lse_weighted(x, b):
    return sp.logsumexp(x, axis=0, b=b, keepdims=True).sum()


@pytest.mark.parametrize("fn, args", [
    (lse_rows, (r(3, 4),)),
    (softmax_loss, (r(2, 3), r(3, 3))),
    (lse_weighted, (r(3, 4), pos(3, 1))),
])
def test_axis_functions_to_second_order(fn, args):
    mindgrad.check_grads(fn, args, order=2, modes=("rev", "fwd"))


SECOND = [(fn, gen) for fn, gen in UNARY] + [
    (lambda x: sp.xlogy(x, x * x), pos), (lambda x: sp.betaln(x, 2.0 * x), pos),
    (lambda x: sp.rel_entr(x, 1.5) + sp.kl_div(1.2, x), pos), (lambda x: sp.polygamma(2, x), pos),
    (lambda x: sp.iv(1, x) + sp.ive(2, x), r), (lambda x: sp.softmax(x, axis=0), r),
]


@pytest.mark.parametrize("fn, gen", SECOND, ids=lambda v: getattr(v, "__name__", ""))
def test_elementwise_to_second_order(fn, gen):
    def total(x):
        return np.sum(fn(x) * np.arange(1.0, 4.0))

    mindgrad.check_grads(total, (gen(3),), order=2, modes=("rev", "fwd"))


def test_grad_jvp_and_hessian_of_logsumexp_against_differences():
    x = r(2, 3)

    def f(x):
        return sp.logsumexp(x, axis=(-1,), keepdims=True).sum() + sp.expit(x[0, 0])

    eps = 1e-6
    numeric = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        numeric[i] = (f(x + e) - f(x - e)) / (2 * eps)
    np.testing.assert_allclose(mindgrad.grad(f)(x), numeric, rtol=1e-6, atol=1e-9)
    v = r(2, 3)
    value, tangent = mindgrad.jvp(f, (x,), (v,))
    assert value == pytest.approx(f(x))
    assert tangent == pytest.approx(float(np.vdot(numeric, v)), rel=1e-6)
    hess = mindgrad.hessian(f)(x)
    g = mindgrad.grad(f)
    numeric_h = np.zeros(x.shape * 2)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        numeric_h[(...,) + i] = (g(x + e) - g(x - e)) / (2 * eps)
    np.testing.assert_allclose(np.reshape(hess, numeric_h.shape), numeric_h, rtol=1e-5,
                               atol=1e-7)


def test_generated_code_reads_the_rules():
    def f(x):
        return sp.logsumexp(x, axis=1).sum() + sp.gammaln(x).sum()

    code = mindgrad.source(mindgrad.grad(f), pos(2, 3))
    assert "logsumexp_grad(" in code and "sp.digamma(x)" in code


def test_a_scipy_function_differentiated_itself_uses_its_rule():
    """grad(sp.logsumexp) is its rule, as a call of it is, not SciPy's source followed."""
    x = r(4)
    np.testing.assert_allclose(mindgrad.grad(sp.logsumexp)(x), sp.softmax(x), rtol=1e-12)
    y = pos(3)
    np.testing.assert_allclose(mindgrad.jvp(sp.gammaln, (y,), (np.ones(3),))[1], sp.digamma(y),
                               rtol=1e-12)


# ----- incomplete gamma and beta, Bessel functions, rgamma, multigammaln --------------------

SECOND_NEW = [
    (lambda x: sp.gammainc(1.7, x), pos), (lambda x: sp.gammaincc(0.6, x), pos),
    (lambda x: sp.betainc(1.5, 2.5, x), prob), (lambda x: sp.jv(1.5, x) + sp.jn(2, x), pos),
    (lambda x: sp.yn(2, x), pos), (lambda x: sp.multigammaln(x + 2.0, 3), pos),
    (lambda x: sp.rgamma(x) * sp.gammasgn(x), negative),
]


@pytest.mark.parametrize("fn, gen", SECOND_NEW)
def test_new_functions_to_second_order(fn, gen):
    def total(x):
        return np.sum(fn(x) * np.arange(1.0, 4.0))

    mindgrad.check_grads(total, (gen(3),), order=2, modes=("rev", "fwd"))


def autograd_special():
    return pytest.importorskip("autograd.scipy.special")


@pytest.mark.parametrize("name, order, gen", [
    ("gammainc", 1.7, pos), ("gammaincc", 0.6, pos), ("jn", 2, r), ("yn", 1, pos),
    ("j0", None, r), ("j1", None, r), ("y0", None, pos), ("y1", None, pos),
    ("rgamma", None, pos), ("i0", None, r),
])
def test_gradients_and_tangents_match_autograd(name, order, gen):
    ag = pytest.importorskip("autograd")
    asp = autograd_special()
    x, w, v = gen(4), r(4), r(4)
    fn, their_fn = getattr(sp, name), getattr(asp, name)

    def ours(x):
        return np.sum(fn(x) * w)

    def ours_of_order(x):
        return np.sum(fn(order, x) * w)

    def theirs(x):
        return ag.numpy.sum((their_fn(x) if order is None else their_fn(order, x)) * w)

    mine = ours if order is None else ours_of_order
    want = ag.grad(theirs)(x)
    np.testing.assert_allclose(mindgrad.grad(mine)(x), want, rtol=1e-10)
    assert mindgrad.jvp(mine, (x,), (v,))[1] == pytest.approx(float(want @ v), rel=1e-10)


def test_multigammaln_and_np_i0_match_autograd():
    ag = pytest.importorskip("autograd")
    asp = autograd_special()
    a = draw.big(3) + 1.0
    np.testing.assert_allclose(mindgrad.grad(lambda a: np.sum(sp.multigammaln(a, 4)))(a),
                               ag.grad(lambda a: ag.numpy.sum(asp.multigammaln(a, 4)))(a),
                               rtol=1e-12)
    x = r(3)
    np.testing.assert_allclose(mindgrad.grad(lambda x: np.sum(np.i0(x)))(x), sp.i1(x),
                               rtol=1e-12)
    np.testing.assert_allclose(mindgrad.hessian(lambda x: np.sum(np.i0(x)))(x),
                               np.diag(0.5 * (sp.i0(x) + sp.iv(2, x))), rtol=1e-12)


def test_incomplete_functions_match_closed_forms_and_jax():
    x = np.array([0.3, 1.2, 2.5])
    a, b = 1.7, 2.5
    want = x ** (a - 1) * np.exp(-x) / sp.gamma(a)
    np.testing.assert_allclose(mindgrad.grad(lambda x: np.sum(sp.gammainc(a, x)))(x), want,
                               rtol=1e-12)
    np.testing.assert_allclose(mindgrad.grad(lambda x: np.sum(sp.gammaincc(a, x)))(x), -want,
                               rtol=1e-12)
    u = x / 3.0
    want = u ** (a - 1) * (1 - u) ** (b - 1) / sp.beta(a, b)
    np.testing.assert_allclose(mindgrad.grad(lambda u: np.sum(sp.betainc(a, b, u)))(u), want,
                               rtol=1e-12)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jsp = jax.scipy.special
    want = np.asarray(jax.vmap(jax.grad(lambda x: jsp.gammainc(a, x)))(x))
    np.testing.assert_allclose(mindgrad.grad(lambda x: np.sum(sp.gammainc(a, x)))(x), want,
                               rtol=1e-8)
    want = np.asarray(jax.vmap(jax.grad(lambda u: jsp.betainc(a, b, u)))(u))
    np.testing.assert_allclose(mindgrad.grad(lambda u: np.sum(sp.betainc(a, b, u)))(u), want,
                               rtol=1e-8)


def test_incomplete_gamma_slope_at_zero():
    """x^(a-1) e^-x / gamma(a) at x = 0: inf for a < 1, 1 for a = 1, 0 above."""
    zero = np.zeros(3)
    with np.errstate(divide="ignore"):
        got = mindgrad.grad(lambda x: np.sum(sp.gammainc(np.array([0.5, 1.0, 2.0]), x)))(zero)
    np.testing.assert_array_equal(got, [np.inf, 1.0, 0.0])


@pytest.mark.parametrize("fn, argnum, message", [
    (lambda a, x: np.sum(sp.gammainc(a, x)), 0, "the shape a of scipy.special.gammainc"),
    (lambda a, x: np.sum(sp.gammaincc(a, x)), 0, "the shape a of scipy.special.gammaincc"),
    (lambda a, x: np.sum(sp.betainc(a, 2.0, x)), 0, "the shape a of scipy.special.betainc"),
    (lambda b, x: np.sum(sp.betainc(1.5, b, x)), 0, "the shape b of scipy.special.betainc"),
    (lambda v, x: np.sum(sp.jv(v, x)), 0, "the order v of scipy.special.jv"),
])
def test_shapes_and_orders_without_closed_form_raise(fn, argnum, message):
    """Asked along a shape or order, an error; along x alone, the number."""
    a, x = 1.5, np.array([0.2, 0.6])
    with pytest.raises(NotImplementedError, match=message):
        mindgrad.grad(fn, argnum)(a, x)
    with pytest.raises(NotImplementedError, match=message):
        mindgrad.jvp(fn, (a, x), (1.0, np.zeros(2)))
    g = mindgrad.grad(fn, 1)(a, x)
    eps = 1e-6
    numeric = [(fn(a, x + eps * e) - fn(a, x - eps * e)) / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(g, numeric, rtol=1e-6)


def test_gammasgn_is_a_constant():
    x = negative(3) - np.array([0.0, 1.0, 2.0])  # signs -, +, -

    def f(x):
        return np.sum(x * sp.gammasgn(x))

    np.testing.assert_array_equal(mindgrad.grad(f)(x), sp.gammasgn(x))
    assert mindgrad.jvp(f, (x,), (np.ones(3),))[1] == pytest.approx(np.sum(sp.gammasgn(x)))


def test_multigammaln_dimension_by_keyword_is_refused_clearly():
    def f(a):
        return np.sum(sp.multigammaln(a, d=2))

    with pytest.raises(NoGradientRuleError, match="does not fit the rule for multigammaln"):
        mindgrad.grad(f)(draw.big(3))


def special_mix(x):
    return np.sum(sp.gammainc(1.7, x) * sp.jv(1.5, x) + sp.betainc(1.5, 2.5, x / 4.0) +
                  sp.multigammaln(x + 1.0, 3) + np.i0(x) * sp.y1(x) + sp.yn(2, x) + sp.rgamma(x))


def test_forward_over_forward():
    x, v = pos(3), r(3)

    def along(x):
        return mindgrad.jvp(special_mix, (x,), (v,))[1]

    eps = 1e-5
    numeric = (along(x + eps * v) - along(x - eps * v)) / (2 * eps)
    assert mindgrad.jvp(along, (x,), (v,))[1] == pytest.approx(numeric, rel=1e-5)
