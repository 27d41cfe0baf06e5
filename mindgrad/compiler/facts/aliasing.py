"""Which names of a normalized function may share memory, and the writes that would show it.

NumPy arrays are mutable: after ``z = y``, ``v = y[0:2]``, ``v = y.T`` or ``for row in m``,
writing into one name changes what another reads. The transformations follow values, not
memory, so such a write is refused at the user's line when another name that may share the
memory is read afterwards, or when the memory belongs to the caller:

* ``y += v`` (an in-place operator, marked on the normalized assignment: ``marks.py``) on a
  name that may hold an array: refused if another live name, or an argument of the function,
  may share ``y``'s memory. On a fresh array it is the rebinding ``y = y + v`` it is compiled
  as.
* ``y[idx] = v``: refused if another name that may share ``y``'s memory is read afterwards.
  For a list or dict ``y``, the write rebinds a slot: only a container that may be ``y``
  itself or holds it changes, not the arrays it holds. A container made by a display
  (``[a, b]``, ``{'u': a}``) is a new object, so another display holding the same arrays does
  not change (``displays``, ``holding``).
  ``sharing_writes`` tells the reverse stage, per such write, which names share ``y``: the
  backward sweep may read them too; ``argument_writes`` which writes may reach an argument:
  a called function cannot write into its caller's array (the caller's code would not see it).

The relation is a may-relation, grown statement by statement: a name, a subscript, a view
attribute (``.T``, ``.real``), a view method or function (``reshape``, ``np.asarray``, ...), a
container display, a call of a user function, ``xs.append(v)`` and a ``for`` target share with
their operands; arithmetic and other calls give fresh values.

A subscript follows NumPy's rules: an index with an advanced part (an integer or boolean array,
a list, a comparison's result, ``np.nonzero(...)``; alone or beside slices, ``...`` and
``None``) copies, and indexing every axis of an array with numbers gives a number (a name in
``scalars``); basic indexing (slices, ``...``, ``None``, fewer numbers than axes) gives a view.
An index whose kind the code does not show (a name that may hold a slice or an array) counts
as a view: the write is refused, never followed wrongly. Numbers alone (``v = x[-3]``) give a
number or a view, as ``x`` has as many axes or more: an in-place operator on ``v`` is then
checked at run time (``caller_write`` with the live name it would change), as on an argument.
"""

from __future__ import annotations

import gast
import numpy as np

from mindgrad import rules
from mindgrad.compiler import astutil as A
from mindgrad.compiler import marks
from mindgrad.runtime.origin import Origin, origin

_VIEW_ATTRS = frozenset({"T", "mT", "real", "imag", "flat", "base"})
_VIEW_METHODS = frozenset({"reshape", "ravel", "transpose", "view", "squeeze", "swapaxes",
                           "diagonal", "get", "pop", "setdefault", "values", "items", "keys",
                           "__getitem__"})
_VIEW_FUNCTIONS = (np.reshape, np.ravel, np.transpose, np.asarray, np.asanyarray, np.squeeze,
                   np.swapaxes, np.moveaxis, np.rollaxis, np.atleast_1d, np.atleast_2d,
                   np.atleast_3d, np.expand_dims, np.broadcast_to, np.diagonal, np.real, np.imag,
                   list, tuple, dict, reversed, sorted, zip, enumerate, iter)
# the methods that change a list or dict in place
_CONTAINER_WRITES = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort",
                               "reverse", "update", "setdefault", "popitem"})
_CALLER = "<the caller's argument>"  # a pseudo name: memory the caller holds
# NumPy functions whose result, used as an index, is advanced (an array or a tuple of arrays,
# a NumPy bool): ``x[f(...)]`` is a copy
_INDEX_ARRAYS = (np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.arange,
                 np.nonzero, np.flatnonzero, np.argwhere, np.where, np.argsort, np.ix_, np.unique,
                 np.isnan, np.isinf, np.isfinite, np.isclose, np.logical_and, np.logical_or,
                 np.logical_not, np.logical_xor, np.greater, np.greater_equal, np.less,
                 np.less_equal, np.equal, np.not_equal, np.random.permutation)


def _is_view_function(fn) -> bool:
    return any(fn is f for f in _VIEW_FUNCTIONS)


class Aliases:
    """Runs over a normalized function once; ``fail(node, message)`` raises at a statement
    (None: only ``sharing_writes`` is wanted, as for generated code differentiated again,
    which writes only where the user's code, already checked, does)."""

    def __init__(self, fdef, scalars, containers, resolve, fail, mutable_params, caller_write):
        self.scalars = set(scalars)
        self.containers = set(containers)
        self.element_of = {}       # name -> the list or dict it was taken from (x = xs[i])
        self.resolve = resolve
        self.index_arrays = _index_array_names(fdef, resolve)
        self.numbers_or_views = _numbers_or_views(fdef, scalars)
        self.fail = fail or (lambda node, message: None)
        # an in-place operator on what may be a caller's array (or a number: only the run can
        # tell): caller_write(statement, name)
        self.caller_write = caller_write
        self.live_after = {}       # id(statement) -> names read after it
        self.sharing_writes = {}   # id(index assignment) -> names that may share its base
        self.argument_writes = {}  # id(index assignment) -> its base, which may be an argument
        # id(statement) -> (its receiver, the method): a method changing a list or dict in
        # place (xs.append(v), v = xs.pop()) on what may be an argument
        self.argument_methods = {}
        # containers the function made itself, on every path: a display, list(...), dict(...),
        # a .copy(), a comprehension; a method writing into one changes no caller's container
        self.own = set()
        _liveness(fdef.body, set(), self.live_after)
        self.mutable_params = set(mutable_params)
        self.groups = {p: frozenset((p, _CALLER)) for p in mutable_params}
        # a container made by a display ([a, b], {'k': a}, extended by append): the names it
        # holds. It is a new object: rebinding one of its slots changes no other container,
        # but those holding it (or another name for it, never a display); with the names held,
        # where the object was made: the displays (statements) it may come from. Names from no
        # common display are different objects. name -> (held, made)
        self.displays = {}
        self.block(fdef.body)

    # ----- the relation --------------------------------------------------------------------

    def group(self, name):
        return self.groups.get(name, frozenset((name,)))

    def bind(self, name, sources, value=None):
        """``name`` now shares memory with ``sources`` (names; its own old value if listed).
        An item of a list or dict (``value``) is noted apart: writing an item of the list
        rebinds a slot, but writing into the item in place changes the list's."""
        self.element_of.pop(name, None)
        if _makes_container(value) or isinstance(value, gast.Name) and value.id in self.own:
            self.own.add(name)
        elif value is not None or name not in sources:
            self.own.discard(name)
        container = value.value if isinstance(value, gast.Subscript) else value
        if isinstance(container, gast.Name) and container.id in self.containers:
            self.element_of[name] = container.id
        if isinstance(value, gast.Name):  # another name for the same object
            display = self.displays.get(value.id)
        else:
            held = self.concatenated(value) if isinstance(value, gast.BinOp) else \
                _held_names(value)
            display = None if held is None else (held, frozenset((id(value),)))
        if display is None:
            self.displays.pop(name, None)
        else:
            self.displays[name] = display
        joined = frozenset((name,)).union(*(self.group(s) for s in sources))
        # the relation is symmetric (a member of x's group has x in its own), so the groups
        # holding name are those of its members: no walk over every group per binding
        for other in self.groups.get(name, ()):
            if other != _CALLER and other != name:
                self.groups[other] = self.groups[other] - {name}
        for member in joined - {name, _CALLER}:
            self.groups[member] = self.group(member) | {name}
        self.groups[name] = joined

    def concatenated(self, value):
        """The names a list or tuple made by ``+`` or ``*`` holds, where its operands are
        displays, containers made by displays, or numbers (``xs * 2``), one of them at least a
        container; None otherwise. Like a display, it is a new object, whatever its operands
        hold."""
        if not isinstance(value.op, (gast.Add, gast.Mult)):
            return None
        held, container = set(), False
        for part in (value.left, value.right):
            if isinstance(part, gast.Name) and part.id in self.containers:
                display = self.displays.get(part.id)
                inner = None if display is None else display[0]
            elif isinstance(part, gast.Constant) and isinstance(part.value, int) or \
                    isinstance(part, gast.Name) and part.id in self.scalars:
                continue
            else:
                inner = _held_names(part)
            if inner is None:
                return None
            held |= inner
            container = True
        return frozenset(held) if container else None

    def sources(self, value, target=None):
        """The names whose memory ``value`` (assigned to ``target``) may share (empty: a fresh
        value)."""
        if isinstance(value, gast.Name):
            return [value.id]
        if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
            base = value.value.id
            if base in self.containers or target in self.scalars or \
                    _is_advanced(value.slice, self.index_arrays, self.resolve):
                return []  # an item slot, a number, or NumPy's copy (advanced indexing)
            return [base]
        if isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name):
            fresh = value.attr not in _VIEW_ATTRS and self.resolve(value) is not None
            return [] if fresh or value.attr in ("shape", "size", "ndim", "dtype") else \
                [value.value.id]
        if isinstance(value, (gast.Tuple, gast.List)):
            return [e.id for e in value.elts if isinstance(e, gast.Name)]
        if isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Add, gast.Mult)):
            # xs + ys, xs * 2: a new list or tuple holding the very items of its operands
            return [n.id for n in (value.left, value.right)
                    if isinstance(n, gast.Name) and n.id in self.containers]
        if isinstance(value, gast.Dict):
            return [v.id for v in value.values if isinstance(v, gast.Name)]
        if isinstance(value, gast.Call):
            func = value.func
            names = [a.id for a in value.args if isinstance(a, gast.Name)]
            if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and \
                    self.resolve(func) is None:
                return [func.value.id] if func.attr in _VIEW_METHODS else []
            fn = self.resolve(func)
            if _is_view_function(fn) or (_is_python_function(fn) and rules.lookup(fn) is None):
                return names  # a user function may return its argument, or a view of it
        return []

    # ----- statements ----------------------------------------------------------------------

    def block(self, stmts):
        for s in stmts:
            self.stmt(s)

    def stmt(self, s):
        self.method_write(s)
        if isinstance(s, gast.Assign):
            target = s.targets[0]
            if isinstance(target, gast.Name):
                if marks.is_in_place(s) and (target.id not in self.scalars or
                                                     _CALLER in self.group(target.id)):
                    self.in_place(s, target.id)
                self.bind(target.id, self.sources(s.value, target.id), s.value)
            elif isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
                self.index_write(s, target.value.id)
        elif isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
            func = s.value.func
            if isinstance(func, gast.Attribute) and func.attr == "append" and \
                    isinstance(func.value, gast.Name):
                base = func.value.id
                appended = gast.List(elts=s.value.args, ctx=gast.Load())
                display = self.displays.get(base)
                self.bind(base, [base] + self.sources(appended), None)
                if display is not None and _held_names(appended) is not None:
                    # the same object, grown
                    self.displays[base] = (display[0] | _held_names(appended), display[1])
        elif isinstance(s, gast.If):
            before, displays, own = dict(self.groups), dict(self.displays), set(self.own)
            self.block(s.body)
            after_body, self.groups = self.groups, dict(before)
            body_displays, self.displays = self.displays, displays
            own_after_body, self.own = self.own, own
            self.block(s.orelse)
            self.merge(after_body, body_displays)
            self.own &= own_after_body
        elif isinstance(s, (gast.For, gast.While)):
            self.loop(s)

    def merge(self, other, other_displays):
        """Join the relation of another path (a branch, a loop's earlier runs) into this one:
        a container is a display on both paths (or bound on one only: the other cannot read
        it) or its contents are not known."""
        bound_here = set(self.groups)
        for name, members in other.items():
            self.groups[name] = self.group(name) | members
        for name in set(self.displays) | set(other_displays):
            display, other_display = self.displays.get(name), other_displays.get(name)
            if name not in bound_here:
                display = other_display
            elif name not in other:
                other_display = display
            if display is None or other_display is None:
                self.displays.pop(name, None)
            else:
                self.displays[name] = (display[0] | other_display[0],
                                       display[1] | other_display[1])

    def loop(self, s):
        while True:
            before, displays, own = dict(self.groups), dict(self.displays), set(self.own)
            if isinstance(s, gast.For) and isinstance(s.target, gast.Name):
                self.bind(s.target.id, self.sources(s.iter), s.iter)
            self.block(s.body)
            self.merge(before, displays)
            self.own &= own
            if self.groups == before and self.displays == displays and self.own == own:
                break
        self.block(s.orelse)

    # ----- the writes ----------------------------------------------------------------------

    def in_place(self, s, name):
        others = self.group(name) - {name}
        if name in self.element_of:
            others |= self.group(self.element_of[name])
        if _CALLER in others:  # for a number, the rebinding is exact: nothing else to check
            self.caller_write(s, name)
            return
        live = sorted(others & self.live_after.get(id(s), set()))
        if live and name in self.numbers_or_views:  # x[i]: a number, or a view of x
            self.caller_write(s, name, live[0])
            return
        if live:
            self.fail(s, f"the in-place operator on {name!r} also changes {live[0]!r}, which "
                         f"may share its memory (another name for the same array, a view or "
                         f"a container holding it) and is read afterwards; mindgrad cannot "
                         f"follow that write: write {name} = {name} <op> ... instead, or copy "
                         f"it first ({name} = {name}.copy())")

    def method_write(self, s):
        """Note ``s`` in ``argument_methods`` where it calls a method that changes a list or
        dict in place on what may be the caller's argument."""
        call = s.value if isinstance(s, (gast.Expr, gast.Assign)) else None
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and
                isinstance(call.func.value, gast.Name)):
            return
        if call.func.attr not in _CONTAINER_WRITES or self.resolve(call.func) is not None:
            return
        base = call.func.value.id
        if base not in self.own and (_CALLER in self.group(base) or base in self.mutable_params):
            self.argument_methods[id(s)] = (base, call.func.attr)

    def index_write(self, s, base):
        others = set(self.group(base) - {base})
        if base in self.element_of:  # a = xs[i]; a[j] = v writes into what xs holds
            others |= self.group(self.element_of[base])
        if base in self.containers:  # a list's slot is rebound: only the same list changes
            others &= self.containers
            if base in self.displays:
                others = self.holding(base, others)
        # a container made here (a display, list(...), a .copy()) is no caller's: a write into
        # it (args = list(args); args[0] = v) changes no argument
        if base not in self.own and (_CALLER in others or base in self.mutable_params or
                                     others & self.mutable_params):
            self.argument_writes[id(s)] = base
        others.discard(_CALLER)
        live = sorted(others & self.live_after.get(id(s), set()))
        if live:
            self.fail(s, f"index assignment into {base!r} also changes {live[0]!r}, another "
                         f"name for the same array (or a view of it, or a container holding "
                         f"it), read afterwards: mindgrad cannot follow a write through two "
                         f"names; make a copy ({base} = {base}.copy(), or copy the view)")
        self.sharing_writes[id(s)] = others


    def holding(self, base, containers):
        """Of ``containers`` (which may share memory with ``base``, a container made by a
        display), those a slot rebound in ``base`` changes: those that may be the same object
        as ``base`` or another of these (not made by displays, or by the same display) and
        those holding one of these. A display that merely holds what ``base`` holds (``[x]``
        and ``{'u': x}``) does not change."""
        changed, grown = {base}, True
        while grown:
            grown = False
            for c in containers - changed:
                display = self.displays.get(c)
                if display is None or display[0] & changed or any(
                        m not in self.displays or display[1] & self.displays[m][1]
                        for m in changed):
                    changed.add(c)
                    grown = True
        return changed - {base}


def _makes_container(value):
    """Whether ``value`` is a new list or dict: a display, a comprehension, ``list(...)``,
    ``dict(...)`` or a ``.copy()``."""
    if isinstance(value, (gast.List, gast.Dict, gast.ListComp, gast.DictComp)):
        return True
    if not isinstance(value, gast.Call):
        return False
    func = value.func
    if isinstance(func, gast.Attribute):
        return func.attr == "copy" and not value.args
    return isinstance(func, gast.Name) and func.id in ("list", "dict")


def _held_names(value):
    """The names a display (a list, tuple or dict display, displays nested in it) holds, or
    None if ``value`` is not such a display (or holds other expressions, which may be a
    container held elsewhere)."""
    if isinstance(value, (gast.List, gast.Tuple)):
        parts = value.elts
    elif isinstance(value, gast.Dict):
        parts = list(value.values) + [k for k in value.keys if k is not None]
        if any(k is None for k in value.keys):  # {**other}: another dict's items
            return None
    else:
        return None
    held = set()
    for part in parts:
        if isinstance(part, gast.Name):
            held.add(part.id)
        elif isinstance(part, gast.Constant):
            continue
        else:
            inner = _held_names(part)
            if inner is None:
                return None
            held |= inner
    return frozenset(held)


def _is_python_function(fn) -> bool:
    """Python code that may return its argument; NumPy's functions are not, on any NumPy (on
    NumPy 1.x many are Python wrappers: ``np.zeros_like(m)`` does not share ``m``)."""
    return callable(fn) and hasattr(fn, "__code__") and origin(fn) is not Origin.NUMPY


def _is_index_array(value, arrays, resolve) -> bool:
    """Whether ``value``, used as an index, is advanced: a list display or comprehension, a
    comparison or ``not`` (a bool: ``x[True]`` is advanced too), a name always holding one, or
    a call of a function in ``_INDEX_ARRAYS``."""
    if isinstance(value, (gast.List, gast.ListComp, gast.Compare)):
        return True
    if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.Not):
        return True
    if isinstance(value, gast.Name):
        return value.id in arrays
    if isinstance(value, gast.Constant):
        return isinstance(value.value, bool)
    if isinstance(value, gast.Call):
        fn = resolve(value.func)
        return any(fn is f for f in _INDEX_ARRAYS)
    return False


def _is_advanced(index, arrays, resolve) -> bool:
    """Whether NumPy indexes with ``index`` by advanced indexing (a copy): one of its parts is
    an index array (see ``_is_index_array``)."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    return any(_is_index_array(p, arrays, resolve) for p in parts)


def _index_array_names(fdef, resolve) -> set:
    """Names whose every assignment gives an index array (``_is_index_array``): the greatest
    fixed point, as for ``activity.scalar_names``; parameters and loop targets are not."""
    defs, plain = {}, set()  # plain: the targets of ``name = value``
    for node in A.walk(fdef):
        if isinstance(node, gast.Assign):
            for target in node.targets:
                if isinstance(target, gast.Name):
                    defs.setdefault(target.id, []).append(node.value)
                    plain.add(id(target))
    for node in A.walk(fdef.body):  # any other binding: a loop, unpacking, ``with``, ``:=``
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) and \
                id(node) not in plain:
            defs.setdefault(node.id, []).append(None)
    arrays = set(defs) - {a.id for a in fdef.args.args + fdef.args.kwonlyargs}
    while True:
        dropped = {n for n in arrays if any(v is None or not _is_index_array(v, arrays, resolve)
                                            for v in defs[n])}
        if not dropped:
            return arrays
        arrays -= dropped


def _numbers_or_views(fdef, scalars) -> set:
    """Names whose every assignment (but the in-place operators on them, which keep what
    they hold) indexes an array with numbers only (``x[i]``, ``x[0, j]``): a number when that
    indexes every axis, else a view, which only the run can tell."""
    defs, direct = {}, set()
    for node in A.walk(fdef):
        if isinstance(node, gast.Assign):
            for target in node.targets:
                if isinstance(target, gast.Name):
                    direct.add(id(target))
                    if not marks.is_in_place(node):
                        defs.setdefault(target.id, []).append(node.value)
    other = {n.id for n in A.walk(fdef.body) if isinstance(n, gast.Name) and
             isinstance(n.ctx, gast.Store) and id(n) not in direct}  # loops, unpacking, ...
    other |= {a.id for a in fdef.args.args + fdef.args.kwonlyargs}

    def number(part):
        if isinstance(part, gast.UnaryOp) and isinstance(part.op, (gast.USub, gast.UAdd)):
            part = part.operand
        return isinstance(part, gast.Constant) and type(part.value) is int or \
            isinstance(part, gast.Name) and part.id in scalars

    def numbers_only(value):
        if not (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name)):
            return False
        parts = value.slice.elts if isinstance(value.slice, gast.Tuple) else [value.slice]
        return bool(parts) and all(number(p) for p in parts)

    return {name for name, values in defs.items()
            if name not in other and all(numbers_only(v) for v in values)}


def _liveness(stmts, live, out):
    """Names read after each statement (``out[id(s)]``); returns those read before ``stmts``."""
    for s in reversed(stmts):
        out[id(s)] = set(live)
        if isinstance(s, gast.If):
            live = _liveness(s.body, set(live), out) | _liveness(s.orelse, set(live), out) | \
                A.names_in(s.test, gast.Load)
        elif isinstance(s, (gast.For, gast.While)):
            header = A.names_in(s.iter if isinstance(s, gast.For) else s.test, gast.Load)
            entry = set(live) | header
            while True:  # the body may run again: what it reads at its start is live at its end
                new = _liveness(s.body, set(entry), out) | entry
                if new == entry:
                    break
                entry = new
            _liveness(s.orelse, set(live), out)
            live = entry
        else:
            stores = {t.id for t in getattr(s, "targets", ()) if isinstance(t, gast.Name)}
            live = (live - stores) | A.names_in(s, gast.Load)
    return live
