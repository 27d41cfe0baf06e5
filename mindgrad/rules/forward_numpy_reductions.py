"""Tangent rules for NumPy's reductions and cumulative operations.

Sums, means and cumulative sums are linear: their tangent is the same reduction of the input's
tangent. The others reduce the tangent weighted by each element's slope; helpers return the
output's dtype.
"""

import numpy as np

from mindgrad.rules import d, tangent, tangent_method
from mindgrad.rules.numpy_reductions import (
    average_weights,
    extremum_grad,
    masked_grad,
    prod_grad,
    reduced_axes,
    reduced_count,
)
from mindgrad.runtime import is_zero
from mindgrad.runtime.tangents import TangentTuple, broadcast_tangent, float_dtype


def as_dtype_of(t, out):
    """``t`` in the float dtype of ``out`` (a NumPy scalar for a 0-d result)."""
    dtype = float_dtype(out)
    if isinstance(out, np.ndarray):
        return np.asarray(t).astype(dtype, copy=False)
    if np.ndim(t) == 0:
        return np.asarray(t, dtype)[()]  # a NumPy scalar
    return np.asarray(t).astype(dtype, copy=False)


# ----- sums and means ----------------------------------------------------------------------


@tangent(np.sum)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=0, where=True):
    d[ans] = np.sum(d[a], axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    d[ans] = broadcast_tangent(d[initial], ans)


@tangent(np.mean)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    d[ans] = np.mean(d[a], axis=axis, dtype=dtype, keepdims=keepdims, where=where)


@tangent(np.nansum)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=0, where=True):
    d[ans] = np.sum(d[a], axis, dtype, None, keepdims, 0, np.logical_and(where, ~np.isnan(a)))
    d[ans] = broadcast_tangent(d[initial], ans)


@tangent(np.nanmean)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    d[ans] = np.mean(d[a], axis, dtype, None, keepdims,
                     where=np.logical_and(where, ~np.isnan(a)))


def average_tangent_a(t, a, axis, weights, returned, keepdims, out):
    """Tangent of ``np.average(a, axis, weights)`` from ``a``: the weighted average of ``t``
    (the returned sum of weights does not depend on ``a``)."""
    if is_zero(t):
        return 0
    w = average_weights(a, axis, weights)
    axes = reduced_axes(axis, np.ndim(a))
    total = np.sum(w, axis=axes, keepdims=keepdims)
    t_avg = np.sum(w * t, axis=axes, keepdims=keepdims) / total
    if returned:
        return TangentTuple((as_dtype_of(t_avg, out[0]), as_dtype_of(0 * out[1], out[1])))
    return as_dtype_of(t_avg, out)


def average_tangent_weights(t, a, axis, weights, returned, keepdims, out):
    """Tangent of ``np.average`` (and of the returned sum of weights) from ``weights``:
    ``sum(t (a - avg)) / sum(w)`` and ``sum(t)``."""
    if is_zero(t) or weights is None:
        return 0
    w = average_weights(a, axis, weights)
    tw = average_weights(a, axis, t)
    axes = reduced_axes(axis, np.ndim(a))
    total = np.sum(w, axis=axes, keepdims=True)
    mean = np.sum(w * a, axis=axes, keepdims=True) / total
    t_avg = np.sum(tw * (a - mean), axis=axes, keepdims=keepdims) / \
        (total if keepdims else np.squeeze(total, axes))
    if returned:
        t_total = np.sum(tw, axis=axes, keepdims=keepdims)
        return TangentTuple((as_dtype_of(t_avg, out[0]),
                             as_dtype_of(np.broadcast_to(t_total, np.shape(out[1])), out[1])))
    return as_dtype_of(t_avg, out)


@tangent(np.average)
def _(out, a, axis=None, weights=None, returned=False, *, keepdims=False):
    d[out] = average_tangent_a(d[a], a, axis, weights, returned, keepdims, out)
    d[out] = average_tangent_weights(d[weights], a, axis, weights, returned, keepdims, out)


# ----- products ----------------------------------------------------------------------------


def prod_tangent(t, a, ans, axis=None, keepdims=False, initial=1, where=True):
    """Tangent of ``np.prod``: ``t`` weighted by the product of the other elements, summed."""
    if np.size(a) == 0:
        return as_dtype_of(np.zeros(np.shape(ans)), ans)
    slopes = prod_grad(np.ones(np.shape(ans)), a, axis, keepdims, initial, where)
    return as_dtype_of(np.sum(masked_grad(t * slopes, where), axis=reduced_axes(axis, np.ndim(a)),
                              keepdims=keepdims), ans)


@tangent(np.prod)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=1, where=True):
    d[ans] = prod_tangent(d[a], a, ans, axis, keepdims, initial, where)
    d[ans] = d[initial] * np.prod(a, axis, dtype, None, keepdims, 1, where)


# ----- extrema -----------------------------------------------------------------------------


def extremum_tangent(t, a, ans, axis=None, keepdims=False, where=True):
    """Tangent of ``np.max``/``np.min``: the mean tangent of the elements equal to the result
    (ties share, as the gradient does); 0 where ``initial`` won."""
    share = extremum_grad(np.ones(np.shape(ans)), a, ans, axis, keepdims, where)
    return as_dtype_of(np.sum(t * share, axis=reduced_axes(axis, np.ndim(a)), keepdims=keepdims),
                       ans)


@tangent(np.max, np.min, np.amax, np.amin)
def _(ans, a, axis=None, out=None, keepdims=False, initial=None, where=True):
    d[ans] = extremum_tangent(d[a], a, ans, axis, keepdims, where)


@tangent(np.nanmax, np.nanmin)
def _(ans, a, axis=None, out=None, keepdims=False, initial=None, where=True):
    d[ans] = extremum_tangent(d[a], a, ans, axis, keepdims, where)


# ----- variance and standard deviation -----------------------------------------------------


def var_tangent(t, a, ans, axis=None, ddof=0, keepdims=False, correction=None, where=True,
                mean=None):
    """Tangent of ``np.var`` from ``a``: ``sum(2 (a - mean) t) / (N - ddof)`` (the mean's own
    change contributes nothing: the deviations sum to zero; a given ``mean`` is a constant)."""
    ddof = ddof if correction is None else correction
    x = np.asarray(a)
    axes = reduced_axes(axis, x.ndim)
    if mean is None:
        mean = np.mean(x, axis=axes, keepdims=True, where=where)
    count = reduced_count(x, axis, where)
    terms = masked_grad(t * (x - mean) * (2.0 / (count - ddof)), where)
    return as_dtype_of(np.sum(terms, axis=axes, keepdims=keepdims), ans)


def var_mean_tangent(t, a, ans, axis=None, ddof=0, keepdims=False, correction=None,
                     where=True, mean=None):
    """Tangent of ``np.var(a, mean=mean)`` from a given ``mean``."""
    if is_zero(t) or mean is None:
        return 0
    ddof = ddof if correction is None else correction
    x = np.asarray(a)
    axes = reduced_axes(axis, x.ndim)
    count = reduced_count(x, axis, where)
    terms = masked_grad(-t * (x - mean) * (2.0 / (count - ddof)), where)
    return as_dtype_of(np.sum(terms, axis=axes, keepdims=keepdims), ans)


def std_tangent(t, a, ans, axis=None, ddof=0, keepdims=False, correction=None, where=True,
                mean=None, wrt="a"):
    """Tangent of ``np.std = sqrt(var)``: the variance's over ``2 std``; 0 where the std is 0."""
    if is_zero(t):
        return 0
    fn = var_tangent if wrt == "a" else var_mean_tangent
    t_var = fn(t, a, ans, axis, ddof, keepdims, correction, where, mean)
    return as_dtype_of(t_var * 0.5 / np.where(ans == 0, np.inf, ans), ans)


@tangent(np.var)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
      mean=None, correction=None):
    d[ans] = var_tangent(d[a], a, ans, axis, ddof, keepdims, correction, where, mean)
    d[ans] = var_mean_tangent(d[mean], a, ans, axis, ddof, keepdims, correction, where, mean)


@tangent(np.std)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
      mean=None, correction=None):
    d[ans] = std_tangent(d[a], a, ans, axis, ddof, keepdims, correction, where, mean)
    d[ans] = std_tangent(d[mean], a, ans, axis, ddof, keepdims, correction, where, mean, "mean")


# ----- cumulative sums and products --------------------------------------------------------


@tangent_method("cumsum")
@tangent(np.cumsum)
def _(ans, a, axis=None, dtype=None, out=None):
    d[ans] = np.cumsum(d[a], axis, dtype)


def cumprod_tangent(t, a, ans, axis=None):
    """Tangent of ``np.cumprod``: ``out_j sum_{i<=j} t_i / a_i`` without zeros; with zeros, the
    recurrence ``dout_j = dout_{j-1} a_j + out_{j-1} t_j`` (exact)."""
    x = np.asarray(a)
    t = np.broadcast_to(t, x.shape)
    if axis is None:
        x, t, axis = x.ravel(), t.ravel(), 0
    if np.all(x != 0):
        return as_dtype_of(ans * np.cumsum(t / x, axis=axis), ans)
    xm, tm = np.moveaxis(x, axis, -1), np.moveaxis(t, axis, -1)
    prev = np.ones(xm.shape[:-1], dtype=np.result_type(xm, tm, 1.0))
    dprev = np.zeros_like(prev)
    steps = np.zeros(xm.shape, dtype=prev.dtype)
    for j in range(xm.shape[-1]):
        dprev = dprev * xm[..., j] + prev * tm[..., j]
        prev = prev * xm[..., j]
        steps[..., j] = dprev
    return as_dtype_of(np.reshape(np.moveaxis(steps, -1, axis), np.shape(ans)), ans)


@tangent_method("cumprod")
@tangent(np.cumprod)
def _(ans, a, axis=None, dtype=None, out=None):
    d[ans] = cumprod_tangent(d[a], a, ans, axis)
