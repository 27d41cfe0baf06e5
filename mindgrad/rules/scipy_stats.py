"""Rules for the normal distribution of ``scipy.stats`` (``norm.pdf``, ``logpdf``, ``cdf``,
``logcdf``, ``sf``, ``logsf``, ``ppf``), in both directions, with ``loc`` and ``scale``
positional or by keyword: elementwise in ``x``, ``loc`` and ``scale``, which broadcast.

SciPy is optional: this module is imported by the registry once the program has imported
``scipy.stats`` (``DEFERRED`` in ``mindgrad/rules/__init__.py``). The rules are for the methods
of the ``norm`` object itself (``norm.pdf(x, loc, scale)``), not of a frozen distribution
(``norm(loc, scale).pdf(x)``), which has no rule.

With ``z = (x - loc) / scale`` and the standard density ``phi(z) = exp(-z^2 / 2) / sqrt(2 pi)``:
the log-probabilities' slopes are ratios ``phi / cdf`` written as ``exp(-z^2/2 - out)``, finite
far in the tails where ``phi`` and the cdf both underflow. Gradients of float32 inputs come
out in float64, as the values (the public API casts them back).
"""

import math

import numpy as np
import scipy.special as sp
from scipy.stats import norm

from mindgrad.rules import elementwise, slope

SQRT_2PI = math.sqrt(2.0 * math.pi)


def standardized(x, loc, scale, out):
    """``(x - loc) / scale`` at the precision of the result ``out``: SciPy computes float32
    inputs in float64, and the tangents have the output's dtype."""
    return np.asarray(x - loc, dtype=np.result_type(out, 1.0)) / scale


@elementwise(norm.pdf)
def _(out, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    slope[x] = -z * out / scale
    slope[loc] = z * out / scale
    slope[scale] = (z * z - 1.0) * out / scale


@elementwise(norm.logpdf)
def _(out, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    slope[x] = -z / scale
    slope[loc] = z / scale
    slope[scale] = (z * z - 1.0) / scale


@elementwise(norm.cdf)
def _(out, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    density = np.exp(-0.5 * z * z) / (SQRT_2PI * scale)
    slope[x] = density
    slope[loc] = -density
    slope[scale] = -density * z


@elementwise(norm.sf)
def _(out, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    density = np.exp(-0.5 * z * z) / (SQRT_2PI * scale)
    slope[x] = -density
    slope[loc] = density
    slope[scale] = density * z


@elementwise(norm.logcdf)
def _(out, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    ratio = np.exp(-0.5 * z * z - out) / (SQRT_2PI * scale)  # pdf / cdf
    slope[x] = ratio
    slope[loc] = -ratio
    slope[scale] = -ratio * z


@elementwise(norm.logsf)
def _(out, x, loc=0.0, scale=1.0):
    z = standardized(x, loc, scale, out)
    ratio = np.exp(-0.5 * z * z - out) / (SQRT_2PI * scale)  # pdf / sf
    slope[x] = -ratio
    slope[loc] = ratio
    slope[scale] = ratio * z


@elementwise(norm.ppf)
def _(out, q, loc=0.0, scale=1.0):
    z = sp.ndtri(q)
    slope[q] = SQRT_2PI * scale * np.exp(0.5 * z * z)  # inf at 0 and 1
    slope[loc] = 1.0
    slope[scale] = z
