"""MindSpore's names on mindgrad: ``nn`` (Cells, Parameters, layers, losses, optimizers),
``ops`` (functional operators, primitives, ``GradOperation``), ``Tensor``, ``dtype``, the
context (``set_context``, ``jit``) and checkpoints. Nothing below this layer imports it: the
classes it defines register with ``mindgrad.compiler.objects`` and ``mindgrad.api``.
``mindgrad.nn``, ``mindgrad.ops`` and ``mindgrad.dtype`` are these modules."""

from mindgrad.mindspore import dtype, initializer, nn, ops
from mindgrad.mindspore.cell import Cell, Parameter, ParameterTuple
from mindgrad.mindspore.checkpoint import load_checkpoint, load_param_into_net, save_checkpoint
from mindgrad.mindspore.context import (
    GRAPH_MODE,
    PYNATIVE_MODE,
    JitConfig,
    constexpr,
    get_context,
    get_seed,
    jit,
    jit_class,
    ms_class,
    ms_function,
    mutable,
    set_context,
    set_seed,
)
from mindgrad.mindspore.grad_operation import GradOperation
from mindgrad.mindspore.tensor import Tensor, tensor

__all__ = ["GRAPH_MODE", "PYNATIVE_MODE", "Cell", "GradOperation", "JitConfig", "Parameter",
           "ParameterTuple", "Tensor", "constexpr", "dtype", "get_context", "get_seed",
           "initializer", "jit", "jit_class", "load_checkpoint", "load_param_into_net",
           "ms_class", "ms_function", "mutable", "nn", "ops", "save_checkpoint", "set_context",
           "set_seed", "tensor"]
