"""What the API asks of a function's output before differentiating it, and how it seeds the
backward sweep: a differentiable (float) output, the sensitivity ``sens`` shaped like it, the
gradients of a Cell's own ``bprop``, the results given back in the types of the inputs.
"""

from __future__ import annotations

import numbers

import numpy as np

from mindgrad.runtime import trees
from mindgrad.runtime.arrays import array_like, as_array, is_array, is_dispatching, is_lazy
from mindgrad.runtime.buffers import item
from mindgrad.runtime.core import (
    GradientError,
    is_zero,
    unbroadcast,
    zero_in,
    zero_in_zero_out,
)
from mindgrad.runtime.symbolic_zero import Zero, zero


def bprop_grads(cell, inputs, out, dout):
    """Call a Cell's custom ``bprop(*inputs, out, dout)``; it must give one gradient per input."""
    grads = cell.bprop(*inputs, out, dout)
    if not isinstance(grads, (tuple, list)):
        grads = (grads,)
    if len(grads) != len(inputs):
        raise ValueError(f"{type(cell).__name__}.bprop returned {len(grads)} gradient(s) for "
                         f"{len(inputs)} input(s); it must return exactly one per input")
    # None or the int 0 for an input: the zero of its type, which arithmetic keeps a zero
    return tuple(Zero.like(x) if g is None or g.__class__ is int and g == 0 else g
                 for g, x in zip(grads, inputs))



#: the types of the floats a function returns most, whose checks below take one test
_FLOATS = frozenset({float, np.float64, np.float32})


def _is_float_like(v) -> bool:
    cls = v.__class__
    if cls in _FLOATS:
        return True
    if cls is np.ndarray:
        return v.dtype.kind in "fc"
    if isinstance(v, (bool, numbers.Integral)):
        return False
    if isinstance(v, (float, complex, np.floating, np.complexfloating)):
        return True
    return is_array(v) and v.dtype.kind in "fc"



def holds_float(value) -> bool:
    """Whether ``value`` (an output, or a tuple, list or dict of them) holds a float anywhere."""
    return trees.any_leaf(_is_float_like, value)



def holds_complex(value) -> bool:
    """Whether ``value`` (an output, or a tuple, list or dict of them) holds a complex number
    or array anywhere."""
    return trees.any_leaf(_is_complex_like, value)


def _is_complex_like(v) -> bool:
    return isinstance(v, (complex, np.complexfloating)) or \
        is_array(v) and v.dtype.kind == "c"



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
    if sens is None and out.__class__ in _FLOATS:  # the common call: a real number out
        return out.__class__(1.0)
    if isinstance(sens, AuxSens):
        if not isinstance(out, tuple) or len(out) < 2:
            raise ValueError(
                "has_aux=True needs the function to return a tuple (output, aux, ...) of at "
                f"least 2 elements, but it returned {_describe_output(out)}")
        return trees.rebuild(out, [seed(out[0], sens.sens)] + [zero] * (len(out) - 1))
    if isinstance(out, (tuple, list)):
        if sens is None:
            return trees.rebuild(out, [seed(o) for o in out])
        if not isinstance(sens, (tuple, list)) or len(sens) != len(out):
            raise GradientError(
                f"sens must mirror the output: the output is a {type(out).__name__} of "
                f"{len(out)}, the sens is {_describe(sens)}")
        return trees.rebuild(out, [seed(o, s) for o, s in zip(out, sens)])
    if isinstance(out, dict):
        return {k: seed(v, None if sens is None else sens[k]) for k, v in out.items()}
    if not _is_float_like(out):
        return zero
    if sens is None:
        if isinstance(out, (complex, np.complexfloating)) or \
                is_array(out) and out.dtype.kind == "c":
            raise complex_output_error("a gradient (no cotangent given)")
        return np.ones_like(out) if is_array(out) else type(out)(1.0)
    if np.shape(sens) != np.shape(out):
        raise GradientError(
            f"sens has shape {np.shape(sens)} but the output it scales has shape {np.shape(out)}")
    if isinstance(out, np.ndarray):
        return np.array(sens, dtype=out.dtype)  # a copy: gradient buffers may be updated in place
    if is_dispatching(out):
        return array_like(sens, out).astype(out.dtype, copy=True)
    return sens



@zero_in_zero_out("g")
def seed_passed(g, out, sens, to_sens=True):
    """The derivative of ``seed(out, sens)`` along ``sens``, which it passes through (cast to
    ``out``'s dtype, in ``out``'s structure; ``out`` gives only that form): a tangent ``g`` of
    ``sens`` in ``out``'s form, or (``to_sens``) a gradient ``g`` of the result in ``sens``'s.
    An output that is not a float takes no sensitivity: 0."""
    if sens is None or zero_in(g):
        return zero
    if isinstance(sens, AuxSens):
        raise NotImplementedError(
            "a derivative with respect to the sensitivity of a has_aux gradient function is "
            "not supported; differentiate with respect to its inputs")
    if isinstance(out, (tuple, list)):
        parts = [seed_passed(item(g, i), o, s, to_sens)
                 for i, (o, s) in enumerate(zip(out, sens))]
        return trees.rebuild(sens if to_sens else out, parts)
    if isinstance(out, dict):
        return {k: seed_passed(item(g, k), v, sens[k], to_sens) for k, v in out.items()}
    if not _is_float_like(out):
        return zero
    like = sens if to_sens else out
    if is_dispatching(like):
        return array_like(g, like).astype(like.dtype, copy=True)
    return np.array(g, dtype=like.dtype) if isinstance(like, np.ndarray) else g


def _describe(v):
    if isinstance(v, (tuple, list)):
        return f"a {type(v).__name__} of {len(v)}"
    return f"a {type(v).__name__} of shape {np.shape(v)}"




def _dispatched_grad(g, x):
    """``as_grad`` for a Dask or CuPy input, or a Dask or CuPy gradient of a NumPy input (a
    weight that meets a Dask batch: its gradient stays lazy, computed with the others): the
    gradient in the input's type (converted where it came as NumPy's, for an input only NumPy
    values reached), shape and dtype, with a Dask input's chunks, and never the input itself."""
    if is_zero(g):
        return np.zeros_like(x)
    g = array_like(g, x if is_dispatching(x) else g)
    if g.shape != x.shape:
        g = unbroadcast(g, x)
    if g.dtype != x.dtype:
        if g.dtype.kind == "c" and x.dtype.kind != "c":
            g = np.real(g)  # a real input takes the real part (the complex convention)
        g = g.astype(x.dtype)
    if is_lazy(x):
        return g.rechunk(x.chunks) if g.chunks != x.chunks else g
    return g.copy() if g is x or getattr(g, "base", None) is not None else g


def as_grad(g, x):
    """The gradient ``g`` in the type, dtype and shape of the input ``x`` (zeros if ``g`` is 0)."""
    if g.__class__ is np.ndarray and x.__class__ is np.ndarray and g.base is None and \
            g.dtype == x.dtype and g.shape == x.shape:
        return g  # the common case: an array of its own, as it should be
    if g.__class__ is x.__class__ and x.__class__ in _FLOATS:
        return g  # a number's gradient, a number of its type
    if is_dispatching(x) or is_dispatching(g) and isinstance(x, np.ndarray):
        return _dispatched_grad(g, x)
    if isinstance(x, np.ndarray):
        if is_zero(g):
            return np.zeros(x.shape, x.dtype)
        g = as_array(g)
        if g.shape != x.shape:
            g = unbroadcast(g, x)
        if g.dtype != x.dtype or not g.flags.writeable or g.base is not None:
            if g.dtype.kind == "c" and x.dtype.kind != "c":
                g = np.real(g)  # a real input takes the real part (the complex convention)
            g = np.array(g, dtype=x.dtype)
        return g
    if isinstance(x, (list, tuple)):
        if is_zero(g):
            g = [zero] * len(x)
        return trees.rebuild(x, [as_grad(gi, xi) for gi, xi in zip(g, x)])
    if isinstance(x, dict):
        g = {} if is_zero(g) else g
        return {k: as_grad(g.get(k, zero), v) for k, v in x.items()}
    if isinstance(x, (np.generic, float, complex)):
        if is_zero(g):
            return type(x)(0)
        g = np.sum(g) if np.ndim(g) else g
        if np.iscomplexobj(g) and not np.iscomplexobj(x):
            g = np.real(g)  # a real input takes the real part (the complex convention)
        if is_dispatching(g):  # a number's gradient from Dask arrays: a 0-d one, still lazy
            return g.astype(np.result_type(x, np.float32))
        return type(x)(g)
    if is_zero(g):
        return zero
    return g


def independent(grads, split):
    """The gradients with no array returned twice (``x + w`` gives both one array): a caller
    that scales one in place must not change another."""
    if len(grads) == 1:
        return (grads if split else ()), (() if split else grads)
    seen, out = set(), []
    for g in grads:
        if isinstance(g, np.ndarray):
            if id(g) in seen:
                g = g.copy()
            seen.add(id(g))
        out.append(g)
    return tuple(out[:split]), tuple(out[split:])
