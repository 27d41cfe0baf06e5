"""The shape rules (mindgrad/rules/numpy_shape.py), in both directions: reshaping, transposing,
joining, splitting, tiling, flipping, sorting, diagonals, take, pad, diff, meshgrid, the spacing
constructors (linspace, logspace, geomspace), and the helpers their gradients call. The checks:
tests/support/rule_check.py.
"""

import inspect

import numpy as np
import pytest

import mindgrad
from mindgrad.rules import jvp_of, vjp_of
from mindgrad.rules import numpy_grids as ngrids
from mindgrad.rules import numpy_joining as njoin
from mindgrad.rules import numpy_reductions as nr
from mindgrad.rules import numpy_shape as ns
from tests.support.inputs import Draw
from tests.support.rule_check import (
    TANGENTS,
    Cases,
    defined_in_rules,
    rule_tests,
)
from tests.support.versions import needs_numpy, numpy_function

pytestmark = pytest.mark.filterwarnings("ignore:`row_stack` alias is deprecated:DeprecationWarning")
draw = Draw(20240609)
r, pos, unit, big, f, x32 = draw.r, draw.pos, draw.unit, draw.big, draw.f, draw.x32
CASES = Cases()
case = CASES.add

case(np.reshape, r(2, 3), (3, 2))
case(np.reshape, r(2, 3, 4), (4, -1), order="F")
case(np.reshape, r(6), shape=(2, 3), skip=needs_numpy((2, 1), "np.reshape(shape=)"))
case(np.reshape, f(), (1, 1))
case(np.ravel, r(2, 3))
case(np.ravel, r(2, 3), order="F")
case(np.ravel, r(2, 3), "F")
case(np.expand_dims, r(2, 3), (0, 2))
case(np.expand_dims, f(), 0)
case(np.squeeze, r(1, 3, 1))
case(np.squeeze, r(1, 3, 1), axis=-1)
case(np.atleast_1d, f())
case(np.atleast_1d, r(), r(3))
case(np.atleast_2d, r(3))
case(np.atleast_3d, r(2, 3), r(), f())
case(np.broadcast_to, r(3, 1), (2, 3, 4))
case(np.broadcast_to, f(), (2, 2))
case(np.transpose, r(2, 3))
case(np.transpose, r(2, 3, 4))
case(np.transpose, r(2, 3, 4), (1, 0, 2))
case(np.transpose, r(2, 3, 4), axes=(-1, 0, 1))
case(np.swapaxes, r(2, 3, 4), 0, -1)
case(np.moveaxis, r(2, 3, 4), 0, -1)
case(np.moveaxis, r(2, 3, 4), (0, 1), (2, 0))
case(numpy_function("matrix_transpose", (2, 0)), r(2, 3, 4))

case(np.concatenate, [r(2, 3), r(1, 3), r(4, 3)])
case(np.concatenate, [r(2, 3), r(2, 1)], axis=1)
case(np.concatenate, [r(2, 3), r(2, 1)], -1)
case(np.concatenate, [r(2, 3), r(4)], axis=None)
case(np.concatenate, r(3, 2, 2), label="concatenate-of-an-array")
case(np.stack, [r(2, 3), r(2, 3)])
case(np.stack, [r(2, 3), r(2, 3), r(2, 3)], axis=-1)
case(np.stack, [f(), f()])
case(np.hstack, [r(3), r(2)])
case(np.hstack, [r(2, 3), r(2, 1)])
case(np.hstack, (f(), r(2)))
case(np.vstack, [r(3), r(3)])
case(np.vstack, [r(2, 3), r(1, 3), r(3)])
if hasattr(np, "row_stack"):  # deprecated in NumPy 2.0, whose warning the checks ignore
    case(np.row_stack, [r(2, 3), r(1, 3), r(3)])
    case(np.row_stack, [r(3), r(3)])
case(np.dstack, [r(2, 3), r(2, 3, 2)])
case(np.column_stack, [r(3), r(3, 2)])

# zero_cotangent: pieces of the output that receive no gradient (the tangent check ignores it)
case(np.split, r(6), 3)
case(np.split, r(4, 6), [1, 4], axis=1)
case(np.split, r(6, 2), 3, zero_cotangent=(1,), label="split-unused-piece")
case(np.array_split, r(7), 3)
case(np.array_split, r(2, 7), 3, axis=-1, zero_cotangent=(0, 2))
case(np.hsplit, r(2, 4), 2)
case(np.hsplit, r(4), [1])
case(np.vsplit, r(4, 2), 2)
case(np.dsplit, r(2, 2, 4), [1, 3])
case(numpy_function("unstack", (2, 1)), r(3, 2))
case(numpy_function("unstack", (2, 1)), r(3, 2, 4), axis=1, zero_cotangent=(0,))

case(np.tile, r(3), 2)
case(np.tile, r(2, 3), (2, 1))
case(np.tile, r(3), (2, 2, 2))
case(np.tile, f(), 3)
case(np.repeat, r(3), 2)
case(np.repeat, r(2, 3), 2, axis=0)
case(np.repeat, r(2, 3), [1, 0, 3], axis=-1)
case(np.repeat, r(2, 3), 2)
case(np.repeat, f(), 4)

case(np.flip, r(3))
case(np.flip, r(2, 3, 4), axis=(0, 2))
case(np.fliplr, r(2, 3))
case(np.flipud, r(2, 3))
case(np.roll, r(5), 2)
case(np.roll, r(2, 3), 1)
case(np.roll, r(2, 3, 4), (1, -2), axis=(0, 2))
case(np.rot90, r(2, 3))
case(np.rot90, r(2, 3, 4), 3, axes=(1, 2))
case(np.sort, r(5))
case(np.sort, r(3, 4), axis=0)
case(np.sort, r(3, 4), axis=None)
case(np.sort, r(2, 3, 4))
case(np.sort_complex, r(5))
# np.trim_zeros of nonzero values (a perturbed zero would move the range); the trimming itself:
# test_trim_zeros_is_a_gather_of_the_kept_range
case(np.trim_zeros, pos(5))
case(np.trim_zeros, pos(5), "b")
case(np.sort_complex, r(3, 4))
case(np.sort_complex, r(4) + 1j * r(4))

case(np.diag, r(3))
case(np.diag, r(3), 1)
case(np.diag, r(3), k=-2)
case(np.diag, r(3, 4))
case(np.diag, r(4, 3), 1)
case(np.diag, r(4, 3), -1)
case(np.diag, r(3, 4), -1)
case(np.diagonal, r(3, 3))
case(np.diagonal, r(3, 4), 1)
case(np.diagonal, r(2, 3, 4), -1, 2, 0)
case(np.trace, r(3, 3))
case(np.trace, r(3, 4), -1)
case(np.trace, r(2, 3, 4), axis1=1, axis2=2)
for fn in (np.triu, np.tril):
    case(fn, r(3, 3))
    case(fn, r(3, 4), 1)
    case(fn, r(2, 3, 3), k=-1)
    case(fn, r(4))

case(np.take, r(5), [0, 2, 2, 4])
case(np.take, r(3, 4), np.array([[0, 1], [3, 3]]), axis=1)
case(np.take, r(3, 4), [1, 1, -1], axis=0)
case(np.take, r(3, 4), 5)
case(np.take, r(3, 4), [0, 5, -7], axis=1, mode="clip")
case(np.take, r(3, 4), [0, 5, -7], mode="wrap")
case(np.take_along_axis, r(3, 4), np.argsort(draw.rng.random((3, 4)), axis=1)[:, :2], axis=1)
case(np.take_along_axis, r(3, 4), np.array([[0, 0, 2, 1]]), axis=0)

case(np.pad, r(3), 2)
case(np.pad, r(3), (1, 2), "constant", constant_values=5.0)
for mode in ("edge", "reflect", "symmetric", "wrap"):
    case(np.pad, r(2, 4), ((1, 2), (3, 1)), mode)
# modes whose gradient says it has none (test_pad_of_a_statistic_mode_says_so): forward only
for mode in ("mean", "linear_ramp"):
    case(np.pad, r(2, 4), ((1, 2), (3, 1)), mode, only=TANGENTS)
case(np.pad, r(5), 2, "reflect", reflect_type="odd", only=TANGENTS)
case(np.diff, r(6))
case(np.diff, r(6), 2)
case(np.diff, r(4, 5), axis=0)
case(np.diff, r(4, 5), 1, 1, r(4, 1), r(4, 2))
case(np.diff, r(5), 1, -1, f())

case(np.meshgrid, r(3), r(4))
case(np.meshgrid, r(3), r(4), indexing="ij")
case(np.meshgrid, r(2), r(3), r(4))
case(np.meshgrid, r(3), r(2), sparse=True)
case(np.meshgrid, r(3), r(2, 2), sparse=True)

case(np.linspace, f(), f(), 5)
case(np.linspace, r(3), f(), 4, False, axis=-1)
case(np.linspace, r(2, 3), r(3), 4, retstep=True, axis=1)
case(np.linspace, f(), f(), 1)
case(np.logspace, f(unit), f(unit), 5)
case(np.logspace, r(2) * 0.3, f(unit), 4, base=f(pos) + 1.0, axis=-1)
case(np.logspace, f(unit), f(unit), 4, True, pos(2) + 1.0,
     skip=needs_numpy((1, 25), "an array base of np.logspace"))
case(np.geomspace, f(pos), f(big), 5)
case(np.geomspace, -pos(3), -f(big), 4, axis=1,
     skip=needs_numpy((2, 0), "np.geomspace of negative arrays along an axis"))

# ----- the helpers the gradients call (what grad of grad differentiates); those linear in
# their first argument that write in place have adjoints: their transposes

# np.r_[...] and np.c_[...], as the transformer writes them: r_(...), c_(...)
case(njoin.r_, r(3), r(2), label="np.r_")
case(njoin.r_, f(), slice(0, 3), r(2), 1.5, label="np.r_")
case(njoin.r_, "0,2", r(3), r(2, 3), label="np.r_")
case(njoin.r_, "1,2,0", r(3), r(3), label="np.r_")
case(njoin.r_, "-1", r(2, 2), r(2, 3), label="np.r_")
case(njoin.c_, r(3), r(3, 2), label="np.c_")
case(njoin.c_, f(), f(), label="np.c_")
case(njoin.c_, r(2, 2), r(2, 1), label="np.c_")

helper = CASES.helper
helper(ns.atleast_grads, r(1), (f(),), only=TANGENTS)
helper(ns.atleast_grads, (r(1), r(1, 3)), (f(), r(3)), only=TANGENTS)
# (orders "A" and "K" depend on a's memory layout, which perturbing a changes: they are checked
# end to end below, with the layout made inside the function)
helper(ns.reshape_grad, r(6), r(2, 3))
helper(ns.reshape_grad, r(3, 2), r(2, 3), "F")
helper(ns.reshape_tangent, r(2, 3), r(2, 3), r(6))
helper(ns.reshape_tangent, r(2, 3), r(2, 3), r(3, 2), "F")
helper(ns.transpose_grad, r(3, 2), only=TANGENTS)
helper(ns.transpose_grad, r(3, 4, 2), (1, 2, 0), only=TANGENTS)
helper(njoin.concatenate_grad, r(5, 3), [r(2, 3), r(3, 3)], only=TANGENTS)
helper(njoin.concatenate_grad, r(7), [r(2, 2), r(3)], None, only=TANGENTS)
helper(njoin.stack_grad, r(2, 3, 2), [r(2, 3), r(2, 3)], -1, only=TANGENTS)
helper(njoin.hstack_grad, r(2, 4), [r(2, 3), r(2, 1)], only=TANGENTS)
helper(njoin.vstack_grad, r(3, 3), [r(2, 3), r(3)], only=TANGENTS)
helper(ns.trim_zeros_grad, r(4), pos(4), "f", only=TANGENTS)
helper(njoin.dstack_grad, r(2, 3, 3), [r(2, 3), r(2, 3, 2)], only=TANGENTS)
helper(njoin.column_stack_grad, r(3, 3), [r(3), r(3, 2)], only=TANGENTS)
helper(njoin.index_join_grads, r(6), np.r_, (r(3), slice(0, 2), f()))
helper(njoin.index_join_grads, r(3, 3), np.c_, (r(3), r(3, 2)))
helper(njoin.index_join_tangent, (r(3), 0, f()), np.r_, (r(3), slice(0, 2), f()), r(6))
helper(njoin.index_join_tangent, (0, r(2, 3), r(3)), np.r_, ("0,2", r(2, 3), r(3)), r(3, 3))
_p = np.split(r(6), 3)
helper(njoin.split_grad, [r(2), 0, r(2)], _p, r(6), only=TANGENTS)
# unstack's pieces
helper(njoin.unstack_grad, (r(2), r(2), 0), tuple(r(3, 2)), r(3, 2), only=TANGENTS)
helper(ns.tile_grad, r(2, 6), r(3), (2, 2), only=TANGENTS)
helper(ns.repeat_grad, r(2, 6), r(2, 3), 2, 1)
helper(ns.repeat_grad, r(6), r(3), 2)
helper(ns.repeat_grad, r(2, 6), r(2, 3), [1, 2, 3], 1)
helper(ns.sort_grad, r(3, 4), r(3, 4), 0)
helper(ns.sort_grad, r(12), r(3, 4), None)
helper(ns.sort_grad, r(4), r(4))
helper(ns.sort_grad, r(6), r(2, 3), None)
# tangent helpers linear in the tangent, whose transposes (the gradients) give their functions'
# adjoints: both directions
helper(ns.sort_tangent, r(3, 4), r(3, 4), 0)
helper(ns.sort_tangent, r(4), r(4))
helper(ns.sort_tangent, r(2, 3), r(2, 3), None)
helper(ns.atleast_tangent, (r(3),), (r(3),), r(1, 3))
helper(ns.atleast_tangent, (r(3), f()), (r(3), f()), (r(1, 3), r(1, 1)))
helper(ns.trim_zeros_tangent, r(5), np.array([0, 0, 2, 3, 0]), np.array([2, 3]))
helper(ns.trim_zeros_tangent, r(4), np.array([0, 1, 2, 0]), np.array([1, 2, 0]), "f")
helper(ns.broadcast_arrays_tangent, (r(3), f()), (r(3), f()), (r(3), r(3)))
helper(ns.broadcast_arrays_tangent, (r(2, 1), r(3)), (r(2, 1), r(3)), (r(2, 3), r(2, 3)))
helper(ns.choose_tangent, (r(3), r(3)), np.array([0, 1, 0]), (r(3), r(3)), r(3))
helper(ns.choose_tangent, r(2, 4), np.array([1, 0, 1, 1]), r(2, 4), r(4))
helper(ns.partition_tangent, r(5), r(5), 2)
helper(ns.partition_tangent, r(3, 4), r(3, 4), 1, 0)
helper(ns.partition_tangent, r(2, 3), r(2, 3), 3, None)
helper(ns.diagonal_grad, r(3), r(3, 4), 1)
helper(ns.diagonal_grad, r(3), r(3, 3))
helper(ns.diagonal_grad, r(2, 3), r(2, 3, 4), 1, 1, 2)
helper(ns.diag_grad, r(3, 3), r(3), only=TANGENTS)
helper(ns.diag_grad, r(3), r(3, 4), only=TANGENTS)
helper(ns.trace_grad, f(), r(3, 3), only=TANGENTS)
helper(ns.take_grad, r(4), r(5), [0, 2, 2, 4])
helper(ns.take_grad, r(3, 3), r(3, 4), np.array([2, 0, 2]), 1)
helper(ns.take_grad, r(2), r(2, 3), np.array([5, 0]), None)
helper(ns.take_grad, r(3), r(4), np.array([-1, 7, 0]), 0, "wrap")
helper(ns.take_along_axis_grad, r(3, 2), r(3, 4), np.array([[0, 1], [3, 3], [2, 0]]), 1)
helper(ns.take_along_axis_grad, r(3, 2), r(3, 4), np.array([[0, 3], [1, 1], [2, 0]]), 1)
helper(ngrids.pad_grad, r(7), r(3), 2)
helper(ngrids.pad_grad, r(7), r(3), 2)
helper(ngrids.pad_grad, r(4, 7), r(2, 4), ((1, 1), (2, 1)), "reflect")
helper(ngrids.pad_grad, r(5, 6), r(3, 4), ((1, 1), (0, 2)), "reflect")
helper(ngrids.pad_grad, r(5), r(3), 1, "edge")
helper(ngrids.diff_grads, r(5), r(6), only=TANGENTS)
helper(ngrids.diff_grads, r(4, 7), r(4, 5), 1, 1, r(4, 1), r(4, 2), only=TANGENTS)
# np.diff's and np.ediff1d's gradients are the transposes of their tangents, input by input
helper(ngrids.diff_grad, r(5), 0, r(6), only=TANGENTS)
helper(ngrids.diff_grad, r(4, 7), 1, r(4, 5), 1, 1, r(4, 1), r(4, 2), only=TANGENTS)
helper(ngrids.diff_grad, r(4, 7), 2, r(4, 5), 1, 1, r(4, 1), r(4, 2), only=TANGENTS)
helper(ngrids.diff_grad, r(2, 3), 0, r(4, 3), 2, 0, only=TANGENTS)
helper(ngrids.diff_tangent, r(6), 0, r(6))
helper(ngrids.diff_tangent, r(4, 1), 1, r(4, 5), 1, 1, r(4, 1), r(4, 2))
helper(ngrids.diff_tangent, r(4, 5), 0, r(4, 5), 2, 0)
helper(nr.ediff1d_grad, r(8), r(2, 3), r(2), r(1), 0, only=TANGENTS)
helper(nr.ediff1d_grad, r(8), r(2, 3), r(2), r(1), 1, only=TANGENTS)
helper(nr.ediff1d_grad, r(8), r(2, 3), r(2), r(1), 2, only=TANGENTS)
helper(nr.ediff1d_grad, r(4), r(5), only=TANGENTS)
helper(nr.ediff1d_tangent, r(2, 3), r(2, 3), r(8), r(2), r(1), 0)
helper(nr.ediff1d_tangent, r(2), r(2, 3), r(8), r(2), r(1), 1)
helper(nr.ediff1d_tangent, r(1), r(2, 3), r(8), r(2), r(1), 2)
helper(ngrids.meshgrid_grads, (r(4, 3), 0), (r(3), r(4)), only=TANGENTS)
helper(ngrids.meshgrid_grads, (r(3, 4), r(3, 4)), (r(3), r(4)), "ij", only=TANGENTS)
_xi = (r(3), r(4))
helper(ngrids.meshgrid_tangent, (r(3), r(4)), _xi, tuple(np.meshgrid(*_xi)), only=TANGENTS)
helper(ngrids.meshgrid_tangent, (r(3), 0), _xi, tuple(np.meshgrid(*_xi, indexing="ij")), False,
       "ij", only=TANGENTS)
# the tangent of a join (reverse over forward takes it apart with the join's own gradient)
join_tangent = defined_in_rules("join_tangent")
helper(join_tangent, np.concatenate, [r(2, 3), r(1, 3)], [r(2, 3), r(1, 3)], r(3, 3), 0)
helper(join_tangent, np.concatenate, [r(2, 3), r(4)], [r(2, 3), r(4)], r(10), None)
helper(join_tangent, np.vstack, [r(3), r(2, 3)], [r(3), r(2, 3)], r(3, 3))

FLOAT32 = Cases()
FLOAT32.add(np.sort_complex, x32(4))
FLOAT32.add(np.reshape, x32(2, 3), (3, 2))
FLOAT32.add(np.transpose, x32(2, 3))
FLOAT32.add(np.concatenate, [x32(2), x32(3)])
FLOAT32.add(np.stack, [x32(2), x32(2)])
FLOAT32.add(np.tile, x32(3), 2)
FLOAT32.add(np.repeat, x32(3), 2)
FLOAT32.add(np.diag, x32(3, 3))
FLOAT32.add(np.trace, x32(3, 3))
FLOAT32.add(np.take, x32(4), [0, 0, 3])
FLOAT32.add(np.sort, x32(4))
FLOAT32.add(np.pad, x32(3), 1)


# the tables' checks: tests/support/rule_check.py
globals().update(rule_tests(CASES, FLOAT32))


# ----- exact values ------------------------------------------------------------------------


def padded(v):
    """``v`` with zeros around it: two in front, one behind."""
    return np.concatenate([np.zeros(2), v, np.zeros(1)])


def trimmed(v):
    return np.sum(np.sin(np.trim_zeros(padded(v)))) + np.sum(np.trim_zeros(padded(v), "f") ** 3)


def test_trim_zeros_is_a_gather_of_the_kept_range():
    v = pos(4)  # no zeros inside, so the kept range stays put under small changes
    np.testing.assert_allclose(mindgrad.grad(trimmed)(v), np.cos(v) + 3.0 * v * v)
    mindgrad.check_grads(trimmed, (v,), order=2, modes=("rev", "fwd"), directions=1)
    filt = padded(v)
    _, vjp = vjp_of(np.trim_zeros, filt, "b")
    np.testing.assert_array_equal(vjp(np.arange(1.0, 7.0))[0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0])
    _, jvp = jvp_of(np.trim_zeros, filt)
    np.testing.assert_array_equal(jvp(np.arange(7.0)), [2.0, 3.0, 4.0, 5.0])
    grid = np.zeros((3, 4))
    grid[1, 2], grid[2, 1] = 1.5, -2.0
    if "axis" in inspect.signature(np.trim_zeros).parameters:  # NumPy >= 2.2 trims n-d arrays
        for axis in (None, 0, -1):
            out, vjp = vjp_of(np.trim_zeros, grid, "fb", axis)
            g = r(*out.shape)
            grad = vjp(g)[0]
            np.testing.assert_allclose(np.trim_zeros(grad + grid, "fb", axis) - out, g, atol=1e-15)
            assert grad.sum() == pytest.approx(g.sum())
    out, vjp = vjp_of(np.trim_zeros, [0.0, 1.5, 0.0, 2.0, 0.0])
    assert vjp([1.0, 2.0, 3.0])[0] == [0.0, 1.0, 2.0, 3.0, 0.0]


def test_split_gradient_fills_unused_pieces_with_zeros():
    x = np.arange(6.0)
    _, vjp = vjp_of(np.split, x, 3)
    gx, _ = vjp([0, np.ones(2), 0])
    np.testing.assert_array_equal(gx, [0, 0, 1, 1, 0, 0])


def test_take_accumulates_repeated_indices():
    _, vjp = vjp_of(np.take, np.zeros(3), [0, 2, 2, 2])
    np.testing.assert_array_equal(vjp(np.ones(4))[0], [1.0, 0.0, 3.0])


def test_pad_of_a_statistic_mode_says_so():
    _, vjp = vjp_of(np.pad, r(3), 1, "mean")
    with pytest.raises(NotImplementedError, match="mean"):
        vjp(np.ones(5))


def test_pad_tangent_of_a_statistic_mode_says_so():
    _, jvp = jvp_of(np.pad, r(3), 1, "maximum")
    with pytest.raises(NotImplementedError, match="maximum"):
        jvp(np.ones(3))


@pytest.mark.parametrize("join, pieces, axis", [
    (np.concatenate, [(2, 3), (1, 3)], 0), (np.concatenate, [(2, 3), (4,)], None),
    (np.stack, [(2, 3), (2, 3)], 1), (np.hstack, [(2,), (3,)], 0),
    (np.vstack, [(3,), (2, 3)], 0), (np.column_stack, [(3,), (3, 2)], 0)])
def test_join_tangent_adjoint_is_its_transpose(join, pieces, axis):
    # reverse over forward takes the tangent of a join apart with the join's own gradient
    xs = [r(*shape) for shape in pieces]
    out = join(xs, axis) if join in (np.concatenate, np.stack) else join(xs)
    ts = [r(*shape) for shape in pieces]
    _, vjp = vjp_of(join_tangent, join, ts, xs, out, axis, _key=join_tangent)
    u = r(*out.shape)
    g_ts = vjp(u)[1]
    joined = join_tangent(join, ts, xs, out, axis)
    assert joined.shape == out.shape
    np.testing.assert_allclose(sum(np.vdot(g, t) for g, t in zip(g_ts, ts)), np.vdot(u, joined),
                               rtol=1e-12)


# ----- reshape and ravel read an array in its memory order for "A" and "K" ----------------
# (regression: the gradient and the tangent were read in their own order, wrong for a Fortran
# or a transposed array)

# the layouts are made inside the functions, so that central differences, which perturb the
# input array, see the same layout as the gradient
# (functions, not lambdas in the dict: Python 3.10 cannot tell a lambda's source by its column)
def _fortran(v):
    return np.asfortranarray(v)


def _transposed(v):
    return v.T  # F-contiguous view of a C array


def _strided(v):
    return v[::2, ::2].T  # neither C nor F


def _c(v):
    return v * 1.0


_LAYOUTS = {"fortran": (_fortran, (2, 3)), "transposed": (_transposed, (3, 2)),
            "strided": (_strided, (4, 6)), "c": (_c, (2, 3))}


def _input(layout):
    shape = _LAYOUTS[layout][1]
    return np.arange(1.0, np.prod(shape) + 1.0).reshape(shape) / (np.prod(shape) + 1.0)


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("layout", list(_LAYOUTS))
def test_ravel_in_every_order_in_both_modes_and_at_second_order(order, layout):
    lay = _LAYOUTS[layout][0]

    def f(v):
        flat = np.ravel(lay(v), order=order)
        return np.sum(np.sin(flat) * np.arange(1.0, flat.size + 1.0))

    def method(v):
        flat = lay(v).flatten(order)
        return np.sum(np.sin(flat) * np.arange(1.0, flat.size + 1.0))

    mindgrad.check_grads(f, (_input(layout),), modes=("rev", "fwd"), order=2)
    mindgrad.check_grads(method, (_input(layout),), modes=("rev", "fwd"))


@pytest.mark.parametrize("order", ["C", "F", "A"])
@pytest.mark.parametrize("layout", ["fortran", "transposed", "c"])
def test_reshape_in_every_order_in_both_modes_and_at_second_order(order, layout):
    lay = _LAYOUTS[layout][0]
    w = np.arange(6.0).reshape(3, 2)

    def f(v):
        return np.sum(np.tanh(np.reshape(lay(v), (3, 2), order=order)) * w)

    def method(v):
        return np.sum(np.tanh(lay(v).reshape((3, 2), order=order)) * w)

    mindgrad.check_grads(f, (_input(layout),), modes=("rev", "fwd"), order=2)
    mindgrad.check_grads(method, (_input(layout),), modes=("rev", "fwd"))


def test_a_fortran_array_read_in_order_a_closed_form():
    a = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    w = np.arange(1.0, 7.0)
    g = mindgrad.grad(lambda v: np.sum(np.ravel(v, order="A") * w))(a)
    np.testing.assert_allclose(g, w.reshape(2, 3, order="F"))  # ravel "A" read a as F
    _, t = mindgrad.jvp(lambda v: np.ravel(v, order="A"), (a,), (np.arange(6.0).reshape(2, 3),))
    np.testing.assert_allclose(t, np.ravel(np.arange(6.0).reshape(2, 3), order="F"))
