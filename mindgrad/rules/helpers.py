"""Helpers that several topics of rules share.

A gradient of a gradient differentiates them from their source, so they keep to the Python that
mindgrad differentiates.
"""

import math

import numpy as np

from mindgrad.rules import elementwise, linear_in, slope
from mindgrad.runtime import is_any_zero, real_grad, takes_zero, zero, zero_in, zero_in_zero_out
from mindgrad.runtime.arrays import as_array, is_dispatching


@linear_in("x")
def swap_last_axes(x):
    """The transpose of (a stack of) matrices."""
    if zero_in(x):
        return zero
    return np.swapaxes(x, -1, -2)


def normalize_axis(axis, ndim):
    """``axis`` as a non-negative axis of an array of ``ndim`` dimensions (0-d: 0)."""
    return int(axis) % max(ndim, 1)


def reduced_axes(axis, ndim):
    """``axis`` of a reduction as a sorted tuple of non-negative axes (None: all of them)."""
    if axis is None:
        return tuple(range(ndim))
    if np.ndim(axis) == 0:
        axis = (axis,)
    return tuple(sorted(int(a) % max(ndim, 1) for a in axis))


def reduced_count(a, axis, where=True):
    """How many elements of ``a`` each result of a reduction over ``axis`` combines (kept dims)."""
    if where is True:
        shape = np.shape(a)
        return int(np.prod([shape[i] for i in reduced_axes(axis, len(shape))]))
    mask = np.broadcast_to(where, np.shape(a))
    return np.sum(mask, axis=reduced_axes(axis, np.ndim(a)), keepdims=True)


def masked_grad(g, where):
    """``g`` with the elements a reduction's ``where=`` left out set to zero."""
    if where is True:
        return g
    return np.where(where, g, 0)


def log_base(x):
    """``log(x)``, the slope of ``x ** y`` in ``y`` over ``x ** y``: 0 at ``x = 0`` (the slope
    is taken as 0 there), and NaN, without NumPy's warning, where a real ``x`` is negative or
    NaN: ``x ** y`` has no real derivative in ``y`` there, and a ``y`` that carries no gradient
    (an integer exponent, a loop index) never reads it."""
    if np.iscomplexobj(x):
        return np.log(np.where(x == 0, 1, x))
    # log |x|, whose slope 1/x is log(x)'s (finite: a branch not taken reads it times 0),
    # plus NaN where x < 0, a constant
    return np.log(np.where(x == 0, 1.0, np.abs(x))) + np.where(x < 0, np.nan, 0.0)


@elementwise(log_base, singular=True)  # NaN below 0: its products are masked (times_slope)
def _(out, x):
    slope[x] = 1.0 / np.where(x == 0, np.inf, x)  # log |x|'s, 0 at x = 0 (log_base's 1 there)


def quotient(x, y):
    """``x / y`` as NumPy divides, without its warning where ``y`` is 0: the slope of a function
    finite at its pole (``np.sqrt``'s ``0.5 / out`` at 0, ``np.hypot``'s ``x / out`` at the
    origin) is inf or NaN there, and ``times_slope`` holds it at 0 where no gradient flows (the
    branch ``np.where`` did not take), where NumPy would warn of a division the user never
    wrote. A Python number 0 divides as NumPy's 0 does (inf or NaN, not ZeroDivisionError)."""
    if _nonzero(y):
        return x / y
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(x, y)


def power(x, y):
    """``x ** y``, without NumPy's warning where ``x`` is 0 and ``y`` negative: the slope
    ``y * x ** (y - 1)`` of ``x ** 0.5`` at 0, as for ``quotient``. A Python number 0 gives
    NumPy's inf, not ZeroDivisionError. A constant ``y >= 0`` reaches the generated code as
    ``x ** y`` (``compiler.transform.expand``): it has no pole."""
    if _nonzero(x):
        return x ** y
    if x.__class__ in (int, float, complex, bool):
        x = np.asarray(x, dtype=np.result_type(x, 1.0))[()]
    with np.errstate(divide="ignore", invalid="ignore"):
        return x ** y


def _nonzero(x) -> bool:
    """Whether no element of ``x`` is 0 (NaN is not); an array of another library (Dask, CuPy)
    counts as nonzero: it divides by its own rules, unasked."""
    if x.__class__ is np.ndarray or isinstance(x, np.generic):
        return bool(x.all())
    if x.__class__ in (int, float, complex, bool):
        return x != 0
    return True


quotient.at_pole = power.at_pole = True  # a tangent times their slope: rules.derivation


@elementwise(quotient, singular=True)
def _(out, x, y):
    slope[x] = quotient(1.0, y)
    slope[y] = -quotient(out, y)


@elementwise(power, singular=True)
def _(out, x, y):
    slope[x] = y * power(x, y - 1 + (y == 0))
    slope[y] = out * log_base(x)


# ----- complex values and casts, shared by most topics ----------------------------------------


# the Bernoulli numbers B_2, B_4, ... of the asymptotic series of the polygamma functions
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def polygamma(n, x):
    """The polygamma function of order ``n`` (an int >= 0; 0 is digamma, the derivative of
    ``log Gamma``) at ``x``, a float or an array, without SciPy. For ``x > 0``: moved up by the
    recurrence ``psi_n(x) = psi_n(x + 1) + (-1)^(n+1) n! / x^(n+1)`` until it is at least
    ``10 + n``, where the asymptotic series is exact to rounding (relative error about 1e-15
    against ``scipy.special.polygamma``). For ``x < 0``, the reflection ``psi(x) = psi(1 - x) -
    pi cot(pi x)`` differentiated n times, so that no ``x`` takes more than ``10 + n`` steps
    (the recurrence alone took ``-x`` steps: hours for ``lgamma``'s slope at -1e10). Below 0 it
    is as exact as the function is conditioned: where ``psi_n`` nearly vanishes between far
    negative poles, the relative error grows (2.6e-5 for n = 4 at -150.5, SciPy's 5.6e-6;
    below 1e-10 for the n <= 2 of three orders of ``math.lgamma``). NaN at 0 and the negative
    integers."""
    n = int(n)
    x = np.asarray(x, dtype=np.result_type(x, np.float64))
    pole = (x <= 0) & (x == np.floor(x))
    negative = (x < 0) & ~pole
    out = _polygamma_above_zero(n, np.where(pole, 1.0, np.where(negative, 1.0 - x, x)))
    if negative.any():
        # d^n/dx^n cot(pi x) as a polynomial in c = cot(pi x), whose derivative is -pi (1 + c^2)
        coefficients = np.array([0.0, 1.0])
        for _ in range(n):
            coefficients = np.polynomial.polynomial.polymul(
                np.polynomial.polynomial.polyder(coefficients), [-np.pi, 0.0, -np.pi])
        # cot has period pi: the fraction of x, exact, keeps pi x from losing digits
        cot = 1.0 / np.tan(np.pi * np.where(negative, x - np.round(x), 0.5))
        reflected = (-1) ** n * out - np.pi * np.polynomial.polynomial.polyval(cot, coefficients)
        out = np.where(negative, reflected, out)
    out = np.where(pole, np.nan, out)
    return out[()] if out.ndim == 0 else out


def _polygamma_above_zero(n, x):
    """``polygamma(n, x)`` for ``x > 0``: the recurrence up to ``10 + n``, then the series."""
    sign = 1.0 if n % 2 else -1.0  # (-1)^(n+1)
    factorial = math.factorial(n)
    total = np.zeros_like(x)
    low = x < 10.0 + n
    while low.any():
        step = -1.0 / x if n == 0 else sign * factorial / x ** (n + 1)
        total = total + np.where(low, step, 0.0)
        x = np.where(low, x + 1.0, x)
        low = x < 10.0 + n
    if n == 0:  # log x - 1/(2x) - sum B_2k / (2k x^2k)
        series = np.log(x) - 0.5 / x
        for k, b in enumerate(_BERNOULLI, 1):
            series = series - b / (2 * k * x ** (2 * k))
    else:  # (-1)^(n+1) [(n-1)!/x^n + n!/(2 x^(n+1)) + sum B_2k (2k+n-1)!/((2k)! x^(2k+n))]
        series = math.factorial(n - 1) / x ** n + factorial / (2.0 * x ** (n + 1))
        for k, b in enumerate(_BERNOULLI, 1):
            series = series + b * math.factorial(2 * k + n - 1) / (
                math.factorial(2 * k) * x ** (2 * k + n))
        series = sign * series
    return total + series


def digamma(x):
    """``polygamma(0, x)``: the derivative of ``log Gamma(x)``, the slope of ``math.lgamma``."""
    return polygamma(0, x)


@elementwise(polygamma, singular=True)  # the order n is an integer: no slope
def _(out, n, x):
    slope[x] = polygamma(n + 1, x)


@elementwise(digamma, singular=True)
def _(out, x):
    slope[x] = polygamma(1, x)


def abs_slope(x):
    """The factor that takes the gradient of ``|x|`` to ``x``: ``sign(x)`` for real ``x``;
    ``conj(x) / |x|`` for complex ``x`` (0 at 0), in the complex convention of the README."""
    if np.iscomplexobj(x):
        magnitude = np.abs(x)
        return np.conj(x) / np.where(magnitude == 0, 1.0, magnitude)
    return np.sign(x)


@zero_in_zero_out("v")
def conj_if_complex(v):
    """``conj(v)``, without the copy ``np.conj`` makes of a real ``v``."""
    if zero_in(v):
        return zero
    return np.conj(v) if np.iscomplexobj(v) else v


@linear_in("g")
@takes_zero(any_number=True)
def astype_grad(g, x):
    """``g`` cast back to the floating (or complex) dtype of ``x``: the gradient of a cast.

    A real ``x`` gets the real part of a complex ``g``; Python numbers and integer inputs keep
    ``g`` as it is (they have no dtype to return to), and so does a zero number (which may stand
    for an array of another shape)."""
    if zero_in(g):
        return zero
    if is_any_zero(g):
        return g
    dtype = getattr(x, "dtype", None)
    if dtype is None or dtype.kind not in "fc":
        return g
    if dtype.kind == "f" and np.iscomplexobj(g):
        g = np.real(g)
    if is_dispatching(g):  # a Dask or CuPy array, cast where it is
        return g if g.dtype == dtype else g.astype(dtype)
    if isinstance(x, np.ndarray):
        return as_array(g).astype(dtype, copy=False)
    return dtype.type(g) if np.ndim(g) == 0 else as_array(g).astype(dtype, copy=False)


@linear_in("g", any_number=True)
def array_grad(g, obj, out=None):
    """Gradient of ``np.array(obj)`` and other casts: ``g`` reshaped (``ndmin``) and cast back
    to ``obj``; for a list or tuple of scalars or arrays, one slice of ``g`` per element, in a
    list. An integer or boolean ``out`` is a constant: nothing flows back through that cast."""
    if is_any_zero(g) or getattr(out, "dtype", np.dtype(float)).kind not in "fc":
        return zero
    if out is not None:
        g = real_grad(g, out)  # a cast from complex to real: a real result's gradient is real
    if isinstance(obj, (list, tuple)):
        g = np.reshape(g, np.shape(obj))
        return [array_grad(g[i], item) for i, item in enumerate(obj)]
    return astype_grad(np.reshape(g, np.shape(obj)), obj)


def cut(g, bounds, axis):
    """``np.split(g, bounds, axis=axis)`` by slicing: the pieces are views, and a Dask array
    (which has no ``np.split``) is cut lazily."""
    axis = normalize_axis(axis, np.ndim(g))
    edges = [0] + [int(b) for b in bounds] + [np.shape(g)[axis]]
    head = [slice(None)] * axis
    return [g[tuple(head + [slice(lo, max(lo, hi))])] for lo, hi in zip(edges, edges[1:])]
