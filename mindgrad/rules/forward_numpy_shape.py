"""Tangent rules for NumPy's shape, joining, splitting, reordering and indexing functions.

All of these are linear maps that move elements around: the tangent is the same function of
the input's tangent. Functions of several arrays (``concatenate``, ``stack``, ``meshgrid``) get
a list or tuple of tangents with 0 for arrays without one: helpers fill those with zeros.
"""

import numpy as np

from mindgrad.rules import adjoint, d, tangent, tangent_attr, tangent_method
from mindgrad.rules import numpy_shape as ns
from mindgrad.rules.nondiff import draw_tangent
from mindgrad.runtime import is_zero
from mindgrad.runtime.tangents import TangentTuple, float_dtype

# ----- reshaping ---------------------------------------------------------------------------


@tangent(np.reshape)
def _(out, a, shape=None, order="C", *, copy=None):
    d[out] = np.reshape(d[a], np.shape(out), order=order)


@tangent_method("ravel", "flatten")
@tangent(np.ravel)
def _(out, a, order="C"):
    d[out] = np.reshape(d[a], np.shape(out), order=order)


@tangent_method("squeeze")
@tangent(np.expand_dims, np.squeeze)
def _(out, a, axis=None):
    d[out] = np.reshape(d[a], np.shape(out))


def atleast_tangent(ts, arys, out):
    """Tangent of ``np.atleast_Nd(*arys)``: each tangent reshaped like its result (one array for
    one input, else a tuple with 0 for inputs without tangent)."""
    if len(arys) == 1:
        return np.reshape(ts[0], np.shape(out))
    return TangentTuple(0 if is_zero(t) else np.reshape(t, np.shape(o)) for t, o in zip(ts, out))


@tangent(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def _(out, *arys):
    d[out] = atleast_tangent(d[arys], arys, out)


@tangent(np.broadcast_to)
def _(out, array, shape, subok=False):
    d[out] = np.broadcast_to(d[array], np.shape(out))


# ----- transposing -------------------------------------------------------------------------


@tangent(np.transpose)
def _(out, a, axes=None):
    d[out] = np.transpose(d[a], axes)


@tangent_method("swapaxes")
@tangent(np.swapaxes)
def _(out, a, axis1, axis2):
    d[out] = np.swapaxes(d[a], axis1, axis2)


@tangent(np.moveaxis)
def _(out, a, source, destination):
    d[out] = np.moveaxis(d[a], source, destination)


if hasattr(np, "matrix_transpose"):  # NumPy >= 2.0

    @tangent_attr("mT")
    @tangent(np.matrix_transpose)
    def _(out, x):
        d[out] = np.swapaxes(d[x], -1, -2)


# ----- joining -----------------------------------------------------------------------------


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
        return ns.concatenate_grad(g, xs, axis)
    if join is np.stack:
        return ns.stack_grad(g, xs, axis)
    parts = {np.hstack: ns.hstack_grad, np.vstack: ns.vstack_grad, np.dstack: ns.dstack_grad,
             np.column_stack: ns.column_stack_grad}
    return parts[join](g, xs)


@adjoint(join_tangent)
def _(out, join, ts, xs, joined, axis=0):
    d[ts] = join_tangent_adjoint(d[out], join, xs, axis)


@tangent(join_tangent)  # linear in ts
def _(out, join, ts, xs, joined, axis=0):
    d[out] = join_tangent(join, d[ts], xs, joined, axis)


@tangent(np.concatenate)
def _(ans, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    d[ans] = join_tangent(np.concatenate, d[arrays], arrays, ans, axis)


@tangent(np.stack)
def _(ans, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    d[ans] = join_tangent(np.stack, d[arrays], arrays, ans, axis)


@tangent(np.hstack)
def _(out, tup, *, dtype=None, casting="same_kind"):
    d[out] = join_tangent(np.hstack, d[tup], tup, out)


@tangent(np.vstack)
def _(out, tup, *, dtype=None, casting="same_kind"):
    d[out] = join_tangent(np.vstack, d[tup], tup, out)


@tangent(np.dstack)
def _(out, tup):
    d[out] = join_tangent(np.dstack, d[tup], tup, out)


@tangent(np.column_stack)
def _(out, tup):
    d[out] = join_tangent(np.column_stack, d[tup], tup, out)


# ----- splitting ---------------------------------------------------------------------------


@tangent(np.split)
def _(out, ary, indices_or_sections, axis=0):
    d[out] = np.split(d[ary], indices_or_sections, axis)


@tangent(np.array_split)
def _(out, ary, indices_or_sections, axis=0):
    d[out] = np.array_split(d[ary], indices_or_sections, axis)


@tangent(np.hsplit)
def _(out, ary, indices_or_sections):
    d[out] = np.hsplit(d[ary], indices_or_sections)


@tangent(np.vsplit)
def _(out, ary, indices_or_sections):
    d[out] = np.vsplit(d[ary], indices_or_sections)


@tangent(np.dsplit)
def _(out, ary, indices_or_sections):
    d[out] = np.dsplit(d[ary], indices_or_sections)


if hasattr(np, "unstack"):  # NumPy >= 2.1

    @tangent(np.unstack)
    def _(out, x, *, axis=0):
        d[out] = np.unstack(d[x], axis=axis)


# ----- repeating ---------------------------------------------------------------------------


@tangent(np.tile)
def _(out, A, reps):
    d[out] = np.tile(d[A], reps)


@tangent_method("repeat")
@tangent(np.repeat)
def _(out, a, repeats, axis=None):
    d[out] = np.repeat(d[a], repeats, axis)


# ----- reordering --------------------------------------------------------------------------


@tangent(np.flip)
def _(out, m, axis=None):
    d[out] = np.flip(d[m], axis)


@tangent(np.fliplr)
def _(out, m):
    d[out] = np.fliplr(d[m])


@tangent(np.flipud)
def _(out, m):
    d[out] = np.flipud(d[m])


@tangent(np.roll)
def _(out, a, shift, axis=None):
    d[out] = np.roll(d[a], shift, axis)


@tangent(np.rot90)
def _(out, m, k=1, axes=(0, 1)):
    d[out] = np.rot90(d[m], k, axes)


def sort_tangent(t, a, axis=-1):
    """Tangent of ``np.sort``: ``t`` gathered through the sorting permutation."""
    x = np.asarray(a)
    t = np.broadcast_to(t, x.shape)
    if axis is None:
        x, t, axis = x.ravel(), t.ravel(), -1
    order = np.argsort(x, axis=axis, kind="stable")
    return np.take_along_axis(t, order, axis=axis)


@tangent(np.sort)
def _(out, a, axis=-1, kind=None, order=None, *, stable=None):
    d[out] = sort_tangent(d[a], a, axis)


# ----- diagonals and triangles -------------------------------------------------------------


@tangent(np.diag)
def _(out, v, k=0):
    d[out] = np.diag(d[v], k)


@tangent_method("diagonal")
@tangent(np.diagonal)
def _(out, a, offset=0, axis1=0, axis2=1):
    d[out] = np.diagonal(d[a], offset, axis1, axis2)


@tangent_method("trace")
@tangent(np.trace)
def _(ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d[ans] = np.trace(d[a], offset, axis1, axis2, dtype)


@tangent(np.triu)
def _(out, m, k=0):
    d[out] = np.triu(d[m], k)


@tangent(np.tril)
def _(out, m, k=0):
    d[out] = np.tril(d[m], k)


# ----- indexing ----------------------------------------------------------------------------


@tangent_method("take")
@tangent(np.take)
def _(ans, a, indices, axis=None, out=None, mode="raise"):
    d[ans] = np.take(d[a], indices, axis, None, mode)


@tangent(np.take_along_axis)
def _(out, arr, indices, axis=-1):
    d[out] = np.take_along_axis(d[arr], indices, axis)


# ----- padding and differences -------------------------------------------------------------


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


@tangent(np.pad)
def _(out, array, pad_width, mode="constant", *, stat_length=None, constant_values=0,
      end_values=0, reflect_type="even"):
    d[out] = pad_tangent(d[array], array, pad_width, mode, stat_length, reflect_type)
    d[out] = pad_constant_tangent(d[constant_values], array, pad_width, mode)


def diff_tangent(t, which, a, n=1, axis=-1, prepend=None, append=None):
    """Tangent of ``np.diff(a, n, axis, prepend, append)`` from its input number ``which``
    (0: ``a``, 1: ``prepend``, 2: ``append``): the difference with the others zeroed."""
    if is_zero(t):
        return 0
    parts = [a, prepend, append]
    zeros = [None if p is None else np.zeros(np.shape(p), np.result_type(t, 1.0))
             for p in parts]
    zeros[which] = t
    ends = {k: z for k, z in (("prepend", zeros[1]), ("append", zeros[2])) if z is not None}
    return np.diff(zeros[0], n, axis, **ends)


@tangent(np.diff)
def _(out, a, n=1, axis=-1, prepend=None, append=None):
    d[out] = diff_tangent(d[a], 0, a, n, axis, prepend, append)
    d[out] = diff_tangent(d[prepend], 1, a, n, axis, prepend, append)
    d[out] = diff_tangent(d[append], 2, a, n, axis, prepend, append)


# ----- grids -------------------------------------------------------------------------------


def meshgrid_tangent(ts, xi, out, sparse=False, indexing="xy"):
    """Tangent of ``np.meshgrid(*xi)``: grid k is the same grid of ``t_k`` (0 without one)."""
    zeros = [np.zeros(np.shape(x), float_dtype(x)) if is_zero(t) else t for t, x in zip(ts, xi)]
    grids = np.meshgrid(*zeros, copy=True, sparse=sparse, indexing=indexing)
    return TangentTuple(0 if is_zero(t) else g for t, g in zip(ts, grids))


@tangent(np.meshgrid)
def _(out, *xi, copy=True, sparse=False, indexing="xy"):
    d[out] = meshgrid_tangent(d[xi], xi, out, sparse, indexing)


# ----- random draws of entries (nondiff.py's adjoint rules) --------------------------------


@tangent(np.random.permutation)
def _(out, x):
    d[out] = draw_tangent(d[x], x, out)


@tangent(np.random.choice)
def _(out, a, size=None, replace=True, p=None):
    d[out] = draw_tangent(d[a], a, out)


# ----- evenly spaced samples (numpy_shape.py's adjoint rules) ------------------------------


def linspace_tangent(t, out, num, endpoint, retstep, axis, at_stop):
    """Tangent of ``np.linspace`` from ``start`` or ``stop`` (``at_stop``): ``t`` spread over
    the samples with weights ``1 - t`` or ``t`` (and the step's, with ``retstep``)."""
    samples = out[0] if retstep else out
    ndim = np.ndim(samples)
    ax = ns.normalize_axis(axis, ndim)
    fractions = ns.spacing_fractions(num, endpoint, ndim, axis)
    across = np.shape(samples)[:ax] + np.shape(samples)[ax + 1:]
    t = np.broadcast_to(t, across)
    t_samples = (np.expand_dims(t, ax) * (fractions if at_stop else 1.0 - fractions)).astype(
        float_dtype(samples), copy=False)
    if not retstep:
        return t_samples
    intervals = num - 1 if endpoint else num
    t_step = (t if at_stop else -t) / intervals if intervals > 0 else 0.0 * t
    return TangentTuple((t_samples, t_step))


@tangent(np.linspace)
def _(out, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
      device=None):
    d[out] = linspace_tangent(d[start], out, num, endpoint, retstep, axis, False)
    d[out] = linspace_tangent(d[stop], out, num, endpoint, retstep, axis, True)


@tangent(np.logspace)
def _(out, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    d[out] = out * ns.log_base(base, out, axis) * linspace_tangent(d[start], out, num, endpoint,
                                                                   False, axis, False)
    d[out] = out * ns.log_base(base, out, axis) * linspace_tangent(d[stop], out, num, endpoint,
                                                                   False, axis, True)
    d[out] = out * np.log(out) / ns.log_base(base, out, axis) / ns.expand_base(base, out, axis) * \
        ns.expand_base(d[base], out, axis)


@tangent(np.geomspace)
def _(out, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    d[out] = out * linspace_tangent(d[start] / start, out, num, endpoint, False, axis, False)
    d[out] = out * linspace_tangent(d[stop] / stop, out, num, endpoint, False, axis, True)
