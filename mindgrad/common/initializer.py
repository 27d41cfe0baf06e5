"""``mindgrad.common.initializer``: the names of MindSpore's ``mindspore.common.initializer``
that mindgrad has."""

import mindgrad.mindspore.initializer as _source
from mindgrad.mindspore import facade as _facade

_facade.fill(globals(), "mindspore.common.initializer", _source)
