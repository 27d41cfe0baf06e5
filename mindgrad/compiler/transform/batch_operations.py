"""The batching rule of each operation of a normalized assignment: the value ``name = value``
computes for every example at once, each batched operand holding its examples along axis 0.

``BatchRules.value(value)`` gives the batched expression as source text, or None where no rule
applies (the writer then runs the statement once per example). A rule never guesses: an
``ndim`` it needs and does not know (``batch_facts``) gives None.

    elementwise (+, np.exp, np.where, ...)   batched operands of fewer dimensions than the
                                              result get axes after the batch axis
    reductions (np.sum, x.mean, ...)          ``axis`` moved one on (None: every axis but 0)
    @, np.dot, np.matmul                      the stacked form, or an einsum
    np.einsum                                 a letter for the batch axis
    x[i]                                      ``x[:, i]``
    np.stack, np.concatenate, ...             their axis moved one on
    np.reshape, x.T, np.transpose, ...        the batch axis kept in front
    np.linalg.inv, det, cholesky, solve       their stacked forms
    x.shape, len(x), x.ndim                   one example's
"""

from __future__ import annotations

import gast
import numpy as np

from mindgrad.compiler.finish import emit
from mindgrad.compiler.transform import batch_facts as F
from mindgrad.compiler.transform.batch_facts import ARRAY, SEQ

_BINOP_TEXT = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**",
               gast.Mod: "%", gast.FloorDiv: "//", gast.BitAnd: "&", gast.BitOr: "|",
               gast.BitXor: "^"}
_COMPARE_TEXT = {gast.Lt: "<", gast.LtE: "<=", gast.Gt: ">", gast.GtE: ">=", gast.Eq: "==",
                 gast.NotEq: "!="}


def text(node) -> str:
    """``node`` (an expression) as source."""
    return emit.unparse([gast.Expr(value=node)]).strip()


def parse(source: str):
    return gast.parse(source).body[0].value


def with_batch_axis(ndim, spec):
    """An axis literal ``spec`` (an int, a tuple of ints, or None for all ``ndim`` axes) of one
    example, as the axis of the batched value; None where it cannot be said."""
    if spec is None:
        return None if ndim is None else tuple(range(1, ndim + 1))
    if isinstance(spec, tuple):
        moved = [with_batch_axis(ndim, s) for s in spec]
        return None if any(m is None for m in moved) else tuple(moved)
    if isinstance(spec, int) and not isinstance(spec, bool):
        return spec + 1 if spec >= 0 else spec
    return None


class BatchRules:
    """The rules, reading the facts ``facts`` and writing NumPy as ``np_name``."""

    def __init__(self, facts: F.Facts, np_name: str, size: str, spread_name: str):
        self.facts, self.np, self.size, self.spread_name = facts, np_name, size, spread_name

    def written(self, value):
        """``(source, batched)``: the value of an index write into a batched array."""
        return text(value), self.batched(value)

    def batched(self, node) -> bool:
        return self.facts.reads_batched(node)

    def kind(self, node):
        return (self.facts.of(node) or F.UNKNOWN).kind

    # ----- the value of an assignment ----------------------------------------------------------

    def value(self, node):
        facts = self.facts
        if isinstance(node, (gast.Name, gast.Constant)):
            return text(node)
        if facts.shape_only(node):
            return self.shape_of(node)
        if isinstance(node, gast.BinOp):
            if isinstance(node.op, gast.MatMult):
                return self.matmul(node.left, node.right)
            if self.kind(node.left) == SEQ or self.kind(node.right) == SEQ:
                return None
            op = _BINOP_TEXT.get(type(node.op))
            return op and self.elementwise([node.left, node.right],
                                           lambda a, b: f"{a} {op} {b}")
        if isinstance(node, gast.UnaryOp):
            op = {gast.USub: "-", gast.UAdd: "+", gast.Invert: "~"}.get(type(node.op))
            return op and self.elementwise([node.operand], lambda a: f"{op}{a}")
        if isinstance(node, gast.Compare) and len(node.ops) == 1:
            op = _COMPARE_TEXT.get(type(node.ops[0]))  # not is, in: no elementwise form
            return op and self.elementwise([node.left, node.comparators[0]],
                                           lambda a, b: f"{a} {op} {b}")
        if isinstance(node, (gast.Tuple, gast.List)):
            items = [self.spread(e) for e in node.elts]
            return ("(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")") \
                if isinstance(node, gast.Tuple) else "[" + ", ".join(items) + "]"
        if isinstance(node, gast.Dict) and None not in node.keys:
            return "{" + ", ".join(f"{text(k)}: {self.spread(v)}"
                                   for k, v in zip(node.keys, node.values)) + "}"
        if isinstance(node, gast.Subscript):
            return self.index(node)
        if isinstance(node, gast.Attribute):
            return self.attribute(node)
        if isinstance(node, gast.Call):
            return self.call(node)
        return None

    def spread(self, node, writable=False, now=False):
        """``node`` as an item of a batched container: a value the same in every example is
        given the batch axis (a copy with ``writable``: the code writes into it; ``now``: a
        batched name whose value here is the same in every example)."""
        if self.batched(node) and not now:
            return text(node)
        if self.kind(node) == ARRAY:
            spread = f"{self.np}.broadcast_to({text(node)}, ({self.size},) + " \
                     f"{self.np}.shape({text(node)}))"
            return f"{self.np}.array({spread})" if writable else spread
        return f"{self.spread_name}({text(node)}, {self.size})"

    # ----- elementwise ------------------------------------------------------------------------

    def elementwise(self, operands, write, spread=False):
        """``write`` of the operands, those batched given axes up to the result's ndim (with
        ``spread``, those not batched given the batch axis first, by ``self.spread``)."""
        ndims = [self.facts.ndim(o) for o in operands]
        batched = [self.batched(o) or spread for o in operands]
        if any(self.kind(o) not in (ARRAY,) for o in operands) or None in ndims:
            return None
        top = max(ndims, default=0)
        texts = []
        for o, n, b in zip(operands, ndims, batched):
            t = text(o) if self.batched(o) or not b else self.spread(o)
            if b and n < top:
                t = f"{t}[:{', None' * (top - n)}]"
            texts.append(t)
        return write(*texts)

    # ----- products -----------------------------------------------------------------------------

    def matmul(self, a, b):
        na, nb = self.facts.ndim(a), self.facts.ndim(b)
        ba, bb = self.batched(a), self.batched(b)
        ta, tb = text(a), text(b)
        if na is None or nb is None or na == 0 or nb == 0:
            return None
        if ba and bb:
            if na == nb >= 2:
                return f"{ta} @ {tb}"
            forms = {(1, 1): "zi,zi->z", (1, 2): "zi,zij->zj", (2, 1): "zij,zj->zi"}
            if (na, nb) in forms:
                return f"{self.np}.einsum('{forms[na, nb]}', {ta}, {tb})"
            return None
        if ba:
            if (na >= 2 and na >= nb) or (na == 1 and nb <= 2):
                return f"{ta} @ {tb}"
            return None
        if nb >= 2 and nb >= na:
            return f"{ta} @ {tb}"
        if nb == 1 and na == 1:
            return f"{tb} @ {ta}"
        if nb == 1 and na == 2:
            return f"{tb} @ {ta}.T"
        return None

    def einsum(self, call):
        spec = F.constant(call.args[0], F.NOT_LITERAL)
        if not isinstance(spec, str) or "..." in spec or call.keywords:
            return None
        spec = spec.replace(" ", "")
        inputs = spec.split("->")[0].split(",")
        operands = call.args[1:]
        if len(inputs) != len(operands):
            return None
        letter = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA"
                      if c not in spec)
        new = [(letter + s if self.batched(o) else s) for s, o in zip(inputs, operands)]
        written = ",".join(new) + "->" + letter + F.einsum_output(spec)
        return f"{self.np}.einsum('{written}', " + ", ".join(text(o) for o in operands) + ")"

    # ----- reductions and axes ----------------------------------------------------------------

    def reduction(self, call, fn_text, x, first_keyword, flat=False):
        """``fn(x, axis, ...)`` (``x.fn(axis, ...)`` for a method: ``first_keyword`` 0) with
        the axis moved past the batch axis; the call's other arguments must be literals or the
        same in every example."""
        ndim = self.facts.ndim(x)
        positional = call.args[first_keyword:]
        if len(positional) > 1 or any(self.batched(a) for a in positional[1:]) or \
                any(self.batched(k.value) for k in call.keywords):
            return None
        axis = F.keyword(call, "axis", first_keyword)
        spec = F.constant(axis, F.NOT_LITERAL)
        if spec is F.NOT_LITERAL:
            return None
        if spec is None and flat:
            if ndim != 1:
                return None
            spec = 0
        moved = with_batch_axis(ndim, spec)
        if moved is None:
            return None
        keywords = [f"{k.arg}={text(k.value)}" for k in call.keywords if k.arg != "axis"]
        head = [text(x)] if first_keyword else []
        return f"{fn_text}({', '.join(head + [f'axis={moved!r}'] + keywords)})"

    def axes_call(self, fn, call):
        """np.transpose, np.swapaxes, np.moveaxis, np.expand_dims, np.stack, np.concatenate."""
        np_ = self.np
        args = call.args
        x = args[0]
        ndim = self.facts.ndim(x) if fn not in (np.stack, np.concatenate) else None
        literals = [F.constant(a, F.NOT_LITERAL) for a in args[1:]]
        if any(v is F.NOT_LITERAL for v in literals) or \
                any(k.arg != "axis" for k in call.keywords):
            return None
        if fn is np.transpose:
            if len(args) == 1 and not call.keywords:
                return self.transpose(x)
            axes = literals[0] if literals else F.constant(call.keywords[0].value, None)
            if not isinstance(axes, tuple):
                return None
            if ndim is None:
                return None
            moved = (0,) + tuple(a + 1 if a >= 0 else a + ndim + 1 for a in axes)
            return f"{np_}.transpose({text(x)}, {moved!r})"
        if fn in (np.swapaxes, np.moveaxis):
            moved = [with_batch_axis(ndim, a) for a in literals]
            if len(moved) != 2 or any(m is None for m in moved):
                return None
            return f"{np_}.{fn.__name__}({text(x)}, {moved[0]!r}, {moved[1]!r})"
        axis = literals[0] if literals else \
            F.constant(F.keyword(call, "axis"), F.NOT_LITERAL)
        if fn is np.expand_dims:
            moved = with_batch_axis(None, axis)
            return None if moved is None else f"{np_}.expand_dims({text(x)}, {moved!r})"
        # np.stack and np.concatenate of a batched sequence: every item batched
        if self.kind(x) != SEQ:
            return None
        if axis is F.NOT_LITERAL or (axis is None and (call.keywords or literals)):
            return None
        moved = with_batch_axis(None, 0 if axis is None and not literals else axis)
        return None if moved is None else \
            f"{np_}.{fn.__name__}({self.sequence(x)}, axis={moved!r})"

    def sequence(self, node):
        if isinstance(node, (gast.List, gast.Tuple)):
            return "[" + ", ".join(self.spread(e) for e in node.elts) + "]"
        return text(node)

    def transpose(self, x):
        ndim = self.facts.ndim(x)
        if ndim is None:
            return None
        if ndim <= 1:
            return text(x)
        return f"{self.np}.transpose({text(x)}, {(0,) + tuple(range(ndim, 0, -1))!r})"

    def reshape(self, x, shape):
        """``np.reshape(x, shape)`` (``shape`` a node, or the list of a method's arguments)
        with the batch size first."""
        if isinstance(shape, (list, gast.Tuple)):
            parts = shape if isinstance(shape, list) else shape.elts
            if any(self.batched(p) for p in parts):
                return None
            return f"{self.np}.reshape({text(x)}, " \
                   f"({', '.join([self.size] + [text(p) for p in parts])}))"
        info = self.facts.of(shape) or F.UNKNOWN
        if info == F.NUMBER:
            return f"{self.np}.reshape({text(x)}, ({self.size}, {text(shape)}))"
        if info.kind in (F.SHAPE, SEQ) and not self.batched(shape):
            return f"{self.np}.reshape({text(x)}, ({self.size},) + tuple({text(shape)}))"
        return None

    # ----- indexing, attributes, shapes ---------------------------------------------------------

    def index_text(self, base, index):
        """``base[:, index]`` for a batched array, where the batch axis stays in front."""
        parts = self.facts.index_parts(index)
        picked = [i for i, p in enumerate(parts) if p in ("int", "array")]
        if "array" in parts and picked and picked[-1] - picked[0] + 1 != len(picked):
            return None  # advanced indices apart: NumPy would move their axes first
        elements = index.elts if isinstance(index, gast.Tuple) else [index]
        inner = ", ".join(text(e) if not isinstance(e, gast.Slice) else _slice(e)
                          for e in elements)
        return f"{text(base)}[:, {inner}]"

    def index(self, node):
        if self.batched(node.slice):
            return None
        kind = self.kind(node.value)
        if kind in (SEQ, F.DICT):
            return text(node)
        if kind != ARRAY:
            return None
        return self.index_text(node.value, node.slice)

    def attribute(self, node):
        if self.kind(node.value) != ARRAY:
            return None
        if node.attr == "T":
            return self.transpose(node.value)
        if node.attr in ("real", "imag"):
            return text(node)
        return None

    def shape_of(self, node):
        x = node.value if isinstance(node, gast.Attribute) else node.args[0]
        what = node.attr if isinstance(node, gast.Attribute) else \
            self.facts.resolve(node.func).__name__
        if what == "dtype":
            return text(node)
        if what in ("shape",):
            return f"{self.np}.shape({text(x)})[1:]"
        if what == "ndim":
            return f"{self.np}.ndim({text(x)}) - 1"
        if what == "len":
            return f"{self.np}.shape({text(x)})[1]" if self.kind(x) == ARRAY else text(node)
        return None

    # ----- calls --------------------------------------------------------------------------------

    def call(self, call):
        facts = self.facts
        if any(isinstance(a, gast.Starred) for a in call.args):
            return None
        fn = facts.resolve(call.func)
        if fn is None:
            return self.method(call)
        fn_text = text(call.func)
        args = call.args
        if F.is_elementwise(fn, len(args)):
            if call.keywords or not args:
                return None
            return self.elementwise(args, lambda *t: f"{fn_text}({', '.join(t)})")
        if fn in F.REDUCTIONS or fn in F.FLAT_REDUCTIONS:
            if not args or not self.batched(args[0]):
                return None
            return self.reduction(call, fn_text, args[0], 1, fn in F.FLAT_REDUCTIONS)
        if fn in (np.matmul, np.dot) and len(args) == 2 and not call.keywords:
            na, nb = facts.ndim(args[0]), facts.ndim(args[1])
            if fn is np.dot and (na is None or nb is None or na > 2 or nb > 2):
                return None
            return self.matmul(args[0], args[1])
        if fn is np.einsum:
            return self.einsum(call)
        if fn in (np.transpose, np.swapaxes, np.moveaxis, np.expand_dims, np.stack,
                  np.concatenate):
            if any(self.batched(a) for a in args[1:]):
                return None
            return self.axes_call(fn, call)
        if fn in (np.array, np.asarray) and len(args) == 1 and not call.keywords:
            if self.kind(args[0]) == ARRAY:
                return f"{fn_text}({text(args[0])})"
            info = facts.of(args[0]) or F.UNKNOWN
            if info.kind == SEQ and info.item is not None and info.item.kind == ARRAY:
                return f"{self.np}.stack({self.sequence(args[0])}, axis=1)"
            return None
        if fn in F.LAST_AXIS:
            return self.last_axis(call, fn_text, fn)
        if fn is np.ravel and len(args) == 1 and not call.keywords and \
                self.kind(args[0]) == ARRAY:
            return f"{self.np}.reshape({text(args[0])}, ({self.size}, -1))"
        if fn is np.reshape and len(args) == 2 and not call.keywords and \
                self.batched(args[0]) and self.kind(args[0]) == ARRAY:
            return self.reshape(args[0], args[1])
        return self.linalg(fn, fn_text, call)

    def last_axis(self, call, fn_text, fn):
        """An FFT, np.sort or np.diff: along ``axis`` (the last by default), moved one on."""
        x, rest = call.args[0], call.args[1:]
        if not self.batched(x) or any(self.batched(a) for a in rest) or \
                any(self.batched(k.value) for k in call.keywords) or \
                self.kind(x) != ARRAY or len(rest) > 1:
            return None
        axis = F.keyword(call, "axis", 1 if fn is np.sort else None)
        spec = F.constant(axis, F.NOT_LITERAL) if axis is not None else -1
        if spec is None:  # np.sort(x, axis=None) flattens
            return None
        if axis is not None and rest and rest[0] is axis:
            rest = []
        moved = with_batch_axis(self.facts.ndim(x), spec)
        if moved is None:
            return None
        keywords = [f"{k.arg}={text(k.value)}" for k in call.keywords if k.arg != "axis"]
        return f"{fn_text}({', '.join([text(a) for a in [x] + rest] + keywords)}, " \
               f"axis={moved!r})"

    def linalg(self, fn, fn_text, call):
        args = call.args
        if call.keywords:
            return None
        if fn in (np.linalg.inv, np.linalg.det, np.linalg.cholesky) and len(args) == 1:
            return f"{fn_text}({text(args[0])})" if self.facts.ndim(args[0]) == 2 else None
        if fn is np.linalg.solve and len(args) == 2:
            na, nb = self.facts.ndim(args[0]), self.facts.ndim(args[1])
            if na != 2 or nb not in (1, 2):
                return None
            a = text(args[0])
            if nb == 1:  # a stack of columns (NumPy 1.x reads a (..., n) b by its ndim)
                b = text(args[1]) if self.batched(args[1]) else self.spread(args[1], now=True)
                return f"{fn_text}({a}, {b}[..., None])[..., 0]"
            return f"{fn_text}({a}, {text(args[1])})"
        if fn is np.linalg.norm and len(args) == 1:
            ndim = self.facts.ndim(args[0])
            if ndim in (1, 2):
                return f"{fn_text}({text(args[0])}, axis={tuple(range(1, ndim + 1))!r})" \
                    if ndim == 2 else f"{fn_text}({text(args[0])}, axis=1)"
        return None

    def method(self, call):
        func = call.func
        if not isinstance(func, gast.Attribute) or self.kind(func.value) != ARRAY or \
                not self.batched(func.value) or \
                any(self.batched(a) for a in call.args) or \
                any(self.batched(k.value) for k in call.keywords):
            return None
        x, name = func.value, func.attr
        owner = text(x)
        if name in F.REDUCTION_METHODS or name in F.FLAT_METHODS:
            return self.reduction(call, f"{owner}.{name}", x, 0, name in F.FLAT_METHODS)
        if name in F.SAME_METHODS:
            return text(call)
        if name in ("ravel", "flatten") and not call.args and not call.keywords:
            flat = f"{self.np}.reshape({owner}, ({self.size}, -1))"
            return flat + ".copy()" if name == "flatten" else flat  # flatten copies
        if name == "transpose" and not call.args and not call.keywords:
            return self.transpose(x)
        if name == "reshape" and call.args and not call.keywords:
            return self.reshape(x, call.args[0] if len(call.args) == 1 else list(call.args))
        return None


def _slice(node):
    parts = [text(p) if p is not None else "" for p in (node.lower, node.upper)]
    out = ":".join(parts)
    return out + (":" + text(node.step) if node.step is not None else "")
