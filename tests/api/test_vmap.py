"""``mindgrad.vmap`` (and ``mindgrad.ops.vmap``): each case against NumPy's own batched form of
the same computation, written by hand (``np.matmul`` of stacks, ``axis=`` arguments,
``np.moveaxis``), on 0-d, vector and matrix examples, float64 and float32; the axes' semantics
(MindSpore's and JAX's: ints, negative ints, None, nested per argument, out_axes); per-example
gradients against the gradient of each example; a vmap function differentiated (grad of vmap)
against central differences; and the errors."""

import numpy as np
import pytest

import mindgrad
from mindgrad import nn
from mindgrad.common.parameter import Parameter


def _rng(seed=0):
    return np.random.default_rng(seed)


def _elementwise(x):
    return np.tanh(x) * np.exp(-x * x) + 0.5


def _reduce_last(x):
    return np.sum(x * x, axis=-1, keepdims=True)


def _branchy(x):
    # control flow on the example's data: each example takes its own branch
    if np.sum(x) > 0:
        return x * 2.0
    return -x


def _looped(x):
    total = x * 0.0
    k = 0
    while k < 3:
        total = total + np.sin(x * (k + 1))
        k = k + 1
    return total


def _written_into(x):
    y = x.copy()
    y[..., 0] = np.cos(x[..., 0])
    return y


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_elementwise_and_written_into_match_numpy_on_the_batch(shape, dtype):
    x = _rng().normal(size=(4,) + shape).astype(dtype)
    out = mindgrad.vmap(_elementwise)(x)
    np.testing.assert_allclose(out, _elementwise(x), rtol=1e-6)
    # float32 stays float32: the batched code computes on the whole float32 batch, as NumPy 2
    # does on each example (NumPy 1.x would promote one 0-d float32 example with a Python
    # float to float64, by value-based casting; the batch keeps NumPy 2's answer there too)
    assert out.dtype == dtype and out.shape == x.shape
    if shape:
        np.testing.assert_allclose(mindgrad.vmap(_written_into)(x), _written_into(x))
        np.testing.assert_allclose(mindgrad.vmap(_looped)(x), _looped(x), rtol=1e-6)


@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_reductions_with_axis_and_keepdims(shape):
    x = _rng(1).normal(size=(5,) + shape)
    np.testing.assert_allclose(mindgrad.vmap(np.sum)(x), x.reshape(5, -1).sum(axis=1))
    np.testing.assert_allclose(mindgrad.vmap(_reduce_last)(x), _reduce_last(x))
    np.testing.assert_allclose(mindgrad.vmap(lambda t: np.max(t, axis=0))(x), np.max(x, axis=1))


def test_matmul_with_batched_and_shared_operands_and_einsum_and_solve():
    rng = _rng(2)
    a, b = rng.normal(size=(6, 3, 4)), rng.normal(size=(6, 4, 2))
    w = rng.normal(size=(4, 2))
    np.testing.assert_allclose(mindgrad.vmap(np.matmul)(a, b), a @ b)
    np.testing.assert_allclose(mindgrad.vmap(np.matmul, in_axes=(0, None))(a, w), a @ w)
    np.testing.assert_allclose(mindgrad.vmap(lambda p, q: np.einsum("ij,jk->ik", p, q))(a, b),
                               np.einsum("bij,bjk->bik", a, b))
    m = rng.normal(size=(6, 3, 3)) + 3.0 * np.eye(3)
    r = rng.normal(size=(6, 3))
    np.testing.assert_allclose(mindgrad.vmap(np.linalg.solve)(m, r),
                               np.linalg.solve(m, r[..., None])[..., 0])


def test_slicing_concatenate_and_where():
    x = _rng(3).normal(size=(4, 5))
    y = _rng(4).normal(size=(4, 2))

    def f(t, u):
        return np.where(t[1:3] > 0, np.concatenate([t[:1], u[1:]]), u * 2.0)

    expected = np.where(x[:, 1:3] > 0, np.concatenate([x[:, :1], y[:, 1:]], axis=1), y * 2.0)
    np.testing.assert_allclose(mindgrad.vmap(f)(x, y), expected)


def test_branches_on_each_examples_data():
    x = np.array([[1.0, 2.0], [-3.0, 0.5], [-1.0, -1.0]])
    expected = np.where(x.sum(axis=1, keepdims=True) > 0, x * 2.0, -x)
    np.testing.assert_allclose(mindgrad.vmap(_branchy)(x), expected)


def test_in_axes_of_one_none_negative_and_nested():
    rng = _rng(5)
    x, w = rng.normal(size=(3, 7)), rng.normal(size=(3,))
    # x's examples along axis 1 (its columns), w shared
    np.testing.assert_allclose(mindgrad.vmap(lambda t, u: t * u, in_axes=(1, None))(x, w),
                               (x * w[:, None]).T)
    np.testing.assert_allclose(mindgrad.vmap(np.sum, in_axes=-1)(x), x.sum(axis=0))
    pair = (x, rng.normal(size=(7, 3)))
    got = mindgrad.vmap(lambda p, u: p[0] + p[1] * u, in_axes=((1, 0), None))(pair, w)
    np.testing.assert_allclose(got, x.T + pair[1] * w)
    d = {"a": x, "b": w}
    got = mindgrad.vmap(lambda m: m["a"] * m["b"], in_axes=({"a": 1, "b": None},))(d)
    np.testing.assert_allclose(got, (x * w[:, None]).T)


def test_out_axes_one_none_and_nested():
    x = _rng(6).normal(size=(4, 3))
    np.testing.assert_allclose(mindgrad.vmap(lambda t: t * 2.0, out_axes=1)(x), (x * 2.0).T)
    got = mindgrad.vmap(lambda t: (t + 1.0, np.sum(t)), out_axes=(1, 0))(x)
    np.testing.assert_allclose(got[0], (x + 1.0).T)
    np.testing.assert_allclose(got[1], x.sum(axis=1))
    w = np.arange(3.0)
    got = mindgrad.vmap(lambda t, u: (t * u, u), in_axes=(0, None), out_axes=(0, None))(x, w)
    np.testing.assert_allclose(got[0], x * w)
    np.testing.assert_allclose(got[1], w)


def test_nested_vmap_is_the_double_loop():
    x = _rng(7).normal(size=(3, 4, 2))
    w = _rng(8).normal(size=(2, 5))
    inner = mindgrad.vmap(lambda t, u: np.tanh(t @ u), in_axes=(0, None))
    np.testing.assert_allclose(mindgrad.vmap(inner, in_axes=(0, None))(x, w), np.tanh(x @ w))


def _loss(w, x, y):
    return np.sum((np.tanh(x @ w) - y) ** 2)


def test_per_example_gradients_through_vmap_of_grad():
    """vmap(grad(loss), in_axes=(None, 0, 0)): each row is the gradient of one example's loss,
    which for this loss is a closed form: 2 (tanh(x w) - y) (1 - tanh^2) x^T."""
    rng = _rng(9)
    w, x, y = rng.normal(size=(3, 2)), rng.normal(size=(8, 3)), rng.normal(size=(8, 2))
    per = mindgrad.vmap(mindgrad.grad(_loss), in_axes=(None, 0, 0))(w, x, y)
    t = np.tanh(x @ w)
    expected = np.einsum("bi,bj->bij", x, 2.0 * (t - y) * (1.0 - t * t))
    np.testing.assert_allclose(per, expected, rtol=1e-10)
    # the per-example gradients sum to the whole batch's
    np.testing.assert_allclose(per.sum(axis=0), mindgrad.grad(_loss)(w, x, y), rtol=1e-10)


MAPPED = mindgrad.vmap(lambda t, u: np.sin(t @ u) * np.sum(t), in_axes=(0, None))
X = _rng(10).normal(size=(5, 3))


def _mapped_loss(w):
    return np.sum(MAPPED(X, w) ** 2)


def _mapped_in_both(x):
    return np.sum(mindgrad.vmap(_elementwise)(x) * np.cos(x))


@pytest.mark.parametrize("order", [1, 2])
def test_grad_of_vmap_matches_central_differences(order):
    w = _rng(11).normal(size=(3, 2))
    mindgrad.check_grads(_mapped_loss, (w,), modes=("rev", "fwd"), order=order)
    mindgrad.check_grads(_mapped_in_both, (_rng(12).normal(size=(4, 3)),),
                         modes=("rev", "fwd"), order=order)


class Dense(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.linspace(-1.0, 1.0, 6).reshape(3, 2), name="w")

    def construct(self, x):
        return np.tanh(x @ self.w)


def test_a_cell_with_parameters_mapped():
    net = Dense()
    x = _rng(13).normal(size=(4, 3))
    np.testing.assert_allclose(mindgrad.vmap(net)(x), np.tanh(x @ net.w))


def test_mindspore_names():
    x = _rng(14).normal(size=(3, 2))
    np.testing.assert_allclose(mindgrad.ops.vmap(np.sum, 0, 0)(x), x.sum(axis=1))
    np.testing.assert_allclose(mindgrad.vmap(np.sum, chunk_size=2)(x), x.sum(axis=1))


def _updated(x):
    d = {"a": 1.0}
    d.update(b=np.sum(x) * 0.5)  # each example's own value, written by keyword
    return np.sum(d["b"] * x)


def _set_default(x):
    d = {}
    d.setdefault("b", np.sum(x) * 0.5)
    return np.sum(d["b"] * x)


def _branch_of_another_shape(x):
    if np.sum(x) > 0.0:
        return np.sum(np.tanh(x))
    return x * 2.0


@pytest.mark.parametrize("fn", [_updated, _set_default])
@pytest.mark.parametrize("shape", [(3,), (3, 4), (3, 2, 3)])
def test_a_container_written_each_examples_value_by_a_method(fn, shape):
    # d.update(b=...) was run per example on one dict shared by all: each example read the
    # last example's value (a wrong number on 2-d examples)
    xs = _rng(7).standard_normal(shape)
    np.testing.assert_allclose(mindgrad.vmap(fn)(xs), [fn(x) for x in xs], rtol=1e-12)


def test_examples_whose_results_differ_in_shape_are_an_error_naming_the_function():
    xs = np.array([[1.0, 2.0, 3.0], [-1.0, -2.0, -3.0]])
    with pytest.raises(ValueError, match=r"the result of _branch_of_another_shape "
                                         r"\(.*test_vmap.py:\d+\) has the shape \(\) in "
                                         r"example 0 but \(3,\) in example 1"):
        mindgrad.vmap(_branch_of_another_shape)(xs)


@pytest.mark.parametrize("call, message", [
    (lambda: mindgrad.vmap(np.add)(np.ones((3, 2)), np.ones((4, 2))),
     "disagree on the batch size: argument 0 has 3, argument 1 has 4"),
    (lambda: mindgrad.vmap(np.add, in_axes=(0,))(np.ones(3), np.ones(3)),
     "in_axes has 1 entries but the function was given 2"),
    (lambda: mindgrad.vmap(np.sum, in_axes=2)(np.ones((3, 2))),
     "argument 0 has 2 dimension(s), so it has no batch axis 2"),
    (lambda: mindgrad.vmap(np.sum, in_axes=None)(np.ones(3)), "no argument is batched"),
    (lambda: mindgrad.vmap(np.sum)(np.ones((0, 2))), "the batch is empty"),
    (lambda: mindgrad.vmap(lambda t: t, out_axes=None)(np.arange(3.0)),
     "differs from one example to another"),
    (lambda: mindgrad.vmap(np.sum, in_axes="0"), "each axis is an int or None"),
    (lambda: mindgrad.vmap(lambda t: t, out_axes=2)(np.ones((3, 2))), "out of range"),
])
def test_errors_name_what_is_wrong(call, message):
    with pytest.raises((ValueError, TypeError), match=__import__("re").escape(message)):
        call()
