"""``mindgrad.nn`` beyond the object model: optimizers, Dropout, Flatten, LayerNorm, Embedding,
the loss Cells' defaults, the wrapper Cells, and the MindSpore-style examples.

Oracles: each optimizer's update written out here from its paper or MindSpore's documented
formula (Adam from Kingma and Ba's section 2, AdamW from Loshchilov and Hutter), closed forms,
and central finite differences (``mindgrad.check_grads``).
"""

import math
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import mindgrad
import mindgrad as ms
from mindgrad import Parameter, Tensor, nn, ops

ROOT = pathlib.Path(__file__).resolve().parents[2]
F32, F64 = np.float32, np.float64


# ===== optimizers against their formulas ======================================================


def _params(dtype):
    rng = np.random.default_rng(11)
    return [Parameter(rng.standard_normal((3, 2)).astype(dtype), name="dense.weight"),
            Parameter(rng.standard_normal(2).astype(dtype), name="dense.bias"),
            Parameter(rng.standard_normal(2).astype(dtype), name="norm.gamma")]


def _gradients(steps, params, seed=12):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(p.shape) for p in params] for _ in range(steps)]


def _run(optimizer, params, grads, as_tensors=True):
    for step in grads:
        optimizer(tuple(Tensor(g.astype(p.dtype)) if as_tensors else g.astype(p.dtype)
                        for g, p in zip(step, params)))
    return [p.asnumpy() for p in params]


def _decays(name, wd):
    """MindSpore's filter: no weight decay for names holding beta or gamma."""
    return 0.0 if ("beta" in name or "gamma" in name) else wd


def sgd_oracle(p0, grads, names, lr, momentum, dampening, wd, nesterov):
    p = [x.astype(F64) for x in p0]
    v = [None] * len(p)
    for step in grads:
        for i, g in enumerate(step):
            g = g + _decays(names[i], wd) * p[i]
            v[i] = g if v[i] is None else momentum * v[i] + (1 - dampening) * g
            p[i] = p[i] - lr * (g + momentum * v[i] if nesterov else v[i])
    return p


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("momentum, dampening, wd, nesterov", [
    (0.0, 0.0, 0.0, False), (0.9, 0.0, 0.0, False), (0.9, 0.1, 0.01, False),
    (0.8, 0.0, 0.05, True)])
def test_sgd(dtype, momentum, dampening, wd, nesterov):
    params = _params(dtype)
    start = [p.asnumpy() for p in params]
    grads = _gradients(5, params)
    opt = nn.SGD(params, learning_rate=0.1, momentum=momentum, dampening=dampening,
                 weight_decay=wd, nesterov=nesterov)
    assert opt.parameters == tuple(params)
    got = _run(opt, params, grads)
    expected = sgd_oracle(start, grads, [p.name for p in params], 0.1, momentum, dampening, wd,
                          nesterov)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5 if dtype == F32 else 1e-12)
        assert g.dtype == dtype
    assert int(opt.global_step[0]) == 5


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum(nesterov):
    params = _params(F64)
    p = [x.asnumpy() for x in params]
    grads = _gradients(4, params)
    got = _run(nn.Momentum(params, 0.05, 0.9, weight_decay=0.1, use_nesterov=nesterov), params,
               grads)
    v = [np.zeros_like(x) for x in p]
    for step in grads:
        for i, g in enumerate(step):
            g = g + _decays(params[i].name, 0.1) * p[i]
            v[i] = 0.9 * v[i] + g
            p[i] = p[i] - 0.05 * (g + 0.9 * v[i] if nesterov else v[i])
    for g, e in zip(got, p):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def adam_oracle(p0, grads, names, lr, b1, b2, eps, wd, nesterov=False, amsgrad=False):
    """Kingma and Ba, Algorithm 1 with section 2's efficient step size (MindSpore's form)."""
    p = [x.astype(F64) for x in p0]
    m = [np.zeros_like(x) for x in p]
    v = [np.zeros_like(x) for x in p]
    vmax = [np.zeros_like(x) for x in p]
    for t, step in enumerate(grads, start=1):
        alpha = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        for i, g in enumerate(step):
            g = g + _decays(names[i], wd) * p[i]
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            vmax[i] = np.maximum(vmax[i], v[i])
            direction = b1 * m[i] + (1 - b1) * g if nesterov else m[i]
            p[i] = p[i] - alpha * direction / (np.sqrt(vmax[i] if amsgrad else v[i]) + eps)
    return p


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("wd, nesterov, amsgrad", [(0.0, False, False), (0.01, False, False),
                                                   (0.0, True, False), (0.0, False, True)])
def test_adam(dtype, wd, nesterov, amsgrad):
    params = _params(dtype)
    start = [p.asnumpy() for p in params]
    grads = _gradients(6, params)
    opt = nn.Adam(params, learning_rate=0.01, weight_decay=wd, use_nesterov=nesterov,
                  use_amsgrad=amsgrad)
    got = _run(opt, params, grads)
    expected = adam_oracle(start, grads, [p.name for p in params], 0.01, 0.9, 0.999, 1e-8, wd,
                           nesterov, amsgrad)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5 if dtype == F32 else 1e-12)


def test_adam_weight_decay():
    params = _params(F64)
    p = [x.asnumpy() for x in params]
    grads = _gradients(5, params)
    got = _run(nn.AdamWeightDecay(params, learning_rate=0.02, weight_decay=0.1), params, grads)
    m = [np.zeros_like(x) for x in p]
    v = [np.zeros_like(x) for x in p]
    for step in grads:  # MindSpore's documented update: no bias correction, decoupled decay
        for i, g in enumerate(step):
            m[i] = 0.9 * m[i] + 0.1 * g
            v[i] = 0.999 * v[i] + 0.001 * g * g
            update = m[i] / (np.sqrt(v[i]) + 1e-6) + _decays(params[i].name, 0.1) * p[i]
            p[i] = p[i] - 0.02 * update
    for g, e in zip(got, p):
        np.testing.assert_allclose(g, e, rtol=1e-12)


@pytest.mark.parametrize("amsgrad", [False, True])
def test_adamw(amsgrad):
    params = _params(F64)
    p = [x.asnumpy() for x in params]
    grads = _gradients(5, params)
    got = _run(nn.AdamW(params, lr=0.01, weight_decay=0.05, amsgrad=amsgrad), params, grads)
    m = [np.zeros_like(x) for x in p]
    v = [np.zeros_like(x) for x in p]
    vmax = [np.zeros_like(x) for x in p]
    for t, step in enumerate(grads, start=1):  # Loshchilov and Hutter, decoupled weight decay
        for i, g in enumerate(step):
            p[i] = p[i] * (1 - 0.01 * 0.05)
            m[i] = 0.9 * m[i] + 0.1 * g
            v[i] = 0.999 * v[i] + 0.001 * g * g
            v_hat = v[i] / (1 - 0.999 ** t)
            vmax[i] = np.maximum(vmax[i], v_hat)
            p[i] = p[i] - 0.01 * (m[i] / (1 - 0.9 ** t)) / (
                np.sqrt(vmax[i] if amsgrad else v_hat) + 1e-8)
    for g, e in zip(got, p):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_optimizer_groups_schedules_and_loss_scale():
    params = _params(F64)
    start = [p.asnumpy() for p in params]
    grads = _gradients(3, params)
    groups = [{"params": params[:1], "lr": 0.5, "weight_decay": 0.2},
              {"params": params[1:]}]
    opt = nn.SGD(groups, learning_rate=0.1, weight_decay=0.0)
    assert opt.get_lr() == (0.5, 0.1, 0.1)
    got = _run(opt, params, grads)
    expected_w = sgd_oracle(start[:1], [s[:1] for s in grads], ["w"], 0.5, 0, 0, 0.2, False)[0]
    expected_b = sgd_oracle(start[1:], [s[1:] for s in grads], ["b", "c"], 0.1, 0, 0, 0, False)
    np.testing.assert_allclose(got[0], expected_w, rtol=1e-12)
    for g, e in zip(got[1:], expected_b):
        np.testing.assert_allclose(g, e, rtol=1e-12)
    # a list of rates, one per step (the last one kept), and a loss scale dividing the gradients
    params = _params(F64)
    start = [p.asnumpy() for p in params]
    opt = nn.SGD(params, learning_rate=[0.3, 0.2], loss_scale=4.0)
    _run(opt, params, grads)
    for i, p in enumerate(params):
        expected = start[i] - sum(lr * s[i] / 4.0 for lr, s in zip([0.3, 0.2, 0.2], grads))
        np.testing.assert_allclose(p, expected, rtol=1e-12)
    with pytest.raises(ValueError, match="3 parameters, but got 2"):
        opt(grads[0][:2])
    with pytest.raises(ValueError, match="nesterov"):
        nn.SGD(params, nesterov=True)


# ===== layers ================================================================================


def test_dropout_in_training_and_evaluation():
    x = np.random.default_rng(0).uniform(0.5, 1.5, (200, 50))
    for layer, p in [(nn.Dropout(p=0.3), 0.3), (nn.Dropout(keep_prob=0.6), 0.4),
                     (nn.Dropout(), 0.5)]:
        assert layer.p == pytest.approx(p) and layer.training is False
        np.testing.assert_array_equal(layer(x), x)  # out of training: the identity
        layer.set_train()
        np.random.seed(3)
        out = layer(x)
        kept = out != 0
        assert abs(kept.mean() - (1 - p)) < 0.02
        np.testing.assert_allclose(out[kept], x[kept] / (1 - p))
        np.random.seed(3)  # the same mask: the gradient is mask / (1 - p)
        g = ms.grad(layer)(x)  # of the sum of the outputs
        np.testing.assert_allclose(g, kept / (1 - p))
    with pytest.raises(ValueError, match="not both"):
        nn.Dropout(keep_prob=0.5, p=0.5)
    net = nn.SequentialCell(nn.Dense(3, 3), nn.Dropout(p=0.5))
    net.set_train()
    assert net[1].training
    x = Tensor(np.ones((2, 3), F32))
    assert ops.dropout(x, 0.5, training=False) is x


def test_flatten_layer_norm_embedding():
    x = np.random.default_rng(1).standard_normal((2, 3, 4))
    np.testing.assert_allclose(nn.Flatten()(x), x.reshape(2, 12))
    np.testing.assert_allclose(nn.Flatten(0, 1)(x), x.reshape(6, 4))
    norm = nn.LayerNorm((4,), epsilon=1e-5)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    np.testing.assert_allclose(norm(x), (x - mean) / np.sqrt(var + 1e-5), rtol=1e-6)
    assert [p.name for p in norm.trainable_params()] == ["gamma", "beta"]
    mindgrad.check_grads(norm, (x,), modes=("rev", "fwd"))
    grads = ms.grad(norm, None, norm.trainable_params())(x)
    np.testing.assert_allclose(grads[1], np.full(4, 6.0))  # d sum / d beta: one per row
    emb = nn.Embedding(5, 3)
    ids = np.array([[0, 4], [4, 1]])
    np.testing.assert_allclose(emb(ids), emb.embedding_table.asnumpy()[ids])
    (g,) = ms.grad(lambda i: ops.sum(emb(i)), None, [emb.embedding_table])(ids)
    np.testing.assert_allclose(g, np.array([1, 1, 0, 0, 2])[:, None] * np.ones(3))


def test_dense_initializers_and_repr():
    ms.set_seed(0)
    dense = nn.Dense(4, 3, weight_init="normal", bias_init="zeros", activation="relu")
    assert dense.weight.shape == (3, 4) and dense.weight.dtype == F32
    assert abs(float(dense.weight.std()) - 0.01) < 0.01
    assert repr(dense).startswith("ActivatedDense<input_channels=4, output_channels=3")
    assert nn.Dense(2, 2, weight_init=np.eye(2)).weight.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    uniform = nn.Dense(100, 50, weight_init="HeUniform")
    assert np.abs(uniform.weight).max() <= math.sqrt(6 / 100) + 1e-6
    with pytest.raises(ValueError, match="initializer"):
        nn.Dense(2, 2, weight_init="no_such_init")
    with pytest.raises(ValueError, match="shape"):
        nn.Dense(2, 3, weight_init=np.eye(2))


def test_loss_cells_default_reductions():
    logits = np.random.default_rng(2).standard_normal((4, 3))
    labels = np.array([0, 2, 1, 1])
    assert nn.SoftmaxCrossEntropyWithLogits(sparse=True)(logits, labels).shape == (4,)
    assert nn.SmoothL1Loss()(logits, logits * 2).shape == (4, 3)
    for loss in [nn.MSELoss(), nn.L1Loss(), nn.BCEWithLogitsLoss(), nn.BCELoss()]:
        target = (logits > 0).astype(F64)
        value = loss(1 / (1 + np.exp(-logits)) if isinstance(loss, nn.BCELoss) else logits,
                     target)
        assert np.shape(value) == (), type(loss).__name__
    assert np.shape(nn.CrossEntropyLoss()(logits, labels)) == ()
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss("average")


# ===== wrapper Cells =========================================================================


class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 2, weight_init=np.array([[0.5, -1.0, 0.25], [1.0, 0.0, -0.5]]))

    def construct(self, x):
        return self.fc(x)


def test_with_loss_cell_and_train_one_step_cell():
    x = Tensor(np.array([[1.0, 2.0, -1.0], [0.5, 0.0, 1.0]], F32))
    y = Tensor(np.array([[0.0, 1.0], [1.0, 0.0]], F32))
    net = _Net()
    with_loss = nn.WithLossCell(net, nn.MSELoss())
    assert [p.name for p in with_loss.trainable_params()] == ["fc.weight", "fc.bias"]
    assert with_loss.backbone_network is net
    out = x.asnumpy() @ net.fc.weight.asnumpy().T
    np.testing.assert_allclose(with_loss(x, y), np.mean((out - y.asnumpy()) ** 2), rtol=1e-6)
    grads = ms.grad(with_loss, None, with_loss.trainable_params())(x, y)
    weight, bias = net.fc.weight.asnumpy(), net.fc.bias.asnumpy()
    train = nn.TrainOneStepCell(with_loss, nn.SGD(net.trainable_params(), 0.1))
    loss = train(x, y)
    assert isinstance(loss, Tensor)
    np.testing.assert_allclose(loss, np.mean((out - y.asnumpy()) ** 2), rtol=1e-6)
    np.testing.assert_allclose(net.fc.weight, weight - 0.1 * grads[0], rtol=1e-6)
    np.testing.assert_allclose(net.fc.bias, bias - 0.1 * grads[1], rtol=1e-6)
    losses = [float(train(x, y)) for _ in range(50)]
    assert losses[-1] < losses[0] / 10
    # sens scales the gradients
    net2 = _Net()
    w2 = net2.fc.weight.asnumpy()
    nn.TrainOneStepCell(nn.WithLossCell(net2, nn.MSELoss()), nn.SGD(net2.trainable_params(), 0.1),
                        sens=2.0)(x, y)
    np.testing.assert_allclose(net2.fc.weight, w2 - 0.2 * grads[0], rtol=1e-6)


def test_eval_and_gradient_wrappers():
    x = np.array([[1.0, 2.0, -1.0]])
    y = np.array([[0.0, 1.0]])
    net = _Net()
    loss, outputs, label = nn.WithEvalCell(net, nn.MSELoss())(x, y)
    np.testing.assert_allclose(outputs, net(x))
    assert label is y and np.isclose(loss, np.mean((net(x) - y) ** 2))
    grads = nn.WithGradCell(net, nn.MSELoss())(x, y)
    expected = ms.grad(nn.WithLossCell(net, nn.MSELoss()), None, net.trainable_params())(x, y)
    for g, e in zip(grads, expected):
        np.testing.assert_allclose(g, e)
    value, (gx,) = nn.ForwardValueAndGrad(net, get_all=True)(x)
    np.testing.assert_allclose(value, net(x))
    np.testing.assert_allclose(gx, np.ones((1, 2)) @ net.fc.weight)


# ===== the examples ==========================================================================


def _run_example(name):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    run = subprocess.run([sys.executable, str(ROOT / "examples" / name)], cwd=str(ROOT), env=env,
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_example_train_classifier():
    out = _run_example("ms_train_classifier.py")
    losses = [float(v) for v in re.search(r"mean loss per epoch: (.*)", out).group(1).split()]
    assert len(losses) == 3 and losses[0] > losses[1] > losses[2]
    first = float(re.search(r"loss: +([\d.]+)", out).group(1))  # of the first batch
    assert losses[-1] < 0.4 * first
    accuracies = re.search(r"trained model ([\d.]+)%, of the loaded model ([\d.]+)%", out)
    trained, loaded = float(accuracies.group(1)), float(accuracies.group(2))
    assert trained == loaded and trained > 80.0  # the blobs overlap: about 88% is the best
    assert "\nparameters not loaded: []\n" in out  # load_param_into_net loaded every one
    saved = re.search(r"Saved Model to (\S+) \(a temporary folder, removed at the end\)", out)
    assert saved and not os.path.exists(saved.group(1))
    assert "parameters: dense_relu_sequential.0.weight, dense_relu_sequential.0.bias" in out


def test_example_second_order():
    out = _run_example("ms_second_order.py")
    lines = out.splitlines()
    # -sin(pi) through GradSec(Grad(net)), rounded as the tutorial prints it, then the same by
    # GradOperation()(GradOperation()(net)); each says what it is
    assert lines[0] == "GradSec(Grad(net))(pi) = -sin(pi), rounded: [-0.]"
    assert lines[1] == "GradOperation()(GradOperation()(net))(pi), rounded: [-0.]"
    numbers = [float(v) for v in re.findall(r"-?\d+\.\d*(?:e-?\d+)?", lines[2])]
    np.testing.assert_allclose(numbers, -np.sin([0.0, 0.5, 1.0, 2.0]), rtol=1e-6, atol=1e-7)
    assert "d2g/dx2 = [-4.]" in out and "d2g/dxdy = [3.]" in out  # 2y and 2x at (1.5, -2)
    hessian = [float(v) for v in re.findall(r"-?\d+\.\d*", out.split("sum(sin(x)):")[1])]
    np.testing.assert_allclose(hessian, [-np.sin(0.5), 0.0, 0.0, -np.sin(-1.0)], rtol=1e-6)
