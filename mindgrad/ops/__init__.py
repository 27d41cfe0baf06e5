"""``mindgrad.ops``: MindSpore's ``mindspore.ops``, a package with MindSpore's submodules:
``operations`` (the primitive classes, ``P``), ``composite`` (``GradOperation``,
``MultitypeFuncGraph``, ``HyperMap``, ``C``), ``functional`` (``F``), ``function`` and
``primitive``. The names live in the MindSpore layer (``mindgrad.mindspore.ops``)."""

from mindgrad.mindspore import facade as _facade
from mindgrad.mindspore import ops as _ops

_facade.fill(globals(), "mindspore.ops", _ops, everything=True)

from mindgrad.ops import (  # noqa: E402  (MindSpore's submodules, after the names)
    composite,
    function,
    functional,
    operations,
    primitive,
)

__all__ = __all__ + ["composite", "function", "functional", "operations", "primitive"]  # noqa: F821  (set by fill)
