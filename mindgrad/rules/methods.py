"""Rules for ndarray methods and attributes (``x.sum(...)``, ``x.T``, ...) and dict views,
both directions: each method's adjoint with its tangent (forward mode) beside it.

The receiver is the parameter after the output. The parameters mirror the methods' own
signatures (``x.sum`` takes ``keepdims`` only by keyword; ``x.reshape(2, 3)`` and
``x.reshape((2, 3))`` both bind ``*shape``), and the helpers are those of the function rules.
Methods sharing a function's template (``cumsum``, ``ravel``, ``swapaxes``, ...) are registered
with it. Tangents call the NumPy function on the tangent, not the method: a number tangent of a
NumPy scalar, and the symbolic 0, have no ``.T`` or ``.reshape``. Methods whose results are
constants (``argmax``, ``nonzero``, ...) are the transformer's concern.
"""

import numpy as np

from mindgrad.rules import (
    Attr,
    Method,
    adjoint,
    d,
    linear,
    linear_in,
    nondifferentiable,
    tangent,
    transpose,
)
from mindgrad.rules.helpers import astype_grad
from mindgrad.rules.numpy_elementwise import (
    astype_tangent,
    clip_bounds,
    clip_tangent_a,
    clip_tangent_lower,
    clip_tangent_upper,
    fill_nested,
    imag_grad,
)
from mindgrad.rules.numpy_reductions import (
    extremum_initial_tangent,
    extremum_tangent,
    prod_initial_tangent,
    prod_tangent,
    reduce_mean_grad,
    reduce_sum_grad,
)
from mindgrad.rules.numpy_shape import reshape_tangent
from mindgrad.rules.numpy_statistics import (
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
    zero,
    zero_in,
    zero_in_zero_out,
)
from mindgrad.runtime.arrays import as_array
from mindgrad.runtime.tangents import TangentList

# ----- reductions --------------------------------------------------------------------------
# sum is linear jointly in the array and ``initial``: one tangent, not a term per argument


@linear(Method("sum"), via=np.sum, added=("initial",))  # np.sum's (a number has no .sum)
@adjoint(Method("sum"))
def _(ans, a, axis=None, dtype=None, out=None, *, keepdims=False, initial=0, where=True):
    d[a] = reduce_sum_grad(d[ans], a, axis, keepdims, where)
    d[initial] = unbroadcast(d[ans], initial)


@linear(Method("mean"), via=np.mean)
@adjoint(Method("mean"))
def _(ans, a, axis=None, dtype=None, out=None, *, keepdims=False, where=True):
    d[a] = reduce_mean_grad(d[ans], a, axis, keepdims, where)


@transpose(Method("prod"))  # np.prod's, transposed
@tangent(Method("prod"))
def _(ans, a, axis=None, dtype=None, out=None, *, keepdims=False, initial=1, where=True):
    d[ans] = prod_tangent(d[a], a, ans, axis, keepdims, initial, where)
    d[ans] = prod_initial_tangent(d[initial], a, axis, dtype, keepdims, where)


@transpose(Method("max"), Method("min"))  # np.max's, transposed
@tangent(Method("max"), Method("min"))
def _(ans, a, axis=None, out=None, *, keepdims=False, initial=None, where=True):
    d[ans] = extremum_tangent(d[a], a, ans, axis, keepdims, where, initial)
    d[ans] = extremum_initial_tangent(d[initial], a, ans, axis, keepdims, where, initial)


@transpose(Method("var"))  # np.var's, transposed
@tangent(Method("var"))
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, *, keepdims=False, where=True,
      mean=None, correction=None):
    d[ans] = var_tangent(d[a], a, ans, axis, ddof, keepdims, correction, where, mean)
    d[ans] = var_mean_tangent(d[mean], a, ans, axis, ddof, keepdims, correction, where, mean)


@transpose(Method("std"))  # np.std's, transposed
@tangent(Method("std"))
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, *, keepdims=False, where=True,
      mean=None, correction=None):
    d[ans] = std_tangent(d[a], a, ans, axis, ddof, keepdims, correction, where, mean)
    d[ans] = std_mean_tangent(d[mean], a, ans, axis, ddof, keepdims, correction, where, mean)


# ----- shape -------------------------------------------------------------------------------


@transpose(Method("reshape"))  # d[a] = reshape_grad(d[out], a, order)
@tangent(Method("reshape"))
def _(out, a, *shape, order="C", copy=None):
    d[out] = reshape_tangent(d[a], a, out, order)


def method_transpose_axes(axes):
    """The ``*axes`` of ``x.transpose(...)`` as ``np.transpose``'s ``axes``: ``()`` and
    ``(None,)`` mean reversed, ``((1, 0),)`` and ``(1, 0)`` mean the same permutation."""
    if len(axes) == 0 or (len(axes) == 1 and axes[0] is None):
        return None
    if len(axes) == 1 and np.ndim(axes[0]) == 1:
        return tuple(axes[0])
    return axes


nondifferentiable(method_transpose_axes)


@transpose(Method("transpose"))  # d[a] = transpose_grad(d[out], method_transpose_axes(axes))
@tangent(Method("transpose"))
def _(out, a, *axes):
    d[out] = np.transpose(d[a], method_transpose_axes(axes))


# ----- values ------------------------------------------------------------------------------


@transpose(Method("clip"))  # np.clip's, transposed
@tangent(Method("clip"))
def _(ans, a, min=None, max=None, out=None):
    bounds = clip_bounds(a, min, max, None, None)
    d[ans] = clip_tangent_a(d[a], a, bounds[0], bounds[1], ans)
    d[ans] = clip_tangent_lower(d[min], a, bounds[0], bounds[1], ans)
    d[ans] = clip_tangent_upper(d[max], a, bounds[0], bounds[1], ans)


@transpose(Method("astype"))  # d[a] = array_grad(d[out], a, out)
@tangent(Method("astype"))
def _(out, a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    d[out] = astype_tangent(d[a], out)


@adjoint(Method("copy"))  # written: the identity reads as such in generated code
def _(out, a, order="C"):
    d[a] = d[out]


@linear_in("t", keeps_values=True)
def copy_tangent(t):
    """Tangent of ``a.copy()``: a copy of ``a``'s tangent, of its own kind (an array's an
    array, a list's tangents a list, a dict's a dict)."""
    if zero_in(t):
        return zero
    if isinstance(t, np.ndarray):
        return np.array(t)
    if isinstance(t, (list, dict)):
        return type(t)(t)
    return t


@adjoint(copy_tangent)  # the identity
def _(out, t):
    d[t] = d[out]


@tangent(Method("copy"))  # written: a list's or dict's .copy() too, not only an array's
def _(out, a, order="C"):
    d[out] = copy_tangent(d[a])


@linear(Method("conj"), Method("conjugate"), via=np.conj)
@adjoint(Method("conj"), Method("conjugate"))
def _(out, a):
    d[a] = np.conj(d[out])


def item_position(a, args):
    """The position in ``a.ravel()`` that ``a.item(*args)`` reads."""
    shape = np.shape(a)
    if len(args) == 0:
        return 0
    if len(args) == 1 and np.ndim(args[0]) == 0:
        return int(args[0]) % max(int(np.prod(shape)), 1)  # a flat index
    index = args[0] if len(args) == 1 else args
    return int(np.ravel_multi_index(tuple(index), shape, mode="wrap"))  # wrap: negative ones


@zero_in_zero_out("g")
def item_grad(g, a, args):
    """Gradient of ``a.item(*args)``: ``g`` at the element read (the only one if no args)."""
    if is_zero(g):
        return zero
    grad = np.zeros(np.size(a), dtype=np.result_type(a, 1.0))
    grad[item_position(a, args)] = g  # a plain index assignment: differentiable in turn
    return astype_grad(np.reshape(grad, np.shape(a)), a)


@linear(item_grad)
def _(out, g, a, args):
    ...


@linear_in("t")  # the arguments are integer positions
def item_tangent(t, args):
    """Tangent of ``a.item(*args)``: the same element of the tangent, a Python number."""
    if zero_in(t):
        return zero
    if len(args) == 0:  # no *args call: reverse mode over it (grad of jvp) reads it as code
        return as_array(t).item()
    return as_array(t).item(args[0] if len(args) == 1 else args)


@adjoint(item_tangent)  # linear in t: the transpose is the gradient
def _(out, t, args):
    d[t] = item_grad(d[out], t, args)


@transpose(Method("item"))  # d[a] = item_grad(d[out], a, args)
@tangent(Method("item"))
def _(out, a, *args):
    d[out] = item_tangent(d[a], args)


@zero_in_zero_out("g")
def tolist_grad(g, a):
    """Gradient of ``a.tolist()``: the nested list of gradients (0 for elements without one)
    as an array of ``a``'s shape and float dtype."""
    if is_zero(g):
        return zero
    if np.ndim(a) == 0:
        return astype_grad(g, a)
    grid = np.zeros(np.shape(a), dtype=np.result_type(a, 1.0))
    fill_nested(grid, g)
    return grid


@linear(tolist_grad)
def _(out, g, a):
    ...


@zero_in_zero_out("t")
def tolist_tangent(t):
    """Tangent of ``a.tolist()``: ``t`` as nested lists that add element by element."""
    if zero_in(t):
        return zero
    if np.ndim(t) == 0:
        return as_array(t).item()
    return TangentList(tolist_tangent(ti) for ti in t)


@linear(tolist_tangent)
@adjoint(tolist_tangent)  # linear in t: the transpose is the gradient
def _(out, t):
    d[t] = tolist_grad(d[out], t)


@transpose(Method("tolist"))  # d[a] = tolist_grad(d[out], a)
@tangent(Method("tolist"))
def _(out, a):
    d[out] = tolist_tangent(d[a])


# ----- attributes --------------------------------------------------------------------------


@linear(Attr("T"), via=np.transpose)  # a number tangent and the symbolic 0 have no .T
@adjoint(Attr("T"))
def _(out, x):
    d[x] = np.transpose(d[out])


@linear(Attr("real"))
@adjoint(Attr("real"))
def _(out, x):
    d[x] = astype_grad(np.real(d[out]), x)


@linear(Attr("imag"))
@adjoint(Attr("imag"))
def _(out, x):
    d[x] = imag_grad(d[out], x)


# ----- dict views --------------------------------------------------------------------------


@takes_zero(any_number=True)
def dict_items_grad(g, mapping):
    """Gradient of ``list(d.items())``: each (key, value) pair's value gradient, by key (a
    list's gradient is never a number: a number 0 is the zero)."""
    if is_any_zero(g):
        return zero
    grads = {}  # a loop, not a comprehension: the function is differentiated again (grad of grad)
    for k, item in zip(mapping, g):
        if not is_zero(item) and not is_zero(item[1]):
            grads[k] = item[1]
    return grads


@takes_zero(any_number=True)
def dict_values_grad(g, mapping):
    """Gradient of ``list(d.values())``: the values' gradients, by key (a number 0 is the
    zero, as for ``dict_items_grad``)."""
    if is_any_zero(g):
        return zero
    grads = {}
    for k, gv in zip(mapping, g):
        if not is_zero(gv):
            grads[k] = gv
    return grads


@linear(dict_items_grad, dict_values_grad)
def _(out, g, mapping):
    ...


@zero_in_zero_out("g")
def dict_get_grad(g, mapping, key):
    """Gradient of ``d.get(key, default)`` for ``d``: ``g`` at ``key``, when ``d`` has it."""
    if is_zero(g) or key not in mapping:
        return zero
    return {key: g}


@zero_in_zero_out("g")
def dict_get_default_grad(g, mapping, key):
    """Gradient of ``d.get(key, default)`` for ``default``: ``g`` when ``d`` lacks ``key``."""
    if zero_in(g):
        return zero
    return zero if key in mapping else g


@zero_in_zero_out("t")
def dict_items_tangent(t, mapping):
    """Tangent of ``d.items()``: one ``[0, tangent of the value]`` pair per key, in order."""
    if zero_in(t):
        return zero
    return TangentList(TangentList([0, t.get(k, zero)]) for k in mapping)


@zero_in_zero_out("t")
def dict_values_tangent(t, mapping):
    """Tangent of ``d.values()``: the values' tangents in order (0 for keys without one)."""
    if zero_in(t):
        return zero
    return TangentList(t.get(k, zero) for k in mapping)


@zero_in_zero_out("t")
def dict_get_tangent(t, mapping, key):
    """Tangent of ``d.get(key, default)`` from ``d``: its tangent at ``key``, if ``d`` has it."""
    if is_zero(t) or key not in mapping or key not in t:
        return zero
    return t[key]


# the tangent helpers of the dict views are linear in the tangent: their transposes are the
# gradients above, which give the methods' adjoints; d.get's default, taken or not, is its own


@linear(dict_get_default_grad)
@adjoint(dict_get_default_grad)
def _(out, g, mapping, key):
    d[g] = dict_get_default_grad(d[out], mapping, key)


@linear(dict_get_tangent)
@adjoint(dict_get_tangent)
def _(out, t, mapping, key):
    d[t] = dict_get_grad(d[out], mapping, key)


@linear(dict_items_tangent)
@adjoint(dict_items_tangent)
def _(out, t, mapping):
    d[t] = dict_items_grad(d[out], mapping)


@linear(dict_values_tangent)
@adjoint(dict_values_tangent)
def _(out, t, mapping):
    d[t] = dict_values_grad(d[out], mapping)


@transpose(Method("get"))  # d[self] = dict_get_grad(d[out], self, key), ...
@tangent(Method("get"))
def _(out, self, key, default=None):
    """A dict's ``d.get(key, default)``: the gradient goes to the entry read, or to ``default``."""
    d[out] = dict_get_tangent(d[self], self, key)
    d[out] = dict_get_default_grad(d[default], self, key)


@transpose(Method("items"))  # d[self] = dict_items_grad(d[out], self)
@tangent(Method("items"))
def _(out, self):
    """A dict's ``d.items()``."""
    d[out] = dict_items_tangent(d[self], self)


@transpose(Method("values"))  # d[self] = dict_values_grad(d[out], self)
@tangent(Method("values"))
def _(out, self):
    """A dict's ``d.values()``."""
    d[out] = dict_values_tangent(d[self], self)
