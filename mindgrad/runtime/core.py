"""The tests of the symbolic zero (``symbolic_zero.py``) and the arithmetic of gradients:
``is_zero``, ``zero_in``, ``add``, ``unbroadcast``, ``unreduce``, ``times_slope``,
``real_grad``, and the marks of the rules' helpers that take the zero (``takes_zero``,
``zero_in_zero_out``). The conventions are the package's (``mindgrad.runtime``).
"""

from __future__ import annotations

import functools
import math
import numbers
import types

import numpy as np

from mindgrad.runtime.arrays import eager, is_dispatching
from mindgrad.runtime.origin import Origin, origin
from mindgrad.runtime.symbolic_zero import Zero, zero


class GradientError(ValueError):
    """A value met at run time that a gradient cannot be formed for (wrong sens shape, ...)."""


def takes_zero(fn=None, *, keeps_values=True, any_number=False):
    """Mark a gradient helper outside this module as testing for the symbolic zero (``Zero``)
    itself, as every function here does. A rule passing ``d[out]`` to it is still guarded by
    ``is_zero(d_v, v)``, for a number 0 standing for an array (see ``is_zero``), unless
    ``any_number``: the helper's first test is ``is_any_zero(g)``, which takes that number too,
    so the rule needs no guard (``tests/rules/test_zero_cotangent.py`` runs every such rule at
    the zero). ``keeps_values``: given a gradient that holds a value, it returns one (never the
    zero): with ``any_number``, ``zero_for(g, x)`` for a number 0."""
    if fn is None:
        return functools.partial(takes_zero, keeps_values=keeps_values, any_number=any_number)
    fn.keeps_values = keeps_values
    if any_number:
        fn.takes_any_zero = True
    return fn


def is_any_zero(g) -> bool:
    """The symbolic zero in every form a gradient helper may meet: None, the int 0, and a
    number 0 (or a 0-d array of 0: ``np.transpose(0)``), which arithmetic on the 0 gives
    (``0 * 1.0``) and which may stand for an array of any shape. A helper linear in ``g`` that
    returns the 0 for these takes every zero (``takes_zero(any_number=True)``); a number 0 that
    is a value is a zero gradient too."""
    if g is None:
        return True
    cls = g.__class__
    if cls is Zero:
        return True
    if cls is np.ndarray:
        return not g.ndim and not g
    if cls is int or cls is float or cls is complex:
        return g == 0
    return isinstance(g, np.number) and g == 0


def zero_in(*values) -> bool:
    """Whether any of ``values`` is the symbolic zero (a ``Zero``, or the int 0 a user's
    ``bprop`` may return; not None, which optional arguments default to): a helper linear in
    them gives the zero, its first test."""
    for v in values:
        cls = v.__class__
        if cls is Zero or cls is int and v == 0:
            return True
    return False


def zero_in_zero_out(*params, keeps_values=False):
    """Declare that a gradient helper outside this module gives the symbolic zero when any of
    ``params`` (the gradient, a factor it is linear in) is the symbolic zero: its first test is
    ``if zero_in(*params): return zero``. A rule template passing ``d[out]`` to it is still
    guarded by ``if not is_zero(d_v, v):`` (``Rule.reads_zero_unsafely``: a number 0 standing
    for an array is not a zero to ``zero_in``), which the optimizer drops where ``d_v`` surely
    holds a value; ``rules.vjp_of``/``jvp_of`` do the same. ``keeps_values``: as for
    ``takes_zero``."""
    def mark(fn):
        fn.zero_in_zero_out = params
        if keeps_values:
            fn.keeps_values = True
        return fn

    return mark


# what the method rules are written for
_METHOD_RECEIVERS = (np.ndarray, np.generic, numbers.Number, list, tuple, dict, str, bytes, set,
                     frozenset)
# the owners of the methods the rules describe
_RULED_ORIGINS = (Origin.NUMPY, Origin.BUILTINS, Origin.MINDGRAD, Origin.RUNTIME,
                  Origin.RULES)


def user_method(receiver, name) -> bool:
    """Whether the rules of the method ``.name()`` do not apply to ``receiver``: it is a
    module, or the method is the user's (defined by a class of the user's, a list subclass's
    own included, or set on the object). Generated code asks it where the receiver's kind was
    not known when the code was built."""
    if isinstance(receiver, types.ModuleType):
        return True
    if is_dispatching(receiver):
        return False  # a Dask or CuPy array: its methods are ndarray's, whose rules apply
    for klass in receiver.__class__.__mro__:
        if name in vars(klass):
            return origin(klass) not in _RULED_ORIGINS
    return not isinstance(receiver, _METHOD_RECEIVERS)


def is_zero(g, like=None) -> bool:
    """True for the symbolic zero gradient (a ``Zero``), and the int 0 and None a user's
    ``bprop`` may return for it.

    Given ``like``, the value ``g`` is the gradient of, also for a number 0 standing for an
    array: arithmetic on the int 0 (``0 * 1.0``, ``0 * z`` with ``z`` 0-d) gives a number, not
    an array of ``like``'s shape (on a ``Zero`` it gives a ``Zero``). The gradient of an array
    of one or more dimensions is otherwise never a number, so this zero is a constant too."""
    if g is None or g.__class__ is Zero or (g.__class__ is int and g == 0):
        return True
    if like is None or g.__class__ is np.ndarray and g.ndim:
        return False
    return getattr(like, "ndim", 0) > 0 and isinstance(g, (float, complex, np.number, np.ndarray)) \
        and np.ndim(g) == 0 and not g


def inexact(dtype) -> bool:
    """Whether ``dtype`` (a ``dtype=`` argument known at run time) is a float or complex type,
    through which a gradient flows; integer and boolean types make a constant."""
    try:
        return np.dtype(dtype).kind in "fc"
    except TypeError:
        return True  # not a dtype: NumPy itself refuses it, in the forward pass


def real_grad(g, x):
    """``g``, the gradient of ``x``, as real as ``x`` is: the real part of a complex ``g`` for
    a real ``x`` (the complex convention: a real value's gradient is real), else ``g``.

    A complex value meeting a real one (``s[1:] * 1j``, ``s + z``) gives the real one a
    complex product of gradients; its imaginary part means nothing, and neither a real buffer
    (``add_at``) nor a rule from complex to real (a cast, ``np.real``) may receive it."""
    if g.__class__ is np.ndarray:
        if g.dtype.kind != "c":
            return g
    elif not isinstance(g, (complex, np.complexfloating)):
        return g
    return np.real(g) if not np.iscomplexobj(x) else g


@takes_zero
def times_slope(g, slope, of=None):
    """``g * slope``, the gradient through an elementwise function whose slope may be inf or
    NaN (``np.sqrt`` below 0, ``1 / x`` at 0, a value computed from those): where ``g`` is 0
    the product is 0, not ``0 * inf`` or ``0 * nan``. A branch ``np.where`` did not take gets
    the gradient 0, and its slope there, a NaN, must not reach the branch taken. One
    finiteness test on the product where all is finite.

    ``of``: the gradient the product ``g * slope`` derives from, at second order (the tangent
    or the gradient of ``times_slope(of, slope)`` with respect to ``of``): also 0 where ``of``
    is 0, where the first product was held at 0. The symbolic zero gives the symbolic zero
    (a branch not taken as a whole: ``where_grad``). A non-finite slope where a gradient
    flows gives inf or NaN, without a warning: it is the derivative there (``np.sqrt`` at 0).
    One finiteness test of the slope where all is finite."""
    if g.__class__ is Zero or g.__class__ is int and g == 0:
        return zero
    if slope.__class__ in _FINITE_TESTED and math.isfinite(slope):
        return g * slope  # a finite number (a loop over scalars: np.isfinite costs 40 times)
    if not eager(g, slope, of):
        # a Dask array: no test of its values, which would compute it; the two results below
        # both built, and the one NumPy's test picks selected where the values are known
        out = g * slope
        vanishes = g == 0 if of is None else (g == 0) | (of == 0)
        return np.where(np.all(np.isfinite(slope)), out, np.where(vanishes, 0, out))
    if np.isfinite(slope).all():
        return g * slope
    with np.errstate(invalid="ignore"):  # 0 * inf, replaced by 0 below
        out = g * slope
    vanishes = g == 0 if of is None else (g == 0) | (of == 0)
    zeroed = np.where(vanishes, np.zeros((), np.result_type(out)), out)
    return zeroed if out.__class__ is np.ndarray else zeroed[()]


REAL_NUMBERS = frozenset({float, np.float64, np.float32, np.float16, np.longdouble})
# the numbers math.isfinite reads exactly (a long double may exceed a float's range)
_FINITE_TESTED = frozenset({float, np.float64, np.float32, np.float16})


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x``: the adjoint of NumPy broadcasting. The gradient
    of a real ``x`` is real (``real_grad``)."""
    if g.__class__ is np.ndarray and x.__class__ is np.ndarray and g.shape == x.shape:
        if g.dtype.kind == "c" and x.dtype.kind != "c":
            return np.real(g)
        return g  # the common case, without np.shape's overhead
    if g.__class__ in REAL_NUMBERS and x.__class__ in REAL_NUMBERS:
        return g  # a real number's gradient, a real number (a loop over scalars)
    if x.__class__ is Zero:
        # x is a symbolic zero gradient (grad of grad): no input reaches it, so nothing flows
        # back to it (summing g to its shape, which it may not know, would be a guess)
        return x
    if isinstance(g, (list, tuple, dict)) or isinstance(x, (list, tuple, dict)):
        if isinstance(g, (list, tuple)) and isinstance(x, (list, tuple)) and len(g) != len(x):
            # x * n repeated a sequence the compiler did not know for one: refuse, never guess
            raise GradientError(
                f"the gradient of a sequence of {len(x)} items has {len(g)}: a list or tuple "
                "repeated with * (or another sequence operation) where mindgrad could not tell "
                "it was a sequence; build the list with a literal or list(...) first")
        return g  # the gradient of a container (grad of grad): nothing was broadcast
    if is_zero(g):
        return Zero.like(x)  # typed: a later derivative may read its shape
    g = real_grad(g, x)
    gshape = np.shape(g)
    xshape = np.shape(x)
    if gshape == xshape:
        return g
    extra = len(gshape) - len(xshape)
    if extra > 0:
        g = np.sum(g, axis=tuple(range(extra)))
    if np.ndim(g) == len(xshape):
        axes = tuple(i for i, n in enumerate(xshape) if n == 1 and np.shape(g)[i] != 1)
        if axes:
            g = np.sum(g, axis=axes, keepdims=True)
    if np.shape(g) != xshape:  # x was broadcast to a larger shape (e.g. by np.broadcast_to)
        try:
            g = np.broadcast_to(g, xshape)
        except ValueError:
            # a product with the symbolic 0 (0 * y) has y's shape, not the broadcast one
            if np.any(g):
                raise
            g = np.zeros(xshape, np.result_type(g))
    return g


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, numbers.Integral):
        axis = (axis,)
    return tuple(sorted(a % ndim for a in axis))


def _dtype(value):
    return value.dtype if hasattr(value, "dtype") else np.result_type(value)


def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast the gradient of a reduction over ``axis`` back to the shape of ``x``."""
    if is_zero(g):
        return Zero.like(x)
    shape = np.shape(x)
    if is_dispatching(g) or is_dispatching(x):
        # a Dask or CuPy array: made by its library (with x's chunks), never pulled into NumPy
        if not keepdims and axis is not None and np.ndim(g) < len(shape):
            g = np.expand_dims(g, _axes(axis, len(shape)))
        if is_dispatching(x):
            return np.zeros_like(x, dtype=np.result_type(x.dtype, _dtype(g))) + g
        return np.broadcast_to(g, shape)
    if np.ndim(g) == 0:  # a full reduction: a fresh array is cheaper than a broadcast view
        return np.full(shape, g) if shape else g
    if not keepdims and axis is not None and np.ndim(g) < len(shape):
        g = np.expand_dims(g, _axes(axis, len(shape)))
    return np.broadcast_to(g, shape)


def add(a, b):
    """Accumulate two gradients of any structure (arrays, scalars, lists, tuples, dicts).

    The result is owned by the caller: ``add_at`` may update it in place. So the first
    contribution is copied, never shared: the same array may be another variable's gradient
    (``x + w`` gives both the same one).
    """
    if is_zero(a):
        if isinstance(b, np.ndarray):
            return np.array(b)
        if is_dispatching(b):
            return b.copy()
        if isinstance(b, (list, tuple)):
            return list(b)
        if isinstance(b, dict):
            return dict(b)
        return b
    if is_zero(b):
        return a
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):  # zip would drop entries: a gradient silently lost
            raise ValueError(f"internal error: adding gradients of sequences of {len(a)} "
                             f"and {len(b)} items")
        return type(a)(add(p, q) for p, q in zip(a, b))
    if isinstance(a, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = add(out.get(k, zero), v)
        return out
    return a + b


