"""Rules for the NumPy functions that call a function of the user's: ``np.apply_along_axis``
and ``np.piecewise``, in both directions, to first order.

The user's function is differentiated by mindgrad itself, on the slices (the selected entries)
it is called on: the API registers its ``vjp`` and ``jvp`` here (``register_api``), as the
layers go (the API sits above the rules). The function must be one mindgrad can read: a
function or lambda defined outside the function being differentiated (a module's, a closure's
from an enclosing scope), or a ``functools.partial`` of one; a lambda written inside the
differentiated function cannot yet be passed as a value.

``apply_along_axis(func1d, axis, arr, *args)``: each 1-d slice of ``arr`` along ``axis`` goes
through ``func1d``; its derivative is ``func1d``'s, slice by slice. ``piecewise(x, condlist,
funclist, *args)``: where ``condlist[k]`` holds (the last condition that holds, as NumPy
writes them in order; the extra function, if any, where none does) the result is
``funclist[k](x[condlist[k]], *args)``, or the constant ``funclist[k]``, which gets the sum of
the cotangent where it is kept. The conditions are constants; the extra arguments ``args``
are differentiated too (floats and their arrays only), and keywords for the function are
refused (the call does not match the rule). The derivatives of these derivatives (second
order) are not implemented: they raise ``NotImplementedError``.
"""

import numpy as np

from mindgrad.rules import adjoint, d, nondifferentiable, tangent
from mindgrad.rules.helpers import astype_grad
from mindgrad.runtime import is_zero, unbroadcast, zero, zero_in, zero_in_zero_out
from mindgrad.runtime.arrays import as_array
from mindgrad.runtime.tangents import as_dtype_of

_API = {}  # "vjp", "jvp": mindgrad's own, registered by mindgrad.api


def register_api(vjp, jvp):
    """Let the rules differentiate the user's functions with mindgrad's ``vjp`` and ``jvp``."""
    _API["vjp"] = vjp
    _API["jvp"] = jvp


def user_vjp(fn, *inputs):
    """mindgrad's ``vjp(fn, *inputs)``: ``(out, vjp_fn)``."""
    return _API["vjp"](fn, *inputs)


def user_jvp(fn, inputs, tangents):
    """mindgrad's ``jvp(fn, inputs, tangents)``: ``(out, tangent)``."""
    return _API["jvp"](fn, inputs, tangents)


def with_extra(fn):
    """``fn`` as a function mindgrad reads: called with an entry (slice) and the extra
    arguments."""
    def call(x, *extra):
        return fn(x, *extra)
    return call


def function_vjp(fn, x, args, g):
    """The gradients of ``vdot(g, fn(x, *args))`` for ``x`` and each of ``args``, by
    mindgrad; ``g`` is summed to the shape of ``fn``'s result where that broadcasts to it."""
    out, vjp = user_vjp(with_extra(fn), x, *args)
    return vjp(unbroadcast(g, out))


def function_jvp(fn, x, args, t, t_args):
    """The tangent of ``fn(x, *args)`` in the directions ``t`` and ``t_args``, by mindgrad."""
    t_args = [np.zeros(np.shape(a), dtype=np.result_type(a, 1.0)) if is_zero(v) else v
              for a, v in zip(args, t_args)]
    return user_jvp(with_extra(fn), (x, *args), (t, *t_args))[1]


def float_args(args):
    """Refuse extra arguments mindgrad cannot differentiate through: the user's function is
    differentiated with respect to each of them (floats, complex numbers and their arrays)."""
    for a in args:
        if as_array(a).dtype.kind not in "fc":
            raise NotImplementedError(
                "mindgrad differentiates np.apply_along_axis and np.piecewise with extra "
                f"arguments that are floats or float arrays only, not {type(a).__name__}; "
                "bind others into the function (a closure or functools.partial)")
    return args


nondifferentiable(float_args)


# ----- apply_along_axis ----------------------------------------------------------------------


def along_last(x, axis, k):
    """``x`` with its ``k`` axes from ``axis`` on moved last, then all others flattened into
    one axis first: ``(slices, *their shape)``."""
    moved = np.moveaxis(x, list(range(axis, axis + k)), list(range(-k, 0))) if k else x
    return np.reshape(moved, (-1,) + np.shape(moved)[np.ndim(moved) - k:])


def from_last(y, shape, axis, k):
    """The inverse of ``along_last``: ``y`` of ``(slices, *piece)`` back to ``shape``, whose
    ``k`` axes from ``axis`` hold a piece."""
    piece = tuple(shape[axis:axis + k])
    rest = tuple(shape[:axis]) + tuple(shape[axis + k:])
    y = np.reshape(y, rest + piece)
    return np.moveaxis(y, list(range(-k, 0)), list(range(axis, axis + k))) if k else y


def piece_rank(arr, out, axis):
    """How many axes of ``out`` one call of ``func1d`` gives (0 for a scalar)."""
    return np.ndim(out) - np.ndim(arr) + 1


nondifferentiable(along_last, from_last, piece_rank)


def normal_axis(arr, axis):
    return axis % np.ndim(arr)


nondifferentiable(normal_axis)


@zero_in_zero_out("g")
def apply_along_axis_grads(g, func1d, axis, arr, result, args=()):
    """Gradients of ``result = np.apply_along_axis(func1d, axis, arr, *args)`` for ``arr`` and
    each of ``args``: ``func1d``'s, slice by slice (summed over the slices for ``args``)."""
    if zero_in(g):
        return zero
    axis = normal_axis(arr, axis)
    k = piece_rank(arr, result, axis)
    args = float_args(args)
    cotangents = along_last(as_array(g) + np.zeros(np.shape(result)), axis, k)
    per_slice = [function_vjp(func1d, s, args, c)
                 for s, c in zip(along_last(arr, axis, 1), cotangents)]
    g_arr = np.stack([grads[0] for grads in per_slice])
    g_args = tuple(astype_grad(sum(grads[i + 1] for grads in per_slice), a)
                   for i, a in enumerate(args))
    return astype_grad(from_last(g_arr, np.shape(arr), axis, 1), arr), g_args


@zero_in_zero_out("t", "t_args")
def apply_along_axis_tangent(t, t_args, func1d, axis, arr, result, args=()):
    """Tangent of ``np.apply_along_axis(func1d, axis, arr, *args)`` from ``arr``'s tangent
    ``t`` and ``args``' ``t_args`` (zeros where they have none): ``func1d``'s, slice by
    slice."""
    if zero_in(t) and zero_in(t_args):
        return zero
    axis = normal_axis(arr, axis)
    k = piece_rank(arr, result, axis)
    args = float_args(args)
    t = as_array(t) + np.zeros(np.shape(arr))
    t_args = [zero] * len(args) if is_zero(t_args) else list(t_args)
    pieces = [function_jvp(func1d, s, args, v, t_args)
              for s, v in zip(along_last(arr, axis, 1), along_last(t, axis, 1))]
    return as_dtype_of(from_last(np.stack(pieces), np.shape(result), axis, k), result)


@adjoint(np.apply_along_axis)
def _(out, func1d, axis, arr, *args):
    """``func1d`` one mindgrad can read (defined outside the differentiated function), with
    extra positional arguments of floats (keywords for it are refused); first order only."""
    both = apply_along_axis_grads(d[out], func1d, axis, arr, out, args)
    d[arr] = both[0]
    d[args] = both[1]


@tangent(np.apply_along_axis)
def _(out, func1d, axis, arr, *args):
    d[out] = apply_along_axis_tangent(d[arr], 0, func1d, axis, arr, out, args)
    d[out] = apply_along_axis_tangent(0, d[args], func1d, axis, arr, out, args)


# ----- piecewise -----------------------------------------------------------------------------


def piecewise_pieces(x, condlist, funclist):
    """``(masks, funcs)``: for each function of ``funclist`` the entries of ``x`` it is called
    on, and where its value is the result (no later condition holding), as NumPy reads
    ``condlist`` (one condition or a list; one more function than conditions: the default)."""
    x = np.asanyarray(x)
    if np.isscalar(condlist) or (not isinstance(condlist[0], (list, np.ndarray))
                                 and x.ndim != 0):
        condlist = [condlist]
    conds = np.asarray(condlist, dtype=bool)
    if len(conds) == len(funclist) - 1:
        conds = np.concatenate([conds, ~np.any(conds, axis=0, keepdims=True)], axis=0)
    later = np.zeros(np.shape(conds)[1:], dtype=bool)
    kept = []
    for cond in conds[::-1]:
        kept.append(np.logical_and(cond, np.logical_not(later)))
        later = np.logical_or(later, cond)
    return list(conds), kept[::-1]


nondifferentiable(piecewise_pieces)


@zero_in_zero_out("g")
def piecewise_grads(g, x, condlist, funclist, args=()):
    """Gradients of ``np.piecewise(x, condlist, funclist, *args)`` for ``x``, ``funclist``
    (its constants: the sum of the cotangent where their value is kept; its functions: none)
    and each of ``args``: each function's on the entries it is called on, from the cotangent
    where its value is kept."""
    if zero_in(g):
        return zero
    conds, kept = piecewise_pieces(x, condlist, funclist)
    args = float_args(args)
    g = as_array(g) + np.zeros(np.shape(x))
    g_x = np.zeros(np.shape(x), dtype=np.result_type(g, x, 1.0))
    g_args = [0.0] * len(args)
    g_funcs = []
    for cond, keep, func in zip(conds, kept, funclist):
        if not callable(func):
            g_funcs.append(astype_grad(np.sum(np.where(keep, g, 0.0)), func))
            continue
        g_funcs.append(0)
        if np.any(cond):
            grads = function_vjp(func, as_array(x)[cond], args, np.where(keep, g, 0.0)[cond])
            g_x[cond] += grads[0]
            g_args = [total + part for total, part in zip(g_args, grads[1:])]
    g_funcs = g_funcs[:len(funclist)]
    g_args = tuple(astype_grad(v, a) for v, a in zip(g_args, args))
    return astype_grad(g_x, x), type(funclist)(g_funcs), g_args


@zero_in_zero_out("t", "t_funcs", "t_args")
def piecewise_tangent(t, t_funcs, t_args, x, result, condlist, funclist, args=()):
    """Tangent of ``np.piecewise(x, condlist, funclist, *args)`` from the tangents of ``x``,
    of ``funclist``'s constants and of ``args`` (each 0 where it has none): each piece's where
    its value is kept."""
    if zero_in(t) and zero_in(t_funcs) and zero_in(t_args):
        return zero
    conds, kept = piecewise_pieces(x, condlist, funclist)
    args = float_args(args)
    t = as_array(t) + np.zeros(np.shape(x))
    t_args = [zero] * len(args) if is_zero(t_args) else list(t_args)
    t_funcs = [zero] * len(funclist) if is_zero(t_funcs) else list(t_funcs)
    total = np.zeros(np.shape(result), dtype=np.result_type(result, t))
    for cond, keep, func, t_func in zip(conds, kept, funclist, t_funcs):
        if not callable(func):
            total = total if is_zero(t_func) else np.where(keep, t_func, total)
        elif np.any(keep):
            piece = np.zeros(np.shape(result), dtype=total.dtype)
            piece[cond] = function_jvp(func, as_array(x)[cond], args, t[cond], t_args)
            total = np.where(keep, piece, total)
    return as_dtype_of(total, result)


@adjoint(np.piecewise)
def _(out, x, condlist, funclist, *args):
    """The functions of ``funclist`` ones mindgrad can read (defined outside the
    differentiated function), the conditions constants, extra positional arguments floats
    (keywords for the functions are refused); first order only."""
    all_grads = piecewise_grads(d[out], x, condlist, funclist, args)
    d[x] = all_grads[0]
    d[funclist] = all_grads[1]
    d[args] = all_grads[2]


@tangent(np.piecewise)
def _(out, x, condlist, funclist, *args):
    d[out] = piecewise_tangent(d[x], 0, 0, x, out, condlist, funclist, args)
    d[out] = piecewise_tangent(0, d[funclist], 0, x, out, condlist, funclist, args)
    d[out] = piecewise_tangent(0, 0, d[args], x, out, condlist, funclist, args)


# ----- second order: refused -----------------------------------------------------------------


def refuse_second_order(x, name="np.apply_along_axis and np.piecewise"):
    raise NotImplementedError(
        f"the second derivative of {name} (the derivative of the user's function they call, "
        "differentiated again) is not implemented; the first derivative is")


nondifferentiable(refuse_second_order)


@adjoint(apply_along_axis_grads)
def _(out, g, func1d, axis, arr, result, args=()):
    d[g] = refuse_second_order(g)
    d[arr] = refuse_second_order(arr)


@tangent(apply_along_axis_grads)
def _(out, g, func1d, axis, arr, result, args=()):
    d[out] = refuse_second_order(g)


@adjoint(apply_along_axis_tangent)
def _(out, t, t_args, func1d, axis, arr, result, args=()):
    d[t] = refuse_second_order(t)
    d[arr] = refuse_second_order(arr)


@tangent(apply_along_axis_tangent)
def _(out, t, t_args, func1d, axis, arr, result, args=()):
    d[out] = refuse_second_order(t)


@adjoint(piecewise_grads)
def _(out, g, x, condlist, funclist, args=()):
    d[g] = refuse_second_order(g)
    d[x] = refuse_second_order(x)


@tangent(piecewise_grads)
def _(out, g, x, condlist, funclist, args=()):
    d[out] = refuse_second_order(g)


@adjoint(piecewise_tangent)
def _(out, t, t_funcs, t_args, x, result, condlist, funclist, args=()):
    d[t] = refuse_second_order(t)
    d[x] = refuse_second_order(x)


@tangent(piecewise_tangent)
def _(out, t, t_funcs, t_args, x, result, condlist, funclist, args=()):
    d[out] = refuse_second_order(t)
