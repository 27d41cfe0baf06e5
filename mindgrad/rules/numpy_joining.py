"""Rules for NumPy's joining and splitting functions, both directions: ``concatenate``,
``stack`` and its relatives, ``np.r_`` and ``np.c_``, ``split`` and its relatives, ``append``,
``insert``, ``delete``, ``compress`` and ``block``; each function's adjoint with its tangent
beside it.

These are linear maps that move elements around: each gradient moves ``d[out]`` back. A
function taking a list of arrays (``concatenate``) has its tangent written out: a list of
tangents with 0 for arrays without one. Functions returning a list (``split``) receive a list
``d[out]`` whose unused entries are 0.

The helpers the adjoints call (``transpose_grad``, ``take_grad``, ...) are linear in the gradient
``g``; forward mode over reverse-mode code (Hessian-vector products) differentiates them too.
Their tangent is derived by ``@linear`` on a template with the helper's signature and no body.
"""

import numpy as np

from mindgrad.rules import (
    adjoint,
    d,
    indexed_as_call,
    linear,
    nondifferentiable,
    tangent,
    transpose,
    transpose_of,
)
from mindgrad.rules.helpers import astype_grad, cut
from mindgrad.rules.numpy_shape import take_grad
from mindgrad.runtime import is_any_zero, is_zero, takes_zero, zero, zero_in, zero_in_zero_out
from mindgrad.runtime.arrays import as_array
from mindgrad.runtime.tangents import as_dtype_of, float_dtype, summable

# ----- joining -----------------------------------------------------------------------------
# A join's tangent is the same join of its arrays' tangents, zeros standing in for the arrays
# without one, in the output's dtype: join_tangent, whose adjoint is the join's own gradient.


def split_along(g, arrays, axis):
    """``g`` cut along ``axis`` into pieces as long as each of ``arrays`` is on that axis."""
    sizes = [np.shape(x)[axis] for x in arrays]
    return cut(g, np.cumsum(sizes)[:-1], axis)


@zero_in_zero_out("g")
def concatenate_grad(g, arrays, axis=0):
    """Gradient of ``np.concatenate``: one slice of ``g`` per input (axis None: flattened)."""
    if zero_in(g):
        return zero
    if axis is None:
        pieces = split_along(np.ravel(g), [np.ravel(x) for x in arrays], 0)
    else:
        pieces = split_along(g, arrays, axis)
    return [astype_grad(np.reshape(p, np.shape(x)), x) for p, x in zip(pieces, arrays)]


@takes_zero(keeps_values=False, any_number=True)
def stack_grad(g, arrays, axis=0):
    """Gradient of ``np.stack``: the input's slice of ``g`` along the new axis (0 for each, for
    a zero ``g``)."""
    if is_any_zero(g):
        return [zero] * len(arrays)
    return [astype_grad(np.take(g, i, axis=axis), x) for i, x in enumerate(arrays)]


@linear(concatenate_grad, stack_grad)
def _(out, g, arrays, axis=0):
    ...


@zero_in_zero_out("g")
def hstack_grad(g, tup):
    """Gradient of ``np.hstack``: concatenation of the 1-d views along axis 1 (0 for vectors)."""
    if zero_in(g):
        return zero
    views = [np.atleast_1d(x) for x in tup]
    pieces = split_along(g, views, 0 if views[0].ndim == 1 else 1)
    return [astype_grad(np.reshape(p, np.shape(x)), x) for p, x in zip(pieces, tup)]


@zero_in_zero_out("g")
def vstack_grad(g, tup):
    """Gradient of ``np.vstack``: concatenation of the 2-d views along axis 0."""
    if zero_in(g):
        return zero
    pieces = split_along(g, [np.atleast_2d(x) for x in tup], 0)
    return [astype_grad(np.reshape(p, np.shape(x)), x) for p, x in zip(pieces, tup)]


@zero_in_zero_out("g")
def dstack_grad(g, tup):
    """Gradient of ``np.dstack``: concatenation of the 3-d views along axis 2."""
    if zero_in(g):
        return zero
    pieces = split_along(g, [np.atleast_3d(x) for x in tup], 2)
    return [astype_grad(np.reshape(p, np.shape(x)), x) for p, x in zip(pieces, tup)]


@zero_in_zero_out("g")
def column_stack_grad(g, tup):
    """Gradient of ``np.column_stack``: vectors became columns, matrices joined along axis 1."""
    if zero_in(g):
        return zero
    views = [np.reshape(x, (-1, 1)) if np.ndim(x) < 2 else x for x in tup]
    pieces = split_along(g, views, 1)
    return [astype_grad(np.reshape(p, np.shape(x)), x) for p, x in zip(pieces, tup)]


@linear(hstack_grad, vstack_grad, dstack_grad, column_stack_grad)
def _(out, g, tup):
    ...


def filled_tangents(ts, xs, dtype):
    """The tangents ``ts`` of the arrays ``xs``, with zeros of each one's shape for 0."""
    return [np.zeros(np.shape(x), dtype) if is_zero(t) else t for t, x in zip(ts, xs)]


@zero_in_zero_out("ts")
def join_tangent(join, ts, xs, out, axis=0):
    """Tangent of a joining function ``join(xs[, axis])``: the same join of the tangents, in
    the output's dtype (``axis`` is given to ``np.concatenate`` and ``np.stack`` only)."""
    if zero_in(ts):
        return zero
    dtype = float_dtype(out)
    filled = filled_tangents(ts, xs, dtype)
    joined = join(filled, axis) if join in (np.concatenate, np.stack) else join(filled)
    return as_array(joined).astype(dtype, copy=False)


@takes_zero(keeps_values=False, any_number=True)
def join_grad(g, join, xs, axis=0):
    """Gradient of a joining function ``join(xs[, axis])`` (``np.concatenate``, ``np.stack``,
    ``np.hstack``, ``np.vstack``, ``np.dstack``, ``np.column_stack``), the transpose of
    ``join_tangent``: ``g`` taken apart into the pieces, one per array of ``xs``."""
    if is_any_zero(g):
        return zero
    if join is np.concatenate:
        return concatenate_grad(g, xs, axis)
    if join is np.stack:
        return stack_grad(g, xs, axis)
    if join is np.hstack:
        return hstack_grad(g, xs)
    if join is np.vstack:
        return vstack_grad(g, xs)
    if join is np.dstack:
        return dstack_grad(g, xs)
    return column_stack_grad(g, xs)


@linear(join_tangent, wrt="ts")
@adjoint(join_tangent)  # linear in ts: the transpose is the joins' gradient
def _(out, join, ts, xs, joined, axis=0):
    d[ts] = join_grad(d[out], join, xs, axis)


# the joins: each tangent is the join of the tangents (join_tangent), and each gradient its
# transpose, d[arrays] = join_grad(d[out], np.concatenate, arrays, axis), ...
@transpose(np.concatenate)
@tangent(np.concatenate)
def _(ans, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    d[ans] = join_tangent(np.concatenate, d[arrays], arrays, ans, axis)


@transpose(np.stack)
@tangent(np.stack)
def _(ans, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    d[ans] = join_tangent(np.stack, d[arrays], arrays, ans, axis)


@transpose(np.hstack)
@tangent(np.hstack)
def _(out, tup, *, dtype=None, casting="same_kind"):
    d[out] = join_tangent(np.hstack, d[tup], tup, out)


# np.row_stack: vstack under its older name (deprecated in NumPy 2.0, a function of its own)
VSTACK = (np.vstack,) + tuple(fn for fn in (getattr(np, "row_stack", None),)
                              if fn is not None and fn is not np.vstack)


@transpose(*VSTACK)
@tangent(*VSTACK)
def _(out, tup, *, dtype=None, casting="same_kind"):
    d[out] = join_tangent(np.vstack, d[tup], tup, out)


@transpose(np.dstack)
@tangent(np.dstack)
def _(out, tup):
    d[out] = join_tangent(np.dstack, d[tup], tup, out)


@transpose(np.column_stack)
@tangent(np.column_stack)
def _(out, tup):
    d[out] = join_tangent(np.column_stack, d[tup], tup, out)



# ----- np.r_ and np.c_: joining by an index expression ---------------------------------------


def r_(*items):
    """``np.r_[items]``: the transformer writes ``np.r_[a, 0:3, b]`` as ``r_(a, slice(0, 3),
    b)``, so that it is differentiated."""
    return np.r_[items]


def c_(*items):
    """``np.c_[items]``, written as ``c_(...)`` (see ``r_``)."""
    return np.c_[items]


indexed_as_call(np.r_, r_)
indexed_as_call(np.c_, c_)


def s_(*items):
    """``np.s_[items]``: the item itself (a tuple of several), written as a call (see ``r_``)
    so that the items it passes on are differentiated."""
    return items[0] if len(items) == 1 else items


def index_exp(*items):
    """``np.index_exp[items]``: the items as a tuple (see ``s_``)."""
    return items


indexed_as_call(np.s_, s_)
indexed_as_call(np.index_exp, index_exp)


def mgrid_(*items):
    """``np.mgrid[items]``, written as a call (see ``r_``) so that bounds that depend on the
    differentiated input are refused rather than taken as constants."""
    return np.mgrid[items[0] if len(items) == 1 else items]


def ogrid_(*items):
    """``np.ogrid[items]`` (see ``mgrid_``)."""
    return np.ogrid[items[0] if len(items) == 1 else items]


indexed_as_call(np.mgrid, mgrid_)
indexed_as_call(np.ogrid, ogrid_)


def _integral(bound):
    """Whether a range's bound (or a slice of them) is None or an integer: it has no
    derivative, whatever it was computed from (``x.shape[0] // 2``)."""
    if isinstance(bound, slice):
        return all(_integral(b) for b in (bound.start, bound.stop, bound.step))
    if bound is None or isinstance(bound, (int, np.integer)):
        return True
    return isinstance(bound, np.ndarray) and bound.dtype.kind in "biu"


def slice_refused(*bounds):
    """Raises where a range ``i:j:k`` has a float bound or step that depends on the
    differentiated input; integer bounds have no derivative (zero)."""
    if all(_integral(b) for b in bounds):
        return zero
    raise NotImplementedError(
        "a range i:j:k (or slice(i, j, k)) whose bounds or step depend on the differentiated "
        "input has no gradient (in np.mgrid, np.ogrid, np.r_ its numbers would be taken as "
        "constants); build the numbers with np.linspace, differentiable in its endpoints, or "
        "np.arange(n) * step + start")


def slice_bounds_grad(*bounds):
    """The gradients of a range's bounds: zeros where they are integers (``slice_refused``)."""
    slice_refused(*bounds)
    return (0,) * len(bounds)


@adjoint(slice)
def _(out, *bounds):
    """Refused: a range ``i:j:k`` whose float bounds depend on the differentiated input (in
    ``np.mgrid``, ``np.ogrid``, ``np.r_``); integer bounds have a zero gradient."""
    d[bounds] = slice_bounds_grad(*bounds)


@tangent(slice)
def _(out, *bounds):
    d[out] = slice_refused(*bounds)


nondifferentiable(slice_refused, slice_bounds_grad)


@adjoint(mgrid_, ogrid_)
def _(out, *items):
    """Ranges of constant or integer bounds give a constant grid; float bounds or steps that
    depend on the differentiated input are refused (use ``np.linspace`` and ``np.meshgrid``)."""
    d[items] = slice_bounds_grad(*items)


@tangent(mgrid_, ogrid_)
def _(out, *items):
    d[out] = slice_refused(*items)


def index_join_layout(concatenator, items):
    """How ``np.r_[items]`` (``concatenator`` is ``np.r_`` or ``np.c_``) lays the items out,
    as NumPy does: the axis it joins along, and per item ``(shape, axes)``, the item reshaped
    to ``shape`` (ones in front, up to ``ndmin``) and transposed by ``axes`` (None for the
    directive string)."""
    axis, ndmin, trans1d = concatenator.axis, concatenator.ndmin, concatenator.trans1d
    layout = []
    for k, item in enumerate(items):
        if isinstance(item, str):
            if k or item in ("r", "c"):
                raise NotImplementedError(
                    f"np.r_/np.c_ with the directive {item!r} (a matrix, or not first) has no "
                    "gradient rule; join with np.concatenate or np.stack")
            parts = [int(p) for p in item.split(",")]
            axis = parts[0]
            ndmin = parts[1] if len(parts) > 1 else ndmin
            trans1d = parts[2] if len(parts) > 2 else trans1d
            layout.append(None)
            continue
        if isinstance(item, slice):  # an arange (or linspace): 1-d, its axis swapped in
            shape = (1,) * (ndmin - 1) + (len(np.r_[item]),) if ndmin > 1 else \
                (len(np.r_[item]),)
            axes = list(range(len(shape)))
            if ndmin > 1 and trans1d != -1:
                axes[-1], axes[trans1d] = axes[trans1d], axes[-1]
        else:
            item_ndim = np.ndim(item)
            shape = (1,) * max(ndmin - item_ndim, 0) + np.shape(item)
            axes = list(range(len(shape)))
            if trans1d != -1 and item_ndim < ndmin and type(item) not in np.ScalarType:
                k2, k1 = ndmin - item_ndim, trans1d
                if k1 < 0:
                    k1 += k2 + 1
                axes = axes[:k1] + axes[k2:] + axes[k1:k2]
        layout.append((shape, tuple(axes)))
    ndim = max([len(part[0]) for part in layout if part is not None] + [1])
    return axis % ndim, layout


nondifferentiable(index_join_layout)


@takes_zero(keeps_values=False, any_number=True)
def index_join_grads(g, concatenator, items):
    """Gradients of ``np.r_[items]`` (or ``np.c_``), one per item (None for a directive or a
    slice): each item's block of ``g`` along the joined axis, transposed back and reshaped
    to the item's shape (the 0 for each, for a zero ``g``)."""
    axis, layout = index_join_layout(concatenator, items)
    if is_any_zero(g):
        return tuple(None if part is None or isinstance(item, slice) else 0
                     for item, part in zip(items, layout))
    grads, start = [], 0
    for item, part in zip(items, layout):
        if part is None:
            grads.append(None)
            continue
        shape, axes = part
        length = shape[axes[axis]]
        block = np.take(g, np.arange(start, start + length), axis=axis)
        start = start + length
        if isinstance(item, slice):
            grads.append(None)
            continue
        grads.append(astype_grad(np.reshape(np.transpose(block, np.argsort(axes)),
                                            np.shape(item)), item))
    return tuple(grads)


@zero_in_zero_out("ts")
def index_join_tangent(ts, concatenator, items, out):
    """Tangent of ``np.r_[items]`` (or ``np.c_``): the items' tangents laid out as the items
    are (zeros for items without one), joined."""
    if zero_in(ts):
        return zero
    axis, layout = index_join_layout(concatenator, items)
    pieces = []
    for k, part in enumerate(layout):
        if part is None:
            continue
        shape, axes = part
        t = ts[k] if isinstance(ts, (tuple, list)) else ts
        if is_any_zero(t) or isinstance(items[k], slice):
            t = np.zeros(shape)
        elif np.ndim(t) == 0:
            t = np.full(shape, t)  # a number for every entry (arithmetic on the 0 gives one)
        pieces.append(np.transpose(np.reshape(t, shape), axes))
    return np.concatenate(pieces, axis=axis).astype(float_dtype(out), copy=False)


@adjoint(index_join_grads)  # linear in g: the transpose is the tangent
def _(out, g, concatenator, items):
    d[g] = index_join_tangent(d[out], concatenator, items, g)


@tangent(index_join_grads)
def _(out, g, concatenator, items):
    d[out] = summable(index_join_grads(d[g], concatenator, items))


@linear(index_join_tangent, wrt="ts")
@adjoint(index_join_tangent)  # linear in ts: the transpose is the gradient
def _(out, ts, concatenator, items, ans):
    d[ts] = index_join_grads(d[out], concatenator, items)


@transpose(r_)  # d[items] = index_join_grads(d[out], np.r_, items)
@tangent(r_)
def _(out, *items):
    """Items: arrays, numbers, slices (constants) and a first directive string
    (``"axis,ndmin,trans1d"``); not the matrix directives ``"r"``, ``"c"``."""
    d[out] = index_join_tangent(d[items], np.r_, items, out)


@transpose(c_)  # d[items] = index_join_grads(d[out], np.c_, items)
@tangent(c_)
def _(out, *items):
    """As ``np.r_``'s: along the last axis, 1-d items as columns."""
    d[out] = index_join_tangent(d[items], np.c_, items, out)



# ----- splitting ---------------------------------------------------------------------------


@zero_in_zero_out("gs")
def split_grad(gs, pieces, ary, axis=0):
    """Gradient of ``np.split`` and friends: the pieces' gradients joined again along ``axis``,
    zeros standing in for the pieces that received none."""
    if is_zero(gs):
        return zero
    dtype = np.result_type(ary, 1.0)
    parts = [np.zeros(np.shape(p), dtype=dtype) if is_zero(gp) else gp
             for gp, p in zip(gs, pieces)]
    return astype_grad(np.concatenate(parts, axis=axis), ary)


@linear(split_grad)
def _(out, gs, pieces, ary, axis=0):
    ...


def hsplit_axis(ary):
    return 1 if np.ndim(ary) > 1 else 0


nondifferentiable(hsplit_axis)


@linear(np.split, np.array_split)
@adjoint(np.split, np.array_split)
def _(out, ary, indices_or_sections, axis=0):
    d[ary] = split_grad(d[out], out, ary, axis)


@linear(np.hsplit)
@adjoint(np.hsplit)
def _(out, ary, indices_or_sections):
    d[ary] = split_grad(d[out], out, ary, hsplit_axis(ary))


@linear(np.vsplit)
@adjoint(np.vsplit)
def _(out, ary, indices_or_sections):
    d[ary] = split_grad(d[out], out, ary, 0)


@linear(np.dsplit)
@adjoint(np.dsplit)
def _(out, ary, indices_or_sections):
    d[ary] = split_grad(d[out], out, ary, 2)


@zero_in_zero_out("gs")
def unstack_grad(gs, pieces, x, axis=0):
    """Gradient of ``np.unstack``: the pieces' gradients stacked again along ``axis``."""
    if is_zero(gs):
        return zero
    dtype = np.result_type(x, 1.0)
    parts = [np.zeros(np.shape(p), dtype=dtype) if is_zero(gp) else gp
             for gp, p in zip(gs, pieces)]
    return astype_grad(np.stack(parts, axis=axis), x)


@linear(unstack_grad)
def _(out, gs, pieces, x, axis=0):
    ...


if hasattr(np, "unstack"):  # NumPy >= 2.1

    @linear(np.unstack)
    @adjoint(np.unstack)
    def _(out, x, *, axis=0):
        d[x] = unstack_grad(d[out], out, x, axis)



# ----- append, insert, delete, compress ------------------------------------------------------


@zero_in_zero_out("g")
def append_grads(g, arr, values, axis=None):
    """Gradients of ``np.append(arr, values, axis)``: ``g`` cut where ``values`` begin (both
    flattened when ``axis`` is None)."""
    if zero_in(g):
        return zero
    if axis is None:
        flat = np.ravel(g)
        size = np.size(arr)
        return (astype_grad(np.reshape(flat[:size], np.shape(arr)), arr),
                astype_grad(np.reshape(flat[size:], np.shape(values)), values))
    pieces = cut(g, [np.shape(arr)[axis]], axis)
    return (astype_grad(pieces[0], arr),
            astype_grad(np.reshape(pieces[1], np.shape(values)), values))


@zero_in_zero_out("t")
def append_tangent(t, arr, values, out, axis=None, wrt=0):
    """Tangent of ``np.append`` from ``arr`` (``wrt`` 0) or ``values`` (1): the tangent
    appended with zeros for the other."""
    if zero_in(t):
        return zero
    if wrt == 0:
        joined = np.append(np.broadcast_to(t, np.shape(arr)), np.zeros(np.shape(values)), axis)
    else:
        joined = np.append(np.zeros(np.shape(arr)), np.broadcast_to(t, np.shape(values)), axis)
    return as_array(joined).astype(float_dtype(out), copy=False)


# the tangent transposed in its tangent (@transpose reads it)
@transpose_of(append_tangent)
def _(ans, t, arr, values, out, axis=None, wrt=0):
    d[t] = append_grads(d[ans], arr, values, axis)[wrt]


@transpose(np.append)
@tangent(np.append)
def _(out, arr, values, axis=None):
    d[out] = append_tangent(d[arr], arr, values, out, axis, 0)
    d[out] = append_tangent(d[values], arr, values, out, axis, 1)


def kept_after_delete(arr, obj, axis=None):
    """The positions along ``axis`` (of the flattened ``arr`` for None) that ``np.delete`` keeps."""
    n = np.size(arr) if axis is None else np.shape(arr)[axis]
    return np.delete(np.arange(n), obj)


nondifferentiable(kept_after_delete)


@linear(np.delete)
@adjoint(np.delete)
def _(out, arr, obj, axis=None):
    d[arr] = take_grad(d[out], arr, kept_after_delete(arr, obj, axis), axis)


@linear(np.compress, wrt="a")
@adjoint(np.compress)
def _(ans, condition, a, axis=None, out=None):
    d[a] = take_grad(d[ans], a, np.flatnonzero(condition), axis)


def insert_sources(arr, obj, out, axis=None):
    """Along the axis ``np.insert`` works on (of the flattened ``arr`` for None): the positions
    of ``out`` holding ``arr``'s entries, and those holding the values inserted."""
    n = np.size(arr) if axis is None else np.shape(arr)[axis]
    added = np.size(out) - n if axis is None else np.shape(out)[axis] - n
    marked = np.insert(np.arange(n), obj, np.full(added, -1))
    return np.flatnonzero(marked >= 0), np.flatnonzero(marked < 0)


def inserted_shape(arr, obj, values, axis=None):
    """The shape NumPy gives ``values`` before broadcasting them into the places inserted:
    at least ``arr``'s dimensions (flattened for None), the first moved to ``axis`` for a
    single ``obj``."""
    shape = np.shape(np.array(values, ndmin=1 if axis is None else np.ndim(arr)))
    if np.ndim(obj) == 0:
        shape = np.shape(np.moveaxis(np.empty(shape), 0, 0 if axis is None else axis))
    return shape


nondifferentiable(insert_sources, inserted_shape)


def sum_to_shape(g, shape):
    """``g`` summed down to ``shape``, which broadcasts to it."""
    g = np.sum(g, axis=tuple(range(np.ndim(g) - len(shape))))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and np.shape(g)[i] != 1)
    return np.sum(g, axis=axes, keepdims=True) if axes else g


@zero_in_zero_out("g")
def insert_grads(g, arr, obj, values, out, axis=None):
    """Gradients of ``np.insert(arr, obj, values, axis)``: ``arr`` gets the entries of ``g`` it
    was copied to; ``values`` those it was broadcast to, summed back to its shape."""
    if zero_in(g):
        return zero
    sources = insert_sources(arr, obj, out, axis)
    flat_axis = 0 if axis is None else axis
    g_arr = np.take(g, sources[0], axis=flat_axis)
    g_values = sum_to_shape(np.take(g, sources[1], axis=flat_axis),
                            inserted_shape(arr, obj, values, axis))
    if np.ndim(obj) == 0:
        g_values = np.moveaxis(g_values, flat_axis, 0)
    return (astype_grad(np.reshape(g_arr, np.shape(arr)), arr),
            astype_grad(np.reshape(g_values, np.shape(values)), values))


@zero_in_zero_out("t")
def insert_tangent(t, arr, obj, values, out, axis=None, wrt=0):
    """Tangent of ``np.insert`` from ``arr`` (``wrt`` 0) or ``values`` (1): the insertion with
    zeros for the other."""
    if zero_in(t):
        return zero
    if wrt == 0:
        joined = np.insert(np.broadcast_to(t, np.shape(arr)), obj, np.zeros(np.shape(values)),
                           axis)
    else:
        joined = np.insert(np.zeros(np.shape(arr)), obj, np.broadcast_to(t, np.shape(values)),
                           axis)
    return as_array(joined).astype(float_dtype(out), copy=False)


# the tangent transposed in its tangent (@transpose reads it)
@transpose_of(insert_tangent)
def _(ans, t, arr, obj, values, out, axis=None, wrt=0):
    d[t] = insert_grads(d[ans], arr, obj, values, out, axis)[wrt]


@transpose(np.insert)
@tangent(np.insert)
def _(out, arr, obj, values, axis=None):
    d[out] = insert_tangent(d[arr], arr, obj, values, out, axis, 0)
    d[out] = insert_tangent(d[values], arr, obj, values, out, axis, 1)



# ----- block ---------------------------------------------------------------------------------


def block_depth(arrays):
    """How deeply ``np.block``'s argument nests its lists."""
    depth = 0
    while isinstance(arrays, list):
        depth += 1
        arrays = arrays[0]
    return depth


def block_ndim(arrays):
    """The number of dimensions of ``np.block(arrays)``."""
    if isinstance(arrays, list):
        return max(block_ndim(item) for item in arrays)
    return np.ndim(arrays)


def block_extents(arrays, axis, ndim):
    """The length along ``axis`` of each item of a list ``np.block`` joins there."""
    extents = []
    for item in arrays:
        shape = np.shape(np.block(block_zeros(item))) if isinstance(item, list) else \
            np.shape(item)
        shape = (1,) * (ndim - len(shape)) + tuple(shape)
        extents.append(shape[axis])
    return extents


def block_zeros(arrays):
    """Zeros nested and shaped as ``arrays``."""
    if isinstance(arrays, list):
        return [block_zeros(item) for item in arrays]
    return np.zeros(np.shape(arrays))


nondifferentiable(block_depth, block_ndim, block_extents, block_zeros)


@zero_in_zero_out("g")
def block_grads(g, arrays):
    """Gradients of ``np.block(arrays)``, nested as ``arrays``: a list at depth ``k`` from the
    innermost joins its items along axis ``-k``, so ``g`` is split there (``block_grads_at``)."""
    if zero_in(g):
        return zero
    if not isinstance(arrays, list):
        return astype_grad(np.reshape(g, np.shape(arrays)), arrays)
    return block_grads_at(g, arrays, -block_depth(arrays))


def block_grads_at(g, arrays, axis):
    """Gradients of one list of ``np.block``'s argument, joined along ``axis`` (negative)."""
    extents = block_extents(arrays, axis, np.ndim(g))
    pieces = cut(g, np.cumsum(extents)[:-1], axis)
    grads = []
    for piece, item in zip(pieces, arrays):
        if isinstance(item, list):
            grads.append(block_grads_at(piece, item, axis + 1))
        else:
            grads.append(astype_grad(np.reshape(piece, np.shape(item)), item))
    return grads


@adjoint(np.block)
def _(out, arrays):
    d[arrays] = block_grads(d[out], arrays)


@zero_in_zero_out("ts")
def block_tangents(ts, arrays):
    """The tangents of ``np.block``'s nested arrays, zeros where one has none (arrays, not the
    symbolic zero: ``np.block`` reads each one's shape)."""
    if isinstance(arrays, list):
        if is_zero(ts):
            ts = [zero] * len(arrays)
        return [block_tangents(t, item) for t, item in zip(ts, arrays)]
    return np.zeros(np.shape(arrays)) if is_zero(ts) else np.broadcast_to(ts, np.shape(arrays))


@tangent(np.block)
def _(out, arrays):
    d[out] = as_dtype_of(np.block(block_tangents(d[arrays], arrays)), out)
