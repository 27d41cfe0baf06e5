"""The reduction rules (mindgrad/rules/numpy_reductions.py), in both directions: sum, mean,
prod, max, min, var, std and their nan- forms over every axis form, with keepdims, where, initial,
dtype, ddof and mean; cumsum, cumprod, average; and the helpers their gradients call. The checks:
tests/support/rule_check.py.
"""

import numpy as np
import pytest

import mindgrad
from mindgrad.rules import jvp_of, vjp_of
from mindgrad.rules import numpy_averages as navg
from mindgrad.rules import numpy_reductions as nr
from mindgrad.rules import numpy_statistics as nstat
from tests.support.inputs import Draw
from tests.support.rule_check import (
    TANGENTS,
    Cases,
    rule_tests,
)
from tests.support.versions import needs_numpy

draw = Draw(20240608)
r, pos, f, x32 = draw.r, draw.pos, draw.f, draw.x32
CASES = Cases()
case = CASES.add

REDUCTION_FORMS = [((), {}), ((4,), {}), ((3, 4), {}), ((3, 4), {"axis": 0}),
                   ((3, 4), {"axis": -1, "keepdims": True}), ((2, 3, 4), {"axis": (0, 2)}),
                   ((2, 3, 4), {"axis": (-1, 1), "keepdims": True}), ((2, 3, 4), {"axis": 1})]
for fn in (np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std, np.nansum,
           np.nanmean, np.nanmax, np.nanmin):
    for shape, kw in REDUCTION_FORMS:
        case(fn, r(*shape), **kw)
    case(fn, f())
mask = draw.mask(3, 4)
for fn in (np.sum, np.mean, np.prod, np.max, np.min):
    case(fn, r(3, 4), axis=1, where=mask, **({"initial": -10.0} if fn is np.max else
                                              {"initial": 10.0} if fn is np.min else {}))
case(np.sum, r(3, 4), axis=0, dtype=np.float64, initial=2.0)
# an ``initial`` passed by position is an input: moved by the checks
case(np.sum, r(3, 4), 0, None, None, False, f(), label="sum-initial-positional")
case(np.max, r(3, 4), axis=0, initial=0.5)
case(np.prod, r(3, 4), axis=1, initial=2.0)
case(np.prod, r(3, 4), 1, None, None, False, f(), label="prod-initial-positional")
case(np.max, np.array([[0.3, 2.0, -1.0, 0.5], [1.5, -0.7, 0.2, 0.1], [0.4, 0.6, -0.3, 2.5]]),
     0, None, False, 1.0, label="max-initial-wins")
case(np.prod, np.array([1.5, 0.0, -2.0, 0.7]), label="prod-one-zero")
case(np.prod, np.array([1.5, 0.0, -2.0, 0.0]), label="prod-two-zeros")
case(np.prod, np.array([[1.5, 0.0, 2.0], [0.5, 1.2, -1.0]]), axis=1, label="prod-zeros")
case(np.prod, np.zeros((0, 3)), axis=0, label="prod-empty")
case(np.nansum, np.array([1.0, np.nan, 2.0, 3.0]))
case(np.nanmean, np.array([[1.0, np.nan], [2.0, 3.0]]), axis=0)
for fn in (np.var, np.std):
    case(fn, r(3, 4), axis=0, ddof=1)
    case(fn, r(3, 4), 0, None, None, 1)
    case(fn, r(3, 4), axis=1, correction=1, keepdims=True,
         skip=needs_numpy((2, 0), f"np.{fn.__name__}(correction=)"))
    case(fn, r(2, 3, 4), ddof=2)
    case(fn, r(3, 4), axis=1, where=mask, ddof=1)
    case(fn, r(3, 4), axis=0, keepdims=True, mean=np.zeros((1, 4)),
         skip=needs_numpy((2, 0), f"np.{fn.__name__}(mean=)"))
    case(fn, r(3, 4), axis=0, keepdims=True, mean=np.full((1, 4), 0.3),
         skip=needs_numpy((2, 0), f"np.{fn.__name__}(mean=)"))

for fn in (np.cumsum, np.cumprod):
    case(fn, r(5))
    case(fn, r(3, 4))
    case(fn, r(3, 4), 0)
    case(fn, r(3, 4), axis=0)
    case(fn, r(2, 3, 4), axis=-1)
    case(fn, f())
case(np.cumprod, np.array([1.5, 0.0, -2.0, 0.7, 1.1]), label="cumprod-zero")
case(np.cumprod, np.array([[1.5, 0.0, 2.0, 0.0], [0.5, 1.2, -1.0, 2.0]]), axis=1,
     label="cumprod-zeros")

case(np.average, r(3, 4))
case(np.average, r(3, 4), 1)
case(np.average, r(3, 4), None, pos(3, 4))
case(np.average, r(3, 4), 0, pos(3))
case(np.average, r(2, 3, 4), -1, pos(4), keepdims=True,
     skip=needs_numpy((1, 23), "np.average(keepdims=)"))
case(np.average, r(3, 4), 1, pos(3, 4), True)
case(np.average, r(3, 4), 0, None, True)

# ----- the helpers the gradients call (what grad of grad differentiates): forward over reverse
# only, they have no adjoint rules

helper = CASES.helper
# filled, the number in an array's shape that the whole reductions' gradients return, has rules
# of its own in both directions (a Python float or NumPy number is written with .fill)
helper(nr.filled, f(), r(4, 3))
helper(nr.filled, np.float64(f()), r(3))
helper(nr.filled, f(), r())
helper(nr.filled, r(), r(2, 2))
# the same number as a number where a product broadcasts it (transform/reverse_numbers.py)
helper(nr.sum_number, f(), r(4, 3))
helper(nr.sum_number, np.float64(f()), r(3))
helper(nr.sum_number, f(), r())
helper(nr.mean_number, f(), r(4, 3))
helper(nr.mean_number, np.float64(f()), r())
helper(nr.mean_number, f(), r(2, 1))
helper(nr.reduce_sum_grad, r(3), r(4, 3), 0, only=TANGENTS)
helper(nr.reduce_sum_grad, f(), r(4, 3), only=TANGENTS)
helper(nr.reduce_sum_grad, r(4), r(4, 3), 1, False, mask.T, only=TANGENTS)
helper(nr.reduce_mean_grad, r(4, 1), r(4, 3), -1, True, only=TANGENTS)
helper(nr.reduce_mean_grad, f(), r(4, 3), only=TANGENTS)
helper(navg.average_grad_a, r(4), r(3, 4), 0, pos(3), only=TANGENTS)
helper(navg.average_grad_a, r(3, 1), r(3, 4), 1, pos(3, 4), False, True, only=TANGENTS)
helper(navg.average_grad_a, [r(3), r(3)], r(3, 4), 1, pos(3, 4), True, only=TANGENTS)
helper(navg.average_grad_weights, r(4), r(3, 4), 0, pos(3), only=TANGENTS)
helper(navg.average_grad_weights, r(3), r(3, 4), 1, pos(3, 4), only=TANGENTS)
helper(navg.average_grad_weights, [r(3), r(3)], r(3, 4), 1, pos(3, 4), True, only=TANGENTS)
helper(nr.prod_grad, r(3), r(3, 4), 1, only=TANGENTS)
helper(nr.prod_grad, f(), r(2, 3), only=TANGENTS)
helper(nr.prod_grad, r(1, 4), r(3, 4), 0, True, 2.0, only=TANGENTS)
helper(nr.prod_grad, r(3), r(3, 4), 1, False, 1, mask, only=TANGENTS)
helper(nr.prod_grad, f(), np.array([1.5, 0.0, -2.0, 0.7]), only=TANGENTS)
helper(nr.prod_grad, r(2), np.array([[1.5, 0.0, 2.0, 0.0], [0.5, 1.2, -1.0, 2.0]]), 1,
       only=TANGENTS)
_a = r(3, 4)
helper(nr.extremum_grad, r(3), _a, np.max(_a, axis=1), 1,
       derived={2: lambda args: np.max(args[1], axis=1)}, only=TANGENTS)
# the lean path of an extremum found at one place: the scatter and its transpose, the gather
_c = r(3, 4)
_places = np.argmax(_c, axis=1)[:, None]
helper(nstat.extremum_scatter, r(3), _c, _places, 1)
helper(nstat.extremum_scatter, r(3, 1), _c, _places, 1, True)
helper(nstat.extremum_scatter, f(), _c, np.argmax(_c))
helper(nstat.extremum_gather, r(3, 4), _places, 1)
helper(nstat.extremum_gather, r(3, 4), np.argmax(_c), None, True)
# the tangent helpers the reductions' adjoints are transposed from, both directions
_a = r(3, 4)
helper(nr.extremum_tangent, r(3, 4), _a, np.min(_a, axis=0), 0,
       derived={2: lambda args: np.min(args[1], axis=0)})
helper(nr.extremum_tangent, r(3, 4), _a, np.max(_a, axis=1, keepdims=True), 1, True,
       derived={2: lambda args: np.max(args[1], axis=1, keepdims=True)})
helper(nr.extremum_tangent, r(4), _a[0], np.max(_a[0]),
       derived={2: lambda args: np.max(args[1])})
# rows 0 and 2 below the initial 0.5, which is their maximum
_b = np.array([[0.1, 0.2, -1.0], [1.0, 2.0, 3.0], [-0.3, 0.4, -0.9]])
helper(nr.extremum_initial_tangent, f(), _b, np.max(_b, axis=1, initial=0.5), 1, False, True,
       0.5, derived={2: lambda args: np.max(args[1], axis=1, initial=args[6])})
helper(nr.extremum_initial_tangent, f(), _b, np.min(_b, 0, initial=-0.5, keepdims=True), 0, True,
       True, -0.5,
       derived={2: lambda args: np.min(args[1], axis=0, initial=args[6], keepdims=True)})
helper(nr.extremum_initial_grad, r(3), _b, np.max(_b, axis=1, initial=0.5), 1, False, True,
       0.5, derived={2: lambda args: np.max(args[1], axis=1, initial=args[6])}, only=TANGENTS)
helper(nr.ptp_tangent, r(3, 4), _a, 1)
helper(nr.ptp_tangent, r(3, 4), _a, 0, True)
helper(nr.ptp_tangent, r(4), _a[1])
helper(nr.ptp_grad, r(3), _a, 1, only=TANGENTS)
helper(nr.ptp_grad, f(), _a, only=TANGENTS)
helper(nstat.var_grad, r(3), r(3, 4), 1, only=TANGENTS)
helper(nstat.var_grad, f(), r(3, 4), None, 1, only=TANGENTS)
helper(nstat.var_grad, r(1, 4), r(3, 4), 0, 0, True, None, True, np.full((1, 4), 0.2),
       only=TANGENTS)
helper(nstat.var_grad, r(3), r(3, 4), 1, 1, False, None, mask, only=TANGENTS)
_a = r(3, 4)
helper(nstat.std_grad, r(3), _a, np.std(_a, axis=1) + 0.5, 1, only=TANGENTS)
helper(nstat.std_grad, f(), _a, f(pos), only=TANGENTS)
helper(nstat.std_grad, r(1, 4), _a, pos(1, 4), 0, 1, True, None, True, np.full((1, 4), 0.2),
       only=TANGENTS)
helper(nr.cumsum_grad, r(3, 4), r(3, 4), 1, only=TANGENTS)
helper(nr.cumsum_grad, r(12), r(3, 4), only=TANGENTS)
for _a, _axis in [(r(5), None), (r(3, 4), 1), (r(3, 4), 0),
                  (np.array([1.5, 0.0, -2.0, 0.7, 1.1]), None),
                  (np.array([[1.5, 0.0, 2.0, 0.0], [0.5, 1.2, -1.0, 2.0]]), 1)]:
    helper(nr.cumprod_grad, r(*np.cumprod(_a, axis=_axis).shape), _a,
           np.cumprod(_a, axis=_axis), _axis,
           derived={2: lambda args, ax=_axis: np.cumprod(args[1], axis=ax)}, only=TANGENTS)

FLOAT32 = Cases()
FLOAT32.add(np.sum, x32(3, 4), axis=0)
FLOAT32.add(np.sum, x32(3, 4), dtype=np.float64, label="sum-f64")
FLOAT32.add(np.mean, x32(3, 4), axis=1)
FLOAT32.add(np.mean, x32(3, 4))
FLOAT32.add(np.prod, x32(3, 4))
FLOAT32.add(np.max, x32(3, 4), axis=0)
FLOAT32.add(np.var, x32(3, 4))
FLOAT32.add(np.std, x32(3, 4), axis=1)
FLOAT32.add(np.std, x32(3, 4))
FLOAT32.add(np.cumsum, x32(3, 4), axis=0)
FLOAT32.add(np.cumprod, x32(5))
FLOAT32.add(np.average, x32(3, 4), 0, x32(3))


# the tables' checks: tests/support/rule_check.py
globals().update(rule_tests(CASES, FLOAT32))


# ----- ties, zeros and exact values --------------------------------------------------------


def test_max_splits_gradient_among_ties():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    _, vjp = vjp_of(np.max, x, axis=1)
    (gx,) = vjp(np.array([1.0, 3.0]))
    np.testing.assert_allclose(gx, [[0.0, 0.5, 0.5], [1.0, 1.0, 1.0]])
    _, vjp = vjp_of(np.min, x)
    np.testing.assert_allclose(vjp(1.0)[0], [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])


def test_max_and_maximum_split_ties_like_the_gradient():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    _, jvp = jvp_of(np.max, x, axis=1)
    np.testing.assert_allclose(jvp(np.array([[0.0, 1.0, 3.0], [1.0, 2.0, 6.0]])), [2.0, 3.0])
    _, jvp = jvp_of(np.maximum, np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    np.testing.assert_allclose(jvp(np.array([2.0, 2.0]), np.array([4.0, 4.0])), [3.0, 2.0])


def test_prod_with_zeros_is_exact():
    x = np.array([2.0, 0.0, 3.0, 0.0])
    _, vjp = vjp_of(np.prod, x)
    np.testing.assert_array_equal(vjp(1.0)[0], [0.0, 0.0, 0.0, 0.0])
    x = np.array([2.0, 0.0, 3.0])
    _, vjp = vjp_of(np.prod, x)
    np.testing.assert_array_equal(vjp(1.0)[0], [0.0, 6.0, 0.0])


def test_prod_tangent_with_zeros_is_exact():
    x = np.array([2.0, 0.0, 3.0])
    _, jvp = jvp_of(np.prod, x)
    assert jvp(np.array([1.0, 1.0, 1.0])) == 6.0
    _, jvp = jvp_of(np.prod, np.array([2.0, 0.0, 0.0]))
    assert jvp(np.ones(3)) == 0.0


def test_scalar_cotangent_for_array_outputs_of_reductions():
    # d[out] may come as a Python float or a NumPy scalar
    x = r(3, 4)
    for g in (2.0, np.float64(2.0), np.array(2.0)):
        _, vjp = vjp_of(np.sum, x)
        np.testing.assert_array_equal(vjp(g)[0], np.full((3, 4), 2.0))
        _, vjp = vjp_of(np.mean, x)
        np.testing.assert_allclose(vjp(g)[0], np.full((3, 4), 2.0 / 12))


# ----- initial: an input like any other (regressions: reverse mode gave it 0) -------------

_A = np.array([[0.3, 2.0, -1.0], [1.5, -0.7, 0.2]])


def _sum_initial(a, v):
    return np.sum(np.sin(np.sum(a, 0, None, None, False, v)))


def _sum_initial_method(a, v):
    return np.sum(np.sin(a.sum(axis=1, initial=v)))


def _prod_initial(a, v):
    return np.sum(np.prod(a, axis=1, initial=v)) + np.sum(a.prod(axis=0, initial=v))


def _max_initial(a, v):
    # initial (1.0) wins the last column of the max and no row of the min
    return np.sum(np.max(a, axis=0, initial=v) * np.array([1.0, 2.0, 3.0])) + \
        np.sum(a.min(axis=1, initial=v))


@pytest.mark.parametrize("fn", [_sum_initial, _sum_initial_method, _prod_initial, _max_initial])
def test_initial_has_its_gradient_in_both_modes_and_at_second_order(fn):
    mindgrad.check_grads(fn, (_A, 1.0), modes=("rev", "fwd"), order=2)


def test_initial_gradients_closed_forms():
    gv = mindgrad.grad(lambda v: np.sum(np.sum(_A, axis=0, initial=v)))(2.0)
    assert gv == 3.0  # added to each of three column sums
    gv = mindgrad.grad(_max_initial, 1)(_A, 1.0)
    assert gv == 3.0  # wins the last column of the max (weight 3), no result of the min
    # a tie between initial and an element shares the gradient; the shares add up to one
    a = np.array([[1.0], [0.5]])
    ga, gv = mindgrad.grad(lambda a, v: np.sum(np.max(a, axis=0, initial=v)), (0, 1))(a, 1.0)
    np.testing.assert_allclose(ga, [[0.5], [0.0]])
    assert gv == 0.5


@pytest.mark.parametrize("number", [1.5, np.float64(-2.25), np.float32(0.5), np.float16(3.0),
                                    np.longdouble(1.25), np.array(0.75), 2])
@pytest.mark.parametrize("dtype", ["f8", "f4", "i8", "c16"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_filled_is_np_full_in_the_float_dtype(number, dtype, shape):
    a = np.ones(shape, dtype)
    out = nr.filled(number, a)
    expected = np.full(shape, number, np.result_type(a.dtype, np.float32))
    assert out.dtype == expected.dtype and out.shape == shape
    np.testing.assert_array_equal(out, expected)
