"""Stage 1, source: read a function's source and parse it with gast.

Output guarantee: a ``Source`` whose ``tree`` is a single ``gast.FunctionDef`` without
decorators (a lambda becomes ``def <lambda>(...): return <expr>``), with line numbers that map
back to the user's file through ``line_of``; and ``resolve(name)`` giving the object a free name
of the function refers to (closure cell, global, or builtin).
"""

from __future__ import annotations

import builtins
import inspect
import linecache
import textwrap

import gast
import numpy as np

from mindgrad.errors import NoSourceError
from mindgrad.transform import depth

MISSING = _MISSING = object()


class Source:
    """A user function's parsed source, with where it came from."""

    def __init__(self, fn, tree, filename, first_line, lines):
        self.fn = fn
        self.tree = tree
        self.filename = filename
        self.first_line = first_line
        self.lines = lines
        self.globals = getattr(fn, "__globals__", {})
        code = fn.__code__
        cells = fn.__closure__ or ()
        self.closure = dict(zip(code.co_freevars, cells))
        self.bound = {}  # parameter name -> the object it is known to be (``self`` of a Cell)
        self.aliases = {}  # local name -> the static expression it is assigned once (f = self.b)
        self.constants = {}
        # expressions of functions used as values, not called (``jvp(f, ...)``, ``grad(f)``):
        # rebinding them must build fresh code too
        self.static_arguments = []  # name -> object built while transforming (grad(g) in the body)

    @property
    def name(self) -> str:
        return self.tree.name

    def line_of(self, node) -> int:
        return self.first_line + getattr(node, "lineno", 1) - 1

    def text_of(self, lineno: int) -> str:
        return linecache.getline(self.filename, lineno) or ""

    def resolve(self, name: str, default=_MISSING):
        """The object ``name`` refers to in the function's scope (closure, globals, builtins)."""
        if name in self.constants:
            return self.constants[name]
        if name in self.closure:
            try:
                return self.closure[name].cell_contents
            except ValueError:  # an empty cell: the closure variable is not assigned yet
                return default
        if name in self.globals:
            return self.globals[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        return default


_DYNAMIC = (np.ndarray, np.generic, int, float, complex, bool, str, bytes, list, tuple, dict)


def static_value(src, node, local_names):
    """The object an attribute chain (or name) denotes before the function runs, or _MISSING.

    A chain is static when its root is a module-level name, a closure variable or a bound
    parameter (``self`` of a Cell), and it only looks up attributes of modules, classes and
    objects, never of values such as arrays (``np.pi`` and ``self.w`` are static; ``x.T`` and
    ``self.w.T`` are not).
    """
    if isinstance(node, gast.Name):
        if node.id in src.bound:
            return src.bound[node.id]
        if node.id in src.aliases:
            return static_value(src, src.aliases[node.id], local_names)
        if node.id in local_names:
            return _MISSING
        return src.resolve(node.id, _MISSING)
    if isinstance(node, gast.Attribute):
        base = static_value(src, node.value, local_names)
        if base is _MISSING or isinstance(base, _DYNAMIC):
            return _MISSING
        return getattr(base, node.attr, _MISSING)
    if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Constant) and \
            isinstance(node.slice.value, int):
        # an element of a list of Cells (self.layers[0]), never of an array
        base = static_value(src, node.value, local_names)
        if isinstance(base, (list, tuple)) or _is_cell_list(base):
            try:
                return base[node.slice.value]
            except IndexError:
                return _MISSING
    return _MISSING


def _is_cell_list(obj) -> bool:
    from mindgrad.nn import CellList

    return isinstance(obj, CellList)


def static_sequence(src, node, local_names):
    """The items of a list/tuple of Cells or functions that ``node`` denotes statically (so a
    loop over it can be unrolled), or None."""
    seq = static_value(src, node, local_names)
    if not (isinstance(seq, (list, tuple)) or _is_cell_list(seq)) or not 0 < len(seq) <= 64:
        return None
    items = list(seq)
    if any(isinstance(item, _DYNAMIC) for item in items) or not all(callable(i) for i in items):
        return None
    return items


def dotted(node):
    """``self.block.w`` (``self.layers.0.w``) for an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, (gast.Attribute, gast.Subscript)):
        if isinstance(node, gast.Subscript):
            if not isinstance(node.slice, gast.Constant):
                return None
            parts.append(str(node.slice.value))
        else:
            parts.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name):
        return None
    return ".".join([node.id] + parts[::-1])


def get_source(fn) -> Source:
    """Parse ``fn``'s source. Works for module functions, methods, lambdas and notebook cells."""
    fn = inspect.unwrap(fn)
    fn = getattr(fn, "__func__", fn)
    if not inspect.isfunction(fn):
        raise NoSourceError(f"{fn!r} is not a Python function, so mindgrad cannot read its source")
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        raise NoSourceError(
            f"{fn.__qualname__} has no source that mindgrad can read. Functions typed at a plain "
            "`python` prompt keep no source: define it in a file or a notebook cell, or register "
            "a rule for it with @mindgrad.adjoint") from None
    filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    source = textwrap.dedent("".join(lines))
    if fn.__name__ == "<lambda>":
        tree = _lambda_tree(fn, source)
    else:
        module = depth.parse(source)
        tree = module.body[0]
        if not isinstance(tree, gast.FunctionDef):
            raise NoSourceError(f"the source found for {fn.__qualname__} is not a def")
        tree.decorator_list = []
    # line numbers count from the def line, even when decorators came first
    first_line = first_line + (tree.lineno - 1 if fn.__name__ != "<lambda>" else 0)
    _shift_lines(tree, -(tree.lineno - 1) if fn.__name__ != "<lambda>" else 0)
    src = Source(fn, tree, filename, first_line, lines)
    depth.split(src)
    return src


def _shift_lines(tree, delta):
    if not delta:
        return
    for node in gast.walk(tree):
        if hasattr(node, "lineno") and node.lineno is not None:
            node.lineno += delta


def _lambda_tree(fn, source):
    """The lambda's own node, out of the (possibly multi-lambda) source line inspect returns."""
    text = source.strip()
    module = None
    for candidate in (text, text.rstrip(",;)"), "(" + text + ")", text.split("=", 1)[-1].strip()):
        try:
            module = depth.parse(candidate)
            break
        except SyntaxError:
            continue
    if module is None:
        raise NoSourceError(f"cannot parse the source line of a lambda: {text!r}")
    lambdas = [n for n in gast.walk(module) if isinstance(n, gast.Lambda)]
    argnames = list(fn.__code__.co_varnames[: fn.__code__.co_argcount])
    lambdas = [n for n in lambdas if [a.id for a in n.args.args] == argnames] or lambdas
    if len(lambdas) != 1:
        raise NoSourceError(
            f"cannot tell which of the {len(lambdas)} lambdas on this line to differentiate: "
            f"{text!r}; give it a name with def")
    lam = lambdas[0]
    ret = gast.Return(value=lam.body)
    gast.copy_location(ret, lam)
    fdef = gast.FunctionDef(name="lambda_", args=lam.args, body=[ret], decorator_list=[],
                            returns=None, type_comment=None, type_params=[])
    gast.copy_location(fdef, lam)
    return fdef
