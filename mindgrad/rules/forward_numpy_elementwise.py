"""Tangent rules for NumPy's elementwise functions, array constructors and casts.

Elementwise Jacobians are diagonal, so most tangents are the input's tangent times the slope;
the adjoint helpers that only multiply by a slope or a mask (``maximum_grad``, ``sinc_grad``)
serve both directions. A tangent that is not multiplied by something of the output's shape is
broadcast to it (``broadcast_tangent``).
"""

import builtins
import math

import numpy as np

from mindgrad.rules import d, tangent
from mindgrad.rules.numpy_elementwise import (
    abs_slope,
    clip_bounds,
    fill_nested,
    fmax_grad,
    maximum_grad,
    sinc_grad,
)
from mindgrad.runtime.tangents import broadcast_tangent, float_dtype

# ----- exponentials and logarithms ---------------------------------------------------------


@tangent(np.logaddexp)
def _(out, x, y):
    d[out] = d[x] * np.exp(x - out)
    d[out] = d[y] * np.exp(y - out)


@tangent(np.logaddexp2)
def _(out, x, y):
    d[out] = d[x] * np.exp2(x - out)
    d[out] = d[y] * np.exp2(y - out)


# ----- powers and roots --------------------------------------------------------------------


@tangent(np.hypot)
def _(out, x, y):
    d[out] = d[x] * x / out
    d[out] = d[y] * y / out


# ----- trigonometric and hyperbolic --------------------------------------------------------


@tangent(np.arctan2)
def _(out, y, x):
    d[out] = d[y] * x / (x * x + y * y)
    d[out] = -d[x] * y / (x * x + y * y)


@tangent(np.sinc)
def _(out, x):
    d[out] = sinc_grad(d[x], x)


@tangent(np.deg2rad, np.radians)
def _(out, x):
    d[out] = d[x] * (math.pi / 180.0)


@tangent(np.rad2deg, np.degrees)
def _(out, x):
    d[out] = d[x] * (180.0 / math.pi)


# ----- absolute value, selection -----------------------------------------------------------


@tangent(np.absolute, np.fabs, builtins.abs)
def _(out, x):
    d[out] = np.real(d[x] * abs_slope(x))


def angle_tangent(t, z, deg=False):
    """Tangent of ``np.angle(z)``: ``imag(t / z)``; zero for a real ``z``."""
    if not np.iscomplexobj(z):
        return np.zeros(np.shape(z))
    t = np.imag(t / np.where(z == 0, 1.0, z))
    return t * (180.0 / np.pi) if deg else t


@tangent(np.angle)
def _(out, z, deg=False):
    d[out] = angle_tangent(d[z], z, deg)


@tangent(np.copysign)
def _(out, x, y):
    d[out] = d[x] * np.sign(x) * np.sign(out)


@tangent(np.maximum)
def _(out, x, y):
    d[out] = broadcast_tangent(maximum_grad(d[x], x, y), out)
    d[out] = broadcast_tangent(maximum_grad(d[y], y, x), out)


@tangent(np.minimum)
def _(out, x, y):
    d[out] = broadcast_tangent(maximum_grad(d[x], -x, -y), out)
    d[out] = broadcast_tangent(maximum_grad(d[y], -y, -x), out)


@tangent(np.fmax)
def _(out, x, y):
    d[out] = broadcast_tangent(fmax_grad(d[x], x, y), out)
    d[out] = broadcast_tangent(fmax_grad(d[y], y, x), out)


@tangent(np.fmin)
def _(out, x, y):
    d[out] = broadcast_tangent(fmax_grad(d[x], -x, -y), out)
    d[out] = broadcast_tangent(fmax_grad(d[y], -y, -x), out)


@tangent(np.where)
def _(out, condition, x, y):
    d[out] = broadcast_tangent(np.where(condition, d[x], d[x] * 0), out)
    d[out] = broadcast_tangent(np.where(condition, d[y] * 0, d[y]), out)


def clip_tangent_a(t, a, lo, hi, ans):
    """Tangent of ``clip(a, lo, hi)`` from ``a``: passes where ``a`` is inside the bounds."""
    return broadcast_tangent(np.where((a >= lo) & (a <= hi), t, t * 0), ans)


def clip_tangent_lower(t, a, lo, hi, ans):
    """Tangent of ``clip(a, lo, hi)`` from the lower bound: where it is the result."""
    return broadcast_tangent(np.where((a < lo) & (lo <= hi), t, t * 0), ans)


def clip_tangent_upper(t, a, lo, hi, ans):
    """Tangent of ``clip(a, lo, hi)`` from the upper bound: where it is the result."""
    return broadcast_tangent(np.where(np.maximum(a, lo) > hi, t, t * 0), ans)


@tangent(np.clip)
def _(ans, a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    bounds = clip_bounds(a, a_min, a_max, min, max)
    d[ans] = clip_tangent_a(d[a], a, bounds[0], bounds[1], ans)
    d[ans] = clip_tangent_lower(d[a_min], a, bounds[0], bounds[1], ans)
    d[ans] = clip_tangent_upper(d[a_max], a, bounds[0], bounds[1], ans)
    d[ans] = clip_tangent_lower(d[min], a, bounds[0], bounds[1], ans)
    d[ans] = clip_tangent_upper(d[max], a, bounds[0], bounds[1], ans)


# ----- complex parts -----------------------------------------------------------------------


@tangent(np.real)
def _(out, val):
    d[out] = np.real(d[val])


@tangent(np.imag)
def _(out, val):
    d[out] = np.imag(d[val])


@tangent(np.conjugate, np.conj)
def _(out, x):
    d[out] = np.conj(d[x])


# ----- array constructors and casts --------------------------------------------------------


def array_tangent(t, obj, out):
    """Tangent of ``np.array(obj)`` (and ``asarray``, ``copy``, ...): a fresh array of the
    output's shape and float dtype; the tangent of a list holds 0 for items without one. An
    integer or boolean result is a constant."""
    out_dtype = getattr(out, "dtype", None)
    if out_dtype is not None and out_dtype.kind not in "fc":
        return np.zeros(np.shape(out))
    dtype = float_dtype(out)
    if isinstance(t, (list, tuple)):
        grid = np.zeros(np.shape(obj), dtype)
        fill_nested(grid, t)
        return grid.reshape(np.shape(out))
    if dtype.kind == "f" and np.iscomplexobj(t):
        t = np.real(t)
    return np.array(t, dtype=dtype).reshape(np.shape(out))


def astype_tangent(t, out):
    """Tangent of a cast: ``t`` in the output's dtype (real part for a real one); zero for an
    integer or boolean result."""
    dtype = getattr(out, "dtype", None)
    if dtype is None:
        return t
    if dtype.kind not in "fc":
        return np.zeros(np.shape(out)) if isinstance(out, np.ndarray) else 0.0
    if dtype.kind == "f" and np.iscomplexobj(t):
        t = np.real(t)
    if isinstance(out, np.ndarray):
        return np.asarray(t).astype(dtype)
    return dtype.type(t)


@tangent(np.array)
def _(out, object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, ndmax=0,
      like=None):
    d[out] = array_tangent(d[object], object, out)


@tangent(np.asarray, np.asanyarray)
def _(out, a, dtype=None, order=None, *, device=None, copy=None, like=None):
    d[out] = array_tangent(d[a], a, out)


@tangent(np.ascontiguousarray, np.asfortranarray)
def _(out, a, dtype=None, *, like=None):
    d[out] = array_tangent(d[a], a, out)


@tangent(np.copy)
def _(out, a, order="K", subok=False):
    d[out] = array_tangent(d[a], a, out)


# ----- constructors with a fill value, scalar float casts (nondiff.py's adjoint rules) -----


@tangent(np.full)
def _(out, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    d[out] = broadcast_tangent(d[fill_value], out)


def fill_tangent(t, out):
    """Tangent of ``np.full_like``: the fill value's tangent broadcast to ``out``; zero when
    ``out`` takes an integer or boolean dtype from its template array."""
    if out.dtype.kind not in "fc":
        return np.zeros(out.shape)
    return broadcast_tangent(t, out)


@tangent(np.full_like)
def _(out, a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    d[out] = fill_tangent(d[fill_value], out)


@tangent(np.float16, np.float32, np.float64, np.longdouble, np.complex64, np.complex128)
def _(out, x=0.0):
    d[out] = astype_tangent(d[x], out)
