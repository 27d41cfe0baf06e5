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


# ----- t, gamma, chi2, beta, poisson, dirichlet, multivariate_normal through the public API --


def t_nll(df, loc, scale, data):
    return -np.sum(stats.t.logpdf(data, df, loc, scale))


def gamma_fit(a, scale, data):
    return np.sum(stats.gamma.logpdf(data, a, scale=scale) + stats.gamma.cdf(data, 2.0, 0.0, scale))


def beta_mix(x, a, b):
    return np.sum(stats.beta.pdf(x, a, b) * stats.beta.logcdf(x, 2, 3))


def chi2_tails(x, df):
    return np.sum(stats.chi2.logcdf(x, 3.0) + stats.chi2.pdf(x, df, loc=-0.1, scale=1.2))


def t_cdf(x, loc, scale):
    return np.sum(stats.t.cdf(x, 2.5, loc, scale) ** 2 + stats.t.logcdf(x, 4.0))


def poisson_rates(mu):
    k = np.array([0, 1, 3, 7])
    return np.sum(stats.poisson.logpmf(k, mu) + stats.poisson.pmf(k, mu) ** 2 +
                  stats.poisson.cdf(k, mu, 1))


def dirichlet_fit(x, alpha):
    return np.sum(stats.dirichlet.logpdf(x, alpha)) + stats.dirichlet.pdf(x[:, 0], alpha)


def mvn_fit(x, mean, cov):
    return np.sum(stats.multivariate_normal.logpdf(x, mean, cov) +
                  stats.multivariate_normal.pdf(x, mean, cov)) + \
        stats.multivariate_normal.entropy(mean, cov)


MVN_POINT = r(3)


def mvn_lower(cov):
    return stats.multivariate_normal.logpdf(MVN_POINT, None, cov)


@pytest.mark.parametrize("fn, args", [
    (t_nll, (3.5, 0.2, 1.3, r(5))),
    (gamma_fit, (draw.big(), 1.4, above(4))),
    (beta_mix, (prob(3), pos(3), draw.big())),
    (chi2_tails, (above(3), draw.big(3))),
    (t_cdf, (r(3), r(3), pos(3))),
    (poisson_rates, (pos(4),)),
    (dirichlet_fit, (simplex(np.array([1.5, 2.0, 2.5]), 3), draw.big(3))),
    (mvn_fit, (r(4, 2), r(2), spd(2))),
    (mvn_lower, (spd(3, garbage=True),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_new_distributions_to_second_order(fn, args):
    mindgrad.check_grads(fn, args, order=2, modes=("rev", "fwd"))


def autograd_stats():
    ag = pytest.importorskip("autograd")
    return ag, pytest.importorskip("autograd.scipy.stats")


@pytest.mark.parametrize("name, method, args, argnums", [
    ("t", "logpdf", (r(4), 3.5, 0.3, 1.7), (0, 1, 2, 3)),
    ("t", "pdf", (r(4), 2.5, -0.2, 0.8), (0, 1, 2, 3)),
    ("gamma", "logpdf", (above(4), 2.5), (0, 1)),
    ("gamma", "pdf", (above(4), 1.5), (0, 1)),
    ("gamma", "cdf", (above(4), 1.5), (0,)),
    # autograd's chi2 gives 0 for a df that is not a whole number, and nothing along df
    ("chi2", "logpdf", (above(4), 3.0), (0,)),
    ("chi2", "pdf", (above(4), 4.0), (0,)),
    ("chi2", "cdf", (above(4), 2.5), (0,)),
    ("beta", "logpdf", (prob(4), 2.5, 1.5), (0, 1, 2)),
    ("beta", "pdf", (prob(4), 1.5, 3.0), (0, 1, 2)),
    ("beta", "cdf", (prob(4), 1.5, 3.0), (0,)),
    ("poisson", "logpmf", (np.array([0, 1, 4, 9]), 2.5), (1,)),
    ("poisson", "pmf", (np.array([0, 1, 4, 9]), 2.5), (1,)),
    ("poisson", "cdf", (np.array([0, 1, 4, 9]), 2.5), (1,)),
])
def test_distributions_match_autograd(name, method, args, argnums):
    ag, ast = autograd_stats()
    ours_fn, theirs_fn = getattr(getattr(stats, name), method), getattr(getattr(ast, name), method)
    w = r(4)

    def ours(*a):
        return np.sum(ours_fn(*a) * w)

    def theirs(*a):
        return ag.numpy.sum(theirs_fn(*a) * w)

    floats = tuple(np.float64(a) if isinstance(a, float) else a for a in args)
    for i in argnums:
        want = ag.grad(theirs, i)(*floats)
        np.testing.assert_allclose(mindgrad.grad(ours, i)(*args), want, rtol=1e-9,
                                   err_msg=f"{name}.{method} argument {i}")
        v = r(*np.shape(args[i]))
        tangents = tuple(v if j == i else np.zeros_like(a, dtype=float) if j in argnums else None
                         for j, a in enumerate(args))
        value, t = mindgrad.jvp(ours, tuple(args), tuple(
            t if t is None or np.ndim(t) else float(t) for t in tangents))
        assert t == pytest.approx(float(np.sum(want * v)), rel=1e-9)


@pytest.mark.parametrize("name, method, args", [
    ("t", "cdf", (r(4), 3.0, 0.3, 1.7)),  # JAX has no t.cdf: its pdf is the slope
    ("t", "logpdf", (r(4), 3.5, 0.3, 1.7)),
    ("gamma", "logpdf", (1.0 + above(4), 2.5, 0.4, 1.3)),
    ("gamma", "cdf", (1.0 + above(4), 2.5, 0.4, 1.3)),
    ("chi2", "logpdf", (1.0 + above(4), 3.5, 0.4, 1.3)),
    ("chi2", "pdf", (1.0 + above(4), 2.5, 0.4, 1.3)),
    ("chi2", "cdf", (1.0 + above(4), 2.5, 0.4, 1.3)),
    ("beta", "logpdf", (0.4 + 1.5 * prob(4), 2.5, 1.5, 0.4, 1.5)),
    ("beta", "cdf", (0.4 + 1.5 * prob(4), 2.5, 1.5, 0.4, 1.5)),
])
def test_distributions_match_jax(name, method, args):
    """Every float argument but the cdfs' shapes, loc and scale included."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jstats = pytest.importorskip("jax.scipy.stats")
    w = r(4)
    ours_fn = getattr(getattr(stats, name), method)
    if name == "t" and method == "cdf":
        theirs_fn = None
    else:
        theirs_fn = getattr(getattr(jstats, name), method)

    def ours(*a):
        return np.sum(ours_fn(*a) * w)

    n_shapes = len(args) - 3
    moving = [0, n_shapes + 1, n_shapes + 2]
    if method != "cdf":
        moving += list(range(1, n_shapes + 1))
    got = mindgrad.grad(ours, tuple(moving))(*args)
    for i, g in zip(moving, got):
        if theirs_fn is None:
            pdf = stats.t.pdf(*args)
            want = {0: w * pdf, 2: -np.sum(w * pdf),
                    3: -np.sum(w * pdf * (args[0] - args[2]) / args[3])}[i]
        else:
            want = np.asarray(jax.grad(lambda *a: jax.numpy.sum(theirs_fn(*a) * w), i)(*args))
        np.testing.assert_allclose(g, want, rtol=1e-8, err_msg=f"{name}.{method} argument {i}")


def test_multivariate_normal_matches_autograd_along_symmetric_directions():
    """autograd's gradient for cov is the symmetric matrix's; SciPy reads the lower triangle,
    so the two agree along symmetric directions, and mindgrad's upper triangle is 0."""
    ag, ast = autograd_stats()
    x, mean, cov = r(5, 3), r(3), spd(3)
    w = r(5)

    def ours(x, mean, cov):
        return np.sum(stats.multivariate_normal.logpdf(x, mean, cov) * w)

    def theirs(x, mean, cov):
        return ag.numpy.sum(ast.multivariate_normal.logpdf(x, mean, cov) * w)

    gx, gm, gc = mindgrad.grad(ours, (0, 1, 2))(x, mean, cov)
    np.testing.assert_allclose(gx, ag.grad(theirs, 0)(x, mean, cov), rtol=1e-10)
    np.testing.assert_allclose(gm, ag.grad(theirs, 1)(x, mean, cov), rtol=1e-10)
    assert np.all(np.triu(gc, 1) == 0)
    sym = r(3, 3)
    sym = sym + sym.T
    want = np.sum(ag.grad(theirs, 2)(x, mean, cov) * sym)
    assert np.sum(gc * sym) == pytest.approx(want, rel=1e-10)
    gc_pdf = mindgrad.grad(lambda c: np.sum(stats.multivariate_normal.pdf(x, mean, c)))(cov)
    want = ag.grad(lambda c: ag.numpy.sum(ast.multivariate_normal.pdf(x, mean, c)))(cov)
    assert np.sum(gc_pdf * sym) == pytest.approx(np.sum(want * sym), rel=1e-10)
    g_entropy = mindgrad.grad(lambda c: stats.multivariate_normal.entropy(mean, c))(cov)
    assert np.sum(g_entropy * sym) == pytest.approx(0.5 * np.sum(np.linalg.inv(cov) * sym))


def test_dirichlet_on_the_simplex_matches_autograd_and_differences():
    """With all K components, x lives on the simplex: the gradient is the formula's
    ((alpha - 1) / x, as autograd's); along the simplex, central differences agree."""
    ag, ast = autograd_stats()
    alpha = np.array([1.5, 2.5, 3.0])
    x = draw.rng.dirichlet(alpha)
    gx, ga = mindgrad.grad(lambda x, a: stats.dirichlet.logpdf(x, a), (0, 1))(x, alpha)
    np.testing.assert_allclose(gx, ag.grad(ast.dirichlet.logpdf, 0)(x, alpha), rtol=1e-12)
    np.testing.assert_allclose(ga, ag.grad(ast.dirichlet.logpdf, 1)(x, alpha), rtol=1e-12)
    np.testing.assert_allclose(gx, (alpha - 1) / x, rtol=1e-12)
    v = np.array([0.3, -0.1, -0.2])  # along the simplex
    eps = 1e-6
    numeric = (stats.dirichlet.pdf(x + eps * v, alpha) -
               stats.dirichlet.pdf(x - eps * v, alpha)) / (2 * eps)
    _, t = mindgrad.jvp(lambda x: stats.dirichlet.pdf(x, alpha), (x,), (v,))
    assert t == pytest.approx(numeric, rel=1e-6)
    xs = draw.rng.dirichlet(alpha, 4).T  # points along the second axis
    g = mindgrad.grad(lambda x: np.sum(stats.dirichlet.logpdf(x, alpha)))(xs)
    np.testing.assert_allclose(g, (alpha[:, None] - 1) / xs, rtol=1e-12)


def test_poisson_at_rate_zero_one_sided():
    """pmf(0, mu) = e^-mu and pmf(1, mu) = mu e^-mu at mu = 0: slopes -1 and 1; the cdf
    at k = 0 is e^-mu too."""
    mu = np.zeros(2)
    k = np.array([0, 1])
    got = mindgrad.grad(lambda mu: np.sum(stats.poisson.pmf(k, mu) * np.array([1.0, 2.0])))(mu)
    np.testing.assert_array_equal(got, [-1.0, 2.0])
    assert mindgrad.grad(lambda m: stats.poisson.logpmf(0, m))(0.0) == -1.0
    assert mindgrad.grad(lambda m: stats.poisson.cdf(0, m))(0.0) == -1.0


@pytest.mark.parametrize("fn, args, argnum, message", [
    (lambda x, df: np.sum(stats.t.cdf(x, df)), (r(3), 3.5), 1, "df of scipy.stats.t.cdf"),
    (lambda x, df: np.sum(stats.t.logcdf(x, df)), (r(3), 3.5), 1, "df of scipy.stats.t.logcdf"),
    (lambda x, a: np.sum(stats.gamma.cdf(x, a)), (above(3), 1.5), 1, "a of scipy.stats.gamma"),
    (lambda x, df: np.sum(stats.chi2.cdf(x, df)), (above(3), 2.5), 1, "df of scipy.stats.chi2"),
    (lambda x, b: np.sum(stats.beta.cdf(x, 2.0, b)), (prob(3), 2.5), 1, "b of scipy.stats.beta"),
    (lambda k, mu: np.sum(stats.poisson.pmf(k, mu)), (np.array([1.0, 2.0]), 1.5), 0,
     "k of scipy.stats.poisson.pmf"),
])
def test_derivatives_without_closed_form_raise(fn, args, argnum, message):
    with pytest.raises(NotImplementedError, match=message):
        mindgrad.grad(fn, argnum)(*args)
    tangents = tuple(np.ones_like(a) if i == argnum else np.zeros_like(a)
                     for i, a in enumerate(args))
    with pytest.raises(NotImplementedError, match=message):
        mindgrad.jvp(fn, args, tangents)
    other = 1 - argnum  # the other argument still differentiates
    g = mindgrad.grad(fn, other)(*args)
    eps = 1e-6
    moved = [list(args), list(args)]
    moved[0][other] = args[other] + eps
    moved[1][other] = args[other] - eps
    if np.ndim(args[other]) == 0:
        assert g == pytest.approx((fn(*moved[0]) - fn(*moved[1])) / (2 * eps), rel=1e-6)


def test_singular_covariance_is_refused():
    cov = np.array([[1.0, 1.0], [1.0, 1.0]])
    x = r(2)

    def f(x):
        return stats.multivariate_normal.logpdf(x, np.zeros(2), cov, allow_singular=True)

    with pytest.raises(NotImplementedError, match="nonsingular cov"):
        mindgrad.grad(f)(x)


def test_t_logpdf_float32_gradient_through_grad():
    x = x32(3)
    g = mindgrad.grad(lambda x: np.sum(stats.t.logpdf(x, 3.0, 0.5, 2.0)))(x)
    assert g.dtype == np.float32
    z = (x.astype(float) - 0.5) / 2.0
    np.testing.assert_allclose(g, -(4.0 * z / (3.0 + z * z)) / 2.0, rtol=1e-6)


@pytest.mark.parametrize("fn, x, inside", [
    (lambda x, a: np.sum(stats.gamma.pdf(x, a)), np.array([-1.0, 0.5]), [1]),
    (lambda x, a: np.sum(stats.chi2.pdf(x, a)), np.array([-1.0, 0.5]), [1]),
    (lambda x, a: np.sum(stats.beta.pdf(x, a, 2.0)), np.array([-0.5, 0.5, 1.5]), [1]),
    (lambda x, b: np.sum(stats.beta.pdf(x, 2.0, b)), np.array([-0.5, 0.5, 1.5]), [1]),
])
def test_pdf_shape_slopes_are_zero_outside_the_support(fn, x, inside):
    """The pdf is 0 there for every shape: its slope is 0, not 0 * log(negative) = nan."""
    shape, eps = 2.5, 1e-6
    got = mindgrad.grad(fn, 1)(x, shape)
    numeric = (fn(x[inside], shape + eps) - fn(x[inside], shape - eps)) / (2 * eps)
    assert got == pytest.approx(numeric, rel=1e-6)


def test_multivariate_normal_with_a_covariance_object():
    """A scipy.stats.Covariance is a constant: x and mean differentiate through its matrix."""
    diagonal = np.array([1.0, 2.0, 0.5])
    cov = stats.Covariance.from_diagonal(diagonal)
    x, mean, v = r(4, 3), r(3), r(4, 3)

    def f(x, mean):
        return np.sum(stats.multivariate_normal.logpdf(x, mean, cov))

    gx, gm = mindgrad.grad(f, (0, 1))(x, mean)
    np.testing.assert_allclose(gx, -(x - mean) / diagonal, rtol=1e-12)
    np.testing.assert_allclose(gm, np.sum((x - mean) / diagonal, axis=0), rtol=1e-12)
    _, t = mindgrad.jvp(f, (x, mean), (v, np.zeros(3)))
    assert t == pytest.approx(float(np.sum(gx * v)), rel=1e-12)


def forward_twice(fn, x, v):
    """The second directional derivative of ``fn`` along ``v`` by jvp over jvp, and by central
    differences of the first one."""
    def along(x):
        return mindgrad.jvp(fn, (x,), (v,))[1]

    eps = 1e-5
    numeric = (along(x + eps * v) - along(x - eps * v)) / (2 * eps)
    return mindgrad.jvp(along, (x,), (v,))[1], numeric


def t_in_df(df):
    return np.sum(stats.t.logpdf(np.array([-1.0, 0.3, 2.0]), df, 0.2, 1.4))


def gamma_cdf_in_x(x):
    return np.sum(stats.gamma.cdf(x, 2.5, 0.1, 1.3) + stats.chi2.logcdf(x, 3.0))


def poisson_in_mu(mu):
    return np.sum(stats.poisson.pmf(np.array([0, 2, 5]), mu) + stats.poisson.cdf(3, mu))


def dirichlet_in_alpha(alpha):
    return stats.dirichlet.logpdf(np.array([0.2, 0.5, 0.3]), alpha)


MVN_X = r(4, 2)


def mvn_in_cov(cov):
    return np.sum(stats.multivariate_normal.pdf(MVN_X, np.zeros(2), cov))


@pytest.mark.parametrize("fn, x", [
    (t_in_df, draw.big(3)), (gamma_cdf_in_x, above(3) + 0.2), (poisson_in_mu, pos(3)),
    (dirichlet_in_alpha, draw.big(3)), (mvn_in_cov, spd(2)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_forward_over_forward(fn, x):
    v = r(*np.shape(x))
    got, numeric = forward_twice(fn, x, v)
    assert got == pytest.approx(numeric, rel=1e-5, abs=1e-8)
