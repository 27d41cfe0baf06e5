"""Rules for ``scipy.special``, in both directions: its elementwise functions from their slopes,
``logsumexp``, ``softmax`` and ``log_softmax`` along their axes.

SciPy is optional: this module is imported by the registry once the program has imported
``scipy.special`` (``DEFERRED`` in ``mindgrad/rules/registry.py``), never by ``import mindgrad``.

Each slope is written with functions that have rules themselves (``digamma`` for ``gammaln``,
``polygamma`` for ``digamma``, ``iv`` for ``i0`` and ``i1``), so second and higher derivatives
follow. At the edges of a domain the slope is what the formula gives there, as in JAX: an
infinite derivative is ``inf`` (``logit`` at 0 and 1, ``erfinv`` at -1 and 1, ``ndtri`` at 0 and
1, ``entr`` at 0), never a finite number standing for it; where a function is constant along an
argument the slope is 0 (``xlogy(0, y)`` is 0 for every ``y``); where it has a corner, the
slope is the mean of its one-sided slopes, 0 (``i0e`` at 0, as ``np.abs``). The orders of
``polygamma``, ``iv``, ``ive``, ``jv`` (``jn``) and ``yn``, the dimension of ``multigammaln``
and the shapes ``a``, ``b`` of the incomplete functions ``gammainc``, ``gammaincc`` and
``betainc`` (whose derivatives along them have no closed form) are constants: differentiating
along one raises (``no_slope``), only when a gradient or tangent along it is asked for.
``gammasgn`` is piecewise constant. ``logsumexp`` with ``return_sign=True`` raises too.

``np.i0``'s rule lives here, as its slope is ``scipy.special.i1``: it is registered once the
program has imported ``scipy.special`` (``scipy.stats`` does); before, ``np.i0`` has no rule.
"""

import math

import numpy as np
import scipy.special as sp

from mindgrad.rules import (
    d,
    elementwise,
    nondifferentiable,
    slope,
    tangent,
    transpose,
    transpose_of,
)
from mindgrad.rules.helpers import quotient
from mindgrad.runtime import unbroadcast, unreduce, zero, zero_in, zero_in_zero_out

SQRT_PI_2 = math.sqrt(math.pi) / 2.0       # erfinv' = sqrt(pi)/2 exp(erfinv(x)^2)
TWO_SQRT_PI = 2.0 / math.sqrt(math.pi)     # erf' = 2/sqrt(pi) exp(-x^2)
SQRT_2PI = math.sqrt(2.0 * math.pi)        # the normal density's normalizer


def no_slope(value, argument):
    """The slope of an argument mindgrad does not differentiate (the order of ``polygamma``
    and ``iv``, the shape of ``gammainc``, the degrees of freedom of ``t.cdf``): 0 for
    integers, which have no gradient; for a float, which a gradient or tangent is asked for,
    an error rather than 0."""
    if np.issubdtype(np.result_type(value), np.integer):
        return 0
    raise NotImplementedError(f"mindgrad has no derivative for {argument}: pass it as a "
                              "constant, not a value being differentiated")

# ----- logistic ----------------------------------------------------------------------------


@elementwise(sp.expit)
def _(out, x):
    slope[x] = out * (1.0 - out)


@elementwise(sp.logit, singular=True)
def _(out, x):
    slope[x] = 1.0 / (x * (1.0 - x))  # inf at 0 and 1


@elementwise(sp.log_expit)
def _(out, x):
    slope[x] = sp.expit(-x)  # 1 - expit(x), without the cancellation for large x


# ----- exponentials and logarithms ---------------------------------------------------------


@elementwise(sp.expm1)
def _(out, x):
    slope[x] = out + 1.0


@elementwise(sp.log1p, singular=True)
def _(out, x):
    slope[x] = 1.0 / (x + 1.0)


@elementwise(sp.exp2)
def _(out, x):
    slope[x] = out * math.log(2.0)


@elementwise(sp.exp10)
def _(out, x):
    slope[x] = out * math.log(10.0)


@elementwise(sp.cbrt, singular=True)
def _(out, x):
    slope[x] = quotient(1.0, 3.0 * out * out)


@elementwise(sp.xlogy, singular=True)
def _(out, x, y):
    slope[x] = np.log(y)  # -inf at y = 0
    slope[y] = x / np.where(x == 0, 1.0, y)  # 0 where x = 0: xlogy(0, y) = 0 for every y


@elementwise(sp.xlog1py, singular=True)
def _(out, x, y):
    slope[x] = np.log1p(y)
    slope[y] = x / np.where(x == 0, 1.0, 1.0 + y)  # 0 where x = 0: xlog1py(0, y) = 0


# ----- entropies ---------------------------------------------------------------------------


@elementwise(sp.entr, singular=True)
def _(out, x):
    slope[x] = -np.log(x) - 1.0  # inf at 0; nan below, where entr is -inf


@elementwise(sp.rel_entr, singular=True)
def _(out, x, y):
    slope[x] = np.log(x / y) + 1.0  # -inf at x = 0
    slope[y] = -x / np.where(x == 0, 1.0, y)  # 0 where x = 0: rel_entr(0, y) = 0


@elementwise(sp.kl_div, singular=True)
def _(out, x, y):
    slope[x] = np.log(x / y)  # -inf at x = 0
    slope[y] = 1.0 - x / np.where(x == 0, 1.0, y)  # 1 where x = 0: kl_div(0, y) = y


# ----- gamma and beta ----------------------------------------------------------------------


@elementwise(sp.gamma, singular=True)
def _(out, x):
    slope[x] = out * sp.digamma(x)


@elementwise(sp.gammaln, singular=True)
def _(out, x):
    slope[x] = sp.digamma(x)  # of log|gamma(x)|, for negative x too


@elementwise(sp.digamma, sp.psi, singular=True)
def _(out, x):
    slope[x] = sp.polygamma(1, x)


@elementwise(sp.polygamma, singular=True)
def _(out, n, x):
    slope[n] = no_slope(n, "the order n of scipy.special.polygamma")  # an integer
    slope[x] = sp.polygamma(n + 1, x)


@elementwise(sp.rgamma, singular=True)
def _(out, x):
    slope[x] = -out * sp.digamma(x)  # nan at the poles of digamma, where rgamma is 0


# the sign of gamma(x) is piecewise constant: no gradient, as np.sign
nondifferentiable(sp.gammasgn)


@elementwise(sp.multigammaln, singular=True)
def _(out, a, dim):
    """``multigammaln(a, d)`` with ``d`` passed by position (``d=`` by keyword is refused: in a
    rule ``d`` is the gradient); the slope is ``sum_{i < d} digamma(a - i / 2)``."""
    slope[a] = np.sum(sp.digamma(np.expand_dims(a, -1) - 0.5 * np.arange(dim)), axis=-1)
    slope[dim] = no_slope(dim, "the dimension d of scipy.special.multigammaln")  # an integer


@elementwise(sp.beta, singular=True)
def _(out, a, b):
    slope[a] = out * (sp.digamma(a) - sp.digamma(a + b))
    slope[b] = out * (sp.digamma(b) - sp.digamma(a + b))


@elementwise(sp.betaln, singular=True)
def _(out, a, b):
    slope[a] = sp.digamma(a) - sp.digamma(a + b)
    slope[b] = sp.digamma(b) - sp.digamma(a + b)


# ----- incomplete gamma and beta functions -------------------------------------------------
# Their slopes in x are the integrands; in the shape parameters a and b they have no closed
# form (a series of hypergeometric functions), so differentiating along a or b raises.


def at_precision(value, out):
    """``value`` at the precision of ``out``: a float64 normalizer of integer shapes would make
    the slope of a float32 ``x`` float64."""
    return np.asarray(value, dtype=np.result_type(out))


@elementwise(sp.gammainc, singular=True)
def _(out, a, x):
    """No derivative in the shape ``a`` (no closed form): differentiating along it raises."""
    slope[a] = no_slope(a, "the shape a of scipy.special.gammainc")
    # x^(a-1) e^-x / gamma(a)
    slope[x] = at_precision(np.exp(sp.xlogy(a - 1.0, x) - x - sp.gammaln(a)), out)


@elementwise(sp.gammaincc, singular=True)
def _(out, a, x):
    """No derivative in the shape ``a`` (no closed form): differentiating along it raises."""
    slope[a] = no_slope(a, "the shape a of scipy.special.gammaincc")
    slope[x] = -at_precision(np.exp(sp.xlogy(a - 1.0, x) - x - sp.gammaln(a)), out)


@elementwise(sp.betainc, singular=True)
def _(out, a, b, x):
    """No derivative in the shapes ``a`` and ``b`` (no closed form): differentiating along
    them raises."""
    slope[a] = no_slope(a, "the shape a of scipy.special.betainc")
    slope[b] = no_slope(b, "the shape b of scipy.special.betainc")
    # x^(a-1) (1-x)^(b-1) / B(a, b)
    slope[x] = at_precision(np.exp(sp.xlogy(a - 1.0, x) + sp.xlog1py(b - 1.0, -x) -
                                   sp.betaln(a, b)), out)


# ----- error function and the normal distribution ------------------------------------------


@elementwise(sp.erf)
def _(out, x):
    slope[x] = TWO_SQRT_PI * np.exp(-x * x)


@elementwise(sp.erfc)
def _(out, x):
    slope[x] = -TWO_SQRT_PI * np.exp(-x * x)


@elementwise(sp.erfinv, singular=True)
def _(out, x):
    slope[x] = SQRT_PI_2 * np.exp(out * out)  # inf at -1 and 1


@elementwise(sp.erfcinv, singular=True)
def _(out, x):
    slope[x] = -SQRT_PI_2 * np.exp(out * out)  # -inf at 0 and 2


@elementwise(sp.ndtr)
def _(out, x):
    slope[x] = np.exp(-0.5 * x * x) / SQRT_2PI


@elementwise(sp.log_ndtr)
def _(out, x):
    slope[x] = np.exp(-0.5 * x * x - out) / SQRT_2PI  # pdf / cdf, kept finite far left


@elementwise(sp.ndtri, singular=True)
def _(out, x):
    slope[x] = SQRT_2PI * np.exp(0.5 * out * out)  # inf at 0 and 1


# ----- Bessel functions of the first and second kinds ---------------------------------------
# The order is a constant: differentiating along it raises (no_slope).


@elementwise(sp.jv, singular=True)  # sp.jn is the same function
def _(out, v, z):
    """No derivative in the order ``v`` (no closed form): differentiating along it raises."""
    slope[v] = no_slope(v, "the order v of scipy.special.jv")
    slope[z] = 0.5 * (sp.jv(v - 1.0, z) - sp.jv(v + 1.0, z))


@elementwise(sp.yn, singular=True)
def _(out, n, x):
    """No derivative in the order ``n`` (an integer)."""
    slope[n] = no_slope(n, "the order n of scipy.special.yn")  # an integer
    slope[x] = 0.5 * (sp.yn(n - 1, x) - sp.yn(n + 1, x))


@elementwise(sp.j0)
def _(out, x):
    slope[x] = -sp.j1(x)


@elementwise(sp.j1)
def _(out, x):
    slope[x] = 0.5 * (sp.j0(x) - sp.jv(2.0, x))


@elementwise(sp.y0, singular=True)
def _(out, x):
    slope[x] = -sp.y1(x)


@elementwise(sp.y1, singular=True)
def _(out, x):
    slope[x] = 0.5 * (sp.y0(x) - sp.yn(2, x))


# ----- modified Bessel functions -----------------------------------------------------------


@elementwise(sp.iv, singular=True)
def _(out, v, z):
    slope[v] = no_slope(v, "the order v of scipy.special.iv")
    slope[z] = 0.5 * (sp.iv(v - 1.0, z) + sp.iv(v + 1.0, z))


@elementwise(sp.ive)
def _(out, v, z):
    slope[v] = no_slope(v, "the order v of scipy.special.ive")
    slope[z] = 0.5 * (sp.ive(v - 1.0, z) + sp.ive(v + 1.0, z)) - np.sign(z) * out


@elementwise(sp.i0, np.i0)  # np.i0's rule is here: its slope needs scipy.special.i1
def _(out, x):
    slope[x] = sp.i1(x)


@elementwise(sp.i1)
def _(out, x):
    slope[x] = 0.5 * (sp.i0(x) + sp.iv(2.0, x))


@elementwise(sp.i0e)
def _(out, x):
    slope[x] = sp.i1e(x) - np.sign(x) * out  # 0 at the corner x = 0


@elementwise(sp.i1e)
def _(out, x):
    slope[x] = 0.5 * (sp.i0e(x) + sp.ive(2.0, x)) - np.sign(x) * out


# ----- along an axis: logsumexp, softmax, log_softmax --------------------------------------


def logsumexp_slope(a, ans, axis=None, b=None, keepdims=False, return_sign=False):
    """``exp(a - logsumexp(a, axis, b))`` with the result broadcast back over the reduced
    axes (of ``a`` broadcast with ``b``): the derivative of logsumexp for ``b``, and, times
    ``b``, for ``a``. Its sign output (``return_sign=True``) has no rule."""
    if return_sign:
        raise NotImplementedError("mindgrad differentiates scipy.special.logsumexp with "
                                  "return_sign=False only")
    full = a if b is None else a + np.zeros_like(b)
    return np.exp(full - spread(ans, full, axis, keepdims))


def spread(v, full, axis, keepdims):
    """``v``, shaped as logsumexp's result, broadcast back over the reduced axes of ``full``
    (``unreduce``; SciPy keeps a 0-d input's dims as shape (1,))."""
    if np.ndim(full) == 0:
        v = np.reshape(v, ())
    return unreduce(v, full, axis, keepdims)


@zero_in_zero_out("g")
def logsumexp_grad(g, a, ans, axis=None, b=None, keepdims=False, return_sign=False):
    """Gradient of ``logsumexp(a, axis, b, keepdims)`` for ``a``: ``g b exp(a - ans)``, the
    softmax of ``a`` weighted by ``b``, times the gradient spread over the reduced axes."""
    if zero_in(g):
        return zero
    e = logsumexp_slope(a, ans, axis, b, keepdims, return_sign)
    grad = spread(g, e, axis, keepdims) * e
    return unbroadcast(grad if b is None else grad * b, a)


@zero_in_zero_out("g")
def logsumexp_grad_b(g, a, ans, axis=None, b=None, keepdims=False):
    """Gradient of ``logsumexp(a, axis, b, keepdims)`` for ``b``: ``g exp(a - ans)``."""
    if zero_in(g):
        return zero
    e = logsumexp_slope(a, ans, axis, b, keepdims)
    return unbroadcast(spread(g, e, axis, keepdims) * e, b)


@zero_in_zero_out("t")
def logsumexp_tangent(t, a, ans, axis=None, b=None, keepdims=False, return_sign=False):
    """Tangent of ``logsumexp(a, axis, b, keepdims)`` from ``a``: ``sum(b exp(a - ans) t)``
    over the reduced axes."""
    if zero_in(t):
        return zero
    e = logsumexp_slope(a, ans, axis, b, keepdims, return_sign)
    return np.reshape(np.sum(e * t if b is None else e * b * t, axis=axis, keepdims=keepdims),
                      np.shape(ans))


@zero_in_zero_out("t")
def logsumexp_tangent_b(t, a, ans, axis=None, b=None, keepdims=False):
    """Tangent of ``logsumexp(a, axis, b, keepdims)`` from ``b``: ``sum(exp(a - ans) t)``."""
    if zero_in(t):
        return zero
    e = logsumexp_slope(a, ans, axis, b, keepdims)
    return np.reshape(np.sum(e * t, axis=axis, keepdims=keepdims), np.shape(ans))


# the tangents transposed in their tangents (@transpose reads them)
@transpose_of(logsumexp_tangent)
def _(out, t, a, ans, axis=None, b=None, keepdims=False, return_sign=False):
    d[t] = logsumexp_grad(d[out], a, ans, axis, b, keepdims, return_sign)


@transpose_of(logsumexp_tangent_b)
def _(out, t, a, ans, axis=None, b=None, keepdims=False):
    d[t] = logsumexp_grad_b(d[out], a, ans, axis, b, keepdims)


@transpose(sp.logsumexp)
@tangent(sp.logsumexp)
def _(out, a, axis=None, b=None, keepdims=False, return_sign=False):
    d[out] = logsumexp_tangent(d[a], a, out, axis, b, keepdims, return_sign)
    d[out] = logsumexp_tangent_b(d[b], a, out, axis, b, keepdims)


@zero_in_zero_out("t")
def softmax_tangent(t, out, axis=None):
    """Tangent of ``out = softmax(x, axis)`` from ``x``: ``out (t - sum(t out))``."""
    if zero_in(t):
        return zero
    return out * (t - np.sum(t * out, axis=axis, keepdims=True))


@zero_in_zero_out("t")
def log_softmax_tangent(t, out, axis=None):
    """Tangent of ``out = log_softmax(x, axis)`` from ``x``: ``t - sum(exp(out) t)``."""
    if zero_in(t):
        return zero
    return t - np.sum(np.exp(out) * t, axis=axis, keepdims=True)


# the tangents transposed in t (@transpose reads them): the softmax Jacobian is symmetric
@transpose_of(softmax_tangent)
def _(ans, t, out, axis=None):
    d[t] = softmax_tangent(d[ans], out, axis)


@transpose_of(log_softmax_tangent)
def _(ans, t, out, axis=None):
    d[t] = d[ans] - np.exp(out) * np.sum(d[ans], axis=axis, keepdims=True)


@transpose(sp.softmax)
@tangent(sp.softmax)
def _(out, x, axis=None):
    d[out] = softmax_tangent(d[x], out, axis)


@transpose(sp.log_softmax)
@tangent(sp.log_softmax)
def _(out, x, axis=None):
    d[out] = log_softmax_tangent(d[x], out, axis)
