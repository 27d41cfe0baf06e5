"""Rules for NumPy's shape, reordering and indexing functions, both directions: each function's
adjoint with its tangent (forward mode) beside it. Joining and splitting are
``numpy_joining.py``'s; padding, differences, grids and samples ``numpy_grids.py``'s.

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
    Attr,
    Method,
    adjoint,
    d,
    linear,
    linear_in,
    nondifferentiable,
    tangent,
    transpose,
    transpose_of,
)
from mindgrad.rules.helpers import array_grad, astype_grad, normalize_axis
from mindgrad.runtime import (
    Zero,
    is_any_zero,
    is_zero,
    takes_zero,
    unbroadcast,
    zero,
    zero_in,
    zero_in_zero_out,
)
from mindgrad.runtime.arrays import as_array, is_dispatching
from mindgrad.runtime.buffers import scatter_add
from mindgrad.runtime.tangents import TangentTuple, float_dtype, zero_for

# ----- reshaping ---------------------------------------------------------------------------
# NumPy reads an array for reshape and ravel in the order asked; "A" and "K" depend on how the
# array is laid out in memory, which its gradient or tangent need not share: the helpers read
# those in the order NumPy read the array itself.


def _layout_indices(a):
    """The flat (C-order) indices of ``a``'s elements in the order ``ravel(a, "K")`` reads
    them: memory order."""
    layout = np.empty_like(as_array(a), dtype=np.intp)  # a's memory layout, as "K" reads it
    layout[...] = np.reshape(np.arange(layout.size), layout.shape)
    return np.ravel(layout, order="K")


def read_order(a, order):
    """The order, "C" or "F", in which NumPy reads ``a`` for ``order``; None for "K" on an
    array laid out in neither."""
    if order in ("C", "F"):
        return order
    if is_dispatching(a):
        if not hasattr(a, "flags"):
            return "C"  # a Dask array has no layout: it reads as C order
    else:
        a = as_array(a)
    if order == "A":
        return "F" if np.isfortran(a) else "C"
    if a.flags.c_contiguous:
        return "C"
    return "F" if a.flags.f_contiguous else None


@linear_in("g", keeps_values=True, any_number=True)
def reshape_grad(g, a, order="C"):
    """Gradient of ``np.reshape(a, ..., order)`` or ``np.ravel(a, order)``: ``g`` laid back
    in ``a``'s shape in the order NumPy read ``a``."""
    if is_any_zero(g):
        return zero_for(g, a)
    how = read_order(a, order)
    if how is not None:  # C order left implicit: Dask's reshape takes no order
        return np.reshape(g, np.shape(a)) if how == "C" else np.reshape(g, np.shape(a), order=how)
    grad = np.empty(np.size(a), np.result_type(g, float))
    grad[_layout_indices(a)] = np.ravel(g)
    return np.reshape(grad, np.shape(a))


@linear_in("t", keeps_values=True)
def reshape_tangent(t, a, out, order="C"):
    """Tangent of ``out = np.reshape(a, ..., order)`` (or ``np.ravel``): ``t`` read in the
    order NumPy read ``a``."""
    if zero_in(t):
        return zero
    how = read_order(a, order)
    if how is not None:  # C order left implicit: Dask's reshape takes no order
        return np.reshape(t, np.shape(out)) if how == "C" else \
            np.reshape(t, np.shape(out), order=how)
    flat = np.ravel(np.broadcast_to(t, np.shape(a)))
    return np.reshape(flat[_layout_indices(a)], np.shape(out))


@adjoint(reshape_grad)
def _(out, g, a, order="C"):
    d[g] = reshape_tangent(d[out], a, g, order)


@adjoint(reshape_tangent)
def _(ans, t, a, out, order="C"):
    d[t] = reshape_grad(d[ans], a, order)


nondifferentiable(read_order, _layout_indices)


# the adjoints transposed from the tangents: d[a] = reshape_grad(d[out], a, order)
@transpose(np.reshape)
@tangent(np.reshape)
def _(out, a, shape=None, order="C", *, copy=None):
    d[out] = reshape_tangent(d[a], a, out, order)


@transpose(np.ravel, Method("ravel"), Method("flatten"))
@tangent(np.ravel, Method("ravel"), Method("flatten"))
def _(out, a, order="C"):
    d[out] = reshape_tangent(d[a], a, out, order)


@linear(Method("squeeze"), via=np.squeeze)  # a number tangent has no .squeeze()
@linear(np.expand_dims, np.squeeze)
@adjoint(np.expand_dims, np.squeeze, Method("squeeze"))
def _(out, a, axis=None):
    d[a] = np.reshape(d[out], np.shape(a))


@adjoint(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def _(out, *arys):
    d[arys] = atleast_grads(d[out], arys)


@zero_in_zero_out("g")
def atleast_grads(g, arys):
    """Gradients of ``np.atleast_Nd(*arys)``: one array back for one input, else a tuple."""
    if zero_in(g):
        return zero
    gs = (g,) if len(arys) == 1 else g
    return tuple(0 if is_zero(gi) else np.reshape(gi, np.shape(x)) for gi, x in zip(gs, arys))


@linear(atleast_grads)
def _(out, g, arys):
    ...


@zero_in_zero_out("ts")
def atleast_tangent(ts, arys, out):
    """Tangent of ``np.atleast_Nd(*arys)``: each tangent reshaped like its result (one array for
    one input, else a tuple with 0 for inputs without tangent)."""
    if zero_in(ts):
        return zero
    if len(arys) == 1:
        return np.reshape(ts[0], np.shape(out))
    return TangentTuple(0 if is_zero(t) else np.reshape(t, np.shape(o)) for t, o in zip(ts, out))


@linear(atleast_tangent, wrt="ts")
@adjoint(atleast_tangent)  # linear in ts: the transpose is the gradient
def _(ans, ts, arys, out):
    d[ts] = atleast_grads(d[ans], arys)


@transpose(np.atleast_1d, np.atleast_2d, np.atleast_3d)  # d[arys] = atleast_grads(d[out], arys)
@tangent(np.atleast_1d, np.atleast_2d, np.atleast_3d)  # *arys: @linear takes no *args
def _(out, *arys):
    d[out] = atleast_tangent(d[arys], arys, out)


@linear(np.broadcast_to)
@adjoint(np.broadcast_to)
def _(out, array, shape, subok=False):
    d[array] = unbroadcast(d[out], array)



# ----- transposing -------------------------------------------------------------------------


@takes_zero(any_number=True)
def transpose_grad(g, axes=None):
    """Gradient of ``np.transpose(a, axes)``: the inverse permutation applied to ``g``; a zero
    number as it is (a value only for a 0-d ``a``, whose gradient it is)."""
    if g is None:
        return zero
    if is_any_zero(g) and g.__class__ is not Zero:  # a typed zero is transposed below
        return g
    if axes is None:
        return np.transpose(g)
    inverse = np.argsort([normalize_axis(a, len(axes)) for a in axes])
    return np.transpose(g, tuple(int(i) for i in inverse))  # a tuple, as Dask's takes


@linear(transpose_grad)
def _(out, g, axes=None):
    ...


@linear(np.transpose)
@adjoint(np.transpose)
def _(out, a, axes=None):
    d[a] = transpose_grad(d[out], axes)


@linear(Method("swapaxes"))
@linear(np.swapaxes)
@adjoint(np.swapaxes, Method("swapaxes"))
def _(out, a, axis1, axis2):
    d[a] = np.swapaxes(d[out], axis1, axis2)


@linear(np.moveaxis)
@adjoint(np.moveaxis)
def _(out, a, source, destination):
    d[a] = np.moveaxis(d[out], destination, source)


if hasattr(np, "matrix_transpose"):  # NumPy >= 2.0

    @linear(Attr("mT"))
    @linear(np.matrix_transpose)
    @adjoint(np.matrix_transpose, Attr("mT"))
    def _(out, x):
        d[x] = np.swapaxes(d[out], -1, -2)



# ----- repeating ---------------------------------------------------------------------------


@takes_zero(keeps_values=False, any_number=True)
def tile_grad(g, A, reps):
    """Gradient of ``np.tile``: the tiles of ``g`` summed onto one another."""
    if is_any_zero(g):
        return zero
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


@zero_in_zero_out("g")
def repeat_grad(g, a, repeats, axis=None):
    """Gradient of ``np.repeat``: the copies of each element summed back onto it."""
    if zero_in(g):
        return zero
    x = as_array(a)
    if axis is None:
        x, g, axis = x.ravel(), np.ravel(g), 0
    axis = normalize_axis(axis, x.ndim)
    source = np.repeat(np.arange(x.shape[axis]), repeats)
    moved = np.moveaxis(as_array(g), axis, 0)
    if is_dispatching(moved):  # Dask's and CuPy's: no writes into a NumPy buffer
        grad = scatter_add(moved, source, x.shape[axis], "np.repeat")
        return astype_grad(np.reshape(np.moveaxis(grad, 0, axis), np.shape(a)), a)
    grad = np.zeros((x.shape[axis],) + moved.shape[1:], dtype=moved.dtype)
    np.add.at(grad, source, moved)
    return astype_grad(np.reshape(np.moveaxis(grad, 0, axis), np.shape(a)), a)


@linear(repeat_grad)
def _(out, g, a, repeats, axis=None):
    ...


# the method by its function: a number tangent (or the symbolic 0) has no .repeat()
@linear(np.repeat, Method("repeat"), via=np.repeat)
@adjoint(np.repeat, Method("repeat"))
def _(out, a, repeats, axis=None):
    d[a] = repeat_grad(d[out], a, repeats, axis)



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


@zero_in_zero_out("g")
def sort_grad(g, a, axis=-1, kind=None):
    """Gradient of ``np.sort``: ``g`` sent back through the sorting permutation."""
    if zero_in(g):
        return zero
    x = as_array(a)
    if axis is None:
        x, axis = x.ravel(), -1
    order = np.argsort(x, axis=axis, kind="stable")
    grad = np.zeros(x.shape, dtype=np.result_type(g, x, 1.0))
    np.put_along_axis(grad, order, g, axis=axis)
    return astype_grad(np.reshape(grad, np.shape(a)), a)


@linear(sort_grad)  # the permutation is piecewise constant in a
def _(out, g, a, axis=-1, kind=None):
    ...


@zero_in_zero_out("t")
def sort_tangent(t, a, axis=-1):
    """Tangent of ``np.sort``: ``t`` gathered through the sorting permutation."""
    if zero_in(t):
        return zero
    x = as_array(a)
    t = np.broadcast_to(t, x.shape)
    if axis is None:
        x, t, axis = x.ravel(), t.ravel(), -1
    order = np.argsort(x, axis=axis, kind="stable")
    return np.take_along_axis(t, order, axis=axis)


@linear(sort_tangent)  # the permutation is piecewise constant in a
@adjoint(sort_tangent)  # linear in t: the transpose is the gradient
def _(ans, t, a, axis=-1):
    d[t] = sort_grad(d[ans], a, axis)


@transpose(np.sort)  # d[a] = sort_grad(d[out], a, axis)
@tangent(np.sort)
def _(out, a, axis=-1, kind=None, order=None, *, stable=None):
    d[out] = sort_tangent(d[a], a, axis)


@zero_in_zero_out("t")
def sort_complex_tangent(t, a, out):
    """Tangent of ``np.sort_complex(a)``: ``sort``'s along the last axis, in ``out``'s complex
    dtype."""
    if zero_in(t):
        return zero
    return np.asarray(sort_tangent(t, a, -1), dtype=out.dtype)


@transpose_of(sort_complex_tangent)  # the order is piecewise constant: sort's transpose
def _(ans, t, a, out):
    d[t] = sort_grad(d[ans], a, -1)


@transpose(np.sort_complex)  # sorted by real part, then imaginary part
@tangent(np.sort_complex)
def _(out, a):
    d[out] = sort_complex_tangent(d[a], a, out)


def trim_zeros_region(filt, trim="fb", axis=None):
    """The slices ``np.trim_zeros(filt, trim, axis)`` keeps: along each trimmed axis, from the
    first to the last index holding a nonzero value (none when all are zero); a constant."""
    x = as_array(filt)
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


@zero_in_zero_out("g")
def trim_zeros_grad(g, filt, trim="fb", axis=None):
    """Gradient of ``np.trim_zeros``: ``g`` put back in the kept range, 0 for what was trimmed."""
    if zero_in(g):
        return zero
    grad = np.zeros(np.shape(filt), np.result_type(as_array(filt), 1.0))
    grad[trim_zeros_region(filt, trim, axis)] = as_array(g)
    return array_grad(grad, filt) if isinstance(filt, (list, tuple)) else astype_grad(grad, filt)


@linear(trim_zeros_grad)
def _(out, g, filt, trim="fb", axis=None):
    ...


@zero_in_zero_out("t")
def trim_zeros_tangent(t, filt, out, trim="fb", axis=None):
    """Tangent of ``np.trim_zeros``: ``t`` in the kept range (a list for a list)."""
    if zero_in(t):
        return zero
    kept = np.broadcast_to(t, np.shape(filt))[trim_zeros_region(filt, trim, axis)]
    return list(kept) if isinstance(out, list) else kept


@linear(trim_zeros_tangent)  # the kept range is piecewise constant
@adjoint(trim_zeros_tangent)  # linear in t: the transpose is the gradient
def _(ans, t, filt, out, trim="fb", axis=None):
    d[t] = trim_zeros_grad(d[ans], filt, trim, axis)


@transpose(np.trim_zeros)  # d[filt] = trim_zeros_grad(d[out], filt, trim, axis)
@tangent(np.trim_zeros)
def _(out, filt, trim="fb", axis=None):
    """The kept range is a constant (where the values are zero)."""
    d[out] = trim_zeros_tangent(d[filt], filt, out, trim, axis)



# ----- diagonals and triangles -------------------------------------------------------------


@takes_zero(any_number=True)
def diagonal_grad(g, a, offset=0, axis1=0, axis2=1):
    """Gradient of ``np.diagonal``: ``g`` written on the diagonal of a zero array like ``a``."""
    if is_any_zero(g):
        return zero_for(g, a)
    if is_dispatching(a) or is_dispatching(g):
        return astype_grad(_diagonal_placed(g, a, offset, axis1, axis2), a)
    grad = np.zeros(np.shape(a), dtype=np.result_type(g, a, 1.0))
    view = np.moveaxis(grad, (axis1, axis2), (-2, -1))  # a view: writes land in grad
    steps = np.arange(np.shape(g)[-1])
    view[..., steps + max(-offset, 0), steps + max(offset, 0)] = g
    return astype_grad(grad, a)


def _diagonal_placed(g, a, offset, axis1, axis2):
    """``diagonal_grad`` without writes into a view (a Dask array has none): ``g`` padded to
    the diagonal's axis and multiplied by the identity matrix offset by ``offset``."""
    shape = np.shape(a)
    ndim = len(shape)
    axis1, axis2 = normalize_axis(axis1, ndim), normalize_axis(axis2, ndim)
    rows, cols = shape[axis1], shape[axis2]
    along = rows if offset >= 0 else cols  # element k sits at (k, k + offset) or (k - offset, k)
    pad = [(0, 0)] * (np.ndim(g) - 1) + [(0, along - np.shape(g)[-1])]
    g = np.pad(g, pad)
    spread = g[..., :, None] if offset >= 0 else g[..., None, :]
    placed = np.eye(rows, cols, offset, dtype=np.result_type(g.dtype, np.float32)) * spread
    return np.moveaxis(placed, (-2, -1), (axis1, axis2))


@takes_zero(any_number=True)
def diag_grad(g, v, k=0):
    """Gradient of ``np.diag``: a vector became a matrix (take its diagonal back) or a matrix's
    diagonal was taken (put it back in place)."""
    if is_any_zero(g):
        return zero_for(g, v)
    if np.ndim(v) == 1:
        return astype_grad(np.diagonal(g, k), v)
    return diagonal_grad(g, v, k, 0, 1)


@takes_zero(any_number=True)
def trace_grad(g, a, offset=0, axis1=0, axis2=1):
    """Gradient of ``np.trace``: ``g`` on every element of the summed diagonal."""
    if is_any_zero(g):
        return zero_for(g, a)
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


@linear(Method("diagonal"))
@linear(np.diagonal)
@adjoint(np.diagonal, Method("diagonal"))
def _(out, a, offset=0, axis1=0, axis2=1):
    d[a] = diagonal_grad(d[out], a, offset, axis1, axis2)


@linear(np.trace, Method("trace"), via=np.trace)
@adjoint(np.trace, Method("trace"))
def _(ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d[a] = trace_grad(d[ans], a, offset, axis1, axis2)


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
    index = as_array(indices)
    if mode == "clip":
        return np.clip(index, 0, n - 1)
    if mode == "wrap":
        return np.mod(index, n)
    return index


@takes_zero(any_number=True)
def take_grad(g, a, indices, axis=None, mode="raise"):
    """Gradient of ``np.take``: ``g`` added back at the indices (repeats accumulate)."""
    if is_any_zero(g):
        return zero_for(g, a)
    x = as_array(a)
    shape = (x.size,) if axis is None else x.shape
    axis = 0 if axis is None else normalize_axis(axis, x.ndim)
    index = take_indices(indices, shape[axis], mode)
    moved_g = np.moveaxis(as_array(g), tuple(range(axis, axis + index.ndim)),
                          tuple(range(index.ndim)))
    if is_dispatching(moved_g):  # Dask's and CuPy's: no writes into a NumPy buffer
        moved_g = np.reshape(moved_g, (index.size,) + tuple(moved_g.shape[index.ndim:]))
        grad = np.moveaxis(scatter_add(moved_g, index, shape[axis], "np.take"), 0, axis)
    else:
        grad = np.zeros(shape, dtype=np.result_type(g, x, 1.0))
        np.add.at(np.moveaxis(grad, axis, 0), index, moved_g)
    return astype_grad(np.reshape(grad, x.shape), a)


@linear(take_grad)
def _(out, g, a, indices, axis=None, mode="raise"):
    ...


@linear(np.take, Method("take"), via=np.take)
@adjoint(np.take, Method("take"))
def _(ans, a, indices, axis=None, out=None, mode="raise"):
    d[a] = take_grad(d[ans], a, indices, axis, mode)


@takes_zero(any_number=True)
def take_along_axis_grad(g, arr, indices, axis=-1):
    """Gradient of ``np.take_along_axis``: ``g`` added back at the indices along ``axis``."""
    if is_any_zero(g):
        return zero_for(g, arr)
    x = as_array(arr)
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



# ----- choose, select --------------------------------------------------------------------------


@zero_in_zero_out("g")
def choose_grads(g, a, choices, mode="raise"):
    """Gradients of ``np.choose(a, choices, mode=mode)``, one per choice: ``g`` where ``a``
    (after ``mode``) picks it, summed back to its shape (an array of choices gets an array)."""
    if zero_in(g):
        return zero
    index = take_indices(a, len(choices), mode)
    grads = [astype_grad(unbroadcast(np.where(index == k, g, 0), choices[k]), choices[k])
             for k in range(len(choices))]
    if isinstance(choices, np.ndarray):
        return astype_grad(np.stack(grads), choices)
    return grads


@zero_in_zero_out("ts")
def choose_tangent(ts, a, choices, ans, mode="raise"):
    """Tangent of ``np.choose``: the same choice among the tangents (zeros for choices without
    one)."""
    if zero_in(ts):
        return zero
    if isinstance(choices, np.ndarray):
        filled = np.broadcast_to(ts, np.shape(choices))
    else:
        filled = [np.zeros(np.shape(c)) if is_zero(t) else t for t, c in zip(ts, choices)]
    return as_array(np.choose(a, filled, mode=mode)).astype(float_dtype(ans), copy=False)


@linear(choose_tangent, wrt="ts")  # the indices a are integers
@adjoint(choose_tangent)  # linear in ts: the transpose is the gradient
def _(out, ts, a, choices, ans, mode="raise"):
    d[ts] = choose_grads(d[out], a, choices, mode)


@transpose(np.choose)  # d[choices] = choose_grads(d[ans], a, choices, mode)
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


@zero_in_zero_out("g")
def select_grads(g, condlist, choicelist):
    """Gradients of ``np.select(condlist, choicelist, default)`` for the choices: ``g`` where
    each is taken, summed back to its shape."""
    if zero_in(g):
        return zero
    masks = select_masks(condlist, np.shape(g))[0]
    return [astype_grad(unbroadcast(np.where(m, g, 0), c), c) for m, c in zip(masks, choicelist)]


@zero_in_zero_out("ts")
def select_tangent(ts, condlist, choicelist, out):
    """Tangent of ``np.select`` from the choices: the same selection of their tangents."""
    if zero_in(ts):
        return zero
    filled = [np.zeros(np.shape(c)) if is_zero(t) else t for t, c in zip(ts, choicelist)]
    return as_array(np.select(condlist, filled, 0.0)).astype(float_dtype(out), copy=False)


@zero_in_zero_out("t")
def select_default_tangent(t, condlist, out):
    """Tangent of ``np.select`` from ``default``: where no condition holds."""
    if zero_in(t):
        return zero
    return np.asarray(np.where(select_masks(condlist, np.shape(out))[1], t, 0), float_dtype(out))


# the tangents transposed in their tangents (@transpose reads them): the same selections of
# the gradient, summed back to the shape of what each tangent is the tangent of
@transpose_of(select_tangent)
def _(ans, ts, condlist, choicelist, out):
    d[ts] = select_grads(d[ans], condlist, choicelist)


@transpose_of(select_default_tangent)
def _(ans, t, condlist, out):
    d[t] = astype_grad(unbroadcast(np.where(select_masks(condlist, np.shape(out))[1], d[ans], 0),
                                   t), t)


@transpose(np.select)
@tangent(np.select)
def _(out, condlist, choicelist, default=0):
    d[out] = select_tangent(d[choicelist], condlist, choicelist, out)
    d[out] = select_default_tangent(d[default], condlist, out)



# ----- partition, rollaxis, resize, extract, diagflat, broadcast_arrays -----------------------


@zero_in_zero_out("t")
def partition_tangent(t, a, kth, axis=-1, kind="introselect"):
    """Tangent of ``np.partition``: a gather whose places are piecewise constant in ``a``."""
    if zero_in(t):
        return zero
    places = np.argpartition(a, kth, axis, kind)
    if axis is None:
        return np.take_along_axis(np.ravel(np.broadcast_to(t, np.shape(a))), places, -1)
    return np.take_along_axis(np.broadcast_to(t, np.shape(a)), places, axis)


@linear(partition_tangent)
@adjoint(partition_tangent)  # linear in t: the transpose scatters back
def _(ans, t, a, kth, axis=-1, kind="introselect"):
    d[t] = take_along_axis_grad(d[ans], a, np.argpartition(a, kth, axis, kind), axis)


@transpose(np.partition)  # d[a] = take_along_axis_grad(d[out], a, np.argpartition(...), axis)
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


@zero_in_zero_out("g")
def broadcast_arrays_grads(g, args):
    """Gradients of ``np.broadcast_arrays(*args)``: each piece summed back to its argument's
    shape (0 for a piece without one)."""
    if zero_in(g):
        return zero
    return [0 if is_zero(gi) else astype_grad(unbroadcast(gi, x), x) for gi, x in zip(g, args)]


@zero_in_zero_out("ts")
def broadcast_arrays_tangent(ts, args, out):
    """Tangent of ``np.broadcast_arrays``: each tangent broadcast to its piece's shape."""
    if zero_in(ts):
        return zero
    return TangentTuple(np.broadcast_to(np.zeros(np.shape(o), float_dtype(o)) if is_zero(t)
                                        else t, np.shape(o)).astype(float_dtype(o))
                        for t, o in zip(ts, out))


@linear(broadcast_arrays_tangent, wrt="ts")
@adjoint(broadcast_arrays_tangent)  # linear in ts: the transpose is the gradient
def _(ans, ts, args, out):
    d[ts] = broadcast_arrays_grads(d[ans], args)


@transpose(np.broadcast_arrays)  # d[args] = broadcast_arrays_grads(d[out], args)
@tangent(np.broadcast_arrays)
def _(out, *args, subok=False):
    d[out] = broadcast_arrays_tangent(d[args], args, out)
