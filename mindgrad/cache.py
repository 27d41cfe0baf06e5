"""The one cache of generated gradients: what goes into a key, and nothing else.

A key is (the function, the options, the kinds of the arguments). An entry stays valid while
the function's code object, every global its generated code relies on (the user functions it
calls, their rebinding in a notebook included) and the rule registry's version are unchanged;
otherwise it is rebuilt. ``stats()`` counts builds and hits, so tests can count, not time.
"""

from __future__ import annotations

import weakref

import numpy as np

from mindgrad import rules

_entries: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_stats = {"builds": 0, "hits": 0}


def kind(value):
    """What the generated code may specialise on: type, and dtype/ndim for arrays."""
    cls = value.__class__
    if cls is np.ndarray:
        return (cls, value.dtype.str, value.ndim)
    if cls is tuple or cls is list:
        return (cls, tuple(kind(v) for v in value))
    if cls is dict:
        return (cls, tuple((k, kind(v)) for k, v in value.items()))
    return cls


def _code_of(fn):
    """The code object whose change means ``fn`` was redefined."""
    code = getattr(fn, "__code__", None)
    if code is not None:
        return code
    from mindgrad.transform.pipeline import unbind

    function, _ = unbind(fn)
    return getattr(function, "__code__", None)


def lookup(fn, options, args, build):
    """The generated entry for ``fn`` called with ``args``, built by ``build()`` on a miss."""
    key = (options, tuple(kind(a) for a in args))
    try:
        table = _entries.setdefault(fn, {})
    except TypeError:  # not weak-referenceable: no caching
        table = {}
    entry = table.get(key)
    if entry is not None and _valid(fn, entry):
        _stats["hits"] += 1
        return entry[1]
    generated = build()
    _stats["builds"] += 1
    table[key] = (_code_of(fn), generated)
    return generated


_MISSING = object()


def _valid(fn, entry) -> bool:
    code, generated = entry
    if _code_of(fn) is not code:
        return False
    for where, root, path, obj in generated.dependencies:
        if where == "rules":
            if obj != rules.registry_version():
                return False
            continue
        if where == "global":
            value = root.get(path[0], _MISSING)
            path = path[1:]
        elif where == "cell":
            try:
                value = root.cell_contents
            except ValueError:
                return False
        else:
            value = root
        for attr in path:
            value = getattr(value, attr, _MISSING)
        if value is not obj:
            return False
    return True


def stats() -> dict:
    """Counts of gradient builds (parse, transform, compile) and cache hits so far."""
    return dict(_stats)


def clear():
    """Forget every generated gradient."""
    _entries.clear()
