"""``mindgrad.common.tensor``: the names of MindSpore's ``mindspore.common.tensor``
that mindgrad has."""

import mindgrad.mindspore.tensor as _source
from mindgrad.mindspore import facade as _facade

_facade.fill(globals(), "mindspore.common.tensor", _source)
