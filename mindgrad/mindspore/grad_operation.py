"""MindSpore's ``GradOperation``: the gradient function maker of MindSpore 1.x programs."""

from __future__ import annotations

import inspect

from mindgrad.api.arguments import check_bool, weights_of
from mindgrad.api.gradients import GradFunction
from mindgrad.api.tracebacks import user_frames
from mindgrad.compiler import expansions, objects
from mindgrad.mindspore import context


class GradOperation:
    """MindSpore's ``GradOperation(get_all=False, get_by_list=False, sens_param=False)``.

    ``GradOperation(...)(fn[, weights])`` returns the gradient function: by default the gradient
    of the first input (bare); ``get_all`` a tuple over all inputs (always a tuple);
    ``get_by_list`` a tuple over ``weights``; both ``((inputs), (weights))``; ``sens_param``
    takes the output sensitivity as the extra last argument.
    """

    def __init__(self, get_all=False, get_by_list=False, sens_param=False):
        check_bool("get_all", get_all)
        check_bool("get_by_list", get_by_list)
        check_bool("sens_param", sens_param)
        self.get_all = get_all
        self.get_by_list = get_by_list
        self.sens_param = sens_param

    def __call__(self, fn, weights=None):
        bare_weight = False
        if self.get_by_list and weights is None:
            # as MindSpore: no weights in GRAPH mode; a Cell's trainable Parameters in PYNATIVE
            pynative = context.get_context("mode") == context.PYNATIVE_MODE
            weights = fn.trainable_params() if pynative and objects.is_module(fn) else []
        if self.get_by_list:
            weight_list, bare_weight = weights_of(weights)
            weight_list = list(weight_list)
        else:
            weight_list = []
        if not (self.get_all or self.get_by_list):
            # the bare gradient of the first input is what grad(fn) gives; as a GradFunction it
            # can be differentiated again: GradOperation()(GradOperation()(net))
            return GradFunction(fn, (0,), None, False, False, self.sens_param, False)
        count = _input_count(fn)
        if self.get_all and not self.get_by_list and count:
            # the tuple of all inputs' gradients, as a GradFunction (differentiable again)
            grad_fn = GradFunction(fn, tuple(range(count)), None, False, False,
                                   self.sens_param, False)
            grad_fn.tuple_result = True
            return grad_fn
        op = self

        @user_frames
        def gradient_function(*args, **kwargs):
            inputs = args[:-1] if op.sens_param else args
            positions = tuple(range(len(inputs))) if op.get_all else ()
            inner = GradFunction(fn, positions, weight_list if op.get_by_list else None,
                                 False, False, op.sens_param, False)
            args, sens = inner._split_sens(args)
            _, grads, wgrads = inner.gradients(args, kwargs, sens)
            if bare_weight:  # a Parameter alone as weights: its gradient, bare
                wgrads = wgrads[0]
            if op.get_all and op.get_by_list:
                return grads, wgrads
            if op.get_all:
                return grads
            return wgrads

        gradient_function.__name__ = "grad_" + getattr(fn, "__name__", type(fn).__name__)
        return gradient_function


def _input_count(fn):
    """The number of positional inputs of ``fn`` (a Cell's ``construct``), or None where it
    takes ``*args`` or Python cannot tell."""
    try:
        signature = inspect.signature(fn.construct if objects.is_module(fn) else fn)
    except (TypeError, ValueError):
        return None
    kinds = [p.kind for p in signature.parameters.values()]
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        return None
    return sum(k in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
               for k in kinds)


# self.grad_op(self.net)(x) inside a Cell's construct is built when the Cell is differentiated
expansions.register_gradient_maker(GradOperation)
