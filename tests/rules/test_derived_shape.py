"""The tangents ``@linear`` derives for the shape, reduction, method and random-draw rules.

Each derived template is pinned as it prints: the same text as the hand-written tangent it
replaced, or (noted beside it) an equal value spelled from the template's own arguments. Each is
then checked numerically: in forward mode against central differences, at second order in reverse
and in forward-over-reverse mode (``check_grads(..., modes=("rev", "fwd"), order=2)``, which runs
the derived tangents of the gradient helpers), in float32 against float64, and, for the helpers,
directly through ``jvp_of``. The last tests pin what a derived tangent must not get wrong: NumPy's
``out=`` given by position, and numbers and the symbolic zero as tangents.
"""

import numpy as np
import pytest

import mindgrad
from mindgrad import rules
from mindgrad.compiler.finish.emit import unparse
from mindgrad.rules import jvp_of
from mindgrad.rules import methods as me
from mindgrad.rules import nondiff as nd
from mindgrad.rules import numpy_grids as ngrids
from mindgrad.rules import numpy_joining as njoin
from mindgrad.rules import numpy_reductions as nr
from mindgrad.rules import numpy_shape as ns
from mindgrad.rules import numpy_statistics as nstat
from tests.support.versions import needs_numpy

RNG = np.random.default_rng(20260301)
EPS = 1e-6
MY_MODULES = {f"mindgrad.rules.{m}" for m in ("numpy_shape", "numpy_joining", "numpy_grids",
                                             "numpy_reductions", "numpy_statistics", "methods",
                                             "nondiff")}


def r(*shape):
    """Standard normal, kept away from 0 and from ties (max, sort)."""
    x = RNG.standard_normal(shape)
    return np.where(np.abs(x) < 0.1, 0.1 + np.abs(x), x)


def method(name):
    return ("method", name)


def attr(name):
    return ("attr", name)


# ----- the derived templates, as they print ------------------------------------------------

DERIVED = [
    ((np.transpose,), "d[out] = np.transpose(d[a], axes)"),
    ((np.swapaxes,), "d[out] = np.swapaxes(d[a], axis1, axis2)"),
    ((np.moveaxis,), "d[out] = np.moveaxis(d[a], source, destination)"),
    ((np.split,), "d[out] = np.split(d[ary], indices_or_sections, axis)"),
    ((np.array_split,), "d[out] = np.array_split(d[ary], indices_or_sections, axis)"),
    ((np.hsplit,), "d[out] = np.hsplit(d[ary], indices_or_sections)"),
    ((np.vsplit,), "d[out] = np.vsplit(d[ary], indices_or_sections)"),
    ((np.dsplit,), "d[out] = np.dsplit(d[ary], indices_or_sections)"),
    ((np.tile,), "d[out] = np.tile(d[A], reps)"),
    ((np.repeat,), "d[out] = np.repeat(d[a], repeats, axis)"),
    ((np.flip,), "d[out] = np.flip(d[m], axis)"),
    ((np.fliplr,), "d[out] = np.fliplr(d[m])"),
    ((np.flipud,), "d[out] = np.flipud(d[m])"),
    ((np.roll,), "d[out] = np.roll(d[a], shift, axis)"),
    ((np.rot90,), "d[out] = np.rot90(d[m], k, axes)"),
    ((np.diag,), "d[out] = np.diag(d[v], k)"),
    ((np.delete,), "d[out] = np.delete(d[arr], obj, axis)"),
    ((np.diagflat,), "d[out] = np.diagflat(d[v], k)"),
    ((np.rollaxis,), "d[out] = np.rollaxis(d[a], axis, start)"),
    ((np.extract,), "d[out] = np.extract(condition, d[arr])"),
    ((np.resize,), "d[out] = np.resize(d[a], new_shape)"),
    ((np.diagonal,), "d[out] = np.diagonal(d[a], offset, axis1, axis2)"),
    ((np.triu,), "d[out] = np.triu(d[m], k)"),
    ((np.tril,), "d[out] = np.tril(d[m], k)"),
    ((np.take_along_axis,), "d[out] = np.take_along_axis(d[arr], indices, axis)"),
    # NumPy's out= is not passed on: the parameters after it go by keyword
    ((np.take, method("take")), "d[ans] = np.take(d[a], indices, axis, mode=mode)"),
    ((np.trace, method("trace")), "d[ans] = np.trace(d[a], offset, axis1, axis2, dtype)"),
    ((np.cumsum, method("cumsum")), "d[ans] = np.cumsum(d[a], axis, dtype)"),
    ((np.mean, method("mean")),
     "d[ans] = np.mean(d[a], axis, dtype, keepdims=keepdims, where=where)"),
    ((np.compress,), "d[ans] = np.compress(condition, d[a], axis)"),
    # a method applied by its function, which takes a number tangent and the symbolic 0
    ((method("repeat"),), "d[out] = np.repeat(d[a], repeats, axis)"),
    ((attr("T"),), "d[out] = np.transpose(d[x])"),
    # was np.reshape(d[a], np.shape(out)) and np.conj(d[a])
    ((method("squeeze"),), "d[out] = np.squeeze(d[a], axis)"),
    ((method("conj"), method("conjugate")), "d[out] = np.conjugate(d[a])"),
    # was np.broadcast_to(d[array], np.shape(out)): the shape asked for is the output's
    ((np.broadcast_to,), "d[out] = np.broadcast_to(d[array], shape, subok)"),
    # was np.reshape(d[a], np.shape(out)) for both: the same elements in the output's shape
    ((np.expand_dims,), "d[out] = np.expand_dims(d[a], axis)"),
    ((np.squeeze,), "d[out] = np.squeeze(d[a], axis)"),
    # was np.swapaxes(d[a], ...), np.diagonal(d[a], ...), np.real(d[x]), np.imag(d[x])
    ((method("swapaxes"),), "d[out] = d[a].swapaxes(axis1, axis2)"),
    ((method("diagonal"),), "d[out] = d[a].diagonal(offset, axis1, axis2)"),
    ((attr("real"),), "d[out] = d[x].real"),
    ((attr("imag"),), "d[out] = d[x].imag"),
    # the gradient helpers, linear in g (was ns.transpose_grad(d[g], axes), ...)
    ((ns.atleast_grads,), "d[out] = atleast_grads(d[g], arys)"),
    ((ns.transpose_grad,), "d[out] = transpose_grad(d[g], axes)"),
    ((njoin.concatenate_grad,), "d[out] = concatenate_grad(d[g], arrays, axis)"),
    ((njoin.stack_grad,), "d[out] = stack_grad(d[g], arrays, axis)"),
    ((njoin.hstack_grad,), "d[out] = hstack_grad(d[g], tup)"),
    ((njoin.vstack_grad,), "d[out] = vstack_grad(d[g], tup)"),
    ((njoin.dstack_grad,), "d[out] = dstack_grad(d[g], tup)"),
    ((njoin.column_stack_grad,), "d[out] = column_stack_grad(d[g], tup)"),
    ((njoin.split_grad,), "d[out] = split_grad(d[gs], pieces, ary, axis)"),
    ((njoin.unstack_grad,), "d[out] = unstack_grad(d[gs], pieces, x, axis)"),
    ((ns.tile_grad,), "d[out] = tile_grad(d[g], A, reps)"),
    ((ns.repeat_grad,), "d[out] = repeat_grad(d[g], a, repeats, axis)"),
    ((ns.sort_grad,), "d[out] = sort_grad(d[g], a, axis, kind)"),
    ((ns.trim_zeros_grad,), "d[out] = trim_zeros_grad(d[g], filt, trim, axis)"),
    ((ns.diagonal_grad,), "d[out] = diagonal_grad(d[g], a, offset, axis1, axis2)"),
    ((ns.diag_grad,), "d[out] = diag_grad(d[g], v, k)"),
    ((ns.trace_grad,), "d[out] = trace_grad(d[g], a, offset, axis1, axis2)"),
    ((ns.take_grad,), "d[out] = take_grad(d[g], a, indices, axis, mode)"),
    ((ns.take_along_axis_grad,), "d[out] = take_along_axis_grad(d[g], arr, indices, axis)"),
    ((ngrids.pad_grad,), "d[out] = pad_grad(d[g], array, pad_width, mode, reflect_type)"),
    ((njoin.join_tangent,), "d[out] = join_tangent(join, d[ts], xs, joined, axis)"),
    ((nr.reduce_sum_grad,), "d[out] = reduce_sum_grad(d[g], a, axis, keepdims, where)"),
    ((nr.filled,), "d[out] = filled(d[g], a)"),
    ((nr.sum_number,), "d[out] = sum_number(d[g], a)"),
    ((nr.mean_number,), "d[out] = mean_number(d[g], a)"),
    ((nr.reduce_mean_grad,), "d[out] = reduce_mean_grad(d[g], a, axis, keepdims, where)"),
    ((nr.extremum_grad,), "d[out] = extremum_grad(d[g], a, ans, axis, keepdims, where, initial)"),
    ((nstat.extremum_scatter,), "d[out] = extremum_scatter(d[g], a, places, axis, keepdims)"),
    ((nstat.extremum_gather,), "d[out] = extremum_gather(d[g], places, axis, keepdims)"),
    ((ns.reshape_grad,), "d[out] = reshape_grad(d[g], a, order)"),
    ((ns.reshape_tangent,), "d[ans] = reshape_tangent(d[t], a, out, order)"),
    ((nr.cumsum_grad,), "d[out] = cumsum_grad(d[g], a, axis)"),
    ((np.sum,), "d[ans] = np.sum(d[a], axis, dtype, keepdims=keepdims, where=where)\n"
                "d[ans] = broadcast_tangent(d[initial], ans)"),
    ((method("sum"),), "d[ans] = np.sum(d[a], axis, dtype, keepdims=keepdims, where=where)\n"
                       "d[ans] = broadcast_tangent(d[initial], ans)"),
    ((nr.extremum_tangent,),
     "d[out] = extremum_tangent(d[t], a, ans, axis, keepdims, where, initial)"),
    ((nr.extremum_initial_tangent,),
     "d[out] = extremum_initial_tangent(d[t], a, ans, axis, keepdims, where, initial)"),
    ((nr.extremum_initial_grad,),
     "d[out] = extremum_initial_grad(d[g], a, ans, axis, keepdims, where, initial)"),
    ((nr.ptp_tangent,), "d[out] = ptp_tangent(d[t], a, axis, keepdims)"),
    ((nr.ptp_grad,), "d[out] = ptp_grad(d[g], a, axis, keepdims)"),
    ((me.item_grad,), "d[out] = item_grad(d[g], a, args)"),
    ((me.tolist_grad,), "d[out] = tolist_grad(d[g], a)"),
    ((me.dict_items_grad,), "d[out] = dict_items_grad(d[g], mapping)"),
    ((me.dict_values_grad,), "d[out] = dict_values_grad(d[g], mapping)"),
    ((nd.draw_grad,), "d[out] = draw_grad(d[g], a, drawn)"),
    ((nd.draw_tangent,), "d[out] = draw_tangent(d[t], a, drawn)"),
    ((nd.moves_refused,), "d[out] = moves_refused(what, d[g])"),
    # derived from the gradient helpers' linear templates (arange, the joins written as
    # indexes, meshgrid, item, and the rules of bincount, unique and histogram)
    ((ngrids.arange_tangent,), "d[out] = arange_tangent(d[ts], args, ans)"),
    ((njoin.index_join_tangent,), "d[out] = index_join_tangent(d[ts], concatenator, items, ans)"),
    ((ngrids.meshgrid_tangent,),
     "d[ans] = meshgrid_tangent(d[ts], xi, out, sparse, indexing)"),
    ((me.item_tangent,), "d[out] = item_tangent(d[t], args)"),
    # the tangent helpers linear in the tangent whose transposes give their functions' adjoints
    ((ns.sort_tangent,), "d[ans] = sort_tangent(d[t], a, axis)"),
    ((ngrids.diff_tangent,), "d[out] = diff_tangent(d[t], which, a, n, axis, prepend, append)"),
    ((ngrids.diff_grad,), "d[out] = diff_grad(d[g], which, a, n, axis, prepend, append)"),
    ((nr.ediff1d_tangent,), "d[ans] = ediff1d_tangent(d[t], ary, out, to_end, to_begin, wrt)"),
    ((nr.ediff1d_grad,), "d[out] = ediff1d_grad(d[g], ary, to_end, to_begin, wrt)"),
    ((ns.trim_zeros_tangent,), "d[ans] = trim_zeros_tangent(d[t], filt, out, trim, axis)"),
    ((ns.atleast_tangent,), "d[ans] = atleast_tangent(d[ts], arys, out)"),
    ((ns.broadcast_arrays_tangent,), "d[ans] = broadcast_arrays_tangent(d[ts], args, out)"),
    ((ns.choose_tangent,), "d[out] = choose_tangent(d[ts], a, choices, ans, mode)"),
    ((ns.partition_tangent,), "d[ans] = partition_tangent(d[t], a, kth, axis, kind)"),
    ((me.tolist_tangent,), "d[out] = tolist_tangent(d[t])"),
    ((me.copy_tangent,), "d[out] = copy_tangent(d[t])"),
    ((me.dict_get_default_grad,), "d[out] = dict_get_default_grad(d[g], mapping, key)"),
    ((me.dict_get_tangent,), "d[out] = dict_get_tangent(d[t], mapping, key)"),
    ((me.dict_items_tangent,), "d[out] = dict_items_tangent(d[t], mapping)"),
    ((me.dict_values_tangent,), "d[out] = dict_values_tangent(d[t], mapping)"),
    ((nd.bincount_grad,), "d[out] = bincount_grad(d[g], x, weights)"),
    ((nd.bincount_tangent,), "d[out] = bincount_tangent(d[t], x, weights, minlength)"),
    ((nd.unique_grad,), "d[out] = unique_grad(d[g], ar, ans, axis, sorted)"),
    ((nd.unique_tangent,), "d[out] = unique_tangent(d[t], ar, ans, axis, sorted)"),
    ((nd.bin_edges_grad,), "d[out] = bin_edges_grad(d[g], a, bins, range, ans)"),
    ((nd.bin_edges_tangent,), "d[out] = bin_edges_tangent(d[t], a, bins, range, ans)"),
    ((nd.histogram_data_grad,),
     "d[out] = histogram_data_grad(d[g], a, bins, range, density, ans)"),
    ((nd.histogram_data_tangent,),
     "d[out] = histogram_data_tangent(d[t], a, bins, range, density, ans)"),
]
if hasattr(np, "matrix_transpose"):  # NumPy >= 2.0
    DERIVED.append(((np.matrix_transpose,), "d[out] = np.matrix_transpose(d[x])"))
    # was np.swapaxes(d[x], -1, -2), for .mT too
    DERIVED.append(((attr("mT"),), "d[out] = d[x].mT"))
if hasattr(np, "unstack"):  # NumPy >= 2.1
    DERIVED.append(((np.unstack,), "d[out] = np.unstack(d[x], axis=axis)"))


def _label(keys):
    key = keys[0]
    return ".".join(key) if isinstance(key, tuple) else key.__name__


@pytest.mark.parametrize("keys, text", DERIVED, ids=[_label(k) for k, _ in DERIVED])
def test_linear_rules_derive_the_tangents_once_written_by_hand(keys, text):
    for key in keys:
        rule = rules.lookup_tangent(key)
        assert rule.derived, f"the tangent of {_label(keys)} is written by hand"
        assert unparse(rule.body).strip() == text


def test_the_table_names_every_derived_tangent_of_these_topics():
    derived = {k for k, rule in rules._TANGENTS.items()
               if rule.derived and rule.template.__module__ in MY_MODULES}
    assert derived == {rules._key(key) for keys, _ in DERIVED for key in keys}


# ----- the functions: forward mode and second order ----------------------------------------
# each one under np.sin, so that the second derivative runs the gradient helper's tangent


def transpose_axes(x): return np.sin(np.transpose(x, (1, 0, 2)))
def transpose_all(x): return np.sin(np.transpose(x))
def broadcast_row(x): return np.sin(np.broadcast_to(x, (2, 3)))
def broadcast_square(x): return np.sin(np.broadcast_to(x, (2, 2)))
def expand_front(x): return np.sin(np.expand_dims(x, 0))
def expand_two(x): return np.sin(np.expand_dims(x, (0, 2)))
def squeeze_all(x): return np.sin(np.squeeze(x))
def squeeze_last(x): return np.sin(np.squeeze(x, 2))
def swapaxes_outer(x): return np.sin(np.swapaxes(x, 0, 2))
def swapaxes_method(x): return np.sin(x.swapaxes(1, 0))
def moveaxis_first(x): return np.sin(np.moveaxis(x, 0, -1))
def moveaxis_pair(x): return np.sin(np.moveaxis(x, (0, 1), (1, 0)))
def mT_attr(x): return np.sin(x.mT)
def matrix_transpose_(x): return np.sin(np.matrix_transpose(x))
def tile_rows(x): return np.sin(np.tile(x, (2, 1)))
def tile_number(x): return np.sin(np.tile(x, 3))
def repeat_axis(x): return np.sin(np.repeat(x, 2, axis=1))
def repeat_each(x): return np.sin(np.repeat(x, [1, 2, 3]))
def flip_all(x): return np.sin(np.flip(x))
def flip_axis(x): return np.sin(np.flip(x, 1))
def fliplr_(x): return np.sin(np.fliplr(x))
def flipud_(x): return np.sin(np.flipud(x))
def roll_flat(x): return np.sin(np.roll(x, 1))
def roll_axes(x): return np.sin(np.roll(x, (1, 2), (0, 1)))
def rot90_once(x): return np.sin(np.rot90(x))
def rot90_thrice(x): return np.sin(np.rot90(x, 3, (1, 2)))
def diag_of_vector(x): return np.sin(np.diag(x, 1))
def diag_of_matrix(x): return np.sin(np.diag(x, -1))
def diagonal_offset(x): return np.sin(np.diagonal(x, 1))
def diagonal_batched(x): return np.sin(np.diagonal(x, 0, 1, 2))
def diagonal_method(x): return np.sin(x.diagonal())
def triu_(x): return np.sin(np.triu(x, 1))
def tril_batched(x): return np.sin(np.tril(x))
def take_along(x): return np.sin(np.take_along_axis(x, np.array([[2, 0], [1, 1], [0, 3]]), 1))
def real_attr(x): return np.sin(x.real)
def atleast(x): return np.sin(np.atleast_2d(x))
def sort_(x): return np.sin(np.sort(x, axis=0))
def trace_(x): return np.sin(np.trace(x, 1))
def take_(x): return np.sin(np.take(x, [0, 2, 2], axis=1))
def pad_(x): return np.sin(np.pad(x, 1))
def sum_axis(x): return np.sin(np.sum(x, axis=0))
def mean_kept(x): return np.sin(np.mean(x, axis=1, keepdims=True))
def max_axis(x): return np.sin(np.max(x, axis=0))
def cumsum_(x): return np.sin(np.cumsum(x, axis=1))
def compress_(x): return np.sin(np.compress([True, False, True], x, axis=1))
def cumsum_method(x): return np.sin(x.cumsum(0))
def trace_method(x): return np.sin(x.trace(-1))
def take_method(x): return np.sin(x.take([1, 1, 0]))
def mean_method(x): return np.sin(x.mean(axis=0))
def repeat_method(x): return np.sin(x.repeat(2, axis=0))
def squeeze_method(x): return np.sin(x.squeeze())
def T_attr(x): return np.sin(x.T)
def conj_method(x): return np.sin(x.conj() * x.conjugate())


def split_halves(x):
    parts = np.split(x, 2)
    return np.sin(parts[0]) * parts[1]


def split_columns(x):
    parts = np.split(x, [1], axis=1)
    return np.sin(parts[0]) * parts[1]


def array_split_uneven(x):
    parts = np.array_split(x, 3)
    return np.sin(parts[0]) * np.sum(parts[1] * parts[2])


def hsplit_(x):
    parts = np.hsplit(x, 2)
    return np.sin(parts[0]) * parts[1]


def vsplit_(x):
    parts = np.vsplit(x, 2)
    return np.sin(parts[0]) * parts[1]


def dsplit_(x):
    parts = np.dsplit(x, 2)
    return np.sin(parts[0]) * parts[1]


def unstack_(x):
    parts = np.unstack(x, axis=1)
    return np.sin(parts[0]) * parts[1]


def joins(x):
    return np.sum(np.sin(np.concatenate([x, 2.0 * x], axis=1))) * np.sin(np.stack([x, x * x], 1))


def stacks(x):
    return (np.sum(np.sin(np.hstack([x, 2.0 * x]))) + np.sum(np.sin(np.vstack([x, 2.0 * x])))
            + np.sum(np.sin(np.dstack([x, 2.0 * x]))) * np.sin(np.column_stack([x, 2.0 * x])))


def item_(x): return np.sin(x.item(1)) * x


def tolist_(x):
    values = x.tolist()
    return np.sin(values[0]) * values[2]


def dict_views(x):
    mapping = {"a": x, "b": 2.0 * x}
    values = list(mapping.values())
    pairs = list(mapping.items())
    return np.sin(values[0]) * pairs[1][1]


def permutation_(x):
    np.random.seed(0)
    return np.sin(np.random.permutation(x)) * np.arange(1.0, 4.0)


SHAPE_CASES = [
    (transpose_axes, r(2, 3, 4)), (transpose_all, r(3, 4)), (transpose_all, r()),
    (broadcast_row, r(3)), (broadcast_row, r(2, 1)), (broadcast_square, r()),
    (expand_front, r(3)), (expand_front, r()), (expand_two, r(3)),
    (squeeze_all, r(1, 3, 1)), (squeeze_all, r(1)), (squeeze_last, r(1, 3, 1)),
    (swapaxes_outer, r(2, 3, 4)), (swapaxes_method, r(2, 3)),
    (moveaxis_first, r(2, 3, 4)), (moveaxis_pair, r(2, 3, 4)),
    (mT_attr, r(2, 3, 4)),
    (split_halves, r(4, 3)), (split_columns, r(2, 2)), (array_split_uneven, r(5)),
    (hsplit_, r(2, 4)), (hsplit_, r(4)), (vsplit_, r(4, 3)), (dsplit_, r(2, 2, 4)),
    (tile_rows, r(2, 3)), (tile_rows, r(3)), (tile_number, r()),
    (repeat_axis, r(2, 3)), (repeat_each, r(3)),
    (flip_all, r(2, 3)), (flip_axis, r(2, 3)), (fliplr_, r(2, 3)), (flipud_, r(3)),
    (roll_flat, r(5)), (roll_axes, r(2, 3)), (rot90_once, r(2, 3)), (rot90_thrice, r(2, 3, 4)),
    (diag_of_vector, r(3)), (diag_of_matrix, r(3, 4)),
    (diagonal_offset, r(3, 4)), (diagonal_batched, r(2, 3, 3)), (diagonal_method, r(3, 3)),
    (triu_, r(3, 3)), (tril_batched, r(2, 3, 3)), (take_along, r(3, 4)),
    (real_attr, r(3)),
    (matrix_transpose_, r(2, 3, 4)), (unstack_, r(3, 2)),
]
NEEDS_NUMPY = {matrix_transpose_: needs_numpy((2, 0), "np.matrix_transpose"),
               mT_attr: needs_numpy((2, 0), "ndarray.mT"),
               unstack_: needs_numpy((2, 1), "np.unstack")}
# these run the helpers' derived tangents at second order
CASES = SHAPE_CASES + [
    (atleast, r(3)), (joins, r(2, 3)), (stacks, r(3)), (sort_, r(3, 2)), (trace_, r(3, 4)),
    (take_, r(2, 3)), (pad_, r(2, 3)), (sum_axis, r(3, 2)), (mean_kept, r(2, 3)),
    (max_axis, r(3, 2)), (cumsum_, r(2, 3)), (item_, r(3)), (tolist_, r(3)),
    (dict_views, r(2)), (permutation_, r(3)),
    (compress_, r(2, 3)), (cumsum_method, r(3, 2)), (trace_method, r(3, 3)),
    (take_method, r(2, 2)), (mean_method, r(3, 2)), (mean_method, r(4)),
    (repeat_method, r(2, 3)), (squeeze_method, r(1, 3, 1)), (squeeze_method, r(1)),
    (T_attr, r(2, 3)), (T_attr, r(3)), (T_attr, r()),
    (conj_method, r(2, 3)), (conj_method, r()),
    (mean_kept, np.float32(r(2, 3))), (cumsum_, r(1, 3)),
]


def _params(cases):
    return [pytest.param(fn, x, id=f"{fn.__name__}-{'x'.join(map(str, np.shape(x))) or '0d'}",
                         marks=NEEDS_NUMPY.get(fn, ())) for fn, x in cases]


@pytest.mark.parametrize("fn, x", _params(CASES))
def test_forward_mode_and_second_order_match_central_differences(fn, x):
    mindgrad.check_grads(fn, (x,), modes=("rev", "fwd"), order=2)


def _leaves(value):
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


@pytest.mark.parametrize("fn, x", _params(SHAPE_CASES))
def test_float32_tangents_stay_float32(fn, x):
    v = RNG.standard_normal(np.shape(x))
    _, t64 = mindgrad.jvp(fn, (x,), (v,))
    out32, t32 = mindgrad.jvp(fn, (x.astype(np.float32),), (v.astype(np.float32),))
    for o, t, expected in zip(_leaves(out32), _leaves(t32), _leaves(t64)):
        assert np.asarray(t).dtype == np.asarray(o).dtype == np.float32
        np.testing.assert_allclose(t, expected, rtol=2e-4, atol=2e-5)


def test_real_and_imag_of_a_complex_array_take_the_parts_of_its_tangent():
    z = r(3) + 1j * r(3)
    v = r(3) + 1j * r(3)

    def parts(z):
        return np.sin(z.real) * z.imag

    _, tangent = mindgrad.jvp(parts, (z,), (v,))
    numeric = (parts(z + EPS * v) - parts(z - EPS * v)) / (2 * EPS)
    np.testing.assert_allclose(tangent, numeric, rtol=1e-6, atol=1e-9)


# ----- the helpers, directly: each derived tangent is the helper of the input's tangent ------


def _flat(value):
    if isinstance(value, dict):
        return _flat([value[k] for k in sorted(value)])
    if isinstance(value, (list, tuple)):
        parts = [_flat(v) for v in value]
        return np.concatenate(parts) if parts else np.zeros(0)
    return np.ravel(np.asarray(value, dtype=float))


def _along(x, v, eps):
    """``x + eps v`` for arrays and the lists and tuples of gradients the helpers take."""
    if isinstance(x, (list, tuple)):
        return type(x)(_along(a, b, eps) for a, b in zip(x, v))
    return x + eps * v


def _pairs(*shapes):
    return [(0, r(*s)) for s in shapes]


_X23, _X33, _X34 = r(2, 3), r(3, 3), r(3, 4)
_POOL = r(4, 2)  # distinct rows: which one a draw copied is found again from its values
HELPERS = [
    (ns.atleast_grads, (r(1, 3), (r(3),))),
    (ns.atleast_grads, ((r(1, 2), r(1, 1)), (r(2), r()))),
    (ns.transpose_grad, (r(3, 2, 4), (1, 0, 2))),
    (njoin.concatenate_grad, (r(5, 3), [r(2, 3), r(3, 3)], 0)),
    (njoin.concatenate_grad, (r(9), [r(2, 3), r(3)], None)),
    (njoin.stack_grad, (r(2, 2, 3), [r(2, 3), r(2, 3)], 1)),
    (njoin.hstack_grad, (r(5), (r(2), r(3)))),
    (njoin.vstack_grad, (r(3, 3), (r(3), r(2, 3)))),
    (njoin.dstack_grad, (r(1, 3, 2), (r(3), r(3)))),
    (njoin.column_stack_grad, (r(3, 3), (r(3), r(3, 2)))),
    (njoin.split_grad, ([r(2, 3), r(2, 3)], [r(2, 3), r(2, 3)], r(4, 3), 0)),
    (njoin.unstack_grad, ([r(3), r(3)], [r(3), r(3)], r(3, 2), 1)),
    (ns.tile_grad, (r(4, 3), r(2, 3), (2, 1))),
    (ns.repeat_grad, (r(6), r(3), [1, 2, 3], None)),
    (ns.sort_grad, (r(3, 2), r(3, 2), 0, None)),
    (ns.trim_zeros_grad, (r(3), np.array([0.0, 1.5, -2.0, 0.7, 0.0]), "fb", None)),
    (ns.diagonal_grad, (r(3), _X34, 1, 0, 1)),
    (ns.diag_grad, (r(4, 4), r(3), 1)),
    (ns.diag_grad, (r(2), _X34, -1)),
    (ns.trace_grad, (r(), _X33, 0, 0, 1)),
    (ns.take_grad, (r(2, 3), _X23, [0, 2, 2], 1, "raise")),
    (ns.take_along_axis_grad, (r(3, 2), _X34, np.array([[2, 0], [1, 1], [0, 3]]), 1)),
    (ngrids.pad_grad, (r(4, 5), _X23, 1, "reflect", "even")),
    (nr.reduce_sum_grad, (r(3), _X23, 0, False, True)),
    (nr.reduce_mean_grad, (r(2, 1), _X23, 1, True, np.array([True, False, True]))),
    (nr.extremum_grad, (r(3), _X23, np.max(_X23, axis=0), 0, False, True)),
    (nstat.extremum_scatter, (r(3), _X23, np.argmax(_X23, axis=0)[None], 0, False)),
    (nstat.extremum_gather, (r(2, 3), np.argmax(_X23, axis=0)[None], 0, False)),
    (nr.cumsum_grad, (r(6), _X23, None)),
    (me.item_grad, (r(), _X23, (1, 2))),
    (me.tolist_grad, ([r(), r(), r()], r(3))),
    (me.dict_items_grad, (_pairs((2,), ()), {"a": r(2), "b": r()})),
    (me.dict_values_grad, ([r(2), r()], {"a": r(2), "b": r()})),
    (nd.draw_grad, (r(3, 2), _POOL, _POOL[[2, 0, 3]])),
]


@pytest.mark.parametrize("helper, args", HELPERS,
                         ids=[f"{h.__name__}-{i}" for i, (h, _) in enumerate(HELPERS)])
def test_helper_tangents_match_central_differences_in_g(helper, args):
    _, jvp = jvp_of(helper, *args)
    g = args[0]
    t = _random_like(g)
    tangent = jvp(t, *[None] * (len(args) - 1))
    plus = helper(_along(g, t, EPS), *args[1:])
    minus = helper(_along(g, t, -EPS), *args[1:])
    numeric = (_flat(plus) - _flat(minus)) / (2 * EPS)
    np.testing.assert_allclose(_flat(tangent), numeric, rtol=1e-6, atol=1e-9)


def _random_like(g):
    if isinstance(g, (list, tuple)):
        return type(g)(_random_like(x) for x in g)
    if isinstance(g, int):
        return 0
    return RNG.standard_normal(np.shape(g))


def test_join_tangent_is_linear_in_the_tangents():
    xs = [r(2, 3), r(1, 3)]
    out = np.concatenate(xs)
    ts = [r(2, 3), r(1, 3)]
    _, jvp = jvp_of(njoin.join_tangent, np.concatenate, ts, xs, out, 0)
    dts = [r(2, 3), r(1, 3)]
    numeric = (njoin.join_tangent(np.concatenate, _along(ts, dts, EPS), xs, out, 0)
               - njoin.join_tangent(np.concatenate, _along(ts, dts, -EPS), xs, out, 0)) / (2 * EPS)
    np.testing.assert_allclose(jvp(None, dts, None, None, None), numeric, rtol=1e-6)


def test_forward_over_forward_runs_the_tangent_of_join_tangent():
    x = r(3)

    def f(x):
        return np.sum(np.sin(np.concatenate([x, 2.0 * x])) * np.arange(6.0))

    hessian = mindgrad.jacfwd(mindgrad.jacfwd(f))(x)
    w = np.arange(6.0)
    np.testing.assert_allclose(hessian, np.diag(-np.sin(x) * w[:3] - 4.0 * np.sin(2 * x) * w[3:]),
                               rtol=1e-10, atol=1e-12)


def test_draw_tangent_is_linear_in_the_tangent():
    a = r(5, 2)
    np.random.seed(4)
    drawn = np.random.choice(a.shape[0], 3, replace=False)
    out = a[drawn]
    _, jvp = jvp_of(nd.draw_tangent, r(5, 2), a, out)
    t = r(5, 2)
    np.testing.assert_allclose(jvp(t, None, None), t[drawn], rtol=0, atol=0)


# ----- NumPy's out= and numbers: where a derived tangent must not go wrong ---------------


def cumsum_into(x):
    buffer = np.zeros(3)
    y = np.cumsum(x, 0, None, buffer)
    return y * y


def take_into(x):
    buffer = np.zeros(2)
    y = np.take(x, [2, 0], None, buffer)
    return y * y


def trace_into(x):
    buffer = np.zeros(())
    y = np.trace(x, 0, 0, 1, None, buffer)
    return y * y


def mean_into(x):
    buffer = np.zeros(3)
    y = np.mean(x, 0, None, buffer)
    return y * y


@pytest.mark.parametrize("fn, x", [(cumsum_into, r(3)), (take_into, r(3)),
                                   (trace_into, r(3, 3)), (mean_into, r(2, 3))],
                         ids=["cumsum", "take", "trace", "mean"])
def test_a_positional_out_receives_the_value_not_the_tangent(fn, x):
    # a tangent that passed `out` on would write the tangent into the caller's buffer, the
    # result itself: the derived tangents leave it out
    v = r(*x.shape)
    out, tangent = mindgrad.jvp(fn, (x,), (v,))
    np.testing.assert_allclose(out, fn(x), rtol=1e-12)
    np.testing.assert_allclose(tangent, (fn(x + EPS * v) - fn(x - EPS * v)) / (2 * EPS),
                               rtol=1e-6, atol=1e-9)


def number_T(x): return x.T * 2.0
def number_ravel(x): return x.ravel() * 2.0
def number_flatten(x): return x.flatten() * 2.0
def number_squeeze(x): return x.squeeze() * 2.0
def number_repeat(x): return x.repeat(2) * 2.0
def number_reshape(x): return x.reshape(1) * 2.0
def number_transpose(x): return x.transpose() * 2.0
def number_conj(x): return x.conj() * 2.0
def number_copy(x): return x.copy() * 2.0
def number_item(x): return x.item() * 2.0


@pytest.mark.parametrize("fn", [number_T, number_ravel, number_flatten, number_squeeze,
                                number_repeat, number_reshape, number_transpose, number_conj,
                                number_copy, number_item], ids=lambda fn: fn.__name__)
def test_methods_of_a_numpy_scalar_take_a_number_tangent(fn):
    # jvp(f, (np.float64(x),), (1.5,)): a Python float has no .T, .ravel(), ...; the tangent
    # rules call np.transpose, np.reshape, ... on it instead
    out, tangent = mindgrad.jvp(fn, (np.float64(0.7),), (1.5,))
    np.testing.assert_allclose(tangent, np.full(np.shape(out), 3.0), rtol=1e-12)


def zero_T(a, b):
    xs = [a, b]
    return xs[1].T + a


def zero_transpose(a, b):
    xs = [a, b]
    return xs[1].transpose() + a


def zero_conj(a, b):
    xs = [a, b]
    return xs[1].conj() + a


@pytest.mark.parametrize("fn", [zero_T, zero_transpose, zero_conj], ids=lambda fn: fn.__name__)
def test_methods_take_the_symbolic_zero_tangent(fn):
    # b has no tangent: xs[1]'s tangent is the number 0, which has no .T or .transpose()
    a, b = r(2, 2), r(2, 2)
    v = r(2, 2)
    _, tangent = mindgrad.jvp(fn, (a, b), (v, None))
    np.testing.assert_allclose(tangent, v, rtol=1e-12)
