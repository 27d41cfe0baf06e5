"""Rules for NumPy's products and ``np.linalg``, in both directions: the adjoint (reverse mode)
and the tangent (forward mode) of each.

``np.matmul`` lives in ``operators.py`` with ``@``. Products are written as contractions of the
incoming gradient with the other factor (``tensordot``/``einsum``), batched matrix rules use
``swapaxes(., -1, -2)`` for the transpose so that stacks of matrices work. Products are
multilinear: the tangent from one factor is the same product with that factor replaced by its
tangent (``@linear``), and the gradient helpers are linear in the gradient and the other factor
(``@linear_in``), which derives their own tangents. Norms, inverses, determinants, solves and
the decompositions have their tangents written out: ``svd``, ``eigh`` (real matrices with
distinct singular values or eigenvalues), ``cholesky`` (symmetric positive definite), ``qr``
(full rank), ``eig``/``eigvals`` (distinct eigenvalues), ``pinv`` and ``lstsq`` (full rank);
each adjoint template's docstring states what it assumes.

A gradient of a gradient differentiates the helpers below from their source, so they keep to
the Python that mindgrad differentiates: no starred calls (``einsum_list`` takes the operands
as one list), index assignment only on plain names, and NumPy functions that have rules.
"""

import string

import numpy as np

from mindgrad import runtime
from mindgrad.rules import adjoint, adjoint_method, d, linear, linear_in, nondifferentiable, tangent
from mindgrad.rules.numpy_elementwise import abs_slope, array_grad, astype_grad, conj_if_complex
from mindgrad.rules.numpy_shape import diagonal_grad, trace_grad
from mindgrad.rules.operators import matmul_grad_x, matmul_grad_y
from mindgrad.runtime import is_zero, unbroadcast, zero_in_zero_out
from mindgrad.runtime.tangents import (
    TangentTuple,
    as_dtype_of,
    float_dtype,
    summable,
    zero_tangent_of,
)


@linear_in("x")
def swap_last_axes(x):
    """The transpose of (a stack of) matrices."""
    return np.swapaxes(x, -1, -2)


# ----- dot, inner, outer, vdot -------------------------------------------------------------


@linear_in("g", "b", keeps_values=True)
def dot_grad_a(g, a, b):
    """Gradient of ``np.dot(a, b)`` for ``a``: contract ``g`` with ``b`` over b's free axes."""
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(g * b, a)
    if nb == 1:
        return astype_grad(np.multiply.outer(g, b), a)
    free_b = list(range(nb - 2)) + [nb - 1]  # b's axes that survive into the result
    g_axes = list(range(na - 1, na - 1 + nb - 1))
    return astype_grad(np.tensordot(g, b, axes=(g_axes, free_b)), a)


@linear_in("g", "a", keeps_values=True)
def dot_grad_b(g, a, b):
    """Gradient of ``np.dot(a, b)`` for ``b``: contract ``a`` with ``g`` over a's free axes."""
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(g * a, b)
    lead = list(range(na - 1))
    grad = np.tensordot(a, g, axes=(lead, lead))  # shape: (m,) + b's free axes
    if nb > 1:
        grad = np.moveaxis(grad, 0, -2)
    return astype_grad(grad, b)


@linear(np.dot, ("method", "dot"), wrt=("a", "b"), via=np.dot)
@adjoint_method("dot")
@adjoint(np.dot)
def _(ans, a, b, out=None):
    d[a] = dot_grad_a(d[ans], a, b)
    d[b] = dot_grad_b(d[ans], a, b)


@linear_in("g", "b")
def inner_grad_a(g, a, b):
    """Gradient of ``np.inner(a, b)`` (a sum over the last axes) for ``a``."""
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(g * b, a)
    g_axes = list(range(na - 1, na - 1 + nb - 1))
    return astype_grad(np.tensordot(g, b, axes=(g_axes, list(range(nb - 1)))), a)


@linear_in("g", "a")
def inner_grad_b(g, a, b):
    """Gradient of ``np.inner(a, b)`` for ``b``."""
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


def einsum_grads(g, subscripts, operands):
    """Gradients of ``np.einsum(subscripts, *operands)``, one per operand: for operand k, the
    einsum of ``g`` with the other operands onto k's labels (``einsum_grad_specs``). A ``g``
    of another shape (a scalar for an array) is broadcast to the result's."""
    out_shape, specs = einsum_grad_specs(subscripts, operands)
    if np.shape(g) != out_shape:
        g = np.broadcast_to(g, out_shape)
    grads = []
    for k in range(len(operands)):
        spec, others, constants = specs[k]
        factors = [g]
        for j in others:
            factors.append(operands[j])
        for c in constants:  # appends, not list concatenation: differentiated to any order
            factors.append(c)  # noqa: PERF402
        grads.append(astype_grad(einsum_list(spec, factors), operands[k]))
    return tuple(grads)


def einsum_grads_tangent(g, subscripts, operands, ts):
    """Tangent of ``einsum_grads(g, subscripts, operands)`` from the operands: operand j's
    tangent enters every gradient but its own (multilinearity)."""
    total = [0] * len(operands)
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
def _(out, g, subscripts, operands):
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


def einsum_args_grads(g, subscripts, operands):
    """Gradients of ``np.einsum(subscripts, *operands)`` in either form, one per argument: the
    first is the first array's in the interleaved form (None for a string), then one per
    operand (None for a sublist)."""
    if isinstance(subscripts, str):
        return (None,) + einsum_grads(g, subscripts, operands)
    spec, positions = einsum_sublists(subscripts, operands)
    grads = einsum_grads(g, spec, einsum_arrays(subscripts, operands)[1])
    placed = [grads[0]] + [None] * len(operands)
    for k, i in enumerate(positions):
        placed[i + 1] = grads[k + 1]
    return tuple(placed)


def einsum_args_grads_tangent(g, subscripts, operands, t_first, ts):
    """Tangent of ``einsum_args_grads`` from the arrays (``t_first`` the first one's in the
    interleaved form, ``ts`` the operands'), placed as its result is."""
    if isinstance(subscripts, str):
        return TangentTuple((0,) + tuple(einsum_grads_tangent(g, subscripts, operands, ts)))
    spec, positions = einsum_sublists(subscripts, operands)
    tangents = [t_first]
    for i in positions:
        tangents.append(ts[i] if isinstance(ts, (tuple, list)) else 0)
    total = einsum_grads_tangent(g, spec, einsum_arrays(subscripts, operands)[1], tangents)
    placed = [total[0]] + [0] * len(operands)
    for k, i in enumerate(positions):
        placed[i + 1] = total[k + 1]
    return TangentTuple(placed)


@tangent(einsum_args_grads)  # linear in g, and in each array for the others' gradients
def _(out, g, subscripts, operands):
    d[out] = summable(einsum_args_grads(d[g], subscripts, operands))
    d[out] = einsum_args_grads_tangent(g, subscripts, operands, d[subscripts], 0)
    d[out] = einsum_args_grads_tangent(g, subscripts, operands, 0, d[operands])


@adjoint(np.einsum)
def _(ans, subscripts, *operands, out=None, dtype=None, order="K", casting="safe",
      optimize=False):
    """Subscripts as a string, or the interleaved (array, sublist, ...) form."""
    grads = einsum_args_grads(d[ans], subscripts, operands)
    d[subscripts] = grads[0]
    d[operands] = grads[1:]


@adjoint(einsum_list)
def _(out, subscripts, operands, optimize=False):
    d[operands] = einsum_grads(d[out], subscripts, operands)


def einsum_tangent(ts, subscripts, operands, ans, optimize=False):
    """Tangent of ``np.einsum(subscripts, *operands)``: one einsum per operand with a tangent,
    that operand replaced by its tangent (product rule), added up."""
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


def einsum_args_tangent(t_first, ts, subscripts, operands, ans, optimize=False):
    """Tangent of ``np.einsum(subscripts, *operands)`` in either form: ``t_first`` is the first
    array's in the interleaved form, ``ts`` the operands' (0 for those without one)."""
    if isinstance(subscripts, str):
        return einsum_tangent(ts, subscripts, operands, ans, optimize)
    spec, positions = einsum_sublists(subscripts, operands)
    tangents = [t_first]
    for i in positions:
        tangents.append(ts[i] if isinstance(ts, (tuple, list)) else 0)
    return einsum_tangent(tangents, spec, einsum_arrays(subscripts, operands)[1], ans, optimize)


@tangent(np.einsum)
def _(ans, subscripts, *operands, out=None, dtype=None, order="K", casting="safe",
      optimize=False):
    d[ans] = einsum_args_tangent(d[subscripts], 0, subscripts, operands, ans, optimize)
    d[ans] = einsum_args_tangent(0, d[operands], subscripts, operands, ans, optimize)


@tangent(einsum_list)
def _(out, subscripts, operands, optimize=False):
    d[out] = einsum_tangent(d[operands], subscripts, operands, out, optimize)


# ----- norms -------------------------------------------------------------------------------


def sign(x):
    """``x / |x|`` (0 at 0), as NumPy 2's ``np.sign`` gives it for complex ``x`` too: NumPy 1.x's
    gives the sign of the real part."""
    return conj_if_complex(abs_slope(x))


def norm_vector_grad(x, norm, ord, axis):
    """d norm / d x of a vector norm along ``axis``; ``norm`` has that axis kept."""
    if ord is None or ord == 2:
        return x / np.where(norm == 0, 1, norm)
    if ord == 1:
        return sign(x)
    if ord == 0:
        return np.zeros_like(x)
    if np.isinf(ord):
        hits = np.abs(x) == norm
        return sign(x) * hits / np.maximum(np.sum(hits, axis=axis, keepdims=True), 1)
    safe = np.where(norm == 0, 1, norm)
    return sign(x) * (np.abs(x) / safe) ** (ord - 1)


def norm_matrix_grad(x, norm, ord, axes):
    """d norm / d x of a matrix norm over the two ``axes``; ``norm`` has them kept."""
    if ord is None or ord == "fro":
        return x / np.where(norm == 0, 1, norm)
    m = np.moveaxis(x, axes, (-2, -1))
    if ord in ("nuc", 2, -2):
        u, s, vt = np.linalg.svd(m, full_matrices=False)
        if ord == "nuc":
            return np.moveaxis(u @ vt, (-2, -1), axes)
        i = 0 if ord == 2 else s.shape[-1] - 1  # the largest or the smallest singular value
        return np.moveaxis(u[..., :, i:i + 1] @ vt[..., i:i + 1, :], (-2, -1), axes)
    if ord in (1, -1, np.inf, -np.inf):
        # ord 1 picks the column with the largest sum of |m| (inf: the row); -1, -inf the least
        summed, picked = (-2, -1) if ord in (1, -1) else (-1, -2)
        sums = np.sum(np.abs(m), axis=summed, keepdims=True)
        if ord > 0:
            best = np.max(sums, axis=picked, keepdims=True)
        else:
            best = np.min(sums, axis=picked, keepdims=True)
        hits = sums == best
        share = hits / np.sum(hits, axis=picked, keepdims=True)
        return np.moveaxis(sign(m) * share, (-2, -1), axes)
    raise NotImplementedError(f"np.linalg.norm(ord={ord!r}) of a matrix has no gradient rule")


def norm_axes(x, ord=None, axis=None):
    """The axes ``np.linalg.norm(x, ord, axis)`` reduces, as non-negative ints."""
    x = np.asarray(x)
    if axis is None:
        axes = tuple(range(x.ndim)) if ord is None or x.ndim == 1 else (0, 1)
    else:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(int(a) % max(x.ndim, 1) for a in axes)


nondifferentiable(norm_axes)


@zero_in_zero_out("g", keeps_values=True)
def norm_grad(g, x, ans, ord=None, axis=None, keepdims=False):
    """Gradient of ``np.linalg.norm(x, ord, axis, keepdims)``: vector norms (2, 1, inf, -inf,
    any p) along one axis or over the flattened array, matrix norms (fro, nuc, 2, -2, 1, -1,
    inf, -inf) over two."""
    x = np.asarray(x)
    axes = norm_axes(x, ord, axis)
    if not keepdims:
        g, ans = np.expand_dims(g, axes), np.expand_dims(ans, axes)
    if len(axes) == 2 and not (ord is None and axis is None):
        slope = norm_matrix_grad(x, ans, ord, axes)
    elif ord is None and axis is None:
        slope = x / np.where(ans == 0, 1, ans)
    else:
        slope = norm_vector_grad(x, ans, ord, axes[0])
    return astype_grad(np.real(g) * conj_if_complex(slope), x)  # the README's complex convention


@adjoint(np.linalg.norm)
def _(out, x, ord=None, axis=None, keepdims=False):
    d[x] = norm_grad(d[out], x, out, ord, axis, keepdims)


def norm_tangent(t, x, ans, ord=None, axis=None, keepdims=False):
    """Tangent of ``np.linalg.norm``: ``t`` weighted by the norm's gradient, summed over the
    reduced axes (the gradient of each kind of norm is ``norm_grad``'s)."""
    slope = norm_grad(np.ones(np.shape(ans)), x, ans, ord, axis, keepdims)
    return as_dtype_of(np.sum(np.real(slope * t), axis=norm_axes(x, ord, axis),
                              keepdims=keepdims), ans)


@tangent(np.linalg.norm)
def _(out, x, ord=None, axis=None, keepdims=False):
    d[out] = norm_tangent(d[x], x, out, ord, axis, keepdims)


@zero_in_zero_out("g", "t")
def norm_grad_tangent(g, x, ans, t, wrt, ord=None, axis=None, keepdims=False):
    """Tangent of ``norm_grad(g, x, ans, ...) = g slope(x, ans)`` from ``x`` (wrt 0) or ``ans``
    (1). The slope of the 2-norm/Frobenius norm is ``x / ans``, of a p-norm
    ``sign(x) (|x| / ans)^(p-1)``; those of the 1, inf, 0 norms and of the matrix 1/inf norms
    are piecewise constant; those of the spectral and nuclear norms come from the svd's tangent."""
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
    if ord is None or ord == "fro" or (ord == 2 and not matrix):  # 2-norm, Frobenius norm
        p = 2
    elif matrix and ord in ("nuc", 2, -2):
        # the slope is U V^T (nuc) or u_i v_i^T (2, -2): its tangent comes from the svd's
        if wrt == 1:
            return 0  # the slope does not read ans
        m = np.moveaxis(x, axes, (-2, -1))
        tm = np.moveaxis(np.asarray(t), axes, (-2, -1))
        u, sv, vt = np.linalg.svd(m, full_matrices=False)
        tu, _, tvt = svd_tangent(tm, m, (u, sv, vt), False)
        if ord != "nuc":
            i = 0 if ord == 2 else sv.shape[-1] - 1
            u, vt, tu, tvt = (u[..., :, i:i + 1], vt[..., i:i + 1, :], tu[..., :, i:i + 1],
                              tvt[..., i:i + 1, :])
        change = np.moveaxis(tu @ vt + u @ tvt, (-2, -1), axes)
        return astype_grad(g * change, x)
    elif matrix or ord in (1, 0) or np.isinf(ord):
        return np.zeros(x.shape, np.result_type(x, g, 1.0))
    else:
        p = ord
    ratio = np.abs(x) / safe
    if wrt == 0:
        change = (p - 1) * ratio ** (p - 2) * t / safe
    else:
        change = (1 - p) * np.sign(x) * ratio ** (p - 1) * t / safe
    return astype_grad(g * change, x)


@tangent(norm_grad)  # linear in g; the slope moves with x and ans
def _(out, g, x, ans, ord=None, axis=None, keepdims=False):
    d[out] = norm_grad(d[g], x, ans, ord, axis, keepdims)
    d[out] = norm_grad_tangent(g, x, ans, d[x], 0, ord, axis, keepdims)
    d[out] = norm_grad_tangent(g, x, ans, d[ans], 1, ord, axis, keepdims)


# ----- inverse, determinants ---------------------------------------------------------------


@adjoint(np.linalg.inv)
def _(out, a):
    d[a] = -np.matmul(swap_last_axes(out), np.matmul(d[out], swap_last_axes(out)))


@tangent(np.linalg.inv)
def _(out, a):
    d[out] = -np.matmul(out, np.matmul(d[a], out))


def inverse_transpose_tangent(a, t):
    """Tangent of ``inv(a)^T`` in the direction ``t``: ``-(inv(a) t inv(a))^T``."""
    inv = np.linalg.inv(a)
    return -swap_last_axes(np.matmul(inv, np.matmul(t, inv)))


def det_grad(g, a, ans):
    """Gradient of ``det(a)``: ``g det(a) inv(a)^T`` (for stacks of matrices too)."""
    return np.expand_dims(g * ans, (-2, -1)) * swap_last_axes(np.linalg.inv(a))


def det_grad_tangent(g, a, ans, t):
    """Tangent of ``det_grad(g, a, ans) = g ans inv(a)^T`` from ``a`` (``ans`` held)."""
    return np.expand_dims(g * ans, (-2, -1)) * inverse_transpose_tangent(a, t)


@tangent(det_grad)  # linear in g and ans; inv(a) moves with a
def _(out, g, a, ans):
    d[out] = det_grad(d[g], a, ans)
    d[out] = det_grad(g, a, d[ans])
    d[out] = det_grad_tangent(g, a, ans, d[a])


def slogdet_grad(g, a):
    """Gradient of ``slogdet(a) = (sign, log|det|)``: the sign has none; ``log|det|`` gives
    ``g inv(a)^T``."""
    g_logdet = g[1]
    if is_zero(g_logdet):
        return 0
    return np.expand_dims(g_logdet, (-2, -1)) * swap_last_axes(np.linalg.inv(a))


@zero_in_zero_out("g", "t")
def slogdet_grad_tangent(g, a, t):
    """Tangent of ``slogdet_grad(g, a) = g[1] inv(a)^T`` from ``a``."""
    if is_zero(g[1]):
        return 0
    return np.expand_dims(g[1], (-2, -1)) * inverse_transpose_tangent(a, t)


@tangent(slogdet_grad)  # linear in g; inv(a) moves with a
def _(out, g, a):
    d[out] = slogdet_grad(d[g], a)
    d[out] = slogdet_grad_tangent(g, a, d[a])


@adjoint(np.linalg.det)
def _(out, a):
    d[a] = det_grad(d[out], a, out)


def det_tangent(t, a, ans):
    """Tangent of ``det(a)``: ``det(a) trace(inv(a) t)`` (for stacks of matrices too)."""
    return ans * np.sum(swap_last_axes(np.linalg.inv(a)) * t, axis=(-2, -1))


@tangent(np.linalg.det)
def _(out, a):
    d[out] = det_tangent(d[a], a, out)


@adjoint(np.linalg.slogdet)
def _(out, a):
    d[a] = slogdet_grad(d[out], a)


def logdet_tangent(t, a):
    """Tangent of ``log|det(a)|``: ``trace(inv(a) t)``."""
    return np.sum(swap_last_axes(np.linalg.inv(a)) * t, axis=(-2, -1))


def slogdet_tangent(t, a, out):
    """Tangent of ``slogdet(a) = (sign, log|det|)``: the sign is piecewise constant (zeros)."""
    sign, logdet = out
    return TangentTuple((np.zeros(np.shape(sign), float_dtype(sign)),
                         as_dtype_of(logdet_tangent(t, a), logdet)))


@tangent(np.linalg.slogdet)
def _(out, a):
    d[out] = slogdet_tangent(d[a], a, out)


# ----- solving -----------------------------------------------------------------------------


@zero_in_zero_out("g")
def solve_adjoint(g, a, b):
    """``solve(a^T, g)``: the gradient of ``x = solve(a, b)`` for ``b`` before it is summed to
    b's shape. (``b`` is a vector only when it is 1-d, as in NumPy 2.)"""
    if np.ndim(b) == 1:
        return np.linalg.solve(swap_last_axes(a), np.expand_dims(g, -1))[..., 0]
    return np.linalg.solve(swap_last_axes(a), g)


@zero_in_zero_out("g", "t")
def solve_adjoint_tangent(g, a, b, t):
    """Tangent of ``solve_adjoint(g, a, b) = solve(a^T, g)`` from ``a``:
    ``-solve(a^T, t^T solve(a^T, g))``."""
    r = solve_adjoint(g, a, b)
    if np.ndim(b) == 1:
        rhs = np.matmul(swap_last_axes(t), np.expand_dims(r, -1))[..., 0]
    else:
        rhs = np.matmul(swap_last_axes(t), r)
    return -solve_adjoint(rhs, a, b)


@tangent(solve_adjoint)  # linear in g; solve(a^T, .) moves with a
def _(out, g, a, b):
    d[out] = solve_adjoint(d[g], a, b)
    d[out] = solve_adjoint_tangent(g, a, b, d[a])


@linear_in("g_b", "x")
def solve_grad_a(g_b, a, b, x):
    """Gradient of ``x = solve(a, b)`` for ``a``, from ``g_b = solve_adjoint(...)``:
    ``-g_b x^T``."""
    if np.ndim(b) == 1:
        return unbroadcast(-np.expand_dims(g_b, -1) * np.expand_dims(x, -2), a)
    return unbroadcast(-np.matmul(g_b, swap_last_axes(x)), a)


@adjoint(np.linalg.solve)
def _(out, a, b):
    g_b = solve_adjoint(d[out], a, b)
    d[b] = unbroadcast(g_b, b)
    d[a] = solve_grad_a(g_b, a, b, out)


def solve_tangent_a(t, a, b, x):
    """Tangent of ``x = solve(a, b)`` from ``a``: ``-solve(a, t x)``."""
    if np.ndim(b) == 1:
        return -np.linalg.solve(a, np.matmul(t, np.expand_dims(x, -1)))[..., 0]
    return -np.linalg.solve(a, np.matmul(t, x))


@tangent(np.linalg.solve)
def _(out, a, b):
    d[out] = np.linalg.solve(a, d[b])
    d[out] = solve_tangent_a(d[a], a, b, out)


# ----- decompositions: svd, eigh -----------------------------------------------------------
# For real matrices (stacks too), with distinct singular values / eigenvalues: where two are
# equal, their singular vectors (eigenvectors) are not unique and have infinite derivatives.


def inverse_gaps(w):
    """``F[..., i, j] = 1 / (w_j - w_i)`` off the diagonal, 0 on it."""
    eye = np.eye(np.shape(w)[-1])
    return (1.0 - eye) / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye)


def conj_transpose(x):
    """The conjugate transpose of (a stack of) matrices; the transpose of real ones."""
    return conj_if_complex(swap_last_axes(x))


def triangle_grad(g, uplo="L"):
    """The gradient for ``a`` of a function of ``a``'s ``uplo`` triangle read as a Hermitian
    (real: symmetric) matrix (``a -> tril(a, -1) + tril(a, -1)^H + real(diag(a))``, as
    ``eigh`` reads it), from the gradient ``g`` of that matrix: each off-diagonal entry of the
    triangle stands for two, the other conjugated; the diagonal's imaginary part is not read."""
    both = g + conj_transpose(g)
    diagonal = np.real(g) * np.eye(np.shape(g)[-1])
    if uplo.upper() == "U":
        return np.triu(both, 1) + diagonal
    return np.tril(both, -1) + diagonal


def triangle_tangent(t, uplo="L"):
    """The tangent of the Hermitian (real: symmetric) matrix that ``eigh`` reads from ``a``'s
    ``uplo`` triangle: ``tril(t, -1) + tril(t, -1)^H + real(diag(t))``."""
    diagonal = np.real(t) * np.eye(np.shape(t)[-1])
    if uplo.upper() == "U":
        return np.triu(t, 1) + conj_transpose(np.triu(t, 1)) + diagonal
    return np.tril(t, -1) + conj_transpose(np.tril(t, -1)) + diagonal


def reject_complex(a, name):
    """Refuse complex matrices: the rules below are for real ones."""
    if np.iscomplexobj(a):
        raise NotImplementedError(f"the derivative of {name} is implemented for real matrices "
                                  "only")


def full_matrices_message(extra):
    """Why the extra columns of U (rows of V^T) of ``full_matrices=True`` have no derivative."""
    return (f"np.linalg.svd(full_matrices=True) of a non-square matrix: its extra {extra} are "
            "an arbitrary basis of a complement, not determined by the matrix, and have no "
            "derivative; pass full_matrices=False (or give them no gradient)")


nondifferentiable(reject_complex, full_matrices_message)


@zero_in_zero_out("g")
def svd_grad(g, a, out, full_matrices=True, compute_uv=True, hermitian=False):
    """Gradient of ``np.linalg.svd(a, full_matrices, compute_uv, hermitian)`` (Townsend 2016,
    "Differentiating the singular value decomposition"). With ``a = U S V^T`` reduced,
    ``F_ij = 1 / (s_j^2 - s_i^2)``, ``J = F o (U^T gU)`` and ``K = F o (V^T gV)``::

        ga = U [diag(gs) + (J + J^T) S + S (K + K^T)] V^T
             + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T)

    The last two terms are for a tall matrix (U has fewer columns than rows) and a wide one.
    With ``compute_uv=False`` only ``gs`` is given, and U, V are computed here. With
    ``full_matrices=True`` a non-square matrix has extra columns of U (or rows of V^T) that
    are an arbitrary basis of a complement: their gradient must be zero. ``hermitian=True``
    reads the lower triangle as a symmetric matrix (through ``eigh``), which gets the
    gradient.

    A complex ``a = U S V^H`` takes the same formula in the inner-product form (``gU`` read as
    ``conj(gU)``, transposes as conjugate transposes, the result conjugated: the README's
    convention) plus ``U diag(i Im(diag(U^H conj(gU))) / s) V^H``, for the phase ``u_i`` and
    ``v_i`` share. Each pair ``(u_i, v_i)`` is defined up to a common phase: the loss must not
    depend on it."""
    m = np.shape(a)[-2]
    n = np.shape(a)[-1]
    k = min(m, n)
    if compute_uv:
        u = out[0]
        s = out[1]
        vt = out[2]
        g_u = g[0]
        g_s = g[1]
        g_vt = g[2]
        if full_matrices and m > n:
            if not is_zero(g_u):
                if np.any(g_u[..., :, k:] != 0):
                    raise NotImplementedError(full_matrices_message("columns of U"))
                g_u = g_u[..., :, :k]
            u = u[..., :, :k]
        if full_matrices and m < n:
            if not is_zero(g_vt):
                if np.any(g_vt[..., k:, :] != 0):
                    raise NotImplementedError(full_matrices_message("rows of V^T"))
                g_vt = g_vt[..., :k, :]
            vt = vt[..., :k, :]
    else:
        reduced = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
        u = reduced[0]
        s = reduced[1]
        vt = reduced[2]
        g_u = 0
        g_s = g
        g_vt = 0
    if is_zero(g_u) and is_zero(g_s) and is_zero(g_vt):
        return 0
    if not is_zero(g_u):
        g_u = conj_if_complex(g_u)
    if not is_zero(g_vt):
        g_vt = conj_if_complex(g_vt)
    core = 0
    if not is_zero(g_s):
        core = np.expand_dims(np.real(g_s), -2) * np.eye(k)
    if not (is_zero(g_u) and is_zero(g_vt)):
        f = inverse_gaps(s * s)
        if not is_zero(g_u):
            uh_gu = conj_transpose(u) @ g_u
            j = f * uh_gu
            core = core + (j + conj_transpose(j)) * np.expand_dims(s, -2)
            if np.iscomplexobj(uh_gu):
                core = core + 1j * np.imag(uh_gu) * np.eye(k) / np.expand_dims(s, -2)
        if not is_zero(g_vt):
            kk = f * (vt @ conj_transpose(g_vt))
            core = core + np.expand_dims(s, -1) * (kk + conj_transpose(kk))
    grad = u @ core @ vt
    if m > k and not is_zero(g_u):
        grad = grad + ((g_u - u @ (conj_transpose(u) @ g_u)) / np.expand_dims(s, -2)) @ vt
    if n > k and not is_zero(g_vt):
        grad = grad + u @ ((g_vt - (g_vt @ conj_transpose(vt)) @ vt) / np.expand_dims(s, -1))
    if hermitian:
        grad = triangle_grad(conj_if_complex(grad), "L")
    else:
        grad = conj_if_complex(grad)
    return astype_grad(grad, a)


@adjoint(np.linalg.svd)
def _(out, a, full_matrices=True, compute_uv=True, hermitian=False):
    """Real or complex ``a`` with distinct nonzero singular values; full_matrices of a
    non-square matrix only with no gradient on the extra columns of U (rows of V^T). Complex
    singular vectors: only losses that do not depend on the phase each pair ``(u_i, v_i)``
    shares have a derivative."""
    d[a] = svd_grad(d[out], a, out, full_matrices, compute_uv, hermitian)


def svd_tangent(t, a, out, full_matrices=True, compute_uv=True, hermitian=False):
    """Tangent of ``np.linalg.svd``. With ``a = U S V^T`` reduced, ``P = U^T t V`` and
    ``F_ij = 1 / (s_j^2 - s_i^2)``::

        ds = diag(P)
        dU = U (F o (P S + S P^T)) + (I - U U^T) t V S^-1
        dV = V (F o (S P + P^T S)) + (I - V V^T) t^T U S^-1

    ``full_matrices=True`` of a non-square matrix is refused: the extra columns of U (rows of
    V^T) are an arbitrary basis of a complement, with no tangent to give. A complex
    ``a = U S V^H`` takes the same formulas with conjugate transposes, ``ds = real(diag(P))``,
    and ``dU`` gains ``U diag(i Im(diag(P)) / s)``: the phase ``u_i`` and ``v_i`` share
    (``diag(V^H dV)`` is zero in this gauge)."""
    if hermitian:
        t = triangle_tangent(t, "L")
    m = np.shape(a)[-2]
    n = np.shape(a)[-1]
    k = min(m, n)
    if compute_uv:
        u = out[0]
        s = out[1]
        vt = out[2]
        if full_matrices and m != n:
            raise NotImplementedError(full_matrices_message(
                "columns of U" if m > n else "rows of V^T"))
    else:
        reduced = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
        u = reduced[0]
        s = reduced[1]
        vt = reduced[2]
    v = conj_transpose(vt)
    p = conj_transpose(u) @ t @ v
    ds = np.real(np.diagonal(p, 0, -2, -1))
    if not compute_uv:
        return as_dtype_of(ds, out)
    f = inverse_gaps(s * s)
    right = np.expand_dims(s, -2)  # X * right = X S
    left = np.expand_dims(s, -1)  # left * X = S X
    du = u @ (f * (p * right + left * conj_transpose(p)))
    if np.iscomplexobj(p):
        du = du + u * (1j * np.imag(np.diagonal(p, 0, -2, -1)) / s)[..., None, :]
    dv = v @ (f * (left * p + conj_transpose(p) * right))
    if m > k:
        du = du + (t @ v - u @ p) / right
    if n > k:
        dv = dv + (conj_transpose(t) @ u - v @ conj_transpose(p)) / right
    return TangentTuple((as_dtype_of(du, u), as_dtype_of(ds, s),
                         as_dtype_of(conj_transpose(dv), vt)))


@tangent(np.linalg.svd)
def _(out, a, full_matrices=True, compute_uv=True, hermitian=False):
    d[out] = svd_tangent(d[a], a, out, full_matrices, compute_uv, hermitian)


@zero_in_zero_out("g")
def eigh_grad(g, a, out, UPLO="L", vectors=True):
    """Gradient of ``np.linalg.eigh(a, UPLO)`` (``vectors``; else of ``eigvalsh``). With
    ``a = V diag(w) V^H`` and ``F_ij = 1 / (w_j - w_i)``, the Hermitian matrix gets
    ``conj(V) [diag(gw) + F o (V^T gV)] V^T`` (the README's convention: ``dL = Re(sum(g da))``);
    eigh reads it from ``a``'s ``UPLO`` triangle, which receives that gradient
    (``triangle_grad``). A complex ``V`` is defined up to the phase of each column: the loss
    must not depend on it (the imaginary part of ``diag(V^H conj(gV))``, which it would move,
    is taken as zero)."""
    if vectors:
        w = out[0]
        v = out[1]
        g_w = g[0]
        g_v = g[1]
    else:
        both = np.linalg.eigh(a, UPLO)
        w = both[0]
        v = both[1]
        g_w = g
        g_v = 0
    if is_zero(g_w) and is_zero(g_v):
        return 0
    core = 0
    if not is_zero(g_w):
        core = np.expand_dims(np.real(g_w), -2) * np.eye(np.shape(a)[-1])
    if not is_zero(g_v):
        core = core + inverse_gaps(w) * (swap_last_axes(v) @ g_v)
    return astype_grad(triangle_grad(conj_if_complex(v) @ core @ swap_last_axes(v), UPLO), a)


@adjoint(np.linalg.eigh)
def _(out, a, UPLO="L"):
    """Real symmetric or complex Hermitian ``a`` with distinct eigenvalues; the ``UPLO``
    triangle gets the gradient. Complex eigenvectors: only losses that do not depend on each
    column's phase have a derivative."""
    d[a] = eigh_grad(d[out], a, out, UPLO)


def eigh_tangent(t, a, out, UPLO="L", vectors=True):
    """Tangent of ``np.linalg.eigh(a, UPLO)`` (``vectors``; else of ``eigvalsh``). With
    ``a = V diag(w) V^H``, ``P = V^H th V`` for the Hermitian matrix's tangent ``th`` and
    ``F_ij = 1 / (w_j - w_i)``: ``dw = real(diag(P))``, ``dV = V (F o P)`` (in the gauge where
    ``diag(V^H dV)`` is zero)."""
    if vectors:
        w = out[0]
        v = out[1]
    else:
        both = np.linalg.eigh(a, UPLO)
        w = both[0]
        v = both[1]
    p = conj_transpose(v) @ triangle_tangent(t, UPLO) @ v
    dw = np.real(np.diagonal(p, 0, -2, -1))
    if not vectors:
        return as_dtype_of(dw, out)
    return TangentTuple((as_dtype_of(dw, w), as_dtype_of(v @ (inverse_gaps(w) * p), v)))


@tangent(np.linalg.eigh)
def _(out, a, UPLO="L"):
    d[out] = eigh_tangent(d[a], a, out, UPLO)


@adjoint(np.linalg.eigvalsh)
def _(out, a, UPLO="L"):
    d[a] = eigh_grad(d[out], a, out, UPLO, False)


@tangent(np.linalg.eigvalsh)
def _(out, a, UPLO="L"):
    d[out] = eigh_tangent(d[a], a, out, UPLO, False)


if hasattr(np.linalg, "svdvals"):  # NumPy >= 2.0

    @adjoint(np.linalg.svdvals)
    def _(out, x):
        d[x] = svd_grad(d[out], x, out, False, False)

    @tangent(np.linalg.svdvals)
    def _(out, x):
        d[out] = svd_tangent(d[x], x, out, False, False)


# ----- cholesky, qr --------------------------------------------------------------------------
# For real matrices (stacks too). cholesky: symmetric positive definite; the factorization reads
# one triangle of ``a`` as a symmetric matrix, and that triangle gets the gradient. qr: full rank
# (nonzero diagonal of R); mode "complete" of a tall matrix has extra columns of Q that are an
# arbitrary basis of a complement, with no derivative.


def lower_with_half_diagonal(x):
    """``Phi(x)``: the lower triangle of ``x``, its diagonal halved."""
    return np.tril(x) - 0.5 * x * np.eye(np.shape(x)[-1])


@zero_in_zero_out("g")
def cholesky_grad(g, a, factor, upper=False):
    """Gradient of ``np.linalg.cholesky(a, upper=upper)`` (Murray 2016, "Differentiation of the
    Cholesky decomposition"). With ``a = L L^T``, the symmetric matrix gets ``L^-T Phi(L^T gL)
    L^-1`` (``Phi``: the lower triangle, its diagonal halved), which the triangle the
    factorization read receives (``triangle_grad``; ``upper`` reads and returns ``U = L^T``).
    Assumes a real, symmetric positive definite matrix."""
    reject_complex(a, "np.linalg.cholesky")
    lower = factor
    g_lower = g
    if upper:
        lower = swap_last_axes(factor)
        g_lower = swap_last_axes(g)
    inverse = np.linalg.inv(lower)
    core = lower_with_half_diagonal(swap_last_axes(lower) @ g_lower)
    return astype_grad(triangle_grad(swap_last_axes(inverse) @ core @ inverse,
                                     "U" if upper else "L"), a)


@adjoint(np.linalg.cholesky)
def _(out, a, *, upper=False):
    """Real symmetric positive definite ``a``; the triangle read (lower, or upper with
    ``upper``) gets the gradient."""
    d[a] = cholesky_grad(d[out], a, out, upper)


def cholesky_tangent(t, a, factor, upper=False):
    """Tangent of ``np.linalg.cholesky``: ``dL = L Phi(L^-1 dS L^-T)`` for the tangent ``dS`` of
    the symmetric matrix read from ``a``'s triangle (transposed for ``upper``)."""
    reject_complex(a, "np.linalg.cholesky")
    lower = swap_last_axes(factor) if upper else factor
    inverse = np.linalg.inv(lower)
    sym = triangle_tangent(t, "U" if upper else "L")
    change = lower @ lower_with_half_diagonal(inverse @ sym @ swap_last_axes(inverse))
    return as_dtype_of(swap_last_axes(change) if upper else change, factor)


@tangent(np.linalg.cholesky)
def _(out, a, *, upper=False):
    d[out] = cholesky_tangent(d[a], a, out, upper)


def qr_message():
    """Why the extra columns of Q of mode "complete" have no derivative."""
    return ('np.linalg.qr(mode="complete") of a tall matrix: its extra columns of Q are an '
            'arbitrary basis of a complement, not determined by the matrix, and have no '
            'derivative; use mode="reduced" (or give them no gradient)')


def qr_mode_check(mode):
    """Refuse the modes without a derivative here."""
    if mode not in ("reduced", "complete", "r"):
        raise NotImplementedError(f'np.linalg.qr(mode="{mode}") has no derivative rule; the '
                                  'modes "reduced", "complete" and "r" have one')


nondifferentiable(qr_message, qr_mode_check)


def copy_lower_to_upper(m):
    """``m``'s lower triangle mirrored onto its upper one."""
    return np.tril(m) + swap_last_axes(np.tril(m, -1))


def qr_square_grad(q, r, g_q, g_r):
    """Gradient of ``(Q, R) = qr(a)`` for a matrix with at least as many rows as columns (Liao et
    al. 2019, "Differentiable programming tensor networks"): with ``M = R gR^T - gQ^T Q``,
    ``ga = (gQ + Q copyltu(M)) R^-T``."""
    m_core = 0
    if not is_zero(g_r):
        m_core = r @ swap_last_axes(g_r)
    if not is_zero(g_q):
        m_core = m_core - swap_last_axes(g_q) @ q
    b = q @ copy_lower_to_upper(m_core)
    if not is_zero(g_q):
        b = b + g_q
    return swap_last_axes(np.linalg.solve(r, swap_last_axes(b)))


@zero_in_zero_out("g")
def qr_grad(g, a, out, mode="reduced"):
    """Gradient of ``np.linalg.qr(a, mode)`` for a real matrix of full rank. A wide matrix
    ``[X, Y]`` (fewer rows than columns) is ``Q [R1, R2]`` with ``X = Q R1`` square: ``Y``
    gets ``Q gR2`` and ``X`` the square gradient with ``gQ + Y gR2^T``."""
    reject_complex(a, "np.linalg.qr")
    qr_mode_check(mode)
    rows = np.shape(a)[-2]
    cols = np.shape(a)[-1]
    k = min(rows, cols)
    if mode == "r":
        both = np.linalg.qr(a)
        q = both[0]
        r = both[1]
        g_q = 0
        g_r = g
    else:
        q = out[0]
        r = out[1]
        g_q = g[0]
        g_r = g[1]
    if mode == "complete" and rows > cols:
        if not is_zero(g_q):
            if np.any(g_q[..., :, k:] != 0):
                raise NotImplementedError(qr_message())
            g_q = g_q[..., :, :k]
        q = q[..., :, :k]
        r = r[..., :k, :]
        if not is_zero(g_r):
            g_r = g_r[..., :k, :]
    if is_zero(g_q) and is_zero(g_r):
        return 0
    if rows >= cols:
        return astype_grad(qr_square_grad(q, r, g_q, g_r), a)
    y = a[..., :, k:]
    g_r1 = 0
    g_y = np.zeros(np.shape(y), np.result_type(a, 1.0))
    if not is_zero(g_r):
        g_r1 = g_r[..., :, :k]
        g_q = g_q + y @ swap_last_axes(g_r[..., :, k:])
        g_y = q @ g_r[..., :, k:]
    g_x = qr_square_grad(q, r[..., :, :k], g_q, g_r1)
    return astype_grad(np.concatenate([g_x, g_y], axis=-1), a)


@adjoint(np.linalg.qr)
def _(out, a, mode="reduced"):
    """Real ``a`` of full rank; modes "reduced", "r", and "complete" (of a tall matrix only
    with no gradient on Q's extra columns)."""
    d[a] = qr_grad(d[out], a, out, mode)


def qr_square_tangent(t, q, r):
    """Tangent of ``qr`` of a matrix with at least as many rows as columns: with ``C = Q^T t
    R^-1`` and ``W = tril(C, -1) - tril(C, -1)^T`` (``Q^T dQ``), ``dR = (C - W) R`` and
    ``dQ = t R^-1 - Q (C - W)``."""
    t_r_inverse = swap_last_axes(np.linalg.solve(swap_last_axes(r), swap_last_axes(t)))
    c = swap_last_axes(q) @ t_r_inverse
    w = np.tril(c, -1) - swap_last_axes(np.tril(c, -1))
    return t_r_inverse - q @ (c - w), (c - w) @ r


def qr_tangent(t, a, out, mode="reduced"):
    """Tangent of ``np.linalg.qr(a, mode)`` for a real matrix of full rank; a wide one's
    ``R2 = Q^T Y`` moves with ``Q`` and ``Y``."""
    reject_complex(a, "np.linalg.qr")
    qr_mode_check(mode)
    rows = np.shape(a)[-2]
    cols = np.shape(a)[-1]
    if mode == "complete" and rows > cols:
        raise NotImplementedError(qr_message())
    if mode == "r":
        both = np.linalg.qr(a)
        q = both[0]
        r = both[1]
    else:
        q = out[0]
        r = out[1]
    if rows >= cols:
        dq, dr = qr_square_tangent(t, q, r)
    else:
        dq, dr1 = qr_square_tangent(t[..., :, :rows], q, r[..., :, :rows])
        dr2 = swap_last_axes(dq) @ a[..., :, rows:] + swap_last_axes(q) @ t[..., :, rows:]
        dr = np.concatenate([dr1, dr2], axis=-1)
    if mode == "r":
        return as_dtype_of(dr, out)
    return TangentTuple((as_dtype_of(dq, q), as_dtype_of(dr, r)))


@tangent(np.linalg.qr)
def _(out, a, mode="reduced"):
    d[out] = qr_tangent(d[a], a, out, mode)


# ----- eig, eigvals: general square matrices -----------------------------------------------
# With distinct eigenvalues. ``a V = V diag(w)``; NumPy (LAPACK's geev) scales each eigenvector
# to norm 1 with its largest entry real: the derivatives below keep both, so they are those of
# the very vectors NumPy returns.


def matched_eigenvectors(a, w):
    """The eigenvectors of ``a`` for the eigenvalues ``w`` (in ``w``'s order)."""
    both = np.linalg.eig(a)
    order = np.argmin(np.abs(np.expand_dims(w, -1) - np.expand_dims(both[0], -2)), axis=-1)
    return np.take_along_axis(both[1], np.expand_dims(order, -2), axis=-1)


def largest_entries(v):
    """The row of each column's entry of largest magnitude, as a ``(..., 1, n)`` index."""
    return np.expand_dims(np.argmax(np.abs(v), axis=-2), -2)


nondifferentiable(matched_eigenvectors, largest_entries)


def eig_grad(g, a, out, vectors=True):
    """Gradient of ``np.linalg.eig(a)`` (``vectors``; else of ``eigvals``), the transpose of
    ``eig_tangent``: the eigenvectors' cotangent ``gV`` first takes back the fixing of each
    vector's phase (its largest entry real) and of its norm, then with ``P = V^-1 da V``,
    ``dw = diag(P)`` and ``dV = V (F o P)``: ``ga = V^-T (diag(gw) + F o (V^T gV)) V^T``. A real
    ``a`` takes the real part."""
    if vectors:
        w = out[0]
        v = out[1]
        g_w = g[0]
        g_v = g[1]
    else:
        w = out
        v = matched_eigenvectors(a, w)
        g_w = g
        g_v = 0
    if is_zero(g_w) and is_zero(g_v):
        return 0
    n = np.shape(a)[-1]
    core = 0
    if not is_zero(g_w):
        core = np.expand_dims(g_w, -2) * np.eye(n)
    if not is_zero(g_v):
        rows = largest_entries(v)
        pivot = np.take_along_axis(v, rows, axis=-2)
        turn = np.imag(np.sum(g_v * v, axis=-2, keepdims=True)) / np.real(pivot)
        g_v = g_v - 1j * turn * (np.arange(n)[:, None] == rows)
        g_v = g_v - np.conj(v) * np.real(np.sum(g_v * v, axis=-2, keepdims=True))
        core = core + inverse_gaps(w) * (swap_last_axes(v) @ g_v)
    grad = np.linalg.solve(swap_last_axes(v), core @ swap_last_axes(v))
    return astype_grad(grad, a)


def eig_tangent(t, a, out, vectors=True):
    """Tangent of ``np.linalg.eig(a)`` (``vectors``; else of ``eigvals``): with
    ``P = V^-1 t V`` and ``F_ij = 1 / (w_j - w_i)``, ``dw = diag(P)`` and ``dV = V (F o P)``,
    less ``V Re(diag(V^H dV))`` (the norm stays 1) and ``i V Im(dV_jk / V_jk)`` for each
    column's largest entry ``j`` (it stays real)."""
    if vectors:
        w = out[0]
        v = out[1]
    else:
        w = out
        v = matched_eigenvectors(a, w)
    p = np.linalg.solve(v, t @ v)
    dw = np.diagonal(p, 0, -2, -1)
    if not vectors:
        return as_dtype_of(dw if np.iscomplexobj(w) else np.real(dw), w)
    dv = v @ (inverse_gaps(w) * p)
    dv = dv - v * np.real(np.sum(np.conj(v) * dv, axis=-2, keepdims=True))
    rows = largest_entries(v)
    pivot = np.take_along_axis(v, rows, axis=-2)
    dv = dv - 1j * v * np.imag(np.take_along_axis(dv, rows, axis=-2)) / np.real(pivot)
    return TangentTuple((as_dtype_of(dw if np.iscomplexobj(w) else np.real(dw), w),
                         as_dtype_of(dv if np.iscomplexobj(v) else np.real(dv), v)))


@adjoint(np.linalg.eig)
def _(out, a):
    """Distinct eigenvalues; the eigenvectors as NumPy returns them (norm 1, largest entry
    real)."""
    d[a] = eig_grad(d[out], a, out)


@tangent(np.linalg.eig)
def _(out, a):
    d[out] = eig_tangent(d[a], a, out)


@adjoint(np.linalg.eigvals)
def _(out, a):
    """Distinct eigenvalues."""
    d[a] = eig_grad(d[out], a, out, False)


@tangent(np.linalg.eigvals)
def _(out, a):
    d[out] = eig_tangent(d[a], a, out, False)


# ----- pinv, lstsq ---------------------------------------------------------------------------
# Of full rank (no singular value cut by rcond/rtol); pinv's rules, which also take matrices
# whose singular values it drops, are in numpy_pinv.py.


def full_rank_check(a, kept, name):
    """Refuse a rank-deficient matrix: ``kept`` of its ``min(m, n)`` singular values count."""
    if kept < min(np.shape(a)[-2:]):
        raise NotImplementedError(
            f"{name} of a rank-deficient matrix (rank {kept} of {min(np.shape(a)[-2:])}) has "
            "no derivative rule: the pseudo-inverse jumps where singular values are cut off")


def pinv_rank(p):
    """How many singular values ``pinv`` kept: the rank of the pseudo-inverse ``p`` (its
    singular values are the inverses of those kept)."""
    return int(np.min(np.linalg.matrix_rank(p)))


nondifferentiable(full_rank_check, pinv_rank)


def pinv_grad(g, a, p, hermitian=False):
    """Gradient of ``p = np.linalg.pinv(a)`` of full rank (Golub and Pereyra 1973): the
    transpose of ``dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P`` in the
    README's convention. With ``hermitian``, the lower triangle read as a Hermitian matrix
    gets it. The derivative of a rank-deficient matrix's: numpy_pinv.py."""
    full_rank_check(a, pinv_rank(p), "np.linalg.pinv")
    read = triangle_tangent(a, "L") if hermitian else a  # the matrix pinv inverted
    pt = swap_last_axes(p)
    ph = conj_transpose(p)
    gt = swap_last_axes(g)
    left = np.eye(np.shape(a)[-2]) - read @ p
    right = np.eye(np.shape(a)[-1]) - p @ read
    grad = -pt @ g @ pt + conj_if_complex(left @ gt @ p @ ph + ph @ p @ gt @ right)
    if hermitian:
        grad = triangle_grad(grad, "L")
    return astype_grad(grad, a)


def pinv_tangent(t, a, p, hermitian=False):
    """Tangent of ``p = np.linalg.pinv(a)`` of full rank (``pinv_grad``)."""
    full_rank_check(a, pinv_rank(p), "np.linalg.pinv")
    read = a
    if hermitian:
        t = triangle_tangent(t, "L")
        read = triangle_tangent(a, "L")
    ph = conj_transpose(p)
    th = conj_transpose(t)
    left = np.eye(np.shape(a)[-2]) - read @ p
    right = np.eye(np.shape(a)[-1]) - p @ read
    return as_dtype_of(-p @ t @ p + p @ ph @ th @ left + right @ th @ ph @ p, p)


def as_matrix(b):
    """``b`` as a matrix: a vector becomes one column."""
    return np.expand_dims(b, -1) if np.ndim(b) == 1 else b


def from_matrix(m, b):
    """``m`` back in ``b``'s shape: one column becomes a vector again."""
    return m[..., 0] if np.ndim(b) == 1 else m


@zero_in_zero_out("g")
def lstsq_grads(g, a, b, out):
    """Gradients of ``(x, residuals, rank, s) = np.linalg.lstsq(a, b)`` for ``a`` and ``b``, of
    full rank: ``x = pinv(a) b`` (``pinv_grad``); a residual ``|b - a x|^2`` (given for more rows
    than columns) is at its minimum in ``x``, so it moves with ``a`` and ``b`` alone:
    ``2 r`` for ``b``, ``-2 r x^T`` for ``a``; ``s`` are ``a``'s singular values
    (``svd_grad``)."""
    reject_complex(a, "np.linalg.lstsq")
    full_rank_check(a, out[2], "np.linalg.lstsq")
    x = as_matrix(out[0])
    bm = as_matrix(b)
    g_a = 0
    g_b = 0
    if not is_zero(g[0]):
        p = np.linalg.pinv(a)
        g_x = as_matrix(g[0])
        g_a = pinv_grad(g_x @ swap_last_axes(bm), a, p)
        g_b = swap_last_axes(p) @ g_x
    if not is_zero(g[1]) and np.size(out[1]) > 0:
        scaled_residual = 2.0 * (bm - a @ x) * g[1]
        g_a = g_a - scaled_residual @ swap_last_axes(x)
        g_b = g_b + scaled_residual
    if not is_zero(g[3]):
        g_a = g_a + svd_grad(g[3], a, out[3], False, False)
    grad_a = 0 if is_zero(g_a) else astype_grad(g_a, a)
    grad_b = 0 if is_zero(g_b) else astype_grad(from_matrix(g_b, b), b)
    return grad_a, grad_b


@adjoint(np.linalg.lstsq)
def _(out, a, b, rcond=None):
    """Real ``a`` of full rank (else an error); the residuals at their minimum."""
    grads = lstsq_grads(d[out], a, b, out)
    d[a] = grads[0]
    d[b] = grads[1]


@zero_in_zero_out("t")
def lstsq_tangent(t, a, b, out, wrt):
    """Tangent of ``np.linalg.lstsq(a, b)`` from ``a`` (``wrt`` 0) or ``b`` (1), of full rank:
    ``dx = dP b + P db``; a residual moves by ``2 r . (db - da x)``; ``s`` by ``svd_tangent``;
    the rank not at all."""
    reject_complex(a, "np.linalg.lstsq")
    full_rank_check(a, out[2], "np.linalg.lstsq")
    x = as_matrix(out[0])
    bm = as_matrix(b)
    p = np.linalg.pinv(a)
    if wrt == 0:
        dx = pinv_tangent(t, a, p) @ bm
        moved = -(t @ x)
        ds = svd_tangent(t, a, out[3], False, False)
    else:
        dx = p @ as_matrix(t)
        moved = as_matrix(t)
        ds = np.zeros(np.shape(out[3]))
    residuals = np.zeros(np.shape(out[1]))
    if np.size(out[1]) > 0:
        residuals = 2.0 * np.sum((bm - a @ x) * moved, axis=-2)
    return TangentTuple((as_dtype_of(from_matrix(dx, b), out[0]), as_dtype_of(residuals, out[1]),
                         zero_tangent_of(out[2]), as_dtype_of(ds, out[3])))


@tangent(np.linalg.lstsq)
def _(out, a, b, rcond=None):
    d[out] = lstsq_tangent(d[a], a, b, out, 0)
    d[out] = lstsq_tangent(d[b], a, b, out, 1)


nondifferentiable(np.linalg.matrix_rank)


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
    base = a if n >= 0 else np.linalg.inv(a)
    powers = matrix_powers(base, abs(n))
    grad = np.zeros(np.shape(a), np.result_type(a, g, 1.0))
    for k in range(abs(n)):
        grad = grad + swap_last_axes(powers[k]) @ g @ swap_last_axes(powers[abs(n) - 1 - k])
    if n < 0:
        grad = -swap_last_axes(base) @ grad @ swap_last_axes(base)
    return astype_grad(grad, a)


@adjoint(np.linalg.matrix_power)
def _(out, a, n):
    d[a] = matrix_power_grad(d[out], a, n)


def matrix_power_tangent(t, a, n, out):
    """Tangent of ``np.linalg.matrix_power(a, n)``: ``sum_k a^k t a^(n-1-k)``, of ``inv(a)``'s
    tangent ``-inv(a) t inv(a)`` for a negative ``n``."""
    base = a if n >= 0 else np.linalg.inv(a)
    if n < 0:
        t = -base @ t @ base
    powers = matrix_powers(base, abs(n))
    total = np.zeros(np.shape(a), np.result_type(a, t, 1.0))
    for k in range(abs(n)):
        total = total + powers[k] @ t @ powers[abs(n) - 1 - k]
    return as_dtype_of(total, out)


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


def multi_dot_grads(g, arrays):
    """Gradients of ``np.linalg.multi_dot(arrays)``, one per factor: ``L^T g R^T`` for the
    products ``L`` and ``R`` of the factors before and after it."""
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


@adjoint(np.linalg.multi_dot)
def _(ans, arrays, *, out=None):
    d[arrays] = multi_dot_grads(d[ans], arrays)


def multi_dot_tangent(ts, arrays, ans):
    """Tangent of ``np.linalg.multi_dot(arrays)``: one product per factor with a tangent, that
    factor replaced by its tangent (product rule), added up."""
    total = np.zeros(np.shape(ans), float_dtype(ans))
    for k in range(len(arrays)):
        if is_zero(ts[k]):
            continue
        replaced = list(arrays)
        replaced[k] = np.broadcast_to(ts[k], np.shape(arrays[k]))
        total = total + np.linalg.multi_dot(replaced)
    return as_dtype_of(total, ans)


@tangent(np.linalg.multi_dot)
def _(ans, arrays, *, out=None):
    d[ans] = multi_dot_tangent(d[arrays], arrays, ans)


# ----- cond ------------------------------------------------------------------------------------


def cond_by_singular_values(p):
    """Whether ``np.linalg.cond(x, p)`` is a ratio of singular values (p None, 2, -2)."""
    return p is None or p in (2, -2)


nondifferentiable(cond_by_singular_values)


@zero_in_zero_out("g")
def cond_grad(g, x, p=None):
    """Gradient of ``np.linalg.cond(x, p)`` (stacks too), of an invertible real matrix with
    distinct largest and smallest singular values where ``p`` is None, 2 or -2: those make it
    ``s_max / s_min`` (``s_min / s_max``), whose gradient goes through ``svd_grad``; the other
    ``p`` make it ``norm(x, p) norm(inv(x), p)`` (``norm_grad``, and the inverse's gradient)."""
    reject_complex(x, "np.linalg.cond")
    if cond_by_singular_values(p):
        s = np.linalg.svd(x, compute_uv=False)
        first = s[..., :1]
        last = s[..., -1:]
        if p == -2:
            first, last = last, first
        ge = np.expand_dims(g, -1)
        picked = np.arange(np.shape(s)[-1]) == (0 if p != -2 else np.shape(s)[-1] - 1)
        other = np.arange(np.shape(s)[-1]) == (np.shape(s)[-1] - 1 if p != -2 else 0)
        g_s = ge / last * picked - ge * first / (last * last) * other
        return svd_grad(g_s, x, s, False, False)
    axes = (-2, -1)
    inverse = np.linalg.inv(x)
    norm_x = np.linalg.norm(x, p, axes)
    norm_inverse = np.linalg.norm(inverse, p, axes)
    g_inverse = norm_grad(g * norm_x, inverse, norm_inverse, p, axes)
    grad = norm_grad(g * norm_inverse, x, norm_x, p, axes) - \
        swap_last_axes(inverse) @ g_inverse @ swap_last_axes(inverse)
    return astype_grad(grad, x)


@adjoint(np.linalg.cond)
def _(out, x, p=None):
    """Invertible real ``x``; for p None, 2, -2 its largest and smallest singular values
    distinct."""
    d[x] = cond_grad(d[out], x, p)


def cond_tangent(t, x, out, p=None):
    """Tangent of ``np.linalg.cond(x, p)`` (``cond_grad``)."""
    reject_complex(x, "np.linalg.cond")
    if cond_by_singular_values(p):
        s = np.linalg.svd(x, compute_uv=False)
        ds = svd_tangent(t, x, s, False, False)
        first, last, d_first, d_last = s[..., 0], s[..., -1], ds[..., 0], ds[..., -1]
        if p == -2:
            first, last, d_first, d_last = last, first, d_last, d_first
        return as_dtype_of(d_first / last - first * d_last / (last * last), out)
    axes = (-2, -1)
    inverse = np.linalg.inv(x)
    norm_x = np.linalg.norm(x, p, axes)
    norm_inverse = np.linalg.norm(inverse, p, axes)
    d_norm_x = norm_tangent(t, x, norm_x, p, axes)
    d_norm_inverse = norm_tangent(-inverse @ t @ inverse, inverse, norm_inverse, p, axes)
    return as_dtype_of(d_norm_x * norm_inverse + norm_x * d_norm_inverse, out)


@tangent(np.linalg.cond)
def _(out, x, p=None):
    d[out] = cond_tangent(d[x], x, out, p)


# ----- the np.linalg names of the array API (NumPy >= 2.0) ------------------------------------


def vector_norm_axes(x, axis=None):
    """The axes ``np.linalg.vector_norm`` reduces, as a tuple of non-negative ints."""
    ndim = np.ndim(x)
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(int(a) % max(ndim, 1) for a in axes)


def vector_norm_layout(x, axis=None):
    """How ``np.linalg.vector_norm`` of ``x`` over ``axis`` is a norm along one last axis: the
    order to transpose ``x`` to (the kept axes, then the reduced ones), the kept lengths and
    the reduced lengths."""
    shape = np.shape(x)
    axes = vector_norm_axes(x, axis)
    kept = [i for i in range(len(shape)) if i not in axes]
    return kept + list(axes), [shape[i] for i in kept], [shape[i] for i in axes]


nondifferentiable(vector_norm_axes, vector_norm_layout)


@zero_in_zero_out("g", keeps_values=True)
def vector_norm_grad(g, x, ans, axis=None, keepdims=False, ord=2):
    """Gradient of ``np.linalg.vector_norm(x, axis, keepdims, ord)``, a vector norm over any
    number of axes at once: ``norm_grad`` along one axis holding their elements."""
    layout = vector_norm_layout(x, axis)
    order = layout[0]
    kept = layout[1]
    flat = np.reshape(np.transpose(x, order), kept + [-1])
    grad = norm_grad(np.reshape(g, kept + [1]), flat, np.reshape(ans, kept + [1]), ord, -1, True)
    return np.transpose(np.reshape(grad, kept + layout[2]), np.argsort(order))


def vector_norm_tangent(t, x, ans, axis=None, keepdims=False, ord=2):
    """Tangent of ``np.linalg.vector_norm``: ``t`` weighted by the gradient's slope, summed."""
    slope = vector_norm_grad(np.ones(np.shape(ans)), x, ans, axis, keepdims, ord)
    return as_dtype_of(np.sum(np.real(slope * t), axis=vector_norm_axes(x, axis),
                              keepdims=keepdims), ans)


if hasattr(np.linalg, "vector_norm"):  # NumPy >= 2.0

    @adjoint(np.linalg.vector_norm)
    def _(out, x, *, axis=None, keepdims=False, ord=2):
        d[x] = vector_norm_grad(d[out], x, out, axis, keepdims, ord)

    @tangent(np.linalg.vector_norm)
    def _(out, x, *, axis=None, keepdims=False, ord=2):
        d[out] = vector_norm_tangent(d[x], x, out, axis, keepdims, ord)

    @adjoint(np.linalg.matrix_norm)
    def _(out, x, *, keepdims=False, ord="fro"):
        d[x] = norm_grad(d[out], x, out, ord, (-2, -1), keepdims)

    @tangent(np.linalg.matrix_norm)
    def _(out, x, *, keepdims=False, ord="fro"):
        d[out] = norm_tangent(d[x], x, out, ord, (-2, -1), keepdims)

    @linear(np.linalg.outer, wrt=("x1", "x2"))
    @adjoint(np.linalg.outer)
    def _(out, x1, x2):
        d[x1] = outer_grad_a(d[out], x1, x2)
        d[x2] = outer_grad_a(np.transpose(d[out]), x2, x1)

    @linear(np.linalg.tensordot, wrt=("x1", "x2"))
    @adjoint(np.linalg.tensordot)
    def _(out, x1, x2, *, axes=2):
        d[x1] = tensordot_grad_a(d[out], x1, x2, axes)
        d[x2] = tensordot_grad_b(d[out], x1, x2, axes)

    @linear(np.linalg.matmul, wrt=("x1", "x2"))
    @adjoint(np.linalg.matmul)
    def _(out, x1, x2):
        d[x1] = matmul_grad_x(d[out], x1, x2)
        d[x2] = matmul_grad_y(d[out], x1, x2)

    @linear(np.linalg.matrix_transpose)
    @adjoint(np.linalg.matrix_transpose)
    def _(out, x):
        d[x] = swap_last_axes(d[out])

    @linear(np.linalg.diagonal)
    @adjoint(np.linalg.diagonal)
    def _(out, x, *, offset=0):
        d[x] = diagonal_grad(d[out], x, offset, -2, -1)

    @adjoint(np.linalg.trace)
    def _(out, x, *, offset=0, dtype=None):
        d[x] = trace_grad(d[out], x, offset, -2, -1)

    @tangent(np.linalg.trace)
    def _(out, x, *, offset=0, dtype=None):
        d[out] = np.linalg.trace(d[x], offset=offset, dtype=dtype)


# ----- cross, kron ---------------------------------------------------------------------------


def as_3_vectors(x, axis):
    """``x``'s vectors along ``axis`` moved last, 2-vectors given a third entry 0."""
    moved = np.moveaxis(np.asarray(x), axis, -1)
    if np.shape(moved)[-1] == 2:
        moved = np.concatenate([moved, np.zeros(np.shape(moved)[:-1] + (1,))], axis=-1)
    return moved


@zero_in_zero_out("g")
def cross_grads(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Gradients of ``np.cross(a, b, axisa, axisb, axisc, axis)``: with the vectors moved last
    and 2-vectors read as 3-vectors in the plane, ``g . (da x b) = da . (b x g)`` and
    ``g . (a x db) = db . (g x a)``; 2-vectors keep their two entries, and each gradient is
    summed back to its argument's shape. Two 2-vectors give ``g`` as the third entry."""
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
    g_a = unbroadcast(np.cross(b3, g3)[..., :na], np.moveaxis(np.asarray(a), axisa, -1))
    g_b = unbroadcast(np.cross(g3, a3)[..., :nb], np.moveaxis(np.asarray(b), axisb, -1))
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


# ----- convolve, correlate, polyval, vander ---------------------------------------------------


def convolution_window(n, m, mode, correlation=False):
    """Where ``mode``'s result lies in the full convolution of lengths ``n`` and ``m``: its
    start and length (``np.correlate`` centres "same" half a step later when ``n < m``)."""
    k = min(n, m)
    if mode == "full":
        return 0, n + m - 1
    if mode == "valid":
        return k - 1, max(n, m) - k + 1
    if mode == "same":
        return (k // 2 if correlation and n < m else (k - 1) // 2), max(n, m)
    raise NotImplementedError(f"np.convolve/np.correlate(mode={mode!r}) has no gradient rule; "
                              "the modes 'full', 'same' and 'valid' have one")


nondifferentiable(convolution_window)


@zero_in_zero_out("g")
def convolve_grads(g, a, v, mode="full", correlation=False):
    """Gradients of ``np.convolve(a, v, mode)`` (``correlation``: of ``np.correlate(a, v,
    mode)``, the convolution with ``w = conj(v[::-1])``): ``g`` put back in place in the full
    convolution, correlated with the other factor (the transpose of a convolution)."""
    n = np.size(a)
    m = np.size(v)
    w = np.conj(np.asarray(v)[::-1]) if correlation else np.asarray(v)
    window = convolution_window(n, m, mode, correlation)
    g_full = np.pad(g, (window[0], n + m - 1 - window[0] - window[1]))
    g_a = np.correlate(g_full, np.conj(w), "valid")
    g_w = np.correlate(g_full, np.conj(np.asarray(a)), "valid")
    g_v = np.conj(g_w[::-1]) if correlation else g_w
    return (astype_grad(np.reshape(g_a, np.shape(a)), a),
            astype_grad(np.reshape(g_v, np.shape(v)), v))


@linear(np.convolve, wrt=("a", "v"))
@adjoint(np.convolve)
def _(out, a, v, mode="full"):
    grads = convolve_grads(d[out], a, v, mode)
    d[a] = grads[0]
    d[v] = grads[1]


@linear(np.correlate, wrt=("a", "v"))  # linear in a, conjugate-linear in v
@adjoint(np.correlate)
def _(out, a, v, mode="valid"):
    grads = convolve_grads(d[out], a, v, mode, True)
    d[a] = grads[0]
    d[v] = grads[1]


def polynomial_derivative(p):
    """The coefficients of ``p``'s derivative (highest power first), written with operations
    that have gradients (``np.polyder`` has none)."""
    p = np.asarray(p)
    if np.size(p) < 2:
        return np.zeros(1, np.result_type(p, 1.0))
    return p[:-1] * np.arange(np.size(p) - 1, 0, -1).astype(np.result_type(p, 1.0))


@zero_in_zero_out("g")
def polyval_grad_p(g, p, x):
    """Gradient of ``np.polyval(p, x)`` for the coefficients: ``sum g x^(n-1-i)`` for each
    ``p_i`` (a list of coefficients gets a list)."""
    g_full = np.broadcast_to(g, np.shape(np.polyval(np.ones(np.size(p)), x)))
    powers = np.vander(np.ravel(np.broadcast_to(x, np.shape(g_full))), np.size(p))
    return array_grad(np.ravel(g_full) @ powers, p)


@adjoint(np.polyval)
def _(out, p, x):
    d[p] = polyval_grad_p(d[out], p, x)
    d[x] = astype_grad(unbroadcast(d[out] * np.polyval(polynomial_derivative(p), x), x), x)


@tangent(np.polyval)
def _(out, p, x):
    d[out] = np.polyval(d[p], x)
    d[out] = d[x] * np.polyval(polynomial_derivative(p), x)


def vander_exponents(x, N=None, increasing=False):
    """The power of ``x`` in each column of ``np.vander(x, N, increasing)``."""
    count = np.size(x) if N is None else N
    return np.arange(count) if increasing else np.arange(count)[::-1]


nondifferentiable(vander_exponents)


def vander_slopes(x, N=None, increasing=False):
    """``d out_ij / d x_i = e_j x_i^(e_j - 1)`` for the exponents ``e`` (0 for ``e = 0``)."""
    e = vander_exponents(x, N, increasing)
    return e * np.power(np.expand_dims(x, -1), np.maximum(e - 1, 0))


@adjoint(np.vander)
def _(out, x, N=None, increasing=False):
    d[x] = astype_grad(np.sum(d[out] * vander_slopes(x, N, increasing), axis=-1), x)


@tangent(np.vander)
def _(out, x, N=None, increasing=False):
    d[out] = np.expand_dims(d[x], -1) * vander_slopes(x, N, increasing)


# ----- polynomial arithmetic ----------------------------------------------------------------------


def polyadd_grads(g, a1, a2, sign=1.0):
    """Gradients of ``np.polyadd(a1, a2)`` (``np.polysub`` with ``sign`` -1): the shorter is
    padded at the front, so each gets the last entries of ``g``; a result that lost leading zeros
    is padded back."""
    longest = max(np.size(a1), np.size(a2))
    g = np.pad(np.ravel(g), (longest - np.size(g), 0))
    g1 = g[longest - np.size(a1):]
    g2 = g[longest - np.size(a2):] * sign
    return (astype_grad(np.reshape(g1, np.shape(a1)), a1),
            astype_grad(np.reshape(g2, np.shape(a2)), a2))


@adjoint(np.polyadd)
def _(out, a1, a2):
    grads = polyadd_grads(d[out], a1, a2)
    d[a1] = grads[0]
    d[a2] = grads[1]


@tangent(np.polyadd)  # linear in both together: each tangent added to zeros for the other
def _(out, a1, a2):
    d[out] = np.polyadd(d[a1], np.zeros(np.shape(a2), float_dtype(out)))
    d[out] = np.polyadd(np.zeros(np.shape(a1), float_dtype(out)), d[a2])


@adjoint(np.polysub)
def _(out, a1, a2):
    grads = polyadd_grads(d[out], a1, a2, -1.0)
    d[a1] = grads[0]
    d[a2] = grads[1]


@tangent(np.polysub)
def _(out, a1, a2):
    d[out] = np.polysub(d[a1], np.zeros(np.shape(a2), float_dtype(out)))
    d[out] = np.polysub(np.zeros(np.shape(a1), float_dtype(out)), d[a2])


@linear(np.polymul, wrt=("a1", "a2"))
@adjoint(np.polymul)
def _(out, a1, a2):
    grads = convolve_grads(d[out], a1, a2)
    d[a1] = grads[0]
    d[a2] = grads[1]


def polyder_grad(g, p, m=1):
    """Gradient of ``np.polyder(p, m)``: ``m`` times, each coefficient's gradient times the
    power it drops from (``polynomial_derivative``'s transpose), zero for the last ``m``."""
    grad = np.ravel(g)
    for _ in range(m):
        grad = np.pad(grad * np.arange(np.size(grad), 0, -1), (0, 1))
    return astype_grad(np.reshape(grad[:np.size(p)], np.shape(p)), p)


@linear(np.polyder)
@adjoint(np.polyder)
def _(out, p, m=1):
    d[p] = polyder_grad(d[out], p, m)


def polyfit_system(x, y, deg, w=None):
    """The least-squares problem ``np.polyfit(x, y, deg, w=w)`` solves: the Vandermonde matrix
    and the values, each row weighted by ``w``."""
    lhs = np.vander(x, deg + 1)
    rhs = y
    if w is not None:
        lhs = lhs * np.expand_dims(w, -1)
        rhs = rhs * (w if np.ndim(y) == 1 else np.expand_dims(w, -1))
    return lhs, rhs


def polyfit_check(full=False, cov=False):
    """Only the coefficients have a gradient rule."""
    if full or cov:
        raise NotImplementedError("np.polyfit(full=True) and np.polyfit(cov=...) have no "
                                  "gradient rule; the coefficients alone have one")


nondifferentiable(polyfit_check)


@zero_in_zero_out("g")
def polyfit_grads(g, x, y, deg, w=None, full=False, cov=False):
    """Gradients of ``p = np.polyfit(x, y, deg, w=w)`` for ``x``, ``y`` and ``w``, where the fit is
    of full rank: ``p = pinv(V) r`` for the weighted Vandermonde matrix ``V`` and values ``r``,
    so ``r`` gets ``pinv(V)^T g`` and ``V`` the pseudo-inverse's gradient for ``g r^T``."""
    polyfit_check(full, cov)
    system = polyfit_system(x, y, deg, w)
    lhs = system[0]
    rhs = system[1]
    p = np.linalg.pinv(lhs)
    g_matrix = as_matrix(g)
    g_rhs = from_matrix(swap_last_axes(p) @ g_matrix, y)
    g_lhs = pinv_grad(g_matrix @ swap_last_axes(as_matrix(rhs)), lhs, p)
    powers = np.arange(deg, -1, -1)
    slopes = powers * np.power(np.expand_dims(x, -1), np.maximum(powers - 1, 0))
    weights = 1.0 if w is None else np.expand_dims(w, -1)
    g_x = np.sum(g_lhs * weights * slopes, axis=-1)
    g_w = 0
    if w is not None:
        g_w = np.sum(g_lhs * np.vander(x, deg + 1), axis=-1) + \
            np.sum(as_matrix(g_rhs) * as_matrix(y), axis=-1)
        g_w = astype_grad(g_w, w)
        g_rhs = g_rhs * (w if np.ndim(y) == 1 else np.expand_dims(w, -1))
    return astype_grad(g_x, x), astype_grad(g_rhs, y), g_w


@adjoint(np.polyfit)
def _(out, x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The coefficients of a fit of full rank (full=False, cov=False)."""
    grads = polyfit_grads(d[out], x, y, deg, w, full, cov)
    d[x] = grads[0]
    d[y] = grads[1]
    d[w] = grads[2]


def polyfit_tangent(t, x, y, deg, out, w=None, full=False, cov=False, wrt="y"):
    """Tangent of ``np.polyfit`` from ``x``, ``y`` or ``w``: ``dp = dP r + P dr`` with the
    pseudo-inverse's tangent ``dP`` for the change of ``V``."""
    polyfit_check(full, cov)
    system = polyfit_system(x, y, deg, w)
    lhs = system[0]
    rhs = as_matrix(system[1])
    p = np.linalg.pinv(lhs)
    powers = np.arange(deg, -1, -1)
    if wrt == "y":
        weighted = t if w is None else t * (w if np.ndim(y) == 1 else np.expand_dims(w, -1))
        change = p @ as_matrix(np.broadcast_to(weighted, np.shape(y)))
    elif wrt == "x":
        slopes = powers * np.power(np.expand_dims(x, -1), np.maximum(powers - 1, 0))
        d_lhs = np.expand_dims(t, -1) * slopes * (1.0 if w is None else np.expand_dims(w, -1))
        change = pinv_tangent(d_lhs, lhs, p) @ rhs
    else:
        d_lhs = np.expand_dims(t, -1) * np.vander(x, deg + 1)
        d_rhs = as_matrix(y) * np.expand_dims(t, -1)
        change = pinv_tangent(d_lhs, lhs, p) @ rhs + p @ d_rhs
    return as_dtype_of(np.reshape(change, np.shape(out)), out)


@tangent(np.polyfit)
def _(out, x, y, deg, rcond=None, full=False, w=None, cov=False):
    d[out] = polyfit_tangent(d[x], x, y, deg, out, w, full, cov, "x")
    d[out] = polyfit_tangent(d[y], x, y, deg, out, w, full, cov, "y")
    d[out] = polyfit_tangent(d[w], x, y, deg, out, w, full, cov, "w")


def polyint_grads(g, p, m=1, k=None):
    """Gradients of ``np.polyint(p, m, k)``: each integration divides the coefficients by their
    new powers and appends its constant, so going back the last entry is that constant's
    gradient and the rest are divided by the same powers. A single ``k`` for several
    integrations gets the sum of theirs."""
    grad = np.ravel(g)
    g_k = []
    for _ in range(int(m)):
        g_k = [grad[-1]] + g_k
        grad = grad[:-1] / np.arange(np.size(grad) - 1, 0, -1)
    g_p = astype_grad(np.reshape(grad, np.shape(p)), p)
    if k is None or int(m) == 0:
        return g_p, 0
    if np.size(k) == 1:
        return g_p, astype_grad(np.reshape(np.sum(np.stack(g_k)), np.shape(k)), k)
    g_k = np.pad(np.stack(g_k), (0, np.size(k) - int(m)))
    return g_p, astype_grad(np.reshape(g_k, np.shape(k)), k)


@adjoint(np.polyint)
def _(out, p, m=1, k=None):
    grads = polyint_grads(d[out], p, m, k)
    d[p] = grads[0]
    d[k] = grads[1]


@tangent(np.polyint)  # linear in p and k together: each tangent with zeros for the other
def _(out, p, m=1, k=None):
    d[out] = as_dtype_of(np.polyint(d[p], m), out)
    d[out] = as_dtype_of(np.polyint(np.zeros(np.shape(p), float_dtype(out)), m, d[k]), out)


def poly_check(seq_of_zeros):
    """Only real roots given as a vector (or a number) have a rule."""
    if np.ndim(seq_of_zeros) > 1 or np.iscomplexobj(seq_of_zeros):
        raise NotImplementedError(
            "np.poly has a gradient rule for real roots given as a vector; for a matrix (its "
            "characteristic polynomial) write np.poly(np.linalg.eigvals(a)) with real "
            "eigenvalues, and complex roots have none")


nondifferentiable(poly_check)


def poly_jacobian(seq_of_zeros):
    """``d np.poly(r) / d r`` for real roots ``r``: column ``i`` is ``-poly(r without r_i)``
    moved one power down (a leading 0)."""
    poly_check(seq_of_zeros)
    roots = np.ravel(seq_of_zeros)
    columns = []
    for i in range(np.size(roots)):
        rest = np.atleast_1d(np.poly(np.delete(roots, i)))  # 1.0 for no roots
        columns.append(np.concatenate([np.zeros(1), -rest]))
    if len(columns) == 0:
        return np.zeros((1, 0))
    return np.stack(columns, axis=1)




@adjoint(np.poly)
def _(out, seq_of_zeros):
    """Real roots given as a vector; the coefficients are a product of the factors (x - r_i)."""
    d[seq_of_zeros] = astype_grad(np.reshape(d[out] @ poly_jacobian(seq_of_zeros),
                                             np.shape(seq_of_zeros)), seq_of_zeros)


@tangent(np.poly)
def _(out, seq_of_zeros):
    d[out] = as_dtype_of(poly_jacobian(seq_of_zeros) @ np.ravel(d[seq_of_zeros]), out)


def roots_jacobian(p, roots):
    """``d roots / d p`` for ``roots = np.roots(p)``, all simple: ``p(r) = 0`` moves each root by
    ``-(dp evaluated at r) / p'(r)``, so row ``i`` is ``-r_i^(n-j) / p'(r_i)``."""
    r = np.asarray(roots)
    slopes = np.polyval(polynomial_derivative(np.ravel(p)), r)
    return -np.vander(r, np.size(p)) / np.expand_dims(slopes, -1)


@adjoint(np.roots)
def _(out, p):
    """Distinct (simple) roots: a repeated root has no derivative."""
    d[p] = astype_grad(np.reshape(d[out] @ roots_jacobian(p, out), np.shape(p)), p)


@tangent(np.roots)
def _(out, p):
    d[out] = as_dtype_of(roots_jacobian(p, out) @ np.ravel(d[p]), out)


# np.polydiv(u, v) = (q, r) with u = q v + r: (dq, dr) divide du - q dv by v, a map linear in
# the dividend (q: the quotient; r: what remains, of r's length, its leading zeros trimmed)


def quotient_matrix(n, v):
    """The matrix taking a dividend of ``n`` coefficients to its quotient by ``v``."""
    columns = []
    for j in range(n):
        columns.append(np.polydiv(np.eye(n)[j], v)[0])
    return np.stack(columns, axis=1)


def tail_offset(full, n):
    """Where the last ``n`` of ``full`` entries begin."""
    return full - n


nondifferentiable(tail_offset)


def polydiv_parts(e, v, out):
    """``e`` divided by ``v`` as ``np.polydiv`` would give it, the remainder kept to the length
    of ``out``'s (a tangent of ``(q, r)``)."""
    e = np.ravel(e)
    q = quotient_matrix(np.size(e), v) @ e
    product = np.convolve(q, v)
    rest = e - product[tail_offset(np.size(product), np.size(e)):]
    r = rest[tail_offset(np.size(rest), np.size(out[1])):]
    return TangentTuple([as_dtype_of(q, out[0]), as_dtype_of(r, out[1])])


def polydiv_shifted(t, u, q):
    """``-q dv`` as a dividend of ``u``'s length (its last entries): the change a divisor's
    tangent ``t`` asks of the dividend."""
    product = np.convolve(q, np.ravel(t))
    return -product[tail_offset(np.size(product), np.size(u)):]


def polydiv_grads(g, u, v, out):
    """Gradients of ``(q, r) = np.polydiv(u, v)``: the transpose of ``polydiv_parts`` for the
    dividend, and that of ``polydiv_shifted`` for ``v``."""
    g_q = 0 if is_zero(g[0]) else np.ravel(g[0])
    g_r = 0 if is_zero(g[1]) else np.ravel(g[1])
    n = np.size(u)
    g_rest = np.zeros(n, np.result_type(float_dtype(out[0]), g_q, g_r))
    if not is_zero(g_r):
        g_rest = np.pad(g_r, (n - np.size(g_r), 0))
    product_size = np.size(out[0]) + np.size(v) - 1
    back = np.correlate(np.pad(g_rest, (tail_offset(product_size, n), 0)),
                        np.conj(np.ravel(v)), "valid")
    g_e = g_rest + swap_last_axes(quotient_matrix(n, v)) @ (g_q - back)
    g_v = -np.correlate(np.pad(g_e, (tail_offset(product_size, n), 0)),
                        np.conj(np.ravel(out[0])), "valid")
    return (astype_grad(np.reshape(g_e, np.shape(u)), u),
            astype_grad(np.reshape(g_v, np.shape(v)), v))


@adjoint(np.polydiv)
def _(out, u, v):
    grads = polydiv_grads(d[out], u, v, out)
    d[u] = grads[0]
    d[v] = grads[1]


@tangent(np.polydiv)
def _(out, u, v):
    d[out] = polydiv_parts(d[u], v, out)
    d[out] = polydiv_parts(polydiv_shifted(d[v], u, out[0]), v, out)


# ----- tensorinv, tensorsolve: inv and solve of the arrays seen as matrices --------------------


def tensorinv_grad(g, a, out, ind=2):
    """Gradient of ``np.linalg.tensorinv(a, ind)``: that of ``inv`` for ``a`` seen as a matrix of
    ``prod(a.shape[:ind])`` rows, ``-B^T G B^T`` for its inverse ``B``."""
    inverse = np.reshape(out, (-1, int(np.prod(np.shape(a)[:ind]))))
    g_matrix = np.reshape(g, np.shape(inverse))
    grad = -(swap_last_axes(inverse) @ g_matrix @ swap_last_axes(inverse))
    return astype_grad(np.reshape(grad, np.shape(a)), a)


@adjoint(np.linalg.tensorinv)
def _(out, a, ind=2):
    """A tensor that reshapes to an invertible square matrix."""
    d[a] = tensorinv_grad(d[out], a, out, ind)


def tensorinv_tangent(t, a, out, ind=2):
    """Tangent of ``np.linalg.tensorinv(a, ind)``: ``-B dA B`` with the arrays as matrices."""
    inverse = np.reshape(out, (-1, int(np.prod(np.shape(a)[:ind]))))
    t_matrix = np.reshape(np.broadcast_to(t, np.shape(a)), (np.shape(inverse)[1], -1))
    return as_dtype_of(np.reshape(-(inverse @ t_matrix @ inverse), np.shape(out)), out)


@tangent(np.linalg.tensorinv)
def _(out, a, ind=2):
    d[out] = tensorinv_tangent(d[a], a, out, ind)


def tensorsolve_order(ndim, axes=None):
    """The order ``np.linalg.tensorsolve(a, b, axes)`` puts ``a``'s axes in (``axes`` last)."""
    order = list(range(ndim))
    if axes is not None:
        for k in axes:
            order.remove(k)
            order.append(k)
    return order


nondifferentiable(tensorsolve_order)


def tensorsolve_matrix(a, b, axes=None):
    """``a`` of ``np.linalg.tensorsolve(a, b, axes)`` as the square matrix it solves with."""
    moved = np.transpose(a, tensorsolve_order(np.ndim(a), axes))
    return np.reshape(moved, (int(np.prod(np.shape(b))), -1))


def tensorsolve_grads(g, a, b, out, axes=None):
    """Gradients of ``x = np.linalg.tensorsolve(a, b, axes)``: those of ``solve`` for the
    matrix ``A`` and the vectors: ``b`` gets ``A^-T g``, ``A`` gets ``-(A^-T g) x^T``, put back
    in ``a``'s axis order."""
    matrix = tensorsolve_matrix(a, b, axes)
    g_b = np.linalg.solve(swap_last_axes(matrix), np.ravel(g))
    g_matrix = -np.multiply.outer(g_b, np.ravel(out))
    order = tensorsolve_order(np.ndim(a), axes)
    moved_shape = [np.shape(a)[k] for k in order]
    g_a = np.transpose(np.reshape(g_matrix, moved_shape), np.argsort(order))
    return (astype_grad(g_a, a), astype_grad(np.reshape(g_b, np.shape(b)), b))


@adjoint(np.linalg.tensorsolve)
def _(out, a, b, axes=None):
    """``a`` reshapes to an invertible square matrix."""
    grads = tensorsolve_grads(d[out], a, b, out, axes)
    d[a] = grads[0]
    d[b] = grads[1]


def tensorsolve_tangent(t_a, t_b, a, b, out, axes=None):
    """Tangent of ``x = np.linalg.tensorsolve(a, b, axes)``: ``A^-1 (db - dA x)``."""
    matrix = tensorsolve_matrix(a, b, axes)
    change = 0
    if not is_zero(t_b):
        change = np.ravel(np.broadcast_to(t_b, np.shape(b)))
    if not is_zero(t_a):
        t_matrix = tensorsolve_matrix(np.broadcast_to(t_a, np.shape(a)), b, axes)
        change = change - t_matrix @ np.ravel(out)
    return as_dtype_of(np.reshape(np.linalg.solve(matrix, change), np.shape(out)), out)


@tangent(np.linalg.tensorsolve)
def _(out, a, b, axes=None):
    d[out] = tensorsolve_tangent(d[a], 0, a, b, out, axes)
    d[out] = tensorsolve_tangent(0, d[b], a, b, out, axes)
