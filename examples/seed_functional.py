"""The functional examples of the MindSpore migration documents (seeds 001 and 002).

In MindSpore, ``mindspore.grad(net, grad_position=0)(x, y)`` differentiates ``net`` with respect
to its first input; mindgrad takes the same arguments, on plain floats and NumPy arrays.
"""

import mindgrad


# seed 001: PyTorch's z = x * x * y; z.backward() gives x.grad = 12, y.grad = 4
def z(x, y):
    return x * x * y


dx, dy = mindgrad.grad(z, grad_position=(0, 1))(2.0, 3.0)
print("=== x * x * y at x=2, y=3 ===")
print("x.grad", dx)   # 12.0
print("y.grad", dy)   # 4.0


# seed 002: mindspore.grad
print("=== mindspore.grad ===")


def net(x, y):
    return x**2 + y


x, y = 1.0, 2.0
out = mindgrad.grad(net, grad_position=0)(x, y)
print("out", out)     # 2.0
out1 = mindgrad.grad(net, grad_position=1)(x, y)
print("out1", out1)   # 1.0


# seed 002: several outputs are summed: d(x**2 + y + x)/dx = 2x + 1 = 3
print("=== mindspore.grad, several outputs ===")


def net2(x, y):
    return x**2 + y, x


out = mindgrad.grad(net2, grad_position=0)(x, y)
print("out", out)     # 3.0
out1 = mindgrad.grad(net2, grad_position=1)(x, y)
print("out1", out1)   # 1.0 (the seed document prints `out` again here, a typo)
