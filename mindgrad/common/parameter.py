"""``mindgrad.common.parameter``: the names of MindSpore's ``mindspore.common.parameter``
that mindgrad has."""

import mindgrad.mindspore.cell as _source
from mindgrad.mindspore import facade as _facade

_facade.fill(globals(), "mindspore.common.parameter", _source)
