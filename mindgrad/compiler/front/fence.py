"""Stage 2, fence: reject the Python that mindgrad does not differentiate, before any rewriting.

Output guarantee: the tree is unchanged, and contains none of the constructs in ``_REJECTED``,
no ``*args``/``**kw`` parameter (``specialise.specialise`` fixed them) and no starred expression
other than a call's argument (normalize spells those out); otherwise an
``UnsupportedSyntaxError`` names the user's file, line and source text.
"""

from __future__ import annotations

import gast

from mindgrad.compiler import astutil as A
from mindgrad.errors import UnsupportedSyntaxError

_REJECTED = {
    gast.Try: "try/except is not supported in a differentiated function; move the error "
              "handling to the caller",
    gast.With: "`with` blocks are not supported in a differentiated function",
    gast.AsyncWith: "`async with` is not supported",
    gast.AsyncFor: "`async for` is not supported",
    gast.AsyncFunctionDef: "async functions are not supported",
    gast.Await: "`await` is not supported",
    gast.Yield: "generators (`yield`) cannot be differentiated; return a value instead",
    gast.YieldFrom: "generators (`yield from`) cannot be differentiated",
    gast.Global: "`global` is not supported: differentiated functions may read globals "
                 "but not rebind them",
    gast.Nonlocal: "`nonlocal` is not supported: differentiated functions may read closure "
                   "variables but not rebind them",
    gast.ClassDef: "class definitions inside a differentiated function are not supported",
    gast.Delete: "`del` is not supported in a differentiated function",
    gast.Import: "imports inside a differentiated function are not supported; import at "
                 "module level",
    gast.ImportFrom: "imports inside a differentiated function are not supported; import at "
                     "module level",
    gast.NamedExpr: "the walrus operator `:=` is not supported; use a separate assignment",
    gast.SetComp: "set comprehensions are not supported",
    gast.DictComp: "dict comprehensions are not supported; build the dict with a loop",
    gast.Set: "set literals are not supported",
}


def check(src, tree=None):
    """Raise ``UnsupportedSyntaxError`` at the first unsupported construct of ``src.tree``."""
    tree = tree if tree is not None else src.tree
    args = tree.args
    if args.vararg is not None or args.kwarg is not None:  # specialise.specialise removes them
        _fail(src, tree, "*args/**kwargs parameters are not supported here; pass a tuple or "
                         "dict instead")
    # g(*t, **kw): normalize passes the items on one by one, or refuses at the line
    call_stars = {id(arg) for node in A.walk(tree) if isinstance(node, gast.Call)
                  for arg in node.args if isinstance(arg, gast.Starred)}
    for node in A.walk(tree):
        message = _REJECTED.get(type(node))
        if message:
            _fail(src, node, message)
        if isinstance(node, (gast.For, gast.While)) and node.orelse:
            _fail(src, node, "`else` on a loop is not supported; use a flag")
        if isinstance(node, gast.Starred) and id(node) not in call_stars:
            _fail(src, node, "starred expressions (*x) are not supported in a differentiated "
                             "function; index the sequence instead")
        if isinstance(node, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            for target in targets:
                _check_target(src, target)
        if isinstance(node, gast.For):
            _check_target(src, node.target)
        if isinstance(node, gast.comprehension) and node.is_async:
            _fail(src, node, "async comprehensions are not supported")
        if isinstance(node, gast.FunctionDef) and node is not tree:
            inner = node.args
            if inner.vararg is not None or inner.kwarg is not None or node.decorator_list:
                _fail(src, node, "nested functions may not take *args/**kwargs or decorators")
    return tree


def _check_target(src, target):
    if isinstance(target, (gast.Tuple, gast.List)):
        for elt in target.elts:
            _check_target(src, elt)
    elif isinstance(target, gast.Attribute):
        _fail(src, target, "assigning to an attribute is not supported in a differentiated "
                           "function; use a local variable")
    elif isinstance(target, gast.Subscript):
        if not isinstance(target.value, gast.Name):
            _fail(src, target, "index assignment is supported on a plain variable only "
                               "(x[i] = v), not on an expression")
    elif not isinstance(target, gast.Name):
        _fail(src, target, f"cannot assign to a {type(target).__name__}")


def _fail(src, node, message):
    lineno = src.line_of(node)
    raise UnsupportedSyntaxError(message, src.filename, lineno, src.text_of(lineno),
                                 getattr(node, "col_offset", 0) or 0)
