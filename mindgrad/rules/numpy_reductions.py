"""Rules for NumPy's reductions and cumulative operations, both directions: each function's
adjoint with its tangent (forward mode) beside it. The statistics (variance, order statistics,
covariance) are ``numpy_statistics.py``'s, the weighted average ``numpy_averages.py``'s;
``trapezoid`` and ``gradient`` ``numpy_grids.py``'s.

A reduction's gradient is the incoming gradient broadcast back over the reduced axes
(``unreduce``), weighted by how much each element contributed; its tangent reduces the input's
tangent with the same weights. Helpers cast their result back to the input's dtype (a reduction
asked for ``dtype=np.float64`` still returns float32 gradients for a float32 input), tangent
helpers to the output's (``as_dtype_of``).

The gradient helpers (``reduce_sum_grad``, ``prod_grad``, ...) are differentiated again by forward
mode over reverse-mode code (Hessian-vector products). Those linear in the gradient ``g`` get
their tangent from ``@linear`` on a template with the helper's signature and no body; those that
also change with a primal argument have a ``*_grad_tangent`` helper with the derivative.
``sum``, ``mean`` and ``cumsum`` are linear: their adjoints are written, their tangents derived
(``@linear``; ``sum``'s ``initial`` is added, not scaled: ``added=``). The other reductions'
adjoints are their tangents transposed (``@transpose``): the tangent calls a helper linear in
the tangent (``extremum_tangent``), whose own adjoint rule, written once beside it, gives the
gradient.
"""

import numpy as np

from mindgrad.rules import (
    Method,
    adjoint,
    d,
    linear,
    linear_in,
    nondifferentiable,
    tangent,
    transpose,
    transpose_of,
)
from mindgrad.rules.helpers import astype_grad, masked_grad, reduced_axes, reduced_count
from mindgrad.rules.numpy_statistics import (
    extremum_places,
    extremum_scatter,
    std_mean_tangent,
    std_tangent,
    var_mean_tangent,
    var_tangent,
)
from mindgrad.runtime import (
    is_any_zero,
    is_zero,
    takes_zero,
    unbroadcast,
    unreduce,
    zero,
    zero_in,
    zero_in_zero_out,
)
from mindgrad.runtime.arrays import as_array, checked, eager
from mindgrad.runtime.core import REAL_NUMBERS
from mindgrad.runtime.reuse import LARGE
from mindgrad.runtime.tangents import (
    as_dtype_of,
    broadcast_tangent,
    float_dtype,
    zero_for,
)

# ----- sums and means ----------------------------------------------------------------------


@takes_zero(any_number=True)
def filled(g, a):
    """The number ``g`` in ``a``'s shape, in ``a``'s float dtype: for an array of
    ``LARGE`` elements or more, a read-only broadcast view (no memory of that size), else
    an array (``np.full`` costs less than the view's construction at small sizes)."""
    if is_any_zero(g):
        return zero_for(g, a)
    dtype = _float_dtype(a.dtype)
    if a.size >= LARGE:
        return np.broadcast_to(np.full((), g, dtype=dtype), a.shape)
    if g.__class__ in REAL_NUMBERS:
        out = np.empty(a.shape, dtype)
        out.fill(g)  # a third of np.full's time; its derivative is the rule below
        return out
    return np.full(a.shape, g, dtype=dtype)


@linear(filled)
@adjoint(filled)
def _(out, g, a):
    d[g] = unbroadcast(d[out], g)


def _float_dtype(dtype):
    """The float dtype of an array of ``dtype``: its own if float or complex, else
    ``np.result_type(dtype, np.float32)`` (not called for those: it takes 10 times as long)."""
    return dtype if dtype in _WIDE else np.result_type(dtype, np.float32)


# the dtypes that are their own float dtype (np.result_type(d, np.float32) is d)
_WIDE = frozenset(map(np.dtype, ("f4", "f8", "c8", "c16", "g", "G")))


@takes_zero(any_number=True)
def reduce_sum_grad(g, a, axis=None, keepdims=False, where=True):
    """Gradient of ``np.sum(a, axis, keepdims=keepdims, where=where)``. Of a whole NumPy array,
    ``g`` in ``a``'s shape (``filled``: a large one gets a read-only view that holds no memory
    of that size; what reads it allocates its own result)."""
    if is_any_zero(g):
        return zero_for(g, a)
    if axis is None and where is True and a.__class__ is np.ndarray:
        return filled(g, a)
    return astype_grad(masked_grad(unreduce(g, a, axis, keepdims), where), a)


@takes_zero(any_number=True)
def reduce_mean_grad(g, a, axis=None, keepdims=False, where=True):
    """Gradient of ``np.mean``: the sum's gradient divided by the number of elements averaged
    (of a whole NumPy array, ``filled``, as ``reduce_sum_grad``'s)."""
    if is_any_zero(g):
        return zero_for(g, a)
    if axis is None and where is True and a.__class__ is np.ndarray:
        return filled(g / max(a.size, 1), a)
    count = reduced_count(a, axis, where)
    grad = masked_grad(unreduce(g, a, axis, keepdims), where)
    return astype_grad(grad / np.maximum(count, 1).astype(np.result_type(grad, 1.0)), a)


@linear(reduce_sum_grad, reduce_mean_grad)
def _(out, g, a, axis=None, keepdims=False, where=True):
    ...


# ----- the gradient of a whole reduction, as a number -----------------------------------------
# Generated code multiplies the gradient of np.sum(a) or np.mean(a) by an array of a's shape
# (d_x = d_pow * 2 * x for np.sum(x ** 2)); where nothing else reads it, the compiler passes
# the number instead of the array full of it (transform/reverse_numbers.py): the product
# broadcasts it to the same values, without the array.


@takes_zero(any_number=True)
def sum_number(g, a):
    """``reduce_sum_grad(g, a)`` of a whole array ``a`` as the number ``g`` in ``a``'s float
    dtype, for a real number ``g`` and a NumPy array ``a``; else ``reduce_sum_grad``'s
    array."""
    if g.__class__ in REAL_NUMBERS and a.__class__ is np.ndarray:
        if g == 0:  # is_any_zero's test of a number, first
            return zero_for(g, a)
        return _float_dtype(a.dtype).type(g)
    if is_any_zero(g):
        return zero_for(g, a)
    return reduce_sum_grad(g, a)


@takes_zero(any_number=True)
def mean_number(g, a):
    """``reduce_mean_grad(g, a)`` of a whole array ``a`` as a number, as ``sum_number``."""
    if g.__class__ in REAL_NUMBERS and a.__class__ is np.ndarray:
        if g == 0:
            return zero_for(g, a)
        return _float_dtype(a.dtype).type(g / (a.size or 1))
    if is_any_zero(g):
        return zero_for(g, a)
    return reduce_mean_grad(g, a)


@linear(sum_number)
@adjoint(sum_number)
def _(out, g, a):
    d[g] = unbroadcast(d[out], g)


@linear(mean_number)
@adjoint(mean_number)
def _(out, g, a):
    d[g] = unbroadcast(d[out], g) / max(np.size(a), 1)


# d[ans] = np.sum(d[a], axis, dtype, keepdims=keepdims, where=where), and initial, added to
# every result: d[ans] = broadcast_tangent(d[initial], ans)
@linear(np.sum, added=("initial",))
@adjoint(np.sum)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=0, where=True):
    d[a] = reduce_sum_grad(d[ans], a, axis, keepdims, where)
    d[initial] = unbroadcast(d[ans], initial)


@linear(np.mean)
@adjoint(np.mean)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    d[a] = reduce_mean_grad(d[ans], a, axis, keepdims, where)


# np.sum's adjoint transposes it, the NaNs masked: d[a] = reduce_sum_grad(d[ans], a, axis,
# keepdims, np.logical_and(where, ~np.isnan(a))), d[initial] = unbroadcast(d[ans], initial)
@transpose(np.nansum)
@tangent(np.nansum)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=0, where=True):
    d[ans] = np.sum(d[a], axis, dtype, None, keepdims, 0, np.logical_and(where, ~np.isnan(a)))
    d[ans] = broadcast_tangent(d[initial], ans)


# d[a] = reduce_mean_grad(d[ans], a, axis, keepdims, np.logical_and(where, ~np.isnan(a))),
# transposed from np.mean's rule
@transpose(np.nanmean)
@tangent(np.nanmean)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    d[ans] = np.mean(d[a], axis, dtype, None, keepdims,
                     where=np.logical_and(where, ~np.isnan(a)))



# ----- products ----------------------------------------------------------------------------


def exclusive_products(x):
    """For each element along the last axis, the product of all the others: no division, so
    zeros are handled exactly."""
    ones = np.ones_like(x[..., :1])
    before = np.cumprod(np.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, x[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return before * after


def exclusive_products_tangent(x, t):
    """Tangent of ``exclusive_products(x)`` (products of all the others along the last axis)
    in the direction ``t``: exact with zeros, through the tangents of the two cumprods."""
    ones, zeros = np.ones_like(x[..., :1]), np.zeros_like(t[..., :1])
    head_x = np.concatenate([ones, x[..., :-1]], axis=-1)
    head_t = np.concatenate([zeros, t[..., :-1]], axis=-1)
    before = np.cumprod(head_x, axis=-1)
    d_before = cumprod_tangent(head_t, head_x, before, -1)
    tail_x = np.concatenate([ones, x[..., :0:-1]], axis=-1)
    tail_t = np.concatenate([zeros, t[..., :0:-1]], axis=-1)
    after = np.cumprod(tail_x, axis=-1)
    d_after = cumprod_tangent(tail_t, tail_x, after, -1)
    return d_before * after[..., ::-1] + before * d_after[..., ::-1]


@takes_zero(any_number=True)
def prod_grad(g, a, axis=None, keepdims=False, initial=1, where=True):
    """Gradient of ``np.prod``: each element gets ``g`` times the product of the others."""
    if is_any_zero(g):
        return zero_for(g, a)
    x = as_array(a)
    if x.size == 0:
        return np.zeros_like(a)
    x = x if where is True else np.where(where, x, np.ones_like(x))
    axes = reduced_axes(axis, x.ndim)
    moved = np.moveaxis(x, axes, range(x.ndim - len(axes), x.ndim))
    flat = moved.reshape(moved.shape[:x.ndim - len(axes)] + (-1,))
    others = exclusive_products(flat).reshape(moved.shape)
    others = np.moveaxis(others, range(x.ndim - len(axes), x.ndim), axes)
    grad = masked_grad(unreduce(g, x, axis, keepdims) * others * initial, where)
    return astype_grad(grad, a)


@zero_in_zero_out("g", "t")
def prod_grad_tangent(g, a, t, axis=None, keepdims=False, initial=1, where=True):
    """Tangent of ``prod_grad`` from ``a``: the products of the other elements change by the
    sum over the others of ``t`` times the products without both; 0 where ``prod_grad`` gave
    a zero (a zero ``g``)."""
    if zero_in(g, t):
        return zero
    if is_zero(t) or is_any_zero(g):
        return zero
    if np.size(a) == 0:
        return np.zeros(np.shape(a), np.result_type(a, 1.0))
    x = as_array(a)
    t = np.broadcast_to(t, x.shape)
    if where is not True:
        x, t = np.where(where, x, np.ones_like(x)), np.where(where, t, np.zeros_like(t))
    axes = reduced_axes(axis, x.ndim)
    kept = x.ndim - len(axes)
    moved_x = np.moveaxis(x, axes, range(kept, x.ndim))
    moved_t = np.moveaxis(t, axes, range(kept, x.ndim))
    flat_x = moved_x.reshape(moved_x.shape[:kept] + (-1,))
    flat_t = moved_t.reshape(moved_t.shape[:kept] + (-1,))
    others = exclusive_products_tangent(flat_x, flat_t).reshape(moved_x.shape)
    others = np.moveaxis(others, range(kept, x.ndim), axes)
    grad = masked_grad(unreduce(g, x, axis, keepdims) * others * initial, where)
    return astype_grad(grad, a)


@tangent(prod_grad)
def _(out, g, a, axis=None, keepdims=False, initial=1, where=True):
    d[out] = prod_grad(d[g], a, axis, keepdims, initial, where)
    d[out] = prod_grad_tangent(g, a, d[a], axis, keepdims, initial, where)
    d[out] = prod_grad(g, a, axis, keepdims, d[initial], where)


@zero_in_zero_out("t")
def prod_tangent(t, a, ans, axis=None, keepdims=False, initial=1, where=True):
    """Tangent of ``np.prod``: ``t`` weighted by the product of the other elements, summed."""
    if zero_in(t):
        return zero
    if as_array(a).size == 0:
        return as_dtype_of(np.zeros(np.shape(ans)), ans)
    slopes = prod_grad(np.ones(np.shape(ans)), a, axis, keepdims, initial, where)
    return as_dtype_of(np.sum(masked_grad(t * slopes, where), axis=reduced_axes(axis, np.ndim(a)),
                              keepdims=keepdims), ans)


@zero_in_zero_out("t")
def prod_initial_tangent(t, a, axis=None, dtype=None, keepdims=False, where=True):
    """Tangent of ``np.prod`` from ``initial``: ``t`` times the product of the elements."""
    if zero_in(t):
        return zero
    return t * np.prod(a, axis, dtype, None, keepdims, 1, where)


# transposes of the tangents in their tangent t (@transpose reads them): the tangents move
# with a too, so reverse mode over tangent code differentiates them from their source
@transpose_of(prod_tangent)
def _(out, t, a, ans, axis=None, keepdims=False, initial=1, where=True):
    d[t] = prod_grad(d[out], a, axis, keepdims, initial, where)


@transpose_of(prod_initial_tangent)  # initial multiplies every result
def _(out, t, a, axis=None, dtype=None, keepdims=False, where=True):
    d[t] = unbroadcast(d[out] * np.prod(a, axis, dtype, None, keepdims, 1, where), t)


# d[a] = prod_grad(d[ans], a, ...), d[initial] = unbroadcast(d[ans] * np.prod(a, ...), initial)
@transpose(np.prod)
@tangent(np.prod)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=1, where=True):
    d[ans] = prod_tangent(d[a], a, ans, axis, keepdims, initial, where)
    d[ans] = prod_initial_tangent(d[initial], a, axis, dtype, keepdims, where)



# ----- extrema -----------------------------------------------------------------------------


def extremum_shares(a, ans, axis=None, keepdims=False, where=True, initial=None):
    """``(share of each element of a, share of initial)`` in a result of ``np.max``/``np.min``:
    the gradient is split equally among the candidates equal to the result (ties share it, as
    in JAX), ``initial`` being one candidate when given. The initial's share has ``ans``'s
    shape (None without an initial); the shares of one result add up to one."""
    hits = (as_array(a) == unreduce(ans, a, axis, keepdims)) & as_array(where)
    count = np.sum(hits, axis=reduced_axes(axis, np.ndim(a)), keepdims=True)
    if initial is None:
        return hits / np.maximum(count, 1), None
    won = np.reshape(as_array(ans), np.shape(count)) == initial
    count = np.maximum(count + won, 1)
    return hits / count, np.reshape(won / count, np.shape(ans)).astype(float_dtype(ans))


@takes_zero(any_number=True)
def extremum_grad(g, a, ans, axis=None, keepdims=False, where=True, initial=None):
    """Gradient of ``np.max``/``np.min`` for ``a``: ``g`` times each element's share."""
    if is_any_zero(g):
        return zero_for(g, a)
    places = extremum_places(a, ans, axis, keepdims, where, initial)
    if places is not None:
        return astype_grad(extremum_scatter(g, a, places, axis, keepdims), a)
    share = extremum_shares(a, ans, axis, keepdims, where, initial)[0]
    grad = unreduce(g, a, axis, keepdims)
    return astype_grad(grad * share.astype(np.result_type(grad, 1.0), copy=False), a)


def extremum_initial_share(a, ans, axis=None, keepdims=False, where=True, initial=None):
    """The share of ``initial`` in each result of ``np.max``/``np.min`` (``ans``'s shape)."""
    share = extremum_shares(a, ans, axis, keepdims, where, initial)[1]
    return np.zeros(np.shape(ans), float_dtype(ans)) if share is None else share


nondifferentiable(extremum_shares, extremum_initial_share)  # piecewise constant


@linear(extremum_grad)  # the share of each element is piecewise constant
def _(out, g, a, ans, axis=None, keepdims=False, where=True, initial=None):
    ...


@linear_in("t")  # the share of each element is piecewise constant
def extremum_tangent(t, a, ans, axis=None, keepdims=False, where=True, initial=None):
    """Tangent of ``np.max``/``np.min``: the mean tangent of the elements equal to the result
    (ties share, as the gradient does, ``initial`` among them)."""
    if zero_in(t):
        return zero
    share = extremum_grad(np.ones(np.shape(ans)), a, ans, axis, keepdims, where, initial)
    return as_dtype_of(np.sum(t * share, axis=reduced_axes(axis, np.ndim(a)), keepdims=keepdims),
                       ans)


@adjoint(extremum_tangent)  # the shares' transpose: each element's share of the gradient
def _(out, t, a, ans, axis=None, keepdims=False, where=True, initial=None):
    d[t] = extremum_grad(d[out], a, ans, axis, keepdims, where, initial)


@linear_in("t")
def extremum_initial_tangent(t, a, ans, axis=None, keepdims=False, where=True, initial=None):
    """Tangent of ``np.max``/``np.min`` for ``initial``: its tangent times its share of each
    result (1 where it is the extremum alone, 0 where an element is)."""
    if zero_in(t):
        return zero
    share = extremum_initial_share(a, ans, axis, keepdims, where, initial)
    return as_dtype_of(t * share, ans)


@linear_in("g", any_number=True)
def extremum_initial_grad(g, a, ans, axis=None, keepdims=False, where=True, initial=None):
    """Gradient of ``np.max``/``np.min`` for ``initial``: ``g`` weighted by its share, summed."""
    if is_any_zero(g):
        return zero
    return np.sum(g * extremum_initial_share(a, ans, axis, keepdims, where, initial))


@adjoint(extremum_initial_tangent)
def _(out, t, a, ans, axis=None, keepdims=False, where=True, initial=None):
    d[t] = extremum_initial_grad(d[out], a, ans, axis, keepdims, where, initial)


# d[a] = extremum_grad(d[ans], a, ans, ...), d[initial] = extremum_initial_grad(d[ans], a, ...)
@transpose(np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin)
@tangent(np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin)
def _(ans, a, axis=None, out=None, keepdims=False, initial=None, where=True):
    d[ans] = extremum_tangent(d[a], a, ans, axis, keepdims, where, initial)
    d[ans] = extremum_initial_tangent(d[initial], a, ans, axis, keepdims, where, initial)



# ----- cumulative sums and products --------------------------------------------------------


@takes_zero(any_number=True)
def cumsum_grad(g, a, axis=None):
    """Gradient of ``np.cumsum``: the reversed cumulative sum of ``g`` (flattened for None)."""
    if is_any_zero(g):
        return zero_for(g, a)
    g = as_array(g)
    ax = -1 if axis is None else axis
    grad = np.flip(np.cumsum(np.flip(g, ax), axis=ax), ax)
    return astype_grad(np.reshape(grad, np.shape(a)), a)


@linear(cumsum_grad)
def _(out, g, a, axis=None):
    ...


# the method by its function: a number tangent (or the symbolic 0) has no .cumsum()
@linear(np.cumsum, Method("cumsum"), via=np.cumsum)
@adjoint(np.cumsum, Method("cumsum"))
def _(ans, a, axis=None, dtype=None, out=None):
    d[a] = cumsum_grad(d[ans], a, axis)


@takes_zero(any_number=True)
def cumprod_grad(g, a, ans, axis=None):
    """Gradient of ``np.cumprod``: element i gets sum over j >= i of ``g_j`` times the product of
    ``a_0..a_j`` without ``a_i``. Without zeros that is a reversed cumsum of ``g * out`` over
    ``a``; with zeros it is built one position at a time (quadratic, but exact)."""
    if is_any_zero(g):
        return zero_for(g, a)
    x = as_array(a)
    ax = -1 if axis is None else axis
    x = x.ravel() if axis is None else x
    g = as_array(g)
    if not eager(x):  # a Dask array: the formula without zeros, checked when computed
        grad = np.flip(np.cumsum(np.flip(g * ans, ax), axis=ax), ax) / x
        grad = checked(grad, np.all(x != 0), "the gradient of np.cumprod on a Dask array "
                       "that holds a zero: mindgrad computes it for NumPy arrays only")
        return astype_grad(np.reshape(grad, np.shape(a)), a)
    if np.all(x != 0):
        grad = np.flip(np.cumsum(np.flip(g * ans, ax), axis=ax), ax) / x
        return astype_grad(np.reshape(grad, np.shape(a)), a)
    xm, gm = np.moveaxis(x, ax, -1), np.moveaxis(g, ax, -1)
    grad = np.zeros(np.broadcast_shapes(xm.shape, gm.shape), dtype=np.result_type(xm, gm))
    for i in range(xm.shape[-1]):
        without_i = xm.copy()
        without_i[..., i] = 1
        partial = np.cumprod(without_i, axis=-1)
        grad[..., i] = np.sum(gm[..., i:] * partial[..., i:], axis=-1)
    return astype_grad(np.reshape(np.moveaxis(grad, -1, ax), np.shape(a)), a)


@zero_in_zero_out("g", "t")
def cumprod_grad_tangent(g, a, ans, t, axis=None):
    """Tangent of ``cumprod_grad(g, a, ans)`` from ``a``, with ``ans = cumprod(a)`` moving
    along (``ans`` is read as that function of ``a``: it gets no statement of its own)."""
    if zero_in(g, t):
        return zero
    if is_zero(t) or is_any_zero(g):
        return zero
    x = as_array(a)
    t = np.broadcast_to(t, x.shape)
    ax = -1 if axis is None else axis
    if axis is None:
        x, t = x.ravel(), t.ravel()
    g = as_array(g)
    if np.all(x != 0):
        out = np.cumprod(x, axis=ax)
        d_out = cumprod_tangent(t, x, out, ax)
        rev = np.flip(np.cumsum(np.flip(g * out, ax), axis=ax), ax)
        d_rev = np.flip(np.cumsum(np.flip(g * d_out, ax), axis=ax), ax)
        grad = d_rev / x - rev * t / (x * x)
        return astype_grad(np.reshape(grad, np.shape(a)), a)
    xm, tm, gm = np.moveaxis(x, ax, -1), np.moveaxis(t, ax, -1), np.moveaxis(g, ax, -1)
    grad = np.zeros(np.broadcast_shapes(xm.shape, gm.shape), dtype=np.result_type(xm, gm, tm))
    for i in range(xm.shape[-1]):
        without_i, t_without_i = xm.copy(), np.array(tm)
        without_i[..., i], t_without_i[..., i] = 1, 0
        partial = np.cumprod(without_i, axis=-1)
        d_partial = cumprod_tangent(t_without_i, without_i, partial, -1)
        grad[..., i] = np.sum(gm[..., i:] * d_partial[..., i:], axis=-1)
    return astype_grad(np.reshape(np.moveaxis(grad, -1, ax), np.shape(a)), a)


@tangent(cumprod_grad)
def _(out, g, a, ans, axis=None):
    d[out] = cumprod_grad(d[g], a, ans, axis)
    d[out] = cumprod_grad_tangent(g, a, ans, d[a], axis)


@zero_in_zero_out("t")
def cumprod_tangent(t, a, ans, axis=None):
    """Tangent of ``np.cumprod``: ``out_j sum_{i<=j} t_i / a_i`` without zeros; with zeros, the
    recurrence ``dout_j = dout_{j-1} a_j + out_{j-1} t_j`` (exact)."""
    if zero_in(t):
        return zero
    x = as_array(a)
    t = np.broadcast_to(t, x.shape)
    if axis is None:
        x, t, axis = x.ravel(), t.ravel(), 0
    if not eager(x):  # a Dask array: the formula without zeros, checked when computed
        return as_dtype_of(checked(ans * np.cumsum(t / x, axis=axis), np.all(x != 0),
                                   "the tangent of np.cumprod on a Dask array that holds a "
                                   "zero: mindgrad computes it for NumPy arrays only"), ans)
    if np.all(x != 0):
        return as_dtype_of(ans * np.cumsum(t / x, axis=axis), ans)
    xm, tm = np.moveaxis(x, axis, -1), np.moveaxis(t, axis, -1)
    prev = np.ones(xm.shape[:-1], dtype=np.result_type(xm, tm, 1.0))
    dprev = np.zeros_like(prev)
    steps = np.zeros(xm.shape, dtype=prev.dtype)
    for j in range(xm.shape[-1]):
        dprev = dprev * xm[..., j] + prev * tm[..., j]
        prev = prev * xm[..., j]
        steps[..., j] = dprev
    return as_dtype_of(np.reshape(np.moveaxis(steps, -1, axis), np.shape(ans)), ans)


@transpose_of(cumprod_tangent)
def _(out, t, a, ans, axis=None):
    d[t] = cumprod_grad(d[out], a, ans, axis)


@transpose(np.cumprod, Method("cumprod"))  # d[a] = cumprod_grad(d[ans], a, ans, axis)
@tangent(np.cumprod, Method("cumprod"))
def _(ans, a, axis=None, dtype=None, out=None):
    d[ans] = cumprod_tangent(d[a], a, ans, axis)



# ----- peak to peak ------------------------------------------------------------------------


@linear_in("t")
def ptp_tangent(t, a, axis=None, keepdims=False):
    """Tangent of ``np.ptp``: the maximum's tangent less the minimum's."""
    if zero_in(t):
        return zero
    return extremum_tangent(t, a, np.max(a, axis, keepdims=keepdims), axis, keepdims) - \
        extremum_tangent(t, a, np.min(a, axis, keepdims=keepdims), axis, keepdims)


@linear_in("g")
def ptp_grad(g, a, axis=None, keepdims=False):
    """Gradient of ``np.ptp``: to the maximum's elements, less to the minimum's."""
    if zero_in(g):
        return zero
    return extremum_grad(g, a, np.max(a, axis, keepdims=keepdims), axis, keepdims) - \
        extremum_grad(g, a, np.min(a, axis, keepdims=keepdims), axis, keepdims)


@adjoint(ptp_tangent)
def _(out, t, a, axis=None, keepdims=False):
    d[t] = ptp_grad(d[out], a, axis, keepdims)


@transpose(np.ptp)  # d[a] = ptp_grad(d[ans], a, axis, keepdims)
@tangent(np.ptp)
def _(ans, a, axis=None, out=None, keepdims=False):
    d[ans] = ptp_tangent(d[a], a, axis, keepdims)



# ----- the other nan- reductions: NaNs left out, as a mask or a neutral value -----------------


def without_nan(a, fill=0.0):
    """``a`` with its NaNs replaced by ``fill`` (the value that leaves the reduction as it is)."""
    return np.where(np.isnan(a), fill, a)


def not_nan(a, where=True):
    """Where ``a`` holds a number (and ``where`` selects it)."""
    return np.logical_and(where, np.logical_not(np.isnan(a)))


nondifferentiable(not_nan)


# np.prod's, the NaNs masked (the mask drops the tangents there too)
@transpose(np.nanprod)
@tangent(np.nanprod)
def _(ans, a, axis=None, dtype=None, out=None, keepdims=False, initial=1, where=True):
    d[ans] = prod_tangent(d[a], without_nan(a, 1.0), ans, axis, keepdims, initial,
                          not_nan(a, where))
    d[ans] = prod_initial_tangent(d[initial], without_nan(a, 1.0), axis, dtype, keepdims,
                                  not_nan(a, where))


# np.var's, the NaNs masked (the mask drops the tangents there too)
@transpose(np.nanvar)
@tangent(np.nanvar)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
      mean=None, correction=None):
    d[ans] = var_tangent(d[a], without_nan(a), ans, axis, ddof, keepdims, correction,
                         not_nan(a, where), mean)
    d[ans] = var_mean_tangent(d[mean], without_nan(a), ans, axis, ddof, keepdims, correction,
                              not_nan(a, where), mean)


@transpose(np.nanstd)  # np.std's, the NaNs masked
@tangent(np.nanstd)
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
      mean=None, correction=None):
    d[ans] = std_tangent(d[a], without_nan(a), ans, axis, ddof, keepdims, correction,
                         not_nan(a, where), mean)
    d[ans] = std_mean_tangent(d[mean], without_nan(a), ans, axis, ddof, keepdims, correction,
                              not_nan(a, where), mean)


@zero_in_zero_out("t")
def nancumsum_tangent(t, a, axis=None, dtype=None):
    """Tangent of ``np.nancumsum``: the cumulative sum of ``t`` where ``a`` holds a number."""
    if zero_in(t):
        return zero
    return np.cumsum(without_nan(t) * not_nan(a), axis, dtype)


@zero_in_zero_out("t")
def nancumprod_tangent(t, a, ans, axis=None):
    """Tangent of ``np.nancumprod``: ``cumprod``'s, the NaNs read as ones that do not move."""
    if zero_in(t):
        return zero
    return cumprod_tangent(without_nan(t) * not_nan(a), without_nan(a, 1.0), ans, axis)


# the tangents transposed in t (@transpose reads them): cumsum's and cumprod's, masked
@transpose_of(nancumsum_tangent)
def _(out, t, a, axis=None, dtype=None):
    d[t] = cumsum_grad(d[out], a, axis) * not_nan(a)


@transpose_of(nancumprod_tangent)
def _(out, t, a, ans, axis=None):
    d[t] = cumprod_grad(d[out], without_nan(a, 1.0), ans, axis) * not_nan(a)


@transpose(np.nancumsum)
@tangent(np.nancumsum)
def _(ans, a, axis=None, dtype=None, out=None):
    d[ans] = nancumsum_tangent(d[a], a, axis, dtype)


@transpose(np.nancumprod)
@tangent(np.nancumprod)
def _(ans, a, axis=None, dtype=None, out=None):
    d[ans] = nancumprod_tangent(d[a], a, ans, axis)



# ----- ediff1d, cumulative_sum, cumulative_prod ------------------------------------------------


def ediff1d_grads(g, ary, to_end=None, to_begin=None):
    """Gradients of ``np.ediff1d(ary, to_end, to_begin)``: ``g`` split into the leading values,
    the differences (whose gradient for ``ary`` is ``-g_i`` at i and ``g_i`` at i+1) and the
    trailing values."""
    if is_any_zero(g):
        return zero, zero, zero
    begin = 0 if to_begin is None else np.size(to_begin)
    count = max(np.size(ary) - 1, 0)
    g = np.ravel(g)
    g_diff = g[begin:begin + count]
    grad = np.pad(g_diff, (1, 0)) - np.pad(g_diff, (0, 1))
    g_begin = zero if to_begin is None else astype_grad(np.reshape(g[:begin], np.shape(to_begin)),
                                                     to_begin)
    g_end = zero if to_end is None else astype_grad(np.reshape(g[begin + count:], np.shape(to_end)),
                                                 to_end)
    return astype_grad(np.reshape(grad, np.shape(ary)), ary), g_end, g_begin


@zero_in_zero_out("t")
def ediff1d_tangent(t, ary, out, to_end=None, to_begin=None, wrt=0):
    """Tangent of ``np.ediff1d`` from ``ary`` (``wrt`` 0), ``to_end`` (1) or ``to_begin`` (2):
    the same layout with zeros for the others."""
    if zero_in(t):
        return zero
    parts = [np.zeros(0) if to_begin is None else np.zeros(np.size(to_begin)),
             np.zeros(max(np.size(ary) - 1, 0)),
             np.zeros(0) if to_end is None else np.zeros(np.size(to_end))]
    place = {0: 1, 1: 2, 2: 0}[wrt]
    parts[place] = np.ediff1d(np.broadcast_to(t, np.shape(ary))) if wrt == 0 else np.ravel(t)
    return as_dtype_of(np.concatenate(parts), out)


@linear_in("g", any_number=True)
def ediff1d_grad(g, ary, to_end=None, to_begin=None, wrt=0):
    """Gradient of ``np.ediff1d(ary, to_end, to_begin)`` for ``ary`` (``wrt`` 0), ``to_end`` (1)
    or ``to_begin`` (2): the transpose of ``ediff1d_tangent``."""
    return ediff1d_grads(g, ary, to_end, to_begin)[wrt]


@linear(ediff1d_tangent, wrt="t")
@adjoint(ediff1d_tangent)  # linear in t: the transpose is the gradient
def _(ans, t, ary, out, to_end=None, to_begin=None, wrt=0):
    d[t] = ediff1d_grad(d[ans], ary, to_end, to_begin, wrt)


@transpose(np.ediff1d)  # d[ary] = ediff1d_grad(d[out], ary, to_end, to_begin, 0), ...
@tangent(np.ediff1d)
def _(out, ary, to_end=None, to_begin=None):
    d[out] = ediff1d_tangent(d[ary], ary, out, to_end, to_begin, 0)
    d[out] = ediff1d_tangent(d[to_end], ary, out, to_end, to_begin, 1)
    d[out] = ediff1d_tangent(d[to_begin], ary, out, to_end, to_begin, 2)


@zero_in_zero_out("g")
def without_initial(g, ans, axis=None, include_initial=False):
    """A gradient of ``np.cumulative_sum``/``cumulative_prod`` without the leading initial
    value's entry (it is a constant)."""
    if zero_in(g):
        return zero
    if not include_initial:
        return g
    ax = 0 if axis is None else axis
    return np.take(g, np.arange(1, np.shape(ans)[ax]), axis=ax)


@zero_in_zero_out("t")
def cumulative_sum_tangent(t, ans, axis=None, include_initial=False):
    """Tangent of ``ans = np.cumulative_sum(x, axis, include_initial)`` from ``x``."""
    if zero_in(t):
        return zero
    return as_dtype_of(np.cumulative_sum(t, axis=axis, include_initial=include_initial), ans)


@zero_in_zero_out("t")
def cumulative_prod_tangent(t, x, ans, axis=None, include_initial=False):
    """Tangent of ``ans = np.cumulative_prod(x, axis, include_initial)``: ``cumprod``'s, with a
    leading 0 for the initial value."""
    if zero_in(t):
        return zero
    return as_dtype_of(initial_zero(cumprod_tangent(t, x, np.cumprod(x, axis), axis), axis,
                                    include_initial), ans)


if hasattr(np, "cumulative_sum"):  # NumPy >= 2.1

    # the tangents transposed in t (@transpose reads them): cumsum's and cumprod's, the
    # initial value's entry left out (it is a constant); t stands for x (its shape)
    @transpose_of(cumulative_sum_tangent)
    def _(out, t, ans, axis=None, include_initial=False):
        d[t] = cumsum_grad(without_initial(d[out], ans, axis, include_initial), t, axis)

    @transpose_of(cumulative_prod_tangent)
    def _(out, t, x, ans, axis=None, include_initial=False):
        d[t] = cumprod_grad(without_initial(d[out], ans, axis, include_initial), x,
                            np.cumprod(x, axis), axis)

    @transpose(np.cumulative_sum)
    @tangent(np.cumulative_sum)
    def _(ans, x, *, axis=None, dtype=None, out=None, include_initial=False):
        d[ans] = cumulative_sum_tangent(d[x], ans, axis, include_initial)

    @transpose(np.cumulative_prod)
    @tangent(np.cumulative_prod)
    def _(ans, x, *, axis=None, dtype=None, out=None, include_initial=False):
        d[ans] = cumulative_prod_tangent(d[x], x, ans, axis, include_initial)


def initial_zero(t, axis=None, include_initial=False):
    """The tangent of a cumulative product with a leading 0 for its initial value."""
    if not include_initial:
        return t
    ax = 0 if axis is None else axis
    shape = list(np.shape(t))
    shape[ax] = 1
    return np.concatenate([np.zeros(shape, np.result_type(t)), t], axis=ax)
