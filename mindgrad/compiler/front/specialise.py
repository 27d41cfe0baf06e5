"""Part of stage 1, source: ``*args`` and ``**kw`` become parameters for one call shape.

The transformations work on named parameters. A function ``def f(x, *args, **kw)`` is read
once per call shape (``call_shape``: how many values ``*args`` receives and which names
``**kw`` receives), with ``specialise`` giving it fixed parameters for that shape.
"""

from __future__ import annotations

import inspect

import gast

from mindgrad.compiler import astutil as A


def call_shape(fn, bound, npositional, keywords):
    """``(values *args receives, sorted names **kw receives)`` in a call of the function
    ``fn`` (with its first parameter ``bound``) with ``npositional`` positional arguments and
    ``keywords``: what ``specialise`` needs. ``(0, ())`` for a function without them."""
    code = fn.__code__
    named = code.co_argcount - bound
    varargs = max(npositional - named, 0) if code.co_flags & inspect.CO_VARARGS else 0
    if not code.co_flags & inspect.CO_VARKEYWORDS:
        return varargs, ()
    params = set(code.co_varnames[code.co_posonlyargcount:code.co_argcount +
                                  code.co_kwonlyargcount])
    return varargs, tuple(sorted(k for k in keywords if k not in params))


def specialise(src, shape):
    """Give ``src.tree``'s ``*args`` and ``**kw`` fixed parameters for a call of ``shape`` (see
    ``call_shape``): ``def f(x, *args, **kw)`` called as ``f(a, b, c, y=d)`` reads

        def f(x, args_0, args_1, *, y):
            args = (args_0, args_1)
            kw = {'y': y}

    Callers pass the values of ``*args`` after the named positional parameters, and those of
    ``**kw`` after the keyword-only ones, in the order of the sorted names.
    The result is a new ``Source`` (``src`` stays as it was) whose ``packed`` maps ``args``
    and ``kw`` to the new parameters while neither is rebound, so that ``g(*args, **kw)``
    passes them on one by one, and whose ``keyword_params`` maps a keyword of ``**kw`` to its
    parameter where the name was taken."""
    if src.tree.args.vararg is None and src.tree.args.kwarg is None:
        return src
    tree = A.clone(src.tree)
    args = tree.args
    packed, keyword_params, defaults = {}, {}, src.defaults
    nvarargs, keys = shape
    taken = set(gast_names(tree)) | set(src.closure) | set(src.globals)
    rebound = gast_names(tree.body, gast.Store)
    prologue = []
    if args.vararg is not None:
        name = args.vararg.id
        params = [_fresh(f"{name}_{i}", taken) for i in range(nvarargs)]
        args.args = args.args + [_param(p) for p in params]
        if name not in rebound:
            packed[name] = params
        if name in rebound or _read_whole(tree.body, name):
            prologue.append(_assign(name, gast.Tuple(elts=[_load(p) for p in params],
                                                     ctx=gast.Load())))
        if nvarargs:  # every named positional parameter was given: no default applies
            defaults = None
        args.vararg = None
    if args.kwarg is not None:
        name = args.kwarg.id
        params = [key if key.isidentifier() and key not in taken else _fresh("kw_" + key, taken)
                  for key in keys]
        taken.update(params)
        args.kwonlyargs = args.kwonlyargs + [_param(p) for p in params]
        args.kw_defaults = args.kw_defaults + [None] * len(params)
        if name not in rebound:
            packed[name] = dict(zip(keys, params))
        if name in rebound or _read_whole(tree.body, name):
            prologue.append(_assign(name, gast.Dict(keys=[gast.Constant(value=k, kind=None)
                                                          for k in keys],
                                                    values=[_load(p) for p in params])))
        keyword_params = {k: p for k, p in zip(keys, params) if k != p}
        args.kwarg = None
    for stmt in prologue:
        gast.copy_location(stmt, tree)
        for node in gast.walk(stmt):
            gast.copy_location(node, tree)
    tree.body = prologue + tree.body
    return src.derive(tree=tree, packed=packed, keyword_params=keyword_params,
                      defaults=defaults)


def _read_whole(body, name) -> bool:
    """Whether ``body`` reads ``name`` other than to unpack it into a call (``g(*args)``)."""
    reads = unpacked = 0
    for node in (n for stmt in body for n in gast.walk(stmt)):
        if isinstance(node, gast.Name) and node.id == name and isinstance(node.ctx, gast.Load):
            reads += 1
        elif isinstance(node, gast.Starred) and isinstance(node.value, gast.Name) and \
                node.value.id == name or isinstance(node, gast.keyword) and node.arg is None \
                and isinstance(node.value, gast.Name) and node.value.id == name:
            unpacked += 1
    return reads > unpacked


def gast_names(node, ctx=None) -> set:
    """The names used in ``node`` (a node or a list), optionally only those of context ``ctx``."""
    nodes = node if isinstance(node, list) else [node]
    return {n.id for tree in nodes for n in gast.walk(tree)
            if isinstance(n, gast.Name) and (ctx is None or isinstance(n.ctx, ctx))}


def _fresh(base, taken):
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def _param(name):
    return gast.Name(id=name, ctx=gast.Param(), annotation=None, type_comment=None)


def _load(name):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def _assign(name, value):
    target = gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)
    return gast.Assign(targets=[target], value=value, type_comment=None)
