"""Rules for ``scipy.signal``: ``convolve`` in both directions, for every ``mode`` (``full``,
``same``, ``valid``) and ``method`` (``auto``, ``direct``, ``fft``: the same map, so the same
derivative), of arrays of any dimension, real or complex.

SciPy is optional: this module is imported by the registry once the program has imported
``scipy.signal`` (``DEFERRED`` in ``mindgrad/rules/registry.py``).

``convolve`` is bilinear: its tangent is ``convolve(d_in1, in2) + convolve(in1, d_in2)`` in the
same mode. Every mode is a window of the full convolution (``same``: centred on ``in1``'s
shape; ``valid``: where one input covers the other, whichever is larger), so its gradient is
the cotangent put in that window of the full output's zeros, then correlated with the other
input (``convolve`` with it reversed on every axis, ``valid``). Complex inputs follow the
README's convention (no conjugation). Both are made of ``convolve`` itself, whose rules give
the higher orders.
"""

import numpy as np
import scipy.signal as ss

from mindgrad.rules import adjoint, d, linear
from mindgrad.rules.helpers import astype_grad
from mindgrad.runtime import zero, zero_in, zero_in_zero_out


def full_window(shape1, shape2, mode):
    """Where ``convolve(in1, in2, mode)`` lies in the full convolution: one ``(start, stop)``
    per axis."""
    window = []
    for n1, n2 in zip(shape1, shape2):
        full = n1 + n2 - 1
        if mode == "full":
            start, size = 0, full
        elif mode == "same":
            start, size = (full - n1) // 2, n1
        else:  # valid: the larger input slides over the smaller, whichever argument it is
            start, size = min(n1, n2) - 1, max(n1, n2) - min(n1, n2) + 1
        window.append((start, start + size))
    return window


def in_full(g, shape1, shape2, mode):
    """The cotangent ``g`` of ``convolve(in1, in2, mode)`` as one of the full convolution:
    zeros outside the window ``mode`` keeps."""
    if mode == "full":
        return g
    window = full_window(shape1, shape2, mode)
    pad = [(start, n1 + n2 - 1 - stop) for (start, stop), n1, n2 in zip(window, shape1, shape2)]
    return np.pad(g, pad)


def reversed_all(x):
    """``x`` reversed along every axis."""
    return np.flip(x, tuple(range(np.ndim(x))))


@zero_in_zero_out("g")
def convolve_grad(g, other, shape1, shape2, mode="full", method="auto"):
    """Gradient of ``convolve(in1, in2, mode)`` for the input paired with ``other`` (pass
    ``in2`` for ``in1``'s, ``in1`` for ``in2``'s): the full cotangent correlated with
    ``other``."""
    if zero_in(g):
        return zero
    return ss.convolve(in_full(g, shape1, shape2, mode), reversed_all(other), "valid", method)


@zero_in_zero_out("in1", "in2")
def linear_convolve(in1, in2, mode="full", method="auto"):
    """``scipy.signal.convolve(in1, in2, mode, method)`` on a tangent, which SciPy would take
    for the number 0 where it is the symbolic zero: the zero for the zero (bilinear)."""
    if zero_in(in1, in2):
        return zero
    return ss.convolve(in1, in2, mode, method)


# bilinear: d[out] = linear_convolve(d[in1], in2, ...) and linear_convolve(in1, d[in2], ...)
@linear(ss.convolve, linear_convolve, wrt=("in1", "in2"), via=linear_convolve)
@adjoint(ss.convolve, linear_convolve)
def _(out, in1, in2, mode="full", method="auto"):
    """Any mode and method; real or complex."""
    d[in1] = astype_grad(convolve_grad(d[out], in2, np.shape(in1), np.shape(in2), mode, method),
                         in1)
    d[in2] = astype_grad(convolve_grad(d[out], in1, np.shape(in1), np.shape(in2), mode, method),
                         in2)



