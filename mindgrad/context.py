"""``mindgrad.context``: MindSpore's ``mindspore.context`` (``set_context``, ``get_context``,
``GRAPH_MODE``, ``PYNATIVE_MODE``)."""

from mindgrad.mindspore import context as _context
from mindgrad.mindspore import facade as _facade

_facade.fill(globals(), "mindspore.context", _context)
