"""MindSpore's ``MultitypeFuncGraph``, ``HyperMap`` and ``Map`` (``mindspore.ops.composite``):
a function chosen by the types of its arguments, and a function mapped over tuples and lists,
as optimizers and gradient-clipping code use them.

Inside a function mindgrad differentiates, the registered functions run as Python: they are
called through the dispatcher, which mindgrad follows by its source like any other function.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["HyperMap", "Map", "MultitypeFuncGraph"]


def _type_matches(name: str, value) -> bool:
    """Whether ``value`` is of MindSpore's type ``name`` (``"Tensor"``, ``"Number"``, ...)."""
    if name == "Tensor":
        return isinstance(value, np.ndarray)
    if name == "Number":
        return isinstance(value, numbers.Number) and not isinstance(value, np.ndarray)
    if name == "Bool":
        return isinstance(value, (bool, np.bool_))
    if name == "Int":
        return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
    if name == "Float":
        return isinstance(value, (float, np.floating))
    if name == "Tuple":
        return isinstance(value, tuple)
    if name == "List":
        return isinstance(value, list)
    if name == "Dictionary":
        return isinstance(value, dict)
    if name == "String":
        return isinstance(value, str)
    if name in ("None", "NoneType"):
        return value is None
    if name == "Function":
        return callable(value)
    raise TypeError(f"MultitypeFuncGraph: unknown type name {name!r}; mindgrad knows Tensor, "
                    "Number, Bool, Int, Float, Tuple, List, Dictionary, String, None, Function")


class MultitypeFuncGraph:
    """``MultitypeFuncGraph(name)``: register functions with ``@f.register("Tensor", ...)``;
    calling ``f(*args)`` runs the one registered for the arguments' types (the first
    registered that matches)."""

    def __init__(self, name, read_value=False, doc_url="", need_raise=False):
        self.name = name
        self.read_value = read_value
        self.entries = []

    def register(self, *type_names):
        for name in type_names:
            _type_matches(name, None)  # an unknown name is an error now, not at the call

        def deco(fn):
            self.entries.append((type_names, fn))
            return fn

        return deco

    def __call__(self, *args):
        for type_names, fn in self.entries:
            if len(type_names) == len(args) and all(
                    _type_matches(n, a) for n, a in zip(type_names, args)):
                return fn(*args)
        given = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"MultitypeFuncGraph {self.name!r} has no function registered for "
                        f"arguments of types ({given}); registered: "
                        f"{[names for names, _ in self.entries]}")


class HyperMap:
    """``HyperMap(ops=None)``: ``HyperMap()(fn, *sequences)`` (or ``HyperMap(fn)(*sequences)``)
    applies ``fn`` elementwise across tuples and lists, recursively into nested ones, and
    returns the same structure."""

    def __init__(self, ops=None, reverse=False):
        self.ops = ops
        self.reverse = reverse

    def __call__(self, *args):
        fn, sequences = (self.ops, args) if self.ops is not None else (args[0], args[1:])
        return self._map(fn, sequences, recursive=True)

    def _map(self, fn, sequences, recursive):
        first = sequences[0]
        if isinstance(first, (tuple, list)):
            if any(len(s) != len(first) for s in sequences):
                raise ValueError(f"{type(self).__name__}: the sequences differ in length: "
                                 f"{[len(s) for s in sequences]}")
            items = []
            for i in range(len(first)):
                parts = tuple(s[i] for s in sequences)
                items.append(self._map(fn, parts, True) if recursive else _apply(fn, parts))
            return tuple(items) if isinstance(first, tuple) else items
        return _apply(fn, sequences)


def _apply(fn, parts):
    """``fn(*parts)``, spelled out for up to three arguments (so that mindgrad can read it)."""
    if len(parts) == 1:
        return fn(parts[0])
    if len(parts) == 2:
        return fn(parts[0], parts[1])
    if len(parts) == 3:
        return fn(parts[0], parts[1], parts[2])
    raise NotImplementedError(f"HyperMap and Map take up to three sequences in mindgrad, got "
                              f"{len(parts)}")


class Map(HyperMap):
    """``Map(ops=None)``: like ``HyperMap``, over the top level of the sequences only."""

    def __call__(self, *args):
        fn, sequences = (self.ops, args) if self.ops is not None else (args[0], args[1:])
        return self._map(fn, sequences, recursive=False)
