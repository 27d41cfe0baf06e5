"""Seed 002 (gradients in MindSpore and PyTorch): its MindSpore code, with only the import
lines changed."""

# ms.grad:
# the grad interface takes the forward graph and gives the backward one
import mindgrad as ms
from mindgrad import nn


class GradNetWrtX(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net
    def construct(self, x, y):
        gradient_function = ms.grad(self.net)
        return gradient_function(x, y)


import mindgrad as mindspore

print("=== mindspore.grad ===")
x = mindspore.Tensor(1.0)
y = mindspore.Tensor(2.0)
def net(x, y):
    return x**2+y
out = mindspore.grad(net, grad_position=0)(x, y)
print("out", out)
out1 = mindspore.grad(net, grad_position=1)(x, y)
print("out1", out1)
# Out:
# out 2.0
# out1 1.0

# several outputs are supported
print("=== mindspore.grad 多个output ===")
x = mindspore.Tensor(1.0)
y = mindspore.Tensor(2.0)
def net(x, y):
    return x**2+y, x
out = mindspore.grad(net, grad_position=0)(x, y)
print("out", out)
out1 = mindspore.grad(net, grad_position=1)(x, y)
# sic: the MindSpore document prints `out` (3.0) under the label out1, and so does this copy of
# it; out1, the gradient with respect to y, is 1.0
print("out1", out)
# Out:
# out 3.0
# out1 3.0
