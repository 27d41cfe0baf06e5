"""What ``jit=True`` code calls in place of the runtime's helpers: Numba implementations of
``seed``, ``unbroadcast``, ``reduce_sum_grad``, ``reduce_mean_grad`` and ``zeros_buffer`` for
the types Numba infers, each giving what the NumPy helper of the same name gives.

Each name here is a stub that only Numba calls; its ``overload`` reads the argument types and
either returns an implementation or refuses the case: a refusal is noted in ``REFUSED`` (the
helper and the types), which ``jit`` names in its error, so a case not written here is never
computed by a guess. This module imports Numba: only ``jit`` imports it, when a gradient with
``jit=True`` is built.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic, overload
from numba.np.numpy_support import as_dtype

__all__ = ["HELPERS", "REFUSED", "reduce_mean_grad", "reduce_sum_grad", "seed", "some",
           "unbroadcast", "zeros_buffer"]

REFUSED: list = []  # (helper, argument types) for each case refused while typing


def _bare(t):
    """The type under an Optional (a variable ``None`` before its loop's first iteration)."""
    return t.type if isinstance(t, types.Optional) else t


def _real(t) -> bool:
    return isinstance(t, types.Float) or isinstance(t, types.Array) and \
        isinstance(t.dtype, types.Float)


def _refuse(helper, *arg_types):
    if not any(isinstance(t, types.NoneType) for t in arg_types):  # a type Numba tries first
        REFUSED.append((helper, tuple(str(t) for t in arg_types)))


def _omitted(t) -> bool:
    return t is None or isinstance(t, (types.Omitted, types.NoneType))


@intrinsic
def some(typingctx, value):
    """A variable that is ``None`` until its loop assigns it, as the value it holds where the
    code reads it: Numba's check raises if it is still ``None`` (the Python code would fail
    there too), so its readers see one type."""
    if isinstance(value, types.Optional):
        def unwrap(context, builder, signature, args):
            held = context.cast(builder, args[0], value, value.type)
            return impl_ret_borrowed(context, builder, value.type, held)
        return value.type(value), unwrap
    if isinstance(value, types.NoneType):
        return None

    def same(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, value, args[0])
    return value(value), same


# ----- the output's sensitivity ---------------------------------------------------------------


def seed(out, sens=None):
    """``runtime.seed`` for a float or float array output (compiled by Numba only)."""
    raise NotImplementedError("compiled by Numba only")


@overload(seed)
def _seed(out, sens=None):
    o = _bare(out)
    if not _real(o) or not (_omitted(sens) or _real(_bare(sens)) or
                            isinstance(_bare(sens), types.Integer)):
        return _refuse("seed", out, sens)
    s = None if _omitted(sens) else _bare(sens)
    if isinstance(o, types.Float):
        one = as_dtype(o).type(1.0)
        if s is None:
            return lambda out, sens=None: one
        if isinstance(s, types.Array):
            def mismatch(out, sens=None):
                raise ValueError("sens has a shape other than the output's (a float)")
            return mismatch
        return lambda out, sens=None: sens
    if s is None:
        return lambda out, sens=None: np.ones_like(out)
    if not isinstance(s, types.Array) or s.ndim != o.ndim:
        def mismatch_array(out, sens=None):
            raise ValueError("sens has a shape other than the output's")
        return mismatch_array

    def checked(out, sens=None):
        if sens.shape != out.shape:
            raise ValueError("sens has a shape other than the output's")
        return sens.astype(out.dtype)  # a copy: the gradient code may update it in place
    return checked


# ----- broadcasting and reductions --------------------------------------------------------------


def unbroadcast(g, x):
    """``runtime.unbroadcast`` for real floats and arrays (compiled by Numba only)."""
    raise NotImplementedError("compiled by Numba only")


@overload(unbroadcast)
def _unbroadcast(g, x):
    gt, xt = _bare(g), _bare(x)
    if not _real(gt) or not (_real(xt) or isinstance(xt, types.Integer)):
        return _refuse("unbroadcast", g, x)
    if not isinstance(xt, types.Array):  # x a number: g summed whole
        if isinstance(gt, types.Array):
            return lambda g, x: g.sum()
        return lambda g, x: g
    if not isinstance(gt, types.Array):  # g a number, x an array: g broadcast to x's shape
        return lambda g, x: np.full(x.shape, g)
    if gt.ndim == xt.ndim:
        def same(g, x):
            if g.shape != x.shape:
                raise NotImplementedError("jit=True: unbroadcast between arrays of different "
                                          "shapes of one rank is not implemented")
            return g
        return same
    if gt.ndim == xt.ndim + 1:
        def leading(g, x):
            s = g.sum(axis=0)
            if s.shape != x.shape:
                raise NotImplementedError("jit=True: unbroadcast to a shape with axes of "
                                          "length 1 is not implemented")
            return s
        return leading
    return _refuse("unbroadcast", g, x)


def reduce_sum_grad(g, a, axis=None, keepdims=False, where=True):
    """The gradient of ``np.sum(a)`` over all of a float array (compiled by Numba only)."""
    raise NotImplementedError("compiled by Numba only")


@overload(reduce_sum_grad)
def _reduce_sum_grad(g, a, axis=None, keepdims=False, where=True):
    if not _whole(g, a, axis, keepdims, where):
        return _refuse("reduce_sum_grad", g, a, axis, keepdims, where)
    return lambda g, a, axis=None, keepdims=False, where=True: np.full(a.shape, g, a.dtype)


def reduce_mean_grad(g, a, axis=None, keepdims=False, where=True):
    """The gradient of ``np.mean(a)`` over all of a float array (compiled by Numba only)."""
    raise NotImplementedError("compiled by Numba only")


@overload(reduce_mean_grad)
def _reduce_mean_grad(g, a, axis=None, keepdims=False, where=True):
    if not _whole(g, a, axis, keepdims, where):
        return _refuse("reduce_mean_grad", g, a, axis, keepdims, where)
    return lambda g, a, axis=None, keepdims=False, where=True: \
        np.full(a.shape, g / max(a.size, 1), a.dtype)


def _whole(g, a, axis, keepdims, where) -> bool:
    """A reduction of a whole float array to a number, the one case written here."""
    at = _bare(a)
    return isinstance(at, types.Array) and isinstance(at.dtype, types.Float) and \
        isinstance(_bare(g), types.Float) and _omitted(axis) and \
        _default(keepdims, False) and _default(where, True)


def _default(t, value) -> bool:
    """An argument left out (``value``, its default, as Numba gives it)."""
    return t is value or isinstance(t, types.Omitted) and t.value is value


def zeros_buffer(x):
    """``runtime.zeros_buffer`` for a float array (compiled by Numba only)."""
    raise NotImplementedError("compiled by Numba only")


@overload(zeros_buffer)
def _zeros_buffer(x):
    xt = _bare(x)
    if not (isinstance(xt, types.Array) and isinstance(xt.dtype, types.Float)):
        return _refuse("zeros_buffer", x)
    return lambda x: np.zeros(x.shape, x.dtype)


# the runtime's helper name -> its implementation here
HELPERS = {"seed": seed, "unbroadcast": unbroadcast, "reduce_sum_grad": reduce_sum_grad,
           "reduce_mean_grad": reduce_mean_grad, "zeros_buffer": zeros_buffer}
