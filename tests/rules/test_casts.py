"""Casts: an integer or boolean result is a constant, a float cast passes the gradient on.

``np.sum(x.astype(int) * x)`` has the gradient ``x.astype(int)``: nothing flows back through
the cast, in any of its spellings (``astype``, ``asarray``/``array`` with ``dtype=``, a scalar
type, ``dtype=`` of a reduction or constructor, ``full_like`` of an integer array).
"""

import numpy as np
import pytest

import mindgrad as mg

X = np.array([0.5, 1.7, -2.3, 3.1])


def astype_int(x):
    return np.sum(x.astype(int) * x)


def astype_bool(x):
    return np.sum(x.astype(bool) * x)


def asarray_int(x):
    return np.sum(np.asarray(x, dtype=int) * x)


def array_int64(x):
    return np.sum(np.array(x, dtype=np.int64) * x)


def ascontiguous_int(x):
    return np.sum(np.ascontiguousarray(x, dtype=np.int32) * x)


def list_to_int_array(x):
    return np.sum(np.array([x[0], x[1]], dtype=int) * x[:2])


def scalar_int_type(x):
    return np.sum(np.int64(x[1]) * x)


def sum_dtype_int(x):
    return np.sum(x, dtype=int) * np.sum(x)


def method_sum_dtype_int(x):
    return x.sum(dtype=np.int64) * np.sum(x)


def cumsum_dtype_int(x):
    return np.sum(np.cumsum(x, dtype=int) * x)


def mean_dtype_int(x):
    return np.mean(x * x, dtype=int) * np.sum(x)


def full_dtype_int(x):
    return np.sum(np.full(4, x[1], dtype=int) * x)


def full_like_dtype_int(x):
    return np.sum(np.full_like(x, x[1], dtype=int) * x)


def full_like_of_int_array(x):
    return np.sum(np.full_like(np.arange(4), x[1]) * x)


def sum_dtype_in_a_variable(x):
    dt = int
    return np.sum(x, dtype=dt) * np.sum(x)


def astype_dtype_of_another_array(x):
    n = np.arange(4)
    return np.sum(x.astype(n.dtype) * x)


def dtype_chosen_at_run_time(x):
    dt = int if np.sum(x) > 0.0 else float
    return np.sum(np.asarray(x, dtype=dt) * x)


def float_dtype_in_a_variable(x):
    dt = x.dtype
    return np.sum(x * x, dtype=dt) * np.sum(x.astype(dt))


def float_cast_kept(x):
    return np.sum(x.astype(np.float64) ** 2 + np.asarray(x, dtype=float) * x)


CASTS = [astype_int, astype_bool, asarray_int, array_int64, ascontiguous_int, list_to_int_array,
         scalar_int_type, sum_dtype_int, method_sum_dtype_int, cumsum_dtype_int, mean_dtype_int,
         full_dtype_int, full_like_dtype_int, full_like_of_int_array, sum_dtype_in_a_variable,
         astype_dtype_of_another_array, dtype_chosen_at_run_time, float_dtype_in_a_variable,
         float_cast_kept]


@pytest.mark.parametrize("fn", CASTS, ids=lambda fn: fn.__name__)
def test_integer_casts_block_the_gradient(fn):
    mg.check_grads(fn, (X,), modes=("rev", "fwd"), order=2)


def test_astype_int_gradient_is_the_cast_itself():
    np.testing.assert_array_equal(mg.grad(astype_int)(X), X.astype(int))
    _, tangent = mg.jvp(astype_int, (X,), (np.ones(4),))
    assert tangent == np.sum(X.astype(int))


def test_a_dtype_known_at_run_time_blocks_the_gradient_when_it_is_an_integer():
    """The ``dtype=`` value is a variable: the generated code tests it (``inexact(dt)``)."""
    np.testing.assert_array_equal(mg.grad(sum_dtype_in_a_variable)(X),
                                  np.full(4, float(np.sum(X, dtype=int))))
    np.testing.assert_array_equal(mg.grad(dtype_chosen_at_run_time)(X), X.astype(int))
    np.testing.assert_array_equal(mg.grad(dtype_chosen_at_run_time)(-X), -2 * X)
    _, tangent = mg.jvp(dtype_chosen_at_run_time, (X,), (np.ones(4),))
    assert tangent == np.sum(X.astype(int))
    assert "inexact(dt)" in mg.grad(sum_dtype_in_a_variable).source(X)
    mg.check_grads(dtype_chosen_at_run_time, (-X,), modes=("rev", "fwd"), order=2)
    x32 = X.astype(np.float32)
    np.testing.assert_allclose(mg.grad(float_dtype_in_a_variable)(x32),
                               2 * x32 * np.sum(x32) + np.sum(x32 * x32), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float32_casts_pass_the_gradient_in_their_dtype(dtype):
    x = np.array([0.5, 1.75, -2.25], dtype)  # exact in float32: 2x has one right answer

    def to_float32(x):
        return np.sum(x.astype(np.float32) ** 2) + np.sum(np.asarray(x, np.float32) * x)

    g = mg.grad(to_float32)(x)
    assert g.dtype == dtype
    np.testing.assert_allclose(g, 4 * x, rtol=1e-6)
    _, t = mg.jvp(to_float32, (x,), (np.ones(3, dtype),))
    np.testing.assert_allclose(t, np.sum(4 * x), rtol=1e-6)
