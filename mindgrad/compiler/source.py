"""Stage 1, source: read a function's source and parse it with gast.

Output guarantee: a ``Source`` whose ``tree`` is a single ``gast.FunctionDef`` without
decorators (a lambda becomes ``def <lambda>(...): return <expr>``), with line numbers that map
back to the user's file through ``line_of``; and ``resolve(name)`` giving the object a free name
of the function refers to (closure cell, global, or builtin).

The function read is the one the user calls: a decorator's wrapper is differentiated as
written, reaching the wrapped function through its closure. ``specialise`` gives a function
with ``*args``/``**kw`` parameters fixed parameters for one call shape. ``foreign_library``
tells another library's code, which is not read (a call of it needs a rule), from the user's.
"""

from __future__ import annotations
import __future__

import ast
import builtins
import dis
import functools
import inspect
import linecache
import operator
import os
import re
import sys
import textwrap
import types
import weakref

import gast
import numpy as np

from mindgrad.compiler import depth, objects
from mindgrad.errors import NoSourceError, UnsupportedSyntaxError

MISSING = _MISSING = object()


class Source:
    """A user function's parsed source, with where it came from."""

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
        self.bound = {}  # parameter name -> the object it is known to be (``self`` of a Cell)
        self.aliases = {}  # local name -> the static expression it is assigned once (f = self.b)
        self.constants = {}
        # expressions of functions used as values, not called (``jvp(f, ...)``, ``grad(f)``):
        # rebinding them must build fresh code too
        self.static_arguments = []  # name -> object built while transforming (grad(g) in the body)
        self.defaults = fn.__defaults__  # the defaults of the positional parameters of ``tree``
        self.packed = {}  # *args/**kw parameter -> the parameters it was specialised into
        # (expression, items) of the lists of Cells or functions a loop was unrolled over:
        # appending to or replacing an element of one must build fresh code too
        self.unrolled = []

    @property
    def name(self) -> str:
        return self.tree.name

    @property
    def is_mindgrad_code(self) -> bool:
        """Whether this is generated code or one of mindgrad's helpers (grad of grad)."""
        module = getattr(self.fn, "__module__", None) or ""
        return self.filename.startswith("<mindgrad") or module.startswith("mindgrad.")

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
    loop over it can be unrolled), or None."""
    seq = static_value(src, node, local_names)
    if not (isinstance(seq, (list, tuple)) or _is_cell_list(seq)) or not 0 < len(seq) <= 64:
        return None
    items = list(seq)
    if any(isinstance(item, _DYNAMIC) for item in items) or not all(callable(i) for i in items):
        return None
    src.unrolled.append((node, items))
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


def get_source(fn) -> Source:
    """Parse ``fn``'s source. Works for module functions, methods, lambdas and notebook cells."""
    fn = getattr(fn, "__func__", fn)
    while isinstance(fn, _MEMOIZERS):  # functools.cache returns what the function returns
        fn = fn.__wrapped__
    if not inspect.isfunction(fn):
        raise NoSourceError(f"{fn!r} is not a Python function, so mindgrad cannot read its source")
    lines, first_line, filename = _read(fn)
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        raise UnsupportedSyntaxError(
            f"{fn.__qualname__} is an async def: mindgrad differentiates plain def functions and "
            "lambdas (calling a coroutine computes nothing until it is awaited); differentiate "
            "the plain function the coroutine awaits", filename, first_line,
            lines[0] if lines else "")
    source = textwrap.dedent("".join(lines))
    if fn.__name__ == "<lambda>":
        tree = _lambda_tree(fn, source, lines, first_line)
    else:
        tree = _def_tree(lines)
        if not isinstance(tree, gast.FunctionDef):
            _mismatch(fn, filename, first_line, lines, "is not a def")
        tree.decorator_list = []
    _mangle(tree, _private_class(fn))  # as Python compiled it: its parameters may be private
    _check_matches(fn, tree, filename, first_line, lines)
    # line numbers count from the def line, even when decorators came first
    def_line = first_line + (tree.lineno - 1 if fn.__name__ != "<lambda>" else 0)
    _shift_lines(tree, -(tree.lineno - 1) if fn.__name__ != "<lambda>" else 0)
    src = Source(fn, tree, filename, def_line, lines, first_line)
    depth.split(src)
    return src


def _def_tree(lines):
    """The statement ``lines`` hold, parsed where it stands (in an ``if 1:`` block when
    indented, then placed as if dedented): dedenting the text would also take the spaces out
    of the lines of its multi-line strings, which the function's code keeps. None if they do
    not parse."""
    text = "".join(lines)
    indent = len(text) - len(text.lstrip(" \t"))
    try:
        module = depth.parse("if 1:\n" + text if indent else text)
    except SyntaxError:
        return None
    if not module.body:
        return None
    tree = module.body[0].body[0] if indent else module.body[0]
    if indent:
        for node in gast.walk(tree):
            for attr in ("lineno", "end_lineno"):
                if getattr(node, attr, None) is not None:
                    setattr(node, attr, getattr(node, attr) - 1)
            for attr in ("col_offset", "end_col_offset"):
                if getattr(node, attr, None) is not None:
                    setattr(node, attr, max(0, getattr(node, attr) - indent))
    return tree


def _check_matches(fn, tree, filename, first_line, lines):
    """The source read is ``fn``'s own: it starts where its code says, with its name and its
    parameters, and compiles to its code (compared by ``_shape``, once per code object, at
    build time). A file edited since it was imported can hold another text there."""
    code = fn.__code__
    names, expected = _parameter_names(tree.args), _code_parameters(code)
    if names != expected:
        _mismatch(fn, filename, first_line, lines,
                  f"has parameters ({', '.join(names)}), not ({', '.join(expected)})")
    if code.co_name != "<lambda>" and (tree.name != code.co_name or
                                        first_line != code.co_firstlineno):
        _mismatch(fn, filename, first_line, lines, f"is a def of {tree.name}")
    if code in _COMPILES_TO_CODE:
        return
    compiled, shape = _compiled(fn, tree, lines), _shape(code)
    if compiled is not None and _shape(compiled) != shape:
        # a scope the function's text alone does not show? the whole file tells
        if not any(_shape(c) == shape for c in _compiled_in_file(code, filename)):
            _mismatch(fn, filename, first_line, lines,
                      "compiles to other code than the function's (its body was edited)")
    _COMPILES_TO_CODE.add(code)


# the code objects whose source text was compiled and found to give them: checked once each
_COMPILES_TO_CODE: weakref.WeakSet = weakref.WeakSet()
_FUTURE_FLAGS = functools.reduce(
    operator.or_, (getattr(__future__, f).compiler_flag for f in __future__.all_feature_names))


def _compiled(fn, tree, lines):
    """The code object Python compiles from the source read (``lines``; for a lambda,
    ``tree``, the lambda's def), in a scope like the function's own: an enclosing function
    binding its free variables (as cells), the class its qualified name puts it in (private
    names are mangled by it, ``super()`` reads its ``__class__``), its own name or its
    class's a global (as its code reads it), the ``__future__`` features of its code. None
    where that cannot be made (the comparison is then left out)."""
    code = fn.__code__
    try:
        if code.co_name == "<lambda>":
            node = ast.Expression(body=gast.gast_to_ast(
                gast.Lambda(args=tree.args, body=tree.body[0].value)))
            node = ast.Expr(value=node.body)
        else:  # parsed as indented, not dedented: the lines of a string keep their spaces
            text = "".join(lines)
            indented = text[:1].isspace()
            node = ast.parse("if 1:\n" + text if indented else text).body[0]
            node = node.body[0] if indented else node
            node.decorator_list = []
        cls = _private_class(fn)
        if cls is not None:  # the innermost class mangles its private names
            node = ast.ClassDef(name=cls, bases=[], keywords=[], body=[node],
                                decorator_list=[], type_params=[])
        free = [ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                           value=ast.Constant(value=None), lineno=1)
                for name in code.co_freevars if name != "__class__" or
                not isinstance(node, ast.ClassDef)]
        bound = getattr(node, "name", None)  # the def's or the class's name
        if bound is not None and bound not in code.co_freevars:
            free.append(ast.Global(names=[bound]))  # which its code reads as a global
        outer = ast.FunctionDef(name="_outer", args=ast.arguments(
            posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
            defaults=[]), body=free + [node, ast.Return(value=ast.Constant(value=None))],
            decorator_list=[], returns=None, type_params=[])
        module = ast.fix_missing_locations(ast.Module(body=[outer], type_ignores=[]))
        compiled = compile(module, code.co_filename, "exec",
                           flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError, TypeError, RecursionError):
        return None
    return _find_code(compiled, code.co_name)


def _private_class(fn):
    """The name of the innermost class whose body holds ``fn``'s text (read from its code's
    qualified name, which a decorator cannot rename), or None: inside it Python mangles the
    private names (``self.__k`` reads the attribute ``_M__k``)."""
    parts = getattr(fn.__code__, "co_qualname", fn.__qualname__).split(".")
    classes = [part for part, inner in zip(parts, parts[1:]) if "<locals>" not in (part, inner)]
    return classes[-1] if classes else None


def _mangle(tree, cls):
    """Write the private names of ``tree`` (a def read from the body of class ``cls``) as
    Python compiles them, ``__k`` as ``_M__k``: the code made from the tree runs outside the
    class, where the names would otherwise not be mangled. Keyword names of calls are kept,
    as Python keeps them; a nested class mangles by its own name."""
    if cls is None or not cls.lstrip("_"):
        return
    prefix = "_" + cls.lstrip("_")

    def mangled(name):
        if name and name.startswith("__") and not name.endswith("__") and "." not in name:
            return prefix + name
        return name

    def visit(node, top=False):
        if isinstance(node, gast.ClassDef) and not top:
            name, node.name = node.name, mangled(node.name)
            for child in node.bases + node.keywords + node.decorator_list:
                visit(child)
            for child in node.body:
                _mangle(child, name)
            return
        if isinstance(node, gast.Name):
            node.id = mangled(node.id)
        elif isinstance(node, gast.Attribute):
            node.attr = mangled(node.attr)
        elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)) and not top:
            node.name = mangled(node.name)
        elif isinstance(node, (gast.Global, gast.Nonlocal)):
            node.names = [mangled(n) for n in node.names]
        elif isinstance(node, gast.alias):
            if node.asname is not None:
                node.asname = mangled(node.asname)
            elif mangled(node.name) != node.name:  # import __m binds _M__m
                node.asname = mangled(node.name)
        for child in gast.iter_child_nodes(node):
            visit(child)

    visit(tree, top=True)


def _compiled_in_file(code, filename):
    """The code objects of ``code``'s name and first line that the whole text of
    ``filename`` (as linecache holds it) compiles to."""
    try:
        module = compile("".join(linecache.getlines(filename)), code.co_filename, "exec",
                         dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError):
        return []
    found, stack = [], [module]
    while stack:
        for const in stack.pop().co_consts:
            if isinstance(const, types.CodeType):
                stack.append(const)
                if const.co_name == code.co_name and \
                        const.co_firstlineno == code.co_firstlineno:
                    found.append(const)
    return found


def _find_code(code, name):
    """The code object named ``name`` within ``code`` (depth first), or None."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name and const.co_flags & inspect.CO_OPTIMIZED:  # no class
                return const
            found = _find_code(const, name)
            if found is not None:
                return found
    return None


# what a function's flags say of its text (types.coroutine, for one, sets another flag)
_COMPILED_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | \
    inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs) | frozenset(getattr(dis, "hasjump", ()))
_PADDING = frozenset({"NOP", "RESUME", "CACHE", "EXTENDED_ARG", "PUSH_NULL"})
# the method-call forms Python 3.10-3.11 choose by what the module imports: one operation each
_SAME_OPERATION = {"LOAD_METHOD": "LOAD_ATTR", "CALL_METHOD": "CALL_FUNCTION"}


def _shape(code):
    """What a code object computes, not where its lines are: its parameters, local, free and
    cell variables, and its instructions with their arguments (constants by type and value,
    nested code by its own shape; jump targets and padding left out, as line numbers move
    them)."""
    ops = []
    for ins in dis.get_instructions(code):
        if ins.opname in _PADDING:
            continue
        arg = ins.argval
        if isinstance(arg, types.CodeType):
            arg = _shape(arg)
        elif ins.opcode in _JUMPS:
            arg = None
        elif isinstance(arg, frozenset):  # its order follows the hashes of this process
            arg = ("frozenset", tuple(sorted(map(repr, arg))))
        elif not isinstance(arg, (str, type(None))):
            arg = (type(arg).__name__, repr(arg))
        if ins.opname == "MAKE_FUNCTION" and ops and ops[-1][0] == "LOAD_CONST" and \
                isinstance(ops[-1][1], str):  # Python 3.10 passes the qualified name
            ops[-1] = ("LOAD_CONST", ops[-1][1].rsplit(".", 1)[-1])
        if arg == "__firstlineno__" and ops and ops[-1][0] == "LOAD_CONST":  # a class, 3.13
            ops[-1] = ("LOAD_CONST", None)
        ops.append((_SAME_OPERATION.get(ins.opname, ins.opname), arg))
    return (code.co_name, code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
            code.co_flags & _COMPILED_FLAGS, code.co_varnames, code.co_freevars,
            code.co_cellvars, tuple(ops))


def _mismatch(fn, filename, first_line, lines, what):
    text = lines[0].strip() if lines else ""
    raise NoSourceError(
        f"the source of {fn.__qualname__} no longer matches its code: {filename}:{first_line}: "
        f"{text} {what}. The file was edited after the function was defined; reload the module "
        "(importlib.reload) or run the cell again")


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


def _parameter_names(args):
    names = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    return names + [a.id for a in (args.vararg, args.kwarg) if a is not None]


def _code_parameters(code):
    count = code.co_argcount + code.co_kwonlyargcount + \
        bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return list(code.co_varnames[:count])


def _shift_lines(tree, delta):
    if not delta:
        return
    for node in gast.walk(tree):
        if hasattr(node, "lineno") and node.lineno is not None:
            node.lineno += delta


def _lambda_tree(fn, source, lines, first_line):
    """The lambda's own node, out of the (possibly multi-lambda) source line inspect returns.
    Where the line alone does not tell (several lambdas of the same parameters, a lambda on a
    continuation line), the columns Python 3.11+ records for the lambda's code pin it."""
    # the whole statement around it, in the file: a lambda spanning lines of a bracket
    # ({"k": lambda x: a(x)\n + b(x)}) is cut short on its own line, where it may even parse
    found = _lambda_in_file(fn, first_line)
    if found is not None:
        return _lambda_def(found)
    text = source.strip()
    module = None
    for candidate in (text, text.rstrip(",;)"), "(" + text + ")", text.split("=", 1)[-1].strip()):
        try:
            module = depth.parse(candidate)
            break
        except SyntaxError:
            continue
    lambdas = [n for n in gast.walk(module) if isinstance(n, gast.Lambda)] if module else []
    lambdas = [n for n in lambdas if _parameter_names(n.args) == _code_parameters(fn.__code__)] \
        or lambdas
    if len(lambdas) != 1:
        lam = _lambda_at_columns(fn, lines, first_line)
        if lam is not None:
            lambdas = [lam]
    if module is None and not lambdas:
        raise NoSourceError(f"cannot parse the source line of a lambda: {text!r}")
    if len(lambdas) != 1:
        raise NoSourceError(
            f"cannot tell which of the {len(lambdas)} lambdas on this line to differentiate: "
            f"{text!r}; give it a name with def (Python 3.11 and later tell lambdas apart by "
            "their columns)")
    return _lambda_def(lambdas[0])


def _lambda_def(lam):
    """``def lambda_(<lam's parameters>): return <lam's body>``, where ``lam`` stands."""
    ret = gast.Return(value=lam.body)
    gast.copy_location(ret, lam)
    fdef = gast.FunctionDef(name="lambda_", args=lam.args, body=[ret], decorator_list=[],
                            returns=None, type_comment=None, type_params=[])
    gast.copy_location(fdef, lam)
    return fdef


def _lambda_in_file(fn, first_line):
    """The lambda of ``fn``'s code, found in the whole text of its file among the lambdas
    that start on its first line with its parameters: by the columns its code records
    (Python 3.11+), then by the code each compiles to. Line numbers count from
    ``first_line``. None where the file does not parse; ``NoSourceError`` where several
    lambdas compile to the same code there."""
    code = fn.__code__
    try:
        found = _lambdas_by_line("".join(linecache.getlines(code.co_filename)))
        found = [gast.ast_to_gast(n) for n in found.get(code.co_firstlineno, ())]
    except (SyntaxError, ValueError, RecursionError):
        return None
    found = [n for n in found if _parameter_names(n.args) == _code_parameters(code)]
    positions = _positions(code)
    if len(found) > 1 and positions:
        start = min((p[0], p[2]) for p in positions)
        end = max((p[1], p[3]) for p in positions)
        found = [n for n in found if (n.body.lineno, n.body.col_offset) <= start and
                 end <= (n.body.end_lineno, n.body.end_col_offset)] or found
    if len(found) > 1:
        shape = _shape(code)
        same = [n for n in found if (lambda c: c is not None and _shape(c) == shape)(
            _compiled(fn, _lambda_def(n), None))]
        # lambdas that compile to fn's very code are the same function: any of them is read
        found = same[:1] or found
    if len(found) > 1:
        raise NoSourceError(
            f"cannot tell which of the {len(found)} lambdas at {code.co_filename}:"
            f"{code.co_firstlineno} to differentiate: neither their columns nor the code they "
            "compile to tell them apart; give it a name with def")
    if not found:
        return None
    lam = found[0]
    _shift_lines(lam, 1 - first_line)
    return lam


@functools.lru_cache(maxsize=8)
def _lambdas_by_line(text):
    """The lambdas of a file's ``text`` (``ast`` nodes, never changed: each use converts its
    own), by the line each starts on: parsed once per text, as its lambdas are read."""
    found = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Lambda):
            found.setdefault(node.lineno, []).append(node)
    return found


def _positions(code):
    """The (line, end line, column, end column) spans that ``code``'s instructions record
    (Python 3.11+; none before)."""
    positions = getattr(code, "co_positions", None)
    if positions is None:
        return []
    return [p for p in positions() if None not in p and (p[0], p[2]) != (p[1], p[3])]


def _lambda_at_columns(fn, lines, first_line):
    """The lambda whose body spans the columns its code's instructions record (Python 3.11+),
    read from ``lines`` (which start at ``first_line``), or None. Line numbers of the nodes
    count from ``first_line``."""
    spans = _positions(fn.__code__)
    if not spans:
        return None
    (l0, c0), (l1, c1) = min((p[0], p[2]) for p in spans), max((p[1], p[3]) for p in spans)
    if not first_line <= l0 <= l1 < first_line + len(lines):
        return None

    def line(n):
        return lines[n - first_line].encode()  # columns count UTF-8 bytes

    if l0 == l1:
        body = line(l0)[c0:c1].decode()
    else:
        body = "\n".join([line(l0)[c0:].decode().rstrip("\n")] +
                         [line(n).decode().rstrip("\n") for n in range(l0 + 1, l1)] +
                         [line(l1)[:c1].decode()])
    head = "".join(line(n).decode() for n in range(first_line, l0)) + line(l0)[:c0].decode()
    start = max((i for i in range(len(head)) if head.startswith("lambda", i) and
                 (i == 0 or not (head[i - 1].isalnum() or head[i - 1] == "_"))), default=None)
    if start is None:
        return None
    header = head[start:].rstrip().rstrip("(").rstrip()
    try:
        lam = depth.parse("(" + header + " None)").body[0].value
        expr = depth.parse("(" + body + "\n)").body[0].value
    except SyntaxError:
        return None
    if not isinstance(lam, gast.Lambda) or \
            _parameter_names(lam.args) != _code_parameters(fn.__code__):
        return None
    _shift_lines(expr, l0 - first_line)
    lam.body = expr
    for node in gast.walk(lam.args):
        if getattr(node, "lineno", None) is not None:
            node.lineno = 1
    lam.lineno = 1
    return lam


def unbind(fn):
    """``(function to transform, the object bound to its first parameter or None)``."""
    import types

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


_MINDGRAD = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


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
