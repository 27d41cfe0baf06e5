"""MindSpore's loss Cells: ``construct(logits, labels)`` calls the functional loss of
``functional`` with the Cell's options; ``reduction`` is ``"mean"``, ``"sum"`` or ``"none"``,
with MindSpore's default for each class."""

from __future__ import annotations

import numpy as np

from mindgrad.mindspore import nn_functional as NF
from mindgrad.mindspore.cell import Cell

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
           "HuberLoss", "KLDivLoss", "L1Loss", "LossBase", "MAELoss", "MSELoss", "NLLLoss",
           "RMSELoss", "SmoothL1Loss", "SoftMarginLoss", "SoftmaxCrossEntropyWithLogits"]


def _check_reduction(reduction):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    return reduction


class LossBase(Cell):
    """The base of losses: ``get_loss(x, weights=1.0)`` weights and reduces ``x``."""

    def __init__(self, reduction="mean", dtype=np.float32):
        super().__init__()
        self.reduction = _check_reduction(reduction)

    def get_axis(self, x):
        return tuple(range(np.ndim(x)))

    def get_loss(self, x, weights=1.0):
        return NF.reduce_loss(x * weights, self.reduction)


class MSELoss(LossBase):
    def construct(self, logits, labels):
        return NF.mse_loss(logits, labels, self.reduction)


class L1Loss(LossBase):
    def construct(self, logits, labels):
        return NF.l1_loss(logits, labels, self.reduction)


MAELoss = L1Loss


class RMSELoss(LossBase):
    """``sqrt(mean((logits - labels) ** 2))``."""

    def __init__(self):
        super().__init__()

    def construct(self, logits, label):
        return np.sqrt(NF.mse_loss(logits, label, "mean"))


class SmoothL1Loss(LossBase):
    def __init__(self, beta=1.0, reduction="none"):
        super().__init__(reduction)
        self.beta = beta

    def construct(self, logits, labels):
        return NF.smooth_l1_loss(logits, labels, self.beta, self.reduction)


class HuberLoss(LossBase):
    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction)
        self.delta = delta

    def construct(self, logits, labels):
        return NF.huber_loss(logits, labels, self.reduction, self.delta)


class SoftMarginLoss(LossBase):
    def construct(self, logits, labels):
        return NF.soft_margin_loss(logits, labels, self.reduction)


class KLDivLoss(LossBase):
    """``KLDivLoss(reduction="mean", log_target=False)``; ``"batchmean"`` divides the sum by
    the batch size."""

    def __init__(self, reduction="mean", log_target=False):
        super().__init__(reduction if reduction != "batchmean" else "sum")
        self.reduction = reduction
        self.log_target = log_target

    def construct(self, logits, labels):
        return NF.kl_div(logits, labels, self.reduction, self.log_target)


class CosineEmbeddingLoss(LossBase):
    def __init__(self, margin=0.0, reduction="mean"):
        super().__init__(reduction)
        self.margin = margin

    def construct(self, logits_x1, logits_x2, labels):
        return NF.cosine_embedding_loss(logits_x1, logits_x2, labels, self.margin,
                                       self.reduction)


class CrossEntropyLoss(LossBase):
    """``CrossEntropyLoss(weight=None, ignore_index=-100, reduction="mean",
    label_smoothing=0.0)``: ``ops.cross_entropy`` of logits against class indices or
    probabilities."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        self.weight = weight
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def construct(self, logits, labels):
        return NF.cross_entropy(logits, labels, self.weight, self.ignore_index, self.reduction,
                               self.label_smoothing)


class NLLLoss(LossBase):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        self.weight = weight
        self.ignore_index = ignore_index

    def construct(self, logits, labels):
        return NF.nll_loss(logits, labels, self.weight, self.ignore_index, self.reduction)


class SoftmaxCrossEntropyWithLogits(LossBase):
    """``SoftmaxCrossEntropyWithLogits(sparse=False, reduction="none")``: per sample,
    ``-sum(labels * log_softmax(logits))``; with ``sparse``, labels are class indices."""

    def __init__(self, sparse=False, reduction="none"):
        super().__init__(reduction)
        self.sparse = sparse

    def construct(self, logits, labels):
        loss = NF.softmax_cross_entropy_with_logits(logits, labels, self.sparse)
        return NF.reduce_loss(loss, self.reduction)


class BCEWithLogitsLoss(LossBase):
    """``BCEWithLogitsLoss(reduction="mean", weight=None, pos_weight=None)``."""

    def __init__(self, reduction="mean", weight=None, pos_weight=None):
        super().__init__(reduction)
        self.weight = weight
        self.pos_weight = pos_weight

    def construct(self, logits, labels):
        return NF.binary_cross_entropy_with_logits(logits, labels, self.weight, self.pos_weight,
                                                  self.reduction)


class BCELoss(LossBase):
    """``BCELoss(weight=None, reduction="mean")`` of probabilities (each log clipped at -100)."""

    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.weight = weight

    def construct(self, logits, labels):
        return NF.binary_cross_entropy(logits, labels, self.weight, self.reduction)
