"""The gradient-rule registry: one table, one decorator, shared by built-in and user rules.

A rule is a short template, output first, whose body reads like the math it stands for::

    @adjoint(np.tanh)
    def _(out, x):
        d[x] = d[out] * (1.0 - out * out)

``d[out]`` is the gradient flowing into the call's result; ``d[x] = expr`` adds ``expr`` to
the gradient of argument ``x`` (later writes accumulate). The parameters after ``out`` mirror
the differentiated function's own signature, defaults included, so calls with keywords bind as
they would in NumPy. A ``*args`` parameter stands for a tuple of arguments; ``d[args] = (...)``
gives one gradient per argument. The transformer inlines the body into the generated adjoint,
replacing each name by the argument at the call site; statements writing ``d[p]`` for an argument
that needs no gradient are dropped. Names the body reads from its module (``np``,
``unbroadcast``, ...) are resolved to those objects.

Methods and attributes of arrays have rules keyed by their name: ``@adjoint(Method("sum"))``
(the receiver is the parameter after ``out``) and ``@adjoint(Attr("T"))``; the keys go to
``adjoint``, ``tangent`` and ``linear`` like functions (``@adjoint(np.sum, Method("sum"))``).
``adjoint_method("sum")``, ``tangent_attr("T")`` and the like are shorthands for them.

The package's modules: ``markers`` (``d``, ``slope``), ``template`` (a parsed rule,
``Rule``), ``derivation`` (the rules derived from slopes, from linearity and from the adjoint),
``registry`` (the tables, the decorators, the lookups) and ``evaluate`` (``vjp_of``,
``jvp_of``); ``helpers`` holds what several topics share, and every other module is a topic
(``builtin`` imports them).
"""

from mindgrad.rules import registry as _registry
from mindgrad.rules.derivation import scaled
from mindgrad.rules.evaluate import jvp_of, vjp_of
from mindgrad.rules.markers import Attr, Method, RuleError, active_of, d, slope
from mindgrad.rules.registry import (
    DEFERRED,
    adjoint,
    adjoint_attr,
    adjoint_method,
    diagonal,
    elementwise,
    index_call,
    indexed_as_call,
    is_nondifferentiable,
    linear,
    linear_attr,
    linear_in,
    linear_method,
    lookup,
    lookup_attr,
    lookup_method,
    lookup_tangent,
    lookup_tangent_attr,
    lookup_tangent_method,
    nondifferentiable,
    registry_version,
    tangent,
    tangent_attr,
    tangent_method,
    transpose,
    transpose_of,
)
from mindgrad.rules.template import Rule

# the registry's tables and internals, which the catalog and the tests read
_RULES, _TANGENTS, _NONDIFF = _registry._RULES, _registry._TANGENTS, _registry._NONDIFF
_TRANSPOSES = _registry._TRANSPOSES
_DECLARED_IN, _pending = _registry._DECLARED_IN, _registry._pending
_bump, _key, _load_deferred = _registry._bump, _registry._key, _registry._load_deferred

__all__ = [
    "Attr",
    "DEFERRED",
    "Method",
    "Rule",
    "RuleError",
    "active_of",
    "adjoint",
    "adjoint_attr",
    "adjoint_method",
    "d",
    "diagonal",
    "index_call",
    "indexed_as_call",
    "elementwise",
    "is_nondifferentiable",
    "linear",
    "linear_attr",
    "linear_in",
    "linear_method",
    "jvp_of",
    "lookup",
    "lookup_attr",
    "lookup_method",
    "lookup_tangent",
    "lookup_tangent_attr",
    "lookup_tangent_method",
    "nondifferentiable",
    "scaled",
    "registry_version",
    "slope",
    "tangent",
    "tangent_attr",
    "tangent_method",
    "transpose",
    "transpose_of",
    "vjp_of",
]
