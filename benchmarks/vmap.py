"""vmap's batched code, measured: per-example gradients and Jacobians, against the loop over
examples they replace, the forward pass, and the peers installed (autograd; JAX's and
PyTorch's vmap where installed).

Run: ``python benchmarks/vmap.py``. Every time is a median over repeated calls (after a first
call that builds the code). Rows:

* per-example gradients of a small MLP (batch 64): ``vmap(grad(loss), in_axes=(None, None,
  None, 0, 0))``, against the loop ``[grad(loss)(w, b, v, x[i], y[i]) for i in range(64)]``
  (what vmap ran before its batched code) and the batched forward pass;
* the Jacobian of a function of 100 inputs and 100 outputs: ``jacrev`` and ``jacfwd``, against
  their loops (one gradient with a unit sensitivity per row, one tangent per column).
"""

from __future__ import annotations

import numpy as np
from timing import median_time  # benchmarks/timing.py

import mindgrad


def mlp_loss(w1, b1, w2, x, y):
    h = np.tanh(x @ w1 + b1)
    return np.mean((h @ w2 - y) ** 2)


def vector_fn(x):
    return np.tanh(W100 @ x) * x


RNG = np.random.default_rng(0)
W100 = RNG.normal(size=(100, 100)) / 10


def per_example_rows():
    w1, b1, w2 = RNG.normal(size=(10, 32)), RNG.normal(size=32), RNG.normal(size=32)
    x, y = RNG.normal(size=(64, 10)), RNG.normal(size=64)
    args = (w1, b1, w2, x, y)
    grad = mindgrad.grad(mlp_loss, (0, 1, 2))
    per_example = mindgrad.vmap(grad, in_axes=(None, None, None, 0, 0))
    forward = mindgrad.vmap(mlp_loss, in_axes=(None, None, None, 0, 0))
    rows = {
        "vmap(grad)": median_time(lambda: per_example(*args)),
        "loop of grad": median_time(lambda: [grad(w1, b1, w2, x[i], y[i]) for i in range(64)]),
        "batched forward": median_time(lambda: forward(*args)),
    }
    try:
        import autograd
        import autograd.numpy as anp

        def aloss(w1, b1, w2, x, y):
            h = anp.tanh(x @ w1 + b1)
            return anp.mean((h @ w2 - y) ** 2)

        agrad = autograd.grad(aloss, (0, 1, 2))
        rows["autograd loop"] = median_time(
            lambda: [agrad(w1, b1, w2, x[i], y[i]) for i in range(64)], 5)
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp

        def jloss(w1, b1, w2, x, y):
            h = jnp.tanh(x @ w1 + b1)
            return jnp.mean((h @ w2 - y) ** 2)

        jitted = jax.jit(jax.vmap(jax.grad(jloss, (0, 1, 2)), in_axes=(None,) * 3 + (0, 0)))
        rows["jax vmap(grad) jit"] = median_time(
            lambda: jax.block_until_ready(jitted(*args)))
    except ImportError:
        pass
    try:
        import torch
        from torch.func import grad as tgrad
        from torch.func import vmap as tvmap

        def tloss(w1, b1, w2, x, y):
            h = torch.tanh(x @ w1 + b1)
            return torch.mean((h @ w2 - y) ** 2)

        targs = [torch.tensor(a) for a in args]
        tper = tvmap(tgrad(tloss, (0, 1, 2)), in_dims=(None,) * 3 + (0, 0))
        rows["torch vmap(grad)"] = median_time(lambda: tper(*targs))
    except ImportError:
        pass
    return rows


def jacobian_rows():
    x = RNG.normal(size=100)
    rows = {}
    jr, jf = mindgrad.jacrev(vector_fn), mindgrad.jacfwd(vector_fn)
    rows["jacrev"] = median_time(lambda: jr(x))
    sens_grad = mindgrad.grad(vector_fn, sens_param=True)
    basis = list(np.eye(100))
    rows["jacrev as a loop"] = median_time(lambda: np.stack([sens_grad(x, e) for e in basis]))
    rows["jacfwd"] = median_time(lambda: jf(x))
    rows["jacfwd as a loop"] = median_time(
        lambda: np.stack([mindgrad.jvp(vector_fn, (x,), (e,))[1] for e in basis], axis=-1))
    rows["forward"] = median_time(lambda: vector_fn(x))
    return rows


def show(title, rows, base, forward):
    print(f"\n{title}")
    print(f"{'':24}{'median':>12}{'/ ' + base:>22}{'/ ' + forward:>22}")
    for name, t in rows.items():
        print(f"{name:24}{t * 1e3:>10.3f}ms{t / rows[base]:>22.2f}{t / rows[forward]:>22.2f}")


def main():
    show("per-example gradients, MLP 10-32-1, batch 64", per_example_rows(), "vmap(grad)",
         "batched forward")
    show("Jacobian of tanh(W x) * x, 100 inputs, 100 outputs", jacobian_rows(), "jacrev",
         "forward")
    print("\n(the second column: how many times the row's time is the first row's)")


if __name__ == "__main__":
    main()
