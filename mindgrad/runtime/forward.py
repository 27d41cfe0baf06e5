"""Helpers of generated forward-mode (tangent) code for values that are not plain arrays: the
zero tangent of a value, the tangents of lists, tuples and dicts written in place.
"""

from __future__ import annotations

import numpy as np

from mindgrad.runtime.arrays import as_array, is_array, is_dispatching, zeros_of
from mindgrad.runtime.core import add, is_zero
from mindgrad.runtime.symbolic_zero import zero
from mindgrad.runtime.trees import rebuild


def zero_tangent(value):
    """A zero tangent shaped like ``value``: where a name that carries a tangent is given a
    value that does not (``h = x`` before a loop makes ``h`` depend on the input)."""
    if is_array(value):
        return zeros_of(value, np.result_type(value.dtype, np.float32))
    if isinstance(value, (float, np.floating)):
        return type(value)(0.0)
    if isinstance(value, (list, tuple)):
        return rebuild(value, [zero_tangent(v) for v in value])
    if isinstance(value, dict):
        return {k: zero_tangent(v) for k, v in value.items()}
    return zero



def adds_elementwise(x, y):
    """Whether ``x + y`` adds element by element: a ``TangentList`` or ``TangentTuple`` of
    tangent code (differentiated again at third order), not a concatenation."""
    return getattr(x, "adds_elementwise", False) or getattr(y, "adds_elementwise", False)



def concat_tangents(t_x, x, t_y, y):
    """Tangent of ``x + y`` for sequences: the two tangents concatenated (zeros filled in); for
    sequences that add element by element (``adds_elementwise``), the tangents added so."""
    if adds_elementwise(x, y):
        kind = type(x) if getattr(x, "adds_elementwise", False) else type(y)
        return kind(add(t_x, t_y))
    head = [zero] * len(x) if is_zero(t_x) else list(t_x)
    tail = [zero] * len(y) if is_zero(t_y) else list(t_y)
    return tuple(head + tail) if isinstance(x, tuple) else head + tail



def tangent_setitem(t_x, x, idx, t_v):
    """Tangent of ``x[idx] = v`` (after it ran): a copy of ``t_x`` with ``t_v`` at ``idx``."""
    if is_array(x) or is_dispatching(t_x):
        if is_zero(t_x):
            t = zeros_of(x, np.result_type(x.dtype, np.float32))
        elif is_dispatching(t_x):  # a Dask or CuPy array: a copy of its own type
            t = t_x.copy()
        else:
            t = np.array(t_x, dtype=np.result_type(as_array(t_x).dtype, np.float32))
        t[idx] = zero if is_zero(t_v) else t_v
        return t
    if isinstance(x, dict):
        t = {} if is_zero(t_x) else dict(t_x)
        t[idx] = t_v
        return t
    t = [zero] * len(x) if is_zero(t_x) else list(t_x)
    t[idx] = t_v
    return t



def tangent_append(t_xs, xs, t_v):
    """Tangent of ``xs.append(v)`` (after it ran): the tangent list, one entry longer."""
    if is_zero(t_xs):
        t_xs = [zero] * (len(xs) - 1)
    t_xs.append(t_v)
    return t_xs



def tangent_pop(t_xs):
    """Tangent of ``v = xs.pop()``: pops the tangent list in step; 0 if it has none.

    Once a list, the tangent list holds one entry per item of ``xs`` (``tangent_append``), so
    it pops exactly when ``xs`` does. Reverse mode reads the call as a pop of ``t_xs``
    (``buffers.tangent_push_grad``, ``tangent_unpop``)."""
    if is_zero(t_xs) or not t_xs:
        return zero
    return t_xs.pop()


def tangent_unpop(t_xs, v):
    """Undo ``v = tangent_pop(t_xs)`` in the backward sweep: ``v`` back on the tangent list,
    where one popped."""
    if not is_zero(t_xs):
        t_xs.append(v)



def tangent_of_item(t_seq, seq, index, item):
    """Tangent of the loop variable of ``for item in seq`` at position ``index``."""
    if is_zero(t_seq) or isinstance(seq, dict):
        return zero
    return t_seq[index]
