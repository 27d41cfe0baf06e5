"""A method call whose receiver's kind is not known when the code is built.

``a.count(v)`` is the method of a list, a str or an array when ``a`` is one, and the user's own
code when ``a`` is an object of the user's class. The rules of arrays' methods (``count`` taken
as constant, ``prod``'s argument taken as ``axis``) must never be applied to the user's object:
that gave a zero derivative without a word. A receiver known to be an array, a number or a
container when the code is built keeps its rules; another one is checked where the call runs,
and a user's method (or a module's function reached through a local, ``__import__('m').f``) is
refused at the user's line, in every mode. Through a name known before the function runs (a
global object) or as a function (``Acc.count(a, v)``), the method is differentiated from its
source.

Oracles: central differences in float64 (tests/support/orders.py) and closed forms.
"""

import inspect

import numpy as np
import pytest

import mindgrad as mg
from mindgrad.errors import NoGradientRuleError, NoTangentRuleError
from tests.support.orders import check_all_modes


class Acc:
    """Methods named like those of arrays, lists and strings, computing something else."""

    def __init__(self, w=3.0):
        self.w = w

    def count(self, v):
        return v * 2.0

    def index(self, v):
        return v ** 2

    def prod(self, items):
        return items[0] * items[1]

    def sum(self, v):
        return v * self.w

    def mean(self, v):
        return np.sin(v)

    def max(self, v):
        return v ** 3

    def dot(self, v):
        return v * v

    def reshape(self, v):
        return np.exp(v)

    def copy(self, v):
        return -v

    def astype(self, v):
        return v * 0.5

    def item(self, v):
        return np.cos(v)

    def tolist(self, v):
        return v + v


class Counts(list):
    """A list whose count is the user's own."""

    def count(self, v):
        return v * 2.0


ACC = Acc()
X = np.array([1.3, 0.4, 2.2])


def by_count(b, a):
    return a.count(b[0])  # @count


def by_prod(b, a):
    return a.prod([b[0], b[1]])  # @prod


def in_a_list(b, xs):
    return xs[0].sum(b[2])  # @list


def built_inside(b):
    a = Acc()
    return a.mean(b[1]) * b[0]  # @inside


def list_subclass(b, a):
    return a.count(b[0])  # @subclass


def through_import(b):
    return __import__("math").prod([b[0], b[1]])  # @import


def numpy_in_a_local(b):
    m = np
    return m.sum(b * b)  # @alias


# (function, the arguments after the array, the line's marker)
REFUSED = [(by_count, (Acc(),), "@count"), (by_prod, (Acc(),), "@prod"),
           (in_a_list, ([Acc()],), "@list"), (built_inside, (), "@inside"),
           (list_subclass, (Counts(),), "@subclass"), (through_import, (), "@import"),
           (numpy_in_a_local, (), "@alias")]
REFUSED_IDS = ["count", "prod taking a list", "an object in a list", "an object built inside",
               "a list subclass's own method", "a module through __import__",
               "NumPy held in a local"]


def _line_of(fn, marker):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, text in enumerate(lines) if marker in text)


def _assert_refused_at(error, fn, marker):
    text = str(error)
    assert "local value that is not an array" in text, text
    assert f"{__file__}:{_line_of(fn, marker)}" in text, text


@pytest.mark.parametrize("fn, rest, marker", REFUSED, ids=REFUSED_IDS)
def test_a_users_method_through_a_local_is_refused_in_reverse_mode(fn, rest, marker):
    with pytest.raises(NoGradientRuleError) as caught:
        mg.grad(fn)(X, *rest)
    _assert_refused_at(caught.value, fn, marker)


@pytest.mark.parametrize("fn, rest, marker", REFUSED, ids=REFUSED_IDS)
def test_a_users_method_through_a_local_is_refused_in_forward_mode(fn, rest, marker):
    with pytest.raises(NoTangentRuleError) as caught:
        mg.jvp(fn, (X,) + rest, (np.ones(3),) + (None,) * len(rest))
    _assert_refused_at(caught.value, fn, marker)


@pytest.mark.parametrize("fn, rest, marker", REFUSED[:2], ids=REFUSED_IDS[:2])
def test_a_users_method_through_a_local_is_refused_at_second_order(fn, rest, marker):
    obj = rest[0]
    with pytest.raises((NoGradientRuleError, NoTangentRuleError)) as caught:
        mg.jvp(lambda b: mg.grad(fn)(b, obj), (X,), (np.ones(3),))
    _assert_refused_at(caught.value, fn, marker)
    with pytest.raises(NoGradientRuleError) as caught:
        mg.hessian(lambda b: fn(b, obj))(X)
    _assert_refused_at(caught.value, fn, marker)


# each method of Acc through an argument, under the name of an array's method
METHODS = ["count", "index", "sum", "mean", "max", "dot", "reshape", "copy", "astype", "item",
           "tolist"]


@pytest.mark.parametrize("name", METHODS)
def test_no_array_method_rule_is_applied_to_a_users_object(name):
    source_file = _write_module(name)
    fn = source_file.f
    with pytest.raises(NoGradientRuleError, match="local value that is not an array"):
        mg.grad(fn)(X, Acc())
    with pytest.raises(NoTangentRuleError, match="local value that is not an array"):
        mg.jvp(fn, (X, Acc()), (np.ones(3), None))


def _write_module(name):
    import importlib.util
    import os
    import tempfile

    folder = tempfile.mkdtemp()
    path = os.path.join(folder, f"user_method_{name}.py")
    with open(path, "w") as f:
        f.write(f"def f(b, a):\n    return a.{name}(b[0]) * b[1]\n")
    spec = importlib.util.spec_from_file_location(f"user_method_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# the workarounds the error names: differentiated from the method's source

def through_global(b):
    return ACC.count(b[0]) * ACC.prod([b[1], b[2]]) + np.sum(ACC.dot(b))


def as_function(b):
    a = Acc(1.5)
    return Acc.mean(a, b[0]) * Acc.max(a, b[1]) + Acc.dot(a, b[2])


def test_a_global_object_s_methods_are_differentiated():
    b0, b1, b2 = X
    # 2 b0 * b1 b2 + b0^2 + b1^2 + b2^2
    want = np.array([2 * b1 * b2, 2 * b0 * b2, 2 * b0 * b1]) + 2 * X
    np.testing.assert_allclose(mg.grad(through_global)(X), want, rtol=1e-12)
    check_all_modes(through_global, X)


def test_a_method_called_as_a_function_is_differentiated():
    b0, b1, _ = X
    want = np.array([np.cos(b0) * b1 ** 3, 3 * np.sin(b0) * b1 ** 2, 2 * X[2]])
    np.testing.assert_allclose(mg.grad(as_function)(X), want, rtol=1e-12)
    check_all_modes(as_function, X)


# what keeps the rules: arrays, lists and strings whose kind is only known where the code runs

def helper(v):
    return v * v


def array_from_a_callee(b):
    y = helper(b)
    return y.sum() + y.max() * y.mean() + y.dot(b) + y.reshape(3, 1).copy()[2, 0]


def list_and_str_from_a_callee(b):
    items = [b[0], b[1], b[0]]
    labels = str(b.shape)
    return b[2] * items.count(b[0]) + b[1] * items.index(b[1]) + labels.count("3")


def test_arrays_from_callees_keep_their_methods_rules():
    y = X * X
    top = np.arange(3) == np.argmax(y)
    want = 2 * X + 2 * X * top * y.mean() + y.max() * 2 * X / 3 + 3 * X ** 2 + \
        2 * X * (np.arange(3) == 2)
    np.testing.assert_allclose(mg.grad(array_from_a_callee)(X), want, rtol=1e-12)
    check_all_modes(array_from_a_callee, X)


def test_lists_and_strings_keep_their_methods_rules():
    # items.count(b[0]) is 2, items.index(b[1]) is 1, str((3,)).count("3") is 1
    np.testing.assert_allclose(mg.grad(list_and_str_from_a_callee)(X), [0.0, 1.0, 2.0])
    check_all_modes(list_and_str_from_a_callee, X)


def by_kind(b, a):
    if isinstance(a, Acc):
        return b[0] * 4.0
    return a.count(b[0]) * b[1]


def test_the_check_is_made_only_in_the_branch_taken():
    np.testing.assert_allclose(mg.grad(by_kind)(X, Acc()), [4.0, 0.0, 0.0])
    np.testing.assert_allclose(mg.jvp(by_kind, (X, Acc()), (np.ones(3), None))[1], 4.0)
    # a list takes the other branch: its count is constant
    np.testing.assert_allclose(mg.grad(by_kind)(X, [X[0], X[0]]), [0.0, 2.0, 0.0])


# a Cell held in a local: its method may read the weights asked for

class Scale(mg.nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = mg.Parameter(mg.Tensor(np.array([1.5, 2.0])), name="w")

    def scale(self, x):
        return x * self.w

    def construct(self, x):
        return self.scale(x)


class Stack(mg.nn.Cell):
    def __init__(self):
        super().__init__()
        self.layers = mg.nn.CellList([Scale()])

    def construct(self, x):
        layer = self.layers[0]
        return np.sum(layer.scale(x))  # @cell


class Direct(Stack):
    def construct(self, x):
        return np.sum(self.layers[0].scale(x))


def test_weights_read_by_a_method_of_a_local_cell_are_never_a_silent_zero():
    x = mg.Tensor(np.array([3.0, 4.0]))
    net = Stack()
    with pytest.raises(NoGradientRuleError) as caught:
        mg.GradOperation(get_by_list=True)(net, net.trainable_params())(x)
    _assert_refused_at(caught.value, Stack.construct, "@cell")
    # through the attribute, the method is followed: d/dw sum(x * w) = x
    direct = Direct()
    (dw,) = mg.GradOperation(get_by_list=True)(direct, direct.trainable_params())(x)
    np.testing.assert_allclose(np.asarray(dw), [3.0, 4.0])
