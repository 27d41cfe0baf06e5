"""The rules of the runtime helpers generated code calls (what grad of grad differentiates, and
reverse over forward), in both directions, against central differences in float64, and exactly
for lists and dicts. The checks: tests/support/rule_check.py.
"""

import numpy as np

from mindgrad import runtime
from mindgrad.rules import runtime_rules, vjp_of
from mindgrad.rules import runtime_rules as rr
from mindgrad.runtime.arrays import whole_matrices
from mindgrad.runtime.tangents import TangentDict, TangentList, TangentTuple, broadcast_tangent
from tests.support.inputs import Draw
from tests.support.rule_check import (
    TANGENTS,
    Cases,
    rule_tests,
)

draw = Draw(3)
r, f = draw.r, draw.f
CASES = Cases()
helper = CASES.helper

for g, x in [(r(3, 4), r(4)), (r(2, 3), r(2, 1)), (r(3), r(3)), (r(2, 2), r()),
             (r(2, 3, 4), r(3, 1))]:
    helper(runtime.unbroadcast, g, x)
for g, slope in [(r(3), r(3)), (r(2, 3), r(3)), (r(), r()), (r(2, 3), r(2, 1)), (r(3), f())]:
    helper(runtime.times_slope, g, slope)
helper(runtime.unreduce, r(3), r(3, 4), 1)
helper(runtime.unreduce, r(3, 1), r(3, 4), -1, True)
helper(runtime.unreduce, r(), r(2, 2))
for _axis, _keepdims in [(None, False), (0, False), (1, True), ((0, 2), False)]:
    _x = r(2, 3, 4)
    helper(runtime.unreduce, r(*np.shape(np.sum(_x, axis=_axis, keepdims=_keepdims))), _x,
           _axis, _keepdims)
helper(runtime.add, r(3), r(3))
helper(runtime.add, r(2, 3), r(2, 3))
helper(runtime.add, r(3), f())
helper(runtime.add, [r(2), f()], [r(2), f()])
helper(runtime.add, (r(2), 0), [r(2), f()])
helper(runtime.add, {"a": r(2)}, {"a": r(2), "b": f()})
helper(runtime.add_at, r(4), r(4), 1, f())
helper(runtime.add_at, r(3, 4), r(3, 4), (slice(None), [0, 2, 2]), r(3, 3))
helper(runtime.add_at, 0, r(3, 4), 1, r(4))
helper(runtime.add_at, [r(2), 0, f()], [r(2), r(3), f()], 1, r(3))
helper(runtime.add_at, {"a": r(2)}, {"a": r(2), "b": f()}, "b", f())
for _idx in (1, slice(0, 2), (slice(None), 0)):
    helper(runtime.add_at, r(3, 2), r(3, 2), _idx, r(*np.shape(np.ones((3, 2))[_idx])))
helper(runtime.item, [r(2), f()], 1)
helper(runtime.item, r(3, 2), 2)
helper(runtime.item, r(3, 2), 1)
helper(runtime.reversed_items, r(3, 2))
helper(runtime.reversed_items, r(4), 2)
helper(runtime.concat_grads, [r(2), f(), r(1)], [1.0, 2.0], [3.0])
helper(runtime.as_grad, r(3, 1), r(3, 4))
helper(runtime.as_grad, r(3), r(3))
helper(runtime.as_grad, r(3, 2), r(3, 2))
helper(runtime.as_grad, [r(2), f()], [r(2), 1.5])
helper(runtime.as_grad, r(2), 1.5)
helper(runtime.saved_item, r(3, 4), 1)
helper(runtime.saved_item, r(4), slice(1, 3))
helper(runtime.saved_item, [r(2), f()], 0)
helper(runtime.saved_item, {"a": r(2)}, "a")
helper(runtime.setitem_grad, r(3, 4), 1, r(4))
helper(runtime.setitem_grad, r(3, 4), (slice(None), 0), r(1))
helper(runtime.setitem_grad, [r(2), f()], 1, 1.0)
helper(runtime.pop_grad, [r(2), f(), r(3)])
helper(runtime.push_grad, [r(2), f()], r(3))
helper(runtime.push_grad, 0, r(3))
helper(runtime.as_sequence, r(3, 2))
helper(runtime.as_sequence, [r(2), f()])
helper(runtime.concat_tangents, [r(2), f()], [r(2), f()], [r(3)], [r(3)])
helper(runtime.concat_tangents, [r(2), r(2)], [r(2), r(2)], [r(2)], [r(2)])
# sequences that add element by element (tangent code read again): the tangents added so
helper(runtime.concat_tangents, (r(2), f()), TangentTuple((r(2), f())), (r(2), f()), (r(2), f()))
helper(runtime.concat_tangents, [r(3)], [r(3)], [r(3)], TangentList([r(3)]))
helper(runtime.snapshot, [r(2), f()])
helper(runtime.snapshot, {"a": r(2)})
helper(runtime.snapshot, r(3))
helper(runtime.private_copy, r(2, 3), {})
helper(runtime.private_copy, r(3), {})
helper(whole_matrices, r(2, 3, 3))  # NumPy's arrays as they are (Dask's: tests/corpus)
helper(whole_matrices, r(3, 3))
# the output sensitivity passed through (a sens_param gradient differentiated along sens)
helper(runtime.seed, r(3), r(3))
helper(runtime.seed, r(2, 3), r(2, 3))
helper(runtime.seed, f(), f())
helper(runtime.seed, (r(2), f()), (r(2), f()))
helper(runtime.seed, {"a": r(2)}, {"a": r(2)})
helper(runtime.seed_passed, r(3), r(3), r(3))
helper(runtime.seed_passed, r(2, 3), r(2, 3), r(2, 3), False)
helper(runtime.seed_passed, (r(2), f()), (r(2), f()), (r(2), f()))
helper(runtime.seed_passed, (r(2), f()), (r(2), f()), (r(2), f()), False)
helper(TangentList, [r(2), f()])
helper(TangentList, [r(2), r(2)])
helper(TangentTuple, (r(2), r(1, 2)))
helper(TangentTuple, (r(3), r(3)))
helper(TangentDict, {"a": r(2), "b": f()})
helper(TangentDict, {"a": r(3, 1)})

# the adjoints of the helpers above, and the helpers of those adjoints: linear in their first
# argument; those that write in place have adjoints, their transposes
helper(rr.as_grad_adjoint, r(4), r(3, 4), r(4))
helper(runtime.repeated_grads, [f(), r(2), f(), r(2)], [1.5, r(2)])
helper(runtime.repeated_grads, [f(), f(), f()], (1.5,))
helper(rr.repeated_grads_adjoint, [f(), r(2)], [f(), r(2), f(), r(2)], [1.5, r(2)])
helper(rr.as_grad_adjoint, [r(2), f()], [r(3, 2), f()], [r(2), 1.5])
helper(rr.add_operand_grad, r(3, 4), r(4))
helper(rr.add_operand_grad, r(2, 3), r(2, 1))
helper(rr.add_operand_grad, r(3), 0)
helper(rr.as_sequence_grad, r(3, 2), r(3, 2))
helper(rr.as_sequence_grad, [r(2), f()], [r(2), 1.5])
helper(rr.added_grad, r(3, 4), r(3, 4), 1, r(4), only=TANGENTS)
helper(rr.added_grad, r(3, 4), r(3, 4), (slice(None), [0, 2, 2]), r(3, 3), only=TANGENTS)
helper(rr.added_grad, r(4), r(4), 2, f(), only=TANGENTS)
helper(rr.broadcast_back, r(3), r(2, 3), only=TANGENTS)
helper(broadcast_tangent, r(3), r(2, 3))
helper(broadcast_tangent, f(), r(2, 3))
helper(broadcast_tangent, r(2, 1), r(2, 3))
helper(broadcast_tangent, r(2, 3), r(2, 3))
helper(rr.reversed_items_grad, [(0, f()), (0, r(2)), (0, f())], [1.5, r(2), -0.5], only=TANGENTS)
helper(rr.reversed_items_grad, [(0, r(3)), (0, r(3))], r(4, 3), 2, only=TANGENTS)
helper(rr.gather, r(3, 4), r(3, 4), 1, only=TANGENTS)
helper(rr.setitem_grad_adjoint, (r(4), r(3, 4)), r(3, 4), 1, r(4), only=TANGENTS)
helper(rr.pop_grad_adjoint, (f(), [r(2)]), [r(2), f()], only=TANGENTS)
helper(rr.pop_grad_adjoint, (r(3), 0), [0, 0, r(3)], only=TANGENTS)
helper(rr.push_grad_parts, [r(2), f()], only=TANGENTS)
helper(rr.concat_grads_adjoint, ([r(2)], [f()]), only=TANGENTS)
helper(rr.unreduce_adjoint, r(3, 4), r(3), r(3, 4), 1, False, only=TANGENTS)
helper(rr.outer_grad_a, r(3, 2), r(3), r(2), only=TANGENTS)
helper(rr.outer_grad_b, r(3, 2), r(3), r(2), only=TANGENTS)
helper(rr.outer_grad_a, r(3, 2, 2), r(3), r(2, 2), only=TANGENTS)
helper(rr.outer_grad_b, r(3), f(), r(3), only=TANGENTS)
helper(rr.add_operand_transpose, r(4), r(3, 4), r(4), only=TANGENTS)
helper(rr.add_operand_transpose, r(3), r(3), 0, only=TANGENTS)
helper(rr.concat_tangents_adjoint, [r(2), f(), r(3)], [r(2), f()], [r(3)], 0, only=TANGENTS)
helper(rr.concat_tangents_adjoint, [r(2), f(), r(3)], [r(2), f()], [r(3)], 1, only=TANGENTS)


# the tables' checks: tests/support/rule_check.py
globals().update(rule_tests(CASES))


# ----- exact values: lists, dicts, where each gradient goes --------------------------------


def test_list_helpers_route_gradients_exactly():
    # push_grad(dxs, g) = dxs + [g]
    _, vjp = vjp_of(runtime.push_grad, [1.0, 2.0], 3.0)
    g_list, g_item = vjp([10.0, 20.0, 30.0])
    assert g_list == [10.0, 20.0] and g_item == 30.0
    # pop_grad(dxs) = (last, rest)
    _, vjp = vjp_of(runtime.pop_grad, [1.0, 2.0, 3.0])
    assert vjp((30.0, [10.0, 20.0]))[0] == [10.0, 20.0, 30.0]
    # concat_grads(g, x, y) = (head, tail)
    _, vjp = vjp_of(runtime.concat_grads, [1.0, 2.0, 3.0], [0, 0], [0])
    assert vjp(([10.0, 20.0], [30.0]))[0] == [10.0, 20.0, 30.0]


def test_setitem_grad_adjoint():
    dx, v = r(4), r(2)
    _, vjp = vjp_of(runtime.setitem_grad, dx.copy(), slice(1, 3), v)
    g_v, g_rest = r(2), r(4)
    (g_dx, _, _) = vjp((g_v, g_rest))
    expected = g_rest.copy()
    expected[1:3] = g_v
    np.testing.assert_allclose(g_dx, expected)


def test_reversed_items_gives_each_item_its_gradient():
    seq = r(3, 2)
    out, vjp = vjp_of(runtime.reversed_items, seq)
    assert [k for k, _ in out] == [2, 1, 0]
    grads = [(0, np.full(2, float(k))) for k, _ in out]
    (g_seq,) = vjp(grads)[:1]
    np.testing.assert_allclose(g_seq, [[0, 0], [1, 1], [2, 2]])


def test_broadcast_back_and_gather():
    np.testing.assert_allclose(runtime_rules.broadcast_back(np.ones(3), np.zeros((2, 3))),
                               np.ones((2, 3)))
    assert runtime_rules.gather(0, r(3), 1) == 0


def test_sorted_routes_each_gradient_to_where_its_item_came_from():
    out, vjp = vjp_of(sorted, [3.0, 1.0, 2.0])
    assert out == [1.0, 2.0, 3.0]
    assert vjp([10.0, 20.0, 30.0])[0] == [30.0, 10.0, 20.0]
    _, vjp = vjp_of(sorted, [3.0, 1.0, 2.0], reverse=True)
    assert vjp([10.0, 20.0, 30.0])[0] == [10.0, 30.0, 20.0]


def test_container_helpers_route_gradients_exactly():
    # as_grad_adjoint gives a list gradient back leaf by leaf, a dict one by its own keys
    _, vjp = vjp_of(runtime.as_grad, [np.ones(2), 0], [np.ones(2), np.ones(3)])
    g_list = vjp([np.full(2, 2.0), np.full(3, 3.0)])[0]
    np.testing.assert_allclose(g_list[0], [2.0, 2.0])
    assert g_list[1] == 0
    _, vjp = vjp_of(runtime.as_grad, {"a": np.ones(2)}, {"a": np.ones(2), "b": np.ones(3)})
    g_dict = vjp({"a": np.full(2, 5.0), "b": np.full(3, 7.0)})[0]
    assert set(g_dict) == {"a"}
    np.testing.assert_allclose(g_dict["a"], [5.0, 5.0])
    # as_sequence of a dict lists its keys: no gradient reaches the dict
    out, vjp = vjp_of(runtime.as_sequence, {"a": np.ones(2)})
    assert out == ["a"] and vjp(["anything"])[0] == 0
    # a dict gradient keeps only the keys that received one
    assert runtime_rules.gather({"a": 1.0}, {"a": 1.0, "b": 2.0}, "b") == 0
    g_v, rest = runtime.setitem_grad({"a": 1.0, "b": 2.0}, "a", 3.0)
    assert g_v == 1.0 and rest == {"b": 2.0}
    assert runtime.setitem_grad({"b": 2.0}, "a", 3.0) == (0, {"b": 2.0})
    # dict(mapping): the same gradients by key; from pairs, each pair's value gradient
    _, vjp = vjp_of(dict, {"a": 1.0, "b": 2.0})
    assert vjp({"a": 3.0})[0] == {"a": 3.0}
    _, vjp = vjp_of(dict, [("a", 1.0), ("b", 2.0)])
    assert vjp({"b": 5.0})[0] == [(0, 0), (0, 5.0)]
