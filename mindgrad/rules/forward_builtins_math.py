"""Tangent rules for Python's builtins and the ``math`` module."""

import builtins
import math

from mindgrad.rules import d, tangent
from mindgrad.runtime import is_zero
from mindgrad.runtime.tangents import TangentList, TangentTuple, broadcast_tangent, zero_tangent_of

# ----- builtins ----------------------------------------------------------------------------


@tangent(builtins.float)
def _(out, x=0.0):
    d[out] = float(d[x])


def sum_tangent(ts, out):
    """Tangent of ``sum(iterable)``: the items' tangents added (0 for items without one), in
    the shape of the result."""
    total = 0
    for t in ts:
        if not is_zero(t):
            total = total + t
    if is_zero(total):
        return zero_tangent_of(out)
    return broadcast_tangent(total, out)


@tangent(builtins.sum)
def _(out, iterable, start=0):
    d[out] = sum_tangent(d[iterable], out)
    d[out] = broadcast_tangent(d[start], out)


def select_tangent(ts, out, args):
    """Tangent of ``min``/``max``: the tangent of the first argument equal to the result."""
    items = args[0] if len(args) == 1 else args
    ts = ts[0] if len(args) == 1 else ts
    if is_zero(ts):
        return zero_tangent_of(out)
    for v, t in zip(items, ts):
        if v is out or v == out:
            return zero_tangent_of(out) if is_zero(t) else t
    return zero_tangent_of(out)


@tangent(builtins.max, builtins.min)
def _(out, *args):
    d[out] = select_tangent(d[args], out, args)


def sequence_tangent(t, out):
    """Tangent of ``list(iterable)``/``tuple(iterable)``: the items' tangents in a list (or a
    tuple), rows of an array's tangent for an array."""
    if is_zero(t) or isinstance(t, dict):
        return 0  # the items of a dict are its keys: constants
    items = list(t)
    return TangentTuple(items) if isinstance(out, tuple) else TangentList(items)


def dict_tangent(t, mapping):
    """Tangent of ``dict(mapping)``: the same tangents by key."""
    if is_zero(t):
        return 0
    if isinstance(mapping, dict):
        return dict(t)
    tangents = {}
    for (key, _), pair in zip(mapping, t):
        if not is_zero(pair) and not is_zero(pair[1]):
            tangents[key] = pair[1]
    return tangents


@tangent(builtins.dict)
def _(out, mapping=()):
    d[out] = dict_tangent(d[mapping], mapping)


@tangent(builtins.list, builtins.tuple)
def _(out, iterable=()):
    d[out] = sequence_tangent(d[iterable], out)


def reversed_tangent(t):
    """Tangent of ``reversed(seq)``: the items' tangents, last first, in a list."""
    return TangentList(list(t)[::-1])


@tangent(builtins.reversed)
def _(out, sequence):
    d[out] = reversed_tangent(d[sequence])


# ----- math --------------------------------------------------------------------------------


@tangent(math.log)
def _(out, x, base=2.718281828459045):
    d[out] = d[x] / (x * math.log(base))
    d[out] = -d[base] * out / (base * math.log(base))


@tangent(math.pow)
def _(out, x, y):
    d[out] = d[x] * y * math.pow(x, y - 1.0)
    d[out] = d[y] * out * math.log(x)


@tangent(math.atan2)
def _(out, y, x):
    d[out] = d[y] * x / (x * x + y * y)
    d[out] = -d[x] * y / (x * x + y * y)


def hypot_tangent(ts, coordinates, out):
    """Tangent of ``math.hypot(*coordinates)``: sum of ``t_i c_i / out``."""
    total = 0.0
    for t, c in zip(ts, coordinates):
        if not is_zero(t) and out != 0:  # at the origin: 0, a subgradient
            total = total + t * c / out
    return total


@tangent(math.hypot)
def _(out, *coordinates):
    d[out] = hypot_tangent(d[coordinates], coordinates, out)


@tangent(math.copysign)
def _(out, x, y):
    d[out] = d[x] * math.copysign(1.0, x) * math.copysign(1.0, out)


# builtins.abs shares np.absolute's rule (forward_numpy_elementwise)


def sorted_tangent(t, iterable, key=None, reverse=False):
    """Tangent of ``sorted(iterable)``: the items' tangents in the sorted order."""
    if is_zero(t):
        return 0
    items = list(iterable)
    order = sorted(range(len(items)), key=lambda i: items[i] if key is None else key(items[i]),
                   reverse=reverse)
    return [t[i] for i in order]


@tangent(builtins.sorted)
def _(out, iterable, key=None, reverse=False):
    d[out] = sorted_tangent(d[iterable], iterable, key, reverse)
