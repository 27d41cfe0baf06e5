"""The gradient of a whole reduction passed as a number (part of stage 5, reverse).

``np.sum(a)`` and ``np.mean(a)`` over all of ``a`` have the gradient ``g`` in ``a``'s shape
(``reduce_sum_grad(g, a)``, ``filled``): an array that holds one number. Where the one rule that
reads it multiplies it elementwise with an array of ``a``'s shape, as the adjoint of
``a = x ** 2`` does (``d_x = d_a * 2 * x``), the number gives the same array: the product
broadcasts it. The pass then writes ``d_a = sum_number(g, a)`` (``mean_number``), the number in
``a``'s float dtype (``rules.numpy_reductions``), and the array is never built::

    d_pow_ = sum_number(d_sum_, pow_)
    d_x_i3 = d_pow_ * 2 * x_i3

Facts gathered while the rules are instantiated (``expand.instantiate``):

* a *producer*: a statement ``d[a] = reduce_sum_grad(d[ans], a)`` (or ``reduce_mean_grad``) of a
  whole reduction, no other argument, accumulated into the adjoint of the name ``a``;
* a *number read*: a read of ``d[out]`` in the gradient an elementwise rule (``@elementwise``,
  its slopes) gives an operand, when that expression is elementwise throughout (operators,
  NumPy ufuncs, ``times_slope``) and reads a name of ``out``'s shape (the shape facts, as for
  ``unbroadcast``). Every name such an expression reads broadcasts to ``out``'s shape, one has
  it: with a number for ``d[out]`` the result has that shape, and the dtype of the array the
  number stands for.

Output guarantee: an adjoint is made a number only where every mention of it in the function is
one of: ``d_a = zero``, ``d_a = d_a + <producer>`` (or ``d_a = <producer>``), a number read;
and ``a`` is a local, not an argument, a weight, a container or an array indexed (whose
gradient a buffer or ``add_at`` holds). Its value is then always 0, the number, or a sum of such
numbers (a sum in a loop), where the array held the same value in every element; and each
read gives what the array gave. Anything else keeps the array.
"""

from __future__ import annotations

import gast
import numpy as np

from mindgrad import runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler.switch import Switch
from mindgrad.rules.numpy_reductions import (
    mean_number,
    reduce_mean_grad,
    reduce_sum_grad,
    sum_number,
)

#: the helpers of whole reductions, and what gives their gradient as a number
NUMBERS = {reduce_sum_grad: sum_number, reduce_mean_grad: mean_number}

#: whether gradients are built with this pass; ``off()`` leaves it out in a block (the arrays
#: kept, to compare against)
ON = Switch()
off = ON.off


_ELEMENTWISE_OPS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow, gast.USub, gast.UAdd)


class Facts:
    """The producers and number reads of one reverse pass (see the module's text)."""

    def __init__(self):
        self.producers = {}  # id(call) -> (call, the adjoint it is accumulated into, helper)
        self.reads = {}      # id(name node) -> (name node, the adjoint read)


def note_producer(gen, template_call, call, atom, rule):
    """``d[a] = <call>``, just instantiated: a producer when the template calls
    ``reduce_sum_grad`` or ``reduce_mean_grad`` and nothing but ``(g, a)`` is left."""
    facts = gen.numbers
    helper = rule.globals.get(template_call.func.id) if isinstance(template_call, gast.Call) \
        and isinstance(template_call.func, gast.Name) else None
    if helper not in NUMBERS:
        return
    if not isinstance(call, gast.Call) or len(call.args) != 2 or call.keywords or \
            not isinstance(call.args[1], gast.Name) or not isinstance(atom, gast.Name) or \
            call.args[1].id != atom.id:
        return
    key = gen.key(atom)
    if key is None or key != atom.id or key in gen.params or key in gen.indexed or \
            key in gen.containers or key in gen.buffers or key in gen.weight_keys or \
            key not in gen.local_names:
        return
    facts.producers[id(call)] = (call, gen.d(key), helper)


def note_reads(gen, value, d_out, out_name, rule):
    """The reads of ``d_out`` in ``value``, the gradient an elementwise rule gives an operand
    of ``out_name``: number reads when ``value`` is elementwise and reads a name of
    ``out_name``'s shape."""
    facts = gen.numbers
    if not rule.from_slopes or rule.kind != "adjoint" or not isinstance(d_out, str):
        return
    reads, shaped = [], False
    for node in A.walk(value):
        if isinstance(node, gast.Name):
            if node.id == d_out:
                reads.append(node)
            elif isinstance(node.ctx, gast.Load) and not shaped:
                shaped = gen.same_shape(node, out_name)
        elif isinstance(node, gast.Call):
            if node.keywords or not _elementwise(gen, node.func):
                return
        elif isinstance(node, gast.Constant):
            if not isinstance(node.value, (int, float)):
                return
        elif not isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Load) + _ELEMENTWISE_OPS):
            return
    if shaped:
        for node in reads:
            facts.reads[id(node)] = (node, d_out)


def _elementwise(gen, func) -> bool:
    """Whether ``func``, a callee in generated code, is ``times_slope`` or a NumPy ufunc."""
    fn = gen.namespace.resolver(gen.local_names)(func)
    return fn is runtime.times_slope or isinstance(fn, np.ufunc)


def pass_numbers(gen, statements):
    """Make the producers whose adjoints are read only as numbers give the number."""
    facts = gen.numbers
    if not ON or not facts.producers or not facts.reads:
        return
    candidates = {entry[1] for entry in facts.producers.values()}

    def produces(node, d):
        entry = facts.producers.get(id(node))
        return entry is not None and entry[1] == d

    allowed = set()
    for node in A.walk(statements):
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], gast.Name) and node.targets[0].id in candidates:
            d, value = node.targets[0].id, node.value
            if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add) and \
                    isinstance(value.left, gast.Name) and value.left.id == d and \
                    produces(value.right, d):
                allowed.update((id(node.targets[0]), id(value.left)))
            elif A.is_zero_mark(value) or produces(value, d):
                allowed.add(id(node.targets[0]))
    refused, read = set(), set()
    for node in A.walk(statements):
        if isinstance(node, gast.Name) and node.id in candidates and id(node) not in allowed:
            entry = facts.reads.get(id(node))
            if entry is not None and entry[1] == node.id:
                read.add(node.id)
            else:
                refused.add(node.id)
    for call, d, fn in facts.producers.values():
        if d in read and d not in refused:
            call.func = gen.helper(NUMBERS[fn])
