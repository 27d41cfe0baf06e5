"""Truncated Taylor series, for the Taylor code ``mindgrad.jet`` writes.

A series is an array whose axis 0 holds the Taylor coefficients ``c[0], ..., c[K]`` of a value
along a curve ``t -> v(t)``: ``c[k]`` is the ``k``-th derivative at ``t = 0`` over ``k!``. A linear
operation applies to each coefficient alike (the Taylor code writes it as NumPy on the whole
array); each function here is the rule of a nonlinear one, at ``O(K^2)`` per element: the product
is the Cauchy product, and each elementary function follows from the recurrence its
derivative gives (``f' = g(a) a'``: ``f[k] = (1/k) sum_j j a[j] g[k - j]``). Broadcasting is
NumPy's, coefficient by coefficient.
"""

from __future__ import annotations

import numpy as np

from mindgrad.runtime.arrays import as_array


def lift(value, terms):
    """The series of a constant: ``value`` as coefficient 0, zeros after (a tree: each leaf)."""
    if isinstance(value, (tuple, list)):
        return type(value)(lift(v, terms) for v in value)
    if isinstance(value, dict):
        return {k: lift(v, terms) for k, v in value.items()}
    value = as_array(value)
    out = np.zeros((terms,) + value.shape, dtype=np.result_type(value, np.float64)
                   if value.dtype.kind in "biu" else value.dtype)
    out[0] = value
    return out


def _empty(*series):
    """A new series of the broadcast shape of one coefficient of each of ``series``."""
    terms = series[0].shape[0]
    shape = np.broadcast_shapes(*(s.shape[1:] for s in series))
    return np.zeros((terms,) + shape, dtype=np.result_type(*series))


def product(op, a, b):
    """The series of ``op(a, b)`` for a bilinear ``op`` (``*``, ``@``): the Cauchy product."""
    first = op(a[0], b[0])
    out = np.zeros((a.shape[0],) + np.shape(first), dtype=np.result_type(first))
    out[0] = first
    for k in range(1, a.shape[0]):
        out[k] = sum(op(a[j], b[k - j]) for j in range(k + 1))
    return out


def mul(a, b):
    return product(np.multiply, a, b)


def matmul(a, b):
    return product(np.matmul, a, b)


def div(a, b):
    """``a / b``: ``c[k] = (a[k] - sum_{j >= 1} b[j] c[k - j]) / b[0]``."""
    out = _empty(a, b)
    for k in range(out.shape[0]):
        out[k] = (a[k] - sum(b[j] * out[k - j] for j in range(1, k + 1))) / b[0]
    return out


def _integrate(a, g, k):
    """``(1/k) sum_{j=1..k} j a[j] g[k - j]``: coefficient ``k`` of f for ``f' = g a'``."""
    return sum(j * a[j] * g[k - j] for j in range(1, k + 1)) / k


def _solved(a, first, g=None):
    """The series of f, ``f[0] = first``, for ``f' = g a'`` (``g`` None: f itself, as exp)."""
    out = _empty(a)
    out[0] = first
    for k in range(1, out.shape[0]):
        out[k] = _integrate(a, out if g is None else g, k)
    return out


def exp(a):
    return _solved(a, np.exp(a[0]))


def expm1(a):
    out = exp(a)
    out[0] = np.expm1(a[0])
    return out


def log(a):
    """``f' = a' / a``: ``f[k] = (a[k] - (1/k) sum_{j=1..k-1} j f[j] a[k - j]) / a[0]``."""
    out = _empty(a)
    out[0] = np.log(a[0])
    for k in range(1, out.shape[0]):
        out[k] = (a[k] - sum(j * out[j] * a[k - j] for j in range(1, k)) / k) / a[0]
    return out


def log1p(a):
    shifted = a.copy()
    shifted[0] = shifted[0] + 1.0
    out = log(shifted)
    out[0] = np.log1p(a[0])
    return out


def _pair(a, first, second, sign):
    """``f' = g a'``, ``g' = sign f a'``: sin and cos (sign -1), sinh and cosh (sign +1)."""
    f, g = _empty(a), _empty(a)
    f[0], g[0] = first(a[0]), second(a[0])
    for k in range(1, f.shape[0]):
        f[k] = _integrate(a, g, k)
        g[k] = sign * _integrate(a, f, k)
    return f, g


def sin(a):
    return _pair(a, np.sin, np.cos, -1.0)[0]


def cos(a):
    return _pair(a, np.sin, np.cos, -1.0)[1]


def sinh(a):
    return _pair(a, np.sinh, np.cosh, 1.0)[0]


def cosh(a):
    return _pair(a, np.sinh, np.cosh, 1.0)[1]


def tanh(a):
    """``f' = (1 - f^2) a'``, the series of ``1 - f^2`` built alongside."""
    f, g = _empty(a), _empty(a)
    f[0] = np.tanh(a[0])
    g[0] = 1.0 - f[0] * f[0]
    for k in range(1, f.shape[0]):
        f[k] = _integrate(a, g, k)
        g[k] = -sum(f[j] * f[k - j] for j in range(k + 1))
    return f


def sqrt(a):
    """``s^2 = a``: ``s[k] = (a[k] - sum_{j=1..k-1} s[j] s[k - j]) / (2 s[0])``."""
    out = _empty(a)
    out[0] = np.sqrt(a[0])
    for k in range(1, out.shape[0]):
        out[k] = (a[k] - sum(out[j] * out[k - j] for j in range(1, k))) / (2.0 * out[0])
    return out


def power(a, p):
    """``a ** p`` for a constant ``p``: a natural number by products (exact at ``a = 0``), else
    ``y' a = p y a'``: ``y[k] = sum_{j=1..k} (p j - (k - j)) a[j] y[k - j] / (k a[0])``."""
    if np.ndim(p) == 0 and float(p).is_integer() and 0 <= p <= 16:  # 2 and 2.0 alike
        out = lift(np.ones_like(a[0]), a.shape[0])
        for _ in range(int(p)):
            out = mul(out, a)
        return out
    out = _empty(a)
    out[0] = a[0] ** p
    for k in range(1, out.shape[0]):
        out[k] = sum((p * j - (k - j)) * a[j] * out[k - j] for j in range(1, k + 1)) / \
            (k * a[0])
    return out


def arctan(a):
    """``f' = a' / (1 + a^2)``."""
    one = lift(np.ones_like(a[0]), a.shape[0])
    return _solved(a, np.arctan(a[0]), div(one, one + mul(a, a)))


def reciprocal(a):
    return div(lift(np.ones_like(a[0]), a.shape[0]), a)


def square(a):
    return mul(a, a)


#: NumPy's smooth functions of one argument, and their rules here
FUNCTIONS = {np.exp: exp, np.expm1: expm1, np.log: log, np.log1p: log1p, np.sin: sin,
             np.cos: cos, np.sinh: sinh, np.cosh: cosh, np.tanh: tanh, np.sqrt: sqrt,
             np.arctan: arctan, np.reciprocal: reciprocal, np.square: square}
