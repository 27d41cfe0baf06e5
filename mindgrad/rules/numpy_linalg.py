"""Rules for NumPy's products and ``np.linalg``.

``np.matmul`` lives in ``operators.py`` with ``@``. Products are written as contractions of the
incoming gradient with the other factor (``tensordot``/``einsum``), batched matrix rules use
``swapaxes(., -1, -2)`` for the transpose so that stacks of matrices work.
"""

import string

import numpy as np

from mindgrad.rules import adjoint, adjoint_method, d
from mindgrad.rules.numpy_elementwise import astype_grad
from mindgrad.runtime import is_zero, unbroadcast


def swap_last_axes(x):
    """The transpose of (a stack of) matrices."""
    return np.swapaxes(x, -1, -2)


# ----- dot, inner, outer, vdot -------------------------------------------------------------


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


@adjoint_method("dot")
@adjoint(np.dot)
def _(ans, a, b, out=None):
    d[a] = dot_grad_a(d[ans], a, b)
    d[b] = dot_grad_b(d[ans], a, b)


def inner_grad_a(g, a, b):
    """Gradient of ``np.inner(a, b)`` (a sum over the last axes) for ``a``."""
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(g * b, a)
    g_axes = list(range(na - 1, na - 1 + nb - 1))
    return astype_grad(np.tensordot(g, b, axes=(g_axes, list(range(nb - 1)))), a)


def inner_grad_b(g, a, b):
    """Gradient of ``np.inner(a, b)`` for ``b``."""
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(g * a, b)
    lead = list(range(na - 1))
    return astype_grad(np.tensordot(g, a, axes=(lead, lead)), b)


@adjoint(np.inner)
def _(out, a, b):
    d[a] = inner_grad_a(d[out], a, b)
    d[b] = inner_grad_b(d[out], a, b)


def outer_grad_a(g, a, b):
    """Gradient of ``np.outer(a, b)`` (inputs flattened) for ``a``."""
    return astype_grad(np.reshape(np.dot(g, np.ravel(b)), np.shape(a)), a)


@adjoint(np.outer)
def _(ans, a, b, out=None):
    d[a] = outer_grad_a(d[ans], a, b)
    d[b] = outer_grad_a(np.transpose(d[ans]), b, a)


@adjoint(np.vdot)
def _(out, a, b):
    d[a] = np.reshape(d[out] * np.conj(np.ravel(b)), np.shape(a))
    d[b] = np.reshape(d[out] * np.conj(np.ravel(a)), np.shape(b))


def vecdot_grad(g, x, other, axis=-1):
    """Gradient of ``np.vecdot(x1, x2, axis)`` for ``x`` (real inputs): ``g * other``."""
    return unbroadcast(np.expand_dims(g, axis) * other, x)


if hasattr(np, "vecdot"):  # NumPy >= 2.0

    @adjoint(np.linalg.vecdot, np.vecdot)
    def _(out, x1, x2, *, axis=-1):
        d[x1] = vecdot_grad(d[out], x1, x2, axis)
        d[x2] = vecdot_grad(d[out], x2, x1, axis)


# ----- tensordot and einsum ----------------------------------------------------------------


def tensordot_axes(axes, na, nb):
    """``axes`` of ``np.tensordot`` as two lists of non-negative axes, paired in order."""
    if np.ndim(axes) == 0:
        return list(range(na - axes, na)), list(range(axes))
    axes_a, axes_b = axes
    axes_a = [axes_a] if np.ndim(axes_a) == 0 else list(axes_a)
    axes_b = [axes_b] if np.ndim(axes_b) == 0 else list(axes_b)
    return [int(i) % na for i in axes_a], [int(i) % nb for i in axes_b]


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


def tensordot_grad_b(g, a, b, axes=2):
    """Gradient of ``np.tensordot(a, b, axes)`` for ``b``."""
    na, nb = np.ndim(a), np.ndim(b)
    axes_a, axes_b = tensordot_axes(axes, na, nb)
    n_free_a = na - len(axes_a)
    g_t = np.moveaxis(g, list(range(n_free_a)), list(range(np.ndim(g) - n_free_a, np.ndim(g))))
    return tensordot_grad_a(g_t, b, a, (axes_b, axes_a))


@adjoint(np.tensordot)
def _(out, a, b, axes=2):
    d[a] = tensordot_grad_a(d[out], a, b, axes)
    d[b] = tensordot_grad_b(d[out], a, b, axes)


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


def einsum_grads(g, subscripts, operands):
    """Gradients of ``np.einsum(subscripts, *operands)``, one per operand.

    For operand k: the einsum of ``g`` with the other operands onto k's labels. Labels that
    appear nowhere else (summed over k alone) are broadcast back; axes of length 1 that the
    other operands broadcast are summed; a label repeated in k's term (a diagonal, ``'ii->i'``)
    gets its values written on that diagonal of a zero array.
    """
    terms, output = einsum_parse(subscripts, operands)
    g = np.asarray(g)
    grads = []
    for k, x in enumerate(operands):
        labels = "".join(dict.fromkeys(terms[k]))  # unique, in order of first appearance
        others = [(t, y) for j, (t, y) in enumerate(zip(terms, operands)) if j != k]
        reachable = set(output).union(*[set(t) for t, _ in others])
        known = "".join(c for c in labels if c in reachable)
        spec = ",".join([output] + [t for t, _ in others]) + "->" + known
        part = np.einsum(spec, g, *[y for _, y in others])
        part = np.reshape(part, [part.shape[known.index(c)] if c in known else 1 for c in labels])
        own = dict(zip(terms[k], np.shape(x)))
        shrink = tuple(i for i, c in enumerate(labels) if own[c] == 1 and part.shape[i] != 1)
        if shrink:
            part = np.sum(part, axis=shrink, keepdims=True)
        part = np.broadcast_to(part, [own[c] for c in labels])
        if len(labels) == len(terms[k]):
            grad = np.transpose(part, [labels.index(c) for c in terms[k]]) if labels else part
        else:
            grad = np.zeros(np.shape(x), dtype=part.dtype)
            spots = [np.arange(own[c]).reshape([-1 if j == labels.index(c) else 1
                                                for j in range(len(labels))])
                     for c in terms[k]]
            grad[tuple(spots)] = part
        grads.append(astype_grad(np.array(grad), x))
    return tuple(grads)


@adjoint(np.einsum)
def _(ans, subscripts, *operands, out=None, dtype=None, order="K", casting="safe",
      optimize=False):
    d[operands] = einsum_grads(d[ans], subscripts, operands)


# ----- norms -------------------------------------------------------------------------------


def norm_vector_grad(x, norm, ord, axis):
    """d norm / d x of a vector norm along ``axis``; ``norm`` has that axis kept."""
    if ord is None or ord == 2:
        return x / np.where(norm == 0, 1, norm)
    if ord == 1:
        return np.sign(x)
    if ord == 0:
        return np.zeros_like(x)
    if np.isinf(ord):
        hits = np.abs(x) == norm
        return np.sign(x) * hits / np.maximum(np.sum(hits, axis=axis, keepdims=True), 1)
    safe = np.where(norm == 0, 1, norm)
    return np.sign(x) * (np.abs(x) / safe) ** (ord - 1)


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
        return np.moveaxis(np.sign(m) * share, (-2, -1), axes)
    raise NotImplementedError(f"np.linalg.norm(ord={ord!r}) of a matrix has no gradient rule")


def norm_grad(g, x, ans, ord=None, axis=None, keepdims=False):
    """Gradient of ``np.linalg.norm(x, ord, axis, keepdims)``: vector norms (2, 1, inf, -inf,
    any p) along one axis or over the flattened array, matrix norms (fro, nuc, 2, -2, 1, -1,
    inf, -inf) over two."""
    if is_zero(g):
        return 0
    x = np.asarray(x)
    if axis is None:
        axes = tuple(range(x.ndim)) if ord is None or x.ndim == 1 else (0, 1)
    else:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    axes = tuple(int(a) % max(x.ndim, 1) for a in axes)
    if not keepdims:
        g, ans = np.expand_dims(g, axes), np.expand_dims(ans, axes)
    if len(axes) == 2 and not (ord is None and axis is None):
        slope = norm_matrix_grad(x, ans, ord, axes)
    elif ord is None and axis is None:
        slope = x / np.where(ans == 0, 1, ans)
    else:
        slope = norm_vector_grad(x, ans, ord, axes[0])
    return astype_grad(g * slope, x)


@adjoint(np.linalg.norm)
def _(out, x, ord=None, axis=None, keepdims=False):
    d[x] = norm_grad(d[out], x, out, ord, axis, keepdims)


# ----- inverse, determinants, solving ------------------------------------------------------


@adjoint(np.linalg.inv)
def _(out, a):
    d[a] = -np.matmul(swap_last_axes(out), np.matmul(d[out], swap_last_axes(out)))


def det_grad(g, a, ans):
    """Gradient of ``det(a)``: ``g det(a) inv(a)^T`` (for stacks of matrices too)."""
    return np.expand_dims(g * ans, (-2, -1)) * swap_last_axes(np.linalg.inv(a))


def slogdet_grad(g, a):
    """Gradient of ``slogdet(a) = (sign, log|det|)``: the sign has none; ``log|det|`` gives
    ``g inv(a)^T``."""
    g_logdet = g[1]
    if is_zero(g_logdet):
        return 0
    return np.expand_dims(g_logdet, (-2, -1)) * swap_last_axes(np.linalg.inv(a))


@adjoint(np.linalg.det)
def _(out, a):
    d[a] = det_grad(d[out], a, out)


@adjoint(np.linalg.slogdet)
def _(out, a):
    d[a] = slogdet_grad(d[out], a)


def solve_adjoint(g, a, b):
    """``solve(a^T, g)``: the gradient of ``x = solve(a, b)`` for ``b`` before it is summed to
    b's shape. (``b`` is a vector only when it is 1-d, as in NumPy 2.)"""
    if np.ndim(b) == 1:
        return np.linalg.solve(swap_last_axes(a), np.expand_dims(g, -1))[..., 0]
    return np.linalg.solve(swap_last_axes(a), g)


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
