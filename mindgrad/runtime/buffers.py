"""The gradient buffers of index writes, the items the tape saves, and the gradients of
sequences, as generated reverse-mode code uses them.

``add_at`` and ``setitem_grad`` update a gradient buffer the generated code owns (made by
``add_at`` itself or by an ``a + b`` expression, never aliased): the only helpers that mutate
an argument. ``saved_item``/``restore_item`` keep what an in-place write overwrote, for the
backward sweep; ``push_grad``/``pop_grad`` carry the gradients of a list built in a loop.
"""

from __future__ import annotations

import functools

import numpy as np

from mindgrad.runtime.arrays import (
    as_array,
    described,
    is_array,
    is_dispatching,
    is_lazy,
    library,
    zeros_of,
)
from mindgrad.runtime.core import GradientError, add, is_zero, real_grad, unbroadcast
from mindgrad.runtime.forward import adds_elementwise
from mindgrad.runtime.symbolic_zero import Zero, zero


def _is_advanced(idx) -> bool:
    if isinstance(idx, tuple):
        return any(isinstance(i, (np.ndarray, list)) or is_dispatching(i) for i in idx)
    return isinstance(idx, (np.ndarray, list)) or is_dispatching(idx)



def zeros_buffer(x):
    """A zero gradient buffer for the array argument ``x``, owned by the generated code: of
    ``x``'s type (a Dask array with ``x``'s chunks, a CuPy array on its device)."""
    return zeros_of(x, np.result_type(x.dtype, np.float32))



def _dispatched_add_at(dx, x, idx, g):
    """``add_at`` on a Dask or CuPy array ``x``. CuPy updates in place as NumPy does (``np.add.at``
    dispatches to it). A Dask array has no ``np.add.at``: a basic index (ints, slices, None,
    ...) adds through item assignment, which builds a new graph; an array of indices, which may
    repeat, has no lazy form, and is refused by name."""
    g = real_grad(g, x)
    if is_zero(dx, x):
        dx = zeros_buffer(x)
    if not is_lazy(x):
        if _is_advanced(idx):
            np.add.at(dx, idx, g)
        else:
            dx[idx] += g
        return dx
    if _is_advanced(idx):
        return _lazy_gather_grad(dx, x, idx, g)
    idx, g = _without_new_axes(x, idx, g)
    dx[idx] = dx[idx] + g
    return dx


# the largest matrix (indices taken by distinct indices) that sums a gradient over repeated
# indices on a Dask array
_ONE_HOT_LIMIT = 1 << 24


def _lazy_gather_grad(dx, x, idx, g):
    """``add_at`` on a Dask array for ``x[i]`` with ``i`` a NumPy array (or list) of integers
    along the first axis: indices that repeat are summed by one product with a one-hot matrix
    of NumPy's (Dask has no ``np.add.at``), then added by item assignment at distinct indices.
    Any other array index (a boolean mask, a Dask array of indices, several arrays) is refused
    by name: its places are not known before the graph is computed."""
    index = idx[0] if isinstance(idx, tuple) and len(idx) == 1 else idx
    if isinstance(index, list):
        index = as_array(index)
    if not (isinstance(index, np.ndarray) and index.dtype.kind in "iu" and x.ndim):
        if getattr(index, "dtype", None) == np.bool_:
            what = "a boolean mask"
        elif is_array(index) and not isinstance(index, np.ndarray):
            what = "an array of indices that is itself lazy"
        else:
            what = "this array index"
        raise GradientError(
            f"the gradient of x[index] with {what} on {library(x.__class__)} arrays "
            f"({described(x)}) needs the places the index reads, which are not known before "
            "the graph is computed: index with ints, slices or a NumPy array of ints")
    flat = index.ravel() % x.shape[0]
    g = np.reshape(g, (flat.size,) + tuple(x.shape[1:]))
    places, which = np.unique(flat, return_inverse=True)
    if places.size != flat.size:  # repeated indices: their gradients summed first
        if places.size * flat.size > _ONE_HOT_LIMIT:
            raise GradientError(
                f"the gradient of x[index] with {flat.size} indices, repeated, on "
                f"{library(x.__class__)} arrays ({described(x)}) would sum them through a "
                f"{places.size} x {flat.size} matrix: index without repeats, or take this "
                "part in NumPy")
        one_hot = np.zeros((places.size, flat.size), np.result_type(g.dtype, np.float32))
        one_hot[which.ravel(), np.arange(flat.size)] = 1
        g = np.tensordot(one_hot, g, axes=1)
    dx[places] = dx[places] + g
    return dx


# the most trailing elements scatter_add sums one by one on a Dask array
_SCATTER_COLUMNS = 256


def scatter_add(values, index, size, what):
    """An array of ``size`` rows, row ``i`` the sum of the rows ``values[k]`` with
    ``index[k] == i`` (``index`` a NumPy array of ints, one per row of ``values``): what
    ``np.add.at(np.zeros(...), index, values)`` gives, for ``values`` of any array type. On a
    Dask array, which has no ``np.add.at``, each of the rows' trailing elements is summed by
    ``np.bincount`` (lazily), up to ``_SCATTER_COLUMNS`` of them; past that the gradient of
    ``what`` (the function named in the error) is refused."""
    index = np.asarray(index).ravel()
    if not is_lazy(values):  # NumPy's, or CuPy's on its device
        shape = (size,) + tuple(values.shape[1:])
        dtype = np.result_type(values.dtype, np.float32)
        grad = np.zeros_like(values, shape=shape, dtype=dtype) if is_dispatching(values) \
            else np.zeros(shape, dtype)
        np.add.at(grad, np.asarray(index, like=grad) if is_dispatching(grad) else index, values)
        return grad
    trailing = tuple(values.shape[1:])
    columns = int(np.prod(trailing))
    if columns > _SCATTER_COLUMNS:
        raise GradientError(
            f"the gradient of {what} on {library(values.__class__)} arrays "
            f"({described(values)}) sums {columns} elements per index, one np.bincount each, "
            f"past the {_SCATTER_COLUMNS} mindgrad takes: take this part in NumPy")
    flat = np.reshape(values, (index.size, columns))
    where = np.asarray(index, like=values).rechunk(flat.chunks[0])
    sums = [np.bincount(where, weights=flat[:, j], minlength=size) for j in range(columns)]
    return np.reshape(np.stack(sums, axis=-1), (size,) + trailing)


def _without_new_axes(x, idx, g):
    """``idx`` without its new axes (``None``), which Dask's item assignment does not take,
    and ``g``, shaped like ``x[idx]``, without them (each of length 1)."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    if not any(p is None for p in parts):
        return idx, g
    kept = tuple(p for p in parts if p is not None)
    # the shape x[kept] has, read from a NumPy array of x's shape that holds no memory
    probe = np.lib.stride_tricks.as_strided(np.zeros(1), x.shape, (0,) * len(x.shape))
    return kept, np.reshape(g, probe[kept].shape)



def add_at(dx, x, idx, g):
    """Gradient of ``y = x[idx]``: add ``g`` into ``dx`` at ``idx`` (``dx`` may be zero); a
    real ``x`` takes the real part of a complex ``g`` (``real_grad``)."""
    if is_zero(g) or is_zero(x):
        # x is a symbolic zero gradient (grad of grad): it depends on nothing. A zero dx is
        # given x's type: a later derivative may read its shape
        return Zero.like(x) if is_zero(dx) else dx
    if is_dispatching(x):
        return _dispatched_add_at(dx, x, idx, g)
    if isinstance(x, np.ndarray):
        g = real_grad(g, x)
        if is_zero(dx, x):
            dx = np.zeros(x.shape, dtype=np.result_type(x.dtype, np.float32))
        if _is_advanced(idx):
            np.add.at(dx, idx, g)
        else:
            dx[idx] += g
        return dx
    if isinstance(x, dict):
        dx = {} if is_zero(dx) else dx
        dx[idx] = add(dx.get(idx, 0), g)
        return dx
    if isinstance(x, (list, tuple)):
        dx = [zero] * len(x) if is_zero(dx) else (dx if isinstance(dx, list) else list(dx))
        if isinstance(idx, slice):
            for k, gk in zip(range(*idx.indices(len(x))), g):
                dx[k] = add(dx[k], gk)
        else:
            dx[idx] = add(dx[idx], g)
        return dx
    raise GradientError(f"cannot index a gradient for a value of type {type(x).__name__}")



def _last_writes(shape, idx, block):
    """For ``x[idx] = v`` with an advanced index: a mask shaped like ``x[idx]``, true where an
    element of the block is the one NumPy leaves in ``x`` (an index repeated in ``idx`` writes
    one element several times; only one write remains)."""
    order = np.arange(int(np.prod(block)), dtype=np.intp).reshape(block)
    written = np.full(shape, -1, dtype=np.intp)
    written[idx] = order
    return written[idx] == order



def lost_zero(dx, idx) -> bool:
    """Whether ``dx``, the gradient of an array written at ``idx``, is a number 0 standing for
    the symbolic zero (see ``is_zero``): only a 0-d array takes ``x[()]`` or ``x[...]``, any
    other index means an array of one or more dimensions, whose gradient is never a number."""
    if isinstance(dx, (np.ndarray, list, dict)) or is_dispatching(dx) or np.ndim(dx) or dx:
        return False
    return idx is not Ellipsis and not (isinstance(idx, tuple) and not idx)



def setitem_grad(dx, idx, v):
    """Gradient of ``x[idx] = v``: returns (gradient of v, dx with ``dx[idx]`` cleared)."""
    if is_zero(dx) or lost_zero(dx, idx):
        return zero, dx
    if is_dispatching(dx):
        return _dispatched_setitem_grad(dx, idx, v)
    if isinstance(dx, np.ndarray):
        gv = dx[idx]
        if _is_advanced(idx):
            gv = np.where(_last_writes(dx.shape, idx, np.shape(gv)), gv, 0)
        gv = gv.copy() if isinstance(gv, np.ndarray) else gv
        if not dx.flags.writeable:
            dx = dx.copy()
        dx[idx] = 0
        return unbroadcast(gv, v), dx
    if isinstance(dx, dict):  # a dict gradient holds only the keys that received one
        dx = dict(dx)
        return dx.pop(idx, 0), dx
    if isinstance(idx, slice):
        return _slice_grad(dx, idx, v)
    gv = dx[idx]
    if isinstance(dx, tuple):
        dx = list(dx)
    dx[idx] = 0
    return gv, dx


def _dispatched_setitem_grad(dx, idx, v):
    """``setitem_grad`` on a Dask or CuPy gradient: a copy cleared at ``idx`` (a Dask array's
    item assignment builds a new graph; an array of indices, which may repeat, is refused on
    it, as in ``_dispatched_add_at``)."""
    if _is_advanced(idx):
        if is_lazy(dx):
            raise GradientError(
                f"the gradient of x[index] = v with an array of indices on "
                f"{library(dx.__class__)} arrays ({described(dx)}) needs the last write of each "
                "repeated index, which they cannot find lazily: index with ints and slices")
        gv = dx[idx]
        gv = np.where(np.asarray(_last_writes(dx.shape, idx, np.shape(gv)), like=dx), gv, 0)
    else:
        gv = dx[idx].copy()
    dx = dx.copy()
    dx[idx] = 0
    return unbroadcast(gv, v), dx


def _slice_grad(dx, idx, v):
    """``setitem_grad`` of ``xs[i:j] = v`` for a list ``xs``: the items' gradients go to ``v``'s
    (a list, tuple or array of as many) and leave zeros in their place."""
    gv = list(dx[idx])
    if len(gv) != len(v):
        raise NotImplementedError(
            "mindgrad has no gradient for an assignment to a slice of a list that changes its "
            f"length ({len(v)} items for {len(gv)}); build the list by concatenation instead "
            "(xs = xs[:i] + new + xs[j:])")
    dx = list(dx)
    dx[idx] = [zero] * len(gv)
    if isinstance(v, np.ndarray):
        return np.array([np.zeros(np.shape(row)) if is_zero(g) else g
                         for g, row in zip(gv, v)]), dx
    return (tuple(gv) if isinstance(v, tuple) else gv), dx



_ABSENT = object()



def saved_item(x, idx):
    """The value at ``x[idx]`` before an index assignment overwrites it (a copy for arrays)."""
    if isinstance(x, dict):
        return x.get(idx, _ABSENT)
    value = x[idx]
    return value.copy() if is_array(value) else value



def private_copy(x, copies):
    """``x`` if the backward sweep owns it (it is in ``copies``), else a copy it then owns.

    The backward sweep restores overwritten items only into arrays, lists and dicts it owns:
    never into one the function returned, the caller passed in, or a ``vjp`` keeps, so an
    error or a second backward sweep finds them as the function left them."""
    if copies.get(id(x)) is x:
        return x
    x = x.copy()
    copies[id(x)] = x
    return x



def refuse_array(value, error):
    """Raise ``error`` if ``value`` is an array: an in-place operator in the user's code would
    write into it, and it may be the caller's (forward mode, built for any argument kinds)."""
    if is_array(value):
        raise error.with_traceback(None)



def refuse_dict(value, error):
    """Raise ``error`` if ``value`` is a dict: ``a | b`` merged two dicts, whose gradients
    mindgrad does not follow (of integers, booleans and sets it is a constant)."""
    if isinstance(value, dict):
        raise error.with_traceback(None)



def restore_item(x, idx, old):
    """Undo ``x[idx] = v`` in the backward sweep, so earlier adjoints see the old values."""
    if old is _ABSENT:
        del x[idx]
    else:
        x[idx] = old



def repeated_grads(g, x):
    """Gradient of ``x * n`` (or ``n * x``) for a sequence ``x``: the gradients of the ``n``
    copies, summed item by item."""
    if is_zero(g):
        return zero
    k = len(x)
    grads = [zero] * k
    for i, g_i in enumerate(g):
        grads[i % k] = add(grads[i % k], g_i)
    return grads



def concat_grads(g, x, y):
    """Gradients of ``x + y`` for sequences (concatenation): the head to x, the tail to y."""
    if is_zero(g):
        return zero, zero
    n = len(x)
    return list(g[:n]), list(g[n:])



def add_or_concat_grads(g, x, y):
    """Gradients of ``x + y`` where the code does not show what the operands hold: for two
    lists or two tuples, a concatenation (``concat_grads``); else a sum, broadcast back to
    each operand (``unbroadcast``), as for the tangent containers that add element by
    element (``adds_elementwise``)."""
    if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)) and \
            not adds_elementwise(x, y):
        return concat_grads(g, x, y)
    if is_zero(g):
        return zero, zero
    return unbroadcast(g, x), unbroadcast(g, y)



def reversed_items(seq, count=None):
    """``(index, item)`` pairs of the first ``count`` items of ``seq``, last first: what the
    backward sweep of ``for item in seq`` walks. For a dict, the index is the key."""
    if isinstance(seq, dict):
        pairs = [(k, k) for k in seq]
    else:
        pairs = list(enumerate(seq))
    if count is not None:
        pairs = pairs[:count]
    pairs.reverse()
    return pairs



def as_sequence(x):
    """``x`` when it can be indexed by position, else ``list(x)``: what ``zip``/``enumerate``
    loops index (dict keys, sets, dict views and iterators become lists)."""
    if isinstance(x, (list, tuple, np.ndarray, range, str)) or is_dispatching(x):
        return x
    return list(x)



def snapshot(x):
    """A copy of a list or dict a callee's tape keeps, so that later appends and pops (by the
    caller's backward sweep, at higher order) do not change what the tape holds."""
    if x.__class__ is list:
        return list(x)
    if x.__class__ is dict:
        return dict(x)
    return x



def item(g, i):
    """Gradient of element ``i`` of a container whose gradient is ``g``."""
    if is_zero(g):
        return zero
    if isinstance(g, dict):  # a TangentDict too, at higher order
        return g.get(i, 0)  # a dict gradient holds only the keys that received one
    return g[i]



def push_grad(dxs, g, xs=()):
    """Gradient of ``v = xs.pop()``: ``g`` goes back on the end of the list's gradient.

    ``xs`` is the list after the pop. A list's gradient is zero or has one entry per item, so a
    zero ``dxs`` becomes a zero per item of ``xs``: ``g`` then sits at the popped item's place,
    where ``pop_grad``, ``item`` and ``add`` look for it."""
    dxs = [zero] * len(xs) if is_zero(dxs) else list(dxs)
    dxs.append(g)
    return dxs



def tangent_push_grad(d_t_xs, g, t_xs):
    """Gradient of ``v = tangent_pop(t_xs)`` for ``t_xs`` (the list after the call): ``g`` back
    on the end of its gradient (``push_grad``) where a list popped, else unchanged."""
    if is_zero(t_xs):
        return d_t_xs
    return push_grad(d_t_xs, g, t_xs)


def pop_grad(dxs):
    """Gradient of ``xs.append(v)``: (gradient of v, gradient of xs without its last entry)."""
    if is_zero(dxs) or len(dxs) == 0:
        return zero, dxs
    dxs = list(dxs)
    return dxs.pop(), dxs


def call_starred(fn, stars, *args, **kwargs):
    """``fn(*args, **kwargs)`` with the arguments at the indices ``stars`` spread, as
    ``f(a, *seq)`` spreads ``seq``: the call ``call_starred(f, (1,), a, seq)`` a function's
    normalized code makes where ``seq`` is a sequence built while it runs. Its derivative is
    the run-time dispatcher's (``mindgrad.api.dynamic``)."""
    spread = []
    for i, arg in enumerate(args):
        if i in stars:
            spread.extend(arg)
        else:
            spread.append(arg)
    return fn(*spread, **kwargs)


class Closure(functools.partial):
    """A lambda or local def of a differentiated function used as a value: the function it
    was compiled into (see ``compiler/front/lift.py``), holding the values of the enclosing
    function's variables it reads. A ``functools.partial``: the run-time dispatcher opens it."""

    __slots__ = ()

    def __repr__(self):
        return f"<function {self.func.__name__}, closing over {len(self.args)} value(s)>"
