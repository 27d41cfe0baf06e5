"""Rules for Python's builtins and the ``math`` module, written for Python floats."""

import builtins
import math

import numpy as np

from mindgrad.rules import adjoint, d, elementwise, nondifferentiable, slope
from mindgrad.runtime import is_zero, takes_zero, unbroadcast

# ----- builtins ----------------------------------------------------------------------------


@adjoint(builtins.float)
def _(out, x=0.0):
    d[x] = d[out]


def sum_grad(g, xs):
    """Gradient of ``sum(xs)``: every element of ``xs`` receives ``g``, summed to its shape."""
    if isinstance(xs, np.ndarray):
        return np.broadcast_to(g, xs.shape) if np.ndim(g) == xs.ndim - 1 else unbroadcast(g, xs)
    return [unbroadcast(g, x) for x in xs]


@adjoint(builtins.sum)
def _(out, iterable, start=0):
    d[iterable] = sum_grad(d[out], iterable)
    d[start] = unbroadcast(d[out], start)


def select_grad(g, out, args):
    """Gradient of ``min``/``max``: routed to the first argument equal to the result."""
    items = args[0] if len(args) == 1 else args
    grads = [0] * len(items)
    for i, v in enumerate(items):
        if v is out or v == out:
            grads[i] = g
            break
    if len(args) == 1:
        return (grads,)
    return tuple(grads)


@adjoint(builtins.max, builtins.min)
def _(out, *args):
    d[args] = select_grad(d[out], out, args)




@takes_zero(keeps_values=False)
def sequence_grad(g, iterable):
    """Gradient of ``list(iterable)``/``tuple(iterable)``: the items' gradients given back in the
    iterable's own form (rows of an array stacked; a list for anything else)."""
    if is_zero(g) or isinstance(iterable, (dict, set, frozenset, str)):
        return 0  # the items are keys or characters: constants
    if isinstance(iterable, np.ndarray):
        return np.stack([np.zeros(iterable.shape[1:], iterable.dtype) if is_zero(gi) else
                         np.broadcast_to(gi, iterable.shape[1:]) for gi in g]) if len(g) else 0
    return list(g)


@takes_zero
def dict_grad(g, mapping):
    """Gradient of ``dict(mapping)``: the same gradients by key (for a sequence of pairs, each
    pair's value gradient; keys are constants)."""
    if is_zero(g):
        return 0
    if isinstance(mapping, dict):
        return dict(g)
    grads = []
    for key, _ in mapping:
        grads.append((0, g.get(key, 0)))
    return grads


@adjoint(builtins.dict)
def _(out, mapping=()):
    d[mapping] = dict_grad(d[out], mapping)


@adjoint(builtins.list, builtins.tuple)
def _(out, iterable=()):
    d[iterable] = sequence_grad(d[out], iterable)


@takes_zero(keeps_values=False)
def reversed_grad(g, seq):
    """Gradient of ``reversed(seq)``: the items' gradients in ``seq``'s order."""
    if is_zero(g):
        return 0
    return sequence_grad(list(g)[::-1], seq)


@adjoint(builtins.reversed)
def _(out, sequence):
    d[sequence] = reversed_grad(d[out], sequence)


@takes_zero
def sorted_grad(g, iterable, key=None, reverse=False):
    """Gradient of ``sorted(iterable)``: each item's gradient back where the item came from."""
    if is_zero(g):
        return 0
    items = list(iterable)
    order = sorted(range(len(items)), key=lambda i: items[i] if key is None else key(items[i]),
                   reverse=reverse)
    grads = [0] * len(items)
    for position, index in enumerate(order):
        grads[index] = g[position]
    return grads


@adjoint(builtins.sorted)
def _(out, iterable, key=None, reverse=False):
    d[iterable] = sorted_grad(d[out], iterable, key, reverse)


nondifferentiable(builtins.len, builtins.range, builtins.int, builtins.bool, builtins.round,
                  builtins.isinstance, builtins.print, builtins.type, builtins.enumerate,
                  builtins.zip, builtins.str, builtins.repr, builtins.any, builtins.all)

# ----- math --------------------------------------------------------------------------------


@elementwise(math.sin)
def _(out, x):
    slope[x] = math.cos(x)


@elementwise(math.cos)
def _(out, x):
    slope[x] = -math.sin(x)


@adjoint(math.log)
def _(out, x, base=math.e):
    d[x] = d[out] / (x * math.log(base))


@elementwise(math.log1p)
def _(out, x):
    slope[x] = 1.0 / (1.0 + x)


@adjoint(math.pow)
def _(out, x, y):
    d[x] = d[out] * y * math.pow(x, y - 1.0)
    d[y] = d[out] * out * math.log(x)


@elementwise(math.sinh)
def _(out, x):
    slope[x] = math.cosh(x)


@elementwise(math.cosh)
def _(out, x):
    slope[x] = math.sinh(x)


@elementwise(math.asin)
def _(out, x):
    slope[x] = 1.0 / math.sqrt(1.0 - x * x)


@elementwise(math.acos)
def _(out, x):
    slope[x] = -1.0 / math.sqrt(1.0 - x * x)


@adjoint(math.atan2)
def _(out, y, x):
    d[y] = d[out] * x / (x * x + y * y)
    d[x] = -d[out] * y / (x * x + y * y)


@adjoint(math.hypot)
def _(out, *coordinates):
    d[coordinates] = tuple(d[out] * c / out for c in coordinates)


@elementwise(math.fabs)
def _(out, x):
    slope[x] = math.copysign(1.0, x)


@elementwise(math.erf)
def _(out, x):
    slope[x] = 2.0 / math.sqrt(math.pi) * math.exp(-x * x)


@adjoint(math.copysign)
def _(out, x, y):
    d[x] = d[out] * math.copysign(1.0, x) * math.copysign(1.0, out)


nondifferentiable(math.floor, math.ceil, math.trunc, math.isnan, math.isinf, math.isfinite)
