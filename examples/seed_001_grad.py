"""Seed 001 (mindspore.grad against torch.autograd): its MindSpore code, with only the import
lines changed, then PyTorch's examples written with mindgrad."""

# In MindSpore:
import numpy as np

import mindgrad as ms
from mindgrad import nn, ops


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.matmul = ops.MatMul()
        self.z = ms.Parameter(ms.Tensor(np.array([1.0], np.float32)), name='z')
    def construct(self, x, y):
        x = x * self.z
        out = self.matmul(x, y)
        return out

class GradNetWrtX(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net
    def construct(self, x, y):
        gradient_function = ms.grad(self.net)
        return gradient_function(x, y)

x = ms.Tensor([[0.5, 0.6, 0.4], [1.2, 1.3, 1.1]], dtype=ms.float32)
y = ms.Tensor([[0.01, 0.3, 1.1], [0.1, 0.2, 1.3], [2.1, 1.2, 3.3]], dtype=ms.float32)
output = GradNetWrtX(Net())(x, y)
print(output)
# Out:
# [[1.4100001 1.5999999 6.6      ]
#  [1.4100001 1.5999999 6.6      ]]


# PyTorch's z = x * x * y with z.backward() and torch.autograd.grad, in mindgrad:
def z(x, y):
    return x * x * y


x_grad, y_grad = ms.grad(z, grad_position=(0, 1))(ms.Tensor(2.0), ms.Tensor(3.0))
print(x_grad, y_grad)
# Out:
# 12.0 4.0
print(ms.grad(z)(ms.Tensor(2.0), ms.Tensor(3.0)))
# Out:
# 12.0
