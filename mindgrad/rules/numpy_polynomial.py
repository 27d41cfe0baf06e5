"""Rules for NumPy's convolutions and polynomials, in both directions: ``convolve``,
``correlate``, ``polyval``, ``vander``, ``poly``, ``roots``, the polynomial arithmetic
(``polyadd``, ``polysub``, ``polymul``, ``polydiv``, ``polyder``, ``polyint``) and ``polyfit``
(a least-squares fit: full rank).

A gradient of a gradient differentiates the helpers below from their source, so they keep to
the Python that mindgrad differentiates: no starred calls, index assignment only on plain names,
and NumPy functions that have rules.
"""


import numpy as np

from mindgrad.rules import adjoint, d, linear, nondifferentiable, tangent, transpose, transpose_of
from mindgrad.rules.helpers import array_grad, astype_grad, swap_last_axes
from mindgrad.rules.numpy_linalg import as_matrix, from_matrix, pinv_grad, pinv_tangent
from mindgrad.runtime import is_zero, unbroadcast, zero, zero_in, zero_in_zero_out
from mindgrad.runtime.arrays import as_array
from mindgrad.runtime.tangents import (
    TangentTuple,
    as_dtype_of,
    float_dtype,
)

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
    if zero_in(g):
        return zero
    n = np.size(a)
    m = np.size(v)
    w = np.conj(as_array(v)[::-1]) if correlation else as_array(v)
    window = convolution_window(n, m, mode, correlation)
    g_full = np.pad(g, (window[0], n + m - 1 - window[0] - window[1]))
    g_a = np.correlate(g_full, np.conj(w), "valid")
    g_w = np.correlate(g_full, np.conj(as_array(a)), "valid")
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
    p = as_array(p)
    if np.size(p) < 2:
        return np.zeros(1, np.result_type(p, 1.0))
    return p[:-1] * np.arange(np.size(p) - 1, 0, -1).astype(np.result_type(p, 1.0))


@zero_in_zero_out("g")
def polyval_grad_p(g, p, x):
    """Gradient of ``np.polyval(p, x)`` for the coefficients: ``sum g x^(n-1-i)`` for each
    ``p_i`` (a list of coefficients gets a list)."""
    if zero_in(g):
        return zero
    g_full = np.broadcast_to(g, np.shape(np.polyval(np.ones(np.size(p)), x)))
    powers = np.vander(np.ravel(np.broadcast_to(x, np.shape(g_full))), np.size(p))
    return array_grad(np.ravel(g_full) @ powers, p)


@zero_in_zero_out("t")
def polyval_tangent_x(t, p, x):
    """Tangent of ``np.polyval(p, x)`` from ``x``: the derivative polynomial's values times it."""
    if zero_in(t):
        return zero
    return t * np.polyval(polynomial_derivative(p), x)


# np.polyval is linear in p, its transpose polyval_grad_p; the tangent from x transposed in t
@transpose_of(np.polyval)
def _(out, p, x):
    d[p] = polyval_grad_p(d[out], p, x)


@transpose_of(polyval_tangent_x)
def _(out, t, p, x):
    d[t] = astype_grad(unbroadcast(d[out] * np.polyval(polynomial_derivative(p), x), t), t)


@transpose(np.polyval)
@tangent(np.polyval)
def _(out, p, x):
    d[out] = np.polyval(d[p], x)
    d[out] = polyval_tangent_x(d[x], p, x)


def vander_exponents(x, N=None, increasing=False):
    """The power of ``x`` in each column of ``np.vander(x, N, increasing)``."""
    count = np.size(x) if N is None else N
    return np.arange(count) if increasing else np.arange(count)[::-1]


nondifferentiable(vander_exponents)


def vander_slopes(x, N=None, increasing=False):
    """``d out_ij / d x_i = e_j x_i^(e_j - 1)`` for the exponents ``e`` (0 for ``e = 0``)."""
    e = vander_exponents(x, N, increasing)
    return e * np.power(np.expand_dims(x, -1), np.maximum(e - 1, 0))


@zero_in_zero_out("t")
def vander_tangent(t, x, N=None, increasing=False):
    """Tangent of ``np.vander(x, N, increasing)``: each row's slopes times ``x``'s tangent."""
    if zero_in(t):
        return zero
    return np.expand_dims(t, -1) * vander_slopes(x, N, increasing)


@transpose_of(vander_tangent)  # the tangent transposed in t (@transpose reads it)
def _(out, t, x, N=None, increasing=False):
    d[t] = astype_grad(np.sum(d[out] * vander_slopes(x, N, increasing), axis=-1), x)


@transpose(np.vander)
@tangent(np.vander)
def _(out, x, N=None, increasing=False):
    d[out] = vander_tangent(d[x], x, N, increasing)



# ----- polynomial arithmetic ----------------------------------------------------------------------


@zero_in_zero_out("g")
def polyadd_grads(g, a1, a2, sign=1.0):
    """Gradients of ``np.polyadd(a1, a2)`` (``np.polysub`` with ``sign`` -1): the shorter is
    padded at the front, so each gets the last entries of ``g``; a result that lost leading zeros
    is padded back."""
    if zero_in(g):
        return zero
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


@zero_in_zero_out("t")
def poly_padded(t, other, out):
    """A tangent of one term of ``np.polyadd`` (``np.polysub``): ``t`` padded at the front to
    the length of the result ``out``, as the sum pads the shorter of the two (``other``)."""
    if zero_in(t):
        return zero
    return np.polyadd(t, np.zeros(np.shape(other), float_dtype(out)))


@tangent(np.polyadd)  # linear in both together: each tangent added to zeros for the other
def _(out, a1, a2):
    d[out] = poly_padded(d[a1], a2, out)
    d[out] = poly_padded(d[a2], a1, out)


@adjoint(np.polysub)
def _(out, a1, a2):
    grads = polyadd_grads(d[out], a1, a2, -1.0)
    d[a1] = grads[0]
    d[a2] = grads[1]


@tangent(np.polysub)
def _(out, a1, a2):
    d[out] = poly_padded(d[a1], a2, out)
    d[out] = -poly_padded(d[a2], a1, out)


@linear(np.polymul, wrt=("a1", "a2"))
@adjoint(np.polymul)
def _(out, a1, a2):
    grads = convolve_grads(d[out], a1, a2)
    d[a1] = grads[0]
    d[a2] = grads[1]


@zero_in_zero_out("g")
def polyder_grad(g, p, m=1):
    """Gradient of ``np.polyder(p, m)``: ``m`` times, each coefficient's gradient times the
    power it drops from (``polynomial_derivative``'s transpose), zero for the last ``m``."""
    if zero_in(g):
        return zero
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
    if zero_in(g):
        return zero
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
    g_w = zero
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


@zero_in_zero_out("t")
def polyfit_tangent(t, x, y, deg, out, w=None, full=False, cov=False, wrt="y"):
    """Tangent of ``np.polyfit`` from ``x``, ``y`` or ``w``: ``dp = dP r + P dr`` with the
    pseudo-inverse's tangent ``dP`` for the change of ``V``."""
    if zero_in(t):
        return zero
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


@zero_in_zero_out("g")
def polyint_grads(g, p, m=1, k=None):
    """Gradients of ``np.polyint(p, m, k)``: each integration divides the coefficients by their
    new powers and appends its constant, so going back the last entry is that constant's
    gradient and the rest are divided by the same powers. A single ``k`` for several
    integrations gets the sum of theirs."""
    if zero_in(g):
        return zero
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


@zero_in_zero_out("t")
def polyint_constants_tangent(t, p, m, out):
    """Tangent of ``np.polyint(p, m, k)`` from the integration constants ``k``: ``t`` where they
    enter the result (the polynomial of zeros integrated with constants ``t``)."""
    if zero_in(t):
        return zero
    return as_dtype_of(np.polyint(np.zeros(np.shape(p), float_dtype(out)), m, t), out)


@tangent(np.polyint)  # linear in p and k together: each tangent with zeros for the other
def _(out, p, m=1, k=None):
    d[out] = as_dtype_of(np.polyint(d[p], m), out)
    d[out] = polyint_constants_tangent(d[k], p, m, out)


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
    r = as_array(roots)
    slopes = np.polyval(polynomial_derivative(np.ravel(p)), r)
    return -np.vander(r, np.size(p)) / np.expand_dims(slopes, -1)


@zero_in_zero_out("t")
def roots_tangent(t, p, out):
    """Tangent of ``out = np.roots(p)``: the roots' Jacobian applied to ``p``'s tangent."""
    if zero_in(t):
        return zero
    return as_dtype_of(roots_jacobian(p, out) @ np.ravel(t), out)


@transpose_of(roots_tangent)  # the tangent transposed in t (@transpose reads it)
def _(ans, t, p, out):
    d[t] = astype_grad(np.reshape(d[ans] @ roots_jacobian(p, out), np.shape(p)), p)


@transpose(np.roots)
@tangent(np.roots)
def _(out, p):
    """Distinct (simple) roots: a repeated root has no derivative."""
    d[out] = roots_tangent(d[p], p, out)


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


@zero_in_zero_out("e")
def polydiv_parts(e, v, out):
    """``e`` divided by ``v`` as ``np.polydiv`` would give it, the remainder kept to the length
    of ``out``'s (a tangent of ``(q, r)``)."""
    if zero_in(e):
        return zero
    e = np.ravel(e)
    q = quotient_matrix(np.size(e), v) @ e
    product = np.convolve(q, v)
    rest = e - product[tail_offset(np.size(product), np.size(e)):]
    r = rest[tail_offset(np.size(rest), np.size(out[1])):]
    return TangentTuple([as_dtype_of(q, out[0]), as_dtype_of(r, out[1])])


@zero_in_zero_out("t")
def polydiv_shifted(t, u, q):
    """``-q dv`` as a dividend of ``u``'s length (its last entries): the change a divisor's
    tangent ``t`` asks of the dividend."""
    if zero_in(t):
        return zero
    product = np.convolve(q, np.ravel(t))
    return -product[tail_offset(np.size(product), np.size(u)):]


@zero_in_zero_out("g")
def polydiv_grads(g, u, v, out):
    """Gradients of ``(q, r) = np.polydiv(u, v)``: the transpose of ``polydiv_parts`` for the
    dividend, and that of ``polydiv_shifted`` for ``v``."""
    if zero_in(g):
        return zero
    g_q = zero if is_zero(g[0]) else np.ravel(g[0])
    g_r = zero if is_zero(g[1]) else np.ravel(g[1])
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
