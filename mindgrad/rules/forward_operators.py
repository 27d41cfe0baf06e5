"""Tangent (forward-mode) rules for Python's operators, their NumPy ufunc twins and the
primitives of ``mindgrad.ops``.

A tangent rule writes ``d[out] = f(d[x])``, one input tangent per statement, linear in it. The
transformer accumulates the statements of one call with ``+``: tangents of lists, tuples and
dicts that several statements contribute to are built as ``TangentList``/``TangentTuple``/
``TangentDict``, which add element by element (plain lists and tuples would concatenate).
"""

import operator

import numpy as np

from mindgrad.rules import d, tangent
from mindgrad.runtime.tangents import add_tangent, broadcast_tangent

# ----- addition and subtraction ------------------------------------------------------------


@tangent(operator.add, np.add)
def _(out, x, y):
    d[out] = add_tangent(d[x], out, (), y)
    d[out] = add_tangent(d[y], out, x, ())


@tangent(operator.sub, np.subtract)
def _(out, x, y):
    d[out] = broadcast_tangent(d[x], out)
    d[out] = broadcast_tangent(-d[y], out)


@tangent(operator.neg, np.negative)
def _(out, x):
    d[out] = -d[x]


@tangent(operator.pos, np.positive)
def _(out, x):
    d[out] = d[x]


# ----- products and quotients --------------------------------------------------------------


@tangent(operator.mul, np.multiply)
def _(out, x, y):
    d[out] = d[x] * y
    d[out] = x * d[y]


@tangent(operator.truediv, np.divide, np.true_divide)
def _(out, x, y):
    d[out] = d[x] / y
    d[out] = -d[y] * out / y


@tangent(operator.pow, np.power)
def _(out, x, y):
    d[out] = d[x] * y * x ** (y - 1)
    d[out] = d[y] * out * np.log(np.where(x == 0, 1, x))


@tangent(operator.mod, np.mod, np.remainder)
def _(out, x, y):
    d[out] = broadcast_tangent(d[x], out)
    d[out] = -d[y] * np.floor_divide(x, y)


# ----- matrix product ----------------------------------------------------------------------


@tangent(operator.matmul, np.matmul)
def _(out, x, y):
    d[out] = np.matmul(d[x], y)
    d[out] = np.matmul(x, d[y])
