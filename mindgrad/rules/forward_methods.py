"""Tangent rules for ndarray methods and attributes, and for dict views.

The receiver is the parameter after the output; the signatures are those of the adjoint rules
(``methods.py``) and the helpers those of the function rules. ``cumsum``, ``cumprod``,
``ravel``, ``swapaxes``, ... share the function's template (registered with it).
"""

import numpy as np

from mindgrad.rules import d, tangent_attr, tangent_method
from mindgrad.rules import methods as me
from mindgrad.rules.forward_numpy_reductions import (
    extremum_tangent,
    prod_tangent,
    std_tangent,
    var_mean_tangent,
    var_tangent,
)
from mindgrad.rules.methods import method_transpose_axes
from mindgrad.rules.numpy_elementwise import (
    astype_tangent,
    clip_bounds,
    clip_tangent_a,
    clip_tangent_lower,
    clip_tangent_upper,
)
from mindgrad.runtime import is_zero
from mindgrad.runtime.tangents import TangentList

# ----- reductions --------------------------------------------------------------------------


@tangent_method("sum")
def _(ans, a, axis=None, dtype=None, out=None, *, keepdims=False, initial=0, where=True):
    d[ans] = np.sum(d[a], axis=axis, dtype=dtype, keepdims=keepdims, where=where)


@tangent_method("mean")
def _(ans, a, axis=None, dtype=None, out=None, *, keepdims=False, where=True):
    d[ans] = np.mean(d[a], axis=axis, dtype=dtype, keepdims=keepdims, where=where)


@tangent_method("prod")
def _(ans, a, axis=None, dtype=None, out=None, *, keepdims=False, initial=1, where=True):
    d[ans] = prod_tangent(d[a], a, ans, axis, keepdims, initial, where)


@tangent_method("max", "min")
def _(ans, a, axis=None, out=None, *, keepdims=False, initial=None, where=True):
    d[ans] = extremum_tangent(d[a], a, ans, axis, keepdims, where)


@tangent_method("var")
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, *, keepdims=False, where=True,
      mean=None, correction=None):
    d[ans] = var_tangent(d[a], a, ans, axis, ddof, keepdims, correction, where, mean)
    d[ans] = var_mean_tangent(d[mean], a, ans, axis, ddof, keepdims, correction, where, mean)


@tangent_method("std")
def _(ans, a, axis=None, dtype=None, out=None, ddof=0, *, keepdims=False, where=True,
      mean=None, correction=None):
    d[ans] = std_tangent(d[a], a, ans, axis, ddof, keepdims, correction, where, mean)
    d[ans] = std_tangent(d[mean], a, ans, axis, ddof, keepdims, correction, where, mean, "mean")


# ----- shape -------------------------------------------------------------------------------


@tangent_method("reshape")
def _(out, a, *shape, order="C", copy=None):
    d[out] = np.reshape(d[a], np.shape(out), order=order)


@tangent_method("transpose")
def _(out, a, *axes):
    d[out] = np.transpose(d[a], method_transpose_axes(axes))


# ----- values ------------------------------------------------------------------------------


@tangent_method("clip")
def _(ans, a, min=None, max=None, out=None):
    bounds = clip_bounds(a, min, max, None, None)
    d[ans] = clip_tangent_a(d[a], a, bounds[0], bounds[1], ans)
    d[ans] = clip_tangent_lower(d[min], a, bounds[0], bounds[1], ans)
    d[ans] = clip_tangent_upper(d[max], a, bounds[0], bounds[1], ans)


@tangent_method("astype")
def _(out, a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    d[out] = astype_tangent(d[a], out)


@tangent_method("copy")
def _(out, a, order="C"):
    d[out] = np.array(d[a])


@tangent_method("conj", "conjugate")
def _(out, a):
    d[out] = np.conj(d[a])


def item_tangent(t, args):
    """Tangent of ``a.item(*args)``: the same element of the tangent, a Python number."""
    return np.asarray(t).item(*args)


@tangent_method("item")
def _(out, a, *args):
    d[out] = item_tangent(d[a], args)


def tolist_tangent(t):
    """Tangent of ``a.tolist()``: ``t`` as nested lists that add element by element."""
    if np.ndim(t) == 0:
        return np.asarray(t).item()
    return TangentList(tolist_tangent(ti) for ti in t)


@tangent_method("tolist")
def _(out, a):
    d[out] = tolist_tangent(d[a])


# ----- attributes --------------------------------------------------------------------------


@tangent_attr("T")
def _(out, x):
    d[out] = np.transpose(d[x])


@tangent_attr("real")
def _(out, x):
    d[out] = np.real(d[x])


@tangent_attr("imag")
def _(out, x):
    d[out] = np.imag(d[x])


# ----- dict views --------------------------------------------------------------------------


def dict_items_tangent(t, mapping):
    """Tangent of ``d.items()``: one ``[0, tangent of the value]`` pair per key, in order."""
    return TangentList(TangentList([0, t.get(k, 0)]) for k in mapping)


def dict_values_tangent(t, mapping):
    """Tangent of ``d.values()``: the values' tangents in order (0 for keys without one)."""
    return TangentList(t.get(k, 0) for k in mapping)


def dict_get_tangent(t, mapping, key):
    """Tangent of ``d.get(key, default)`` from ``d``: its tangent at ``key``, if ``d`` has it."""
    if is_zero(t) or key not in mapping or key not in t:
        return 0
    return t[key]


@tangent_method("get")
def _(out, self, key, default=None):
    d[out] = dict_get_tangent(d[self], self, key)
    d[out] = me.dict_get_default_grad(d[default], self, key)


@tangent_method("items")
def _(out, self):
    d[out] = dict_items_tangent(d[self], self)


@tangent_method("values")
def _(out, self):
    d[out] = dict_values_tangent(d[self], self)

