"""The cost of calling through the run-time dispatcher (``mindgrad.api.dynamic``), measured.

Run: ``python benchmarks/dynamic_calls.py`` (``pip install autograd`` adds the peer column).

Each workload is written twice: ``static`` calls its helper by its global name (the callee is
built with the caller), ``dynamic`` reaches the same helper through a parameter's default (the
run-time dispatcher builds it for the kinds it receives). Every time is a median over repeated
calls. Columns:

* fwd: the plain function; static, dynamic: the gradient (cache hits); dyn-static: what the
  dispatcher adds to a call, in microseconds; dynamic/static;
* fresh: the dynamic gradient given a closure made afresh at each call (the code built for
  the first is given the new closure's cells);
* autograd: ``autograd.grad`` of the dynamic form, and autograd/dynamic;
* first static, first dynamic: the first call of a fresh gradient (read source, transform,
  compile, run), each on functions never built before, and first dynamic / first static;
  callee: the first call of a gradient of the helper alone, and first dynamic / (first static
  + callee), which is at most 1 where the dispatcher's first call costs no more than the
  static path's plus the callee's build.
"""

from __future__ import annotations

import importlib.util
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import mindgrad

try:
    import autograd
    import autograd.numpy as anp
except ImportError:  # the peer column is optional
    autograd = anp = None

WORKLOADS = '''
def helper_small(t):
    return xp.sin(t) * t + t * t


def helper_mlp(t):
    h = xp.tanh(t @ W1)
    return xp.tanh(h @ W2)


def small_static(x):
    return xp.sum(helper_small(x) * x)


def small_dynamic(x, fn=helper_small):
    return xp.sum(fn(x) * x)


def mlp_static(x):
    return xp.sum(helper_mlp(x) ** 2)


def mlp_dynamic(x, fn=helper_mlp):
    return xp.sum(fn(x) ** 2)


def apply(fn, x):
    return xp.sum(fn(x) ** 2)
'''

SIZES = {"small": (64,), "mlp": (256, 128)}  # the input's shape
_modules = itertools.count()


def load(xp):
    """The workloads as a fresh module (fresh functions: nothing built for them yet)."""
    path = Path(tempfile.mkdtemp()) / f"dyn_workloads_{next(_modules)}.py"
    path.write_text("import numpy as np\n" + WORKLOADS)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    rng = np.random.default_rng(0)
    module.xp = xp
    module.W1 = rng.standard_normal((128, 128)) / 12
    module.W2 = rng.standard_normal((128, 64)) / 12
    return module


def median_time(fn, repeat=7, target=0.05):
    fn()
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - t0 > target or number > 1 << 16:
            break
        number *= 2
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def first_call(make, x, repeat=3):
    times = []
    for _ in range(repeat):
        fn = make()
        t0 = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(m, name, shape):
    """One row: the times of ``name``'s workload on an input of ``shape``."""
    x = np.random.default_rng(1).uniform(0.5, 1.5, shape)
    static, dynamic = getattr(m, f"{name}_static"), getattr(m, f"{name}_dynamic")
    g_static, g_dynamic = mindgrad.grad(static), mindgrad.grad(dynamic)
    helper = getattr(m, f"helper_{name}")
    g_apply = mindgrad.grad(m.apply, 1)
    fwd = median_time(lambda: static(x))
    t_static = median_time(lambda: g_static(x))
    t_dynamic = median_time(lambda: g_dynamic(x))
    t_fresh = median_time(lambda: g_apply(lambda t: helper(t), x))
    peer = None
    if autograd is not None:
        a_dynamic = autograd.grad(getattr(load(anp), f"{name}_dynamic"))
        peer = median_time(lambda: a_dynamic(x))

    def fresh(kind):
        def make():
            return mindgrad.grad(getattr(load(np), f"{name}_{kind}"))
        return make

    def fresh_callee():
        module = load(np)
        return mindgrad.grad(lambda t: module.xp.sum(getattr(module, f"helper_{name}")(t)))

    return (name, fwd, t_static, t_dynamic, t_fresh, peer, first_call(fresh("static"), x),
            first_call(fresh("dynamic"), x), first_call(fresh_callee, x))


def main():
    m = load(np)
    rows = [measure(m, name, shape) for name, shape in SIZES.items()]
    print(f"{'workload':9} {'fwd':>9} {'static':>9} {'dynamic':>9} {'dyn-static':>10} "
          f"{'dyn/stat':>8} {'fresh':>9} {'autograd':>9} {'ag/dyn':>6} {'first st':>9} "
          f"{'first dyn':>9} {'ratio':>6} {'callee':>8} {'dyn/(st+callee)':>15}")
    for name, fwd, ts, td, tf, peer, fs, fd, fc in rows:
        peer_s = f"{peer * 1e6:8.1f}u" if peer else f"{'-':>9}"
        ratio = f"{peer / td:6.2f}" if peer else f"{'-':>6}"
        print(f"{name:9} {fwd * 1e6:8.1f}u {ts * 1e6:8.1f}u {td * 1e6:8.1f}u "
              f"{(td - ts) * 1e6:9.1f}u {td / ts:8.2f} {tf * 1e6:8.1f}u {peer_s} {ratio} "
              f"{fs * 1e3:8.1f}m {fd * 1e3:8.1f}m {fd / fs:6.2f} {fc * 1e3:7.1f}m "
              f"{fd / (fs + fc):15.2f}")
    print("times are medians; u = microseconds, m = milliseconds")


if __name__ == "__main__":
    main()
