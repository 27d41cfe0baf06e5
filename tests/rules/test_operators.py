"""The rules of Python's operators and their NumPy functions (mindgrad/rules/operators.py), in
both directions: +, -, *, /, %, ** on every pair of shapes that broadcast, 0-d arrays and Python
floats; unary - and +; list and tuple concatenation; @ for every pairing of ranks; and the helpers
their gradients call. The checks: tests/support/rule_check.py.
"""

import operator

import numpy as np

from mindgrad import rules
from mindgrad.rules import operators as op_rules
from mindgrad.runtime.tangents import TangentList, TangentTuple
from tests.support.inputs import Draw
from tests.support.rule_check import (
    ADJOINT,
    INLINED,
    TANGENTS,
    Cases,
    rule_tests,
    run_inlined,
)

draw = Draw(20240611)
r, pos, f, x32 = draw.r, draw.pos, draw.f, draw.x32
CASES = Cases()
case = CASES.add

BROADCAST_PAIRS = [((), ()), ((3,), (3,)), ((3, 1), (4,)), ((2, 3), ()), ((1, 3), (2, 1)),
                   ((2, 3, 4), (3, 4)), ((4,), (2, 3, 1))]
for fn in (operator.add, np.add, operator.sub, np.subtract, operator.mul, np.multiply,
           operator.truediv, np.divide, operator.mod, np.remainder):
    for sx, sy in BROADCAST_PAIRS:
        case(fn, r(*sx), r(*sy))
    case(fn, f(), r(3))
    case(fn, f(), f())
for fn in (operator.pow, np.power):
    for sx, sy in BROADCAST_PAIRS:
        case(fn, pos(*sx), r(*sy))
    case(fn, f(pos), f())
    case(fn, pos(3), 2, label="pow-int-exponent")
for fn in (operator.neg, np.negative, operator.pos, np.positive):
    case(fn, r(2, 3))
    case(fn, f())
# reverse mode splits the gradient of a concatenation with runtime.concat_grads, not with this
# rule (test_runtime_rules.py)
case(operator.add, [r(2), f()], [r(3)], label="list-concat", only=TANGENTS)
case(operator.add, (r(2),), (f(), r(1)), label="tuple-concat", only=TANGENTS)
# jvp_of runs every statement, reading 0 for arguments without tangent: the tangent rule's
# statement for the count (``xs * d[n]``) fails on 0, so it is checked inlined only
case(operator.mul, [r(2), f()], 2, label="list-repeat", only=(ADJOINT, INLINED),
     xfail={ADJOINT: "the rule alone cannot tell a repeated list from a scaled array: the "
                     "compiler writes repeated_grads for a known sequence (tests/compiler/"
                     "test_sequences.py) and unbroadcast refuses a gradient of the wrong length"})
MATMUL_SHAPES = [((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)),
                 ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 1, 2, 3), (4, 3, 2)),
                 ((3,), (5, 3, 2)), ((5, 2, 3), (3,))]
for fn in (operator.matmul, np.matmul):
    for sx, sy in MATMUL_SHAPES:
        case(fn, r(*sx), r(*sy))

# ----- the helpers the gradients call (what grad of grad differentiates): forward over reverse
# only, they have no adjoint rules

helper = CASES.helper
helper(op_rules.matmul_grad_x, r(2, 4), r(2, 3), r(3, 4), only=TANGENTS)
helper(op_rules.matmul_grad_x, r(4), r(3), r(3, 4), only=TANGENTS)
helper(op_rules.matmul_grad_x, r(5, 2, 4), r(2, 3), r(5, 3, 4), only=TANGENTS)
helper(op_rules.matmul_grad_x, r(2), r(2, 3), r(3), only=TANGENTS)
helper(op_rules.matmul_grad_y, r(2, 4), r(2, 3), r(3, 4), only=TANGENTS)
helper(op_rules.matmul_grad_y, r(5, 2, 4), r(5, 2, 3), r(3, 4), only=TANGENTS)
helper(op_rules.matmul_grad_y, r(4), r(3), r(3, 4), only=TANGENTS)
helper(op_rules.matmul_grad_y, r(2), r(2, 3), r(3), only=TANGENTS)

FLOAT32 = Cases()
FLOAT32.add(np.add, x32(3), 1.5, label="add-float")


# the tables' checks: tests/support/rule_check.py
globals().update(rule_tests(CASES, FLOAT32))


# ----- exact values ------------------------------------------------------------------------


def test_list_concatenation_tangents_add_element_by_element():
    a, b = np.ones(2), np.zeros(3)
    rule = rules.lookup_tangent(operator.add)
    out = [a] + [b]
    t = run_inlined(rule, out, {"x": [a], "y": [b]}, {"x": [np.full(2, 2.0)],
                                                      "y": [np.full(3, 3.0)]})
    assert isinstance(t, list) and len(t) == 2
    np.testing.assert_array_equal(t[0], [2.0, 2.0])
    np.testing.assert_array_equal(t[1], [3.0, 3.0, 3.0])
    assert 0 + TangentList([1.0]) == [1.0] and TangentTuple((1.0, 0)) + (2.0, 3.0) == (3.0, 3.0)


def test_pow_of_a_negative_base_by_an_int_exponent_drops_the_log():
    rule = rules.lookup_tangent(operator.pow)
    x = np.array([-2.0, 3.0])
    t = run_inlined(rule, x ** 2, {"x": x, "y": 2}, {"x": np.ones(2)})
    np.testing.assert_allclose(t, [-4.0, 6.0])
