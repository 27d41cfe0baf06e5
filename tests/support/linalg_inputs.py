"""Inputs for the svd and eigh rule checks (drawn through inputs.Draw from a table's own
generator), and the ``fix`` that makes their outputs unique: U, V^T and the eigenvectors are
unique up to the sign of each vector, so each is flipped to make its entry of largest magnitude
positive, and the extra columns of U (rows of V^T) of ``full_matrices=True``, not unique at all,
are zeroed."""

import numpy as np

from mindgrad.runtime import is_zero


def orthogonal(rng, *shape):
    """Matrices with orthonormal columns (stacks too)."""
    return np.linalg.qr(rng.standard_normal(shape))[0]


def separated(rng, *shape):
    """Random matrices whose singular values are 0.7 or more apart and at least 1."""
    m, n = shape[-2:]
    k = min(m, n)
    s = 1.0 + 0.7 * np.arange(k)[::-1] + 0.1 * rng.uniform(size=shape[:-2] + (k,))
    u, v = orthogonal(rng, *shape[:-2], m, k), orthogonal(rng, *shape[:-2], n, k)
    return (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)


def symmetric_in(rng, uplo, *shape):
    """Random matrices whose ``uplo`` triangle holds a symmetric matrix with eigenvalues, and
    their magnitudes, 0.7 or more apart; the other triangle is noise (eigh does not read it)."""
    n = shape[-1]
    w = (0.8 + 0.7 * np.arange(n)) * (-1.0) ** np.arange(n)
    q = orthogonal(rng, *shape)
    a = (q * w) @ np.swapaxes(q, -1, -2)
    noise = rng.standard_normal(shape)
    return a + (np.triu(noise, 1) if uplo == "L" else np.tril(noise, -1))


def vector_signs(m, k, columns):
    """The sign of the entry of largest magnitude of each of the first ``k`` columns of ``m``,
    then zeros up to ``columns``, as a ``(..., 1, columns)`` array."""
    cols = m[..., :, :k]
    top = np.take_along_axis(cols, np.argmax(np.abs(cols), axis=-2)[..., None, :], axis=-2)
    rest = np.zeros(np.shape(top)[:-1] + (columns - k,))
    return np.concatenate([np.sign(top), rest], axis=-1)


def times(v, signs):
    return v if is_zero(v) else v * signs


def fix_svd(out, values):
    u, s, vt = out
    k = np.shape(s)[-1]
    u_signs = vector_signs(u, k, np.shape(u)[-1])
    vt_signs = np.swapaxes(vector_signs(u, k, np.shape(vt)[-2]), -1, -2)
    return (times(values[0], u_signs), values[1], times(values[2], vt_signs))


def fix_eigh(out, values):
    n = np.shape(out[1])[-1]
    return (values[0], times(values[1], vector_signs(out[1], n, n)))
