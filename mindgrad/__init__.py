"""mindgrad: source-to-source automatic differentiation for Python and NumPy.

``grad(fn)`` reads ``fn``'s source, writes a Python function computing its gradient, compiles
it and caches it per argument signature; ``source(grad_fn, *args)`` shows that function.
MindSpore's names are here too (``nn.Cell``, ``Parameter``, ``ops.GradOperation``, ``Tensor``),
so MindSpore code runs with its imports changed.
"""

from mindgrad import dtype, nn, ops
from mindgrad.api import (
                          GradFunction,
                          GradOperation,
                          get_grad,
                          grad,
                          source,
                          stop_gradient,
                          value_and_grad,
)
from mindgrad.cache import clear as clear_cache
from mindgrad.cache import stats as cache_stats
from mindgrad.dtype import float16, float32, float64, int32, int64
from mindgrad.errors import (
                          NoGradientRuleError,
                          NoSourceError,
                          NoTangentRuleError,
                          UnsupportedSyntaxError,
)
from mindgrad.higher import hessian, jacfwd, jacrev, jvp, vjp
from mindgrad.nn import Cell, Parameter, ParameterTuple
from mindgrad.rules import adjoint, adjoint_attr, adjoint_method, d, nondifferentiable
from mindgrad.rules import builtin as _builtin_rules  # noqa: F401  (registers them)
from mindgrad.tensor import Tensor
from mindgrad.testing import check_grads

nondifferentiable(stop_gradient)

__version__ = "0.1.0"

__all__ = [
                          "Cell",
                          "GradFunction",
                          "GradOperation",
                          "NoGradientRuleError",
                          "NoSourceError",
                          "NoTangentRuleError",
                          "Parameter",
                          "ParameterTuple",
                          "Tensor",
                          "UnsupportedSyntaxError",
                          "adjoint",
                          "adjoint_attr",
                          "adjoint_method",
                          "cache_stats",
                          "check_grads",
                          "clear_cache",
                          "d",
                          "dtype",
                          "float16",
                          "float32",
                          "float64",
                          "get_grad",
                          "grad",
                          "hessian",
                          "int32",
                          "int64",
                          "jacfwd",
                          "jacrev",
                          "jvp",
                          "nn",
                          "nondifferentiable",
                          "ops",
                          "source",
                          "stop_gradient",
                          "value_and_grad",
                          "vjp",
]
