"""The one walk over trees of values (runtime/trees.py) that the API, the runtime and the
random-program tester share."""

import collections

import numpy as np

import mindgrad
from mindgrad.runtime import trees

Pair = collections.namedtuple("Pair", "a b")


def test_leaves_are_visited_depth_first_in_order():
    tree = {"z": [1.0, (2.0, np.array([3.0]))], "a": Pair(4.0, {"k": 5.0}), "m": 6.0}
    assert [float(np.sum(x)) for x in trees.leaves(tree)] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert trees.leaves(7.0) == [7.0] and trees.leaves([]) == [] and trees.leaves(None) == [None]


def test_map_keeps_every_container_type_and_reads_the_others_in_its_structure():
    x = {"p": Pair(np.array([1.0, 2.0]), [3.0]), "q": (4.0,)}
    v = {"p": Pair(np.array([10.0, 20.0]), None), "q": (40.0,)}
    out = trees.map_leaves(lambda xi, vi: xi if vi is None else xi + vi, x, v)
    assert type(out["p"]) is Pair and type(out["p"].b) is list and type(out["q"]) is tuple
    np.testing.assert_array_equal(out["p"].a, [11.0, 22.0])
    assert out["p"].b == [3.0] and out["q"] == (44.0,)
    # an entry the other lacks, and a whole other left out, read as None
    assert trees.map_leaves(lambda a, b: b, [1, 2, 3], [5]) == [5, None, None]
    assert trees.map_leaves(lambda a, b: b, {"k": 1}, {}) == {"k": None}
    assert trees.map_leaves(lambda a, b: (a, b), (1, [2]), None) == ((1, None), [(2, None)])


def test_any_leaf():
    assert trees.any_leaf(lambda v: isinstance(v, complex), [1.0, {"a": (2.0, 1j)}])
    assert not trees.any_leaf(lambda v: isinstance(v, complex), [1.0, {"a": (2.0, 3)}])


def test_check_grads_takes_a_namedtuple_argument():
    """check_grads walks its arguments with the same utility: a namedtuple argument (which
    its own walks rebuilt as type(value)(generator), a TypeError) is checked like a tuple."""
    def f(p):
        return np.sum(np.sin(p[0]) * p[1])

    mindgrad.check_grads(f, (Pair(np.array([0.3, -1.2]), np.array([2.0, 0.5])),))
