"""MindSpore's optimizers: ``optimizer(grads)`` updates ``optimizer.parameters`` in place.

Each step follows MindSpore's order: weight decay is added to the gradients (``g + wd * w``, for
parameters whose names hold neither ``beta`` nor ``gamma``, or per group), the gradients are
divided by ``loss_scale``, the learning rate of the step is read (a number, a list indexed by the
step, or a schedule called with it) and the update rule runs. ``AdamWeightDecay`` and ``AdamW``
decay the weights in the update instead (decoupled weight decay).
"""

from __future__ import annotations

import math

import numpy as np

from mindgrad.mindspore.cell import Cell, Parameter, ParameterTuple

__all__ = ["SGD", "Adam", "AdamW", "AdamWeightDecay", "Momentum", "Optimizer"]


def _decays(param) -> bool:
    """MindSpore's default filter: weight decay skips normalisation scales and offsets."""
    name = param.name or ""
    return "beta" not in name and "gamma" not in name


class Optimizer(Cell):
    """``Optimizer(learning_rate, parameters, weight_decay=0.0, loss_scale=1.0)``.

    ``parameters`` is a list of Parameters or of groups: dicts with ``"params"`` and optionally
    ``"lr"`` and ``"weight_decay"`` (``"order_params"`` fixes the order of the parameters).
    Subclasses define ``update(param, grad, lr, index)`` for one parameter.
    """

    _decoupled_decay = False  # AdamWeightDecay, AdamW: the update applies the decay itself
    _decay_filter = staticmethod(_decays)  # which parameters decay when there are no groups

    def __init__(self, learning_rate, parameters, weight_decay=0.0, loss_scale=1.0):
        super().__init__(auto_prefix=False)
        items = list(parameters)
        self.is_group = bool(items) and isinstance(items[0], dict)
        params, lrs, decays = self._groups(items, learning_rate, weight_decay)
        if not params:
            raise ValueError(f"{type(self).__name__} got no parameters to update")
        if loss_scale <= 0:
            raise ValueError(f"loss_scale must be > 0, got {loss_scale}")
        self.parameters = ParameterTuple(params)
        self.learning_rate = learning_rate
        self.weight_decay = float(weight_decay)
        self.loss_scale = float(loss_scale)
        self.global_step = Parameter(np.zeros(1, np.int32), "global_step", requires_grad=False)
        self._lrs = lrs  # one learning rate (number, list or schedule) per parameter
        self._weight_decays = decays  # one weight decay per parameter (0 where none applies)

    def _groups(self, items, learning_rate, weight_decay):
        if not self.is_group:
            for p in items:
                if not isinstance(p, Parameter):
                    raise TypeError(f"{type(self).__name__} takes Parameters or groups (dicts), "
                                    f"got {type(p).__name__}")
            params = items
            return (params, [learning_rate] * len(params),
                    [weight_decay if self._decay_filter(p) else 0.0 for p in params])
        params, lrs, decays, order = [], [], [], None
        for group in items:
            if "order_params" in group:
                order = list(group["order_params"])
                continue
            for p in group["params"]:
                params.append(p)
                lrs.append(group.get("lr", learning_rate))
                decays.append(group.get("weight_decay", weight_decay))
        if order is not None:
            where = {id(p): i for i, p in enumerate(params)}
            index = [where[id(p)] for p in order]
            params = [params[i] for i in index]
            lrs = [lrs[i] for i in index]
            decays = [decays[i] for i in index]
        return params, lrs, decays

    @property
    def step(self) -> int:
        return int(self.global_step[0])

    def _lr_at(self, lr, step):
        if callable(lr):  # a LearningRateSchedule: a function of the step
            return float(np.asarray(lr(np.array(step, np.int32))))
        if np.ndim(lr) >= 1:  # a list: one rate per step, the last one kept
            rates = np.asarray(lr).reshape(-1)
            return float(rates[min(step, rates.size - 1)])
        return float(np.asarray(lr))

    def get_lr(self):
        """The learning rate of the current step (a tuple, one per parameter, with groups)."""
        rates = tuple(self._lr_at(lr, self.step) for lr in self._lrs)
        if self.is_group:
            return rates
        return rates[0]

    def get_lr_parameter(self, param):
        index = [id(p) for p in self.parameters].index(id(param))
        return self._lr_at(self._lrs[index], self.step)

    def decay_weight(self, gradients):
        """``g + wd * w`` for each parameter that decays."""
        return tuple(g + wd * p if wd else g
                     for p, g, wd in zip(self.parameters, gradients, self._weight_decays))

    def scale_grad(self, gradients):
        if self.loss_scale == 1.0:
            return tuple(gradients)
        return tuple(g / self.loss_scale for g in gradients)

    def construct(self, gradients):
        gradients = tuple(gradients)
        if len(gradients) != len(self.parameters):
            raise ValueError(f"{type(self).__name__} updates {len(self.parameters)} parameters, "
                             f"but got {len(gradients)} gradients")
        if not self._decoupled_decay:
            gradients = self.decay_weight(gradients)
        gradients = self.scale_grad(gradients)
        step = self.step
        for i, (param, grad) in enumerate(zip(self.parameters, gradients)):
            self.update(param, np.asarray(grad), self._lr_at(self._lrs[i], step), i)
        self.global_step += 1
        return True

    def update(self, param, grad, lr, index):
        raise NotImplementedError(f"{type(self).__name__} must define update")


class SGD(Optimizer):
    """``SGD(params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0,
    nesterov=False, loss_scale=1.0)``::

        v = g                                       (the first step)
        v = momentum * v + (1 - dampening) * g      (later steps)
        p = p - lr * (g + momentum * v)             (nesterov)
        p = p - lr * v                              (otherwise)
    """

    def __init__(self, params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        if momentum < 0.0 or dampening < 0.0:
            raise ValueError("SGD: momentum and dampening must be >= 0")
        if nesterov and (momentum <= 0.0 or dampening != 0.0):
            raise ValueError("SGD: nesterov needs momentum > 0 and dampening 0")
        self.momentum, self.dampening, self.nesterov = float(momentum), float(dampening), nesterov
        self.accum = self.parameters.clone(prefix="accum", init="zeros")
        self.stat = self.parameters.clone(prefix="stat", init="ones")

    def update(self, param, grad, lr, index):
        accum, stat = self.accum[index], self.stat[index]
        if stat.flat[0]:
            accum[...] = grad
            stat[...] = 0
        else:
            accum *= self.momentum
            accum += (1.0 - self.dampening) * grad
        if self.nesterov:
            param -= lr * (grad + self.momentum * accum)
        else:
            param -= lr * accum


class Momentum(Optimizer):
    """``Momentum(params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0,
    use_nesterov=False)``::

        v = momentum * v + g
        p = p - lr * (g + momentum * v)    (use_nesterov)
        p = p - lr * v                     (otherwise)
    """

    def __init__(self, params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0,
                 use_nesterov=False):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        if momentum < 0.0:
            raise ValueError(f"Momentum: momentum must be >= 0, got {momentum}")
        self.momentum, self.use_nesterov = float(momentum), use_nesterov
        self.moments = self.parameters.clone(prefix="moments", init="zeros")

    def update(self, param, grad, lr, index):
        moment = self.moments[index]
        moment *= self.momentum
        moment += grad
        if self.use_nesterov:
            param -= lr * (grad + self.momentum * moment)
        else:
            param -= lr * moment


class _AdamBase(Optimizer):
    def __init__(self, params, learning_rate, beta1, beta2, eps, weight_decay, loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        if not (0.0 < beta1 < 1.0 and 0.0 < beta2 < 1.0):
            raise ValueError(f"{type(self).__name__}: beta1 and beta2 must be in (0, 1)")
        if eps <= 0.0:
            raise ValueError(f"{type(self).__name__}: eps must be > 0, got {eps}")
        self.beta1, self.beta2, self.eps = float(beta1), float(beta2), float(eps)
        self.moment1 = self.parameters.clone(prefix="moment1", init="zeros")
        self.moment2 = self.parameters.clone(prefix="moment2", init="zeros")

    def _moments(self, grad, index):
        m, v = self.moment1[index], self.moment2[index]
        m *= self.beta1
        m += (1.0 - self.beta1) * grad
        v *= self.beta2
        v += (1.0 - self.beta2) * grad * grad
        return m, v


class Adam(_AdamBase):
    """``Adam(params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, use_locking=False,
    use_nesterov=False, weight_decay=0.0, loss_scale=1.0, use_amsgrad=False)``, at step t::

        m = beta1 * m + (1 - beta1) * g;   v = beta2 * v + (1 - beta2) * g * g
        lr_t = lr * sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
        p = p - lr_t * m / (sqrt(v) + eps)
        (use_nesterov: m replaced by beta1 * m + (1 - beta1) * g;
         use_amsgrad: v by the largest v so far)
    """

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
                 use_locking=False, use_nesterov=False, weight_decay=0.0, loss_scale=1.0,
                 use_amsgrad=False):
        super().__init__(params, learning_rate, beta1, beta2, eps, weight_decay, loss_scale)
        self.use_nesterov, self.use_amsgrad = use_nesterov, use_amsgrad
        if use_amsgrad:
            self.vhat = self.parameters.clone(prefix="vhat", init="zeros")

    def update(self, param, grad, lr, index):
        m, v = self._moments(grad, index)
        if self.use_amsgrad:
            np.maximum(self.vhat[index], v, out=self.vhat[index])
            v = self.vhat[index]
        t = self.step + 1
        lr_t = lr * math.sqrt(1.0 - self.beta2 ** t) / (1.0 - self.beta1 ** t)
        direction = self.beta1 * m + (1.0 - self.beta1) * grad if self.use_nesterov else m
        param -= lr_t * direction / (np.sqrt(v) + self.eps)


class AdamWeightDecay(_AdamBase):
    """``AdamWeightDecay(params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-6,
    weight_decay=0.0)``, MindSpore's decoupled weight decay, without bias correction::

        m = beta1 * m + (1 - beta1) * g;   v = beta2 * v + (1 - beta2) * g * g
        p = p - lr * (m / (sqrt(v) + eps) + weight_decay * p)
    """

    _decoupled_decay = True

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-6,
                 weight_decay=0.0):
        super().__init__(params, learning_rate, beta1, beta2, eps, weight_decay)

    def update(self, param, grad, lr, index):
        m, v = self._moments(grad, index)
        step = m / (np.sqrt(v) + self.eps)
        decay = self._weight_decays[index]
        if decay:
            step = step + decay * param
        param -= lr * step


class AdamW(_AdamBase):
    """``AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
    amsgrad=False, *, maximize=False)``, as ``mindspore.mint.optim.AdamW`` and
    ``mindspore.experimental.optim.AdamW`` (Loshchilov and Hutter), at step t::

        p = p - lr * weight_decay * p
        m = beta1 * m + (1 - beta1) * g;   v = beta2 * v + (1 - beta2) * g * g
        p = p - lr * (m / (1 - beta1 ** t)) / (sqrt(v / (1 - beta2 ** t)) + eps)
        (amsgrad: the largest v / (1 - beta2 ** t) so far)

    ``learning_rate=`` is accepted for ``lr``, as the ``nn`` optimizers name it.
    """

    _decoupled_decay = True
    _decay_filter = staticmethod(lambda param: True)  # every parameter decays, as in PyTorch

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, learning_rate=None):
        lr = lr if learning_rate is None else learning_rate
        super().__init__(params, lr, betas[0], betas[1], eps, weight_decay)
        self.amsgrad, self.maximize = amsgrad, maximize
        if amsgrad:
            self.vhat = self.parameters.clone(prefix="vhat", init="zeros")

    def update(self, param, grad, lr, index):
        if self.maximize:
            grad = -grad
        param *= 1.0 - lr * self._weight_decays[index]
        m, v = self._moments(grad, index)
        t = self.step + 1
        v_hat = v / (1.0 - self.beta2 ** t)
        if self.amsgrad:
            np.maximum(self.vhat[index], v_hat, out=self.vhat[index])
            v_hat = self.vhat[index]
        param -= lr * (m / (1.0 - self.beta1 ** t)) / (np.sqrt(v_hat) + self.eps)
