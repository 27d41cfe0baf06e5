"""What batching needs to know of each value of a normalized function before writing it: its
kind (an array or number, a sequence, a shape), its number of dimensions in one example, and
which names hold batched values.

Both are flow-insensitive: a name has one kind and one ``ndim`` over the whole function (None
where its assignments disagree or the value is not known), and a name is batched everywhere if
any assignment makes it so (the others then give it the batch axis by repeating their value).
A rule that needs an ``ndim`` it does not know leaves its statement to the loop over examples.
"""

from __future__ import annotations

import dataclasses

import gast
import numpy as np

from mindgrad.compiler import astutil as A
from mindgrad.compiler.transform import batch_scope
from mindgrad.compiler.transform.batch_scope import NOT_LITERAL, constant  # noqa: F401

ARRAY, SEQ, DICT, SHAPE, OTHER = "array", "seq", "dict", "shape", "other"


@dataclasses.dataclass(frozen=True)
class Info:
    """A value in one example: ``kind``, and for an array its ``ndim``; for a sequence its
    ``items`` where a display shows them, else the join of all it holds (``item``)."""

    kind: str | None = None
    ndim: int | None = None
    items: tuple | None = None
    item: object = None
    keys: tuple | None = None  # a dict's, in the order of ``items``

    def join(self, other):
        if other is None or other == self:
            return self
        if self.kind != other.kind:
            return UNKNOWN
        item = _join(self.item, other.item)
        if self.items is not None and other.items is not None and \
                len(self.items) == len(other.items) and self.keys == other.keys:
            return Info(self.kind, _same(self.ndim, other.ndim),
                        tuple(_join(a, b) for a, b in zip(self.items, other.items)), item,
                        self.keys)
        return Info(self.kind, _same(self.ndim, other.ndim), None, item)


UNKNOWN = Info()
NUMBER = Info(ARRAY, 0)


def _joined(items):
    """The join of the Infos ``items`` (None for none)."""
    item = None
    for i in items:
        item = _join(item, i)
    return item


def _join(a, b):
    if a is None:
        return b
    return a.join(b)


def _same(a, b):
    return a if a == b else None


def array(ndim):
    return Info(ARRAY, ndim)


def info_of_value(value):
    """The Info of a value known when the code is built (an argument's example, a global)."""
    if isinstance(value, (bool, int, float, complex, np.number, np.bool_)):
        return NUMBER
    if isinstance(value, np.ndarray):
        return array(value.ndim)
    if isinstance(value, (tuple, list, dict)):
        items = tuple(info_of_value(v) for v in (value.values() if isinstance(value, dict)
                                                  else value))
        item = _joined(items)
        if isinstance(value, dict):
            return Info(DICT, None, items, item, tuple(value))
        return Info(SEQ, None, items, item)
    return Info(OTHER)


REDUCTIONS = frozenset({
    np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.std, np.var, np.any,
    np.all, np.nansum, np.nanmean, np.nanmax, np.nanmin, np.nanstd, np.nanvar, np.median,
    np.ptp, np.count_nonzero})
FLAT_REDUCTIONS = frozenset({np.argmax, np.argmin, np.cumsum, np.cumprod})  # axis=None flattens
REDUCTION_METHODS = frozenset({"sum", "mean", "prod", "max", "min", "std", "var", "any", "all",
                               "ptp"})
FLAT_METHODS = frozenset({"argmax", "argmin", "cumsum", "cumprod"})
LIKE = frozenset({np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.copy,
                  np.real, np.imag, np.conj, np.angle, np.sinc, np.nan_to_num, np.where,
                  np.clip, np.positive, np.negative, np.square})
#: transforms along the last axis by default (``axis=`` moves it): an example's ndim kept
LAST_AXIS = frozenset({np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.hfft,
                       np.fft.ihfft, np.sort, np.diff})
SAME_METHODS = frozenset({"copy", "astype", "conj", "clip"})


def is_elementwise(fn, nargs) -> bool:
    if fn is np.where:
        return nargs == 3  # np.where(c) gives indices
    if isinstance(fn, np.ufunc):  # not a generalized one (np.matmul), nor one of two results
        return fn.signature is None and fn.nout == 1
    return fn in LIKE


def keyword(call, name, position=None):
    """The value of the argument ``name`` of ``call`` (a keyword, or the positional one at
    ``position``), or None when absent."""
    for k in call.keywords:
        if k.arg == name:
            return k.value
    if position is not None and len(call.args) > position:
        return call.args[position]
    return None




def axes_count(axis, ndim):
    """How many axes a reduction's ``axis`` literal removes; None when not known."""
    value = constant(axis, NOT_LITERAL)
    if value is NOT_LITERAL:
        return None
    if value is None:
        return ndim
    return len(value) if isinstance(value, tuple) else 1


class Facts:
    """The Info of every local of ``fdef`` (``params``: the Info of each parameter's example)
    and the names holding batched values (``batched``: the parameters batched)."""

    def __init__(self, fdef, params, batched, resolve):
        self.resolve = resolve
        self.locals = set(params) | A.assigned_names(fdef.body)
        self._read = {}  # the values read from outside the function: see ``read``
        self.info = dict(params)
        for _ in range(10):
            before = dict(self.info)
            self._infer(fdef.body)
            if self.info == before:
                break
        self.batched = set(batched)
        self.looped = set()   # compound statements run once per example (their ids)
        for _ in range(len(self.locals) + 2):
            size = len(self.batched)
            self._mark(fdef.body)
            if len(self.batched) == size:
                break

    # ----- kinds and ndims ---------------------------------------------------------------------

    def _set(self, name, info):
        if info is not None:
            self.info[name] = info.join(self.info.get(name))

    def _infer(self, stmts):
        for s in stmts:
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                self._set(s.targets[0].id, self.of(s.value))
            elif isinstance(s, gast.For):
                self._set(s.target.id, self.item_of(s.iter))
                self._infer(s.body)
            elif isinstance(s, (gast.If, gast.While)):
                self._infer(s.body)
                self._infer(s.orelse)
            elif isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
                call = s.value
                func = call.func
                if isinstance(func, gast.Attribute) and func.attr == "append" and \
                        isinstance(func.value, gast.Name) and call.args:
                    seq = self.info.get(func.value.id)
                    if seq is not None and seq.kind == SEQ:
                        self.info[func.value.id] = Info(SEQ, None, None,
                                                        _join(seq.item, self.of(call.args[0])))

    def item_of(self, node):
        if isinstance(node, gast.Call) and self.resolve(node.func) is range:
            return NUMBER
        info = self.of(node)
        if info is None:
            return None
        if info.kind == SEQ:
            return info.item or UNKNOWN
        if info.kind == ARRAY and info.ndim:
            return array(info.ndim - 1)
        return UNKNOWN

    def ndim(self, node):
        info = self.of(node)
        return info.ndim if info is not None and info.kind == ARRAY else None

    def of(self, node):
        """The Info of the expression ``node`` in one example (None: a local not yet seen)."""
        if isinstance(node, gast.Constant):
            return NUMBER if isinstance(node.value, (int, float, complex)) else Info(OTHER)
        if isinstance(node, gast.Name):
            if node.id in self.locals:
                return self.info.get(node.id)
            return self._outside(node)
        if isinstance(node, (gast.Tuple, gast.List)):
            items = tuple(self.of(e) or UNKNOWN for e in node.elts)
            return Info(SEQ, None, items, _joined(items))
        if isinstance(node, gast.Dict):
            keys = tuple(constant(k, NOT_LITERAL) for k in node.keys)
            items = tuple(self.of(v) or UNKNOWN for v in node.values)
            item = _joined(items)
            if any(k is NOT_LITERAL for k in keys) or len(set(keys)) < len(keys):
                return Info(DICT, None, None, item)
            return Info(DICT, None, items, item, keys)
        if isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.BoolOp)):
            operands = {gast.BinOp: lambda n: [n.left, n.right],
                        gast.UnaryOp: lambda n: [n.operand],
                        gast.Compare: lambda n: [n.left] + n.comparators,
                        gast.BoolOp: lambda n: n.values}[type(node)](node)
            if isinstance(node, gast.BinOp) and isinstance(node.op, gast.MatMult):
                return array(matmul_ndim(self.ndim(operands[0]), self.ndim(operands[1])))
            if isinstance(node, gast.BinOp) and any(
                    (self.of(o) or UNKNOWN).kind == SEQ for o in operands):
                return Info(SEQ)
            return array(_max(self.ndim(o) for o in operands))
        if isinstance(node, gast.Attribute):
            return self._attribute(node)
        if isinstance(node, gast.Subscript):
            return self._subscript(node)
        if isinstance(node, gast.Call):
            return self._call(node)
        return UNKNOWN

    def _outside(self, node):
        value = self.resolve(node)
        info = UNKNOWN if value is None else info_of_value(value)
        self._read.setdefault(gast.dump(node), (self.resolve, node, info))
        return info

    @property
    def read(self):
        """``(resolve, node, Info)`` of each value read from outside the function (a global,
        an attribute of a Cell): the code is right for them while ``resolve(node)`` has that
        Info."""
        return list(self._read.values())

    def _attribute(self, node):
        if self.resolve(node) is not None:
            return self._outside(node)
        owner = self.of(node.value)
        if owner is None or owner.kind != ARRAY:
            return UNKNOWN
        if node.attr == "shape":
            return Info(SHAPE, None, None, NUMBER)
        if node.attr in ("ndim", "size"):
            return NUMBER
        if node.attr in ("T", "real", "imag"):
            return owner
        return UNKNOWN

    def _subscript(self, node):
        base = self.of(node.value)
        if base is None:
            return None
        if base.kind == DICT:
            k = constant(node.slice, NOT_LITERAL)
            if base.keys is not None and k in base.keys:
                return base.items[base.keys.index(k)]
            return base.item or UNKNOWN
        if base.kind in (SEQ, SHAPE):
            if isinstance(node.slice, gast.Slice):
                return Info(base.kind, None, None, base.item)
            k = constant(node.slice, NOT_LITERAL)
            if isinstance(k, int) and base.items is not None and -len(base.items) <= k < \
                    len(base.items):
                return base.items[k]
            return base.item or UNKNOWN
        if base.kind != ARRAY:
            return UNKNOWN
        return array(index_ndim(base.ndim, self.index_parts(node.slice)))

    def index_parts(self, index):
        """Each entry of an index: "slice", "new" (None), "ellipsis", "int" (a number) or
        "array" (an array, or not known)."""
        parts = []
        for e in (index.elts if isinstance(index, gast.Tuple) else [index]):
            if isinstance(e, gast.Slice):
                parts.append("slice")
            elif isinstance(e, gast.Constant) and e.value is None:
                parts.append("new")
            elif isinstance(e, gast.Constant) and e.value is Ellipsis:
                parts.append("ellipsis")
            elif isinstance(e, gast.Constant) and isinstance(e.value, int) and \
                    not isinstance(e.value, bool):
                parts.append("int")
            else:
                info = self.of(e)
                parts.append("int" if info == NUMBER else "array")
        return parts

    def _call(self, node):
        fn = self.resolve(node.func)
        args = node.args
        if fn is None and isinstance(node.func, gast.Attribute):
            return self._method(node)
        if fn is None or not args:
            return UNKNOWN
        first = self.ndim(args[0])
        if is_elementwise(fn, len(args)):
            return array(_max(self.ndim(a) for a in args if not isinstance(a, gast.Starred)))
        if fn in REDUCTIONS or fn in FLAT_REDUCTIONS:
            if fn in (np.cumsum, np.cumprod):
                axis = keyword(node, "axis", 1)
                return array(1 if axis is None else first)
            return _reduced(first, keyword(node, "axis", 1), keyword(node, "keepdims"))
        if fn in (np.matmul, np.dot):
            return array(matmul_ndim(first, self.ndim(args[1])) if len(args) == 2 else None)
        if fn in (np.shape,):
            return Info(SHAPE, None, None, NUMBER)
        if fn in (len, np.ndim, np.size, float, int):
            return NUMBER
        if fn in (np.stack, np.concatenate, np.array, np.asarray):
            seq = self.of(args[0])
            if seq is None:
                return None
            if seq.kind == ARRAY:
                return seq if fn in (np.array, np.asarray, np.concatenate) else UNKNOWN
            item = seq.item
            inner = item.ndim if item is not None and item.kind == ARRAY else None
            return array(inner if fn is np.concatenate or inner is None else inner + 1)
        if fn in LAST_AXIS:
            return array(first) if fn is not np.sort or keyword(node, "axis", 1) is not None \
                or first == 1 else UNKNOWN
        if fn is np.ravel and len(args) == 1:
            return array(1)
        if fn is np.reshape and len(args) > 1:
            return array(_shape_length(self, args[1]))
        if fn in (np.transpose, np.swapaxes, np.moveaxis):
            return array(first)
        if fn is np.expand_dims:
            return array(None if first is None else first + 1)
        if fn is np.einsum and isinstance(args[0], gast.Constant):
            spec = args[0].value
            if "..." not in spec:
                return array(len(einsum_output(spec)))
        if fn is np.linalg.norm and len(args) == 1 and not node.keywords:
            return NUMBER
        linalg = {np.linalg.inv: 0, np.linalg.cholesky: 0, np.linalg.det: -2,
                  np.linalg.solve: None}
        if fn in linalg:
            if fn is np.linalg.solve:
                return array(self.ndim(args[1]) if len(args) > 1 else None)
            return array(None if first is None else first + linalg[fn])
        return UNKNOWN

    def _method(self, node):
        owner = self.of(node.func.value)
        if owner is None:
            return None
        if owner.kind != ARRAY:
            return UNKNOWN
        name, ndim = node.func.attr, owner.ndim
        if name in REDUCTION_METHODS:
            return _reduced(ndim, keyword(node, "axis", 0), keyword(node, "keepdims"))
        if name in FLAT_METHODS:
            axis = keyword(node, "axis", 0)
            return array((1 if name.startswith("cum") else 0) if axis is None else
                         (ndim if name.startswith("cum") else _minus(ndim, 1)))
        if name in SAME_METHODS or name == "transpose":
            return owner
        if name in ("ravel", "flatten") and not node.args:
            return array(1)
        if name == "reshape":
            if len(node.args) == 1:
                return array(_shape_length(self, node.args[0]))
            return array(len(node.args))
        return UNKNOWN

    # ----- which names are batched -----------------------------------------------------------

    def reads_batched(self, node) -> bool:
        return any(n in self.batched for n in A.names_in(node, gast.Load))

    def constant_valued(self, value) -> bool:
        """Whether ``value`` is the same in every example although it reads batched values
        (none is, in a batch: Taylor mode's facts say otherwise)."""
        return False

    def shape_only(self, value) -> bool:
        """Whether ``value`` reads of batched values only what is the same in every example:
        their shape, number of dimensions or length."""
        if isinstance(value, gast.Attribute) and value.attr in ("shape", "ndim", "dtype"):
            return (self.of(value.value) or UNKNOWN).kind == ARRAY
        if isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords:
            fn = self.resolve(value.func)
            kind = (self.of(value.args[0]) or UNKNOWN).kind
            # a batched list has as many items in every example: they are appended in step
            return (fn in (np.shape, np.ndim) and kind == ARRAY) or \
                (fn is len and kind in (ARRAY, SEQ, DICT))
        return False

    def _add(self, name):
        if name in self.locals:
            self.batched.add(name)

    def _mark(self, stmts):
        for s in stmts:
            if isinstance(s, gast.Assign):
                target = s.targets[0]
                if isinstance(target, gast.Name):
                    if self.reads_batched(s.value) and not self.shape_only(s.value) and \
                            not self.constant_valued(s.value):
                        self._add(target.id)
                elif self.reads_batched(s.value) or self.reads_batched(target):
                    self._add(batch_scope.base(target))
            elif isinstance(s, (gast.If, gast.While, gast.For)):
                test = s.iter if isinstance(s, gast.For) else s.test
                if self.reads_batched(test) or id(s) in self.looped:
                    self.looped.add(id(s))
                    for name in A.assigned_names([s]) | batch_scope.written_bases(s):
                        self._add(name)
                else:
                    self._mark(s.body)
                    self._mark(s.orelse)
            elif isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
                func = s.value.func
                # a batched value written in by keyword too: d.update(k=v)
                if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and \
                        any(self.reads_batched(a) for a in
                            s.value.args + [k.value for k in s.value.keywords]):
                    self._add(func.value.id)


def _max(values):
    values = list(values)
    return None if any(v is None for v in values) else max(values, default=0)


def _minus(ndim, k):
    return None if ndim is None else ndim - k


def _reduced(ndim, axis, keepdims):
    if constant(keepdims, NOT_LITERAL) is True:
        return array(ndim)
    if keepdims is not None and constant(keepdims, NOT_LITERAL) is not False:
        return UNKNOWN
    removed = axes_count(axis, ndim) if ndim is not None else None
    return array(_minus(ndim, removed) if removed is not None else None)


def _shape_length(facts, shape):
    value = constant(shape, NOT_LITERAL)
    if isinstance(value, int):
        return 1
    if isinstance(value, tuple):
        return len(value)
    if isinstance(shape, gast.Tuple):
        return len(shape.elts)
    info = facts.of(shape)
    return 1 if info == NUMBER else None


def matmul_ndim(a, b):
    if a is None or b is None or a == 0 or b == 0:
        return None
    if a == 1 and b == 1:
        return 0
    if a == 1:
        return b - 1
    if b == 1:
        return a - 1
    return max(a, b)


def index_ndim(ndim, parts):
    """The ``ndim`` of ``x[index]`` for ``x`` of ``ndim`` dimensions and an index of ``parts``
    (``Facts.index_parts``), or None."""
    if ndim is None or "array" in parts:
        return None
    used = sum(p in ("slice", "int") for p in parts)
    if used > ndim or parts.count("ellipsis") > 1:
        return None
    return ndim - parts.count("int") + parts.count("new")


def einsum_output(spec):
    """The output subscripts of an einsum ``spec`` without ``...``."""
    spec = spec.replace(" ", "")
    if "->" in spec:
        return spec.split("->")[1]
    letters = spec.replace(",", "")
    return "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
