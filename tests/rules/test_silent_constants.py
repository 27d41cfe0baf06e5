"""Functions that were taken as constants although their value moves with a float input:
np.nextafter (x moved by one ulp: slope 1 in x), np.heaviside's value at 0, np.arange's start
and step, np.bincount's weights, np.frexp's mantissa (an error before), the index
expressions np.s_ and np.index_exp (which pass their items on), np.mgrid and np.ogrid with
bounds that depend on the input, np.unique's values, histograms and random draws of
differentiated parameters (refused, at the user's line). Each against central differences,
in both modes; the rules' tables are checked by tests/support/rule_check.py."""

import math
import traceback

import numpy as np
import pytest

import mindgrad as mg
from mindgrad.rules import nondiff as nd
from mindgrad.rules import numpy_grids as ngrids
from mindgrad.rules.nondiff import numpy_functions
from mindgrad.rules.numpy_joining import mgrid_, ogrid_, slice_refused
from tests.support.inputs import Draw
from tests.support.orders import central, check_grad_and_jvp
from tests.support.rule_check import TANGENTS, Cases, rule_tests

draw = Draw(20261126)
r, f, x32 = draw.r, draw.f, draw.x32
RNG = np.random.default_rng(2026)
CASES = Cases()
case = CASES.add

for sx, sy in [((), ()), ((3,), (3,)), ((3, 1), (4,)), ((2, 3), ()), ((2, 3, 4), (3, 4))]:
    case(np.nextafter, r(*sx), r(*sy))
case(np.nextafter, f(), r(3))
case(math.nextafter, f(), f())
case(math.nextafter, f(), 10.0, label="nextafter-up")
# heaviside: the first argument held at exact zeros (an integer array, not moved) where the
# second one is the value
case(np.heaviside, np.array([0, 1, -2, 0]), r(4))
case(np.heaviside, np.array([[0], [3]]), r(4), label="heaviside-broadcast")
case(np.heaviside, np.array(0), r(), label="heaviside-0d")
case(np.heaviside, r(2, 3), r(3), label="heaviside-away-from-0")
# arange: start + k step, the stop (a float kept away from where the length jumps) a constant
case(np.arange, 0.3, 4.1)
case(np.arange, 0.3, 2.9, 0.45)
case(np.arange, np.array(-0.2), np.array(1.95), np.array(0.3), label="arange-0d")
case(np.arange, 4.1, label="arange-stop-only")
case(np.arange, 2.3, -1.1, -0.7, label="arange-down")
case(np.arange, 1.2, 4.1, None, label="arange-step-none")
helper = CASES.helper
helper(ngrids.arange_grads, r(4), (0.3, 2.9, 0.65), np.arange(0.3, 2.9, 0.65))
helper(ngrids.arange_grads, r(3), (0.5, 3.4), np.arange(0.5, 3.4))
helper(ngrids.arange_tangent, (f(), 0, f()), (0.3, 2.9, 0.65), np.arange(0.3, 2.9, 0.65))
helper(ngrids.arange_tangent, (f(), 0), (0.5, 3.4), np.arange(0.5, 3.4))
# bincount: linear in its weights (the bins, integers, do not move)
case(np.bincount, np.array([0, 2, 2, 1, 0]), r(5))
case(np.bincount, np.array([3, 1]), r(2), 6, label="bincount-minlength")
helper(nd.bincount_grad, r(4), np.array([0, 3, 3, 1, 2]), r(5), only=TANGENTS)
helper(nd.bincount_grad, r(2), np.array([1, 1, 0]), r(3), only=TANGENTS)
# bincount's tangent, whose transpose gives its adjoint: both directions (weights: the shape)
helper(nd.bincount_tangent, r(5), np.array([0, 3, 3, 1, 2]), r(5))
helper(nd.bincount_tangent, r(3), np.array([1, 1, 0]), r(3), 4)
helper(nd.bincount_tangent, r(1), np.array([2]), r(1))
# frexp: the mantissa x 2^-e, the exponent piecewise constant (entries kept off powers of 2)
case(np.frexp, np.array([0.3, -1.7, 5.45]))
case(np.frexp, 3.0 * r(2, 3))
case(np.frexp, np.array(0.3), label="frexp-0d")
case(np.frexp, 2.7, label="frexp-float")
# histogram: the counts constants, the edges from the data's minimum to its maximum
_data = np.array([1.3, 0.4, 2.2, 0.9, 1.7])
case(np.histogram, _data, 3)
case(np.histogram, _data.reshape(5, 1), label="histogram-2d-data")
case(np.histogram, _data, "auto", label="histogram-auto")
case(np.histogram, _data, np.array([0, 1, 3]), label="histogram-integer-edges")
helper(nd.histogram_data_grad, (r(3), r(4)), _data, 3, None, False, np.histogram(_data, 3),
       only=TANGENTS)
case(np.histogram_bin_edges, _data, 4)
case(np.histogram_bin_edges, _data.reshape(5, 1), "auto", label="histogram_bin_edges-auto")
helper(nd.bin_edges_grad, r(4), _data, 3, None, np.histogram_bin_edges(_data, 3),
       only=TANGENTS)
helper(nd.bin_edges_tangent, r(5), _data, 3, None, np.histogram_bin_edges(_data, 3),
       only=TANGENTS)
helper(nd.histogram_data_tangent, r(5), _data, 3, None, False, np.histogram(_data, 3),
       only=TANGENTS)
# unique: the values are entries of the input where those are distinct
case(np.unique, np.array([1.3, 0.4, 2.2, 0.9]))
case(np.unique, r(2, 3), label="unique-2d")
case(np.unique, np.array([1.3, 0.4, 2.2]), True, True, True, label="unique-all-flags")
for _fn in numpy_functions("unique_values", "unique_counts", "unique_inverse", "unique_all"):
    case(_fn, np.array([1.3, 0.4, 2.2, 0.9]))
helper(nd.unique_grad, r(3), np.array([1.3, 0.4, 2.2]), np.unique([1.3, 0.4, 2.2]),
       only=TANGENTS)
helper(nd.unique_tangent, r(3), np.array([1.3, 0.4, 2.2]), np.unique([1.3, 0.4, 2.2]),
       only=TANGENTS)

FLOAT32 = Cases()
FLOAT32.add(np.unique, x32(4))
FLOAT32.add(np.bincount, np.array([0, 2, 2]), x32(3))
FLOAT32.add(np.arange, np.array(0.3, np.float32), 3, np.array(0.45, np.float32))
# np.nextafter in float32: test_nextafter_gradient_is_one_not_zero (its direction gets no
# gradient, not a float32 zero)
FLOAT32.add(np.heaviside, np.array([0, 1, -1], np.float32), x32(3), only="tangent")

globals().update(rule_tests(CASES, FLOAT32))


def check_both_modes(fn, x, rtol=1e-6, atol=1e-8):
    check_grad_and_jvp(fn, x, RNG, rtol, atol)


# ----- np.nextafter, np.heaviside ------------------------------------------------------------


def nextafter_up(b):
    return np.sum(np.nextafter(b, 10.0) * np.cos(b))


def nextafter_both(b):
    return np.sum(np.nextafter(b ** 2, b) * (np.arange(np.size(b)) + 1.0).reshape(np.shape(b)))


def heaviside_value(b):
    return np.sum(np.heaviside(np.array([0.0, 1.0, -1.0]), b) * np.sin(b))


def heaviside_step(b):
    return np.sum(np.heaviside(b, 0.5) * b)


PROGRAMS = [(nextafter_up, (3,)), (nextafter_up, ()), (nextafter_up, (2, 3)),
            (nextafter_both, (4,)), (nextafter_both, ()), (heaviside_value, (3,)),
            (heaviside_value, ()), (heaviside_step, (2, 3))]


@pytest.mark.parametrize("fn, shape", PROGRAMS,
                         ids=[f"{fn.__name__}-{shape}" for fn, shape in PROGRAMS])
def test_programs_match_central_differences(fn, shape):
    check_both_modes(fn, RNG.uniform(0.5, 2.0, shape))


def test_nextafter_gradient_is_one_not_zero():
    g = mg.grad(lambda b: np.sum(np.nextafter(b, 10.0)))(np.ones(3))
    np.testing.assert_array_equal(g, np.ones(3))
    g32 = mg.grad(lambda b: np.sum(np.nextafter(b, 10.0)))(np.ones(3, np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_array_equal(g32, np.ones(3, np.float32))
    np.testing.assert_array_equal(
        mg.jvp(lambda b: np.nextafter(b, -1.0), (np.ones(2),), (np.array([2.0, 3.0]),))[1],
        [2.0, 3.0])


def test_heaviside_value_at_zero_gets_the_gradient():
    g = mg.grad(lambda h: np.sum(np.heaviside(np.array([0.0, 2.0, -1.0, 0.0]), h)))(np.ones(4))
    np.testing.assert_array_equal(g, [1.0, 0.0, 0.0, 1.0])


def test_frexp_mantissa_moves_with_x():
    def fn(b):
        mantissa, exponent = np.frexp(b)
        return np.sum(np.sin(mantissa) * exponent)

    check_both_modes(fn, np.array([0.3, -1.7, 5.45]))
    check_both_modes(fn, np.array(2.7))
    g32 = mg.grad(fn)(np.array([0.3, 5.45], np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, mg.grad(fn)(np.array([0.3, 5.45], np.float32).astype(float)),
                               rtol=1e-6)


# ----- np.arange ------------------------------------------------------------------------------


def arange_start(b):
    return np.sum(np.sin(np.arange(b[0], 5.0)) * b[1])


def arange_step(b):
    return np.sum(np.sin(np.arange(b[0], 2.9, b[1])) ** 2)


@pytest.mark.parametrize("fn", [arange_start, arange_step])
def test_arange_moves_with_start_and_step(fn):
    x = np.array([0.31, 0.17])
    check_both_modes(fn, x)
    np.testing.assert_allclose(  # forward over reverse against central differences
        mg.jvp(mg.grad(fn), (x,), (np.array([0.3, -0.5]),))[1],
        central(mg.grad(fn), x, np.array([0.3, -0.5])), rtol=1e-5)


def test_arange_gradient_is_not_zero():
    g = mg.grad(lambda b: np.sum(np.arange(b, 5.0)))(0.5)
    assert g == 5.0  # 0.5, 1.5, ..., 4.5
    g32 = mg.grad(lambda b: np.sum(np.arange(b, np.float32(3.0))))(np.float32(0.5))
    assert g32 == 3.0 and g32.dtype == np.float32
    assert mg.grad(lambda b: np.sum(np.arange(4) * b))(2.0) == 6.0


# ----- np.s_, np.index_exp: the items pass through -------------------------------------------


def s_item(b):
    return np.sum(np.sin(np.s_[b]))


def s_pair(b):
    first, second = np.s_[b, 2.0 * b]
    return np.sum(first * np.cos(second))


def s_slicing(b):
    return np.sum(b[np.s_[1:]] ** 3)


def index_exp_items(b):
    return np.sum(np.exp(np.index_exp[b][0]) * np.index_exp[b, 0:2][0])


INDEXED = [(s_item, (3,)), (s_item, ()), (s_pair, (2, 3)), (s_slicing, (4,)),
           (index_exp_items, (3,)), (index_exp_items, ())]


@pytest.mark.parametrize("fn, shape", INDEXED,
                         ids=[f"{fn.__name__}-{shape}" for fn, shape in INDEXED])
def test_index_expressions_pass_their_items_on(fn, shape):
    check_both_modes(fn, RNG.standard_normal(shape))


def test_index_exp_gradient_is_not_zero():
    g = mg.grad(lambda b: np.sum(np.index_exp[b][0]))(np.ones(3))
    np.testing.assert_array_equal(g, np.ones(3))


# ----- np.mgrid, np.ogrid: moving bounds are refused, constant ones are constants ------------


def mgrid_linspace(b):
    return np.sum(np.mgrid[0:b[0]:5j])


def ogrid_bound(b):
    return np.sum(np.ogrid[0:3, b[0]:4:3j][1])


def mgrid_step(b):
    return np.sum(np.mgrid[0.0:2.0:b[1]])


def r_range(b):
    return np.sum(np.r_[b, 0:b[0]:4j])


@pytest.mark.parametrize("fn", [mgrid_linspace, ogrid_bound, mgrid_step, r_range])
def test_grids_with_moving_bounds_are_refused_at_the_users_line(fn):
    x = np.array([1.5, 0.5, 2.0])
    for run in (lambda: mg.grad(fn)(x), lambda: mg.jvp(fn, (x,), (np.ones(3),))):
        with pytest.raises(NotImplementedError, match="np.linspace") as info:
            run()
        # the user's line: in a note on Python 3.11+, a frame of the traceback on any Python
        frames = [frame.filename for frame in traceback.extract_tb(info.tb)]
        assert any(name.endswith("test_silent_constants.py") for name in frames)


def test_grids_of_constant_bounds_are_constants():
    def fn(b):
        return np.sum(np.mgrid[0:3, 0:2][0] * b) + np.sum(np.ogrid[0:1:4j] * b[0])

    check_both_modes(fn, RNG.standard_normal(2))
    np.testing.assert_array_equal(mgrid_(slice(0, 3)), np.mgrid[0:3])
    np.testing.assert_array_equal(ogrid_(slice(0, 1, 3j))[0], np.ogrid[0:1:3j][0])


def test_slice_rules_refuse():
    with pytest.raises(NotImplementedError, match="i:j:k"):
        slice_refused(0.0, 1.5)
    for key, args in [(slice, (0.0, 2.0)), (mgrid_, (slice(0, 2.0, 3j),)),
                      (ogrid_, (slice(0, 2.0, 3j),))]:
        out, vjp = mg.rules.vjp_of(key, *args)
        with pytest.raises(NotImplementedError, match="i:j:k"):
            vjp(out)
        out, jvp = mg.rules.jvp_of(key, *args)
        with pytest.raises(NotImplementedError, match="i:j:k"):
            jvp(*args)


# ----- np.bincount's weights; np.unique, histograms, random draws: refused where they move ----


def bincount_weights(b):
    return np.sum(np.bincount(np.array([0, 2, 2, 1]), b, 5) ** 2 * np.arange(5.0))


def unique_counts_only(b):
    return np.sum(np.unique(b, return_counts=True)[1] * 1.0) * np.sum(b ** 2)


def histogram_counts_only(b):
    return np.sum(np.histogram(b, bins=3)[0] * np.arange(3.0)) * np.sum(np.sin(b))


def test_bincount_is_linear_in_its_weights():
    check_both_modes(bincount_weights, RNG.standard_normal(4))
    g = mg.grad(lambda w: np.sum(np.bincount(np.array([0, 1, 1]), weights=w) * np.array(
        [2.0, 3.0])))(np.ones(3))
    np.testing.assert_array_equal(g, [2.0, 3.0, 3.0])


def test_constant_parts_still_differentiate_in_reverse_mode():
    x = np.array([0.3, 1.2, 0.3, 2.0])
    for fn in (unique_counts_only, histogram_counts_only):
        v = RNG.standard_normal(4)
        np.testing.assert_allclose(np.sum(mg.grad(fn)(x) * v), central(fn, x, v), rtol=1e-6)


MOVING = {
    "histogram-density": lambda b: np.sum(np.histogram(b, bins=3, density=True)[0]),
    "histogram-weights": lambda b: np.sum(np.histogram(np.arange(3.0), 3, weights=b)[0]),
    "histogram-bins": lambda b: np.sum(np.histogram(np.arange(3.0), bins=np.sort(b))[1]),
    "histogram-range": lambda b: np.sum(np.histogram(np.arange(3.0), 2, (b[0], 3.0))[1]),
    "histogram2d": lambda b: np.sum(np.histogram2d(b, b * 2, bins=2)[1]),
    "histogramdd": lambda b: np.sum(np.histogramdd(b, bins=2)[1][0]),
    "normal": lambda b: np.sum(np.random.normal(b, 1.0)),
    "normal-scale": lambda b: np.sum(np.random.normal(0.0, b)),
    "uniform": lambda b: np.sum(np.random.uniform(b, 5.0)),
    "exponential": lambda b: np.sum(np.random.exponential(b)),
    "gamma": lambda b: np.sum(np.random.gamma(b)),
    "lognormal": lambda b: np.sum(np.random.lognormal(0.0, b)),
    "dirichlet": lambda b: np.sum(np.random.dirichlet(b) * np.arange(3.0)),
    "multivariate_normal": lambda b: np.sum(np.random.multivariate_normal(b, np.eye(3))),
}


@pytest.mark.parametrize("name", MOVING)
def test_values_that_move_are_refused_in_both_modes(name):
    fn, x = MOVING[name], np.array([1.3, 0.4, 2.2])
    for run in (lambda: mg.grad(fn)(x), lambda: mg.jvp(fn, (x,), (np.ones(3),))):
        with pytest.raises(NotImplementedError, match="moves with the differentiated input"):
            run()


def histogram_edges(b):
    counts, edges = np.histogram(b, bins=3)
    return np.sum(np.sin(edges) * np.arange(4.0)) + np.sum(counts * b[:3])


def histogram_given_edges(b):
    counts, edges = np.histogram(b, bins=np.array([0.0, 1.0, 2.5]))
    density = np.histogram(b, 3, (0.0, 3.0), density=True)[0]
    return np.sum(counts * b[:2]) + np.sum(edges) * b[0] + np.sum(density * b[1:4])


def bin_edges(b):
    return np.sum(np.cos(np.histogram_bin_edges(b, 4)) * np.arange(5.0))


@pytest.mark.parametrize("fn", [histogram_edges, histogram_given_edges, histogram_counts_only,
                                bin_edges])
def test_histogram_edges_move_with_the_data_extremes(fn):
    x = np.array([1.3, 0.4, 2.2, 0.9, 1.7])
    check_both_modes(fn, x)
    v = RNG.standard_normal(5)  # forward over reverse
    np.testing.assert_allclose(mg.jvp(mg.grad(fn), (x,), (v,))[1],
                               central(mg.grad(fn), x, v), rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("fn", [histogram_edges, bin_edges])
@pytest.mark.parametrize("shape", [(5,), (2, 3)])
def test_histogram_edges_in_reverse_over_reverse(fn, shape):
    """grad of grad reads the edges' gradient helper as code: it must be differentiable (it
    wrote into ``grad.flat[...]``, which the reverse pass refused). The Hessian times ``v``
    against central differences of the gradient along ``v``; float32 keeps its dtype."""
    x = np.array([1.3, 0.4, 2.2, 0.9, 1.7, 0.2])[:int(np.prod(shape))].reshape(shape)
    v = RNG.standard_normal(shape)

    def along(y):
        return np.sum(mg.grad(fn)(y) * v)

    np.testing.assert_allclose(mg.grad(along)(x), central(mg.grad(fn), x, v),
                               rtol=1e-5, atol=1e-8)
    assert mg.grad(fn)(x.astype(np.float32)).dtype == np.float32


def test_histogram_edges_at_a_shared_extreme_are_refused():
    def fn(b):
        return np.sum(np.histogram(np.r_[b, b[2]], bins=3)[1])

    x = np.array([1.3, 0.4, 2.2])
    for run in (lambda: mg.grad(fn)(x), lambda: mg.jvp(fn, (x,), (np.ones(3),))):
        with pytest.raises(NotImplementedError, match="several entries share"):
            run()


def unique_sum(b):
    values = np.unique(b)
    return np.sum(np.sin(values) * np.arange(np.size(values)))


def unique_flags(b):
    values, inverse, counts = np.unique(b, return_inverse=True, return_counts=True)
    return np.sum(values ** 2 * counts) + np.sum(np.ravel(inverse) * np.ravel(b))


@pytest.mark.parametrize("fn", [unique_sum, unique_flags])
def test_unique_values_are_entries_of_the_input(fn):
    for shape in [(4,), (2, 3), ()]:
        check_both_modes(fn, RNG.standard_normal(shape))
    x, v = RNG.standard_normal(4), RNG.standard_normal(4)  # forward over reverse
    np.testing.assert_allclose(mg.jvp(mg.grad(fn), (x,), (v,))[1], central(mg.grad(fn), x, v),
                               rtol=1e-5, atol=1e-8)
    g = mg.grad(lambda b: np.sum(np.unique(b) * np.array([1.0, 2.0, 3.0])))(
        np.array([0.5, -1.0, 2.0]))
    np.testing.assert_array_equal(g, [2.0, 1.0, 3.0])


def test_unique_of_repeated_entries_is_refused():
    x = np.array([1.3, 0.4, 1.3])
    with pytest.raises(NotImplementedError, match="repeat"):
        mg.grad(lambda b: np.sum(np.unique(b) * np.array([1.0, 2.0])))(x)
    with pytest.raises(NotImplementedError, match="repeat"):
        mg.jvp(lambda b: np.sum(np.unique(b) * np.array([1.0, 2.0])), (x,),
               (np.array([1.0, 0.0, 0.0]),))
    # moved together, copies stay one value: the tangent exists
    t = mg.jvp(lambda b: np.sum(np.unique(b) * np.array([1.0, 2.0])), (x,), (np.ones(3),))[1]
    assert t == 3.0


def test_draws_of_constant_parameters_are_constants():
    def fn(b):
        return np.sum(np.random.normal(0.0, 2.0, 3) * b)

    np.random.seed(3)
    g = mg.grad(fn)(np.ones(3))
    np.random.seed(3)
    np.testing.assert_array_equal(g, np.random.normal(0.0, 2.0, 3))


# ----- zip and enumerate kept as values: refused; iterated over: differentiated --------------


def zip_listed(b):
    pairs = list(zip(b, b * 2.0))
    return pairs[1][1] * 3.0


def enumerate_listed(b):
    return list(enumerate(b))[2][1] * 3.0


def dict_of_zip(b):
    return dict(zip(["a", "b"], [b[0], b[1] * 2.0]))["b"] * 3.0


def dict_of_pairs(b):
    named = dict((k, v) for k, v in zip(["a", "b"], [b[0], b[1] * 2.0]))
    return named["b"] * np.sin(named["a"])


def pairs_comprehension(b):
    pairs = [(u, w) for u, w in zip(b, np.cos(b))]
    return pairs[1][1] * pairs[2][0] + sum(i * v for i, v in enumerate(b))


@pytest.mark.parametrize("fn", [zip_listed, enumerate_listed, dict_of_zip])
def test_zip_and_enumerate_kept_as_values_are_refused(fn):
    x = np.array([1.3, 0.4, 2.2])
    for run in (lambda: mg.grad(fn)(x), lambda: mg.jvp(fn, (x,), (np.ones(3),))):
        with pytest.raises(NotImplementedError, match="comprehension"):
            run()


@pytest.mark.parametrize("fn", [dict_of_pairs, pairs_comprehension])
def test_zip_and_enumerate_iterated_over_differentiate(fn):
    check_both_modes(fn, RNG.standard_normal(3))



def test_the_refusal_is_linear_in_what_it_is_given():
    """moves_refused(what, g) is 0 for g = 0 and refuses otherwise, in both directions: its
    adjoint and tangent (what the random draws' transposed rules and a second derivative
    through a refusal run) pass a zero and refuse a value."""
    from mindgrad.rules import jvp_of, vjp_of

    out, vjp = vjp_of(nd.moves_refused, "a draw", 0, _active=("g",))  # the zero 0 as g
    assert out == 0 and vjp(0) == (0, 0)
    with pytest.raises(NotImplementedError, match="a draw: a value that moves"):
        vjp(1.5)
    out, jvp = jvp_of(nd.moves_refused, "a draw", 0)
    assert out == 0 and jvp(None, 0) == 0
    with pytest.raises(NotImplementedError, match="a draw: a value that moves"):
        jvp(None, np.ones(2))
