"""Small constructors and queries on gast trees, shared by the stages."""

from __future__ import annotations

import ast
import keyword
import math

import gast

from mindgrad.compiler.marks import KEPT_BY_CLONE


def load(name: str) -> gast.Name:
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def store(name: str) -> gast.Name:
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def const(value) -> gast.Constant:
    return gast.Constant(value=value, kind=None)


#: the ``kind`` of the constant that stands for the symbolic zero (``runtime.Zero``) while the
#: code is built: a constant 0 to the optimize stage's static zero propagation and constant
#: folding, written as a load of ``runtime.zero`` once the functions are assembled
ZERO_KIND = "zero"


def zero() -> gast.Constant:
    """The symbolic zero gradient or tangent (``d_x = zero`` in the code compiled)."""
    return gast.Constant(value=0, kind=ZERO_KIND)


def is_zero_mark(node) -> bool:
    return node.__class__ is gast.Constant and node.kind == ZERO_KIND


def load_zeros(tree, bind):
    """Each symbolic zero of ``tree`` (a node or a list of them) a load of the name ``bind()``
    gives ``runtime.zero`` (called once, at the first zero)."""
    name, Constant, table = None, gast.Constant, _WALKED
    for node in walk(tree):  # its fields are replaced before walk reads them
        cls = node.__class__
        if cls is Constant or cls is gast.Name:
            continue
        fields = table.get(cls) or _fields(cls, table, _NOT_NODES)
        for field in fields:
            value = getattr(node, field, None)
            if value.__class__ is list:
                for i, item in enumerate(value):
                    if item.__class__ is Constant and item.kind == ZERO_KIND:
                        name = name or bind()
                        value[i] = load(name)
            elif value.__class__ is Constant and value.kind == ZERO_KIND:
                name = name or bind()
                setattr(node, field, load(name))


def is_identifier(text) -> bool:
    """Whether ``text`` may be written into generated code as a name."""
    return isinstance(text, str) and text.isidentifier() and not keyword.iskeyword(text)


def is_plain_literal(value) -> bool:
    """Whether ``value`` may stand in generated code as a constant: None, a bool, an int short
    enough to print, a finite float, a str or bytes, of exactly these types. Anything else (nan,
    inf, a NumPy scalar, a subclass, any other object) reaches generated code as a bound name."""
    kind = type(value)
    if kind is float:
        return math.isfinite(value)
    if kind is int:
        return value.bit_length() <= 4096
    return kind in (type(None), bool, str, bytes)


def assign(target, value, like=None) -> gast.Assign:
    if isinstance(target, str):
        target = store(target)
    node = gast.Assign(targets=[target], value=value, type_comment=None)
    return located(node, like)


def expr_stmt(value, like=None) -> gast.Expr:
    return located(gast.Expr(value=value), like)


def call(func, *args, **kwargs) -> gast.Call:
    if isinstance(func, str):
        func = dotted(func)
    keywords = [gast.keyword(arg=k, value=v) for k, v in kwargs.items()]
    return gast.Call(func=func, args=list(args), keywords=keywords)


def dotted(path: str):
    """``a.b.c`` as a Name/Attribute chain."""
    parts = path.split(".")
    node = load(parts[0])
    for part in parts[1:]:
        node = gast.Attribute(value=node, attr=part, ctx=gast.Load())
    return node


def attr(value, name: str) -> gast.Attribute:
    return gast.Attribute(value=value, attr=name, ctx=gast.Load())


def subscript(value, index, ctx=None) -> gast.Subscript:
    return gast.Subscript(value=value, slice=index, ctx=ctx or gast.Load())


def tuple_(elts, ctx=None) -> gast.Tuple:
    return gast.Tuple(elts=list(elts), ctx=ctx or gast.Load())


def binop(left, op, right) -> gast.BinOp:
    return gast.BinOp(left=left, op=op, right=right)


def if_(test, body, orelse=(), like=None) -> gast.If:
    return located(gast.If(test=test, body=list(body), orelse=list(orelse)), like)


def located(node, like):
    if like is not None:
        node.lineno = getattr(like, "lineno", None)
        node.col_offset = getattr(like, "col_offset", 0)
    return node


def is_atom(node) -> bool:
    return isinstance(node, (gast.Name, gast.Constant))


# The fields of each node class that may hold nodes: the walks below skip the rest (a Name's
# id and its ctx, a Constant's kind), and names_in also skips operators, which hold no name.
_NOT_NODES = frozenset({"ctx", "id", "attr", "kind", "type_comment"})
_NOT_NAMES = _NOT_NODES | {"op", "ops"}
_WALKED = {}
_NAMED = {}


def _fields(cls, table, skipped):
    fields = table[cls] = tuple(f for f in cls._fields if f not in skipped)
    return fields


def walk(node):
    """Every node under ``node`` (a node or a list), depth first, but the ``ctx`` of names,
    attributes and subscripts (test ``.ctx`` of the node instead); leaner than ``gast.walk``."""
    stack = list(node) if isinstance(node, list) else [node]
    AST, table = gast.AST, _WALKED
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        n = pop()
        yield n
        cls = n.__class__
        fields = table.get(cls)
        if fields is None:
            fields = _fields(cls, table, _NOT_NODES)
        for field in fields:
            value = getattr(n, field, None)
            if value is None:
                continue
            if value.__class__ is list:
                extend([v for v in value if isinstance(v, AST)])
            elif isinstance(value, AST):
                push(value)


def names_in(node, ctx=None) -> set:
    """Names used in ``node`` (a node or a list), optionally only those loaded or stored."""
    Name, AST, found, table = gast.Name, gast.AST, set(), _NAMED
    stack = list(node) if node.__class__ is list else [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        n = pop()
        cls = n.__class__
        if cls is Name:
            if ctx is None or isinstance(n.ctx, ctx):
                found.add(n.id)
            continue
        fields = table.get(cls)
        if fields is None:
            fields = _fields(cls, table, _NOT_NAMES)
        for field in fields:
            value = getattr(n, field, None)
            if value is None:
                continue
            if value.__class__ is list:
                extend([v for v in value if isinstance(v, AST)])
            elif isinstance(value, AST):
                push(value)
    return found


class Transformer(gast.NodeTransformer):
    """``gast.NodeTransformer``, with its walk over the fields that may hold nodes (``walk``'s
    table: not a name's ``ctx``, which a subclass may then not visit) and its ``visit_``
    methods found once per class: the same rewrite, with less work per node, for the
    transformers run once per statement of the code built."""

    _visitors: dict = {}  # node class -> the visit_ method, one table per subclass

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._visitors = {}  # held by the class: a class made in a function takes its own

    def visit(self, node):
        method = self._visitors.get(node.__class__)
        if method is None:
            cls = self.__class__
            method = getattr(cls, "visit_" + node.__class__.__name__, cls.generic_visit)
            if method is getattr(ast.NodeVisitor, "visit_Constant", None):
                method = cls.generic_visit  # what it calls, for the visit_Num of old
            cls._visitors[node.__class__] = method
        return method(self, node)

    def generic_visit(self, node):
        cls, AST = node.__class__, gast.AST
        for field in _WALKED.get(cls) or _fields(cls, _WALKED, _NOT_NODES):
            old = getattr(node, field, None)
            if old.__class__ is list:
                new = []
                for value in old:
                    if isinstance(value, AST):
                        value = self.visit(value)
                        if value is None:
                            continue
                        if not isinstance(value, AST):
                            new.extend(value)
                            continue
                    new.append(value)
                old[:] = new
            elif isinstance(old, AST):
                value = self.visit(old)
                if value is None:
                    delattr(node, field)
                else:
                    setattr(node, field, value)
        return node


def assigned_names(stmts) -> set:
    """Names bound by the statements (assignment and loop targets), nested blocks included."""
    return names_in(stmts, gast.Store)


def renamed(node, renames: dict):
    """A copy of ``node`` with the names in ``renames`` replaced."""
    node = clone(node)
    for sub in walk(node):
        if isinstance(sub, gast.Name) and sub.id in renames:
            sub.id = renames[sub.id]
    return node


def clone(node):
    """A deep copy of a gast tree (or list of trees), locations and marks (``marks.py``) kept;
    much faster than ``copy.deepcopy``. Contexts (``Load()``) are shared, not copied."""
    cls = node.__class__
    if cls is list:
        return [clone(n) for n in node]
    if not isinstance(node, gast.AST) or isinstance(node, gast.expr_context):
        return node
    old = node.__dict__
    new = cls.__new__(cls)
    fields = new.__dict__
    for attr in KEPT_BY_CLONE:
        if attr in old:
            fields[attr] = old[attr]
    for f in cls._fields:
        value = old.get(f)
        fields[f] = value if value is None or value.__class__ in _LEAVES else clone(value)
    return new


# field values kept as they are: numbers, strings, and the contexts (shared, as clone says)
_LEAVES = frozenset({str, int, float, bool, complex, bytes, gast.Load, gast.Store, gast.Del})
