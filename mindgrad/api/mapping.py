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

Each call runs ``fn`` once per example and stacks the results: exact for any ``fn`` (a gradient
function, a Cell, code mindgrad cannot read), at the speed of the loop a user would write. In
code that mindgrad differentiates, a ``vmap`` function with int or None axes per argument and
one array result expands to that loop's Python source, which the transformations follow
(``grad(vmap(f))``, ``vmap`` inside a Cell's construct).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from mindgrad.compiler.finish.emit import compiled_function

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

    def __call__(self, *args):
        axes = _per_argument(self.in_axes, len(args))
        batched = [_batched_leaves(a, ax, f"argument {i}") for i, (a, ax) in
                   enumerate(zip(args, axes))]
        size = _batch_size([leaf for leaves in batched for leaf in leaves])
        results = [self.fn(*[_example(a, ax, i) for a, ax in zip(args, axes)])
                   for i in range(size)]
        return _stacked(results, self.out_axes, "the result")

    def __repr__(self):
        return (f"vmap({getattr(self.fn, '__name__', self.fn)!r}, in_axes={self.in_axes!r}, "
                f"out_axes={self.out_axes!r})")


# ----- the axes -------------------------------------------------------------------------------


def _check_axes_spec(spec, what):
    if spec is None or (isinstance(spec, int) and not isinstance(spec, bool)):
        return
    if isinstance(spec, (tuple, list)):
        for s in spec:
            _check_axes_spec(s, what)
        return
    if isinstance(spec, dict):
        for s in spec.values():
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


def _batched_leaves(value, axis, where):
    """``[(where, size)]`` of the batched arrays in ``value`` under ``axis`` (a prefix of its
    structure), checking each axis against its array."""
    if axis is None:
        return []
    if isinstance(axis, int):
        if isinstance(value, (tuple, list)):
            return [leaf for i, v in enumerate(value)
                    for leaf in _batched_leaves(v, axis, f"{where}[{i}]")]
        if isinstance(value, dict):
            return [leaf for k, v in value.items()
                    for leaf in _batched_leaves(v, axis, f"{where}[{k!r}]")]
        ndim = np.ndim(value)
        if not -ndim <= axis < ndim:
            raise ValueError(f"vmap: {where} has {ndim} dimension(s), so it has no batch axis "
                             f"{axis}; give its axis in in_axes, or None for an argument not "
                             f"batched")
        return [(where, np.shape(value)[axis])]
    if isinstance(axis, (tuple, list)):
        if not isinstance(value, (tuple, list)) or len(value) != len(axis):
            raise ValueError(f"vmap: in_axes gives {where} the structure {axis!r}, but it is "
                             f"{type(value).__name__}"
                             + (f" of {len(value)} items" if isinstance(value, (tuple, list))
                                else ""))
        return [leaf for i, (v, a) in enumerate(zip(value, axis))
                for leaf in _batched_leaves(v, a, f"{where}[{i}]")]
    if not isinstance(value, dict) or set(value) != set(axis):
        raise ValueError(f"vmap: in_axes gives {where} a dict of keys {sorted(axis)!r}, which "
                         f"it does not have")
    return [leaf for k in axis for leaf in _batched_leaves(value[k], axis[k], f"{where}[{k!r}]")]


def _batch_size(leaves):
    if not leaves:
        raise ValueError("vmap: no argument is batched (every in_axes entry is None); map "
                         "over at least one argument")
    sizes = {size for _, size in leaves}
    if len(sizes) > 1:
        told = ", ".join(f"{where} has {size}" for where, size in leaves)
        raise ValueError(f"vmap: the batched arguments disagree on the batch size: {told}")
    size = sizes.pop()
    if size == 0:
        raise ValueError("vmap: the batch is empty (0 examples): the result's shape is "
                         "unknown without one")
    return size


def _example(value, axis, i):
    if axis is None:
        return value
    if isinstance(value, (tuple, list)):
        parts = [_example(v, axis if isinstance(axis, int) else axis[k], i)
                 for k, v in enumerate(value)]
        return type(value)(parts)
    if isinstance(value, dict):
        return {k: _example(v, axis if isinstance(axis, int) else axis[k], i)
                for k, v in value.items()}
    return np.take(np.asanyarray(value), i, axis=axis)


def _stacked(results, axis, where):
    first = results[0]
    if axis is None:
        for r in results[1:]:
            if not _same(first, r):
                raise ValueError(f"vmap: out_axes gives {where} None, but it differs from one "
                                 f"example to another; give it a batch axis")
        return first
    if isinstance(first, (tuple, list)):
        if any(not isinstance(r, (tuple, list)) or len(r) != len(first) for r in results):
            raise ValueError(f"vmap: {where} has a different structure in different examples")
        if isinstance(axis, (tuple, list)) and len(axis) != len(first):
            raise ValueError(f"vmap: out_axes gives {where} {len(axis)} entries, but it has "
                             f"{len(first)} items")
        parts = [_stacked([r[k] for r in results], axis if isinstance(axis, int) else axis[k],
                          f"{where}[{k}]") for k in range(len(first))]
        return type(first)(parts) if isinstance(first, list) else tuple(parts)
    if isinstance(first, dict):
        keys = set(first)
        if any(not isinstance(r, dict) or set(r) != keys for r in results):
            raise ValueError(f"vmap: {where} has different keys in different examples")
        return {k: _stacked([r[k] for r in results], axis if isinstance(axis, int) else axis[k],
                            f"{where}[{k!r}]") for k in first}
    if not isinstance(axis, int):
        raise ValueError(f"vmap: out_axes gives {where} the structure {axis!r}, but it is one "
                         f"array")
    ndim = np.ndim(first) + 1
    if not -ndim <= axis < ndim:
        raise ValueError(f"vmap: out_axes {axis} is out of range for {where}, which has "
                         f"{ndim} dimension(s) with the batch axis")
    stacked = np.stack([np.asarray(r) for r in results], axis=axis)
    kind = type(first)  # an array subclass (MindSpore's Tensor) stays one
    return stacked.view(kind) if kind is not np.ndarray and isinstance(first, np.ndarray) \
        else stacked


def _same(a, b):
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return set(a) == set(b) and all(_same(a[k], b[k]) for k in a)
    return np.shape(a) == np.shape(b) and bool(np.all(np.asarray(a) == np.asarray(b)))


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


Mapped.__mindgrad_python__ = _mapped_python
