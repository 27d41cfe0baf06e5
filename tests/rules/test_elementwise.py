"""The elementwise rules (mindgrad/rules/numpy_elementwise.py), in both directions: NumPy's
unary and binary functions on every shape (0-d, Python floats, pairs that broadcast), the Python
scalar functions sharing their templates, where, clip, the array constructors, and the helpers
their gradients call. The checks: tests/support/rule_check.py.
"""

import math

import numpy as np

from mindgrad.rules import numpy_elementwise as ne
from mindgrad.rules import vjp_of
from tests.support.inputs import Draw
from tests.support.rule_check import (
    TANGENTS,
    Cases,
    defined_in_rules,
    rule_tests,
)
from tests.support.versions import needs_numpy

draw = Draw(20240607)
r, pos, unit, big, f, x32 = draw.r, draw.pos, draw.unit, draw.big, draw.f, draw.x32
CASES = Cases()
case = CASES.add

UNARY = [
    (np.exp, r), (np.exp2, r), (np.expm1, r), (np.log, pos), (np.log2, pos), (np.log10, pos),
    (np.log1p, pos), (np.sqrt, pos), (np.cbrt, pos), (np.square, r), (np.reciprocal, pos),
    (np.sin, r), (np.cos, r), (np.tan, unit), (np.arcsin, unit), (np.arccos, unit),
    (np.arctan, r), (np.sinh, r), (np.cosh, r), (np.tanh, r), (np.arcsinh, r),
    (np.arccosh, big), (np.arctanh, unit), (np.sinc, r), (np.deg2rad, r), (np.rad2deg, r),
    (np.radians, r), (np.degrees, r), (np.absolute, r), (np.fabs, r), (np.conjugate, r),
    (np.real, r), (np.imag, r),
]
for fn, gen in UNARY:
    case(fn, f(gen))
    case(fn, gen())
    case(fn, gen(3))
    case(fn, gen(2, 3))
    case(fn, gen(2, 3, 4))
case(np.sinc, np.array([0.0, 0.5, -1.5]), label="sinc-at-zero")

# Python's scalar functions sharing a NumPy function's template: checked on Python floats
for fn, gen in [(math.exp, r), (math.expm1, r), (math.log2, pos), (math.log10, pos),
                (math.sqrt, pos), (math.tan, unit), (math.atan, r), (math.tanh, r), (abs, r)]:
    case(fn, f(gen))
    case(fn, f(gen), label=getattr(fn, "__name__", str(fn)) + "_again")
case(abs, r(2, 3))

BROADCAST_PAIRS = [((), ()), ((3,), (3,)), ((3, 1), (4,)), ((2, 3), ()), ((1, 3), (2, 1)),
                   ((2, 3, 4), (3, 4)), ((4,), (2, 3, 1))]
BINARY = [np.arctan2, np.hypot, np.maximum, np.minimum, np.fmax, np.fmin, np.logaddexp,
          np.logaddexp2, np.copysign]
for fn in BINARY:
    for sx, sy in BROADCAST_PAIRS:
        case(fn, r(*sx), r(*sy))
    case(fn, f(), r(3))
    case(fn, f(), f())

for sc, sx, sy in [((3, 4), (3, 4), (3, 4)), ((3, 1), (4,), ()), ((2, 3), (1, 3), (2, 1)),
                   ((), (3,), (3,)), ((3,), (), ())]:
    case(np.where, draw.rng.random(sc) > 0.5, r(*sx), r(*sy))

case(np.clip, r(3, 4), -0.5, 0.7)
case(np.clip, r(3, 4), draw.rng.uniform(-1, -0.2, 4), draw.rng.uniform(0.2, 1, (3, 1)))
case(np.clip, r(2, 3), None, draw.rng.uniform(-0.3, 0.3, 3))
case(np.clip, r(2, 3), draw.rng.uniform(-0.3, 0.3, (2, 1)), None)
case(np.clip, r(3), draw.rng.uniform(-0.3, 0.3, (2, 3)), 0.5, label="clip-bound-broadcasts")
case(np.clip, f(), -0.5, 0.5)
case(np.clip, r(5), min=-0.5, max=0.5, skip=needs_numpy((2, 1), "np.clip(min=, max=)"))
case(np.clip, r(5), a_min=-0.5, a_max=None)

for fn in (np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray,
           np.copy):
    case(fn, r(2, 3))
    case(fn, f())
case(np.array, [r(3), r(3)])
case(np.array, [f(), f(), f()])
case(np.array, [[f(), 1.0], [f(), f()]], label="array-nested")
case(np.array, (r(2), r(2), r(2)), ndmin=3)
case(np.array, r(3), ndmin=2)
case(np.array, r(3), dtype=np.complex128)
case(np.asarray, [[f(), f()], [f(), f()]])

case(np.angle, r(3))
case(np.angle, r(2, 2), deg=True)

# ----- the helpers the gradients call (what grad of grad differentiates) -------------------

helper = CASES.helper
helper(ne.astype_grad, r(3), r(3))
helper(ne.astype_grad, r(4), r(4))
helper(ne.astype_grad, r(3) + 1j * r(3), r(3))
# no adjoint rules: forward over reverse only
helper(ne.array_grad, r(2, 3), [r(3), r(3)], only=TANGENTS)
helper(ne.array_grad, r(2, 3), r(2, 3), only=TANGENTS)
# np.array's tangent helper, read by reverse over forward and third order
helper(ne.array_tangent, [r(3), r(3)], [r(3), r(3)], r(2, 3))
helper(ne.array_tangent, [[f(), f()], [f(), 0]], [[f(), f()], [f(), f()]], r(2, 2))
helper(ne.array_tangent, r(2, 3), r(2, 3), r(1, 2, 3))
# the casts' and np.full_like's tangent helpers, linear in the tangent: their transposes give
# those functions' adjoints
helper(ne.astype_tangent, r(2, 3), r(2, 3))
helper(ne.astype_tangent, r(3) + 1j * r(3), r(3))  # a cast to real: the real part
helper(ne.fill_tangent, f(), r(2, 3))
helper(ne.fill_tangent, r(3), r(2, 3))
helper(ne.imag_grad, r(3), r(3) + 1j * r(3), only=TANGENTS)
helper(ne.maximum_grad, r(3, 4), r(3, 4), r(4), only=TANGENTS)
helper(ne.fmax_grad, r(3, 4), r(3, 4), r(4), only=TANGENTS)
helper(ne.where_grad, r(3, 4), r(4) > 0, only=TANGENTS)
helper(ne.where_grad, r(3, 4), r(3, 1) > 0, False, only=TANGENTS)
helper(ne.where_grad, r(), True, False, only=TANGENTS)  # the branch not taken: the zero
helper(ne.clip_grad_a, r(3, 4), r(3, 4), -0.5, 0.5, only=TANGENTS)
helper(ne.clip_grad_lower, r(3, 4), r(3, 4), r(4) * 0.3, 0.5, only=TANGENTS)
helper(ne.clip_grad_upper, r(3, 4), r(3, 4), -0.5, r(3, 1) * 0.3, only=TANGENTS)
# the tangents whose transposes give np.clip's adjoint, both directions (ans: the shape only)
helper(ne.clip_tangent_a, r(3, 4), r(3, 4), -0.5, 0.5, r(3, 4))
helper(ne.clip_tangent_a, r(4), r(4), r(3, 1) * 0.3 - 0.4, 0.5, r(3, 4))
helper(ne.clip_tangent_a, r(), r(), -0.5, 0.5, r())
helper(ne.clip_tangent_lower, r(4), r(3, 4), r(4) * 0.3, 0.5, r(3, 4))
helper(ne.clip_tangent_lower, f(), r(3, 4), f(), 0.5, r(3, 4))
helper(ne.clip_tangent_upper, r(3, 1), r(3, 4), -0.5, r(3, 1) * 0.3, r(3, 4))
helper(ne.clip_tangent_upper, f(), r(5), -0.5, f(), r(5))
helper(ne.clip_bounds, r(3), f(), f(), None, None, only=TANGENTS)
helper(ne.clip_bounds, r(3), None, None, f(), f(), only=TANGENTS)
helper(ne.clip_bounds, r(3), None, f(), f(), None, only=TANGENTS)
helper(ne.sinc_grad, r(4), r(4), only=TANGENTS)
helper(ne.sinc_grad, r(3), np.array([0.25, 0.5, -1.5]), only=TANGENTS)

FLOAT32 = Cases()
FLOAT32.add(np.exp, x32(3))
FLOAT32.add(np.log, x32(3, gen=pos))
FLOAT32.add(np.tanh, x32(2, 3))
FLOAT32.add(np.tanh, x32(3))
FLOAT32.add(np.sqrt, x32(3, gen=pos))
FLOAT32.add(np.maximum, x32(3, 1), x32(4))
FLOAT32.add(np.arctan2, x32(3), x32(3))
FLOAT32.add(np.where, draw.rng.random(3) > 0.5, x32(3), x32(3))
FLOAT32.add(np.where, draw.rng.random(3) > 0.5, x32(3), 0.0)
FLOAT32.add(np.clip, x32(3, 4), -0.5, 0.5)
FLOAT32.add(np.sinc, x32(4))
FLOAT32.add(np.array, x32(3), dtype=np.float64)
FLOAT32.add(np.asarray, x32(3), dtype=np.float64)


# the tables' checks: tests/support/rule_check.py
globals().update(rule_tests(CASES, FLOAT32))


# ----- ties, kinks and exact values --------------------------------------------------------


def test_maximum_minimum_split_ties_equally():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 5.0])
    for fn in (np.maximum, np.minimum, np.fmax, np.fmin):
        _, vjp = vjp_of(fn, x, y)
        gx, gy = vjp(np.ones(3))
        assert gx[0] == gy[0] == 0.5
        np.testing.assert_allclose(gx + gy, np.ones(3))


def test_fmax_ignores_nan():
    x, y = np.array([1.0, np.nan]), np.array([np.nan, 2.0])
    _, vjp = vjp_of(np.fmax, x, y)
    gx, gy = vjp(np.ones(2))
    np.testing.assert_array_equal(gx, [1.0, 0.0])
    np.testing.assert_array_equal(gy, [0.0, 1.0])


def test_clip_routes_gradient_to_the_active_bound():
    x = np.array([-2.0, 0.0, 2.0])
    _, vjp = vjp_of(np.clip, x, -1.0, 1.0)
    gx, glo, ghi = vjp(np.array([1.0, 2.0, 4.0]))
    np.testing.assert_array_equal(gx, [0.0, 2.0, 0.0])
    assert glo == 1.0 and ghi == 4.0


def test_array_of_a_list_gives_a_list():
    a, b = np.ones(2), np.zeros(2)
    _, vjp = vjp_of(np.array, [a, b])
    (grads,) = vjp(np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert isinstance(grads, list) and len(grads) == 2
    np.testing.assert_array_equal(grads[1], [3.0, 4.0])


def test_sinc_second_derivative_at_zero():
    sinc_grad_tangent = defined_in_rules("sinc_grad_tangent")

    got = sinc_grad_tangent(2.0, np.array([0.0, 1e-3]), np.array([1.0, 1.0]))
    np.testing.assert_allclose(got, [-2.0 * np.pi ** 2 / 3.0] * 2, rtol=1e-5)
