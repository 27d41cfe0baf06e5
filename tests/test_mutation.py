"""Arrays are mutable: index assignment, in-place operators and views must differentiate as
NumPy runs them, or be refused at the user's line. Oracles: central finite differences
(``check_grads``) and the plain function itself."""

import numpy as np
import pytest

import mindgrad as mg

RNG = np.random.default_rng(7)


def r(*shape):
    return RNG.standard_normal(shape)


# ----- repeated advanced indices in a write: NumPy keeps one write per element -----------------


def write_repeated(b, t):
    b = b * 1.0
    b[np.array([0, 0])] = t
    return np.sum(b * b * t[0])


def scale_repeated(b):
    b = b * 1.0
    b[np.array([2, 2])] *= 1.11
    return np.sum(b * b)


def write_repeated_rows(a, t):
    a = a * 1.0
    a[[1, 0, 1]] = t
    return np.sum(np.sin(a) * a)


def write_repeated_scalar(b, s):
    b = b * 1.0
    b[np.array([1, 1, 2])] = s * s
    return np.sum(b * b)


@pytest.mark.parametrize("fn, args", [
    (write_repeated, (r(3), r(2))),
    (scale_repeated, (r(4),)),
    (write_repeated_rows, (r(2, 3), r(3, 3))),
    (write_repeated_rows, (r(2, 3), r(3))),          # broadcast over the written rows
    (write_repeated_scalar, (r(4), 0.7)),
    (write_repeated_scalar, (r(4), np.float64(-1.3))),
])
def test_repeated_index_write_counts_once(fn, args):
    mg.check_grads(fn, args, modes=("rev", "fwd"), order=2)


def test_repeated_index_write_float32():
    b, t = np.float32(r(3)), np.float32(r(2))
    g_b, g_t = mg.grad(write_repeated, (0, 1))(b, t)
    assert g_b.dtype == g_t.dtype == np.float32
    ref = mg.grad(write_repeated, (0, 1))(b.astype(np.float64), t.astype(np.float64))
    np.testing.assert_allclose(g_t, ref[1], rtol=1e-5)
    np.testing.assert_allclose(g_b, ref[0], rtol=1e-5)
    # only the last write of t survives: t[0]'s gradient comes from the factor t[0] alone
    b64, t64 = b.astype(np.float64), t.astype(np.float64)
    kept = b64 * 1.0
    kept[0] = t64[1]
    np.testing.assert_allclose(ref[1][0], np.sum(kept * kept), rtol=1e-12)
