"""Rules for NumPy's elementwise functions, array constructors and casts, in both directions:
the adjoint (reverse mode) and the tangent (forward mode) of each.

Elementwise Jacobians are diagonal. Where the derivative is a slope, the slope alone gives both
directions (``@elementwise``; for functions of two arguments, the gradients are summed back to
each argument's shape and the tangents broadcast to the output's). Where it is a mask or a
helper (``np.maximum``, ``np.where``), the tangent applies the adjoint's map to the input's
tangent (``@diagonal``); the helpers linear in the gradient declare it (``@linear_in``), which
derives their own tangents. ``np.abs`` and ``np.angle`` follow the complex convention of the
README in each direction, and the casts keep the output's dtype: those are written by hand.

``np.add``, ``np.multiply``, ``np.power``, ... live with the operators they implement
(``operators.py``); functions whose results are constants (``np.sign``, ``np.floor``, ...) are
declared in ``nondiff.py``.
"""

import builtins
import math

import numpy as np

from mindgrad.rules import (
    adjoint,
    d,
    diagonal,
    elementwise,
    linear,
    linear_in,
    nondifferentiable,
    slope,
    tangent,
    transpose,
    transpose_of,
)
from mindgrad.rules.helpers import abs_slope, array_grad, astype_grad, log_base, quotient
from mindgrad.runtime import (
    is_any_zero,
    is_zero,
    times_slope,
    unbroadcast,
    zero,
    zero_in,
    zero_in_zero_out,
)
from mindgrad.runtime.arrays import as_array, eager
from mindgrad.runtime.tangents import (
    TangentTuple,
    as_dtype_of,
    broadcast_tangent,
    float_dtype,
    zero_tangent_of,
)


def _math(name):
    """``math``'s function ``name`` where this Python has it (``math.cbrt`` and ``math.exp2``
    came in 3.11): it shares the NumPy function's template."""
    return (getattr(math, name),) if hasattr(math, name) else ()


# ----- exponentials and logarithms ---------------------------------------------------------


@elementwise(np.exp, math.exp)
def _(out, x):
    slope[x] = out


@elementwise(np.exp2, *_math("exp2"))
def _(out, x):
    slope[x] = out * math.log(2.0)


@elementwise(np.expm1, math.expm1)
def _(out, x):
    slope[x] = out + 1.0


@elementwise(np.log, singular=True)
def _(out, x):
    slope[x] = 1.0 / x


@elementwise(np.log2, math.log2, singular=True)
def _(out, x):
    slope[x] = 1.0 / (x * math.log(2.0))


@elementwise(np.log10, math.log10, singular=True)
def _(out, x):
    slope[x] = 1.0 / (x * math.log(10.0))


@elementwise(np.log1p, singular=True)
def _(out, x):
    slope[x] = 1.0 / (x + 1.0)


@elementwise(np.logaddexp, singular=True)
def _(out, x, y):
    slope[x] = np.exp(x - out)
    slope[y] = np.exp(y - out)


@elementwise(np.logaddexp2, singular=True)
def _(out, x, y):
    slope[x] = np.exp2(x - out)
    slope[y] = np.exp2(y - out)


# ----- powers and roots --------------------------------------------------------------------


@elementwise(np.sqrt, math.sqrt, singular=True)
def _(out, x):
    slope[x] = quotient(0.5, out)


@elementwise(np.cbrt, *_math("cbrt"), singular=True)
def _(out, x):
    slope[x] = quotient(1.0, 3.0 * out * out)


@elementwise(np.square)
def _(out, x):
    slope[x] = 2.0 * x


@elementwise(np.reciprocal, singular=True)
def _(out, x):
    slope[x] = -out * out


@elementwise(np.hypot, singular=True)
def _(out, x, y):
    slope[x] = quotient(x, out)
    slope[y] = quotient(y, out)


# ----- trigonometric and hyperbolic --------------------------------------------------------


@elementwise(np.sin)
def _(out, x):
    slope[x] = np.cos(x)


@elementwise(np.cos)
def _(out, x):
    slope[x] = -np.sin(x)


@elementwise(np.tan, math.tan, singular=True)
def _(out, x):
    slope[x] = 1.0 + out * out


@elementwise(np.arcsin, singular=True)
def _(out, x):
    slope[x] = quotient(1.0, np.sqrt(1.0 - x * x))


@elementwise(np.arccos, singular=True)
def _(out, x):
    slope[x] = quotient(-1.0, np.sqrt(1.0 - x * x))


@elementwise(np.arctan, math.atan)
def _(out, x):
    slope[x] = 1.0 / (1.0 + x * x)


@elementwise(np.arctan2, math.atan2, singular=True)
def _(out, y, x):
    slope[y] = quotient(x, x * x + y * y)
    slope[x] = quotient(-y, x * x + y * y)


@elementwise(np.sinh)
def _(out, x):
    slope[x] = np.cosh(x)


@elementwise(np.cosh)
def _(out, x):
    slope[x] = np.sinh(x)


@elementwise(np.tanh, math.tanh)
def _(out, x):
    slope[x] = 1.0 - out * out


@elementwise(np.arcsinh, math.asinh)
def _(out, x):
    slope[x] = 1.0 / np.sqrt(x * x + 1.0)


@elementwise(np.arccosh, math.acosh, singular=True)
def _(out, x):
    slope[x] = quotient(1.0, np.sqrt(x * x - 1.0))


@elementwise(np.arctanh, math.atanh, singular=True)
def _(out, x):
    slope[x] = 1.0 / (1.0 - x * x)


@zero_in_zero_out("g")
def sinc_grad(g, x):
    """Gradient of ``sinc(x) = sin(pi x) / (pi x)``: (cos(pi x) - sinc(x)) / x, 0 at x = 0."""
    if zero_in(g):
        return zero
    x_safe = np.where(x == 0, 1.0, x)
    slope = (np.cos(np.pi * x_safe) - np.sinc(x_safe)) / x_safe
    return g * np.where(x == 0, 0.0, slope).astype(np.result_type(x, 1.0), copy=False)


@diagonal(np.sinc)
@adjoint(np.sinc)
def _(out, x):
    d[x] = sinc_grad(d[out], x)


@zero_in_zero_out("g", "t")
def sinc_grad_tangent(g, x, t):
    """Tangent of ``sinc_grad(g, x) = g sinc'(x)`` from ``x``: ``g sinc''(x) t``, with
    ``sinc''(x) = (-pi sin(pi x) - 2 sinc'(x)) / x`` and ``sinc''(0) = -pi^2 / 3``."""
    if zero_in(g, t):
        return zero
    x_safe = np.where(x == 0, 1.0, x)
    first = (np.cos(np.pi * x_safe) - np.sinc(x_safe)) / x_safe
    second = (-np.pi * np.sin(np.pi * x_safe) - 2.0 * first) / x_safe
    second = np.where(x == 0, -np.pi ** 2 / 3.0, second).astype(np.result_type(x, 1.0),
                                                                 copy=False)
    return g * second * t


@tangent(sinc_grad)  # linear in g; the second derivative of sinc in x
def _(out, g, x):
    d[out] = sinc_grad(d[g], x)
    d[out] = sinc_grad_tangent(g, x, d[x])


@elementwise(np.deg2rad, np.radians, math.radians)
def _(out, x):
    slope[x] = math.pi / 180.0


@elementwise(np.rad2deg, np.degrees, math.degrees)
def _(out, x):
    slope[x] = 180.0 / math.pi


# ----- absolute value, angle, sign ---------------------------------------------------------


@adjoint(np.absolute, np.fabs, builtins.abs)
def _(out, x):
    d[x] = np.real(d[out]) * abs_slope(x)  # a real result takes the real part of its gradient


@tangent(np.absolute, np.fabs, builtins.abs)
def _(out, x):
    d[out] = np.real(d[x] * abs_slope(x))


@zero_in_zero_out("g")
def angle_grad(g, z, deg=False):
    """Gradient of ``np.angle(z)``: ``-1j * g / z``; a real ``z`` has angle 0 or pi, a constant
    (the README's complex convention)."""
    if zero_in(g):
        return zero
    if not np.iscomplexobj(z):
        return zero
    grad = -1j * np.real(g) / np.where(z == 0, 1.0, z)
    return grad * (180.0 / np.pi) if deg else grad


@zero_in_zero_out("t")
def angle_tangent(t, z, deg=False):
    """Tangent of ``np.angle(z)``: ``imag(t / z)``; zero for a real ``z``."""
    if zero_in(t):
        return zero
    if not np.iscomplexobj(z):
        return np.zeros(np.shape(z))
    t = np.imag(t / np.where(z == 0, 1.0, z))
    return t * (180.0 / np.pi) if deg else t


# the tangent transposed in its tangent (@transpose reads it)
@transpose_of(angle_tangent)
def _(out, t, z, deg=False):
    d[t] = angle_grad(d[out], z, deg)


@transpose(np.angle)
@tangent(np.angle)
def _(out, z, deg=False):
    d[out] = angle_tangent(d[z], z, deg)


@elementwise(np.copysign)
def _(out, x, y):
    slope[x] = np.sign(x) * np.sign(out)


# ----- maximum, minimum, where: masks the gradient passes through --------------------------


@linear_in("g", keeps_values=True, any_number=True)
def maximum_grad(g, x, y):
    """The share of ``g`` that ``maximum(x, y)`` routes to ``x``: all where x wins, half on ties
    (as JAX), so the gradients of both arguments add up to ``g`` (a number 0, or the 0, gives
    zeros of the result's shape)."""
    return np.where(x > y, g, np.where(x == y, g * 0.5, 0))


@linear_in("g", keeps_values=True)
def fmax_grad(g, x, y):
    """As ``maximum_grad``, but ``fmax`` ignores NaNs: x takes everything where only y is NaN."""
    if zero_in(g):
        return zero
    return np.where(np.isnan(y) & ~np.isnan(x), g, maximum_grad(g, x, y))


@diagonal(np.maximum)
@adjoint(np.maximum)
def _(out, x, y):
    d[x] = unbroadcast(maximum_grad(d[out], x, y), x)
    d[y] = unbroadcast(maximum_grad(d[out], y, x), y)


@diagonal(np.minimum)
@adjoint(np.minimum)
def _(out, x, y):
    d[x] = unbroadcast(maximum_grad(d[out], -x, -y), x)
    d[y] = unbroadcast(maximum_grad(d[out], -y, -x), y)


@diagonal(np.fmax)
@adjoint(np.fmax)
def _(out, x, y):
    d[x] = unbroadcast(fmax_grad(d[out], x, y), x)
    d[y] = unbroadcast(fmax_grad(d[out], y, x), y)


@diagonal(np.fmin)
@adjoint(np.fmin)
def _(out, x, y):
    d[x] = unbroadcast(fmax_grad(d[out], -x, -y), x)
    d[y] = unbroadcast(fmax_grad(d[out], -y, -x), y)


@linear_in("g", any_number=True)
def where_grad(g, condition, taken=True):
    """The share of ``g`` that ``np.where(condition, x, y)`` routes to ``x`` (``taken``) or to
    ``y``: ``g`` where the condition holds (fails), 0 elsewhere. A branch it routes nothing to
    (not taken: a scalar condition, a mask false everywhere) gets the symbolic zero, so that
    its values (a NaN of ``np.log`` below 0) never meet the gradient in the adjoints of what
    computed them (``np.prod``, ``@``, ``np.linalg.norm``), which multiply by them."""
    if is_any_zero(g):
        return zero
    if eager(condition) and not np.any(condition if taken else np.logical_not(condition)):
        return zero  # (a lazy condition is not computed to find it)
    return np.where(condition, g, 0) if taken else np.where(condition, 0, g)


@diagonal(np.where)
@adjoint(np.where)
def _(out, condition, x, y):
    d[x] = unbroadcast(where_grad(d[out], condition), x)
    d[y] = unbroadcast(where_grad(d[out], condition, False), y)


# ----- clip --------------------------------------------------------------------------------


def clip_bounds(a, a_min, a_max, lower, upper):
    """The (lower, upper) bounds of ``np.clip``, which takes them as ``a_min``/``a_max`` or as
    ``min``/``max``; a missing bound is infinite."""
    lo = a_min if a_min is not None else lower
    hi = a_max if a_max is not None else upper
    return (-np.inf if lo is None else lo), (np.inf if hi is None else hi)


@zero_in_zero_out("t")
def clip_bounds_tangent(t, position, chosen, out):
    """Tangent of ``clip_bounds(...) = (lo, hi)`` from one bound: ``t`` at its ``position`` if
    that bound was the one ``chosen``."""
    if zero_in(t):
        return zero
    parts = [zero_tangent_of(out[0]), zero_tangent_of(out[1])]
    if chosen:
        parts[position] = t
    return TangentTuple(parts)


@tangent(clip_bounds)
def _(out, a, a_min, a_max, lower, upper):
    d[out] = clip_bounds_tangent(d[a_min], 0, True, out)
    d[out] = clip_bounds_tangent(d[a_max], 1, True, out)
    d[out] = clip_bounds_tangent(d[lower], 0, a_min is None, out)
    d[out] = clip_bounds_tangent(d[upper], 1, a_max is None, out)


@linear_in("g", keeps_values=True)
def clip_grad_a(g, a, lo, hi):
    """Gradient of ``clip(a, lo, hi)`` for ``a``: passes where ``a`` is inside the bounds."""
    if zero_in(g):
        return zero
    return unbroadcast(np.where((a >= lo) & (a <= hi), g, 0), a)


@linear_in("g")
def clip_grad_lower(g, a, lo, hi):
    """Gradient of ``clip(a, lo, hi)`` for the lower bound: where it is the result."""
    if zero_in(g):
        return zero
    if lo is None or np.all(np.isneginf(lo)):
        return zero
    return unbroadcast(np.where((a < lo) & (lo <= hi), g, 0), lo)


@linear_in("g")
def clip_grad_upper(g, a, lo, hi):
    """Gradient of ``clip(a, lo, hi)`` for the upper bound: where it is the result."""
    if zero_in(g):
        return zero
    if hi is None or np.all(np.isposinf(hi)):
        return zero
    return unbroadcast(np.where(np.maximum(a, lo) > hi, g, 0), hi)


# the tangents are linear in t, the masks piecewise constant: each one's transpose is the
# gradient helper above, which selects the gradient where the mask holds
@linear_in("t")
def clip_tangent_a(t, a, lo, hi, ans):
    """Tangent of ``clip(a, lo, hi)`` from ``a``: passes where ``a`` is inside the bounds."""
    if zero_in(t):
        return zero
    return broadcast_tangent(np.where((a >= lo) & (a <= hi), t, 0), ans)


@linear_in("t")
def clip_tangent_lower(t, a, lo, hi, ans):
    """Tangent of ``clip(a, lo, hi)`` from the lower bound: where it is the result."""
    if zero_in(t):
        return zero
    return broadcast_tangent(np.where((a < lo) & (lo <= hi), t, 0), ans)


@linear_in("t")
def clip_tangent_upper(t, a, lo, hi, ans):
    """Tangent of ``clip(a, lo, hi)`` from the upper bound: where it is the result."""
    if zero_in(t):
        return zero
    return broadcast_tangent(np.where(np.maximum(a, lo) > hi, t, 0), ans)


@adjoint(clip_tangent_a)
def _(out, t, a, lo, hi, ans):
    d[t] = clip_grad_a(d[out], a, lo, hi)


@adjoint(clip_tangent_lower)  # t is the lower bound's tangent, of lo's shape
def _(out, t, a, lo, hi, ans):
    d[t] = clip_grad_lower(d[out], a, lo, hi)


@adjoint(clip_tangent_upper)
def _(out, t, a, lo, hi, ans):
    d[t] = clip_grad_upper(d[out], a, lo, hi)


# d[a] = clip_grad_a(d[ans], a, bounds[0], bounds[1]), a bound's gradient where it is the result
@transpose(np.clip)
@tangent(np.clip)
def _(ans, a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    bounds = clip_bounds(a, a_min, a_max, min, max)
    d[ans] = clip_tangent_a(d[a], a, bounds[0], bounds[1], ans)
    d[ans] = clip_tangent_lower(d[a_min], a, bounds[0], bounds[1], ans)
    d[ans] = clip_tangent_upper(d[a_max], a, bounds[0], bounds[1], ans)
    d[ans] = clip_tangent_lower(d[min], a, bounds[0], bounds[1], ans)
    d[ans] = clip_tangent_upper(d[max], a, bounds[0], bounds[1], ans)


# ----- complex parts -----------------------------------------------------------------------


@linear(np.real)
@adjoint(np.real)
def _(out, val):
    d[val] = astype_grad(np.real(d[out]), val)


@linear_in("g", any_number=True)
def imag_grad(g, val):
    """Gradient of ``imag(val)``: ``-1j * g`` for complex ``val``; a real one has no imaginary
    part to move."""
    if is_any_zero(g):
        return zero
    if np.iscomplexobj(val):
        return astype_grad(-1j * np.real(g), val)
    return zero


@linear(np.imag)
@adjoint(np.imag)
def _(out, val):
    d[val] = imag_grad(d[out], val)


@linear(np.conjugate, np.conj)
@adjoint(np.conjugate, np.conj)
def _(out, x):
    d[x] = np.conj(d[out])


# ----- array constructors and casts: the gradient passes through ---------------------------


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


@linear_in("t")  # its own tangent: not from its source, whose fill_nested writes in place
def array_tangent(t, obj, out):
    """Tangent of ``np.array(obj)`` (and ``asarray``, ``copy``, ...): a fresh array of the
    output's shape and float dtype; the tangent of a list holds 0 for items without one. An
    integer or boolean result is a constant."""
    if zero_in(t):
        return zero
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


@adjoint(array_tangent)  # not from its source, whose fill_nested writes in place
def _(ans, t, obj, out):
    """Linear in ``t``: its transpose is the cast's gradient, one slice of the cotangent per
    item of a list (reverse over forward, and the adjoint of every cast below)."""
    d[t] = array_grad(d[ans], obj, out)


# The casts' adjoints are their tangents transposed: array_grad(d[out], a, out), read from
# array_tangent's adjoint above.


@transpose(np.array)
@tangent(np.array)
def _(out, object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, ndmax=0,
      like=None):
    d[out] = array_tangent(d[object], object, out)


@transpose(np.asarray, np.asanyarray)
@tangent(np.asarray, np.asanyarray)
def _(out, a, dtype=None, order=None, *, device=None, copy=None, like=None):
    d[out] = array_tangent(d[a], a, out)


@transpose(np.ascontiguousarray, np.asfortranarray)
@tangent(np.ascontiguousarray, np.asfortranarray)
def _(out, a, dtype=None, *, like=None):
    d[out] = array_tangent(d[a], a, out)


@transpose(np.copy)
@tangent(np.copy)
def _(out, a, order="K", subok=False):
    d[out] = array_tangent(d[a], a, out)


# ----- constructors with a fill value, scalar float casts: the tangents --------------------
# (their adjoints are with the constant constructors and integer casts, in nondiff.py)


@zero_in_zero_out("t")
def astype_tangent(t, out):
    """Tangent of a cast: ``t`` in the output's dtype (real part for a real one); zero for an
    integer or boolean result."""
    if zero_in(t):
        return zero
    dtype = getattr(out, "dtype", None)
    if dtype is None:
        return t
    if dtype.kind not in "fc":
        return np.zeros(np.shape(out)) if isinstance(out, np.ndarray) else 0.0
    if dtype.kind == "f" and np.iscomplexobj(t):
        t = np.real(t)
    return as_dtype_of(t, out)


@linear(astype_tangent)
@adjoint(astype_tangent)  # linear in t: the transpose casts back (the casts' adjoints)
def _(ans, t, out):
    d[t] = array_grad(d[ans], t, out)


@transpose(np.full)  # d[fill_value] = unbroadcast(d[out], fill_value)
@tangent(np.full)
def _(out, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    d[out] = broadcast_tangent(d[fill_value], out)


@zero_in_zero_out("g")
def fill_grad(g, fill_value, out):
    """Gradient of ``np.full_like``'s fill value: ``g`` summed to its shape; none when ``out``
    takes an integer or boolean dtype from its template array."""
    if zero_in(g):
        return zero
    if out.dtype.kind not in "fc":
        return zero
    return unbroadcast(g, fill_value)


@zero_in_zero_out("t")
def fill_tangent(t, out):
    """Tangent of ``np.full_like``: the fill value's tangent broadcast to ``out``; zero when
    ``out`` takes an integer or boolean dtype from its template array."""
    if zero_in(t):
        return zero
    if out.dtype.kind not in "fc":
        return np.zeros(out.shape)
    return broadcast_tangent(t, out)


@linear(fill_tangent)
@adjoint(fill_tangent)  # linear in t: the transpose sums back
def _(ans, t, out):
    d[t] = fill_grad(d[ans], t, out)


@transpose(np.full_like)  # d[fill_value] = fill_grad(d[out], fill_value, out)
@tangent(np.full_like)
def _(out, a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    d[out] = fill_tangent(d[fill_value], out)


# d[x] = array_grad(d[out], x, out): np.float64(z) takes the real part of z, and so does its
# gradient
@transpose(np.float16, np.float32, np.float64, np.longdouble, np.complex64, np.complex128)
@tangent(np.float16, np.float32, np.float64, np.longdouble, np.complex64, np.complex128)
def _(out, x=0.0):
    d[out] = astype_tangent(d[x], out)


# ----- fmod, float_power, nan_to_num ---------------------------------------------------------


@elementwise(np.fmod)
def _(out, x, y):
    slope[x] = 1
    slope[y] = -np.trunc(x / y)  # fmod(x, y) = x - y trunc(x / y)


@adjoint(np.float_power, singular=True)
def _(out, x, y):
    d[x] = astype_grad(unbroadcast(times_slope(d[out], y * np.float_power(x, y - 1 + (y == 0))),
                                   x), x)
    d[y] = astype_grad(unbroadcast(times_slope(d[out], out * log_base(x)),
                                   y), y)


@tangent(np.float_power)  # the output is float64, whatever the inputs' float dtype
def _(out, x, y):
    d[out] = broadcast_tangent(d[x] * (y * np.float_power(x, y - 1 + (y == 0))), out)
    d[out] = broadcast_tangent(d[y] * out * log_base(x), out)


@diagonal(np.nan_to_num)
@adjoint(np.nan_to_num)
def _(out, x, copy=True, nan=0.0, posinf=None, neginf=None):
    # a replaced entry is the replacement's: selected, not multiplied by a mask (0 * nan is nan)
    d[x] = np.where(np.isfinite(x), d[out], 0)
    d[nan] = unbroadcast(np.where(np.isnan(x), d[out], 0), nan)
    d[posinf] = unbroadcast(np.where(np.isposinf(x), d[out], 0), posinf)
    d[neginf] = unbroadcast(np.where(np.isneginf(x), d[out], 0), neginf)


# ----- interp: piecewise linear ------------------------------------------------------------------


def interp_plan(x, xp, period=None):
    """For each ``x``: the segment of ``xp`` it falls in (its left end), and whether it lies left
    of ``xp[0]``, right of ``xp[-1]``, or in between (``np.interp`` holds the end values
    outside)."""
    if period is not None:
        raise NotImplementedError("np.interp(period=...) has no gradient rule")
    xp = as_array(xp)
    segment = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, max(np.size(xp) - 2, 0))
    left = np.less(x, xp[0])
    right = np.greater(x, xp[-1])
    return segment, left, right, np.logical_not(np.logical_or(left, right))


nondifferentiable(interp_plan)


def interp_parts(x, xp, fp, plan):
    """The segment's ends ``xp[k], xp[k+1]`` and heights ``fp[k], fp[k+1]`` for each ``x``, and
    where ``x`` lies along it (``t`` in [0, 1])."""
    k = plan[0]
    upper = np.minimum(k + 1, np.size(xp) - 1)
    x0 = np.take(xp, k)
    x1 = np.take(xp, upper)
    f0 = np.take(fp, k)
    f1 = np.take(fp, upper)
    width = np.where(x1 == x0, 1.0, x1 - x0)
    return x0, f0, f1, width, (x - x0) / width


def onto(values, index, n):
    """``values`` added up at ``index`` into ``n`` entries (one-hot: differentiable)."""
    return np.sum(np.where(np.expand_dims(index, -1) == np.arange(n), np.expand_dims(values, -1),
                           0), axis=tuple(range(np.ndim(values))))


@zero_in_zero_out("g")
def interp_grads(g, x, xp, fp, left=None, right=None, period=None):
    """Gradients of ``np.interp(x, xp, fp, left, right)`` for ``x`` (the segment's slope), ``xp``
    (``-slope (1 - t)`` and ``-slope t`` at its ends), ``fp`` (``1 - t`` and ``t``; the end values
    where ``x`` is outside and ``left``/``right`` are None), ``left`` and ``right``."""
    if zero_in(g):
        return zero
    plan = interp_plan(x, xp, period)
    inside = plan[3]
    parts = interp_parts(x, xp, fp, plan)
    t = parts[4]
    slope = (parts[2] - parts[1]) / parts[3]
    n = np.size(xp)
    upper = np.minimum(plan[0] + 1, n - 1)
    g_in = np.where(inside, g, 0)
    g_x = g_in * slope
    g_xp = onto(-g_in * slope * (1.0 - t), plan[0], n) + onto(-g_in * slope * t, upper, n)
    g_fp = onto(g_in * (1.0 - t), plan[0], n) + onto(g_in * t, upper, n)
    g_left = np.sum(np.where(plan[1], g, 0))
    g_right = np.sum(np.where(plan[2], g, 0))
    ends = np.zeros(n)
    if left is None:
        ends = ends + np.where(np.arange(n) == 0, g_left, 0)
    if right is None:
        ends = ends + np.where(np.arange(n) == n - 1, g_right, 0)
    return (astype_grad(unbroadcast(g_x, x), x), astype_grad(g_xp, xp),
            array_grad(g_fp + ends, fp), g_left, g_right)


INTERP_ARGUMENTS = ("x", "xp", "fp", "left", "right")  # interp_grads' order


@zero_in_zero_out("t")
def interp_tangent(t, x, xp, fp, out, left=None, right=None, period=None, wrt=0):
    """Tangent of ``np.interp`` from ``x``, ``xp``, ``fp``, ``left`` or ``right`` (``wrt``: the
    index of ``interp_grads``' part for it)."""
    if zero_in(t):
        return zero
    wrt = INTERP_ARGUMENTS[wrt]
    plan = interp_plan(x, xp, period)
    inside = plan[3]
    parts = interp_parts(x, xp, fp, plan)
    w = parts[4]
    slope = (parts[2] - parts[1]) / parts[3]
    upper = np.minimum(plan[0] + 1, np.size(xp) - 1)
    if wrt == "x":
        change = t * slope * inside
    elif wrt == "xp":
        change = -slope * (np.take(t, plan[0]) * (1.0 - w) + np.take(t, upper) * w) * inside
    elif wrt == "fp":
        change = (np.take(t, plan[0]) * (1.0 - w) + np.take(t, upper) * w) * inside
        if left is None:
            change = change + np.take(t, 0) * plan[1]
        if right is None:
            change = change + np.take(t, -1) * plan[2]
    elif wrt == "left":
        change = t * plan[1]
    else:
        change = t * plan[2]
    return as_array(np.broadcast_to(change, np.shape(out))).astype(float_dtype(out))


# the tangents transposed in their tangents (@transpose reads them)
@transpose_of(interp_tangent)
def _(ans, t, x, xp, fp, out, left=None, right=None, period=None, wrt=0):
    d[t] = interp_grads(d[ans], x, xp, fp, left, right, period)[wrt]


@transpose(np.interp)
@tangent(np.interp)
def _(out, x, xp, fp, left=None, right=None, period=None):
    """Increasing ``xp``, without ``period``; at a knot the right segment's slope."""
    d[out] = interp_tangent(d[x], x, xp, fp, out, left, right, period, 0)
    d[out] = interp_tangent(d[xp], x, xp, fp, out, left, right, period, 1)
    d[out] = interp_tangent(d[fp], x, xp, fp, out, left, right, period, 2)
    d[out] = interp_tangent(d[left], x, xp, fp, out, left, right, period, 3)
    d[out] = interp_tangent(d[right], x, xp, fp, out, left, right, period, 4)


# ----- ldexp, frexp, nextafter, heaviside, modf, divmod, unwrap, real_if_close, astype -----------


@elementwise(np.ldexp)
def _(out, x, e):
    slope[x] = np.ldexp(1.0, e)  # x 2^e; the integer exponent has no gradient


@elementwise(np.nextafter, math.nextafter)
def _(out, x, y):
    slope[x] = 1.0  # x moved one ulp toward y: the direction y only picks the step's sign


@elementwise(np.heaviside)
def _(out, x, h):
    slope[h] = x == 0  # h is the value at x == 0; the step in x has slope 0 almost everywhere


@adjoint(np.frexp)
def _(out, x):
    d[x] = astype_grad(unbroadcast(d[out][0] * np.ldexp(1.0, -out[1]), x), x)  # x = m 2^e


@tangent(np.frexp)
def _(out, x):
    d[out] = TangentTuple((as_dtype_of(broadcast_tangent(d[x], out[0]) *
                                       np.ldexp(1.0, -out[1]), out[0]),
                           zero_tangent_of(out[1])))


@adjoint(np.modf)
def _(out, x):
    d[x] = astype_grad(unbroadcast(d[out][0], x), x)  # x = fraction + integral part


@tangent(np.modf)
def _(out, x):
    d[out] = TangentTuple((as_dtype_of(broadcast_tangent(d[x], out[0]), out[0]),
                           zero_tangent_of(out[1])))


@adjoint(np.divmod, builtins.divmod)  # Python's divmod floors as NumPy's does
def _(out, x, y):
    d[x] = astype_grad(unbroadcast(d[out][1], x), x)  # only the remainder moves
    d[y] = astype_grad(unbroadcast(-d[out][1] * out[0], y), y)


@tangent(np.divmod, builtins.divmod)
def _(out, x, y):
    d[out] = TangentTuple((zero_tangent_of(out[0]), broadcast_tangent(d[x], out[1])))
    d[out] = TangentTuple((zero_tangent_of(out[0]), broadcast_tangent(-d[y] * out[0], out[1])))


# p plus multiples of the period, piecewise constant: d[p] = array_grad(d[out], p, out)
@transpose(np.unwrap)
@tangent(np.unwrap)
def _(out, p, discont=None, axis=-1, *, period=6.283185307179586):
    d[out] = astype_tangent(d[p], out)


@transpose(np.real_if_close)  # d[a] = array_grad(d[out], a, out)
@tangent(np.real_if_close)
def _(out, a, tol=100):
    d[out] = astype_tangent(d[a], out)


if hasattr(np, "astype"):  # NumPy >= 2.1

    @transpose(np.astype)  # d[x] = array_grad(d[out], x, out)
    @tangent(np.astype)
    def _(out, x, dtype, *, copy=True, device=None):
        d[out] = astype_tangent(d[x], out)
