"""MindSpore's ``GradOperation``: the gradient function maker of MindSpore 1.x programs."""

from __future__ import annotations

from mindgrad.api.gradients import GradFunction, _check_bool, _weights
from mindgrad.api.tracebacks import user_frames
from mindgrad.compiler import expansions


class GradOperation:
    """MindSpore's ``GradOperation(get_all=False, get_by_list=False, sens_param=False)``.

    ``GradOperation(...)(fn[, weights])`` returns the gradient function: by default the gradient
    of the first input (bare); ``get_all`` a tuple over all inputs (always a tuple);
    ``get_by_list`` a tuple over ``weights``; both ``((inputs), (weights))``; ``sens_param``
    takes the output sensitivity as the extra last argument.
    """

    def __init__(self, get_all=False, get_by_list=False, sens_param=False):
        _check_bool("get_all", get_all)
        _check_bool("get_by_list", get_by_list)
        _check_bool("sens_param", sens_param)
        self.get_all = get_all
        self.get_by_list = get_by_list
        self.sens_param = sens_param

    def __call__(self, fn, weights=None):
        if self.get_by_list and weights is None:
            raise ValueError("GradOperation(get_by_list=True) needs `weights`")
        weight_list = list(_weights(weights)[0]) if self.get_by_list else []
        if not (self.get_all or self.get_by_list):
            # the bare gradient of the first input is what grad(fn) gives; as a GradFunction it
            # can be differentiated again: GradOperation()(GradOperation()(net))
            return GradFunction(fn, (0,), None, False, False, self.sens_param, False)
        op = self

        @user_frames
        def gradient_function(*args, **kwargs):
            inputs = args[:-1] if op.sens_param else args
            positions = tuple(range(len(inputs))) if op.get_all else ()
            inner = GradFunction(fn, positions, weight_list if op.get_by_list else None,
                                 False, False, op.sens_param, False)
            args, sens = inner._split_sens(args)
            _, grads, wgrads = inner.gradients(args, kwargs, sens)
            if op.get_all and op.get_by_list:
                return grads, wgrads
            if op.get_all:
                return grads
            return wgrads

        gradient_function.__name__ = "grad_" + getattr(fn, "__name__", type(fn).__name__)
        return gradient_function


# self.grad_op(self.net)(x) inside a Cell's construct is built when the Cell is differentiated
expansions.register_gradient_maker(GradOperation)
