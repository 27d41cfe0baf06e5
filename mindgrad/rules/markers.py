"""The words of the rule templates: ``d`` (``d[x]``, the gradient or tangent of ``x``), ``slope``
(``slope[x]``, an ``@elementwise`` template's ``dout/dx``), and ``RuleError`` for a template that
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


def is_d(node) -> bool:
    return isinstance(node, gast.Name) and node.id == "d"
