"""``mindgrad.vmap``: a function mapped over a batch axis of its arguments, as MindSpore's
``vmap`` and JAX's ``jax.vmap`` define it.

``vmap(fn, in_axes=0, out_axes=0)(*args)`` is ``fn`` applied to each example, the results
stacked along ``out_axes``. An example takes, of each batched argument, its slice at one index
of the batch axis that ``in_axes`` names (an int, negative ones counted from the end), and each
argument whose axis is ``None`` whole. ``in_axes`` is an int or None for every argument, or a
tuple or list with one entry per argument; an entry may itself be a tuple, list or dict
following the structure of its argument (a prefix of it: an int or None covers all it holds).
``out_axes`` follows the structure of ``fn``'s result in the same way; ``None`` there is a
result that is the same for every example (checked), returned once.

A call runs ``fn``'s batched source (``api/batched.py``: every example at once, statements
without a batched form once per example), built once per kind of arguments; where there is none
(code mindgrad cannot read, in-place writes the batched code would part) it runs ``fn`` once per
example and stacks the results, exact for any ``fn``. In code that mindgrad differentiates, a
``vmap`` function with int or None axes per argument and one array result expands to Python
that calls the batched code (arguments known when the code is built) or loops over the
examples, which the transformations follow (``grad(vmap(f))``, ``vmap`` inside a Cell).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from mindgrad.api import batched
from mindgrad.api.gradients import where_defined
from mindgrad.compiler.finish.emit import compiled_function
from mindgrad.runtime import trees

__all__ = ["vmap", "Mapped"]


def vmap(fn, in_axes: Any = 0, out_axes: Any = 0, chunk_size: int = 0):
    """``fn`` mapped over the batch axes ``in_axes`` of its arguments, the results stacked
    along ``out_axes`` (see the module's docstring). ``chunk_size`` (MindSpore's: how many
    examples at a time) changes no number: each example is computed on its own."""
    if not callable(fn):
        raise TypeError(f"vmap: fn must be callable, got {type(fn).__name__}")
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")
    if not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size < 0:
        raise ValueError(f"vmap: chunk_size must be an int >= 0, got {chunk_size!r}")
    return Mapped(fn, in_axes, out_axes)


class Mapped:
    """What ``vmap`` returns: call it as ``fn`` would be called, with the batched arguments."""

    def __init__(self, fn, in_axes, out_axes):
        self.fn, self.in_axes, self.out_axes = fn, in_axes, out_axes
        functools.update_wrapper(self, fn, updated=())
        label = getattr(fn, "__name__", type(fn).__name__)
        self.__name__ = "vmap_" + "".join(c if c.isalnum() else "_" for c in label)

    def _axes(self, args):
        """``in_axes`` spelled out to each argument's structure."""
        return [_spelled_out(a, x, f"argument {i}", "in_axes")
                for i, (a, x) in enumerate(zip(args, _per_argument(self.in_axes, len(args))))]

    def __call__(self, *args):
        axes = self._axes(args)
        size = _batch_size(args, axes)
        out = batched.run(self, args, axes, size)
        if out is not batched.LOOP:
            return _placed(out, _spelled_out(out, self.out_axes, "the result", "out_axes"))
        results = [self.fn(*[trees.map_leaves(_slice(i), a, ax) for a, ax in zip(args, axes)])
                   for i in range(size)]
        return _stacked(results, _spelled_out(results[0], self.out_axes, "the result",
                                              "out_axes"), _located(self.fn))

    def source(self, *args):
        """The batched source ``vmap`` runs for arguments like ``args`` (a ``Code``)."""
        return batched.source(self, args, self._axes(args))

    def stages(self, *args):
        """The source after each stage of the batched build for arguments like ``args``."""
        return batched.stages(self, args, self._axes(args))

    def __repr__(self):
        return (f"vmap({getattr(self.fn, '__name__', self.fn)!r}, in_axes={self.in_axes!r}, "
                f"out_axes={self.out_axes!r})")


# ----- the axes -------------------------------------------------------------------------------


def _check_axes_spec(spec, what):
    if spec is None or (isinstance(spec, int) and not isinstance(spec, bool)):
        return
    if trees.is_container(spec):
        for s in trees.children(spec):
            _check_axes_spec(s, what)
        return
    raise TypeError(f"vmap: {what} holds {spec!r}; each axis is an int or None, in a tuple, "
                    f"list or dict following the arguments' structure")


def _per_argument(in_axes, count):
    if isinstance(in_axes, (tuple, list)):
        if len(in_axes) != count:
            raise ValueError(f"vmap: in_axes has {len(in_axes)} entries but the function was "
                             f"given {count} argument(s); give one axis (or None) per argument")
        return list(in_axes)
    return [in_axes] * count


def _spelled_out(value, axis, where, what):
    """``axis``, a prefix of ``value``'s structure (an int or None covers all it holds), as a
    tree of ``value``'s structure with an axis or None at each leaf."""
    if axis is None or isinstance(axis, int):
        return trees.map_leaves(lambda _: axis, value)
    if isinstance(axis, dict) != isinstance(value, dict) or not trees.is_container(value) \
            or len(axis) != len(value) or (isinstance(axis, dict) and set(axis) != set(value)):
        raise ValueError(f"vmap: {what} gives {where} the structure {axis!r}, but it is "
                         f"{_described(value)}")
    keys = list(value) if isinstance(value, dict) else range(len(value))
    return trees.rebuild(value, [_spelled_out(value[k], axis[k], f"{where}[{k!r}]", what)
                                 for k in keys])


def _described(value):
    if isinstance(value, dict):
        return f"a dict of keys {sorted(value)!r}"
    if trees.is_container(value):
        return f"{type(value).__name__} of {len(value)} items"
    return "one array"


def _labelled(value, where):
    """``(where, leaf)`` for each leaf of ``value``, in ``trees``' order."""
    if not trees.is_container(value):
        return [(where, value)]
    keys = list(value) if isinstance(value, dict) else range(len(value))
    return [pair for k in keys for pair in _labelled(value[k], f"{where}[{k!r}]")]


def _batch_size(args, axes):
    """The batch size the batched leaves of ``args`` agree on, each axis checked."""
    sizes = []
    for i, (arg, ax) in enumerate(zip(args, axes)):
        for (where, leaf), axis in zip(_labelled(arg, f"argument {i}"), trees.leaves(ax)):
            if axis is None:
                continue
            ndim = np.ndim(leaf)
            if not -ndim <= axis < ndim:
                raise ValueError(f"vmap: {where} has {ndim} dimension(s), so it has no batch "
                                 f"axis {axis}; give its axis in in_axes, or None for an "
                                 f"argument not batched")
            sizes.append((where, np.shape(leaf)[axis]))
    if not sizes:
        raise ValueError("vmap: no argument is batched (every in_axes entry is None); map "
                         "over at least one argument")
    if len({size for _, size in sizes}) > 1:
        told = ", ".join(f"{where} has {size}" for where, size in sizes)
        raise ValueError(f"vmap: the batched arguments disagree on the batch size: {told}")
    if sizes[0][1] == 0:
        raise ValueError("vmap: the batch is empty (0 examples): the result's shape is "
                         "unknown without one")
    return sizes[0][1]


def _slice(i):
    """A leaf's example ``i``: its slice at ``i`` along its axis, or itself for None."""
    return lambda leaf, axis: leaf if axis is None else np.take(np.asanyarray(leaf), i, axis)


def _located(fn) -> str:
    """``fn`` and where it is defined (``f (model.py:12)``), for a message about its results."""
    name, where = getattr(fn, "__name__", type(fn).__name__), where_defined(fn)
    return f"{name} ({where})" if where else name


def _stacked(results, axes, fn="the function"):
    """The examples' results, each leaf stacked along its axis of ``axes`` (or the same in
    every example, returned once, for None); ``fn`` names the function that gave them."""
    skeleton = trees.map_leaves(lambda _: None, results[0])
    if any(trees.map_leaves(lambda _: None, r) != skeleton for r in results[1:]):
        raise ValueError("vmap: the result has a different structure in different examples")
    columns = list(zip(*(trees.leaves(r) for r in results)))
    stacked = [_stacked_leaf(column, axis, where, fn) for column, axis, (where, _) in
               zip(columns, trees.leaves(axes), _labelled(results[0], "the result"))]
    leaves = iter(stacked)  # map_leaves visits the leaves in trees.leaves' order
    return trees.map_leaves(lambda _: next(leaves), results[0])


def _placed(out, axes):
    """The batched result ``out`` (the batch axis first in each leaf) with each leaf's batch
    axis where ``axes`` puts it (None: one example's, checked to be the same in all)."""
    placed = [_placed_leaf(leaf, axis, where) for leaf, axis, (where, _) in
              zip(trees.leaves(out), trees.leaves(axes), _labelled(out, "the result"))]
    leaves = iter(placed)
    return trees.map_leaves(lambda _: next(leaves), out)


def _placed_leaf(leaf, axis, where):
    if axis is None:
        if not np.all(leaf == leaf[:1]):
            raise ValueError(f"vmap: out_axes gives {where} None, but it differs from one "
                             f"example to another; give it a batch axis")
        return leaf[0]
    if not -leaf.ndim <= axis < leaf.ndim:
        raise ValueError(f"vmap: out_axes {axis} is out of range for {where}, which has "
                         f"{leaf.ndim} dimension(s) with the batch axis")
    return np.moveaxis(leaf, 0, axis)


def _stacked_leaf(column, axis, where, fn):
    first = column[0]
    if axis is None:
        if not all(np.shape(r) == np.shape(first) and np.all(np.asarray(r) == first)
                   for r in column[1:]):
            raise ValueError(f"vmap: out_axes gives {where} None, but it differs from one "
                             f"example to another; give it a batch axis")
        return first
    ndim = np.ndim(first) + 1
    if not -ndim <= axis < ndim:
        raise ValueError(f"vmap: out_axes {axis} is out of range for {where}, which has "
                         f"{ndim} dimension(s) with the batch axis")
    shape = np.shape(first)
    for i, r in enumerate(column):
        if np.shape(r) != shape:
            raise ValueError(f"vmap: {where} of {fn} has the shape {shape} in example 0 "
                             f"but {np.shape(r)} in example {i}; vmap stacks the examples' "
                             f"results along a new axis, so each must have one shape")
    stacked = np.stack([np.asarray(r) for r in column], axis=axis)
    kind = type(first)  # an array subclass (MindSpore's Tensor) stays one
    return stacked.view(kind) if kind is not np.ndarray and isinstance(first, np.ndarray) \
        else stacked


# ----- inside differentiated code ---------------------------------------------------------------


def _mapped_python(mapped, args, nargs, keywords=()):
    """``mapped`` as a Python function with source: the loop over the examples, stacked, which
    the transformations differentiate. Int or None axes per argument and one array result."""
    count = len(args) if args is not None else nargs
    axes = _per_argument(mapped.in_axes, count)
    if keywords or not all(a is None or isinstance(a, int) for a in axes) or \
            not isinstance(mapped.out_axes, int):
        raise NotImplementedError(
            "a vmap function called in differentiated code takes int or None in_axes per "
            "argument, no keywords, and gives one array (an int out_axes)")
    if all(a is None for a in axes):
        raise ValueError("vmap: no argument is batched (every in_axes entry is None)")
    fast = _batched_python(mapped, args, axes)
    if fast is not None:
        return fast
    made = mapped.__dict__.setdefault("_as_python", {})
    if count not in made:
        params = [f"x{i}" for i in range(count)]
        first = next(i for i, a in enumerate(axes) if a is not None)
        lines = [f"def {mapped.__name__}({', '.join(params)}):"]
        lines += [f"    x{i} = np.moveaxis(x{i}, {a}, 0)" for i, a in enumerate(axes)
                  if a not in (None, 0)]
        example = ", ".join(f"x{i}[i]" if a is not None else f"x{i}"
                            for i, a in enumerate(axes))
        lines += ["    results = []",
                  f"    for i in range(np.shape(x{first})[0]):  # one example at a time",
                  f"        results.append(fn({example}))",
                  f"    return np.stack(results, axis={mapped.out_axes})"]
        made[count] = compiled_function("\n".join(lines) + "\n", mapped.__name__,
                                        {"fn": mapped.fn, "np": np})
    return made[count]


def _batched_python(mapped, args, axes):
    """With the call's arguments known: a Python function calling the batched code built for
    them (every statement batched, one array result), which the transformations follow into;
    else None."""
    if args is None or not isinstance(mapped.out_axes, int) or not _target_known(mapped.fn):
        return None
    spelled = mapped._axes(args)
    try:
        _batch_size(args, spelled)
    except ValueError:
        return None
    made = batched.compiled(mapped.fn, args, spelled)
    if isinstance(made, str) or made.looped or made.result.kind != "array":
        return None
    cached = mapped.__dict__.setdefault("_as_batched_python", {})
    if id(made) in cached and cached[id(made)][0] is made:
        return cached[id(made)][1]
    params = [f"x{i}" for i in range(len(args))]
    first = next(i for i, a in enumerate(axes) if a is not None)
    lines = [f"def {mapped.__name__}({', '.join(params)}):"]
    lines += [f"    x{i} = np.moveaxis(x{i}, {a}, 0)" for i, a in enumerate(axes)
              if a not in (None, 0)]
    lines += [f"    out = batched({', '.join(params)}, np.shape(x{first})[0])"
              f"  # every example at once",
              f"    return np.moveaxis(out, 0, {mapped.out_axes})" if mapped.out_axes else
              "    return out"]
    function = compiled_function("\n".join(lines) + "\n", mapped.__name__,
                                 {"batched": made.function, "np": np})
    cached[id(made)] = (made, function)
    return function


def _target_known(fn):
    return batched.target(fn) is not None and not isinstance(fn, batched.GradFunction)


Mapped.__mindgrad_python__ = _mapped_python
