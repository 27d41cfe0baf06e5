"""Seed 000 (MindSpore's comparison with torch.autograd.backward/grad): its MindSpore code,
with only the import lines changed, then PyTorch's two examples written with mindgrad."""

import numpy as np

from mindgrad import Parameter, Tensor, nn, ops
from mindgrad import dtype as mstype


# In MindSpore:
class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.matmul = ops.MatMul()
        self.z = Parameter(Tensor(np.array([1.0], np.float32)), name='z')
    def construct(self, x, y):
        x = x * self.z
        out = self.matmul(x, y)
        return out

class GradNetWrtX(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.grad_op = ops.GradOperation()
    def construct(self, x, y):
        gradient_function = self.grad_op(self.net)
        return gradient_function(x, y)

x = Tensor([[0.5, 0.6, 0.4], [1.2, 1.3, 1.1]], dtype=mstype.float32)
y = Tensor([[0.01, 0.3, 1.1], [0.1, 0.2, 1.3], [2.1, 1.2, 3.3]], dtype=mstype.float32)
output = GradNetWrtX(Net())(x, y)
print(output)
# Out:
# [[1.4100001 1.5999999 6.6      ]
#  [1.4100001 1.5999999 6.6      ]]

# PyTorch's z = x * x * y; z.backward() gives x.grad = 12, y.grad = 4; with mindgrad:
import mindgrad


def z(x, y):
    return x * x * y


x_grad, y_grad = mindgrad.grad(z, grad_position=(0, 1))(2.0, 3.0)
print(x_grad, y_grad)
# Out:
# 12.0 4.0
grad_x = mindgrad.grad(z, grad_position=0)(2.0, 3.0)
print(grad_x)
# Out:
# 12.0
