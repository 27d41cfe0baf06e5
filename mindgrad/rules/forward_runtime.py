"""Tangent rules for the helpers that generated adjoint code calls, so that forward mode can run
over reverse-mode code (Hessian-vector products, forward-over-reverse).

Most helpers are linear in the incoming gradient ``g``: their tangent is the helper applied to
``d[g]``. Many are also linear in another argument (``matmul_grad_x(g, x, y) = g @ y.T``) and
get a second statement with that argument's tangent. Arguments read only for a shape, a dtype,
a mask or a permutation (piecewise constant) give no statement. The few helpers nonlinear in a
primal argument (``prod_grad``, ``det_grad``, ``norm_grad``, ``var_grad``, ...) have
``*_tangent`` helpers with the derivative.

``seed``, ``zeros_buffer``, ``reversed_items`` and ``bprop_grads`` are declared constants by
``runtime_rules.py``; ``restore_item`` mutates in place and has no value to differentiate.
"""

import numpy as np

from mindgrad import runtime
from mindgrad.rules import builtins_math as bm
from mindgrad.rules import d, tangent
from mindgrad.rules import forward_builtins_math as bm_tangent
from mindgrad.rules import forward_numpy_linalg as fl
from mindgrad.rules import numpy_elementwise as ne
from mindgrad.rules import numpy_linalg as nl
from mindgrad.rules import operators as op_rules
from mindgrad.rules import runtime_rules as rr
from mindgrad.rules.forward_numpy_linalg import norm_axes
from mindgrad.runtime import (
    add_at,
    as_grad,
    concat_grads,
    is_zero,
    item,
    pop_grad,
    setitem_grad,
    unbroadcast,
    unreduce,
)
from mindgrad.runtime.tangents import (
    TangentList,
    TangentTuple,
    broadcast_tangent,
    summable,
    zero_tangent_of,
)

# ----- mindgrad.runtime --------------------------------------------------------------------


@tangent(runtime.unbroadcast)
def _(out, g, x):
    d[out] = unbroadcast(d[g], x)


@tangent(runtime.unreduce)
def _(out, g, x, axis=None, keepdims=False):
    d[out] = unreduce(d[g], x, axis, keepdims)


def runtime_add_tangent(t, out):
    """Tangent of one operand of ``add(a, b)``: in the result's shape (arrays), or adding element
    by element (lists, tuples, dicts)."""
    if isinstance(out, (list, tuple, dict)):
        return summable(t)
    return broadcast_tangent(t, out)


@tangent(runtime.add)
def _(out, a, b):
    d[out] = runtime_add_tangent(d[a], out)
    d[out] = runtime_add_tangent(d[b], out)


def add_at_tangent(t, x, idx):
    """Tangent of ``add_at(dx, x, idx, g)`` from ``g``: ``t`` added into a zero buffer."""
    return summable(add_at(0, x, idx, t))


@tangent(runtime.add_at)
def _(out, dx, x, idx, g):
    d[out] = summable(d[dx])
    d[out] = add_at_tangent(d[g], x, idx)


@tangent(runtime.item)
def _(out, g, i):
    d[out] = item(d[g], i)


@tangent(runtime.concat_grads)
def _(out, g, x, y):
    d[out] = summable(concat_grads(d[g], x, y))


@tangent(runtime.as_grad)
def _(out, g, x):
    d[out] = as_grad(d[g], x)


def saved_item_tangent(t, x, idx):
    """Tangent of ``saved_item(x, idx)``: a copy of ``t[idx]`` (0 for a key not in a dict)."""
    if isinstance(x, dict):
        return t.get(idx, 0) if idx in x else 0
    value = item(t, idx)
    return value.copy() if isinstance(value, np.ndarray) else value


@tangent(runtime.saved_item)
def _(out, x, idx):
    d[out] = saved_item_tangent(d[x], x, idx)


def setitem_grad_tangent(t, idx, v):
    """Tangent of ``setitem_grad(dx, idx, v)``: the same split of a copy of ``t``."""
    if isinstance(t, np.ndarray):
        t = np.array(t)
    elif isinstance(t, (list, tuple)):
        t = list(t)
    return summable(setitem_grad(t, idx, v))  # zeros and dicts are not written in place


@tangent(runtime.setitem_grad)
def _(out, dx, idx, v):
    d[out] = setitem_grad_tangent(d[dx], idx, v)


@tangent(runtime.pop_grad)
def _(out, dxs):
    d[out] = summable(pop_grad(d[dxs]))


def push_grad_tangent(t, dxs, xs, which):
    """Tangent of ``push_grad(dxs, g, xs) = dxs + [g]`` from ``dxs`` (which 0) or ``g`` (1); a
    zero ``dxs`` stands for a zero per item of ``xs``."""
    if is_zero(t):
        return 0
    n = len(xs) if is_zero(dxs) else len(dxs)
    if which == 0:
        return TangentList(list(t) + [0])
    return TangentList([0] * n + [t])


if hasattr(runtime, "push_grad"):

    @tangent(runtime.push_grad)
    def _(out, dxs, g, xs=()):
        d[out] = push_grad_tangent(d[dxs], dxs, xs, 0)
        d[out] = push_grad_tangent(d[g], dxs, xs, 1)


# ----- helpers of operators.py -----------------------------------------------------------


@tangent(op_rules.matmul_grad_x)
def _(out, g, x, y):
    d[out] = op_rules.matmul_grad_x(d[g], x, y)
    d[out] = op_rules.matmul_grad_x(g, x, d[y])


@tangent(op_rules.matmul_grad_y)
def _(out, g, x, y):
    d[out] = op_rules.matmul_grad_y(d[g], x, y)
    d[out] = op_rules.matmul_grad_y(g, d[x], y)


# ----- helpers of builtins_math.py and methods.py: linear in the gradient ------------------


@tangent(bm.sum_grad)
def _(out, g, xs):
    d[out] = bm.sum_grad(d[g], xs)


@tangent(bm.select_grad)
def _(ans, g, out, args):
    d[ans] = bm.select_grad(d[g], out, args)


@tangent(bm.sequence_grad)
def _(out, g, iterable):
    d[out] = bm.sequence_grad(d[g], iterable)


@tangent(bm.reversed_grad)
def _(out, g, seq):
    d[out] = bm.reversed_grad(d[g], seq)


# ----- helpers of numpy_elementwise.py -----------------------------------------------------


@tangent(ne.astype_grad)
def _(out, g, x):
    d[out] = ne.astype_grad(d[g], x)


@tangent(ne.array_grad)
def _(ans, g, obj, out=None):
    d[ans] = ne.array_grad(d[g], obj, out)


@tangent(ne.imag_grad)
def _(out, g, val):
    d[out] = ne.imag_grad(d[g], val)


@tangent(ne.maximum_grad)
def _(out, g, x, y):
    d[out] = ne.maximum_grad(d[g], x, y)


@tangent(ne.fmax_grad)
def _(out, g, x, y):
    d[out] = ne.fmax_grad(d[g], x, y)


@tangent(ne.clip_grad_a)
def _(out, g, a, lo, hi):
    d[out] = ne.clip_grad_a(d[g], a, lo, hi)


@tangent(ne.clip_grad_lower)
def _(out, g, a, lo, hi):
    d[out] = ne.clip_grad_lower(d[g], a, lo, hi)


@tangent(ne.clip_grad_upper)
def _(out, g, a, lo, hi):
    d[out] = ne.clip_grad_upper(d[g], a, lo, hi)


def clip_bounds_tangent(t, position, chosen, out):
    """Tangent of ``clip_bounds(...) = (lo, hi)`` from one bound: ``t`` at its ``position`` if
    that bound was the one ``chosen``."""
    parts = [zero_tangent_of(out[0]), zero_tangent_of(out[1])]
    if chosen:
        parts[position] = t
    return TangentTuple(parts)


@tangent(ne.clip_bounds)
def _(out, a, a_min, a_max, lower, upper):
    d[out] = clip_bounds_tangent(d[a_min], 0, True, out)
    d[out] = clip_bounds_tangent(d[a_max], 1, True, out)
    d[out] = clip_bounds_tangent(d[lower], 0, a_min is None, out)
    d[out] = clip_bounds_tangent(d[upper], 1, a_max is None, out)


def sinc_grad_tangent(g, x, t):
    """Tangent of ``sinc_grad(g, x) = g sinc'(x)`` from ``x``: ``g sinc''(x) t``, with
    ``sinc''(x) = (-pi sin(pi x) - 2 sinc'(x)) / x`` and ``sinc''(0) = -pi^2 / 3``."""
    x_safe = np.where(x == 0, 1.0, x)
    first = (np.cos(np.pi * x_safe) - np.sinc(x_safe)) / x_safe
    second = (-np.pi * np.sin(np.pi * x_safe) - 2.0 * first) / x_safe
    second = np.where(x == 0, -np.pi ** 2 / 3.0, second).astype(np.result_type(x, 1.0),
                                                                 copy=False)
    return g * second * t


@tangent(ne.sinc_grad)
def _(out, g, x):
    d[out] = ne.sinc_grad(d[g], x)
    d[out] = sinc_grad_tangent(g, x, d[x])


# ----- helpers of numpy_linalg.py ----------------------------------------------------------


@tangent(nl.swap_last_axes)
def _(out, x):
    d[out] = nl.swap_last_axes(d[x])


@tangent(nl.dot_grad_a)
def _(out, g, a, b):
    d[out] = nl.dot_grad_a(d[g], a, b)
    d[out] = nl.dot_grad_a(g, a, d[b])


@tangent(nl.dot_grad_b)
def _(out, g, a, b):
    d[out] = nl.dot_grad_b(d[g], a, b)
    d[out] = nl.dot_grad_b(g, d[a], b)


@tangent(nl.inner_grad_a)
def _(out, g, a, b):
    d[out] = nl.inner_grad_a(d[g], a, b)
    d[out] = nl.inner_grad_a(g, a, d[b])


@tangent(nl.inner_grad_b)
def _(out, g, a, b):
    d[out] = nl.inner_grad_b(d[g], a, b)
    d[out] = nl.inner_grad_b(g, d[a], b)


@tangent(nl.outer_grad_a)
def _(out, g, a, b):
    d[out] = nl.outer_grad_a(d[g], a, b)
    d[out] = nl.outer_grad_a(g, a, d[b])


@tangent(nl.vecdot_grad)
def _(out, g, x, other, axis=-1):
    d[out] = nl.vecdot_grad(d[g], x, other, axis)
    d[out] = nl.vecdot_grad(g, x, d[other], axis)


@tangent(nl.tensordot_grad_a)
def _(out, g, a, b, axes=2):
    d[out] = nl.tensordot_grad_a(d[g], a, b, axes)
    d[out] = nl.tensordot_grad_a(g, a, d[b], axes)


@tangent(nl.tensordot_grad_b)
def _(out, g, a, b, axes=2):
    d[out] = nl.tensordot_grad_b(d[g], a, b, axes)
    d[out] = nl.tensordot_grad_b(g, d[a], b, axes)


def einsum_grads_tangent(g, subscripts, operands, ts):
    """Tangent of ``einsum_grads(g, subscripts, operands)`` from the operands: operand j's
    tangent enters every gradient but its own (multilinearity)."""
    total = [0] * len(operands)
    for j, t in enumerate(ts):
        if is_zero(t):
            continue
        replaced = list(operands)
        replaced[j] = t
        grads = nl.einsum_grads(g, subscripts, tuple(replaced))
        total = [tk if k == j else runtime.add(tk, gk)
                 for k, (tk, gk) in enumerate(zip(total, grads))]
    return TangentTuple(zero_tangent_of(x) if is_zero(tk) else tk for tk, x in zip(total, operands))


@tangent(nl.einsum_grads)
def _(out, g, subscripts, operands):
    d[out] = summable(nl.einsum_grads(d[g], subscripts, operands))
    d[out] = einsum_grads_tangent(g, subscripts, operands, d[operands])


def norm_grad_tangent(g, x, ans, t, wrt, ord=None, axis=None, keepdims=False):
    """Tangent of ``norm_grad(g, x, ans, ...) = g slope(x, ans)`` from ``x`` (wrt 0) or ``ans``
    (1). The slope of the 2-norm/Frobenius norm is ``x / ans``, of a p-norm
    ``sign(x) (|x| / ans)^(p-1)``; those of the 1, inf, 0 norms and of the matrix 1/inf norms
    are piecewise constant; those of the spectral and nuclear norms come from the svd's tangent."""
    if is_zero(t):
        return 0
    if is_zero(g):
        return 0
    if np.iscomplexobj(x):
        raise runtime.GradientError("forward mode over the gradient of np.linalg.norm of a "
                                    "complex array is not supported; use reverse mode twice")
    x = np.asarray(x)
    axes = norm_axes(x, ord, axis)
    if not keepdims:
        g, ans = np.expand_dims(g, axes), np.expand_dims(ans, axes)
        if wrt == 1:
            t = np.expand_dims(t, axes)
    safe = np.where(ans == 0, 1, ans)
    matrix = len(axes) == 2 and not (ord is None and axis is None)
    if (ord is None and (axis is None or not matrix)) or ord == "fro" or (ord == 2 and not matrix):
        p = 2
    elif matrix and ord in ("nuc", 2, -2):
        # the slope is U V^T (nuc) or u_i v_i^T (2, -2): its tangent comes from the svd's
        if wrt == 1:
            return 0  # the slope does not read ans
        m = np.moveaxis(x, axes, (-2, -1))
        tm = np.moveaxis(np.asarray(t), axes, (-2, -1))
        u, sv, vt = np.linalg.svd(m, full_matrices=False)
        tu, _, tvt = fl.svd_tangent(tm, m, (u, sv, vt), False)
        if ord != "nuc":
            i = 0 if ord == 2 else sv.shape[-1] - 1
            u, vt, tu, tvt = (u[..., :, i:i + 1], vt[..., i:i + 1, :], tu[..., :, i:i + 1],
                              tvt[..., i:i + 1, :])
        change = np.moveaxis(tu @ vt + u @ tvt, (-2, -1), axes)
        return ne.astype_grad(g * change, x)
    elif matrix or ord in (1, 0) or np.isinf(ord):
        return np.zeros(x.shape, np.result_type(x, g, 1.0))
    else:
        p = ord
    ratio = np.abs(x) / safe
    if wrt == 0:
        change = (p - 1) * ratio ** (p - 2) * t / safe
    else:
        change = (1 - p) * np.sign(x) * ratio ** (p - 1) * t / safe
    return ne.astype_grad(g * change, x)


@tangent(nl.norm_grad)
def _(out, g, x, ans, ord=None, axis=None, keepdims=False):
    d[out] = nl.norm_grad(d[g], x, ans, ord, axis, keepdims)
    d[out] = norm_grad_tangent(g, x, ans, d[x], 0, ord, axis, keepdims)
    d[out] = norm_grad_tangent(g, x, ans, d[ans], 1, ord, axis, keepdims)


def inverse_transpose_tangent(a, t):
    """Tangent of ``inv(a)^T`` in the direction ``t``: ``-(inv(a) t inv(a))^T``."""
    inv = np.linalg.inv(a)
    return -nl.swap_last_axes(np.matmul(inv, np.matmul(t, inv)))


def det_grad_tangent(g, a, ans, t):
    """Tangent of ``det_grad(g, a, ans) = g ans inv(a)^T`` from ``a`` (``ans`` held)."""
    return np.expand_dims(g * ans, (-2, -1)) * inverse_transpose_tangent(a, t)


@tangent(nl.det_grad)
def _(out, g, a, ans):
    d[out] = nl.det_grad(d[g], a, ans)
    d[out] = nl.det_grad(g, a, d[ans])
    d[out] = det_grad_tangent(g, a, ans, d[a])


def slogdet_grad_tangent(g, a, t):
    """Tangent of ``slogdet_grad(g, a) = g[1] inv(a)^T`` from ``a``."""
    if is_zero(t):
        return 0
    if is_zero(g[1]):
        return 0
    return np.expand_dims(g[1], (-2, -1)) * inverse_transpose_tangent(a, t)


@tangent(nl.slogdet_grad)
def _(out, g, a):
    d[out] = nl.slogdet_grad(d[g], a)
    d[out] = slogdet_grad_tangent(g, a, d[a])


def solve_adjoint_tangent(g, a, b, t):
    """Tangent of ``solve_adjoint(g, a, b) = solve(a^T, g)`` from ``a``:
    ``-solve(a^T, t^T solve(a^T, g))``."""
    if is_zero(g):
        return 0
    r = nl.solve_adjoint(g, a, b)
    if np.ndim(b) == 1:
        rhs = np.matmul(nl.swap_last_axes(t), np.expand_dims(r, -1))[..., 0]
    else:
        rhs = np.matmul(nl.swap_last_axes(t), r)
    return -nl.solve_adjoint(rhs, a, b)


@tangent(nl.solve_adjoint)
def _(out, g, a, b):
    d[out] = nl.solve_adjoint(d[g], a, b)
    d[out] = solve_adjoint_tangent(g, a, b, d[a])


@tangent(nl.solve_grad_a)
def _(out, g_b, a, b, x):
    d[out] = nl.solve_grad_a(d[g_b], a, b, x)
    d[out] = nl.solve_grad_a(g_b, a, b, d[x])


# ----- helpers of runtime_rules.py (grad of grad of grad): linear in the gradient ----------


@tangent(rr.broadcast_back)
def _(out, g, like):
    d[out] = rr.broadcast_back(d[g], like)


@tangent(rr.added_grad)
def _(out, g_out, x, idx, g):
    d[out] = rr.added_grad(d[g_out], x, idx, g)


@tangent(rr.gather)
def _(out, g, x, idx):
    d[out] = rr.gather(d[g], x, idx)


@tangent(rr.setitem_grad_adjoint)
def _(out, g_out, dx, idx, v):
    d[out] = rr.setitem_grad_adjoint(d[g_out], dx, idx, v)


@tangent(rr.pop_grad_adjoint)
def _(out, g_out, dxs=()):
    d[out] = rr.pop_grad_adjoint(d[g_out], dxs)


@tangent(rr.push_grad_parts)
def _(out, g_out):
    d[out] = summable(rr.push_grad_parts(d[g_out]))


@tangent(rr.concat_grads_adjoint)
def _(out, g_out, x=(), y=()):
    d[out] = rr.concat_grads_adjoint(d[g_out], x, y)


@tangent(rr.unreduce_adjoint)
def _(out, g_out, g, x, axis, keepdims):
    d[out] = rr.unreduce_adjoint(d[g_out], g, x, axis, keepdims)


@tangent(rr.outer_grad_a)
def _(out, g, a, b):
    d[out] = rr.outer_grad_a(d[g], a, b)
    d[out] = rr.outer_grad_a(g, a, d[b])


@tangent(rr.outer_grad_b)
def _(out, g, a, b):
    d[out] = rr.outer_grad_b(d[g], a, b)
    d[out] = rr.outer_grad_b(g, d[a], b)


@tangent(rr.add_operand_grad)
def _(out, g, a):
    d[out] = rr.add_operand_grad(d[g], a)


@tangent(rr.add_operand_transpose)
def _(out, g_out, g, a):
    d[out] = rr.add_operand_transpose(d[g_out], g, a)


@tangent(runtime.concat_tangents)  # linear in the tangents
def _(out, t_x, x, t_y, y):
    d[out] = runtime.concat_tangents(d[t_x], x, 0, y)
    d[out] = runtime.concat_tangents(0, x, d[t_y], y)


@tangent(rr.concat_tangents_adjoint)
def _(out, g, x, y, part):
    d[out] = rr.concat_tangents_adjoint(d[g], x, y, part)


@tangent(rr.as_grad_adjoint)
def _(out, g_out, g, x):
    d[out] = rr.as_grad_adjoint(d[g_out], g, x)


@tangent(rr.as_sequence_grad)
def _(out, g, x):
    d[out] = rr.as_sequence_grad(d[g], x)


def as_sequence_tangent(t, x, out):
    """Tangent of ``as_sequence(x)``: ``t`` itself, or the tangent of ``list(x)``."""
    if is_zero(t) or out is x:
        return t
    return bm_tangent.sequence_tangent(t, out)


@tangent(TangentList, TangentTuple)
def _(out, iterable=()):
    d[out] = bm_tangent.sequence_tangent(d[iterable], out)


@tangent(runtime.snapshot)
def _(out, x):
    d[out] = d[x]


@tangent(runtime.private_copy)
def _(out, x, copies):
    d[out] = d[x]


@tangent(runtime.as_sequence)
def _(out, x):
    d[out] = as_sequence_tangent(d[x], x, out)


def reversed_items_tangent(t_seq, seq, count=None):
    """Tangent of ``reversed_items(seq)``: the items' tangents, paired with no index tangent."""
    if is_zero(t_seq) or isinstance(seq, dict):
        return 0
    return [(0, t_seq[index]) for index, _ in runtime.reversed_items(seq, count)]


@tangent(runtime.reversed_items)
def _(out, seq, count=None):
    d[out] = reversed_items_tangent(d[seq], seq, count)
