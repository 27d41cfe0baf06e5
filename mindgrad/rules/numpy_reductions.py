"""Rules for NumPy's reductions and cumulative operations, both directions: each function's
adjoint with its tangent (forward mode) beside it.

A reduction's gradient is the incoming gradient broadcast back over the reduced axes
(``unreduce``), weighted by how much each element contributed; its tangent reduces the input's
tangent with the same weights. Helpers cast their result back to the input's dtype (a reduction
asked for ``dtype=np.float64`` still returns float32 gradients for a float32 input), tangent
helpers to the output's (``as_dtype_of``).

The gradient helpers (``reduce_sum_grad``, ``prod_grad``, ...) are differentiated again by forward
mode over reverse-mode code (Hessian-vector products). Those linear in the gradient ``g`` get
their tangent from ``@linear`` on a template with the helper's signature and no body; those that
also change with a primal argument have a ``*_grad_tangent`` helper with the derivative.
``sum``, ``mean`` and ``cumsum`` keep hand-written tangents although they are linear: their
templates end in an ``out`` parameter that the derived call would pass on (a positional ``out``
would receive the tangent), and ``sum``'s ``initial`` is added, not scaled.
"""

import numpy as np

from mindgrad.rules import (
    adjoint,
    adjoint_method,
    d,
    linear,
    nondifferentiable,
    tangent,
    tangent_method,
)
from mindgrad.rules.numpy_elementwise import astype_grad, conj_if_complex
from mindgrad.runtime import is_zero, takes_zero, unbroadcast, unreduce, zero_in_zero_out
from mindgrad.runtime.tangents import (
    TangentTuple,
    as_dtype_of,
    broadcast_tangent,
    float_dtype,
)


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
    return np.where(where, g, 0)


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


@linear(reduce_sum_grad, reduce_mean_grad)
def _(out, g, a, axis=None, keepdims=False, where=True):
    ...


@adjoint(np.sum)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=0, where=True):
    d[a] = reduce_sum_grad(d[ans], a, axis, keepdims, where)
    d[initial] = np.sum(d[ans])  # initial is added to every result


@tangent(np.sum)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=0, where=True):
    d[ans] = np.sum(d[a], axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    d[ans] = broadcast_tangent(d[initial], ans)


@adjoint(np.mean)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    d[a] = reduce_mean_grad(d[ans], a, axis, keepdims, where)


@tangent(np.mean)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    d[ans] = np.mean(d[a], axis=axis, dtype=dtype, keepdims=keepdims, where=where)


@adjoint(np.nansum)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=0, where=True):
    d[a] = reduce_sum_grad(d[ans], a, axis, keepdims, np.logical_and(where, ~np.isnan(a)))
    d[initial] = np.sum(d[ans])


@tangent(np.nansum)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=0, where=True):
    d[ans] = np.sum(d[a], axis, dtype, None, keepdims, 0, np.logical_and(where, ~np.isnan(a)))
    d[ans] = broadcast_tangent(d[initial], ans)


@adjoint(np.nanmean)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    d[a] = reduce_mean_grad(d[ans], a, axis, keepdims, np.logical_and(where, ~np.isnan(a)))


@tangent(np.nanmean)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    d[ans] = np.mean(d[a], axis, dtype, None, keepdims,
                     where=np.logical_and(where, ~np.isnan(a)))


# ----- weighted averages -------------------------------------------------------------------


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


def average_grad_a_tangent(g, a, axis, weights, t, returned=False, keepdims=False):
    """Tangent of ``average_grad_a`` (``g w / sum(w)``) from ``weights``."""
    if is_zero(t):
        return 0
    g = g[0] if returned else g
    if is_zero(g):
        return 0
    w = average_weights(a, axis, weights)
    tw = average_weights(a, axis, t)
    axes = reduced_axes(axis, np.ndim(a))
    total = np.sum(w, axis=axes, keepdims=True)
    t_total = np.sum(tw, axis=axes, keepdims=True)
    return astype_grad(unreduce(g, a, axis, keepdims) * (tw / total - w * t_total / total ** 2),
                          a)


@tangent(average_grad_a)
def _(out, g, a, axis, weights, returned=False, keepdims=False):
    d[out] = average_grad_a(d[g], a, axis, weights, returned, keepdims)
    d[out] = average_grad_a_tangent(g, a, axis, weights, d[weights], returned, keepdims)


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


def average_grad_weights_tangent(g, a, axis, weights, t, wrt, returned=False, keepdims=False):
    """Tangent of ``average_grad_weights`` from ``a`` (wrt 0) or ``weights`` (1): the part
    ``g_avg (a - mean) / total`` changes with both."""
    if is_zero(t):
        return 0
    if weights is None:
        return 0
    g_avg = g[0] if returned else g
    if is_zero(g_avg):
        return 0
    w = average_weights(a, axis, weights)
    axes = reduced_axes(axis, np.ndim(a))
    total = np.sum(w, axis=axes, keepdims=True)
    mean = np.sum(w * a, axis=axes, keepdims=True) / total
    if wrt == 0:
        t_mean = np.sum(w * t, axis=axes, keepdims=True) / total
        change = (t - t_mean) / total
    else:
        tw = average_weights(a, axis, t)
        t_total = np.sum(tw, axis=axes, keepdims=True)
        t_mean = np.sum(tw * (a - mean), axis=axes, keepdims=True) / total
        change = -t_mean / total - (a - mean) * t_total / total ** 2
    grad = unreduce(g_avg, a, axis, keepdims) * change
    if np.ndim(weights) == 1 and np.shape(weights) != np.shape(a):
        grad = np.sum(grad, axis=tuple(i for i in range(np.ndim(a)) if i not in axes))
    return astype_grad(unbroadcast(grad, weights), weights)


@tangent(average_grad_weights)
def _(out, g, a, axis, weights, returned=False, keepdims=False):
    d[out] = average_grad_weights(d[g], a, axis, weights, returned, keepdims)
    d[out] = average_grad_weights_tangent(g, a, axis, weights, d[a], 0, returned, keepdims)
    d[out] = average_grad_weights_tangent(g, a, axis, weights, d[weights], 1, returned,
                                          keepdims)


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


@adjoint(np.average)
def _(out, a, axis=None, weights=None, returned=False, *, keepdims=False):
    d[a] = average_grad_a(d[out], a, axis, weights, returned, keepdims)
    d[weights] = average_grad_weights(d[out], a, axis, weights, returned, keepdims)


@tangent(np.average)
def _(out, a, axis=None, weights=None, returned=False, *, keepdims=False):
    d[out] = average_tangent_a(d[a], a, axis, weights, returned, keepdims, out)
    d[out] = average_tangent_weights(d[weights], a, axis, weights, returned, keepdims, out)


# ----- products ----------------------------------------------------------------------------


def exclusive_products(x):
    """For each element along the last axis, the product of all the others: no division, so
    zeros are handled exactly."""
    ones = np.ones_like(x[..., :1])
    before = np.cumprod(np.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, x[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return before * after


def exclusive_products_tangent(x, t):
    """Tangent of ``exclusive_products(x)`` (products of all the others along the last axis)
    in the direction ``t``: exact with zeros, through the tangents of the two cumprods."""
    ones, zeros = np.ones_like(x[..., :1]), np.zeros_like(t[..., :1])
    head_x = np.concatenate([ones, x[..., :-1]], axis=-1)
    head_t = np.concatenate([zeros, t[..., :-1]], axis=-1)
    before = np.cumprod(head_x, axis=-1)
    d_before = cumprod_tangent(head_t, head_x, before, -1)
    tail_x = np.concatenate([ones, x[..., :0:-1]], axis=-1)
    tail_t = np.concatenate([zeros, t[..., :0:-1]], axis=-1)
    after = np.cumprod(tail_x, axis=-1)
    d_after = cumprod_tangent(tail_t, tail_x, after, -1)
    return d_before * after[..., ::-1] + before * d_after[..., ::-1]


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


def prod_grad_tangent(g, a, t, axis=None, keepdims=False, initial=1, where=True):
    """Tangent of ``prod_grad`` from ``a``: the products of the other elements change by the
    sum over the others of ``t`` times the products without both."""
    if is_zero(t):
        return 0
    if np.size(a) == 0:
        return np.zeros(np.shape(a), np.result_type(a, 1.0))
    x = np.asarray(a)
    t = np.broadcast_to(t, x.shape)
    if where is not True:
        x, t = np.where(where, x, np.ones_like(x)), np.where(where, t, np.zeros_like(t))
    axes = reduced_axes(axis, x.ndim)
    kept = x.ndim - len(axes)
    moved_x = np.moveaxis(x, axes, range(kept, x.ndim))
    moved_t = np.moveaxis(t, axes, range(kept, x.ndim))
    flat_x = moved_x.reshape(moved_x.shape[:kept] + (-1,))
    flat_t = moved_t.reshape(moved_t.shape[:kept] + (-1,))
    others = exclusive_products_tangent(flat_x, flat_t).reshape(moved_x.shape)
    others = np.moveaxis(others, range(kept, x.ndim), axes)
    grad = masked_grad(unreduce(g, x, axis, keepdims) * others * initial, where)
    return astype_grad(grad, a)


@tangent(prod_grad)
def _(out, g, a, axis=None, keepdims=False, initial=1, where=True):
    d[out] = prod_grad(d[g], a, axis, keepdims, initial, where)
    d[out] = prod_grad_tangent(g, a, d[a], axis, keepdims, initial, where)
    d[out] = prod_grad(g, a, axis, keepdims, d[initial], where)


def prod_tangent(t, a, ans, axis=None, keepdims=False, initial=1, where=True):
    """Tangent of ``np.prod``: ``t`` weighted by the product of the other elements, summed."""
    if np.size(a) == 0:
        return as_dtype_of(np.zeros(np.shape(ans)), ans)
    slopes = prod_grad(np.ones(np.shape(ans)), a, axis, keepdims, initial, where)
    return as_dtype_of(np.sum(masked_grad(t * slopes, where), axis=reduced_axes(axis, np.ndim(a)),
                              keepdims=keepdims), ans)


@adjoint(np.prod)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=1, where=True):
    d[a] = prod_grad(d[ans], a, axis, keepdims, initial, where)
    d[initial] = np.sum(d[ans] * np.prod(a, axis, dtype, None, keepdims, 1, where))


@tangent(np.prod)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=1, where=True):
    d[ans] = prod_tangent(d[a], a, ans, axis, keepdims, initial, where)
    d[ans] = d[initial] * np.prod(a, axis, dtype, None, keepdims, 1, where)


# ----- extrema -----------------------------------------------------------------------------


def extremum_shares(a, ans, axis=None, keepdims=False, where=True, initial=None):
    """``(share of each element of a, share of initial)`` in a result of ``np.max``/``np.min``:
    the gradient is split equally among the candidates equal to the result (ties share it, as
    in JAX), ``initial`` being one candidate when given. The initial's share has ``ans``'s
    shape (None without an initial); the shares of one result add up to one."""
    hits = (np.asarray(a) == unreduce(ans, a, axis, keepdims)) & np.asarray(where)
    count = np.sum(hits, axis=reduced_axes(axis, np.ndim(a)), keepdims=True)
    if initial is None:
        return hits / np.maximum(count, 1), None
    won = np.reshape(np.asarray(ans), np.shape(count)) == initial
    count = np.maximum(count + won, 1)
    return hits / count, np.reshape(won / count, np.shape(ans)).astype(float_dtype(ans))


@takes_zero
def extremum_grad(g, a, ans, axis=None, keepdims=False, where=True, initial=None):
    """Gradient of ``np.max``/``np.min`` for ``a``: ``g`` times each element's share."""
    if is_zero(g):
        return 0
    share = extremum_shares(a, ans, axis, keepdims, where, initial)[0]
    grad = unreduce(g, a, axis, keepdims)
    return astype_grad(grad * share.astype(np.result_type(grad, 1.0), copy=False), a)


def extremum_initial_share(a, ans, axis=None, keepdims=False, where=True, initial=None):
    """The share of ``initial`` in each result of ``np.max``/``np.min`` (``ans``'s shape)."""
    share = extremum_shares(a, ans, axis, keepdims, where, initial)[1]
    return np.zeros(np.shape(ans), float_dtype(ans)) if share is None else share


nondifferentiable(extremum_shares, extremum_initial_share)  # piecewise constant


@linear(extremum_grad)  # the share of each element is piecewise constant
def _(out, g, a, ans, axis=None, keepdims=False, where=True, initial=None):
    ...


def extremum_tangent(t, a, ans, axis=None, keepdims=False, where=True, initial=None):
    """Tangent of ``np.max``/``np.min``: the mean tangent of the elements equal to the result
    (ties share, as the gradient does, ``initial`` among them)."""
    share = extremum_grad(np.ones(np.shape(ans)), a, ans, axis, keepdims, where, initial)
    return as_dtype_of(np.sum(t * share, axis=reduced_axes(axis, np.ndim(a)), keepdims=keepdims),
                       ans)


@adjoint(np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin)
def _(ans, a, axis=None, out=None, keepdims=False, initial=None, where=True):
    d[a] = extremum_grad(d[ans], a, ans, axis, keepdims, where, initial)
    d[initial] = np.sum(d[ans] * extremum_initial_share(a, ans, axis, keepdims, where, initial))


@tangent(np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin)
def _(ans, a, axis=None, out=None, keepdims=False, initial=None, where=True):
    d[ans] = extremum_tangent(d[a], a, ans, axis, keepdims, where, initial)
    d[ans] = d[initial] * extremum_initial_share(a, ans, axis, keepdims, where, initial)


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
    # the variance is real: a complex g (gradient code differentiated again) counts by its real
    # part, the README's convention; conj(a - mean): d|a - mean|^2 = 2 Re(conj(a - mean) da)
    grad = np.real(unreduce(g, x, axis, keepdims)) * conj_if_complex(x - mean) * \
        (2.0 / (count - ddof))
    return astype_grad(masked_grad(grad, where), a)


def var_grad_tangent(g, a, t, wrt, axis=None, ddof=0, keepdims=False, correction=None,
                     where=True, mean=None):
    """Tangent of ``var_grad`` (``g 2 (a - mean) / (N - ddof)``) from ``a`` (wrt 0; the computed
    mean moves with it) or from a given ``mean`` (wrt 1)."""
    if is_zero(t):
        return 0
    ddof = ddof if correction is None else correction
    x = np.asarray(a)
    axes = reduced_axes(axis, x.ndim)
    if wrt == 1:
        change = -t
    elif mean is None:
        change = t - np.mean(np.broadcast_to(t, x.shape), axis=axes, keepdims=True, where=where)
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


@takes_zero
def std_grad(g, a, ans, axis=None, ddof=0, keepdims=False, correction=None, where=True,
             mean=None):
    """Gradient of ``np.std = sqrt(var)``: the variance's gradient for ``g / (2 std)``; 0 where
    the std is 0 (all elements equal: a kink, where 0 is a subgradient) rather than NaN."""
    if is_zero(g):
        return 0
    return var_grad(g * 0.5 / np.where(ans == 0, np.inf, ans), a, axis, ddof, keepdims,
                    correction, where, mean)


def std_grad_tangent(g, a, ans, t, wrt, axis=None, ddof=0, keepdims=False, correction=None,
                     where=True, mean=None):
    """Tangent of ``std_grad`` (``var_grad(g / (2 ans), ...)``) from ``a`` (wrt 0), a given
    ``mean`` (1) or ``ans`` (2: ``-g t / (2 ans^2)`` through ``var_grad``, 0 where ans is 0)."""
    if is_zero(t):
        return 0
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
    terms = masked_grad(np.real(t * conj_if_complex(x - mean)) * (2.0 / (count - ddof)), where)
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
    terms = masked_grad(-np.real(t * conj_if_complex(x - mean)) * (2.0 / (count - ddof)), where)
    return as_dtype_of(np.sum(terms, axis=axes, keepdims=keepdims), ans)


def std_tangent(t, a, ans, axis=None, ddof=0, keepdims=False, correction=None, where=True,
                mean=None, wrt="a"):
    """Tangent of ``np.std = sqrt(var)``: the variance's over ``2 std``; 0 where the std is 0."""
    if is_zero(t):
        return 0
    if wrt == "a":
        t_var = var_tangent(t, a, ans, axis, ddof, keepdims, correction, where, mean)
    else:
        t_var = var_mean_tangent(t, a, ans, axis, ddof, keepdims, correction, where, mean)
    return as_dtype_of(t_var * 0.5 / np.where(ans == 0, np.inf, ans), ans)


@adjoint(np.var)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
      mean=None, correction=None):
    d[a] = var_grad(d[ans], a, axis, ddof, keepdims, correction, where, mean)


@tangent(np.var)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
      mean=None, correction=None):
    d[ans] = var_tangent(d[a], a, ans, axis, ddof, keepdims, correction, where, mean)
    d[ans] = var_mean_tangent(d[mean], a, ans, axis, ddof, keepdims, correction, where, mean)


@adjoint(np.std)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
      mean=None, correction=None):
    d[a] = std_grad(d[ans], a, ans, axis, ddof, keepdims, correction, where, mean)


@tangent(np.std)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
      mean=None, correction=None):
    d[ans] = std_tangent(d[a], a, ans, axis, ddof, keepdims, correction, where, mean)
    d[ans] = std_tangent(d[mean], a, ans, axis, ddof, keepdims, correction, where, mean, "mean")


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


@linear(cumsum_grad)
def _(out, g, a, axis=None):
    ...


@adjoint_method("cumsum")
@adjoint(np.cumsum)
def _(ans, a, axis=None, dtype=None, out=None):
    d[a] = cumsum_grad(d[ans], a, axis)


@tangent_method("cumsum")
@tangent(np.cumsum)
def _(ans, a, axis=None, dtype=None, out=None):
    d[ans] = np.cumsum(d[a], axis, dtype)


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


def cumprod_grad_tangent(g, a, ans, t, axis=None):
    """Tangent of ``cumprod_grad(g, a, ans)`` from ``a``, with ``ans = cumprod(a)`` moving
    along (``ans`` is read as that function of ``a``: it gets no statement of its own)."""
    if is_zero(t):
        return 0
    if is_zero(g):
        return 0
    x = np.asarray(a)
    t = np.broadcast_to(t, x.shape)
    ax = -1 if axis is None else axis
    if axis is None:
        x, t = x.ravel(), t.ravel()
    g = np.asarray(g)
    if np.all(x != 0):
        out = np.cumprod(x, axis=ax)
        d_out = cumprod_tangent(t, x, out, ax)
        rev = np.flip(np.cumsum(np.flip(g * out, ax), axis=ax), ax)
        d_rev = np.flip(np.cumsum(np.flip(g * d_out, ax), axis=ax), ax)
        grad = d_rev / x - rev * t / (x * x)
        return astype_grad(np.reshape(grad, np.shape(a)), a)
    xm, tm, gm = np.moveaxis(x, ax, -1), np.moveaxis(t, ax, -1), np.moveaxis(g, ax, -1)
    grad = np.zeros(np.broadcast_shapes(xm.shape, gm.shape), dtype=np.result_type(xm, gm, tm))
    for i in range(xm.shape[-1]):
        without_i, t_without_i = xm.copy(), np.array(tm)
        without_i[..., i], t_without_i[..., i] = 1, 0
        partial = np.cumprod(without_i, axis=-1)
        d_partial = cumprod_tangent(t_without_i, without_i, partial, -1)
        grad[..., i] = np.sum(gm[..., i:] * d_partial[..., i:], axis=-1)
    return astype_grad(np.reshape(np.moveaxis(grad, -1, ax), np.shape(a)), a)


@tangent(cumprod_grad)
def _(out, g, a, ans, axis=None):
    d[out] = cumprod_grad(d[g], a, ans, axis)
    d[out] = cumprod_grad_tangent(g, a, ans, d[a], axis)


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


@adjoint_method("cumprod")
@adjoint(np.cumprod)
def _(ans, a, axis=None, dtype=None, out=None):
    d[a] = cumprod_grad(d[ans], a, ans, axis)


@tangent_method("cumprod")
@tangent(np.cumprod)
def _(ans, a, axis=None, dtype=None, out=None):
    d[ans] = cumprod_tangent(d[a], a, ans, axis)


# ----- peak to peak ------------------------------------------------------------------------


@adjoint(np.ptp)
def _(ans, a, axis=None, out=None, keepdims=False):
    d[a] = extremum_grad(d[ans], a, np.max(a, axis, keepdims=keepdims), axis, keepdims)
    d[a] = -extremum_grad(d[ans], a, np.min(a, axis, keepdims=keepdims), axis, keepdims)


@tangent(np.ptp)
def _(ans, a, axis=None, out=None, keepdims=False):
    d[ans] = extremum_tangent(d[a], a, np.max(a, axis, keepdims=keepdims), axis, keepdims)
    d[ans] = -extremum_tangent(d[a], a, np.min(a, axis, keepdims=keepdims), axis, keepdims)


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
    x = np.asarray(a)
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
    plan = quantile_plan(a, q, axis, method, skip_nan)
    return from_sorted(spread_to_sorted(quantiles_last(g, plan, q), plan), a, plan)


@zero_in_zero_out("g", "t")
def quantile_grad_q_tangent(g, a, q, t, axis=None, method="linear", skip_nan=False):
    """Tangent of ``quantile_grad`` from ``q``: linear interpolation moves weight from the lower
    entry read to the higher one at ``count - 1`` per unit of ``q``; the other methods' weights
    are piecewise constant."""
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
    flat = np.reshape(np.transpose(np.asarray(a), plan["order"]), plan["kept"] + [-1])
    ordered = np.take_along_axis(flat, plan["sort"], axis=-1)
    gap = np.take_along_axis(ordered, plan["high"], axis=-1) - \
        np.take_along_axis(ordered, plan["low"], axis=-1)
    return gap * (plan["count"] - 1)


def quantile_q_grad(g, a, q, axis=None, method="linear", skip_nan=False, scale=1.0):
    """Gradient of a quantile for ``q`` (``scale``: 0.01 for a percentile)."""
    plan = quantile_plan(a, q, axis, method, skip_nan)
    slope = quantile_q_slope(a, q, axis, method, skip_nan)
    per_q = np.sum(quantiles_last(g, plan, q) * slope,
                   axis=tuple(range(len(plan["kept"]))))
    return astype_grad(np.reshape(per_q * scale, np.shape(q)), q)


def quantile_tangent(t, tq, a, q, out, axis=None, method="linear", skip_nan=False, scale=1.0):
    """Tangent of ``np.quantile(a, q, ...)`` from ``a`` (``t``) and ``q`` (``tq``, each None if
    it has none): the weighted tangents of the entries read, plus ``d quantile / d q`` times
    ``q``'s tangent; ``q``'s axes first, then the kept ones (1s where ``keepdims``)."""
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


@adjoint(np.quantile)
def _(ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
      *, weights=None, interpolation=None):
    """The methods linear, lower, higher, nearest and midpoint; no weights."""
    how = quantile_method(method, weights, interpolation)
    d[a] = quantile_grad(d[ans], a, q, axis, how)
    d[q] = quantile_q_grad(d[ans], a, q, axis, how)


@tangent(np.quantile)
def _(ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
      *, weights=None, interpolation=None):
    how = quantile_method(method, weights, interpolation)
    d[ans] = quantile_tangent(d[a], None, a, q, ans, axis, how)
    d[ans] = quantile_tangent(None, d[q], a, q, ans, axis, how)


@adjoint(np.nanquantile)
def _(ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
      *, weights=None, interpolation=None):
    """The methods linear, lower, higher, nearest and midpoint; no weights."""
    how = quantile_method(method, weights, interpolation)
    d[a] = quantile_grad(d[ans], a, q, axis, how, True)
    d[q] = quantile_q_grad(d[ans], a, q, axis, how, True)


@tangent(np.nanquantile)
def _(ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
      *, weights=None, interpolation=None):
    how = quantile_method(method, weights, interpolation)
    d[ans] = quantile_tangent(d[a], None, a, q, ans, axis, how, True)
    d[ans] = quantile_tangent(None, d[q], a, q, ans, axis, how, True)


@adjoint(np.percentile)
def _(ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
      *, weights=None, interpolation=None):
    """The methods linear, lower, higher, nearest and midpoint; no weights."""
    how = quantile_method(method, weights, interpolation)
    d[a] = quantile_grad(d[ans], a, np.true_divide(q, 100), axis, how)
    d[q] = quantile_q_grad(d[ans], a, np.true_divide(q, 100), axis, how, False, 0.01)


@tangent(np.percentile)
def _(ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
      *, weights=None, interpolation=None):
    how = quantile_method(method, weights, interpolation)
    d[ans] = quantile_tangent(d[a], None, a, np.true_divide(q, 100), ans, axis, how)
    d[ans] = quantile_tangent(None, d[q], a, np.true_divide(q, 100), ans, axis, how, False, 0.01)


@adjoint(np.nanpercentile)
def _(ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
      *, weights=None, interpolation=None):
    """The methods linear, lower, higher, nearest and midpoint; no weights."""
    how = quantile_method(method, weights, interpolation)
    d[a] = quantile_grad(d[ans], a, np.true_divide(q, 100), axis, how, True)
    d[q] = quantile_q_grad(d[ans], a, np.true_divide(q, 100), axis, how, True, 0.01)


@tangent(np.nanpercentile)
def _(ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
      *, weights=None, interpolation=None):
    how = quantile_method(method, weights, interpolation)
    d[ans] = quantile_tangent(d[a], None, a, np.true_divide(q, 100), ans, axis, how, True)
    d[ans] = quantile_tangent(None, d[q], a, np.true_divide(q, 100), ans, axis, how, True, 0.01)


@adjoint(np.median)
def _(ans, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    d[a] = quantile_grad(d[ans], a, 0.5, axis)


@tangent(np.median)
def _(ans, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    d[ans] = quantile_tangent(d[a], None, a, 0.5, ans, axis)


@adjoint(np.nanmedian)
def _(ans, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    d[a] = quantile_grad(d[ans], a, 0.5, axis, "linear", True)


@tangent(np.nanmedian)
def _(ans, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    d[ans] = quantile_tangent(d[a], None, a, 0.5, ans, axis, "linear", True)


# ----- trapezoidal rule ----------------------------------------------------------------------

TRAPEZOID = getattr(np, "trapezoid", None) or np.trapz  # np.trapz before NumPy 2.0
TRAPEZOIDS = tuple(fn for fn in (getattr(np, "trapezoid", None), getattr(np, "trapz", None))
                   if fn is not None)


def trapezoid_of(y, x=None, dx=1.0, axis=-1):
    """``np.trapezoid`` (``np.trapz`` before NumPy 2.0)."""
    return TRAPEZOID(y, x, dx, axis)



def trapezoid_weights(y, x=None, dx=1.0, axis=-1):
    """How much each of ``y``'s entries along ``axis`` counts in ``np.trapezoid(y, x, dx,
    axis)``: half the steps on either side (``dx`` each without ``x``), along the last axis of an
    array that broadcasts against ``y`` moved so."""
    n = np.shape(y)[axis]
    if x is None:
        steps = np.full(max(n - 1, 0), 1.0) * dx
    else:
        steps = np.diff(np.moveaxis(np.asarray(x), axis, -1) if np.ndim(x) > 1 else x, axis=-1)
    pad_before = [(0, 0)] * (np.ndim(steps) - 1) + [(1, 0)]
    pad_after = [(0, 0)] * (np.ndim(steps) - 1) + [(0, 1)]
    return 0.5 * (np.pad(steps, pad_before) + np.pad(steps, pad_after))


def trapezoid_grads(g, y, x=None, dx=1.0, axis=-1):
    """Gradients of ``np.trapezoid(y, x, dx, axis) = sum_i (x_i+1 - x_i) (y_i + y_i+1) / 2``
    for ``y`` (``trapezoid_weights``), ``x`` (``m_j-1 - m_j`` for the mean heights ``m``) and
    ``dx`` (the sum of ``m``)."""
    g_last = np.expand_dims(g, -1)
    moved = np.moveaxis(np.asarray(y), axis, -1)
    g_y = np.moveaxis(unbroadcast(g_last * trapezoid_weights(y, x, dx, axis), moved), -1, axis)
    heights = 0.5 * (moved[..., 1:] + moved[..., :-1])
    g_x = 0
    g_dx = 0
    if x is None:
        g_dx = unbroadcast(g * np.sum(heights, axis=-1), dx)
    else:
        ends = [(0, 0)] * (np.ndim(heights) - 1)
        change = g_last * (np.pad(heights, ends + [(1, 0)]) - np.pad(heights, ends + [(0, 1)]))
        if np.ndim(x) == 1:
            g_x = np.sum(np.reshape(change, (-1, np.shape(change)[-1])), axis=0)
        else:
            x_moved = np.moveaxis(np.asarray(x), axis, -1)
            g_x = np.moveaxis(unbroadcast(change, x_moved), -1, axis)
        g_x = astype_grad(g_x, x)
    return astype_grad(g_y, y), g_x, g_dx


def trapezoid_dx_tangent(t, y, x=None, axis=-1):
    """Tangent of ``np.trapezoid`` from ``dx``: the same rule with steps ``t``, but nothing when
    ``x`` is given (``dx`` is then not read)."""
    if x is not None:
        return 0
    return trapezoid_of(y, None, t, axis)




@adjoint(*TRAPEZOIDS)
def _(out, y, x=None, dx=1.0, axis=-1):
    grads = trapezoid_grads(d[out], y, x, dx, axis)
    d[y] = grads[0]
    d[x] = grads[1]
    d[dx] = grads[2]


@tangent(*TRAPEZOIDS)
def _(out, y, x=None, dx=1.0, axis=-1):
    d[out] = trapezoid_of(d[y], x, dx, axis)
    d[out] = trapezoid_of(y, d[x], dx, axis)
    d[out] = trapezoid_dx_tangent(d[dx], y, x, axis)


# ----- the other nan- reductions: NaNs left out, as a mask or a neutral value -----------------


def without_nan(a, fill=0.0):
    """``a`` with its NaNs replaced by ``fill`` (the value that leaves the reduction as it is)."""
    return np.where(np.isnan(a), fill, a)


def not_nan(a, where=True):
    """Where ``a`` holds a number (and ``where`` selects it)."""
    return np.logical_and(where, np.logical_not(np.isnan(a)))


nondifferentiable(not_nan)


@adjoint(np.nanprod)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=1, where=True):
    d[a] = prod_grad(d[ans], without_nan(a, 1.0), axis, keepdims, initial, not_nan(a, where))
    d[initial] = np.sum(d[ans] * np.nanprod(a, axis, dtype, None, keepdims, 1, where))


@tangent(np.nanprod)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=1, where=True):
    d[ans] = prod_tangent(without_nan(d[a]), without_nan(a, 1.0), ans, axis, keepdims, initial,
                          not_nan(a, where))
    d[ans] = d[initial] * np.nanprod(a, axis, dtype, None, keepdims, 1, where)


@adjoint(np.nanvar)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
      mean=None, correction=None):
    d[a] = var_grad(d[ans], without_nan(a), axis, ddof, keepdims, correction, not_nan(a, where),
                    mean)


@tangent(np.nanvar)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
      mean=None, correction=None):
    d[ans] = var_tangent(without_nan(d[a]), without_nan(a), ans, axis, ddof, keepdims,
                         correction, not_nan(a, where), mean)
    d[ans] = var_mean_tangent(d[mean], without_nan(a), ans, axis, ddof, keepdims, correction,
                              not_nan(a, where), mean)


@adjoint(np.nanstd)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
      mean=None, correction=None):
    d[a] = std_grad(d[ans], without_nan(a), ans, axis, ddof, keepdims, correction,
                    not_nan(a, where), mean)


@tangent(np.nanstd)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
      mean=None, correction=None):
    d[ans] = std_tangent(without_nan(d[a]), without_nan(a), ans, axis, ddof, keepdims,
                         correction, not_nan(a, where), mean)
    d[ans] = std_tangent(d[mean], without_nan(a), ans, axis, ddof, keepdims, correction,
                         not_nan(a, where), mean, "mean")


@adjoint(np.nancumsum)
def _(ans, a, axis=None, dtype=None, out=None):
    d[a] = cumsum_grad(d[ans], a, axis) * not_nan(a)


@tangent(np.nancumsum)
def _(ans, a, axis=None, dtype=None, out=None):
    d[ans] = np.cumsum(without_nan(d[a]) * not_nan(a), axis, dtype)


@adjoint(np.nancumprod)
def _(ans, a, axis=None, dtype=None, out=None):
    d[a] = cumprod_grad(d[ans], without_nan(a, 1.0), ans, axis) * not_nan(a)


@tangent(np.nancumprod)
def _(ans, a, axis=None, dtype=None, out=None):
    d[ans] = cumprod_tangent(without_nan(d[a]) * not_nan(a), without_nan(a, 1.0), ans, axis)


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


def cov_aweights_grad(g, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
                      aweights=None):
    """Gradient of ``np.cov`` for ``aweights``: observation ``k`` adds ``fw_k xc_k xc_k^T / f``
    (the centring's change adds nothing: the weighted deviations sum to 0), and ``C`` scales with
    ``1 / f``."""
    if aweights is None:
        return 0
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


@adjoint(np.cov)
def _(out, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
      dtype=None):
    """Real values; integer fweights (constants)."""
    grads = cov_grads(d[out], m, y, rowvar, bias, ddof, fweights, aweights)
    d[m] = grads[0]
    d[y] = grads[1]
    d[aweights] = cov_aweights_grad(d[out], m, y, rowvar, bias, ddof, fweights, aweights)


def cov_aweights_tangent(t, m, y, out, rowvar=True, bias=False, ddof=None, fweights=None,
                         aweights=None):
    """Tangent of ``np.cov`` from ``aweights`` (``cov_aweights_grad``)."""
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


def cov_tangent(t, m, y, out, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
                wrt=0):
    """Tangent of ``np.cov`` from ``m`` (``wrt`` 0) or ``y`` (1): ``(dXc W Xc^T + Xc W dXc^T) /
    f`` for the moved rows (zeros for the other's)."""
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


@tangent(np.cov)
def _(out, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
      dtype=None):
    d[out] = cov_tangent(d[m], m, y, out, rowvar, bias, ddof, fweights, aweights, 0)
    d[out] = cov_tangent(d[y], m, y, out, rowvar, bias, ddof, fweights, aweights, 1)
    d[out] = cov_aweights_tangent(d[aweights], m, y, out, rowvar, bias, ddof, fweights, aweights)


def corrcoef_cov_grad(g, x, y=None, rowvar=True):
    """The gradient of ``R = C / sqrt(c c^T)`` (``c`` the variances) for the covariance ``C``:
    ``G / sqrt(c c^T)``, less on the diagonal ``sum_j (G o R)_kj / c_k`` (both factors of
    ``c_k``)."""
    c = np.cov(x, y, rowvar)
    variances = np.diagonal(np.atleast_2d(c))
    r = np.atleast_2d(c) / np.sqrt(np.outer(variances, variances))
    g_matrix = np.reshape(g, np.shape(r))
    weighted = g_matrix * r
    diagonal = (np.sum(weighted, axis=1) + np.sum(weighted, axis=0)) / (2.0 * variances)
    return g_matrix / np.sqrt(np.outer(variances, variances)) - np.diag(diagonal)


@adjoint(np.corrcoef)
def _(out, x, y=None, rowvar=True, *, dtype=None):
    """Real values with nonzero variances."""
    grads = cov_grads(corrcoef_cov_grad(d[out], x, y, rowvar), x, y, rowvar)
    d[x] = grads[0]
    d[y] = grads[1]


def corrcoef_tangent(t, x, y, out, rowvar=True, wrt=0):
    """Tangent of ``np.corrcoef``: ``dC / sqrt(c c^T) - R o (dc_i / c_i + dc_j / c_j) / 2``."""
    c = np.atleast_2d(np.cov(x, y, rowvar))
    dc = np.atleast_2d(cov_tangent(t, x, y, np.cov(x, y, rowvar), rowvar, wrt=wrt))
    variances = np.diagonal(c)
    changes = np.diagonal(dc) / variances
    r = c / np.sqrt(np.outer(variances, variances))
    change = dc / np.sqrt(np.outer(variances, variances)) - \
        0.5 * r * (changes[:, None] + changes[None, :])
    return as_dtype_of(np.reshape(change, np.shape(out)), out)


@tangent(np.corrcoef)
def _(out, x, y=None, rowvar=True, *, dtype=None):
    d[out] = corrcoef_tangent(d[x], x, y, out, rowvar, 0)
    d[out] = corrcoef_tangent(d[y], x, y, out, rowvar, 1)


# ----- ediff1d, cumulative_sum, cumulative_prod ------------------------------------------------


def ediff1d_grads(g, ary, to_end=None, to_begin=None):
    """Gradients of ``np.ediff1d(ary, to_end, to_begin)``: ``g`` split into the leading values,
    the differences (whose gradient for ``ary`` is ``-g_i`` at i and ``g_i`` at i+1) and the
    trailing values."""
    begin = 0 if to_begin is None else np.size(to_begin)
    count = max(np.size(ary) - 1, 0)
    g = np.ravel(g)
    g_diff = g[begin:begin + count]
    grad = np.pad(g_diff, (1, 0)) - np.pad(g_diff, (0, 1))
    g_begin = 0 if to_begin is None else astype_grad(np.reshape(g[:begin], np.shape(to_begin)),
                                                     to_begin)
    g_end = 0 if to_end is None else astype_grad(np.reshape(g[begin + count:], np.shape(to_end)),
                                                 to_end)
    return astype_grad(np.reshape(grad, np.shape(ary)), ary), g_end, g_begin


@adjoint(np.ediff1d)
def _(out, ary, to_end=None, to_begin=None):
    grads = ediff1d_grads(d[out], ary, to_end, to_begin)
    d[ary] = grads[0]
    d[to_end] = grads[1]
    d[to_begin] = grads[2]


def ediff1d_tangent(t, ary, out, to_end=None, to_begin=None, wrt=0):
    """Tangent of ``np.ediff1d`` from ``ary`` (``wrt`` 0), ``to_end`` (1) or ``to_begin`` (2):
    the same layout with zeros for the others."""
    parts = [np.zeros(0) if to_begin is None else np.zeros(np.size(to_begin)),
             np.zeros(max(np.size(ary) - 1, 0)),
             np.zeros(0) if to_end is None else np.zeros(np.size(to_end))]
    place = {0: 1, 1: 2, 2: 0}[wrt]
    parts[place] = np.ediff1d(np.broadcast_to(t, np.shape(ary))) if wrt == 0 else np.ravel(t)
    return as_dtype_of(np.concatenate(parts), out)


@tangent(np.ediff1d)
def _(out, ary, to_end=None, to_begin=None):
    d[out] = ediff1d_tangent(d[ary], ary, out, to_end, to_begin, 0)
    d[out] = ediff1d_tangent(d[to_end], ary, out, to_end, to_begin, 1)
    d[out] = ediff1d_tangent(d[to_begin], ary, out, to_end, to_begin, 2)


def without_initial(g, ans, axis=None, include_initial=False):
    """A gradient of ``np.cumulative_sum``/``cumulative_prod`` without the leading initial
    value's entry (it is a constant)."""
    if not include_initial:
        return g
    ax = 0 if axis is None else axis
    return np.take(g, np.arange(1, np.shape(ans)[ax]), axis=ax)


if hasattr(np, "cumulative_sum"):  # NumPy >= 2.1

    @adjoint(np.cumulative_sum)
    def _(ans, x, *, axis=None, dtype=None, out=None, include_initial=False):
        d[x] = cumsum_grad(without_initial(d[ans], ans, axis, include_initial), x, axis)

    @tangent(np.cumulative_sum)
    def _(ans, x, *, axis=None, dtype=None, out=None, include_initial=False):
        d[ans] = as_dtype_of(np.cumulative_sum(d[x], axis=axis, include_initial=include_initial),
                             ans)

    @adjoint(np.cumulative_prod)
    def _(ans, x, *, axis=None, dtype=None, out=None, include_initial=False):
        d[x] = cumprod_grad(without_initial(d[ans], ans, axis, include_initial), x,
                            np.cumprod(x, axis), axis)

    @tangent(np.cumulative_prod)
    def _(ans, x, *, axis=None, dtype=None, out=None, include_initial=False):
        d[ans] = as_dtype_of(initial_zero(cumprod_tangent(d[x], x, np.cumprod(x, axis), axis),
                                          axis, include_initial), ans)


def initial_zero(t, axis=None, include_initial=False):
    """The tangent of a cumulative product with a leading 0 for its initial value."""
    if not include_initial:
        return t
    ax = 0 if axis is None else axis
    shape = list(np.shape(t))
    shape[ax] = 1
    return np.concatenate([np.zeros(shape, np.result_type(t)), t], axis=ax)


# ----- gradient (finite differences) -----------------------------------------------------------
# np.gradient(f, *varargs, axis, edge_order) is linear in f: along each axis a banded matrix (the
# differences of unit spacing divided by a scalar spacing, or NumPy's weights for coordinates)
# applied to f, one result per axis (a tuple when there are several).


def gradient_axes(f, axis=None):
    """The axes ``np.gradient(f, axis=axis)`` differentiates along, non-negative."""
    if axis is None:
        return tuple(range(np.ndim(f)))
    return tuple(a % np.ndim(f) for a in ((axis,) if np.ndim(axis) == 0 else axis))


def gradient_stencil(n, edge_order=1):
    """``np.gradient`` of unit spacing along an axis of length ``n``, as an ``n x n`` matrix."""
    return np.gradient(np.eye(n), axis=0, edge_order=edge_order)


nondifferentiable(gradient_axes, gradient_stencil)


def gradient_spacing(varargs, k):
    """The spacing of the ``k``-th differentiated axis: 1 without one, the one given for all, or
    its own."""
    if len(varargs) == 0:
        return 1.0
    if len(varargs) == 1:
        return varargs[0]
    return varargs[k]


def gradient_operator(n, h, edge_order=1):
    """The matrix ``np.gradient`` applies along an axis of length ``n`` with spacing ``h`` (a
    number, or the coordinates of the samples)."""
    if np.ndim(h) == 0:
        return gradient_stencil(n, edge_order) / h
    return np.gradient(np.eye(n), h, axis=0, edge_order=edge_order)


@zero_in_zero_out("g")
def gradient_grad_f(g, f, varargs, axis=None, edge_order=1):
    """Gradient of ``np.gradient(f, *varargs)`` for ``f``: along each axis the transpose of its
    difference matrix applied to that result's gradient (0 for the results without one)."""
    axes = gradient_axes(f, axis)
    gs = [g] if len(axes) == 1 else g
    grad = 0
    for k in range(len(axes)):
        if not is_zero(gs[k]):
            op = gradient_operator(np.shape(f)[axes[k]], gradient_spacing(varargs, k), edge_order)
            grad = grad + np.moveaxis(np.tensordot(op, gs[k], axes=([0], [axes[k]])), 0, axes[k])
    return astype_grad(grad, f)


def gradient_grad_spacing(g, f, varargs, out, axis=None, edge_order=1):
    """Gradients of ``np.gradient(f, *varargs)`` for scalar spacings ``h``: each result is
    ``f``'s unit-spacing differences over ``h``, so ``h`` gets ``-sum(g * result) / h``."""
    axes = gradient_axes(f, axis)
    gs = [g] if len(axes) == 1 else g
    outs = [out] if len(axes) == 1 else out
    grads = [0 for _ in varargs]
    for k in range(len(axes)):
        if len(varargs) > 0 and not is_zero(gs[k]):
            i = 0 if len(varargs) == 1 else k
            if np.ndim(varargs[i]) != 0:
                gradient_coordinates_refused()
            grads[i] = grads[i] - np.sum(gs[k] * outs[k]) / varargs[i]
    return tuple(astype_grad(grads[i], varargs[i]) for i in range(len(varargs)))


def gradient_coordinates_refused():
    raise NotImplementedError(
        "np.gradient(f, x) with coordinate arrays as the spacing has no gradient or tangent "
        "with respect to the coordinates; pass the coordinates as constants (outside the "
        "differentiated arguments) or use scalar spacings")


nondifferentiable(gradient_coordinates_refused)


@adjoint(np.gradient)
def _(out, f, *varargs, axis=None, edge_order=1):
    """Linear in ``f``; a scalar spacing ``h`` gets ``-sum(g * out) / h``; coordinate arrays as
    the spacing have no gradient (an error when one is needed)."""
    d[f] = gradient_grad_f(d[out], f, varargs, axis, edge_order)
    d[varargs] = gradient_grad_spacing(d[out], f, varargs, out, axis, edge_order)


def gradient_tangent_spacing(ts, f, varargs, out, axis=None, edge_order=1):
    """Tangent of ``np.gradient(f, *varargs)`` from scalar spacings: ``-out * dh / h``."""
    axes = gradient_axes(f, axis)
    outs = [out] if len(axes) == 1 else out
    parts = []
    for k in range(len(axes)):
        i = 0 if len(varargs) == 1 else k
        if len(varargs) == 0 or is_zero(ts[i]):
            parts.append(0)
        else:
            if np.ndim(varargs[i]) != 0:
                gradient_coordinates_refused()
            parts.append(as_dtype_of(-outs[k] * ts[i] / varargs[i], outs[k]))
    return parts[0] if len(axes) == 1 else TangentTuple(parts)


def gradient_tangent_f(t, f, varargs, out, axis=None, edge_order=1):
    """Tangent of ``np.gradient(f, *varargs)`` from ``f``: the same differences of ``t``."""
    full = np.broadcast_to(t, np.shape(f))
    axes = gradient_axes(f, axis)
    outs = [out] if len(axes) == 1 else out
    parts = []
    for k in range(len(axes)):  # axis by axis: no *varargs, so it differentiates again
        change = np.gradient(full, gradient_spacing(varargs, k), axis=axes[k],
                             edge_order=edge_order)
        parts.append(as_dtype_of(change, outs[k]))
    return parts[0] if len(axes) == 1 else TangentTuple(parts)


@tangent(np.gradient)
def _(out, f, *varargs, axis=None, edge_order=1):
    d[out] = gradient_tangent_f(d[f], f, varargs, out, axis, edge_order)
    d[out] = gradient_tangent_spacing(d[varargs], f, varargs, out, axis, edge_order)
