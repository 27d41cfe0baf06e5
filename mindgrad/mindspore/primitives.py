"""MindSpore's primitive classes (``ops.Sin()``, ``ops.ReduceMax(keep_dims)``,
``ops.Transpose()``, ...): an instance is configured once and called on arrays. Each ``__call__``
is a line of NumPy (or a functional operator), which mindgrad differentiates from source in both
directions; the generated code names it after its class (``Sin_forward``).
"""

from __future__ import annotations

import numpy as np

from mindgrad.compiler import objects
from mindgrad.mindspore import functional as F
from mindgrad.mindspore import nn_functional as NF
from mindgrad.mindspore.tensor import Tensor
from mindgrad.rules import nondifferentiable


class Primitive:
    """The base of the primitive classes; ``add_prim_attr`` and the device and parallel
    settings are accepted for MindSpore programs."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        call = cls.__dict__.get("__call__")
        if call is not None:  # generated code names a callee by its function's name
            call.__name__ = cls.__name__

    def __init__(self, name=None):
        self.name = name or type(self).__name__

    def add_prim_attr(self, name, value):
        setattr(self, name, value)
        return self

    def set_device(self, device_target):
        return self

    def shard(self, in_strategy=None, out_strategy=None):
        return self

    def recompute(self, mode=True):
        return self

    def __repr__(self):
        return f"Prim[{type(self).__name__}]"


# ----- elementwise ---------------------------------------------------------------------------


class Abs(Primitive):
    def __call__(self, x):
        return np.abs(x)


class Neg(Primitive):
    def __call__(self, x):
        return np.negative(x)


class Sin(Primitive):
    def __call__(self, x):
        return np.sin(x)


class Cos(Primitive):
    def __call__(self, x):
        return np.cos(x)


class Tan(Primitive):
    def __call__(self, x):
        return np.tan(x)


class Sinh(Primitive):
    def __call__(self, x):
        return np.sinh(x)


class Cosh(Primitive):
    def __call__(self, x):
        return np.cosh(x)


class Tanh(Primitive):
    def __call__(self, x):
        return np.tanh(x)


class Asin(Primitive):
    def __call__(self, x):
        return np.arcsin(x)


class ACos(Primitive):
    def __call__(self, x):
        return np.arccos(x)


class Atan(Primitive):
    def __call__(self, x):
        return np.arctan(x)


class Asinh(Primitive):
    def __call__(self, x):
        return np.arcsinh(x)


class Acosh(Primitive):
    def __call__(self, x):
        return np.arccosh(x)


class Atanh(Primitive):
    def __call__(self, x):
        return np.arctanh(x)


class Exp(Primitive):
    def __call__(self, x):
        return np.exp(x)


class Expm1(Primitive):
    def __call__(self, x):
        return np.expm1(x)


class Log(Primitive):
    def __call__(self, x):
        return np.log(x)


class Log1p(Primitive):
    def __call__(self, x):
        return np.log1p(x)


class Sqrt(Primitive):
    def __call__(self, x):
        return np.sqrt(x)


class Rsqrt(Primitive):
    def __call__(self, x):
        return F.rsqrt(x)


class Square(Primitive):
    def __call__(self, x):
        return np.square(x)


class Reciprocal(Primitive):
    def __call__(self, x):
        return np.reciprocal(x)


class Sign(Primitive):
    def __call__(self, x):
        return np.sign(x)


class Floor(Primitive):
    def __call__(self, x):
        return np.floor(x)


class Ceil(Primitive):
    def __call__(self, x):
        return np.ceil(x)


class Round(Primitive):
    def __call__(self, x):
        return np.round(x)


class Erf(Primitive):
    def __call__(self, x):
        return F.erf(x)


class Erfc(Primitive):
    def __call__(self, x):
        return F.erfc(x)


class Sigmoid(Primitive):
    def __call__(self, x):
        return NF.sigmoid(x)


class ReLU(Primitive):
    def __call__(self, x):
        return NF.relu(x)


class ReLU6(Primitive):
    def __call__(self, x):
        return NF.relu6(x)


class Softplus(Primitive):
    def __call__(self, x):
        return NF.softplus(x)


class Softsign(Primitive):
    def __call__(self, x):
        return NF.softsign(x)


class HSwish(Primitive):
    def __call__(self, x):
        return NF.hardswish(x)


class HSigmoid(Primitive):
    def __call__(self, x):
        return NF.hardsigmoid(x)


class Mish(Primitive):
    def __call__(self, x):
        return NF.mish(x)


class SeLU(Primitive):
    def __call__(self, x):
        return NF.selu(x)


class FastGeLU(Primitive):
    def __call__(self, x):
        return NF.fast_gelu(x)


class LogicalNot(Primitive):
    def __call__(self, x):
        return np.logical_not(x)


class IsNan(Primitive):
    def __call__(self, x):
        return np.isnan(x)


class IsInf(Primitive):
    def __call__(self, x):
        return np.isinf(x)


class IsFinite(Primitive):
    def __call__(self, x):
        return np.isfinite(x)


class ZerosLike(Primitive):
    def __call__(self, x):
        return np.zeros_like(x)


class OnesLike(Primitive):
    def __call__(self, x):
        return np.ones_like(x)


class Div(Primitive):
    def __call__(self, x, y):
        return np.true_divide(x, y)


class RealDiv(Primitive):
    def __call__(self, x, y):
        return np.true_divide(x, y)


class FloorDiv(Primitive):
    def __call__(self, x, y):
        return np.floor_divide(x, y)


class FloorMod(Primitive):
    def __call__(self, x, y):
        return np.remainder(x, y)


class Mod(Primitive):
    def __call__(self, x, y):
        return F.fmod(x, y)


class Pow(Primitive):
    def __call__(self, x, y):
        return np.power(x, y)


class Maximum(Primitive):
    def __call__(self, x, y):
        return np.maximum(x, y)


class Minimum(Primitive):
    def __call__(self, x, y):
        return np.minimum(x, y)


class Atan2(Primitive):
    def __call__(self, x, y):
        return np.arctan2(x, y)


class Xdivy(Primitive):
    def __call__(self, x, y):
        return F.xdivy(x, y)


class Xlogy(Primitive):
    def __call__(self, x, y):
        return F.xlogy(x, y)


class Equal(Primitive):
    def __call__(self, x, y):
        return np.equal(x, y)


class NotEqual(Primitive):
    def __call__(self, x, y):
        return np.not_equal(x, y)


class Greater(Primitive):
    def __call__(self, x, y):
        return np.greater(x, y)


class GreaterEqual(Primitive):
    def __call__(self, x, y):
        return np.greater_equal(x, y)


class Less(Primitive):
    def __call__(self, x, y):
        return np.less(x, y)


class LessEqual(Primitive):
    def __call__(self, x, y):
        return np.less_equal(x, y)


class LogicalAnd(Primitive):
    def __call__(self, x, y):
        return np.logical_and(x, y)


class LogicalOr(Primitive):
    def __call__(self, x, y):
        return np.logical_or(x, y)


class SquaredDifference(Primitive):
    def __call__(self, x, y):
        return (x - y) * (x - y)


class DivNoNan(Primitive):
    """``x / y``, 0 where ``y`` is 0."""

    def __call__(self, x, y):
        return np.where(y == 0, 0.0, x / np.where(y == 0, 1.0, y))


class Elu(Primitive):
    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = alpha

    def __call__(self, input_x):
        return NF.elu(input_x, self.alpha)


class GeLU(Primitive):
    """The tanh approximation, as MindSpore's ``GeLU`` primitive computes it."""

    def __call__(self, x):
        return NF.gelu(x, "tanh")


class LeakyReLU(Primitive):
    def __init__(self, alpha=0.2):
        super().__init__()
        self.alpha = alpha

    def __call__(self, x):
        return NF.leaky_relu(x, self.alpha)


class Softmax(Primitive):
    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def __call__(self, logits):
        return NF.softmax(logits, self.axis)


class LogSoftmax(Softmax):
    def __call__(self, logits):
        return NF.log_softmax(logits, self.axis)


class AddN(Primitive):
    def __call__(self, x):
        return F.addn(x)


class BiasAdd(Primitive):
    def __init__(self, data_format="NCHW"):
        super().__init__()
        self.data_format = data_format

    def __call__(self, input_x, bias):
        return NF.bias_add(input_x, bias)


class BatchMatMul(Primitive):
    def __init__(self, transpose_a=False, transpose_b=False):
        super().__init__()
        self.transpose_a, self.transpose_b = transpose_a, transpose_b

    def __call__(self, x, y):
        if self.transpose_a:
            x = np.swapaxes(x, -1, -2)
        if self.transpose_b:
            y = np.swapaxes(y, -1, -2)
        return np.matmul(x, y)


# ----- reductions ----------------------------------------------------------------------------


class _Reduce(Primitive):
    def __init__(self, keep_dims=False):
        super().__init__()
        self.keep_dims = keep_dims


class ReduceMax(_Reduce):
    def __call__(self, x, axis=()):
        return np.max(x, axis=F._axis(axis), keepdims=self.keep_dims)


class ReduceMin(_Reduce):
    def __call__(self, x, axis=()):
        return np.min(x, axis=F._axis(axis), keepdims=self.keep_dims)


class ReduceProd(_Reduce):
    def __call__(self, x, axis=()):
        return np.prod(x, axis=F._axis(axis), keepdims=self.keep_dims)


class ReduceAll(_Reduce):
    def __call__(self, x, axis=()):
        return np.all(x, axis=F._axis(axis), keepdims=self.keep_dims)


class ReduceAny(_Reduce):
    def __call__(self, x, axis=()):
        return np.any(x, axis=F._axis(axis), keepdims=self.keep_dims)


class Argmax(Primitive):
    def __init__(self, axis=-1, output_type=np.int32):
        super().__init__()
        self.axis, self.output_type = axis, output_type

    def __call__(self, input_x):
        return np.argmax(input_x, axis=self.axis).astype(self.output_type)


class Argmin(Argmax):
    def __call__(self, input_x):
        return np.argmin(input_x, axis=self.axis).astype(self.output_type)


class ArgMaxWithValue(Primitive):
    """``(index, value)`` of the maximum along ``axis``."""

    def __init__(self, axis=0, keep_dims=False):
        super().__init__()
        self.axis, self.keep_dims = axis, keep_dims

    def __call__(self, input_x):
        value = np.max(input_x, axis=self.axis, keepdims=self.keep_dims)
        return F.argmax(input_x, self.axis, self.keep_dims), value


class ArgMinWithValue(ArgMaxWithValue):
    def __call__(self, input_x):
        value = np.min(input_x, axis=self.axis, keepdims=self.keep_dims)
        return F.argmin(input_x, self.axis, self.keep_dims), value


class CumSum(Primitive):
    def __init__(self, exclusive=False, reverse=False):
        super().__init__()
        self.exclusive, self.reverse = exclusive, reverse

    def __call__(self, input, axis):
        x = np.flip(input, axis) if self.reverse else input
        total = np.cumsum(x, axis=axis)
        if self.exclusive:
            total = total - x
        return np.flip(total, axis) if self.reverse else total


class CumProd(CumSum):
    def __call__(self, x, axis):
        y = np.flip(x, axis) if self.reverse else x
        total = np.cumprod(y, axis=axis)
        if self.exclusive:
            total = total / y
        return np.flip(total, axis) if self.reverse else total


# ----- shapes and indexing --------------------------------------------------------------------


class Reshape(Primitive):
    def __call__(self, input_x, input_shape):
        return np.reshape(input_x, input_shape)


class Transpose(Primitive):
    def __call__(self, input_x, input_perm):
        return np.transpose(input_x, input_perm)


class ExpandDims(Primitive):
    def __call__(self, input_x, axis):
        return np.expand_dims(input_x, axis)


class Squeeze(Primitive):
    def __init__(self, axis=()):
        super().__init__()
        self.axis = axis

    def __call__(self, input_x):
        return np.squeeze(input_x, axis=F._axis(self.axis))


class Flatten(Primitive):
    """``(N, ...)`` to ``(N, -1)``."""

    def __call__(self, input_x):
        return np.reshape(input_x, (np.shape(input_x)[0], -1))


class Concat(Primitive):
    def __init__(self, axis=0):
        super().__init__()
        self.axis = axis

    def __call__(self, input_x):
        return np.concatenate(input_x, axis=self.axis)


class Stack(Concat):
    def __call__(self, input_x):
        return np.stack(input_x, axis=self.axis)


class Unstack(Concat):
    def __call__(self, input_x):
        return F.unbind(input_x, self.axis)


class Split(Primitive):
    """``output_num`` equal parts along ``axis``, as a tuple."""

    def __init__(self, axis=0, output_num=1):
        super().__init__()
        self.axis, self.output_num = axis, output_num

    def __call__(self, x):
        return tuple(np.split(x, self.output_num, axis=self.axis))


class Tile(Primitive):
    def __call__(self, input_x, multiples):
        return np.tile(input_x, multiples)


class BroadcastTo(Primitive):
    def __init__(self, shape):
        super().__init__()
        self.shape = shape

    def __call__(self, input_x):
        return np.broadcast_to(input_x, self.shape)


class Gather(Primitive):
    def __call__(self, input_params, input_indices, axis, batch_dims=0):
        return F.gather(input_params, input_indices, axis, batch_dims)


class GatherD(Primitive):
    def __call__(self, x, dim, index):
        return np.take_along_axis(x, index, axis=dim)


class Select(Primitive):
    def __call__(self, cond, x, y):
        return np.where(cond, x, y)


class Slice(Primitive):
    """``x[begin[0]:begin[0] + size[0], ...]``; a size of -1 runs to the end."""

    def __call__(self, input_x, begin, size):
        index = tuple(slice(b, None if s == -1 else b + s) for b, s in zip(begin, size))
        return input_x[index]


class OneHot(Primitive):
    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def __call__(self, indices, depth, on_value, off_value):
        return F.one_hot(indices, depth, on_value, off_value, self.axis)


class Cast(Primitive):
    def __call__(self, input_x, type_):
        return np.asanyarray(input_x).astype(type_)


class Shape(Primitive):
    def __call__(self, input_x):
        return np.shape(input_x)


class Rank(Primitive):
    def __call__(self, input_x):
        return np.ndim(input_x)


class Size(Primitive):
    def __call__(self, input_x):
        return np.size(input_x)


class DType(Primitive):
    def __call__(self, input_x):
        return np.asarray(input_x).dtype


class Fill(Primitive):
    def __call__(self, type, shape, value):
        return Tensor(np.full(shape, value, type))


class Ones(Primitive):
    def __call__(self, shape, type):
        return Tensor(np.ones(shape, type))


class Zeros(Primitive):
    def __call__(self, shape, type):
        return Tensor(np.zeros(shape, type))


class Eye(Primitive):
    def __call__(self, n, m, t):
        return Tensor(np.eye(n, m, dtype=t))


# ----- losses and training ------------------------------------------------------------------


class SoftmaxCrossEntropyWithLogits(Primitive):
    """``(loss, dlogits)``: per sample ``-sum(labels * log_softmax(logits))``, and its gradient
    ``softmax(logits) - labels`` (MindSpore's primitive returns both)."""

    def __call__(self, logits, labels):
        loss = NF.softmax_cross_entropy_with_logits(logits, labels)
        return loss, NF.softmax(logits, -1) - labels


class SparseSoftmaxCrossEntropyWithLogits(Primitive):
    """The mean over the batch of ``-log_softmax(logits)[label]``."""

    def __init__(self, is_grad=False):
        super().__init__()
        if is_grad:
            raise NotImplementedError("SparseSoftmaxCrossEntropyWithLogits(is_grad=True) gives "
                                      "a gradient; use mindgrad.grad of the loss")

    def __call__(self, logits, labels):
        return np.mean(NF.softmax_cross_entropy_with_logits(logits, labels, True))


class SigmoidCrossEntropyWithLogits(Primitive):
    def __call__(self, logits, label):
        return NF.binary_cross_entropy_with_logits(logits, label, reduction="none")


class BinaryCrossEntropy(Primitive):
    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def __call__(self, logits, labels, weight=None):
        return NF.binary_cross_entropy(logits, labels, weight, self.reduction)


class L2Loss(Primitive):
    """``sum(x ** 2) / 2``."""

    def __call__(self, input_x):
        return np.sum(input_x * input_x) / 2.0


class Dropout(Primitive):
    """``(output, mask)``: elements kept with probability ``keep_prob`` and scaled by its
    inverse."""

    def __init__(self, keep_prob=0.5, Seed0=0, Seed1=0):
        super().__init__()
        self.keep_prob = keep_prob

    def __call__(self, x):
        mask = NF.dropout_mask(np.shape(x), self.keep_prob)
        return x * mask / self.keep_prob, mask


class Depend(Primitive):
    def __call__(self, value, expr):
        return value


class Identity(Primitive):
    def __call__(self, x):
        return x


class Real(Primitive):
    def __call__(self, input):
        return np.real(input)


class Imag(Primitive):
    def __call__(self, input):
        return np.imag(input)


class Conj(Primitive):
    def __call__(self, input):
        return np.conj(input)


class BatchNorm(Primitive):
    """``BatchNorm(is_training=False, epsilon=1e-5, momentum=0.1, data_format="NCHW")(x,
    scale, bias, mean, variance)``: ``(y, batch_mean, batch_variance, reserve_1, reserve_2)``,
    normalizing over every axis but the channels (axis 1; the last for ``"NHWC"``).

    Training normalizes by the batch's mean and (biased) variance and updates the Parameters
    ``mean`` and ``variance`` in place: ``new = (1 - momentum) * old + momentum * batch``
    (the variance's update uses the unbiased batch variance); inference uses ``mean`` and
    ``variance``."""

    def __init__(self, is_training=False, epsilon=1e-5, momentum=0.1, data_format="NCHW"):
        super().__init__()
        if data_format not in ("NCHW", "NHWC", "NCDHW"):
            raise ValueError(f"BatchNorm: data_format must be 'NCHW', 'NHWC' or 'NCDHW', got "
                             f"{data_format!r}")
        self.is_training = is_training
        self.epsilon = epsilon
        self.momentum = momentum
        self.data_format = data_format

    def __call__(self, input_x, scale, bias, mean, variance):
        channel = np.ndim(input_x) - 1 if self.data_format == "NHWC" else 1
        axes = tuple(a for a in range(np.ndim(input_x)) if a != channel)
        shape = [1] * np.ndim(input_x)
        shape[channel] = -1
        if self.is_training:
            batch_mean = np.mean(input_x, axis=axes)
            batch_var = np.var(input_x, axis=axes)
            count = np.size(input_x) // np.shape(input_x)[channel]
            _update_moving(mean, variance, batch_mean, batch_var * count / max(count - 1, 1),
                           self.momentum)
        else:
            batch_mean, batch_var = mean, variance
        normed = (input_x - np.reshape(batch_mean, shape)) / \
            np.sqrt(np.reshape(batch_var, shape) + self.epsilon)
        y = normed * np.reshape(scale, shape) + np.reshape(bias, shape)
        return y, batch_mean, batch_var, batch_mean, batch_var


def _update_moving(mean, variance, batch_mean, batch_var, momentum):
    """The moving statistics of a training BatchNorm, updated in place where they are
    arrays (Parameters)."""
    if isinstance(mean, np.ndarray):
        mean[...] = (1.0 - momentum) * mean + momentum * batch_mean
    if isinstance(variance, np.ndarray):
        variance[...] = (1.0 - momentum) * variance + momentum * batch_var


nondifferentiable(_update_moving)
# made by constant arguments, then called: P.MatMul()(x, y) in code being differentiated is
# made once, when that code is built
objects.register(primitive=Primitive)

__all__ = sorted(name for name, value in list(globals().items())
                 if isinstance(value, type) and issubclass(value, Primitive) and
                 not name.startswith("_"))
