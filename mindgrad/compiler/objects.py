"""What the compiler and the API know of the objects a program computes with.

A *module* (MindSpore's ``Cell``) holds weights and sub-modules and computes in its
``construct`` method; a *module list* (``CellList``) is a sequence of modules that a loop in
``construct`` unrolls; a *weight* (``Parameter``) is an array with an identity whose gradient
``grad(..., weights=...)`` can ask for; a *primitive* (``ops.MatMul``) is a class whose
instances are configured once by constant arguments and then called, so one made where it is
called (``P.MatMul()(x, y)``) may be made once, when the code is built. The classes live in the
MindSpore layer above, which registers them here (``register``); the layers below ask these
predicates and never import it.
"""

from __future__ import annotations

_modules: tuple = ()
_module_lists: tuple = ()
_weights: tuple = ()
_primitives: tuple = ()


def register(*, module=None, module_list=None, weight=None, primitive=None):
    """Declare classes as modules, module lists, weights or primitives (idempotent)."""
    global _modules, _module_lists, _weights, _primitives
    if primitive is not None and primitive not in _primitives:
        _primitives += (primitive,)
    if module is not None and module not in _modules:
        _modules += (module,)
    if module_list is not None and module_list not in _module_lists:
        _module_lists += (module_list,)
    if weight is not None and weight not in _weights:
        _weights += (weight,)


def is_module(obj) -> bool:
    return isinstance(obj, _modules)


def is_module_list(obj) -> bool:
    return isinstance(obj, _module_lists)


def is_weight(obj) -> bool:
    return isinstance(obj, _weights)


def is_primitive_class(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, _primitives)


def is_weight_class(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, _weights)
