"""``mindgrad.nn``: MindSpore's ``mindspore.nn`` (Cells, Parameters, layers, losses,
optimizers, wrapper Cells). The names live in the MindSpore layer (``mindgrad.mindspore.nn``)."""

from mindgrad.mindspore import facade as _facade
from mindgrad.mindspore import nn as _nn

_facade.fill(globals(), "mindspore.nn", _nn, everything=True)
