"""The README's first example: the gradient of a small model, and the code mindgrad wrote."""

import numpy as np

import mindgrad


def loss(w, x, y):
    h = np.tanh(x @ w)
    for _ in range(3):
        h = h * 0.5 + np.sin(h)
    return np.mean((h - y) ** 2)


rng = np.random.default_rng(0)
w = rng.standard_normal(3)
x = rng.standard_normal((8, 3))
y = rng.standard_normal(8)

dloss = mindgrad.grad(loss)          # with respect to w (grad_position=0)
g = dloss(w, x, y)
print("gradient:", g)

# the same number by central differences along a random direction
v = rng.standard_normal(3)
eps = 1e-6
numeric = (loss(w + eps * v, x, y) - loss(w - eps * v, x, y)) / (2 * eps)
print(f"directional derivative: mindgrad {g @ v:.10f}, finite differences {numeric:.10f}")

print("\nThe generated adjoint:\n")
print(mindgrad.source(dloss, w, x, y))
