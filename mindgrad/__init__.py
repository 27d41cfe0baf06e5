"""mindgrad: source-to-source automatic differentiation for Python and NumPy.

``grad(fn)`` reads ``fn``'s source, writes a Python function computing its gradient, compiles
it and caches it per argument signature; ``source(grad_fn, *args)`` shows that function.
MindSpore's names are here too (``nn.Cell``, ``Parameter``, ``ops.GradOperation``, ``Tensor``),
so MindSpore code runs with its imports changed.
"""

import sys as _sys

from mindgrad.api import (
    GradFunction,
    check_grads,
    get_grad,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    source,
    stop_gradient,
    value_and_grad,
    vjp,
)
from mindgrad.compiler.cache import clear as clear_cache
from mindgrad.compiler.cache import stats as cache_stats
from mindgrad.errors import (
    NoGradientRuleError,
    NoSourceError,
    NoTangentRuleError,
    UnsupportedSyntaxError,
)
from mindgrad.mindspore import (
    Cell,
    GradOperation,
    Parameter,
    ParameterTuple,
    Tensor,
    dtype,
    nn,
    ops,
)
from mindgrad.mindspore.dtype import float16, float32, float64, int32, int64
from mindgrad.rules import adjoint, adjoint_attr, adjoint_method, d, nondifferentiable
from mindgrad.rules import builtin as _builtin_rules  # noqa: F401  (registers them)

# MindSpore programs import these as modules: `import mindgrad.nn as nn`
for _name in ("nn", "ops", "dtype"):
    _sys.modules[f"{__name__}.{_name}"] = getattr(_sys.modules[__name__], _name)

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
