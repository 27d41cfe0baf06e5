"""How a pass reaches the user functions its function calls.

A pass never builds a callee. It asks ``Callees`` for the names the generated call will use:

    names = self.callees.names_for(fn, obj, mask, scalar, shape)
    # (y, y_tape) = names.forward(self.block, x); later names.backward(y_tape, d_y)

The names are fixed at once, so the caller's code can be written; the request is recorded, and
the driver builds every requested function after the caller's pass (see driver.Build). Until
all are compiled, the caller's code reaches them through a ``Placeholder`` (``placeholders``).

A request is identified by what makes the generated code differ: the function's code, what its
``self`` holds (``static_parts``), which arguments are active or numbers, the call's shape and
whether the caller is the user's code. Calls alike share one built function.
"""

from __future__ import annotations

import dataclasses
import functools
import types

import numpy as np

from mindgrad.compiler import naming

SPLIT = "split"              # a forward function and a backward function (reverse mode)
GRADIENT = "gradient"        # one function returning the result and the gradients (grad)
TANGENT = "tangent"          # a function returning the result and its tangent (forward mode)


@dataclasses.dataclass(frozen=True)
class Request:
    """A function of the user's to transform, and the generated functions it becomes.

    ``active``, ``scalars`` and ``containers`` are positions among the parameters (a bound
    ``self`` counted), ``arrays`` maps positions of float arrays to their ndim; ``shape`` is
    the call shape (``specialise.call_shape``); ``arguments_shared`` is set when the user's own
    code calls it, whose arrays it must not write into. ``opaque`` holds the active positions
    of an entry given an object with nothing to differentiate (``activity.is_opaque_kind``):
    constants, whose gradient is zero."""

    mode: str
    fn: types.FunctionType
    obj: object
    active: tuple
    names: tuple                 # SPLIT: (forward, backward); GRADIENT, TANGENT: (entry,)
    key: tuple = ()
    scalars: tuple = ()
    containers: tuple = ()
    arrays: dict = dataclasses.field(default_factory=dict)
    shape: tuple = (0, ())
    arguments_shared: bool = False
    entry: bool = False          # what the user calls, not a callee
    opaque: tuple = ()
    reals: tuple = ()            # positions of real arguments (activity.is_real_kind)


@dataclasses.dataclass(frozen=True)
class SplitNames:
    """What a reverse-mode call of a callee uses: its forward and backward functions, and the
    indices of the weights whose gradients the backward function returns after the inputs'."""

    forward: str
    backward: str
    weights: list


class Placeholder:
    """A generated function referenced before it is compiled (callees, recursion)."""

    def __init__(self, name):
        self.name = name


class Table:
    """The generated functions of one build: the requests by key, the names given out and the
    role of each generated function that is not a plain split callee: ``"entry"`` (what a
    user's call reaches: it takes the user function's defaults) or ``"tangent"`` (a callee's
    tangent function, with the user function's keyword defaults)."""

    def __init__(self, weights_reached):
        self._function_names = naming.NameGen()
        self.roles = {}                         # generated function -> its role
        self.requests = {}                      # key -> Request
        self.weights_reached = weights_reached  # (fn, obj) -> [(path, weight index)]

    def name_function(self, base, role=None, avoid=()) -> str:
        """A new generated function's name, made from ``base``: one not given out before in
        this build, and not in ``avoid`` (the names its first caller holds)."""
        name = self._function_names(base)
        while name in avoid:
            name = self._function_names(base)
        if role is not None:
            self.roles[name] = role
        return name

    def request(self, key, make) -> Request:
        if key not in self.requests:
            self.requests[key] = make()
        return self.requests[key]


class Callees:
    """What one pass may ask of the build: the names of the generated functions of a user
    function its code calls (``names_for`` in reverse mode, ``tangent_name_for`` in forward
    mode). ``requested`` lists the requests made, for the driver to build."""

    def __init__(self, table: Table, caller_src, caller_names: naming.NameGen):
        self._table = table
        self._caller_names = caller_names  # the names given out are reserved there
        # a generated function's name -> the name the caller reaches it by: its own, unless
        # the caller already holds that name (a local of the source, when the source is
        # generated code itself: the tangent of a tangent function)
        self._reached_as = {}
        # a user's caller may read what the callee writes into its arguments (see aliasing.py)
        self._user_caller = not caller_src.is_mindgrad_code
        self.requested = []

    def names_for(self, fn, obj, mask, scalar, shape=(0, ()), real=()) -> SplitNames:
        """The forward and backward functions of ``fn`` (bound to ``obj``, if any) for active
        arguments ``mask``, number arguments ``scalar`` and arguments known to be real
        ``real`` (one bool per argument after ``self``)."""
        reached = self._table.weights_reached(fn, obj)
        key = (fn.__code__, static_parts(obj), mask, scalar, tuple(p for p, _ in reached),
               shape, self._user_caller, real)
        offset = 0 if obj is None else 1

        def make():
            names = naming.split_functions(naming.label(fn.__name__, obj))
            return Request(SPLIT, fn, obj, _positions(mask, offset),
                           tuple(self._table.name_function(n, avoid=self._caller_names.taken)
                                 for n in names), key,
                           scalars=_positions(scalar, offset), shape=shape,
                           arguments_shared=self._user_caller, reals=_positions(real, offset))

        request = self._ask(key, make)
        return SplitNames(*self._reached(request), [index for _, index in reached])

    def tangent_name_for(self, fn, obj, mask, shape=(0, ())) -> str:
        """The tangent function of ``fn`` (bound to ``obj``) for active arguments ``mask``."""
        key = ("jvp", fn.__code__, static_parts(obj), mask, shape, self._user_caller)

        def make():
            label = naming.label(fn.__name__, obj)
            name = self._table.name_function(naming.tangent_callee(label), "tangent",
                                             avoid=self._caller_names.taken)
            return Request(TANGENT, fn, obj, _positions(mask, 0 if obj is None else 1), (name,),
                           key, shape=shape, arguments_shared=self._user_caller)

        return self._reached(self._ask(key, make))[0]

    def _ask(self, key, make) -> Request:
        request = self._table.request(key, make)
        self.requested.append(request)
        return request

    def _reached(self, request) -> tuple:
        """The names the caller reaches ``request``'s functions by (see ``_reached_as``)."""
        for name in request.names:
            if name not in self._reached_as:
                clash = name in self._caller_names.taken
                self._reached_as[name] = self._caller_names(name) if clash else name
                self._caller_names.reserve([self._reached_as[name]])
        return tuple(self._reached_as[name] for name in request.names)

    def placeholders(self) -> dict:
        """The names the caller reaches generated functions by, each bound to what stands for
        its function until compiled."""
        return {self._reached_as[name]: Placeholder(name)
                for request in self.requested for name in request.names}


def _positions(mask, offset) -> tuple:
    return tuple(i + offset for i, m in enumerate(mask) if m)


def static_parts(obj, seen=None):
    """What the code of ``obj``'s methods resolves through ``self`` when it is built, so that
    objects alike in it share generated code: ``id(obj)`` for None or a class; otherwise its
    class, the functions it holds and, recursively, the parts of the objects it holds (Cells
    included). Two Dense layers with different activations do not share code."""
    if obj is None or isinstance(obj, type):
        return id(obj)
    attributes = getattr(obj, "__dict__", None)
    if not isinstance(attributes, dict) or isinstance(obj, np.ndarray):
        return type(obj)
    seen = set() if seen is None else seen
    if id(obj) in seen:  # a cycle (a child holding its parent)
        return id(obj)
    seen.add(id(obj))
    parts = []
    for name, value in attributes.items():
        if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                              functools.partial)):
            parts.append((name, id(value)))
        elif not isinstance(value, (types.ModuleType, type)) and \
                isinstance(getattr(value, "__dict__", None), dict):
            parts.append((name, static_parts(value, seen)))
    return type(obj), tuple(parts)
