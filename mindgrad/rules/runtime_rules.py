"""Rules for the runtime helpers that generated code calls, so generated code can itself be
differentiated (grad of grad). Helpers not listed here are differentiated from their source."""

import numpy as np

from mindgrad import runtime
from mindgrad.rules import adjoint, d, nondifferentiable
from mindgrad.rules.numpy_elementwise import astype_grad
from mindgrad.runtime import is_zero, unbroadcast

# the output sensitivity (ones), gradient buffers and zero tests are constants; helpers read
# dtypes and shapes through getattr/hasattr
nondifferentiable(runtime.seed, runtime.zeros_buffer, runtime.is_zero, getattr, hasattr,
                  callable, id)


def broadcast_back(g, like):
    """Adjoint of ``unbroadcast(like, x)``: ``g`` broadcast back to the shape of ``like``."""
    if is_zero(g):
        return 0
    shape = np.shape(like)
    g = np.asarray(g)
    if g.ndim < len(shape):
        g = g.reshape((1,) * (len(shape) - g.ndim) + g.shape)
    return np.broadcast_to(g, shape)


@adjoint(runtime.unbroadcast)
def _(out, g, x):
    d[g] = broadcast_back(d[out], g)


@adjoint(runtime.add)
def _(out, a, b):
    d[a] = unbroadcast(d[out], a)
    d[b] = unbroadcast(d[out], b)


@adjoint(runtime.as_grad)
def _(out, g, x):
    d[g] = broadcast_back(d[out], g)


# ----- indexing and lists ---------------------------------------------------------------------


def gather(g, x, idx):
    """``g[idx]``, or 0 when ``g`` is zero: the adjoint of adding into ``idx``."""
    if is_zero(g):
        return 0
    return g[idx] if not isinstance(g, np.ndarray) else np.asarray(g)[idx]


@adjoint(runtime.add_at)
def _(out, dx, x, idx, g):
    d[dx] = d[out]
    d[g] = unbroadcast(gather(d[out], x, idx), g)


@adjoint(runtime.item)
def _(out, g, i):
    d[g] = runtime.add_at(0, g, i, d[out])


def setitem_grad_adjoint(g_out, dx, idx, v):
    """Adjoint of ``(gv, dx') = setitem_grad(dx, idx, v)`` for ``dx``: ``dx'`` is ``dx`` with
    ``dx[idx]`` cleared, and ``gv`` is ``dx[idx]`` summed to ``v``'s shape."""
    if is_zero(g_out):
        return 0
    g_v, g_rest = g_out
    if isinstance(dx, np.ndarray):
        g = np.zeros(dx.shape, np.result_type(dx.dtype, np.float32)) if is_zero(g_rest) \
            else np.array(g_rest, dtype=np.result_type(np.asarray(g_rest).dtype, np.float32))
        g[idx] = 0 if is_zero(g_v) else broadcast_back(g_v, dx[idx])
        return g
    g = [0] * len(dx) if is_zero(g_rest) else list(g_rest)
    g[idx] = g_v
    return g


@adjoint(runtime.setitem_grad)
def _(out, dx, idx, v):
    d[dx] = setitem_grad_adjoint(d[out], dx, idx, v)


def pop_grad_adjoint(g_out):
    """Adjoint of ``(last, rest) = pop_grad(dxs)``: the list's gradient, ``rest + [last]``."""
    if is_zero(g_out):
        return 0
    g_last, g_rest = g_out
    return ([] if is_zero(g_rest) else list(g_rest)) + [g_last]


@adjoint(runtime.pop_grad)
def _(out, dxs):
    d[dxs] = pop_grad_adjoint(d[out])


def push_grad_parts(g_out):
    """Adjoint of ``push_grad(dxs, g) = dxs + [g]``: (gradient of dxs, gradient of g)."""
    if is_zero(g_out) or not g_out:
        return 0, 0
    return list(g_out[:-1]), g_out[-1]


@adjoint(runtime.push_grad)
def _(out, dxs, g):
    d[dxs] = push_grad_parts(d[out])[0]
    d[g] = push_grad_parts(d[out])[1]


def concat_grads_adjoint(g_out):
    """Adjoint of ``(head, tail) = concat_grads(g, x, y)``: ``head + tail``."""
    if is_zero(g_out):
        return 0
    head, tail = g_out
    return ([] if is_zero(head) else list(head)) + ([] if is_zero(tail) else list(tail))


@adjoint(runtime.concat_grads)
def _(out, g, x, y):
    d[g] = concat_grads_adjoint(d[out])




@adjoint(runtime.unreduce)
def _(out, g, x, axis=None, keepdims=False):
    d[g] = unreduce_adjoint(d[out], g, x, axis, keepdims)


def unreduce_adjoint(g_out, g, x, axis, keepdims):
    """Adjoint of ``unreduce(g, x, axis, keepdims)`` for ``g``: the reduction it undid."""
    if is_zero(g_out):
        return 0
    g_out = np.asarray(g_out)
    ndim = np.ndim(x)
    axes = tuple(range(ndim)) if axis is None else tuple(
        a % ndim for a in ((axis,) if np.ndim(axis) == 0 else axis))
    total = np.sum(g_out, axis=axes, keepdims=True)
    return np.reshape(total, np.shape(g))


nondifferentiable(runtime.bprop_grads)  # a custom bprop has no second derivative here


@adjoint(astype_grad)
def _(out, g, x):
    d[g] = astype_grad(d[out], g)


@adjoint(runtime.saved_item)
def _(out, x, idx):
    d[x] = runtime.add_at(0, x, idx, d[out])


# ----- products the helpers use ------------------------------------------------------------


def outer_grad_a(g, a, b):
    """Gradient of ``np.multiply.outer(a, b)`` for ``a``: ``g`` contracted with ``b``."""
    return np.tensordot(g, b, axes=np.ndim(b)) if np.ndim(b) else g * b


def outer_grad_b(g, a, b):
    """Gradient of ``np.multiply.outer(a, b)`` for ``b``."""
    return np.tensordot(a, g, axes=np.ndim(a)) if np.ndim(a) else a * g


@adjoint(np.multiply.outer)
def _(out, a, b):
    d[a] = outer_grad_a(d[out], a, b)
    d[b] = outer_grad_b(d[out], a, b)


def reversed_items_grad(g, seq, count=None):
    """Adjoint of ``reversed_items(seq)``: each pair's item gradient back at its index."""
    if is_zero(g):
        return 0
    pairs = runtime.reversed_items(seq, count)
    grad = 0
    for (index, _), g_pair in zip(pairs, g):
        g_item = runtime.item(g_pair, 1)
        if not isinstance(seq, dict) and not is_zero(g_item):
            grad = runtime.add_at(grad, seq, index, g_item)
    return grad


@adjoint(runtime.reversed_items)
def _(out, seq, count=None):
    d[seq] = reversed_items_grad(d[out], seq, count)
