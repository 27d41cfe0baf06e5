"""Helpers that generated forward-mode (tangent) code calls.

Tangents of lists, tuples and dicts that several statements contribute to are built as
``TangentList``/``TangentTuple``/``TangentDict``, which add element by element under ``+``
(plain lists and tuples would concatenate). ``broadcast_tangent`` and ``add_tangent`` give an
input's tangent the shape of the output it contributes to.
"""

import numpy as np

from mindgrad.runtime import add, is_zero, rebuild, takes_zero, zero_in_zero_out
from mindgrad.runtime.arrays import as_array, is_array, is_dispatching, zeros_of
from mindgrad.runtime.symbolic_zero import Zero, zero


class TangentList(list):
    """A list of tangents that ``+`` adds element by element (0 is the zero tangent)."""

    adds_elementwise = True

    def __add__(self, other):
        if is_zero(other):
            return self
        return TangentList(add(a, b) for a, b in zip(self, other))

    __radd__ = __add__


class TangentTuple(tuple):
    """A tuple of tangents that ``+`` adds element by element (0 is the zero tangent)."""

    adds_elementwise = True

    def __add__(self, other):
        if is_zero(other):
            return self
        return TangentTuple(add(a, b) for a, b in zip(self, other))

    __radd__ = __add__


class TangentDict(dict):
    """A dict of tangents that ``+`` merges, adding the values of common keys."""

    adds_elementwise = True

    def __add__(self, other):
        if is_zero(other):
            return self
        return TangentDict(add(dict(self), dict(other)))

    __radd__ = __add__


@zero_in_zero_out("t")
def summable(t):
    """``t`` with lists, tuples and dicts made to add element by element under ``+``; the zero
    for the zero."""
    if t.__class__ is Zero:
        return t
    if isinstance(t, dict) and not isinstance(t, TangentDict):
        return TangentDict(t)
    if isinstance(t, tuple) and not isinstance(t, TangentTuple):
        return TangentTuple(t)
    if isinstance(t, list) and not isinstance(t, TangentList):
        return TangentList(t)
    return t


def float_dtype(value):
    """The dtype a tangent of ``value`` has: its own if floating or complex, else float64."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None and dtype.kind in "fc":
        return dtype
    if isinstance(value, complex):
        return np.dtype(complex)
    return np.dtype(np.float64)


@zero_in_zero_out("t")
def as_dtype_of(t, out):
    """``t`` in the float dtype of ``out`` (a NumPy scalar for a 0-d result); the zero for
    the zero."""
    if t.__class__ is Zero:
        return t
    dtype = float_dtype(out)
    if is_array(out) or is_dispatching(t):
        return as_array(t).astype(dtype, copy=False)
    if np.ndim(t) == 0:
        return np.asarray(t, dtype)[()]  # a NumPy scalar
    return as_array(t).astype(dtype, copy=False)


def zero_tangent_of(out):
    """The zero tangent of ``out`` with its shape and type (a structure for lists/tuples)."""
    if isinstance(out, (list, tuple)):
        return rebuild(out, [zero_tangent_of(o) for o in out])
    if is_array(out):
        return zeros_of(out, float_dtype(out))
    if isinstance(out, np.generic):
        return float_dtype(out).type(0)
    if isinstance(out, complex):
        return 0j
    return 0.0


def zero_for(g, x):
    """The gradient of ``x`` from a zero gradient ``g`` (``is_any_zero``) of a helper that keeps
    values (``takes_zero``): the 0 for the 0, and for a number 0, which may be a value, a value:
    zeros of ``x``'s shape and float type."""
    if g is None or g.__class__ in (int, Zero):
        return Zero.like(x)
    return zero_tangent_of(x)


def tangent_like(t, out):
    """The tangent ``t`` of ``out`` as a user gets it: in ``out``'s own containers (lists,
    tuples, namedtuples, dicts; not the ``TangentList`` or ``TangentDict`` generated code adds
    with), with a zero of ``out``'s shape and float dtype where a part has none (never the
    symbolic zero 0), an array in an array's shape."""
    if isinstance(out, (tuple, list)):
        t = [zero] * len(out) if is_zero(t) else t
        return rebuild(out, [tangent_like(ti, oi) for ti, oi in zip(t, out)])
    if isinstance(out, dict):
        t = {} if is_zero(t) else t
        return {k: tangent_like(t.get(k, zero), v) for k, v in out.items()}
    if is_zero(t):
        return zero_tangent_of(out)
    if is_array(out) or is_dispatching(t):
        t = as_array(t)
        if t.shape != np.shape(out):
            t = np.broadcast_to(t, np.shape(out))
        dtype = np.result_type(float_dtype(out), t.dtype)
        if is_dispatching(t):  # cast where it is, never pulled into NumPy
            return t.astype(dtype)
        return np.array(t, dtype=dtype)
    return t


@takes_zero(any_number=True)
def broadcast_tangent(t, out):
    """The tangent ``t`` of an input broadcast to the shape (and float dtype) of ``out``; the
    zero of ``out``'s type for the symbolic zero (a number 0 broadcasts to zeros)."""
    if t.__class__ is Zero:
        return Zero.like(out)
    shape = np.shape(out)
    if np.shape(t) == shape:
        if isinstance(out, np.ndarray) and isinstance(t, np.ndarray) and \
                t.dtype != out.dtype and out.dtype.kind in "fc":
            return t.astype(out.dtype)
        return t
    dtype = float_dtype(out) if isinstance(out, np.generic) or is_array(out) else \
        np.result_type(t, 1.0)
    return np.broadcast_to(as_array(t), shape).astype(dtype)


@takes_zero(any_number=True)
def add_tangent(t, out, head, tail):
    """Tangent of one operand of ``x + y``: broadcast to ``out`` for numbers and arrays; for a
    concatenation of sequences, the operand's tangents with zeros for the ``head`` before and
    the ``tail`` after it. Tangents that add element by element (``TangentList``,
    ``TangentTuple``, ``TangentDict``: tangent code differentiated again, at third order) give
    a sum of the same kind, whose tangent is the sum of the operands' tangents."""
    if t.__class__ is Zero:
        return Zero.like(out)
    if isinstance(out, (TangentList, TangentTuple, TangentDict)):
        return summable(t)
    if isinstance(out, (list, tuple)):
        if is_zero(head) or is_zero(tail):
            # a sequence's gradient that is the int zero (third order: grad code differentiated
            # twice); not the zeros of the missing length, so no number is made up for it
            raise NotImplementedError(
                "mindgrad cannot take this derivative at third order yet: the gradient code "
                "it differentiates joins lists of gradients, one of them still the zero 0; "
                "derivatives to second order are supported")
        items = [zero] * len(head) + list(t) + [zero] * len(tail)
        return TangentList(items) if isinstance(out, list) else TangentTuple(items)
    return broadcast_tangent(t, out)
