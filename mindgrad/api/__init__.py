"""The user's API: ``grad``/``value_and_grad`` (``gradients``, their arguments checked by
``arguments``), ``jvp``, ``vjp`` (``functional``), ``jacfwd``, ``jacrev``, ``hessian``
(``jacobians``), ``check_grads`` (``check``) and ``debug``. It builds on the compiler and
registers into it how calls of ``grad``/``jvp`` inside differentiated code expand; errors
leaving it point at the user's lines (``tracebacks``)."""

from mindgrad.api import dynamic  # noqa: F401 (registers the run-time dispatcher)
from mindgrad.api.check import check_grads
from mindgrad.api.debug import debug
from mindgrad.api.functional import jvp, vjp
from mindgrad.api.gradients import GradFunction, get_grad, grad, stop_gradient, value_and_grad
from mindgrad.api.jacobians import hessian, jacfwd, jacrev
from mindgrad.api.sources import source, stages
from mindgrad.rules import numpy_callables

numpy_callables.register_api(vjp, jvp)  # the rules that call the user's functions use them

__all__ = ["GradFunction", "check_grads", "debug", "get_grad", "grad", "hessian", "jacfwd",
           "jacrev", "jvp", "source", "stages", "stop_gradient", "value_and_grad", "vjp"]
