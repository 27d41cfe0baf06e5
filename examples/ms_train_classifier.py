"""MindSpore's quick start, on synthetic data, with only the imports changed.

The network, the loss, the optimizer, ``value_and_grad(forward_fn, None, optimizer.parameters,
has_aux=True)``, the train and test loops and the checkpoint calls are MindSpore 2.x's quick
start as written; ``mindspore.dataset`` is not part of mindgrad, so ``Blobs`` below stands in for
it (three Gaussian clouds of 4-feature points, shaped (2, 2) so that ``nn.Flatten`` has work).
"""

import os
import shutil
import tempfile

import numpy as np

import mindgrad as ms  # was: import mindspore as ms
from mindgrad import Tensor, nn  # was: from mindspore import Tensor, nn


class Blobs:
    """A stand-in for a batched ``mindspore.dataset``: Tensor batches of points and labels."""

    def __init__(self, size, batch_size, seed):
        rng = np.random.default_rng(seed)
        centres = np.array([[2.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 2.0, 0.0]])
        labels = rng.integers(0, 3, size)
        points = centres[labels] + rng.standard_normal((size, 4))
        self.data = points.reshape(size, 2, 2).astype(np.float32)
        self.labels = labels.astype(np.int32)
        self.batch_size = batch_size

    def get_dataset_size(self):
        return len(self.labels) // self.batch_size

    def create_tuple_iterator(self):
        for i in range(self.get_dataset_size()):
            part = slice(i * self.batch_size, (i + 1) * self.batch_size)
            yield Tensor(self.data[part]), Tensor(self.labels[part])


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(
            nn.Dense(4, 32),
            nn.ReLU(),
            nn.Dense(32, 32),
            nn.ReLU(),
            nn.Dense(32, 3)
        )

    def construct(self, x):
        x = self.flatten(x)
        logits = self.dense_relu_sequential(x)
        return logits


ms.set_seed(1)
train_dataset = Blobs(960, 32, seed=2)
test_dataset = Blobs(320, 32, seed=3)
model = Network()
print(model)

loss_fn = nn.CrossEntropyLoss()
optimizer = nn.SGD(model.trainable_params(), learning_rate=0.05, momentum=0.9)


# Define forward function
def forward_fn(data, label):
    logits = model(data)
    loss = loss_fn(logits, label)
    return loss, logits


# Get gradient function
grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)


# Define function of one-step training
def train_step(data, label):
    (loss, _), grads = grad_fn(data, label)
    optimizer(grads)
    return loss


def train(model, dataset):
    size = dataset.get_dataset_size()
    model.set_train()
    losses = []
    for batch, (data, label) in enumerate(dataset.create_tuple_iterator()):
        loss = train_step(data, label)
        losses.append(float(loss.asnumpy()))
        if batch % 10 == 0:
            loss, current = loss.asnumpy(), batch
            print(f"loss: {loss:>7f}  [{current:>3d}/{size:>3d}]")
    return losses


def test(model, dataset, loss_fn):
    num_batches = dataset.get_dataset_size()
    model.set_train(False)
    total, test_loss, correct = 0, 0, 0
    for data, label in dataset.create_tuple_iterator():
        pred = model(data)
        total += len(data)
        test_loss += loss_fn(pred, label).asnumpy()
        correct += (pred.argmax(1) == label).asnumpy().sum()
    test_loss /= num_batches
    correct /= total
    print(f"Test: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")
    return correct


epochs = 3
epoch_losses = []
for t in range(epochs):
    print(f"Epoch {t+1}\n-------------------------------")
    epoch_losses.append(np.mean(train(model, train_dataset)))
    accuracy = test(model, test_dataset, loss_fn)
print("Done!")
print("mean loss per epoch:", " ".join(f"{loss:.4f}" for loss in epoch_losses))

# Save checkpoint (in a temporary folder, removed at the end: the tutorial writes model.ckpt in
# the working directory)
folder = tempfile.mkdtemp()
path = os.path.join(folder, "model.ckpt")
ms.save_checkpoint(model, path)
print(f"Saved Model to {path} (a temporary folder, removed at the end)")

# Instantiate a random initialized model
model = Network()
# Load checkpoint and load parameter to network
param_dict = ms.load_checkpoint(path)
param_not_load, _ = ms.load_param_into_net(model, param_dict)
print("parameters not loaded:", param_not_load)  # the tutorial: print(param_not_load)
print("parameters:", ", ".join(param_dict))

loaded_accuracy = test(model, test_dataset, loss_fn)
print(f"accuracy of the trained model {100 * accuracy:.1f}%, of the loaded model "
      f"{100 * loaded_accuracy:.1f}%")
shutil.rmtree(folder)
