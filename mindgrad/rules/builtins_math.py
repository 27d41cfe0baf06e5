"""Rules for Python's builtins and the ``math`` module, written for Python floats, in both
directions: the adjoint (reverse mode) and the tangent (forward mode) of each.

The ``math`` functions are elementwise on numbers: one slope per argument gives both directions
(``@elementwise``; ``math.exp``, ``math.tan``, ``math.atan2``, ... share NumPy's rules in
``numpy_elementwise.py``). The builtins that build or reorder containers (``sum``, ``max``,
``list``, ``dict``, ``sorted``, ...) move tangents item by item, written by hand in helpers
linear in the tangent, whose transposes (the gradient helpers, linear in the gradient) give
their adjoints (``@transpose``).
"""

import builtins
import math

import numpy as np

from mindgrad.rules import (
    adjoint,
    d,
    elementwise,
    linear,
    linear_in,
    nondifferentiable,
    slope,
    tangent,
    transpose,
    transpose_of,
)
from mindgrad.rules.helpers import digamma, log_base, power, quotient
from mindgrad.runtime import (
    Zero,
    is_any_zero,
    is_zero,
    real_grad,
    unbroadcast,
    zero,
    zero_in,
    zero_in_zero_out,
)
from mindgrad.runtime.arrays import as_array, is_array, is_dispatching, zeros_of
from mindgrad.runtime.tangents import TangentList, TangentTuple, broadcast_tangent, zero_tangent_of

# ----- builtins on numbers: float, sum, min, max -------------------------------------------


@linear(builtins.float)
@adjoint(builtins.float)
def _(out, x=0.0):
    d[x] = d[out]


def _joins(out) -> bool:
    """Whether ``sum(iterable, start)`` gave ``out`` by joining sequences (``sum(rows, [])``),
    not by adding numbers or arrays."""
    return isinstance(out, (list, tuple))


@zero_in_zero_out("t")
def complex_real_tangent(t):
    """Tangent of ``complex(real, imag)`` from ``real``: ``t`` as a complex number."""
    if zero_in(t):
        return zero
    return t + 0j


@zero_in_zero_out("t")
def complex_imag_tangent(t):
    """Tangent of ``complex(real, imag)`` from ``imag``: ``1j t``."""
    if zero_in(t):
        return zero
    return 1j * t


# the tangents transposed in t (@transpose reads them): the real part of the gradient, and of
# the gradient times 1j, in the README's convention (a cotangent c of w: dL = Re(c dw))
@transpose_of(complex_real_tangent)
def _(out, t):
    d[t] = real_grad(d[out], t)


@transpose_of(complex_imag_tangent)
def _(out, t):
    d[t] = real_grad(d[out] * 1j, t)


@transpose(builtins.complex)  # complex(real, imag) = real + 1j * imag, as the operators give it
@tangent(builtins.complex)
def _(out, real=0, imag=0):
    d[out] = complex_real_tangent(d[real])
    d[out] = complex_imag_tangent(d[imag])


@linear_in("g", any_number=True)
def sum_grad(g, xs, start=0):
    """Gradient of ``sum(xs, start)``: every element of ``xs`` receives ``g``, summed to its
    shape; for sequences summed (``sum(rows, [])`` joins them, ``start`` first) each item its
    own part of ``g``."""
    if is_any_zero(g):
        return zero
    if isinstance(xs, np.ndarray):
        return np.broadcast_to(g, xs.shape) if np.ndim(g) == xs.ndim - 1 else unbroadcast(g, xs)
    if _joins(start):
        parts, offset = [], len(start)
        for x in xs:
            parts.append(list(g[offset:offset + len(x)]))
            offset += len(x)
        return parts
    return [unbroadcast(g, x) for x in xs]


@linear_in("g", any_number=True)
def sum_start_grad(g, start):
    """Gradient of ``sum(xs, start)`` for ``start``: ``g`` summed to its shape; the head of
    ``g`` where ``start`` is a sequence the items were joined to."""
    if is_any_zero(g):
        return zero
    if _joins(start):
        return list(g[:len(start)])
    return unbroadcast(g, start)


@linear_in("ts")
def sum_tangent(ts, out, iterable=()):
    """Tangent of ``sum(iterable)``: the items' tangents added (0 for items without one), in
    the shape of the result; for sequences summed (joined), the items' tangents joined, the
    place of ``start`` left 0 (its own term adds it)."""
    if zero_in(ts):
        return zero
    if _joins(out):
        parts = []
        for t, x in zip(ts, iterable):
            parts.extend([zero] * len(x) if is_zero(t) else t)
        return type(out)([zero] * (len(out) - len(parts)) + parts)
    total = 0
    for t in ts:
        if not is_zero(t):
            total = total + t
    if is_zero(total):
        return zero_tangent_of(out)
    return broadcast_tangent(total, out)


@linear_in("t")
def sum_start_tangent(t, out):
    """Tangent of ``sum(iterable, start)`` for ``start``: broadcast to the result; at the head
    of the result where sequences were joined to ``start``."""
    if zero_in(t):
        return zero
    if _joins(out):
        return type(out)(list(t) + [zero] * (len(out) - len(t)))
    return broadcast_tangent(t, out)


@linear_in("g", any_number=True)
def sum_tangent_grad(g, out, iterable):
    """Adjoint of ``sum_tangent`` (reverse mode over forward mode): ``sum_grad``, the start
    of joined sequences the head of ``out`` the items do not fill."""
    if is_any_zero(g):
        return zero
    if _joins(out):
        return sum_grad(g, iterable, out[:len(out) - sum(len(x) for x in iterable)])
    return sum_grad(g, iterable)


@adjoint(sum_tangent)
def _(ans, ts, out, iterable=()):
    d[ts] = sum_tangent_grad(d[ans], out, iterable)


@adjoint(sum_start_tangent)
def _(ans, t, out):
    d[t] = sum_start_grad(d[ans], t)


# d[iterable] = sum_tangent_grad(d[out], out, iterable), d[start] = sum_start_grad(d[out], start)
@transpose(builtins.sum)
@tangent(builtins.sum)
def _(out, iterable, start=0):
    d[out] = sum_tangent(d[iterable], out, iterable)
    d[out] = sum_start_tangent(d[start], out)


def _is_result(v, out):
    """Whether the item ``v`` of ``min``/``max`` is the one returned as ``out`` (rows of an
    array compared whole, for a ``key=`` on a 2-d array)."""
    return v is out or np.array_equal(v, out)


@linear_in("g", any_number=True)
def select_grad(g, out, args, default=None):
    """Gradient of ``min``/``max``: routed to the first argument equal to the result. With one
    argument, ``max(v)`` iterates over it: the gradient goes to its first item equal to the
    result, in ``v``'s own form (an array's gradient an array); to ``default`` if ``v`` is
    empty."""
    if is_any_zero(g):
        return (0,) * len(args)
    items = args[0] if len(args) == 1 else args
    grads = [zero] * len(items)
    for i, v in enumerate(items):
        if _is_result(v, out):
            grads[i] = g
            break
    if len(args) == 1:
        return (sequence_grad(grads, items),) if len(items) else (0,)
    return tuple(grads)


@linear_in("g", any_number=True)
def select_default_grad(g, args):
    """Gradient of ``min``/``max``'s ``default=``: ``g`` where the iterable is empty (a zero
    ``g`` or the 0: the zero)."""
    return g if len(args) == 1 and len(args[0]) == 0 else 0


@zero_in_zero_out("ts")
def select_tangent(ts, out, args):
    """Tangent of ``min``/``max``: the tangent of the first argument equal to the result (of
    the first item equal to it, for the one-argument form)."""
    if zero_in(ts):
        return zero
    items = args[0] if len(args) == 1 else args
    item_ts = ts[0] if len(args) == 1 else ts
    if is_zero(item_ts):
        return zero_tangent_of(out)
    for v, t in zip(items, item_ts):
        if _is_result(v, out):
            return zero_tangent_of(out) if is_zero(t) else t
    return zero_tangent_of(out)


@zero_in_zero_out("t")
def select_default_tangent(t, out, args):
    """Tangent of ``min``/``max`` from ``default=``: its tangent where the iterable is empty."""
    if zero_in(t):
        return zero
    if len(args) == 1 and len(args[0]) == 0:
        return t
    return zero_tangent_of(out)


# linear in the tangents: the transposes are the gradients above
@linear(select_tangent, wrt="ts")
@adjoint(select_tangent)
def _(ans, ts, out, args):
    d[ts] = select_grad(d[ans], out, args)


@linear(select_default_tangent, wrt="t")
@adjoint(select_default_tangent)
def _(ans, t, out, args):
    d[t] = select_default_grad(d[ans], args)


@transpose(builtins.max, builtins.min)  # d[args] = select_grad(d[out], out, args), ...
@tangent(builtins.max, builtins.min)
def _(out, *args, key=None, default=None):
    d[out] = select_tangent(d[args], out, args)
    d[out] = select_default_tangent(d[default], out, args)


# ----- builtins that build or reorder containers: item by item -----------------------------


@linear_in("g", any_number=True)
def sequence_grad(g, iterable):
    """Gradient of ``list(iterable)``/``tuple(iterable)``: the items' gradients given back in the
    iterable's own form (rows of an array stacked; a list for anything else)."""
    if is_any_zero(g):
        return zero
    if isinstance(iterable, (dict, set, frozenset, str)):
        return zero  # the items are keys or characters: constants
    if is_array(iterable):
        if is_dispatching(g):
            return g  # a Dask or CuPy array of the rows' gradients already
        return np.stack([zeros_of(iterable[0], iterable.dtype) if is_zero(gi) else
                         np.broadcast_to(gi, iterable.shape[1:]) for gi in g]) if len(g) else 0
    return list(g)


@linear_in("g", keeps_values=True)
def dict_grad(g, mapping):
    """Gradient of ``dict(mapping)``: the same gradients by key (for a sequence of pairs, each
    pair's value gradient; keys are constants)."""
    if zero_in(g):
        return zero
    if isinstance(mapping, dict):
        return dict(g)
    grads = []
    for key, _ in mapping:
        grads.append((0, g.get(key, 0)))
    return grads


@zero_in_zero_out("t")
def dict_tangent(t, mapping):
    """Tangent of ``dict(mapping)``: the same tangents by key."""
    if zero_in(t):
        return zero
    if isinstance(mapping, dict):
        return dict(t)
    tangents = {}
    for (key, _), pair in zip(mapping, t):
        if not is_zero(pair) and not is_zero(pair[1]):
            tangents[key] = pair[1]
    return tangents


@linear(dict_tangent, wrt="t")
@adjoint(dict_tangent)  # linear in t: the transpose is the gradient
def _(ans, t, mapping):
    d[t] = dict_grad(d[ans], mapping)


@transpose(builtins.dict)  # d[mapping] = dict_grad(d[out], mapping)
@tangent(builtins.dict)
def _(out, mapping=()):
    """Of a dict or of pairs; ``dict(a=x, b=y)``, ``dict([("a", x)], b=y)`` and ``dict(**kw)``
    are read as the dict display they build. A mapping held in a variable together with
    keywords (``dict(m, b=y)``) is refused."""
    d[out] = dict_tangent(d[mapping], mapping)


@zero_in_zero_out("t")
def sequence_tangent(t, out):
    """Tangent of ``list(iterable)``/``tuple(iterable)``: the items' tangents in a list (or a
    tuple), rows of an array's tangent for an array."""
    if zero_in(t):
        return zero
    if t is None or isinstance(t, dict):
        return zero  # the items of a dict are its keys: constants
    items = list(t)
    return TangentTuple(items) if isinstance(out, tuple) else TangentList(items)


@linear(sequence_tangent, wrt="t")
@adjoint(sequence_tangent)  # linear in t: the transpose is the gradient, in t's form
def _(ans, t, out):
    d[t] = sequence_grad(d[ans], t)


@transpose(builtins.list, builtins.tuple)  # d[iterable] = sequence_grad(d[out], iterable)
@tangent(builtins.list, builtins.tuple)
def _(out, iterable=()):
    d[out] = sequence_tangent(d[iterable], out)


@linear_in("g")
def reversed_grad(g, seq):
    """Gradient of ``reversed(seq)``: the items' gradients in ``seq``'s order."""
    if zero_in(g):
        return zero
    return sequence_grad(list(g)[::-1], seq)


@zero_in_zero_out("t")
def reversed_tangent(t):
    """Tangent of ``reversed(seq)``: the items' tangents, last first, in a list."""
    if zero_in(t):
        return zero
    return TangentList(list(t)[::-1])


@linear(reversed_tangent)
@adjoint(reversed_tangent)  # linear in t: the transpose is the gradient, in t's form
def _(ans, t):
    d[t] = reversed_grad(d[ans], t)


@transpose(builtins.reversed)  # d[sequence] = reversed_grad(d[out], sequence)
@tangent(builtins.reversed)
def _(out, sequence):
    d[out] = reversed_tangent(d[sequence])


def sorted_order(items, key=None, reverse=False):
    """The positions of ``items`` in the order ``sorted(items, key=key, reverse=reverse)``
    gives them (integers: a constant)."""
    if key is None:
        return sorted(range(len(items)), key=items.__getitem__, reverse=reverse)
    return sorted(range(len(items)), key=lambda i: key(items[i]), reverse=reverse)


@linear_in("g", keeps_values=True, any_number=True)
def sorted_grad(g, iterable, key=None, reverse=False):
    """Gradient of ``sorted(iterable)``: each item's gradient back where the item came from, in
    the iterable's own form (an array's gradient an array)."""
    if is_any_zero(g):  # a number 0 may be a value: zeros in the iterable's form
        if g is None or g.__class__ in (int, Zero) or \
                isinstance(iterable, (dict, set, frozenset, str)):
            return zero  # the zero, or items that are keys or characters: constants
        return sequence_grad([zero_tangent_of(item) for item in iterable], iterable)
    items = list(iterable)
    order = sorted_order(items, key, reverse)
    grads = [zero] * len(items)
    for position, index in enumerate(order):
        grads[index] = g[position]
    return sequence_grad(grads, iterable)


@zero_in_zero_out("t")
def sorted_tangent(t, iterable, key=None, reverse=False):
    """Tangent of ``sorted(iterable)``: the items' tangents in the sorted order."""
    if zero_in(t):
        return zero
    if t is None or isinstance(iterable, (dict, set, frozenset, str)):
        return zero  # the items are keys or characters: constants
    order = sorted_order(list(iterable), key, reverse)
    tangents = []
    for index in order:
        tangents.append(t[index])
    return TangentList(tangents)


@linear(sorted_tangent, wrt="t")
@adjoint(sorted_tangent)  # linear in t: the transpose is the gradient
def _(ans, t, iterable, key=None, reverse=False):
    d[t] = sorted_grad(d[ans], iterable, key, reverse)


@transpose(builtins.sorted)  # d[iterable] = sorted_grad(d[out], iterable, key, reverse)
@tangent(builtins.sorted)
def _(out, iterable, key=None, reverse=False):
    d[out] = sorted_tangent(d[iterable], iterable, key, reverse)


nondifferentiable(sorted_order)
nondifferentiable(builtins.len, builtins.range, builtins.int, builtins.bool, builtins.round,
                  builtins.isinstance, builtins.print, builtins.type, builtins.str, builtins.repr,
                  builtins.any, builtins.all)

# zip and enumerate pass their items on: a for loop or a comprehension over them is written
# as indexing (compiler/front/normalize.py); the iterator itself, kept as a value, has no rule


@zero_in_zero_out("g")
def iterator_refused(name, g=1):
    """0 where no gradient reaches ``name(...)``'s iterator, else a NotImplementedError."""
    if zero_in(g):
        return zero
    if g is None:
        return zero
    raise NotImplementedError(
        f"{name}(...) kept as a value (not iterated over by a for loop or a comprehension) "
        "has no gradient or tangent rule; build the items with a comprehension instead, e.g. "
        "[(a[i], b[i]) for i in range(len(a))] or dict((k, v) for k, v in zip(keys, values))")


nondifferentiable(iterator_refused)


@adjoint(builtins.zip)
def _(out, *iterables, strict=False):
    """Iterated over by a for loop or a comprehension (written as indexing); refused where the
    iterator is kept as a value (``list(zip(a, b))``, ``dict(zip(keys, values))``)."""
    d[iterables] = iterator_refused("zip", d[out])


@tangent(builtins.zip)
def _(out, *iterables, strict=False):
    d[out] = iterator_refused("zip", d[iterables])


@adjoint(builtins.enumerate)
def _(out, iterable, start=0):
    """As ``zip``'s: refused where the iterator is kept as a value."""
    d[iterable] = iterator_refused("enumerate", d[out])


@tangent(builtins.enumerate)
def _(out, iterable, start=0):
    d[out] = iterator_refused("enumerate", d[iterable])

# ----- math --------------------------------------------------------------------------------


@elementwise(math.sin)
def _(out, x):
    slope[x] = math.cos(x)


@elementwise(math.cos)
def _(out, x):
    slope[x] = -math.sin(x)


@elementwise(math.log)
def _(out, x, base=math.e):
    slope[x] = 1.0 / (x * math.log(base))
    slope[base] = -out / (base * math.log(base))


@elementwise(math.log1p)
def _(out, x):
    slope[x] = 1.0 / (1.0 + x)


@elementwise(math.pow, singular=True)
def _(out, x, y):
    slope[x] = y * power(x, y - 1.0 + (y == 0))  # 0 for y = 0, also at x = 0; inf at 0 for y < 1
    slope[y] = out * math.log(x + (x == 0))  # 0 ** y is 0 for y > 0


@elementwise(math.sinh)
def _(out, x):
    slope[x] = math.cosh(x)


@elementwise(math.cosh)
def _(out, x):
    slope[x] = math.sinh(x)


@elementwise(math.asin, singular=True)
def _(out, x):
    slope[x] = quotient(1.0, math.sqrt(1.0 - x * x))  # inf at 1 and -1


@elementwise(math.acos, singular=True)
def _(out, x):
    slope[x] = quotient(-1.0, math.sqrt(1.0 - x * x))


@zero_in_zero_out("ts")
def hypot_tangent(ts, coordinates, out):
    """Tangent of ``math.hypot(*coordinates)``: sum of ``t_i c_i / out``."""
    if zero_in(ts):
        return zero
    total = 0.0
    for t, c in zip(ts, coordinates):
        if not is_zero(t) and out != 0:  # at the origin: 0, a subgradient
            total = total + t * c / out
    return total


# at the origin, 0 (a subgradient), as the tangent: every c is 0 there
@transpose_of(hypot_tangent)
def _(ans, ts, coordinates, out):
    d[ts] = tuple(d[ans] * c / (out + (out == 0)) for c in coordinates)


@transpose(math.hypot)
@tangent(math.hypot)
def _(out, *coordinates):
    d[out] = hypot_tangent(d[coordinates], coordinates, out)


@elementwise(math.fabs)
def _(out, x):
    slope[x] = math.copysign(1.0, x)


@elementwise(math.erf)
def _(out, x):
    slope[x] = 2.0 / math.sqrt(math.pi) * math.exp(-x * x)


@elementwise(math.gamma, singular=True)
def _(out, x):
    slope[x] = out * digamma(x)


@elementwise(math.lgamma, singular=True)  # log |Gamma(x)|: digamma below 0 too
def _(out, x):
    slope[x] = digamma(x)


@elementwise(math.erfc)
def _(out, x):
    slope[x] = -2.0 / math.sqrt(math.pi) * math.exp(-x * x)


@elementwise(builtins.pow, singular=True)  # pow(base, exp): base ** exp, as operator.pow
def _(out, base, exp, mod=None):
    slope[base] = exp * power(base, exp - 1 + (exp == 0))  # 0 for exp = 0, also at base = 0
    slope[exp] = out * log_base(base)


@transpose(math.fsum)  # d[seq] = sum_tangent_grad(d[out], out, seq)
@tangent(math.fsum)  # the sum of floats, rounded once: Python's sum's rules
def _(out, seq):
    d[out] = sum_tangent(d[seq], out, seq)


def _others(xs, i, start):
    """``start`` times every item of ``xs`` but the ``i``-th: a product's slope in that item,
    multiplied out, so an item 0 elsewhere gives 0, never a division by it."""
    product = start
    for j, x in enumerate(xs):
        if j != i:
            product = product * x
    return product


@zero_in_zero_out("g")
def prod_items_grad(g, xs, start):
    """Gradient of ``math.prod(xs, start=start)`` for ``xs``: each item ``g`` times the product
    of the others (and ``start``), summed to its shape; stacked for an array ``xs``."""
    if zero_in(g):
        return zero
    grads = [unbroadcast(g * _others(xs, i, start), x) for i, x in enumerate(xs)]
    return np.stack(grads) if isinstance(xs, np.ndarray) else grads


@zero_in_zero_out("ts")
def prod_items_tangent(ts, xs, start):
    """Tangent of ``math.prod(xs, start=start)`` from the items' tangents ``ts``: the sum of
    each tangent times the product of the other items (and ``start``)."""
    if zero_in(ts):
        return zero
    total = 0.0
    for i, t in enumerate(ts):
        if not is_zero(t):
            total = total + t * _others(xs, i, start)
    return total


@zero_in_zero_out("t")
def prod_start_tangent(t, xs):
    """Tangent of ``math.prod(xs, start=start)`` from ``start``: ``t`` times the items'
    product."""
    if zero_in(t):
        return zero
    return t * math.prod(xs)


# the tangents transposed in their tangents (@transpose reads them): the tangent helpers move
# with the items too, so reverse mode over forward mode differentiates their source
@transpose_of(prod_items_tangent)
def _(out, ts, xs, start):
    d[ts] = prod_items_grad(d[out], xs, start)


@transpose_of(prod_start_tangent)
def _(out, t, xs):
    d[t] = unbroadcast(d[out] * math.prod(xs), t)


@transpose(math.prod)
@tangent(math.prod)
def _(out, iterable, *, start=1):
    d[out] = prod_items_tangent(d[iterable], iterable, start)
    d[out] = prod_start_tangent(d[start], iterable)


@zero_in_zero_out("g")
def dist_grad(g, p, q, out):
    """Gradient of ``math.dist(p, q)`` for ``p``: ``g (p_i - q_i) / out`` per coordinate; 0 where
    the points coincide (every difference is 0 there: a subgradient, as ``math.hypot``'s)."""
    if zero_in(g):
        return zero
    scale = g / (out + (out == 0))
    grads = [scale * (a - b) for a, b in zip(p, q)]
    return as_array(grads) if isinstance(p, np.ndarray) else grads


@zero_in_zero_out("tp")
def dist_tangent(tp, p, q, out):
    """Tangent of ``math.dist(p, q)`` from ``p``'s tangent: ``math.hypot``'s of the differences
    ``p_i - q_i``, whose length ``out`` is."""
    if zero_in(tp):
        return zero
    return hypot_tangent(tp, [a - b for a, b in zip(p, q)], out)


# the tangent transposed in its tangent (@transpose reads it)
@transpose_of(dist_tangent)
def _(out, tp, p, q, ans):
    d[tp] = dist_grad(d[out], p, q, ans)


@transpose(math.dist)
@tangent(math.dist)
def _(out, p, q):
    d[out] = dist_tangent(d[p], p, q, out)
    d[out] = dist_tangent(d[q], q, p, out)


# booleans and integers of numbers: no gradient
nondifferentiable(math.isclose, math.isfinite, math.isinf, math.isnan, math.isqrt, math.gcd,
                  math.lcm, math.comb, math.perm, math.factorial)


@elementwise(math.copysign)
def _(out, x, y):
    slope[x] = math.copysign(1.0, x) * math.copysign(1.0, out)


@elementwise(math.ldexp)
def _(out, x, i):
    slope[x] = math.ldexp(1.0, i)  # x 2^i; the integer exponent has no gradient


@elementwise(math.fmod)
def _(out, x, y):
    slope[x] = 1.0
    slope[y] = -math.trunc(x / y)  # x - trunc(x / y) y


@elementwise(math.remainder)
def _(out, x, y):
    slope[x] = 1.0
    slope[y] = (out - x) / y  # x - n y for the nearest integer n


@adjoint(math.frexp)
def _(out, x):
    d[x] = d[out][0] * math.ldexp(1.0, -out[1])  # x = m 2^e, e piecewise constant


@tangent(math.frexp)
def _(out, x):
    d[out] = TangentTuple((d[x] * math.ldexp(1.0, -out[1]), 0))


@adjoint(math.modf)
def _(out, x):
    d[x] = d[out][0] + 0.0  # x = fraction + integral part, the latter piecewise constant


@tangent(math.modf)
def _(out, x):
    d[out] = TangentTuple((d[x] + 0.0, 0.0))


nondifferentiable(math.ulp)  # piecewise constant, as np.spacing
nondifferentiable(math.floor, math.ceil, math.trunc, math.isnan, math.isinf, math.isfinite)
