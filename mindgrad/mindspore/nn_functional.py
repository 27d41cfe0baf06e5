"""MindSpore's functional activations and losses (``ops.relu``, ``ops.gelu``,
``ops.cross_entropy``, ``ops.binary_cross_entropy_with_logits``, ...) on NumPy: a few lines of
NumPy each, which mindgrad differentiates from source in both directions. The Cells of ``nn``
(``ReLU``, ``CrossEntropyLoss``, ...) call them.

Argument names and defaults are MindSpore 2.x's; where mindgrad differs, the docstring says so.
"""

from __future__ import annotations

import numpy as np

from mindgrad.mindspore.functional import cosine_similarity, erf, xlogy
from mindgrad.rules import nondifferentiable

# ----- activations ---------------------------------------------------------------------------


def relu(input):
    return np.maximum(input, 0.0)


def relu6(x):
    return np.minimum(np.maximum(x, 0.0), 6.0)


def sigmoid(input):
    return 1.0 / (1.0 + np.exp(-input))


def softplus(input, beta=1, threshold=20):
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``."""
    scaled = input * beta
    return np.where(scaled > threshold, input, np.logaddexp(0.0, scaled) / beta)


def logsigmoid(x):
    return -np.logaddexp(0.0, -x)


def silu(input):
    return input * sigmoid(input)


def mish(x):
    return x * np.tanh(np.logaddexp(0.0, x))


def softsign(x):
    return x / (1.0 + np.abs(x))


def elu(input_x, alpha=1.0):
    return np.where(input_x > 0, input_x, alpha * np.expm1(np.minimum(input_x, 0.0)))


def celu(x, alpha=1.0):
    return np.maximum(x, 0.0) + alpha * np.expm1(np.minimum(x, 0.0) / alpha)


def selu(input_x):
    return 1.0507009873554805 * np.where(
        input_x > 0, input_x, 1.6732632423543772 * np.expm1(np.minimum(input_x, 0.0)))


def gelu(input_x, approximate="none"):
    """``x * Phi(x)``: exactly (with erf) for ``approximate="none"``, by the tanh formula for
    ``"tanh"``."""
    if approximate == "tanh":
        inner = 0.7978845608028654 * (input_x + 0.044715 * input_x * input_x * input_x)
        return 0.5 * input_x * (1.0 + np.tanh(inner))
    if approximate != "none":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return 0.5 * input_x * (1.0 + erf(input_x * 0.7071067811865476))


def fast_gelu(x):
    return x / (1.0 + np.exp(-1.702 * np.abs(x))) * np.exp(0.851 * (x - np.abs(x)))


def leaky_relu(input, alpha=0.2):
    return np.where(input > 0, input, alpha * input)


def prelu(x, weight):
    """``max(x, 0) + weight * min(x, 0)``, ``weight`` one value or one per channel (axis 1)."""
    if np.ndim(x) >= 2 and np.size(weight) > 1:
        weight = np.reshape(weight, (-1,) + (1,) * (np.ndim(x) - 2))
    return np.maximum(x, 0.0) + weight * np.minimum(x, 0.0)


def hardtanh(input, min_val=-1.0, max_val=1.0):
    return np.clip(input, min_val, max_val)


def hardswish(x):
    return x * relu6(x + 3.0) / 6.0


def hardsigmoid(input):
    return relu6(input + 3.0) / 6.0


def hardshrink(input, lambd=0.5):
    return np.where(np.abs(input) > lambd, input, 0.0 * input)


def softshrink(input, lambd=0.5):
    inner = np.where(input < -lambd, input + lambd, 0.0 * input)
    return np.where(input > lambd, input - lambd, inner)


soft_shrink = softshrink


def tanhshrink(input):
    return input - np.tanh(input)


def threshold(input, thr, value):
    return np.where(input > thr, input, value)


def softmax(input, axis=-1, *, dtype=None):
    if dtype is not None:
        input = input.astype(dtype)
    e = np.exp(input - np.max(input, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def softmin(x, axis=-1, *, dtype=None):
    return softmax(-x, axis, dtype=dtype)


def log_softmax(logits, axis=-1):
    shifted = logits - np.max(logits, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def glu(x, axis=-1):
    """The first half of ``x`` along ``axis`` times the sigmoid of the second."""
    a, b = np.split(x, 2, axis=axis)
    return a * sigmoid(b)


def dropout(input, p=0.5, training=True, seed=None):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` (only
    when ``training``). The mask is drawn from NumPy's global generator, or from
    ``np.random.default_rng(seed)``: it is a constant for the gradient."""
    if not training or p == 0:
        return input
    if p == 1:
        return input * 0.0
    keep = dropout_mask(np.shape(input), 1.0 - p, seed)
    return input * keep / (1.0 - p)


def dropout_mask(shape, keep_prob, seed=None):
    """A 0/1 mask of ``shape``, each element 1 with probability ``keep_prob``."""
    draw = np.random.random(shape) if seed is None else \
        np.random.default_rng(seed).random(shape)
    return (draw < keep_prob).astype(np.float32)


nondifferentiable(dropout_mask)


def bias_add(input_x, bias):
    """``input_x + bias``, the bias on axis 1 (channels first)."""
    return input_x + np.reshape(bias, (-1,) + (1,) * (np.ndim(input_x) - 2))


def dense(input, weight, bias=None):
    """``input @ weight.T + bias``."""
    out = np.matmul(input, np.swapaxes(weight, -1, -2))
    if bias is None:
        return out
    return out + bias


# ----- losses ---------------------------------------------------------------------------------


def reduce_loss(loss, reduction):
    """``loss`` reduced as MindSpore's ``reduction`` says: ``"mean"``, ``"sum"`` or ``"none"``."""
    if reduction == "mean":
        return np.mean(loss)
    if reduction == "sum":
        return np.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def mse_loss(input, target, reduction="mean"):
    diff = input - target
    return reduce_loss(diff * diff, reduction)


def l1_loss(input, target, reduction="mean"):
    return reduce_loss(np.abs(input - target), reduction)


def smooth_l1_loss(input, target, beta=1.0, reduction="none"):
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (MindSpore's default
    reduction here is ``"none"``)."""
    d = np.abs(input - target)
    return reduce_loss(np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0):
    d = np.abs(input - target)
    return reduce_loss(np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def soft_margin_loss(input, target, reduction="mean"):
    return reduce_loss(np.logaddexp(0.0, -target * input), reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction="mean"):
    return reduce_loss(np.maximum(-target * (input1 - input2) + margin, 0.0), reduction)


def hinge_embedding_loss(inputs, targets, margin=1.0, reduction="mean"):
    return reduce_loss(np.where(targets == 1, inputs, np.maximum(margin - inputs, 0.0)), reduction)


def kl_div(logits, labels, reduction="mean", log_target=False):
    """``labels * (log(labels) - logits)`` (``logits`` are log-probabilities); ``"batchmean"``
    divides the sum by the batch size."""
    if log_target:
        pointwise = np.exp(labels) * (labels - logits)
    else:
        pointwise = xlogy(labels, labels) - labels * logits
    if reduction == "batchmean":
        return np.sum(pointwise) / np.shape(logits)[0]
    return reduce_loss(pointwise, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                     reduction="mean"):
    """``-w [p y log(sigmoid(x)) + (1 - y) log(1 - sigmoid(x))]``, from the logits without
    overflow: ``log(sigmoid(x)) = -softplus(-x)``, ``log(1 - sigmoid(x)) = -softplus(x)``."""
    log_p = -np.logaddexp(0.0, -input)
    log_not_p = -np.logaddexp(0.0, input)
    if pos_weight is None:
        loss = -(target * log_p + (1.0 - target) * log_not_p)
    else:
        loss = -(pos_weight * target * log_p + (1.0 - target) * log_not_p)
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, reduction)


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """``-w [y log(x) + (1 - y) log(1 - x)]`` for probabilities ``x``; each log is clipped at
    -100, as PyTorch does, so that ``x`` of 0 or 1 gives a finite loss."""
    log_p = np.maximum(np.log(input), -100.0)
    log_not_p = np.maximum(np.log(1.0 - input), -100.0)
    loss = -(target * log_p + (1.0 - target) * log_not_p)
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, reduction)


def _class_axis(input):
    return 1 if np.ndim(input) > 1 else 0


def _nll(log_probs, target, weight, ignore_index, reduction, label_smoothing):
    """The negative log-likelihood of class indices ``target`` under ``log_probs`` (classes on
    axis 1), with PyTorch's and MindSpore's weighting, ``ignore_index`` and label smoothing."""
    axis = _class_axis(log_probs)
    classes = np.shape(log_probs)[axis]
    kept = target != ignore_index
    safe = np.where(kept, target, 0)
    picked = np.squeeze(np.take_along_axis(log_probs, np.expand_dims(safe, axis), axis=axis),
                        axis=axis)
    if weight is None:
        w = kept.astype(log_probs.dtype)
        smooth = -np.sum(log_probs, axis=axis) * w
    else:
        w = np.take(weight, safe) * kept
        class_weight = np.reshape(weight, (-1,) + (1,) * (np.ndim(log_probs) - axis - 1))
        smooth = -np.sum(log_probs * class_weight, axis=axis) * kept
    loss = -picked * w
    if label_smoothing > 0.0:
        loss = (1.0 - label_smoothing) * loss + (label_smoothing / classes) * smooth
    if reduction == "mean":
        return np.sum(loss) / np.sum(w)
    return reduce_loss(loss, reduction)


def nll_loss(inputs, target, weight=None, ignore_index=-100, reduction="mean",
             label_smoothing=0.0):
    """The negative log-likelihood loss of log-probabilities ``inputs`` (classes on axis 1) at
    class indices ``target``; ``"mean"`` divides by the total weight of the targets kept."""
    return _nll(inputs, target, weight, ignore_index, reduction, label_smoothing)


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    """The cross entropy of logits ``input`` (classes on axis 1, or axis 0 for one sample)
    against class indices (an integer ``target``) or class probabilities (a float ``target`` of
    the shape of ``input``), as MindSpore (and PyTorch) define it."""
    axis = _class_axis(input)
    log_probs = log_softmax(input, axis)
    if np.issubdtype(np.asarray(target).dtype, np.integer):
        return _nll(log_probs, target, weight, ignore_index, reduction, label_smoothing)
    classes = np.shape(input)[axis]
    if label_smoothing > 0.0:
        target = target * (1.0 - label_smoothing) + label_smoothing / classes
    if weight is not None:
        log_probs = log_probs * np.reshape(weight, (-1,) + (1,) * (np.ndim(input) - axis - 1))
    loss = -np.sum(target * log_probs, axis=axis)
    return reduce_loss(loss, reduction)


def softmax_cross_entropy_with_logits(logits, labels, sparse=False):
    """Per sample: ``-sum(labels * log_softmax(logits))`` over the last axis; with ``sparse``,
    ``labels`` are class indices."""
    log_probs = log_softmax(logits, -1)
    if sparse:
        picked = np.take_along_axis(log_probs, np.expand_dims(labels, -1), axis=-1)
        return -np.squeeze(picked, axis=-1)
    return -np.sum(labels * log_probs, axis=-1)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction="mean"):
    cos = cosine_similarity(input1, input2, dim=-1)
    return reduce_loss(np.where(target == 1, 1.0 - cos, np.maximum(cos - margin, 0.0)), reduction)


def gaussian_nll_loss(x, target, var, full=False, eps=1e-06, reduction="mean"):
    var = np.maximum(var, eps)
    loss = 0.5 * (np.log(var) + (x - target) * (x - target) / var)
    if full:
        loss = loss + 0.9189385332046727  # log(2 pi) / 2
    return reduce_loss(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                        reduction="mean"):
    d_pos = np.linalg.norm(anchor - positive + eps, ord=p, axis=-1)
    d_neg = np.linalg.norm(anchor - negative + eps, ord=p, axis=-1)
    if swap:
        d_neg = np.minimum(d_neg, np.linalg.norm(positive - negative + eps, ord=p, axis=-1))
    return reduce_loss(np.maximum(d_pos - d_neg + margin, 0.0), reduction)


# the class axis is a constant
nondifferentiable(_class_axis)


# ----- convolution -----------------------------------------------------------------------------


def _pair(value, name):
    if isinstance(value, int):
        return value, value
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return tuple(value)
    raise ValueError(f"conv2d: {name} must be an int or a pair of ints, got {value!r}")


def _conv_indices(size, kernel, stride, dilation):
    """``[out, kernel]`` indices of the input along one axis read by a convolution."""
    count = (size - dilation * (kernel - 1) - 1) // stride + 1
    if count < 1:
        raise ValueError(f"conv2d: the kernel (size {kernel}, dilation {dilation}) is larger "
                         f"than the input ({size}) along an axis")
    return np.arange(count)[:, None] * stride + np.arange(kernel)[None, :] * dilation


def conv2d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1,
           groups=1):
    """The 2-d convolution (cross-correlation) of ``input`` ``(N, C, H, W)`` with ``weight``
    ``(O, C, kH, kW)``, plus ``bias`` ``(O,)``; ``pad_mode`` ``"valid"``, ``"same"`` or ``"pad"``
    (with ``padding``: an int, a pair, or ``(top, bottom, left, right)``). mindgrad supports
    ``groups=1``."""
    if groups != 1:
        raise NotImplementedError("conv2d: mindgrad supports groups=1 only")
    sh, sw = _pair(stride, "stride")
    dh, dw = _pair(dilation, "dilation")
    kh, kw = np.shape(weight)[2], np.shape(weight)[3]
    if pad_mode == "valid":
        pads = (0, 0, 0, 0)
    elif pad_mode == "pad":
        pads = (padding,) * 4 if isinstance(padding, int) else (
            (padding[0], padding[0], padding[1], padding[1]) if len(padding) == 2
            else tuple(padding))
    elif pad_mode == "same":
        pads = _same_pads(np.shape(input)[2], kh, sh, dh) + \
            _same_pads(np.shape(input)[3], kw, sw, dw)
    else:
        raise ValueError(f"conv2d: pad_mode must be 'valid', 'same' or 'pad', got {pad_mode!r}")
    if any(pads):
        input = np.pad(input, ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])))
    rows = _conv_indices(np.shape(input)[2], kh, sh, dh)
    cols = _conv_indices(np.shape(input)[3], kw, sw, dw)
    patches = input[:, :, rows[:, None, :, None], cols[None, :, None, :]]
    out = np.einsum("nchwij,ocij->nohw", patches, weight)
    if bias is not None:
        out = out + np.reshape(bias, (1, -1, 1, 1))
    return out


def _same_pads(size, kernel, stride, dilation):
    """``(before, after)`` padding for ``pad_mode="same"``: ``ceil(size / stride)`` outputs."""
    out = -(-size // stride)
    total = max((out - 1) * stride + dilation * (kernel - 1) + 1 - size, 0)
    return total // 2, total - total // 2


nondifferentiable(_pair, _conv_indices, _same_pads)


# what ``from nn_functional import *`` (``mindgrad.ops``) gives
__all__ = sorted(name for name, value in list(globals().items())
                 if not name.startswith("_") and name not in
                 ("annotations", "np", "nondifferentiable", "cosine_similarity", "erf", "xlogy"))

