"""What the passes ask of a normalized function before they transform it.

* ``Resolver``: what its names and callee expressions refer to before it runs;
* ``analyse``: the facts both passes need, computed once (``Analysis``);
* ``user_code``: whether a call runs the user's own code (a function, a method, a Cell, a
  callable object, a gradient object), which is differentiated from its source rather than by
  a rule (never another library's: ``source.foreign_library``);
* ``in_place_write``: why an expression statement writing into an array cannot be followed;
  ``argument_write``: where a function called for its effect writes into its argument.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect

import gast

from mindgrad import runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler import expansions, objects
from mindgrad.compiler.facts import activity
from mindgrad.compiler.front import source, specialise
from mindgrad.runtime.origin import Origin, origin

_MUTATING_METHODS = frozenset({"extend", "insert", "remove", "sort", "reverse", "clear", "fill",
                               "update", "setdefault", "popitem", "resize", "put", "itemset"})
# the methods among them that write their arguments' values into the object, and what to
# write instead
_WRITING_METHODS = frozenset({"extend", "insert", "fill", "update", "setdefault", "put",
                              "itemset"})
_INSTEAD = {"fill": "a[...] = x, np.full(a.shape, x)", "put": "a[i] = x",
            "itemset": "a[i] = x", "update": "d['k'] = x, {**d, 'k': x}",
            "setdefault": "d['k'] = x"}


def _mutating_functions():
    import numpy as np

    return (np.copyto, np.put, np.place, np.putmask, np.fill_diagonal, np.put_along_axis,
            np.random.shuffle)


def in_place_write(call, resolve, is_active):
    """Why the expression statement ``call`` cannot be differentiated, or None: it writes into
    an array or a list in place (``x.sort()``, ``np.copyto(y, x)``, ``np.add.at(y, i, x)``)
    with a differentiated value, a data flow the transformation does not see."""
    import numpy as np

    func = call.func
    if isinstance(func, gast.Attribute) and func.attr in _MUTATING_METHODS and \
            isinstance(func.value, gast.Name) and is_active(func.value):
        return (f"the in-place method .{func.attr}() on a differentiated value is not "
                "supported; build a new value instead")
    if isinstance(func, gast.Attribute) and func.attr in _WRITING_METHODS and any(
            is_active(a) for a in call.args + [k.value for k in call.keywords]):
        # out.fill(x), d.update(k=x) into a container the derivative does not follow
        into = func.value.id if isinstance(func.value, gast.Name) else "its object"
        instead = _INSTEAD.get(func.attr, "xs = xs + [x]")
        return (f"the in-place method .{func.attr}() writes a differentiated value into "
                f"{into}, which mindgrad cannot differentiate; write it by indexing or build "
                f"a new value instead ({instead})")
    fn = resolve(func)
    ufunc_at = getattr(fn, "__name__", None) == "at" and \
        isinstance(getattr(fn, "__self__", None), np.ufunc)
    if (ufunc_at or any(fn is f for f in _mutating_functions())) and \
            any(is_active(a) for a in call.args):
        name = (f"np.{fn.__self__.__name__}.at" if ufunc_at
                else f"np.{getattr(fn, '__name__', 'function')}")
        return (f"{name}() writes into its first argument in place, which mindgrad cannot "
                "differentiate; build a new value instead (x[i] = v, np.where, np.bincount)")
    return None


def argument_write(fn):
    """``(parameter, line)`` where ``fn`` writes into one of its parameters in place (an index
    assignment into it, an in-place operator on it, or a mutating method on it), or None.
    Called as an expression statement, its result unused, such a function changes the caller's
    value through a data flow the transformations do not follow."""
    try:
        src = source.get_source(fn)
    except Exception:  # noqa: BLE001  no source: the call is refused or ruled elsewhere
        return None
    args = src.tree.args
    params = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs
              if isinstance(a, gast.Name)}
    for node in gast.walk(src.tree):
        bases = []
        if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            # p += v writes into an array p (and only rebinds a number, which a call made for
            # its effect cannot mean)
            bases = [node.target]
        elif isinstance(node, (gast.Assign, gast.AugAssign)):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            bases = [t for t in targets if isinstance(t, gast.Subscript)]
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                node.func.attr in _MUTATING_METHODS | {"append", "pop"}:
            bases = [node.func]
        for base in bases:
            while isinstance(base, (gast.Subscript, gast.Attribute)):
                base = base.value
            if isinstance(base, gast.Name) and base.id in params:
                return base.id, src.first_line + node.lineno - 1
    return None


def argument_write_error(fn):
    """Why an expression statement calling ``fn`` cannot be differentiated, or None."""
    found = argument_write(fn)
    if found is None:
        return None
    name = getattr(fn, "__name__", "the function")
    return (f"{name}() writes into its argument {found[0]!r} in place (line {found[1]}), a "
            f"change mindgrad cannot follow across the call when its result is unused; "
            f"change a copy there and return it ({found[0]} = {found[0]}.copy(); ...; "
            f"x = {name}(...))")


class Resolver:
    """What the names and callees of the normalized function refer to."""

    def __init__(self, src, local_names, reads_weights=None):
        self.src = src
        self.locals = local_names
        self._reads_weights = reads_weights
        self.values = frozenset()  # locals known to hold arrays, numbers or containers

    def reads_weights(self, func) -> bool:
        """Whether the call of ``func`` reaches a requested weight (Weights.read_by_call)."""
        return bool(self._reads_weights and self._reads_weights(self.src, self.locals, func))

    def __call__(self, func):
        """The object a callee expression denotes before the function runs, or None."""
        obj = source.static_value(self.src, func, self.locals)
        return None if obj is source.MISSING else obj

    def key(self, node):
        """The name of a value: ``x`` for a local, ``self.w`` for a static chain; else None."""
        if isinstance(node, gast.Name):
            return node.id
        if isinstance(node, gast.Attribute) and self(node) is not None:
            return source.dotted(node)
        return None

    def receiver(self, func):
        """The array whose method ``func`` calls (a local, or a static chain to an array)."""
        if not isinstance(func, gast.Attribute):
            return None
        base = func.value
        if isinstance(base, gast.Name) and base.id in self.locals and base.id not in \
                self.src.bound:
            return base
        import numpy

        if isinstance(self(base), numpy.ndarray):
            return base
        return None

    def known_value(self, receiver) -> bool:
        """Whether the receiver of a method call (``receiver``'s answer) is known, when the code
        is built, to be an array, a number or a container, whose methods have rules; else it
        may be an object of the user's, whose methods are the user's code."""
        return not isinstance(receiver, gast.Name) or receiver.id in self.values


@dataclasses.dataclass(frozen=True)
class Analysis:
    """The facts about a normalized function that both passes need, computed once."""

    active: set        # names whose values depend on a differentiated input
    defs: dict         # name -> how many statements assign it
    indexed: set       # names read element by element, or taken apart as containers
    scalars: set       # names that hold Python or NumPy numbers
    containers: set    # names that hold lists, tuples or dicts
    arrays: dict       # array argument -> its ndim
    numeric: set       # names whose gradients ``+`` may accumulate (numbers or arrays)
    values: frozenset = frozenset()  # method receivers known to be arrays, numbers, containers
    reals: frozenset = frozenset()   # names known to hold real values (activity.real_names)


def analyse(src, fdef, active_params, scalar_params, container_params=(), reads_weights=None,
            array_ndims=None, real_params=()) -> Analysis:
    """The ``Analysis`` of a normalized function."""
    local_names = {a.id for a in fdef.args.args + fdef.args.kwonlyargs} | \
        A.assigned_names(fdef.body)
    resolve = Resolver(src, local_names, reads_weights)
    containers = activity.container_names(fdef, set(container_params))
    # in generated code, what item()/add_at()/push_grad() take apart is a container gradient
    takes_apart = (runtime.item, runtime.add_at, runtime.setitem_grad, runtime.pop_grad,
                   runtime.push_grad, runtime.concat_grads)
    maybe_containers = set()  # gradients accumulated with add(), which handles structure
    for node in A.walk(fdef):
        if isinstance(node, gast.Call) and node.args and isinstance(node.args[0], gast.Name) \
                and resolve(node.func) in takes_apart:
            maybe_containers.add(node.args[0].id)
        # what a mindgrad helper returns in generated code may be a container gradient
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name) and \
                isinstance(node.value, gast.Call):
            if origin(resolve(node.value.func)) in (Origin.RUNTIME, Origin.RULES):
                maybe_containers.add(node.targets[0].id)
    scalars = activity.scalar_names(fdef, set(scalar_params), resolve, array_ndims)
    numeric = activity.numeric_names(fdef, set(scalar_params) | set(array_ndims or ()), resolve)
    # a differentiated parameter is a number, an array or a container of them (an object
    # holding none is a constant: no seed of the activity)
    resolve.values = frozenset(numeric | scalars | containers | set(active_params))
    return Analysis(active=activity.active_names(fdef, active_params, resolve),
                    defs=activity.defined_names(fdef),
                    indexed=activity.indexed_names(fdef) | containers | maybe_containers,
                    scalars=scalars, containers=containers, arrays=dict(array_ndims or {}),
                    numeric=numeric | scalars, values=resolve.values,
                    reals=frozenset(activity.real_names(fdef, set(real_params), resolve)))


def call_shape(fn, obj, call):
    """What the callee's ``*args`` and ``**kw`` receive in ``call`` (``specialise.call_shape``)."""
    return specialise.call_shape(fn, obj is not None, len(call.args),
                             [k.arg for k in call.keywords])


def user_code(target, func_node, allow_helpers=False, nargs=None, keywords=()):
    """``(function, bound self, self expression)`` if calling ``target`` runs user code (or,
    with ``allow_helpers``, a mindgrad helper with Python source, as generated code calls).
    A gradient function (what ``grad`` returns) runs its generated code, as Python."""
    import types

    python = expansions.python_of(target, None, nargs, keywords)  # grad(f), jacrev(f)
    if python is not None:
        return python, None, None

    if isinstance(target, functools.partial):
        return source.as_function(target), None, None
    def is_user(fn):
        return (_is_python_function if allow_helpers else _is_user_function)(fn) and \
            source.foreign_library(fn) is None
    if objects.is_module(target):
        construct = getattr(type(target), "construct", None)
        return (construct, target, func_node) if is_user(construct) else None
    if isinstance(target, types.MethodType):
        fn = target.__func__
        if not is_user(fn):
            return None
        if isinstance(func_node, gast.Attribute):
            receiver = func_node.value
        elif isinstance(func_node, gast.Name):  # a bound method held in a name: fn.__self__
            receiver = A.attr(A.load(func_node.id), "__self__")
        else:
            return None
        return fn, target.__self__, receiver
    if is_user(target):
        return target, None, None
    call = inspect.getattr_static(type(target), "__call__", None)
    if not isinstance(target, type) and is_user(call):
        return call, target, func_node
    return None


def as_method(src, call, callee):
    """``callee`` as a method of the object bound in ``src`` (``self`` of a Cell) when a plain
    function is given it first: a decorator's wrapper calling the method it wraps,
    ``fn(*args)``. Its reads of weights through ``self`` are then known."""
    if callee is None or callee[1] is not None or not call.args:
        return callee
    first = call.args[0]
    if isinstance(first, gast.Name) and first.id in src.bound:
        return callee[0], src.bound[first.id], first
    return callee


def without_receiver(call, self_expr):
    """``call`` without its first argument when that argument is the receiver (``as_method``)."""
    if self_expr is None or not call.args or call.args[0] is not self_expr:
        return call
    return gast.Call(func=call.func, args=call.args[1:], keywords=call.keywords)


def _is_python_function(fn) -> bool:
    return inspect.isfunction(fn) and origin(fn) is not Origin.NUMPY


def _is_user_function(fn) -> bool:
    if not inspect.isfunction(fn):
        return False
    return origin(fn) not in (Origin.NUMPY, Origin.RULES, Origin.RUNTIME)
