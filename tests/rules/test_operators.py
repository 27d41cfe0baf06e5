"""The rules of Python's operators and their NumPy functions (mindgrad/rules/operators.py), in
both directions: +, -, *, /, %, ** on every pair of shapes that broadcast, 0-d arrays and Python
floats; unary - and +; list and tuple concatenation; @ for every pairing of ranks; and the helpers
their gradients call. The checks: tests/support/rule_check.py.
"""

import operator
import warnings

import numpy as np
import pytest

import mindgrad
from mindgrad import rules
from mindgrad.rules import helpers as rule_helpers
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
# the exponent's slope of x ** y over x ** y, log(x): an elementwise rule of its own (its
# products are masked, NaN below 0); checked where it is finite
for shape in ((3,), (2, 3), ()):
    helper(rule_helpers.log_base, pos(*shape))
# the slopes at a pole, computed without NumPy's warning there (np.sqrt's quotient(0.5, out),
# x ** 0.5's power(x, -0.5)): elementwise rules of their own, checked where they are finite,
# broadcast too
for sx, sy in (((3,), (3,)), ((2, 3), (3,)), ((), (2, 3)), ((), ())):
    helper(rule_helpers.quotient, r(*sx), pos(*sy))
    helper(rule_helpers.power, pos(*sx), r(*sy))

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


COEFFS = np.array([0.5, -1.0, 0.3, 0.2])


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _polynomial(x):
    y = 0.0 * x
    for k in range(len(COEFFS)):
        y = y + COEFFS[k] * x ** k
    return np.sum(_sigmoid(y))


def test_pow_by_a_loop_index_at_second_and_third_order_warns_of_nothing():
    """``x ** k`` of a negative ``x`` with ``k`` a loop index: reverse over reverse reads the
    tape's ``k`` as a value that may carry a gradient, and computed the exponent's slope
    ``log(x)`` of the negative ``x`` (NumPy: "invalid value encountered in log") before masking
    it. The slope is NaN there without the warning, and every derivative is still checked."""
    x = np.array([-0.7, 0.4, 1.3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mindgrad.check_grads(_polynomial, (x,), order=3, modes=("rev", "fwd"), directions=1)


@pytest.mark.parametrize("power", [operator.pow, np.power, np.float_power])
def test_the_exponents_gradient_is_x_to_the_y_log_x_and_nan_below_zero(power):
    """d(x ** y)/dy = x ** y log(x), taken as 0 at x = 0 and NaN at a negative x (no real
    derivative), without a warning; complex bases have the complex logarithm's; a float32
    exponent gets a float32 gradient. Both modes, against the closed form."""
    x = np.array([0.5, 2.0, 0.0, -1.5])
    y = np.array([1.5, 2.0, 2.0, 2.0])
    expected = np.array([0.5 ** 1.5 * np.log(0.5), 4.0 * np.log(2.0), 0.0, np.nan])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gy = mindgrad.grad(lambda a, b: np.sum(power(a, b)), 1)(x, y)
        np.testing.assert_allclose(gy, expected, rtol=1e-12)
        for i in range(4):
            e = np.eye(4)[i]
            _, t = mindgrad.jvp(lambda a, b: power(a, b), (x, y), (np.zeros(4), e))
            np.testing.assert_allclose(t[i], expected[i], rtol=1e-12)
        x32, y32 = x[:2].astype(np.float32), y[:2].astype(np.float32)
        g32 = mindgrad.grad(lambda a, b: np.sum(power(a, b)), 1)(x32, y32)
        assert g32.dtype == np.float32  # an input's gradient has its dtype
        np.testing.assert_allclose(g32, expected[:2], rtol=1e-5)
    if power is not np.float_power:
        xc, yc = np.array([0.5 + 1.0j, -2.0 + 0.0j]), np.array([2.0, 3.0])
        gc = mindgrad.grad(lambda a, b: np.real(np.sum(power(a, b))), 1)(xc, yc)
        np.testing.assert_allclose(gc, np.real(xc ** yc * np.log(xc)), rtol=1e-12)
