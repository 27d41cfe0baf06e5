"""The words of the rule templates: ``d`` (``d[x]``, the gradient or tangent of ``x``), ``slope``
(``slope[x]``, an ``@elementwise`` template's ``dout/dx``), the keys of the rules of array
methods and attributes (``Method("sum")``, ``Attr("T")``), and ``RuleError`` for a template that
cannot be used."""

from __future__ import annotations

import gast


class RuleError(Exception):
    """A rule template that cannot be used (malformed, or asked for something it lacks)."""


class _Marker:
    """The ``d`` of rule templates. It only has meaning inside a template: executing it raises."""

    def __getitem__(self, key):
        raise RuntimeError("`d[...]` only has meaning inside a gradient-rule template")

    def __setitem__(self, key, value):
        raise RuntimeError("`d[...]` only has meaning inside a gradient-rule template")

    def __repr__(self):
        return "mindgrad.rules.d"


d = _Marker()


class _SlopeMarker(_Marker):
    """The ``slope`` of ``@elementwise`` templates: ``slope[x] = dout/dx``."""

    def __repr__(self):
        return "mindgrad.rules.slope"


slope = _SlopeMarker()


def active_of(*arguments):
    """In a rule template: the positions, among ``arguments`` (parameters of the template, a
    ``*args`` parameter counting one position per argument it binds), of the arguments that
    take a gradient at the call site, as a tuple of ints the transformer writes into the
    generated code, so a helper computes only the gradients that are read
    (``einsum_args_grads(d[ans], subscripts, operands, active_of(subscripts, operands))``).
    A template evaluated directly (``vjp_of``) gets None: every gradient."""
    return None


def is_d(node) -> bool:
    return isinstance(node, gast.Name) and node.id == "d"


class _NamedKey(tuple):
    """The key of the rules of an array method or attribute, ``(kind, name)``: as a tuple it
    equals and hashes as the pair, so tables keyed by either agree."""

    __slots__ = ()
    kind = ""

    def __new__(cls, name):
        if not isinstance(name, str) or not name.isidentifier():
            raise TypeError(f"{cls.__name__}() takes the name of an array {cls.kind}, "
                            f"got {name!r}")
        return tuple.__new__(cls, (cls.kind, name))

    @property
    def name(self) -> str:
        return self[1]

    def __repr__(self):
        return f"{type(self).__name__}({self[1]!r})"


class Method(_NamedKey):
    """The key of the rules of the array method ``name``: ``@adjoint(Method("sum"))`` is the
    rule of ``x.sum(...)``, its receiver the template's parameter after ``out``."""

    __slots__ = ()
    kind = "method"


class Attr(_NamedKey):
    """The key of the rules of the array attribute ``name``: ``@adjoint(Attr("T"))`` is the
    rule of ``x.T``, ``def _(out, x)``."""

    __slots__ = ()
    kind = "attr"
