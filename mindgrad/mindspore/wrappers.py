"""MindSpore's wrapper Cells: a network with its loss (``WithLossCell``), one training step
(``TrainOneStepCell``), evaluation (``WithEvalCell``) and gradients (``WithGradCell``,
``ForwardValueAndGrad``). They keep the wrapped network's parameter names (MindSpore builds
them with ``auto_prefix=False``)."""

from __future__ import annotations

from mindgrad.api.gradients import grad, value_and_grad
from mindgrad.mindspore.cell import Cell, ParameterTuple
from mindgrad.mindspore.grad_operation import GradOperation

__all__ = ["ForwardValueAndGrad", "TrainOneStepCell", "WithEvalCell", "WithGradCell",
           "WithLossCell"]


class WithLossCell(Cell):
    """``WithLossCell(backbone, loss_fn)``: ``loss_fn(backbone(data), label)``."""

    def __init__(self, backbone, loss_fn):
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        self._loss_fn = loss_fn

    def construct(self, data, label):
        out = self._backbone(data)
        return self._loss_fn(out, label)

    @property
    def backbone_network(self):
        return self._backbone


class WithEvalCell(Cell):
    """``WithEvalCell(network, loss_fn)``: ``(loss, outputs, label)``."""

    def __init__(self, network, loss_fn, add_cast_fp32=False):
        super().__init__(auto_prefix=False)
        self._network = network
        self._loss_fn = loss_fn

    def construct(self, data, label):
        outputs = self._network(data)
        return self._loss_fn(outputs, label), outputs, label


class TrainOneStepCell(Cell):
    """``TrainOneStepCell(network, optimizer, sens=None)``: one step on ``network`` (which
    returns the loss): the gradients of the loss (times ``sens``, 1.0 by default) with respect
    to ``optimizer.parameters``, applied by the optimizer. Returns the loss."""

    def __init__(self, network, optimizer, sens=None):
        super().__init__(auto_prefix=False)
        self.network = network
        self.network.set_grad()
        self.optimizer = optimizer
        self.weights = self.optimizer.parameters
        self.sens = 1.0 if sens is None else sens
        self._value_and_grad = value_and_grad(network, None, self.weights)

    def construct(self, *inputs):
        loss, grads = self._value_and_grad(*inputs)
        if self.sens != 1.0:  # the gradient is linear in the output's sensitivity
            grads = tuple(g * self.sens for g in grads)
        self.optimizer(grads)
        return loss


class WithGradCell(Cell):
    """``WithGradCell(network, loss_fn=None, sens=None)``: the gradients of
    ``loss_fn(network(data), label)`` (or of ``network(*inputs)``) with respect to the
    network's trainable parameters."""

    def __init__(self, network, loss_fn=None, sens=None):
        super().__init__(auto_prefix=False)
        self.network = network
        self.loss_fn = loss_fn
        self.sens = sens
        self.weights = ParameterTuple(network.trainable_params())
        self.network_with_loss = network if loss_fn is None else WithLossCell(network, loss_fn)
        self._grad = grad(self.network_with_loss, None, self.weights,
                          sens_param=sens is not None)

    def construct(self, *inputs):
        if self.sens is not None:
            return self._grad(*inputs, self.sens)
        return self._grad(*inputs)


class ForwardValueAndGrad(Cell):
    """``ForwardValueAndGrad(network, weights=None, get_all=False, get_by_list=False,
    sens_param=False)``: ``(network(*inputs), gradients)``, the gradients structured as
    ``GradOperation`` structures them."""

    def __init__(self, network, weights=None, get_all=False, get_by_list=False,
                 sens_param=False):
        super().__init__(auto_prefix=False)
        if get_by_list and weights is None:
            raise TypeError("ForwardValueAndGrad(get_by_list=True) needs weights")
        self.network = network
        self.weights = weights
        self.get_all, self.get_by_list, self.sens_param = get_all, get_by_list, sens_param
        self._grad = GradOperation(get_all, get_by_list, sens_param)(network, weights)

    def construct(self, *inputs):
        value = self.network(*(inputs[:-1] if self.sens_param else inputs))
        return value, self._grad(*inputs)
