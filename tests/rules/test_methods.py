"""The rules of array methods and attributes (mindgrad/rules/methods.py and the topic modules
registering the methods of their functions), in both directions, with the helpers their
gradients call. The checks: tests/support/rule_check.py.
"""

import numpy as np

from mindgrad.rules import jvp_of, vjp_of
from mindgrad.rules import methods as me
from mindgrad.runtime import is_zero
from tests.support.inputs import Draw
from tests.support.rule_check import (
    TANGENTS,
    Cases,
    rule_tests,
)
from tests.support.versions import needs_numpy

draw = Draw(20240610)
r, f, x32 = draw.r, draw.f, draw.x32
CASES = Cases()
method, attr = CASES.method, CASES.attr

for name in ("sum", "mean", "prod", "max", "min", "var", "std"):
    method(name, r(3, 4))
    method(name, r(3, 4), 0)
    method(name, r(2, 3, 4), (0, -1), keepdims=True)
    method(name, r(2, 3), axis=-1)
method("var", r(3, 4), 1, None, None, 1)
method("std", r(3, 4), ddof=1)
method("sum", r(3, 4), where=draw.mask(3, 4))
for name in ("cumsum", "cumprod"):
    method(name, r(3, 4))
    method(name, r(3, 4), 1)
method("trace", r(3, 4))
method("trace", r(2, 3, 3), 0, 1, 2)
method("reshape", r(2, 3), 3, 2)
method("reshape", r(2, 3), (6,))
method("reshape", r(2, 3), -1, order="F")
method("ravel", r(2, 3))
method("flatten", r(2, 3), "F")
method("transpose", r(2, 3))
method("transpose", r(2, 3, 4), 2, 0, 1)
method("transpose", r(2, 3, 4), (1, 2, 0))
method("transpose", r(2, 3, 4), None)
method("swapaxes", r(2, 3, 4), 0, 2)
method("squeeze", r(1, 3, 1))
method("squeeze", r(1, 3, 1), 0)
method("repeat", r(2, 3), 2, 1)
method("diagonal", r(3, 4), 1)
method("dot", r(2, 3), r(3, 4))
method("dot", r(3), r(3))
method("clip", r(3, 4), -0.5, 0.5)
method("clip", r(3, 4), draw.rng.uniform(-1, -0.2, 4), draw.rng.uniform(0.2, 1, (3, 1)))
method("clip", r(3, 4), max=0.3)
method("astype", r(2, 3), np.float64)
method("astype", r(2, 3), np.complex128)
method("astype", r(2, 3), np.int64)
method("copy", r(2, 3))
method("copy", r())
method("copy", [r(2), f()])    # a list's copy: its tangent is a list, not an array
method("copy", {"a": r(3), "b": f()})
method("conj", r(2, 3))
method("conjugate", r(3))
method("take", r(3, 4), [1, 1, 0], 1)
method("take", r(3, 4), [0, 11])
method("item", r(1, 1))
method("item", r(3, 4), 5)
method("item", r(3, 4), 1, 2)
method("tolist", r(2, 3))
method("tolist", r(3))
method("items", {"a": r(2), "b": f()})
method("values", {"a": r(2), "b": f(), "c": r(1, 2)})
method("get", {"a": r(2), "b": r(2, 3)}, "b")
method("get", {"a": r(2)}, "c", r(3))
method("get", {"a": r(2)}, "a", r(3, 2))
attr("T", r(2, 3))
attr("T", r(2, 3, 4))
attr("mT", r(2, 3, 4), skip=needs_numpy((2, 0), "ndarray.mT"))
attr("real", r(3))
attr("imag", r(3))  # complex inputs: tests/rules/test_complex.py

# ----- the helpers the gradients call (what grad of grad differentiates)

helper = CASES.helper
helper(me.dict_items_grad, [[0, r(2)], [0, f()]], {"a": r(2), "b": 1.0}, only=TANGENTS)
helper(me.dict_values_grad, [r(2), f()], {"a": r(2), "b": 1.0}, only=TANGENTS)
helper(me.item_grad, f(), r(3, 4), (1, 2), only=TANGENTS)
helper(me.item_tangent, r(3, 4), (1, 2))
helper(me.item_tangent, r(5), (3,))
helper(me.item_tangent, r(1, 1), ())
# the other tangent helpers of methods, linear in the tangent: both directions (their
# transposes, the gradients, give the methods' adjoints)
helper(me.tolist_tangent, r(2, 3))
helper(me.tolist_tangent, r(3))
helper(me.copy_tangent, r(2, 3))
helper(me.copy_tangent, [r(2), f()])
helper(me.copy_tangent, {"a": r(3), "b": f()})
helper(me.dict_get_tangent, {"a": r(2), "b": f()}, {"a": r(2), "b": 1.0}, "a")
helper(me.dict_get_default_grad, r(2), {"a": r(2)}, "c")
helper(me.dict_items_tangent, {"a": r(2), "b": f()}, {"a": r(2), "b": 1.0})
helper(me.dict_values_tangent, {"a": r(2), "b": f()}, {"a": r(2), "b": 1.0})
helper(me.item_grad, f(), r(3, 4), (5,), only=TANGENTS)
helper(me.tolist_grad, [[f(), f(), f()], [f(), 0, f()]], r(2, 3))
helper(me.tolist_grad, f(), r())
helper(me.tolist_grad, r(2, 3), r(2, 3))

FLOAT32 = Cases()
FLOAT32.method("astype", x32(3), np.float64)
FLOAT32.method("sum", x32(3), dtype=np.float64)


# the tables' checks: tests/support/rule_check.py
globals().update(rule_tests(CASES, FLOAT32))


# ----- ties and exact values ---------------------------------------------------------------


def test_max_method_splits_gradient_among_ties():
    x = np.array([3.0, 1.0, 3.0])
    _, vjp = vjp_of(lambda a: a.max(), x, _key=("method", "max"))
    np.testing.assert_allclose(vjp(2.0)[0], [1.0, 0.0, 1.0])


def test_dict_views_give_gradients_by_key():
    p = {"a": np.ones(2), "b": np.ones(3)}
    _, vjp = vjp_of(lambda m: m.values(), p, _key=("method", "values"))
    (g,) = vjp([np.full(2, 2.0), np.full(3, 3.0)])
    np.testing.assert_allclose(g["a"], [2.0, 2.0])
    np.testing.assert_allclose(g["b"], [3.0, 3.0, 3.0])
    _, vjp = vjp_of(lambda m: m.items(), p, _key=("method", "items"))
    (g,) = vjp([[0, np.full(2, 5.0)], 0])
    assert set(g) == {"a"}
    np.testing.assert_allclose(g["a"], [5.0, 5.0])


def test_dict_views_give_tangents_in_key_order():
    p = {"a": np.ones(2), "b": 1.5}
    _, jvp = jvp_of(lambda m: m.values(), p, _key=("method", "values"))
    t = jvp({"a": np.full(2, 2.0)})
    np.testing.assert_array_equal(t[0], [2.0, 2.0])
    assert is_zero(t[1])
