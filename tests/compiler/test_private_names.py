"""Names private to a class (``self.__k``, ``__helper``): Python mangles them to ``_M__k``
inside the class body, and the code mindgrad writes runs outside it, so it must read them as
Python does. Gradients are checked against central differences in float64 (``check_grads``),
in both modes and at second order, and against closed forms."""

import numpy as np
import pytest

import mindgrad
from mindgrad import nn
from mindgrad.mindspore.nn import Parameter, ParameterTuple


def _Scaled__helper(v):  # what ``__helper`` inside class Scaled's body names
    return np.sin(v) * v


def __helper(v):  # noqa: N807 -- the unmangled global, which a method cannot reach
    return v


class Scaled:
    def __init__(self, k):
        self.__k = k
        self.__scale = np.array([1.0, -2.0, 0.5])

    def loss(self, x):
        return np.sum(np.sin(x) * self.__k * self.__scale)

    def nested(self, x):
        def inner(y):
            return np.tanh(y) * self.__k

        return np.sum(inner(x) * x)

    def __part(self, x):
        return np.exp(x * self.__k)

    def calls_private_method(self, x):
        return np.sum(self.__part(x) * self.__scale)

    def calls_private_global(self, x):
        return np.sum(__helper(x) * self.__k)

    def private_parameter(self, __x):
        return np.sum(__x ** 3 * self.__k)

    def lambda_in_method(self, x):
        f = lambda y: y * self.__k  # noqa: E731
        return np.sum(np.cos(f(x)))


class Base:
    def __init__(self):
        self.__k = 2.0

    def part(self, x):
        return x * x * self.__k  # Base's own: _Base__k


class Derived(Base):
    def __init__(self):
        super().__init__()
        self.__k = 5.0  # another attribute: _Derived__k

    def loss(self, x):
        return np.sum(self.part(x) * self.__k)


X = np.array([0.3, -0.7, 1.1])


@pytest.mark.parametrize("method", ["loss", "nested", "calls_private_method",
                                    "calls_private_global", "private_parameter",
                                    "lambda_in_method"])
def test_methods_reading_private_names_match_finite_differences(method):
    fn = getattr(Scaled(1.5), method)
    mindgrad.check_grads(fn, (X,), modes=("rev", "fwd"))
    # a method calling another method: its gradient reads the mangled self._Scaled__k from
    # the tape, a constant for the second derivative (a NoGradientRuleError before)
    _second_order(fn)


def _second_order(fn):
    """The gradient of the method, differentiated again (a Hessian-vector product)."""
    g = mindgrad.grad(fn)
    u = np.array([1.0, 2.0, -0.5])
    mindgrad.check_grads(lambda x: np.sum(g(x) * u), (X,), modes=("rev", "fwd"))


def test_private_attribute_gradient_has_its_closed_form():
    model = Scaled(1.5)
    np.testing.assert_allclose(mindgrad.grad(model.loss)(X),
                               np.cos(X) * 1.5 * np.array([1.0, -2.0, 0.5]), rtol=1e-12)
    _, tangent = mindgrad.jvp(model.loss, (X,), (np.ones(3),))
    np.testing.assert_allclose(tangent, np.sum(np.cos(X) * 1.5 * np.array([1.0, -2.0, 0.5])),
                               rtol=1e-12)
    # __helper inside the class is the global _Scaled__helper, as Python calls it
    g = mindgrad.grad(model.calls_private_global)(X)
    np.testing.assert_allclose(g, 1.5 * (np.cos(X) * X + np.sin(X)), rtol=1e-12)
    assert model.calls_private_global(X) == pytest.approx(np.sum(_Scaled__helper(X) * 1.5))


def test_each_class_reads_its_own_private_attribute():
    model = Derived()
    np.testing.assert_allclose(mindgrad.grad(model.loss)(X), 2 * X * 2.0 * 5.0, rtol=1e-12)
    _, tangent = mindgrad.jvp(model.loss, (X,), (np.ones(3),))
    assert tangent == pytest.approx(np.sum(2 * X * 2.0 * 5.0), rel=1e-12)
    _second_order(model.loss)


class _PrivateWeights(nn.Cell):
    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(3)
        self.__w = Parameter(rng.standard_normal((3, 2)), name="w")
        self.__b = Parameter(rng.standard_normal(2), name="b")

    def construct(self, x):
        return np.sum(np.tanh(x @ self.__w + self.__b) ** 2)


def test_a_cell_with_private_parameters_at_first_and_second_order():
    net = _PrivateWeights()
    mindgrad.check_grads(net, (X,), modes=("rev", "fwd"))
    w, b = net.trainable_params()
    h = np.tanh(X @ w + b)
    d_pre = 2 * h * (1 - h * h)
    _, (g_w, g_b) = mindgrad.grad(net, 0, ParameterTuple([w, b]))(X)
    np.testing.assert_allclose(g_w, np.outer(X, d_pre), rtol=1e-12)
    np.testing.assert_allclose(g_b, d_pre, rtol=1e-12)
    _second_order(net)


class Scaled2:
    def __init__(self):
        self.__k = 3.0

    def loss(self, x):
        return np.sum(x * self.__k)


def test_the_generated_code_reads_the_mangled_name():
    text = mindgrad.source(mindgrad.grad(Scaled2().loss), X)
    assert "self._Scaled2__k" in text and "self.__k\n" not in text


class _PrivateBlock(nn.Cell):
    def __init__(self, seed):
        super().__init__()
        self.__w = Parameter(np.random.default_rng(seed).standard_normal(3), name="w")

    def construct(self, x):
        return np.tanh(x * self.__w)


class _PrivateSubCells(nn.Cell):
    def __init__(self):
        super().__init__()
        self.__block = _PrivateBlock(4)
        self.__layers = nn.CellList([_PrivateBlock(5), _PrivateBlock(6)])

    def construct(self, x):
        y = self.__block(x)
        for layer in self.__layers:
            y = layer(y)
        return np.sum(y)


def test_private_sub_cells_and_their_weights_match_finite_differences():
    net = _PrivateSubCells()
    mindgrad.check_grads(net, (X,), modes=("rev", "fwd"))
    weights = net.trainable_params()
    _, grads = mindgrad.grad(net, 0, ParameterTuple(weights))(X)
    eps = 1e-6
    for w, g in zip(weights, grads):
        held = np.array(w.asnumpy(), dtype=np.float64)
        differences = []
        for e in np.eye(3) * eps:
            w.set_data(held + e)
            up = net(X)
            w.set_data(held - e)
            down = net(X)
            differences.append((up - down) / (2 * eps))
        w.set_data(held)
        np.testing.assert_allclose(g, differences, rtol=1e-6, atol=1e-9)
