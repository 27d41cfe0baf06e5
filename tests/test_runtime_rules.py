"""The rules of the runtime helpers generated code calls (what grad of grad differentiates),
checked through ``vjp_of`` against central differences in float64, and exactly for lists."""

import numpy as np
import pytest

import mindgrad  # noqa: F401 (registers the rules)
from mindgrad import rules, runtime
from mindgrad.rules import methods as me
from mindgrad.rules import nondiff as nd
from mindgrad.rules import numpy_shape as ns
from mindgrad.rules import runtime_rules, vjp_of
from mindgrad.rules.numpy_elementwise import astype_grad
from mindgrad.runtime.tangents import TangentList, TangentTuple

RNG = np.random.default_rng(3)


def r(*shape):
    return RNG.standard_normal(shape)


_POPULATION = RNG.standard_normal(5)  # entries a random draw copies: distinct


def _check(fn, args, positions, key=None, **kwargs):
    """vdot(vjp(u), v) against the central difference of vdot(u, fn) along v."""
    if key is not None:
        kwargs["_key"] = key
    out, vjp = vjp_of(fn, *args, **kwargs)
    kwargs.pop("_key", None)
    u = RNG.standard_normal(np.shape(out))
    grads = vjp(u)
    eps = 1e-6
    for p in positions:
        v = RNG.standard_normal(np.shape(args[p]))
        plus, minus = list(args), list(args)
        plus[p] = args[p] + eps * v
        minus[p] = args[p] - eps * v
        numeric = (np.vdot(u, fn(*plus, **kwargs)) - np.vdot(u, fn(*minus, **kwargs))) / (2 * eps)
        analytic = np.vdot(np.broadcast_to(grads[p], np.shape(args[p])), v)
        np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("g, x", [(r(3, 4), r(4)), (r(2, 3), r(2, 1)), (r(3), r(3)),
                                  (r(2, 2), r())])
def test_unbroadcast(g, x):
    _check(runtime.unbroadcast, (g, x), [0])


@pytest.mark.parametrize("a, b", [(r(3), r(3)), (r(2, 3), r(2, 3))])
def test_add(a, b):
    _check(runtime.add, (a, b), [0, 1])


def test_as_grad_and_astype_grad():
    _check(runtime.as_grad, (r(3, 2), r(3, 2)), [0])
    _check(astype_grad, (r(4), r(4)), [0])


@pytest.mark.parametrize("idx", [1, slice(0, 2), (slice(None), 0)])
def test_add_at(idx):
    x = r(3, 2)
    g = np.asarray(x[idx]) * 0 + r(*np.shape(x[idx]))
    # add_at updates its buffer in place (the generated code owns it): give it a copy each time
    def add_at(dx, x, idx, g):
        return runtime.add_at(dx.copy(), x, idx, g)

    _check(add_at, (r(3, 2), x, idx, g), [0, 3], key=runtime.add_at)


def test_item_and_saved_item():
    _check(runtime.item, (r(3, 2), 1), [0])
    _check(runtime.saved_item, (r(4), slice(1, 3)), [0])


@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (1, True), ((0, 2), False)])
def test_unreduce(axis, keepdims):
    x = r(2, 3, 4)
    g = np.sum(x, axis=axis, keepdims=keepdims) * 0 + r(*np.shape(np.sum(x, axis=axis,
                                                                         keepdims=keepdims)))
    _check(runtime.unreduce, (g, x, axis, keepdims), [0])


@pytest.mark.parametrize("a, b", [(r(3), r(2)), (r(2, 2), r(3)), (r(3), r())])
def test_outer_product(a, b):
    _check(np.multiply.outer, (a, b), [0, 1])


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


def test_a_list_gradient_keeps_one_entry_per_item():
    # a zero gradient pushed back after a pop stands for a zero per item left in the list
    assert runtime.push_grad(0, 3.0, [1.0, 2.0]) == [0, 0, 3.0]
    # sequences of gradients of different lengths are never added by dropping entries
    with pytest.raises(ValueError, match="1 and 2 items"):
        runtime.add([1.0], [1.0, 2.0])


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


# ----- rule helpers that write in place: their adjoints are their transposes ----------------

TRANSPOSED = [
    (ns.repeat_grad, (r(6), r(3), 2), {}),
    (ns.repeat_grad, (r(2, 6), r(2, 3), [1, 2, 3], 1), {}),
    (ns.sort_grad, (r(4), r(4)), {}),
    (ns.sort_grad, (r(3, 4), r(3, 4), 0), {}),
    (ns.sort_grad, (r(6), r(2, 3), None), {}),
    (ns.diagonal_grad, (r(3), r(3, 3)), {}),
    (ns.diagonal_grad, (r(2, 3), r(2, 3, 4), 1, 1, 2), {}),
    (ns.take_grad, (r(3, 3), r(3, 4), np.array([2, 0, 2]), 1), {}),
    (ns.take_grad, (r(2), r(2, 3), np.array([5, 0]), None), {}),
    (ns.take_grad, (r(3), r(4), np.array([-1, 7, 0]), 0, "wrap"), {}),
    (ns.take_along_axis_grad, (r(3, 2), r(3, 4), np.array([[0, 3], [1, 1], [2, 0]]), 1), {}),
    (ns.pad_grad, (r(7), r(3), 2), {}),
    (ns.pad_grad, (r(5, 6), r(3, 4), ((1, 1), (0, 2)), "reflect"), {}),
    (ns.pad_grad, (r(5), r(3), 1, "edge"), {}),
    (runtime_rules.as_grad_adjoint, (r(4), r(3, 4), r(4)), {}),
    (runtime_rules.as_sequence_grad, (r(3, 2), r(3, 2)), {}),
    (runtime.as_sequence, (r(3, 2),), {}),
    (runtime.snapshot, (r(3),), {}),
    (runtime.private_copy, (r(3), {}), {}),
    (runtime.concat_tangents, ([r(2), r(2)], [r(2), r(2)], [r(2)], [r(2)]), {}),
    (runtime_rules.add_operand_grad, (r(3, 4), r(4)), {}),
    (runtime_rules.add_operand_grad, (r(2, 3), r(2, 1)), {}),
    (TangentList, ([r(2), r(2)],), {}),
    (TangentTuple, ((r(3), r(3)),), {}),
    (me.tolist_grad, (r(2, 3), r(2, 3)), {}),
    (nd.draw_grad, (r(4), _POPULATION, _POPULATION[[2, 0, 4, 0]]), {}),
    (nd.draw_tangent, (r(5), _POPULATION, _POPULATION[[3, 1, 1]]), {}),
]


@pytest.mark.parametrize("fn, args, kwargs", TRANSPOSED,
                         ids=[f"{fn.__name__}-{i}" for i, (fn, _, _) in enumerate(TRANSPOSED)])
def test_adjoint_of_a_helper_matches_central_differences(fn, args, kwargs):
    # each helper is linear in its first argument: its adjoint must be the exact transpose
    _check(fn, args, [0], key=fn, **kwargs)


@pytest.mark.parametrize("join, pieces, axis", [
    (np.concatenate, [(2, 3), (1, 3)], 0), (np.concatenate, [(2, 3), (4,)], None),
    (np.stack, [(2, 3), (2, 3)], 1), (np.hstack, [(2,), (3,)], 0),
    (np.vstack, [(3,), (2, 3)], 0), (np.column_stack, [(3,), (3, 2)], 0)])
def test_join_tangent_adjoint_is_its_transpose(join, pieces, axis):
    # reverse over forward takes the tangent of a join apart with the join's own gradient
    xs = [r(*shape) for shape in pieces]
    out = join(xs, axis) if join in (np.concatenate, np.stack) else join(xs)
    ts = [r(*shape) for shape in pieces]
    _, vjp = vjp_of(ns.join_tangent, join, ts, xs, out, axis, _key=ns.join_tangent)
    u = r(*out.shape)
    g_ts = vjp(u)[1]
    joined = ns.join_tangent(join, ts, xs, out, axis)
    assert joined.shape == out.shape
    np.testing.assert_allclose(sum(np.vdot(g, t) for g, t in zip(g_ts, ts)), np.vdot(u, joined),
                               rtol=1e-12)


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


# the rules checked by the bespoke tests above
CHECKED_ABOVE = {runtime.unbroadcast, runtime.add, runtime.as_grad, astype_grad,
                 runtime.add_at, runtime.item, runtime.saved_item, runtime.unreduce,
                 np.multiply.outer, runtime.push_grad, runtime.pop_grad, runtime.concat_grads,
                 runtime.setitem_grad, runtime.reversed_items, sorted}


def test_every_runtime_rule_has_a_check():
    tested = {rules._key(k) for k in CHECKED_ABOVE} | {rules._key(fn) for fn, _, _ in TRANSPOSED}
    untested = [k for k, rule in rules._RULES.items()
                if rule.template.__module__ == runtime_rules.__name__ and k not in tested]
    assert not untested, f"runtime rules without a numerical check: {untested}"
