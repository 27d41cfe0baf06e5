"""The rules of mindgrad/rules/nondiff.py, in both directions: constructors whose fill value is
an input (full, full_like), the float and complex casts, and random permutations and choices of
an array (gathers of its entries), with the helpers their gradients call. The checks:
tests/support/rule_check.py.
"""

import numpy as np

from mindgrad.rules import is_nondifferentiable, jvp_of, lookup, vjp_of
from mindgrad.rules import nondiff as nd
from tests.support.inputs import Draw
from tests.support.rule_check import (
    ADJOINT,
    Cases,
    rule_tests,
    seeded,
)

draw = Draw(20240614)
r, f = draw.r, draw.f
CASES = Cases()
case = CASES.add

case(np.full, (2, 3), f())
case(np.full, (2, 3), r(3))
case(np.full_like, r(2, 3), r(2, 1))
case(np.full_like, r(2, 3), f())
for t in (np.float64, np.longdouble):
    case(t, f())
    case(t, r())
case(np.float64, r(2, 2))
case(np.complex128, r(2), label="complex128-of-real")
# float32, float16, complex64 casts lose the precision central differences need: see
# test_scalar_casts_pass_the_gradient_back and test_scalar_casts_pass_the_tangent

case(seeded(np.random.permutation, 0), r(5), key=np.random.permutation, label="permutation")
case(seeded(np.random.permutation, 1), r(4, 3), key=np.random.permutation,
     label="permutation")
case(seeded(np.random.choice, 2), r(5), 7, key=np.random.choice, label="choice")
case(seeded(np.random.choice, 3), r(7), (2, 3), False, key=np.random.choice, label="choice")

# ----- the helpers the gradients call: a draw's gradient (and tangent) gathers and scatters by
# where each drawn entry came from, which moves with the population

helper = CASES.helper
_population = r(5)  # entries a random draw copies: distinct
helper(nd.draw_grad, r(4), _population, _population[[2, 0, 4, 0]],
       derived={2: lambda args: args[1][[2, 0, 4, 0]]})
helper(nd.draw_tangent, r(5), _population, _population[[3, 1, 1]],
       derived={2: lambda args: args[1][[3, 1, 1]]})
# np.unique's tangent helper, linear in the tangent; its transpose (unique_grad) gives the
# adjoint of np.unique and its relatives: both directions, at distinct entries
_entries = r(2, 3)
helper(nd.unique_tangent, r(2, 3), _entries, np.unique(_entries),
       derived={2: lambda args: np.unique(args[1])})
helper(nd.unique_tangent, r(4), _population[:4], np.unique(_population[:4], return_counts=True),
       derived={2: lambda args: np.unique(args[1], return_counts=True)})

FLOAT32 = Cases()
# the tangent of a NumPy float32 scalar is no array: test_scalar_casts_pass_the_tangent
FLOAT32.add(np.float64, np.float32(1.5), only=ADJOINT)


# the tables' checks: tests/support/rule_check.py
globals().update(rule_tests(CASES, FLOAT32))


# ----- casts: exact values -----------------------------------------------------------------


def test_scalar_casts_pass_the_gradient_back():
    for t in (np.float16, np.float32, np.float64, np.complex64, np.complex128):
        for x in (np.float32(1.25), np.float64(1.25), np.array([1.25, 2.0], dtype=np.float32)):
            _, vjp = vjp_of(t, x)
            g = t(3.0) if np.ndim(x) == 0 else np.full(2, 3.0, dtype=t)
            (gx,) = vjp(g)
            assert np.asarray(gx).dtype == x.dtype
            np.testing.assert_array_equal(gx, np.full(np.shape(x), 3.0))
    _, vjp = vjp_of(np.float32, 1.5)
    assert vjp(np.float32(2.0))[0] == 2.0


def test_scalar_casts_pass_the_tangent():
    for t in (np.float16, np.float32, np.float64, np.complex64, np.complex128):
        for x in (np.float32(1.25), np.float64(1.25), np.array([1.25, 2.0], dtype=np.float32)):
            out, jvp = jvp_of(t, x)
            v = np.full(np.shape(x), 3.0, dtype=np.asarray(x).dtype)[()] if np.ndim(x) == 0 \
                else np.full(2, 3.0, dtype=x.dtype)
            got = jvp(v)
            assert np.asarray(got).dtype == np.asarray(out).dtype
            np.testing.assert_array_equal(got, np.full(np.shape(x), 3.0))


def test_integer_casts_are_constants_and_float_casts_are_not():
    assert is_nondifferentiable(np.int64) and is_nondifferentiable(np.int32)
    assert lookup(np.float32) is not None and lookup(np.float64) is not None
    assert is_nondifferentiable(np.random.standard_normal) and is_nondifferentiable(np.random.rand)
