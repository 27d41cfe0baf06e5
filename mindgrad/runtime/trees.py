"""Trees of values: the arrays and numbers that arguments, outputs, gradients and tangents hold
in tuples, lists (namedtuples included) and dicts. One walk of them for the whole package: a
container is a tuple, a list or a dict; anything else is a leaf, visited in order (a dict's
values in its keys' order).

``map_leaves(fn, tree, *others)`` reads ``others`` in ``tree``'s structure: their entries at
the same positions and keys, and None below a None or for an entry they lack (an absent
gradient, a direction left out).
"""

from __future__ import annotations


def is_container(value) -> bool:
    return isinstance(value, (tuple, list, dict))


def children(value) -> list:
    """The entries of a container, in order (a dict's values); [] for a leaf."""
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, (tuple, list)):
        return list(value)
    return []


def rebuild(like, items):
    """A container of ``like``'s own type (a tuple, a list, a namedtuple, a dict: its keys, in
    order) holding ``items``."""
    if isinstance(like, dict):
        return dict(zip(like, items))
    if isinstance(like, tuple) and hasattr(like, "_fields"):
        return type(like)(*items)
    return type(like)(items)


def iter_leaves(value):
    """The leaves of ``value``, depth first, in order, one at a time."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (tuple, list, dict)):
            stack.extend(reversed(children(v)))
        else:
            yield v


def leaves(value) -> list:
    """The leaves of ``value``, depth first, in order."""
    return list(iter_leaves(value))


def _entries(other, like):
    """``other``'s entries at ``like``'s positions or keys; Nones below a None."""
    if other is None:
        return [None] * len(like)
    if isinstance(like, dict):
        return [other.get(k) for k in like]
    items = list(other)[:len(like)]
    return items + [None] * (len(like) - len(items))


def map_leaves(fn, tree, *others):
    """``tree``'s structure with ``fn(leaf, *their leaves)`` at each leaf (see the module)."""
    if isinstance(tree, (tuple, list, dict)):
        parts = [_entries(o, tree) for o in others]
        return rebuild(tree, [map_leaves(fn, t, *(p[i] for p in parts))
                              for i, t in enumerate(children(tree))])
    return fn(tree, *others)


def any_leaf(predicate, value) -> bool:
    """Whether ``predicate`` holds for some leaf of ``value`` (the walk stops at the first:
    the outputs' checks ask it on every call)."""
    return any(predicate(leaf) for leaf in iter_leaves(value))
