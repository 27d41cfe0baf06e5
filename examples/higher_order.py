"""Higher order and forward mode: the tangent code mindgrad writes, a gradient of a gradient,
and Newton's method with ``hessian``."""

import numpy as np

import mindgrad as mg


def f(x):
    h = np.tanh(x)
    for _ in range(2):
        h = h * 0.5 + np.sin(h)
    return np.sum(h * h)


# forward mode: the tangent code sits next to the code it differentiates
x = np.array([0.3, -0.5, 0.8])
v = np.array([1.0, 0.0, 0.0])
out, derivative = mg.jvp(f, (x,), (v,))
print(f"f(x) = {out:.6f}, derivative along v = {derivative:.6f}")
print("\nThe generated tangent code:\n")
print(mg.source(mg.jvp, f, (x,), (v,)))


# a gradient of a gradient: the generated adjoint is itself transformed
def cubic(t):
    return t ** 3 - 2.0 * t


second = mg.grad(mg.grad(cubic))
print(f"d2/dt2 (t^3 - 2t) at t=1.5: {second(1.5)} (exact: {6 * 1.5})")
third = mg.grad(second)
print(f"d3/dt3 (t^3 - 2t): {third(1.5)} (exact: 6.0)")
print("\nThe generated code of the second derivative (its entry function):\n")
print(second.source(1.5).split("\n\n\n")[-1])


# Newton's method on a smooth convex function, with its exact Hessian
def energy(w):
    return np.sum(np.log1p(np.exp(w))) + 0.5 * np.sum(w * w) - np.sum(w * np.arange(3.0))


w = np.zeros(3)
g, H = mg.grad(energy), mg.hessian(energy)
for step in range(6):
    w = w - np.linalg.solve(H(w), g(w))
    print(f"Newton step {step + 1}: |gradient| = {np.linalg.norm(g(w)):.2e}")
print("minimum at", np.round(w, 6))
same = np.allclose(mg.jacfwd(mg.jacrev(energy))(w), H(w), rtol=1e-12, atol=1e-12)
print("jacfwd(jacrev(energy)) equals hessian(energy):", same)


# reverse over forward: the gradient of a directional derivative is a Hessian-vector product
direction = np.array([1.0, -1.0, 0.5])


def slope(w):
    _, along = mg.jvp(energy, (w,), (direction,))
    return along


print("grad of the directional derivative:", np.round(mg.grad(slope)(w), 6))
print("Hessian times the direction:       ", np.round(H(w) @ direction, 6))
