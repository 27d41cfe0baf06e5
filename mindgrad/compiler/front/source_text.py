"""Whether the text read for a function is its own, and the names in it as Python compiled them.

A file edited after its module was imported can hold another text where a function's code says
its source is: ``check_matches`` compiles the text read, in a scope like the function's, and
compares what it computes (``code_shape``) with the function's code, once per code object.
Inside a class body Python mangles private names (``__k`` as ``_M__k``): ``mangle`` writes the
tree read as Python compiled it.
"""

from __future__ import annotations
import __future__

import ast
import dis
import functools
import inspect
import linecache
import operator
import types
import weakref

import gast

from mindgrad.errors import NoSourceError


def generated(filename: str) -> bool:
    """Whether ``filename`` names text mindgrad wrote and compiled itself (``<mindgrad ...>``:
    generated code, the wrappers of ``check_grads`` and the tester)."""
    return filename.startswith("<mindgrad ")


def check_matches(fn, tree, filename, first_line, lines):
    """The source read is ``fn``'s own: it starts where its code says, with its name and its
    parameters, and compiles to its code (compared by ``code_shape``, once per code object, at
    build time). A file edited since it was imported can hold another text there."""
    code = fn.__code__
    names, expected = parameter_names(tree.args), code_parameters(code)
    if names != expected:
        mismatch(fn, filename, first_line, lines,
                 f"has parameters ({', '.join(names)}), not ({', '.join(expected)})")
    if code.co_name != "<lambda>" and (tree.name != code.co_name or
                                        first_line != code.co_firstlineno):
        mismatch(fn, filename, first_line, lines, f"is a def of {tree.name}")
    if code in _COMPILES_TO_CODE:
        return
    compiled = compiled_code(fn, tree, lines)
    if compiled is not None and not _same_code(compiled, code) and \
            code_shape(compiled) != (shape := code_shape(code)):
        # a scope the function's text alone does not show? the whole file tells
        if not any(code_shape(c) == shape for c in _compiled_in_file(code, filename)):
            mismatch(fn, filename, first_line, lines,
                     "compiles to other code than the function's (its body was edited)")
    _COMPILES_TO_CODE.add(code)


# the code objects whose source text was compiled and found to give them: checked once each
_COMPILES_TO_CODE: weakref.WeakSet = weakref.WeakSet()
_FUTURE_FLAGS = functools.reduce(
    operator.or_, (getattr(__future__, f).compiler_flag for f in __future__.all_feature_names))


def compiled_code(fn, tree, lines):
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
        cls = private_class(fn)
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


def private_class(fn):
    """The name of the innermost class whose body holds ``fn``'s text (read from its code's
    qualified name, which a decorator cannot rename), or None: inside it Python mangles the
    private names (``self.__k`` reads the attribute ``_M__k``)."""
    parts = getattr(fn.__code__, "co_qualname", fn.__qualname__).split(".")
    classes = [part for part, inner in zip(parts, parts[1:]) if "<locals>" not in (part, inner)]
    return classes[-1] if classes else None


def mangle(tree, cls):
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
                mangle(child, name)
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


def _same_code(a, b) -> bool:
    """Whether the code objects ``a`` and ``b`` surely compute the same: the same bytecode over
    the same names and constants (of the same types and reprs; nested code is left to
    ``code_shape``, as are the method-call forms of Python 3.10-3.11): a quick check of the
    common case, before the comparison of their shapes."""
    return a.co_code == b.co_code and a.co_names == b.co_names and \
        getattr(a, "co_exceptiontable", None) == getattr(b, "co_exceptiontable", None) and \
        a.co_varnames == b.co_varnames and a.co_freevars == b.co_freevars and \
        a.co_cellvars == b.co_cellvars and a.co_argcount == b.co_argcount and \
        a.co_posonlyargcount == b.co_posonlyargcount and \
        a.co_kwonlyargcount == b.co_kwonlyargcount and \
        (a.co_flags & _COMPILED_FLAGS) == (b.co_flags & _COMPILED_FLAGS) and \
        len(a.co_consts) == len(b.co_consts) and all(
            x.__class__ is y.__class__ and x.__class__ is not types.CodeType and
            repr(x) == repr(y) for x, y in zip(a.co_consts, b.co_consts))


def code_shape(code):
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
            arg = code_shape(arg)
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


def mismatch(fn, filename, first_line, lines, what):
    text = lines[0].strip() if lines else ""
    raise NoSourceError(
        f"the source of {fn.__qualname__} no longer matches its code: {filename}:{first_line}: "
        f"{text} {what}. The file was edited after the function was defined; reload the module "
        "(importlib.reload) or run the cell again")


def parameter_names(args):
    names = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    return names + [a.id for a in (args.vararg, args.kwarg) if a is not None]


def code_parameters(code):
    count = code.co_argcount + code.co_kwonlyargcount + \
        bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return list(code.co_varnames[:count])


def shift_lines(tree, delta):
    if not delta:
        return
    for node in gast.walk(tree):
        if hasattr(node, "lineno") and node.lineno is not None:
            node.lineno += delta
