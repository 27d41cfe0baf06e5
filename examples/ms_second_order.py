"""MindSpore's second-order derivative tutorial, with only the imports changed.

The tutorial wraps ``GradOperation`` in Cells (``GradSec(Grad(net))``); the same derivatives
follow with the gradient operations nested as functions, the other form MindSpore 2.x
documents: ``GradOperation()(GradOperation()(net))`` and ``ops.grad(ops.grad(f))``.
"""

import numpy as np

import mindgrad as ms  # was: import mindspore as ms
from mindgrad import Tensor, nn, ops  # was: from mindspore import Tensor, nn, ops

ms.set_context(mode=ms.GRAPH_MODE)


class Net(nn.Cell):
    """The forward network: sin(x)."""

    def __init__(self):
        super().__init__()
        self.sin = ops.Sin()

    def construct(self, x):
        out = self.sin(x)
        return out


class Grad(nn.Cell):
    """The first derivative: a GradOperation held by a Cell."""

    def __init__(self, network):
        super(Grad, self).__init__()
        self.grad = ops.GradOperation()
        self.network = network

    def construct(self, x):
        gout = self.grad(self.network)(x)
        return gout


class GradSec(nn.Cell):
    """The second derivative: the same, around the first."""

    def __init__(self, network):
        super(GradSec, self).__init__()
        self.grad = ops.GradOperation()
        self.network = network

    def construct(self, x):
        gout = self.grad(self.network)(x)
        return gout


x_train = Tensor(np.array([3.1415926]), dtype=ms.float32)

net = Net()
firstgrad = Grad(net)  # cos(x)
secondgrad = GradSec(firstgrad)  # -sin(x)
output = secondgrad(x_train)

# print the result: -sin(3.1415926), about -5e-8, rounded to two decimals as the tutorial does
result = np.around(output.asnumpy(), decimals=2)
print("GradSec(Grad(net))(pi) = -sin(pi), rounded:", result)  # the tutorial: print(result)

# the same, with the gradient operations nested as functions
output = ops.GradOperation()(ops.GradOperation()(net))(x_train)
print("GradOperation()(GradOperation()(net))(pi), rounded:", np.around(output.asnumpy(),
                                                                        decimals=2))


# the functional form: ops.grad of ops.grad, at several points
def f(x):
    return ops.sin(x)


x = Tensor(np.array([0.0, 0.5, 1.0, 2.0]), ms.float32)
print("f''(x) =", ops.grad(ops.grad(f))(x))
print("-sin(x) =", -np.sin(x.asnumpy()))


# two inputs: f(x, y) = x * x * y, so d2f/dx2 = 2y and d2f/dxdy = 2x
def g(x, y):
    return x * x * y


x, y = Tensor([1.5]), Tensor([-2.0])
dgdx = ops.grad(g, grad_position=0)
print("d2g/dx2 =", ops.grad(dgdx, grad_position=0)(x, y))
print("d2g/dxdy =", ops.grad(dgdx, grad_position=1)(x, y))

# the Hessian of a function of a vector: jacfwd over jacrev
x = Tensor([0.5, -1.0])
print("Hessian of sum(sin(x)):", ms.jacfwd(ms.jacrev(lambda v: ops.sin(v).sum()))(x))
