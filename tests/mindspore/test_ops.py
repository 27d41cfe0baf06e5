"""``mindgrad.ops``: MindSpore's functional operators, losses, activations, constructors and
primitive classes, on several shapes in float32 and float64.

Oracles: loops and formulas written out here independently of mindgrad (``math.erf``, per-sample
log-softmax, PyTorch's documented loss formulas, which MindSpore's documentation repeats), and
central finite differences in both directions (``mindgrad.check_grads``).
"""

import functools
import math

import numpy as np
import pytest

import mindgrad
import mindgrad as ms
from mindgrad import Tensor, ops

F32, F64 = np.float32, np.float64
RNG = np.random.default_rng(2024)


def randn(*shape, dtype=F64, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == F32 else dict(rtol=1e-10, atol=1e-12)


def check(fn, *args, order=1):
    mindgrad.check_grads(fn, args, modes=("rev", "fwd"), order=order)


def reduce_(values, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction](values)


# ===== cross entropy and the negative log-likelihood ============================================


def log_softmax_loop(logits, axis):
    """log-softmax along ``axis``, one slice at a time, in float64."""
    moved = np.moveaxis(np.asarray(logits, F64), axis, -1)
    out = np.empty_like(moved)
    for index in np.ndindex(moved.shape[:-1]):
        row = moved[index]
        out[index] = row - math.log(sum(math.exp(v) for v in row))
    return np.moveaxis(out, -1, axis)


def cross_entropy_loop(logits, target, weight, ignore_index, reduction, smoothing):
    """PyTorch's (and MindSpore's) formula, written as loops over samples."""
    lp = np.moveaxis(log_softmax_loop(logits, 1), 1, -1)  # (..., C)
    classes = lp.shape[-1]
    w = np.ones(classes) if weight is None else np.asarray(weight, F64)
    losses, total = np.zeros(lp.shape[:-1]), 0.0
    for index in np.ndindex(lp.shape[:-1]):
        y = int(target[index])
        if y == ignore_index:
            continue
        nll = -w[y] * lp[index][y]
        smooth = -sum(w[c] * lp[index][c] for c in range(classes))
        losses[index] = (1 - smoothing) * nll + smoothing / classes * smooth
        total += w[y]
    if reduction == "mean":
        return losses.sum() / total
    return reduce_(losses, reduction)


@pytest.mark.parametrize("shape", [(5, 3), (2, 4, 3), (3, 4, 2, 2)])
@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("weighted, ignore, smoothing", [
    (False, -100, 0.0), (True, -100, 0.0), (True, 1, 0.0), (False, -100, 0.2), (True, 2, 0.1)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_with_class_indices(shape, dtype, weighted, ignore, smoothing, reduction):
    logits = randn(*shape, dtype=dtype, scale=2.0)
    classes = shape[1]
    target = RNG.integers(0, classes, (shape[0],) + shape[2:])
    weight = np.linspace(0.5, 2.0, classes).astype(dtype) if weighted else None
    got = ops.cross_entropy(Tensor(logits), Tensor(target), None if weight is None else
                            Tensor(weight), ignore, reduction, smoothing)
    expected = cross_entropy_loop(logits, target, weight, ignore, reduction, smoothing)
    assert isinstance(got, Tensor) and got.dtype == dtype
    np.testing.assert_allclose(got, expected, **tol(dtype))
    if dtype == F64:
        check(lambda x: np.sum(ops.cross_entropy(x, target, weight, ignore, reduction,
                                                 smoothing)), logits)


@pytest.mark.parametrize("dtype", [F32, F64])
def test_cross_entropy_with_class_probabilities(dtype):
    logits = randn(4, 3, dtype=dtype)
    probs = np.abs(randn(4, 3, dtype=dtype))
    probs = probs / probs.sum(axis=1, keepdims=True)
    lp = log_softmax_loop(logits, 1)
    for smoothing in (0.0, 0.3):
        soft = probs * (1 - smoothing) + smoothing / 3
        expected = np.mean(-np.sum(soft * lp, axis=1))
        np.testing.assert_allclose(ops.cross_entropy(logits, probs, label_smoothing=smoothing),
                                   expected, **tol(dtype))
    loss = ms.nn.CrossEntropyLoss(reduction="sum")
    np.testing.assert_allclose(loss(Tensor(logits), Tensor(probs)), -np.sum(probs * lp),
                               **tol(dtype))
    check(lambda x, p: ops.cross_entropy(x, p), logits.astype(F64), probs.astype(F64))


def test_nll_loss_and_softmax_cross_entropy_with_logits():
    logits = randn(6, 4)
    target = RNG.integers(0, 4, 6)
    lp = log_softmax_loop(logits, 1)
    picked = lp[np.arange(6), target]
    np.testing.assert_allclose(ops.nll_loss(lp, target), -picked.mean())
    sparse = ms.nn.SoftmaxCrossEntropyWithLogits(sparse=True)  # reduction "none" by default
    np.testing.assert_allclose(sparse(logits, target), -picked)
    mean = ms.nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    np.testing.assert_allclose(mean(logits, target), -picked.mean())
    onehot = np.eye(4)[target]
    dense = ms.nn.SoftmaxCrossEntropyWithLogits(sparse=False, reduction="sum")
    np.testing.assert_allclose(dense(logits, onehot), -picked.sum())
    loss, dlogits = ops.SoftmaxCrossEntropyWithLogits()(logits, onehot)
    np.testing.assert_allclose(loss, -picked)
    np.testing.assert_allclose(dlogits, np.exp(lp) - onehot)
    np.testing.assert_allclose(ops.SparseSoftmaxCrossEntropyWithLogits()(logits, target),
                               -picked.mean())
    check(lambda x: mean(x, target), logits)
    check(lambda x: dense(x, onehot), logits)


# ===== binary cross entropy ===================================================================


def sigmoid_loop(x):
    return np.vectorize(lambda v: 1.0 / (1.0 + math.exp(-v)))(np.asarray(x, F64))


@pytest.mark.parametrize("shape", [(6,), (4, 3), (2, 3, 2)])
@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_with_logits(shape, dtype, reduction):
    x = randn(*shape, dtype=dtype, scale=3.0)
    y = (RNG.random(shape) > 0.5).astype(dtype)
    w = RNG.uniform(0.5, 1.5, shape).astype(dtype)
    pos = RNG.uniform(0.5, 3.0, shape[-1:]).astype(dtype)
    p = sigmoid_loop(x)
    plain = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    weighted = -w * (pos * y * np.log(p) + (1 - y) * np.log(1 - p))
    got = ops.binary_cross_entropy_with_logits(Tensor(x), Tensor(y), reduction=reduction)
    np.testing.assert_allclose(got, reduce_(plain, reduction), **tol(dtype))
    got = ops.binary_cross_entropy_with_logits(x, y, w, pos, reduction)
    np.testing.assert_allclose(got, reduce_(weighted, reduction), **tol(dtype))
    cell = ms.nn.BCEWithLogitsLoss(reduction, Tensor(w), Tensor(pos))
    np.testing.assert_allclose(cell(Tensor(x), Tensor(y)), reduce_(weighted, reduction),
                               **tol(dtype))
    # probabilities in: BCELoss
    bce = ms.nn.BCELoss(Tensor(w), reduction)
    np.testing.assert_allclose(bce(Tensor(p.astype(dtype)), Tensor(y)),
                               reduce_(-w * (y * np.log(p) + (1 - y) * np.log(1 - p)), reduction),
                               rtol=1e-4 if dtype == F32 else 1e-10)
    if dtype == F64:
        check(lambda v: np.sum(ops.binary_cross_entropy_with_logits(v, y, w, pos, reduction)), x)
        # probabilities away from 0 and 1, where log's curvature leaves central differences
        # (eps 1e-6) too coarse for the check's tolerance
        check(lambda v: np.sum(ops.binary_cross_entropy(v, y, w, reduction)),
              np.clip(p, 0.05, 0.95))


@pytest.mark.filterwarnings("ignore:divide by zero")  # log(0) in BCELoss, clipped at -100
def test_binary_cross_entropy_with_logits_does_not_overflow():
    x = np.array([-800.0, 800.0, 0.0])
    y = np.array([1.0, 0.0, 1.0])
    loss = ops.binary_cross_entropy_with_logits(x, y, reduction="none")
    np.testing.assert_allclose(loss, [800.0, 800.0, math.log(2.0)])
    np.testing.assert_allclose(ms.grad(lambda v: np.sum(
        ops.binary_cross_entropy_with_logits(v, y, reduction="sum")))(x), [-1.0, 1.0, -0.5])
    # BCELoss clips log(0) at -100, as PyTorch does
    np.testing.assert_allclose(ops.binary_cross_entropy(np.array([0.0, 1.0]), np.array([1.0, 0.0]),
                                                        reduction="none"), [100.0, 100.0])


# ===== regression losses =====================================================================


def _soft_margin(u, v, reduction):
    return ops.soft_margin_loss(u, np.sign(v), reduction)


def _smooth_l1(u, v, reduction):
    return ops.smooth_l1_loss(u, v, 0.7, reduction)


def _huber(u, v, reduction):
    return ops.huber_loss(u, v, reduction, 0.8)


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 2, 3)])
@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(shape, dtype, reduction):
    a, b = randn(*shape, dtype=dtype, scale=2.0), randn(*shape, dtype=dtype)
    d = np.asarray(a, F64) - b
    cases = {
        "mse": (functools.partial(ops.mse_loss, reduction=reduction), d * d),
        "l1": (functools.partial(ops.l1_loss, reduction=reduction), np.abs(d)),
        "smooth_l1": (functools.partial(_smooth_l1, reduction=reduction),
                      np.where(np.abs(d) < 0.7, 0.5 * d * d / 0.7, np.abs(d) - 0.35)),
        "huber": (functools.partial(_huber, reduction=reduction),
                  np.where(np.abs(d) < 0.8, 0.5 * d * d, 0.8 * (np.abs(d) - 0.4))),
        "soft_margin": (functools.partial(_soft_margin, reduction=reduction),
                        np.log1p(np.exp(-np.sign(b) * a))),
        "MSELoss": (ms.nn.MSELoss(reduction), d * d),
        "L1Loss": (ms.nn.L1Loss(reduction), np.abs(d)),
        "SmoothL1Loss": (ms.nn.SmoothL1Loss(1.0, reduction),
                         np.where(np.abs(d) < 1, 0.5 * d * d, np.abs(d) - 0.5)),
    }
    for name, (fn, pointwise) in cases.items():
        got = fn(Tensor(a), Tensor(b))
        assert isinstance(got, Tensor) and got.dtype == dtype, name
        np.testing.assert_allclose(got, reduce_(pointwise, reduction), **tol(dtype),
                                   err_msg=name)
        if dtype == F64:
            check_sum(fn, a, b)


def test_kl_div():
    logits = log_softmax_loop(randn(3, 4), 1)
    labels = np.exp(log_softmax_loop(randn(3, 4), 1))
    pointwise = labels * (np.log(labels) - logits)
    np.testing.assert_allclose(ops.kl_div(logits, labels, "sum"), pointwise.sum())
    np.testing.assert_allclose(ops.kl_div(logits, labels, "batchmean"), pointwise.sum() / 3)
    np.testing.assert_allclose(ms.nn.KLDivLoss("batchmean")(logits, labels),
                               pointwise.sum() / 3)
    check(lambda v: ops.kl_div(v, labels, "mean"), logits)


# ===== activations ===========================================================================


def gelu_exact(x):
    return np.vectorize(lambda v: 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))))(x)


# the activations with options, as named functions: mindgrad reads a lambda's source by its line
def _softplus(x):
    return ops.softplus(x, 2.0, 5.0)


def _elu(x):
    return ops.elu(x, 0.7)


def _celu(x):
    return ops.celu(x, 0.5)


def _gelu_tanh(x):
    return ops.gelu(x, "tanh")


def _leaky_relu(x):
    return ops.leaky_relu(x, 0.1)


def _hardtanh(x):
    return ops.hardtanh(x, -0.5, 0.8)


def _threshold(x):
    return ops.threshold(x, 0.2, -1.0)


def _softmax0(x):
    return ops.softmax(x, 0)


def _prelu(x):
    return ops.prelu(x, np.array([0.1, 0.2, 0.3], x.dtype))


def _glu0(x):
    return ops.glu(x, 0)


def _selu_formula(x):
    return 1.0507009873554804934193349852946 * np.where(
        x > 0, x, 1.6732632423543772848170429916717 * (np.exp(x) - 1))


ACTIVATIONS = {  # MindSpore's documented formulas, written out here
    "relu": (ops.relu, lambda x: np.where(x > 0, x, 0.0)),
    "relu6": (ops.relu6, lambda x: np.minimum(np.where(x > 0, x, 0.0), 6.0)),
    "sigmoid": (ops.sigmoid, sigmoid_loop),
    "softplus": (_softplus, lambda x: np.where(2 * x > 5, x, np.log1p(np.exp(2 * x)) / 2)),
    "logsigmoid": (ops.logsigmoid, lambda x: np.log(sigmoid_loop(x))),
    "silu": (ops.silu, lambda x: x * sigmoid_loop(x)),
    "mish": (ops.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    "softsign": (ops.softsign, lambda x: x / (1 + np.abs(x))),
    "elu": (_elu, lambda x: np.where(x > 0, x, 0.7 * (np.exp(x) - 1))),
    "celu": (_celu, lambda x: np.maximum(x, 0) + np.minimum(0, 0.5 * (np.exp(x / 0.5) - 1))),
    "selu": (ops.selu, _selu_formula),
    "gelu": (ops.gelu, gelu_exact),
    "gelu_tanh": (_gelu_tanh, lambda x: 0.5 * x * (1 + np.tanh(
        math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    "fast_gelu": (ops.fast_gelu, lambda x: x / (1 + np.exp(-1.702 * np.abs(x))) *
                  np.exp(0.851 * (x - np.abs(x)))),
    "leaky_relu": (_leaky_relu, lambda x: np.where(x > 0, x, 0.1 * x)),
    "hardtanh": (_hardtanh, lambda x: np.clip(x, -0.5, 0.8)),
    "hardswish": (ops.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "hardsigmoid": (ops.hardsigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "hardshrink": (ops.hardshrink, lambda x: np.where(np.abs(x) > 0.5, x, 0.0)),
    "softshrink": (ops.softshrink, lambda x: np.where(x > 0.5, x - 0.5,
                                                       np.where(x < -0.5, x + 0.5, 0.0))),
    "tanhshrink": (ops.tanhshrink, lambda x: x - np.tanh(x)),
    "threshold": (_threshold, lambda x: np.where(x > 0.2, x, -1.0)),
    "softmax": (_softmax0, lambda x: np.exp(x) / np.exp(x).sum(axis=0, keepdims=True)),
    "log_softmax": (ops.log_softmax, lambda x: log_softmax_loop(x, -1)),
    "softmin": (ops.softmin, lambda x: np.exp(-x) / np.exp(-x).sum(axis=-1, keepdims=True)),
    "prelu": (_prelu, lambda x: np.where(x > 0, x, np.array([0.1, 0.2, 0.3]) * x)),
    "glu": (_glu0, lambda x: x[:2] * sigmoid_loop(x[2:])),
}


def check_sum(fn, *args, order=1):
    """``check`` of ``sum(fn(*args))``."""
    def total(*values):
        return np.sum(fn(*values))

    check(total, *args, order=order)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", [F32, F64])
def test_activation_values_and_gradients(name, dtype):
    fn, oracle = ACTIVATIONS[name]
    x = randn(4, 3, dtype=dtype, scale=2.0)
    x = np.where(np.abs(np.abs(x) - 0.5) < 0.05, x + 0.2, x).astype(dtype)  # off the kinks
    if name == "prelu":
        x = x[:3].copy()  # (N, C) = (3, 3), channels on axis 1
    oracle_x = oracle(np.asarray(x, F64))
    got = fn(Tensor(x))
    assert isinstance(got, Tensor) and got.dtype == dtype
    np.testing.assert_allclose(got, oracle_x, **(dict(rtol=1e-5, atol=1e-6) if dtype == F32
                                                 else dict(rtol=1e-9, atol=1e-12)))
    if dtype == F64:
        check_sum(fn, x)


def test_erf_is_exact_and_differentiable_to_second_order():
    x = np.linspace(-3, 3, 13)
    np.testing.assert_allclose(ops.erf(x), [math.erf(v) for v in x], rtol=1e-15, atol=1e-16)
    np.testing.assert_allclose(ops.erfc(x), [math.erfc(v) for v in x], rtol=1e-14)
    assert ops.erf(Tensor([0.5])).dtype == F32 and isinstance(ops.erf(Tensor([0.5])), Tensor)
    check(lambda v: np.sum(ops.erf(v) * v), x, order=2)
    np.testing.assert_allclose(ms.grad(lambda v: np.sum(ops.erf(v)))(x),
                               2 / math.sqrt(math.pi) * np.exp(-x * x))
    check(ms.nn.GELU(approximate=False), x)


# ===== reductions and comparisons ============================================================


def _sum1(v):
    return ops.sum(v, 1) ** 2


def _mean02(v):
    return ops.mean(v, (0, 2), True) ** 2


def _logsumexp2(v):
    return ops.logsumexp(v, 2)


def _amax1(v):
    return ops.amax(v, 1)


def _max0(v):
    return ops.max(v, 0)[0]


def _prod2(v):
    return ops.prod(v, 2)


def _std1(v):
    return ops.std(v, 1)


def _topk2(v):
    return ops.topk(v, 2)[0]


def _sort0(v):
    return ops.sort(v, 0)[0] * np.arange(3.0)[:, None, None]


def _norm12(v):
    return ops.norm(v, dim=(1, 2))


def _cumprod2(v):
    return ops.cumprod(v, 2)


REDUCTIONS = [_sum1, _mean02, _logsumexp2, _amax1, _max0, _prod2, _std1, _topk2, _sort0, _norm12,
              _cumprod2]


def test_reductions_take_mindspores_arguments():
    a = randn(3, 4, 5)
    t = Tensor(a)
    np.testing.assert_allclose(ops.sum(t, 1, True), a.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(ops.sum(t, dim=(0, 2)), a.sum(axis=(0, 2)))
    np.testing.assert_allclose(ops.mean(t, 2, True), a.mean(axis=2, keepdims=True))
    np.testing.assert_allclose(ops.mean(t, ()), a.mean())
    np.testing.assert_allclose(ops.prod(t, 0), a.prod(axis=0))
    values, index = ops.max(t, 1)
    np.testing.assert_allclose(values, a.max(axis=1))
    np.testing.assert_array_equal(index, a.argmax(axis=1))
    values, index = ops.min(t, 2, keepdims=True)
    np.testing.assert_allclose(values, a.min(axis=2, keepdims=True))
    np.testing.assert_array_equal(ops.argmax(t, 2), a.argmax(axis=2))
    np.testing.assert_allclose(ops.amax(t, (1, 2)), a.max(axis=(1, 2)))
    np.testing.assert_allclose(ops.logsumexp(t, 1), np.log(np.exp(a).sum(axis=1)))
    np.testing.assert_allclose(ops.logsumexp(t, 1, True), np.log(np.exp(a).sum(axis=1,
                                                                           keepdims=True)))
    np.testing.assert_allclose(ops.std(t, 1, 1), a.std(axis=1, ddof=1))
    np.testing.assert_allclose(ops.var(t, (0, 1)), a.var(axis=(0, 1)))
    np.testing.assert_allclose(ops.norm(t, dim=2), np.sqrt((a * a).sum(axis=2)))
    np.testing.assert_allclose(ops.cumsum(t, 1), np.cumsum(a, axis=1))
    values, index = ops.topk(t, 2, 2)
    np.testing.assert_allclose(values, -np.sort(-a, axis=2)[..., :2])
    values, order = ops.sort(t, 1, descending=True)
    np.testing.assert_allclose(values, -np.sort(-a, axis=1))
    values, index = ops.median(Tensor(a[0]), 1)  # 5 values a row: the middle one
    np.testing.assert_allclose(values, np.median(a[0], axis=1))
    np.testing.assert_allclose(a[0][np.arange(4), index], values)
    values, _ = ops.median(Tensor(a[0]), 0)  # 4 values a column: the lower middle one
    np.testing.assert_allclose(values, np.sort(a[0], axis=0)[1])
    for fn in REDUCTIONS:
        check_sum(fn, a)


# ===== shapes and indexing ===================================================================


def _flatten(v):
    return ops.flatten(v) * np.arange(12.0)


def _split(v):
    return ops.split(v, [1, 3], 2)[1] ** 2


def _narrow(v):
    return ops.narrow(v, 1, 1, 2) ** 2


def _pad(v):
    return ops.pad(v, (1, 1, 1, 0)) ** 2


def _gather(v):
    return ops.gather(v, np.array([2, 0, 2]), 2) ** 2


def _unbind(v):
    return ops.unbind(v, 2)[1] ** 3


def _trapz(v):
    return ops.trapz(v * v)


def _masked_fill(v):
    return ops.masked_fill(v, v > 0, 1.0) ** 2


def _kron_squared(u, w):
    return ops.kron(u, w) ** 2


SHAPES = [_flatten, _split, _narrow, _pad, _gather, _unbind, _trapz, _masked_fill]


def test_shape_operators():
    a = randn(2, 3, 4)
    t = Tensor(a)
    np.testing.assert_allclose(ops.flatten(t), a.reshape(2, 12))
    np.testing.assert_allclose(ops.flatten(t, start_dim=0, end_dim=1), a.reshape(6, 4))
    parts = ops.split(t, 3, axis=2)
    assert [p.shape for p in parts] == [(2, 3, 3), (2, 3, 1)]  # parts of 3: MindSpore's split
    parts = ops.split(t, [1, 3], axis=2)
    assert [p.shape for p in parts] == [(2, 3, 1), (2, 3, 3)]
    assert [p.shape[1] for p in ops.chunk(t, 2, 1)] == [2, 1]
    np.testing.assert_allclose(ops.unbind(t, 1)[2], a[:, 2])
    np.testing.assert_allclose(ops.narrow(t, 2, 1, 2), a[:, :, 1:3])
    np.testing.assert_allclose(ops.pad(t, (1, 2, 0, 1)),
                               np.pad(a, ((0, 0), (0, 1), (1, 2))))  # last axis first
    np.testing.assert_allclose(ops.pad(t, (1, 1), mode="replicate"),
                               np.pad(a, ((0, 0), (0, 0), (1, 1)), mode="edge"))
    np.testing.assert_allclose(ops.concat((t, t), 1), np.concatenate((a, a), 1))
    np.testing.assert_allclose(ops.stack([t, t], -1), np.stack([a, a], -1))
    np.testing.assert_allclose(ops.permute(t, (2, 0, 1)), a.transpose(2, 0, 1))
    np.testing.assert_allclose(ops.gather(t, np.array([2, 0]), 1), a[:, [2, 0]])
    index = RNG.integers(0, 4, (2, 3, 2))
    np.testing.assert_allclose(ops.gather_elements(t, 2, index),
                               np.take_along_axis(a, index, axis=2))
    np.testing.assert_allclose(ops.masked_fill(t, a > 0, 0.5), np.where(a > 0, 0.5, a))
    np.testing.assert_array_equal(ops.one_hot(np.array([0, 2]), 3, 1.0, 0.0),
                                  [[1, 0, 0], [0, 0, 1]])
    np.testing.assert_array_equal(ops.one_hot(np.array([0, 2]), 3, 1.0, 0.0, axis=0),
                                  [[1, 0], [0, 0], [0, 1]])
    m, n = randn(2, 2), randn(3, 2)
    np.testing.assert_allclose(ops.kron(m, n), np.kron(m, n))
    np.testing.assert_allclose(ops.block_diag(m, n),
                               np.block([[m, np.zeros((2, 2))], [np.zeros((3, 2)), n]]))
    trapezoid = np.trapezoid if hasattr(np, "trapezoid") else np.trapz  # NumPy < 2.0
    np.testing.assert_allclose(ops.trapz(Tensor(a), dx=0.5), trapezoid(a, dx=0.5))
    s, u, v = ops.svd(m)
    np.testing.assert_allclose(u @ np.diag(s) @ v.T, m)
    with_nan = np.array([np.nan, np.inf, -np.inf, 1.0])
    np.testing.assert_array_equal(ops.nan_to_num(with_nan), np.nan_to_num(with_nan))
    clipped = ops.clip_by_global_norm((np.array([3.0]), np.array([4.0])), 1.0)
    np.testing.assert_allclose(clipped, ([0.6], [0.8]))
    for fn in SHAPES:
        check_sum(fn, a)
    check_sum(_kron_squared, m, n)


# ===== constructors ==========================================================================


def test_constructors_give_mindspores_dtypes():
    for t, shape, dtype in [(ops.ones(5), (5,), F32), (ops.zeros((2, 3)), (2, 3), F32),
                            (ops.ones((2,), ms.float64), (2,), F64),
                            (ops.fill(ms.int32, (2, 2), 3), (2, 2), np.int32),
                            (ops.full((2,), 1.5), (2,), F32), (ops.full((2,), 2), (2,), np.int64),
                            (ops.eye(3), (3, 3), F32), (ops.arange(4), (4,), np.int64),
                            (ops.arange(0.0, 1.0, 0.25), (4,), F32),
                            (ops.linspace(0.0, 1.0, 5), (5,), F32),
                            (ops.randn(2, 3), (2, 3), F32), (ops.rand((4,)), (4,), F32),
                            (ops.randint(0, 5, (3,)), (3,), np.int64)]:
        assert isinstance(t, Tensor) and t.shape == shape and t.dtype == dtype, (t, dtype)
    like = ops.ones_like(Tensor(np.zeros(3, F64)))
    assert isinstance(like, Tensor) and like.dtype == F64 and np.all(like == 1)
    assert ops.zeros_like(np.ones(2, F32)).__class__ is np.ndarray  # an array's type kept
    np.testing.assert_array_equal(ops.arange(1, 7, 2), [1, 3, 5])
    assert np.array_equal(ops.randn(3, seed=4), ops.randn(3, seed=4))
    ms.set_seed(5)
    first = ops.uniform((3,), 0.0, 1.0)
    ms.set_seed(5)
    assert np.array_equal(first, ops.uniform((3,), 0.0, 1.0))


def test_constructors_are_constants_for_the_gradient():
    def f(x):
        return ops.sum(ops.ones_like(x) * x * x + ops.full(x.shape, 2.0) * x)

    x = np.array([1.0, -2.0])
    np.testing.assert_allclose(ms.grad(f)(x), 2 * x + 2)
    check(f, x)


# ===== primitive classes =====================================================================


UNARY = {"Abs": np.abs, "Neg": np.negative, "Sin": np.sin, "Cos": np.cos, "Tan": np.tan,
         "Sinh": np.sinh, "Cosh": np.cosh, "Tanh": np.tanh, "Asin": np.arcsin,
         "ACos": np.arccos, "Atan": np.arctan, "Asinh": np.arcsinh, "Atanh": np.arctanh,
         "Exp": np.exp, "Expm1": np.expm1, "Log": np.log, "Log1p": np.log1p, "Sqrt": np.sqrt,
         "Rsqrt": lambda v: 1 / np.sqrt(v), "Square": np.square, "Reciprocal": np.reciprocal,
         "Erf": np.vectorize(math.erf), "Sigmoid": sigmoid_loop,
         "ReLU": lambda v: np.maximum(v, 0), "Softplus": lambda v: np.log1p(np.exp(v)),
         "Softsign": lambda v: v / (1 + np.abs(v)), "SeLU": ACTIVATIONS["selu"][1],
         "Mish": ACTIVATIONS["mish"][1], "HSwish": ACTIVATIONS["hardswish"][1]}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_primitives(name):
    x = RNG.uniform(0.1, 0.9, (2, 3))  # in every domain
    op = getattr(ops, name)()
    np.testing.assert_allclose(op(x), UNARY[name](x), rtol=1e-12)
    assert isinstance(op(Tensor(x)), Tensor)
    check(lambda v: np.sum(op(v)), x)


class _Primitives(ms.nn.Cell):
    """The primitives of MindSpore's tutorials, in one network."""

    def __init__(self):
        super().__init__()
        self.sin, self.cos, self.exp = ops.Sin(), ops.Cos(), ops.Exp()
        self.mul, self.pow = ops.Mul(), ops.Pow()
        self.transpose, self.reshape = ops.Transpose(), ops.Reshape()
        self.expand, self.squeeze = ops.ExpandDims(), ops.Squeeze(0)
        self.concat, self.softmax = ops.Concat(1), ops.Softmax()
        self.reduce_sum, self.reduce_mean = ops.ReduceSum(), ops.ReduceMean(keep_dims=True)
        self.reduce_max, self.matmul = ops.ReduceMax(), ops.BatchMatMul(transpose_b=True)

    def construct(self, x, y):
        a = self.mul(self.sin(x), self.cos(y))
        b = self.reshape(self.transpose(a, (1, 0)), (2, 3))
        c = self.squeeze(self.expand(b, 0))
        d = self.concat((c, self.exp(c) * 0.1))
        e = self.softmax(d) + self.pow(d, 2.0) + self.matmul(d, d)[:, :1]
        return self.reduce_sum(e, 1) + self.reduce_mean(e) + self.reduce_max(e)


def test_primitives_differentiate_in_both_directions_and_read_well():
    x, y = randn(2, 3), randn(2, 3)
    net = _Primitives()
    check(net, x, y)
    code = ms.source(ms.grad(net, (0, 1)), x, y)
    assert "Sin_forward" in code and "Transpose_forward" in code and "__call__" not in code
