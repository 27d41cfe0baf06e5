"""The gradient of a whole reduction passed as a number (``compiler/transform/reverse_numbers.py``):
``d_p = sum_number(g, p)`` where the one product that reads it broadcasts it, the array of
``reduce_sum_grad`` everywhere else. Source in, source out, and the numbers: the same arrays,
dtypes and shapes as the code built without the pass (``reverse_numbers.off()``), and central
differences in float64, on 0-d, vectors, matrices, float32 and broadcast shapes, at second order
too."""

import numpy as np
import pytest

import mindgrad
from mindgrad.compiler.transform import reverse_numbers
from tests.support.inputs import Draw

draw = Draw(11)


# ----- where the number is passed ------------------------------------------------------------


def square_sum(x):
    return np.sum(x ** 2)


def mean_square_error(x, y):
    d = x - y
    return np.mean(d ** 2)


def sum_of_products(x):
    h = np.tanh(x)
    return np.sum(h * h)


def shifted_logsumexp(x):
    m = np.max(x)
    return np.log(np.sum(np.exp(x - m))) + m


def summed_in_a_loop(x):
    p = x ** 2
    s = 0.0
    for i in range(3):
        s = s + np.sum(p) * (i + 1)
    return s


def indexing(x):
    s = 0.0
    for i in range(x.shape[0] - 3):
        s = s + x[i] * x[i + 1] + 0.5 * np.sum(x[i:i + 4] ** 2)
    return s


def method_sum(x):
    return (np.sin(x) * x).sum() + (x ** 3).mean()


NUMBERS = [square_sum, mean_square_error, sum_of_products, shifted_logsumexp,
           summed_in_a_loop, method_sum]


# ----- where the array is kept ----------------------------------------------------------------


def scaled(x):
    y = x * 2.0  # d_x = d_y * 2.0 reads no array of y's shape: a number would be the gradient
    return np.sum(y)


def times_number(x, c):
    return np.sum(x * c)


def broadcast_product(x, y):
    return np.sum(x * y)  # (3, 1) * (1, 4): unbroadcast sums d_p * y to x's shape


def added(x, y):
    return np.sum(x + y)


def read_twice(x):
    p = x ** 2
    return np.sum(p) + np.sum(p * x)


def indexed(x):
    p = x ** 2
    return np.sum(p) + p[0]


def along_an_axis(x):
    return np.sum(np.sum(x ** 2, axis=0) * 2.0)


#: each function, and the line of its gradient that keeps the array
KEPT = {scaled: "d_y = reduce_sum_grad(d_sum_, y)",
        times_number: "d_mul = reduce_sum_grad(d_sum_, mul)",
        broadcast_product: "d_mul = reduce_sum_grad(d_sum_, mul)",
        added: "d_add = reduce_sum_grad(d_sum_, add)",
        read_twice: "d_p = d_p + reduce_sum_grad(d_sum_, p)",
        indexed: "reduce_sum_grad(d_sum_, p)",
        along_an_axis: "d_pow_ = reduce_sum_grad(d_sum_, pow_, 0)"}


def _args(fn, shape, dtype):
    if fn is broadcast_product or fn is added:
        return (draw.r(3, 1).astype(dtype), draw.r(1, 4).astype(dtype))
    if fn is indexing:
        shape = (7,)
    if fn is indexed:
        shape = shape[-1:] or (3,)  # a number: p[0] of a vector
    if fn is along_an_axis and shape == ():
        shape = (3,)
    x = draw.r(*shape).astype(dtype)
    if fn is mean_square_error:
        return x, draw.r(*shape).astype(dtype)
    if fn is times_number:
        return x, 1.5
    return (x,)


def _positions(fn, args):
    return tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray))


def _without_the_pass(fn, positions, *args):
    mindgrad.clear_cache()
    with reverse_numbers.off():
        expected = mindgrad.grad(fn, positions)(*args)
    mindgrad.clear_cache()
    return expected


def _central(fn, args, position, eps=1e-6):
    """Central differences in float64 along a random direction: (directional derivative,
    direction)."""
    args = [np.asarray(a, np.float64) if isinstance(a, np.ndarray) else a for a in args]
    v = draw.r(*np.shape(args[position]))
    plus, minus = list(args), list(args)
    plus[position] = args[position] + eps * v
    minus[position] = args[position] - eps * v
    return (fn(*plus) - fn(*minus)) / (2 * eps), v


SHAPES = [((), np.float64), ((3,), np.float64), ((2, 3), np.float64), ((2, 3), np.float32)]


@pytest.mark.parametrize("shape,dtype", SHAPES, ids=["0d", "3", "2x3", "2x3-f32"])
@pytest.mark.parametrize("fn", NUMBERS + [indexing] + list(KEPT), ids=lambda f: f.__name__)
def test_the_gradient_is_the_one_built_without_the_pass(fn, shape, dtype):
    args = _args(fn, shape, dtype)
    positions = _positions(fn, args)
    expected = _without_the_pass(fn, positions, *args)
    got = mindgrad.grad(fn, positions)(*args)
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for g, e, p in zip(got, expected, positions):
        assert type(g) is type(e) and np.shape(g) == np.shape(args[p]) == np.shape(e)
        assert np.result_type(g) == np.result_type(e) == \
            np.result_type(args[p].dtype, np.float32)  # dtypes: no value-based casting
        np.testing.assert_array_equal(g, e)
        slope, v = _central(fn, args, p)
        tolerance = 1e-3 if dtype == np.float32 else 1e-6
        assert abs(np.sum(np.asarray(g, np.float64) * v) - slope) <= \
            tolerance * (1 + abs(slope)), fn.__name__


@pytest.mark.parametrize("fn", NUMBERS + [indexing], ids=lambda f: f.__name__)
def test_the_code_passes_the_number(fn):
    args = _args(fn, (3,), np.float64)
    text = mindgrad.source(mindgrad.grad(fn, _positions(fn, args)), *args)
    assert "sum_number(" in text or "mean_number(" in text, text
    assert "reduce_sum_grad(" not in text and "reduce_mean_grad(" not in text, text


@pytest.mark.parametrize("fn", list(KEPT), ids=lambda f: f.__name__)
def test_the_code_keeps_the_array(fn):
    args = _args(fn, (3,), np.float64)
    text = mindgrad.source(mindgrad.grad(fn, _positions(fn, args)), *args)
    assert KEPT[fn] in text, text
    if fn is not read_twice:  # there, d_mul = sum_number(d_sum_2, mul) for d_mul * x
        assert "sum_number(" not in text and "mean_number(" not in text, text


def test_the_generated_lines():
    text = mindgrad.source(mindgrad.grad(square_sum), np.ones(3))
    assert "    d_pow_ = sum_number(d_sum_, pow_)\n    d_x = d_pow_ * 2 * x\n" in text, text
    text = mindgrad.source(mindgrad.grad(mean_square_error), np.ones(3), np.ones(3))
    assert "    d_pow_ = mean_number(d_mean, pow_)\n    d_d = d_pow_ * 2 * d\n" in text, text


# ----- second order: the code with the number differentiated again -------------------------


def cubed(x):
    return np.sum(x ** 3)


def cubed_hvp(x, v):
    return np.sum(mindgrad.grad(cubed)(x) * v)


def mse_hvp(x, y, v):
    return np.sum(mindgrad.grad(mean_square_error)(x, y) * v)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_second_order(shape):
    x, v = draw.r(*shape), draw.r(*shape)
    np.testing.assert_allclose(mindgrad.grad(cubed_hvp)(x, v), 6 * x * v, rtol=1e-12)
    y = draw.r(*shape)
    np.testing.assert_allclose(mindgrad.grad(mse_hvp)(x, y, v), 2 * v / max(x.size, 1),
                               rtol=1e-12)
    np.testing.assert_allclose(mindgrad.hessian(square_sum)(x).reshape(x.size, x.size),
                               2 * np.eye(x.size), atol=1e-12)
    # forward over reverse: the tangent of sum_number is sum_number of the tangent
    _, tangent = mindgrad.jvp(mindgrad.grad(cubed), (x,), (v,))
    np.testing.assert_allclose(tangent, 6 * x * v, rtol=1e-12)


def test_with_jit_the_numbers_compile():
    pytest.importorskip("numba")
    x = draw.r(9)
    expected = mindgrad.grad(indexing)(x)
    np.testing.assert_allclose(mindgrad.grad(indexing, jit=True)(x), expected, rtol=1e-12)
    args = (draw.r(5), draw.r(5))
    np.testing.assert_allclose(mindgrad.grad(mean_square_error, jit=True)(*args),
                               mindgrad.grad(mean_square_error)(*args), rtol=1e-12)
