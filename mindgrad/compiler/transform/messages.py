"""How the transformations name a function, an expression or a missing rule in their errors."""

from __future__ import annotations

import inspect

import gast

from mindgrad.compiler.finish.emit import unparse
from mindgrad.compiler.front.source import foreign_library
from mindgrad.runtime.origin import Origin, home_of


def describe(fn) -> str:
    """How an error message names the function ``fn`` (``np.sin``, ``operator.add``,
    ``np.add.reduce``, ``scipy.special.expit``): as the code registering a rule for it would."""
    import sys

    import numpy as np

    if isinstance(fn, str):
        return fn
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, np.ufunc):  # a method of a ufunc: a rule is keyed by np.add.reduce
        return f"{describe(owner)}.{fn.__name__}"
    if isinstance(fn, np.ufunc):  # ufuncs have no __module__: find the module exporting them
        for prefix, module in (("np", np), ("scipy.special", sys.modules.get("scipy.special"))):
            if module is not None and getattr(module, fn.__name__, None) is fn:
                return f"{prefix}.{fn.__name__}"
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    while "." in module and module.rsplit(".", 1)[1].startswith("_") and \
            getattr(sys.modules.get(module.rsplit(".", 1)[0]), name, None) is fn:
        module = module.rsplit(".", 1)[0]  # where users import it: scipy.integrate.trapezoid
    if home_of(module) is Origin.NUMPY:
        module = "np" + module[5:]
        if module.startswith(("np._core", "np.core")):
            module = "np"
    if module in ("builtins", "_operator"):
        return ("operator." if module == "_operator" else "") + name
    if module in ("", None):
        return name
    return f"{module}.{name}"


def no_rule(fn, direction="gradient") -> str:
    """Why a call of ``fn`` cannot be differentiated in ``direction`` ("gradient" or "tangent")
    and the rule that would do it: ``fn`` is another library's code (``foreign_library``: not
    followed into), or has no Python source."""
    label = describe(fn)
    library = foreign_library(fn)
    if library is not None:
        code = fn.__code__
        why = (f"it is code of another library, {library} ({code.co_filename}:"
               f"{code.co_firstlineno}), which mindgrad does not follow into")
    else:
        why = "it has no Python source to differentiate"
    out, params = _template_parameters(fn)
    first = params.split(",")[0].split("=")[0].lstrip("*") or "x"
    if direction == "tangent":
        return (f"{label} has no tangent (forward-mode) rule, and {why}; register one with\n"
                f"    @mindgrad.rules.tangent({label})\n    def _({out}, {params}):\n"
                f"        d[{out}] = ...  # the tangent of {out} from d[{first}]")
    return (f"{label} has no gradient rule, and {why}; register one with\n"
            f"    @mindgrad.adjoint({label})\n    def _({out}, {params}):\n"
            f"        d[{first}] = ...  # the gradient of {first} from d[{out}]")


def _template_parameters(fn):
    """The parameters of a rule template for ``fn``: its output's name and ``fn``'s own
    parameters, defaults included (a ufunc's inputs only)."""
    import numpy as np

    if isinstance(fn, np.ufunc):
        return "out", "x" if fn.nin == 1 else ", ".join(f"x{i + 1}" for i in range(fn.nin))
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return "out", "x"
    params = [p.replace(annotation=p.empty) for p in sig.parameters.values() if p.name != "self"]
    out = next(n for n in ("out", "ans", "result") if n not in {p.name for p in params})
    text = str(sig.replace(parameters=params, return_annotation=sig.empty))[1:-1]
    return out, text or "x"


def source_text(node) -> str:
    """An expression as the user would write it, for error messages."""
    return unparse([gast.Expr(value=node)]).strip()


def reads_self_in_generated_code(src, read) -> bool:
    """Whether ``read`` is ``self.attr`` in mindgrad's generated code (grad of grad): an
    attribute of the object of a Cell or a method the user's function called, carried on the
    tape. It holds what the first derivative read as a constant (a scale, a Parameter), so it
    is one for a derivative with respect to the inputs too; a derivative with respect to
    weights is refused (``no_attribute_rule``)."""
    return src.is_mindgrad_code and isinstance(read.value, gast.Name) and \
        read.value.id == "self"


def no_attribute_rule(src, node, read, message) -> str:
    """``message`` for ``read`` (an attribute read in the statement ``node``) that has no
    rule, unless ``src`` is generated code (grad of grad) reading ``self.attr``: a Cell's or a
    method's, carried on the tape, which second order with respect to weights does not
    support yet (with respect to the inputs it is a constant: ``reads_self_in_generated_code``).
    That message names the user's line whose gradient reads it (the ``# grad of:`` comment
    above ``node``)."""
    if not reads_self_in_generated_code(src, read):
        return message
    attr = read.attr
    origin = ""
    for lineno in range(src.line_of(node), src.first_line - 1, -1):
        text = src.text_of(lineno).strip()
        if text.startswith("# grad of:"):
            origin = f" in the gradient of `{text[len('# grad of:'):].strip()}`"
            break
    return (f"second order (a gradient of a gradient) with respect to weights through a Cell "
            f"or a method called inside the differentiated function is not supported yet: it "
            f"reads self.{attr}{origin}. Second order with respect to the inputs is: leave "
            f"out the weights of the outer gradient")


def closure_given_away(call) -> str:
    """The error for ``Closure(lambda_, x, ...)`` (a lambda or local def reading ``x``) whose
    values move with the input, used as a value (compiler/front/lift.py)."""
    names = ", ".join(source_text(a) for a in call.args[1:])
    return (f"a lambda or local function reading {names}, which the derivative follows, is "
            "used here as a value (passed on or stored): mindgrad follows such a function "
            "where this function calls it or gives it to grad/jvp/vjp, not through another "
            f"object. Pass {names} to it as arguments instead")
