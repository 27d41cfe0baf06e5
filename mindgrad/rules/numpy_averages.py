"""Rules for NumPy's weighted average, ``np.average``, both directions: the gradients of the
array and of its weights, with their tangents (forward mode over reverse mode) beside them. The
unweighted sums and means are ``numpy_reductions.py``'s.
"""

import numpy as np

from mindgrad.rules import d, tangent, transpose, transpose_of
from mindgrad.rules.helpers import astype_grad, reduced_axes
from mindgrad.runtime import is_zero, unbroadcast, unreduce, zero, zero_in, zero_in_zero_out
from mindgrad.runtime.arrays import as_array
from mindgrad.runtime.tangents import TangentTuple, as_dtype_of


def average_weights(a, axis, weights):
    """The weights of ``np.average`` broadcast against ``a`` (1-D weights lie along ``axis``)."""
    if weights is None:
        return np.ones_like(a, dtype=np.result_type(a, 1.0))
    weights = as_array(weights)
    if weights.shape != np.shape(a) and weights.ndim == 1 and np.ndim(axis) == 0:
        shape = [1] * np.ndim(a)
        shape[int(axis) % np.ndim(a)] = weights.size
        weights = weights.reshape(shape)
    return np.broadcast_to(weights, np.shape(a))


@zero_in_zero_out("g")
def average_grad_a(g, a, axis, weights, returned=False, keepdims=False):
    """Gradient of ``np.average(a, axis, weights)`` for ``a``: the weights over their sum."""
    if zero_in(g):
        return zero
    g = g[0] if returned else g
    if is_zero(g):
        return zero
    w = average_weights(a, axis, weights)
    total = np.sum(w, axis=reduced_axes(axis, np.ndim(a)), keepdims=True)
    return astype_grad(unreduce(g, a, axis, keepdims) * (w / total), a)


@zero_in_zero_out("g", "t")
def average_grad_a_tangent(g, a, axis, weights, t, returned=False, keepdims=False):
    """Tangent of ``average_grad_a`` (``g w / sum(w)``) from ``weights``."""
    if zero_in(g, t):
        return zero
    if is_zero(t):
        return zero
    g = g[0] if returned else g
    if is_zero(g):
        return zero
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


@zero_in_zero_out("g")
def average_grad_weights(g, a, axis, weights, returned=False, keepdims=False):
    """Gradient of ``np.average`` (and of the returned sum of weights) for ``weights``."""
    if zero_in(g):
        return zero
    if weights is None:
        return zero
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


@zero_in_zero_out("g", "t")
def average_grad_weights_tangent(g, a, axis, weights, t, wrt, returned=False, keepdims=False):
    """Tangent of ``average_grad_weights`` from ``a`` (wrt 0) or ``weights`` (1): the part
    ``g_avg (a - mean) / total`` changes with both."""
    if zero_in(g, t):
        return zero
    if is_zero(t):
        return zero
    if weights is None:
        return zero
    g_avg = g[0] if returned else g
    if is_zero(g_avg):
        return zero
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


@zero_in_zero_out("t")
def average_tangent_a(t, a, axis, weights, returned, keepdims, out):
    """Tangent of ``np.average(a, axis, weights)`` from ``a``: the weighted average of ``t``
    (the returned sum of weights does not depend on ``a``)."""
    if is_zero(t):
        return zero
    w = average_weights(a, axis, weights)
    axes = reduced_axes(axis, np.ndim(a))
    total = np.sum(w, axis=axes, keepdims=keepdims)
    t_avg = np.sum(w * t, axis=axes, keepdims=keepdims) / total
    if returned:
        return TangentTuple((as_dtype_of(t_avg, out[0]), as_dtype_of(0 * out[1], out[1])))
    return as_dtype_of(t_avg, out)


@zero_in_zero_out("t")
def average_tangent_weights(t, a, axis, weights, returned, keepdims, out):
    """Tangent of ``np.average`` (and of the returned sum of weights) from ``weights``:
    ``sum(t (a - avg)) / sum(w)`` and ``sum(t)``."""
    if is_zero(t) or weights is None:
        return zero
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


# the tangent transposed in its tangent (@transpose reads it)
@transpose_of(average_tangent_a)
def _(ans, t, a, axis, weights, returned, keepdims, out):
    d[t] = average_grad_a(d[ans], a, axis, weights, returned, keepdims)


@transpose_of(average_tangent_weights)
def _(ans, t, a, axis, weights, returned, keepdims, out):
    d[t] = average_grad_weights(d[ans], a, axis, weights, returned, keepdims)


@transpose(np.average)
@tangent(np.average)
def _(out, a, axis=None, weights=None, returned=False, *, keepdims=False):
    d[out] = average_tangent_a(d[a], a, axis, weights, returned, keepdims, out)
    d[out] = average_tangent_weights(d[weights], a, axis, weights, returned, keepdims, out)
