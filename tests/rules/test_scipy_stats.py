"""The rules for scipy.stats (mindgrad/rules/scipy_stats.py), in both directions: norm's pdf,
logpdf, cdf, logcdf, sf, logsf and ppf, and t's, gamma's, beta's and chi2's pdf, logpdf, cdf and
logcdf in x, their shape parameters, loc and scale, positional or by keyword, on shapes that
broadcast; poisson's pmf, logpmf and cdf in mu; dirichlet's pdf and logpdf; multivariate_normal's
pdf, logpdf and entropy with each form of mean and cov SciPy takes; far tails; second order
through the transformer; autograd's and JAX's derivatives where installed; the derivatives with
no closed form refused. The checks: tests/support/rule_check.py. Skipped where SciPy is not
installed.
"""

import numpy as np
import pytest

stats = pytest.importorskip("scipy.stats")

import mindgrad  # noqa: E402
from mindgrad.rules import jvp_of, vjp_of  # noqa: E402
from tests.support.inputs import Draw  # noqa: E402
from tests.support.rule_check import TANGENT, Cases, rule_tests  # noqa: E402

norm = stats.norm
draw = Draw(20261126)
r, pos, f, x32 = draw.r, draw.pos, draw.f, draw.x32


def prob(*shape):
    return draw.rng.uniform(0.1, 0.9, shape)


CASES = Cases()
case = CASES.add

METHODS = [norm.pdf, norm.logpdf, norm.cdf, norm.logcdf, norm.sf, norm.logsf]
for fn in METHODS:
    label = f"norm.{fn.__name__}"
    case(fn, r(3), label=label)
    case(fn, f(), label=label)
    case(fn, r(), label=label)
    case(fn, r(2, 3), 0.3, label=label)
    case(fn, r(2, 3), r(3), pos(2, 1), label=label)
    case(fn, r(3, 1), loc=r(4), scale=pos(), label=label)
    case(fn, r(1, 3), scale=pos(2, 1), label=label)
    case(fn, f(), f(), f(pos), label=label)
case(norm.ppf, prob(3), label="norm.ppf")
case(norm.ppf, prob(2, 3), r(3), pos(2, 1), label="norm.ppf")
case(norm.ppf, prob(), loc=f(), scale=f(pos), label="norm.ppf")
for fn in (norm.logcdf, norm.logsf):
    case(fn, np.array([-30.0, -5.0, 0.5, 5.0, 30.0]), 0.2, 1.5, label=f"norm.{fn.__name__}-tails")

# SciPy computes float32 in float64: the tangents are float64, as the outputs; the gradients
# too (the public API casts them to the inputs' dtype: test_float32_gradients_through_grad)
FLOAT32 = Cases()
for fn in METHODS:
    FLOAT32.add(fn, x32(3), x32(3), x32(3, gen=pos), label=f"norm.{fn.__name__}", only=TANGENT)


# t, gamma, chi2 and beta: x inside the support (loc + scale * z, z drawn inside the standard
# one); shape parameters as floats where the derivative has a closed form (pdf, logpdf), as
# integers, which have no gradient, for the cdfs (the derivative in the parameter has none)


def ints(low, high):
    def gen(*shape):
        return draw.rng.integers(low, high, shape)
    return gen


def above(*shape):  # inside (0, inf), away from 0
    return draw.rng.uniform(0.3, 3.0, shape)


FAMILIES = [  # distribution, its shape parameters' draws (float, integer), standard support
    ("t", stats.t, [(draw.big, ints(1, 6))], r),
    ("gamma", stats.gamma, [(draw.big, ints(1, 4))], above),
    ("chi2", stats.chi2, [(draw.big, ints(1, 6))], above),
    ("beta", stats.beta, [(draw.big, ints(1, 4)), (pos, ints(1, 4))], prob),
]
for name, dist, params, z in FAMILIES:
    for method in ("pdf", "logpdf", "cdf", "logcdf"):
        fn, label = getattr(dist, method), f"{name}.{method}"
        shape_param = [p[0] if method in ("pdf", "logpdf") else p[1] for p in params]
        case(fn, z(3), *[p(3) for p in shape_param], label=label)
        case(fn, np.asarray(z()), *[p() for p in shape_param], label=label)
        case(fn, float(z()), *[p() for p in shape_param], label=label)
        loc, scale = r(3), pos(2, 1)
        case(fn, loc + scale * z(2, 3), *[p(3) for p in shape_param], loc, scale, label=label)
        loc, scale = r(4), pos()
        case(fn, loc + scale * z(3, 1), *[p() for p in shape_param], loc=loc, scale=scale,
             label=label)
        scale = pos(2, 1)
        case(fn, scale * z(1, 3), *[p(2, 1) for p in shape_param], scale=scale, label=label)
for method in ("logcdf", "cdf"):
    fn = getattr(stats.t, method)
    case(fn, np.array([-40.0, -8.0, 0.5, 8.0]), 3, 0.2, 1.5, label=f"t.{method}-tails")
case(stats.gamma.logcdf, np.array([1e-3, 0.05, 30.0]), 2, label="gamma.logcdf-tails")

# Poisson: counts k (integers, loc too), the rate mu moves
for method in ("pmf", "logpmf", "cdf"):
    fn, label = getattr(stats.poisson, method), f"poisson.{method}"
    case(fn, np.array([0, 1, 3, 6]), pos(4), label=label)
    case(fn, np.array(2), f(pos), label=label)
    case(fn, np.array([[2], [4]]), 3.0 * pos(3), 1, label=label)
    case(fn, np.array([0, 2, 5]), pos(), label=label)
    case(fn, np.array([2, 4, 9]), pos(3), loc=2, label=label)

# Dirichlet: x with K - 1 components along the first axis (SciPy adds the last: x on the
# simplex moves freely there; the K-component form is checked along the simplex below)


def simplex(alpha, points=None):
    x = draw.rng.dirichlet(alpha, points).T
    return x[:-1]


for fn in (stats.dirichlet.pdf, stats.dirichlet.logpdf):
    label = f"dirichlet.{fn.__name__}"
    alpha = draw.big(3)
    case(fn, simplex(alpha), alpha, label=label)
    alpha = draw.big(4)
    case(fn, simplex(alpha, 5), alpha, label=label)
    alpha = pos(2)
    case(fn, simplex(alpha, 1), alpha, label=label)


# multivariate normal: every form of x, mean and cov SciPy reads; a matrix cov's upper triangle
# is not read, and gets no gradient


def spd(n, garbage=False):
    a = draw.rng.standard_normal((n, n))
    m = a @ a.T + n * np.eye(n)
    if garbage:  # SciPy reads the lower triangle only
        m[np.triu_indices(n, 1)] = 7.0
    return m


MVN = stats.multivariate_normal
for fn in (MVN.logpdf, MVN.pdf):
    label = f"multivariate_normal.{fn.__name__}"
    case(fn, r(2), r(2), spd(2), label=label)
    case(fn, r(4, 3), r(3), spd(3), label=label)
    case(fn, r(2, 4, 3), r(3), spd(3, garbage=True), label=label)
    case(fn, r(1, 2), r(2), spd(2), label=label)
    case(fn, r(5), None, f(pos), label=label)
    case(fn, r(), r(1), spd(1), label=label)
    case(fn, r(5), r(), pos(), label=label)
    case(fn, r(4, 3), r(3), pos(3), label=label)
    case(fn, r(4, 3), r(3), 1.5, label=label)
    case(fn, r(3), mean=r(3), cov=spd(3), label=label)
case(MVN.entropy, r(3), spd(3), label="multivariate_normal.entropy")
case(MVN.entropy, r(3), spd(3, garbage=True), label="multivariate_normal.entropy")
case(MVN.entropy, None, f(pos), label="multivariate_normal.entropy")
case(MVN.entropy, r(2), pos(2), label="multivariate_normal.entropy")
case(MVN.entropy, r(2), np.asarray(pos()), label="multivariate_normal.entropy")

for name, dist, params, z in FAMILIES:
    for method in ("pdf", "logpdf", "cdf", "logcdf"):
        shape_param = [p[0] if method in ("pdf", "logpdf") else p[1] for p in params]
        FLOAT32.add(getattr(dist, method), x32(3, gen=z), *[p(3) for p in shape_param],
                    label=f"{name}.{method}", only=TANGENT)
FLOAT32.add(stats.poisson.logpmf, np.array([1, 2, 3]), x32(3, gen=pos), label="poisson.logpmf",
            only=TANGENT)

globals().update(rule_tests(CASES, FLOAT32))


def test_slopes_match_closed_forms():
    x, loc, scale = np.array([-1.0, 0.5, 2.0]), 0.3, 1.7
    density = norm.pdf(x, loc, scale)
    _, vjp = vjp_of(norm.cdf, x, loc, scale)
    gx, gloc, gscale = vjp(np.ones(3))
    np.testing.assert_allclose(gx, density, rtol=1e-12)
    assert gloc == pytest.approx(-density.sum(), rel=1e-12)
    assert gscale == pytest.approx(-(density * (x - loc) / scale).sum(), rel=1e-12)
    _, jvp = jvp_of(norm.logpdf, x, loc, scale)
    np.testing.assert_allclose(jvp(np.ones(3), None, None), -(x - loc) / scale ** 2,
                               rtol=1e-12)


def test_logcdf_slope_is_finite_far_in_the_tail():
    _, vjp = vjp_of(norm.logcdf, np.array([-40.0]))
    np.testing.assert_allclose(vjp(np.ones(1))[0], [40.0249], rtol=1e-4)


def test_ppf_slope_is_infinite_at_0_and_1():
    with np.errstate(over="ignore", invalid="ignore"):  # the gradient for scale: inf - inf
        _, vjp = vjp_of(norm.ppf, np.array([0.0, 1.0]))
        np.testing.assert_array_equal(vjp(np.ones(2))[0], [np.inf, np.inf])


def gaussian_nll(mu, sigma, data):
    return -np.sum(norm.logpdf(data, loc=mu, scale=sigma))


def tails(x, s):
    return np.sum(norm.logcdf(x, 0.5, s) * norm.sf(x, scale=s) + norm.cdf(x) * norm.pdf(x, x, s))


@pytest.mark.parametrize("fn, args", [
    (gaussian_nll, (0.4, 1.3, r(5))),
    (tails, (r(3), pos(3))),
    (lambda q, m: np.sum(norm.ppf(q, m, 2.0) ** 2), (prob(3), r(3))),
])
def test_to_second_order(fn, args):
    mindgrad.check_grads(fn, args, order=2, modes=("rev", "fwd"))


def test_maximum_likelihood_gradient_is_zero_at_the_estimate():
    data = r(20)
    mu, sigma = data.mean(), data.std()
    g_mu, g_sigma = mindgrad.grad(gaussian_nll, (0, 1))(mu, sigma, data)
    assert abs(g_mu) < 1e-10 and abs(g_sigma) < 1e-10


def test_float32_gradients_through_grad():
    x = x32(3)
    g = mindgrad.grad(lambda x: np.sum(norm.logcdf(x, 0.5, 2.0)))(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.exp(norm.logpdf(x, 0.5, 2.0) - norm.logcdf(x, 0.5, 2.0)),
                               rtol=1e-6)


def test_a_norm_method_differentiated_itself_uses_its_rule():
    x, loc, scale = 0.5, 0.2, 1.5
    z = (x - loc) / scale
    got = mindgrad.grad(norm.logpdf, (0, 1, 2))(x, loc, scale)
    assert got == pytest.approx((-z / scale, z / scale, (z * z - 1.0) / scale), rel=1e-12)
