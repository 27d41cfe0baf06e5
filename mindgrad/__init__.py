"""mindgrad: source-to-source automatic differentiation for Python and NumPy.

``grad(fn)`` reads ``fn``'s source, writes a Python function computing its gradient, compiles
it and caches it per argument signature; ``source(grad_fn, *args)`` shows that function.
"""

from mindgrad import rules as _rules
from mindgrad.api import GradFunction, get_grad, grad, source, value_and_grad
from mindgrad.cache import clear as clear_cache
from mindgrad.cache import stats as cache_stats
from mindgrad.errors import NoGradientRuleError, NoSourceError, UnsupportedSyntaxError
from mindgrad.rules import adjoint, adjoint_attr, adjoint_method, d, nondifferentiable
from mindgrad.testing import check_grads

_rules._load_builtin_rules()

__version__ = "0.1.0"

__all__ = [
    "grad", "value_and_grad", "get_grad", "source", "GradFunction", "check_grads", "adjoint",
    "adjoint_method", "adjoint_attr", "nondifferentiable", "d", "cache_stats", "clear_cache",
    "NoGradientRuleError", "NoSourceError", "UnsupportedSyntaxError",
]
