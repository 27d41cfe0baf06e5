"""mindgrad's own API met inside code being differentiated, expanded when that code is built.

The API sits above the compiler and registers here how its objects expand; the compiler reads
this module and never imports the API.

* A gradient object (what ``grad`` or ``jacrev`` returns) carries the method
  ``__mindgrad_python__(args, nargs)``: a Python function with source computing what calling
  the object computes, so that it can be differentiated again. ``python_of`` calls it.
* ``mindgrad.jvp(f, inputs, v)`` written in differentiated code becomes a call of ``f``'s
  tangent code, written as Python by the function registered with ``register_jvp``.
* ``grad(g, ...)`` and ``value_and_grad(g, ...)`` called in place with arguments known before
  the run are built then (``register_gradient_maker``); so is ``self.grad_op(self.net)(x)``
  for a ``GradOperation`` held by a Cell, whose class is registered.
"""

from __future__ import annotations

_JVP: dict = {}       # id(jvp) -> (jvp, tangent_as_python(fn, positions, nargs))
_VJP: dict = {}       # id(vjp) -> (vjp, pullback_gradient(fn, n))
_MAKERS: list = []    # grad, value_and_grad
_DYNAMIC: dict = {}   # call_split, call_tangent and their _starred forms (mindgrad.api.dynamic)


def python_of(obj, args=None, nargs=None, keywords=()):
    """``obj`` as a Python function with source (``args``: the call's arguments, or None with
    the count ``nargs`` of its positional arguments and the names ``keywords`` of the others
    when they are not known yet), or None when ``obj`` is not a gradient object."""
    method = getattr(type(obj), "__mindgrad_python__", None)
    return None if method is None else method(obj, args, nargs, tuple(keywords))


def is_gradient_object(obj) -> bool:
    """Whether ``obj`` is a gradient object (``python_of`` gives it as Python)."""
    return getattr(type(obj), "__mindgrad_python__", None) is not None


def register_vjp(vjp, pullback_gradient):
    _VJP[id(vjp)] = (vjp, pullback_gradient)


def vjp_expander(fn):
    """When ``fn`` is mindgrad's ``vjp``, ``pullback_gradient(f, n)``: the gradient function
    (``sens_param``, a tuple over ``n`` inputs) whose call ``(x1, ..., xn, v)`` is what the
    pullback of ``vjp(f, x1, ..., xn)`` gives for ``v``; else None."""
    entry = _VJP.get(id(fn))
    return entry[1] if entry is not None and entry[0] is fn else None


def register_jvp(jvp, tangent_as_python):
    _JVP[id(jvp)] = (jvp, tangent_as_python)


def jvp_expander(fn):
    """``tangent_as_python`` when ``fn`` is mindgrad's ``jvp``, else None."""
    entry = _JVP.get(id(fn))
    return entry[1] if entry is not None and entry[0] is fn else None


def register_gradient_maker(*makers):
    """Declare functions (``grad``) or classes whose instances (MindSpore's ``GradOperation()``)
    make gradient functions when called with the function to differentiate."""
    _MAKERS.extend(makers)


def is_gradient_maker(fn) -> bool:
    return any(fn is maker or isinstance(maker, type) and isinstance(fn, maker)
               for maker in _MAKERS)


def register_dynamic(**functions):
    _DYNAMIC.update(functions)


def dynamic_split(starred=False):
    """``call_split(fn, positions, *args, **kw)``: a callee's generated ``(forward,
    backward)`` for a call of a function the code reaches only when it runs;
    ``call_split_starred(fn, stars, positions, *args, **kw)`` where it spreads the sequences
    at ``stars``."""
    return _DYNAMIC["call_split_starred" if starred else "call_split"]


def dynamic_tangent(starred=False):
    """``call_tangent(fn, positions, *args, **kw)`` (``call_tangent_starred(fn, stars,
    ...)``): its tangent function, which takes the tangents by the keywords
    ``dynamic_tangent_names(positions)``."""
    return _DYNAMIC["call_tangent_starred" if starred else "call_tangent"]


def dynamic_tangent_names(positions):
    """The keywords ``call_tangent``'s function takes the tangents at ``positions`` by: its
    dispatcher's trampoline names a positional parameter ``x<i>``, a keyword's ``k_<name>``,
    and the tangent code names a parameter's tangent ``t_<parameter>``."""
    return [f"t_x{p}" if p.__class__ is int else f"t_k_{p}" for p in positions]
