"""Rules for NumPy's statistics, both directions: ``var`` and ``std`` (whose helpers their nan-
forms in ``numpy_reductions.py`` share), the order statistics (``median``, ``quantile``,
``percentile`` and their nan- forms, and where ``max``/``min`` found their results), ``cov``
and ``corrcoef``; each function's adjoint with its tangent beside it.

A statistic's gradient is the incoming gradient broadcast back over the reduced axes
(``unreduce``), weighted by how much each element contributed; its tangent reduces the input's
tangent with the same weights. An order statistic moves with the elements it reads (between two
of them, as the method interpolates), so its gradient goes to those.

The gradient helpers are differentiated again by forward mode over reverse-mode code
(Hessian-vector products): those that also change with a primal argument have a
``*_grad_tangent`` helper with the derivative.
"""

import numpy as np

from mindgrad.rules import (
    adjoint,
    d,
    linear_in,
    nondifferentiable,
    tangent,
    transpose,
    transpose_of,
)
from mindgrad.rules.helpers import (
    astype_grad,
    conj_if_complex,
    masked_grad,
    reduced_axes,
    reduced_count,
)
from mindgrad.runtime import (
    is_any_zero,
    is_zero,
    takes_zero,
    unbroadcast,
    unreduce,
    zero,
    zero_in,
    zero_in_zero_out,
)
from mindgrad.runtime.arrays import as_array
from mindgrad.runtime.tangents import (
    as_dtype_of,
    zero_for,
)


def masked_mean(x, axes, where):
    """``np.mean(x, axes, keepdims=True, where=where)``, ``where`` passed only where it masks:
    Dask's reductions take none."""
    if where is True:
        return np.mean(x, axis=axes, keepdims=True)
    return np.mean(x, axis=axes, keepdims=True, where=where)


# ----- variance and standard deviation -----------------------------------------------------


@takes_zero(any_number=True)
def var_grad(g, a, axis=None, ddof=0, keepdims=False, correction=None, where=True, mean=None):
    """Gradient of ``np.var``: ``2 (a - mean) / (N - ddof)`` times ``g`` (``mean`` given or
    computed, over the elements ``where`` selects)."""
    if is_any_zero(g):
        return zero_for(g, a)
    ddof = ddof if correction is None else correction
    x = as_array(a)
    axes = reduced_axes(axis, x.ndim)
    if mean is None:
        mean = masked_mean(x, axes, where)
    count = reduced_count(x, axis, where)
    # the variance is real: a complex g (gradient code differentiated again) counts by its real
    # part, the README's convention; conj(a - mean): d|a - mean|^2 = 2 Re(conj(a - mean) da)
    grad = np.real(unreduce(g, x, axis, keepdims)) * conj_if_complex(x - mean) * \
        (2.0 / (count - ddof))
    return astype_grad(masked_grad(grad, where), a)


@zero_in_zero_out("g", "t")
def var_grad_tangent(g, a, t, wrt, axis=None, ddof=0, keepdims=False, correction=None,
                     where=True, mean=None):
    """Tangent of ``var_grad`` (``g 2 (a - mean) / (N - ddof)``) from ``a`` (wrt 0; the computed
    mean moves with it) or from a given ``mean`` (wrt 1); 0 for a zero ``g``, as ``var_grad``
    gives a zero there."""
    if zero_in(g, t):
        return zero
    if is_zero(t) or is_any_zero(g):
        return zero
    ddof = ddof if correction is None else correction
    x = as_array(a)
    axes = reduced_axes(axis, x.ndim)
    if wrt == 1:
        change = -t
    elif mean is None:
        change = t - masked_mean(np.broadcast_to(t, x.shape), axes, where)
    else:
        change = t
    count = reduced_count(x, axis, where)
    grad = np.real(unreduce(g, x, axis, keepdims)) * conj_if_complex(change) * \
        (2.0 / (count - ddof))
    return astype_grad(masked_grad(grad, where), a)


@tangent(var_grad)
def _(out, g, a, axis=None, ddof=0, keepdims=False, correction=None, where=True, mean=None):
    d[out] = var_grad(d[g], a, axis, ddof, keepdims, correction, where, mean)
    d[out] = var_grad_tangent(g, a, d[a], 0, axis, ddof, keepdims, correction, where, mean)
    d[out] = var_grad_tangent(g, a, d[mean], 1, axis, ddof, keepdims, correction, where, mean)


@takes_zero(any_number=True)
def std_grad(g, a, ans, axis=None, ddof=0, keepdims=False, correction=None, where=True,
             mean=None):
    """Gradient of ``np.std = sqrt(var)``: the variance's gradient for ``g / (2 std)``; 0 where
    the std is 0 (all elements equal: a kink, where 0 is a subgradient) rather than NaN."""
    if is_any_zero(g):
        return zero_for(g, a)
    return var_grad(g * 0.5 / np.where(ans == 0, np.inf, ans), a, axis, ddof, keepdims,
                    correction, where, mean)


@zero_in_zero_out("g", "t")
def std_grad_tangent(g, a, ans, t, wrt, axis=None, ddof=0, keepdims=False, correction=None,
                     where=True, mean=None):
    """Tangent of ``std_grad`` (``var_grad(g / (2 ans), ...)``) from ``a`` (wrt 0), a given
    ``mean`` (1) or ``ans`` (2: ``-g t / (2 ans^2)`` through ``var_grad``, 0 where ans is 0);
    0 for a zero ``g``."""
    if zero_in(g, t):
        return zero
    if is_zero(t) or is_any_zero(g):
        return zero
    if wrt == 2:
        scale = -g * 0.5 * t / np.where(ans == 0, np.inf, ans) ** 2
        return var_grad(scale, a, axis, ddof, keepdims, correction, where, mean)
    scale = g * 0.5 / np.where(ans == 0, np.inf, ans)
    return var_grad_tangent(scale, a, t, wrt, axis, ddof, keepdims, correction, where, mean)


@tangent(std_grad)
def _(out, g, a, ans, axis=None, ddof=0, keepdims=False, correction=None, where=True,
      mean=None):
    d[out] = std_grad(d[g], a, ans, axis, ddof, keepdims, correction, where, mean)
    d[out] = std_grad_tangent(g, a, ans, d[a], 0, axis, ddof, keepdims, correction, where, mean)
    d[out] = std_grad_tangent(g, a, ans, d[mean], 1, axis, ddof, keepdims, correction, where,
                              mean)
    d[out] = std_grad_tangent(g, a, ans, d[ans], 2, axis, ddof, keepdims, correction, where,
                              mean)


@zero_in_zero_out("t")
def var_tangent(t, a, ans, axis=None, ddof=0, keepdims=False, correction=None, where=True,
                mean=None):
    """Tangent of ``np.var`` from ``a``: ``sum(2 (a - mean) t) / (N - ddof)`` (the mean's own
    change contributes nothing: the deviations sum to zero; a given ``mean`` is a constant)."""
    if zero_in(t):
        return zero
    ddof = ddof if correction is None else correction
    x = as_array(a)
    axes = reduced_axes(axis, x.ndim)
    if mean is None:
        mean = masked_mean(x, axes, where)
    count = reduced_count(x, axis, where)
    terms = masked_grad(np.real(t * conj_if_complex(x - mean)) * (2.0 / (count - ddof)), where)
    return as_dtype_of(np.sum(terms, axis=axes, keepdims=keepdims), ans)


@zero_in_zero_out("t")
def var_mean_tangent(t, a, ans, axis=None, ddof=0, keepdims=False, correction=None,
                     where=True, mean=None):
    """Tangent of ``np.var(a, mean=mean)`` from a given ``mean``."""
    if is_zero(t) or mean is None:
        return zero
    ddof = ddof if correction is None else correction
    x = as_array(a)
    axes = reduced_axes(axis, x.ndim)
    count = reduced_count(x, axis, where)
    terms = masked_grad(-np.real(t * conj_if_complex(x - mean)) * (2.0 / (count - ddof)), where)
    return as_dtype_of(np.sum(terms, axis=axes, keepdims=keepdims), ans)


@takes_zero(keeps_values=False, any_number=True)
def var_mean_grad(g, a, axis=None, ddof=0, keepdims=False, correction=None, where=True,
                  mean=None):
    """Gradient of ``np.var(a, mean=mean)`` for a given ``mean``: the deviations' gradient
    with the opposite sign, summed to the mean's shape."""
    if is_any_zero(g) or mean is None:
        return zero
    grad = var_grad(g, a, axis, ddof, keepdims, correction, where, mean)
    return astype_grad(-unbroadcast(grad, mean), mean)


@zero_in_zero_out("t")
def std_tangent(t, a, ans, axis=None, ddof=0, keepdims=False, correction=None, where=True,
                mean=None, wrt="a"):
    """Tangent of ``np.std = sqrt(var)``: the variance's over ``2 std``; 0 where the std is 0."""
    if is_zero(t):
        return zero
    if wrt == "a":
        t_var = var_tangent(t, a, ans, axis, ddof, keepdims, correction, where, mean)
    else:
        t_var = var_mean_tangent(t, a, ans, axis, ddof, keepdims, correction, where, mean)
    return as_dtype_of(t_var * 0.5 / np.where(ans == 0, np.inf, ans), ans)


@zero_in_zero_out("t")
def std_mean_tangent(t, a, ans, axis=None, ddof=0, keepdims=False, correction=None, where=True,
                     mean=None):
    """Tangent of ``np.std(a, mean=mean)`` from a given ``mean``."""
    if zero_in(t):
        return zero
    return std_tangent(t, a, ans, axis, ddof, keepdims, correction, where, mean, "mean")


@takes_zero(keeps_values=False, any_number=True)
def std_mean_grad(g, a, ans, axis=None, ddof=0, keepdims=False, correction=None, where=True,
                  mean=None):
    """Gradient of ``np.std(a, mean=mean)`` for a given ``mean``: the variance's for
    ``g / (2 std)``, 0 where the std is 0."""
    if is_any_zero(g) or mean is None:
        return zero
    return var_mean_grad(g * 0.5 / np.where(ans == 0, np.inf, ans), a, axis, ddof, keepdims,
                         correction, where, mean)


# transposes of the tangents in their tangent t (@transpose reads them): the tangents move
# with a too, so reverse mode over tangent code differentiates them from their source
@transpose_of(var_tangent)
def _(out, t, a, ans, axis=None, ddof=0, keepdims=False, correction=None, where=True,
      mean=None):
    d[t] = var_grad(d[out], a, axis, ddof, keepdims, correction, where, mean)


@transpose_of(var_mean_tangent)
def _(out, t, a, ans, axis=None, ddof=0, keepdims=False, correction=None, where=True,
      mean=None):
    d[t] = var_mean_grad(d[out], a, axis, ddof, keepdims, correction, where, mean)


@transpose_of(std_tangent)  # from a: std_tangent(t, ...) with its default wrt="a"
def _(out, t, a, ans, axis=None, ddof=0, keepdims=False, correction=None, where=True,
      mean=None):
    d[t] = std_grad(d[out], a, ans, axis, ddof, keepdims, correction, where, mean)


@transpose_of(std_mean_tangent)
def _(out, t, a, ans, axis=None, ddof=0, keepdims=False, correction=None, where=True,
      mean=None):
    d[t] = std_mean_grad(d[out], a, ans, axis, ddof, keepdims, correction, where, mean)


# d[a] = var_grad(d[ans], a, ...), d[mean] = var_mean_grad(d[ans], a, ...)
@transpose(np.var)
@tangent(np.var)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
      mean=None, correction=None):
    d[ans] = var_tangent(d[a], a, ans, axis, ddof, keepdims, correction, where, mean)
    d[ans] = var_mean_tangent(d[mean], a, ans, axis, ddof, keepdims, correction, where, mean)


# d[a] = std_grad(d[ans], a, ans, ...), d[mean] = std_mean_grad(d[ans], a, ans, ...)
@transpose(np.std)
@tangent(np.std)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
      mean=None, correction=None):
    d[ans] = std_tangent(d[a], a, ans, axis, ddof, keepdims, correction, where, mean)
    d[ans] = std_mean_tangent(d[mean], a, ans, axis, ddof, keepdims, correction, where, mean)



# ----- order statistics: median, quantile, percentile and their nan- forms ---------------------
# A quantile is read from the sorted values: one entry, or two interpolated. Its gradient goes to
# those entries (ties: to the ones the sort put there), and, interpolating linearly, to ``q``.

QUANTILE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def quantile_method(method="linear", weights=None, interpolation=None):
    """The interpolation method a quantile call asks for (``interpolation`` is its old name);
    weighted quantiles have no gradient rule."""
    if weights is not None:
        raise NotImplementedError("a weighted quantile (weights=...) has no gradient rule")
    return method if interpolation is None else interpolation


def quantile_plan(a, q, axis=None, method="linear", skip_nan=False):
    """Where each quantile ``q`` of ``a`` over ``axis`` is read: ``a``'s reduced axes moved last
    and flattened (``order`` transposes ``a`` so, ``kept`` are the other lengths), the sort
    order along them, the two sorted positions read for each quantile (``(kept..., Q)``) with
    their weights, and the number of values (not NaN, for the nan- forms)."""
    if method not in QUANTILE_METHODS:
        raise NotImplementedError(f"the quantile method {method!r} has no gradient rule; "
                                  f"{', '.join(QUANTILE_METHODS)} have one")
    x = as_array(a)
    axes = reduced_axes(axis, x.ndim)
    kept_axes = [i for i in range(x.ndim) if i not in axes]
    order = kept_axes + list(axes)
    kept = [x.shape[i] for i in kept_axes]
    flat = np.reshape(np.transpose(x, order), kept + [-1])
    sort = np.argsort(flat, axis=-1)  # NaNs last
    count = np.sum(~np.isnan(flat), axis=-1, keepdims=True) if skip_nan else \
        np.full(kept + [1], flat.shape[-1])
    position = np.ravel(q) * (count - 1)
    low = np.floor(position)
    fraction = position - low
    low = low.astype(int)
    high = np.minimum(low + 1, count - 1)
    if method == "linear":
        weights = (1.0 - fraction, fraction)
    elif method == "lower":
        weights = (np.ones_like(fraction), np.zeros_like(fraction))
    elif method == "higher":
        weights = (np.where(fraction > 0, 0.0, 1.0), np.where(fraction > 0, 1.0, 0.0))
    elif method == "nearest":  # NumPy rounds half to even
        up = np.around(position) > low
        weights = (np.where(up, 0.0, 1.0), np.where(up, 1.0, 0.0))
    else:
        weights = (np.where(fraction > 0, 0.5, 1.0), np.where(fraction > 0, 0.5, 0.0))
    return {"order": order, "kept": kept, "reduced": [x.shape[i] for i in axes], "sort": sort,
            "low": low, "high": high, "weights": weights, "count": count}


nondifferentiable(quantile_method, quantile_plan)


def spread_to_sorted(values, plan, weights=None):
    """``values`` (``(kept..., Q)``, one per quantile) times each read entry's weight (the
    plan's, or ``weights``), added up at the sorted positions read: ``(kept..., n)``."""
    weights = plan["weights"] if weights is None else weights
    slots = np.arange(plan["sort"].shape[-1])
    low = np.expand_dims(plan["low"], -1) == slots
    high = np.expand_dims(plan["high"], -1) == slots
    return np.sum(np.where(low, np.expand_dims(values * weights[0], -1), 0) +
                  np.where(high, np.expand_dims(values * weights[1], -1), 0), axis=-2)


def from_sorted(on_sorted, a, plan):
    """A gradient on the sorted values (``(kept..., n)``) sent back through the sort and the
    moved axes to ``a``."""
    on_flat = np.take_along_axis(on_sorted, np.argsort(plan["sort"], axis=-1), axis=-1)
    moved = np.reshape(on_flat, plan["kept"] + plan["reduced"])
    return astype_grad(np.transpose(moved, np.argsort(plan["order"])), a)


def quantiles_last(g, plan, q):
    """A gradient of a quantile's result (``q``'s axes first) as ``(kept..., Q)``."""
    g = np.reshape(g, [np.size(q)] + plan["kept"])
    return np.moveaxis(g, 0, -1)


@zero_in_zero_out("g")
def quantile_grad(g, a, q, axis=None, method="linear", skip_nan=False):
    """Gradient of ``np.quantile(a, q, axis, method=method)`` (``skip_nan``: ``nanquantile``)
    for ``a``: each result's gradient to the sorted entries it read, by their weights, sent back
    through the sort and the moved axes."""
    if zero_in(g):
        return zero
    plan = quantile_plan(a, q, axis, method, skip_nan)
    return from_sorted(spread_to_sorted(quantiles_last(g, plan, q), plan), a, plan)


@zero_in_zero_out("g", "t")
def quantile_grad_q_tangent(g, a, q, t, axis=None, method="linear", skip_nan=False):
    """Tangent of ``quantile_grad`` from ``q``: linear interpolation moves weight from the lower
    entry read to the higher one at ``count - 1`` per unit of ``q``; the other methods' weights
    are piecewise constant."""
    if zero_in(g, t):
        return zero
    plan = quantile_plan(a, q, axis, method, skip_nan)
    if method != "linear":
        return np.zeros(np.shape(a), np.result_type(a, 1.0))
    steps = quantiles_last(g, plan, q) * np.ravel(np.broadcast_to(t, np.shape(q))) * \
        (plan["count"] - 1)
    return from_sorted(spread_to_sorted(steps, plan, (-1.0, 1.0)), a, plan)


@tangent(quantile_grad)  # linear in g; the entries read are piecewise constant in a
def _(out, g, a, q, axis=None, method="linear", skip_nan=False):
    d[out] = quantile_grad(d[g], a, q, axis, method, skip_nan)
    d[out] = quantile_grad_q_tangent(g, a, q, d[q], axis, method, skip_nan)


def quantile_q_slope(a, q, axis=None, method="linear", skip_nan=False):
    """d quantile / d q, ``(kept..., Q)``: the gap between the two entries read times the number
    of steps between positions, for linear interpolation; 0 for the other methods."""
    plan = quantile_plan(a, q, axis, method, skip_nan)
    if method != "linear":
        return np.zeros(plan["kept"] + [np.size(q)])
    flat = np.reshape(np.transpose(as_array(a), plan["order"]), plan["kept"] + [-1])
    ordered = np.take_along_axis(flat, plan["sort"], axis=-1)
    gap = np.take_along_axis(ordered, plan["high"], axis=-1) - \
        np.take_along_axis(ordered, plan["low"], axis=-1)
    return gap * (plan["count"] - 1)


@zero_in_zero_out("g")
def quantile_q_grad(g, a, q, axis=None, method="linear", skip_nan=False, scale=1.0):
    """Gradient of a quantile for ``q`` (``scale``: 0.01 for a percentile)."""
    if zero_in(g):
        return zero
    plan = quantile_plan(a, q, axis, method, skip_nan)
    slope = quantile_q_slope(a, q, axis, method, skip_nan)
    per_q = np.sum(quantiles_last(g, plan, q) * slope,
                   axis=tuple(range(len(plan["kept"]))))
    return astype_grad(np.reshape(per_q * scale, np.shape(q)), q)


@zero_in_zero_out("t", "tq")
def quantile_tangent(t, tq, a, q, out, axis=None, method="linear", skip_nan=False, scale=1.0):
    """Tangent of ``np.quantile(a, q, ...)`` from ``a`` (``t``) and ``q`` (``tq``, each None if
    it has none): the weighted tangents of the entries read, plus ``d quantile / d q`` times
    ``q``'s tangent; ``q``'s axes first, then the kept ones (1s where ``keepdims``)."""
    t = None if zero_in(t) else t
    tq = None if zero_in(tq) else tq
    if t is None and tq is None:
        return zero
    plan = quantile_plan(a, q, axis, method, skip_nan)
    total = 0
    if t is not None:
        flat = np.reshape(np.transpose(np.broadcast_to(t, np.shape(a)), plan["order"]),
                          plan["kept"] + [-1])
        ordered = np.take_along_axis(flat, plan["sort"], axis=-1)
        total = np.take_along_axis(ordered, plan["low"], axis=-1) * plan["weights"][0] + \
            np.take_along_axis(ordered, plan["high"], axis=-1) * plan["weights"][1]
    if tq is not None:
        slope = quantile_q_slope(a, q, axis, method, skip_nan)
        total = total + slope * np.ravel(np.broadcast_to(tq, np.shape(q))) * scale
    return as_dtype_of(np.reshape(np.moveaxis(total, -1, 0), np.shape(out)), out)


# quantile_tangent transposed in its tangents (@transpose reads it): the entries read and their
# weights move with a and q too, so reverse mode over tangent code reads its source
@transpose_of(quantile_tangent)
def _(ans, t, tq, a, q, out, axis=None, method="linear", skip_nan=False, scale=1.0):
    d[t] = quantile_grad(d[ans], a, q, axis, method, skip_nan)
    d[tq] = quantile_q_grad(d[ans], a, q, axis, method, skip_nan, scale)


@transpose(np.quantile)
@tangent(np.quantile)
def _(ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
      *, weights=None, interpolation=None):
    """The methods linear, lower, higher, nearest and midpoint; no weights."""
    how = quantile_method(method, weights, interpolation)
    d[ans] = quantile_tangent(d[a], None, a, q, ans, axis, how)
    d[ans] = quantile_tangent(None, d[q], a, q, ans, axis, how)


@transpose(np.nanquantile)
@tangent(np.nanquantile)
def _(ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
      *, weights=None, interpolation=None):
    """The methods linear, lower, higher, nearest and midpoint; no weights."""
    how = quantile_method(method, weights, interpolation)
    d[ans] = quantile_tangent(d[a], None, a, q, ans, axis, how, True)
    d[ans] = quantile_tangent(None, d[q], a, q, ans, axis, how, True)


@transpose(np.percentile)
@tangent(np.percentile)
def _(ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
      *, weights=None, interpolation=None):
    """The methods linear, lower, higher, nearest and midpoint; no weights."""
    how = quantile_method(method, weights, interpolation)
    d[ans] = quantile_tangent(d[a], None, a, np.true_divide(q, 100), ans, axis, how)
    d[ans] = quantile_tangent(None, d[q], a, np.true_divide(q, 100), ans, axis, how, False, 0.01)


@transpose(np.nanpercentile)
@tangent(np.nanpercentile)
def _(ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
      *, weights=None, interpolation=None):
    """The methods linear, lower, higher, nearest and midpoint; no weights."""
    how = quantile_method(method, weights, interpolation)
    d[ans] = quantile_tangent(d[a], None, a, np.true_divide(q, 100), ans, axis, how, True)
    d[ans] = quantile_tangent(None, d[q], a, np.true_divide(q, 100), ans, axis, how, True, 0.01)


@transpose(np.median)
@tangent(np.median)
def _(ans, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    d[ans] = quantile_tangent(d[a], None, a, 0.5, ans, axis)


@transpose(np.nanmedian)
@tangent(np.nanmedian)
def _(ans, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    d[ans] = quantile_tangent(d[a], None, a, 0.5, ans, axis, "linear", True)



# ----- covariance and correlation --------------------------------------------------------------
# Of real variables. np.cov reads a variables-by-observations matrix X (m, then y's rows; each
# transposed if not rowvar) and gives C = Xc W Xc^T / f, Xc = X less its weighted row means.


def cov_matrix(m, y=None, rowvar=True):
    """The variables-by-observations matrix ``np.cov(m, y, rowvar)`` reads."""
    x = np.array(m, ndmin=2)
    if not rowvar and np.shape(x)[0] != 1:
        x = np.transpose(x)
    if y is not None:
        rows = np.array(y, ndmin=2)
        if not rowvar and np.shape(rows)[0] != 1:
            rows = np.transpose(rows)
        x = np.concatenate([x, rows], axis=0)
    return x


def cov_weights(x, bias=False, ddof=None, fweights=None, aweights=None):
    """The weight of each observation and the divisor ``f`` np.cov uses."""
    if np.iscomplexobj(x):
        raise NotImplementedError("np.cov and np.corrcoef of complex values have no gradient "
                                  "rule")
    if ddof is None:
        ddof = 0 if bias else 1
    weights = np.ones(np.shape(x)[1])
    if fweights is not None:
        weights = weights * fweights
    if aweights is not None:
        weights = weights * aweights
    total = np.sum(weights)
    if fweights is None and aweights is None:
        return weights, np.shape(x)[1] - ddof
    if ddof == 0:
        return weights, total
    if aweights is None:
        return weights, total - ddof
    return weights, total - ddof * np.sum(weights * aweights) / total


nondifferentiable(cov_weights)


def cov_parts(g_x, m, y=None, rowvar=True):
    """A gradient of ``cov_matrix(m, y, rowvar)`` taken apart into ``m``'s and ``y``'s."""
    rows = np.shape(np.array(m, ndmin=2))
    count = rows[1] if not rowvar and rows[0] != 1 else rows[0]
    parts = [g_x[:count], g_x[count:]]
    grads = []
    for part, value in zip(parts, [m, y]):
        if value is None:
            grads.append(0)
            continue
        if not rowvar and np.shape(np.array(value, ndmin=2))[0] != 1:
            part = np.transpose(part)
        grads.append(astype_grad(np.reshape(part, np.shape(value)), value))
    return grads[0], grads[1]


@zero_in_zero_out("g")
def cov_grads(g, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """Gradients of ``np.cov`` for ``m`` and ``y``: ``Xc`` gets ``(G + G^T) Xc W / f``, and the
    centring (a projection) takes away each row's weighted mean of that."""
    if zero_in(g):
        return zero
    x = cov_matrix(m, y, rowvar)
    weighting = cov_weights(x, bias, ddof, fweights, aweights)
    w = weighting[0]
    centred = x - np.sum(x * w, axis=1, keepdims=True) / np.sum(w)
    g_matrix = np.reshape(g, (np.shape(x)[0], np.shape(x)[0]))
    g_centred = (g_matrix + np.transpose(g_matrix)) @ (centred * w) / weighting[1]
    return cov_parts(g_centred - np.sum(g_centred, axis=1, keepdims=True) * w / np.sum(w), m, y,
                     rowvar)


def cov_divisor_slope(x, bias=False, ddof=None, fweights=None, aweights=None):
    """How the divisor ``f`` of np.cov changes with each of ``aweights``: ``fw_k`` times
    ``1 - ddof (2 a_k s - sum(fw a^2)) / s^2`` for the total weight ``s`` (``fw_k`` for ddof 0)."""
    if ddof is None:
        ddof = 0 if bias else 1
    counts = np.ones(np.shape(x)[1]) if fweights is None else np.asarray(fweights, float)
    a = np.asarray(aweights, float)
    total = np.sum(counts * a)
    if ddof == 0:
        return counts
    return counts * (1.0 - ddof * (2.0 * a * total - np.sum(counts * a * a)) / (total * total))


nondifferentiable(cov_divisor_slope)


@zero_in_zero_out("g")
def cov_aweights_grad(g, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
                      aweights=None):
    """Gradient of ``np.cov`` for ``aweights``: observation ``k`` adds ``fw_k xc_k xc_k^T / f``
    (the centring's change adds nothing: the weighted deviations sum to 0), and ``C`` scales with
    ``1 / f``."""
    if zero_in(g):
        return zero
    if aweights is None:
        return zero
    x = cov_matrix(m, y, rowvar)
    weighting = cov_weights(x, bias, ddof, fweights, aweights)
    w = weighting[0]
    counts = np.ones(np.shape(x)[1]) if fweights is None else np.asarray(fweights, float)
    centred = x - np.sum(x * w, axis=1, keepdims=True) / np.sum(w)
    g_matrix = np.reshape(g, (np.shape(x)[0], np.shape(x)[0]))
    c = (centred * w) @ np.transpose(centred) / weighting[1]
    spread = np.sum(centred * (g_matrix @ centred), axis=0)
    slope = cov_divisor_slope(x, bias, ddof, fweights, aweights)
    grad = (counts * spread - np.sum(g_matrix * c) * slope) / weighting[1]
    return astype_grad(np.reshape(grad, np.shape(aweights)), aweights)


@zero_in_zero_out("t")
def cov_aweights_tangent(t, m, y, out, rowvar=True, bias=False, ddof=None, fweights=None,
                         aweights=None):
    """Tangent of ``np.cov`` from ``aweights`` (``cov_aweights_grad``)."""
    if zero_in(t):
        return zero
    x = cov_matrix(m, y, rowvar)
    weighting = cov_weights(x, bias, ddof, fweights, aweights)
    w = weighting[0]
    counts = np.ones(np.shape(x)[1]) if fweights is None else np.asarray(fweights, float)
    centred = x - np.sum(x * w, axis=1, keepdims=True) / np.sum(w)
    c = (centred * w) @ np.transpose(centred) / weighting[1]
    slope = cov_divisor_slope(x, bias, ddof, fweights, aweights)
    change = ((centred * (counts * t)) @ np.transpose(centred) - c * np.sum(slope * t)) / \
        weighting[1]
    return as_dtype_of(np.reshape(change, np.shape(out)), out)


@zero_in_zero_out("t")
def cov_tangent(t, m, y, out, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
                wrt=0):
    """Tangent of ``np.cov`` from ``m`` (``wrt`` 0) or ``y`` (1): ``(dXc W Xc^T + Xc W dXc^T) /
    f`` for the moved rows (zeros for the other's)."""
    if zero_in(t):
        return zero
    x = cov_matrix(m, y, rowvar)
    weighting = cov_weights(x, bias, ddof, fweights, aweights)
    w = weighting[0]
    if wrt == 0:
        moved = cov_matrix(np.broadcast_to(t, np.shape(m)),
                           None if y is None else np.zeros(np.shape(y)), rowvar)
    else:
        moved = cov_matrix(np.zeros(np.shape(m)), np.broadcast_to(t, np.shape(y)), rowvar)
    centred = x - np.sum(x * w, axis=1, keepdims=True) / np.sum(w)
    d_centred = moved - np.sum(moved * w, axis=1, keepdims=True) / np.sum(w)
    half = (d_centred * w) @ np.transpose(centred)
    return as_dtype_of(np.reshape((half + np.transpose(half)) / weighting[1], np.shape(out)), out)


# the tangent transposed in its tangent (@transpose reads it)
@transpose_of(cov_tangent)
def _(ans, t, m, y, out, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
      wrt=0):
    d[t] = cov_grads(d[ans], m, y, rowvar, bias, ddof, fweights, aweights)[wrt]


@transpose_of(cov_aweights_tangent)
def _(ans, t, m, y, out, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    d[t] = cov_aweights_grad(d[ans], m, y, rowvar, bias, ddof, fweights, aweights)


@transpose(np.cov)
@tangent(np.cov)
def _(out, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
      dtype=None):
    """Real values; integer fweights (constants)."""
    d[out] = cov_tangent(d[m], m, y, out, rowvar, bias, ddof, fweights, aweights, 0)
    d[out] = cov_tangent(d[y], m, y, out, rowvar, bias, ddof, fweights, aweights, 1)
    d[out] = cov_aweights_tangent(d[aweights], m, y, out, rowvar, bias, ddof, fweights, aweights)


@zero_in_zero_out("g")
def corrcoef_cov_grad(g, x, y=None, rowvar=True):
    """The gradient of ``R = C / sqrt(c c^T)`` (``c`` the variances) for the covariance ``C``:
    ``G / sqrt(c c^T)``, less on the diagonal ``sum_j (G o R)_kj / c_k`` (both factors of
    ``c_k``)."""
    if zero_in(g):
        return zero
    c = np.cov(x, y, rowvar)
    variances = np.diagonal(np.atleast_2d(c))
    r = np.atleast_2d(c) / np.sqrt(np.outer(variances, variances))
    g_matrix = np.reshape(g, np.shape(r))
    weighted = g_matrix * r
    diagonal = (np.sum(weighted, axis=1) + np.sum(weighted, axis=0)) / (2.0 * variances)
    return g_matrix / np.sqrt(np.outer(variances, variances)) - np.diag(diagonal)


@zero_in_zero_out("t")
def corrcoef_tangent(t, x, y, out, rowvar=True, wrt=0):
    """Tangent of ``np.corrcoef``: ``dC / sqrt(c c^T) - R o (dc_i / c_i + dc_j / c_j) / 2``."""
    if zero_in(t):
        return zero
    c = np.atleast_2d(np.cov(x, y, rowvar))
    dc = np.atleast_2d(cov_tangent(t, x, y, np.cov(x, y, rowvar), rowvar, wrt=wrt))
    variances = np.diagonal(c)
    changes = np.diagonal(dc) / variances
    r = c / np.sqrt(np.outer(variances, variances))
    change = dc / np.sqrt(np.outer(variances, variances)) - \
        0.5 * r * (changes[:, None] + changes[None, :])
    return as_dtype_of(np.reshape(change, np.shape(out)), out)


# the tangents transposed in their tangents (@transpose reads them)
@transpose_of(corrcoef_tangent)
def _(ans, t, x, y, out, rowvar=True, wrt=0):
    d[t] = cov_grads(corrcoef_cov_grad(d[ans], x, y, rowvar), x, y, rowvar)[wrt]


@transpose(np.corrcoef)
@tangent(np.corrcoef)
def _(out, x, y=None, rowvar=True, *, dtype=None):
    """Real values with nonzero variances."""
    d[out] = corrcoef_tangent(d[x], x, y, out, rowvar, 0)
    d[out] = corrcoef_tangent(d[y], x, y, out, rowvar, 1)


# ----- where an extremum was found: the gradient of max and min without ties ----------------


def extremum_places(a, ans, axis=None, keepdims=False, where=True, initial=None):
    """Where each result of ``np.max``/``np.min`` of ``a`` was found, when every result was
    found at one place alone (no tie, no NaN, no ``initial``, no ``where``; ``axis`` None or
    one axis): the flat index for ``axis=None``, else the indices along ``axis`` (keepdims).
    None otherwise: the gradient then splits among the shares (``extremum_shares``)."""
    if initial is not None or where is not True or a.__class__ is not np.ndarray or \
            a.dtype.kind != "f" or not a.size or not (axis is None or isinstance(axis, int)):
        return None
    hits = a == unreduce(ans, a, axis, keepdims)
    if axis is None:
        return np.argmax(hits) if np.count_nonzero(hits) == 1 else None
    # no NaN result, so each has one hit at least; as many hits as results: one each
    if np.isnan(ans).any() or np.count_nonzero(hits) != hits.size // a.shape[axis]:
        return None
    return np.argmax(hits, axis=axis, keepdims=True)


@linear_in("g")
def extremum_scatter(g, a, places, axis=None, keepdims=False):
    """``g`` written at ``places`` (``extremum_places``) in zeros of ``a``'s shape: the
    gradient of an extremum found at one place, one write instead of a pass over shares."""
    grad = np.zeros(a.shape, np.result_type(g, 1.0))
    if axis is None:
        grad.reshape(-1)[places] = np.reshape(g, ())
        return grad
    values = as_array(g) if keepdims else np.expand_dims(g, axis)
    np.put_along_axis(grad, places, np.broadcast_to(values, places.shape), axis)
    return grad


@linear_in("g")
def extremum_gather(g, places, axis=None, keepdims=False):
    """The values of ``g`` at ``places``, in the shape of the extremum's result: the
    transpose of ``extremum_scatter``."""
    if axis is None:
        value = np.reshape(g, -1)[places]
        return np.reshape(value, (1,) * np.ndim(g)) if keepdims else value
    values = np.take_along_axis(g, places, axis)
    return values if keepdims else np.squeeze(values, axis)


nondifferentiable(extremum_places)


@adjoint(extremum_scatter)
def _(out, g, a, places, axis=None, keepdims=False):
    d[g] = extremum_gather(d[out], places, axis, keepdims)


@adjoint(extremum_gather)
def _(out, g, places, axis=None, keepdims=False):
    d[g] = extremum_scatter(d[out], g, places, axis, keepdims)
