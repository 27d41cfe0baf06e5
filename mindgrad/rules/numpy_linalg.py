"""Rules for NumPy's products and ``np.linalg``, in both directions: the adjoint (reverse mode)
and the tangent (forward mode) of each.

``np.matmul`` lives in ``operators.py`` with ``@``. Products are written as contractions of the
incoming gradient with the other factor (``tensordot``/``einsum``), batched matrix rules use
``swapaxes(., -1, -2)`` for the transpose so that stacks of matrices work. Products are
multilinear: the tangent from one factor is the same product with that factor replaced by its
tangent (``@linear``), and the gradient helpers are linear in the gradient and the other factor
(``@linear_in``), which derives their own tangents. Norms, inverses, determinants, solves and
the decompositions (``svd``, ``eigh``, for real matrices with distinct singular values or
eigenvalues) have their tangents written out.

A gradient of a gradient differentiates the helpers below from their source, so they keep to
the Python that mindgrad differentiates: no starred calls (``einsum_list`` takes the operands
as one list), index assignment only on plain names, and NumPy functions that have rules.
"""

import string

import numpy as np

from mindgrad import runtime
from mindgrad.rules import adjoint, adjoint_method, d, linear, linear_in, nondifferentiable, tangent
from mindgrad.rules.numpy_elementwise import abs_slope, astype_grad, conj_if_complex
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
    sizes = {}  # each label's length (the longest, where operands broadcast)
    for t, x in zip(terms, operands):
        for c, n in zip(t, np.shape(x)):
            sizes[c] = max(sizes.get(c, 1), n)
    out_shape = tuple(sizes[c] for c in output)
    specs = []
    for k, x in enumerate(operands):
        others = [j for j in range(len(operands)) if j != k]
        elsewhere = {}  # each label's length outside operand k (the longest, if broadcast)
        for t, shape in [(output, out_shape)] + [(terms[j], np.shape(operands[j]))
                                                 for j in others]:
            for c, n in zip(t, shape):
                elsewhere[c] = max(elsewhere.get(c, 1), n)
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


@adjoint(np.einsum)
def _(ans, subscripts, *operands, out=None, dtype=None, order="K", casting="safe",
      optimize=False):
    d[operands] = einsum_grads(d[ans], subscripts, operands)


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


@tangent(np.einsum)
def _(ans, subscripts, *operands, out=None, dtype=None, order="K", casting="safe",
      optimize=False):
    d[ans] = einsum_tangent(d[operands], subscripts, operands, ans, optimize)


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
    if (ord is None and (axis is None or not matrix)) or ord == "fro" or (ord == 2 and not matrix):
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


def triangle_grad(g, uplo="L"):
    """The gradient for ``a`` of a function of ``a``'s ``uplo`` triangle read as a symmetric
    matrix (``a -> tril(a) + tril(a, -1)^T``, as ``eigh`` reads it), from the gradient ``g`` of
    that symmetric matrix: each off-diagonal entry of the triangle stands for two."""
    both = g + swap_last_axes(g)
    diagonal = g * np.eye(np.shape(g)[-1])
    if uplo.upper() == "U":
        return np.triu(both, 1) + diagonal
    return np.tril(both, -1) + diagonal


def triangle_tangent(t, uplo="L"):
    """The tangent of the symmetric matrix that ``eigh`` reads from ``a``'s ``uplo``
    triangle: ``tril(t) + tril(t, -1)^T``."""
    if uplo.upper() == "U":
        return np.triu(t) + swap_last_axes(np.triu(t, 1))
    return np.tril(t) + swap_last_axes(np.tril(t, -1))


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
    gradient."""
    reject_complex(a, "np.linalg.svd")
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
    core = 0
    if not is_zero(g_s):
        core = np.expand_dims(g_s, -2) * np.eye(k)
    if not (is_zero(g_u) and is_zero(g_vt)):
        f = inverse_gaps(s * s)
        if not is_zero(g_u):
            j = f * (swap_last_axes(u) @ g_u)
            core = core + (j + swap_last_axes(j)) * np.expand_dims(s, -2)
        if not is_zero(g_vt):
            kk = f * (vt @ swap_last_axes(g_vt))
            core = core + np.expand_dims(s, -1) * (kk + swap_last_axes(kk))
    grad = u @ core @ vt
    if m > k and not is_zero(g_u):
        grad = grad + ((g_u - u @ (swap_last_axes(u) @ g_u)) / np.expand_dims(s, -2)) @ vt
    if n > k and not is_zero(g_vt):
        grad = grad + u @ ((g_vt - (g_vt @ swap_last_axes(vt)) @ vt) / np.expand_dims(s, -1))
    if hermitian:
        grad = triangle_grad(grad, "L")
    return astype_grad(grad, a)


@adjoint(np.linalg.svd)
def _(out, a, full_matrices=True, compute_uv=True, hermitian=False):
    d[a] = svd_grad(d[out], a, out, full_matrices, compute_uv, hermitian)


def svd_tangent(t, a, out, full_matrices=True, compute_uv=True, hermitian=False):
    """Tangent of ``np.linalg.svd``. With ``a = U S V^T`` reduced, ``P = U^T t V`` and
    ``F_ij = 1 / (s_j^2 - s_i^2)``::

        ds = diag(P)
        dU = U (F o (P S + S P^T)) + (I - U U^T) t V S^-1
        dV = V (F o (S P + P^T S)) + (I - V V^T) t^T U S^-1

    ``full_matrices=True`` of a non-square matrix is refused: the extra columns of U (rows of
    V^T) are an arbitrary basis of a complement, with no tangent to give."""
    reject_complex(a, "np.linalg.svd")
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
    v = swap_last_axes(vt)
    p = swap_last_axes(u) @ t @ v
    ds = np.diagonal(p, 0, -2, -1)
    if not compute_uv:
        return as_dtype_of(ds, out)
    f = inverse_gaps(s * s)
    right = np.expand_dims(s, -2)  # X * right = X S
    left = np.expand_dims(s, -1)  # left * X = S X
    du = u @ (f * (p * right + left * swap_last_axes(p)))
    dv = v @ (f * (left * p + swap_last_axes(p) * right))
    if m > k:
        du = du + (t @ v - u @ p) / right
    if n > k:
        dv = dv + (swap_last_axes(t) @ u - v @ swap_last_axes(p)) / right
    return TangentTuple((as_dtype_of(du, u), as_dtype_of(ds, s),
                         as_dtype_of(swap_last_axes(dv), vt)))


@tangent(np.linalg.svd)
def _(out, a, full_matrices=True, compute_uv=True, hermitian=False):
    d[out] = svd_tangent(d[a], a, out, full_matrices, compute_uv, hermitian)


@zero_in_zero_out("g")
def eigh_grad(g, a, out, UPLO="L", vectors=True):
    """Gradient of ``np.linalg.eigh(a, UPLO)`` (``vectors``; else of ``eigvalsh``). With
    ``a = V diag(w) V^T`` and ``F_ij = 1 / (w_j - w_i)``, the symmetric matrix gets
    ``V [diag(gw) + F o (V^T gV)] V^T``; eigh reads it from ``a``'s ``UPLO`` triangle, which
    receives that gradient (``triangle_grad``)."""
    reject_complex(a, "np.linalg.eigh")
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
        core = np.expand_dims(g_w, -2) * np.eye(np.shape(a)[-1])
    if not is_zero(g_v):
        core = core + inverse_gaps(w) * (swap_last_axes(v) @ g_v)
    return astype_grad(triangle_grad(v @ core @ swap_last_axes(v), UPLO), a)


@adjoint(np.linalg.eigh)
def _(out, a, UPLO="L"):
    d[a] = eigh_grad(d[out], a, out, UPLO)


def eigh_tangent(t, a, out, UPLO="L", vectors=True):
    """Tangent of ``np.linalg.eigh(a, UPLO)`` (``vectors``; else of ``eigvalsh``). With
    ``a = V diag(w) V^T``, ``P = V^T ts V`` for the symmetric matrix's tangent ``ts`` and
    ``F_ij = 1 / (w_j - w_i)``: ``dw = diag(P)``, ``dV = V (F o P)``."""
    reject_complex(a, "np.linalg.eigh")
    if vectors:
        w = out[0]
        v = out[1]
    else:
        both = np.linalg.eigh(a, UPLO)
        w = both[0]
        v = both[1]
    p = swap_last_axes(v) @ triangle_tangent(t, UPLO) @ v
    dw = np.diagonal(p, 0, -2, -1)
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
