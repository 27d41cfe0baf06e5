'''MindSpore gradient programs, written as MindSpore's documentation writes them, for the parity
suite: each runs under MindSpore (``record_golden.py`` stores its answers in ``golden/``) and,
with ``mindspore`` renamed to ``mindgrad`` and nothing else changed, under mindgrad
(``test_parity.py`` compares). Each sets ``result``; ``MODE`` is replaced by ``GRAPH_MODE`` or
``PYNATIVE_MODE``.'''

HEADER = """\
import numpy as np
import mindspore as ms
import mindspore.context as context
import mindspore.common.dtype as mstype
import mindspore.nn as nn
import mindspore.ops as ops
import mindspore.ops.operations as P
import mindspore.ops.composite as C
import mindspore.ops.functional as F
from mindspore import Tensor, Parameter, ParameterTuple
from mindspore.common.api import jit
from mindspore.common import mutable
context.set_context(mode=context.MODE, check_bprop=False)
x = Tensor(np.array([1.0, 2.0], np.float32))
y = Tensor(np.array([3.0, 4.0], np.float32))
v = Tensor(np.array([0.5, -1.0], np.float32))


class Net(nn.Cell):
    def __init__(self):
        super(Net, self).__init__()
        self.w = Parameter(Tensor(np.array([2.0, -1.0], np.float32)), name="w")
        self.b = Parameter(Tensor(np.array([0.5, 0.25], np.float32)), name="b")

    def construct(self, x, y):
        return x * self.w * y + self.b * self.b


class NoInputNet(nn.Cell):
    def __init__(self):
        super(NoInputNet, self).__init__()
        self.w = Parameter(Tensor(np.array([2.0, -1.0], np.float32)), name="w")

    def construct(self):
        return self.w * self.w * 3


def f(x, y):
    return x * y


def f2(x, y):
    return x * y, x + y


"""

PROGRAMS = {
    # ----- ops.grad and value_and_grad ---------------------------------------------------------
    "grad_default": "result = F.grad(f)(x, y)",
    "grad_position_1": "result = F.grad(f, 1)(x, y)",
    "grad_position_tuple": "result = F.grad(f, (0, 1))(x, y)",
    "grad_position_reversed": "result = F.grad(f, (1, 0))(x, y)",
    "grad_position_one_tuple": "result = F.grad(f, (0,))(x, y)",
    "grad_two_outputs": "result = ops.grad(f2, (0, 1))(x, y)",
    "grad_ms_top_level": """
def cube(a):
    return a * a * a
result = ms.grad(cube)(x)""",
    "grad_has_aux": """
def faux(x, y):
    return x * y, x + y
result = ops.grad(faux, (0, 1), has_aux=True)(x, y)""",
    "grad_sens_param": """
result = ops.grad(f, (0, 1), sens_param=True)(x, y, Tensor(np.array([10.0, 100.0], np.float32)))""",
    "grad_empty_position": """
g = ops.grad(f, ())
result = g(x, y)""",
    "grad_empty_position_made": """
g = ops.grad(f, ())
result = type(g).__name__ != ''""",
    "value_and_grad_default": "result = ops.value_and_grad(f)(x, y)",
    "value_and_grad_has_aux": """
def faux(x, y):
    return (x * y).sum(), x + y
result = ops.value_and_grad(faux, (0, 1), has_aux=True)(x, y)""",
    "value_and_grad_weights": """
net = Net()
result = ops.value_and_grad(net, 0, net.trainable_params())(x, y)""",
    # ----- int inputs ----------------------------------------------------------------------------
    "int32_times_6": """
def times6(a):
    return a * 6
result = ms.grad(times6)(Tensor([10], mstype.int32))""",
    "int32_times_half": """
def half(a):
    return a * 0.5
result = ms.grad(half)(Tensor([10], mstype.int32))""",
    "int32_value_and_grad": """
def times6(a):
    return a * 6
result = ops.value_and_grad(times6)(Tensor([10], mstype.int32))""",
    "python_ints": """
def add(a, b):
    return a + b
result = ms.grad(add)(1, 2)""",
    "int32_and_float": """
result = ops.grad(f, (0, 1))(Tensor([3], mstype.int32), Tensor([2.5], mstype.float32))""",
    # ----- weights -------------------------------------------------------------------------------
    "grad_weights_list": """
net = Net()
result = ops.grad(net, None, net.trainable_params())(x, y)""",
    "grad_position_and_weights": """
net = Net()
result = ops.grad(net, 0, net.trainable_params())(x, y)""",
    "grad_bare_parameter": """
net = Net()
result = ops.grad(net, None, net.w)(x, y)""",
    "grad_parameter_tuple_one": """
net = Net()
result = ops.grad(net, None, ParameterTuple([net.w]))(x, y)""",
    "grad_weights_one_list": """
net = Net()
result = ops.grad(net, None, [net.w])(x, y)""",
    "grad_weights_one_tuple": """
net = Net()
result = ops.grad(net, None, (net.w,))(x, y)""",
    "grad_weights_no_inputs": """
net = NoInputNet()
result = ops.grad(net, None, net.trainable_params())()""",
    "grad_weights_empty": """
net = Net()
result = ops.grad(net, 0, [])(x, y)""",
    # ----- GradOperation -------------------------------------------------------------------------
    "gradop_default": "result = C.GradOperation()(f)(x, y)",
    "gradop_get_all": "result = C.GradOperation(get_all=True)(f)(x, y)",
    "gradop_get_all_one_input": """
def sq(a):
    return a * a
result = C.GradOperation(get_all=True)(sq)(x)""",
    "gradop_get_by_list": """
net = Net()
result = C.GradOperation(get_by_list=True)(net, ParameterTuple(net.trainable_params()))(x, y)""",
    "gradop_get_by_list_bare_parameter": """
net = Net()
result = C.GradOperation(get_by_list=True)(net, net.w)(x, y)""",
    "gradop_get_by_list_one_tuple": """
net = Net()
result = C.GradOperation(get_by_list=True)(net, ParameterTuple([net.w]))(x, y)""",
    "gradop_get_by_list_no_weights": """
net = Net()
result = C.GradOperation(get_by_list=True)(net)(x, y)""",
    "gradop_get_by_list_weights_none": """
net = Net()
result = C.GradOperation(get_by_list=True)(net, None)(x, y)""",
    "gradop_get_all_and_list": """
net = Net()
result = C.GradOperation(get_all=True, get_by_list=True)(net, net.trainable_params())(x, y)""",
    "gradop_sens_param": """
result = C.GradOperation(sens_param=True)(f)(x, y, Tensor(np.array([10.0, 100.0], np.float32)))""",
    "gradop_seed_003": """
def f4(w1, w2, w3, w4):
    return w1 + w2 + w3, w3 + w4
w = [Tensor(np.array(a, np.float32)) for a in ([1, 2, 3], [4, 5, 6], [7, 8, 9], [1, 1, 1])]
sens = (Tensor(np.array([2, 2, 3], np.float32)), Tensor(np.array([3, 2, 4], np.float32)))
result = C.GradOperation(get_all=True, sens_param=True)(f4)(*w, sens)""",
    "gradop_no_inputs_by_list": """
net = NoInputNet()
result = C.GradOperation(get_by_list=True)(net, net.trainable_params())()""",
    "gradop_int_output": """
def to_int(a):
    return ops.cast(a, mstype.int32)
result = C.GradOperation()(to_int)(x)""",
    "gradop_cell_construct": """
class GradNet(nn.Cell):
    def __init__(self, net):
        super(GradNet, self).__init__()
        self.net = net
        self.params = ParameterTuple(net.trainable_params())
        self.grad_op = C.GradOperation(get_all=True, get_by_list=True)

    def construct(self, x, y):
        return self.grad_op(self.net, self.params)(x, y)
result = GradNet(Net())(x, y)""",
    # ----- return_ids and get_grad --------------------------------------------------------------
    "return_ids": """
net = Net()
result = ops.grad(net, (0, 1), net.trainable_params(), return_ids=True)(x, y)""",
    "get_grad_position_and_parameter": """
net = Net()
res = ops.grad(net, (0, 1), net.trainable_params(), return_ids=True)(x, y)
result = (ops.get_grad(res, 1), ops.get_grad(res, net.b))""",
    "get_grad_missing": """
net = Net()
res = ops.grad(net, (0, 1), net.trainable_params(), return_ids=True)(x, y)
result = ops.get_grad(res, 5)""",
    # ----- jvp, vjp, jacfwd, jacrev -------------------------------------------------------------
    "jvp_two_inputs": "result = F.jvp(f, (x, y), (v, v))",
    "jvp_one_input": """
def cube(a):
    return a * a * a
result = F.jvp(cube, x, v)""",
    "jvp_two_outputs": "result = F.jvp(f2, (x, y), (v, v))",
    "vjp_one_input": """
def sq(a):
    return a * a
out, vjp_fn = F.vjp(sq, x)
result = (out, vjp_fn(v))""",
    "vjp_two_inputs": """
out, vjp_fn = F.vjp(f, x, y)
result = (out, vjp_fn(v))""",
    "vjp_two_outputs_separate": """
out, vjp_fn = F.vjp(f2, x, y)
result = (out, vjp_fn(v, y))""",
    "vjp_two_outputs_tuple": """
out, vjp_fn = F.vjp(f2, x, y)
result = (out, vjp_fn((v, y)))""",
    "vjp_has_aux": """
out, vjp_fn, aux = F.vjp(f2, x, y, has_aux=True)
result = (out, vjp_fn(v), aux)""",
    "jacfwd_one": """
def sq(a):
    return a * a
result = F.jacfwd(sq)(x)""",
    "jacrev_one": """
def sq(a):
    return a * a
result = F.jacrev(sq)(x)""",
    "jacfwd_positions": "result = F.jacfwd(f, (0, 1))(x, y)",
    "jacrev_positions": "result = F.jacrev(f, (0, 1))(x, y)",
    "jacfwd_outputs": "result = F.jacfwd(f2, (0, 1))(x, y)",
    "jacrev_outputs": "result = F.jacrev(f2, 0)(x, y)",
    # ----- containers in and out ----------------------------------------------------------------
    "tuple_input": """
def prod(t):
    return t[0] * t[1]
result = ops.grad(prod)((x, y))""",
    "list_input": """
def prod(t):
    return t[0] * t[1]
result = ops.grad(prod)([x, y])""",
    "dict_input": """
def prod(d):
    return d['a'] * d['b']
result = ops.grad(prod)({'a': x, 'b': y})""",
    "mutable_tuple_input": """
def prod(t):
    return t[0] * t[1]
result = ops.grad(prod)(mutable((x, y)))""",
    "mutable_dict_input": """
def prod(d):
    return d['a'] * d['b']
result = ops.grad(prod)(mutable({'a': x, 'b': y}))""",
    "list_output": """
def pair(a, b):
    return [a * b, a]
result = ops.grad(pair, (0, 1))(x, y)""",
    "dict_output": """
def named(a, b):
    return {'p': a * b, 'q': a}
result = ops.grad(named, (0, 1))(x, y)""",
    "value_and_grad_dict_output": """
def named(a, b):
    return {'p': a * b}
result = ops.value_and_grad(named, 0)(x, y)""",
    # ----- custom bprop -------------------------------------------------------------------------
    "bprop_custom": """
class Mul(nn.Cell):
    def construct(self, a, b):
        return a * b

    def bprop(self, a, b, out, dout):
        return dout * 10, dout * 100
result = C.GradOperation(get_all=True)(Mul())(x, y)""",
    "bprop_wrong_count_checked": """
context.set_context(check_bprop=True)
class Mul(nn.Cell):
    def construct(self, a, b):
        return a * b

    def bprop(self, a, b, out, dout):
        return (dout * 10,)
result = C.GradOperation(get_all=True)(Mul())(x, y)""",
    "bprop_wrong_shape_checked": """
context.set_context(check_bprop=True)
class Mul(nn.Cell):
    def construct(self, a, b):
        return a * b

    def bprop(self, a, b, out, dout):
        return dout * 10, Tensor(np.ones((3,), np.float32))
result = C.GradOperation(get_all=True)(Mul())(x, y)""",
    "bprop_not_tensor_checked": """
context.set_context(check_bprop=True)
class Mul(nn.Cell):
    def construct(self, a, b):
        return a * b

    def bprop(self, a, b, out, dout):
        return dout * 10, 1.0
result = C.GradOperation(get_all=True)(Mul())(x, y)""",
    "bprop_reads_parameter": """
class Scale(nn.Cell):
    def __init__(self):
        super(Scale, self).__init__()
        self.k = Parameter(Tensor(np.array([3.0, 3.0], np.float32)), name="k")

    def construct(self, a):
        return a * self.k

    def bprop(self, a, out, dout):
        return (dout * self.k,)
result = C.GradOperation(get_all=True)(Scale())(x)""",
    # ----- primitives in @jit and construct -----------------------------------------------------
    "primitive_made_in_jit": """
@jit
def mm(a, b):
    return P.MatMul()(a, b)
a = Tensor(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
b = Tensor(np.array([[0.5, 0.0], [1.0, -1.0]], np.float32))
result = ops.grad(mm, (0, 1))(a, b)""",
    "primitive_method_name_first": """
class MulSin(nn.Cell):
    def __init__(self):
        super(MulSin, self).__init__()
        self.mul = ops.Mul()
        self.sin = ops.Sin()

    def construct(self, x, y):
        return self.mul(self.mul(x, x), self.sin(y))
result = C.GradOperation(get_all=True)(MulSin())(x, y)""",
    "primitive_method_name_second": """
class MulSin(nn.Cell):
    def __init__(self):
        super(MulSin, self).__init__()
        self.mul = ops.Mul()
        self.sin = ops.Sin()

    def construct(self, x, y):
        return self.mul(self.mul(x, x), self.sin(y))


class Grad(nn.Cell):
    def __init__(self, net):
        super(Grad, self).__init__()
        self.net = net
        self.grad = C.GradOperation(get_all=True)

    def construct(self, x, y):
        return self.grad(self.net)(x, y)


class GradSec(nn.Cell):
    def __init__(self, net):
        super(GradSec, self).__init__()
        self.net = net
        self.grad = C.GradOperation(get_all=True, sens_param=True)

    def construct(self, x, y, sens):
        return self.grad(self.net)(x, y, sens)
result = GradSec(Grad(MulSin()))(x, y, (v, v))""",
    # ----- names around gradients ---------------------------------------------------------------
    "imag_primitive": """
result = ops.Imag()(Tensor(np.array([1 + 2j, 3 - 1j], np.complex64)))""",
    "init_parameters_data": """
net = Net()
result = len(net.init_parameters_data())""",
    "multitype_func_graph": """
add = C.MultitypeFuncGraph("add")

@add.register("Number", "Number")
def add_scalar(a, b):
    return a + b

@add.register("Tensor", "Tensor")
def add_tensor(a, b):
    return a * b
result = (add(1, 2), add(x, y))""",
    "hyper_map": """
square = C.MultitypeFuncGraph("square")

@square.register("Tensor")
def square_tensor(a):
    return a * a
result = C.HyperMap()(square, (x, y))""",
    # ----- more around gradients ----------------------------------------------------------------
    "tensor_and_python_float": """
result = ops.grad(f, (0, 1))(x, 2.0)""",
    "python_float_position_with_tensor": """
result = ops.grad(f, 1)(x, 2.0)""",
    "numpy_inputs_only": """
result = ops.grad(f)(np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32))""",
    "gradop_int32_get_all": """
result = C.GradOperation(get_all=True)(f)(Tensor([3, 4], mstype.int32), y)""",
    "conv2d_and_grad": """
a = Tensor(np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4) / 10)
k = Tensor(np.array([[[[1.0, -1.0], [0.5, 2.0]], [[0.0, 1.0], [1.0, 0.0]]]], np.float32))
def conv(a, k):
    return ops.conv2d(a, k, stride=1, pad_mode="valid")
def conv_sum(a, k):
    return (conv(a, k) * conv(a, k)).sum()
result = (conv(a, k), ops.grad(conv_sum, (0, 1))(a, k))""",
    "conv2d_same_stride": """
a = Tensor(np.arange(50, dtype=np.float32).reshape(1, 2, 5, 5) / 10)
k = Tensor(np.ones((3, 2, 3, 3), np.float32))
def conv(a, k):
    return ops.conv2d(a, k, stride=2, pad_mode="same")
result = (conv(a, k), ops.grad(conv, 1)(a, k))""",
    "batch_norm_inference": """
a = Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2) / 10)
scale = Tensor(np.array([1.0, 2.0, 0.5], np.float32))
bias = Tensor(np.array([0.0, 1.0, -1.0], np.float32))
mean = Tensor(np.array([0.5, 1.0, 1.5], np.float32))
var = Tensor(np.array([1.0, 4.0, 0.25], np.float32))
def bn(a, scale, bias):
    return ops.BatchNorm()(a, scale, bias, mean, var)[0]
result = (bn(a, scale, bias), ops.grad(bn, (0, 1, 2))(a, scale, bias))""",
    "batch_norm_training": """
class BN(nn.Cell):
    def __init__(self):
        super(BN, self).__init__()
        self.bn = ops.BatchNorm(is_training=True)
        self.mean = Parameter(Tensor(np.array([0.5, 1.0, 1.5], np.float32)), name="mean",
                              requires_grad=False)
        self.var = Parameter(Tensor(np.array([1.0, 4.0, 0.25], np.float32)), name="var",
                             requires_grad=False)

    def construct(self, a, scale, bias):
        return self.bn(a, scale, bias, self.mean, self.var)[0]
a = Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2) ** 2 / 10)
scale = Tensor(np.array([1.0, 2.0, 0.5], np.float32))
bias = Tensor(np.array([0.0, 1.0, -1.0], np.float32))
net = BN()
out = net(a, scale, bias)
result = (out, net.mean.value(), net.var.value(),
          ops.grad(BN(), (0, 1, 2))(a, scale, bias * 1))""",
    "hyper_map_in_grad": """
square = C.MultitypeFuncGraph("square")

@square.register("Tensor")
def square_tensor(a):
    return a * a

def total(a, b):
    s = C.HyperMap()(square, (a, b))
    return s[0] + s[1]
result = ops.grad(total, (0, 1))(x, y)""",
    "jet_taylor": """
primals = Tensor(np.array([0.5, 1.0], np.float32))
series = Tensor(np.array([[1.0, 1.0], [0.0, 0.0]], np.float32))
result = ops.jet(ops.sin, primals, series)""",
    "derivative_taylor": """
primals = Tensor(np.array([0.5, 1.0], np.float32))
result = ops.derivative(ops.sin, primals, 2)""",
    "vmap_call": """
result = ms.vmap(ops.sin)(Tensor(np.ones((2, 3), np.float32)))""",
}


def program(name: str, mode: str, library: str = "mindspore") -> str:
    """The text of program ``name`` in ``mode``, for ``library``."""
    text = (HEADER + PROGRAMS[name].strip("\n") + "\n").replace("MODE", mode)
    return text.replace("mindspore", library)


MODES = ("GRAPH_MODE", "PYNATIVE_MODE")
