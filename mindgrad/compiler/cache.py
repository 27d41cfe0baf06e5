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

import contextlib
import itertools
import types
import weakref

import numpy as np

from mindgrad import rules
from mindgrad.compiler.front import source
from mindgrad.runtime import arrays, reuse

_entries: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_stats = {"builds": 0, "hits": 0}


#: the fewest elements of an argument array for which the gradient reuses dead buffers (the
#: size from which ``runtime.reuse.spare`` hands memory over)
LARGE = reuse.LARGE


_dtype_codes: dict = {}  # dtype -> dtype.str


def kind(value):
    """What the generated code may specialise on: type, and dtype/ndim for arrays; an array of
    ``LARGE`` elements or more is marked ``"large"`` (its gradient reuses dead buffers), a Dask
    or CuPy array by its type (``runtime.arrays``)."""
    cls = value.__class__
    if cls is np.ndarray:
        dtype = value.dtype
        code = _dtype_codes.get(dtype)
        if code is None:  # dtype.str takes 200 ns, a dict lookup 40: this runs on every call
            if len(_dtype_codes) > 256:
                _dtype_codes.clear()
            code = _dtype_codes[dtype] = dtype.str
        if value.size >= LARGE:
            return (cls, code, value.ndim, "large")
        return (cls, code, value.ndim)
    if cls is tuple or cls is list:
        return (cls, tuple(kind(v) for v in value))
    if cls is dict:
        return (cls, tuple((k, kind(v)) for k, v in value.items()))
    if arrays.library(cls) is not None:
        # a Dask or CuPy array: the code built for an ndarray, which dispatches to it; its type
        # kept apart (no buffers reused: ``runtime.reuse`` is NumPy's)
        return (np.ndarray, value.dtype.str, value.ndim, cls)
    return cls


@contextlib.contextmanager
def large_from(size):
    """Inside the block, arrays of ``size`` elements or more count as large, for the code built
    (``kind``) and for ``runtime.reuse.spare`` alike: the tests and the random-program tester
    run the reuse stage on small arrays with ``large_from(1)``. The cache is cleared on entry
    and on exit, so no code built for the other size is kept."""
    global LARGE
    sizes = LARGE, reuse.LARGE
    clear()
    LARGE = reuse.LARGE = size
    try:
        yield
    finally:
        LARGE, reuse.LARGE = sizes
        clear()


def is_large_kind(k) -> bool:
    """Whether the kind ``k`` is, or holds, a large array."""
    if isinstance(k, tuple):
        if len(k) == 4 and k[3] == "large":
            return True
        return len(k) == 2 and k[0] in (list, tuple, dict) and any(
            is_large_kind(v[1] if k[0] is dict else v) for v in k[1])
    return False


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


def _strong(obj):
    """A callable giving ``obj`` back, as a live weak reference does."""
    return itertools.repeat(obj).__next__


class _Entry:
    """A generated gradient and what it was built from: its own dependencies, and those of
    the generated code it calls (``grad(grad(f))`` calls the code of ``grad(f)``).

    A dependency is ``(where, root, name, path, expected, items)``: ``root`` and ``expected``
    are callables giving the objects back (``expected`` a tuple of them when ``items``), weak
    references where the objects allow them; ``name`` is the global's name for a global. The
    death of any of those objects makes the entry stale, so a live entry's weak references all
    give their objects.
    """

    __slots__ = ("__weakref__", "code", "dependencies", "generated", "stale", "version")

    def __init__(self, fn, version, generated, inherited):
        self.code = _code_of(fn)
        self.version = version
        self.generated = generated
        self.stale = False
        # held here, weakly; the strong list would keep the Cells it names alive
        self.dependencies = [self._dependency(*dep)
                             for dep in itertools.chain(generated.dependencies, inherited)]
        generated.dependencies = ()

    def _dependency(self, where, root, path, obj):
        if isinstance(obj, types.MethodType):
            # an attribute access gives a new bound method each time (Zero.like, a
            # classmethod): the function it binds is what stays the same
            path, obj = tuple(path) + ("__func__",), obj.__func__
        name = None
        if where == "global":
            name, path = path[0], path[1:]
        if isinstance(obj, Items):
            return where, self._hold(root), name, path, tuple(map(self._hold, obj)), True
        return where, self._hold(root), name, path, self._hold(obj), False

    def _hold(self, obj):
        try:
            return weakref.ref(obj, self._expire)
        except TypeError:
            return _strong(obj)

    def _expire(self, _):
        self.stale = True

    def pass_up(self, fn):
        """Make this entry's dependencies those of the build running, if any: code built from
        it is stale when it is."""
        if not _collecting:
            return
        collected = _collecting[-1]
        for where, root, name, path, expected, items in self.dependencies:
            obj = Items(e() for e in expected) if items else expected()
            collected.append((where, root(), path if name is None else (name,) + path, obj))
        root = fn.__func__ if isinstance(fn, types.MethodType) else fn
        collected.append(("code", root, (), self.code))


def _code_of(fn):
    """The code object whose change means ``fn`` was redefined."""
    code = getattr(fn, "__code__", None)
    if code is not None:
        return code
    from mindgrad.compiler.front.source import unbind

    function, _ = unbind(fn)
    return getattr(function, "__code__", None)


def _table(fn):
    """The entries of ``fn``, living as long as ``fn`` does (as long as the instance, for a
    bound method), and the part of the key that names ``fn`` within that table."""
    owner, name = fn, None
    if isinstance(fn, types.MethodType):
        owner, name = fn.__self__, fn.__func__
    try:
        # get first: setdefault makes a weak reference with a callback on every call
        table = _entries.get(owner)
        return (_entries.setdefault(owner, {}) if table is None else table), name
    except TypeError:  # not weak-referenceable (or not hashable): no caching
        return {}, name


# the dependencies of the generated code each running build uses, innermost build last
_collecting: list = []


def lookup(fn, options, args, build):
    """The generated entry for ``fn`` called with ``args``, built by ``build()`` on a miss."""
    table, name = _table(fn)
    key = (name, options, tuple(map(kind, args)))
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
    if entry.stale or _code_of(fn) is not entry.code or \
            entry.version != rules.registry_version():
        return False
    for where, root, name, path, expected, items in entry.dependencies:
        value = root()
        if where == "global":
            value = value.get(name, _MISSING)
        elif where == "cell":
            try:
                value = value.cell_contents
            except ValueError:
                return False
        elif where == "code":
            value = _code_of(value)
        for step in path:
            value = getattr(value, step, _MISSING) if step.__class__ is str else \
                _item(value, step)
        if items:
            if not _same_items(value, expected):
                return False
        elif value is not expected():
            return False
    return not entry.stale  # an object that died during the checks


def _item(value, index):
    """``value[index]`` (an element of a list of Cells), or _MISSING."""
    try:
        return value[index]
    except (IndexError, KeyError, TypeError):
        return _MISSING


def _same_items(value, expected) -> bool:
    try:
        items = Items.of(value)
    except TypeError:
        return False
    return len(items) == len(expected) and all(a is b() for a, b in zip(items, expected))


def stats() -> dict:
    """Counts of gradient builds (parse, transform, compile) and cache hits so far."""
    return dict(_stats)


#: vmap's batched code and jet's Taylor code: function -> {(object, kinds of arguments):
#: batching.Compiled, or why there is none}
batched = weakref.WeakKeyDictionary()
taylor = weakref.WeakKeyDictionary()


def clear():
    """Forget every generated gradient and batched function, and the text read of every
    function (the next build reads and parses it again)."""
    _entries.clear()
    batched.clear()
    taylor.clear()
    source.forget_parsed()


def entries(fn) -> list:
    """``(options, argument kinds, generated)`` of each valid entry of ``fn``, oldest first:
    what has been compiled for it so far."""
    owner, name = fn, None
    if isinstance(fn, types.MethodType):
        owner, name = fn.__self__, fn.__func__
    try:
        table = _entries.get(owner) or {}
    except TypeError:  # not weak-referenceable: nothing is cached for it
        return []
    return [(options, kinds, entry.generated)
            for (found, options, kinds), entry in list(table.items())
            if found == name and _valid(fn, entry)]
