"""``spare``: whether a dead array's memory may take the result of an elementwise operation.

Generated code for large arrays (``compiler/finish/reuse.py``) writes an elementwise operation
whose operand ``a`` is never read again as

    mul = np.multiply(a, b, out=a) if spare(a, b) else a * b

and an accumulation ``d_x = d_x + e`` as ``d_x = add_into(d_x, e)``. The compiler proves that the
*name* ``a`` is dead; ``spare`` proves at run time that nothing else holds the *array*: no other
name, no tape, no list, no view (a view holds its base), no user object. It reads CPython's
reference count of ``a``, against the count measured at import for the same call written the
same way with ``a`` held by one local name alone. It also checks that the result fits ``a``: an
ndarray (not 0-d) owning its memory, writable, large enough to be worth it, of the dtype and
shape the operation gives, with operands that are arrays or numbers (so ``a * b`` is
``np.multiply(a, b)``). Otherwise the expression is computed as written. Where the count cannot
be trusted (not CPython, a build without the GIL, a measurement that does not tell one holder
from two) ``spare`` is always False.
"""

from __future__ import annotations

import platform
import sys

import numpy as np

from mindgrad.runtime.core import times_slope, unbroadcast

#: the fewest elements an array must have for its memory to be reused (256 KiB of float64)
LARGE = 32768

_refcount = sys.getrefcount
_NUMBERS = (int, float, complex, bool, np.generic)


def spare(a, *others) -> bool:
    """Whether the elementwise result of ``a`` with ``others`` may be written into ``a``:
    nothing but the caller's one dead name holds it, and the result has its dtype and shape."""
    return a.__class__ is np.ndarray and a.size >= LARGE and \
        _refcount(a) <= _UNSHARED.get(len(others), 0) and fits(a, *others)


def add_into(a, b):
    """``a + b``, written into ``a``'s memory when nothing else holds ``a`` and the sum fits
    it (``spare``): an accumulation ``d_x = add_into(d_x, ...)``."""
    if a.__class__ is np.ndarray and a.size >= LARGE and \
            _refcount(a) <= _UNSHARED.get("into", 0) and fits(a, b):
        return np.add(a, b, out=a)
    return a + b


def unbroadcast_product(a, b, x, slope=False):
    """``unbroadcast(a * b, x)`` (``unbroadcast(times_slope(a, b), x)`` with ``slope``): where
    ``a`` and ``b`` are float64 arrays of one shape, ``SUMMED_FROM`` elements or more, and
    ``x``'s shape sums some of their axes away, ``np.einsum`` adds the products up without
    making their array (a third of the time on the attention's softmax; the sums in another
    order, so the last bits may differ); a slope must be finite there (``times_slope``'s
    test). Else as written."""
    if a.__class__ is np.ndarray and b.__class__ is np.ndarray and \
            x.__class__ is np.ndarray and x.ndim and a.shape == b.shape and \
            a.dtype == b.dtype == _FLOAT64 and a.size >= SUMMED_FROM:
        subscripts = _summed(a.shape, x.shape)
        if subscripts is not None and (not slope or np.isfinite(b).all()):
            return np.einsum(subscripts, a, b).reshape(x.shape)
    return unbroadcast(times_slope(a, b) if slope else a * b, x)


#: the fewest elements whose products ``unbroadcast_product`` sums with ``np.einsum`` (below,
#: the product's array costs less than einsum's own work; ``cache.large_from`` leaves it)
SUMMED_FROM = 32768
_FLOAT64 = np.dtype(np.float64)
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_SUBSCRIPTS: dict = {}  # (shape, x's shape) -> einsum's subscripts, or None


def _summed(shape, xshape):
    """The ``np.einsum`` subscripts that sum the product of two arrays of ``shape`` down to
    ``xshape`` as ``unbroadcast`` does (leading axes, and axes of length 1 in ``xshape``), the
    axes kept in order; None where it sums no axis or ``xshape`` is no such shape."""
    key = (shape, xshape)
    if key in _SUBSCRIPTS:
        return _SUBSCRIPTS[key]
    extra = len(shape) - len(xshape)
    kept = []
    for i, n in enumerate(shape):
        m = xshape[i - extra] if i >= extra else 1
        if i >= extra and m == n:
            kept.append(_LETTERS[i])
        elif m != 1:
            kept = None
            break
    letters = _LETTERS[:len(shape)]
    subscripts = None if extra < 0 or len(shape) > len(_LETTERS) or kept is None or \
        len(kept) == len(shape) else f"{letters},{letters}->{''.join(kept)}"
    if len(_SUBSCRIPTS) > 256:
        _SUBSCRIPTS.clear()
    _SUBSCRIPTS[key] = subscripts
    return subscripts


def fits(a, *others) -> bool:
    """Whether the elementwise result of ``a`` with ``others`` (arrays or numbers) may be
    written into ``a``: an ndarray of one axis or more owning its memory, writable, of the
    result's dtype and shape."""
    if not a.ndim or a.base is not None or not a.flags.writeable or a.dtype.kind not in "fc":
        return False
    for other in others:
        if other.__class__ is np.ndarray:
            if other.shape != a.shape and np.broadcast_shapes(other.shape, a.shape) != a.shape:
                return False
        elif not isinstance(other, _NUMBERS):
            return False
    return not others or np.result_type(a, *others) == a.dtype


# ----- the counts of an array held by one name, measured as the generated code calls ----------

_seen = []


def _probe(a, *others):
    _seen.append(_refcount(a))
    return False


_PROBES = """
def once(np, probe, make):
    a = make()
    r = np.negative(a, out=a) if probe(a) else -a
    a = make()
    b = 1.0
    r = np.add(a, b, out=a) if probe(a, b) else a + b
    a = make()
    a = probe(a, b)


def twice(np, probe, make):
    a = make()
    held = a
    b = 1.0
    r = np.add(a, b, out=a) if probe(a, b) else a + b
    again = a
    a = probe(a, b)
    return held, again
"""


def _measure():
    """{0, 1 (others), "into": the count of an array held by one name}, or {} where the count
    does not tell an array held once from one held twice."""
    if platform.python_implementation() != "CPython" or \
            not getattr(sys, "_is_gil_enabled", lambda: True)():
        return {}
    namespace = {}
    exec(compile(_PROBES, "<mindgrad.runtime.reuse>", "exec"), namespace)  # noqa: S102
    _seen.clear()

    def make():
        return np.zeros(1)
    namespace["once"](np, _probe, make)
    unary, binary, into = _seen
    _seen.clear()
    namespace["twice"](np, _probe, make)
    shared, shared_into = _seen
    _seen.clear()
    if shared <= binary or shared_into <= into:
        return {}
    return {0: unary, 1: binary, "into": into}


_UNSHARED = _measure()
