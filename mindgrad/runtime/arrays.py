"""The array types that generated code computes with: NumPy's ``ndarray``, and the arrays of the
libraries that implement NumPy's API through its dispatch protocols (``__array_ufunc__`` and
``__array_function__``): Dask's (chunked, lazy, computed on a cluster) and CuPy's (on a GPU).

NumPy code runs on the latter unchanged: ``np.exp(x)`` on a Dask array gives a Dask array.
So does the code mindgrad generates, with one spelling for every type, as long as the runtime
helpers and the rules keep to three rules, which this module gives the means to follow:

* create arrays from an array of the input's type (``np.zeros_like``, ``np.full_like``, the
  array's own methods), never with ``np.asarray``, which pulls a Dask or CuPy array into host
  memory (CuPy refuses; Dask computes the whole graph);
* branch on an array's values (``np.isfinite(s).all()``) only where ``eager(x)``: a test on a
  Dask array computes its graph in the middle of the gradient's (the helpers take their
  branch-free path there); on a CuPy array it waits for the GPU, and is allowed;
* test ``is_array(x)``, not ``isinstance(x, np.ndarray)``, where an array of any type is meant.

No library is imported here: the types are known by their module and name, so ``import
mindgrad`` needs neither Dask nor CuPy.
"""

from __future__ import annotations

import numpy as np

# (module prefix, class name) -> the library's name, as messages give it
_DISPATCHING = {("dask.array", "Array"): "Dask", ("cupy", "ndarray"): "CuPy"}
_known: dict = {}


def library(cls):
    """The name of the library of ``cls`` ("Dask", "CuPy") when its arrays are computed with
    through NumPy's dispatch protocols and mindgrad follows them; else None."""
    try:
        return _known[cls]
    except KeyError:
        pass
    found = None
    module = getattr(cls, "__module__", "") or ""
    for (prefix, name), lib in _DISPATCHING.items():
        if module.startswith(prefix) and any(
                base.__name__ == name and (base.__module__ or "").startswith(prefix)
                for base in getattr(cls, "__mro__", ())):
            found = lib
            break
    _known[cls] = found
    return found


def is_dispatching(value) -> bool:
    """Whether ``value`` is a Dask or CuPy array (``library``)."""
    cls = value.__class__
    if cls is np.ndarray or cls is float or cls is int:
        return False
    return library(cls) is not None


def is_array(value) -> bool:
    """Whether ``value`` is an array: an ndarray (or subclass) or a Dask or CuPy array."""
    return isinstance(value, np.ndarray) or is_dispatching(value)


def eager(*values) -> bool:
    """Whether a helper may branch on the values of ``values``: none is a Dask array, whose
    values a test would compute (a CuPy array's test waits for the GPU, and is allowed). Asked
    by helpers on every call: NumPy's arrays and floats answer without a lookup."""
    for v in values:
        cls = v.__class__
        if cls is not np.ndarray and cls is not float and library(cls) == "Dask":
            return False
    return True


def is_lazy(value) -> bool:
    """Whether ``value`` is a Dask array: a graph that is computed when asked."""
    cls = value.__class__
    return cls is not np.ndarray and library(cls) == "Dask"


def described(value) -> str:
    """``value``'s type as messages name it: ``dask.array.core.Array``."""
    cls = value.__class__
    return f"{cls.__module__}.{cls.__qualname__}"


def array_like(value, x):
    """``value`` (an array, a NumPy array or a number) as an array of ``x``'s type: itself when
    it is one; else converted by ``x``'s library (``np.asarray(value, like=x)``, NEP 35), as a
    Dask array of one chunk or a CuPy array copied to the GPU."""
    if value.__class__ is x.__class__:
        return value
    return np.asarray(value, like=x)


def as_array(value):
    """``np.asarray(value)``, but a Dask or CuPy array as it is: where a helper wants an array's
    attributes, never a copy in host memory."""
    if value.__class__ is np.ndarray:
        return value
    if is_dispatching(value):
        return value
    return np.asarray(value)


def zeros_of(x, dtype):
    """Zeros of ``x``'s shape and ``dtype``, of ``x``'s type (NumPy's for an ndarray)."""
    if isinstance(x, np.ndarray) or not is_dispatching(x):
        return np.zeros(np.shape(x), dtype)
    return np.zeros_like(x, dtype=dtype)


def _holds(ok, message):
    if not ok:
        raise ValueError(message)
    return ok


def checked(value, condition, message):
    """``value`` (a Dask array), made to raise ``ValueError(message)`` when it is computed if
    the Dask 0-d boolean ``condition`` is false: the test a helper makes of NumPy's values,
    made where Dask's are known."""
    ok = condition.map_blocks(_holds, message, dtype=bool)
    return value * ok


def whole_matrices(a):
    """``a``, a stack of matrices, with each matrix in one chunk where ``a`` is a Dask array:
    Dask's ``inv`` and ``solve`` need square chunks. Any other array as it is."""
    if not is_lazy(a):
        return a
    return a.rechunk({a.ndim - 2: -1, a.ndim - 1: -1})
