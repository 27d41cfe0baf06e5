"""Stage "taylor" of ``jet``: the normalized function rewritten to carry truncated Taylor series.

Output guarantees:

* The Taylor function takes the function's parameters as series (axis 0: the coefficients
  ``c[0], ..., c[K]`` of the curve, ``c[0]`` the primal), then ``terms`` (``K + 1``), and returns
  the series of the result.
* A linear operation (a sum, a product by a constant, a reduction by sum or mean, indexing, a
  reshape, an FFT, ...) is vmap's batching rule: the same NumPy on every coefficient at once. A
  constant meeting a series in a sum is lifted to a series (zeros past coefficient 0).
* A nonlinear operation is a rule of ``runtime.taylor`` (``series.mul``, ``series.exp``, ...):
  ``O(K^2)`` per element, where nested forward mode costs ``O(2^K)``.
* A comparison, or a piecewise constant function (``np.sign``, ``np.ones_like``), of series
  is taken at the primal (``x[0] > 0``): a branch on it is the branch taken at the point, as in
  nested forward mode.
* Anything else (a loop over a series' items, a function without a Taylor rule) raises
  ``batch.Unbatchable``: ``jet`` then nests forward mode instead, exact at any order.
"""

from __future__ import annotations

import math

import gast
import numpy as np

from mindgrad.compiler import astutil as A
from mindgrad.compiler.transform import batch_facts as F
from mindgrad.compiler.transform.batch import BatchWriter, Unbatchable
from mindgrad.compiler.transform.batch_operations import BatchRules, text
from mindgrad.runtime import taylor as series

#: the linear NumPy functions whose batching rule is their Taylor rule
LINEAR = frozenset({np.sum, np.mean, np.cumsum, np.reshape, np.transpose, np.swapaxes,
                    np.moveaxis, np.expand_dims, np.stack, np.concatenate, np.array,
                    np.asarray, np.ravel, np.real, np.imag, np.conj, np.negative, np.positive,
                    np.diff, np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.hfft,
                    np.fft.ihfft, np.trace})
LINEAR_METHODS = frozenset({"sum", "mean", "cumsum", "reshape", "transpose", "ravel",
                            "flatten", "copy", "astype", "conj"})
_BINARY = {np.add: gast.Add, np.subtract: gast.Sub, np.multiply: gast.Mult,
           np.divide: gast.Div, np.true_divide: gast.Div, np.power: gast.Pow,
           np.matmul: gast.MatMult}


#: functions whose value is piecewise constant: on a series, their value at the primal
CONSTANT = frozenset({np.ones_like, np.zeros_like, np.empty_like, np.full_like, np.sign,
                      np.floor, np.ceil, np.round, np.rint, np.trunc, np.argmax, np.argmin,
                      np.argsort, np.isnan, np.isfinite, np.isinf, np.greater, np.less,
                      np.greater_equal, np.less_equal, np.equal, np.not_equal, np.heaviside})


#: the math module's functions of a number, by their series rule's name
MATH = {math.exp: "exp", math.expm1: "expm1", math.log: "log", math.log1p: "log1p",
        math.sin: "sin", math.cos: "cos", math.sinh: "sinh", math.cosh: "cosh",
        math.tanh: "tanh", math.sqrt: "sqrt", math.atan: "arctan"}


class TaylorFacts(F.Facts):
    """A comparison or a piecewise constant function of series is no series: its value at
    t = 0 holds along the curve (as nested forward mode, which takes the branch at the
    point)."""

    def constant_valued(self, value) -> bool:
        if isinstance(value, gast.Compare):
            return True
        if isinstance(value, gast.BoolOp):
            return all(not self.reads_batched(v) or self.constant_valued(v)
                       for v in value.values)
        if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.Not):
            return True
        return isinstance(value, gast.Call) and self.resolve(value.func) in CONSTANT


class TaylorRules(BatchRules):
    """The Taylor rule of each operation: vmap's rule for the linear ones, ``series.<rule>``
    for the others, None for the rest."""

    module = "series"  # the name the code reaches runtime.taylor by (set by the writer)

    def spread(self, node, writable=False, now=False):
        """A constant as a series: itself at coefficient 0, zeros after (always a new array)."""
        if self.batched(node) and not now:
            return text(node)
        return f"{self.module}.lift({text(node)}, {self.size})"

    def written(self, value):
        return self.spread(value), True

    def helper(self, name, *operands):
        return f"{self.module}.{name}({', '.join(operands)})"

    def at_the_point(self, node):
        """``node`` with each series it reads replaced by its value at t = 0 (``x[0]``)."""
        facts = self.facts
        if any(self.kind(gast.Name(n, gast.Load(), None, None)) != F.ARRAY
               for n in A.names_in(node, gast.Load) if n in facts.batched):
            return None

        class AtZero(gast.NodeTransformer):
            def visit_Name(self, n):
                if isinstance(n.ctx, gast.Load) and n.id in facts.batched:
                    return gast.Subscript(value=n, slice=gast.Constant(0, None),
                                          ctx=gast.Load())
                return n

        return text(AtZero().visit(A.clone(node)))

    def value(self, node):
        if self.facts.constant_valued(node):
            return self.at_the_point(node)
        if isinstance(node, (gast.Name, gast.Constant, gast.Tuple, gast.List, gast.Dict,
                             gast.Subscript)) or self.facts.shape_only(node):
            return super().value(node)
        if isinstance(node, gast.BinOp):
            return self.binary(type(node.op), node.left, node.right)
        if isinstance(node, gast.UnaryOp):
            return super().value(node) if isinstance(node.op, (gast.USub, gast.UAdd)) else None
        if isinstance(node, gast.Attribute):
            return super().value(node) if node.attr in ("T", "real", "imag") else None
        if isinstance(node, gast.Call):
            return self.call(node)
        return None

    def binary(self, op, left, right):
        sl, sr = self.batched(left), self.batched(right)
        if any(self.kind(o) != F.ARRAY for o in (left, right)):
            return None
        if op in (gast.Add, gast.Sub):
            symbol = "+" if op is gast.Add else "-"
            return self.elementwise([left, right], lambda a, b: f"{a} {symbol} {b}",
                                    spread=True)
        if op is gast.Mult:
            if sl and sr:
                return self.helper("mul", text(left), text(right))
            return self.elementwise([left, right], lambda a, b: f"{a} * {b}")
        if op is gast.Div:
            if sr:
                return self.helper("div", self.spread(left), text(right))
            return self.elementwise([left, right], lambda a, b: f"{a} / {b}")
        if op is gast.Pow and sl and not sr:
            return self.helper("power", text(left), text(right))
        if op is gast.MatMult:
            if sl and sr:
                return self.helper("matmul", text(left), text(right))
            return self.matmul(left, right)
        return None

    def call(self, call):
        fn = self.facts.resolve(call.func)
        args = call.args
        if fn is None:
            func = call.func
            if isinstance(func, gast.Attribute) and func.attr in LINEAR_METHODS:
                return self.method(call)
            return None
        if (fn in series.FUNCTIONS or fn in MATH) and len(args) == 1 and not call.keywords:
            if self.kind(args[0]) != F.ARRAY or (fn in MATH and self.facts.ndim(args[0])):
                return None
            name = MATH[fn] if fn in MATH else series.FUNCTIONS[fn].__name__
            return self.helper(name, text(args[0]))
        if fn in _BINARY and len(args) == 2 and not call.keywords:
            return self.binary(_BINARY[fn], args[0], args[1])
        if fn is np.dot and len(args) == 2 and not call.keywords:
            if all(self.batched(a) for a in args):
                nds = [self.facts.ndim(a) for a in args]
                return self.helper("product", f"{self.np}.dot", *map(text, args)) \
                    if None not in nds else None
            return super().call(call)
        if fn is np.einsum and sum(self.batched(a) for a in args[1:]) > 1:
            return None  # a product of series in einsum's form: no rule here
        if fn in LINEAR or fn is np.einsum:
            return super().call(call)
        return None


class TaylorWriter(BatchWriter):
    """vmap's writer with the Taylor rules, and no loop to fall back on."""

    rules_class = TaylorRules
    facts_class = TaylorFacts
    size_name = "terms"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.rules.module = self.namespace.bind(series, "series")
        if self.facts.looped:
            raise Unbatchable("a branch or loop on a value that carries a series")

    def stacked(self, s, name):
        raise Unbatchable(f"no Taylor rule for {text(s.value)}")

    def each_example(self, s, why):
        raise Unbatchable(f"no Taylor rule for this statement ({why})")
