"""``mindgrad.common``: MindSpore's ``mindspore.common``, with its submodules ``dtype``,
``tensor``, ``parameter``, ``initializer`` and ``api`` (``jit``), and ``mutable``."""

import mindgrad.mindspore as _ms
from mindgrad.mindspore import facade as _facade

_facade.fill(globals(), "mindspore.common", _ms, _ms.dtype)

from mindgrad.common import (  # noqa: E402  (MindSpore's submodules, after the names)
    api,
    dtype,
    initializer,
    parameter,
    tensor,
)

__all__ = __all__ + ["api", "dtype", "initializer", "parameter", "tensor"]  # noqa: F821  (set by fill)
