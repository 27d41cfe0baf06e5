"""NumPy functions whose results are constants to the gradient, and the scalar-type casts.

Constructors, shape queries, index-valued functions, comparisons, rounding (zero slope almost
everywhere, as in JAX) and random sampling; a random permutation or choice of an array is a
gather of its entries, with an adjoint and a tangent rule side by side. ``np.float32(x)`` and
friends are casts: the gradient passes through them, cast back to the input's type; integer
casts are constants. Names missing from this NumPy are skipped, so the list can name functions
of several versions.
"""

import numpy as np

from mindgrad.rules import adjoint, d, linear, nondifferentiable, tangent, transpose
from mindgrad.rules.helpers import array_grad, astype_grad
from mindgrad.runtime import (
    GradientError,
    is_any_zero,
    is_zero,
    takes_zero,
    unbroadcast,
    zero,
    zero_in,
    zero_in_zero_out,
)
from mindgrad.runtime.arrays import as_array
from mindgrad.runtime.tangents import TangentTuple, float_dtype, zero_tangent_of


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


# ----- indices, searching, counting, sets --------------------------------------------------

nondifferentiable(*numpy_functions(
    "argmax", "argmin", "argsort", "argpartition", "argwhere", "nanargmax", "nanargmin",
    "searchsorted", "digitize", "nonzero", "flatnonzero", "count_nonzero", "isin", "lexsort"))

# Not constants, although they count or search: np.bincount is linear in its weights, the
# values np.unique returns are entries of its input, and a histogram's bin edges (and its
# counts, weighted or as a density) move with the data, the bins and the range. Where a
# gradient or tangent reaches those, it is refused rather than taken as zero.


def is_zero_tree(g):
    """Whether ``g`` (a gradient or tangent, or a tuple or list of them) is all zero."""
    if isinstance(g, (tuple, list)):
        return all(is_zero_tree(part) for part in g)
    return g is None or is_any_zero(g)


@takes_zero(keeps_values=False, any_number=True)
def moves_refused(what, g=1.0):
    """0 where the gradient or tangent ``g`` is zero, else a NotImplementedError: ``what``
    moves with the differentiated input, but has no rule."""
    if is_zero_tree(g):
        return zero
    raise NotImplementedError(
        f"{what}: a value that moves with the differentiated input, with no gradient or "
        "tangent rule here (it is not a constant); compute it with differentiable "
        "operations, or outside the differentiated function")


@zero_in_zero_out("g")
def numbers_only(g, value):
    """``g``, or 0 where ``value`` holds no float (a bin count, a rule's name, None): what a
    refusal checks for an argument that may or may not be differentiable."""
    if zero_in(g):
        return zero
    if value is None or isinstance(value, str):
        return zero
    kinds = [as_array(v).dtype.kind for v in (value if isinstance(value, (tuple, list))
                                                 else [value])]
    return g if any(k in "fc" for k in kinds) else 0


nondifferentiable(is_zero_tree, numbers_only)


# moves_refused is linear in g (0 for 0, else refused): differentiated again, it refuses what
# moves at the next order too, and the refusals of both directions transpose each other
@linear(moves_refused, wrt="g")
@adjoint(moves_refused)
def _(out, what, g=1.0):
    d[g] = moves_refused(what, d[out])


@zero_in_zero_out("g")
def bincount_grad(g, x, weights):
    """Gradient of ``np.bincount(x, weights)`` for its weights: the bin of each one's."""
    if is_zero(g):
        return zero
    return astype_grad(unbroadcast(as_array(g)[as_array(x)], weights), weights)


@linear(bincount_grad)
def _(out, g, x, weights):
    ...


@zero_in_zero_out("t")
def bincount_tangent(t, x, weights, minlength=0):
    """Tangent of ``np.bincount(x, weights, minlength)`` from the weights: their tangents
    counted into the same bins."""
    if zero_in(t):
        return zero
    return np.bincount(x, np.broadcast_to(t, np.shape(weights)), minlength)


@adjoint(bincount_tangent)  # linear in t; the bins x are integers
def _(out, t, x, weights, minlength=0):
    d[t] = bincount_grad(d[out], x, weights)


@linear(bincount_tangent)
def _(out, t, x, weights, minlength=0):
    ...


@transpose(np.bincount)  # d[weights] = bincount_grad(d[out], x, weights)
@tangent(np.bincount)
def _(out, x, weights=None, minlength=0):
    """Linear in ``weights``; the bins ``x`` are integers."""
    d[out] = bincount_tangent(d[weights], x, weights, minlength)


UNIQUE_VALUES = "the values np.unique returns (entries of its input; for distinct entries, " \
    "np.sort gives them)"


def unique_gather(ar, axis=None, sorted=True):
    """``(index, inverse, repeats)`` of ``np.unique(ar)``'s values in the flattened ``ar``:
    the values are ``ar.flat[index]``, entry ``k`` is value ``inverse[k]``, and ``repeats``
    says whether an entry repeats. Values along an axis, or unsorted, are refused."""
    if axis is not None or not sorted:
        moves_refused("np.unique(..., axis=...) or np.unique(..., sorted=False)'s values")
    _, index, inverse, counts = np.unique(np.ravel(ar), return_index=True, return_inverse=True,
                                          return_counts=True)
    return index, np.ravel(inverse), bool(np.any(counts > 1))


@zero_in_zero_out("g")
def unique_grad(g, ar, out, axis=None, sorted=True):
    """Gradient of ``np.unique(ar)`` (and of ``unique_values``, ``unique_all``, ...) for ``ar``:
    the values' gradient sent back to the entries they were taken from; the indices and counts
    are constants. An entry that repeats has none (moving one copy adds a value): refused."""
    if zero_in(g):
        return zero
    g_values = g if not isinstance(g, (tuple, list)) else g[0]
    if is_zero(g_values):
        return zero
    index, _, repeats = unique_gather(ar, axis, sorted)
    if repeats:
        raise NotImplementedError(
            "np.unique of entries that repeat has no derivative (moving one copy apart adds a "
            "value); it is differentiable where the entries are distinct")
    grad = np.zeros(np.size(ar), dtype=np.result_type(ar, 1.0))
    grad[index] = g_values
    return astype_grad(grad.reshape(np.shape(ar)), ar)


@zero_in_zero_out("t")
def unique_tangent(t, ar, out, axis=None, sorted=True):
    """Tangent of ``np.unique(ar)`` (see ``unique_grad``): the tangents of the entries the
    values were taken from; entries that repeat must move together, else refused."""
    if zero_in(t):
        return zero
    index, inverse, repeats = unique_gather(ar, axis, sorted)
    flat = np.ravel(np.broadcast_to(t, np.shape(ar)))
    values = out if isinstance(out, np.ndarray) else out[0]
    t_values = flat[index].astype(float_dtype(values), copy=False)
    if repeats and not np.array_equal(t_values[inverse], flat):
        raise NotImplementedError(
            "np.unique of entries that repeat, moved apart by the tangent, has no derivative "
            "(a copy moved apart adds a value)")
    if isinstance(out, np.ndarray):
        return t_values
    rest = [zero_tangent_of(part) for part in out[1:]]  # no *-unpacking: reverse mode reads it
    return TangentTuple((t_values,) + tuple(rest))


nondifferentiable(unique_gather)


@linear(unique_grad)
def _(out, g, ar, ans, axis=None, sorted=True):
    ...


@linear(unique_tangent)
@adjoint(unique_tangent)  # linear in t: the transpose is the gradient
def _(out, t, ar, ans, axis=None, sorted=True):
    d[t] = unique_grad(d[out], ar, ans, axis, sorted)


@transpose(*numpy_functions("unique"))  # d[ar] = unique_grad(d[out], ar, out, axis, sorted)
@tangent(*numpy_functions("unique"))
def _(out, ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
      equal_nan=True, sorted=True):
    """The values are entries of ``ar`` (where they are distinct: a repeated entry is refused),
    the indices and counts constants; values along an ``axis`` are refused."""
    d[out] = unique_tangent(d[ar], ar, out, axis, sorted)


UNIQUE_SPLIT = numpy_functions("unique_values", "unique_counts", "unique_inverse", "unique_all")
if UNIQUE_SPLIT:  # NumPy >= 2.0
    @transpose(*UNIQUE_SPLIT)  # d[x] = unique_grad(d[out], x, out)
    @tangent(*UNIQUE_SPLIT)
    def _(out, x):
        """As ``np.unique``'s: the values are entries of ``x``, where they are distinct."""
        d[out] = unique_tangent(d[x], x, out)


@zero_in_zero_out("g")
def histogram_refused(g, density):
    """A histogram's gradient for its data: refused where it reaches the bin edges (the last
    results), or the counts of a density (divided by the bins' widths)."""
    if zero_in(g):
        return zero
    edges = g[1:] if isinstance(g, (tuple, list)) else g  # histogram_bin_edges: the edges
    moving = [edges, g[0]] if density and isinstance(g, (tuple, list)) else [edges]
    return moves_refused("a histogram's bin edges (and a density's counts)", moving)


nondifferentiable(histogram_refused)
HISTOGRAM = "a histogram of differentiated data, bins, range or weights"


def histogram_extremes(a, bins, range):
    """Where ``np.histogram(a, bins, range)``'s edges come from: None for edges that do not
    move with ``a`` (a range or an array of edges given), else the flat positions of ``a``'s
    minimum and maximum, the first and last edges. A minimum or maximum several entries share
    has no derivative: a NotImplementedError."""
    if range is not None or np.ndim(bins) > 0:
        return None
    flat = np.ravel(a)
    low, high = int(np.argmin(flat)), int(np.argmax(flat))
    if np.sum(flat == flat[low]) > 1 or np.sum(flat == flat[high]) > 1:
        raise NotImplementedError(
            "np.histogram's bin edges run from the data's minimum to its maximum, which "
            "several entries share here: they have no derivative; pass range=(lo, hi)")
    return low, high


@zero_in_zero_out("g")
def histogram_data_grad(g, a, bins, range, density, out):
    """Gradient of ``np.histogram(a, bins, range, density)`` for ``a``: its edges run evenly
    from ``a``'s minimum to its maximum (unless a range or edges are given), so those two
    entries get the edges' gradient; the counts are constants, a density's refused."""
    if zero_in(g):
        return zero
    if is_zero_tree(g) or range is not None or np.ndim(bins) > 0:
        return zero
    g_counts, g_edges = g
    if density:
        moves_refused("the density of a histogram of differentiated data", g_counts)
    if is_zero(g_edges):
        return zero
    low, high = histogram_extremes(a, bins, range)
    share = np.linspace(0.0, 1.0, np.size(out[1]))
    # written with selections, not index writes, so that a gradient of it is one (hvp)
    positions = np.arange(np.size(a))
    grad = np.where(positions == low, np.sum(g_edges * (1.0 - share)), 0.0) + \
        np.where(positions == high, np.sum(g_edges * share), 0.0)
    return astype_grad(np.reshape(grad, np.shape(a)), a)


@zero_in_zero_out("t")
def histogram_data_tangent(t, a, bins, range, density, out):
    """Tangent of ``np.histogram(a, ...)`` from ``a`` (see ``histogram_data_grad``)."""
    if zero_in(t):
        return zero
    counts, edges = out
    extremes = histogram_extremes(a, bins, range)
    t_edges = np.zeros(np.shape(edges), float_dtype(edges))
    if extremes is not None:
        if density:
            moves_refused("the density of a histogram of differentiated data")
        flat = np.ravel(np.broadcast_to(t, np.shape(a)))
        share = np.linspace(0.0, 1.0, np.size(edges))
        t_edges = (flat[extremes[0]] * (1.0 - share) + flat[extremes[1]] * share).astype(
            t_edges.dtype, copy=False)
    return TangentTuple((np.zeros(np.shape(counts), float_dtype(counts)), t_edges))


nondifferentiable(histogram_extremes)


@linear(histogram_data_grad)
def _(out, g, a, bins, range, density, ans):
    ...


@linear(histogram_data_tangent)
def _(out, t, a, bins, range, density, ans):
    ...


@adjoint(np.histogram)
def _(out, a, bins=10, range=None, density=None, weights=None):
    """The counts are constants in the data; the edges run from its minimum to its maximum
    (unless ``range`` or edges are given). Refused: a density of moving edges, and
    differentiated bins, range or weights."""
    d[a] = histogram_data_grad(d[out], a, bins, range, density, out)
    d[bins] = moves_refused("a histogram's bins", numbers_only(d[out], bins))
    d[range] = moves_refused("a histogram's range", numbers_only(d[out], range))
    d[weights] = moves_refused("a weighted histogram's counts", numbers_only(d[out], weights))


@tangent(np.histogram)
def _(out, a, bins=10, range=None, density=None, weights=None):
    d[out] = histogram_data_tangent(d[a], a, bins, range, density, out)
    d[out] = moves_refused(HISTOGRAM, d[bins])
    d[out] = moves_refused(HISTOGRAM, d[range])
    d[out] = moves_refused(HISTOGRAM, d[weights])


@adjoint(np.histogramdd)
def _(out, a, bins=10, range=None, density=None, weights=None):
    """Refused where a gradient reaches the bin edges, a density, weighted counts, the bins or
    the range: only the counts of unweighted data are constants. Forward mode refuses any
    differentiated argument."""
    d[a] = histogram_refused(d[out], density)
    d[bins] = moves_refused("a histogram's bins", d[out])
    d[range] = moves_refused("a histogram's range", d[out])
    d[weights] = moves_refused("a weighted histogram's counts", d[out])


@tangent(np.histogramdd)
def _(out, a, bins=10, range=None, density=None, weights=None):
    d[out] = moves_refused(HISTOGRAM, d[a])
    d[out] = moves_refused(HISTOGRAM, d[bins])
    d[out] = moves_refused(HISTOGRAM, d[range])
    d[out] = moves_refused(HISTOGRAM, d[weights])


@adjoint(np.histogram2d)
def _(out, x, y, bins=10, range=None, density=None, weights=None):
    """As ``np.histogram``'s: only the counts of unweighted data are constants."""
    d[x] = histogram_refused(d[out], density)
    d[y] = histogram_refused(d[out], density)
    d[bins] = moves_refused("a histogram's bins", d[out])
    d[range] = moves_refused("a histogram's range", d[out])
    d[weights] = moves_refused("a weighted histogram's counts", d[out])


@tangent(np.histogram2d)
def _(out, x, y, bins=10, range=None, density=None, weights=None):
    d[out] = moves_refused(HISTOGRAM, d[x])
    d[out] = moves_refused(HISTOGRAM, d[y])
    d[out] = moves_refused(HISTOGRAM, d[bins])
    d[out] = moves_refused(HISTOGRAM, d[range])
    d[out] = moves_refused(HISTOGRAM, d[weights])


@zero_in_zero_out("g")
def bin_edges_grad(g, a, bins, range, out):
    """Gradient of ``np.histogram_bin_edges(a, ...)`` for ``a``: as ``np.histogram``'s edges."""
    if zero_in(g):
        return zero
    return histogram_data_grad((0, g), a, bins, range, False, (None, out))


@zero_in_zero_out("t")
def bin_edges_tangent(t, a, bins, range, out):
    """Tangent of ``np.histogram_bin_edges(a, ...)`` from ``a``: as ``np.histogram``'s edges."""
    if zero_in(t):
        return zero
    return histogram_data_tangent(t, a, bins, range, False, (np.zeros(0), out))[1]


@linear(bin_edges_grad)
def _(out, g, a, bins, range, ans):
    ...


@linear(bin_edges_tangent)
def _(out, t, a, bins, range, ans):
    ...


@adjoint(np.histogram_bin_edges)
def _(out, a, bins=10, range=None, weights=None):
    """As ``np.histogram``'s edges: from the data's minimum to its maximum (unless ``range`` or
    edges are given); differentiated bins or range are refused."""
    d[a] = bin_edges_grad(d[out], a, bins, range, out)
    d[bins] = moves_refused("a histogram's bins", numbers_only(d[out], bins))
    d[range] = moves_refused("a histogram's range", numbers_only(d[out], range))


@tangent(np.histogram_bin_edges)
def _(out, a, bins=10, range=None, weights=None):
    d[out] = bin_edges_tangent(d[a], a, bins, range, out)
    d[out] = moves_refused(HISTOGRAM, d[bins])
    d[out] = moves_refused(HISTOGRAM, d[range])


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
    "rand", "randn", "randint", "random", "random_sample", "ranf", "sample",
    "standard_normal", "standard_exponential", "standard_cauchy", "shuffle", "seed",
    "default_rng", "binomial", "poisson", "multinomial", "bytes", "get_state", "set_state",
    module=np.random))

# A draw moves with the parameters of its distribution (loc + scale * z for a normal one):
# refused where they depend on the differentiated input, rather than taken as constants.
DRAW = ("a random draw whose distribution's parameters depend on the differentiated input "
        "(write it as loc + scale * np.random.standard_normal(size) to differentiate it)")


# refused where the parameters are differentiated (the draw moves with them); a draw of
# constant parameters is a constant. The adjoints are the refusals transposed.
@transpose(np.random.normal, np.random.uniform, np.random.laplace, np.random.logistic,
           np.random.lognormal, np.random.beta, np.random.gamma)
@tangent(np.random.normal, np.random.uniform, np.random.laplace, np.random.logistic,
         np.random.lognormal, np.random.beta, np.random.gamma)
def _(out, p, q=1.0, size=None):
    d[out] = moves_refused(DRAW, d[p])
    d[out] = moves_refused(DRAW, d[q])


@transpose(np.random.exponential, np.random.standard_gamma, np.random.standard_t,
           np.random.dirichlet)
@tangent(np.random.exponential, np.random.standard_gamma, np.random.standard_t,
         np.random.dirichlet)
def _(out, p, size=None):
    d[out] = moves_refused(DRAW, d[p])


REFUSED = [*numpy_functions("histogram2d", "histogramdd"),
           *numpy_functions("normal", "uniform", "laplace", "logistic", "lognormal", "beta",
                            "gamma", "exponential", "standard_gamma", "standard_t",
                            "dirichlet", "multivariate_normal", module=np.random)]


@transpose(np.random.multivariate_normal)  # refused where the mean or covariance moves
@tangent(np.random.multivariate_normal)
def _(out, mean, cov, size=None, check_valid="warn", tol=1e-8):
    d[out] = moves_refused(DRAW, d[mean])
    d[out] = moves_refused(DRAW, d[cov])

# A permutation or choice of an array copies some of its entries: a gather whose indices are
# found again from the values (exact: the draw copies them), so the sweep that runs the draw
# once needs nothing recorded.


def drawn_indices(out, a):
    """The positions along the first axis of ``a`` whose entries a random draw copied into
    ``out``. Equal entries of ``a`` would leave the positions ambiguous: a GradientError."""
    a = as_array(a)
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


@zero_in_zero_out("g")
def draw_grad(g, a, out):
    """Gradient of ``out``, a random draw from ``a``: ``g`` sent back to the entries drawn."""
    if is_zero(g):
        return zero
    grad = np.zeros(np.shape(a), dtype=np.result_type(a, 1.0))
    np.add.at(grad, drawn_indices(out, a), g)
    return array_grad(grad, a)


@zero_in_zero_out("t")
def draw_tangent(t, a, out):
    """Tangent of ``out``, a random draw from ``a``: the drawn entries of ``t``."""
    if zero_in(t):
        return zero
    return as_array(t)[drawn_indices(out, a)]


# both helpers are linear in their first argument, the drawn positions piecewise constant:
# forward mode over the gradient (or over the tangent) applies them to its tangent


@linear(draw_grad)
def _(out, g, a, drawn):
    ...


@linear(draw_tangent)
def _(out, t, a, drawn):
    ...


@transpose(np.random.permutation)  # d[x] = draw_grad(d[out], x, out)
@tangent(np.random.permutation)
def _(out, x):
    d[out] = draw_tangent(d[x], x, out)


@transpose(np.random.choice)  # d[a] = draw_grad(d[out], a, out)
@tangent(np.random.choice)
def _(out, a, size=None, replace=True, p=None):
    d[out] = draw_tangent(d[a], a, out)


# ----- scalar types: integer casts are constants (float casts: numpy_elementwise) ----------


nondifferentiable(*numpy_functions(
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intp", "uintp",
    "bool", "bool_", "str_", "bytes_", "datetime64", "timedelta64"))
