"""mindgrad's speed and memory, measured side by side with its peers.

Run: ``python benchmarks/bench.py [workload ...]``. Eight workloads, each written once against a
NumPy-like module ``xp``, run with every library installed here (a missing one is skipped):

* mindgrad (NumPy), and ``mindgrad.jit`` (``grad(..., jit=True)``, compiled by Numba, where
  Numba is installed: n/a with the reason where the jit path refuses a workload; its first call
  compiles into a fresh Numba cache folder unless ``MINDGRAD_JIT_CACHE`` names one, and Numba's
  import is timed apart, as the peers' imports are);
* HIPS autograd, PyTorch (CPU, eager), JAX eager and ``jax.jit`` (its steady state).

One core (the BLAS and the peers' thread pools are set to one thread before they load), float64.
Per workload and library it prints the gradient time (the median over repeated calls), the
gradient over the NumPy forward pass (the floor's measure), the peak memory of one gradient call
(for the libraries that allocate through NumPy, read by ``tracemalloc``: mindgrad and autograd;
the NumPy forward's own peak is printed beside it), and the first call (a fresh gradient: for
mindgrad, read the source, transform, compile and run; for ``jax.jit``, trace, compile and run).
Then: the build time of straight-line functions of 300 and 3,000 lines, and the first call of a
30-line function.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")
os.environ.setdefault("JAX_ENABLE_X64", "1")

import importlib.util  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
import types  # noqa: E402

import numpy as np  # noqa: E402

import mindgrad  # noqa: E402

WORKLOADS = '''
def mlp(w1, b1, w2, b2, x, y):
    h = xp.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return xp.mean((out - y) ** 2)


def elementwise(x):
    # softplus, and a logsumexp shifted by its maximum
    m = xp.max(x)
    return xp.sum(xp.logaddexp(0.0, x)) + xp.log(xp.sum(xp.exp(x - m))) + m


def rnn(w, u, xs):
    h = xp.zeros(w.shape[0])
    for t in range(50):
        h = xp.tanh(w @ h + u @ xs[t])
    return xp.sum(h * h)


def indexing(x):
    s = 0.0
    for i in range(100):
        s = s + x[i] * x[i + 1] + 0.5 * xp.sum(x[i:i + 4] ** 2)
    return s


def scalar_loop(x):
    h = x
    for i in range(200):
        h = h * 0.99 + xp.sin(h) * 0.01
    return h


def attention(wq, wk, wv, x):
    q = x @ wq
    k = x @ wk
    v = x @ wv
    scores = q @ xp.swapaxes(k, -1, -2) / 8.0
    scores = scores - xp.max(scores, axis=-1, keepdims=True)
    p = xp.exp(scores)
    p = p / xp.sum(p, axis=-1, keepdims=True)
    h = p @ v
    mu = xp.mean(h, axis=-1, keepdims=True)
    y = (h - mu) / xp.sqrt(xp.var(h, axis=-1, keepdims=True) + 1e-5)
    return xp.sum(y * y * 0.5 + y)


def convolution(w, patches):
    # patches: np.lib.stride_tricks.sliding_window_view of the images, (batch, h, w, 3, 3)
    out = xp.einsum("bhwij,kij->bkhw", patches, w)
    return xp.sum(xp.tanh(out) ** 2)


def thirty_lines(x, w, b):
    h = x @ w + b
    h = xp.tanh(h)
    if h.ndim > 1:
        h = h - xp.mean(h, axis=0)
    s = 0.0
    for i in range(3):
        h = h * 0.9 + xp.sin(h) * 0.1
        s = s + xp.sum(h * h)
        if s > 100.0:
            break
    z = xp.exp(-h * h)
    z = z / (1.0 + xp.sum(z))
    norm = xp.sqrt(xp.sum(z * z) + 1e-8)
    total = 0.0
    k = 0
    while k < 2:
        total = total + xp.sum(z) / norm
        k += 1
    r = xp.maximum(h, 0.0)
    r = r * r
    q = xp.where(h > 0, h, 0.1 * h)
    m = xp.max(q) + xp.min(r)
    v = xp.var(h) + xp.std(z)
    y = total + s + m + v
    y = y + xp.sum(xp.clip(h, -0.5, 0.5))
    y = y * 2.0 - xp.sum(xp.abs(q))
    return y
'''


def _inputs():
    """name -> (workload, arguments, the positions differentiated)."""
    rng = np.random.default_rng(0)
    normal = rng.standard_normal

    def mlp(batch, width, outputs):
        return (normal((width, width)) / np.sqrt(width), np.zeros(width),
                normal((width, outputs)) / np.sqrt(width), np.zeros(outputs),
                normal((batch, width)), normal((batch, outputs)))
    images = normal((8, 32, 32))
    return {
        "large MLP": ("mlp", mlp(256, 1024, 10), 0),
        "elementwise": ("elementwise", (normal(1_000_000),), 0),
        "RNN": ("rnn", (normal((128, 128)) * 0.08, normal((128, 32)) * 0.1, normal((50, 32))),
                0),
        "indexing loop": ("indexing", (normal(104),), 0),
        "scalar loop": ("scalar_loop", (np.float64(0.5),), 0),
        "small MLP": ("mlp", mlp(32, 64, 10), 0),
        "attention": ("attention", (normal((64, 64)) * 0.1, normal((64, 64)) * 0.1,
                                    normal((64, 64)) * 0.1, normal((8, 128, 64))), (0, 1, 2)),
        "convolution": ("convolution", (normal((4, 3, 3)) * 0.3, np.ascontiguousarray(
            np.lib.stride_tricks.sliding_window_view(images, (3, 3), axis=(1, 2)))), 0),
    }


def load(module_name, xp):
    """The workloads in a module of their own (a file, so mindgrad can read the source),
    computing with ``xp``."""
    path = os.path.join(tempfile.gettempdir(), f"{module_name}.py")
    with open(path, "w") as f:
        f.write(WORKLOADS)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    module.xp = xp
    spec.loader.exec_module(module)
    sys.modules[module_name] = module
    return module


def median_time(fn, *args, budget=0.6):
    fn(*args)
    start = time.perf_counter()
    fn(*args)
    once = max(time.perf_counter() - start, 1e-7)
    times = []
    for _ in range(max(5, min(3000, int(budget / once)))):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def peak_bytes(fn, *args):
    """The peak of the memory NumPy allocates during one call, over what was held before."""
    fn(*args)
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def first_time(make, *args):
    start = time.perf_counter()
    make()(*args)
    return time.perf_counter() - start


# ----- the peers: each gives (make_gradient, convert_arguments) ----------------------------------

def _mindgrad():
    module = load("mindgrad_bench_np", np)

    def make(name, positions):
        def build():
            mindgrad.clear_cache()
            return mindgrad.grad(getattr(module, name), positions)
        return build
    return make, lambda a: a


def _mindgrad_jit():
    # the benchmarks folder holds a coverage.py, which Numba's import would take for the
    # coverage package: it is imported with that folder off the path
    here = os.path.dirname(os.path.abspath(__file__))
    kept = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        start = time.perf_counter()
        import numba  # noqa: F401
        print(f"(mindgrad.jit: Numba's import took {(time.perf_counter() - start) * 1e3:.0f} ms, "
              f"not in its first calls)")
    finally:
        sys.path[:] = kept
    os.environ.setdefault("MINDGRAD_JIT_CACHE", tempfile.mkdtemp(prefix="mindgrad-jit-"))
    module = load("mindgrad_bench_jit", np)

    def make(name, positions):
        def build():
            mindgrad.clear_cache()
            return mindgrad.grad(getattr(module, name), positions, jit=True)
        return build
    return make, lambda a: a


def _autograd():
    import autograd
    import autograd.numpy as anp
    module = load("mindgrad_bench_autograd", anp)
    return (lambda name, positions: lambda: autograd.grad(getattr(module, name), positions),
            lambda a: a)


def _torch():
    import torch
    torch.set_num_threads(1)

    def reduce(f):
        def run(a, axis=None, keepdims=False):
            return f(a) if axis is None else f(a, dim=axis, keepdim=keepdims)
        return run
    xp = types.SimpleNamespace(
        tanh=torch.tanh, exp=torch.exp, sin=torch.sin, log=torch.log, sqrt=torch.sqrt,
        zeros=lambda n: torch.zeros(n, dtype=torch.float64),
        swapaxes=torch.swapaxes, einsum=torch.einsum,
        sum=reduce(torch.sum), mean=reduce(torch.mean), max=reduce(torch.amax),
        var=lambda a, axis, keepdims: torch.var(a, dim=axis, keepdim=keepdims, unbiased=False),
        logaddexp=lambda a, b: torch.logaddexp(torch.as_tensor(a, dtype=b.dtype), b))
    module = load("mindgrad_bench_torch", xp)

    def make(name, positions):
        fn = getattr(module, name)
        wrt = positions if isinstance(positions, tuple) else (positions,)

        def gradient(*args):
            args = [a.detach().requires_grad_(i in wrt) if isinstance(a, torch.Tensor) else a
                    for i, a in enumerate(args)]
            return torch.autograd.grad(fn(*args), [args[i] for i in wrt])
        return lambda: gradient
    return make, lambda a: tuple(torch.from_numpy(np.asarray(v)) for v in a)


def _jax(jit):
    import jax
    import jax.numpy as jnp
    module = load("mindgrad_bench_jax", jnp)

    def make(name, positions):
        def build():
            gradient = jax.grad(getattr(module, name), positions)
            gradient = jax.jit(gradient) if jit else gradient
            return lambda *args: jax.block_until_ready(gradient(*args))
        return build
    return make, lambda a: tuple(jnp.asarray(v) for v in a)


PEERS = {
    "mindgrad": lambda: _mindgrad(),
    "mindgrad.jit": _mindgrad_jit,
    "autograd": _autograd,
    "torch": _torch,
    "jax": lambda: _jax(False),
    "jax.jit": lambda: _jax(True),
}
TRACED = ("mindgrad", "autograd")


def main(selected=()):
    numpy_module = load("mindgrad_bench_forward", np)
    peers = {}
    for name, setup in PEERS.items():
        try:
            peers[name] = setup()
        except ImportError as error:
            print(f"({name} skipped: {error})")
    header = (f"{'workload':14} {'library':13} {'grad':>10} {'grad/fwd':>9} {'peak MiB':>9} "
              f"{'first':>9}")
    for label, (name, args, positions) in _inputs().items():
        if selected and label not in selected and name not in selected:
            continue
        forward = getattr(numpy_module, name)
        t_fwd = median_time(forward, *args)
        print(f"\n{label}: NumPy forward {t_fwd * 1e3:.3f} ms, peak "
              f"{peak_bytes(forward, *args) / 2**20:.1f} MiB")
        print(header)
        for peer, (make, convert) in peers.items():
            converted = convert(args)
            try:
                t_first = first_time(make(name, positions), *converted)
                gradient = make(name, positions)()
                t_grad = median_time(gradient, *converted)
            except Exception as error:  # a peer that cannot run a workload says so
                print(f"{label:14} {peer:13} {'n/a':>10}  ({type(error).__name__}: "
                      f"{str(error).splitlines()[0][:70]})")
                continue
            peak = (f"{peak_bytes(gradient, *converted) / 2**20:9.1f}" if peer in TRACED
                    else f"{'-':>9}")
            print(f"{label:14} {peer:13} {t_grad * 1e3:8.3f}ms {t_grad / t_fwd:8.2f}x {peak} "
                  f"{t_first * 1e3:7.1f}ms")
    if not selected:
        build_times(numpy_module)


def straight_line(lines):
    body = "\n".join(f"    x = xp.sin(x) * {1 + i % 7}.0 + x * 0.5" for i in range(lines))
    return f"def f(x):\n{body}\n    return xp.sum(x)\n"


def build_times(numpy_module):
    from mindgrad.compiler import driver
    rng = np.random.default_rng(1)
    args = (rng.standard_normal((8, 4)), rng.standard_normal((4, 6)), rng.standard_normal(6))
    make = _mindgrad()[0]("thirty_lines", 0)
    numpy_module.thirty_lines(*args)
    t_first = statistics.median(first_time(make, *args) for _ in range(5))
    print(f"\nfirst call of the 28-line function thirty_lines: {t_first * 1e3:.1f} ms")
    for lines in (300, 3000):
        path = os.path.join(tempfile.gettempdir(), f"mindgrad_bench_lines{lines}.py")
        with open(path, "w") as f:
            f.write(straight_line(lines))
        spec = importlib.util.spec_from_file_location(f"mindgrad_bench_lines{lines}", path)
        module = importlib.util.module_from_spec(spec)
        module.xp = np
        spec.loader.exec_module(module)
        start = time.perf_counter()
        driver.run(module.f, (0,))
        print(f"build of a {lines}-line straight-line function: "
              f"{time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main(tuple(sys.argv[1:]))
