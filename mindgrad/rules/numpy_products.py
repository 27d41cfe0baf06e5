"""Rules for NumPy's products, in both directions: ``dot``, ``inner``, ``outer``, ``vdot``,
``tensordot``, ``einsum``, ``matrix_power``, ``multi_dot``, ``cross`` and ``kron``.

``np.matmul`` lives in ``operators.py`` with ``@``. Products are written as contractions of the
incoming gradient with the other factor (``tensordot``/``einsum``), batched matrix rules use
``swapaxes(., -1, -2)`` for the transpose so that stacks of matrices work. Products are
multilinear: the tangent from one factor is the same product with that factor replaced by its
tangent (``@linear``), and the gradient helpers are linear in the gradient and the other factor
(``@linear_in``), which derives their own tangents.

A gradient of a gradient differentiates the helpers below from their source, so they keep to
the Python that mindgrad differentiates: no starred calls (``einsum_list`` takes the operands
as one list), index assignment only on plain names, and NumPy functions that have rules.
"""

import string

import numpy as np

from mindgrad import runtime
from mindgrad.rules import (
    Method,
    active_of,
    adjoint,
    d,
    linear,
    linear_in,
    nondifferentiable,
    tangent,
    transpose,
    transpose_of,
)
from mindgrad.rules.helpers import astype_grad, conj_if_complex, swap_last_axes
from mindgrad.rules.operators import matmul_grad_x, matmul_grad_y
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
from mindgrad.runtime.tangents import (
    TangentTuple,
    as_dtype_of,
    float_dtype,
    summable,
    zero_for,
    zero_tangent_of,
)

# ----- dot, inner, outer, vdot -------------------------------------------------------------


@linear_in("g", "b", keeps_values=True, any_number=True)
def dot_grad_a(g, a, b):
    """Gradient of ``np.dot(a, b)`` for ``a``: contract ``g`` with ``b`` over b's free axes."""
    if is_any_zero(g):
        return zero_for(g, a)
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(g * b, a)
    if nb == 1:
        return astype_grad(np.multiply.outer(g, b), a)
    free_b = list(range(nb - 2)) + [nb - 1]  # b's axes that survive into the result
    g_axes = list(range(na - 1, na - 1 + nb - 1))
    return astype_grad(np.tensordot(g, b, axes=(g_axes, free_b)), a)


@linear_in("g", "a", keeps_values=True, any_number=True)
def dot_grad_b(g, a, b):
    """Gradient of ``np.dot(a, b)`` for ``b``: contract ``a`` with ``g`` over a's free axes."""
    if is_any_zero(g):
        return zero_for(g, b)
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(g * a, b)
    lead = list(range(na - 1))
    grad = np.tensordot(a, g, axes=(lead, lead))  # shape: (m,) + b's free axes
    if nb > 1:
        grad = np.moveaxis(grad, 0, -2)
    return astype_grad(grad, b)


@linear(np.dot, Method("dot"), wrt=("a", "b"), via=np.dot)
@adjoint(np.dot, Method("dot"))
def _(ans, a, b, out=None):
    d[a] = dot_grad_a(d[ans], a, b)
    d[b] = dot_grad_b(d[ans], a, b)


@linear_in("g", "b")
def inner_grad_a(g, a, b):
    """Gradient of ``np.inner(a, b)`` (a sum over the last axes) for ``a``."""
    if zero_in(g, b):
        return zero
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(g * b, a)
    g_axes = list(range(na - 1, na - 1 + nb - 1))
    return astype_grad(np.tensordot(g, b, axes=(g_axes, list(range(nb - 1)))), a)


@linear_in("g", "a")
def inner_grad_b(g, a, b):
    """Gradient of ``np.inner(a, b)`` for ``b``."""
    if zero_in(g, a):
        return zero
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(g * a, b)
    lead = list(range(na - 1))
    return astype_grad(np.tensordot(g, a, axes=(lead, lead)), b)


@linear(np.inner, wrt=("a", "b"))
@adjoint(np.inner)
def _(out, a, b):
    d[a] = inner_grad_a(d[out], a, b)
    d[b] = inner_grad_b(d[out], a, b)


@linear_in("g", "b")
def outer_grad_a(g, a, b):
    """Gradient of ``np.outer(a, b)`` (inputs flattened) for ``a``."""
    if zero_in(g, b):
        return zero
    return astype_grad(np.reshape(np.dot(g, np.ravel(b)), np.shape(a)), a)


@linear(np.outer, wrt=("a", "b"))
@adjoint(np.outer)
def _(ans, a, b, out=None):
    d[a] = outer_grad_a(d[ans], a, b)
    d[b] = outer_grad_a(np.transpose(d[ans]), b, a)


@linear(np.vdot, wrt=("a", "b"))
@adjoint(np.vdot)
def _(out, a, b):
    d[a] = np.reshape(conj_if_complex(d[out] * np.ravel(b)), np.shape(a))
    d[b] = np.reshape(d[out] * np.conj(np.ravel(a)), np.shape(b))


@linear_in("g", "other")
def vecdot_grad(g, x, other, axis=-1):
    """Gradient of ``np.vecdot(x1, x2, axis)`` for ``x`` (real inputs): ``g * other``."""
    if zero_in(g, other):
        return zero
    return unbroadcast(np.expand_dims(g, axis) * other, x)


if hasattr(np, "vecdot"):  # NumPy >= 2.0

    @linear(np.linalg.vecdot, np.vecdot, wrt=("x1", "x2"), via=np.vecdot)
    @adjoint(np.linalg.vecdot, np.vecdot)
    def _(out, x1, x2, *, axis=-1):
        d[x1] = vecdot_grad(d[out], x1, x2, axis)
        d[x2] = vecdot_grad(d[out], x2, x1, axis)


if hasattr(np, "matvec"):  # NumPy >= 2.2: matvec(a, v) = (a @ v[..., None])[..., 0], vecmat(v, a)
    # = (conj(v)[..., None, :] @ a)[..., 0, :], with matmul's gradients

    @linear(np.matvec, wrt=("x1", "x2"))
    @adjoint(np.matvec)
    def _(out, x1, x2):
        """The last two axes of ``x1`` and the last of ``x2`` (no ``axes``/``axis``)."""
        d[x1] = matmul_grad_x(np.expand_dims(d[out], -1), x1, np.expand_dims(x2, -1))
        d[x2] = matmul_grad_y(np.expand_dims(d[out], -1), x1, np.expand_dims(x2, -1))[..., 0]

    @linear(np.vecmat, wrt=("x1", "x2"))  # conjugate-linear in x1, linear in x2
    @adjoint(np.vecmat)
    def _(out, x1, x2):
        """The last axis of ``x1`` and the last two of ``x2`` (no ``axes``/``axis``)."""
        d[x1] = conj_if_complex(matmul_grad_x(np.expand_dims(d[out], -2),
                                              np.expand_dims(x1, -2), x2)[..., 0, :])
        d[x2] = matmul_grad_y(np.expand_dims(d[out], -2), np.conj(np.expand_dims(x1, -2)), x2)



# ----- tensordot ---------------------------------------------------------------------------


def tensordot_axes(axes, na, nb):
    """``axes`` of ``np.tensordot`` as two lists of non-negative axes, paired in order."""
    if np.ndim(axes) == 0:
        return list(range(na - axes, na)), list(range(axes))
    axes_a, axes_b = axes
    axes_a = [axes_a] if np.ndim(axes_a) == 0 else list(axes_a)
    axes_b = [axes_b] if np.ndim(axes_b) == 0 else list(axes_b)
    return [int(i) % na for i in axes_a], [int(i) % nb for i in axes_b]


@linear_in("g", "b")
def tensordot_grad_a(g, a, b, axes=2):
    """Gradient of ``np.tensordot(a, b, axes)`` for ``a``: contract ``g`` with ``b`` over b's
    free axes, then put the axes that were summed back in ``a``'s order."""
    if zero_in(g, b):
        return zero
    na, nb = np.ndim(a), np.ndim(b)
    axes_a, axes_b = tensordot_axes(axes, na, nb)
    free_a = [i for i in range(na) if i not in axes_a]
    free_b = [i for i in range(nb) if i not in axes_b]
    g_axes = list(range(len(free_a), len(free_a) + len(free_b)))
    grad = np.tensordot(g, b, axes=(g_axes, free_b))  # free_a, then b's summed axes, sorted
    summed_b = sorted(axes_b)
    position = {}
    for k, i in enumerate(free_a):
        position[i] = k
    for i, j in zip(axes_a, axes_b):
        position[i] = len(free_a) + summed_b.index(j)
    return astype_grad(np.transpose(grad, [position[i] for i in range(na)]), a)


@linear_in("g", "a")
def tensordot_grad_b(g, a, b, axes=2):
    """Gradient of ``np.tensordot(a, b, axes)`` for ``b``."""
    if zero_in(g, a):
        return zero
    na, nb = np.ndim(a), np.ndim(b)
    axes_a, axes_b = tensordot_axes(axes, na, nb)
    n_free_a = na - len(axes_a)
    g_t = np.moveaxis(g, list(range(n_free_a)), list(range(np.ndim(g) - n_free_a, np.ndim(g))))
    return tensordot_grad_a(g_t, b, a, (axes_b, axes_a))


@linear(np.tensordot, wrt=("a", "b"))
@adjoint(np.tensordot)
def _(out, a, b, axes=2):
    d[a] = tensordot_grad_a(d[out], a, b, axes)
    d[b] = tensordot_grad_b(d[out], a, b, axes)



# ----- einsum ------------------------------------------------------------------------------


def einsum_parse(subscripts, operands):
    """``subscripts`` of ``np.einsum`` as one label string per operand and one for the output,
    with each ``...`` replaced by letters of its own (right-aligned across operands, as NumPy
    broadcasts them) and the implicit output made explicit."""
    if not isinstance(subscripts, str):
        raise NotImplementedError("einsum's gradient needs the subscripts as a string; the "
                                  "interleaved (operand, sublist, ...) form has none")
    subscripts = subscripts.replace(" ", "")
    inputs, arrow, output = subscripts.partition("->")
    terms = inputs.split(",")
    spare = [c for c in string.ascii_letters if c not in subscripts]
    n_ellipsis = max([np.ndim(x) - len(t.replace("...", "")) for t, x in zip(terms, operands)
                      if "..." in t] + [0])
    ellipsis = "".join(spare[:n_ellipsis])
    expanded = []
    for t, x in zip(terms, operands):
        k = np.ndim(x) - len(t.replace("...", ""))
        expanded.append(t.replace("...", ellipsis[n_ellipsis - k:] if k else ""))
    if not arrow:
        labels = inputs.replace("...", "").replace(",", "")
        output = "..." + "".join(sorted(c for c in set(labels) if labels.count(c) == 1))
    return expanded, output.replace("...", ellipsis)


def einsum_list(subscripts, operands, optimize=False):
    """``np.einsum(subscripts, *operands, optimize=optimize)`` with the operands as one list:
    the form that gradient and tangent code calls, so that it can itself be differentiated."""
    return np.einsum(subscripts, *operands, optimize=optimize)


def einsum_grad_specs(subscripts, operands):
    """How the gradient of ``np.einsum(subscripts, *operands)`` for each operand is one einsum
    of the incoming gradient ``g`` with the other operands: the shape of the result (and of
    ``g``), and a list of ``(spec, others, constants)``, one per operand, for
    ``einsum_list(spec, [g] + [operands[j] for j in others] + constants)``.

    The result is written in operand k's own labels. A label of k that the other terms do not
    have, or have with another length (k's length 1, broadcast), gets a fresh letter and a
    vector of ones: the gradient is broadcast along it (and the other length summed). A label
    repeated in k's term (a diagonal, ``'ii->i'``) gets a fresh letter for each repeat and an
    identity matrix tying it to the first, which puts the values on that diagonal. Only labels
    and constants come out of here: the gradient depends on the operands through the einsum.
    """
    terms, output = einsum_parse(subscripts, operands)
    used = set(subscripts).union(output, *terms)
    fresh = [c for c in string.ascii_letters if c not in used]
    sizes = {}  # each label's length (a length 1 broadcasts against any other, 0 included)
    for t, x in zip(terms, operands):
        for c, n in zip(t, np.shape(x)):
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]
    out_shape = tuple(sizes[c] for c in output)
    specs = []
    for k, x in enumerate(operands):
        others = [j for j in range(len(operands)) if j != k]
        elsewhere = {}  # each label's length outside operand k (broadcast as sizes)
        for t, shape in [(output, out_shape)] + [(terms[j], np.shape(operands[j]))
                                                 for j in others]:
            for c, n in zip(t, shape):
                elsewhere[c] = n if elsewhere.get(c, 1) == 1 else elsewhere[c]
        own = dict(zip(terms[k], np.shape(x)))
        letters, first, extra_terms, constants = [], {}, [], []
        for c in terms[k]:
            if c in first:  # a repeat: an identity matrix ties it to the first occurrence
                letter = fresh[len(extra_terms)]
                extra_terms.append(first[c] + letter)
                constants.append(np.eye(own[c]))
            elif elsewhere.get(c) == own[c]:
                letter = c
            else:  # broadcast along it (summing k's length-1 axis against the others')
                letter = fresh[len(extra_terms)]
                extra_terms.append(letter)
                constants.append(np.ones(own[c]))
            first.setdefault(c, letter)
            letters.append(letter)
        spec = ",".join([output] + [terms[j] for j in others] + extra_terms) + "->" + \
            "".join(letters)
        specs.append((spec, others, constants))
    return out_shape, specs


nondifferentiable(einsum_parse, einsum_grad_specs)


@zero_in_zero_out("g")
def einsum_grads(g, subscripts, operands, wanted=None):
    """Gradients of ``np.einsum(subscripts, *operands)``, one per operand: for operand k, the
    einsum of ``g`` with the other operands onto k's labels (``einsum_grad_specs``). A ``g``
    of another shape (a scalar for an array) is broadcast to the result's. ``wanted``: the
    positions of the operands whose gradient is read (None: all); the others are None, and
    not computed.

    A contraction with more than ``EINSUM_PATH_SIZE`` elements in its operands runs with
    ``optimize=True`` (a BLAS product where one fits), smaller ones without the path search,
    which would cost more than it saves."""
    if zero_in(g):
        return zero
    out_shape, specs = einsum_grad_specs(subscripts, operands)
    if np.shape(g) != out_shape:
        g = np.broadcast_to(g, out_shape)
    grads = []
    for k in range(len(operands)):
        if wanted is not None and k not in wanted:
            grads.append(None)
            continue
        spec, others, constants = specs[k]
        factors = [g]
        for j in others:
            factors.append(operands[j])
        for c in constants:  # appends, not list concatenation: differentiated to any order
            factors.append(c)  # noqa: PERF402
        grads.append(astype_grad(einsum_list(spec, factors, einsum_path_wanted(factors)),
                                 operands[k]))
    return tuple(grads)


EINSUM_PATH_SIZE = 4096


def einsum_path_wanted(factors):
    """Whether the einsum of ``factors`` (two or more NumPy arrays and numbers, whose sizes add
    to more than ``EINSUM_PATH_SIZE``) is worth NumPy's path search: ``optimize`` for
    ``einsum_list``. Not for a Dask array, whose search would compute it."""
    return len(factors) > 1 and all(isinstance(f, (np.ndarray, np.generic, float, int))
                                    for f in factors) and \
        sum(np.size(f) for f in factors) > EINSUM_PATH_SIZE


nondifferentiable(einsum_path_wanted)


@zero_in_zero_out("g", "ts")
def einsum_grads_tangent(g, subscripts, operands, ts):
    """Tangent of ``einsum_grads(g, subscripts, operands)`` from the operands: operand j's
    tangent enters every gradient but its own (multilinearity)."""
    if zero_in(g, ts):
        return zero
    total = [zero] * len(operands)
    for j, t in enumerate(ts):
        if is_zero(t):
            continue
        replaced = list(operands)
        replaced[j] = t
        grads = einsum_grads(g, subscripts, tuple(replaced))
        total = [tk if k == j else runtime.add(tk, gk)
                 for k, (tk, gk) in enumerate(zip(total, grads))]
    return TangentTuple(zero_tangent_of(x) if is_zero(tk) else tk for tk, x in zip(total, operands))


@tangent(einsum_grads)  # linear in g, and in each operand for the others' gradients
def _(out, g, subscripts, operands, wanted=None):
    d[out] = summable(einsum_grads(d[g], subscripts, operands))
    d[out] = einsum_grads_tangent(g, subscripts, operands, d[operands])


def einsum_sublists(subscripts, operands):
    """The interleaved form ``np.einsum(a, [0, 1], b, [1, 2], [0, 2])`` (``subscripts`` is the
    first array, ``operands`` the rest) as the string form: ``("ab,bc->ac", positions)``, the
    positions in ``operands`` of the arrays after the first. ``Ellipsis`` reads as ``...``."""
    def letters(sublist):
        out = []
        for label in sublist:
            if label is Ellipsis:
                out.append("...")
            elif 0 <= int(label) < len(string.ascii_letters):
                out.append(string.ascii_letters[int(label)])
            else:
                raise ValueError(f"einsum sublist labels are ints in [0, 52), got {label!r}")
        return "".join(out)

    positions = list(range(1, len(operands) - 1 + len(operands) % 2, 2))
    terms = [letters(operands[0])] + [letters(operands[i + 1]) for i in positions]
    spec = ",".join(terms)
    if len(operands) % 2 == 0:  # an output sublist last
        spec = spec + "->" + letters(operands[-1])
    return spec, positions


nondifferentiable(einsum_sublists)


def einsum_arrays(subscripts, operands):
    """``np.einsum(subscripts, *operands)`` as ``(spec, arrays)`` of the string form, in either
    form: the interleaved one is rewritten (``einsum_sublists``)."""
    if isinstance(subscripts, str):
        return subscripts, operands
    spec, positions = einsum_sublists(subscripts, operands)
    arrays = [subscripts]
    for i in positions:
        arrays.append(operands[i])
    return spec, tuple(arrays)


@takes_zero(keeps_values=False, any_number=True)
def einsum_args_grads(g, subscripts, operands, wanted=None):
    """Gradients of ``np.einsum(subscripts, *operands)`` in either form, one per argument: the
    first is the first array's in the interleaved form (None for a string), then one per
    operand (None for a sublist); all 0 for a zero ``g``. ``wanted``: the positions, in that
    result, of the gradients read (None: all), which the rule gives with ``active_of``; the
    others are None, and not computed."""
    if is_any_zero(g):
        return (0,) * (1 + len(operands))
    if isinstance(subscripts, str):
        own = None if wanted is None else tuple(k - 1 for k in wanted if k > 0)
        return (None,) + einsum_grads(g, subscripts, operands, own)
    spec, positions = einsum_sublists(subscripts, operands)
    own = None
    if wanted is not None:  # the arrays' positions in einsum_grads: the first, then positions
        own = tuple(k for k, i in enumerate([-1] + positions) if i + 1 in wanted)
    grads = einsum_grads(g, spec, einsum_arrays(subscripts, operands)[1], own)
    placed = [grads[0]] + [None] * len(operands)
    for k, i in enumerate(positions):
        placed[i + 1] = grads[k + 1]
    return tuple(placed)


@zero_in_zero_out("g", "t_first", "ts")
def einsum_args_grads_tangent(g, subscripts, operands, t_first, ts):
    """Tangent of ``einsum_args_grads`` from the arrays (``t_first`` the first one's in the
    interleaved form, ``ts`` the operands'), placed as its result is; 0 for a zero ``g``, as
    ``einsum_args_grads`` gives zeros there."""
    if is_any_zero(g) or zero_in(t_first) and zero_in(ts):
        return zero
    if isinstance(subscripts, str):
        return TangentTuple((0,) + tuple(einsum_grads_tangent(g, subscripts, operands, ts)))
    spec, positions = einsum_sublists(subscripts, operands)
    tangents = [t_first]
    for i in positions:
        tangents.append(ts[i] if isinstance(ts, (tuple, list)) else zero)
    total = einsum_grads_tangent(g, spec, einsum_arrays(subscripts, operands)[1], tangents)
    placed = [total[0]] + [zero] * len(operands)
    for k, i in enumerate(positions):
        placed[i + 1] = total[k + 1]
    return TangentTuple(placed)


@tangent(einsum_args_grads)  # linear in g, and in each array for the others' gradients
def _(out, g, subscripts, operands, wanted=None):
    d[out] = summable(einsum_args_grads(d[g], subscripts, operands))
    d[out] = einsum_args_grads_tangent(g, subscripts, operands, d[subscripts], 0)
    d[out] = einsum_args_grads_tangent(g, subscripts, operands, 0, d[operands])


@adjoint(np.einsum)
def _(ans, subscripts, *operands, out=None, dtype=None, order="K", casting="safe",
      optimize=False):
    """Subscripts as a string, or the interleaved (array, sublist, ...) form."""
    grads = einsum_args_grads(d[ans], subscripts, operands, active_of(subscripts, operands))
    d[subscripts] = grads[0]
    d[operands] = grads[1:]


@adjoint(einsum_list)
def _(out, subscripts, operands, optimize=False):
    d[operands] = einsum_grads(d[out], subscripts, operands)


@zero_in_zero_out("ts")
def einsum_tangent(ts, subscripts, operands, ans, optimize=False):
    """Tangent of ``np.einsum(subscripts, *operands)``: one einsum per operand with a tangent,
    that operand replaced by its tangent (product rule), added up."""
    if zero_in(ts):
        return zero
    total = 0
    for k in range(len(ts)):
        if is_zero(ts[k]):
            continue
        replaced = list(operands)
        replaced[k] = ts[k]
        total = total + einsum_list(subscripts, replaced, optimize)
    if is_zero(total):
        total = np.zeros(np.shape(ans))
    return as_dtype_of(total, ans)


@zero_in_zero_out("t_first", "ts")
def einsum_args_tangent(t_first, ts, subscripts, operands, ans, optimize=False):
    """Tangent of ``np.einsum(subscripts, *operands)`` in either form: ``t_first`` is the first
    array's in the interleaved form, ``ts`` the operands' (0 for those without one)."""
    if zero_in(t_first) and zero_in(ts):
        return zero
    if isinstance(subscripts, str):
        return einsum_tangent(ts, subscripts, operands, ans, optimize)
    spec, positions = einsum_sublists(subscripts, operands)
    tangents = [t_first]
    for i in positions:
        tangents.append(ts[i] if isinstance(ts, (tuple, list)) else zero)
    return einsum_tangent(tangents, spec, einsum_arrays(subscripts, operands)[1], ans, optimize)


@tangent(np.einsum)
def _(ans, subscripts, *operands, out=None, dtype=None, order="K", casting="safe",
      optimize=False):
    d[ans] = einsum_args_tangent(d[subscripts], 0, subscripts, operands, ans, optimize)
    d[ans] = einsum_args_tangent(0, d[operands], subscripts, operands, ans, optimize)


@tangent(einsum_list)
def _(out, subscripts, operands, optimize=False):
    d[out] = einsum_tangent(d[operands], subscripts, operands, out, optimize)



# ----- matrix_power, multi_dot -----------------------------------------------------------------


def matrix_powers(a, n):
    """``[I, a, a^2, ..., a^n]`` (stacks too)."""
    powers = [np.broadcast_to(np.eye(np.shape(a)[-1]), np.shape(a))]
    for _ in range(n):
        powers.append(powers[-1] @ a)
    return powers


@zero_in_zero_out("g")
def matrix_power_grad(g, a, n):
    """Gradient of ``np.linalg.matrix_power(a, n)``: ``sum_k (a^T)^k g (a^T)^(n-1-k)``; a
    negative ``n`` is the power of ``inv(a)``, whose gradient ``-inv(a)^T g inv(a)^T`` follows."""
    if zero_in(g):
        return zero
    base = a if n >= 0 else np.linalg.inv(a)
    powers = matrix_powers(base, abs(n))
    grad = np.zeros(np.shape(a), np.result_type(a, g, 1.0))
    for k in range(abs(n)):
        grad = grad + swap_last_axes(powers[k]) @ g @ swap_last_axes(powers[abs(n) - 1 - k])
    if n < 0:
        grad = -swap_last_axes(base) @ grad @ swap_last_axes(base)
    return astype_grad(grad, a)


@zero_in_zero_out("t")
def matrix_power_tangent(t, a, n, out):
    """Tangent of ``np.linalg.matrix_power(a, n)``: ``sum_k a^k t a^(n-1-k)``, of ``inv(a)``'s
    tangent ``-inv(a) t inv(a)`` for a negative ``n``."""
    if zero_in(t):
        return zero
    base = a if n >= 0 else np.linalg.inv(a)
    if n < 0:
        t = -base @ t @ base
    powers = matrix_powers(base, abs(n))
    total = np.zeros(np.shape(a), np.result_type(a, t, 1.0))
    for k in range(abs(n)):
        total = total + powers[k] @ t @ powers[abs(n) - 1 - k]
    return as_dtype_of(total, out)


# the tangent transposed in its tangent (@transpose reads it)
@transpose_of(matrix_power_tangent)
def _(ans, t, a, n, out):
    d[t] = matrix_power_grad(d[ans], a, n)


@transpose(np.linalg.matrix_power)
@tangent(np.linalg.matrix_power)
def _(out, a, n):
    d[out] = matrix_power_tangent(d[a], a, n, out)


def multi_dot_matrices(arrays):
    """The factors of ``np.linalg.multi_dot`` as matrices: a first vector is one row, a last
    vector one column."""
    matrices = list(arrays)
    if np.ndim(matrices[0]) == 1:
        matrices[0] = np.expand_dims(matrices[0], 0)
    if np.ndim(matrices[-1]) == 1:
        matrices[-1] = np.expand_dims(matrices[-1], -1)
    return matrices


def chain_product(matrices, size):
    """The product of ``matrices`` in order; the ``size`` x ``size`` identity if there are
    none."""
    if not matrices:
        return np.eye(size)
    product = matrices[0]
    for m in matrices[1:]:
        product = product @ m
    return product


@zero_in_zero_out("g")
def multi_dot_grads(g, arrays):
    """Gradients of ``np.linalg.multi_dot(arrays)``, one per factor: ``L^T g R^T`` for the
    products ``L`` and ``R`` of the factors before and after it."""
    if zero_in(g):
        return zero
    matrices = multi_dot_matrices(arrays)
    rows = np.shape(matrices[0])[0]
    cols = np.shape(matrices[-1])[-1]
    g_matrix = np.reshape(g, (rows, cols))
    grads = []
    for i in range(len(matrices)):
        before = chain_product(matrices[:i], rows)
        after = chain_product(matrices[i + 1:], cols)
        grad = swap_last_axes(before) @ g_matrix @ swap_last_axes(after)
        grads.append(astype_grad(np.reshape(grad, np.shape(arrays[i])), arrays[i]))
    return grads


@zero_in_zero_out("ts")
def multi_dot_tangent(ts, arrays, ans):
    """Tangent of ``np.linalg.multi_dot(arrays)``: one product per factor with a tangent, that
    factor replaced by its tangent (product rule), added up."""
    if zero_in(ts):
        return zero
    total = np.zeros(np.shape(ans), float_dtype(ans))
    for k in range(len(arrays)):
        if is_zero(ts[k]):
            continue
        replaced = list(arrays)
        replaced[k] = np.broadcast_to(ts[k], np.shape(arrays[k]))
        total = total + np.linalg.multi_dot(replaced)
    return as_dtype_of(total, ans)


# the tangent transposed in its tangent (@transpose reads it)
@transpose_of(multi_dot_tangent)
def _(out, ts, arrays, ans):
    d[ts] = multi_dot_grads(d[out], arrays)


@transpose(np.linalg.multi_dot)
@tangent(np.linalg.multi_dot)
def _(ans, arrays, *, out=None):
    d[ans] = multi_dot_tangent(d[arrays], arrays, ans)



# ----- cross, kron ---------------------------------------------------------------------------


def as_3_vectors(x, axis):
    """``x``'s vectors along ``axis`` moved last, 2-vectors given a third entry 0."""
    moved = np.moveaxis(as_array(x), axis, -1)
    if np.shape(moved)[-1] == 2:
        moved = np.concatenate([moved, np.zeros(np.shape(moved)[:-1] + (1,))], axis=-1)
    return moved


@zero_in_zero_out("g")
def cross_grads(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Gradients of ``np.cross(a, b, axisa, axisb, axisc, axis)``: with the vectors moved last
    and 2-vectors read as 3-vectors in the plane, ``g . (da x b) = da . (b x g)`` and
    ``g . (a x db) = db . (g x a)``; 2-vectors keep their two entries, and each gradient is
    summed back to its argument's shape. Two 2-vectors give ``g`` as the third entry."""
    if zero_in(g):
        return zero
    if axis is not None:
        axisa = axis
        axisb = axis
        axisc = axis
    na = np.shape(a)[axisa]
    nb = np.shape(b)[axisb]
    a3 = as_3_vectors(a, axisa)
    b3 = as_3_vectors(b, axisb)
    if na == 2 and nb == 2:
        g3 = np.stack([np.zeros(np.shape(g)), np.zeros(np.shape(g)), g], axis=-1)
    else:
        g3 = np.moveaxis(g, axisc, -1)
    g_a = unbroadcast(np.cross(b3, g3)[..., :na], np.moveaxis(as_array(a), axisa, -1))
    g_b = unbroadcast(np.cross(g3, a3)[..., :nb], np.moveaxis(as_array(b), axisb, -1))
    return (astype_grad(np.moveaxis(g_a, -1, axisa), a),
            astype_grad(np.moveaxis(g_b, -1, axisb), b))


@linear(np.cross, wrt=("a", "b"))
@adjoint(np.cross)
def _(out, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    grads = cross_grads(d[out], a, b, axisa, axisb, axisc, axis)
    d[a] = grads[0]
    d[b] = grads[1]


if hasattr(np.linalg, "cross"):  # NumPy >= 2.0

    @linear(np.linalg.cross, wrt=("x1", "x2"))
    @adjoint(np.linalg.cross)
    def _(out, x1, x2, *, axis=-1):
        grads = cross_grads(d[out], x1, x2, -1, -1, -1, axis)
        d[x1] = grads[0]
        d[x2] = grads[1]


def kron_layout(a, b):
    """How ``np.kron(a, b)`` interleaves its factors: both given the same number of
    dimensions, the result's shape split into ``(a0, b0, a1, b1, ...)``, and each factor's
    shape in that layout (1 for the other's axes)."""
    ndim = max(np.ndim(a), np.ndim(b))
    shape_a = (1,) * (ndim - np.ndim(a)) + np.shape(a)
    shape_b = (1,) * (ndim - np.ndim(b)) + np.shape(b)
    split = [n for pair in zip(shape_a, shape_b) for n in pair]
    return split, [n for m in shape_a for n in (m, 1)], [n for m in shape_b for n in (1, m)]


nondifferentiable(kron_layout)


@zero_in_zero_out("g")
def kron_grads(g, a, b):
    """Gradients of ``np.kron(a, b)``: ``g`` split into ``a``'s and ``b``'s axes, times the
    other factor, summed over the other factor's axes."""
    if zero_in(g):
        return zero
    layout = kron_layout(a, b)
    split = np.reshape(g, layout[0])
    count = len(layout[0])
    g_a = np.sum(split * np.reshape(b, layout[2]), axis=tuple(range(1, count, 2)))
    g_b = np.sum(split * np.reshape(a, layout[1]), axis=tuple(range(0, count, 2)))
    return (astype_grad(np.reshape(g_a, np.shape(a)), a),
            astype_grad(np.reshape(g_b, np.shape(b)), b))


@linear(np.kron, wrt=("a", "b"))
@adjoint(np.kron)
def _(out, a, b):
    grads = kron_grads(d[out], a, b)
    d[a] = grads[0]
    d[b] = grads[1]
