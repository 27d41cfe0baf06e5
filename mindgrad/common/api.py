"""``mindgrad.common.api``: the names of MindSpore's ``mindspore.common.api``
that mindgrad has."""

import mindgrad.mindspore.context as _source
from mindgrad.mindspore import facade as _facade

_facade.fill(globals(), "mindspore.common.api", _source)
