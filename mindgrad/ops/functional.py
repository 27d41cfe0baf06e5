"""``mindgrad.ops.functional``: the names of MindSpore's ``mindspore.ops.functional``
that mindgrad has."""

from mindgrad.mindspore import facade as _facade
from mindgrad.mindspore import ops as _ops

_facade.fill(globals(), "mindspore.ops.functional", _ops)
