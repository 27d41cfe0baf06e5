"""Inputs for the svd and eigh rule checks, shared by test_rules.py and test_tangents.py: each
file draws from its own generator, so its other inputs stay as they are."""

import numpy as np


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
