"""Rules for ``scipy.stats``, in both directions: the continuous distributions ``norm``
(``pdf``, ``logpdf``, ``cdf``, ``logcdf``, ``sf``, ``logsf``, ``ppf``), ``t``, ``gamma``,
``beta`` and ``chi2`` (``pdf``, ``logpdf``, ``cdf``, ``logcdf``), with ``loc`` and ``scale``
positional or by keyword: elementwise in ``x``, the shape parameters, ``loc`` and ``scale``, which
broadcast; ``poisson`` (``pmf``, ``logpmf``, ``cdf``) in its rate ``mu``; ``dirichlet``
(``pdf``, ``logpdf``) in ``x`` and ``alpha``; ``multivariate_normal`` (``pdf``, ``logpdf`` in
``x``, ``mean`` and ``cov``; ``entropy`` in ``cov``).

SciPy is optional: this module is imported by the registry once the program has imported
``scipy.stats`` (``DEFERRED`` in ``mindgrad/rules/registry.py``). The rules are for the methods
of the distribution objects themselves (``norm.pdf(x, loc, scale)``), not of a frozen
distribution (``norm(loc, scale).pdf(x)``), which has no rule.

With ``z = (x - loc) / scale`` and the standard density ``f(z)``: ``pdf = f(z) / scale``, so
the slopes of ``logpdf`` are ``s / scale`` in ``x``, ``-s / scale`` in ``loc`` and ``-(z s +
1) / scale`` in ``scale``, with ``s = d log f / dz``; those of ``pdf`` are ``pdf`` times them.
The cdf's slope in ``x`` is the pdf, and the log-probabilities' slopes are ratios ``pdf / cdf``
written as ``exp(logpdf - logcdf)``, finite far in the tails where both underflow. The slopes
are written with functions that have rules (``digamma``, the distributions' own ``pdf``), so
second and higher derivatives follow.

Derivatives without a closed form raise, only when a gradient or tangent along that argument is
asked for (``no_slope``; integers get none): the cdfs of ``t``, ``gamma``, ``beta`` and ``chi2``
along their shape parameters (``df``, ``a``, ``b``: derivatives of incomplete beta and gamma
functions in their parameters); ``poisson`` along ``k`` (a count: the pmf is not continuous in
it) and ``loc`` (an integer shift). Gradients of float32 inputs come out in float64, as the
values (the public API casts them back).
"""

import math

import numpy as np
import scipy.special as sp
from scipy.stats import Covariance, dirichlet, multivariate_normal, norm, poisson
from scipy.stats import beta as beta_dist
from scipy.stats import chi2 as chi2_dist
from scipy.stats import gamma as gamma_dist
from scipy.stats import t as student_t

from mindgrad.rules import (
    adjoint,
    d,
    elementwise,
    nondifferentiable,
    slope,
    tangent,
    transpose,
    transpose_of,
)
from mindgrad.rules.helpers import swap_last_axes
from mindgrad.rules.numpy_decompositions import triangle_grad, triangle_tangent
from mindgrad.rules.scipy_special import no_slope
from mindgrad.runtime import zero, zero_in, zero_in_zero_out

SQRT_2PI = math.sqrt(2.0 * math.pi)


def standardized(x, loc, scale, out):
    """``(x - loc) / scale`` at the precision of the result ``out``: SciPy computes float32
    inputs in float64, and the tangents have the output's dtype."""
    return np.asarray(x - loc, dtype=np.result_type(out, 1.0)) / scale


@elementwise(norm.pdf)
def _(out, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    slope[x] = -z * out / scale
    slope[loc] = z * out / scale
    slope[scale] = (z * z - 1.0) * out / scale


@elementwise(norm.logpdf)
def _(out, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    slope[x] = -z / scale
    slope[loc] = z / scale
    slope[scale] = (z * z - 1.0) / scale


@elementwise(norm.cdf)
def _(out, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    density = np.exp(-0.5 * z * z) / (SQRT_2PI * scale)
    slope[x] = density
    slope[loc] = -density
    slope[scale] = -density * z


@elementwise(norm.sf)
def _(out, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    density = np.exp(-0.5 * z * z) / (SQRT_2PI * scale)
    slope[x] = -density
    slope[loc] = density
    slope[scale] = density * z


@elementwise(norm.logcdf)
def _(out, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    ratio = np.exp(-0.5 * z * z - out) / (SQRT_2PI * scale)  # pdf / cdf
    slope[x] = ratio
    slope[loc] = -ratio
    slope[scale] = -ratio * z


@elementwise(norm.logsf)
def _(out, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    ratio = np.exp(-0.5 * z * z - out) / (SQRT_2PI * scale)  # pdf / sf
    slope[x] = -ratio
    slope[loc] = ratio
    slope[scale] = ratio * z


@elementwise(norm.ppf)
def _(out, q, loc=0.0, scale=1.0):
    z = sp.ndtri(q)
    slope[q] = SQRT_2PI * scale * np.exp(0.5 * z * z)  # inf at 0 and 1
    slope[loc] = 1.0
    slope[scale] = z


# ----- Student's t: log f(z) = const(df) - (df + 1) / 2 log(1 + z^2 / df) --------------------


def t_score(z, df):
    """``d log f / dz`` of the standard t density."""
    return -(df + 1.0) * z / (df + z * z)


def t_df_slope(z, df):
    """``d log f / d df`` of the standard t density."""
    return 0.5 * (sp.digamma(0.5 * (df + 1.0)) - sp.digamma(0.5 * df) - np.log1p(z * z / df) +
                  (z * z - 1.0) / (df + z * z))


@elementwise(student_t.logpdf)
def _(out, x, df, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    s = t_score(z, df)
    slope[x] = s / scale
    slope[df] = t_df_slope(z, df)
    slope[loc] = -s / scale
    slope[scale] = -(z * s + 1.0) / scale


@elementwise(student_t.pdf)
def _(out, x, df, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    s = t_score(z, df)
    slope[x] = out * s / scale
    slope[df] = out * t_df_slope(z, df)
    slope[loc] = -out * s / scale
    slope[scale] = -out * (z * s + 1.0) / scale


@elementwise(student_t.cdf)
def _(out, x, df, loc=0.0, scale=1.0):
    """No derivative in the degrees of freedom ``df`` (that of an incomplete beta function in its
    parameters has no closed form): differentiating along it raises."""
    z = standardized(x, loc, scale, out)
    density = student_t.pdf(x, df, loc, scale)
    slope[x] = density
    slope[df] = no_slope(df, "the degrees of freedom df of scipy.stats.t.cdf")
    slope[loc] = -density
    slope[scale] = -density * z


@elementwise(student_t.logcdf)
def _(out, x, df, loc=0.0, scale=1.0):
    """No derivative in the degrees of freedom ``df`` (that of an incomplete beta function in its
    parameters has no closed form): differentiating along it raises."""
    z = standardized(x, loc, scale, out)
    ratio = np.exp(student_t.logpdf(x, df, loc, scale) - out)  # pdf / cdf
    slope[x] = ratio
    slope[df] = no_slope(df, "the degrees of freedom df of scipy.stats.t.logcdf")
    slope[loc] = -ratio
    slope[scale] = -ratio * z


# ----- gamma: log f(z) = (a - 1) log z - z - gammaln(a), z > 0 -------------------------------


@elementwise(gamma_dist.logpdf)
def _(out, x, a, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    s = (a - 1.0) / z - 1.0
    slope[x] = s / scale
    slope[a] = np.log(z) - sp.digamma(a)
    slope[loc] = -s / scale
    slope[scale] = -(z * s + 1.0) / scale


@elementwise(gamma_dist.pdf)
def _(out, x, a, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    s = (a - 1.0) / z - 1.0
    slope[x] = out * s / scale
    slope[a] = sp.xlogy(out, z) - out * sp.digamma(a)  # 0 outside the support, as the pdf
    slope[loc] = -out * s / scale
    slope[scale] = -out * (z * s + 1.0) / scale


@elementwise(gamma_dist.cdf)
def _(out, x, a, loc=0.0, scale=1.0):
    """No derivative in the shape ``a`` (that of an incomplete gamma function in its
    parameters has no closed form): differentiating along it raises."""
    z = standardized(x, loc, scale, out)
    density = gamma_dist.pdf(x, a, loc, scale)
    slope[x] = density
    slope[a] = no_slope(a, "the shape a of scipy.stats.gamma.cdf")
    slope[loc] = -density
    slope[scale] = -density * z


@elementwise(gamma_dist.logcdf)
def _(out, x, a, loc=0.0, scale=1.0):
    """No derivative in the shape ``a`` (that of an incomplete gamma function in its
    parameters has no closed form): differentiating along it raises."""
    z = standardized(x, loc, scale, out)
    ratio = np.exp(gamma_dist.logpdf(x, a, loc, scale) - out)  # pdf / cdf
    slope[x] = ratio
    slope[a] = no_slope(a, "the shape a of scipy.stats.gamma.logcdf")
    slope[loc] = -ratio
    slope[scale] = -ratio * z


# ----- chi-squared: gamma of shape df / 2, scale 2 --------------------------------------------


@elementwise(chi2_dist.logpdf)
def _(out, x, df, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    s = (0.5 * df - 1.0) / z - 0.5
    slope[x] = s / scale
    slope[df] = 0.5 * (np.log(0.5 * z) - sp.digamma(0.5 * df))
    slope[loc] = -s / scale
    slope[scale] = -(z * s + 1.0) / scale


@elementwise(chi2_dist.pdf)
def _(out, x, df, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    s = (0.5 * df - 1.0) / z - 0.5
    slope[x] = out * s / scale
    slope[df] = 0.5 * (sp.xlogy(out, 0.5 * z) - out * sp.digamma(0.5 * df))  # 0 off support
    slope[loc] = -out * s / scale
    slope[scale] = -out * (z * s + 1.0) / scale


@elementwise(chi2_dist.cdf)
def _(out, x, df, loc=0.0, scale=1.0):
    """No derivative in the degrees of freedom ``df`` (that of an incomplete gamma function in its
    parameters has no closed form): differentiating along it raises."""
    z = standardized(x, loc, scale, out)
    density = chi2_dist.pdf(x, df, loc, scale)
    slope[x] = density
    slope[df] = no_slope(df, "the degrees of freedom df of scipy.stats.chi2.cdf")
    slope[loc] = -density
    slope[scale] = -density * z


@elementwise(chi2_dist.logcdf)
def _(out, x, df, loc=0.0, scale=1.0):
    """No derivative in the degrees of freedom ``df`` (that of an incomplete gamma function in its
    parameters has no closed form): differentiating along it raises."""
    z = standardized(x, loc, scale, out)
    ratio = np.exp(chi2_dist.logpdf(x, df, loc, scale) - out)  # pdf / cdf
    slope[x] = ratio
    slope[df] = no_slope(df, "the degrees of freedom df of scipy.stats.chi2.logcdf")
    slope[loc] = -ratio
    slope[scale] = -ratio * z


# ----- beta: log f(z) = (a - 1) log z + (b - 1) log(1 - z) - betaln(a, b), 0 < z < 1 ----------


def beta_score(z, a, b):
    """``d log f / dz`` of the standard beta density."""
    return (a - 1.0) / z - (b - 1.0) / (1.0 - z)


@elementwise(beta_dist.logpdf)
def _(out, x, a, b, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    s = beta_score(z, a, b)
    slope[x] = s / scale
    slope[a] = np.log(z) - sp.digamma(a) + sp.digamma(a + b)
    slope[b] = np.log1p(-z) - sp.digamma(b) + sp.digamma(a + b)
    slope[loc] = -s / scale
    slope[scale] = -(z * s + 1.0) / scale


@elementwise(beta_dist.pdf)
def _(out, x, a, b, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    s = beta_score(z, a, b)
    slope[x] = out * s / scale
    slope[a] = sp.xlogy(out, z) - out * (sp.digamma(a) - sp.digamma(a + b))  # 0 off support
    slope[b] = sp.xlog1py(out, -z) - out * (sp.digamma(b) - sp.digamma(a + b))
    slope[loc] = -out * s / scale
    slope[scale] = -out * (z * s + 1.0) / scale


@elementwise(beta_dist.cdf)
def _(out, x, a, b, loc=0.0, scale=1.0):
    """No derivative in the shapes ``a`` and ``b`` (that of an incomplete beta function in its
    parameters has no closed form): differentiating along it raises."""
    z = standardized(x, loc, scale, out)
    density = beta_dist.pdf(x, a, b, loc, scale)
    slope[x] = density
    slope[a] = no_slope(a, "the shape a of scipy.stats.beta.cdf")
    slope[b] = no_slope(b, "the shape b of scipy.stats.beta.cdf")
    slope[loc] = -density
    slope[scale] = -density * z


@elementwise(beta_dist.logcdf)
def _(out, x, a, b, loc=0.0, scale=1.0):
    """No derivative in the shapes ``a`` and ``b`` (that of an incomplete beta function in its
    parameters has no closed form): differentiating along it raises."""
    z = standardized(x, loc, scale, out)
    ratio = np.exp(beta_dist.logpdf(x, a, b, loc, scale) - out)  # pdf / cdf
    slope[x] = ratio
    slope[a] = no_slope(a, "the shape a of scipy.stats.beta.logcdf")
    slope[b] = no_slope(b, "the shape b of scipy.stats.beta.logcdf")
    slope[loc] = -ratio
    slope[scale] = -ratio * z


# ----- Poisson: pmf(k) = mu^n e^-mu / n!, n = k - loc; differentiable in mu alone -------------


@elementwise(poisson.logpmf)
def _(out, k, mu, loc=0):
    """In ``mu`` only: ``k`` is a count and ``loc`` an integer shift (differentiating along
    a float ``k`` or ``loc`` raises)."""
    slope[k] = no_slope(k, "k of scipy.stats.poisson.logpmf, a count")
    slope[mu] = (k - loc) / np.where(k == loc, 1.0, mu) - 1.0  # -1 at n = 0, mu = 0 included
    slope[loc] = no_slope(loc, "loc of scipy.stats.poisson.logpmf, an integer shift")


@elementwise(poisson.pmf)
def _(out, k, mu, loc=0):
    """In ``mu`` only: ``k`` is a count and ``loc`` an integer shift (differentiating along
    a float ``k`` or ``loc`` raises)."""
    slope[k] = no_slope(k, "k of scipy.stats.poisson.pmf, a count")
    slope[mu] = poisson.pmf(k - 1, mu, loc) - out  # finite at mu = 0, 0 where the pmf is
    slope[loc] = no_slope(loc, "loc of scipy.stats.poisson.pmf, an integer shift")


@elementwise(poisson.cdf)
def _(out, k, mu, loc=0):
    """In ``mu`` only: ``k`` is a count and ``loc`` an integer shift (differentiating along
    a float ``k`` or ``loc`` raises)."""
    slope[k] = no_slope(k, "k of scipy.stats.poisson.cdf, a count")
    slope[mu] = -poisson.pmf(np.floor(k - loc), mu)  # the cdf is gammaincc(n + 1, mu)
    slope[loc] = no_slope(loc, "loc of scipy.stats.poisson.cdf, an integer shift")


# ----- Dirichlet: log f(x) = sum_i (alpha_i - 1) log x_i - lnB(alpha) ---------------------------
# SciPy takes the K components along the first axis of x, or K - 1 of them (the last is then
# 1 - their sum); alpha is a vector of K entries. The function is defined on the simplex only:
# the gradient in x is that of the formula, as autograd's and JAX's.


def dirichlet_points(x, alpha):
    """``x`` with its K components along the first axis (the last one added as SciPy does
    where ``x`` has K - 1), and ``alpha`` shaped to broadcast along that axis."""
    x = np.asarray(x, dtype=np.result_type(x, 1.0))
    if np.shape(x)[0] == np.shape(alpha)[0] - 1:
        x = np.concatenate([x, 1.0 - np.sum(x, axis=0, keepdims=True)])
    return x, np.reshape(alpha, np.shape(alpha) + (1,) * (np.ndim(x) - 1))


@zero_in_zero_out("g")
def dirichlet_grad_x(g, x, alpha):
    """Gradient for ``x`` of ``sum(g * logpdf(x, alpha))``: ``g (alpha_i - 1) / x_i``, the
    last component's taken off the others' where ``x`` has K - 1."""
    if zero_in(g):
        return zero
    full, a = dirichlet_points(x, alpha)
    grad = g * (a - 1.0) / full
    if np.shape(x)[0] < np.shape(full)[0]:
        grad = grad[:-1] - grad[-1:]
    return grad


def dirichlet_alpha_slope(x, alpha):
    """``d logpdf / d alpha_i = log x_i - digamma(alpha_i) + digamma(sum alpha)``, one per
    component and point (components along the first axis)."""
    full, a = dirichlet_points(x, alpha)
    return np.log(full) - sp.digamma(a) + sp.digamma(np.sum(alpha))


@zero_in_zero_out("g")
def dirichlet_grad_alpha(g, x, alpha):
    """Gradient for ``alpha`` of ``sum(g * logpdf(x, alpha))``."""
    if zero_in(g):
        return zero
    slopes = dirichlet_alpha_slope(x, alpha)
    return np.reshape(np.sum(np.reshape(g * slopes, (np.shape(slopes)[0], -1)), axis=1),
                      np.shape(alpha))


@zero_in_zero_out("t")
def dirichlet_tangent_x(t, x, alpha, out):
    """Tangent of ``logpdf(x, alpha)`` from ``x``'s tangent ``t``."""
    if zero_in(t):
        return zero
    full, a = dirichlet_points(x, alpha)
    if np.shape(x)[0] < np.shape(full)[0]:
        t = np.concatenate([t, -np.sum(t, axis=0, keepdims=True)])
    return np.reshape(np.sum((a - 1.0) / full * t, axis=0), np.shape(out))


@zero_in_zero_out("t")
def dirichlet_tangent_alpha(t, x, alpha, out):
    """Tangent of ``logpdf(x, alpha)`` from ``alpha``'s tangent ``t``."""
    if zero_in(t):
        return zero
    slopes = dirichlet_alpha_slope(x, alpha)
    t = np.reshape(t, np.shape(t) + (1,) * (np.ndim(slopes) - 1))
    return np.reshape(np.sum(slopes * t, axis=0), np.shape(out))


# the tangents transposed in their tangents (@transpose reads them)
@transpose_of(dirichlet_tangent_x)
def _(ans, t, x, alpha, out):
    d[t] = dirichlet_grad_x(d[ans], x, alpha)


@transpose_of(dirichlet_tangent_alpha)
def _(ans, t, x, alpha, out):
    d[t] = dirichlet_grad_alpha(d[ans], x, alpha)


@transpose(dirichlet.logpdf)
@tangent(dirichlet.logpdf)
def _(out, x, alpha):
    """``x`` on the simplex, its K or K - 1 components along the first axis; the gradient in
    ``x`` is that of the formula (the function is defined on the simplex only)."""
    d[out] = dirichlet_tangent_x(d[x], x, alpha, out)
    d[out] = dirichlet_tangent_alpha(d[alpha], x, alpha, out)


@adjoint(dirichlet.pdf)
def _(out, x, alpha):
    """``x`` on the simplex, its K or K - 1 components along the first axis; the gradient in
    ``x`` is that of the formula (the function is defined on the simplex only)."""
    d[x] = dirichlet_grad_x(d[out] * out, x, alpha)
    d[alpha] = dirichlet_grad_alpha(d[out] * out, x, alpha)


@tangent(dirichlet.pdf)
def _(out, x, alpha):
    d[out] = out * dirichlet_tangent_x(d[x], x, alpha, out)
    d[out] = out * dirichlet_tangent_alpha(d[alpha], x, alpha, out)


# ----- multivariate normal: logpdf = -(dim log 2pi + log det S + r^T S^-1 r) / 2, r = x - mean --
# SciPy reads the points along x's last axis (a 1-d x is one point, or, where dim is 1, one
# point per entry), a scalar cov as cov * I and a vector as a diagonal; a matrix cov is read
# from its lower triangle as a symmetric matrix S, and that triangle gets the gradient (as for
# np.linalg.eigh). allow_singular=True with a singular cov (a pseudo-inverse and
# pseudo-determinant) has no rule: differentiating through it raises.


def covariance_matrix(cov):
    """The matrix of a ``scipy.stats.Covariance`` object: a constant."""
    return cov.covariance


nondifferentiable(covariance_matrix)


def mvn_dim(mean, cov):
    """The dimension SciPy reads from ``mean`` and ``cov``."""
    if mean is not None:
        return np.size(mean)
    if isinstance(cov, Covariance):
        return cov.shape[-1]
    return np.shape(cov)[0] if np.ndim(cov) == 2 else 1


def mvn_cov(mean, cov, allow_singular):
    """The symmetric covariance matrix SciPy reads from ``cov`` (a ``scipy.stats.Covariance``
    object is a constant, never differentiated: its matrix)."""
    dim = mvn_dim(mean, cov)
    if isinstance(cov, Covariance):
        full = covariance_matrix(cov)
        allow_singular = True  # its rank is checked below
    elif np.ndim(cov) == 0:
        full = cov * np.eye(dim)
    elif np.ndim(cov) == 1:
        full = np.diag(cov)
    else:  # the lower triangle mirrored, as the tangent of the matrix read is
        full = triangle_tangent(np.asarray(cov, dtype=np.result_type(cov, 1.0)))
    if allow_singular and np.linalg.matrix_rank(full, hermitian=True) < dim:
        raise NotImplementedError("mindgrad differentiates scipy.stats.multivariate_normal "
                                  "with a nonsingular cov only (allow_singular=True with a "
                                  "singular cov has no rule)")
    return full


def mvn_points(x, mean, cov):
    """``x - mean``, one row per point, as SciPy reads them."""
    points = np.reshape(np.asarray(x, dtype=np.result_type(x, 1.0)), (-1, mvn_dim(mean, cov)))
    return points if mean is None else points - np.ravel(mean)


def mvn_cov_part(g_sym, cov):
    """The gradient for ``cov`` as given from the gradient ``g_sym`` of the symmetric matrix
    read from it: its trace for a scalar, its diagonal for a vector, its lower triangle."""
    if np.ndim(cov) == 0:
        return np.trace(g_sym)
    if np.ndim(cov) == 1:
        return np.diagonal(g_sym)
    return triangle_grad(g_sym)


def mvn_cov_tangent(t, mean, cov):
    """The tangent of the symmetric matrix read from ``cov`` (tangent ``t``)."""
    if np.ndim(cov) == 0:
        return t * np.eye(mvn_dim(mean, cov))
    if np.ndim(cov) == 1:
        return np.diag(t)
    return triangle_tangent(t)


def mvn_whitened(x, mean, cov, allow_singular):
    """``S^-1 (x - mean)``, one row per point."""
    precision = np.linalg.inv(mvn_cov(mean, cov, allow_singular))
    return mvn_points(x, mean, cov) @ precision


@zero_in_zero_out("g")
def mvn_grad_x(g, x, mean, cov, allow_singular):
    """Gradient for ``x`` of ``sum(g * logpdf(x, mean, cov))``: ``-g S^-1 (x - mean)``."""
    if zero_in(g):
        return zero
    w = mvn_whitened(x, mean, cov, allow_singular)
    return np.reshape(-np.reshape(g, (-1, 1)) * w, np.shape(x))


@zero_in_zero_out("g")
def mvn_grad_mean(g, x, mean, cov, allow_singular):
    """Gradient for ``mean``: ``sum_n g_n S^-1 (x_n - mean)``."""
    if zero_in(g):
        return zero
    w = mvn_whitened(x, mean, cov, allow_singular)
    return np.reshape(np.sum(np.reshape(g, (-1, 1)) * w, axis=0), np.shape(mean))


@zero_in_zero_out("g")
def mvn_grad_cov(g, x, mean, cov, allow_singular):
    """Gradient for ``cov``: ``(S^-1 R S^-1 - (sum g) S^-1) / 2``, ``R = sum_n g_n r_n r_n^T``,
    taken to the entries of ``cov`` SciPy reads."""
    if zero_in(g):
        return zero
    precision = np.linalg.inv(mvn_cov(mean, cov, allow_singular))
    w = mvn_points(x, mean, cov) @ precision
    weights = np.reshape(g, (-1, 1))
    g_sym = 0.5 * (swap_last_axes(w) @ (weights * w) - np.sum(weights) * precision)
    return mvn_cov_part(g_sym, cov)


@zero_in_zero_out("t")
def mvn_tangent_x(t, x, mean, cov, allow_singular, out):
    """Tangent of ``logpdf`` from ``x``'s tangent: ``-(S^-1 r) . t`` per point."""
    if zero_in(t):
        return zero
    w = mvn_whitened(x, mean, cov, allow_singular)
    return np.reshape(-np.sum(w * np.reshape(t, np.shape(w)), axis=-1), np.shape(out))


@zero_in_zero_out("t")
def mvn_tangent_mean(t, x, mean, cov, allow_singular, out):
    """Tangent of ``logpdf`` from ``mean``'s tangent: ``(S^-1 r) . t`` per point."""
    if zero_in(t):
        return zero
    w = mvn_whitened(x, mean, cov, allow_singular)
    return np.reshape(w @ np.ravel(t), np.shape(out))


@zero_in_zero_out("t")
def mvn_tangent_cov(t, x, mean, cov, allow_singular, out):
    """Tangent of ``logpdf`` from ``cov``'s tangent: ``(r^T S^-1 T S^-1 r - tr(S^-1 T)) / 2``
    for the tangent ``T`` of the symmetric matrix read from ``cov``."""
    if zero_in(t):
        return zero
    precision = np.linalg.inv(mvn_cov(mean, cov, allow_singular))
    w = mvn_points(x, mean, cov) @ precision
    change = mvn_cov_tangent(t, mean, cov)
    quadratic = np.sum((w @ change) * w, axis=-1)
    return np.reshape(0.5 * (quadratic - np.sum(precision * change)), np.shape(out))


# the tangents transposed in their tangents (@transpose reads them)
@transpose_of(mvn_tangent_x)
def _(ans, t, x, mean, cov, allow_singular, out):
    d[t] = mvn_grad_x(d[ans], x, mean, cov, allow_singular)


@transpose_of(mvn_tangent_mean)
def _(ans, t, x, mean, cov, allow_singular, out):
    d[t] = mvn_grad_mean(d[ans], x, mean, cov, allow_singular)


@transpose_of(mvn_tangent_cov)
def _(ans, t, x, mean, cov, allow_singular, out):
    d[t] = mvn_grad_cov(d[ans], x, mean, cov, allow_singular)


@transpose(multivariate_normal.logpdf)
@tangent(multivariate_normal.logpdf)
def _(out, x, mean=None, cov=1, allow_singular=False):
    """A nonsingular ``cov``; a matrix is read from its lower triangle as a symmetric one,
    which gets the gradient (as for ``np.linalg.eigh``)."""
    d[out] = mvn_tangent_x(d[x], x, mean, cov, allow_singular, out)
    d[out] = mvn_tangent_mean(d[mean], x, mean, cov, allow_singular, out)
    d[out] = mvn_tangent_cov(d[cov], x, mean, cov, allow_singular, out)


@adjoint(multivariate_normal.pdf)
def _(out, x, mean=None, cov=1, allow_singular=False):
    """A nonsingular ``cov``; a matrix is read from its lower triangle as a symmetric one,
    which gets the gradient (as for ``np.linalg.eigh``)."""
    d[x] = mvn_grad_x(d[out] * out, x, mean, cov, allow_singular)
    d[mean] = mvn_grad_mean(d[out] * out, x, mean, cov, allow_singular)
    d[cov] = mvn_grad_cov(d[out] * out, x, mean, cov, allow_singular)


@tangent(multivariate_normal.pdf)
def _(out, x, mean=None, cov=1, allow_singular=False):
    d[out] = out * mvn_tangent_x(d[x], x, mean, cov, allow_singular, out)
    d[out] = out * mvn_tangent_mean(d[mean], x, mean, cov, allow_singular, out)
    d[out] = out * mvn_tangent_cov(d[cov], x, mean, cov, allow_singular, out)


@zero_in_zero_out("g")
def mvn_entropy_grad(g, mean, cov):
    """Gradient for ``cov`` of ``g * entropy(mean, cov)``, ``entropy = log det(2 pi e S) / 2``:
    ``g S^-1 / 2``, taken to the entries of ``cov`` SciPy reads."""
    if zero_in(g):
        return zero
    return mvn_cov_part(0.5 * g * np.linalg.inv(mvn_cov(mean, cov, False)), cov)


@zero_in_zero_out("t")
def mvn_entropy_tangent(t, mean, cov, out):
    """Tangent of ``entropy(mean, cov)``: ``tr(S^-1 T) / 2``."""
    if zero_in(t):
        return zero
    precision = np.linalg.inv(mvn_cov(mean, cov, False))
    return np.reshape(0.5 * np.sum(precision * mvn_cov_tangent(t, mean, cov)), np.shape(out))


# the tangents transposed in their tangents (@transpose reads them)
@transpose_of(mvn_entropy_tangent)
def _(ans, t, mean, cov, out):
    d[t] = mvn_entropy_grad(d[ans], mean, cov)


@transpose(multivariate_normal.entropy)
@tangent(multivariate_normal.entropy)
def _(out, mean=None, cov=1):
    """A nonsingular ``cov``, read from its lower triangle; no gradient for ``mean``."""
    d[out] = mvn_entropy_tangent(d[cov], mean, cov, out)
