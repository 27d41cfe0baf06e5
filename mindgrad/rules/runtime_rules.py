"""Rules for the runtime helpers that generated code calls, in both directions, so generated
code can itself be differentiated: reverse over reverse (grad of grad) and forward over reverse
(Hessian-vector products). Helpers not listed here are differentiated from their source.

The helpers are linear in the gradient they move: the tangent applies the helper to the
gradient's tangent (``@linear`` on a helper's adjoint template, ``@linear_in`` on a helper of
this file, which also says a zero gradient gives a zero). Tangents that must add element by
element (tuples and lists of gradients: ``summable``), or fill a zero for an item, are written
by hand. ``seed``, ``zeros_buffer``, ``bprop_grads`` and ``zero_tangent`` are constants;
``restore_item`` mutates in place and has no value to differentiate.
"""

import numpy as np

from mindgrad import runtime
from mindgrad.rules import adjoint, d, diagonal, linear, linear_in, nondifferentiable, tangent
from mindgrad.rules import methods as me
from mindgrad.rules import nondiff as nd
from mindgrad.rules import numpy_grids as ngrids
from mindgrad.rules import numpy_shape as ns
from mindgrad.rules.builtins_math import dict_grad, dict_tangent, sequence_grad, sequence_tangent
from mindgrad.rules.helpers import astype_grad
from mindgrad.runtime import (
    add_at,
    buffers,
    concat_grads,
    is_any_zero,
    is_zero,
    item,
    pop_grad,
    real_grad,
    setitem_grad,
    takes_zero,
    times_slope,
    unbroadcast,
    zero,
    zero_in,
    zero_in_zero_out,
)
from mindgrad.runtime.arrays import as_array, is_dispatching, whole_matrices
from mindgrad.runtime.tangents import (
    TangentDict,
    TangentList,
    TangentTuple,
    broadcast_tangent,
    float_dtype,
    summable,
    zero_for,
    zero_tangent_of,
)

# gradient buffers, zero and dtype tests are constants; helpers
# read dtypes and shapes through getattr/hasattr
nondifferentiable(runtime.zeros_buffer, runtime.is_zero, runtime.is_any_zero,
                  runtime.inexact, getattr, hasattr, callable, id)


# the output sensitivity passes ``sens`` through (a gradient function with sens_param=True,
# differentiated again with respect to its sensitivity); ``out`` gives only its form, and
# activity follows ``sens`` alone (activity.value_is_active)
@adjoint(runtime.seed)
def _(ans, out, sens=None):
    d[sens] = runtime.seed_passed(d[ans], out, sens)


@tangent(runtime.seed)
def _(ans, out, sens=None):
    d[ans] = runtime.seed_passed(d[sens], out, sens, False)


# linear in g: passed the other way, it is its own transpose
@adjoint(runtime.seed_passed)
def _(ans, g, out, sens, to_sens=True):
    d[g] = runtime.seed_passed(d[ans], out, sens, not to_sens)


@tangent(runtime.seed_passed)
def _(ans, g, out, sens, to_sens=True):
    d[ans] = runtime.seed_passed(d[g], out, sens, to_sens)


# ----- broadcasting, accumulation, casts, copies -------------------------------------------


@linear_in("g", keeps_values=True)
def broadcast_back(g, like, x=None):
    """Adjoint of ``unbroadcast(like, x)``: ``g`` broadcast back to the shape of ``like``.
    Given ``x``: the real part of ``g`` where ``x`` is real (unbroadcast took the real part of
    ``like``; the transpose of the real part is the real part)."""
    if zero_in(g):
        return zero
    if isinstance(like, (list, tuple, dict)):
        return g  # a container's gradient: unbroadcast passed it through
    shape = np.shape(like)
    g = as_array(g if x is None else real_grad(g, x))
    if g.ndim < len(shape):
        g = g.reshape((1,) * (len(shape) - g.ndim) + g.shape)
    if g.ndim > len(shape) or any(n != m and n != 1 for n, m in zip(g.shape, shape)):
        g = unbroadcast(g, like)  # unbroadcast broadcast a smaller `like` up: sum back down
    return np.broadcast_to(g, shape)


@linear(runtime.unbroadcast)
@adjoint(runtime.unbroadcast)
def _(out, g, x):
    d[g] = broadcast_back(d[out], g, x)


# times_slope(g, s) is linear in each factor, and held at 0 where g is 0: so are its tangent
# and its gradients there (the branch np.where did not take, whatever moves around it)
@tangent(runtime.times_slope)
def _(out, g, slope, of=None):
    d[out] = times_slope(d[g], slope, g)
    d[out] = times_slope(g, d[slope], of)


@zero_in_zero_out("g", "g_out")
def slope_grad(g, g_out, of=None):
    """Gradient of ``times_slope(g, slope, of)`` for ``slope``: ``g_out g``, held at 0 where
    ``g`` or ``of`` is 0 (where the product was held) and where ``g_out`` is 0 (no gradient
    flows there: ``g`` may be the NaN tangent of a branch ``np.where`` did not take)."""
    if zero_in(g, g_out):
        return zero
    product = times_slope(g, g_out, of)
    if np.isfinite(product).all():
        return product
    held = np.where(np.broadcast_to(g_out == 0, np.shape(product)),
                    np.zeros((), np.result_type(product)), product)
    return held if product.__class__ is np.ndarray else held[()]


@adjoint(runtime.times_slope)
def _(out, g, slope, of=None):
    d[g] = unbroadcast(times_slope(d[out], slope, g), g)
    d[slope] = unbroadcast(slope_grad(g, d[out], of), slope)


@linear_in("g")
def add_operand_grad(g, a):
    """Gradient of one operand ``a`` of ``add(a, b)``: ``g`` in ``a``'s shape, or nothing when
    ``a`` is the symbolic zero (a constant, whose shape says nothing)."""
    if zero_in(g):
        return zero
    if is_zero(a):
        return zero
    return unbroadcast(g, a)


@adjoint(add_operand_grad)  # linear in g: its transpose broadcasts back
def _(out, g, a):
    d[g] = add_operand_transpose(d[out], g, a)


@linear_in("g_out")
def add_operand_transpose(g_out, g, a):
    """Adjoint of ``add_operand_grad(g, a)`` for ``g``."""
    if zero_in(g_out):
        return zero
    if is_zero(a):
        return zero
    return broadcast_back(g_out, g)


@linear(broadcast_tangent)
@adjoint(broadcast_tangent)  # linear in t; out gives the shape and dtype only
def _(ans, t, out):
    d[t] = unbroadcast(d[ans], t)


@adjoint(runtime.add)
def _(out, a, b):
    d[a] = add_operand_grad(d[out], a)
    d[b] = add_operand_grad(d[out], b)


@takes_zero(any_number=True)  # summable and broadcast_tangent take it
def runtime_add_tangent(t, out):
    """Tangent of one operand of ``add(a, b)``: in the result's shape (arrays), or adding element
    by element (lists, tuples, dicts)."""
    if isinstance(out, (list, tuple, dict)):
        return summable(t)
    return broadcast_tangent(t, out)


@tangent(runtime.add)
def _(out, a, b):
    d[out] = runtime_add_tangent(d[a], out)
    d[out] = runtime_add_tangent(d[b], out)


@linear_in("g_out")
def as_grad_adjoint(g_out, g, x):
    """Adjoint of ``as_grad(g, x)`` for ``g``: ``g_out`` in the structure and shape of ``g``
    (lists, tuples and dicts leaf by leaf; a dict gradient keeps only the keys ``g`` has)."""
    if is_zero(g_out) or is_zero(g):
        return zero
    if isinstance(x, (list, tuple)):
        parts = []
        for go, gi, xi in zip(g_out, g, x):
            parts.append(as_grad_adjoint(go, gi, xi))
        return parts
    if isinstance(x, dict):
        parts = {}
        for k in g:
            parts[k] = as_grad_adjoint(g_out[k], g[k], x[k])
        return parts
    return broadcast_back(g_out, g)


@linear(runtime.as_grad)
@adjoint(runtime.as_grad)
def _(out, g, x):
    d[g] = as_grad_adjoint(d[out], g, x)


@adjoint(as_grad_adjoint)  # linear in g_out; as_grad is its transpose
def _(out, g_out, g, x):
    d[g_out] = runtime.as_grad(d[out], x)


@linear_in("g", any_number=True)
def as_sequence_grad(g, x):
    """Adjoint of ``as_sequence(x)``: ``g`` itself, or the gradient of ``list(x)``."""
    if is_any_zero(g):
        return zero
    if isinstance(x, (list, tuple, np.ndarray, range, str)) or is_dispatching(x):
        return g
    return sequence_grad(g, x)


@diagonal(runtime.snapshot)
@adjoint(runtime.snapshot)
def _(out, x):
    d[x] = d[out]


@diagonal(runtime.private_copy)
@adjoint(runtime.private_copy)
def _(out, x, copies):
    d[x] = d[out]


@diagonal(whole_matrices)  # the same values, in other chunks
@adjoint(whole_matrices)
def _(out, a):
    d[a] = d[out]


@adjoint(runtime.as_sequence)
def _(out, x):
    d[x] = as_sequence_grad(d[out], x)


@zero_in_zero_out("t")
def as_sequence_tangent(t, x, out):
    """Tangent of ``as_sequence(x)``: ``t`` itself, or the tangent of ``list(x)``."""
    if zero_in(t):
        return zero
    if t is None or out is x:
        return t
    return sequence_tangent(t, out)


@tangent(runtime.as_sequence)
def _(out, x):
    d[out] = as_sequence_tangent(d[x], x, out)


@adjoint(as_sequence_grad)  # linear in g, and its own transpose
def _(out, g, x):
    d[g] = as_sequence_grad(d[out], x)


# ----- indexing and lists ------------------------------------------------------------------


@linear_in("g")
def gather(g, x, idx):
    """``g[idx]``, or 0 when ``g`` is zero: the adjoint of adding into ``idx``."""
    if is_zero(g):  # called directly with the 0 (tests/test_runtime_rules.py)
        return zero
    if isinstance(g, dict):  # dict gradients hold only the keys that received one
        return g.get(idx, 0)
    return g[idx] if not isinstance(g, np.ndarray) else as_array(g)[idx]


@linear_in("g_out")
def added_grad(g_out, x, idx, g):
    """Adjoint of ``add_at(dx, x, idx, g)`` for ``g``: ``g_out[idx]`` in ``g``'s shape, or 0
    where ``add_at`` ignored ``g`` (``g`` or ``x`` the symbolic zero). Its result is then the
    symbolic zero too, whose ``g_out`` need not have ``x``'s shape."""
    if zero_in(g_out):
        return zero
    if is_zero(g) or is_zero(x):
        return zero
    return add_operand_grad(gather(g_out, x, idx), g)


@adjoint(runtime.add_at)
def _(out, dx, x, idx, g):
    d[dx] = d[out]
    d[g] = added_grad(d[out], x, idx, g)


@zero_in_zero_out("t")
def add_at_tangent(t, x, idx):
    """Tangent of ``add_at(dx, x, idx, g)`` from ``g``: ``t`` added into a zero buffer."""
    if zero_in(t):
        return zero
    return summable(add_at(0, x, idx, t))


@tangent(runtime.add_at)
def _(out, dx, x, idx, g):
    d[out] = summable(d[dx])
    d[out] = add_at_tangent(d[g], x, idx)


@linear(runtime.item)
@adjoint(runtime.item)
def _(out, g, i):
    d[g] = runtime.add_at(0, g, i, d[out])


@linear_in("g_out")
def setitem_grad_adjoint(g_out, dx, idx, v):
    """Adjoint of ``(gv, dx') = setitem_grad(dx, idx, v)`` for ``dx``: ``dx'`` is ``dx`` with
    ``dx[idx]`` cleared, and ``gv`` is ``dx[idx]`` summed to ``v``'s shape."""
    if zero_in(g_out):
        return zero
    if is_zero(dx) or buffers.lost_zero(dx, idx):  # a constant dx
        return zero
    g_v, g_rest = g_out
    if isinstance(dx, np.ndarray):
        g = np.zeros(dx.shape, np.result_type(dx.dtype, np.float32)) if is_zero(g_rest) \
            else np.array(g_rest, dtype=np.result_type(as_array(g_rest).dtype, np.float32))
        g[idx] = zero if is_zero(g_v) else broadcast_back(g_v, dx[idx])
        return g
    if isinstance(dx, dict):
        g = {} if is_zero(g_rest) else dict(g_rest)
        g[idx] = g_v
        return g
    g = [zero] * len(dx) if is_zero(g_rest) else list(g_rest)
    g[idx] = g_v
    return g


@adjoint(runtime.setitem_grad)
def _(out, dx, idx, v):
    d[dx] = setitem_grad_adjoint(d[out], dx, idx, v)


@zero_in_zero_out("t")
def setitem_grad_tangent(t, idx, v):
    """Tangent of ``setitem_grad(dx, idx, v)``: the same split of a copy of ``t``."""
    if zero_in(t):
        return zero
    if isinstance(t, np.ndarray):
        t = np.array(t)
    elif isinstance(t, (list, tuple)):
        t = list(t)
    return summable(setitem_grad(t, idx, v))  # zeros and dicts are not written in place


@tangent(runtime.setitem_grad)
def _(out, dx, idx, v):
    d[out] = setitem_grad_tangent(d[dx], idx, v)


@linear_in("g_out")
def pop_grad_adjoint(g_out, dxs=()):
    """Adjoint of ``(last, rest) = pop_grad(dxs)``: the list's gradient, ``rest + [last]``, a
    zero ``rest`` as zeros for each item, so every item keeps its place."""
    if zero_in(g_out):
        return zero
    if is_zero(dxs) or len(dxs) == 0:
        return zero  # pop_grad passed a zero (or empty) gradient through unchanged
    g_last, g_rest = g_out
    rest = [zero] * (len(dxs) - 1) if is_zero(g_rest) else list(g_rest)
    return rest + [g_last]


@adjoint(runtime.pop_grad)
def _(out, dxs):
    d[dxs] = pop_grad_adjoint(d[out], dxs)


@tangent(runtime.pop_grad)  # a pair, added element by element
def _(out, dxs):
    d[out] = summable(pop_grad(d[dxs]))


@zero_in_zero_out("g_out")
def push_grad_parts(g_out):
    """Adjoint of ``push_grad(dxs, g) = dxs + [g]``: (gradient of dxs, gradient of g)."""
    if zero_in(g_out):
        return zero
    if not g_out:
        return zero, zero
    return list(g_out[:-1]), g_out[-1]


@tangent(push_grad_parts)  # a pair, added element by element
def _(out, g_out):
    d[out] = summable(push_grad_parts(d[g_out]))


@adjoint(runtime.push_grad)
def _(out, dxs, g, xs=()):
    d[dxs] = push_grad_parts(d[out])[0]
    d[g] = push_grad_parts(d[out])[1]


@zero_in_zero_out("t")
def push_grad_tangent(t, dxs, xs, which):
    """Tangent of ``push_grad(dxs, g, xs) = dxs + [g]`` from ``dxs`` (which 0) or ``g`` (1); a
    zero ``dxs`` stands for a zero per item of ``xs``."""
    if zero_in(t):
        return zero
    n = len(xs) if is_zero(dxs) else len(dxs)
    if which == 0:
        return TangentList(list(t) + [0])
    return TangentList([zero] * n + [t])


@tangent(runtime.push_grad)
def _(out, dxs, g, xs=()):
    d[out] = push_grad_tangent(d[dxs], dxs, xs, 0)
    d[out] = push_grad_tangent(d[g], dxs, xs, 1)


@linear_in("g_out")
def concat_grads_adjoint(g_out, x=(), y=()):
    """Adjoint of ``(head, tail) = concat_grads(g, x, y)``: ``head + tail``, a zero part as
    zeros for each item of ``x`` (``y``), so every item keeps its place."""
    if zero_in(g_out):
        return zero
    g_head, g_tail = g_out
    # written so that reverse mode reads head and tail as lists (third order): each name is
    # a list display, repeated or joined, on every path
    if is_zero(g_head):
        head = [zero] * len(x)
    else:
        head = [] + list(g_head)
    if is_zero(g_tail):
        tail = [zero] * len(y)
    else:
        tail = [] + list(g_tail)
    return head + tail


@adjoint(runtime.concat_grads)
def _(out, g, x, y):
    d[g] = concat_grads_adjoint(d[out], x, y)


@tangent(runtime.concat_grads)  # a pair, added element by element
def _(out, g, x, y):
    d[out] = summable(concat_grads(d[g], x, y))


@linear_in("g_out")
def repeated_grads_adjoint(g_out, g, x):
    """Adjoint of ``repeated_grads(g, x)`` for ``g``: each copy's item gets its item's
    gradient (``g_out`` repeated to the length of ``g``)."""
    if zero_in(g_out):
        return zero
    return [g_out[i % len(x)] for i in range(len(g))]


@linear(runtime.repeated_grads)
@adjoint(runtime.repeated_grads)
def _(out, g, x):
    d[g] = repeated_grads_adjoint(d[out], g, x)


@linear(repeated_grads_adjoint)
@adjoint(repeated_grads_adjoint)
def _(out, g_out, g, x):
    d[g_out] = runtime.repeated_grads(d[out], x)


@linear(runtime.unreduce)
@adjoint(runtime.unreduce)
def _(out, g, x, axis=None, keepdims=False):
    d[g] = unreduce_adjoint(d[out], g, x, axis, keepdims)


@linear_in("g_out")
def unreduce_adjoint(g_out, g, x, axis, keepdims):
    """Adjoint of ``unreduce(g, x, axis, keepdims)`` for ``g``: the reduction it undid."""
    if zero_in(g_out):
        return zero
    g_out = as_array(g_out)
    ndim = np.ndim(x)
    axes = tuple(range(ndim)) if axis is None else tuple(
        a % ndim for a in ((axis,) if np.ndim(axis) == 0 else axis))
    total = np.sum(g_out, axis=axes, keepdims=True)
    return np.reshape(total, np.shape(g))


nondifferentiable(runtime.bprop_grads)  # a custom bprop has no second derivative here


nondifferentiable(nd.drawn_indices)


@adjoint(nd.draw_grad)
def _(out, g, a, drawn):
    d[g] = nd.draw_tangent(d[out], a, drawn)


@adjoint(nd.draw_tangent)
def _(out, t, a, drawn):
    d[t] = nd.draw_grad(d[out], a, drawn)


@adjoint(me.tolist_grad)
def _(out, g, a):
    d[g] = me.tolist_tangent(d[out])


@adjoint(astype_grad)
def _(out, g, x):
    d[g] = astype_grad(d[out], g)


@adjoint(runtime.saved_item)
def _(out, x, idx):
    d[x] = runtime.add_at(0, x, idx, d[out])


@zero_in_zero_out("t")
def saved_item_tangent(t, x, idx):
    """Tangent of ``saved_item(x, idx)``: a copy of ``t[idx]`` (0 for a key not in a dict)."""
    if zero_in(t):
        return zero
    if isinstance(x, dict):
        return t.get(idx, zero) if idx in x else zero
    value = item(t, idx)
    return value.copy() if isinstance(value, np.ndarray) else value


@tangent(runtime.saved_item)
def _(out, x, idx):
    d[out] = saved_item_tangent(d[x], x, idx)


# ----- products the helpers use ------------------------------------------------------------


@linear_in("g", "b")
def outer_grad_a(g, a, b):
    """Gradient of ``np.multiply.outer(a, b)`` for ``a``: ``g`` contracted with ``b``."""
    if zero_in(g, b):
        return zero
    return np.tensordot(g, b, axes=np.ndim(b)) if np.ndim(b) else g * b


@linear_in("g", "a")
def outer_grad_b(g, a, b):
    """Gradient of ``np.multiply.outer(a, b)`` for ``b``."""
    if zero_in(g, a):
        return zero
    return np.tensordot(a, g, axes=np.ndim(a)) if np.ndim(a) else a * g


@linear(np.multiply.outer, wrt=("a", "b"))
@adjoint(np.multiply.outer)
def _(out, a, b):
    d[a] = outer_grad_a(d[out], a, b)
    d[b] = outer_grad_b(d[out], a, b)


@linear_in("g")
def reversed_items_grad(g, seq, count=None):
    """Adjoint of ``reversed_items(seq)``: each pair's item gradient back at its index."""
    if zero_in(g):
        return zero
    pairs = runtime.reversed_items(seq, count)
    grad = zero
    for (index, _), g_pair in zip(pairs, g):
        g_item = runtime.item(g_pair, 1)
        if not isinstance(seq, dict) and not is_zero(g_item):
            grad = runtime.add_at(grad, seq, index, g_item)
    return grad


@adjoint(runtime.reversed_items)
def _(out, seq, count=None):
    d[seq] = reversed_items_grad(d[out], seq, count)


@zero_in_zero_out("t_seq")
def reversed_items_tangent(t_seq, seq, count=None):
    """Tangent of ``reversed_items(seq)``: the items' tangents, paired with no index tangent."""
    if zero_in(t_seq):
        return zero
    if isinstance(seq, dict):
        return zero
    return [(0, t_seq[index]) for index, _ in runtime.reversed_items(seq, count)]


@tangent(runtime.reversed_items)
def _(out, seq, count=None):
    d[out] = reversed_items_tangent(d[seq], seq, count)


# ----- rule helpers that write into a buffer in place --------------------------------------
# These helpers build their result with np.add.at or writes through a view, which mindgrad does
# not see as a data flow. Each is linear in the gradient it receives, so its adjoint is its
# transpose: the forward operation it undoes, applied to the incoming gradient.


@adjoint(ns.repeat_grad)
def _(out, g, a, repeats, axis=None):
    d[g] = np.repeat(d[out], repeats, axis)


@zero_in_zero_out("g")
def sort_grad_transpose(g, a, axis=-1):
    """``g`` permuted as ``np.sort(a, axis)`` permutes ``a``: the adjoint of ``sort_grad``."""
    if zero_in(g):
        return zero
    x = as_array(a)
    if axis is None:
        x, g, axis = np.ravel(x), np.ravel(g), -1
    order = np.argsort(x, axis=axis, kind="stable")
    return np.take_along_axis(as_array(g), order, axis)


@adjoint(ns.sort_grad)
def _(out, g, a, axis=-1, kind=None):
    d[g] = sort_grad_transpose(d[out], a, axis)


@adjoint(ns.diagonal_grad)
def _(out, g, a, offset=0, axis1=0, axis2=1):
    d[g] = np.diagonal(d[out], offset, axis1, axis2)


@adjoint(ns.take_grad)
def _(out, g, a, indices, axis=None, mode="raise"):
    d[g] = np.take(d[out], indices, axis, mode=mode)


@adjoint(ns.take_along_axis_grad)
def _(out, g, arr, indices, axis=-1):
    d[g] = np.take_along_axis(d[out], as_array(indices), axis)


@adjoint(ngrids.pad_grad)
def _(out, g, array, pad_width, mode="constant", reflect_type="even"):
    d[g] = np.pad(d[out], pad_width, mode)


# ----- helpers of forward mode, for reverse over forward -----------------------------------


@linear_in("g")
def concat_tangents_adjoint(g, x, y, part):
    """Adjoint of ``concat_tangents(t_x, x, t_y, y)`` for ``t_x`` (part 0) or ``t_y`` (1):
    the head or the tail of ``g``; all of ``g`` where ``x + y`` adds element by element."""
    if zero_in(g):
        return zero
    if runtime.adds_elementwise(x, y):
        return g
    return runtime.concat_grads(g, x, y)[part]


@adjoint(runtime.concat_tangents)
def _(out, t_x, x, t_y, y):
    d[t_x] = concat_tangents_adjoint(d[out], x, y, 0)
    d[t_y] = concat_tangents_adjoint(d[out], x, y, 1)


@tangent(runtime.concat_tangents)  # linear in the two tangents together
def _(out, t_x, x, t_y, y):
    d[out] = runtime.concat_tangents(d[t_x], x, 0, y)
    d[out] = runtime.concat_tangents(0, x, d[t_y], y)


# zeros in a value's structure: constants
nondifferentiable(runtime.zero_tangent, zero_tangent_of, zero_for)  # zeros
nondifferentiable(float_dtype)  # a dtype


@adjoint(TangentList, TangentTuple)
def _(out, iterable=()):
    d[iterable] = sequence_grad(d[out], iterable)


@tangent(TangentList, TangentTuple)
def _(out, iterable=()):
    d[out] = sequence_tangent(d[iterable], out)


@adjoint(TangentDict)  # tangents of dicts, differentiated again (third order)
def _(out, mapping=()):
    d[mapping] = dict_grad(d[out], mapping)


@tangent(TangentDict)
def _(out, mapping=()):
    d[out] = summable(dict_tangent(d[mapping], mapping))
