"""What ``jit=True`` code calls in place of the runtime's helpers: Numba implementations of
``seed``, ``unbroadcast``, ``reduce_sum_grad``, ``reduce_mean_grad``, ``zeros_buffer``,
``matmul_grad_x``, ``matmul_grad_y`` and their sums over a loop's steps, for the types Numba
infers, each giving what the NumPy helper of the same name gives; and ``zeros_grad`` and
``accumulate``, for a gradient that starts as the symbolic zero and is added to in a loop
(``jit_rewrite``).

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
from numba.extending import intrinsic, overload, register_jitable
from numba.np.numpy_support import as_dtype

__all__ = ["HELPERS", "REFUSED", "accumulate", "matmul_grad_x", "matmul_grad_x_sum",
           "matmul_grad_y", "matmul_grad_y_sum",
           "mean_number", "reduce_mean_grad", "reduce_sum_grad", "seed", "some", "sum_number",
           "unbroadcast", "zeros_buffer", "zeros_grad"]

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


def sum_number(g, a):
    """The gradient of ``np.sum(a)`` over all of a float64 array as a number, of a float32
    array as ``reduce_sum_grad``'s (compiled by Numba only)."""
    raise NotImplementedError("compiled by Numba only")


@overload(sum_number)
def _sum_number(g, a):
    if not _whole(g, a, None, False, True):
        return _refuse("sum_number", g, a)
    if _bare(a).dtype == types.float32:
        # the array: Numba's float32 number times an int or a float literal is float64
        return lambda g, a: np.full(a.shape, g, a.dtype)
    return lambda g, a: np.float64(g)


def mean_number(g, a):
    """The gradient of ``np.mean(a)`` over all of a float array, as ``sum_number``'s
    (compiled by Numba only)."""
    raise NotImplementedError("compiled by Numba only")


@overload(mean_number)
def _mean_number(g, a):
    if not _whole(g, a, None, False, True):
        return _refuse("mean_number", g, a)
    return lambda g, a: sum_number(g / max(a.size, 1), a)


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


# ----- matmul's gradients -------------------------------------------------------------------------


def _float_arrays(*ts) -> bool:
    """Real float arrays of one dtype, of rank 1 or 2 each."""
    ts = [_bare(t) for t in ts]
    return all(isinstance(t, types.Array) and isinstance(t.dtype, types.Float) and
               t.ndim in (1, 2) for t in ts) and len({t.dtype for t in ts}) == 1


def _scalar_of(g, x):
    """``g`` a float of the dtype of the array ``x`` (the gradient of a vector dot product)."""
    g = _bare(g)
    return isinstance(g, types.Float) and g == _bare(x).dtype


def matmul_grad_x(g, x, y):
    """``operators.matmul_grad_x`` for float vectors and matrices of one dtype (Numba only)."""
    raise NotImplementedError("compiled by Numba only")


def _product_ranks(helper, g, x, y):
    """The ranks ``(x.ndim, y.ndim)`` of a product ``x @ y`` of float vectors and matrices of
    one dtype whose gradient ``g`` fits it, ``"number"`` where ``x @ y`` is a number; None
    (the refusal recorded) otherwise."""
    if _float_arrays(x, y):
        xn, yn = _bare(x).ndim, _bare(y).ndim
        if xn == 1 and yn == 1 and _scalar_of(g, x):
            return "number"
        if _float_arrays(g, x, y) and _bare(g).ndim == xn + yn - 2:
            return xn, yn
    return _refuse(helper, g, x, y)


@overload(matmul_grad_x)
def _matmul_grad_x(g, x, y):
    ranks = _product_ranks("matmul_grad_x", g, x, y)
    if ranks is None:
        return None
    if ranks == "number":
        return lambda g, x, y: g * y
    if ranks == (2, 2):
        return lambda g, x, y: g @ y.T
    if ranks[0] == 2:
        return lambda g, x, y: np.outer(g, y)
    return lambda g, x, y: y @ g  # x a row


def matmul_grad_y(g, x, y):
    """``operators.matmul_grad_y`` for float vectors and matrices of one dtype (Numba only)."""
    raise NotImplementedError("compiled by Numba only")


@overload(matmul_grad_y)
def _matmul_grad_y(g, x, y):
    ranks = _product_ranks("matmul_grad_y", g, x, y)
    if ranks is None:
        return None
    if ranks == "number":
        return lambda g, x, y: g * x
    if ranks[0] == 2:
        return lambda g, x, y: x.T @ g
    return lambda g, x, y: np.outer(x, g)  # x a row, y a matrix


def matmul_grad_x_sum(terms, x):
    """``operators.matmul_grad_x_sum``: the sum of ``matmul_grad_x(g, x, y)`` over the
    ``(g, y)`` of a list, zeros of ``x``'s shape for none (Numba only)."""
    raise NotImplementedError("compiled by Numba only")


def matmul_grad_y_sum(terms, y):
    """``operators.matmul_grad_y_sum``: the sum of ``matmul_grad_y(g, x, y)`` over the
    ``(g, x)`` of a list (Numba only)."""
    raise NotImplementedError("compiled by Numba only")


def _terms(terms, fixed):
    """The two array types of a list of pairs, with ``fixed``'s dtype; else None."""
    tt, ft = _bare(terms), _bare(fixed)
    item = tt.dtype if isinstance(tt, types.List) else \
        tt.item_type if isinstance(tt, types.ListType) else None
    if not (isinstance(item, types.BaseTuple) and len(item) == 2 and
            _float_arrays(ft, *item.types)):
        return None
    return item.types


@register_jitable
def _check_term(term, acc):
    if term.shape != acc.shape:
        raise ValueError("jit=True: a term of a matmul gradient's sum has another shape")


@overload(matmul_grad_x_sum)
def _matmul_grad_x_sum(terms, x):
    pair = _terms(terms, x)
    if pair is None:
        return _refuse("matmul_grad_x_sum", terms, x)
    if _bare(x).ndim == 2 and pair[0].ndim == 1 and pair[1].ndim == 1:
        def outers(terms, x):  # the sum of the outer products g y^T, written in place
            acc = np.zeros(x.shape, x.dtype)
            for g, y in terms:
                if g.shape[0] != x.shape[0] or y.shape[0] != x.shape[1]:
                    raise ValueError("jit=True: a term of a matmul gradient's sum has "
                                     "another shape")
                for i in range(g.shape[0]):
                    gi = g[i]
                    for j in range(y.shape[0]):
                        acc[i, j] += gi * y[j]
            return acc
        return outers

    def stepwise_x(terms, x):
        acc = np.zeros(x.shape, x.dtype)
        for g, y in terms:
            term = matmul_grad_x(g, x, y)
            _check_term(term, acc)
            acc += term
        return acc
    return stepwise_x


@overload(matmul_grad_y_sum)
def _matmul_grad_y_sum(terms, y):
    pair = _terms(terms, y)
    if pair is None:
        return _refuse("matmul_grad_y_sum", terms, y)

    def stepwise_y(terms, y):
        acc = np.zeros(y.shape, y.dtype)
        for g, x in terms:
            term = matmul_grad_y(g, x, y)
            _check_term(term, acc)
            acc += term
        return acc
    return stepwise_y


# ----- a gradient that starts as the symbolic zero and is added to -------------------------------


def zeros_grad(x):
    """Zeros of the float or float array ``x``'s shape and dtype: the start of a gradient of
    ``x`` that is only added to (Numba only)."""
    raise NotImplementedError("compiled by Numba only")


@overload(zeros_grad)
def _zeros_grad(x):
    xt = _bare(x)
    if isinstance(xt, types.Float):
        zero = as_dtype(xt).type(0.0)
        return lambda x: zero
    if isinstance(xt, types.Array) and isinstance(xt.dtype, types.Float):
        return lambda x: np.zeros(x.shape, x.dtype)
    return _refuse("zeros_grad", x)


def accumulate(acc, value):
    """``acc + value`` for a gradient ``acc`` that started as ``zeros_grad``: a value of its
    type and dtype only, of its shape (else a ValueError), so the sum is what adding to the
    symbolic zero gives (Numba only)."""
    raise NotImplementedError("compiled by Numba only")


@overload(accumulate)
def _accumulate(acc, value):
    at, vt = _bare(acc), _bare(value)
    if isinstance(at, types.Float) and at == vt:
        return lambda acc, value: acc + value
    if not (isinstance(at, types.Array) and isinstance(vt, types.Array) and
            isinstance(at.dtype, types.Float) and at.dtype == vt.dtype and at.ndim == vt.ndim):
        return _refuse("accumulate", acc, value)

    def add(acc, value):
        if acc.shape != value.shape:
            raise ValueError("jit=True: a gradient added to has a term of another shape")
        return acc + value
    return add


# the runtime's helper name -> its implementation here
HELPERS = {"seed": seed, "unbroadcast": unbroadcast, "reduce_sum_grad": reduce_sum_grad,
           "reduce_mean_grad": reduce_mean_grad, "sum_number": sum_number,
           "mean_number": mean_number, "zeros_buffer": zeros_buffer,
           "matmul_grad_x": matmul_grad_x, "matmul_grad_y": matmul_grad_y,
           "matmul_grad_x_sum": matmul_grad_x_sum, "matmul_grad_y_sum": matmul_grad_y_sum}
