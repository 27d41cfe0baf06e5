"""``mindgrad.ops.function``: the names of MindSpore's ``mindspore.ops.function``
that mindgrad has."""

from mindgrad.mindspore import facade as _facade
from mindgrad.mindspore import ops as _ops

_facade.fill(globals(), "mindspore.ops.function", _ops)
