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
    debug,
    get_grad,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    source,
    stages,
    stop_gradient,
    value_and_grad,
    vjp,
)
from mindgrad.api.mapping import vmap
from mindgrad.api.taylor import derivative, jet
from mindgrad.compiler.cache import clear as clear_cache
from mindgrad.compiler.cache import stats as cache_stats
from mindgrad.errors import (
    NoGradientRuleError,
    NoSourceError,
    NoTangentRuleError,
    UnsupportedSyntaxError,
)
from mindgrad.mindspore import (
    GRAPH_MODE,
    PYNATIVE_MODE,
    Cell,
    GradOperation,
    JitConfig,
    Parameter,
    ParameterTuple,
    Tensor,
    constexpr,
    dtype,
    get_context,
    get_seed,
    initializer,
    jit,
    jit_class,
    load_checkpoint,
    load_param_into_net,
    ms_class,
    ms_function,
    mutable,
    save_checkpoint,
    set_context,
    set_seed,
    tensor,
)
from mindgrad.mindspore.dtype import (
    bool_,
    byte,
    complex64,
    complex128,
    double,
    dtype_to_nptype,
    dtype_to_pytype,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    intc,
    intp,
    pytype_to_dtype,
    short,
    single,
    ubyte,
    uint8,
    uint16,
    uint32,
    uint64,
    uintc,
    uintp,
    ushort,
)
from mindgrad.rules import adjoint, adjoint_attr, adjoint_method, d, nondifferentiable
from mindgrad.rules import builtin as _builtin_rules  # noqa: F401  (registers them)

# MindSpore programs import these as modules: `import mindgrad.dtype as mstype`
for _name in ("dtype", "initializer"):
    _sys.modules[f"{__name__}.{_name}"] = getattr(_sys.modules[__name__], _name)

# MindSpore's packages: mindgrad.ops (with operations, composite, functional), mindgrad.nn,
# mindgrad.common (with dtype, tensor, parameter, initializer, api) and mindgrad.context
from mindgrad import common, context, nn, ops  # noqa: E402
from mindgrad.mindspore.facade import unsupported as _unsupported  # noqa: E402


def __getattr__(name):
    """A name of MindSpore's top-level module that mindgrad lacks is refused as such."""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raise _unsupported(__name__, "mindspore", name)


nondifferentiable(stop_gradient)

__version__ = "0.1.0"

__all__ = [
    "Cell",
    "GRAPH_MODE",
    "GradFunction",
    "GradOperation",
    "JitConfig",
    "NoGradientRuleError",
    "NoSourceError",
    "NoTangentRuleError",
    "PYNATIVE_MODE",
    "Parameter",
    "ParameterTuple",
    "Tensor",
    "UnsupportedSyntaxError",
    "adjoint",
    "adjoint_attr",
    "adjoint_method",
    "bool_",
    "byte",
    "cache_stats",
    "check_grads",
    "clear_cache",
    "common",
    "complex128",
    "complex64",
    "constexpr",
    "context",
    "d",
    "debug",
    "double",
    "dtype",
    "dtype_to_nptype",
    "dtype_to_pytype",
    "float16",
    "float32",
    "float64",
    "get_context",
    "get_grad",
    "get_seed",
    "grad",
    "half",
    "hessian",
    "initializer",
    "int16",
    "int32",
    "int64",
    "int8",
    "intc",
    "intp",
    "jacfwd",
    "jacrev",
    "jit",
    "jit_class",
    "jvp",
    "load_checkpoint",
    "load_param_into_net",
    "ms_class",
    "ms_function",
    "mutable",
    "nn",
    "nondifferentiable",
    "ops",
    "pytype_to_dtype",
    "save_checkpoint",
    "set_context",
    "set_seed",
    "short",
    "single",
    "source",
    "stages",
    "stop_gradient",
    "tensor",
    "ubyte",
    "uint16",
    "uint32",
    "uint64",
    "uint8",
    "uintc",
    "uintp",
    "ushort",
    "value_and_grad",
    "vjp",
    "vmap",
    "jet",
    "derivative",
]
