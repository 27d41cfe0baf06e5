"""``mindgrad.common.dtype``: the names of MindSpore's ``mindspore.common.dtype``
that mindgrad has."""

import mindgrad.mindspore.dtype as _source
from mindgrad.mindspore import facade as _facade

_facade.fill(globals(), "mindspore.common.dtype", _source)
