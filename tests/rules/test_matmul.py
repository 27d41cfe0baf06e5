"""``x @ y`` and ``np.matmul`` for every pairing of ranks NumPy accepts: 1-D on either side of an
N-D stack, broadcast batch dimensions, in reverse and forward mode and at second order."""

import numpy as np
import pytest

import mindgrad as mg

SHAPES = [((3,), (3,)), ((3,), (3, 4)), ((3,), (2, 3, 4)), ((3,), (3, 3, 4)),
          ((3,), (5, 2, 3, 4)), ((4, 3), (3,)), ((2, 4, 3), (3,)), ((3, 4, 3), (3,)),
          ((4, 3), (3, 2)), ((2, 4, 3), (3, 2)), ((4, 3), (2, 3, 2)), ((2, 1, 4, 3), (5, 3, 2)),
          ((1, 4, 3), (2, 3, 5))]


def sin_of_product(x, y):
    return np.sum(np.sin(x @ y))


def sin_of_np_matmul(x, y):
    return np.sum(np.sin(np.matmul(x, y)))


@pytest.mark.parametrize("fn", [sin_of_product, sin_of_np_matmul], ids=lambda fn: fn.__name__)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_matmul_of_every_rank_pairing(fn, shapes):
    rng = np.random.default_rng(7)
    x, y = (rng.standard_normal(s) for s in shapes)
    mg.check_grads(fn, (x, y), modes=("rev", "fwd"), order=2)


def test_vector_times_stack_whose_batch_equals_its_length():
    # batch size == len(v): the old adjoint put the axes in the wrong order without an error
    rng = np.random.default_rng(1)
    v, b = rng.standard_normal(3), rng.standard_normal((3, 3, 4))
    u = rng.standard_normal((3, 4))
    gv, gb = mg.grad(lambda v, b: np.sum((v @ b) * u), (0, 1))(v, b)
    np.testing.assert_allclose(gb, v[None, :, None] * u[:, None, :])
    np.testing.assert_allclose(gv, np.einsum("bnm,bm->n", b, u))


def test_float32_stack_keeps_its_dtype():
    rng = np.random.default_rng(2)
    v, b = rng.standard_normal(3).astype(np.float32), rng.standard_normal((2, 3, 4)).astype(
        np.float32)
    gv, gb = mg.grad(sin_of_product, (0, 1))(v, b)
    assert gv.dtype == gb.dtype == np.float32
    ref = mg.grad(sin_of_product, (0, 1))(v.astype(float), b.astype(float))
    np.testing.assert_allclose(gv, ref[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gb, ref[1], rtol=1e-4, atol=1e-5)
