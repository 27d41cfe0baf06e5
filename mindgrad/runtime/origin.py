"""Where a function, class or module comes from: the one classifier the compiler, the rules and
the runtime ask, instead of each testing ``__module__`` strings of its own.

Homes are registered explicitly, by module name (``register_home``): a function's home is the
longest registered module that holds its ``__module__`` (``numpy.linalg`` is NumPy's,
``mindgrad.rules.numpy_linalg`` the rules'). A NumPy ufunc, which has no ``__module__`` on
every NumPy, is NumPy's where ``numpy`` exports it and SciPy's where ``scipy.special`` does.
Anything else is ``Origin.OTHER``: the user's code, or a library mindgrad has no rules for.

Used for:

* which functions the compiler follows into (the user's Python functions, not NumPy's);
* which methods the rules describe (those of NumPy's and the builtins' types);
* which helpers generated code calls (the runtime's and the rules', never followed);
* whether a source is mindgrad's own (grad of grad reads generated code and the helpers).
"""

from __future__ import annotations

import enum
import sys
import types

import numpy as np


class Origin(enum.Enum):
    NUMPY = "numpy"
    MATH = "math"
    BUILTINS = "builtins"
    OPERATOR = "operator"  # Python's operators as functions (operator.add)
    SCIPY = "scipy"
    RUNTIME = "mindgrad.runtime"  # what generated code calls
    RULES = "mindgrad.rules"  # the helpers and templates of the rules
    MINDGRAD = "mindgrad"  # the rest of mindgrad
    OTHER = "other"  # the user's code, and libraries without rules

    @property
    def is_mindgrad(self) -> bool:
        return self in (Origin.RUNTIME, Origin.RULES, Origin.MINDGRAD)


_HOMES: dict[str, Origin] = {
    "numpy": Origin.NUMPY,
    "math": Origin.MATH,
    "builtins": Origin.BUILTINS,
    "operator": Origin.OPERATOR,
    "_operator": Origin.OPERATOR,
    "scipy": Origin.SCIPY,
    "mindgrad": Origin.MINDGRAD,
    "mindgrad.runtime": Origin.RUNTIME,
    "mindgrad.rules": Origin.RULES,
}


def register_home(module_name: str, origin: Origin) -> None:
    """Declare that ``module_name`` and the modules inside it are ``origin``'s home."""
    if not isinstance(origin, Origin):
        raise TypeError(f"origin must be an Origin, not {type(origin).__name__}")
    _HOMES[module_name] = origin


def module_name_of(obj) -> str:
    """The module ``obj`` says it is defined in (``numpy.linalg``), or ``""``; a ufunc's (and
    its methods') is the module that exports it (``numpy``, ``scipy.special``)."""
    owner = getattr(obj, "__self__", None)
    if isinstance(owner, np.ufunc):  # np.add.reduce is NumPy's as np.add is
        obj = owner
    if isinstance(obj, np.ufunc):
        name = getattr(obj, "__name__", None)
        if getattr(np, name, None) is obj:
            return "numpy"
        special = sys.modules.get("scipy.special")
        if special is not None and getattr(special, name, None) is obj:
            return "scipy.special"
        return ""
    module = getattr(obj, "__module__", None)
    return module if isinstance(module, str) else ""


def home_of(module_name: str) -> Origin:
    """The origin of the module named ``module_name``."""
    name = module_name
    while name:
        if name in _HOMES:
            return _HOMES[name]
        name = name.rpartition(".")[0]
    return Origin.OTHER


def origin(obj) -> Origin:
    """Where the function, class or module ``obj`` comes from."""
    if isinstance(obj, types.ModuleType):
        return home_of(obj.__name__)
    return home_of(module_name_of(obj))


def within(obj, *module_names: str) -> bool:
    """Whether ``obj`` is defined in one of ``module_names`` or in a module inside one
    (``within(np.fft.rfft, "numpy.fft")``)."""
    module = module_name_of(obj)
    return any(module == m or module.startswith(m + ".") for m in module_names)
