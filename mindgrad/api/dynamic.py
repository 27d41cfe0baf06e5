"""Calls of functions the code does not name: the run-time dispatcher.

The transformations resolve a callee while they build, from the source, wherever the code
names it (a module-level function, a method of ``self``, a gradient function held in a global).
A callee the code reaches only when it runs (an item of a container, a parameter, the result of
an expression) is called through two functions here, in the generated code:

    (reduce_forward, reduce_backward) = call_split(reduce, (0,), sin)
    (y, y_tape) = reduce_forward(sin)
    ...
    d_sin = reduce_backward(y_tape, d_y)

and, in forward mode, ``reduce_tangent = call_tangent(reduce, (0,), sin)`` then
``(y, t_y) = reduce_tangent(sin, t_x0=t_sin)``. ``call_split`` and ``call_tangent`` build,
cache and return the callee's generated code for the callee and the kinds of the arguments it
receives, as the static path builds a callee for the kinds of a call: through a small Python
function calling the callee by a global name (``call_reduce(x0)``), whose code the
transformations build as they build any other. What they return is generated Python, so code
holding such calls is differentiated again by the same route (grad of grad, jvp of grad).

The cache: one trampoline per callee and call shape (positional count, keyword names), and
the generated code per trampoline in ``mindgrad.compiler.cache`` (keyed on argument kinds, and
rebuilt when what it depends on changes, as every gradient is). A plain function is keyed on
what its generated code depends on, not on its identity: its code object, its globals, its
defaults and what its closure cells hold (the identity of a function or object, the kind of an
array or number): a lambda made afresh on every call reuses the code built for the first one
with the same key, given its own closure cells.
"""

from __future__ import annotations

import functools
import keyword as _keyword
import sys
import types
import weakref

from mindgrad import rules
from mindgrad.compiler import cache, driver, expansions
from mindgrad.compiler.finish import emit
from mindgrad.compiler.front import source

__all__ = ["call_split", "call_split_starred", "call_tangent", "call_tangent_starred", "stats"]

_stats = {"trampolines": 0, "rebound": 0}
_trampolines: dict = {}        # callee key -> {call shape: trampoline}, oldest first
_KEPT = 512                    # callee keys kept: the trampolines hold their callees
_rebound = weakref.WeakKeyDictionary()  # a function sharing a key -> {id(entry): functions}
_by_function = weakref.WeakKeyDictionary()  # a plain function -> {argument count: trampoline}
_built_from: dict = {}         # generated file -> the code the dispatcher built for its calls
# the values generated code reads when it runs (source.static_value resolves no other kind)
_VALUE_TYPES = source._DYNAMIC + (type(None),)


def stats():
    """How many trampolines were made and how often generated code was given new closure
    cells (a function made afresh with the key of one built before): counts, for tests."""
    return dict(_stats)


# ----- keys --------------------------------------------------------------------------------------


def _value_key(value):
    """What generated code reading ``value`` depends on: the kind of an array or number (read
    when the code runs), the identity of anything else (resolved when it is built)."""
    if isinstance(value, _VALUE_TYPES):
        if isinstance(value, (int, bool, str, bytes, type(None))):  # may steer the code
            return (type(value), value)
        return ("kind", cache.kind(value))
    return ("id", id(value))


def _default_key(value):
    """A default is filled in where the code is built: its value, or its identity."""
    if isinstance(value, (int, float, complex, bool, str, bytes, type(None))):
        return (type(value), value)
    return ("id", id(value))


def _callee_key(fn):
    """The key of the trampolines of ``fn``: a plain function's code, globals, defaults and
    closure contents (see the module's docstring); anything else's identity."""
    if type(fn) is types.FunctionType:
        cells = []
        for cell in fn.__closure__ or ():
            try:
                cells.append(_value_key(cell.cell_contents))
            except ValueError:  # an empty cell
                cells.append(None)
        defaults = tuple(_default_key(d) for d in fn.__defaults__ or ())
        kwdefaults = tuple((k, _default_key(v)) for k, v in (fn.__kwdefaults__ or {}).items())
        return ("function", fn.__code__, id(fn.__globals__), defaults, kwdefaults,
                tuple(cells))
    return ("object", id(fn))


# ----- trampolines -------------------------------------------------------------------------------


def _trampoline(fn, nargs, keywords, npre=0, prekw=(), spread=()):
    """``def call_<name>(x0, ..., k_k, p0, ...): return <name>(p0, ..., x0, ..., k=k_k, ...)``
    with ``<name>`` bound to ``fn``: what the transformations build for a call of ``fn`` with
    that shape. ``p0, ...`` and ``prekw`` are the arguments a ``functools.partial`` holds,
    passed as parameters too, so that one trampoline serves every partial of ``fn``. The first
    function of a key stands for all functions sharing it; it is kept with the trampoline."""
    key = _callee_key(fn)
    shape = (nargs, keywords, npre, prekw, spread)
    made = _trampolines.get(key)
    if made is None:
        made = _trampolines[key] = {}
        while len(_trampolines) > _KEPT:  # objects made afresh at every call (a Cell)
            del _trampolines[next(iter(_trampolines))]
    found = made.get(shape)
    if found is not None:
        return found
    name = getattr(fn, "__name__", None) or type(fn).__name__
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in name).strip("_") or "fn"
    if name[0].isdigit() or _keyword.iskeyword(name) or name[0] in "xpk":
        name = "fn_" + name
    xs = [f"x{i}" for i in range(nargs)]
    ps = [f"p{i}" for i in range(npre)]
    params = xs + [f"k_{k}" for k in keywords] + ps + [f"p_{k}" for k in prekw]
    lengths = dict(spread)
    items = []
    for i, x in enumerate(xs):
        items.extend([f"{x}[{j}]" for j in range(lengths[i])] if i in lengths else [x])
    passed = ps + items + [f"{k}=k_{k}" for k in keywords] + [f"{k}=p_{k}" for k in prekw]
    text = (f"def call_{name}({', '.join(params)}):\n"
            f"    return {name}({', '.join(passed)})\n")
    found = made[shape] = emit.compiled_function(text, f"call_{name}", {name: fn})
    found.__mindgrad_callee__ = fn
    _stats["trampolines"] += 1
    return found


def _rebind(generated_functions, stand_in, fn):
    """The generated functions, given ``fn``'s closure cells where they hold ``stand_in``'s:
    the code built for ``stand_in`` serving ``fn``, which shares its key (``_callee_key``).
    Generated functions calling each other through cells are copied together."""
    cells = dict(zip(map(id, stand_in.__closure__), fn.__closure__))
    copies = {}  # id of a generated function -> its copy (the originals live meanwhile)

    def copy(g):
        if id(g) in copies:
            return copies[id(g)]
        new_cells = []
        pending = []
        for cell in g.__closure__ or ():
            if id(cell) in cells:
                new_cells.append(cells[id(cell)])
                continue
            try:
                inner = cell.cell_contents
            except ValueError:
                new_cells.append(cell)
                continue
            if isinstance(inner, types.FunctionType) and \
                    emit.is_generated(inner.__code__.co_filename):
                fresh = types.CellType()
                pending.append((fresh, inner))
                new_cells.append(fresh)
            else:
                new_cells.append(cell)
        made = types.FunctionType(g.__code__, g.__globals__, g.__name__, g.__defaults__,
                                  tuple(new_cells))
        made.__kwdefaults__ = g.__kwdefaults__
        made.__qualname__ = g.__qualname__
        copies[id(g)] = made  # before the functions it calls: they may call it back
        for fresh, inner in pending:
            fresh.cell_contents = copy(inner)
        return made

    _stats["rebound"] += 1
    return tuple(copy(g) for g in generated_functions)


def _served(fn, trampoline, entry_key, functions):
    """``functions`` (generated for the trampoline's stand-in) as they serve ``fn``."""
    stand_in = trampoline.__mindgrad_callee__
    if fn is stand_in or type(fn) is not types.FunctionType or not fn.__closure__:
        return functions
    per_fn = _rebound.get(fn)
    if per_fn is None:
        per_fn = _rebound[fn] = {}
    found = per_fn.get(entry_key)
    if found is None or found[0] is not functions:
        found = per_fn[entry_key] = (functions, _rebind(functions, stand_in, fn))
    return found[1]


# ----- the calls generated code makes ------------------------------------------------------------


def _unwrapped(fn):
    """``(callee, arguments, keywords)`` of ``fn``: a ``functools.partial`` opened (nested
    ones too) into the function it calls and the arguments it holds."""
    pre, prekw = (), {}
    while isinstance(fn, functools.partial):
        pre = fn.args + pre
        prekw = {**fn.keywords, **prekw}
        fn = fn.func
    if not callable(fn):
        raise TypeError(f"{type(fn).__name__!r} object is not callable")
    return fn, pre, prekw


def _prepared(fn, positions, args, kw, stars=()):
    """The trampoline for the call, the values it takes (the call's, then the partial's), the
    indices of ``positions`` among them and what to bind into the generated entry. The
    arguments at ``stars`` are sequences the call spreads (``f(a, *seq)``): the trampoline
    takes each whole and spreads its items, so the generated code takes it whole too."""
    fn, pre, prekw = _unwrapped(fn)
    own = {k: v for k, v in prekw.items() if k not in kw}
    keywords = tuple(kw)
    spread = tuple((i, len(args[i])) for i in stars)
    trampoline = _trampoline(fn, len(args), keywords, len(pre), tuple(own), spread)
    values = args + tuple(kw.values()) + pre + tuple(own.values())
    indices = tuple(p if p.__class__ is int else len(args) + keywords.index(p)
                    for p in positions)
    bound = {f"p{i}": v for i, v in enumerate(pre)}
    bound.update((f"p_{k}", v) for k, v in own.items())
    return fn, trampoline, values, indices, bound


def call_split(fn, positions, *args, **kw):
    """``(forward, backward)`` for the call ``fn(*args, **kw)`` differentiated at
    ``positions`` (indices of ``args``, names of ``kw``): ``forward(*args, *kw.values())``
    (every argument by position) returns
    ``(out, tape)``, ``backward(tape, d_out)`` the gradients at ``positions`` (a bare value
    for one position, else a tuple)."""
    return _split(fn, positions, args, kw, ())


def call_split_starred(fn, stars, positions, *args, **kw):
    """``call_split`` for ``fn(*args)`` with the arguments at ``stars`` spread: ``forward``
    and ``backward`` take each of those whole (its gradient is a list, item by item)."""
    return _split(fn, positions, args, kw, stars)


def _split(fn, positions, args, kw, stars):
    result, generated = _split_code(fn, positions, args, kw, stars)
    _note(sys._getframe(2).f_code.co_filename, generated)  # shown with its caller's source
    return result


def _split_code(fn, positions, args, kw, stars):
    if fn.__class__ is types.FunctionType and not kw and not stars:
        # the common call, a plain function with positional arguments: its trampoline by the
        # function itself, with no key to compute (a few microseconds a call, cache included)
        by_count = _by_function.get(fn)
        trampoline = None if by_count is None else by_count.get(len(args))
        if trampoline is not None and fn is not trampoline.__mindgrad_callee__ and \
                _callee_key(fn) != _callee_key(trampoline.__mindgrad_callee__):
            trampoline = None  # a cell or default of fn's now holds another object
        if trampoline is None:
            trampoline = _trampoline(fn, len(args), ())
            _by_function.setdefault(fn, {})[len(args)] = trampoline
        generated = cache.lookup(trampoline, ("split", positions), args,
                                 lambda: _build_split(trampoline, positions, args))
        return _served(fn, trampoline, ("split", positions),
                       (generated.function, generated.backward)), generated
    fn, trampoline, values, indices, bound = _prepared(fn, positions, args, kw, stars)
    generated = cache.lookup(trampoline, ("split", indices), values,
                             lambda: _build_split(trampoline, indices, values))
    forward, backward = _served(fn, trampoline, ("split", indices),
                                (generated.function, generated.backward))
    return ((functools.partial(forward, **bound) if bound else forward), backward), generated


def _note(caller, generated):
    """Remember that generated code in the file ``caller`` calls ``generated`` (what the
    dispatcher gave), so that ``mindgrad.source`` shows it with the caller's code."""
    made = _built_from.get(caller)
    if made is not None and id(generated) in made:
        return
    if not emit.is_generated(caller):
        return
    if made is None:
        made = _built_from[caller] = {}
        while len(_built_from) > _KEPT:
            del _built_from[next(iter(_built_from))]
    for key in [k for k, ref in made.items() if ref() is None]:
        del made[key]
    made[id(generated)] = weakref.ref(generated)


def built_from(files):
    """The text of the code the dispatcher built, when it ran, for calls in the generated
    ``files`` (and for calls in that code, and so on), as ``mindgrad.source`` shows it."""
    parts, seen, todo = [], set(), list(files)
    while todo:
        filename = todo.pop(0)
        for ref in list(_built_from.get(filename, {}).values()):
            generated = ref()
            if generated is None or id(generated) in seen:
                continue
            seen.add(id(generated))
            parts.append(generated.text)
            todo.extend(generated.files)
    if not parts:
        return ""
    return ("\n\n# ---- built when the code ran, by call_split/call_tangent, for the kinds of "
            "the arguments the callee got ----\n\n" + "\n\n".join(p.rstrip() for p in parts)
            + "\n")


def _build_split(trampoline, indices, values):
    return driver.run(trampoline, indices, kinds=[cache.kind(v) for v in values], split=True)


def call_tangent(fn, positions, *args, **kw):
    """The tangent function of the call ``fn(*args, **kw)`` for tangents at ``positions``:
    it takes the call's arguments by position (its keywords' values after the others), then
    the tangents by the keywords ``expansions.dynamic_tangent_names(positions)``, and returns
    ``(out, tangent of out)``."""
    return _tangent(fn, positions, args, kw, ())


def call_tangent_starred(fn, stars, positions, *args, **kw):
    """``call_tangent`` for ``fn(*args)`` with the arguments at ``stars`` spread."""
    return _tangent(fn, positions, args, kw, stars)


def _tangent(fn, positions, args, kw, stars):
    fn, trampoline, values, indices, bound = _prepared(fn, positions, args, kw, stars)
    generated = cache.lookup(trampoline, ("tangent", indices), values,
                             lambda: _build_tangent(trampoline, positions, indices, len(values)))
    _note(sys._getframe(2).f_code.co_filename, generated)
    (function,) = _served(fn, trampoline, ("tangent", indices), (generated.function,))
    return functools.partial(function, **bound) if bound else function


def _build_tangent(trampoline, positions, indices, nargs):
    generated = driver.run_forward(trampoline, indices, nargs=nargs)
    expected = expansions.dynamic_tangent_names(positions)
    if list(generated.tangent_names) != expected:  # the trampoline's parameters name them
        raise RuntimeError(f"the tangent function of {trampoline.__name__} takes "
                           f"{generated.tangent_names}, not {expected}")
    return generated


expansions.register_dynamic(call_split=call_split, call_tangent=call_tangent,
                            call_split_starred=call_split_starred,
                            call_tangent_starred=call_tangent_starred)
rules.nondifferentiable(call_split, call_tangent, call_split_starred, call_tangent_starred)
