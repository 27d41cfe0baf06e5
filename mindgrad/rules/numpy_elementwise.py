"""Rules for NumPy's elementwise functions, array constructors and casts.

``np.add``, ``np.multiply``, ``np.power``, ... live with the operators they implement
(``operators.py``); functions whose results are constants (``np.sign``, ``np.floor``, ...) are
declared in ``nondiff.py``. Every binary rule ends in ``unbroadcast``: its inputs may broadcast.
"""

import builtins
import math

import numpy as np

from mindgrad.rules import adjoint, d, elementwise, slope
from mindgrad.runtime import is_zero, takes_zero, unbroadcast

# ----- exponentials and logarithms ---------------------------------------------------------


@elementwise(np.exp, math.exp)
def _(out, x):
    slope[x] = out


@elementwise(np.exp2)
def _(out, x):
    slope[x] = out * math.log(2.0)


@elementwise(np.expm1, math.expm1)
def _(out, x):
    slope[x] = out + 1.0


@elementwise(np.log)
def _(out, x):
    slope[x] = 1.0 / x


@elementwise(np.log2, math.log2)
def _(out, x):
    slope[x] = 1.0 / (x * math.log(2.0))


@elementwise(np.log10, math.log10)
def _(out, x):
    slope[x] = 1.0 / (x * math.log(10.0))


@elementwise(np.log1p)
def _(out, x):
    slope[x] = 1.0 / (x + 1.0)


@adjoint(np.logaddexp)
def _(out, x, y):
    d[x] = unbroadcast(d[out] * np.exp(x - out), x)
    d[y] = unbroadcast(d[out] * np.exp(y - out), y)


@adjoint(np.logaddexp2)
def _(out, x, y):
    d[x] = unbroadcast(d[out] * np.exp2(x - out), x)
    d[y] = unbroadcast(d[out] * np.exp2(y - out), y)


# ----- powers and roots --------------------------------------------------------------------


@elementwise(np.sqrt, math.sqrt)
def _(out, x):
    slope[x] = 0.5 / out


@elementwise(np.cbrt)
def _(out, x):
    slope[x] = 1.0 / (3.0 * out * out)


@elementwise(np.square)
def _(out, x):
    slope[x] = 2.0 * x


@elementwise(np.reciprocal)
def _(out, x):
    slope[x] = -out * out


@adjoint(np.hypot)
def _(out, x, y):
    d[x] = unbroadcast(d[out] * x / out, x)
    d[y] = unbroadcast(d[out] * y / out, y)


# ----- trigonometric and hyperbolic --------------------------------------------------------


@elementwise(np.sin)
def _(out, x):
    slope[x] = np.cos(x)


@elementwise(np.cos)
def _(out, x):
    slope[x] = -np.sin(x)


@elementwise(np.tan, math.tan)
def _(out, x):
    slope[x] = 1.0 + out * out


@elementwise(np.arcsin)
def _(out, x):
    slope[x] = 1.0 / np.sqrt(1.0 - x * x)


@elementwise(np.arccos)
def _(out, x):
    slope[x] = -1.0 / np.sqrt(1.0 - x * x)


@elementwise(np.arctan, math.atan)
def _(out, x):
    slope[x] = 1.0 / (1.0 + x * x)


@adjoint(np.arctan2)
def _(out, y, x):
    d[y] = unbroadcast(d[out] * x / (x * x + y * y), y)
    d[x] = unbroadcast(-d[out] * y / (x * x + y * y), x)


@elementwise(np.sinh)
def _(out, x):
    slope[x] = np.cosh(x)


@elementwise(np.cosh)
def _(out, x):
    slope[x] = np.sinh(x)


@elementwise(np.tanh, math.tanh)
def _(out, x):
    slope[x] = 1.0 - out * out


@elementwise(np.arcsinh)
def _(out, x):
    slope[x] = 1.0 / np.sqrt(x * x + 1.0)


@elementwise(np.arccosh)
def _(out, x):
    slope[x] = 1.0 / np.sqrt(x * x - 1.0)


@elementwise(np.arctanh)
def _(out, x):
    slope[x] = 1.0 / (1.0 - x * x)


def sinc_grad(g, x):
    """Gradient of ``sinc(x) = sin(pi x) / (pi x)``: (cos(pi x) - sinc(x)) / x, 0 at x = 0."""
    x_safe = np.where(x == 0, 1.0, x)
    slope = (np.cos(np.pi * x_safe) - np.sinc(x_safe)) / x_safe
    return g * np.where(x == 0, 0.0, slope).astype(np.result_type(x, 1.0), copy=False)


@adjoint(np.sinc)
def _(out, x):
    d[x] = sinc_grad(d[out], x)


@adjoint(np.deg2rad, np.radians)
def _(out, x):
    d[x] = d[out] * (math.pi / 180.0)


@adjoint(np.rad2deg, np.degrees)
def _(out, x):
    d[x] = d[out] * (180.0 / math.pi)


# ----- absolute value, selection -----------------------------------------------------------


def abs_slope(x):
    """The factor that takes the gradient of ``|x|`` to ``x``: ``sign(x)`` for real ``x``;
    ``conj(x) / |x|`` for complex ``x`` (0 at 0), in the complex convention of the README."""
    if np.iscomplexobj(x):
        magnitude = np.abs(x)
        return np.conj(x) / np.where(magnitude == 0, 1.0, magnitude)
    return np.sign(x)


def conj_if_complex(v):
    """``conj(v)``, without the copy ``np.conj`` makes of a real ``v``."""
    return np.conj(v) if np.iscomplexobj(v) else v


@adjoint(np.absolute, np.fabs, builtins.abs)
def _(out, x):
    d[x] = np.real(d[out]) * abs_slope(x)  # a real result takes the real part of its gradient


def angle_grad(g, z, deg=False):
    """Gradient of ``np.angle(z)``: ``-1j * g / z``; a real ``z`` has angle 0 or pi, a constant
    (the README's complex convention)."""
    if is_zero(g) or not np.iscomplexobj(z):
        return 0
    grad = -1j * np.real(g) / np.where(z == 0, 1.0, z)
    return grad * (180.0 / np.pi) if deg else grad


@adjoint(np.angle)
def _(out, z, deg=False):
    d[z] = angle_grad(d[out], z, deg)


@adjoint(np.copysign)
def _(out, x, y):
    d[x] = unbroadcast(d[out] * np.sign(x) * np.sign(out), x)


@takes_zero
def maximum_grad(g, x, y):
    """The share of ``g`` that ``maximum(x, y)`` routes to ``x``: all where x wins, half on ties
    (as JAX), so the gradients of both arguments add up to ``g``."""
    return np.where(x > y, g, np.where(x == y, g * 0.5, g * 0))


@takes_zero
def fmax_grad(g, x, y):
    """As ``maximum_grad``, but ``fmax`` ignores NaNs: x takes everything where only y is NaN."""
    return np.where(np.isnan(y) & ~np.isnan(x), g, maximum_grad(g, x, y))


@adjoint(np.maximum)
def _(out, x, y):
    d[x] = unbroadcast(maximum_grad(d[out], x, y), x)
    d[y] = unbroadcast(maximum_grad(d[out], y, x), y)


@adjoint(np.minimum)
def _(out, x, y):
    d[x] = unbroadcast(maximum_grad(d[out], -x, -y), x)
    d[y] = unbroadcast(maximum_grad(d[out], -y, -x), y)


@adjoint(np.fmax)
def _(out, x, y):
    d[x] = unbroadcast(fmax_grad(d[out], x, y), x)
    d[y] = unbroadcast(fmax_grad(d[out], y, x), y)


@adjoint(np.fmin)
def _(out, x, y):
    d[x] = unbroadcast(fmax_grad(d[out], -x, -y), x)
    d[y] = unbroadcast(fmax_grad(d[out], -y, -x), y)


@adjoint(np.where)
def _(out, condition, x, y):
    d[x] = unbroadcast(np.where(condition, d[out], d[out] * 0), x)
    d[y] = unbroadcast(np.where(condition, d[out] * 0, d[out]), y)


def clip_bounds(a, a_min, a_max, lower, upper):
    """The (lower, upper) bounds of ``np.clip``, which takes them as ``a_min``/``a_max`` or as
    ``min``/``max``; a missing bound is infinite."""
    lo = a_min if a_min is not None else lower
    hi = a_max if a_max is not None else upper
    return (-np.inf if lo is None else lo), (np.inf if hi is None else hi)


@takes_zero
def clip_grad_a(g, a, lo, hi):
    """Gradient of ``clip(a, lo, hi)`` for ``a``: passes where ``a`` is inside the bounds."""
    return unbroadcast(np.where((a >= lo) & (a <= hi), g, g * 0), a)


def clip_grad_lower(g, a, lo, hi):
    """Gradient of ``clip(a, lo, hi)`` for the lower bound: where it is the result."""
    if lo is None or np.all(np.isneginf(lo)):
        return 0
    return unbroadcast(np.where((a < lo) & (lo <= hi), g, g * 0), lo)


def clip_grad_upper(g, a, lo, hi):
    """Gradient of ``clip(a, lo, hi)`` for the upper bound: where it is the result."""
    if hi is None or np.all(np.isposinf(hi)):
        return 0
    return unbroadcast(np.where(np.maximum(a, lo) > hi, g, g * 0), hi)


@adjoint(np.clip)
def _(ans, a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    bounds = clip_bounds(a, a_min, a_max, min, max)
    d[a] = clip_grad_a(d[ans], a, bounds[0], bounds[1])
    d[a_min] = clip_grad_lower(d[ans], a, a_min, bounds[1])
    d[a_max] = clip_grad_upper(d[ans], a, bounds[0], a_max)
    d[min] = clip_grad_lower(d[ans], a, min, bounds[1])
    d[max] = clip_grad_upper(d[ans], a, bounds[0], max)


# ----- complex parts -----------------------------------------------------------------------


@adjoint(np.real)
def _(out, val):
    d[val] = astype_grad(np.real(d[out]), val)


def imag_grad(g, val):
    """Gradient of ``imag(val)``: ``-1j * g`` for complex ``val``; a real one has no imaginary
    part to move."""
    if np.iscomplexobj(val):
        return astype_grad(-1j * np.real(g), val)
    return 0


@adjoint(np.imag)
def _(out, val):
    d[val] = imag_grad(d[out], val)


@adjoint(np.conjugate, np.conj)
def _(out, x):
    d[x] = np.conj(d[out])


# ----- array constructors and casts: the gradient passes through ---------------------------


@takes_zero
def astype_grad(g, x):
    """``g`` cast back to the floating (or complex) dtype of ``x``: the gradient of a cast.

    A real ``x`` gets the real part of a complex ``g``; Python numbers and integer inputs keep
    ``g`` as it is (they have no dtype to return to)."""
    if is_zero(g):
        return g
    dtype = getattr(x, "dtype", None)
    if dtype is None or dtype.kind not in "fc":
        return g
    if dtype.kind == "f" and np.iscomplexobj(g):
        g = np.real(g)
    if isinstance(x, np.ndarray):
        return np.asarray(g).astype(dtype, copy=False)
    return dtype.type(g) if np.ndim(g) == 0 else np.asarray(g).astype(dtype, copy=False)


def fill_nested(grid, values):
    """Write the nested list or tuple ``values`` into the array ``grid``; 0 entries (no
    gradient) leave zeros."""
    for i, value in enumerate(values):
        if is_zero(value):
            continue
        if isinstance(value, (list, tuple)):
            fill_nested(grid[i], value)
        else:
            grid[i] = value


@takes_zero(keeps_values=False)
def array_grad(g, obj, out=None):
    """Gradient of ``np.array(obj)`` and other casts: ``g`` reshaped (``ndmin``) and cast back
    to ``obj``; for a list or tuple of scalars or arrays, one slice of ``g`` per element, in a
    list. An integer or boolean ``out`` is a constant: nothing flows back through that cast."""
    if is_zero(g) or getattr(out, "dtype", np.dtype(float)).kind not in "fc":
        return 0
    if isinstance(obj, (list, tuple)):
        g = np.reshape(g, np.shape(obj))
        return [array_grad(g[i], item) for i, item in enumerate(obj)]
    return astype_grad(np.reshape(g, np.shape(obj)), obj)


@adjoint(np.array)
def _(out, object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, ndmax=0,
      like=None):
    d[object] = array_grad(d[out], object, out)


@adjoint(np.asarray, np.asanyarray)
def _(out, a, dtype=None, order=None, *, device=None, copy=None, like=None):
    d[a] = array_grad(d[out], a, out)


@adjoint(np.ascontiguousarray, np.asfortranarray)
def _(out, a, dtype=None, *, like=None):
    d[a] = array_grad(d[out], a, out)


@adjoint(np.copy)
def _(out, a, order="K", subok=False):
    d[a] = array_grad(d[out], a)
