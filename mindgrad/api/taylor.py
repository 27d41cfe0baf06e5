"""Taylor mode: ``jet`` and ``derivative``, with MindSpore's conventions (``ops.jet``,
``ops.derivative``; JAX's ``jax.experimental.jet`` uses the same).

``jet(fn, primals, series)`` follows the curve ``x(t)`` through ``primals`` whose derivatives
at ``t = 0`` are ``series[0]`` (the first), ``series[1]`` (the second), ..., and gives
``(fn(primals), out_series)``, ``out_series[k - 1]`` the ``k``-th derivative of ``fn(x(t))`` at
``t = 0``, for ``k`` from 1 to the order ``n = len(series)``. For several arguments,
``primals`` and ``series`` are tuples with one entry each. ``derivative(fn, primals, order)``
is the ``order``-th derivative along the direction of ones (the curve ``primals + t``):
``(fn(primals), that derivative)``.

Where mindgrad can write it, ``fn`` runs as its Taylor code (``compiler/transform/taylor.py``,
shown by ``mindgrad.source(mindgrad.jet, fn, primals, series)``): each value carries its
truncated Taylor series, each nonlinear operation a rule of ``runtime.taylor`` costing
``O(order^2)``. Elsewhere (a branch on a series, a function without a Taylor rule) the curve is
written as a polynomial in ``t`` (Horner's form, products and sums only, so its derivatives at
0 are exact), and the ``k``-th derivative is ``jvp`` in ``t`` of the ``(k - 1)``-th: forward mode
nested ``k`` times through generated Python functions, right at any order, each level's code
built once per function, order and kinds of arguments. One ``jvp`` gives two orders (the value
and the slope of the ``(k - 1)``-th).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from mindgrad.api import arguments, batched
from mindgrad.api.functional import jvp
from mindgrad.compiler import batching, cache
from mindgrad.compiler.finish.emit import compiled_function
from mindgrad.runtime import taylor as runtime_taylor

__all__ = ["jet", "derivative"]


def jet(fn, primals, series):
    """``(fn(primals), out_series)``: the derivatives of ``fn`` along the curve whose
    derivatives at ``primals`` are ``series`` (see the module's docstring)."""
    array_type = arguments.array_type_in((primals, series))
    if array_type is not None:
        plain = jet(fn, arguments.as_plain(primals), arguments.as_plain(series))
        return arguments.as_type(plain, array_type)
    several = isinstance(primals, (tuple, list))
    primals = tuple(np.asarray(p) if not np.isscalar(p) else p for p in primals) \
        if several else (primals,)
    if several != isinstance(series, (tuple, list)) or (several and
                                                        len(series) != len(primals)):
        raise ValueError("jet: give series as primals are given: one array for one primal, "
                         f"a tuple of {len(primals)} for a tuple of {len(primals)}")
    series = tuple(series) if several else (series,)
    terms, order = [], None
    for i, (p, s) in enumerate(zip(primals, series)):
        s = np.asarray(s)
        if s.ndim != np.ndim(p) + 1 or s.shape[1:] != np.shape(p):
            raise ValueError(f"jet: series[{i}] has shape {s.shape}; it holds the curve's "
                             f"derivatives stacked along axis 0, so its shape is (order,) + "
                             f"the primal's {np.shape(p)}")
        if order is not None and s.shape[0] != order:
            raise ValueError(f"jet: the series disagree on the order: {order} and "
                             f"{s.shape[0]} (series[{i}])")
        order = s.shape[0]
        terms.append(s)
    if not order:
        raise ValueError("jet: the series is empty; give at least the first derivative")
    # the curve's coefficients, x_k / k!, for each primal in turn
    coefficients = [s[k] / math.factorial(k + 1) for s in terms for k in range(order)]
    out = fn(*primals)
    if not isinstance(out, (np.ndarray, np.generic, float, int)):
        raise TypeError(f"jet: fn returns {type(out).__name__}; Taylor mode here takes a "
                        f"function of one array result")
    dtype = np.result_type(out)
    found = _by_taylor_code(fn, primals, coefficients, order, dtype)
    if found is not None:
        return out, found
    return out, nested(fn, primals, coefficients, order, out)


def nested(fn, primals, coefficients, order, out):
    """The derivatives along the curve by forward mode nested ``order`` times (see the
    module's docstring)."""
    levels = _levels(fn, len(primals), order)
    point = (0.0, *primals, *coefficients)
    along_t = (1.0,) + (None,) * (len(point) - 1)
    derivatives = [None] * order
    for k in range(order, 0, -2):  # jvp of the (k - 1)-th derivative gives it and the k-th
        value, derivatives[k - 1] = jvp(levels[k - 1], point, along_t)
        if k >= 2:
            derivatives[k - 2] = value
    dtype = np.result_type(out)
    return np.stack([np.asarray(d, dtype=dtype) * np.ones_like(out, dtype=dtype)
                     for d in derivatives])


def taylor_code(fn, primals):
    """The Taylor code of ``fn`` for arguments like ``primals`` (``batching.Compiled``), or why
    there is none (a string); built once per function and kinds of arguments."""
    target = batched.target(fn)
    if target is None:
        return f"{type(fn).__name__} has no Python source"
    function, obj = target
    built = cache.taylor.setdefault(function, {})
    key = (id(obj), tuple(cache.kind(p) for p in primals))
    made = built.get(key)
    if made is None or (not isinstance(made, str) and not made.fits()):
        head = [obj] if obj is not None else []
        try:
            made = batching.build(function, obj, head + list(primals),
                                  range(len(head), len(head) + len(primals)),
                                  taylor_mode=True)
        except Exception as e:  # nested forward mode instead: exact at any order
            made = f"{type(e).__name__}: {e}"
        built[key] = made
    return made


def _by_taylor_code(fn, primals, coefficients, order, dtype):
    """The derivatives along the curve by ``fn``'s Taylor code, or None where there is none
    (or it raises: nested forward mode then runs, and raises the user's own error)."""
    count = len(primals)
    series = [np.stack([np.asarray(primals[i])] +
                       [np.asarray(c) for c in coefficients[i * order:(i + 1) * order]])
              for i in range(count)]
    rule = runtime_taylor.FUNCTIONS.get(fn) if count == 1 else None
    if rule is not None:  # np.exp, np.sin, ...: their rule directly
        out = rule(series[0])
    else:
        made = taylor_code(fn, primals)
        if isinstance(made, str):
            return None
        obj = batched.target(fn)[1]
        try:
            out = made.function(*([obj] if obj is not None else []), *series, order + 1)
        except Exception:
            return None
    return np.stack([np.asarray(out[k] * math.factorial(k), dtype=dtype)
                     for k in range(1, order + 1)])


def derivative(fn, primals, order):
    """``(fn(primals), the order-th derivative of fn along the direction of ones)``."""
    if not isinstance(order, int) or isinstance(order, bool) or order < 1:
        raise ValueError(f"derivative: order must be an int >= 1, got {order!r}")
    several = isinstance(primals, (tuple, list))
    given = tuple(primals) if several else (primals,)
    series = tuple(_ones_then_zeros(p, order) for p in given)
    out, out_series = jet(fn, primals, series if several else series[0])
    return out, out_series[order - 1]


def _ones_then_zeros(primal, order):
    """The series of the curve ``primal + t``: ones, then zeros (a Tensor primal makes
    ``jet`` give Tensors whatever the series' type)."""
    dtype = np.result_type(primal) if np.result_type(primal).kind == "f" else np.float64
    series = np.zeros((order,) + np.shape(primal), dtype=dtype)
    series[0] = 1.0
    return series


@functools.lru_cache(maxsize=64)
def _levels(fn, count, order):
    """``[f_0, ..., f_(order - 1)]``: ``f_k(t, x..., c...)`` the ``k``-th derivative in ``t``
    of ``fn`` along the curve ``x_i + t (c_i1 + t (c_i2 + ...))``, ``f_k`` the ``jvp`` in ``t``
    of ``f_(k-1)``: generated Python, which the transformations follow (``jet`` takes the
    ``jvp`` of the last for the order-th)."""
    xs = [f"x{i}" for i in range(count)]
    cs = [f"c{i}_{k}" for i in range(count) for k in range(1, order + 1)]
    params = ", ".join(["t", *xs, *cs])
    points = []
    for i in range(count):
        horner = f"c{i}_{order}"
        for k in range(order - 1, 0, -1):
            horner = f"c{i}_{k} + t * ({horner})"
        points.append(f"x{i} + t * ({horner})")
    name = "taylor_" + "".join(c if c.isalnum() else "_" for c in
                               getattr(fn, "__name__", type(fn).__name__))
    namespace = {"fn": fn, "jvp": jvp}
    levels = [compiled_function(f"def {name}_0({params}):\n"
                                f"    return fn({', '.join(points)})\n", f"{name}_0", namespace)]
    nones = ", ".join(["None"] * (count + len(cs)))
    for k in range(1, order):
        text = (f"def {name}_{k}({params}):\n"
                f"    # the derivative in t of the one before\n"
                f"    return jvp({name}_{k - 1}, ({params},), (1.0, {nones}))[1]\n")
        levels.append(compiled_function(text, f"{name}_{k}", namespace))
    return levels
