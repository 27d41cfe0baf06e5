"""Seed 003 (GradOperation against tf.gradients): its MindSpore code, with only the import
lines changed, then tf.gradients' example written with GradOperation."""

# In MindSpore:
import numpy as np

from mindgrad import Parameter, Tensor, nn, ops
from mindgrad import dtype as mstype


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


# TensorFlow's tf.gradients([z1, z2], [w1, w2, w3, w4], grad_ys=[[2, 2, 3], [3, 2, 4]]):
# GradOperation(get_all=True, sens_param=True) takes the output sensitivities last.
def f(w1, w2, w3, w4):
    z1 = w1 + w2 + w3
    z2 = w3 + w4
    return z1, z2


rng = np.random.default_rng(0)
w1, w2, w3, w4 = (Tensor(rng.standard_normal(3), dtype=mstype.float32) for _ in range(4))
grad_ys = (Tensor([2., 2., 3.]), Tensor([3., 2., 4.]))
grads = ops.GradOperation(get_all=True, sens_param=True)(f)(w1, w2, w3, w4, grad_ys)
print([g.asnumpy() for g in grads])
# Out:
# [array([2., 2., 3.], dtype=float32),
#  array([2., 2., 3.], dtype=float32),
#  array([5., 4., 7.], dtype=float32),
#  array([3., 2., 4.], dtype=float32)]
