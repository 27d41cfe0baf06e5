"""Every Python operator, in every mode: grad, jvp, grad of grad and jvp over grad.

``&``, ``|``, ``^``, ``~``, ``<<`` and ``>>`` (and their in-place forms) take integers and
booleans and give a constant, also where an operand is computed from the input (an integer
cast); ``//`` is piecewise constant; ``%`` and ``@`` have their usual derivatives. ``|``
merging dicts is refused with a clear error. Derivatives are checked against central finite
differences in float64 (``mindgrad.check_grads``), first and second order, both modes.
"""

import numpy as np
import pytest

import mindgrad
from mindgrad.errors import UnsupportedSyntaxError
from tests.support.versions import needs_numpy

X = np.array([0.5, 1.3, 2.6, -0.4])  # no element near an integer or a multiple of 0.7


def check(fn, x=X):
    for order in (1, 2):
        mindgrad.check_grads(fn, (x,), modes=("rev", "fwd"), order=order)
    # mindgrad.hessian against central differences of the gradient
    v = np.random.default_rng(3).normal(size=x.shape)
    eps = 1e-6
    gf = mindgrad.grad(fn)
    numeric = (gf(x + eps * v) - gf(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(mindgrad.hessian(fn)(x) @ v, numeric, rtol=1e-5, atol=1e-7)


def masks_and(x):
    m = (x > 0) & (x < 2)
    return np.sum(np.where(m, x ** 2, x))


def masks_or_xor_invert(x):
    m = ((x < 0) | (x > 2)) ^ ~(x > 1)
    return np.sum(np.where(m, x ** 3, np.sin(x)))


def masks_in_place(x):
    m = x > 0
    m &= x < 2
    m |= x < -1
    m ^= x > 100
    return np.sum(np.where(m, x ** 2, x))


def bits_of_a_cast(x):
    k = x.astype(int)
    return np.sum(x ** 2 * (k & 1) + x * (k | 2) * (k ^ 1) - x ** 3 * (k << 1) * (k >> 1))


def inverted_cast(x):
    k = x.astype(int)
    return np.sum(np.sin(x) * ~k)


def bits_in_place(x):
    k = x.astype(int)
    k &= 3
    k |= 4
    k ^= 1
    k <<= 2
    k >>= 1
    return np.sum(x ** 2 * k)


def boolean_cast_masks(x):
    a = (x * 1.0).astype(bool)
    m = a & (x > 1)
    return np.sum(np.where(m, x ** 2, x))


def scalar_bits(x):
    n = 3 & 5 | 1 ^ 2
    return np.sum(x ** 2) * (n << 1) * ~(-4)


def floor_division_and_modulo(x):
    y = x * 1.0
    y //= 0.7
    z = x * 1.0
    z %= 0.7
    return np.sum(np.sin(z) * x + y * x ** 2 + np.cos(x % 0.9) * (x // 0.9))


def matrix_products(x):
    w = x * 1.0
    w @= np.outer(x, x) + np.eye(4)
    return x @ np.outer(x, np.sin(x)) @ x + np.sum(w ** 2)


@pytest.mark.parametrize("fn", [
    masks_and, masks_or_xor_invert, masks_in_place, bits_of_a_cast, inverted_cast, bits_in_place,
    boolean_cast_masks, scalar_bits, floor_division_and_modulo,
    pytest.param(matrix_products, marks=needs_numpy((1, 25), "an in-place matmul (a @= b)"))])
def test_operator(fn):
    check(fn)


def test_the_constant_operators_leave_no_gradient_code():
    text = mindgrad.source(mindgrad.grad(bits_of_a_cast), X)
    assert "d_k" not in text and "and_" in text


def merge(x):
    a = {"p": x, "q": 2 * x}
    b = {"q": x ** 2}
    c = a | b
    return np.sum(c["p"] * c["q"])


@pytest.mark.parametrize("mode", ["grad", "jvp", "hessian"])
def test_merging_dicts_is_refused_at_the_users_line(mode):
    run = {"grad": lambda: mindgrad.grad(merge)(X),
           "jvp": lambda: mindgrad.jvp(merge, (X,), (X,)),
           "hessian": lambda: mindgrad.hessian(merge)(X)}[mode]
    with pytest.raises(UnsupportedSyntaxError, match=r"merging dicts with \|") as info:
        run()
    assert info.value.lineno == merge.__code__.co_firstlineno + 3
    assert "c = a | b" in str(info.value.text)
