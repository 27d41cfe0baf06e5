"""Rules for NumPy's padding, differences, grids and evenly spaced samples, both directions:
``pad``, ``diff``, ``meshgrid``, ``mgrid``/``ogrid``, ``linspace``, ``logspace`` and
``geomspace`` (linear in start and stop), ``trapezoid`` and ``gradient``; each function's
adjoint with its tangent beside it.

The helpers the adjoints call (``transpose_grad``, ``take_grad``, ...) are linear in the gradient
``g``; forward mode over reverse-mode code (Hessian-vector products) differentiates them too.
Their tangent is derived by ``@linear`` on a template with the helper's signature and no body.
"""

import numpy as np

from mindgrad.rules import (
    adjoint,
    d,
    linear,
    linear_in,
    nondifferentiable,
    tangent,
    transpose,
    transpose_of,
)
from mindgrad.rules.helpers import astype_grad, cut, normalize_axis
from mindgrad.rules.nondiff import moves_refused
from mindgrad.runtime import is_any_zero, is_zero, unbroadcast, zero, zero_in, zero_in_zero_out
from mindgrad.runtime.arrays import as_array, is_dispatching
from mindgrad.runtime.buffers import scatter_add
from mindgrad.runtime.tangents import (
    TangentTuple,
    as_dtype_of,
    float_dtype,
    summable,
)

# ----- padding -----------------------------------------------------------------------------

PAD_MODES_BY_INDEX = ("constant", "edge", "reflect", "symmetric", "wrap")


@zero_in_zero_out("g")
def pad_grad(g, array, pad_width, mode="constant", reflect_type="even"):
    """Gradient of ``np.pad`` for the modes that copy elements: pad an array of element numbers
    the same way, then add each element of ``g`` back to the element it was copied from."""
    if zero_in(g):
        return zero
    if mode not in PAD_MODES_BY_INDEX or reflect_type != "even":
        raise NotImplementedError(
            f"np.pad(mode={mode!r}, reflect_type={reflect_type!r}) has no gradient rule; the "
            f"modes {', '.join(PAD_MODES_BY_INDEX)} (reflect_type='even') have one")
    x = as_array(array)
    numbers = np.arange(x.size).reshape(x.shape)
    if mode == "constant":
        source = np.pad(numbers, pad_width, mode, constant_values=-1)
    else:
        source = np.pad(numbers, pad_width, mode)
    copied = source >= 0
    if is_dispatching(g):  # Dask's and CuPy's: no writes into a NumPy buffer
        moved = np.ravel(g)[np.flatnonzero(copied)]
        grad = scatter_add(moved, source[copied], x.size, "np.pad")
        return astype_grad(np.reshape(grad, x.shape), array)
    grad = np.zeros(x.size, dtype=np.result_type(g, x, 1.0))
    np.add.at(grad, source[copied], as_array(g)[copied])
    return astype_grad(grad.reshape(x.shape), array)


@linear(pad_grad)
def _(out, g, array, pad_width, mode="constant", reflect_type="even"):
    ...


@zero_in_zero_out("t")
def pad_tangent(t, array, pad_width, mode="constant", stat_length=None, reflect_type="even"):
    """Tangent of ``np.pad`` from ``array``: the same padding of ``t`` for the modes that are
    linear in the array (constant values and end values have tangent 0 here)."""
    if zero_in(t):
        return zero
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


@zero_in_zero_out("t")
def pad_constant_tangent(t, array, pad_width, mode="constant"):
    """Tangent of ``np.pad(..., constant_values=c)`` from ``c``: ``t`` in the padding."""
    if is_zero(t):
        return zero
    if mode != "constant":
        return np.zeros(np.shape(np.pad(as_array(array), pad_width, "constant")))
    zeros = np.zeros(np.shape(array), dtype=np.result_type(t, 1.0))
    return np.pad(zeros, pad_width, "constant", constant_values=t)


@zero_in_zero_out("g")
def pad_constant_grad(g, constant_values, array, pad_width, mode="constant"):
    """Gradient of ``np.pad(..., constant_values=c)`` for ``c``: each entry of ``g`` in the
    padding added to the entry of ``c`` NumPy wrote there (a number, or one per axis and side),
    found by padding with the entries' numbers; 0 for the other modes, which ignore ``c``."""
    if zero_in(g):
        return zero
    if is_any_zero(g) or mode != "constant":
        return zero
    shape = np.shape(constant_values)
    size = int(np.prod(shape))
    codes = -2 - np.reshape(np.arange(size), shape)  # -1 is left for no padding
    source = np.pad(np.full(np.shape(array), -1), pad_width, "constant", constant_values=codes)
    padded = source <= -2
    slots = -2 - source[padded]
    parts = as_array(g)[padded]
    grad = np.bincount(slots, np.real(parts), size)  # a sum per entry, differentiable again
    if np.iscomplexobj(parts):
        grad = grad + 1j * np.bincount(slots, np.imag(parts), size)
    return astype_grad(np.reshape(grad, shape), constant_values)


@zero_in_zero_out("t")
def pad_end_values_tangent(t, mode="constant"):
    """Tangent of ``np.pad(..., end_values=e)`` from ``e``: refused for ``linear_ramp``, the
    mode that reads them (0 for the others, which ignore them)."""
    if zero_in(t):
        return zero
    if mode != "linear_ramp":
        return zero
    return moves_refused("np.pad's end_values (mode='linear_ramp')", t)


# transposes of the tangents in their tangent t (@transpose reads them)
@transpose_of(pad_tangent)
def _(out, t, array, pad_width, mode="constant", stat_length=None, reflect_type="even"):
    d[t] = pad_grad(d[out], array, pad_width, mode, reflect_type)


@transpose_of(pad_constant_tangent)
def _(out, t, array, pad_width, mode="constant"):
    d[t] = pad_constant_grad(d[out], t, array, pad_width, mode)


@transpose_of(pad_end_values_tangent)  # a refusal, or 0: its own transpose
def _(out, t, mode="constant"):
    d[t] = pad_end_values_tangent(d[out], mode)


# d[array] = pad_grad(d[out], array, pad_width, mode, reflect_type),
# d[constant_values] = pad_constant_grad(d[out], constant_values, array, pad_width, mode)
@transpose(np.pad)
@tangent(np.pad)
def _(out, array, pad_width, mode="constant", *, stat_length=None, constant_values=0,
      end_values=0, reflect_type="even"):
    d[out] = pad_tangent(d[array], array, pad_width, mode, stat_length, reflect_type)
    d[out] = pad_constant_tangent(d[constant_values], array, pad_width, mode)
    d[out] = pad_end_values_tangent(d[end_values], mode)



# ----- differences -------------------------------------------------------------------------


@zero_in_zero_out("g")
def diff_grads(g, a, n=1, axis=-1, prepend=None, append=None):
    """Gradients of ``np.diff(a, n, axis, prepend, append)`` for ``(a, prepend, append)``: each
    difference ``y[i] = x[i+1] - x[i]`` sends ``g[i]`` to ``x[i+1]`` and ``-g[i]`` to ``x[i]``."""
    if zero_in(g):
        return zero
    if is_any_zero(g):
        return zero, zero, zero
    x = as_array(a)
    axis = normalize_axis(axis, x.ndim)
    grad = as_array(g)
    for _ in range(n):
        shape = list(grad.shape)
        shape[axis] = 1
        edge = np.zeros(shape, dtype=grad.dtype)
        grad = np.concatenate([edge, grad], axis) - np.concatenate([grad, edge], axis)
    lengths = [0 if p is None else (np.shape(p)[axis] if np.ndim(p) else 1)
               for p in (prepend, append)]
    pieces = cut(grad, [lengths[0], grad.shape[axis] - lengths[1]], axis)
    g_prepend = zero if prepend is None else unbroadcast(pieces[0], prepend)
    g_append = zero if append is None else unbroadcast(pieces[2], append)
    return astype_grad(pieces[1], a), g_prepend, g_append


@tangent(diff_grads)  # linear in g; a tuple of tangents adds element by element
def _(out, g, a, n=1, axis=-1, prepend=None, append=None):
    d[out] = summable(diff_grads(d[g], a, n, axis, prepend, append))


@zero_in_zero_out("t")
def diff_tangent(t, which, a, n=1, axis=-1, prepend=None, append=None):
    """Tangent of ``np.diff(a, n, axis, prepend, append)`` from its input number ``which``
    (0: ``a``, 1: ``prepend``, 2: ``append``): the difference with the others zeroed."""
    if is_zero(t):
        return zero
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


@linear_in("g", any_number=True)
def diff_grad(g, which, a, n=1, axis=-1, prepend=None, append=None):
    """Gradient of ``np.diff(a, n, axis, prepend, append)`` for its input number ``which`` (0:
    ``a``, 1: ``prepend``, 2: ``append``): the transpose of ``diff_tangent``."""
    return diff_grads(g, a, n, axis, prepend, append)[which]


@linear(diff_tangent, wrt="t")
@adjoint(diff_tangent)  # linear in t: the transpose is the gradient
def _(out, t, which, a, n=1, axis=-1, prepend=None, append=None):
    d[t] = diff_grad(d[out], which, a, n, axis, prepend, append)


@transpose(np.diff)  # d[a] = diff_grad(d[out], 0, a, n, axis, prepend, append), ...
@tangent(np.diff)
def _(out, a, n=1, axis=-1, prepend=None, append=None):
    d[out] = diff_tangent(d[a], 0, a, n, axis, prepend, append)
    d[out] = diff_tangent(d[prepend], 1, a, n, axis, prepend, append)
    d[out] = diff_tangent(d[append], 2, a, n, axis, prepend, append)



# ----- grids -------------------------------------------------------------------------------


@zero_in_zero_out("gs")
def meshgrid_grads(gs, xi, indexing="xy"):
    """Gradients of ``np.meshgrid(*xi)``: each grid summed over every axis but its own (with
    ``indexing='xy'`` the first two inputs vary along axes 1 and 0)."""
    if zero_in(gs):
        return zero
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
    if zero_in(ts):
        return zero
    n = len(xi)
    grids = []
    for k in range(n):
        if is_zero(ts[k]):
            grids.append(0)
        else:
            axis = 1 - k if indexing == "xy" and n > 1 and k < 2 else k
            shape = [1] * n
            shape[axis] = as_array(xi[k]).size
            grid = np.reshape(ts[k], shape)
            if not sparse:
                grid = np.broadcast_to(grid, np.shape(out[k])).copy()
            grids.append(grid)
    return TangentTuple(grids)


# the tangent transposed in its tangent (@transpose reads it)
@transpose_of(meshgrid_tangent)
def _(ans, ts, xi, out, sparse=False, indexing="xy"):
    d[ts] = meshgrid_grads(d[ans], xi, indexing)


@transpose(np.meshgrid)
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


@zero_in_zero_out("g")
def linspace_grad(g, x, num, endpoint, retstep, axis, at_stop):
    """Gradient of ``np.linspace`` for ``x``, its ``start`` (weights ``1 - t``) or its ``stop``
    (``at_stop``, weights ``t``): the samples' gradient summed over their axis, plus the step's
    (``retstep``) divided by the number of intervals."""
    if is_zero(g):
        return zero
    g_samples, g_step = g if retstep else (g, 0)
    grad = zero
    if not is_zero(g_samples):
        ndim = np.ndim(g_samples)
        t = spacing_fractions(num, endpoint, ndim, axis)
        grad = np.sum(g_samples * (t if at_stop else 1.0 - t), axis=normalize_axis(axis, ndim))
    intervals = num - 1 if endpoint else num
    if not is_zero(g_step) and intervals > 0:
        grad = grad + (g_step if at_stop else -g_step) / intervals
    if is_zero(grad):
        return zero
    return astype_grad(unbroadcast(grad, x), x)


@zero_in_zero_out("t")
def linspace_tangent(t, out, num, endpoint, retstep, axis, at_stop):
    """Tangent of ``np.linspace`` from ``start`` or ``stop`` (``at_stop``): ``t`` spread over
    the samples with weights ``1 - t`` or ``t`` (and the step's, with ``retstep``)."""
    if zero_in(t):
        return zero
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


# the tangent transposed in its tangent (@transpose reads it)
@transpose_of(linspace_tangent)  # t stands for the end it is the tangent of (its shape)
def _(ans, t, out, num, endpoint, retstep, axis, at_stop):
    d[t] = linspace_grad(d[ans], t, num, endpoint, retstep, axis, at_stop)


@transpose(np.linspace)
@tangent(np.linspace)
def _(out, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
      device=None):
    d[out] = linspace_tangent(d[start], out, num, endpoint, retstep, axis, False)
    d[out] = linspace_tangent(d[stop], out, num, endpoint, retstep, axis, True)


# arange(start, stop, step) = start + k * step for k < its length, which moves with none of
# them but at the points where it jumps: linear in start and step, constant in stop


@zero_in_zero_out("g")
def arange_grads(g, args, out):
    """Gradients of ``np.arange(*args)``, one per positional argument: ``start`` gets the sum of
    ``g``, ``step`` that of ``k g``, ``stop`` (and the one argument of ``arange(stop)``, whose
    values are 0, 1, ...) 0; all 0 for an integer result."""
    if zero_in(g):
        return zero
    grads = [zero] * len(args)
    if is_zero(g) or len(args) < 2 or as_array(out).dtype.kind not in "fc":
        return tuple(grads)
    grads[0] = astype_grad(np.sum(g), args[0])
    if len(args) > 2 and args[2] is not None:
        grads[2] = astype_grad(np.sum(g * np.arange(np.size(out))), args[2])
    return tuple(grads)


@zero_in_zero_out("ts")
def arange_tangent(ts, args, out):
    """Tangent of ``np.arange(*args)``: ``t_start + k t_step`` (see ``arange_grads``)."""
    if zero_in(ts):
        return zero
    dtype = float_dtype(out)
    t = np.zeros(np.shape(out), dtype)
    if len(args) < 2 or as_array(out).dtype.kind not in "fc":
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


@transpose(np.arange)  # d[args] = arange_grads(d[out], args, out)
@tangent(np.arange)
def _(out, *args, dtype=None, device=None, like=None):
    """``start + k step``: linear in ``start`` and ``step``; ``stop`` only sets the length."""
    d[out] = arange_tangent(d[args], args, out)


@zero_in_zero_out("base")
def expand_base(base, out, axis):
    """``base`` (or its tangent) shaped as ``np.logspace`` broadcasts it against its samples."""
    if zero_in(base):
        return zero
    if np.ndim(base) == 0:
        return base
    base = as_array(base)
    base = base.reshape((1,) * (np.ndim(out) - 1 - base.ndim) + base.shape)
    return np.expand_dims(base, axis)


def log_base(base, out, axis):
    """``log(base)``, shaped as ``np.logspace`` broadcasts ``base`` against its samples."""
    return np.log(expand_base(base, out, axis))


@zero_in_zero_out("g")
def logspace_base_grad(g, out, base, axis):
    """Gradient of ``np.logspace`` for its ``base``: ``out * y / base`` with ``y`` the exponents,
    summed over the samples' axis."""
    if is_zero(g):
        return zero
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


@zero_in_zero_out("g")
def geomspace_grad(g, out, x, num, endpoint, axis, at_stop):
    """Gradient of ``np.geomspace`` for ``start`` or ``stop`` (``at_stop``): ``out / x``
    weighted as in ``linspace``."""
    if is_zero(g):
        return zero
    return astype_grad(linspace_grad(g * out, x, num, endpoint, False, axis, at_stop) / x, x)


@zero_in_zero_out("t")
def geomspace_tangent(t, x, out, num, endpoint, axis, at_stop):
    """Tangent of ``out = np.geomspace`` from ``start`` or ``stop`` (``x``; ``at_stop``):
    ``out`` times ``linspace``'s tangent of the relative change ``t / x``."""
    if zero_in(t):
        return zero
    return out * linspace_tangent(t / x, out, num, endpoint, False, axis, at_stop)


@transpose_of(geomspace_tangent)  # the tangent transposed in t (@transpose reads it)
def _(ans, t, x, out, num, endpoint, axis, at_stop):
    d[t] = geomspace_grad(d[ans], out, x, num, endpoint, axis, at_stop)


@transpose(np.geomspace)
@tangent(np.geomspace)
def _(out, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    d[out] = geomspace_tangent(d[start], start, out, num, endpoint, axis, False)
    d[out] = geomspace_tangent(d[stop], stop, out, num, endpoint, axis, True)


# ----- trapezoidal rule ----------------------------------------------------------------------

TRAPEZOID = getattr(np, "trapezoid", None) or np.trapz  # np.trapz before NumPy 2.0
TRAPEZOIDS = tuple(fn for fn in (getattr(np, "trapezoid", None), getattr(np, "trapz", None))
                   if fn is not None)


@zero_in_zero_out("y", "x")
def trapezoid_of(y, x=None, dx=1.0, axis=-1):
    """``np.trapezoid`` (``np.trapz`` before NumPy 2.0); bilinear in ``y`` and ``x``: the zero
    for the zero in either (a tangent)."""
    if zero_in(y, x):
        return zero
    return TRAPEZOID(y, x, dx, axis)



def trapezoid_weights(y, x=None, dx=1.0, axis=-1):
    """How much each of ``y``'s entries along ``axis`` counts in ``np.trapezoid(y, x, dx,
    axis)``: half the steps on either side (``dx`` each without ``x``), along the last axis of an
    array that broadcasts against ``y`` moved so."""
    n = np.shape(y)[axis]
    if x is None:
        steps = np.full(max(n - 1, 0), 1.0) * dx
    else:
        steps = np.diff(np.moveaxis(as_array(x), axis, -1) if np.ndim(x) > 1 else x, axis=-1)
    pad_before = [(0, 0)] * (np.ndim(steps) - 1) + [(1, 0)]
    pad_after = [(0, 0)] * (np.ndim(steps) - 1) + [(0, 1)]
    return 0.5 * (np.pad(steps, pad_before) + np.pad(steps, pad_after))


@zero_in_zero_out("g")
def trapezoid_grads(g, y, x=None, dx=1.0, axis=-1):
    """Gradients of ``np.trapezoid(y, x, dx, axis) = sum_i (x_i+1 - x_i) (y_i + y_i+1) / 2``
    for ``y`` (``trapezoid_weights``), ``x`` (``m_j-1 - m_j`` for the mean heights ``m``) and
    ``dx`` (the sum of ``m``)."""
    if zero_in(g):
        return zero
    g_last = np.expand_dims(g, -1)
    moved = np.moveaxis(as_array(y), axis, -1)
    g_y = np.moveaxis(unbroadcast(g_last * trapezoid_weights(y, x, dx, axis), moved), -1, axis)
    heights = 0.5 * (moved[..., 1:] + moved[..., :-1])
    g_x = zero
    g_dx = zero
    if x is None:
        g_dx = unbroadcast(g * np.sum(heights, axis=-1), dx)
    else:
        ends = [(0, 0)] * (np.ndim(heights) - 1)
        change = g_last * (np.pad(heights, ends + [(1, 0)]) - np.pad(heights, ends + [(0, 1)]))
        if np.ndim(x) == 1:
            g_x = np.sum(np.reshape(change, (-1, np.shape(change)[-1])), axis=0)
        else:
            x_moved = np.moveaxis(as_array(x), axis, -1)
            g_x = np.moveaxis(unbroadcast(change, x_moved), -1, axis)
        g_x = astype_grad(g_x, x)
    return astype_grad(g_y, y), g_x, g_dx


@zero_in_zero_out("t")
def trapezoid_dx_tangent(t, y, x=None, axis=-1):
    """Tangent of ``np.trapezoid`` from ``dx``: the same rule with steps ``t``, but nothing when
    ``x`` is given (``dx`` is then not read)."""
    if zero_in(t):
        return zero
    if x is not None:
        return zero
    return trapezoid_of(y, None, t, axis)




# the tangents transposed in their tangents (@transpose reads them): trapezoid_of is linear in
# y and in x, and trapezoid_grads gives all three gradients at once (dx's t stands for dx)
@transpose_of(trapezoid_of)
def _(out, y, x=None, dx=1.0, axis=-1):
    d[y] = trapezoid_grads(d[out], y, x, dx, axis)[0]
    d[x] = trapezoid_grads(d[out], y, x, dx, axis)[1]


@transpose_of(trapezoid_dx_tangent)
def _(out, t, y, x=None, axis=-1):
    d[t] = trapezoid_grads(d[out], y, x, t, axis)[2]


@transpose(*TRAPEZOIDS)
@tangent(*TRAPEZOIDS)
def _(out, y, x=None, dx=1.0, axis=-1):
    d[out] = trapezoid_of(d[y], x, dx, axis)
    d[out] = trapezoid_of(y, d[x], dx, axis)
    d[out] = trapezoid_dx_tangent(d[dx], y, x, axis)



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
    if zero_in(g):
        return zero
    axes = gradient_axes(f, axis)
    gs = [g] if len(axes) == 1 else g
    grad = zero
    for k in range(len(axes)):
        if not is_zero(gs[k]):
            op = gradient_operator(np.shape(f)[axes[k]], gradient_spacing(varargs, k), edge_order)
            grad = grad + np.moveaxis(np.tensordot(op, gs[k], axes=([0], [axes[k]])), 0, axes[k])
    return astype_grad(grad, f)


@zero_in_zero_out("g")
def gradient_grad_spacing(g, f, varargs, out, axis=None, edge_order=1):
    """Gradients of ``np.gradient(f, *varargs)`` for scalar spacings ``h``: each result is
    ``f``'s unit-spacing differences over ``h``, so ``h`` gets ``-sum(g * result) / h``."""
    if zero_in(g):
        return zero
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


@zero_in_zero_out("ts")
def gradient_tangent_spacing(ts, f, varargs, out, axis=None, edge_order=1):
    """Tangent of ``np.gradient(f, *varargs)`` from scalar spacings: ``-out * dh / h``."""
    if zero_in(ts):
        return zero
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


@zero_in_zero_out("t")
def gradient_tangent_f(t, f, varargs, out, axis=None, edge_order=1):
    """Tangent of ``np.gradient(f, *varargs)`` from ``f``: the same differences of ``t``."""
    if zero_in(t):
        return zero
    full = np.broadcast_to(t, np.shape(f))
    axes = gradient_axes(f, axis)
    outs = [out] if len(axes) == 1 else out
    parts = []
    for k in range(len(axes)):  # axis by axis: no *varargs, so it differentiates again
        change = np.gradient(full, gradient_spacing(varargs, k), axis=axes[k],
                             edge_order=edge_order)
        parts.append(as_dtype_of(change, outs[k]))
    return parts[0] if len(axes) == 1 else TangentTuple(parts)


# the tangent transposed in its tangent (@transpose reads it)
@transpose_of(gradient_tangent_f)
def _(ans, t, f, varargs, out, axis=None, edge_order=1):
    d[t] = gradient_grad_f(d[ans], f, varargs, axis, edge_order)


@transpose_of(gradient_tangent_spacing)
def _(ans, ts, f, varargs, out, axis=None, edge_order=1):
    d[ts] = gradient_grad_spacing(d[ans], f, varargs, out, axis, edge_order)


@transpose(np.gradient)
@tangent(np.gradient)
def _(out, f, *varargs, axis=None, edge_order=1):
    """Linear in ``f``; a scalar spacing ``h`` gets ``-sum(g * out) / h``; coordinate arrays as
    the spacing have no gradient (an error when one is needed)."""
    d[out] = gradient_tangent_f(d[f], f, varargs, out, axis, edge_order)
    d[out] = gradient_tangent_spacing(d[varargs], f, varargs, out, axis, edge_order)
