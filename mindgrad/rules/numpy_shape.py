"""Rules for NumPy's shape, joining, splitting, reordering and indexing functions, both
directions: each function's adjoint with its tangent (forward mode) beside it.

All of these are linear maps that move elements around: each gradient moves ``d[out]`` back,
and the tangent is the same function of the input's tangent, which ``@linear`` derives from the
adjoint template's signature. Hand-written tangents remain where that derived call would compute
something else: the function is not linear in its array (``sort``, ``pad``), takes a list of
arrays (``concatenate``, ``meshgrid``: a list of tangents with 0 for arrays without one) or
``*args``, has an ``out`` parameter the call would pass on (``take``, ``trace``), or is a method
a number tangent or the symbolic 0 lacks (``.ravel()``, ``.squeeze()``, ``.repeat()``).
Functions returning a list (``split``) receive a list ``d[out]`` whose unused entries are 0.

The helpers the adjoints call (``transpose_grad``, ``take_grad``, ...) are linear in the gradient
``g``; forward mode over reverse-mode code (Hessian-vector products) differentiates them too.
Their tangent is derived by ``@linear`` on a template with the helper's signature and no body.
"""

import numpy as np

from mindgrad.rules import (
    adjoint,
    adjoint_attr,
    adjoint_method,
    d,
    indexed_as_call,
    linear,
    linear_attr,
    linear_in,
    linear_method,
    nondifferentiable,
    tangent,
    tangent_method,
)
from mindgrad.rules.numpy_elementwise import array_grad, astype_grad
from mindgrad.runtime import is_zero, takes_zero, unbroadcast
from mindgrad.runtime.tangents import TangentTuple, float_dtype, summable


def normalize_axis(axis, ndim):
    return int(axis) % max(ndim, 1)


# ----- reshaping ---------------------------------------------------------------------------
# NumPy reads an array for reshape and ravel in the order asked; "A" and "K" depend on how the
# array is laid out in memory, which its gradient or tangent need not share: the helpers read
# those in the order NumPy read the array itself.


def _layout_indices(a):
    """The flat (C-order) indices of ``a``'s elements in the order ``ravel(a, "K")`` reads
    them: memory order."""
    layout = np.empty_like(np.asarray(a), dtype=np.intp)  # a's memory layout, as "K" reads it
    layout[...] = np.reshape(np.arange(layout.size), layout.shape)
    return np.ravel(layout, order="K")


def read_order(a, order):
    """The order, "C" or "F", in which NumPy reads ``a`` for ``order``; None for "K" on an
    array laid out in neither."""
    if order in ("C", "F"):
        return order
    a = np.asarray(a)
    if order == "A":
        return "F" if np.isfortran(a) else "C"
    if a.flags.c_contiguous:
        return "C"
    return "F" if a.flags.f_contiguous else None


@linear_in("g", keeps_values=True)
def reshape_grad(g, a, order="C"):
    """Gradient of ``np.reshape(a, ..., order)`` or ``np.ravel(a, order)``: ``g`` laid back
    in ``a``'s shape in the order NumPy read ``a``."""
    how = read_order(a, order)
    if how is not None:
        return np.reshape(g, np.shape(a), order=how)
    grad = np.empty(np.size(a), np.result_type(g, float))
    grad[_layout_indices(a)] = np.ravel(g)
    return np.reshape(grad, np.shape(a))


@linear_in("t", keeps_values=True)
def reshape_tangent(t, a, out, order="C"):
    """Tangent of ``out = np.reshape(a, ..., order)`` (or ``np.ravel``): ``t`` read in the
    order NumPy read ``a``."""
    how = read_order(a, order)
    if how is not None:
        return np.reshape(t, np.shape(out), order=how)
    flat = np.ravel(np.broadcast_to(t, np.shape(a)))
    return np.reshape(flat[_layout_indices(a)], np.shape(out))


@adjoint(reshape_grad)
def _(out, g, a, order="C"):
    d[g] = reshape_tangent(d[out], a, g, order)


@adjoint(reshape_tangent)
def _(ans, t, a, out, order="C"):
    d[t] = reshape_grad(d[ans], a, order)


nondifferentiable(read_order, _layout_indices)


@adjoint(np.reshape)
def _(out, a, shape=None, order="C", *, copy=None):
    d[a] = reshape_grad(d[out], a, order)


@tangent(np.reshape)
def _(out, a, shape=None, order="C", *, copy=None):
    d[out] = reshape_tangent(d[a], a, out, order)


@adjoint_method("ravel", "flatten")
@adjoint(np.ravel)
def _(out, a, order="C"):
    d[a] = reshape_grad(d[out], a, order)


@tangent_method("ravel", "flatten")
@tangent(np.ravel)
def _(out, a, order="C"):
    d[out] = reshape_tangent(d[a], a, out, order)


@linear(np.expand_dims, np.squeeze)
@adjoint_method("squeeze")
@adjoint(np.expand_dims, np.squeeze)
def _(out, a, axis=None):
    d[a] = np.reshape(d[out], np.shape(a))


@tangent_method("squeeze")  # a number tangent (or the symbolic 0) has no .squeeze()
def _(out, a, axis=None):
    d[out] = np.reshape(d[a], np.shape(out))


@adjoint(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def _(out, *arys):
    d[arys] = atleast_grads(d[out], arys)


def atleast_grads(g, arys):
    """Gradients of ``np.atleast_Nd(*arys)``: one array back for one input, else a tuple."""
    gs = (g,) if len(arys) == 1 else g
    return tuple(0 if is_zero(gi) else np.reshape(gi, np.shape(x)) for gi, x in zip(gs, arys))


@linear(atleast_grads)
def _(out, g, arys):
    ...


def atleast_tangent(ts, arys, out):
    """Tangent of ``np.atleast_Nd(*arys)``: each tangent reshaped like its result (one array for
    one input, else a tuple with 0 for inputs without tangent)."""
    if len(arys) == 1:
        return np.reshape(ts[0], np.shape(out))
    return TangentTuple(0 if is_zero(t) else np.reshape(t, np.shape(o)) for t, o in zip(ts, out))


@tangent(np.atleast_1d, np.atleast_2d, np.atleast_3d)  # *arys: @linear takes no *args
def _(out, *arys):
    d[out] = atleast_tangent(d[arys], arys, out)


@linear(np.broadcast_to)
@adjoint(np.broadcast_to)
def _(out, array, shape, subok=False):
    d[array] = unbroadcast(d[out], array)


# ----- transposing -------------------------------------------------------------------------


@takes_zero
def transpose_grad(g, axes=None):
    """Gradient of ``np.transpose(a, axes)``: the inverse permutation applied to ``g``."""
    if is_zero(g):
        return 0
    if axes is None:
        return np.transpose(g)
    inverse = np.argsort([normalize_axis(a, len(axes)) for a in axes])
    return np.transpose(g, inverse)


@linear(transpose_grad)
def _(out, g, axes=None):
    ...


@linear(np.transpose)
@adjoint(np.transpose)
def _(out, a, axes=None):
    d[a] = transpose_grad(d[out], axes)


@linear_method("swapaxes")
@linear(np.swapaxes)
@adjoint_method("swapaxes")
@adjoint(np.swapaxes)
def _(out, a, axis1, axis2):
    d[a] = np.swapaxes(d[out], axis1, axis2)


@linear(np.moveaxis)
@adjoint(np.moveaxis)
def _(out, a, source, destination):
    d[a] = np.moveaxis(d[out], destination, source)


if hasattr(np, "matrix_transpose"):  # NumPy >= 2.0

    @linear_attr("mT")
    @linear(np.matrix_transpose)
    @adjoint_attr("mT")
    @adjoint(np.matrix_transpose)
    def _(out, x):
        d[x] = np.swapaxes(d[out], -1, -2)


# ----- joining -----------------------------------------------------------------------------
# A join's tangent is the same join of its arrays' tangents, zeros standing in for the arrays
# without one, in the output's dtype: join_tangent, whose adjoint is the join's own gradient.


def split_along(g, arrays, axis):
    """``g`` cut along ``axis`` into pieces as long as each of ``arrays`` is on that axis."""
    sizes = [np.shape(x)[axis] for x in arrays]
    return np.split(g, np.cumsum(sizes)[:-1], axis=axis)


def concatenate_grad(g, arrays, axis=0):
    """Gradient of ``np.concatenate``: one slice of ``g`` per input (axis None: flattened)."""
    if axis is None:
        pieces = split_along(np.ravel(g), [np.ravel(x) for x in arrays], 0)
    else:
        pieces = split_along(g, arrays, axis)
    return [astype_grad(np.reshape(p, np.shape(x)), x) for p, x in zip(pieces, arrays)]


def stack_grad(g, arrays, axis=0):
    """Gradient of ``np.stack``: the input's slice of ``g`` along the new axis."""
    return [astype_grad(np.take(g, i, axis=axis), x) for i, x in enumerate(arrays)]


@linear(concatenate_grad, stack_grad)
def _(out, g, arrays, axis=0):
    ...


def hstack_grad(g, tup):
    """Gradient of ``np.hstack``: concatenation of the 1-d views along axis 1 (0 for vectors)."""
    views = [np.atleast_1d(x) for x in tup]
    pieces = split_along(g, views, 0 if views[0].ndim == 1 else 1)
    return [astype_grad(np.reshape(p, np.shape(x)), x) for p, x in zip(pieces, tup)]


def vstack_grad(g, tup):
    """Gradient of ``np.vstack``: concatenation of the 2-d views along axis 0."""
    pieces = split_along(g, [np.atleast_2d(x) for x in tup], 0)
    return [astype_grad(np.reshape(p, np.shape(x)), x) for p, x in zip(pieces, tup)]


def dstack_grad(g, tup):
    """Gradient of ``np.dstack``: concatenation of the 3-d views along axis 2."""
    pieces = split_along(g, [np.atleast_3d(x) for x in tup], 2)
    return [astype_grad(np.reshape(p, np.shape(x)), x) for p, x in zip(pieces, tup)]


def column_stack_grad(g, tup):
    """Gradient of ``np.column_stack``: vectors became columns, matrices joined along axis 1."""
    views = [np.reshape(x, (-1, 1)) if np.ndim(x) < 2 else x for x in tup]
    pieces = split_along(g, views, 1)
    return [astype_grad(np.reshape(p, np.shape(x)), x) for p, x in zip(pieces, tup)]


@linear(hstack_grad, vstack_grad, dstack_grad, column_stack_grad)
def _(out, g, tup):
    ...


def filled_tangents(ts, xs, dtype):
    """The tangents ``ts`` of the arrays ``xs``, with zeros of each one's shape for 0."""
    return [np.zeros(np.shape(x), dtype) if is_zero(t) else t for t, x in zip(ts, xs)]


def join_tangent(join, ts, xs, out, axis=0):
    """Tangent of a joining function ``join(xs[, axis])``: the same join of the tangents, in
    the output's dtype (``axis`` is given to ``np.concatenate`` and ``np.stack`` only)."""
    dtype = float_dtype(out)
    filled = filled_tangents(ts, xs, dtype)
    joined = join(filled, axis) if join in (np.concatenate, np.stack) else join(filled)
    return np.asarray(joined).astype(dtype, copy=False)


def join_tangent_adjoint(g, join, xs, axis=0):
    """Adjoint of ``join_tangent(join, ts, xs, out, axis)`` for ``ts`` (reverse over forward):
    the join's own gradient, which takes ``g`` apart into the pieces."""
    if is_zero(g):
        return 0
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
@adjoint(join_tangent)
def _(out, join, ts, xs, joined, axis=0):
    d[ts] = join_tangent_adjoint(d[out], join, xs, axis)


@adjoint(np.concatenate)
def _(ans, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    d[arrays] = concatenate_grad(d[ans], arrays, axis)


@tangent(np.concatenate)
def _(ans, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    d[ans] = join_tangent(np.concatenate, d[arrays], arrays, ans, axis)


@adjoint(np.stack)
def _(ans, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    d[arrays] = stack_grad(d[ans], arrays, axis)


@tangent(np.stack)
def _(ans, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    d[ans] = join_tangent(np.stack, d[arrays], arrays, ans, axis)


@adjoint(np.hstack)
def _(out, tup, *, dtype=None, casting="same_kind"):
    d[tup] = hstack_grad(d[out], tup)


@tangent(np.hstack)
def _(out, tup, *, dtype=None, casting="same_kind"):
    d[out] = join_tangent(np.hstack, d[tup], tup, out)


# np.row_stack: vstack under its older name (deprecated in NumPy 2.0, a function of its own)
VSTACK = (np.vstack,) + tuple(fn for fn in (getattr(np, "row_stack", None),)
                              if fn is not None and fn is not np.vstack)


@adjoint(*VSTACK)
def _(out, tup, *, dtype=None, casting="same_kind"):
    d[tup] = vstack_grad(d[out], tup)


@tangent(*VSTACK)
def _(out, tup, *, dtype=None, casting="same_kind"):
    d[out] = join_tangent(np.vstack, d[tup], tup, out)


@adjoint(np.dstack)
def _(out, tup):
    d[tup] = dstack_grad(d[out], tup)


@tangent(np.dstack)
def _(out, tup):
    d[out] = join_tangent(np.dstack, d[tup], tup, out)


@adjoint(np.column_stack)
def _(out, tup):
    d[tup] = column_stack_grad(d[out], tup)


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
        return 0
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


def index_join_grads(g, concatenator, items):
    """Gradients of ``np.r_[items]`` (or ``np.c_``), one per item (None for a directive or a
    slice): each item's block of ``g`` along the joined axis, transposed back and reshaped
    to the item's shape."""
    axis, layout = index_join_layout(concatenator, items)
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


def index_join_tangent(ts, concatenator, items, out):
    """Tangent of ``np.r_[items]`` (or ``np.c_``): the items' tangents laid out as the items
    are (zeros for items without one), joined."""
    axis, layout = index_join_layout(concatenator, items)
    pieces = []
    for k, part in enumerate(layout):
        if part is None:
            continue
        shape, axes = part
        t = ts[k] if isinstance(ts, (tuple, list)) else ts
        if is_zero(t) or isinstance(items[k], slice):
            t = np.zeros(shape)
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


@adjoint(r_)
def _(out, *items):
    """Items: arrays, numbers, slices (constants) and a first directive string
    (``"axis,ndmin,trans1d"``); not the matrix directives ``"r"``, ``"c"``."""
    d[items] = index_join_grads(d[out], np.r_, items)


@tangent(r_)
def _(out, *items):
    d[out] = index_join_tangent(d[items], np.r_, items, out)


@adjoint(c_)
def _(out, *items):
    """As ``np.r_``'s: along the last axis, 1-d items as columns."""
    d[items] = index_join_grads(d[out], np.c_, items)


@tangent(c_)
def _(out, *items):
    d[out] = index_join_tangent(d[items], np.c_, items, out)


# ----- splitting ---------------------------------------------------------------------------


def split_grad(gs, pieces, ary, axis=0):
    """Gradient of ``np.split`` and friends: the pieces' gradients joined again along ``axis``,
    zeros standing in for the pieces that received none."""
    if is_zero(gs):
        return 0
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


def unstack_grad(gs, pieces, x, axis=0):
    """Gradient of ``np.unstack``: the pieces' gradients stacked again along ``axis``."""
    if is_zero(gs):
        return 0
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


# ----- repeating ---------------------------------------------------------------------------


def tile_grad(g, A, reps):
    """Gradient of ``np.tile``: the tiles of ``g`` summed onto one another."""
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    ndim = max(np.ndim(A), len(reps))
    shape = (1,) * (ndim - np.ndim(A)) + np.shape(A)
    reps = (1,) * (ndim - len(reps)) + reps
    interleaved = [n for pair in zip(reps, shape) for n in pair]
    grad = np.sum(np.reshape(g, interleaved), axis=tuple(range(0, 2 * ndim, 2)))
    return np.reshape(grad, np.shape(A))


@linear(tile_grad)
def _(out, g, A, reps):
    ...


@linear(np.tile)
@adjoint(np.tile)
def _(out, A, reps):
    d[A] = tile_grad(d[out], A, reps)


def repeat_grad(g, a, repeats, axis=None):
    """Gradient of ``np.repeat``: the copies of each element summed back onto it."""
    x = np.asarray(a)
    if axis is None:
        x, g, axis = x.ravel(), np.ravel(g), 0
    axis = normalize_axis(axis, x.ndim)
    source = np.repeat(np.arange(x.shape[axis]), repeats)
    moved = np.moveaxis(np.asarray(g), axis, 0)
    grad = np.zeros((x.shape[axis],) + moved.shape[1:], dtype=moved.dtype)
    np.add.at(grad, source, moved)
    return astype_grad(np.reshape(np.moveaxis(grad, 0, axis), np.shape(a)), a)


@linear(repeat_grad)
def _(out, g, a, repeats, axis=None):
    ...


@linear(np.repeat)
@adjoint_method("repeat")
@adjoint(np.repeat)
def _(out, a, repeats, axis=None):
    d[a] = repeat_grad(d[out], a, repeats, axis)


@tangent_method("repeat")  # a number tangent (or the symbolic 0) has no .repeat()
def _(out, a, repeats, axis=None):
    d[out] = np.repeat(d[a], repeats, axis)


# ----- reordering --------------------------------------------------------------------------


@linear(np.flip)
@adjoint(np.flip)
def _(out, m, axis=None):
    d[m] = np.flip(d[out], axis)


@linear(np.fliplr)
@adjoint(np.fliplr)
def _(out, m):
    d[m] = np.fliplr(d[out])


@linear(np.flipud)
@adjoint(np.flipud)
def _(out, m):
    d[m] = np.flipud(d[out])


@linear(np.roll)
@adjoint(np.roll)
def _(out, a, shift, axis=None):
    d[a] = np.roll(d[out], np.negative(shift), axis)


@linear(np.rot90)
@adjoint(np.rot90)
def _(out, m, k=1, axes=(0, 1)):
    d[m] = np.rot90(d[out], -k, axes)


def sort_grad(g, a, axis=-1, kind=None):
    """Gradient of ``np.sort``: ``g`` sent back through the sorting permutation."""
    x = np.asarray(a)
    if axis is None:
        x, axis = x.ravel(), -1
    order = np.argsort(x, axis=axis, kind="stable")
    grad = np.zeros(x.shape, dtype=np.result_type(g, x, 1.0))
    np.put_along_axis(grad, order, g, axis=axis)
    return astype_grad(np.reshape(grad, np.shape(a)), a)


@linear(sort_grad)  # the permutation is piecewise constant in a
def _(out, g, a, axis=-1, kind=None):
    ...


def sort_tangent(t, a, axis=-1):
    """Tangent of ``np.sort``: ``t`` gathered through the sorting permutation."""
    x = np.asarray(a)
    t = np.broadcast_to(t, x.shape)
    if axis is None:
        x, t, axis = x.ravel(), t.ravel(), -1
    order = np.argsort(x, axis=axis, kind="stable")
    return np.take_along_axis(t, order, axis=axis)


@adjoint(np.sort)
def _(out, a, axis=-1, kind=None, order=None, *, stable=None):
    d[a] = sort_grad(d[out], a, axis, kind)


@tangent(np.sort)
def _(out, a, axis=-1, kind=None, order=None, *, stable=None):
    d[out] = sort_tangent(d[a], a, axis)


@adjoint(np.sort_complex)  # sorted by real part, then imaginary part
def _(out, a):
    d[a] = sort_grad(d[out], a, -1)


@tangent(np.sort_complex)
def _(out, a):
    d[out] = np.asarray(sort_tangent(d[a], a, -1), dtype=out.dtype)


def trim_zeros_region(filt, trim="fb", axis=None):
    """The slices ``np.trim_zeros(filt, trim, axis)`` keeps: along each trimmed axis, from the
    first to the last index holding a nonzero value (none when all are zero); a constant."""
    x = np.asarray(filt)
    axes = range(x.ndim) if axis is None else \
        [normalize_axis(a, x.ndim) for a in np.atleast_1d(axis)]
    region = [slice(None)] * x.ndim
    for ax in axes:
        others = tuple(i for i in range(x.ndim) if i != ax)
        kept = np.flatnonzero(np.any(x != 0, axis=others))
        start = int(kept[0]) if kept.size and "f" in trim.lower() else 0
        stop = int(kept[-1]) + 1 if kept.size and "b" in trim.lower() else x.shape[ax]
        region[ax] = slice(start, stop) if kept.size else slice(0, 0)
    expected = np.shape(np.trim_zeros(filt, trim) if axis is None else
                        np.trim_zeros(filt, trim, axis))
    if np.shape(x[tuple(region)]) != expected:
        raise NotImplementedError(f"np.trim_zeros(trim={trim!r}, axis={axis!r}) kept a range "
                                  "its gradient rule does not reproduce")
    return tuple(region)


nondifferentiable(trim_zeros_region)


def trim_zeros_grad(g, filt, trim="fb", axis=None):
    """Gradient of ``np.trim_zeros``: ``g`` put back in the kept range, 0 for what was trimmed."""
    grad = np.zeros(np.shape(filt), np.result_type(np.asarray(filt), 1.0))
    grad[trim_zeros_region(filt, trim, axis)] = np.asarray(g)
    return array_grad(grad, filt) if isinstance(filt, (list, tuple)) else astype_grad(grad, filt)


@linear(trim_zeros_grad)
def _(out, g, filt, trim="fb", axis=None):
    ...


def trim_zeros_tangent(t, filt, out, trim="fb", axis=None):
    """Tangent of ``np.trim_zeros``: ``t`` in the kept range (a list for a list)."""
    kept = np.broadcast_to(t, np.shape(filt))[trim_zeros_region(filt, trim, axis)]
    return list(kept) if isinstance(out, list) else kept


@adjoint(np.trim_zeros)
def _(out, filt, trim="fb", axis=None):
    """The kept range is a constant (where the values are zero)."""
    d[filt] = trim_zeros_grad(d[out], filt, trim, axis)


@tangent(np.trim_zeros)
def _(out, filt, trim="fb", axis=None):
    d[out] = trim_zeros_tangent(d[filt], filt, out, trim, axis)


# ----- diagonals and triangles -------------------------------------------------------------


@takes_zero
def diagonal_grad(g, a, offset=0, axis1=0, axis2=1):
    """Gradient of ``np.diagonal``: ``g`` written on the diagonal of a zero array like ``a``."""
    if is_zero(g):
        return 0
    grad = np.zeros(np.shape(a), dtype=np.result_type(g, a, 1.0))
    view = np.moveaxis(grad, (axis1, axis2), (-2, -1))  # a view: writes land in grad
    steps = np.arange(np.shape(g)[-1])
    view[..., steps + max(-offset, 0), steps + max(offset, 0)] = g
    return astype_grad(grad, a)


@takes_zero
def diag_grad(g, v, k=0):
    """Gradient of ``np.diag``: a vector became a matrix (take its diagonal back) or a matrix's
    diagonal was taken (put it back in place)."""
    if is_zero(g):
        return 0
    if np.ndim(v) == 1:
        return astype_grad(np.diagonal(g, k), v)
    return diagonal_grad(g, v, k, 0, 1)


@takes_zero
def trace_grad(g, a, offset=0, axis1=0, axis2=1):
    """Gradient of ``np.trace``: ``g`` on every element of the summed diagonal."""
    if is_zero(g):
        return 0
    length = np.diagonal(a, offset, axis1, axis2).shape[-1]
    along = np.broadcast_to(np.expand_dims(g, -1), np.shape(g) + (length,))
    return diagonal_grad(along, a, offset, axis1, axis2)


@linear(diagonal_grad, trace_grad)
def _(out, g, a, offset=0, axis1=0, axis2=1):
    ...


@linear(diag_grad)
def _(out, g, v, k=0):
    ...


@linear(np.diag)
@adjoint(np.diag)
def _(out, v, k=0):
    d[v] = diag_grad(d[out], v, k)


@linear_method("diagonal")
@linear(np.diagonal)
@adjoint_method("diagonal")
@adjoint(np.diagonal)
def _(out, a, offset=0, axis1=0, axis2=1):
    d[a] = diagonal_grad(d[out], a, offset, axis1, axis2)


@adjoint_method("trace")
@adjoint(np.trace)
def _(ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d[a] = trace_grad(d[ans], a, offset, axis1, axis2)


@tangent_method("trace")  # linear, but the derived call would pass a positional out= on
@tangent(np.trace)
def _(ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d[ans] = np.trace(d[a], offset, axis1, axis2, dtype)


@linear(np.triu)
@adjoint(np.triu)
def _(out, m, k=0):
    d[m] = unbroadcast(np.triu(d[out], k), m)


@linear(np.tril)
@adjoint(np.tril)
def _(out, m, k=0):
    d[m] = unbroadcast(np.tril(d[out], k), m)


# ----- indexing ----------------------------------------------------------------------------


def take_indices(indices, n, mode="raise"):
    """The indices ``np.take`` reads along an axis of length ``n``, after its ``mode``."""
    index = np.asarray(indices)
    if mode == "clip":
        return np.clip(index, 0, n - 1)
    if mode == "wrap":
        return np.mod(index, n)
    return index


@takes_zero
def take_grad(g, a, indices, axis=None, mode="raise"):
    """Gradient of ``np.take``: ``g`` added back at the indices (repeats accumulate)."""
    if is_zero(g):
        return 0
    x = np.asarray(a)
    grad = np.zeros(x.size if axis is None else x.shape, dtype=np.result_type(g, x, 1.0))
    axis = 0 if axis is None else normalize_axis(axis, x.ndim)
    n = grad.shape[axis]
    index = take_indices(indices, n, mode)
    moved_g = np.moveaxis(np.asarray(g), tuple(range(axis, axis + index.ndim)),
                          tuple(range(index.ndim)))
    np.add.at(np.moveaxis(grad, axis, 0), index, moved_g)
    return astype_grad(np.reshape(grad, x.shape), a)


@linear(take_grad)
def _(out, g, a, indices, axis=None, mode="raise"):
    ...


@adjoint_method("take")
@adjoint(np.take)
def _(ans, a, indices, axis=None, out=None, mode="raise"):
    d[a] = take_grad(d[ans], a, indices, axis, mode)


@tangent_method("take")  # linear, but the derived call would pass a positional out= on
@tangent(np.take)
def _(ans, a, indices, axis=None, out=None, mode="raise"):
    d[ans] = np.take(d[a], indices, axis, None, mode)


@takes_zero
def take_along_axis_grad(g, arr, indices, axis=-1):
    """Gradient of ``np.take_along_axis``: ``g`` added back at the indices along ``axis``."""
    if is_zero(g):
        return 0
    x = np.asarray(arr)
    if axis is None:
        x, axis = x.ravel(), 0
    axis = normalize_axis(axis, x.ndim)
    grad = np.zeros(x.shape, dtype=np.result_type(g, x, 1.0))
    index = np.broadcast_to(indices, np.shape(g))
    spots = list(np.indices(index.shape, sparse=True))
    spots[axis] = index
    np.add.at(grad, tuple(spots), g)
    return astype_grad(np.reshape(grad, np.shape(arr)), arr)


@linear(take_along_axis_grad)
def _(out, g, arr, indices, axis=-1):
    ...


@linear(np.take_along_axis)
@adjoint(np.take_along_axis)
def _(out, arr, indices, axis=-1):
    d[arr] = take_along_axis_grad(d[out], arr, indices, axis)


# ----- padding -----------------------------------------------------------------------------

PAD_MODES_BY_INDEX = ("constant", "edge", "reflect", "symmetric", "wrap")


def pad_grad(g, array, pad_width, mode="constant", reflect_type="even"):
    """Gradient of ``np.pad`` for the modes that copy elements: pad an array of element numbers
    the same way, then add each element of ``g`` back to the element it was copied from."""
    if mode not in PAD_MODES_BY_INDEX or reflect_type != "even":
        raise NotImplementedError(
            f"np.pad(mode={mode!r}, reflect_type={reflect_type!r}) has no gradient rule; the "
            f"modes {', '.join(PAD_MODES_BY_INDEX)} (reflect_type='even') have one")
    x = np.asarray(array)
    numbers = np.arange(x.size).reshape(x.shape)
    if mode == "constant":
        source = np.pad(numbers, pad_width, mode, constant_values=-1)
    else:
        source = np.pad(numbers, pad_width, mode)
    copied = source >= 0
    grad = np.zeros(x.size, dtype=np.result_type(g, x, 1.0))
    np.add.at(grad, source[copied], np.asarray(g)[copied])
    return astype_grad(grad.reshape(x.shape), array)


@linear(pad_grad)
def _(out, g, array, pad_width, mode="constant", reflect_type="even"):
    ...


def pad_tangent(t, array, pad_width, mode="constant", stat_length=None, reflect_type="even"):
    """Tangent of ``np.pad`` from ``array``: the same padding of ``t`` for the modes that are
    linear in the array (constant values and end values have tangent 0 here)."""
    if callable(mode) or mode in ("maximum", "minimum", "median"):
        raise NotImplementedError(f"np.pad(mode={mode!r}) has no tangent rule; the modes "
                                  "constant, edge, reflect, symmetric, wrap, linear_ramp, mean "
                                  "and empty have one")
    t = np.broadcast_to(t, np.shape(array))
    if mode == "mean":
        return np.pad(t, pad_width, mode, stat_length=stat_length)
    if mode in ("reflect", "symmetric"):
        return np.pad(t, pad_width, mode, reflect_type=reflect_type)
    if mode == "empty":
        mode = "constant"
    return np.pad(t, pad_width, mode)  # constant / linear_ramp: values and end values 0


def pad_constant_tangent(t, array, pad_width, mode="constant"):
    """Tangent of ``np.pad(..., constant_values=c)`` from ``c``: ``t`` in the padding."""
    if is_zero(t):
        return 0
    if mode != "constant":
        return np.zeros(np.shape(np.pad(np.asarray(array), pad_width, "constant")))
    zeros = np.zeros(np.shape(array), dtype=np.result_type(t, 1.0))
    return np.pad(zeros, pad_width, "constant", constant_values=t)


@adjoint(np.pad)
def _(out, array, pad_width, mode="constant", *, stat_length=None, constant_values=0,
      end_values=0, reflect_type="even"):
    d[array] = pad_grad(d[out], array, pad_width, mode, reflect_type)


@tangent(np.pad)
def _(out, array, pad_width, mode="constant", *, stat_length=None, constant_values=0,
      end_values=0, reflect_type="even"):
    d[out] = pad_tangent(d[array], array, pad_width, mode, stat_length, reflect_type)
    d[out] = pad_constant_tangent(d[constant_values], array, pad_width, mode)


# ----- differences -------------------------------------------------------------------------


def diff_grads(g, a, n=1, axis=-1, prepend=None, append=None):
    """Gradients of ``np.diff(a, n, axis, prepend, append)`` for ``(a, prepend, append)``: each
    difference ``y[i] = x[i+1] - x[i]`` sends ``g[i]`` to ``x[i+1]`` and ``-g[i]`` to ``x[i]``."""
    if is_zero(g):
        return 0, 0, 0
    x = np.asarray(a)
    axis = normalize_axis(axis, x.ndim)
    grad = np.asarray(g)
    for _ in range(n):
        shape = list(grad.shape)
        shape[axis] = 1
        edge = np.zeros(shape, dtype=grad.dtype)
        grad = np.concatenate([edge, grad], axis) - np.concatenate([grad, edge], axis)
    lengths = [0 if p is None else (np.shape(p)[axis] if np.ndim(p) else 1)
               for p in (prepend, append)]
    cut = np.split(grad, [lengths[0], grad.shape[axis] - lengths[1]], axis=axis)
    g_prepend = 0 if prepend is None else unbroadcast(cut[0], prepend)
    g_append = 0 if append is None else unbroadcast(cut[2], append)
    return astype_grad(cut[1], a), g_prepend, g_append


@tangent(diff_grads)  # linear in g; a tuple of tangents adds element by element
def _(out, g, a, n=1, axis=-1, prepend=None, append=None):
    d[out] = summable(diff_grads(d[g], a, n, axis, prepend, append))


def diff_tangent(t, which, a, n=1, axis=-1, prepend=None, append=None):
    """Tangent of ``np.diff(a, n, axis, prepend, append)`` from its input number ``which``
    (0: ``a``, 1: ``prepend``, 2: ``append``): the difference with the others zeroed."""
    if is_zero(t):
        return 0
    parts = [a, prepend, append]
    zeros = [None if p is None else np.zeros(np.shape(p), np.result_type(t, 1.0))
             for p in parts]
    zeros[which] = t
    if zeros[1] is None and zeros[2] is None:
        return np.diff(zeros[0], n, axis)
    if zeros[2] is None:
        return np.diff(zeros[0], n, axis, prepend=zeros[1])
    if zeros[1] is None:
        return np.diff(zeros[0], n, axis, append=zeros[2])
    return np.diff(zeros[0], n, axis, prepend=zeros[1], append=zeros[2])


@adjoint(np.diff)
def _(out, a, n=1, axis=-1, prepend=None, append=None):
    grads = diff_grads(d[out], a, n, axis, prepend, append)
    d[a] = grads[0]
    d[prepend] = grads[1]
    d[append] = grads[2]


@tangent(np.diff)
def _(out, a, n=1, axis=-1, prepend=None, append=None):
    d[out] = diff_tangent(d[a], 0, a, n, axis, prepend, append)
    d[out] = diff_tangent(d[prepend], 1, a, n, axis, prepend, append)
    d[out] = diff_tangent(d[append], 2, a, n, axis, prepend, append)


# ----- grids -------------------------------------------------------------------------------


def meshgrid_grads(gs, xi, indexing="xy"):
    """Gradients of ``np.meshgrid(*xi)``: each grid summed over every axis but its own (with
    ``indexing='xy'`` the first two inputs vary along axes 1 and 0)."""
    grads = []
    for k, (gk, x) in enumerate(zip(gs, xi)):
        if is_zero(gk):
            grads.append(0)
            continue
        own = 1 - k if indexing == "xy" and len(xi) > 1 and k < 2 else k
        others = tuple(i for i in range(np.ndim(gk)) if i != own)
        grads.append(astype_grad(np.reshape(np.sum(gk, axis=others), np.shape(x)), x))
    return tuple(grads)


@tangent(meshgrid_grads)  # linear in gs; a tuple of tangents adds element by element
def _(out, gs, xi, indexing="xy"):
    d[out] = summable(meshgrid_grads(d[gs], xi, indexing))


@linear_in("ts")  # the inputs xi matter by their shapes only
def meshgrid_tangent(ts, xi, out, sparse=False, indexing="xy"):
    """Tangent of ``np.meshgrid(*xi)``: grid k is ``t_k`` laid along the grid's axis k (the
    first two swapped for ``indexing="xy"``), spread over the grid unless ``sparse`` (0 without
    a tangent). Written without ``*xi``, so that it differentiates again."""
    n = len(xi)
    grids = []
    for k in range(n):
        if is_zero(ts[k]):
            grids.append(0)
        else:
            axis = 1 - k if indexing == "xy" and n > 1 and k < 2 else k
            shape = [1] * n
            shape[axis] = np.size(xi[k])
            grid = np.reshape(ts[k], shape)
            if not sparse:
                grid = np.array(np.broadcast_to(grid, np.shape(out[k])))
            grids.append(grid)
    return TangentTuple(grids)


@adjoint(np.meshgrid)
def _(out, *xi, copy=True, sparse=False, indexing="xy"):
    d[xi] = meshgrid_grads(d[out], xi, indexing)


@tangent(np.meshgrid)  # *xi: @linear takes no *args
def _(out, *xi, copy=True, sparse=False, indexing="xy"):
    d[out] = meshgrid_tangent(d[xi], xi, out, sparse, indexing)


# ----- evenly spaced samples: linspace is linear in start and stop --------------------------
# linspace(start, stop) = start + (stop - start) * t along the samples' axis; logspace is
# base ** linspace, geomspace start * (stop / start) ** t.


def spacing_fractions(num, endpoint, ndim, axis):
    """The fractions ``t`` of ``linspace``, shaped to broadcast along the samples' ``axis``."""
    t = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    shape = [1] * ndim
    shape[normalize_axis(axis, ndim)] = num
    return t.reshape(shape)


def linspace_grad(g, x, num, endpoint, retstep, axis, at_stop):
    """Gradient of ``np.linspace`` for ``x``, its ``start`` (weights ``1 - t``) or its ``stop``
    (``at_stop``, weights ``t``): the samples' gradient summed over their axis, plus the step's
    (``retstep``) divided by the number of intervals."""
    if is_zero(g):
        return 0
    g_samples, g_step = g if retstep else (g, 0)
    grad = 0
    if not is_zero(g_samples):
        ndim = np.ndim(g_samples)
        t = spacing_fractions(num, endpoint, ndim, axis)
        grad = np.sum(g_samples * (t if at_stop else 1.0 - t), axis=normalize_axis(axis, ndim))
    intervals = num - 1 if endpoint else num
    if not is_zero(g_step) and intervals > 0:
        grad = grad + (g_step if at_stop else -g_step) / intervals
    if is_zero(grad):
        return 0
    return astype_grad(unbroadcast(grad, x), x)


def linspace_tangent(t, out, num, endpoint, retstep, axis, at_stop):
    """Tangent of ``np.linspace`` from ``start`` or ``stop`` (``at_stop``): ``t`` spread over
    the samples with weights ``1 - t`` or ``t`` (and the step's, with ``retstep``)."""
    samples = out[0] if retstep else out
    ndim = np.ndim(samples)
    ax = normalize_axis(axis, ndim)
    fractions = spacing_fractions(num, endpoint, ndim, axis)
    across = np.shape(samples)[:ax] + np.shape(samples)[ax + 1:]
    t = np.broadcast_to(t, across)
    t_samples = (np.expand_dims(t, ax) * (fractions if at_stop else 1.0 - fractions)).astype(
        float_dtype(samples), copy=False)
    if not retstep:
        return t_samples
    intervals = num - 1 if endpoint else num
    t_step = (t if at_stop else -t) / intervals if intervals > 0 else 0.0 * t
    return TangentTuple((t_samples, t_step))


@adjoint(np.linspace)
def _(out, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
      device=None):
    d[start] = linspace_grad(d[out], start, num, endpoint, retstep, axis, False)
    d[stop] = linspace_grad(d[out], stop, num, endpoint, retstep, axis, True)


@tangent(np.linspace)
def _(out, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
      device=None):
    d[out] = linspace_tangent(d[start], out, num, endpoint, retstep, axis, False)
    d[out] = linspace_tangent(d[stop], out, num, endpoint, retstep, axis, True)


# arange(start, stop, step) = start + k * step for k < its length, which moves with none of
# them but at the points where it jumps: linear in start and step, constant in stop


def arange_grads(g, args, out):
    """Gradients of ``np.arange(*args)``, one per positional argument: ``start`` gets the sum of
    ``g``, ``step`` that of ``k g``, ``stop`` (and the one argument of ``arange(stop)``, whose
    values are 0, 1, ...) 0; all 0 for an integer result."""
    grads = [0] * len(args)
    if is_zero(g) or len(args) < 2 or np.asarray(out).dtype.kind not in "fc":
        return tuple(grads)
    grads[0] = astype_grad(np.sum(g), args[0])
    if len(args) > 2 and args[2] is not None:
        grads[2] = astype_grad(np.sum(g * np.arange(np.size(out))), args[2])
    return tuple(grads)


def arange_tangent(ts, args, out):
    """Tangent of ``np.arange(*args)``: ``t_start + k t_step`` (see ``arange_grads``)."""
    dtype = float_dtype(out)
    t = np.zeros(np.shape(out), dtype)
    if len(args) < 2 or np.asarray(out).dtype.kind not in "fc":
        return t
    ts = ts if isinstance(ts, (tuple, list)) else (ts,) * len(args)
    if not is_zero(ts[0]):
        t = t + ts[0]
    if len(args) > 2 and args[2] is not None and not is_zero(ts[2]):
        t = t + ts[2] * np.arange(np.size(out))
    return np.asarray(t, dtype)


@adjoint(arange_grads)  # linear in g: the transpose is the tangent
def _(out, g, args, ans):
    d[g] = arange_tangent(d[out], args, g)


@tangent(arange_grads)
def _(out, g, args, ans):
    d[out] = summable(arange_grads(d[g], args, ans))


@linear(arange_tangent, wrt="ts")
@adjoint(arange_tangent)  # linear in ts: the transpose is the gradient
def _(out, ts, args, ans):
    d[ts] = arange_grads(d[out], args, ans)


@adjoint(np.arange)
def _(out, *args, dtype=None, device=None, like=None):
    """``start + k step``: linear in ``start`` and ``step``; ``stop`` only sets the length."""
    d[args] = arange_grads(d[out], args, out)


@tangent(np.arange)
def _(out, *args, dtype=None, device=None, like=None):
    d[out] = arange_tangent(d[args], args, out)


def expand_base(base, out, axis):
    """``base`` (or its tangent) shaped as ``np.logspace`` broadcasts it against its samples."""
    if np.ndim(base) == 0:
        return base
    base = np.asarray(base)
    base = base.reshape((1,) * (np.ndim(out) - 1 - base.ndim) + base.shape)
    return np.expand_dims(base, axis)


def log_base(base, out, axis):
    """``log(base)``, shaped as ``np.logspace`` broadcasts ``base`` against its samples."""
    return np.log(expand_base(base, out, axis))


def logspace_base_grad(g, out, base, axis):
    """Gradient of ``np.logspace`` for its ``base``: ``out * y / base`` with ``y`` the exponents,
    summed over the samples' axis."""
    if is_zero(g):
        return 0
    slope = out * np.log(out) / log_base(base, out, axis) / expand_base(base, out, axis)
    grad = np.sum(g * slope, axis=normalize_axis(axis, np.ndim(out)))
    return astype_grad(unbroadcast(grad, base), base)


@adjoint(np.logspace)
def _(out, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    d[start] = linspace_grad(d[out] * out * log_base(base, out, axis), start, num, endpoint,
                             False, axis, False)
    d[stop] = linspace_grad(d[out] * out * log_base(base, out, axis), stop, num, endpoint,
                            False, axis, True)
    d[base] = logspace_base_grad(d[out], out, base, axis)


@tangent(np.logspace)
def _(out, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    d[out] = out * log_base(base, out, axis) * linspace_tangent(d[start], out, num, endpoint,
                                                                False, axis, False)
    d[out] = out * log_base(base, out, axis) * linspace_tangent(d[stop], out, num, endpoint,
                                                                False, axis, True)
    d[out] = out * np.log(out) / log_base(base, out, axis) / expand_base(base, out, axis) * \
        expand_base(d[base], out, axis)


def geomspace_grad(g, out, x, num, endpoint, axis, at_stop):
    """Gradient of ``np.geomspace`` for ``start`` or ``stop`` (``at_stop``): ``out / x``
    weighted as in ``linspace``."""
    if is_zero(g):
        return 0
    return astype_grad(linspace_grad(g * out, x, num, endpoint, False, axis, at_stop) / x, x)


@adjoint(np.geomspace)
def _(out, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    d[start] = geomspace_grad(d[out], out, start, num, endpoint, axis, False)
    d[stop] = geomspace_grad(d[out], out, stop, num, endpoint, axis, True)


@tangent(np.geomspace)
def _(out, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    d[out] = out * linspace_tangent(d[start] / start, out, num, endpoint, False, axis, False)
    d[out] = out * linspace_tangent(d[stop] / stop, out, num, endpoint, False, axis, True)


# ----- append, insert, delete, compress ------------------------------------------------------


def append_grads(g, arr, values, axis=None):
    """Gradients of ``np.append(arr, values, axis)``: ``g`` cut where ``values`` begin (both
    flattened when ``axis`` is None)."""
    if axis is None:
        flat = np.ravel(g)
        size = np.size(arr)
        return (astype_grad(np.reshape(flat[:size], np.shape(arr)), arr),
                astype_grad(np.reshape(flat[size:], np.shape(values)), values))
    pieces = np.split(g, [np.shape(arr)[axis]], axis=axis)
    return (astype_grad(pieces[0], arr),
            astype_grad(np.reshape(pieces[1], np.shape(values)), values))


@adjoint(np.append)
def _(out, arr, values, axis=None):
    grads = append_grads(d[out], arr, values, axis)
    d[arr] = grads[0]
    d[values] = grads[1]


def append_tangent(t, arr, values, out, axis=None, wrt=0):
    """Tangent of ``np.append`` from ``arr`` (``wrt`` 0) or ``values`` (1): the tangent
    appended with zeros for the other."""
    if wrt == 0:
        joined = np.append(np.broadcast_to(t, np.shape(arr)), np.zeros(np.shape(values)), axis)
    else:
        joined = np.append(np.zeros(np.shape(arr)), np.broadcast_to(t, np.shape(values)), axis)
    return np.asarray(joined).astype(float_dtype(out), copy=False)


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


@adjoint(np.compress)
def _(ans, condition, a, axis=None, out=None):
    d[a] = take_grad(d[ans], a, np.flatnonzero(condition), axis)


@tangent(np.compress)  # linear, but the derived call would pass a positional out= on
def _(ans, condition, a, axis=None, out=None):
    d[ans] = np.compress(condition, d[a], axis)


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


def insert_grads(g, arr, obj, values, out, axis=None):
    """Gradients of ``np.insert(arr, obj, values, axis)``: ``arr`` gets the entries of ``g`` it
    was copied to; ``values`` those it was broadcast to, summed back to its shape."""
    sources = insert_sources(arr, obj, out, axis)
    flat_axis = 0 if axis is None else axis
    g_arr = np.take(g, sources[0], axis=flat_axis)
    g_values = sum_to_shape(np.take(g, sources[1], axis=flat_axis),
                            inserted_shape(arr, obj, values, axis))
    if np.ndim(obj) == 0:
        g_values = np.moveaxis(g_values, flat_axis, 0)
    return (astype_grad(np.reshape(g_arr, np.shape(arr)), arr),
            astype_grad(np.reshape(g_values, np.shape(values)), values))


@adjoint(np.insert)
def _(out, arr, obj, values, axis=None):
    grads = insert_grads(d[out], arr, obj, values, out, axis)
    d[arr] = grads[0]
    d[values] = grads[1]


def insert_tangent(t, arr, obj, values, out, axis=None, wrt=0):
    """Tangent of ``np.insert`` from ``arr`` (``wrt`` 0) or ``values`` (1): the insertion with
    zeros for the other."""
    if wrt == 0:
        joined = np.insert(np.broadcast_to(t, np.shape(arr)), obj, np.zeros(np.shape(values)),
                           axis)
    else:
        joined = np.insert(np.zeros(np.shape(arr)), obj, np.broadcast_to(t, np.shape(values)),
                           axis)
    return np.asarray(joined).astype(float_dtype(out), copy=False)


@tangent(np.insert)
def _(out, arr, obj, values, axis=None):
    d[out] = insert_tangent(d[arr], arr, obj, values, out, axis, 0)
    d[out] = insert_tangent(d[values], arr, obj, values, out, axis, 1)


# ----- choose, select --------------------------------------------------------------------------


def choose_grads(g, a, choices, mode="raise"):
    """Gradients of ``np.choose(a, choices, mode=mode)``, one per choice: ``g`` where ``a``
    (after ``mode``) picks it, summed back to its shape (an array of choices gets an array)."""
    index = take_indices(a, len(choices), mode)
    grads = [astype_grad(unbroadcast(np.where(index == k, g, 0), choices[k]), choices[k])
             for k in range(len(choices))]
    if isinstance(choices, np.ndarray):
        return astype_grad(np.stack(grads), choices)
    return grads


@adjoint(np.choose)
def _(ans, a, choices, out=None, mode="raise"):
    d[choices] = choose_grads(d[ans], a, choices, mode)


def choose_tangent(ts, a, choices, ans, mode="raise"):
    """Tangent of ``np.choose``: the same choice among the tangents (zeros for choices without
    one)."""
    if isinstance(choices, np.ndarray):
        filled = np.broadcast_to(ts, np.shape(choices))
    else:
        filled = [np.zeros(np.shape(c)) if is_zero(t) else t for t, c in zip(ts, choices)]
    return np.asarray(np.choose(a, filled, mode=mode)).astype(float_dtype(ans), copy=False)


@tangent(np.choose)
def _(ans, a, choices, out=None, mode="raise"):
    d[ans] = choose_tangent(d[choices], a, choices, ans, mode)


def select_masks(condlist, shape):
    """Where ``np.select`` takes each choice (its condition is the first true), and where the
    default, as boolean arrays of the output's ``shape``."""
    taken = np.zeros(shape, bool)
    masks = []
    for cond in condlist:
        masks.append(np.logical_and(cond, np.logical_not(taken)))
        taken = np.logical_or(taken, cond)
    return masks, np.logical_not(taken)


nondifferentiable(select_masks)


def select_grads(g, condlist, choicelist):
    """Gradients of ``np.select(condlist, choicelist, default)`` for the choices: ``g`` where
    each is taken, summed back to its shape."""
    masks = select_masks(condlist, np.shape(g))[0]
    return [astype_grad(unbroadcast(np.where(m, g, 0), c), c) for m, c in zip(masks, choicelist)]


@adjoint(np.select)
def _(out, condlist, choicelist, default=0):
    d[choicelist] = select_grads(d[out], condlist, choicelist)
    d[default] = astype_grad(unbroadcast(np.where(select_masks(condlist, np.shape(out))[1],
                                                  d[out], 0), default), default)


def select_tangent(ts, condlist, choicelist, out):
    """Tangent of ``np.select`` from the choices: the same selection of their tangents."""
    filled = [np.zeros(np.shape(c)) if is_zero(t) else t for t, c in zip(ts, choicelist)]
    return np.asarray(np.select(condlist, filled, 0.0)).astype(float_dtype(out), copy=False)


@tangent(np.select)
def _(out, condlist, choicelist, default=0):
    d[out] = select_tangent(d[choicelist], condlist, choicelist, out)
    d[out] = np.asarray(np.where(select_masks(condlist, np.shape(out))[1], d[default], 0),
                        float_dtype(out))


# ----- partition, rollaxis, resize, extract, diagflat, broadcast_arrays -----------------------


@adjoint(np.partition)
def _(out, a, kth, axis=-1, kind="introselect", order=None):
    d[a] = take_along_axis_grad(d[out], a, np.argpartition(a, kth, axis, kind), axis)


def partition_tangent(t, a, kth, axis=-1, kind="introselect"):
    """Tangent of ``np.partition``: a gather whose places are piecewise constant in ``a``."""
    places = np.argpartition(a, kth, axis, kind)
    if axis is None:
        return np.take_along_axis(np.ravel(np.broadcast_to(t, np.shape(a))), places, -1)
    return np.take_along_axis(np.broadcast_to(t, np.shape(a)), places, axis)


@tangent(np.partition)
def _(out, a, kth, axis=-1, kind="introselect", order=None):
    d[out] = partition_tangent(d[a], a, kth, axis, kind)


def rollaxis_order(a, axis, start=0):
    """The order of ``a``'s axes that ``np.rollaxis(a, axis, start)`` transposes to."""
    n = np.ndim(a)
    axis = int(axis) % n
    start = int(start) + n if start < 0 else int(start)
    if start > axis:
        start -= 1
    order = [i for i in range(n) if i != axis]
    order.insert(start, axis)
    return order


nondifferentiable(rollaxis_order)


@linear(np.rollaxis)
@adjoint(np.rollaxis)
def _(out, a, axis, start=0):
    d[a] = np.transpose(d[out], np.argsort(rollaxis_order(a, axis, start)))


def resize_sources(a, new_shape):
    """Which entry of the flattened ``a`` each entry of ``np.resize(a, new_shape)`` repeats."""
    return np.arange(np.size(np.resize(np.zeros(max(np.size(a), 1)), new_shape))) % np.size(a)


nondifferentiable(resize_sources)


@linear(np.resize)
@adjoint(np.resize)
def _(out, a, new_shape):
    d[a] = take_grad(np.ravel(d[out]), a, resize_sources(a, new_shape))


@linear(np.extract, wrt="arr")
@adjoint(np.extract)
def _(out, condition, arr):
    d[arr] = take_grad(d[out], arr, np.flatnonzero(condition))


@linear(np.diagflat)
@adjoint(np.diagflat)
def _(out, v, k=0):
    d[v] = astype_grad(np.reshape(np.diagonal(d[out], k), np.shape(v)), v)


def broadcast_arrays_grads(g, args):
    """Gradients of ``np.broadcast_arrays(*args)``: each piece summed back to its argument's
    shape (0 for a piece without one)."""
    return [0 if is_zero(gi) else astype_grad(unbroadcast(gi, x), x) for gi, x in zip(g, args)]


@adjoint(np.broadcast_arrays)
def _(out, *args, subok=False):
    d[args] = broadcast_arrays_grads(d[out], args)


def broadcast_arrays_tangent(ts, args, out):
    """Tangent of ``np.broadcast_arrays``: each tangent broadcast to its piece's shape."""
    return TangentTuple(np.broadcast_to(np.zeros(np.shape(o), float_dtype(o)) if is_zero(t)
                                        else t, np.shape(o)).astype(float_dtype(o))
                        for t, o in zip(ts, out))


@tangent(np.broadcast_arrays)
def _(out, *args, subok=False):
    d[out] = broadcast_arrays_tangent(d[args], args, out)


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


def block_grads(g, arrays):
    """Gradients of ``np.block(arrays)``, nested as ``arrays``: a list at depth ``k`` from the
    innermost joins its items along axis ``-k``, so ``g`` is split there (``block_grads_at``)."""
    if not isinstance(arrays, list):
        return astype_grad(np.reshape(g, np.shape(arrays)), arrays)
    return block_grads_at(g, arrays, -block_depth(arrays))


def block_grads_at(g, arrays, axis):
    """Gradients of one list of ``np.block``'s argument, joined along ``axis`` (negative)."""
    extents = block_extents(arrays, axis, np.ndim(g))
    pieces = np.split(g, np.cumsum(extents)[:-1], axis=axis)
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


def block_tangents(ts, arrays):
    """The tangents of ``np.block``'s nested arrays, zeros where one has none."""
    if isinstance(arrays, list):
        if is_zero(ts):
            ts = [0] * len(arrays)
        return [block_tangents(t, item) for t, item in zip(ts, arrays)]
    return np.zeros(np.shape(arrays)) if is_zero(ts) else np.broadcast_to(ts, np.shape(arrays))


@tangent(np.block)
def _(out, arrays):
    d[out] = np.asarray(np.block(block_tangents(d[arrays], arrays)), float_dtype(out))
