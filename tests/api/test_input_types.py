"""Arguments that look like arrays but compute by rules of their own are refused by name.

A JAX, PyTorch, CuPy or Dask array, pandas data, ``np.matrix`` (``*`` is a matrix product) or a
masked array (masked entries are skipped) would run through the generated code with its own
semantics and give wrong numbers or zeros. ndarray subclasses that compute exactly like
ndarray (mindgrad's Parameter, a subclass adding nothing) are accepted.
"""

import numpy as np
import pytest

import mindgrad as mg
from mindgrad import nn

pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix


class ArrayLike:
    """Stands for a foreign array (torch.Tensor, jax.Array): it offers ``__array__``."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=float)

    def __array__(self, dtype=None, copy=None):
        return self.values

    def __mul__(self, other):
        return ArrayLike(self.values * np.asarray(other))

    __rmul__ = __mul__


class DlpackLike:
    """Stands for an array offering only the DLPack protocol."""

    def __dlpack__(self, stream=None):
        raise NotImplementedError


class PlainSubclass(np.ndarray):
    pass


def square_sum(x):
    return np.sum(x * x)


def tanh_net(x, w):
    return np.sum(np.tanh(x @ w) ** 2)


def first_of(xs):
    return np.sum(xs[0] * 2.0)


FOREIGN = {
    "array_like": lambda: ArrayLike([1.0, 2.0]),
    "dlpack_like": DlpackLike,
    "matrix": lambda: np.matrix([[1.0, 2.0]]),
    "masked": lambda: np.ma.array([1.0, 2.0], mask=[False, True]),
}


@pytest.mark.parametrize("name", FOREIGN)
def test_a_foreign_array_input_is_refused_naming_type_and_position(name):
    value = FOREIGN[name]()
    qualname = type(value).__qualname__
    with pytest.raises(TypeError, match=rf"input 0 is a .*{qualname}.*np\.asarray"):
        mg.grad(square_sum)(value)
    with pytest.raises(TypeError, match=rf"input 0 is a .*{qualname}"):
        mg.vjp(square_sum, value)
    with pytest.raises(TypeError, match=rf"input 0 is a .*{qualname}"):
        mg.jvp(square_sum, (value,), (np.ones(2),))


def test_a_foreign_array_is_refused_where_it_is_not_differentiated():
    x, w = np.ones((2, 2)), np.full((2, 2), 0.5)
    with pytest.raises(TypeError, match=r"input 0 is a numpy\.matrix"):
        mg.grad(tanh_net, 1)(np.matrix(x), w)
    with pytest.raises(TypeError, match=r"keyword argument 'scale' is a .*ArrayLike"):
        mg.grad(lambda x, scale=1.0: np.sum(x * scale))(np.ones(2), scale=ArrayLike([2.0]))


@pytest.mark.parametrize("container, where", [
    ((np.ones(2), ArrayLike([1.0])), r"input 0\[1\]"),
    ([np.ma.array([1.0, 2.0])], r"input 0\[0\]"),
    ({"w": np.ma.array([[1.0]])}, r"input 0\['w'\]"),
])
def test_a_foreign_array_inside_a_container_is_refused_by_its_path(container, where):
    with pytest.raises(TypeError, match=where):
        mg.grad(lambda xs: 1.0 * np.sum(np.ones(1)))(container)


def test_foreign_sens_tangent_and_cotangent_are_refused():
    x = np.array([1.0, 2.0])
    with pytest.raises(TypeError, match="the sens is a .*MaskedArray"):
        mg.grad(lambda x: x * 2.0, sens_param=True)(x, np.ma.array([1.0, 1.0]))
    with pytest.raises(TypeError, match="tangent 0 is a .*ArrayLike"):
        mg.jvp(square_sum, (x,), (ArrayLike([1.0, 1.0]),))
    _, vjp_fn = mg.vjp(lambda x: x * 2.0, x)
    with pytest.raises(TypeError, match="the cotangent v is a .*matrix"):
        vjp_fn(np.matrix([[1.0, 1.0]]))


def test_a_parameter_refuses_a_masked_array():
    with pytest.raises(TypeError, match="mask"):
        nn.Parameter(np.ma.array([1.0, 2.0], mask=[False, True]), name="w")


def test_subclasses_that_compute_like_ndarray_stay_accepted():
    x = np.array([1.0, -2.0, 3.0])
    np.testing.assert_allclose(mg.grad(square_sum)(x.view(PlainSubclass)), 2 * x)
    p = nn.Parameter(x, name="p")
    np.testing.assert_allclose(mg.grad(square_sum)(p), 2 * x)
    g_array, g_number = mg.grad(first_of)([x, 1.5])
    np.testing.assert_allclose(g_array, np.full(3, 2.0))
    assert g_number == 0.0
