"""Stage 1, source: read a function's source and parse it with gast.

Output guarantee: a ``Source`` whose ``tree`` is a single ``gast.FunctionDef`` without
decorators (a lambda becomes ``def <lambda>(...): return <expr>``), with line numbers that map
back to the user's file through ``line_of``; and ``resolve(name)`` giving the object a free name
of the function refers to (closure cell, global, or builtin).

The function read is the one the user calls: a decorator's wrapper is differentiated as
written, reaching the wrapped function through its closure. ``specialise`` gives a function
with ``*args``/``**kw`` parameters fixed parameters for one call shape. ``foreign_library``
tells another library's code, which is not read (a call of it needs a rule), from the user's.
Two modules do parts of the reading: ``source_lambdas`` finds a lambda's own node in its file,
``source_text`` checks that the text read compiles to the function's code and mangles the
private names of a class body as Python does.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import linecache
import os
import re
import sys
import textwrap
import types
import weakref

import gast
import numpy as np

from mindgrad.compiler import astutil as A
from mindgrad.compiler import objects
from mindgrad.compiler.front import depth
from mindgrad.compiler.front.source_lambdas import lambda_tree
from mindgrad.compiler.front.source_text import (
    check_matches,
    generated,
    mangle,
    mismatch,
    private_class,
    shift_lines,
)
from mindgrad.errors import NoSourceError, UnsupportedSyntaxError
from mindgrad.runtime.origin import origin

MISSING = _MISSING = object()


class Source:
    """A user function's parsed source, with where it came from, and what the front stages
    learned of its scope. No stage changes the ``Source`` it is given: ``specialise``,
    ``read_source`` (the object bound to ``self``) and ``normalize`` each return their own
    (``derive``), holding the facts they found:

    - ``bound``: parameter name -> the object it is known to be (``self`` of a Cell);
    - ``packed``, ``keyword_params``, ``defaults``: what ``specialise`` made of ``*args`` and
      ``**kw`` (see there);
    - ``aliases``: local name -> the static expression it is assigned once (``f = self.b``);
    - ``constants``: name -> an object built while normalizing (``grad(g)`` in the body);
    - ``static_arguments``: expressions of functions used as values, not called
      (``jvp(f, ...)``, ``grad(f)``): rebinding them must build fresh code too;
    - ``unrolled``: (expression, items) of the lists of Cells or functions a loop was unrolled
      over: appending to or replacing an element of one must build fresh code too.
    """

    _FACTS = ("bound", "aliases", "constants", "static_arguments", "packed", "keyword_params",
              "unrolled")

    def __init__(self, fn, tree, filename, first_line, lines, lines_start=None):
        self.fn = fn
        self.tree = tree
        self.filename = filename
        self.first_line = first_line
        self.lines = lines
        self.lines_start = first_line if lines_start is None else lines_start  # of lines[0]
        self.globals = getattr(fn, "__globals__", {})
        code = fn.__code__
        cells = fn.__closure__ or ()
        self.closure = dict(zip(code.co_freevars, cells))
        self.bound = {}
        self.aliases = {}
        self.constants = {}
        self.static_arguments = []
        self.defaults = fn.__defaults__  # the defaults of the positional parameters of ``tree``
        self.packed = {}
        self.keyword_params = {}
        self.unrolled = []

    def derive(self, **changes) -> Source:
        """A copy holding ``changes``, with containers of facts of its own: what a stage
        adds to them is its result, and the ``Source`` it was given stays as it was."""
        new = object.__new__(Source)
        new.__dict__.update(self.__dict__)
        for name in Source._FACTS:
            setattr(new, name, type(getattr(self, name))(getattr(self, name)))
        for name, value in changes.items():
            setattr(new, name, value)
        return new

    @property
    def name(self) -> str:
        return self.tree.name

    @property
    def is_mindgrad_code(self) -> bool:
        """Whether this is generated code or one of mindgrad's helpers (grad of grad)."""
        return generated(self.filename) or origin(self.fn).is_mindgrad

    def line_of(self, node) -> int:
        return self.first_line + getattr(node, "lineno", 1) - 1

    def text_of(self, lineno: int) -> str:
        """The text of the user's line ``lineno`` as it was read, not as the file is now."""
        index = lineno - self.lines_start
        if 0 <= index < len(self.lines):
            return self.lines[index]
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
    return objects.is_module_list(obj)


def static_sequence(src, node, local_names):
    """The items of a list/tuple of Cells or functions that ``node`` denotes statically (so a
    loop over it can be unrolled), or None. A loop unrolled over them records them in its
    ``Source``'s ``unrolled``."""
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


# id(code object) -> (weak reference to it, lines, first line, filename): the text a function
# was first differentiated from, kept while its code lives. A later build (new argument kinds)
# reads the same text, even when the file was edited since without a reload.
_READ: dict = {}


def _read(fn):
    """``(lines, first_line, filename)`` of ``fn``'s source, read once per code object."""
    code = fn.__code__
    held = _READ.get(id(code))
    if held is not None and held[0]() is code:
        return held[1:]
    held = _registered_lines(code)
    if held is not None:
        lines, first_line = held
        filename = code.co_filename
    else:
        try:
            # of the code object: inspect would unwrap a decorator's wrapper to the wrapped
            # function
            lines, first_line = inspect.getsourcelines(code)
        except (OSError, TypeError):
            raise NoSourceError(_no_source(fn)) from None
        filename = inspect.getsourcefile(fn) or code.co_filename
    key = id(code)
    _READ[key] = (weakref.ref(code, lambda _, key=key: _READ.pop(key, None)),
                  lines, first_line, filename)
    return lines, first_line, filename


_DEF_OR_LAMBDA = re.compile(r"^(\s*def\s)|(\s*async\s+def\s)|(.*(?<!\w)lambda(:|\s))|^(\s*@)")


def _registered_lines(code):
    """``inspect.getsourcelines(code)`` for a file that is not on disk but registered in
    ``linecache`` (a notebook cell, code mindgrad generated, an ``exec`` that registered its
    text), as inspect finds them, without ``inspect.getmodule``'s search of every loaded
    module for such a file, which it repeats for each function (slow where many modules are
    loaded). None elsewhere: inspect reads those."""
    file = code.co_filename
    if file not in linecache.cache or os.path.exists(file):
        return None
    linecache.checkcache(file)
    lines = linecache.getlines(file)
    lnum = code.co_firstlineno - 1
    if not lines or lnum >= len(lines):
        return None
    if sys.version_info < (3, 13):  # inspect looks back to the def or lambda line
        while lnum > 0 and not _DEF_OR_LAMBDA.match(lines[lnum]):
            lnum -= 1
    return inspect.getblock(lines[lnum:]), lnum + 1


def _no_source(fn) -> str:
    """Why ``fn`` has no source to read, and where functions keep theirs."""
    where = fn.__code__.co_filename
    if where == "<stdin>":
        how = "it was typed at a plain `python` prompt, which keeps no source before Python 3.13"
    elif where == "<string>":
        how = ("it was defined by exec() of a string (or `python -c` before Python 3.13), which "
               "keeps no source")
    else:
        how = f"its source ({where}) cannot be read"
    return (f"{fn.__qualname__} has no source that mindgrad can read: {how}. Define it in a "
            "file, a notebook cell, IPython or Python 3.13's prompt, or register a rule for it "
            "with @mindgrad.adjoint")


# function -> (its code, then the arguments of Source: the tree as read and split, kept
# unchanged, ...): a function's text is read and parsed once, however many derivatives of it
# are built (each order and mode, each set of inputs, parses it again otherwise). Keyed by the
# function object, whose closure and defaults the Source holds, and checked against its code
# (``fn.__code__`` can be replaced); a new definition (an edited file imported again, a
# notebook cell run again) is a new function.
_PARSED = weakref.WeakKeyDictionary()


def get_source(fn) -> Source:
    """Parse ``fn``'s source. Works for module functions, methods, lambdas and notebook cells.
    Each call returns a new Source, with its own copy of the tree: the stages change both."""
    fn = getattr(fn, "__func__", fn)
    while isinstance(fn, _MEMOIZERS):  # functools.cache returns what the function returns
        fn = fn.__wrapped__
    if not inspect.isfunction(fn):
        raise NoSourceError(f"{fn!r} is not a Python function, so mindgrad cannot read its source")
    parsed = _PARSED.get(fn)
    if parsed is not None and parsed[0] is fn.__code__:
        tree, *rest = parsed[1:]
        return Source(fn, A.clone(tree), *rest)
    src = _parse(fn)
    _PARSED[fn] = (fn.__code__, A.clone(src.tree), src.filename, src.first_line, src.lines,
                   src.lines_start)
    return src


def forget_parsed() -> None:
    """Forget the text read of every function (``mindgrad.clear_cache``)."""
    _PARSED.clear()


def _parse(fn) -> Source:
    lines, first_line, filename = _read(fn)
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        raise UnsupportedSyntaxError(
            f"{fn.__qualname__} is an async def: mindgrad differentiates plain def functions and "
            "lambdas (calling a coroutine computes nothing until it is awaited); differentiate "
            "the plain function the coroutine awaits", filename, first_line,
            lines[0] if lines else "")
    source = textwrap.dedent("".join(lines))
    height = None  # of the expressions, where parsing measured it
    if fn.__name__ == "<lambda>":
        tree = lambda_tree(fn, source, lines, first_line)
    else:
        tree, height = _def_tree(lines)
        if not isinstance(tree, gast.FunctionDef):
            mismatch(fn, filename, first_line, lines, "is not a def")
        tree.decorator_list = []
    mangle(tree, private_class(fn))  # as Python compiled it: its parameters may be private
    if not generated(filename):
        # generated code (grad of grad) was compiled from the very text it registered
        check_matches(fn, tree, filename, first_line, lines)
    # line numbers count from the def line, even when decorators came first
    def_line = first_line + (tree.lineno - 1 if fn.__name__ != "<lambda>" else 0)
    shift_lines(tree, -(tree.lineno - 1) if fn.__name__ != "<lambda>" else 0)
    src = Source(fn, tree, filename, def_line, lines, first_line)
    depth.split(src, height)
    return src


def _def_tree(lines):
    """The statement ``lines`` hold, parsed where it stands (in an ``if 1:`` block when
    indented, then placed as if dedented): dedenting the text would also take the spaces out
    of the lines of its multi-line strings, which the function's code keeps. None if they do
    not parse; with a bound on the levels of its expressions (``depth.parse_measured``)."""
    text = "".join(lines)
    indent = len(text) - len(text.lstrip(" \t"))
    try:
        module, height = depth.parse_measured("if 1:\n" + text if indent else text)
    except SyntaxError:
        return None, None
    if not module.body:
        return None, None
    tree = module.body[0].body[0] if indent else module.body[0]
    if indent:
        for node in gast.walk(tree):
            for attr in ("lineno", "end_lineno"):
                if getattr(node, attr, None) is not None:
                    setattr(node, attr, getattr(node, attr) - 1)
            for attr in ("col_offset", "end_col_offset"):
                if getattr(node, attr, None) is not None:
                    setattr(node, attr, max(0, getattr(node, attr) - indent))
    return tree, height


_MEMOIZERS = (type(functools.lru_cache(None)(len)),)


def as_function(fn):
    """A Python function with source that computes what calling ``fn`` computes: a
    ``functools.partial`` is its function given the bound arguments first; a callable without
    source but with a gradient rule (``np.sin``, ``math.sin``, ``abs``) is a call of it, so
    its rule differentiates it. Raises ``NoSourceError`` naming ``fn`` when it has neither."""
    if isinstance(fn, functools.partial):
        return _partial_function(fn)
    if isinstance(fn, _MEMOIZERS):  # functools.cache returns what the function returns
        return fn.__wrapped__
    if _has_rule(fn):
        return _by_rule(fn)
    raise NoSourceError(
        f"{getattr(fn, '__qualname__', None) or fn!r} has no Python source and no gradient "
        "rule, so mindgrad cannot differentiate it; register a rule for it with "
        "@mindgrad.adjoint and @mindgrad.tangent")


def _by_rule(fn):
    def by_rule(*args, **kw):
        return fn(*args, **kw)
    return by_rule


_partials = iter(range(1, 1 << 62))
_partial_functions = weakref.WeakKeyDictionary()  # a partial's arguments never change


def _partial_function(p):
    """``def partial_f(*args, **kw): return f(a0, ..., k=k0, ..., *args, **kw)`` for
    ``functools.partial(f, a0, ..., k=k0, ...)``, its source registered with linecache,
    made once per partial."""
    if p not in _partial_functions:
        _partial_functions[p] = _write_partial(p)
    return _partial_functions[p]


def _write_partial(p):
    label = "".join(c if c.isalnum() else "_" for c in getattr(p.func, "__name__", "fn"))
    namespace = {"fn": p.func}
    bound = []
    for i, value in enumerate(p.args):
        namespace[f"arg{i}"] = value
        bound.append(f"arg{i}")
    for i, (key, value) in enumerate(p.keywords.items()):
        namespace[f"keyword{i}"] = value
        bound.append(f"{key}=keyword{i}")
    name = f"partial_{label}"
    text = (f"def {name}(*args, **kw):\n"
            f"    return fn({', '.join(bound + ['*args', '**kw'])})\n")
    filename = f"<mindgrad partial {label} #{next(_partials)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 (the text is ours)
    return namespace[name]


def unbind(fn):
    """``(function to transform, the object bound to its first parameter or None)``."""

    if objects.is_module(fn):
        return type(fn).construct, fn
    if foreign_library(getattr(fn, "__func__", fn)) is not None and _has_rule(fn):
        return as_function(fn), None  # another library's (grad(scipy.linalg.sqrtm)): its rule
    if isinstance(fn, types.MethodType):
        return fn.__func__, fn.__self__
    if not isinstance(fn, (types.FunctionType, type)) and callable(fn) and \
            isinstance(inspect.getattr_static(type(fn), "__call__", None), types.FunctionType):
        return type(fn).__call__, fn
    if not isinstance(fn, types.FunctionType):  # np.sin, abs, functools.partial(f, y=y)
        return as_function(fn), None
    if _has_rule(fn) and not _readable(fn):  # NumPy 1.x's np.sum: a wrapper made by exec
        return as_function(fn), None
    return fn, None


def _has_rule(fn):
    from mindgrad import rules

    return rules.lookup(fn) is not None or rules.lookup_tangent(fn) is not None


def _readable(fn):
    try:
        _read(fn)
    except NoSourceError:
        return False
    return True


def foreign_library(fn):
    """The name of the library ``fn`` belongs to (``"scipy"``, ``"statistics"``) when it is
    another library's code, else None.

    Another library's code is code installed for Python to import, not the program's own: its
    file lies under an installation directory (a ``site-packages`` or ``dist-packages``
    directory, any interpreter's or virtual environment's, or the standard library's), and not
    inside mindgrad's own package (whose helpers generated code calls). mindgrad does not
    follow a call into such code: a call of it needs a rule, and the error says so at the
    user's line. The user's code is followed wherever it lives otherwise: a project's files
    (installed in editable mode too), scripts, notebook cells."""
    code = getattr(fn, "__code__", None)  # the code that would be followed: no unwrapping
    if code is None or not _installed(code.co_filename):
        return None
    module = getattr(fn, "__module__", None) or ""
    return module.split(".")[0] or os.path.splitext(os.path.basename(code.co_filename))[0]


_MINDGRAD = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


@functools.cache
def _installed(filename) -> bool:
    """Whether ``filename`` lies under an installation directory, outside mindgrad."""
    if not os.path.isabs(filename):  # <stdin>, a notebook cell, generated code
        return False
    path = os.path.realpath(filename)
    if path.startswith(_MINDGRAD + os.sep):
        return False
    parts = path.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return True
    return any(path.startswith(root + os.sep) for root in _installation_roots())


@functools.cache
def _installation_roots():
    """The standard library's and the site directories of this interpreter."""
    import site
    import sysconfig  # not imported at start-up: read when a callee is first checked

    paths = sysconfig.get_paths()
    roots = [paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    try:
        roots += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:  # an old virtualenv's site module
        pass
    return tuple(sorted({os.path.realpath(r) for r in roots if r}))
