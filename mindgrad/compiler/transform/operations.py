"""One classification of what a normalized assignment ``name = value`` computes, shared by the
transformations: reverse mode writes an adjoint for each kind of operation, forward mode a
tangent, and a new transformation (batching, Taylor series) writes its own without touching
theirs.

``classify(value, resolve, containers, tracked)`` gives one record, and a transformation's
``OperationWriter`` writes its code for it: ``writer.write(op, ...)`` calls the writer's
method of that kind (``read``, ``concat``, ... below), and a writer lacking one cannot be made.

    Read          name = x, or an attribute the transformation tracks as a value (a weight)
    Concat        x + y of sequences the code shows
    Repeat        x * n of a sequence the code shows
    Operator      a differentiable operator (+, *, @, unary -, ...): its function in ``operator``
    Constant      a piecewise-constant operator (//, &, |, ...): no derivative
    IndexRead     x[i]
    Display       a tuple, list or dict display
    AttrRule      x.T, z.real: the rule of the attribute
    ConstantMethod   x.argmax(), ...: a method whose result is a constant
    ListPop       xs.pop()
    TangentPop    tangent_pop(t_xs): a tangent list popped in step, in forward-mode code
    MethodCall    x.sum(), ...: the rule of the method
    UnknownFunction  a call of a function the code does not show (a local variable)
    ConstantCall  a call of a function without derivative (np.argmax, ...)
    FunctionCall  a call with a rule: the function, or the class of a callable object
    Unsupported   any other expression

A call of the user's own code (a function, method or Cell followed into) is found before this,
by each transformation's ``callee_of``: whether a function has a rule of its own depends on the
transformation's table of rules.
"""

from __future__ import annotations

import abc
import dataclasses
import operator

import gast

from mindgrad import rules, runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler.facts import activity

BINOPS = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
          gast.Div: operator.truediv, gast.Pow: operator.pow, gast.MatMult: operator.matmul,
          gast.Mod: operator.mod, gast.FloorDiv: operator.floordiv,
          gast.BitAnd: operator.and_, gast.BitOr: operator.or_, gast.BitXor: operator.xor,
          gast.LShift: operator.lshift, gast.RShift: operator.rshift}
UNARYOPS = {gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Invert: operator.invert}


class Operation:
    """A classified value; each kind is a dataclass below, written by the writer's method
    named ``kind``."""

    kind = None

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        cls.kind = "".join("_" + c.lower() if c.isupper() else c for c in cls.__name__)[1:]


@dataclasses.dataclass
class Read(Operation):
    value: gast.expr


@dataclasses.dataclass
class Concat(Operation):
    left: gast.expr
    right: gast.expr


@dataclasses.dataclass
class Repeat(Operation):
    sequence: gast.expr
    value: gast.BinOp


@dataclasses.dataclass
class Operator(Operation):
    fn: object  # operator.add, operator.neg, ...
    args: list


@dataclasses.dataclass
class Constant(Operation):
    op: gast.AST  # the operator node: BitOr merges flags, which reverse mode checks


@dataclasses.dataclass
class IndexRead(Operation):
    base: gast.expr
    index: gast.expr


@dataclasses.dataclass
class Display(Operation):
    value: gast.expr  # a gast.Tuple, gast.List or gast.Dict


@dataclasses.dataclass
class AttrRule(Operation):
    attr: str
    owner: gast.expr


@dataclasses.dataclass
class ConstantMethod(Operation):
    func: gast.Attribute


@dataclasses.dataclass
class ListPop(Operation):
    func: gast.Attribute
    receiver: gast.expr


@dataclasses.dataclass
class TangentPop(Operation):
    func: gast.expr
    receiver: gast.Name


@dataclasses.dataclass
class MethodCall(Operation):
    func: gast.Attribute
    method: str
    args: list  # the receiver first
    keywords: dict


@dataclasses.dataclass
class UnknownFunction(Operation):
    func: gast.expr


@dataclasses.dataclass
class ConstantCall(Operation):
    target: object


@dataclasses.dataclass
class FunctionCall(Operation):
    func: gast.expr
    target: object
    args: list
    keywords: dict

    def rule(self, lookup):
        """``(rule, key, args)`` from the table ``lookup`` (``rules.lookup`` or
        ``rules.lookup_tangent``): the function's own rule, or else the rule of the class of a
        callable object (``ops.MatMul()(a, b)``), which takes the instance first."""
        rule = lookup(self.target)
        if rule is None and not isinstance(self.target, type):
            kind = type(self.target)
            if lookup(kind) is not None:
                return lookup(kind), kind, [A.clone(self.func)] + list(self.args)
        return rule, self.target, list(self.args)


@dataclasses.dataclass
class Unsupported(Operation):
    value: gast.AST


def classify(value, resolve, containers, tracked) -> Operation:
    """The operation of ``name = value``. ``containers`` holds the keys of values the code shows
    to be sequences; ``tracked`` the attributes (``self.w``) the transformation follows as
    values of their own."""
    if isinstance(value, gast.Name) or isinstance(value, gast.Attribute) and \
            resolve.key(value) in tracked:
        return Read(value)
    if isinstance(value, gast.BinOp):
        shows = resolve.key(value.left) in containers or resolve.key(value.right) in containers
        if isinstance(value.op, gast.Add) and shows:
            return Concat(value.left, value.right)
        if isinstance(value.op, gast.Mult) and shows:
            left = resolve.key(value.left) in containers
            return Repeat(value.left if left else value.right, value)
        fn = BINOPS[type(value.op)]
        if rules.is_nondifferentiable(fn):  # //, and the integer and boolean operators
            return Constant(value.op)
        return Operator(fn, [value.left, value.right])
    if isinstance(value, gast.UnaryOp):
        fn = UNARYOPS.get(type(value.op))
        if rules.is_nondifferentiable(fn):
            return Constant(value.op)
        return Operator(fn, [value.operand])
    if isinstance(value, gast.Subscript):
        return IndexRead(value.value, value.slice)
    if isinstance(value, (gast.Tuple, gast.List, gast.Dict)):
        return Display(value)
    if isinstance(value, gast.Attribute):
        return AttrRule(value.attr, value.value)
    if isinstance(value, gast.Call):
        return _classify_call(value, resolve)
    return Unsupported(value)


def _classify_call(call, resolve) -> Operation:
    func = call.func
    keywords = {k.arg: k.value for k in call.keywords}
    receiver = resolve.receiver(func)
    if receiver is not None:
        if func.attr in activity.NONDIFF_METHODS:
            return ConstantMethod(func)
        if func.attr == "pop" and not call.args and not call.keywords:
            return ListPop(func, receiver)
        return MethodCall(func, func.attr, [receiver] + list(call.args), keywords)
    target = resolve(func)
    if target is None:
        return UnknownFunction(func)
    if is_tangent_pop(call, target):
        return TangentPop(func, call.args[0])
    if rules.is_nondifferentiable(target):
        return ConstantCall(target)
    return FunctionCall(func, target, list(call.args), keywords)


def starred_call(call, resolve) -> bool:
    """Whether ``call`` is ``call_starred(f, stars, ...)``: ``f(a, *seq)`` with ``seq`` a
    sequence built while the code runs (normalize_calls.py)."""
    return resolve(call.func) is runtime.call_starred


def dynamic_parts(call, resolve):
    """``(function, stars, call)`` of a call the run-time dispatcher differentiates:
    ``call_starred(f, stars, *args)`` opened into ``f``, ``stars`` and the call ``f(*args)``
    (the sequences at ``stars`` written whole); another call as it is, with no stars."""
    if not starred_call(call, resolve):
        return call.func, (), call
    stars = tuple(e.value for e in call.args[1].elts)
    return call.args[0], stars, gast.Call(func=call.args[0], args=list(call.args[2:]),
                                          keywords=list(call.keywords))


def is_tangent_pop(call, target) -> bool:
    """Whether ``call`` is ``tangent_pop(t_xs)`` of a name, which pops ``t_xs`` in place."""
    return target is runtime.tangent_pop and len(call.args) == 1 and not call.keywords and \
        isinstance(call.args[0], gast.Name)


KINDS = tuple(cls.kind for cls in Operation.__subclasses__())


class OperationWriter(abc.ABC):
    """What a transformation writes for each kind of operation: one method per record of
    ``classify``, each taking the record and the transformation's own arguments (reverse
    mode: the statement and the assigned name). ``write`` dispatches; a subclass lacking a
    method is abstract, so a new kind of record cannot be left unwritten by a transformation.
    """

    def write(self, op: Operation, *args):
        return getattr(self, op.kind)(op, *args)

    @abc.abstractmethod
    def read(self, op: Read, *args): ...

    @abc.abstractmethod
    def concat(self, op: Concat, *args): ...

    @abc.abstractmethod
    def repeat(self, op: Repeat, *args): ...

    @abc.abstractmethod
    def operator(self, op: Operator, *args): ...

    @abc.abstractmethod
    def constant(self, op: Constant, *args): ...

    @abc.abstractmethod
    def index_read(self, op: IndexRead, *args): ...

    @abc.abstractmethod
    def display(self, op: Display, *args): ...

    @abc.abstractmethod
    def attr_rule(self, op: AttrRule, *args): ...

    @abc.abstractmethod
    def constant_method(self, op: ConstantMethod, *args): ...

    @abc.abstractmethod
    def list_pop(self, op: ListPop, *args): ...

    @abc.abstractmethod
    def tangent_pop(self, op: TangentPop, *args): ...

    @abc.abstractmethod
    def method_call(self, op: MethodCall, *args): ...

    @abc.abstractmethod
    def unknown_function(self, op: UnknownFunction, *args): ...

    @abc.abstractmethod
    def constant_call(self, op: ConstantCall, *args): ...

    @abc.abstractmethod
    def function_call(self, op: FunctionCall, *args): ...

    @abc.abstractmethod
    def unsupported(self, op: Unsupported, *args): ...
