"""The one cache of generated gradients: what goes into a key, and nothing else.

A key is (the function, the options, the kinds of the arguments); a bound method is keyed by its
instance and function, so ``grad(obj.method)`` finds its entry although each ``obj.method`` is a
new object. An entry stays valid while the function's code object, the rule registry's version
(read before the build, so a rule registered during a build counts) and every dependency the
build recorded are unchanged: the globals, closure variables and attributes it resolved (the
user functions it calls, the Cells a loop was unrolled over and the length of that list, the
weights it reads, the defaults it filled in), and those of the generated code it calls
(``grad(grad(f))`` runs the code of ``grad(f)``); otherwise it is rebuilt.

Entries hold the objects they depend on weakly where Python allows it, so caching a gradient
never keeps a Cell, a callable object or a Parameter alive. ``stats()`` counts builds and hits,
so tests can count, not time.
"""

from __future__ import annotations

import itertools
import types
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


class Items(tuple):
    """A dependency on the items of a sequence or dict, by identity (not on the container):
    ``Items.of(self.layers)`` stays valid while the list holds the same objects in order."""

    @classmethod
    def of(cls, value):
        if value is None:
            return cls()
        if isinstance(value, dict):
            return cls(itertools.chain.from_iterable(value.items()))
        return cls(value)


_GONE = object()


class _Held:
    """An object held weakly where it allows that: ``get()`` gives it, or _GONE once freed."""

    __slots__ = ("_obj", "_ref")

    def __init__(self, obj):
        try:
            self._ref, self._obj = weakref.ref(obj), None
        except TypeError:
            self._ref, self._obj = None, obj

    def get(self):
        if self._ref is None:
            return self._obj
        obj = self._ref()
        return _GONE if obj is None else obj


class _Entry:
    """A generated gradient and what it was built from: its own dependencies, and those of
    the generated code it calls (``grad(grad(f))`` calls the code of ``grad(f)``)."""

    __slots__ = ("code", "dependencies", "generated", "version")

    def __init__(self, fn, version, generated, inherited):
        self.code = _code_of(fn)
        self.version = version
        self.generated = generated
        # held here, weakly; the strong list would keep the Cells it names alive
        self.dependencies = [_held_dependency(*dep) for dep in generated.dependencies]
        self.dependencies += inherited
        generated.dependencies = ()

    def pass_up(self, fn):
        """Make this entry's dependencies those of the build running, if any: code built from
        it is stale when it is."""
        if _collecting:
            root = fn.__func__ if isinstance(fn, types.MethodType) else fn
            _collecting[-1].extend(self.dependencies)
            _collecting[-1].append(("code", _Held(root), (), _Held(self.code)))


def _held_dependency(where, root, path, obj):
    expected = Items(_hold(o) for o in obj) if isinstance(obj, Items) else _hold(obj)
    return where, _hold(root), path, expected


def _hold(obj):
    return obj if isinstance(obj, _Held) else _Held(obj)


def _code_of(fn):
    """The code object whose change means ``fn`` was redefined."""
    code = getattr(fn, "__code__", None)
    if code is not None:
        return code
    from mindgrad.transform.pipeline import unbind

    function, _ = unbind(fn)
    return getattr(function, "__code__", None)


def _table(fn):
    """The entries of ``fn``, living as long as ``fn`` does (as long as the instance, for a
    bound method), and the part of the key that names ``fn`` within that table."""
    owner, name = fn, None
    if isinstance(fn, types.MethodType):
        owner, name = fn.__self__, fn.__func__
    try:
        return _entries.setdefault(owner, {}), name
    except TypeError:  # not weak-referenceable (or not hashable): no caching
        return {}, name


# the dependencies of the generated code each running build uses, innermost build last
_collecting: list = []


def lookup(fn, options, args, build):
    """The generated entry for ``fn`` called with ``args``, built by ``build()`` on a miss."""
    table, name = _table(fn)
    key = (name, options, tuple(kind(a) for a in args))
    entry = table.get(key)
    if entry is not None and _valid(fn, entry):
        _stats["hits"] += 1
    else:
        version = rules.registry_version()
        _collecting.append([])
        try:
            generated = build()
        finally:
            inherited = _collecting.pop()
        _stats["builds"] += 1
        entry = table[key] = _Entry(fn, version, generated, inherited)
    entry.pass_up(fn)
    return entry.generated


_MISSING = object()


def _valid(fn, entry) -> bool:
    if _code_of(fn) is not entry.code or entry.version != rules.registry_version():
        return False
    for where, root, path, expected in entry.dependencies:
        value = root.get()
        if where == "code":
            value = _code_of(value)
        elif where == "global":
            value = value.get(path[0], _MISSING)
            path = path[1:]
        elif where == "cell":
            try:
                value = value.cell_contents
            except ValueError:
                return False
        for step in path:
            value = _step(value, step)
        if value is _MISSING or value is _GONE or not _matches(value, expected):
            return False
    return True


def _step(value, step):
    """``value.step``, or ``value[step]`` for an int (an element of a list of Cells)."""
    if not isinstance(step, int):
        return getattr(value, step, _MISSING)
    try:
        return value[step]
    except (IndexError, KeyError, TypeError):
        return _MISSING


def _matches(value, expected) -> bool:
    if isinstance(expected, Items):
        try:
            items = Items.of(value)
        except TypeError:
            return False
        return len(items) == len(expected) and \
            all(a is b.get() for a, b in zip(items, expected))
    return value is expected.get()


def stats() -> dict:
    """Counts of gradient builds (parse, transform, compile) and cache hits so far."""
    return dict(_stats)


def clear():
    """Forget every generated gradient."""
    _entries.clear()
