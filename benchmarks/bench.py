"""mindgrad's speed, measured: gradient time against the forward pass and against HIPS autograd.

Run: ``python benchmarks/bench.py`` (``pip install autograd`` adds the peer column).
Every time is a median over repeated calls. Columns:

* fwd: the plain function; grad: mindgrad's gradient (a cache hit); grad/fwd;
* autograd: ``autograd.grad`` on the same function (numpy as ``autograd.numpy``), and
  autograd/grad, how many times slower autograd is than mindgrad;
* first: the first call of a fresh gradient (read source, transform, compile, run);
* hit overhead: a cache-hit call minus a direct call of the generated function.
"""

from __future__ import annotations

import functools
import importlib
import statistics
import sys
import time

import numpy as np

import mindgrad
from mindgrad.compiler import driver as pipeline

try:
    import autograd
    import autograd.numpy as anp
except ImportError:  # the peer column is optional
    autograd = anp = None

# ----- the workloads, written once against a numpy-like module `xp` ---------------------------

WORKLOADS = '''
def scalar_loop(x):
    h = x
    for i in range(200):
        h = h * 0.99 + xp.sin(h) * 0.01
    return h


def scalar_loop_math(x):
    h = x
    for i in range(200):
        h = h * 0.99 + math.sin(h) * 0.01
    return h


def mlp(w1, b1, w2, b2, x, y):
    h = xp.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return xp.mean((out - y) ** 2)


def elementwise(x):
    return xp.sum(xp.exp(-x * x) * xp.sin(3.0 * x) + 0.5 * x * x)


def rnn(w, u, xs):
    h = xp.zeros(w.shape[0])
    for t in range(50):
        h = xp.tanh(w @ h + u @ xs[t])
    return xp.sum(h * h)


def indexing(x):
    s = 0.0
    for i in range(1, 100):
        s = s + x[i] * x[i - 1] + 0.1 * x[i] ** 2
    return s


def energy(x):
    pairs = xp.log1p(xp.exp(x[1:] * x[:-1]))
    return xp.sum(pairs) + 0.5 * xp.sum(x * x) + xp.sum(xp.sin(x) ** 3)


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


def load(module_name, xp):
    """The workloads in a module of their own (a file, so mindgrad can read the source),
    computing with ``xp``: numpy, or autograd's wrapped numpy."""
    import importlib.util
    import os
    import tempfile

    path = os.path.join(tempfile.gettempdir(), f"mindgrad_bench_{module_name}.py")
    with open(path, "w") as f:
        f.write("import math\n" + WORKLOADS)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    module.xp = xp
    spec.loader.exec_module(module)
    sys.modules[module_name] = module
    return module


def median_time(fn, *args, repeat=None, budget=0.4):
    fn(*args)
    start = time.perf_counter()
    fn(*args)
    once = max(time.perf_counter() - start, 1e-7)
    repeat = repeat or max(5, min(2000, int(budget / once)))
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def inputs():
    rng = np.random.default_rng(0)
    return {
        "scalar_loop": ((0.5,), 0),
        "scalar_loop_math": ((0.5,), 0),
        "mlp": ((rng.standard_normal((16, 32)) * 0.3, np.zeros(32),
                 rng.standard_normal((32, 1)) * 0.3, np.zeros(1),
                 rng.standard_normal((64, 16)), rng.standard_normal((64, 1))), (0, 1, 2, 3)),
        "elementwise": ((rng.standard_normal(1_000_000),), 0),
        "rnn": ((rng.standard_normal((16, 16)) * 0.3, rng.standard_normal((16, 8)) * 0.3,
                 rng.standard_normal((50, 8))), (0, 1)),
        "indexing": ((rng.standard_normal(100),), 0),
        "attention": ((rng.standard_normal((64, 64)) * 0.1, rng.standard_normal((64, 64)) * 0.1,
                       rng.standard_normal((64, 64)) * 0.1,
                       rng.standard_normal((8, 128, 64))), (0, 1, 2)),
        "convolution": ((rng.standard_normal((4, 3, 3)) * 0.3,
                         np.lib.stride_tricks.sliding_window_view(
                             rng.standard_normal((8, 32, 32)), (3, 3), axis=(1, 2))), 0),
    }


def first_call(fn, args, positions):
    mindgrad.clear_cache()
    grad = mindgrad.grad(fn, positions)
    start = time.perf_counter()
    grad(*args)
    return time.perf_counter() - start


def main():
    np_mod = load("mindgrad_bench_np", np)
    ag_mod = load("mindgrad_bench_ag", anp) if anp is not None else None
    header = (f"{'workload':18} {'fwd':>10} {'grad':>10} {'grad/fwd':>9} {'autograd':>10} "
              f"{'ag/grad':>8} {'first':>9} {'hit overhead':>13}")
    print(header)
    print("-" * len(header))
    for name, (args, positions) in inputs().items():
        fn = getattr(np_mod, name)
        grad = mindgrad.grad(fn, positions)
        grad(*args)
        t_fwd = median_time(fn, *args)
        t_grad = median_time(grad, *args)
        generated = grad._generated(args).function
        t_direct = median_time(functools.partial(generated, sens=None), *args)
        t_first = first_call(fn, args, positions)
        ag = f"{'-':>10} {'-':>8}"
        if ag_mod is not None:
            try:
                ag_grad = autograd.grad(getattr(ag_mod, name), positions)
                t_ag = median_time(ag_grad, *args)
                ag = f"{t_ag * 1e3:8.3f}ms {t_ag / t_grad:7.1f}x"
            except TypeError:  # e.g. autograd cannot trace math.sin on a float
                ag = f"{'n/a':>10} {'n/a':>8}"
        print(f"{name:18} {t_fwd * 1e3:8.3f}ms {t_grad * 1e3:8.3f}ms {t_grad / t_fwd:8.2f}x "
              f"{ag} {t_first * 1e3:7.1f}ms {max(t_grad - t_direct, 0) * 1e6:10.1f}us")
    # first call of a 30-line function: source, transform, compile and one run
    rng = np.random.default_rng(1)
    args = (rng.standard_normal((8, 4)), rng.standard_normal((4, 6)), rng.standard_normal(6))
    t_first = statistics.median(first_call(np_mod.thirty_lines, args, 0) for _ in range(5))
    lines = len(importlib.import_module("inspect").getsource(np_mod.thirty_lines).splitlines())
    t_build = statistics.median(
        _time(lambda: pipeline.run(np_mod.thirty_lines, (0,))) for _ in range(5))
    print(f"\nfirst call of a {lines}-line function: {t_first * 1e3:.1f} ms "
          f"(of which transform + compile {t_build * 1e3:.1f} ms)")
    # Hessian-vector product, forward over reverse, of a 1,000-parameter function
    rng = np.random.default_rng(2)
    x, v = rng.standard_normal(1000), rng.standard_normal(1000)
    gradient = mindgrad.grad(np_mod.energy)
    t_grad = median_time(gradient, x)
    t_hvp = median_time(lambda a: mindgrad.jvp(gradient, (a,), (v,)), x)
    row = f"HVP of a 1,000-parameter function: {t_hvp * 1e3:.3f} ms, gradient " \
          f"{t_grad * 1e3:.3f} ms, HVP/gradient {t_hvp / t_grad:.2f}x"
    if ag_mod is not None:
        ag_grad = autograd.grad(ag_mod.energy)
        ag_hvp = autograd.grad(lambda a: anp.sum(ag_grad(a) * v))
        row += f"; autograd's HVP {median_time(ag_hvp, x) * 1e3:.3f} ms"
    print(row)


def _time(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
