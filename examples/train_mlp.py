"""Train a two-layer MLP Cell on a synthetic regression task with hand-written SGD.

``value_and_grad(net, None, net.trainable_params())`` gives the loss and one gradient per
parameter; the step updates each Parameter in place.
"""

import numpy as np

import mindgrad as ms
from mindgrad import nn


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Dense(1, 32, activation="tanh")
        self.out = nn.Dense(32, 1)

    def construct(self, x):
        return self.out(self.hidden(x))


class Regression(nn.Cell):
    """The network with its loss: mean squared error."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def construct(self, x, y):
        err = self.net(x) - y
        return np.mean(err * err)


def train(steps=300, lr=0.05, seed=0, log=print):
    np.random.seed(seed)
    x = np.linspace(-2.0, 2.0, 64, dtype=np.float32).reshape(-1, 1)
    y = np.sin(2.0 * x) + 0.1 * x
    model = Regression(MLP())
    params = model.trainable_params()
    log("parameters:", ", ".join(p.name for p in params))
    step = ms.value_and_grad(model, None, params)
    losses = []
    for i in range(steps):
        loss, grads = step(x, y)
        for p, g in zip(params, grads):
            p -= lr * g
        losses.append(float(loss))
        if i % 50 == 0 or i == steps - 1:
            log(f"step {i:4d}  loss {loss:.5f}")
    return losses


if __name__ == "__main__":
    losses = train()
    print(f"the loss fell by a factor of {losses[0] / losses[-1]:.1f}")
