"""Rules for ``np.fft``, in both directions: every transform, its inverse, the real and Hermitian
ones, in one, two and n dimensions, with ``n``/``s``, ``axis``/``axes`` and ``norm``.

Every transform is linear (over the reals; ``irfft`` drops imaginary parts, ``hfft`` conjugates),
so each tangent is the transform of the tangent (``@linear``). The adjoints follow the README's
complex convention (a cotangent ``c`` of ``w`` means ``dL = Re(c dw)``), under which the adjoint
of a complex-linear map is its plain transpose: the DFT matrix is symmetric, so the gradient of
``fft`` is ``fft`` of the gradient (``ifft``'s is ``ifft``'s), cut or zero-padded back to the
input's length where ``n``/``s`` padded or cut it. ``norm`` is a scale by a number and stays.

The real transforms are where a halved spectrum must be counted exactly:

- ``rfft`` keeps the first ``n // 2 + 1`` rows of the DFT: its transpose is ``fft`` of the
  gradient zero-padded to ``n``, of which a real input takes the real part;
- ``irfft`` reads each of the entries ``1 .. ceil(n / 2) - 1`` for itself and its mirror image,
  and the real parts only of the first entry and (``n`` even) the last: its gradient is
  ``ifft`` of the gradient, cut to ``n // 2 + 1`` entries, times 2 on the entries read twice;
- ``hfft`` is ``irfft`` of the conjugate and ``ihfft`` the conjugate of ``rfft`` (with the
  direction of ``norm`` swapped), so their gradients are those conjugated.

The n-dimensional real transforms do the real one along the last of ``axes`` and complex ones
along the others; the gradients compose the same way. The helpers below are differentiated
again (gradients of gradients) through these rules.
"""

import numpy as np

from mindgrad.rules import adjoint, d, linear, linear_in, nondifferentiable
from mindgrad.rules.helpers import astype_grad
from mindgrad.runtime import is_any_zero, zero, zero_in, zero_in_zero_out
from mindgrad.runtime.arrays import as_array

# ----- shapes: which axes a transform works on, and how long ---------------------------------


def fft_axes(a, s=None, axes=None):
    """The axes an n-dimensional transform of ``a`` works on, as NumPy reads ``s`` and ``axes``
    (all of them, or the last ``len(s)``), non-negative."""
    ndim = np.ndim(a)
    if axes is None:
        count = ndim if s is None else len(s)
        axes = range(ndim - count, ndim)
    return [int(ax) % ndim for ax in axes]


def fft_lengths(a, s, axes, halved=False):
    """The transform's length along each of ``axes``: ``s`` (a None entry: the input's length),
    or the input's lengths; for an inverse real transform (``halved``) the last one defaults to
    ``2 * (m - 1)``, ``m`` the input's length there."""
    shape = np.shape(a)
    given = [None] * len(axes) if s is None else list(s)
    lengths = [shape[ax] if n is None else int(n) for n, ax in zip(given, axes)]
    if halved and given[-1] is None:
        lengths[-1] = 2 * (lengths[-1] - 1)
    return lengths


def one_length(n):
    """``n`` of a one-dimensional transform as the ``s`` of an n-dimensional one."""
    return None if n is None else [n]


def swapped_norm(norm):
    """The ``norm`` that scales the other direction (``hfft`` and ``ihfft`` use it)."""
    return {None: "forward", "backward": "forward", "forward": "backward"}.get(norm, norm)


def halved_weights(n, axis, ndim):
    """How many entries of a length-``n`` real signal's spectrum each of its first ``n // 2 + 1``
    entries stands for (1 for the first and, ``n`` even, the last; 2 for the others), shaped to
    multiply along ``axis`` of an ``ndim``-dimensional array."""
    k = np.arange(n // 2 + 1)
    weights = np.where((k == 0) | (2 * k == n), 1.0, 2.0)
    shape = [1] * ndim
    shape[axis] = n // 2 + 1
    return np.reshape(weights, shape)


nondifferentiable(fft_axes, fft_lengths, one_length, swapped_norm, halved_weights)


# ----- cutting and padding along axes --------------------------------------------------------


@zero_in_zero_out("x")
def fit_lengths(x, shape, axes):
    """``x`` cut, or padded with zeros at the end, to ``shape``'s lengths along ``axes``: what a
    transform does to its input given ``n`` or ``s``, and to a gradient on its way back."""
    if zero_in(x):
        return zero
    x = as_array(x)
    index = [slice(None)] * x.ndim
    widths = [(0, 0)] * x.ndim
    for ax in axes:
        index[ax] = slice(0, min(shape[ax], x.shape[ax]))
        widths[ax] = (0, max(shape[ax] - x.shape[ax], 0))
    return np.pad(x[tuple(index)], widths)


@linear(fit_lengths)
@adjoint(fit_lengths)
def _(out, x, shape, axes):
    d[x] = fit_lengths(d[out], np.shape(x), axes)


def to_input(g, a):
    """A gradient in ``a``'s kind: the real part for a real ``a`` (a list too), ``a``'s dtype."""
    if not np.iscomplexobj(a):
        g = np.real(g)
    return astype_grad(g, a)


# ----- the gradients: transposes ------------------------------------------------------------


@linear_in("g", any_number=True)
def fft_grad(g, a, axes, norm=None, inverse=False):
    """Gradient of a complex transform of ``a`` over ``axes`` (``fft``, ``fftn``; ``ifft``,
    ``ifftn`` if ``inverse``): the same transform of ``g`` (the DFT matrix is symmetric), cut or
    padded back to ``a``'s lengths."""
    if is_any_zero(g):
        return zero
    if inverse:
        grad = np.fft.ifftn(g, None, axes, norm)
    else:
        grad = np.fft.fftn(g, None, axes, norm)
    return to_input(fit_lengths(grad, np.shape(a), axes), a)


@linear_in("g", any_number=True)
def rfft_grad(g, a, lengths, axes, norm=None):
    """Gradient of ``rfftn(a, lengths, axes, norm)``: ``fftn`` of ``g`` zero-padded from
    ``n // 2 + 1`` to the transform's ``n`` entries along the last axis (the transpose of
    keeping the first rows of the DFT), back to ``a``'s lengths; a real ``a`` takes the real
    part."""
    if is_any_zero(g):
        return zero
    return to_input(fit_lengths(np.fft.fftn(g, lengths, axes, norm), np.shape(a), axes), a)


@linear_in("g", any_number=True)
def irfft_grad(g, a, lengths, axes, norm=None):
    """Gradient of ``irfftn(a, lengths, axes, norm)`` for the half spectrum ``a``: ``ifftn`` of
    ``g``, cut to the ``n // 2 + 1`` entries the transform reads along the last axis, each
    counted as often as it is read (``halved_weights``), back to ``a``'s lengths."""
    if is_any_zero(g):
        return zero
    grad = np.fft.ifftn(g, None, axes, norm)
    last = axes[-1]
    half = list(np.shape(grad))
    half[last] = lengths[-1] // 2 + 1
    grad = fit_lengths(grad, half, [last]) * halved_weights(lengths[-1], last, np.ndim(grad))
    return to_input(fit_lengths(grad, np.shape(a), axes), a)


# ----- complex transforms -------------------------------------------------------------------


@linear(np.fft.fft)
@adjoint(np.fft.fft)
def _(ans, a, n=None, axis=-1, norm=None, out=None):
    d[a] = fft_grad(d[ans], a, fft_axes(a, None, [axis]), norm)


@linear(np.fft.ifft)
@adjoint(np.fft.ifft)
def _(ans, a, n=None, axis=-1, norm=None, out=None):
    d[a] = fft_grad(d[ans], a, fft_axes(a, None, [axis]), norm, True)


@linear(np.fft.fft2)
@adjoint(np.fft.fft2)
def _(ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    d[a] = fft_grad(d[ans], a, fft_axes(a, s, axes), norm)


@linear(np.fft.ifft2)
@adjoint(np.fft.ifft2)
def _(ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    d[a] = fft_grad(d[ans], a, fft_axes(a, s, axes), norm, True)


@linear(np.fft.fftn)
@adjoint(np.fft.fftn)
def _(ans, a, s=None, axes=None, norm=None, out=None):
    d[a] = fft_grad(d[ans], a, fft_axes(a, s, axes), norm)


@linear(np.fft.ifftn)
@adjoint(np.fft.ifftn)
def _(ans, a, s=None, axes=None, norm=None, out=None):
    d[a] = fft_grad(d[ans], a, fft_axes(a, s, axes), norm, True)


# ----- real transforms and their inverses ---------------------------------------------------


@linear(np.fft.rfft)
@adjoint(np.fft.rfft)
def _(ans, a, n=None, axis=-1, norm=None, out=None):
    axes = fft_axes(a, None, [axis])
    d[a] = rfft_grad(d[ans], a, fft_lengths(a, one_length(n), axes), axes, norm)


@linear(np.fft.irfft)
@adjoint(np.fft.irfft)
def _(ans, a, n=None, axis=-1, norm=None, out=None):
    axes = fft_axes(a, None, [axis])
    d[a] = irfft_grad(d[ans], a, fft_lengths(a, one_length(n), axes, True), axes, norm)


@linear(np.fft.rfft2)
@adjoint(np.fft.rfft2)
def _(ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    transformed = fft_axes(a, s, axes)
    d[a] = rfft_grad(d[ans], a, fft_lengths(a, s, transformed), transformed, norm)


@linear(np.fft.irfft2)
@adjoint(np.fft.irfft2)
def _(ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    transformed = fft_axes(a, s, axes)
    d[a] = irfft_grad(d[ans], a, fft_lengths(a, s, transformed, True), transformed, norm)


@linear(np.fft.rfftn)
@adjoint(np.fft.rfftn)
def _(ans, a, s=None, axes=None, norm=None, out=None):
    transformed = fft_axes(a, s, axes)
    d[a] = rfft_grad(d[ans], a, fft_lengths(a, s, transformed), transformed, norm)


@linear(np.fft.irfftn)
@adjoint(np.fft.irfftn)
def _(ans, a, s=None, axes=None, norm=None, out=None):
    transformed = fft_axes(a, s, axes)
    d[a] = irfft_grad(d[ans], a, fft_lengths(a, s, transformed, True), transformed, norm)


# ----- Hermitian transforms: hfft(a) = irfft(conj(a)), ihfft(a) = conj(rfft(a)) ---------------


@linear(np.fft.hfft)
@adjoint(np.fft.hfft)
def _(ans, a, n=None, axis=-1, norm=None, out=None):
    axes = fft_axes(a, None, [axis])
    d[a] = np.conj(irfft_grad(d[ans], a, fft_lengths(a, one_length(n), axes, True), axes,
                              swapped_norm(norm)))


@linear(np.fft.ihfft)
@adjoint(np.fft.ihfft)
def _(ans, a, n=None, axis=-1, norm=None, out=None):
    axes = fft_axes(a, None, [axis])
    d[a] = rfft_grad(np.conj(d[ans]), a, fft_lengths(a, one_length(n), axes), axes,
                     swapped_norm(norm))


# ----- shifts: rolls by half the length -----------------------------------------------------


@linear(np.fft.fftshift)
@adjoint(np.fft.fftshift)
def _(out, x, axes=None):
    d[x] = np.fft.ifftshift(d[out], axes)


@linear(np.fft.ifftshift)
@adjoint(np.fft.ifftshift)
def _(out, x, axes=None):
    d[x] = np.fft.fftshift(d[out], axes)
