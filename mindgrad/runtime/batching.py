"""What batched code (``mindgrad.vmap``'s generated source) calls where an operation is not
rewritten for the batch: a statement run once per example, its results stacked, and a value the
same in every example given the batch axis.

Every batched value holds its examples along axis 0; a container (tuple, list, dict) holds them
in each of its leaves.
"""

from __future__ import annotations

import numpy as np

from mindgrad.runtime import trees
from mindgrad.runtime.arrays import as_array


def example(value, b):
    """Example ``b`` of a batched value: each leaf's slice at ``b`` along axis 0."""
    if isinstance(value, np.ndarray):
        return value[b]
    return trees.map_leaves(lambda leaf: as_array(leaf)[b], value)


def stacked(results):
    """The examples' results (one per example, each a tree of the same structure) as one
    batched value: each leaf stacked along a new axis 0."""
    first = results[0]
    if not trees.is_container(first):
        return np.stack([as_array(r) for r in results])
    columns = list(zip(*(trees.leaves(r) for r in results)))
    leaves = iter([np.stack([as_array(c) for c in column]) for column in columns])
    return trees.map_leaves(lambda _: next(leaves), first)


def spread(value, size):
    """``value``, the same in every example, as a batched value of ``size`` examples: each
    leaf repeated along a new axis 0 (a copy: the batched code may write into it)."""
    return trees.map_leaves(
        lambda leaf: np.array(np.broadcast_to(leaf, (size,) + np.shape(leaf))), value)


def each_example(fn, args, batched, size):
    """``fn`` (statements of the batched function that have no batched form, as a function of
    the names they read) run once per example: for each ``b``, ``fn`` of example ``b`` of each
    batched argument and of the others whole; its results (a tuple) stacked."""
    outputs = [fn(*[example(a, b) if is_b else a for a, is_b in zip(args, batched)])
               for b in range(size)]
    return tuple(stacked([out[i] for out in outputs]) for i in range(len(outputs[0])))
