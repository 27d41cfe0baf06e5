"""Taylor mode, measured: ``mindgrad.jet`` by its Taylor code at orders 1 to 8, against forward
mode nested once per order (what ``jet`` runs where it has no Taylor code) and JAX's
``jax.experimental.jet`` where JAX is installed.

Run: ``python benchmarks/taylor.py``. Each time is a median over repeated calls after a first
call that builds the code; "first" is that first call (read the source, write, compile, run).
Nested forward mode is measured up to the order whose first call passes 20 seconds (its cost
grows about 3.5 times per order). The function: ``sum(tanh(W @ x) * exp(-x * x))``, 20 inputs.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from timing import first_and_median  # benchmarks/timing.py

import mindgrad
from mindgrad.api import taylor

RNG = np.random.default_rng(0)
W = RNG.normal(size=(20, 20)) / 5
X = RNG.normal(size=20)


def f(x):
    return np.sum(np.tanh(W @ x) * np.exp(-x * x))






def jax_jet(order):
    try:
        import jax
        import jax.numpy as jnp
        from jax.experimental import jet
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    w = jnp.asarray(W)

    def g(x):
        return jnp.sum(jnp.tanh(w @ x) * jnp.exp(-x * x))

    series = [jnp.asarray(RNG.normal(size=20)) for _ in range(order)]
    run = jax.jit(lambda x: jet.jet(g, (x,), (series,)))
    x = jnp.asarray(X)
    return first_and_median(lambda: jax.block_until_ready(run(x)))


def main():
    print(f"{'order':>5}{'taylor code':>14}{'first':>10}{'nested jvp':>14}{'first':>10}"
          f"{'nested/taylor':>15}{'jax jet (jit)':>15}{'jax/taylor':>12}")
    nested_allowed = True
    for order in range(1, 9):
        series = RNG.normal(size=(order, 20))
        first, med = first_and_median(functools.partial(mindgrad.jet, f, X, series))
        row = f"{order:>5}{med * 1e3:>12.3f}ms{first:>9.2f}s"
        if nested_allowed:
            coefficients = [series[k] / math.factorial(k + 1) for k in range(order)]
            out = f(X)
            n_first, n_med = first_and_median(
                functools.partial(taylor.nested, f, (X,), coefficients, order, out), 3)
            nested_allowed = n_first < 20.0
            row += f"{n_med * 1e3:>12.3f}ms{n_first:>9.2f}s{n_med / med:>15.1f}"
        else:
            row += f"{'(skipped)':>14}{'':>10}{'':>15}"
        found = jax_jet(order)
        if found is not None:
            row += f"{found[1] * 1e3:>13.3f}ms{found[1] / med:>12.2f}"
        print(row, flush=True)


if __name__ == "__main__":
    main()
