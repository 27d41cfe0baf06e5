"""MindSpore's ``ops`` namespace (``mindgrad.ops``): the primitives the migration documents use
(with gradient rules below), ``GradOperation``, ``stop_gradient``, the functional gradients
(``grad``, ``value_and_grad``, ``jvp``, ``vjp``, ``jacfwd``, ``jacrev``), and, gathered from
their modules, the functional operators (``functional``, ``nn_functional``), the constructors
(``creation``) and
the other primitive classes (``primitives``).

A primitive here is a small callable class; its gradient rule is registered for the class, and
receives the instance first (``def _(out, op, x, y)``), so attributes such as ``transpose_a``
are honoured.
"""

from __future__ import annotations

import numpy as np

from mindgrad.api.functional import jvp, vjp
from mindgrad.api.gradients import get_grad, grad, stop_gradient, value_and_grad
from mindgrad.api.jacobians import jacfwd, jacrev
from mindgrad.api.mapping import vmap
from mindgrad.api.taylor import derivative, jet
from mindgrad.compiler import objects
from mindgrad.mindspore import creation, functional, nn_functional, primitives
from mindgrad.mindspore.composite import HyperMap, Map, MultitypeFuncGraph
from mindgrad.mindspore.creation import *  # noqa: F403  (MindSpore's constructors)
from mindgrad.mindspore.functional import *  # noqa: F403  (MindSpore's functional operators)
from mindgrad.mindspore.grad_operation import GradOperation
from mindgrad.mindspore.nn_functional import *  # noqa: F403  (activations and losses)
from mindgrad.mindspore.primitives import *  # noqa: F403  (MindSpore's primitive classes)
from mindgrad.rules import adjoint, d, tangent
from mindgrad.runtime import (
    is_zero,
    unbroadcast,
    unreduce,
    zero,
    zero_in,
    zero_in_zero_out,
    zero_tangent,
)
from mindgrad.runtime.tangents import TangentTuple, broadcast_tangent, summable

__all__ = [
    "Add",
    "GradOperation",
    "HyperMap",
    "Map",
    "MultitypeFuncGraph",
    "derivative",
    "jet",
    "vmap",
    "MatMul",
    "Mul",
    "ReduceMean",
    "ReduceSum",
    "Sub",
    "get_grad",
    "grad",
    "jacfwd",
    "jacrev",
    "jvp",
    "stop_gradient",
    "value_and_grad",
    "vjp",
]
__all__ += functional.__all__ + nn_functional.__all__ + creation.__all__ + primitives.__all__


class MatMul:
    """``MatMul(transpose_a=False, transpose_b=False)(x, y)``: a matrix product."""

    def __init__(self, transpose_a=False, transpose_b=False):
        self.transpose_a = transpose_a
        self.transpose_b = transpose_b

    @zero_in_zero_out("x", "y")  # np.matmul of a symbolic zero is the zero: the tangent rule
    def __call__(self, x, y):
        return np.matmul(x.T if self.transpose_a else x, y.T if self.transpose_b else y)


@zero_in_zero_out("g")
def matmul_op_grads(g, op, x, y):
    """Gradients of ``MatMul(transpose_a, transpose_b)(x, y)`` for x and y."""
    if zero_in(g):
        return zero
    if is_zero(g):
        return 0, 0
    a = x.T if op.transpose_a else x
    b = y.T if op.transpose_b else y
    ga, gb = g @ b.T, a.T @ g
    return (ga.T if op.transpose_a else ga), (gb.T if op.transpose_b else gb)


@adjoint(MatMul)
def _(out, op, x, y):
    d[x] = matmul_op_grads(d[out], op, x, y)[0]
    d[y] = matmul_op_grads(d[out], op, x, y)[1]


@tangent(MatMul)
def _(out, op, x, y):
    d[out] = op(d[x], y)
    d[out] = op(x, d[y])


class Mul:
    """``Mul()(x, y)``: an elementwise product."""

    @zero_in_zero_out("x", "y")  # np.multiply of a symbolic zero is the zero
    def __call__(self, x, y):
        return np.multiply(x, y)


@adjoint(Mul)
def _(out, op, x, y):
    d[x] = unbroadcast(d[out] * y, x)
    d[y] = unbroadcast(d[out] * x, y)


@tangent(Mul)
def _(out, op, x, y):
    d[out] = op(d[x], y)
    d[out] = op(x, d[y])


class Add:
    def __call__(self, x, y):
        return np.add(x, y)


@adjoint(Add)
def _(out, op, x, y):
    d[x] = unbroadcast(d[out], x)
    d[y] = unbroadcast(d[out], y)


@tangent(Add)
def _(out, op, x, y):
    d[out] = broadcast_tangent(d[x], out)
    d[out] = broadcast_tangent(d[y], out)


class Sub:
    def __call__(self, x, y):
        return np.subtract(x, y)


@adjoint(Sub)
def _(out, op, x, y):
    d[x] = unbroadcast(d[out], x)
    d[y] = unbroadcast(-d[out], y)


@tangent(Sub)
def _(out, op, x, y):
    d[out] = broadcast_tangent(d[x], out)
    d[out] = broadcast_tangent(-d[y], out)


def _axis(axis):
    return None if axis == () else axis


class ReduceSum:
    """``ReduceSum(keep_dims=False)(x, axis=())``: a sum over ``axis`` (all axes for ``()``)."""

    def __init__(self, keep_dims=False):
        self.keep_dims = keep_dims

    @zero_in_zero_out("x")  # np.sum of a symbolic zero is the zero
    def __call__(self, x, axis=()):
        return np.sum(x, axis=_axis(axis), keepdims=self.keep_dims)


@zero_in_zero_out("g")
def reduce_op_grad(g, op, x, axis, mean=False):
    """Gradient of ``ReduceSum``/``ReduceMean`` for x."""
    if zero_in(g):
        return zero
    grad = unreduce(g, x, _axis(axis), op.keep_dims)
    if mean:  # each output averaged size(x) / size(out) inputs
        grad = grad / (np.size(x) / np.size(g))
    return grad


@adjoint(ReduceSum)
def _(out, op, x, axis=()):
    d[x] = reduce_op_grad(d[out], op, x, axis)


class ReduceMean(ReduceSum):
    """``ReduceMean(keep_dims=False)(x, axis=())``: a mean over ``axis``."""

    @zero_in_zero_out("x")  # np.mean of a symbolic zero is the zero
    def __call__(self, x, axis=()):
        return np.mean(x, axis=_axis(axis), keepdims=self.keep_dims)


@adjoint(ReduceMean)
def _(out, op, x, axis=()):
    d[x] = reduce_op_grad(d[out], op, x, axis, mean=True)


@tangent(ReduceSum, ReduceMean)  # linear: the same reduction of the tangent
def _(out, op, x, axis=()):
    d[out] = op(d[x], axis)


for _primitive in (MatMul, Mul, Add, Sub, ReduceSum):  # ReduceMean is a ReduceSum
    objects.register(primitive=_primitive)

# ----- tangents of the gradient helpers above (forward over reverse) -----------------------


@zero_in_zero_out("g", "t")
def matmul_op_grads_tangent(g, op, x, y, t, wrt):
    """Tangent of ``matmul_op_grads(g, op, x, y)`` from ``x`` (wrt 0) or ``y`` (1): only the
    other factor's gradient depends on it."""
    if zero_in(g, t):
        return zero
    if wrt == 0:
        grads = matmul_op_grads(g, op, t, y)
        return TangentTuple((zero_tangent(grads[0]), grads[1]))
    grads = matmul_op_grads(g, op, x, t)
    return TangentTuple((grads[0], zero_tangent(grads[1])))


@tangent(matmul_op_grads)
def _(out, g, op, x, y):
    d[out] = summable(matmul_op_grads(d[g], op, x, y))
    d[out] = matmul_op_grads_tangent(g, op, x, y, d[x], 0)
    d[out] = matmul_op_grads_tangent(g, op, x, y, d[y], 1)


@tangent(reduce_op_grad)
def _(out, g, op, x, axis, mean=False):
    d[out] = reduce_op_grad(d[g], op, x, axis, mean)
