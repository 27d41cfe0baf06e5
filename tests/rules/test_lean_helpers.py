"""The lean paths of the gradient helpers (issue: speed and memory): each gives the numbers of
the general path it shortcuts, which the tests compute beside it, and falls back to it where
its conditions fail.

* ``extremum_grad`` writes the gradient at the one place each maximum was found
  (``extremum_places``, ``extremum_scatter``) instead of a pass over shares; ties, NaN, ``where``
  and ``initial`` keep the shares.
* ``matmul_grad_y`` of a stack of rows times one matrix is one product over all the rows.
"""

import numpy as np
import pytest

import mindgrad
from mindgrad.rules import numpy_reductions as nr
from mindgrad.rules import numpy_statistics as nstat
from mindgrad.rules.operators import matmul_grad_x, matmul_grad_y

rng = np.random.default_rng(20261128)


def shares_gradient(g, a, ans, axis, keepdims):
    """The general path: g times each element's share."""
    share = nr.extremum_shares(a, ans, axis, keepdims)[0]
    return nr.unreduce(g, a, axis, keepdims) * share


FORMS = [((), None, False), ((5,), None, False), ((3, 4), None, True), ((3, 4), 0, False),
         ((3, 4), -1, True), ((2, 3, 4), 1, False), ((2, 3, 4), -1, True)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape, axis, keepdims", FORMS)
@pytest.mark.parametrize("reduce", [np.max, np.min])
def test_scattered_extremum_gradient_equals_the_shares(reduce, shape, axis, keepdims, dtype):
    a = rng.standard_normal(shape).astype(dtype)
    ans = reduce(a, axis=axis, keepdims=keepdims)
    g = rng.standard_normal(np.shape(ans)).astype(dtype)
    assert nstat.extremum_places(a, ans, axis, keepdims) is not None  # the lean path runs
    got = nr.extremum_grad(g, a, ans, axis, keepdims)
    assert got.shape == a.shape and got.dtype == dtype
    np.testing.assert_allclose(got, shares_gradient(g, a, ans, axis, keepdims), rtol=1e-6)


@pytest.mark.parametrize("axis", [None, 1])
def test_ties_and_nan_keep_the_shares(axis):
    a = np.array([[1.0, 3.0, 3.0], [np.nan, 0.0, 2.0], [4.0, 5.0, 2.0]])
    ans = np.max(a, axis=axis)
    assert nstat.extremum_places(a, ans, axis) is None
    g = np.ones(np.shape(ans))
    got = nr.extremum_grad(g, a, ans, axis)
    np.testing.assert_array_equal(got, shares_gradient(g, a, ans, axis, False))
    if axis == 1:  # the tie splits, the NaN row gets nothing, the last row has one winner
        np.testing.assert_array_equal(got, [[0, .5, .5], [0, 0, 0], [0, 1, 0]])


def test_ties_in_one_row_and_nan_in_another_are_not_one_hit_each():
    # as many hits as rows, but one row has two and the other none: not the lean path
    a = np.array([[2.0, 2.0, 1.0], [np.nan, 1.0, 0.0]])
    ans = np.max(a, axis=1)
    assert nstat.extremum_places(a, ans, 1) is None
    np.testing.assert_array_equal(nr.extremum_grad(np.ones(2), a, ans, 1),
                                  [[.5, .5, 0], [0, 0, 0]])


def _softmax_shift(x):
    return np.sum(np.exp(x - np.max(x, axis=-1, keepdims=True)) * np.arange(x.shape[-1]))


def _max_of_all(x):
    return np.max(x * x) + np.sum(np.min(np.sin(x), axis=0) ** 2)


@pytest.mark.parametrize("fn, shape", [(_softmax_shift, (3, 4)), (_softmax_shift, (2, 2, 5)),
                                       (_max_of_all, (4, 3)), (_max_of_all, (6,))])
def test_extremum_gradients_against_differences_both_modes_second_order(fn, shape):
    mindgrad.check_grads(fn, (rng.standard_normal(shape),), modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("axis, keepdims", [(None, False), (None, True), (0, False),
                                            (-1, True)])
def test_scatter_and_gather_are_transposes(axis, keepdims):
    a = rng.standard_normal((3, 4))
    ans = np.max(a, axis=axis, keepdims=keepdims)
    places = nstat.extremum_places(a, ans, axis, keepdims)
    g = rng.standard_normal(np.shape(ans))
    h = rng.standard_normal(a.shape)
    scattered = nstat.extremum_scatter(g, a, places, axis, keepdims)
    gathered = nstat.extremum_gather(h, places, axis, keepdims)
    assert np.shape(gathered) == np.shape(g)
    np.testing.assert_allclose(np.vdot(scattered, h), np.vdot(g, gathered))


@pytest.mark.parametrize("x_shape, y_shape", [((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (4, 2)),
                                              ((5, 4), (4, 3))])
def test_stacked_rows_times_a_matrix(x_shape, y_shape):
    x, y = rng.standard_normal(x_shape), rng.standard_normal(y_shape)
    g = rng.standard_normal(x_shape[:-1] + y_shape[1:])
    # closed forms: d_y sums x_i^T g_i over the stack, d_x is g y^T
    stack = list(range(len(x_shape) - 1))
    d_y = np.tensordot(x, g, axes=(stack, stack))
    np.testing.assert_allclose(matmul_grad_y(g, x, y), d_y)
    np.testing.assert_allclose(matmul_grad_x(g, x, y), g @ y.T)


def test_stacked_complex_rows_give_a_real_matrix_its_real_gradient():
    x = rng.standard_normal((2, 3, 4)) + 1j * rng.standard_normal((2, 3, 4))
    y = rng.standard_normal((4, 5))
    g = rng.standard_normal((2, 3, 5)) + 1j * rng.standard_normal((2, 3, 5))
    got = matmul_grad_y(g, x, y)
    assert got.dtype.kind == "f"
    np.testing.assert_allclose(got, np.real(np.tensordot(x, g, axes=([0, 1], [0, 1]))))


def test_stacked_rows_gradient_float32_and_differences():
    def f(w, x):
        return np.sum(np.tanh(x @ w) ** 2)
    w, x = rng.standard_normal((4, 3)), rng.standard_normal((2, 5, 4))
    mindgrad.check_grads(f, (w, x), modes=("rev", "fwd"), order=2)
    got = mindgrad.grad(f)(w.astype(np.float32), x.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, mindgrad.grad(f)(w, x), rtol=1e-4, atol=1e-5)
