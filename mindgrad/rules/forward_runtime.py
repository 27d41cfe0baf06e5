"""Tangent rules for the helpers that generated adjoint code calls, so that forward mode can run
over reverse-mode code (Hessian-vector products, forward-over-reverse).

Most helpers are linear in the incoming gradient ``g``: their tangent is the helper applied to
``d[g]``. Many are also linear in another argument (``matmul_grad_x(g, x, y) = g @ y.T``) and
get a second statement with that argument's tangent. Arguments read only for a shape, a dtype,
a mask or a permutation (piecewise constant) give no statement. The few helpers nonlinear in a
primal argument (``prod_grad``, ``det_grad``, ``norm_grad``, ``var_grad``, ...) have
``*_tangent`` helpers with the derivative.

``seed``, ``zeros_buffer``, ``reversed_items`` and ``bprop_grads`` are declared constants by
``runtime_rules.py``; ``restore_item`` mutates in place and has no value to differentiate.
"""

import numpy as np

from mindgrad.rules import d, nondifferentiable, tangent
from mindgrad.rules import methods as me
from mindgrad.rules import nondiff as nd
from mindgrad.rules import numpy_elementwise as ne
from mindgrad.rules import numpy_reductions as nr
from mindgrad.rules import numpy_shape as ns
from mindgrad.rules.forward_numpy_reductions import cumprod_tangent
from mindgrad.runtime import (
    is_zero,
    unbroadcast,
    unreduce,
)
from mindgrad.runtime.tangents import (
    summable,
)

# ----- helpers of builtins_math.py and methods.py: linear in the gradient ------------------


@tangent(me.dict_items_grad)
def _(out, g, mapping):
    d[out] = me.dict_items_grad(d[g], mapping)


@tangent(me.dict_values_grad)
def _(out, g, mapping):
    d[out] = me.dict_values_grad(d[g], mapping)


@tangent(me.item_grad)
def _(out, g, a, args):
    d[out] = me.item_grad(d[g], a, args)


nondifferentiable(me.method_transpose_axes, ns.hsplit_axis)

# ----- helpers of numpy_elementwise.py -----------------------------------------------------


@tangent(nd.draw_grad)
def _(out, g, a, drawn):
    d[out] = nd.draw_grad(d[g], a, drawn)


@tangent(nd.draw_tangent)
def _(out, t, a, drawn):
    d[out] = nd.draw_tangent(d[t], a, drawn)


@tangent(me.tolist_grad)
def _(out, g, a):
    d[out] = me.tolist_grad(d[g], a)


# ----- helpers of numpy_reductions.py ------------------------------------------------------


@tangent(nr.reduce_sum_grad)
def _(out, g, a, axis=None, keepdims=False, where=True):
    d[out] = nr.reduce_sum_grad(d[g], a, axis, keepdims, where)


@tangent(nr.reduce_mean_grad)
def _(out, g, a, axis=None, keepdims=False, where=True):
    d[out] = nr.reduce_mean_grad(d[g], a, axis, keepdims, where)


def average_grad_a_tangent(g, a, axis, weights, t, returned=False, keepdims=False):
    """Tangent of ``average_grad_a`` (``g w / sum(w)``) from ``weights``."""
    if is_zero(t):
        return 0
    g = g[0] if returned else g
    if is_zero(g):
        return 0
    w = nr.average_weights(a, axis, weights)
    tw = nr.average_weights(a, axis, t)
    axes = nr.reduced_axes(axis, np.ndim(a))
    total = np.sum(w, axis=axes, keepdims=True)
    t_total = np.sum(tw, axis=axes, keepdims=True)
    return ne.astype_grad(unreduce(g, a, axis, keepdims) * (tw / total - w * t_total / total ** 2),
                          a)


@tangent(nr.average_grad_a)
def _(out, g, a, axis, weights, returned=False, keepdims=False):
    d[out] = nr.average_grad_a(d[g], a, axis, weights, returned, keepdims)
    d[out] = average_grad_a_tangent(g, a, axis, weights, d[weights], returned, keepdims)


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
    w = nr.average_weights(a, axis, weights)
    axes = nr.reduced_axes(axis, np.ndim(a))
    total = np.sum(w, axis=axes, keepdims=True)
    mean = np.sum(w * a, axis=axes, keepdims=True) / total
    if wrt == 0:
        t_mean = np.sum(w * t, axis=axes, keepdims=True) / total
        change = (t - t_mean) / total
    else:
        tw = nr.average_weights(a, axis, t)
        t_total = np.sum(tw, axis=axes, keepdims=True)
        t_mean = np.sum(tw * (a - mean), axis=axes, keepdims=True) / total
        change = -t_mean / total - (a - mean) * t_total / total ** 2
    grad = unreduce(g_avg, a, axis, keepdims) * change
    if np.ndim(weights) == 1 and np.shape(weights) != np.shape(a):
        grad = np.sum(grad, axis=tuple(i for i in range(np.ndim(a)) if i not in axes))
    return ne.astype_grad(unbroadcast(grad, weights), weights)


@tangent(nr.average_grad_weights)
def _(out, g, a, axis, weights, returned=False, keepdims=False):
    d[out] = nr.average_grad_weights(d[g], a, axis, weights, returned, keepdims)
    d[out] = average_grad_weights_tangent(g, a, axis, weights, d[a], 0, returned, keepdims)
    d[out] = average_grad_weights_tangent(g, a, axis, weights, d[weights], 1, returned,
                                          keepdims)


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
    axes = nr.reduced_axes(axis, x.ndim)
    kept = x.ndim - len(axes)
    moved_x = np.moveaxis(x, axes, range(kept, x.ndim))
    moved_t = np.moveaxis(t, axes, range(kept, x.ndim))
    flat_x = moved_x.reshape(moved_x.shape[:kept] + (-1,))
    flat_t = moved_t.reshape(moved_t.shape[:kept] + (-1,))
    others = exclusive_products_tangent(flat_x, flat_t).reshape(moved_x.shape)
    others = np.moveaxis(others, range(kept, x.ndim), axes)
    grad = nr.masked_grad(unreduce(g, x, axis, keepdims) * others * initial, where)
    return ne.astype_grad(grad, a)


@tangent(nr.prod_grad)
def _(out, g, a, axis=None, keepdims=False, initial=1, where=True):
    d[out] = nr.prod_grad(d[g], a, axis, keepdims, initial, where)
    d[out] = prod_grad_tangent(g, a, d[a], axis, keepdims, initial, where)
    d[out] = nr.prod_grad(g, a, axis, keepdims, d[initial], where)


@tangent(nr.extremum_grad)
def _(out, g, a, ans, axis=None, keepdims=False, where=True):
    d[out] = nr.extremum_grad(d[g], a, ans, axis, keepdims, where)


def var_grad_tangent(g, a, t, wrt, axis=None, ddof=0, keepdims=False, correction=None,
                     where=True, mean=None):
    """Tangent of ``var_grad`` (``g 2 (a - mean) / (N - ddof)``) from ``a`` (wrt 0; the computed
    mean moves with it) or from a given ``mean`` (wrt 1)."""
    if is_zero(t):
        return 0
    ddof = ddof if correction is None else correction
    x = np.asarray(a)
    axes = nr.reduced_axes(axis, x.ndim)
    if wrt == 1:
        change = -t
    elif mean is None:
        change = t - np.mean(np.broadcast_to(t, x.shape), axis=axes, keepdims=True, where=where)
    else:
        change = t
    count = nr.reduced_count(x, axis, where)
    grad = unreduce(g, x, axis, keepdims) * change * (2.0 / (count - ddof))
    return ne.astype_grad(nr.masked_grad(grad, where), a)


@tangent(nr.var_grad)
def _(out, g, a, axis=None, ddof=0, keepdims=False, correction=None, where=True, mean=None):
    d[out] = nr.var_grad(d[g], a, axis, ddof, keepdims, correction, where, mean)
    d[out] = var_grad_tangent(g, a, d[a], 0, axis, ddof, keepdims, correction, where, mean)
    d[out] = var_grad_tangent(g, a, d[mean], 1, axis, ddof, keepdims, correction, where, mean)


def std_grad_tangent(g, a, ans, t, wrt, axis=None, ddof=0, keepdims=False, correction=None,
                     where=True, mean=None):
    """Tangent of ``std_grad`` (``var_grad(g / (2 ans), ...)``) from ``a`` (wrt 0), a given
    ``mean`` (1) or ``ans`` (2: ``-g t / (2 ans^2)`` through ``var_grad``, 0 where ans is 0)."""
    if is_zero(t):
        return 0
    if wrt == 2:
        scale = -g * 0.5 * t / np.where(ans == 0, np.inf, ans) ** 2
        return nr.var_grad(scale, a, axis, ddof, keepdims, correction, where, mean)
    scale = g * 0.5 / np.where(ans == 0, np.inf, ans)
    return var_grad_tangent(scale, a, t, wrt, axis, ddof, keepdims, correction, where, mean)


@tangent(nr.std_grad)
def _(out, g, a, ans, axis=None, ddof=0, keepdims=False, correction=None, where=True,
      mean=None):
    d[out] = nr.std_grad(d[g], a, ans, axis, ddof, keepdims, correction, where, mean)
    d[out] = std_grad_tangent(g, a, ans, d[a], 0, axis, ddof, keepdims, correction, where, mean)
    d[out] = std_grad_tangent(g, a, ans, d[mean], 1, axis, ddof, keepdims, correction, where,
                              mean)
    d[out] = std_grad_tangent(g, a, ans, d[ans], 2, axis, ddof, keepdims, correction, where,
                              mean)


@tangent(nr.cumsum_grad)
def _(out, g, a, axis=None):
    d[out] = nr.cumsum_grad(d[g], a, axis)


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
        return ne.astype_grad(np.reshape(grad, np.shape(a)), a)
    xm, tm, gm = np.moveaxis(x, ax, -1), np.moveaxis(t, ax, -1), np.moveaxis(g, ax, -1)
    grad = np.zeros(np.broadcast_shapes(xm.shape, gm.shape), dtype=np.result_type(xm, gm, tm))
    for i in range(xm.shape[-1]):
        without_i, t_without_i = xm.copy(), np.array(tm)
        without_i[..., i], t_without_i[..., i] = 1, 0
        partial = np.cumprod(without_i, axis=-1)
        d_partial = cumprod_tangent(t_without_i, without_i, partial, -1)
        grad[..., i] = np.sum(gm[..., i:] * d_partial[..., i:], axis=-1)
    return ne.astype_grad(np.reshape(np.moveaxis(grad, -1, ax), np.shape(a)), a)


@tangent(nr.cumprod_grad)
def _(out, g, a, ans, axis=None):
    d[out] = nr.cumprod_grad(d[g], a, ans, axis)
    d[out] = cumprod_grad_tangent(g, a, ans, d[a], axis)


# ----- helpers of numpy_shape.py: all linear in the gradient -------------------------------


@tangent(ns.atleast_grads)
def _(out, g, arys):
    d[out] = ns.atleast_grads(d[g], arys)


@tangent(ns.transpose_grad)
def _(out, g, axes=None):
    d[out] = ns.transpose_grad(d[g], axes)


@tangent(ns.concatenate_grad)
def _(out, g, arrays, axis=0):
    d[out] = ns.concatenate_grad(d[g], arrays, axis)


@tangent(ns.stack_grad)
def _(out, g, arrays, axis=0):
    d[out] = ns.stack_grad(d[g], arrays, axis)


@tangent(ns.hstack_grad)
def _(out, g, tup):
    d[out] = ns.hstack_grad(d[g], tup)


@tangent(ns.vstack_grad)
def _(out, g, tup):
    d[out] = ns.vstack_grad(d[g], tup)


@tangent(ns.dstack_grad)
def _(out, g, tup):
    d[out] = ns.dstack_grad(d[g], tup)


@tangent(ns.column_stack_grad)
def _(out, g, tup):
    d[out] = ns.column_stack_grad(d[g], tup)


@tangent(ns.split_grad)
def _(out, gs, pieces, ary, axis=0):
    d[out] = ns.split_grad(d[gs], pieces, ary, axis)


@tangent(ns.unstack_grad)
def _(out, gs, pieces, x, axis=0):
    d[out] = ns.unstack_grad(d[gs], pieces, x, axis)


@tangent(ns.tile_grad)
def _(out, g, A, reps):
    d[out] = ns.tile_grad(d[g], A, reps)


@tangent(ns.repeat_grad)
def _(out, g, a, repeats, axis=None):
    d[out] = ns.repeat_grad(d[g], a, repeats, axis)


@tangent(ns.sort_grad)
def _(out, g, a, axis=-1, kind=None):
    d[out] = ns.sort_grad(d[g], a, axis, kind)


@tangent(ns.diagonal_grad)
def _(out, g, a, offset=0, axis1=0, axis2=1):
    d[out] = ns.diagonal_grad(d[g], a, offset, axis1, axis2)


@tangent(ns.diag_grad)
def _(out, g, v, k=0):
    d[out] = ns.diag_grad(d[g], v, k)


@tangent(ns.trace_grad)
def _(out, g, a, offset=0, axis1=0, axis2=1):
    d[out] = ns.trace_grad(d[g], a, offset, axis1, axis2)


@tangent(ns.take_grad)
def _(out, g, a, indices, axis=None, mode="raise"):
    d[out] = ns.take_grad(d[g], a, indices, axis, mode)


@tangent(ns.take_along_axis_grad)
def _(out, g, arr, indices, axis=-1):
    d[out] = ns.take_along_axis_grad(d[g], arr, indices, axis)


@tangent(ns.pad_grad)
def _(out, g, array, pad_width, mode="constant", reflect_type="even"):
    d[out] = ns.pad_grad(d[g], array, pad_width, mode, reflect_type)


@tangent(ns.diff_grads)
def _(out, g, a, n=1, axis=-1, prepend=None, append=None):
    d[out] = summable(ns.diff_grads(d[g], a, n, axis, prepend, append))


@tangent(ns.meshgrid_grads)
def _(out, gs, xi, indexing="xy"):
    d[out] = summable(ns.meshgrid_grads(d[gs], xi, indexing))
