"""Rules for NumPy's reductions and cumulative operations.

A reduction's gradient is the incoming gradient broadcast back over the reduced axes
(``unreduce``), weighted by how much each element contributed. Helpers cast their result back
to the input's dtype: a reduction asked for ``dtype=np.float64`` still returns float32 gradients
for a float32 input.
"""

import numpy as np

from mindgrad.rules import adjoint, adjoint_method, d
from mindgrad.rules.numpy_elementwise import astype_grad
from mindgrad.runtime import is_zero, takes_zero, unbroadcast, unreduce


def reduced_axes(axis, ndim):
    """``axis`` of a reduction as a sorted tuple of non-negative axes (None: all of them)."""
    if axis is None:
        return tuple(range(ndim))
    if np.ndim(axis) == 0:
        axis = (axis,)
    return tuple(sorted(int(a) % max(ndim, 1) for a in axis))


def reduced_count(a, axis, where=True):
    """How many elements of ``a`` each result of a reduction over ``axis`` combines (kept dims)."""
    if where is True:
        shape = np.shape(a)
        return int(np.prod([shape[i] for i in reduced_axes(axis, len(shape))]))
    mask = np.broadcast_to(where, np.shape(a))
    return np.sum(mask, axis=reduced_axes(axis, np.ndim(a)), keepdims=True)


def masked_grad(g, where):
    """``g`` with the elements a reduction's ``where=`` left out set to zero."""
    if where is True:
        return g
    return np.where(where, g, g * 0)


# ----- sums and means ----------------------------------------------------------------------


@takes_zero
def reduce_sum_grad(g, a, axis=None, keepdims=False, where=True):
    """Gradient of ``np.sum(a, axis, keepdims=keepdims, where=where)``."""
    if is_zero(g):
        return 0
    if axis is None and where is True and a.__class__ is np.ndarray:
        return np.full(a.shape, g, dtype=np.result_type(a.dtype, np.float32))
    return astype_grad(masked_grad(unreduce(g, a, axis, keepdims), where), a)


@takes_zero
def reduce_mean_grad(g, a, axis=None, keepdims=False, where=True):
    """Gradient of ``np.mean``: the sum's gradient divided by the number of elements averaged."""
    if is_zero(g):
        return 0
    if axis is None and where is True and a.__class__ is np.ndarray:
        return np.full(a.shape, g / max(a.size, 1), dtype=np.result_type(a.dtype, np.float32))
    count = reduced_count(a, axis, where)
    grad = masked_grad(unreduce(g, a, axis, keepdims), where)
    return astype_grad(grad / np.maximum(count, 1).astype(np.result_type(grad, 1.0)), a)


@adjoint(np.sum)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=0, where=True):
    d[a] = reduce_sum_grad(d[ans], a, axis, keepdims, where)


@adjoint(np.mean)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    d[a] = reduce_mean_grad(d[ans], a, axis, keepdims, where)


@adjoint(np.nansum)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=0, where=True):
    d[a] = reduce_sum_grad(d[ans], a, axis, keepdims, np.logical_and(where, ~np.isnan(a)))


@adjoint(np.nanmean)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    d[a] = reduce_mean_grad(d[ans], a, axis, keepdims, np.logical_and(where, ~np.isnan(a)))


def average_weights(a, axis, weights):
    """The weights of ``np.average`` broadcast against ``a`` (1-D weights lie along ``axis``)."""
    if weights is None:
        return np.ones_like(a, dtype=np.result_type(a, 1.0))
    weights = np.asarray(weights)
    if weights.shape != np.shape(a) and weights.ndim == 1 and np.ndim(axis) == 0:
        shape = [1] * np.ndim(a)
        shape[int(axis) % np.ndim(a)] = weights.size
        weights = weights.reshape(shape)
    return np.broadcast_to(weights, np.shape(a))


def average_grad_a(g, a, axis, weights, returned=False, keepdims=False):
    """Gradient of ``np.average(a, axis, weights)`` for ``a``: the weights over their sum."""
    g = g[0] if returned else g
    if is_zero(g):
        return 0
    w = average_weights(a, axis, weights)
    total = np.sum(w, axis=reduced_axes(axis, np.ndim(a)), keepdims=True)
    return astype_grad(unreduce(g, a, axis, keepdims) * (w / total), a)


def average_grad_weights(g, a, axis, weights, returned=False, keepdims=False):
    """Gradient of ``np.average`` (and of the returned sum of weights) for ``weights``."""
    if weights is None:
        return 0
    g_avg, g_total = (g[0], g[1]) if returned else (g, 0)
    w = average_weights(a, axis, weights)
    axes = reduced_axes(axis, np.ndim(a))
    total = np.sum(w, axis=axes, keepdims=True)
    mean = np.sum(w * a, axis=axes, keepdims=True) / total
    grad = 0 * w
    if not is_zero(g_avg):
        grad = grad + unreduce(g_avg, a, axis, keepdims) * (a - mean) / total
    if not is_zero(g_total):
        grad = grad + unreduce(g_total, a, axis, keepdims)
    if np.ndim(weights) == 1 and np.shape(weights) != np.shape(a):
        grad = np.sum(grad, axis=tuple(i for i in range(np.ndim(a)) if i not in axes))
    return astype_grad(unbroadcast(grad, weights), weights)


@adjoint(np.average)
def _(out, a, axis=None, weights=None, returned=False, *, keepdims=False):
    d[a] = average_grad_a(d[out], a, axis, weights, returned, keepdims)
    d[weights] = average_grad_weights(d[out], a, axis, weights, returned, keepdims)


# ----- products ----------------------------------------------------------------------------


def exclusive_products(x):
    """For each element along the last axis, the product of all the others: no division, so
    zeros are handled exactly."""
    ones = np.ones_like(x[..., :1])
    before = np.cumprod(np.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, x[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return before * after


@takes_zero
def prod_grad(g, a, axis=None, keepdims=False, initial=1, where=True):
    """Gradient of ``np.prod``: each element gets ``g`` times the product of the others."""
    if is_zero(g) or np.size(a) == 0:
        return 0 if is_zero(g) else np.zeros_like(a)
    x = np.asarray(a)
    x = x if where is True else np.where(where, x, np.ones_like(x))
    axes = reduced_axes(axis, x.ndim)
    moved = np.moveaxis(x, axes, range(x.ndim - len(axes), x.ndim))
    flat = moved.reshape(moved.shape[:x.ndim - len(axes)] + (-1,))
    others = exclusive_products(flat).reshape(moved.shape)
    others = np.moveaxis(others, range(x.ndim - len(axes), x.ndim), axes)
    grad = masked_grad(unreduce(g, x, axis, keepdims) * others * initial, where)
    return astype_grad(grad, a)


@adjoint(np.prod)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=1, where=True):
    d[a] = prod_grad(d[ans], a, axis, keepdims, initial, where)


# ----- extrema -----------------------------------------------------------------------------


@takes_zero
def extremum_grad(g, a, ans, axis=None, keepdims=False, where=True):
    """Gradient of ``np.max``/``np.min``: ``g`` split equally among the elements equal to the
    result (ties share it, as in JAX); none where ``initial`` won."""
    if is_zero(g):
        return 0
    hits = (np.asarray(a) == unreduce(ans, a, axis, keepdims)) & np.asarray(where)
    count = np.sum(hits, axis=reduced_axes(axis, np.ndim(a)), keepdims=True)
    share = hits / np.maximum(count, 1)
    grad = unreduce(g, a, axis, keepdims)
    return astype_grad(grad * share.astype(np.result_type(grad, 1.0), copy=False), a)


@adjoint(np.max, np.min, np.amax, np.amin)
def _(ans, a, axis=None, out=None, keepdims=False, initial=None, where=True):
    d[a] = extremum_grad(d[ans], a, ans, axis, keepdims, where)


@adjoint(np.nanmax, np.nanmin)
def _(ans, a, axis=None, out=None, keepdims=False, initial=None, where=True):
    d[a] = extremum_grad(d[ans], a, ans, axis, keepdims, where)


# ----- variance and standard deviation -----------------------------------------------------


@takes_zero
def var_grad(g, a, axis=None, ddof=0, keepdims=False, correction=None, where=True, mean=None):
    """Gradient of ``np.var``: ``2 (a - mean) / (N - ddof)`` times ``g`` (``mean`` given or
    computed, over the elements ``where`` selects)."""
    if is_zero(g):
        return 0
    ddof = ddof if correction is None else correction
    x = np.asarray(a)
    axes = reduced_axes(axis, x.ndim)
    if mean is None:
        mean = np.mean(x, axis=axes, keepdims=True, where=where)
    count = reduced_count(x, axis, where)
    grad = unreduce(g, x, axis, keepdims) * (x - mean) * (2.0 / (count - ddof))
    return astype_grad(masked_grad(grad, where), a)


@takes_zero
def std_grad(g, a, ans, axis=None, ddof=0, keepdims=False, correction=None, where=True,
             mean=None):
    """Gradient of ``np.std = sqrt(var)``: the variance's gradient for ``g / (2 std)``; 0 where
    the std is 0 (all elements equal: a kink, where 0 is a subgradient) rather than NaN."""
    if is_zero(g):
        return 0
    return var_grad(g * 0.5 / np.where(ans == 0, np.inf, ans), a, axis, ddof, keepdims,
                    correction, where, mean)


@adjoint(np.var)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
      mean=None, correction=None):
    d[a] = var_grad(d[ans], a, axis, ddof, keepdims, correction, where, mean)


@adjoint(np.std)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
      mean=None, correction=None):
    d[a] = std_grad(d[ans], a, ans, axis, ddof, keepdims, correction, where, mean)


# ----- cumulative sums and products --------------------------------------------------------


@takes_zero
def cumsum_grad(g, a, axis=None):
    """Gradient of ``np.cumsum``: the reversed cumulative sum of ``g`` (flattened for None)."""
    if is_zero(g):
        return 0
    g = np.asarray(g)
    ax = -1 if axis is None else axis
    grad = np.flip(np.cumsum(np.flip(g, ax), axis=ax), ax)
    return astype_grad(np.reshape(grad, np.shape(a)), a)


@takes_zero
def cumprod_grad(g, a, ans, axis=None):
    """Gradient of ``np.cumprod``: element i gets sum over j >= i of ``g_j`` times the product of
    ``a_0..a_j`` without ``a_i``. Without zeros that is a reversed cumsum of ``g * out`` over
    ``a``; with zeros it is built one position at a time (quadratic, but exact)."""
    if is_zero(g):
        return 0
    x = np.asarray(a)
    ax = -1 if axis is None else axis
    x = x.ravel() if axis is None else x
    g = np.asarray(g)
    if np.all(x != 0):
        grad = np.flip(np.cumsum(np.flip(g * ans, ax), axis=ax), ax) / x
        return astype_grad(np.reshape(grad, np.shape(a)), a)
    xm, gm = np.moveaxis(x, ax, -1), np.moveaxis(g, ax, -1)
    grad = np.zeros(np.broadcast_shapes(xm.shape, gm.shape), dtype=np.result_type(xm, gm))
    for i in range(xm.shape[-1]):
        without_i = xm.copy()
        without_i[..., i] = 1
        partial = np.cumprod(without_i, axis=-1)
        grad[..., i] = np.sum(gm[..., i:] * partial[..., i:], axis=-1)
    return astype_grad(np.reshape(np.moveaxis(grad, -1, ax), np.shape(a)), a)


@adjoint_method("cumsum")
@adjoint(np.cumsum)
def _(ans, a, axis=None, dtype=None, out=None):
    d[a] = cumsum_grad(d[ans], a, axis)


@adjoint_method("cumprod")
@adjoint(np.cumprod)
def _(ans, a, axis=None, dtype=None, out=None):
    d[a] = cumprod_grad(d[ans], a, ans, axis)
