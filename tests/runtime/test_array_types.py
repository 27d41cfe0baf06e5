"""Arrays of other libraries that compute through NumPy's dispatch (``runtime.arrays``): Dask's,
on a cluster, and CuPy's, on a GPU.

The corpus on Dask arrays is ``tests/corpus/test_dask_corpus.py``. Here: which types are taken
and which refused, with what message; the results' types (a Dask input's gradient lazy, with
its chunks; a NumPy weight's beside a Dask batch); the example on a ``LocalCluster`` whose
workers hold less memory than the data; and the same gradients on CuPy arrays where CuPy and a
GPU are present (skipped with the reason otherwise).
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mindgrad
from mindgrad.runtime import arrays

ROOT = Path(__file__).resolve().parents[2]


def loss(w, x, y):
    z = x @ w
    return np.mean(np.logaddexp(0.0, z) - y * z)


def features(x, scale):
    h = np.tanh(x * scale)
    return np.sum(h[1:] * h[:-1]) + np.sum(np.max(h, axis=0) ** 2)


def test_the_types_are_known_without_importing_their_libraries():
    code = ("import sys, mindgrad; "
            "print(sorted(m for m in ('dask', 'distributed', 'cupy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
    assert arrays.library(np.ndarray) is None
    assert not arrays.is_dispatching(np.ones(2)) and arrays.eager(np.ones(2), 1.0)


def test_refused_types_keep_their_message():
    x = np.ones((3, 2))
    for value in (np.ma.array(x), np.asmatrix(x)):
        with pytest.raises(TypeError, match="computes by rules of its own"):
            mindgrad.grad(loss, 1)(np.ones(2), value, np.ones(3))


# ----- Dask ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def da():
    pytest.importorskip("distributed")
    return pytest.importorskip("dask.array")


def _data(rng, rows=40, cols=3):
    x = rng.standard_normal((rows, cols))
    y = (rng.random(rows) < 0.5).astype(float)
    return rng.standard_normal(cols) * 0.3, x, y


def test_dask_gradients_are_lazy_with_the_inputs_chunks(da):
    import dask

    w, x, y = _data(np.random.default_rng(0))
    dx, dy = da.from_array(x, chunks=(15, 3)), da.from_array(y, chunks=15)
    assert arrays.library(type(dx)) == "Dask" and arrays.is_lazy(dx)
    want = mindgrad.grad(loss, (0, 1, 2))(w, x, y)

    def refuse(*args, **kwargs):
        raise AssertionError("computed while the gradient was built")

    with dask.config.set(scheduler=refuse):
        got = mindgrad.grad(loss, (0, 1, 2))(w, dx, dy)
    assert all(isinstance(g, da.Array) for g in got)  # the weight's too: computed with them
    assert got[1].chunks == dx.chunks and got[2].chunks == dy.chunks
    for g, v in zip(dask.compute(*got, scheduler="synchronous"), want):
        np.testing.assert_allclose(g, v, rtol=1e-12, atol=1e-15)
    # the closed form, an oracle independent of mindgrad
    p = 1 / (1 + np.exp(-(x @ w)))
    np.testing.assert_allclose(want[0], x.T @ (p - y) / len(y), rtol=1e-12)


def test_dask_array_of_unknown_shape_is_refused_by_name(da):
    w, x, y = _data(np.random.default_rng(1))
    dx = da.from_array(x, chunks=(15, 3))
    masked = dx[dx[:, 0] > 0]
    with pytest.raises(ValueError, match=r"input 1 is a dask\.array\.core\.Array of unknown "
                                         r"shape.*compute_chunk_sizes"):
        mindgrad.grad(loss)(w, masked, y[:5])


def test_dask_index_gradients(da):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 2))
    dx = da.from_array(x, chunks=(4, 2))

    def gather(x):  # repeated integer indices, and a basic index with a new axis
        return np.sum(x[np.array([0, 2, 2, 5])] ** 2) + np.sum(x[1:3, None] * 3.0)

    np.testing.assert_allclose(mindgrad.grad(gather)(dx).compute(), mindgrad.grad(gather)(x))

    def by_mask(x):
        return np.sum(x[x > 0])

    with pytest.raises(mindgrad.runtime.GradientError, match="boolean mask on Dask arrays"):
        mindgrad.grad(by_mask)(dx)


def test_dask_scatter_gradients(da):
    """np.take, np.repeat and np.pad add copies back with np.add.at on NumPy; on Dask, by
    np.bincount per trailing element, up to a bound past which they are refused by name."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 3))
    dx = da.from_array(x, chunks=(2, 3))

    def copies(x):
        taken = np.take(x, np.array([0, 4, 4, 1]), axis=0)
        return np.sum(taken * np.arange(3.0)) + np.sum(np.repeat(x, 3, axis=0) ** 2) \
            + np.sum(np.pad(x, ((1, 2), (0, 1)), mode="reflect") ** 3)

    gradient = mindgrad.grad(copies)
    np.testing.assert_allclose(gradient(dx).compute(scheduler="synchronous"), gradient(x),
                               rtol=1e-12)

    def wide(x):
        return np.sum(np.take(x, np.array([0, 2, 2]), axis=0) ** 2)

    wide_x = da.from_array(rng.standard_normal((3, 300)), chunks=(2, 300))
    with pytest.raises(mindgrad.runtime.GradientError, match=r"np\.take on Dask arrays"):
        mindgrad.grad(wide)(wide_x)


def test_dask_example_with_data_larger_than_a_workers_memory(tmp_path):
    pytest.importorskip("distributed")
    pytest.importorskip("dask.array")
    script = ROOT / "examples" / "dask_logistic_regression.py"
    out = subprocess.run(
        [sys.executable, str(script), "--gigabytes", "0.75", "--worker-memory", "0.6GB",
         "--steps", "2"], capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-3000:]
    text = out.stdout
    assert "(matches)" in text, text
    assert "def grad_loss(w, x, y, *, sens):" in text
    loss_values = [float(line.split()[3]) for line in text.splitlines()
                   if line.startswith("step ")]
    assert len(loss_values) == 2
    assert loss_values[1] < loss_values[0] == pytest.approx(np.log(2), abs=1e-5)
    peaks = [line for line in text.splitlines() if line.startswith("worker ")]
    assert len(peaks) == 2
    for line in peaks:  # every worker stayed under its limit, which the data exceeds
        assert int(line.split("(")[1].split("%")[0]) < 100, line


# ----- CuPy ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cp():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("CuPy finds no GPU")
    except Exception as e:  # noqa: BLE001 (CuPy's CUDA errors)
        pytest.skip(f"CuPy finds no GPU: {e}")
    return cupy


def test_cupy_gradients_equal_numpys(cp):
    rng = np.random.default_rng(3)
    w, x, y = _data(rng, rows=64, cols=8)
    got = mindgrad.grad(loss, (0, 1, 2))(cp.asarray(w), cp.asarray(x), cp.asarray(y))
    want = mindgrad.grad(loss, (0, 1, 2))(w, x, y)
    for g, v in zip(got, want):
        assert isinstance(g, cp.ndarray)
        np.testing.assert_allclose(cp.asnumpy(g), v, rtol=1e-10, atol=1e-14)
    xs = rng.standard_normal((5, 4))
    got = mindgrad.grad(features, (0, 1))(cp.asarray(xs), 0.7)
    want = mindgrad.grad(features, (0, 1))(xs, 0.7)
    np.testing.assert_allclose(cp.asnumpy(got[0]), want[0], rtol=1e-10)
    np.testing.assert_allclose(float(got[1]), want[1], rtol=1e-10)
    _, tangent = mindgrad.jvp(features, (cp.asarray(xs), 0.7), (cp.ones_like(cp.asarray(xs)),
                                                                None))
    np.testing.assert_allclose(float(tangent), float(np.sum(want[0])), rtol=1e-10)


def test_cupy_with_a_numpy_weight_follows_numpys_dispatch(cp):
    w, x, y = _data(np.random.default_rng(4))
    args = (w, cp.asarray(x), cp.asarray(y))
    try:
        loss(*args)
    except Exception as e:  # noqa: BLE001 (whatever CuPy raises, the gradient raises too)
        with pytest.raises(type(e)):
            mindgrad.grad(loss)(*args)
    else:
        got = mindgrad.grad(loss)(*args)
        np.testing.assert_allclose(cp.asnumpy(cp.asarray(got)), mindgrad.grad(loss)(w, x, y),
                                   rtol=1e-10)
