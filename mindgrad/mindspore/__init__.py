"""MindSpore's names on mindgrad: ``nn`` (``Cell``, ``Parameter``, layers), ``ops`` (primitives,
``GradOperation``), ``Tensor`` and ``dtype``. Nothing below this layer imports it: the classes it
defines register with ``mindgrad.compiler.objects``. ``mindgrad.nn``, ``mindgrad.ops`` and
``mindgrad.dtype`` are these modules."""

from mindgrad.mindspore import dtype, nn, ops
from mindgrad.mindspore.grad_operation import GradOperation
from mindgrad.mindspore.nn import Cell, Parameter, ParameterTuple
from mindgrad.mindspore.tensor import Tensor

__all__ = ["Cell", "GradOperation", "Parameter", "ParameterTuple", "Tensor", "dtype", "nn", "ops"]
