"""Stage 8, emit: gast -> ast -> readable Python text, then compiled with a real filename.

Output guarantee: ``unparse`` gives text that parses back to the same tree, with parentheses only
where precedence needs them, bare tuple subscripts (``x[1:2, None]``, which astunparse 1.6.3
prints as the syntax error ``x[(1:2, None)]``), and ``comment(...)`` markers printed as
``# ...`` lines. ``compile_functions`` registers the text in ``linecache`` under a unique
filename, so tracebacks, ``inspect.getsource`` and ``pdb`` show the generated lines, and keeps
for each generated line the user's line it comes from (``origin``), so tracebacks can show that.
"""

from __future__ import annotations

import ast
import io
import itertools
import linecache
import math
import sys
import types
import weakref

import astunparse
import gast

from mindgrad.compiler import astutil as A
from mindgrad.compiler.marks import comment, comment_text, is_comment  # noqa: F401 (comment)

# Python's operator precedence, loosest first.
_PREC = {
    "Lambda": 1, "IfExp": 2, "Or": 3, "And": 4, "Not": 5, "Compare": 6, "BitOr": 7,
    "BitXor": 8, "BitAnd": 9, "LShift": 10, "RShift": 10, "Add": 11, "Sub": 11, "Mult": 12,
    "Div": 12, "FloorDiv": 12, "Mod": 12, "MatMult": 12, "Unary": 13, "Pow": 14, "Atom": 16,
}


def one_line(text: str) -> str:
    """``text`` with every character that is not printable (line and paragraph separators,
    form feed, vertical tab, ``\\r``, NEL, control characters) written as its escape, so no
    reader (``str.splitlines``, Python's tokenizer, an editor) sees a line break in it."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == "\t" else repr(c)[1:-1] for c in text)


def _precedence(node) -> int:
    if isinstance(node, ast.BinOp):
        return _PREC[type(node.op).__name__]
    if isinstance(node, ast.UnaryOp):
        return _PREC["Not"] if isinstance(node.op, ast.Not) else _PREC["Unary"]
    if isinstance(node, ast.BoolOp):
        return _PREC[type(node.op).__name__]
    if isinstance(node, (ast.Compare, ast.IfExp, ast.Lambda)):
        return _PREC[type(node).__name__]
    if isinstance(node, ast.NamedExpr):
        return 0
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex)) \
            and not isinstance(node.value, bool) and (
                math.copysign(1, node.value) < 0 if not isinstance(node.value, complex) else True):
        return _PREC["Unary"]  # printed with a sign (-0.0 too) or as (a+bj)
    return _PREC["Atom"]


def _printable(value) -> bool:
    """Whether a constant prints as Python that evaluates back to it: a plain literal, or what
    the user's own source can hold (a complex, an infinite float, ``...``)."""
    return A.is_plain_literal(value) or type(value) is complex or value is Ellipsis or \
        type(value) is float and not math.isnan(value)


class Unparser(astunparse.Unparser):
    """astunparse's printer, parenthesizing by precedence and printing comment markers.

    ``lines`` maps each printed line (0-based, counting from the first character written) that
    starts a statement to the line number that statement carried (None where it had none)."""

    def __init__(self, tree, file):
        self.lines = {}
        self._newlines = 0
        self._statement_line = (None, False)  # (line number, whether it starts a new run)
        super().__init__(tree, file)

    def dispatch(self, tree):
        if not isinstance(tree, ast.stmt):
            super().dispatch(tree)
            return
        outer = self._statement_line
        # a def, or a comment of the code's own (no line number), starts lines of no user line
        self._statement_line = (getattr(tree, "lineno", None),
                                isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef))
                                or is_comment(tree))
        try:
            super().dispatch(tree)
        finally:
            self._statement_line = outer

    def fill(self, text=""):
        self._newlines += 1 + text.count("\n")
        self.lines[self._newlines - text.count("\n")] = self._statement_line
        super().fill(text)

    def write(self, text):
        self._newlines += str(text).count("\n")
        super().write(text)

    def _child(self, node, needed: int):
        if _precedence(node) < needed:
            self.write("(")
            self.dispatch(node)
            self.write(")")
        else:
            self.dispatch(node)

    def _Expr(self, tree):
        if is_comment(tree):
            self.fill("# " + one_line(comment_text(tree)))
            return
        super()._Expr(tree)

    def _Constant(self, t):
        if t.kind == A.ZERO_KIND:  # the symbolic zero, before it is bound (a stage's dump)
            self.write("zero")
            return
        if not _printable(t.value):
            raise TypeError(f"mindgrad cannot write a {type(t.value).__name__} into generated "
                            "code as text; such values are bound by name")
        super()._Constant(t)

    def _JoinedStr(self, t):
        # astunparse writes an f-string's text unescaped (backslashes, line separators);
        # Python's own printer escapes it
        self.write(ast.unparse(t))

    def _BinOp(self, t):
        prec = _precedence(t)
        if isinstance(t.op, ast.Pow):
            self._child(t.left, prec + 1)
            self.write(" ** ")
            self._child(t.right, _PREC["Unary"])
            return
        self._child(t.left, prec)
        self.write(" " + self.binop[t.op.__class__.__name__] + " ")
        self._child(t.right, prec + 1)

    def _UnaryOp(self, t):
        self.write(self.unop[t.op.__class__.__name__])
        if isinstance(t.op, ast.Not):
            self.write(" ")
        self._child(t.operand, _precedence(t))

    def _BoolOp(self, t):
        prec = _precedence(t)
        word = " and " if isinstance(t.op, ast.And) else " or "
        for i, value in enumerate(t.values):
            if i:
                self.write(word)
            self._child(value, prec + 1)

    def _Compare(self, t):
        self._child(t.left, _PREC["BitOr"])
        for op, right in zip(t.ops, t.comparators):
            self.write(" " + self.cmpops[op.__class__.__name__] + " ")
            self._child(right, _PREC["BitOr"])

    def _IfExp(self, t):
        self._child(t.body, _PREC["Or"])
        self.write(" if ")
        self._child(t.test, _PREC["Or"])
        self.write(" else ")
        self._child(t.orelse, _PREC["IfExp"])

    def _Subscript(self, t):
        self._child(t.value, _PREC["Atom"])
        self.write("[")
        index = t.slice
        if isinstance(index, ast.Tuple) and index.elts:
            for i, elt in enumerate(index.elts):
                if i:
                    self.write(", ")
                self.dispatch(elt)
            if len(index.elts) == 1:
                self.write(",")
        else:
            self.dispatch(index)
        self.write("]")

    def _Attribute(self, t):
        if isinstance(t.value, ast.Constant) and isinstance(t.value.value, int):
            self.write("(")
            self.dispatch(t.value)
            self.write(")")
        else:
            self._child(t.value, _PREC["Atom"])
        self.write(".")
        self.write(t.attr)

    def _Call(self, t):
        self._child(t.func, _PREC["Atom"])
        self.write("(")
        first = True
        for arg in t.args:
            if not first:
                self.write(", ")
            first = False
            self.dispatch(arg)
        for kw in t.keywords:
            if not first:
                self.write(", ")
            first = False
            self.dispatch(kw)
        self.write(")")


def to_ast(node):
    """``gast.gast_to_ast(node)``, node for node the same tree, in a third of its time: a node
    whose ast class has the same fields (a subset of its gast class's) is copied field by
    field, with its location; the others (``arguments``, whose names become ``arg``s, an
    ``except`` handler's name, ...) are converted by gast, each a subtree."""
    cls = node.__class__
    if cls is list:
        return [to_ast(n) for n in node]
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _plan(cls)
    if plan is False:
        return gast.gast_to_ast(node)
    target, fields, located = plan
    new = target.__new__(target)
    old, made = node.__dict__, new.__dict__
    for f in fields:
        value = old.get(f)
        if value.__class__ is list:
            made[f] = [to_ast(v) if isinstance(v, gast.AST) else v for v in value]
        elif isinstance(value, gast.AST):
            made[f] = to_ast(value)
        else:
            made[f] = value
    for a in located:
        if a in old:
            made[a] = old[a]
    return new


_PLANS: dict = {}
# converted by gast: their fields change (arguments' names become arg nodes), or an
# operator's instance is all there is to them
_BY_GAST = frozenset({"arguments", "ExceptHandler", "TypeVar", "TypeVarTuple", "ParamSpec",
                      "alias"})


def _plan(cls):
    """How ``to_ast`` converts a node of the gast class ``cls``: ``(ast class, fields,
    location attributes)``, or False for gast's own conversion."""
    target = getattr(ast, cls.__name__, None)
    if target is None or cls.__name__ in _BY_GAST or \
            not set(target._fields) <= set(cls._fields):
        plan = False
    else:
        plan = (target, target._fields, tuple(a for a in cls._attributes
                                              if a in target._attributes))
    _PLANS[cls] = plan
    return plan


def unparse(tree) -> str:
    """Readable Python for a gast tree (a module, a function or a list of statements)."""
    return unparse_with_lines(tree)[0]


def unparse_with_lines(tree):
    """``(text, lines)``: ``unparse(tree)``, and for each line of the text (0-based) the line
    number carried by the statement it prints (a line of the function the tree was read
    from), or None. A statement the passes wrote without one (a tape push, the rule's
    statements after a ``# grad of:`` comment) takes the last line number before it, up to the
    ``def`` or a comment of the code's own (``# backward sweep``), where lines have none."""
    if isinstance(tree, list):
        tree = gast.Module(body=tree, type_ignores=[])
    node = to_ast(tree)  # locations as the passes left them: none filled in
    out = io.StringIO()
    printer = Unparser(node, out)
    raw = out.getvalue()
    text = raw.lstrip("\n")
    skipped = len(raw) - len(text)
    count = text.count("\n") + 1
    lines, last = [None] * count, None
    for k in range(count):
        line, starts = printer.lines.get(k + skipped, (None, False))
        if line is not None or starts:
            last = line
        lines[k] = last
    return text, lines


_counter = itertools.count(1)


def compile_functions(text: str, names, bindings: dict, globals_: dict, closure: dict, label: str,
                      origins=None):
    """Compile the function definitions in ``text`` and return them by name.

    Free names are looked up, in order, in ``bindings`` (objects the generated code needs),
    ``closure`` (the user function's own closure cells, kept live), then ``globals_`` (the
    user function's module globals, also live). ``text`` is registered in ``linecache``, and
    ``origins`` (for each line of ``text``, the user's ``(filename, line, function name)`` it
    comes from, or None) for ``origin``. The code's lines are numbered as in ``text``, which is
    what ``mindgrad.source`` prints: a traceback, pdb's ``list`` and ``source`` agree.
    """
    filename = f"<mindgrad {label} #{next(_counter)}>"
    # lines end at "\n" only, as for Python's tokenizer (unparse escapes every other break)
    text = text.rstrip("\n") + "\n"
    cell_names = sorted(set(bindings) | set(closure))
    # the functions go inside a factory, never run, whose locals are the names they read from
    # bindings and closure: compiled as the factory's, those are free variables of the
    # functions, filled from cells below. Its own lines take line 1, so that each function's
    # lines keep their numbers in text.
    place = dict(lineno=1, col_offset=0, end_lineno=1, end_col_offset=0)
    store = [ast.Name(id=n, ctx=ast.Store(), **place) for n in cell_names]
    head = [ast.Assign(targets=store, value=ast.Constant(value=None, **place), **place)]
    back = ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Load(), **place) for n in names],
                     ctx=ast.Load(), **place)
    factory = ast.FunctionDef(
        name="__mindgrad_bindings__", body=head[:bool(cell_names)] + ast.parse(text).body
        + [ast.Return(value=back, **place)],
        args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                           kw_defaults=[], kwarg=None, defaults=[]),
        decorator_list=[], returns=None, **_TYPE_PARAMS, **place)
    code = compile(ast.Module(body=[factory], type_ignores=[]), filename, "exec")
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    functions = {}
    for fcode in factory_code.co_consts:
        if not isinstance(fcode, types.CodeType) or fcode.co_name not in names:
            continue
        cells = []
        for free in fcode.co_freevars:
            if free in bindings:
                cells.append(types.CellType(bindings[free]))
            elif free in closure:
                cells.append(closure[free])
            else:
                cells.append(types.CellType())
        functions[fcode.co_name] = (fcode, cells)
    made = {}
    for name, (fcode, cells) in functions.items():
        if sys.version_info >= (3, 11):  # named as written, not __mindgrad_bindings__.<locals>.
            fcode = fcode.replace(co_qualname=name)
        made[name] = types.FunctionType(fcode, globals_, name, None, tuple(cells))
        made[name].__qualname__ = name
    # generated functions that call each other (a gradient calling its helpers, recursion)
    for fn in made.values():
        for free, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            if free in made:
                cell.cell_contents = made[free]
    if origins is not None:  # one per line of text
        origins = list(origins)[:text.count("\n")]
    keep_lines(filename, text, [fn.__code__ for fn in made.values()], origins)
    return made, filename


# a function definition's type parameters, on Python 3.12+
_TYPE_PARAMS = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}


def compiled_function(text: str, name: str, namespace: dict):
    """The function ``name`` defined by ``text`` (mindgrad's own), run in ``namespace``, with
    its source registered for reading (``keep_lines``)."""
    filename = f"<mindgrad {name} #{next(_counter)}>"
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 (the code is ours)
    keep_lines(filename, text, [namespace[name].__code__])
    return namespace[name]


def keep_lines(filename: str, text: str, codes, origins=None):
    """Register ``text`` in ``linecache`` under ``filename`` while any of ``codes`` (the code
    objects compiled from it) lives: tracebacks and ``inspect.getsource`` read it there.
    ``origins`` (one entry per line of ``text``, see ``compile_functions``) is kept as long."""
    lines = [line + "\n" for line in text.rstrip("\n").split("\n")]  # as the tokenizer does
    linecache.cache[filename] = (len(text), None, lines, filename)
    if origins is not None:
        _origins[filename] = origins
    alive = [len(codes)]

    def release():
        alive[0] -= 1
        if not alive[0]:
            linecache.cache.pop(filename, None)
            _origins.pop(filename, None)

    for code in codes:
        weakref.finalize(code, release)


# generated filename -> for each of its lines (0-based), the user's (filename, line, function
# name) it comes from, or None
_origins: dict = {}


def is_generated(filename: str) -> bool:
    """Whether ``filename`` names code mindgrad generated (a gradient, a tangent, a wrapper)."""
    return filename.startswith("<mindgrad ")


def origin(filename: str, lineno: int):
    """The user's ``(filename, line, function name)`` that line ``lineno`` of the generated
    file ``filename`` comes from, followed through generated code differentiated again (grad
    of grad) to the user's own file; None for a line of mindgrad's own making."""
    for _ in range(16):  # a chain of generated files is as deep as the nesting of gradients
        lines = _origins.get(filename)
        if lines is None or not 0 < lineno <= len(lines) or lines[lineno - 1] is None:
            return None
        filename, lineno, name = lines[lineno - 1]
        if not is_generated(filename):
            return filename, lineno, name
    return None
