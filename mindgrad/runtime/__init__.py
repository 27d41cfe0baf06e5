"""What generated gradient code calls at run time.

Conventions shared by every helper here and by the generated code:

* The zero gradient is the Python int ``0``: it costs nothing to create, adds to anything,
  and ``is_zero`` recognises it. Gradients are materialised as arrays only where a value flows.
  The functions here take it; a helper of the rules either takes it too (``takes_zero``) or
  declares that a zero in gives a zero out and leaves the test to the code calling it, which
  tests once per call, where the value may be zero at run time (``zero_in_zero_out``).
* Helpers never mutate their arguments, except ``add_at`` and ``setitem_grad``, which update
  a gradient buffer that the generated code owns (it was created by ``add_at`` itself or by an
  ``a + b`` expression, never aliased).
"""

from __future__ import annotations

import functools
import numbers
import types

import numpy as np

__all__ = [
    "AuxSens",
    "GradientError",
    "add",
    "add_at",
    "adds_elementwise",
    "as_grad",
    "as_sequence",
    "bprop_grads",
    "check_output_differentiable",
    "complex_output_error",
    "concat_grads",
    "add_or_concat_grads",
    "repeated_grads",
    "concat_tangents",
    "holds_float",
    "inexact",
    "is_zero",
    "item",
    "holds_complex",
    "output_is_differentiable",
    "pop_grad",
    "private_copy",
    "push_grad",
    "real_grad",
    "rebuild",
    "refuse_array",
    "refuse_dict",
    "restore_item",
    "reversed_items",
    "saved_item",
    "seed",
    "setitem_grad",
    "snapshot",
    "takes_zero",
    "tangent_append",
    "tangent_of_item",
    "tangent_pop",
    "tangent_setitem",
    "times_slope",
    "unbroadcast",
    "unreduce",
    "user_method",
    "zero_in_zero_out",
    "zero_tangent",
    "zeros_buffer",
]


class GradientError(ValueError):
    """A value met at run time that a gradient cannot be formed for (wrong sens shape, ...)."""


def takes_zero(fn=None, *, keeps_values=True):
    """Mark a gradient helper outside this module as accepting the symbolic zero (the int 0)
    for its gradient, as every function here does. A rule passing ``d[out]`` to it is still
    guarded by ``is_zero(d_v, v)``, for a number 0 standing for an array (see ``is_zero``).
    ``keeps_values``: given a gradient that holds a value, it returns one (never the 0)."""
    if fn is None:
        return functools.partial(takes_zero, keeps_values=keeps_values)
    fn.keeps_values = keeps_values
    return fn


def zero_in_zero_out(*params, keeps_values=False):
    """Declare that a gradient helper outside this module gives the symbolic zero when any of
    ``params`` (the gradient, a factor it is linear in) is the symbolic zero, and leave that
    test to its callers: the helper holds no ``if is_zero(g): return 0`` of its own.

    Generated code never passes it such a zero. A rule template passing ``d[out]`` to the
    helper is guarded by ``if not is_zero(d_v, v):``, which the optimizer drops where ``d_v``
    surely holds a value (``Rule.reads_zero_unsafely``); a tangent statement is dropped where
    its input carries no tangent, and guarded by ``is_zero(t)`` over mindgrad's own code, where
    a tangent may be 0 at run time; ``rules.vjp_of``/``jvp_of`` do the same. Python code
    calling the helper passes values. ``keeps_values``: as for ``takes_zero``."""
    def mark(fn):
        fn.zero_in_zero_out = params
        if keeps_values:
            fn.keeps_values = True
        return fn

    return mark


# what the method rules are written for
_METHOD_RECEIVERS = (np.ndarray, np.generic, numbers.Number, list, tuple, dict, str, bytes, set,
                     frozenset)
_RULED_MODULES = ("numpy", "mindgrad", "builtins")


def user_method(receiver, name) -> bool:
    """Whether the rules of the method ``.name()`` do not apply to ``receiver``: it is a
    module, or the method is the user's (defined by a class of the user's, a list subclass's
    own included, or set on the object). Generated code asks it where the receiver's kind was
    not known when the code was built."""
    if isinstance(receiver, types.ModuleType):
        return True
    for klass in receiver.__class__.__mro__:
        if name in vars(klass):
            return not (getattr(klass, "__module__", None) or "").startswith(_RULED_MODULES)
    return not isinstance(receiver, _METHOD_RECEIVERS)


def is_zero(g, like=None) -> bool:
    """True for the symbolic zero gradient (the int 0) and None.

    Given ``like``, the value ``g`` is the gradient of, also for a number 0 standing for an
    array: arithmetic on the symbolic zero (``0 * 1.0``, ``0 * z`` with ``z`` 0-d) gives a
    number, not an array of ``like``'s shape. The gradient of an array of one or more
    dimensions is otherwise never a number, so this zero is a constant too."""
    if g is None or (g.__class__ is int and g == 0):
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
    (a branch not taken as a whole: ``where_grad``)."""
    if g.__class__ is int and g == 0:
        return 0
    out = g * slope
    if np.isfinite(out).all():
        return out
    zero = g == 0 if of is None else (g == 0) | (of == 0)
    zeroed = np.where(zero, np.zeros((), np.result_type(out)), out)
    return zeroed if out.__class__ is np.ndarray else zeroed[()]


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x``: the adjoint of NumPy broadcasting. The gradient
    of a real ``x`` is real (``real_grad``)."""
    if g.__class__ is np.ndarray and x.__class__ is np.ndarray and g.shape == x.shape:
        if g.dtype.kind == "c" and x.dtype.kind != "c":
            return np.real(g)
        return g  # the common case, without np.shape's overhead
    if isinstance(g, (list, tuple, dict)) or isinstance(x, (list, tuple, dict)):
        if isinstance(g, (list, tuple)) and isinstance(x, (list, tuple)) and len(g) != len(x):
            # x * n repeated a sequence the compiler did not know for one: refuse, never guess
            raise GradientError(
                f"the gradient of a sequence of {len(x)} items has {len(g)}: a list or tuple "
                "repeated with * (or another sequence operation) where mindgrad could not tell "
                "it was a sequence; build the list with a literal or list(...) first")
        return g  # the gradient of a container (grad of grad): nothing was broadcast
    if is_zero(g):
        return g
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


def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast the gradient of a reduction over ``axis`` back to the shape of ``x``."""
    if is_zero(g):
        return 0
    shape = np.shape(x)
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
            out[k] = add(out.get(k, 0), v)
        return out
    return a + b


def _is_advanced(idx) -> bool:
    if isinstance(idx, tuple):
        return any(isinstance(i, (np.ndarray, list)) for i in idx)
    return isinstance(idx, (np.ndarray, list))


def zeros_buffer(x):
    """A zero gradient buffer for the array argument ``x``, owned by the generated code."""
    return np.zeros(x.shape, dtype=np.result_type(x.dtype, np.float32))


def add_at(dx, x, idx, g):
    """Gradient of ``y = x[idx]``: add ``g`` into ``dx`` at ``idx`` (``dx`` may be zero); a
    real ``x`` takes the real part of a complex ``g`` (``real_grad``)."""
    if is_zero(g) or is_zero(x):
        return dx  # x is a symbolic zero gradient (grad of grad): it depends on nothing
    if isinstance(x, np.ndarray):
        g = real_grad(g, x)
        if is_zero(dx, x):
            dx = np.zeros(x.shape, dtype=np.result_type(x.dtype, np.float32))
        if _is_advanced(idx):
            np.add.at(dx, idx, g)
        else:
            dx[idx] += g
        return dx
    if isinstance(x, dict):
        dx = {} if is_zero(dx) else dx
        dx[idx] = add(dx.get(idx, 0), g)
        return dx
    if isinstance(x, (list, tuple)):
        dx = [0] * len(x) if is_zero(dx) else (dx if isinstance(dx, list) else list(dx))
        if isinstance(idx, slice):
            for k, gk in zip(range(*idx.indices(len(x))), g):
                dx[k] = add(dx[k], gk)
        else:
            dx[idx] = add(dx[idx], g)
        return dx
    raise GradientError(f"cannot index a gradient for a value of type {type(x).__name__}")


def _last_writes(shape, idx, block):
    """For ``x[idx] = v`` with an advanced index: a mask shaped like ``x[idx]``, true where an
    element of the block is the one NumPy leaves in ``x`` (an index repeated in ``idx`` writes
    one element several times; only one write remains)."""
    order = np.arange(int(np.prod(block)), dtype=np.intp).reshape(block)
    written = np.full(shape, -1, dtype=np.intp)
    written[idx] = order
    return written[idx] == order


def _lost_zero(dx, idx) -> bool:
    """Whether ``dx``, the gradient of an array written at ``idx``, is a number 0 standing for
    the symbolic zero (see ``is_zero``): only a 0-d array takes ``x[()]`` or ``x[...]``, any
    other index means an array of one or more dimensions, whose gradient is never a number."""
    if isinstance(dx, (np.ndarray, list, dict)) or np.ndim(dx) or dx:
        return False
    return idx is not Ellipsis and not (isinstance(idx, tuple) and not idx)


def setitem_grad(dx, idx, v):
    """Gradient of ``x[idx] = v``: returns (gradient of v, dx with ``dx[idx]`` cleared)."""
    if is_zero(dx) or _lost_zero(dx, idx):
        return 0, dx
    if isinstance(dx, np.ndarray):
        gv = dx[idx]
        if _is_advanced(idx):
            gv = np.where(_last_writes(dx.shape, idx, np.shape(gv)), gv, 0)
        gv = gv.copy() if isinstance(gv, np.ndarray) else gv
        if not dx.flags.writeable:
            dx = dx.copy()
        dx[idx] = 0
        return unbroadcast(gv, v), dx
    if isinstance(dx, dict):  # a dict gradient holds only the keys that received one
        dx = dict(dx)
        return dx.pop(idx, 0), dx
    gv = dx[idx]
    if isinstance(dx, tuple):
        dx = list(dx)
    dx[idx] = 0
    return gv, dx


_ABSENT = object()


def saved_item(x, idx):
    """The value at ``x[idx]`` before an index assignment overwrites it (a copy for arrays)."""
    if isinstance(x, dict):
        return x.get(idx, _ABSENT)
    value = x[idx]
    return value.copy() if isinstance(value, np.ndarray) else value


def private_copy(x, copies):
    """``x`` if the backward sweep owns it (it is in ``copies``), else a copy it then owns.

    The backward sweep restores overwritten items only into arrays, lists and dicts it owns:
    never into one the function returned, the caller passed in, or a ``vjp`` keeps, so an
    error or a second backward sweep finds them as the function left them."""
    if copies.get(id(x)) is x:
        return x
    x = x.copy()
    copies[id(x)] = x
    return x


def refuse_array(value, error):
    """Raise ``error`` if ``value`` is an array: an in-place operator in the user's code would
    write into it, and it may be the caller's (forward mode, built for any argument kinds)."""
    if isinstance(value, np.ndarray):
        raise error.with_traceback(None)


def refuse_dict(value, error):
    """Raise ``error`` if ``value`` is a dict: ``a | b`` merged two dicts, whose gradients
    mindgrad does not follow (of integers, booleans and sets it is a constant)."""
    if isinstance(value, dict):
        raise error.with_traceback(None)


def restore_item(x, idx, old):
    """Undo ``x[idx] = v`` in the backward sweep, so earlier adjoints see the old values."""
    if old is _ABSENT:
        del x[idx]
    else:
        x[idx] = old


def repeated_grads(g, x):
    """Gradient of ``x * n`` (or ``n * x``) for a sequence ``x``: the gradients of the ``n``
    copies, summed item by item."""
    if is_zero(g):
        return 0
    k = len(x)
    grads = [0] * k
    for i, g_i in enumerate(g):
        grads[i % k] = add(grads[i % k], g_i)
    return grads


def concat_grads(g, x, y):
    """Gradients of ``x + y`` for sequences (concatenation): the head to x, the tail to y."""
    if is_zero(g):
        return 0, 0
    n = len(x)
    return list(g[:n]), list(g[n:])


def add_or_concat_grads(g, x, y):
    """Gradients of ``x + y`` where the code does not show what the operands hold: for two
    lists or two tuples, a concatenation (``concat_grads``); else a sum, broadcast back to
    each operand (``unbroadcast``), as for the tangent containers that add element by
    element (``adds_elementwise``)."""
    if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)) and \
            not adds_elementwise(x, y):
        return concat_grads(g, x, y)
    if is_zero(g):
        return 0, 0
    return unbroadcast(g, x), unbroadcast(g, y)


def reversed_items(seq, count=None):
    """``(index, item)`` pairs of the first ``count`` items of ``seq``, last first: what the
    backward sweep of ``for item in seq`` walks. For a dict, the index is the key."""
    if isinstance(seq, dict):
        pairs = [(k, k) for k in seq]
    else:
        pairs = list(enumerate(seq))
    if count is not None:
        pairs = pairs[:count]
    pairs.reverse()
    return pairs


# ----- forward mode -----------------------------------------------------------------------------


def zero_tangent(value):
    """A zero tangent shaped like ``value``: where a name that carries a tangent is given a
    value that does not (``h = x`` before a loop makes ``h`` depend on the input)."""
    if isinstance(value, np.ndarray):
        return np.zeros(value.shape, np.result_type(value.dtype, np.float32))
    if isinstance(value, (float, np.floating)):
        return type(value)(0.0)
    if isinstance(value, (list, tuple)):
        return rebuild(value, [zero_tangent(v) for v in value])
    if isinstance(value, dict):
        return {k: zero_tangent(v) for k, v in value.items()}
    return 0


def adds_elementwise(x, y):
    """Whether ``x + y`` adds element by element: a ``TangentList`` or ``TangentTuple`` of
    tangent code (differentiated again at third order), not a concatenation."""
    return getattr(x, "adds_elementwise", False) or getattr(y, "adds_elementwise", False)


def concat_tangents(t_x, x, t_y, y):
    """Tangent of ``x + y`` for sequences: the two tangents concatenated (zeros filled in); for
    sequences that add element by element (``adds_elementwise``), the tangents added so."""
    if adds_elementwise(x, y):
        kind = type(x) if getattr(x, "adds_elementwise", False) else type(y)
        return kind(add(t_x, t_y))
    head = [0] * len(x) if is_zero(t_x) else list(t_x)
    tail = [0] * len(y) if is_zero(t_y) else list(t_y)
    return tuple(head + tail) if isinstance(x, tuple) else head + tail


def tangent_setitem(t_x, x, idx, t_v):
    """Tangent of ``x[idx] = v`` (after it ran): a copy of ``t_x`` with ``t_v`` at ``idx``."""
    if isinstance(x, np.ndarray):
        t = np.zeros(x.shape, np.result_type(x.dtype, np.float32)) if is_zero(t_x) else \
            np.array(t_x, dtype=np.result_type(np.asarray(t_x).dtype, np.float32))
        t[idx] = 0 if is_zero(t_v) else t_v
        return t
    if isinstance(x, dict):
        t = {} if is_zero(t_x) else dict(t_x)
        t[idx] = t_v
        return t
    t = [0] * len(x) if is_zero(t_x) else list(t_x)
    t[idx] = t_v
    return t


def tangent_append(t_xs, xs, t_v):
    """Tangent of ``xs.append(v)`` (after it ran): the tangent list, one entry longer."""
    if is_zero(t_xs):
        t_xs = [0] * (len(xs) - 1)
    t_xs.append(t_v)
    return t_xs


def tangent_pop(t_xs):
    """Tangent of ``v = xs.pop()``: pops the tangent list in step; 0 if it has none."""
    if is_zero(t_xs) or not t_xs:
        return 0
    return t_xs.pop()


def tangent_of_item(t_seq, seq, index, item):
    """Tangent of the loop variable of ``for item in seq`` at position ``index``."""
    if is_zero(t_seq) or isinstance(seq, dict):
        return 0
    return t_seq[index]


def bprop_grads(cell, inputs, out, dout):
    """Call a Cell's custom ``bprop(*inputs, out, dout)``; it must give one gradient per input."""
    grads = cell.bprop(*inputs, out, dout)
    if not isinstance(grads, (tuple, list)):
        grads = (grads,)
    if len(grads) != len(inputs):
        raise ValueError(f"{type(cell).__name__}.bprop returned {len(grads)} gradient(s) for "
                         f"{len(inputs)} input(s); it must return exactly one per input")
    return tuple(grads)


def as_sequence(x):
    """``x`` when it can be indexed by position, else ``list(x)``: what ``zip``/``enumerate``
    loops index (dict keys, sets, dict views and iterators become lists)."""
    if isinstance(x, (list, tuple, np.ndarray, range, str)):
        return x
    return list(x)


def snapshot(x):
    """A copy of a list or dict a callee's tape keeps, so that later appends and pops (by the
    caller's backward sweep, at higher order) do not change what the tape holds."""
    if x.__class__ is list:
        return list(x)
    if x.__class__ is dict:
        return dict(x)
    return x


def item(g, i):
    """Gradient of element ``i`` of a container whose gradient is ``g``."""
    if is_zero(g):
        return 0
    if isinstance(g, dict):  # a TangentDict too, at higher order
        return g.get(i, 0)  # a dict gradient holds only the keys that received one
    return g[i]


def push_grad(dxs, g, xs=()):
    """Gradient of ``v = xs.pop()``: ``g`` goes back on the end of the list's gradient.

    ``xs`` is the list after the pop. A list's gradient is zero or has one entry per item, so a
    zero ``dxs`` becomes a zero per item of ``xs``: ``g`` then sits at the popped item's place,
    where ``pop_grad``, ``item`` and ``add`` look for it."""
    dxs = [0] * len(xs) if is_zero(dxs) else list(dxs)
    dxs.append(g)
    return dxs


def pop_grad(dxs):
    """Gradient of ``xs.append(v)``: (gradient of v, gradient of xs without its last entry)."""
    if is_zero(dxs) or len(dxs) == 0:
        return 0, dxs
    dxs = list(dxs)
    return dxs.pop(), dxs


def _is_float_like(v) -> bool:
    if isinstance(v, (bool, numbers.Integral)):
        return False
    if isinstance(v, (float, complex, np.floating, np.complexfloating)):
        return True
    return isinstance(v, np.ndarray) and v.dtype.kind in "fc"


def holds_float(value) -> bool:
    """Whether ``value`` (an output, or a tuple, list or dict of them) holds a float anywhere."""
    if isinstance(value, (tuple, list)):
        return any(holds_float(v) for v in value)
    if isinstance(value, dict):
        return any(holds_float(v) for v in value.values())
    return _is_float_like(value)


def holds_complex(value) -> bool:
    """Whether ``value`` (an output, or a tuple, list or dict of them) holds a complex number
    or array anywhere."""
    if isinstance(value, (tuple, list)):
        return any(holds_complex(v) for v in value)
    if isinstance(value, dict):
        return any(holds_complex(v) for v in value.values())
    return isinstance(value, (complex, np.complexfloating)) or \
        isinstance(value, np.ndarray) and value.dtype.kind == "c"


def complex_output_error(what, at=""):
    """The TypeError for a gradient asked of a complex output without a cotangent: as in JAX
    and autograd, a gradient is defined for a real output only (its real part's would be a
    silent guess at what the user means)."""
    return TypeError(
        f"{what} is asked of a complex output{at}: a gradient is defined for a real output "
        "only. Differentiate the real number you mean: np.real(out) or np.imag(out), "
        "np.abs(out) ** 2 for the squared magnitude. jvp and jacfwd give the complex "
        "derivative itself; vjp with a cotangent c gives the gradient of the real L with "
        "dL = Re(sum(c * d_out)) (README, Complex numbers)")


def output_is_differentiable(out, has_aux=False) -> bool:
    """Whether the differentiated part of ``out`` (the first element under ``has_aux``) holds a
    float."""
    if _is_float_like(out):
        return True
    if has_aux and isinstance(out, tuple) and len(out) >= 2:
        out = out[0]
    return holds_float(out)


def check_output_differentiable(out, fn_name, has_aux=False, where=""):
    """Raise a TypeError when the differentiated output holds no float at all: its gradient
    would be zeros whatever ``fn`` computes (``None`` usually means a missing ``return``).
    ``where``: the ``file:line`` of the function's ``def``, named in the message."""
    if output_is_differentiable(out, has_aux):
        return
    if has_aux and isinstance(out, tuple) and len(out) >= 2:
        out = out[0]
    at = f" (def at {where})" if where else ""
    if out is None:
        raise TypeError(f"{fn_name} returned None: is a return missing?{at}")
    if isinstance(out, np.ndarray):
        shown = f"an array of dtype {out.dtype} and shape {out.shape}"
    elif isinstance(out, (numbers.Number, str, bytes, np.generic)):
        shown = repr(out) if len(repr(out)) <= 60 else repr(out)[:57] + "..."
        shown = f"{shown} ({type(out).__name__})"
    else:
        shown = _describe_output(out)
    raise TypeError(f"{fn_name} returned {shown}, which holds no float: there is nothing to "
                    f"differentiate (ints, bools, strings and None are constants){at}")


class AuxSens:
    """The sensitivity under ``has_aux``: seeds only the first output; the aux get none."""

    def __init__(self, sens=None):
        self.sens = sens


def _describe_output(value) -> str:
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)} element(s)"
    shape = f" of shape {np.shape(value)}" if isinstance(value, np.ndarray) else ""
    return f"a {type(value).__name__}{shape}"


def seed(out, sens=None):
    """The output sensitivity: ``sens`` checked against ``out``, or ones of ``out``'s shape.

    Outputs that are not floats (ints, strings, None) get a zero sensitivity.
    """
    if isinstance(sens, AuxSens):
        if not isinstance(out, tuple) or len(out) < 2:
            raise ValueError(
                "has_aux=True needs the function to return a tuple (output, aux, ...) of at "
                f"least 2 elements, but it returned {_describe_output(out)}")
        return rebuild(out, [seed(out[0], sens.sens)] + [0] * (len(out) - 1))
    if isinstance(out, (tuple, list)):
        if sens is None:
            return rebuild(out, [seed(o) for o in out])
        if not isinstance(sens, (tuple, list)) or len(sens) != len(out):
            raise GradientError(
                f"sens must mirror the output: the output is a {type(out).__name__} of "
                f"{len(out)}, the sens is {_describe(sens)}")
        return rebuild(out, [seed(o, s) for o, s in zip(out, sens)])
    if isinstance(out, dict):
        return {k: seed(v, None if sens is None else sens[k]) for k, v in out.items()}
    if not _is_float_like(out):
        return 0
    if sens is None:
        if isinstance(out, (complex, np.complexfloating)) or \
                isinstance(out, np.ndarray) and out.dtype.kind == "c":
            raise complex_output_error("a gradient (no cotangent given)")
        return np.ones_like(out) if isinstance(out, np.ndarray) else type(out)(1.0)
    if np.shape(sens) != np.shape(out):
        raise GradientError(
            f"sens has shape {np.shape(sens)} but the output it scales has shape {np.shape(out)}")
    if isinstance(out, np.ndarray):
        return np.array(sens, dtype=out.dtype)  # a copy: gradient buffers may be updated in place
    return sens


def _describe(v):
    if isinstance(v, (tuple, list)):
        return f"a {type(v).__name__} of {len(v)}"
    return f"a {type(v).__name__} of shape {np.shape(v)}"


def rebuild(like, items):
    """A container of ``like``'s own type (a list, a tuple, a namedtuple) holding ``items``."""
    if isinstance(like, tuple) and hasattr(like, "_fields"):
        return type(like)(*items)
    return type(like)(items)


def as_grad(g, x):
    """The gradient ``g`` in the type, dtype and shape of the input ``x`` (zeros if ``g`` is 0)."""
    if g.__class__ is np.ndarray and x.__class__ is np.ndarray and g.base is None and \
            g.dtype == x.dtype and g.shape == x.shape:
        return g  # the common case: an array of its own, as it should be
    if isinstance(x, np.ndarray):
        if is_zero(g):
            return np.zeros(x.shape, x.dtype)
        g = np.asarray(g)
        if g.shape != x.shape:
            g = unbroadcast(g, x)
        if g.dtype != x.dtype or not g.flags.writeable or g.base is not None:
            if g.dtype.kind == "c" and x.dtype.kind != "c":
                g = np.real(g)  # a real input takes the real part (the complex convention)
            g = np.array(g, dtype=x.dtype)
        return g
    if isinstance(x, (list, tuple)):
        if is_zero(g):
            g = [0] * len(x)
        return rebuild(x, [as_grad(gi, xi) for gi, xi in zip(g, x)])
    if isinstance(x, dict):
        g = {} if is_zero(g) else g
        return {k: as_grad(g.get(k, 0), v) for k, v in x.items()}
    if isinstance(x, (np.generic, float, complex)):
        if is_zero(g):
            return type(x)(0)
        g = np.sum(g) if np.ndim(g) else g
        if np.iscomplexobj(g) and not np.iscomplexobj(x):
            g = np.real(g)  # a real input takes the real part (the complex convention)
        return type(x)(g)
    if is_zero(g):
        return 0
    return g
