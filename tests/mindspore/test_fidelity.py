"""MindSpore fidelity beyond the recorded answers (test_parity.py): the operators and forms
added for MindSpore's programs, checked against central differences in float64 along random
directions (reverse and forward mode, and second order), and MindSpore's rules for Tensors
against their closed forms."""

import numpy as np
import pytest

import mindgrad as ms
import mindgrad.context as context
import mindgrad.nn as nn
import mindgrad.ops as ops
import mindgrad.ops.composite as C
import mindgrad.ops.operations as P
from mindgrad import Parameter, Tensor
from mindgrad.common import dtype as mstype
from mindgrad.common.api import jit

EPS = 1e-6


def numeric_directional(fn, args, directions):
    """d/dt fn(args + t * directions) at 0, by central differences (float64)."""
    plus = fn(*[a + EPS * d for a, d in zip(args, directions)])
    minus = fn(*[a - EPS * d for a, d in zip(args, directions)])
    return (np.asarray(plus) - np.asarray(minus)) / (2 * EPS)


def check_both_directions(fn, args, seed=0):
    """``fn``'s gradient (reverse, summed output) and its jvp (forward) against central
    differences along a random direction."""
    rng = np.random.default_rng(seed)
    directions = [rng.standard_normal(np.shape(a)) for a in args]
    numeric = numeric_directional(fn, args, directions)
    grads = ms.grad(fn, tuple(range(len(args))))(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    reverse = sum(np.vdot(g, d) for g, d in zip(grads, directions))
    np.testing.assert_allclose(reverse, np.sum(numeric), rtol=1e-6, atol=1e-7)
    _, tangent = ms.jvp(fn, tuple(args), tuple(directions))
    np.testing.assert_allclose(tangent, numeric, rtol=1e-6, atol=1e-7)


# ----- ops.conv2d ------------------------------------------------------------------------------


@pytest.mark.parametrize("options, shapes", [
    (dict(), ((2, 3, 5, 5), (4, 3, 3, 3))),
    (dict(stride=2, pad_mode="same"), ((1, 2, 5, 6), (3, 2, 3, 2))),
    (dict(pad_mode="pad", padding=1, dilation=2), ((1, 1, 6, 6), (2, 1, 2, 2))),
    (dict(pad_mode="pad", padding=(1, 0, 2, 1)), ((1, 2, 4, 3), (1, 2, 3, 3))),
], ids=["valid", "same-stride2", "pad-dilation2", "pad-4"])
def test_conv2d_gradient_and_tangent(options, shapes):
    rng = np.random.default_rng(1)
    x, w = (rng.standard_normal(s) for s in shapes)
    bias = rng.standard_normal(shapes[1][0])

    stride, pad_mode = options.get("stride", 1), options.get("pad_mode", "valid")
    padding, dilation = options.get("padding", 0), options.get("dilation", 1)

    def conv(x, w, bias):
        return ops.conv2d(x, w, bias, stride=stride, pad_mode=pad_mode, padding=padding,
                          dilation=dilation)

    check_both_directions(conv, [x, w, bias])


def test_conv2d_matches_a_direct_sum():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((1, 2, 4, 4)), rng.standard_normal((3, 2, 2, 2))
    out = ops.conv2d(x, w)
    direct = np.zeros((1, 3, 3, 3))
    for o in range(3):
        for i in range(3):
            for j in range(3):
                direct[0, o, i, j] = np.sum(x[0, :, i:i + 2, j:j + 2] * w[o])
    np.testing.assert_allclose(out, direct, rtol=1e-12)


def test_conv2d_groups_is_refused():
    with pytest.raises(NotImplementedError, match="groups=1"):
        ops.conv2d(np.ones((1, 2, 3, 3)), np.ones((2, 1, 2, 2)), groups=2)


# ----- ops.BatchNorm ---------------------------------------------------------------------------


@pytest.mark.parametrize("training", [False, True], ids=["inference", "training"])
def test_batch_norm_gradient_and_tangent(training):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3, 2, 2))
    scale, bias = rng.standard_normal(3), rng.standard_normal(3)
    mean, var = rng.standard_normal(3), rng.uniform(0.5, 2.0, 3)
    bn = ops.BatchNorm(is_training=training)

    def normed(x, scale, bias):
        return bn(x, scale, bias, mean.copy(), var.copy())[0]

    check_both_directions(normed, [x, scale, bias])


def test_batch_norm_training_statistics():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 2, 3))
    mean = Parameter(np.array([1.0, -1.0]), name="mean", requires_grad=False)
    var = Parameter(np.array([2.0, 0.5]), name="var", requires_grad=False)
    y, batch_mean, batch_var, _, _ = ops.BatchNorm(True, 1e-5, 0.25)(
        x, np.ones(2), np.zeros(2), mean, var)
    by_channel = np.moveaxis(x, 1, 0).reshape(2, -1)
    np.testing.assert_allclose(batch_mean, by_channel.mean(axis=1))
    np.testing.assert_allclose(batch_var, by_channel.var(axis=1))
    np.testing.assert_allclose(mean, 0.75 * np.array([1.0, -1.0]) + 0.25 * by_channel.mean(1))
    np.testing.assert_allclose(var, 0.75 * np.array([2.0, 0.5]) +
                               0.25 * by_channel.var(axis=1, ddof=1))
    expected = (x - by_channel.mean(1)[None, :, None]) / \
        np.sqrt(by_channel.var(1)[None, :, None] + 1e-5)
    np.testing.assert_allclose(y, expected, rtol=1e-12)


# ----- primitives made in place, and under a method's name -------------------------------------


@jit
def _made_in_place(a, b):
    return P.MatMul(transpose_b=True)(a, b) * P.Sin()(a)


def test_primitive_made_where_it_is_called():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    check_both_directions(_made_in_place, [a, b])


class _MulSin(nn.Cell):
    def __init__(self):
        super().__init__()
        self.mul = ops.Mul()
        self.sin = ops.Sin()

    def construct(self, x, y):
        return self.mul(self.mul(x, x), self.sin(y))


_NET = _MulSin()


def test_primitive_under_a_method_name_at_second_order():
    x, y = np.array([1.0, -2.0, 0.5]), np.array([3.0, 4.0, -1.0])
    v = np.array([0.5, -1.0, 2.0])
    first = C.GradOperation(get_all=True)(_MulSin())
    # x^2 sin y: the first gradients, then their derivative along (v, v) summed
    gx, gy = first(x, y)
    np.testing.assert_allclose(gx, 2 * x * np.sin(y))
    np.testing.assert_allclose(gy, x * x * np.cos(y))
    second = C.GradOperation(get_all=True, sens_param=True)(first)(x, y, (v, v))
    np.testing.assert_allclose(second[0], v * 2 * np.sin(y) + v * 2 * x * np.cos(y))
    np.testing.assert_allclose(second[1], v * 2 * x * np.cos(y) - v * x * x * np.sin(y))
    hessian_diag = ms.grad(lambda a, b: ms.grad(_NET, (0, 1))(a, b)[0].sum(), 0)(x, y)
    np.testing.assert_allclose(hessian_diag, 2 * np.sin(y))


# ----- MindSpore's rules for Tensors -----------------------------------------------------------


@pytest.mark.parametrize("factor, expected", [(6, 6), (0.5, 0), (-1.5, -1), (2.75, 2)])
def test_an_int32_tensor_gets_the_float_gradient_cast(factor, expected):
    def scaled(a):
        return a * factor

    x = Tensor([10, -3], mstype.int32)
    g = ms.grad(scaled)(x)
    assert isinstance(g, Tensor) and g.dtype == np.int32
    np.testing.assert_array_equal(g, [expected, expected])
    value, g2 = ops.value_and_grad(scaled)(x)
    np.testing.assert_array_equal(value, x.asnumpy() * factor)
    assert value.dtype == (x.asnumpy() * factor).dtype
    np.testing.assert_array_equal(g2, g)


def test_integer_numpy_arrays_keep_their_clear_error():
    with pytest.raises(TypeError, match="dtype int32"):
        ms.grad(lambda a: a * 6)(np.array([10], np.int32))


def test_only_tensors_are_differentiated_among_tensors():
    x = Tensor(np.array([1.0, 2.0], np.float32))

    def f(a, b):
        return a * b

    g = ops.grad(f, (0, 1))(x, 2.0)  # the float's gradient is left out: bare
    assert isinstance(g, Tensor)
    np.testing.assert_allclose(g, [2.0, 2.0])
    assert ops.grad(f, 1)(x, 2.0) == ()
    assert ops.grad(lambda t: t[0] * t[1])((x, x)) == ()


def test_vjp_fn_takes_cotangents_either_way_and_gives_tensors():
    x = Tensor(np.array([1.0, 2.0], np.float32))
    y = Tensor(np.array([3.0, -1.0], np.float32))
    v1 = Tensor(np.array([0.5, 2.0], np.float32))
    v2 = Tensor(np.array([1.0, -1.0], np.float32))
    out, vjp_fn = ops.vjp(lambda a, b: (a * b, a + b), x, y)
    assert all(isinstance(o, Tensor) for o in out)
    separate, together = vjp_fn(v1, v2), vjp_fn((v1, v2))
    for g in separate + together:
        assert isinstance(g, Tensor) and g.dtype == np.float32
    np.testing.assert_allclose(separate[0], v1 * y + v2)
    np.testing.assert_allclose(separate[1], v1 * x + v2)
    for a, b in zip(separate, together):
        np.testing.assert_allclose(a, b)
    _, single = ops.vjp(lambda a: a * a, x)
    assert isinstance(single(v1), tuple) and len(single(v1)) == 1


def test_jacobians_and_jvp_give_tensors():
    x = Tensor(np.array([1.0, 2.0], np.float32))
    jac = ops.jacrev(lambda a: a * a)(x)
    assert isinstance(jac, Tensor)
    np.testing.assert_allclose(jac, np.diag([2.0, 4.0]))
    jac2 = ops.jacfwd(lambda a, b: (a * b, a + b), (0, 1))(x, x)
    assert isinstance(jac2, tuple) and all(isinstance(j, Tensor) for pair in jac2 for j in pair)
    out, tangent = ops.jvp(lambda a: a * a * a, x, Tensor(np.ones(2, np.float32)))
    assert isinstance(out, Tensor) and isinstance(tangent, Tensor)
    np.testing.assert_allclose(tangent, 3 * x.asnumpy() ** 2)


def test_weights_gradients_without_inputs_are_tensors():
    class NoInput(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(np.array([2.0, -1.0], np.float32), name="w")

        def construct(self):
            return self.w * self.w * 3

    net = NoInput()
    (g,) = ops.grad(net, None, net.trainable_params())()
    assert isinstance(g, Tensor)
    np.testing.assert_allclose(g, 6 * np.array([2.0, -1.0]))
    bare = C.GradOperation(get_by_list=True)(net, net.w)()
    assert isinstance(bare, Tensor)


def test_grad_position_empty_raises_when_called():
    g = ops.grad(lambda a: a * a, ())
    with pytest.raises(RuntimeError, match="grad_position should not be empty"):
        g(Tensor([1.0]))


def test_bprop_checks_follow_the_context():
    class Mul(nn.Cell):
        def construct(self, a, b):
            return a * b

        def bprop(self, a, b, out, dout):
            return dout * 10, np.ones(3, np.float32)

    x = Tensor(np.array([1.0, 2.0], np.float32))
    saved = dict(ms.mindspore.context._context)
    try:
        context.set_context(check_bprop=True)
        with pytest.raises(ValueError, match="same shape"):
            C.GradOperation(get_all=True)(Mul())(x, x)
    finally:
        ms.mindspore.context._context.update(saved)


# ----- names -----------------------------------------------------------------------------------


@pytest.mark.parametrize("module", ["mindgrad.ops", "mindgrad.ops.operations",
                                    "mindgrad.ops.composite", "mindgrad.ops.functional",
                                    "mindgrad.ops.function", "mindgrad.ops.primitive",
                                    "mindgrad.common", "mindgrad.common.dtype",
                                    "mindgrad.common.api", "mindgrad.context", "mindgrad.nn"])
def test_every_listed_name_resolves(module):
    import importlib

    mod = importlib.import_module(module)
    assert mod.__all__
    for name in mod.__all__:
        assert getattr(mod, name) is not None


def test_a_missing_mindspore_name_says_so():
    with pytest.raises(AttributeError, match="MindSpore's and is not supported"):
        ops.Conv3DTranspose  # noqa: B018
    with pytest.raises(AttributeError, match="none either"):
        ops.no_such_name  # noqa: B018


_LAYER_SCALE = [0.0]


def _fresh_layer_each_call(x):
    # a new layer at each call, with weights k * ones: called through the run-time dispatcher
    _LAYER_SCALE[0] += 1.0
    layer = nn.Dense(2, 2, weight_init=Tensor(np.full((2, 2), _LAYER_SCALE[0], np.float32)),
                     bias_init="zeros")
    return layer(x).sum()


def test_a_cell_made_in_place_is_differentiated_not_frozen():
    # each call differentiates through the layer it made: d/dx sum(W x) = W.T @ 1 = 2k
    for k in (1.0, 2.0, 3.0):
        g = ms.grad(_fresh_layer_each_call)(np.ones((1, 2), np.float32))
        np.testing.assert_allclose(np.asarray(g), np.full((1, 2), 2.0 * k), rtol=1e-6)


def test_a_mutable_container_is_differentiated_in_graph_mode_only():
    x = Tensor(np.array([1.0, 2.0], np.float32))
    y = Tensor(np.array([3.0, -4.0], np.float32))

    def product(t):
        return t[0] * t[1]

    saved = context.get_context("mode")
    try:
        context.set_context(mode=context.GRAPH_MODE)
        gx, gy = ops.grad(product)(ms.mutable((x, y)))
        np.testing.assert_allclose(gx, y)
        np.testing.assert_allclose(gy, x)
        assert isinstance(gx, Tensor)
        assert ops.grad(product)((x, y)) == ()  # unmarked: a constant
        context.set_context(mode=context.PYNATIVE_MODE)
        assert ops.grad(product)(ms.mutable((x, y))) == ()
    finally:
        context.set_context(mode=saved)
