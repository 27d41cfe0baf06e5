"""NumPy functions whose results are constants to the gradient, and the scalar-type casts.

Constructors, shape queries, index-valued functions, comparisons, rounding (zero slope almost
everywhere, as in JAX) and random sampling; a random permutation or choice of an array is a
gather of its entries, with an adjoint and a tangent rule side by side. ``np.float32(x)`` and
friends are casts: the gradient passes through them, cast back to the input's type; integer
casts are constants. Names missing from this NumPy are skipped, so the list can name functions
of several versions.
"""

import numpy as np

from mindgrad.rules import adjoint, d, linear, nondifferentiable, tangent
from mindgrad.rules.numpy_elementwise import array_grad, astype_grad
from mindgrad.runtime import GradientError, is_zero, real_grad, unbroadcast


def numpy_functions(*names, module=np):
    """The functions named ``names`` that exist in this NumPy (``module``)."""
    return [getattr(module, name) for name in names if name in dir(module)]


# ----- constructors and shape queries ------------------------------------------------------
# (not np.arange: its values move with a float start and step, numpy_shape.py)

nondifferentiable(*numpy_functions(
    "zeros", "ones", "empty", "zeros_like", "ones_like", "empty_like", "eye",
    "identity", "tri", "indices", "diag_indices",
    "tril_indices", "triu_indices", "mask_indices", "ravel_multi_index", "unravel_index",
    "shape", "ndim", "size", "result_type", "broadcast_shapes", "promote_types", "can_cast",
    "min_scalar_type", "iinfo", "finfo", "dtype", "issubdtype", "isscalar", "iscomplexobj",
    "isrealobj", "iscomplex", "isreal"))


@adjoint(np.full)
def _(out, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    d[fill_value] = unbroadcast(d[out], fill_value)


def fill_grad(g, fill_value, out):
    """Gradient of ``np.full_like``'s fill value: ``g`` summed to its shape; none when ``out``
    takes an integer or boolean dtype from its template array."""
    if out.dtype.kind not in "fc":
        return 0
    return unbroadcast(g, fill_value)


@adjoint(np.full_like)
def _(out, a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    d[fill_value] = fill_grad(d[out], fill_value, out)


# ----- indices, searching, counting, sets --------------------------------------------------

nondifferentiable(*numpy_functions(
    "argmax", "argmin", "argsort", "argpartition", "argwhere", "nanargmax", "nanargmin",
    "searchsorted", "digitize", "nonzero", "flatnonzero", "count_nonzero", "unique",
    "unique_values", "unique_counts", "unique_inverse", "unique_all", "bincount", "histogram",
    "histogram2d", "histogramdd", "histogram_bin_edges", "isin", "lexsort"))

# ----- comparisons and logic ---------------------------------------------------------------

nondifferentiable(*numpy_functions(
    "greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "isclose",
    "allclose", "array_equal", "array_equiv", "logical_and", "logical_or", "logical_not",
    "logical_xor", "any", "all", "isnan", "isinf", "isfinite", "isneginf", "isposinf", "isnat",
    "signbit", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "invert",
    "left_shift", "right_shift", "gcd", "lcm"))

# ----- piecewise constant: zero slope almost everywhere ------------------------------------

nondifferentiable(*numpy_functions(
    "sign", "floor", "ceil", "rint", "trunc", "fix", "round", "around", "floor_divide",
    "spacing"))
# not here: np.nextafter (x moved by one ulp: slope 1 in x) and np.heaviside (its second
# argument is the value at 0), in numpy_elementwise.py

# ----- random sampling ---------------------------------------------------------------------

nondifferentiable(*numpy_functions(
    "rand", "randn", "randint", "random", "random_sample", "ranf", "sample", "normal",
    "uniform", "standard_normal", "standard_exponential", "standard_cauchy", "standard_gamma",
    "standard_t", "shuffle", "seed", "default_rng", "beta", "binomial",
    "poisson", "exponential", "gamma", "laplace", "logistic", "lognormal", "multinomial",
    "multivariate_normal", "dirichlet", "bytes", "get_state", "set_state",
    module=np.random))

# A permutation or choice of an array copies some of its entries: a gather whose indices are
# found again from the values (exact: the draw copies them), so the sweep that runs the draw
# once needs nothing recorded.


def drawn_indices(out, a):
    """The positions along the first axis of ``a`` whose entries a random draw copied into
    ``out``. Equal entries of ``a`` would leave the positions ambiguous: a GradientError."""
    a = np.asarray(a)
    if a.ndim == 0:
        raise GradientError("a random draw from a single number has no entries to gather")
    rows = a.reshape(len(a), -1)
    position = {row.tobytes(): i for i, row in enumerate(rows)}
    if len(position) < len(rows):
        raise GradientError(
            "a random permutation or choice of an array with equal entries: which entry went "
            "where is ambiguous, so its gradient is unknown; draw the indices and index "
            "instead: idx = np.random.permutation(len(x)); x[idx]")
    drawn = np.asarray(out, dtype=a.dtype).reshape(-1, rows.shape[1])
    indices = np.array([position[row.tobytes()] for row in drawn], dtype=np.intp)
    return indices.reshape(np.shape(out)[:np.ndim(out) - (a.ndim - 1)])


def draw_grad(g, a, out):
    """Gradient of ``out``, a random draw from ``a``: ``g`` sent back to the entries drawn."""
    if is_zero(g):
        return 0
    grad = np.zeros(np.shape(a), dtype=np.result_type(a, 1.0))
    np.add.at(grad, drawn_indices(out, a), g)
    return array_grad(grad, a)


def draw_tangent(t, a, out):
    """Tangent of ``out``, a random draw from ``a``: the drawn entries of ``t``."""
    return np.asarray(t)[drawn_indices(out, a)]


# both helpers are linear in their first argument, the drawn positions piecewise constant:
# forward mode over the gradient (or over the tangent) applies them to its tangent


@linear(draw_grad)
def _(out, g, a, drawn):
    ...


@linear(draw_tangent)
def _(out, t, a, drawn):
    ...


@adjoint(np.random.permutation)
def _(out, x):
    d[x] = draw_grad(d[out], x, out)


@tangent(np.random.permutation)
def _(out, x):
    d[out] = draw_tangent(d[x], x, out)


@adjoint(np.random.choice)
def _(out, a, size=None, replace=True, p=None):
    d[a] = draw_grad(d[out], a, out)


@tangent(np.random.choice)
def _(out, a, size=None, replace=True, p=None):
    d[out] = draw_tangent(d[a], a, out)


# ----- scalar types: float casts pass the gradient, integer casts are constants ------------

FLOAT_TYPES = [np.float16, np.float32, np.float64, np.longdouble, np.complex64, np.complex128]


@adjoint(*FLOAT_TYPES)
def _(out, x=0.0):
    d[x] = astype_grad(real_grad(d[out], out), x)  # np.float64(z): the real part of z


nondifferentiable(*numpy_functions(
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intp", "uintp",
    "bool", "bool_", "str_", "bytes_", "datetime64", "timedelta64"))
