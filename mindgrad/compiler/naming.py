"""The names generated code uses, in one place.

Every name a transformation writes is readable and says what it holds:

* the functions: ``grad_f`` (the gradient entry of ``f``), ``jvp_f`` (its tangent entry),
  ``f_forward`` and ``f_backward`` (the split functions of a callee, or what ``vjp`` runs),
  ``f_jvp`` (a callee's tangent function); a Cell's functions carry its class name;
* the variables: ``d_x`` (the adjoint of ``x``; ``d_self_w`` of the weight ``self.w``),
  ``t_x`` (the tangent of ``x``), ``tape`` (the values the backward sweep restores),
  ``y_tape`` (the tape a callee's forward function returned for ``y``), ``sens`` (the output
  sensitivity an entry takes), ``n_iter`` (how many times a loop ran), ``k`` (a loop index);
* the parts of a gradient a helper splits off: ``d_x_head``/``d_x_tail`` (of a concatenation),
  ``d_xs_item`` (of an appended item), ``d_y_new`` (of an index-assigned value),
  ``d_x_square`` (what the callee ``square`` gives its argument ``x``).

``NameGen`` makes each name fresh: a clash with a name the function already uses gets a number
(``d_x2``). ``Namespace`` holds the names of one generated function: its fresh locals and the
names under which it reaches objects (helpers, rule functions, callees).
"""

from __future__ import annotations

import builtins
import keyword
import types

import gast

from mindgrad.compiler import astutil as A
from mindgrad.compiler import objects

_MISSING = object()

# the variables every generated function may hold
TAPE = "tape"
SENSITIVITY = "sens"
ITERATIONS = "n_iter"
INDEX = "k"
COPIES = "copies"          # the backward sweep's {id: private copy} (see reverse.private)
RESULT_ADJOINT = "d_result"  # a split backward function's input, when the result is constant


class NameGen:
    """Fresh, readable local names that clash with nothing the function already uses."""

    def __init__(self, taken=()):
        self.taken = set(taken)

    @property
    def taken(self) -> set:
        return self._taken

    @taken.setter
    def taken(self, names):
        self._taken = names
        self._next = {}  # base -> the first suffix not yet handed out

    def reserve(self, names):
        self.taken.update(names)

    def __call__(self, base: str) -> str:
        base = "".join(c if ("_" + c).isidentifier() else "_" for c in str(base)) or "t"
        if base[0].isdigit() or keyword.iskeyword(base) or hasattr(builtins, base):
            base = base + "_" if not base[0].isdigit() else "_" + base
        n = self._next.get(base, 1)
        candidate = base if n == 1 else f"{base}{n}"
        while candidate in self.taken:
            n += 1
            candidate = f"{base}{n}"
        self._next[base] = n
        self.taken.add(candidate)
        return candidate


class Namespace:
    """The names of one generated function's code: fresh local names (``fresh``), and the names
    under which it reaches objects (``bind``): helpers, rule functions, defaults, callees. The
    user's own name is kept where it already denotes the object (``np``); otherwise a fresh name
    is bound in the compiled function's closure (``bindings``)."""

    def __init__(self, src, local_names: set, fresh: NameGen):
        self.src = src
        self.local_names = local_names  # the function's locals: a set its pass extends
        self.fresh = fresh
        self.bindings = {}              # name -> the object the compiled code reaches by it
        self._bound = {}                # id(object) -> its name

    def bind(self, obj, preferred: str) -> str:
        """A name under which the generated code reaches ``obj``."""
        if A.is_identifier(preferred) and self.src.resolve(preferred, _MISSING) is obj and \
                preferred not in self.local_names:
            return preferred
        key = id(obj)
        if key in self._bound:
            return self._bound[key]
        name = self.fresh(preferred)
        self.bindings[name] = obj
        self._bound[key] = name
        return name

    def bound(self, obj):
        """The name the generated code reaches ``obj`` by through a binding of its own, or
        None (not bound, or reached by the user's own name for it)."""
        return self._bound.get(id(obj))

    def helper(self, fn) -> gast.Name:
        """A load of the runtime helper ``fn``."""
        return A.load(self.bind(fn, fn.__name__))

    def resolver(self, local_names):
        """``resolve(node)``: the object a name or a module attribute of the generated code
        refers to (a binding, or the user's own name), or None (one of ``local_names``, or
        unknown)."""
        def resolve(node):
            if isinstance(node, gast.Name):
                if node.id in local_names:
                    return None
                if node.id in self.bindings:
                    return self.bindings[node.id]
                return self.src.resolve(node.id, None)
            if isinstance(node, gast.Attribute):
                base = resolve(node.value)
                return getattr(base, node.attr, None) if isinstance(base, types.ModuleType) \
                    else None
            return None
        return resolve


# ----- functions -------------------------------------------------------------------------------


def label(name: str, obj=None) -> str:
    """What the generated functions of the function ``name`` (bound to ``obj``) are named
    after: a Cell's class name, else ``name``."""
    return type(obj).__name__ if objects.is_module(obj) else name


def gradient_entry(label: str) -> str:
    return "grad_" + label


def tangent_entry(label: str) -> str:
    return "jvp_" + label


def split_functions(label: str) -> tuple[str, str]:
    return label + "_forward", label + "_backward"


def tangent_callee(label: str) -> str:
    return label + "_jvp"


# ----- variables -------------------------------------------------------------------------------


def flat(key: str) -> str:
    """A name's key as part of a variable name: ``self.w`` -> ``self_w``."""
    return key.replace(".", "_")


def adjoint(key: str) -> str:
    return "d_" + flat(key)


def tangent(key: str) -> str:
    return "t_" + flat(key)


def callee_tape(name: str) -> str:
    return f"{name}_tape"


def kept_result(name: str) -> str:
    """The entry's copy of its result, when the backward sweep restores the name."""
    return name + "_out"


def concatenation_parts(name: str) -> list[str]:
    return [f"d_{name}_head", f"d_{name}_tail"]


def appended_item(base: str) -> str:
    return f"d_{base}_item"


def assigned_item(base: str) -> str:
    return f"d_{base}_new"


def callee_part(key: str, callee_label: str) -> str:
    """The gradient the callee ``callee_label`` gives its argument (or weight) ``key``."""
    return f"d_{flat(key)}_{callee_label}"


def bprop_part(cell) -> str:
    return f"d_{object_label(cell)}_bprop"


def object_label(obj) -> str:
    """A Parameter's or a Cell's name (else its class name) as part of a variable name."""
    name = getattr(obj, "name", None) or type(obj).__name__
    return "".join(c if c.isalnum() else "_" for c in str(name))
