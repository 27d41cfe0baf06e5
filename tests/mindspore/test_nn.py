"""MindSpore's object model in mindgrad: Parameter, ParameterTuple, Cell, Dense, the ops
primitives, GradOperation, weights in grad/value_and_grad, bprop and stop_gradient.

Oracles: the seed documents' printed outputs, API-SEMANTICS.md's tables (sections 1, 3, 4),
closed forms, and central finite differences in float64 along random directions (Parameters
are perturbed in place, as an optimizer would update them).
"""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import mindgrad
import mindgrad as ms
from mindgrad import GradOperation, get_grad, grad, nn, ops, stop_gradient, value_and_grad
from mindgrad.mindspore.nn import Parameter, ParameterTuple

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
F32, F64 = np.float32, np.float64


# ===== helpers ================================================================================


def check(actual, expected, dtype=F32, rtol=1e-6, atol=0.0):
    """``actual`` is a plain ndarray of ``dtype`` equal to ``expected``."""
    assert isinstance(actual, np.ndarray), f"expected an array, got {type(actual).__name__}"
    assert not isinstance(actual, Parameter), "a gradient must be a plain array, not a Parameter"
    assert actual.dtype == dtype, f"dtype {actual.dtype}, expected {np.dtype(dtype)}"
    expected = np.asarray(expected, dtype)
    assert actual.shape == expected.shape, f"shape {actual.shape}, expected {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def check_all(actual, expected, dtype=F32):
    """``actual`` is a tuple of arrays equal to the sequence ``expected``."""
    assert isinstance(actual, tuple), f"expected a tuple, got {type(actual).__name__}"
    assert len(actual) == len(expected), f"{len(actual)} entries, expected {len(expected)}"
    for a, e in zip(actual, expected):
        check(a, e, dtype)


def total(out):
    """The scalar whose gradient ``grad`` computes: the sum of every float output."""
    if isinstance(out, (tuple, list)):
        return sum(total(o) for o in out)
    return float(np.sum(out))


def fd_param(fn, args, p, v, eps=1e-6):
    """Central difference of ``total(fn(*args))`` along ``v``, moving Parameter ``p`` in place."""
    saved = np.array(p)
    try:
        p += eps * v
        hi = total(fn(*args))
        p[...] = saved
        p -= eps * v
        lo = total(fn(*args))
    finally:
        p[...] = saved
    return (hi - lo) / (2 * eps)


def fd_input(fn, args, i, v, eps=1e-6):
    """Central difference of ``total(fn(*args))`` along ``v`` in argument ``i``."""
    hi = list(args)
    lo = list(args)
    hi[i] = args[i] + eps * v
    lo[i] = args[i] - eps * v
    return (total(fn(*hi)) - total(fn(*lo))) / (2 * eps)


def check_against_fd(fn, args, input_grads, positions, weight_grads, weights, directions=2,
                     seed=0):
    """Every gradient has its input's shape and dtype and matches finite differences."""
    rng = np.random.default_rng(seed)
    assert len(input_grads) == len(positions)
    assert len(weight_grads) == len(weights)
    for g, p in zip(weight_grads, weights):
        check_type(g, p)
        for _ in range(directions):
            v = rng.standard_normal(p.shape)
            np.testing.assert_allclose(np.sum(g * v), fd_param(fn, args, p, v),
                                       rtol=1e-6, atol=1e-8, err_msg=f"weight {p.name}")
    for g, i in zip(input_grads, positions):
        check_type(g, args[i])
        for _ in range(directions):
            v = rng.standard_normal(np.shape(args[i]))
            np.testing.assert_allclose(np.sum(g * v), fd_input(fn, args, i, v),
                                       rtol=1e-6, atol=1e-8, err_msg=f"input {i}")


def check_type(g, like):
    assert isinstance(g, np.ndarray) and not isinstance(g, Parameter), type(g)
    assert g.shape == like.shape, (g.shape, like.shape)
    assert g.dtype == like.dtype, (g.dtype, like.dtype)


def split(result, positions, n_weights):
    """(input grads, weight grads) from ``grad(fn, positions, list_of_weights)``'s result."""
    if positions is None:
        return (), result
    ig, wg = result
    if isinstance(positions, int) or len(positions) == 1:
        return (ig,), wg
    return ig, wg


# ===== 1. the seeds ============================================================================


class SeedNet(nn.Cell):
    """Seeds 000, 001, 003: ``x * z`` then MatMul, z a Parameter."""

    def __init__(self, dtype=np.float32):
        super().__init__()
        self.matmul = ops.MatMul()
        self.z = Parameter(ms.Tensor(np.array([1.0], dtype)), name='z')

    def construct(self, x, y):
        x = x * self.z
        out = self.matmul(x, y)
        return out


class GradNetWrtXOp(nn.Cell):
    """Seed 000: ``ops.GradOperation()`` inside another Cell's construct."""

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.grad_op = ops.GradOperation()

    def construct(self, x, y):
        gradient_function = self.grad_op(self.net)
        return gradient_function(x, y)


class GradNetWrtXGrad(nn.Cell):
    """Seeds 001, 002: ``ms.grad(self.net)`` inside another Cell's construct."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def construct(self, x, y):
        gradient_function = ms.grad(self.net)
        return gradient_function(x, y)


def seed_x():
    return ms.Tensor([[0.5, 0.6, 0.4], [1.2, 1.3, 1.1]], dtype=ms.float32)


def seed_y():
    return ms.Tensor([[0.01, 0.3, 1.1], [0.1, 0.2, 1.3], [2.1, 1.2, 3.3]], dtype=ms.float32)


SEED_OUT = [[1.4100001, 1.5999999, 6.6], [1.4100001, 1.5999999, 6.6]]


@pytest.mark.parametrize("wrapper", [GradNetWrtXOp, GradNetWrtXGrad])
def test_seed_000_001_grad_net_wrt_x(wrapper):
    output = wrapper(SeedNet())(seed_x(), seed_y())
    check(output, SEED_OUT, F32)
    # closed form: d sum((x z) @ y) / dx = z * (row sums of y), for every row of x
    np.testing.assert_allclose(output, np.tile(seed_y().sum(axis=1), (2, 1)), rtol=1e-6)


def seed_002_net(x, y):
    return x**2 + y


def seed_002_net2(x, y):
    return x**2 + y, x


def test_seed_002_scalar_grads():
    x, y = ms.Tensor(1.0), ms.Tensor(2.0)
    out = ms.grad(seed_002_net, grad_position=0)(x, y)
    out1 = ms.grad(seed_002_net, grad_position=1)(x, y)
    np.testing.assert_allclose(out, 2.0)
    np.testing.assert_allclose(out1, 1.0)
    assert np.asarray(out).dtype == F32


def test_seed_002_two_outputs_are_summed():
    x, y = ms.Tensor(1.0), ms.Tensor(2.0)
    out = ms.grad(seed_002_net2, grad_position=0)(x, y)
    np.testing.assert_allclose(out, 3.0)  # d(x**2 + y + x)/dx = 2x + 1
    out1 = ms.grad(seed_002_net2, grad_position=1)(x, y)
    np.testing.assert_allclose(out1, 1.0)


def seed_003_f(w1, w2, w3, w4):
    z1 = w1 + w2 + w3
    z2 = w3 + w4
    return z1, z2


def test_seed_003_get_all_sens_param():
    rng = np.random.default_rng(0)
    ws = [ms.Tensor(rng.standard_normal(3), dtype=ms.float32) for _ in range(4)]
    sens = (ms.Tensor([2., 2., 3.]), ms.Tensor([3., 2., 4.]))
    grads = ops.GradOperation(get_all=True, sens_param=True)(seed_003_f)(*ws, sens)
    check_all(grads, [[2, 2, 3], [2, 2, 3], [5, 4, 7], [3, 2, 4]], F32)


# the example scripts, run as subprocesses (in parallel, once per module)

SCRIPTS = ["seed_000_grad_operation.py", "seed_001_grad.py", "seed_002_gradient.py",
           "seed_003_tf_gradients.py", "train_mlp.py"]


@pytest.fixture(scope="module")
def script_output():
    # this checkout's mindgrad, installed or not (a script's own folder comes first on its path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    procs = {name: subprocess.Popen([sys.executable, str(EXAMPLES / name)], cwd=str(ROOT),
                                    env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)
             for name in SCRIPTS}
    results = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=120)
        results[name] = (proc.returncode, out, err)
    return results


NUMBER = re.compile(r"[-+]?\d+\.\d*(?:[eE][-+]?\d+)?|[-+]?\d+")


def numbers(text):
    return [float(t) for t in NUMBER.findall(text.replace("float32", ""))]


def run_ok(script_output, name):
    code, out, err = script_output[name]
    assert code == 0, f"{name} failed:\n{err}"
    return out


@pytest.mark.parametrize("name", ["seed_000_grad_operation.py", "seed_001_grad.py"])
def test_seed_script_000_001(script_output, name):
    out = run_ok(script_output, name)
    np.testing.assert_allclose(numbers(out), [1.4100001, 1.5999999, 6.6] * 2 + [12.0, 4.0, 12.0],
                               rtol=1e-6)
    assert "[[1.4100001 1.5999999 6.6" in out


def test_seed_script_002(script_output):
    out = run_ok(script_output, "seed_002_gradient.py")
    pairs = re.findall(r"^(out1?) ([-+\d.e]+)$", out, re.MULTILINE)
    # the document prints ``out`` again under the label out1 in its two-output case
    assert pairs == [("out", "2.0"), ("out1", "1.0"), ("out", "3.0"), ("out1", "3.0")]


def test_seed_script_003(script_output):
    out = run_ok(script_output, "seed_003_tf_gradients.py")
    np.testing.assert_allclose(numbers(out),
                               [1.4100001, 1.5999999, 6.6] * 2
                               + [2, 2, 3, 2, 2, 3, 5, 4, 7, 3, 2, 4],
                               rtol=1e-6)
    assert out.count("dtype=float32") == 4


def test_train_mlp_script(script_output):
    out = run_ok(script_output, "train_mlp.py")
    assert "parameters: net.hidden.weight, net.hidden.bias, net.out.weight, net.out.bias" in out
    losses = [float(v) for v in re.findall(r"loss ([\d.]+)", out)]
    assert len(losses) == 7 and losses[-1] < losses[0] / 10
    factor = float(re.search(r"fell by a factor of ([\d.]+)", out).group(1))
    assert factor >= 10
    np.testing.assert_allclose(factor, losses[0] / losses[-1], rtol=0.01)


# ===== 2. return structure with weights (section 1 and 2) =====================================


def X():
    return np.array([1.0, 2.0], F32)


def Y():
    return np.array([3.0, 4.0], F32)


class Lin(nn.Cell):
    """``x * w * y + b * x``; at x=[1,2], y=[3,4], w=[5,6], b=[7,8] (float32):
    g_x = w*y + b = [22, 32], g_y = x*w = [5, 12], g_w = x*y = [3, 8], g_b = x = [1, 2]."""

    def __init__(self):
        super().__init__()
        self.w = Parameter(np.array([5.0, 6.0], F32), name="w")
        self.b = Parameter(np.array([7.0, 8.0], F32), name="b")
        self.unused = Parameter(np.zeros((3, 2), F32) + 1.0, name="unused")

    def construct(self, x, y):
        return x * self.w * y + self.b * x


class LinAux(Lin):
    """Lin's output with an aux output that depends on w (its gradient must not flow)."""

    def construct(self, x, y):
        return x * self.w * y + self.b * x, self.w * 2


GX, GY, GW, GB = [22, 32], [5, 12], [3, 8], [1, 2]
VALUE = [22, 64]


@pytest.mark.parametrize("with_value", [False, True])
def test_weights_only_list(with_value):
    net = Lin()
    fn = (value_and_grad if with_value else grad)(net, None, [net.w, net.b])
    res = fn(X(), Y())
    if with_value:
        value, res = res
        check(value, VALUE)
    check_all(res, [GW, GB])


@pytest.mark.parametrize("with_value", [False, True])
def test_single_parameter_gives_bare_gradient(with_value):
    net = Lin()
    res = (value_and_grad if with_value else grad)(net, None, net.w)(X(), Y())
    if with_value:
        value, res = res
        check(value, VALUE)
    check(res, GW)


@pytest.mark.parametrize("with_value", [False, True])
def test_one_element_weight_list_gives_tuple(with_value):
    net = Lin()
    res = (value_and_grad if with_value else grad)(net, None, [net.w])(X(), Y())
    if with_value:
        value, res = res
        check(value, VALUE)
    check_all(res, [GW])


@pytest.mark.parametrize("with_value", [False, True])
def test_position_and_weights(with_value):
    net = Lin()
    res = (value_and_grad if with_value else grad)(net, 0, [net.w, net.b])(X(), Y())
    if with_value:
        value, res = res
        check(value, VALUE)
    assert isinstance(res, tuple) and len(res) == 2
    check(res[0], GX)
    check_all(res[1], [GW, GB])


@pytest.mark.parametrize("with_value", [False, True])
def test_two_positions_and_weights(with_value):
    net = Lin()
    res = (value_and_grad if with_value else grad)(net, (0, 1), [net.w, net.b])(X(), Y())
    if with_value:
        value, res = res
        check(value, VALUE)
    assert isinstance(res, tuple) and len(res) == 2
    check_all(res[0], [GX, GY])
    check_all(res[1], [GW, GB])


@pytest.mark.parametrize("with_value", [False, True])
def test_position_and_empty_weights(with_value):
    net = Lin()
    res = (value_and_grad if with_value else grad)(net, 0, [])(X(), Y())
    if with_value:
        value, res = res
        check(value, VALUE)
    assert isinstance(res, tuple) and len(res) == 2
    check(res[0], GX)
    assert res[1] == ()


def test_more_structure_rows():
    net = Lin()
    # a one-element position tuple is bare; a single Parameter is bare
    res = grad(net, (1,), [net.w])(X(), Y())
    check(res[0], GY)
    check_all(res[1], [GW])
    res = grad(net, 1, net.b)(X(), Y())
    check(res[0], GY)
    check(res[1], GB)
    # positions in the order given, a ParameterTuple like a list, weights in the order given
    res = grad(net, (1, 0), ParameterTuple([net.b, net.w]))(X(), Y())
    check_all(res[0], [GY, GX])
    check_all(res[1], [GB, GW])


def test_unused_weight_gets_zeros_of_its_shape_and_dtype():
    net = Lin()
    res = grad(net, None, [net.unused, net.w])(X(), Y())
    check_all(res, [np.zeros((3, 2)), GW])


def test_has_aux_with_weights():
    net = LinAux()
    res, aux = grad(net, 0, [net.w, net.b], has_aux=True)(X(), Y())
    check(res[0], GX)
    check_all(res[1], [GW, GB])  # the aux output w*2 contributes nothing to g_w
    assert isinstance(aux, tuple) and len(aux) == 1
    check(aux[0], [10, 12])
    res, (aux,) = grad(net, None, net.w, has_aux=True)(X(), Y())
    check(res, GW)


def test_value_and_grad_has_aux_with_weights():
    net = LinAux()
    (value, aux), res = value_and_grad(net, (0, 1), [net.w, net.b], has_aux=True)(X(), Y())
    check(value, VALUE)
    check(aux, [10, 12])
    check_all(res[0], [GX, GY])
    check_all(res[1], [GW, GB])


def test_sens_param_with_weights():
    net = Lin()
    sens = np.array([10.0, 100.0], F32)
    res = grad(net, 0, [net.w, net.b], sens_param=True)(X(), Y(), sens)
    check(res[0], [220, 3200])
    check_all(res[1], [[30, 800], [10, 200]])


def test_return_ids_with_weights_names_and_positions():
    net = Lin()
    res = grad(net, (0, 1), [net.w, net.b], return_ids=True)(X(), Y())
    (ix, gx), (iy, gy) = res[0]
    (nw, gw), (nb, gb) = res[1]
    assert (ix, iy, nw, nb) == (0, 1, "w", "b")
    check(gx, GX), check(gy, GY), check(gw, GW), check(gb, GB)
    res = grad(net, 0, [net.w, net.b], return_ids=True)(X(), Y())
    assert res[0][0] == 0 and [n for n, _ in res[1]] == ["w", "b"]
    name, g = grad(net, None, net.w, return_ids=True)(X(), Y())
    assert name == "w"
    check(g, GW)
    (one,) = grad(net, None, [net.b], return_ids=True)(X(), Y())
    assert one[0] == "b"
    value, res = value_and_grad(net, None, [net.w], return_ids=True)(X(), Y())
    check(value, VALUE)
    assert res[0][0] == "w"


class Wrap(nn.Cell):
    def __init__(self):
        super().__init__()
        self.lin = Lin()

    def construct(self, x, y):
        return self.lin(x, y) * 2


def test_return_ids_of_sub_cell_parameters_are_attribute_paths():
    net = Wrap()
    res = grad(net, None, [net.lin.w, net.lin.b], return_ids=True)(X(), Y())
    assert [n for n, _ in res] == ["lin.w", "lin.b"]
    check(res[0][1], np.multiply(GW, 2))


def test_get_grad_by_position():
    net = Lin()
    res = grad(net, (0, 1), [net.w, net.b], return_ids=True)(X(), Y())
    check(get_grad(res, 0), GX)
    check(get_grad(res, 1), GY)


def test_get_grad_by_one_element_parameter():
    net = SeedNet()
    res = grad(net, 0, net.trainable_params(), return_ids=True)(seed_x(), seed_y())
    check(get_grad(res, net.z), [np.sum(seed_x() @ seed_y())])


def test_get_grad_by_parameter_object():
    net = Lin()
    res = grad(net, (0, 1), [net.w, net.b], return_ids=True)(X(), Y())
    check(get_grad(res, net.w), GW)
    check(get_grad(res, net.b), GB)
    res = grad(net, None, [net.w, net.b], return_ids=True)(X(), Y())
    check(get_grad(res, net.b), GB)


def test_get_grad_missing_parameter_raises_value_error():
    net = Lin()
    res = grad(net, 0, [net.w], return_ids=True)(X(), Y())
    with pytest.raises(ValueError, match="identifier"):
        get_grad(res, net.b)


def test_get_grad_missing_position_raises_value_error():
    net = Lin()
    res = grad(net, 0, [net.w], return_ids=True)(X(), Y())
    with pytest.raises(ValueError):
        get_grad(res, 1)


# ----- section 3: GradOperation -----------------------------------------------------------


class Square(nn.Cell):
    def construct(self, x):
        return x * x


def test_grad_operation_default_first_input_bare():
    net = Lin()
    check(GradOperation()(net)(X(), Y()), GX)


def test_grad_operation_get_all_always_a_tuple():
    net = Lin()
    check_all(GradOperation(get_all=True)(net)(X(), Y()), [GX, GY])
    res = GradOperation(get_all=True)(Square())(X())
    check_all(res, [[2, 4]])


@pytest.mark.parametrize("container", [ParameterTuple, list])
def test_grad_operation_get_by_list(container):
    net = Lin()
    res = GradOperation(get_by_list=True)(net, container([net.w, net.b]))(X(), Y())
    check_all(res, [GW, GB])
    res = GradOperation(get_by_list=True)(net, container([net.b]))(X(), Y())
    check_all(res, [GB])


def test_grad_operation_get_all_and_get_by_list():
    net = Lin()
    res = GradOperation(get_all=True, get_by_list=True)(
        net, ParameterTuple(net.trainable_params()))(X(), Y())
    assert isinstance(res, tuple) and len(res) == 2
    check_all(res[0], [GX, GY])
    check_all(res[1], [GW, GB, np.zeros((3, 2))])


def test_grad_operation_sens_param():
    net = Lin()
    sens = np.array([10.0, 100.0], F32)
    check(GradOperation(sens_param=True)(net)(X(), Y(), sens), [220, 3200])
    res = GradOperation(get_all=True, get_by_list=True, sens_param=True)(
        net, [net.w, net.b])(X(), Y(), sens)
    check_all(res[0], [[220, 3200], [50, 1200]])
    check_all(res[1], [[30, 800], [10, 200]])


class GradNetByList(nn.Cell):
    """MindSpore's pattern: GradOperation(get_by_list=True) in another Cell's construct."""

    def __init__(self, net, get_all=False):
        super().__init__()
        self.net = net
        self.params = ParameterTuple(net.trainable_params())
        self.grad_op = ops.GradOperation(get_all=get_all, get_by_list=True)

    def construct(self, x, y):
        gradient_function = self.grad_op(self.net, self.params)
        return gradient_function(x, y)


def test_grad_operation_inside_a_cell_by_list():
    net = Lin()
    outer = GradNetByList(net)
    assert [p.name for p in outer.params] == ["net.w", "net.b", "net.unused"]
    check_all(outer(X(), Y()), [GW, GB, np.zeros((3, 2))])
    res = GradNetByList(Lin(), get_all=True)(X(), Y())
    check_all(res[0], [GX, GY])
    check_all(res[1], [GW, GB, np.zeros((3, 2))])


@pytest.mark.parametrize("flags", [{"get_all": 1}, {"get_by_list": "yes"}, {"sens_param": None},
                                   {"get_all": np.bool_(True)}])
def test_grad_operation_flags_must_be_bool(flags):
    with pytest.raises(TypeError):
        GradOperation(**flags)


@pytest.mark.parametrize("flag", ["has_aux", "return_ids", "sens_param"])
@pytest.mark.parametrize("api", [grad, value_and_grad])
def test_grad_flags_must_be_bool_with_weights(api, flag):
    net = Lin()
    with pytest.raises(TypeError, match=flag):
        api(net, 0, [net.w], **{flag: 1})


def test_get_by_list_without_weights_as_mindspore():
    # MindSpore 2.10: no weights in GRAPH mode, the Cell's trainable Parameters in PYNATIVE
    import mindgrad.context as context

    net = Lin()
    saved = context.get_context("mode")
    try:
        context.set_context(mode=context.GRAPH_MODE)
        assert GradOperation(get_by_list=True)(net)(X(), Y()) == ()
        context.set_context(mode=context.PYNATIVE_MODE)
        found = GradOperation(get_by_list=True)(net)(X(), Y())
        expected = GradOperation(get_by_list=True)(net, net.trainable_params())(X(), Y())
    finally:
        context.set_context(mode=saved)
    assert len(found) == len(net.trainable_params()) == len(expected)
    for g, e in zip(found, expected):
        np.testing.assert_allclose(g, e, rtol=1e-6)


def test_weights_holding_a_non_parameter_is_a_type_error():
    net = Lin()
    plain = np.array([5.0, 6.0], F32)
    with pytest.raises(TypeError):
        grad(net, 0, [net.w, plain])(X(), Y())
    with pytest.raises(TypeError):
        value_and_grad(net, None, (net.w, 3.0))(X(), Y())
    with pytest.raises(TypeError):
        grad(net, None, plain)(X(), Y())
    with pytest.raises(TypeError):
        GradOperation(get_by_list=True)(net, [net.w, plain])(X(), Y())
    with pytest.raises(TypeError):
        ParameterTuple([net.w, plain])


# ===== 3. weight gradients against finite differences ========================================


def r64(*shape, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


class Direct(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(r64(3, 2, seed=1), name="w")
        self.v = Parameter(r64(2, seed=2), name="v")

    def construct(self, x):
        return np.sum(np.tanh(x @ self.w) * self.v)


class Block(nn.Cell):
    def __init__(self, seed=3):
        super().__init__()
        self.w = Parameter(r64(2, seed=seed), name="w")
        self.c = Parameter(r64(2, seed=seed + 1, scale=0.1), name="c")

    def construct(self, x):
        return np.tanh(x * self.w + self.c)


class ReadsBlockAttr(nn.Cell):
    """Reads ``self.block.w`` without calling the block."""

    def __init__(self):
        super().__init__()
        self.block = Block()

    def construct(self, x):
        return np.sin(x * self.block.w) + self.block.c ** 2


class Mid(nn.Cell):
    def __init__(self):
        super().__init__()
        self.m = Parameter(r64(2, seed=5), name="m")
        self.leaf = Block(seed=6)

    def construct(self, x):
        return self.leaf(x * self.m) * self.m


class Nested(nn.Cell):
    """Two levels of sub-cell calls: self.mid(x) calls self.leaf(...)."""

    def __init__(self):
        super().__init__()
        self.t = Parameter(r64(2, seed=7), name="t")
        self.mid = Mid()

    def construct(self, x):
        return self.mid(x) + self.t * x


class CalledTwice(nn.Cell):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def construct(self, x):
        return self.block(self.block(x)) * self.block(x)


class CalledInLoop(nn.Cell):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.s = Parameter(r64(2, seed=9), name="s")

    def construct(self, x):
        h = x
        for i in range(3):
            h = self.block(h) + self.s * h
        return h


class DenseMLP(nn.Cell):
    def __init__(self, dtype=F64):
        super().__init__()
        np.random.seed(11)
        self.l1 = nn.Dense(3, 4, activation="tanh", dtype=dtype,
                           bias_init=r64(4, seed=12, scale=0.1))
        self.l2 = nn.Dense(4, 4, activation="sigmoid", dtype=dtype)
        self.l3 = nn.Dense(4, 2, has_bias=False, dtype=dtype)

    def construct(self, x):
        return self.l3(self.l2(self.l1(x)))


GLOBAL_W = Parameter(r64(2, seed=13), name="global_w")


def reads_global(x):
    return np.sum(np.sin(x * GLOBAL_W) * GLOBAL_W)


def make_closure():
    p = Parameter(r64(2, seed=14), name="closure_p")

    def f(x):
        return np.sum(x * p ** 2 + np.exp(p) * x)

    return f, p


class SeveralPlaces(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(r64(2, seed=15), name="w")

    def construct(self, x):
        a = x * self.w
        b = np.sin(self.w) * self.w
        return a + b + self.w


class InLoop(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(r64(2, seed=16), name="w")

    def construct(self, x):
        h = x
        for i in range(3):
            h = np.tanh(h * self.w) + self.w
        return h


class Indexed(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(r64(2, 2, seed=17), name="w")

    def construct(self, x):
        return self.w[0] * x + self.w[1, 1] ** 2


class IndexedViaLocal(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(r64(2, 2, seed=17), name="w")

    def construct(self, x):
        w = self.w
        return w[0] * x + w[1, 1] ** 2


class Methods(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(r64(2, 2, seed=18), name="w")

    def construct(self, x):
        return self.w.T @ x * self.w.sum() + self.w.mean(axis=0) + self.w.reshape(-1)[:2]


class WithUnused(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(r64(2, seed=19), name="w")
        self.idle = Parameter(r64(3, 2, seed=20), name="idle")

    def construct(self, x, y):
        return np.sum(np.exp(x * self.w) * y)


class MatMulWeight(nn.Cell):
    def __init__(self):
        super().__init__()
        self.matmul = ops.MatMul(transpose_b=True)
        self.w = Parameter(r64(4, 3, seed=21), name="w")
        self.z = Parameter(np.array([1.5]), name="z")

    def construct(self, x, y):
        h = self.matmul(x * self.z, self.w)
        return np.sum(np.tanh(h) * y)


def nested():
    net = Nested()
    return net, (r64(2, seed=30),)


WEIGHT_CASES = {
    "self.w": lambda: (Direct(), (r64(4, 3, seed=31),)),
    "self.block.w": lambda: (ReadsBlockAttr(), (r64(2, seed=32),)),
    "nested sub-cell calls": nested,
    "sub-cell called twice": lambda: (CalledTwice(), (r64(2, seed=33),)),
    "sub-cell called in a loop": lambda: (CalledInLoop(), (r64(2, seed=34),)),
    "nn.Dense": lambda: (DenseMLP(), (r64(5, 3, seed=35),)),
    "several places": lambda: (SeveralPlaces(), (r64(2, seed=36),)),
    "in a loop": lambda: (InLoop(), (r64(2, seed=37),)),
    "methods and attributes": lambda: (Methods(), (r64(2, seed=38),)),
    "indexed through a local": lambda: (IndexedViaLocal(), (r64(2, seed=39),)),
    "MatMul(transpose_b) weight": lambda: (MatMulWeight(), (r64(5, 3, seed=40),
                                                          r64(5, 4, seed=41))),
}


@pytest.mark.parametrize("name", list(WEIGHT_CASES))
def test_weight_gradients_against_finite_differences(name):
    net, args = WEIGHT_CASES[name]()
    weights = net.trainable_params()
    assert weights
    res = grad(net, None, weights)(*args)
    check_against_fd(net, args, (), (), res, weights)


def test_weight_gradient_parameter_indexed_as_attribute():
    net = Indexed()
    args = (r64(2, seed=39),)
    res = grad(net, None, net.trainable_params())(*args)
    check_against_fd(net, args, (), (), res, net.trainable_params())


@pytest.mark.parametrize("name", ["self.w", "nested sub-cell calls", "nn.Dense",
                                  "MatMul(transpose_b) weight"])
def test_weights_together_with_inputs(name):
    net, args = WEIGHT_CASES[name]()
    positions = tuple(range(len(args)))
    weights = net.trainable_params()
    res = grad(net, positions, weights)(*args)
    ig, wg = split(res, positions, len(weights))
    check_against_fd(net, args, ig, positions, wg, weights)


def test_weights_subset_of_a_nested_cell():
    net, args = nested()
    weights = [net.mid.leaf.w, net.t]
    res = grad(net, 0, weights)(*args)
    check_against_fd(net, args, (res[0],), (0,), res[1], weights)


def test_module_global_parameter_in_a_plain_function():
    x = r64(2, seed=42)
    res = grad(reads_global, 0, [GLOBAL_W])(x)
    check_against_fd(reads_global, (x,), (res[0],), (0,), res[1], [GLOBAL_W])
    check(grad(reads_global, None, GLOBAL_W)(x), res[1][0], F64)


def test_closure_parameter():
    f, p = make_closure()
    x = r64(2, seed=43)
    res = grad(f, 0, [p])(x)
    check_against_fd(f, (x,), (res[0],), (0,), res[1], [p])
    check(res[1][0], 2 * p * x + np.exp(p) * x, F64)  # closed form


def test_grad_operation_get_by_list_against_finite_differences():
    net, args = nested()
    weights = ParameterTuple(net.trainable_params())
    res = GradOperation(get_all=True, get_by_list=True)(net, weights)(*args)
    check_against_fd(net, args, res[0], (0,), res[1], list(weights))


def test_unused_weight_gets_zeros_float64_and_float32():
    net = WithUnused()
    x, y = r64(2, seed=44), r64(2, seed=45)
    g_w, g_idle = grad(net, None, [net.w, net.idle])(x, y)
    check(g_idle, np.zeros((3, 2)), F64)
    check_against_fd(net, (x, y), (), (), (g_w,), [net.w])
    g_unused = grad(Lin(), None, [Lin().unused])(X(), Y())  # a Parameter of another net
    check_all(g_unused, [np.zeros((3, 2))], F32)


def test_float32_parameters_give_float32_gradients():
    net = DenseMLP(dtype=F32)
    x32 = r64(5, 3, seed=46).astype(F32)
    res = grad(net, 0, net.trainable_params())(x32)
    check_type(res[0], x32)
    for g, p in zip(res[1], net.trainable_params()):
        check_type(g, p)
        assert g.dtype == F32
    # float64 inputs with float32 weights: each gradient keeps its own input's dtype
    x64 = x32.astype(F64)
    res64 = grad(net, 0, net.trainable_params())(x64)
    assert res64[0].dtype == F64
    for g32, g in zip(res[1], res64[1]):
        assert g.dtype == F32
        np.testing.assert_allclose(g, g32, rtol=1e-4, atol=1e-6)


def test_seed_net_weight_gradient_closed_form():
    net = SeedNet()
    g_x, (g_z,) = grad(net, 0, net.trainable_params())(seed_x(), seed_y())
    check(g_x, SEED_OUT)
    check(g_z, [np.sum(seed_x() @ seed_y())], rtol=1e-5)


class HelperMethod(nn.Cell):
    """Weights read in a helper method, a local lambda and def, a branch and a while loop."""

    def __init__(self):
        super().__init__()
        self.w = Parameter(r64(2, seed=70), name="w")
        self.block = Block(seed=71)

    def helper(self, x):
        return x * self.w

    def construct(self, x):
        f = lambda v: v * self.w
        def g(v):
            return v + self.block.w ** 2
        h = self.helper(x) ** 2 + f(x) + g(x)
        if np.sum(x) > 0:
            h = self.block(h)
        else:
            h = h * self.w
        i = 0
        while i < 2:
            h = self.block(h) * self.w
            i += 1
        return h


class IndexedSubCellParam(nn.Cell):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def construct(self, x):
        return self.block.w[0] * x


MODEL = HelperMethod()


def forward_fn(x, y):
    """MindSpore 2's training pattern: a plain function calling a global model."""
    out = MODEL(x)
    return np.sum((out - y) ** 2)


def test_weights_in_helpers_branches_and_while():
    net = HelperMethod()
    for x in (r64(2, seed=72), -np.abs(r64(2, seed=73))):
        res = grad(net, 0, net.trainable_params())(x)
        check_against_fd(net, (x,), (res[0],), (0,), res[1], net.trainable_params())


def test_plain_function_calling_a_global_model():
    x, y = r64(2, seed=74), r64(2, seed=75)
    params = MODEL.trainable_params()
    loss, grads = value_and_grad(forward_fn, None, params)(x, y)
    np.testing.assert_allclose(loss, forward_fn(x, y))
    check_against_fd(forward_fn, (x, y), (), (), grads, params)


def test_lambda_calling_a_model_from_its_closure():
    net = DenseMLP()
    x = r64(5, 3, seed=76)
    loss = lambda v: np.sum(np.tanh(net(v)))
    grads = grad(loss, None, net.trainable_params())(x)
    check_against_fd(loss, (x,), (), (), grads, net.trainable_params())


def test_several_outputs_with_weights():
    # two outputs without has_aux: the gradient is that of their sum, x*y + 2 for w
    net = LinAux()
    value, (g_w,) = value_and_grad(net, None, [net.w])(X(), Y())
    assert isinstance(value, tuple) and len(value) == 2
    check(value[0], VALUE)
    check(g_w, np.add(GW, 2))
    # a Parameter the net never reads (another net's) is a constant: zeros
    value, (g_other,) = value_and_grad(net, None, [Lin().w])(X(), Y())
    check(g_other, np.zeros(2))


class Scaled(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.array([5.0, 6.0], F32), name="w")

    def construct(self, x, scale=1.0):
        return x * self.w * scale


def test_keyword_argument_is_a_constant_with_weights():
    net = Scaled()
    g_x, g_w = grad(net, 0, net.w)(X(), scale=3.0)
    check(g_x, [15, 18])
    check(g_w, [3, 6])


def test_weight_gradient_sub_cell_parameter_indexed():
    net = IndexedSubCellParam()
    x = r64(2, seed=77)
    g, g_c = grad(net, None, net.trainable_params())(x)   # Block has w and c
    check(g, [x.sum(), 0.0], F64)
    check(g_c, np.zeros_like(g_c), F64)


class CallsThroughLocalAlias(nn.Cell):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def construct(self, x):
        f = self.block
        return f(x)


class IteratesOverCells(nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = Block(seed=80)
        self.b = Block(seed=82)
        self.layers = (self.a, self.b)

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


@pytest.mark.parametrize("cls", [CallsThroughLocalAlias, IteratesOverCells])
def test_sub_cell_called_through_a_local_name_never_gives_silent_zeros(cls):
    net = cls()
    x = r64(2, seed=83)
    weights = net.trainable_params()
    for positions in (0, None):
        try:
            res = grad(net, positions, weights)(x)
        except (NameError, SyntaxError, TypeError, NotImplementedError):
            continue  # refusing is acceptable; a wrong number is not
        ig, wg = split(res, positions, len(weights))
        check_against_fd(net, (x,), ig, () if positions is None else (0,), wg, weights)


class SumOfAll(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.array([1.0, 2.0]), name="w")
        self.b = Parameter(np.array([3.0, 4.0]), name="b")

    def construct(self, x):
        return x + self.w + self.b


def test_gradients_are_independent_arrays():
    net = SumOfAll()
    g_x, (g_w, g_b) = grad(net, 0, net.trainable_params())(np.array([1.0, 2.0]))
    for a, b in ((g_x, g_w), (g_w, g_b), (g_x, g_b)):
        assert not np.shares_memory(a, b)
    g_w *= 0.5
    check(g_b, [1.0, 1.0], F64)
    check(g_x, [1.0, 1.0], F64)


# ===== 4. trainable_params, names ==============================================================


class Inner(nn.Cell):
    def __init__(self):
        super().__init__()
        self.k = Parameter(np.ones(2))
        self.j = Parameter(np.ones(3))

    def construct(self, x):
        return x * self.k


class Outer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = Parameter(np.ones(1))
        self.inner = Inner()
        self.frozen = Parameter(np.ones(1), requires_grad=False)
        self.b = Parameter(np.ones(1))

    def construct(self, x):
        return self.inner(x) * self.a * self.b * self.frozen


class Top(nn.Cell):
    def __init__(self):
        super().__init__()
        self.outer = Outer()
        self.t = Parameter(np.ones(1))
        self.dense = nn.Dense(2, 2)

    def construct(self, x):
        return self.dense(self.outer(x)) * self.t


def test_trainable_params_order_and_names():
    assert [p.name for p in Inner().trainable_params()] == ["k", "j"]
    assert [p.name for p in Outer().trainable_params()] == ["a", "b", "inner.k", "inner.j"]
    top = Top()
    assert [p.name for p in top.trainable_params()] == [
        "t", "outer.a", "outer.b", "outer.inner.k", "outer.inner.j", "dense.weight",
        "dense.bias"]
    assert all(isinstance(p, Parameter) for p in top.trainable_params())
    assert top.trainable_params()[3] is top.outer.inner.k


def test_parameters_and_names_includes_untrainable():
    top = Top()
    pairs = list(top.parameters_and_names())
    assert [n for n, _ in pairs] == [
        "t", "outer.a", "outer.frozen", "outer.b", "outer.inner.k", "outer.inner.j",
        "dense.weight", "dense.bias"]
    assert all(n == p.name for n, p in pairs)
    assert pairs[2][1] is top.outer.frozen and not top.outer.frozen.requires_grad
    assert top.untrainable_params() == [top.outer.frozen] or \
        [p.name for p in top.untrainable_params()] == ["outer.frozen"]


def test_untrainable_parameter_is_a_constant_in_the_gradient():
    net = Outer()
    x = r64(2, seed=50)
    weights = net.trainable_params()
    res = grad(net, None, weights)(x)
    assert len(res) == 4
    check_against_fd(net, (x,), (), (), res, weights)


class Leaf(nn.Cell):
    def __init__(self, p):
        super().__init__()
        self.k = p

    def construct(self, x):
        return x * self.k


class SharedTwoCells(nn.Cell):
    def __init__(self):
        super().__init__()
        p = Parameter(np.array([0.5, -1.5]))
        self.a = Leaf(p)
        self.b = Leaf(p)

    def construct(self, x):
        return self.a(x) * self.b(x)


class SharedOwnAndSub(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.array([0.5, -1.5]))
        self.w2 = self.w
        self.leaf = Leaf(self.w)

    def construct(self, x):
        return self.leaf(x) + self.w * self.w2


def test_shared_parameter_listed_once_and_gradients_summed():
    for net in (SharedTwoCells(), SharedOwnAndSub()):
        params = net.trainable_params()
        assert len(params) == 1
        assert len(list(net.parameters_and_names())) == 1
        x = r64(2, seed=51)
        (g,) = grad(net, None, params)(x)
        check_against_fd(net, (x,), (), (), (g,), params)
    net = SharedTwoCells()
    x = r64(2, seed=51)
    check(grad(net, None, net.a.k)(x), 2 * x * x * net.a.k, F64)


def test_shared_parameter_named_by_an_attribute_path():
    net = SharedTwoCells()
    (name, p), = net.parameters_and_names()
    assert name in ("a.k", "b.k")
    assert p.name in ("a.k", "b.k")


def test_two_sub_cells_of_one_class_have_distinct_names():
    class Two(nn.Cell):
        def __init__(self):
            super().__init__()
            self.first = Inner()
            self.second = Inner()

        def construct(self, x):
            return self.second(self.first(x))

    net = Two()
    assert [p.name for p in net.trainable_params()] == [
        "first.k", "first.j", "second.k", "second.j"]
    assert net.first.k is not net.second.k


def test_dense_parameters():
    d = nn.Dense(3, 2, weight_init=np.arange(6.0).reshape(2, 3), bias_init=np.array([1.0, 2.0]))
    assert [p.name for p in d.trainable_params()] == ["weight", "bias"]
    assert d.weight.shape == (2, 3) and d.weight.dtype == F32
    x = np.array([[1.0, 1.0, 1.0]], F32)
    np.testing.assert_allclose(d(x), [[4.0, 14.0]])
    assert [p.name for p in nn.Dense(3, 2, has_bias=False).trainable_params()] == ["weight"]


# ===== 5. Parameter as a NumPy array ===========================================================


def test_parameter_is_an_ndarray_and_arithmetic_gives_plain_arrays():
    p = Parameter(np.array([1.0, 2.0, 3.0]), name="p")
    assert isinstance(p, np.ndarray) and p.name == "p" and p.requires_grad
    assert p.dtype == F64
    for value in (p * 2, p + p, 1.0 - p, np.sin(p), p @ np.eye(3), np.maximum(p, 0), -p,
                  p[1:], p[[0, 2]]):
        assert type(value) is np.ndarray, type(value)
    assert type(np.sum(p)) is not Parameter and float(np.sum(p)) == 6.0
    assert float(p.sum()) == 6.0 and type(p.sum()) is not Parameter
    assert type(p[0]) is np.float64 and p[0] == 1.0
    assert float(p @ p) == 14.0 and not isinstance(p @ p, Parameter)
    np.testing.assert_array_equal(p * 2, [2.0, 4.0, 6.0])


def test_parameter_copies_and_dtypes():
    a = np.array([1.0, 2.0], F32)
    p = Parameter(a)
    a[0] = 100.0
    assert p[0] == 1.0 and p.dtype == F32 and p.name is None
    assert Parameter([1, 2]).dtype.kind == "f"
    assert not Parameter(np.ones(2), requires_grad=False).requires_grad


def test_parameter_in_place_updates_keep_identity_and_name():
    p = Parameter(np.array([1.0, 2.0]), name="p")
    g = np.array([10.0, 20.0])
    ident = id(p)
    p -= 0.1 * g
    assert id(p) == ident and isinstance(p, Parameter) and p.name == "p"
    np.testing.assert_allclose(p, [0.0, 0.0], atol=1e-15)
    p += 1.0
    p *= 3.0
    assert isinstance(p, Parameter) and p.name == "p"
    np.testing.assert_allclose(p, [3.0, 3.0])
    out = p.set_data(np.array([7.0, 8.0]))
    assert out is p and id(p) == ident and p.name == "p"
    np.testing.assert_array_equal(p, [7.0, 8.0])
    assert type(p.asnumpy()) is np.ndarray


def test_parameter_update_is_seen_by_the_cached_gradient():
    net = Lin()
    fn = grad(net, 0, [net.w])
    check(fn(X(), Y())[0], GX)
    net.w -= np.array([1.0, 1.0], F32)       # w = [4, 5]
    g_x, (g_w,) = fn(X(), Y())
    check(g_x, [4 * 3 + 7, 5 * 4 + 8])
    check(g_w, GW)                           # x * y does not depend on w
    net.b.set_data(np.zeros(2, F32))
    check(fn(X(), Y())[0], [12, 20])


def test_replacing_a_parameter_attribute_uses_the_new_one():
    net = Lin()
    fn = grad(net, 0)
    check(fn(X(), Y()), GX)
    net.w = Parameter(np.array([1.0, 1.0], F32), name="w")
    check(fn(X(), Y()), [3 + 7, 4 + 8])
    res = grad(net, None, [net.w])(X(), Y())
    check_all(res, [GW])


# ===== 6. custom backward ======================================================================


class MulBprop(nn.Cell):
    def construct(self, a, b):
        return a * b

    def bprop(self, a, b, out, dout):
        return dout * 10, dout * 100


class UsesMulBprop(nn.Cell):
    def __init__(self):
        super().__init__()
        self.m = MulBprop()

    def construct(self, a, b):
        return 3 * self.m(a * 2, b) + a


class BpropSeesOut(nn.Cell):
    def construct(self, a, b):
        return a * b

    def bprop(self, a, b, out, dout):
        return dout * out, dout * a


class BadBprop(nn.Cell):
    def construct(self, a, b):
        return a * b

    def bprop(self, a, b, out, dout):
        return (dout,)


class UsesBadBprop(nn.Cell):
    def __init__(self):
        super().__init__()
        self.m = BadBprop()

    def construct(self, a, b):
        return self.m(a, b) * 2


def test_bprop_top_level():
    check_all(grad(MulBprop(), (0, 1))(X(), Y()), [[10, 10], [100, 100]])
    check_all(GradOperation(get_all=True)(MulBprop())(X(), Y()), [[10, 10], [100, 100]])
    check(grad(MulBprop(), 1)(X(), Y()), [100, 100])
    sens = np.array([1.0, 2.0], F32)
    check_all(grad(MulBprop(), (0, 1), sens_param=True)(X(), Y(), sens), [[10, 20], [100, 200]])


def test_bprop_receives_out():
    check_all(grad(BpropSeesOut(), (0, 1))(X(), Y()), [[3, 8], [1, 2]])


def test_bprop_as_a_sub_cell():
    # d/da (3 * m(2a, b) + a) = 3 * 10 * 2 + 1; d/db = 3 * 100
    check_all(grad(UsesMulBprop(), (0, 1))(X(), Y()), [[61, 61], [300, 300]])


@pytest.mark.parametrize("net", [BadBprop, UsesBadBprop])
def test_bprop_wrong_count_is_a_value_error(net):
    with pytest.raises(ValueError, match=r"(?s)(1\b.*\b2\b|2\b.*\b1\b)"):
        grad(net(), (0, 1))(X(), Y())


# ===== 7. stop_gradient ========================================================================


def sg_plain(a, b):
    return stop_gradient(a * b) + a * a


def sg_ops(a, b):
    return ops.stop_gradient(a * b) + a * a


def sg_ms(a, b):
    return ms.stop_gradient(a * b) + a * a


@pytest.mark.parametrize("fn", [sg_plain, sg_ops, sg_ms])
def test_stop_gradient(fn):
    check_all(grad(fn, (0, 1))(X(), Y()), [[2, 4], [0, 0]])
    check(fn(X(), Y()), [1 * 3 + 1, 2 * 4 + 4])


class StopInCell(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.array([5.0, 6.0], F32), name="w")

    def construct(self, a, b):
        return ops.stop_gradient(a * b * self.w) + a * a * self.w


def test_stop_gradient_inside_a_cell():
    net = StopInCell()
    (ga, gb), (gw,) = grad(net, (0, 1), [net.w])(X(), Y())
    check(ga, [2 * 1 * 5, 2 * 2 * 6])
    check(gb, [0, 0])
    check(gw, [1, 4])


# ===== 8. ops primitives =======================================================================


class MatMulNet(nn.Cell):
    def __init__(self, ta, tb):
        super().__init__()
        self.matmul = ops.MatMul(transpose_a=ta, transpose_b=tb)

    def construct(self, a, b):
        return np.sin(self.matmul(a, b))


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_transpose_flags(ta, tb):
    a = r64(*((3, 2) if ta else (2, 3)), seed=60)
    b = r64(*((4, 3) if tb else (3, 4)), seed=61)
    net = MatMulNet(ta, tb)
    out = net(a, b)
    assert out.shape == (2, 4)
    ga, gb = grad(net, (0, 1))(a, b)
    check_against_fd(net, (a, b), (ga, gb), (0, 1), (), ())


class MulNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.mul = ops.Mul()

    def construct(self, a, b):
        return np.tanh(self.mul(a, b)) * a


def test_mul_with_broadcasting():
    a, b = r64(2, 3, seed=62), r64(3, seed=63)
    ga, gb = grad(MulNet(), (0, 1))(a, b)
    check_against_fd(MulNet(), (a, b), (ga, gb), (0, 1), (), ())


class ReduceNet(nn.Cell):
    def __init__(self, op, axis):
        super().__init__()
        self.reduce = op
        self.axis = axis

    def construct(self, x):
        return np.sin(self.reduce(x * x, self.axis)) * 2


class ReduceNetLiteral(nn.Cell):
    def __init__(self, keep_dims):
        super().__init__()
        self.sum = ops.ReduceSum(keep_dims=keep_dims)
        self.mean = ops.ReduceMean(keep_dims=keep_dims)

    def construct(self, x):
        return np.sin(self.sum(x * x, 1)) + np.cos(self.mean(x, (0, 2))).sum() + self.sum(x) \
            + self.mean(x, axis=2).sum()


@pytest.mark.parametrize("op_class", [ops.ReduceSum, ops.ReduceMean])
@pytest.mark.parametrize("keep_dims", [False, True])
@pytest.mark.parametrize("axis", [(), 1, (0, 2), -1])
def test_reduce_ops(op_class, keep_dims, axis):
    op = op_class(keep_dims=keep_dims)
    x = r64(2, 3, 4, seed=64)
    net = ReduceNet(op, axis)
    out = net(x)
    ref = (np.sum if op_class is ops.ReduceSum else np.mean)(
        x * x, axis=None if axis == () else axis, keepdims=keep_dims)
    np.testing.assert_allclose(out, np.sin(ref) * 2)
    g = grad(net)(x)
    check_against_fd(net, (x,), (g,), (0,), (), ())


@pytest.mark.parametrize("keep_dims", [False, True])
def test_reduce_ops_literal_axes(keep_dims):
    net = ReduceNetLiteral(keep_dims)
    x = r64(2, 3, 4, seed=65)
    check_against_fd(net, (x,), (grad(net)(x),), (0,), (), ())


def test_reduce_mean_closed_form():
    x = np.arange(6.0).reshape(2, 3)
    g = grad(ReduceNet(ops.ReduceMean(), ()), 0)
    # d/dx sin(mean(x*x)) * 2 = 2 cos(mean(x*x)) * 2x / 6
    np.testing.assert_allclose(g(x), 2 * np.cos(np.mean(x * x)) * 2 * x / 6)


# ===== 9. training =============================================================================


def load_train():
    spec = importlib.util.spec_from_file_location("mindgrad_example_train_mlp",
                                                  EXAMPLES / "train_mlp.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_train_mlp_loss_falls_tenfold():
    module = load_train()
    lines = []
    losses = module.train(steps=300, log=lambda *a, **k: lines.append(a))
    assert len(losses) == 300
    assert losses[-1] * 10 <= losses[0], (losses[0], losses[-1])
    assert lines[0][1] == "net.hidden.weight, net.hidden.bias, net.out.weight, net.out.bias"


class SmallMLP(nn.Cell):
    def __init__(self):
        super().__init__()
        np.random.seed(1)
        self.l1 = nn.Dense(2, 16, activation="tanh", dtype=F64)
        self.l2 = nn.Dense(16, 1, dtype=F64)

    def construct(self, x, y):
        err = self.l2(self.l1(x)) - y
        return np.mean(err * err)


def test_hand_written_sgd_on_a_small_mlp():
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, (48, 2))
    y = (np.sin(2 * x[:, :1]) * x[:, 1:]) + 0.5 * x[:, :1]
    net = SmallMLP()
    params = net.trainable_params()
    ids = [id(p) for p in params]
    step = value_and_grad(net, None, params)
    losses = []
    for _ in range(300):
        loss, grads = step(x, y)
        assert len(grads) == len(params)
        for p, g in zip(params, grads):
            p -= 0.1 * g
        losses.append(float(loss))
    assert losses[-1] * 10 <= losses[0], (losses[0], losses[-1])
    assert [id(p) for p in net.trainable_params()] == ids
    assert all(isinstance(p, Parameter) for p in net.trainable_params())
    assert [p.name for p in params] == ["l1.weight", "l1.bias", "l2.weight", "l2.bias"]


# ===== 10. the generated adjoint names weight gradients by attribute path =====================


def test_source_names_weight_gradients_by_attribute_path():
    net = SeedNet()
    text = grad(net, 0, net.trainable_params()).source(seed_x(), seed_y())
    assert "d_self_z" in text
    net = ReadsBlockAttr()
    text = grad(net, 0, net.trainable_params()).source(r64(2))
    assert "d_self_block_w" in text and "d_self_block_c" in text


# ===== 11. caching =============================================================================


class BlockA(nn.Cell):
    def __init__(self):
        super().__init__()
        self.k = Parameter(np.array([2.0, 3.0]), name="k")

    def construct(self, x):
        return x * self.k


class BlockB(nn.Cell):
    def __init__(self):
        super().__init__()
        self.k = Parameter(np.array([5.0, 7.0]), name="k")

    def construct(self, x):
        return x * x * self.k


class Holder(nn.Cell):
    def __init__(self):
        super().__init__()
        self.block = BlockA()

    def construct(self, x):
        return self.block(x) * 2


def test_second_call_hits_the_cache():
    net = Holder()
    x = np.array([1.0, 2.0])
    fn = grad(net, 0, net.trainable_params())
    first = fn(x)
    before = mindgrad.cache_stats()
    second = fn(x)
    after = mindgrad.cache_stats()
    assert after["builds"] == before["builds"]
    assert after["hits"] == before["hits"] + 1
    check(second[0], first[0], F64)
    check(second[0], [4.0, 6.0], F64)
    check_all(second[1], [[2.0, 4.0]], F64)


def test_replacing_a_sub_cell_builds_fresh_code():
    net = Holder()
    x = np.array([1.0, 2.0])
    fn = grad(net, 0)
    check(fn(x), [4.0, 6.0], F64)
    check(fn(x), [4.0, 6.0], F64)
    before = mindgrad.cache_stats()
    net.block = BlockB()
    assert [p.name for p in net.trainable_params()] == ["block.k"]
    g = fn(x)
    after = mindgrad.cache_stats()
    assert after["builds"] > before["builds"]
    check(g, 2 * 2 * x * np.array([5.0, 7.0]), F64)
    res = grad(net, 0, net.trainable_params())(x)
    check_all(res[1], [2 * x * x], F64)
    net.block = BlockA()
    check(fn(x), [4.0, 6.0], F64)


class HolderOf(nn.Cell):
    def __init__(self, block):
        super().__init__()
        self.block = block

    def construct(self, x):
        return self.block(x) * 2


class MidOf(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = HolderOf(BlockA())

    def construct(self, x):
        return self.inner(x) + x


def test_instances_of_one_class_holding_different_sub_cell_classes():
    x = np.array([1.0, 2.0])
    a, b = HolderOf(BlockA()), HolderOf(BlockB())
    check(grad(a, 0)(x), [4.0, 6.0], F64)
    check(grad(b, 0)(x), 4 * x * np.array([5.0, 7.0]), F64)
    check_all(grad(b, 0, b.trainable_params())(x)[1], [2 * x * x], F64)
    check(grad(a, 0)(x), [4.0, 6.0], F64)


def test_replacing_a_nested_sub_cell_builds_fresh_code():
    net = MidOf()
    x = np.array([1.0, 2.0])
    fn = grad(net, 0)
    check(fn(x), [5.0, 7.0], F64)
    before = mindgrad.cache_stats()
    net.inner.block = BlockB()
    check(fn(x), 4 * x * np.array([5.0, 7.0]) + 1, F64)
    assert mindgrad.cache_stats()["builds"] > before["builds"]


def test_two_instances_of_one_class_use_their_own_parameters():
    a, b = Holder(), Holder()
    b.block.k.set_data([10.0, 20.0])
    x = np.array([1.0, 2.0])
    check(grad(a, 0)(x), [4.0, 6.0], F64)
    check(grad(b, 0)(x), [20.0, 40.0], F64)
    check_all(grad(b, None, [b.block.k])(x), [[2.0, 4.0]], F64)
    check(grad(a, 0)(x), [4.0, 6.0], F64)


# ===== Dense activations ======================================================================


def _dense_with(activation, seed=50):
    np.random.seed(seed)
    return nn.Dense(3, 4, bias_init=r64(4, seed=seed), activation=activation, dtype=F64)


def _swish(x):
    return x / (1.0 + np.exp(-x))


class _Cube(nn.Cell):
    def construct(self, x):
        return x * x * x


ACTIVATION_ORACLES = {  # NumPy formulas written out independently of mindgrad.mindspore.nn
    "relu": lambda y: np.maximum(y, 0), "relu6": lambda y: np.clip(y, 0, 6),
    "tanh": np.tanh, "sigmoid": lambda y: 1 / (1 + np.exp(-y)),
    "gelu": lambda y: 0.5 * y * (1 + np.tanh(np.sqrt(2 / np.pi) * (y + 0.044715 * y ** 3))),
    "elu": lambda y: np.where(y > 0, y, np.exp(y) - 1),
    "leakyrelu": lambda y: np.where(y > 0, y, 0.2 * y),
    "softmax": lambda y: np.exp(y) / np.exp(y).sum(-1, keepdims=True),
    "logsoftmax": lambda y: y - np.log(np.exp(y).sum(-1, keepdims=True)),
    "hswish": lambda y: y * np.clip(y + 3, 0, 6) / 6,
    "hsigmoid": lambda y: np.clip(y + 3, 0, 6) / 6,
    "logsigmoid": lambda y: np.log(1 / (1 + np.exp(-y))), "softsign": lambda y: y / (1 + abs(y)),
    "silu": lambda y: y / (1 + np.exp(-y)), "mish": lambda y: y * np.tanh(np.log1p(np.exp(y))),
    "prelu": lambda y: np.where(y > 0, y, 0.25 * y),
}


@pytest.mark.parametrize("name", sorted(nn._ACTIVATIONS))
def test_dense_applies_every_named_activation(name):
    net = _dense_with(name)
    x = r64(5, 3, seed=51, scale=2.0)
    if name in ACTIVATION_ORACLES:
        np.testing.assert_allclose(net(x), ACTIVATION_ORACLES[name](x @ net.weight.T + net.bias),
                                   rtol=1e-12, atol=1e-12)
    positions, weights = (0,), net.trainable_params()
    res = grad(net, positions, weights)(x)
    ig, wg = split(res, positions, len(weights))
    check_against_fd(net, (x,), ig, positions, wg, weights)
    mindgrad.check_grads(lambda x: net(x), (x,), modes=("rev", "fwd"))


@pytest.mark.parametrize("activation", [nn.LeakyReLU(0.1), _Cube(), _swish],
                         ids=["Cell with arguments", "own Cell", "function"])
def test_dense_applies_a_cell_or_function_activation(activation):
    net = _dense_with(activation)
    x = r64(5, 3, seed=52)
    y = x @ net.weight.T + net.bias
    expected = activation(y) if callable(activation) else None
    np.testing.assert_allclose(net(x), expected)
    res = grad(net, (0,), net.trainable_params())(x)
    ig, wg = split(res, (0,), len(net.trainable_params()))
    check_against_fd(net, (x,), ig, (0,), wg, net.trainable_params())


def test_prelu_slope_is_a_trainable_parameter():
    net = _dense_with("prelu")
    assert [p.name for p in net.trainable_params()] == ["weight", "bias", "activation.a"]


@pytest.mark.parametrize("bad, error", [("swishy", ValueError), ("rrelu", ValueError),
                                        (3, TypeError)])
def test_dense_refuses_unknown_activations(bad, error):
    with pytest.raises(error, match="activation"):
        nn.Dense(3, 4, activation=bad)


class _SinCell(nn.Cell):
    def construct(self, y):
        return np.sin(y)


class _Layer(nn.Cell):
    def __init__(self, seed, act):
        super().__init__()
        self.w = Parameter(r64(3, 3, seed=seed), name="w")
        self.act = act

    def construct(self, x):
        return self.act(x @ self.w)


class _TwoLayers(nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = _Layer(1, nn.Tanh())
        self.b = _Layer(2, _SinCell())

    def construct(self, x):
        return self.b(self.a(x))


def test_instances_of_one_cell_class_holding_different_sub_cells_get_their_own_code():
    # one generated backward per class served both layers, with the first layer's activation
    net, x = _TwoLayers(), r64(2, 3, seed=3)
    weights = net.trainable_params()
    res = grad(net, (0,), weights)(x)
    ig, wg = split(res, (0,), len(weights))
    check_against_fd(net, (x,), ig, (0,), wg, weights)


# ===== Cells and bound methods at second order ================================================


class _TanhNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.array([[0.5, -0.3], [0.2, 0.8]]), name="w")

    def construct(self, x):
        return np.sum(np.tanh(x @ self.w) ** 2)


_NET = _TanhNet()
_CONSTRUCT = _NET.construct


def _calls_a_bound_method_held_in_a_name(x):
    return _CONSTRUCT(x) * 2.0


def test_a_bound_method_held_in_a_name_is_differentiated_as_the_method():
    x = np.array([0.3, -0.7])
    mindgrad.check_grads(_calls_a_bound_method_held_in_a_name, (x,), modes=("rev", "fwd"))
    np.testing.assert_allclose(grad(_calls_a_bound_method_held_in_a_name)(x),
                               2.0 * grad(_NET)(x), rtol=1e-12)
    weights = ParameterTuple(_NET.trainable_params())
    _, (g_w,) = grad(_calls_a_bound_method_held_in_a_name, 0, weights)(x)
    _, (g_w_net,) = grad(_NET, 0, weights)(x)
    np.testing.assert_allclose(g_w, 2.0 * g_w_net, rtol=1e-12)


_DENSE = nn.Dense(2, 2, has_bias=True)


def _dense_in_a_closure(x):
    return np.sum(np.tanh(_DENSE(x)) ** 2)


@pytest.mark.parametrize("fn", [_NET, _CONSTRUCT, _dense_in_a_closure],
                         ids=["cell", "bound method", "cell in a closure"])
@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_second_order_through_a_cell_called_inside_matches_finite_differences(fn, mode):
    # the gradient's code reads self.w (self.has_bias) from its tape: a constant for a
    # derivative with respect to the inputs (a clear error before, NoGradientRuleError)
    for x in (np.array([0.3, -0.7]), np.array([[0.3, -0.7], [1.1, 0.4]])):
        mindgrad.check_grads(fn, (x,), order=2, modes=(mode,))


_GRAD_NET = grad(_NET)


def _squared_gradient_of_the_net(x):
    g = _GRAD_NET(x)
    return np.sum(g * g)


def _weight_central_differences(fn, x, net, eps=1e-6):
    w0 = np.array(net.w.asnumpy(), copy=True)
    out = np.zeros_like(w0)
    try:
        for idx in np.ndindex(w0.shape):
            for sign in (1.0, -1.0):
                w = w0.copy()
                w[idx] += sign * eps
                net.w.set_data(w)
                out[idx] += sign * fn(x) / (2 * eps)
    finally:
        net.w.set_data(w0)
    return out


def test_a_gradient_of_a_cell_differentiated_with_respect_to_its_weights():
    # a TypeError inside the compiler before: the gradient function's code was asked for
    # without the call's argument count
    x = np.array([0.3, -0.7])
    mindgrad.check_grads(_squared_gradient_of_the_net, (x,), modes=("rev", "fwd"))
    weights = ParameterTuple(_NET.trainable_params())
    g_x, (g_w,) = grad(_squared_gradient_of_the_net, 0, weights)(x)
    np.testing.assert_allclose(g_w, _weight_central_differences(
        _squared_gradient_of_the_net, x, _NET), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(g_x, grad(_squared_gradient_of_the_net)(x), rtol=1e-12)


def _calls_the_net(x):
    return _NET(x * x) + np.sum(x)


_GRAD_CALLS = grad(_calls_the_net)


def _squared_gradient_of_a_caller(x):
    g = _GRAD_CALLS(x)
    return np.sum(g * g)


def test_second_order_with_respect_to_weights_through_a_cell_called_inside_is_a_clear_error():
    x = np.array([0.3, -0.7])
    mindgrad.check_grads(_squared_gradient_of_a_caller, (x,), modes=("rev", "fwd"))
    weights = ParameterTuple(_NET.trainable_params())
    with pytest.raises(mindgrad.NoGradientRuleError,
                       match=r"second order .* with respect to weights .* not supported yet: "
                             r"it reads self\.w in the gradient of `"):
        grad(_squared_gradient_of_a_caller, 0, weights)(x)


def test_a_gradient_of_a_cell_differentiated_again_matches_finite_differences():
    g = grad(_NET)
    u = np.array([1.0, 2.0])
    mindgrad.check_grads(lambda x: np.sum(g(x) * u), (np.array([0.3, -0.7]),),
                         modes=("rev", "fwd"))


class _ReturnsItsWeight(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.array([1.0, -2.0, 0.5]), name="w")

    def construct(self, x):
        return self.w


def test_a_cell_returning_its_weight_has_that_weight_s_gradient():
    net = _ReturnsItsWeight()
    x = np.ones(3)
    (gw,) = grad(net, None, [net.w])(x)
    np.testing.assert_allclose(gw, np.ones(3))  # d sum(w) / dw
    gx, (gw,) = grad(net, 0, [net.w])(x)
    np.testing.assert_allclose(gx, np.zeros(3))
    np.testing.assert_allclose(gw, np.ones(3))
    value, (gw,) = value_and_grad(net, None, [net.w])(x)
    np.testing.assert_allclose(value, net.w)
