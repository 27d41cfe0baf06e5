"""The rules of Python's builtins and math module (mindgrad/rules/builtins_math.py), in both
directions: float, sum, max, min, list, tuple, dict, reversed, sorted; math's functions of one
and two arguments, on Python floats; and the helpers their gradients call. The math functions
sharing a NumPy function's template are in test_elementwise.py. The checks:
tests/support/rule_check.py.
"""

import builtins
import math
import tempfile

import numpy as np
import pytest

import mindgrad as mg
from mindgrad.fuzz import generator, oracle
from mindgrad.rules import builtins_math as bm
from mindgrad.rules import helpers as rule_helpers
from tests.support.inputs import Draw
from tests.support.rule_check import (
    TANGENTS,
    Cases,
    rule_tests,
)

draw = Draw(20240612)
r, pos, unit, big, f = draw.r, draw.pos, draw.unit, draw.big, draw.f
CASES = Cases()
case = CASES.add

case(builtins.float, r())
case(builtins.float, f())
case(builtins.float, np.float64(1.5) + 0.25)
case(builtins.sum, [r(3), r(3), f()])
case(builtins.sum, [r(3, 1), r(4)], label="sum-broadcast")
case(builtins.sum, r(4, 3))
case(builtins.sum, [f(), f()], f())
case(builtins.sum, [r(2), r(2)], r(2))
# sequences summed are joined, start first (sum(rows, [])): each item's gradient its own part
case(builtins.sum, [(r(2), f()), (r(3),)], (), label="sum-joins-tuples")
case(builtins.sum, [[r(2, 1)], [f(), r()]], [r(3)], label="sum-joins-lists-after-start")
case(builtins.sum, [(r(2),), (), (r(2), r(1))], (f(),), label="sum-joins-empty-item")
for fn in (builtins.max, builtins.min):
    case(fn, f(), f(), f())
    case(fn, [f(), f(), f()])
    case(fn, r(5))
    case(fn, r(), r())
    case(fn, r(1), label=fn.__name__ + "-one-item")
    case(fn, r(3), default=1.0, label=fn.__name__ + "-default")
# Python's divmod floors as NumPy's does: the remainder moves with x and with -q y
case(builtins.divmod, 5.45, 1.3)
case(builtins.divmod, -2.3, 0.7, label="divmod-negative")
case(builtins.divmod, 3.0 * r(3, 4), pos(4), label="divmod-arrays")
case(builtins.divmod, 3.0 * r(), 0.7, label="divmod-0d")
case(builtins.list, r(3, 2))
case(builtins.list, [r(2), f()])
case(builtins.dict, {"a": r(2), "b": f()})
case(builtins.dict, [("a", r(2)), ("b", f())])
case(builtins.tuple, (r(2), f(), r(1)))
case(builtins.tuple, r(4))
case(builtins.reversed, [r(2), f(), r(3)])
case(builtins.reversed, r(3, 2))
case(sorted, [1.5, -0.3, 0.7])
case(sorted, r(4), label="sorted-array")
case(sorted, r(4), reverse=True, label="sorted-reverse")

MATH = [(math.sin, r), (math.cos, r), (math.log, pos), (math.log1p, pos), (math.sinh, r),
        (math.cosh, r), (math.asin, unit), (math.acos, unit), (math.fabs, r), (math.erf, r),
        (math.erfc, r), (math.asinh, r), (math.acosh, big), (math.atanh, unit),
        (math.degrees, r), (math.radians, r)] + \
    [(getattr(math, name), r) for name in ("cbrt", "exp2") if hasattr(math, name)]
for fn, gen in MATH:
    case(fn, f(gen))
    case(fn, f(gen), label=fn.__name__ + "_again")
case(math.log, f(pos), f(big), label="log-base")
case(math.pow, f(pos), f())
case(math.atan2, f(), f())
case(math.copysign, f(), f())
case(math.copysign, f(), -f(pos))
case(math.hypot, f(), f())
case(math.hypot, f(), f(), f())
case(math.hypot, f())
case(math.ldexp, f(), 3)
case(math.ldexp, f(), -2, label="ldexp-down")
case(math.fmod, 5.45, 1.3)
case(math.fmod, -2.3, 0.7, label="fmod-negative")
case(math.remainder, 5.45, 1.3)
case(math.remainder, 2.3, -0.7, label="remainder-negative")
case(math.gamma, f(pos))
case(math.gamma, -2.3, label="gamma-negative")
case(math.lgamma, f(big))
case(math.lgamma, -2.3, label="lgamma-negative")
case(builtins.complex, f(), f())
case(builtins.complex, f(), label="complex-real-only")
case(builtins.pow, f(pos), f())
case(builtins.pow, -f(pos), 3, label="pow-negative-base-int-exponent")
case(builtins.pow, pos(3), r(2, 1), label="pow-arrays")
case(math.fsum, [f(), f(), f()])
case(math.fsum, r(4), label="fsum-array")
case(math.prod, [f(), f(), f()])
case(math.prod, [f(), 0.0, f()], label="prod-with-a-zero")
case(math.prod, [r(3), f()], start=f(), label="prod-arrays-start")
case(math.dist, [f(), f(), f()], [f(), f(), f()])
case(math.dist, (f(), f()), r(2), label="dist-tuple-array")
case(math.frexp, 5.45)
case(math.frexp, -0.3, label="frexp-negative")
case(math.modf, 5.45)
case(math.modf, -2.3, label="modf-negative")

# ----- the helpers the gradients call (what grad of grad differentiates): forward over reverse
# only, they have no adjoint rules

helper = CASES.helper
# the polygamma functions without SciPy, the slopes of math.gamma and math.lgamma
helper(rule_helpers.digamma, pos(3))
helper(rule_helpers.digamma, np.array([-2.3, -0.5]))
helper(rule_helpers.polygamma, 1, pos(2, 2))
helper(rule_helpers.polygamma, 3, f(big))
helper(bm.sum_grad, r(3), [r(3), r(3)], only=TANGENTS)
helper(bm.sum_grad, r(3), r(4, 3), only=TANGENTS)
# sequences summed (joined): each item its part, the head start's
helper(bm.sum_grad, [r(2), f(), r(3)], [(r(2), f()), (r(3),)], (), only=TANGENTS)
helper(bm.sum_grad, [f(), r(2), f()], [[r(2)], [f()]], [f()], only=TANGENTS)
helper(bm.sum_start_grad, r(2, 3), r(3), only=TANGENTS)
helper(bm.sum_start_grad, [r(2), f(), r(2)], (r(2),), only=TANGENTS)
helper(bm.sum_tangent_grad, r(2, 3), r(2, 3), [r(3), r(2, 1)], only=TANGENTS)
helper(bm.sum_tangent_grad, [f(), r(2), f()], (f(), r(2), f()), [(r(2),), (f(),)],
       only=TANGENTS)
helper(bm.select_grad, f(), 2.0, (1.0, 2.0, 0.5), only=TANGENTS)
helper(bm.select_grad, f(), 2.0, ([1.0, 2.0, 0.5],), only=TANGENTS)
helper(bm.select_default_grad, f(), ([],), only=TANGENTS)
helper(bm.select_default_grad, f(), (np.array([1.0, 2.0]),), only=TANGENTS)
helper(bm.sequence_grad, [r(2), f()], [r(2), 1.5], only=TANGENTS)
helper(bm.sequence_grad, [r(2), 0, r(2)], r(3, 2), only=TANGENTS)
helper(bm.reversed_grad, [r(2), f()], [1.5, r(2)], only=TANGENTS)
helper(bm.dict_grad, {"a": r(2), "b": f()}, {"a": r(2), "b": f()}, only=TANGENTS)
helper(bm.dict_grad, {"a": r(2), "b": f()}, [("a", r(2)), ("b", f())], only=TANGENTS)
helper(bm.sorted_grad, [f(), f(), f()], [2.0, -1.0, 0.5], only=TANGENTS)
helper(bm.sorted_grad, [f(), f(), f()], [2.0, -1.0, 0.5], None, True, only=TANGENTS)
helper(bm.sorted_grad, [f(), f(), f()], np.array([2.0, -1.0, 0.5]), abs, only=TANGENTS)

# the tangent helpers, linear in the tangent: both directions (their adjoints, the gradient
# helpers above, are what reverse mode transposes their functions' tangents by)
helper(bm.select_tangent, (f(), f(), f()), 2.0, (1.0, 2.0, 0.5),
       derived={1: lambda a: max(a[2])})
helper(bm.select_tangent, ([f(), f(), f()],), 2.0, ([1.0, 2.0, 0.5],),
       derived={1: lambda a: max(a[2][0])})
largest = r(3)  # max of two arrays compared whole: the result is the item itself
helper(bm.select_tangent, (r(3), r(3)), largest, (r(3), largest),
       derived={1: lambda a: a[2][1]})
helper(bm.select_default_tangent, f(), 1.5, ([],))
helper(bm.select_default_tangent, f(), 2.0, ([1.0, 2.0],), derived={1: lambda a: max(a[2][0])})
helper(bm.sum_tangent, [r(3), r(2, 1)], r(2, 3), [r(3), r(2, 1)],
       derived={1: lambda a: sum(a[2])})
helper(bm.sum_tangent, [(r(2), f()), (r(3),)], (r(2), f(), r(3)), [(r(2), f()), (r(3),)],
       derived={1: lambda a: sum(a[2], ())})
helper(bm.sum_tangent, [[r(2)], [f()]], [f(), r(2), f()], [[r(2)], [f()]],
       derived={1: lambda a: sum(a[2], [a[1][0]])})
helper(bm.sum_start_tangent, r(3), r(2, 3))
helper(bm.sum_start_tangent, (f(),), (f(), r(2)))
helper(bm.dict_tangent, {"a": r(2), "b": f()}, {"a": r(2), "b": f()})
helper(bm.dict_tangent, [(0, r(2)), (0, f())], [("a", r(2)), ("b", f())])
helper(bm.sequence_tangent, [r(2), f()], [r(2), f()])
helper(bm.sequence_tangent, [r(2), f()], (r(2), f()))
helper(bm.sequence_tangent, r(3, 2), [r(2), r(2), r(2)])
helper(bm.reversed_tangent, [r(2), f(), r(3)])
helper(bm.sorted_tangent, [f(), f(), f()], [2.0, -1.0, 0.5])
helper(bm.sorted_tangent, [f(), f(), f()], [2.0, -1.0, 0.5], None, True)
helper(bm.sorted_tangent, r(3), np.array([2.0, -1.0, 0.5]), abs)


# the tables' checks: tests/support/rule_check.py
globals().update(rule_tests(CASES))


# ----- math.pow at 0 ** 0: the slope of x ** 0 is 0, as operator.pow's ---------------------


def test_math_pow_of_zero_to_the_zero():
    assert mg.grad(lambda x: math.pow(x, 0.0))(0.0) == 0.0
    assert mg.jvp(lambda x: math.pow(x, 0.0), (0.0,), (1.0,)) == (1.0, 0.0)
    assert mg.grad(mg.grad(lambda x: math.pow(x, 0.0)))(0.0) == 0.0
    # 0 ** y is 0 for y > 0: no slope in y; in x, 2 x at 0
    gx, gy = mg.grad(lambda x, y: math.pow(x, y), grad_position=(0, 1))(0.0, 2.0)
    assert (gx, gy) == (0.0, 0.0)
    x, y, h = 1.3, 0.7, 1e-6
    gx, gy = mg.grad(lambda x, y: math.pow(x, y), grad_position=(0, 1))(x, y)
    np.testing.assert_allclose(gx, (math.pow(x + h, y) - math.pow(x - h, y)) / (2 * h), rtol=1e-7)
    np.testing.assert_allclose(gy, (math.pow(x, y + h) - math.pow(x, y - h)) / (2 * h), rtol=1e-7)


# ----- math's and Python's functions together, to the third order ---------------------------

_NEWER = (" + math.cbrt(x + 3.0) + math.exp2(x)" if hasattr(math, "cbrt") else "")
_TOGETHER = {
    "floats": ("""
def f(x):
    a = math.prod([x, x * x, 3.0], start=x + 1.0)
    b = math.dist([x, 1.0, x * x], (0.5, x, 2.0))
    c = pow(x * x + 1.0, 1.5) + pow(2.0, x)
    e = math.fsum([x, math.sin(x), 1.0]) + abs(complex(x, 2.0 * x) * (1 + 0.5j)) ** 2
    g = math.asinh(x) + math.acosh(2.0 + x * x) + math.atanh(x / 3.0) + math.erfc(x)
    h = math.degrees(x) * math.radians(x) + math.lgamma(x * x + 0.5) * math.gamma(
        math.sin(x) + 2.0)""" + _NEWER + """
    return a * b + c * e + g * h
""", [None]),
    "arrays": ("""
def f(x, y):
    a = math.prod([np.sin(x), y, x * y])
    b = pow(np.abs(x) + 1.0, y)
    q, r = divmod(3.0 * x, 1.3)
    return np.sum(a * b + r * r) + math.dist(x, y)
""", [(3,), (3,)]),
}


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp", "value", "third"])
@pytest.mark.parametrize("name", sorted(_TOGETHER))
def test_math_and_builtins_in_every_mode(name, mode):
    """math.prod, math.dist, math.fsum, pow, divmod and math's inverse hyperbolic functions in
    one program, through the tester's oracle: central differences of the value, of the
    gradient and of the second derivative."""
    source, inputs = _TOGETHER[name]
    program = generator.Program("import math\n\nimport numpy as np\n" + source, inputs, 3)
    with tempfile.TemporaryDirectory() as directory:
        result = oracle.check_program(program, mode, directory)
    assert result.outcome == "ok", result.detail


def test_polygamma_without_scipy_against_scipy():
    """The polygamma functions math.gamma's slopes use, against SciPy's where it is installed,
    and against closed forms everywhere: psi(1) = -Euler's gamma, psi_1(1) = pi^2 / 6,
    psi(1/2) = -gamma - 2 log 2, psi_2(1) = -2 zeta(3)."""
    euler = 0.5772156649015329
    np.testing.assert_allclose(rule_helpers.digamma(1.0), -euler, rtol=1e-14)
    np.testing.assert_allclose(rule_helpers.digamma(0.5), -euler - 2 * math.log(2), rtol=1e-14)
    np.testing.assert_allclose(rule_helpers.polygamma(1, 1.0), math.pi ** 2 / 6, rtol=1e-14)
    np.testing.assert_allclose(rule_helpers.polygamma(2, 1.0), -2 * 1.2020569031595942,
                               rtol=1e-14)
    assert np.isnan(rule_helpers.digamma(-3.0)) and np.isnan(rule_helpers.polygamma(2, 0.0))
    # far below 0, by the reflection: psi(-1e10 + 1/2) = psi(1e10 + 1/2) = log(1e10) to
    # rounding, psi_1(x) + psi_1(1 - x) = pi^2 / sin^2(pi x); the recurrence alone took 1e10 steps
    np.testing.assert_allclose(rule_helpers.digamma(-1e10 + 0.5), math.log(1e10), rtol=1e-14)
    x = np.array([-1e12 + 0.25, -2.5, -0.3])
    np.testing.assert_allclose(rule_helpers.polygamma(1, x) + rule_helpers.polygamma(1, 1 - x),
                               np.pi ** 2 / np.sin(np.pi * (x - np.round(x))) ** 2, rtol=1e-12)
    special = pytest.importorskip("scipy.special")
    x = np.array([0.01, 0.3, 1.7, 9.5, 40.0, 300.0, -0.5, -2.3, -7.9])
    for n in range(5):
        np.testing.assert_allclose(rule_helpers.polygamma(n, x), special.polygamma(n, x),
                                   rtol=1e-12)
