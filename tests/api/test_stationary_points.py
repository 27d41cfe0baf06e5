"""Second derivatives where the first is 0: at a minimum, a maximum or a saddle, the point
Newton's method and Hessians are asked for most.

A gradient helper linear in its incoming gradient ``g`` (``reduce_sum_grad``,
``extremum_grad``, ...) returns 0 at once when ``g`` is 0; differentiated from its source for a
second derivative, that early return had a derivative of 0 too, where ``g`` was a value that
happened to be 0 (``np.sum(x) ** 2`` where the sum is 0: a Hessian of 0 instead of 2). Each
function here is checked at such a point, in both modes, against central differences of its
gradient, in float64 and float32, on a vector, a matrix and a 0-d array where the function
takes one.
"""

import numpy as np
import pytest

import mindgrad

ZERO_SUM = np.array([-0.5, 0.25, 0.5, -0.25])
MAT = np.arange(6.0).reshape(2, 3) / 6

CASES = {
    # name: (f, point); the point makes the first derivative (or the scalar gradient a helper
    # gets) exactly 0
    "sum-squared": (lambda x: np.sum(x) ** 2, ZERO_SUM),
    "sum-squared-matrix": (lambda x: np.sum(x) ** 2, ZERO_SUM.reshape(2, 2)),
    "sum-squared-0d": (lambda x: np.sum(x) ** 2, np.array(0.0)),
    "mean-squared": (lambda x: np.mean(x) ** 2, ZERO_SUM),
    "mean-cubed-plus": (lambda x: np.mean(x) ** 3 + np.sum(x) ** 2, ZERO_SUM),
    "sum-times-sum": (lambda x: np.sum(x) * np.sum(x * 2.0), ZERO_SUM),
    "max-squared": (lambda x: np.max(x) ** 2, np.array([-1.0, -2.0, 0.0, -3.0])),
    "min-squared-axis": (lambda x: np.sum(np.min(x, axis=0) ** 2),
                         np.array([[0.0, 1.0], [2.0, 0.0]])),
    "sum-axis-squared": (lambda x: np.sum(np.sum(x, axis=0) ** 2),
                         np.array([[0.5, 0.25], [-0.5, -0.25]])),
    "matmul": (lambda w: np.sum((MAT @ w) ** 2), np.zeros((3, 2))),
    "einsum": (lambda x: np.einsum("i,i->", x, x) ** 2, np.zeros(3)),
    "sum-of-squares": (lambda x: np.sum(x ** 2), np.zeros(4)),
    "log-cosh": (lambda x: np.sum(np.log(np.cosh(x))), np.zeros(3)),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mode", ["rev", "fwd"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_second_derivative_where_the_first_is_zero(name, mode, dtype):
    f, x = CASES[name]
    x = x.astype(dtype)
    tol = {} if dtype == np.float64 else {"rtol": 1e-2, "atol": 1e-3, "eps": 1e-3}
    mindgrad.check_grads(f, (x,), order=2, modes=(mode,), directions=2, **tol)


def test_the_hessian_of_a_square_of_a_sum_at_a_zero_sum():
    # closed form: d^2/dx^2 (sum x)^2 = 2 * ones, whatever x is
    x = ZERO_SUM
    hessian = mindgrad.jacrev(mindgrad.grad(lambda x: np.sum(x) ** 2))(x)
    np.testing.assert_allclose(hessian, np.full((4, 4), 2.0))
    v = np.arange(4.0)
    hvp = mindgrad.grad(lambda x: np.sum(mindgrad.grad(lambda y: np.mean(y) ** 2)(x) * v))(x)
    np.testing.assert_allclose(hvp, np.full(4, 2 * np.sum(v) / 16))
