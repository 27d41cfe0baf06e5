"""The typed symbolic zero (``runtime.Zero``): every operation on it agrees with the same
operation on ``np.zeros`` of its shape and dtype (the oracle), and the linear ones give a zero
again, of the shape NumPy gives, so arithmetic never turns it into a number that stands for an
array. Shapes: 0-d, 1-d, 2-d and broadcast ones; float64, float32 and complex."""

import pickle

import numpy as np
import pytest

from mindgrad import runtime
from mindgrad.runtime import Zero, zero

SHAPES = [(), (3,), (2, 3), (4, 1)]
DTYPES = [np.float64, np.float32, np.complex128]


def _agrees(result, expected):
    """``result`` (a Zero or a value) is ``expected`` (computed on np.zeros) in shape and value."""
    value = np.asarray(result)
    assert value.shape == np.shape(expected), (value.shape, np.shape(expected))
    np.testing.assert_array_equal(value, expected)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_typed_zero_knows_what_it_stands_for(shape, dtype):
    x = np.ones(shape, dtype)
    z = Zero.like(x)
    assert z.shape == shape and z.dtype == dtype and z.ndim == len(shape)
    assert runtime.is_zero(z) and runtime.is_any_zero(z)
    _agrees(z, np.zeros(shape, dtype))
    assert np.asarray(z).dtype == dtype
    assert pickle.loads(pickle.dumps(z)).shape == shape


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("other", [(3,), (2, 1), ()])
def test_linear_arithmetic_gives_the_zero_of_numpys_shape(shape, other):
    z, y = Zero(shape, np.float32), np.full(other, 2.5, np.float64)
    try:
        expected = np.zeros(shape, np.float32) * y
    except ValueError:
        return  # shapes NumPy does not broadcast
    for result in (z * y, y * z, z / y, -z, +z, z * 3.0, 3.0 * z, np.multiply(y, z),
                   np.negative(z), np.conj(z)):
        assert isinstance(result, Zero)
    for result in (z * y, y * z, z / y, np.multiply(y, z)):
        _agrees(result, expected)
        assert result.dtype == np.result_type(np.float32, y.dtype)


@pytest.mark.parametrize("shape", SHAPES)
def test_adding_it_is_the_identity_and_gives_a_fresh_array(shape):
    # a float32 array, or for () a float32 number (NumPy 1 makes 0-d arithmetic a number)
    y = (np.arange(np.prod(shape)).reshape(shape) + 1.0).astype(np.float32)
    for z in (zero, Zero(shape, np.float64)):
        for total in (z + y, y + z, y - z, np.add(z, y), np.subtract(y, z)):
            np.testing.assert_array_equal(total, y)
            assert total.dtype == np.float32  # never promoted (float32 + 0 is float64 on NumPy 1)
            if isinstance(y, np.ndarray):
                assert isinstance(total, np.ndarray) and not np.shares_memory(total, y)
        np.testing.assert_array_equal(z - y, -y)
        np.testing.assert_array_equal(np.subtract(z, y), -y)
    assert isinstance(zero + zero, Zero) and (Zero((3,)) + zero).shape == (3,)


def test_adding_a_typed_zero_broadcasts_to_its_shape():
    total = Zero((2, 3)) + np.array([1.0, 2.0, 3.0])
    _agrees(total, np.zeros((2, 3)) + np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize(("func", "args"), [
    (np.reshape, ((3, 2),)), (np.transpose, ()), (np.swapaxes, (0, 1)),
    (np.expand_dims, (0,)), (np.broadcast_to, ((4, 2, 3),)), (np.ravel, ()),
    (np.flip, (1,)), (np.real, ()), (np.moveaxis, (0, -1)), (np.diagonal, ()),
])
def test_view_functions_keep_the_type(func, args):
    z = Zero((2, 3), np.float32)
    result = func(z, *args)
    assert isinstance(result, Zero)
    _agrees(result, func(np.zeros((2, 3), np.float32), *args))


def test_indexing_methods_and_matmul_keep_the_type():
    z, m = Zero((2, 3)), np.ones((3, 4))
    zeros = np.zeros((2, 3))
    for result, expected in ((z[0], zeros[0]), (z[:, 1:], zeros[:, 1:]),
                             (z[np.array([1, 0, 1])], zeros[np.array([1, 0, 1])]),
                             (z.T, zeros.T), (z.reshape(6), zeros.reshape(6)),
                             (z.reshape((3, 2)), zeros.reshape((3, 2))),
                             (z.transpose(), zeros.T), (z @ m, zeros @ m),
                             (np.ones((5, 2)) @ z, np.ones((5, 2)) @ zeros),
                             (np.matmul(z, m), zeros @ m), (z.swapaxes(0, 1), zeros.T),
                             (np.ones(3) @ z.T, np.ones(3) @ zeros.T)):
        assert isinstance(result, Zero)
        _agrees(result, expected)


@pytest.mark.parametrize("func", [np.sum, np.mean, np.cumsum, np.tril])
def test_linear_reductions_give_a_zero(func):
    assert isinstance(func(Zero((2, 3))), Zero)
    assert np.all(np.asarray(func(Zero((2, 3)))) == 0)


@pytest.mark.parametrize("func", [np.dot, np.outer, np.tensordot, np.kron, np.inner])
def test_a_zero_factor_gives_a_zero_product(func):
    assert isinstance(func(Zero((3,)), np.ones(3)), Zero)
    assert isinstance(func(np.ones(3), Zero((3,))), Zero)


def test_where_a_value_is_needed_it_becomes_zeros_of_its_shape():
    z = Zero((2, 3), np.float32)
    joined = np.concatenate([z, np.ones((1, 3), np.float32)])
    _agrees(joined, np.concatenate([np.zeros((2, 3)), np.ones((1, 3))]))
    assert joined.dtype == np.float32
    _agrees(np.exp(z), np.ones((2, 3)))  # a nonlinear ufunc: on the value
    buffer = np.ones((4, 3))
    buffer[1:3] = z
    _agrees(buffer, np.array([[1.0] * 3, [0.0] * 3, [0.0] * 3, [1.0] * 3]))
    buffer[0] += z[0]
    assert buffer[0].tolist() == [1.0, 1.0, 1.0]
    assert np.shape(z) == (2, 3) and np.ndim(z) == 2 and not np.iscomplexobj(z)


def test_the_untyped_zero_is_the_number_zero_where_a_value_is_needed():
    assert zero.shape == () and not zero.typed and not zero
    assert float(zero) == 0.0 and zero == 0 and zero == Zero((3,))
    _agrees(np.ones(3) * 2.0 + np.asarray(zero), np.full(3, 2.0))
    assert isinstance(zero * np.ones(3), Zero) and not (zero * np.ones(3)).typed
    assert repr(zero) == "zero" and "shape=(3,)" in repr(Zero((3,)))


def test_it_is_immutable():
    with pytest.raises(AttributeError):
        zero._shape = (3,)


def test_helpers_return_a_typed_zero_for_the_zero():
    x = np.ones((4, 1), np.float32)
    assert runtime.unbroadcast(zero, x).shape == (4, 1)
    assert runtime.unreduce(zero, x, axis=0).shape == (4, 1)
    assert runtime.add_at(zero, x, 0, zero).shape == (4, 1)
    assert isinstance(runtime.times_slope(zero, np.array([np.inf])), Zero)
    np.testing.assert_array_equal(runtime.as_grad(zero, x), np.zeros((4, 1), np.float32))
    np.testing.assert_array_equal(runtime.as_grad(Zero((4, 1)), x), np.zeros((4, 1)))


def test_a_bprop_returning_0_or_none_gives_the_zero_of_the_input():
    class Cell:
        def bprop(self, x, y, out, dout):
            return 0, None

    x, y = np.ones((2, 3), np.float32), np.ones(3)
    gx, gy = runtime.bprop_grads(Cell(), (x, y), None, None)
    assert isinstance(gx, Zero) and gx.shape == (2, 3) and gx.dtype == np.float32
    assert isinstance(gy, Zero) and gy.shape == (3,)
    assert isinstance(gx * 2.0, Zero)  # arithmetic keeps it a zero, never a number 0


def test_a_cell_whose_bprop_returns_0_differentiates_to_zeros_and_through_its_peers():
    import mindgrad
    from mindgrad import nn

    class Blocked(nn.Cell):
        def construct(self, x):
            return x * 3.0

        def bprop(self, x, out, dout):
            return (0,)

    blocked = Blocked()

    def f(x):
        return np.sum(blocked(x) @ np.ones((3, 2))) + np.sum(np.sin(x))

    x = np.array([[0.5, -1.0, 2.0], [0.1, 0.2, -0.3]])
    context = mindgrad.mindspore.context._context
    saved = dict(context)
    try:
        mindgrad.set_context(check_bprop=False)  # True refuses the int, as MindSpore does
        np.testing.assert_allclose(mindgrad.grad(f)(x), np.cos(x))  # the bprop's 0, then cos
    finally:
        context.clear()
        context.update(saved)


@pytest.mark.parametrize("slope", [2.5, np.float64(-1.5), np.float32(0.25), np.float16(3.0),
                                   np.longdouble(2.0), np.inf, np.float64(-np.inf),
                                   np.float32(np.nan), np.longdouble(np.inf)])
@pytest.mark.parametrize("g", [0.0, 1.5, np.float64(0.0), np.float32(-2.0),
                               np.array([0.0, 1.0]), np.array(0.0)])
def test_times_slope_of_a_number(g, slope):
    """A finite number's slope is the plain product (its fast path); a non-finite one gives
    0 where the gradient is 0, the product elsewhere, in the product's type."""
    got = runtime.times_slope(g, slope)
    with np.errstate(invalid="ignore"):
        product = g * slope
    expected = np.where(np.asarray(g) == 0, 0.0, product)
    assert np.result_type(got) == np.result_type(product)
    assert np.shape(got) == np.shape(product)
    np.testing.assert_array_equal(got, expected)
