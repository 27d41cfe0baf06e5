"""Branches decided by the type of an argument (``isinstance``, ``type(c) is``, ``hasattr``,
``callable``).

A function may use what only one type has (``c.value`` of a ``Box``, ``c(x)`` of a function,
``c.scale(x)``) in a branch that other types never take. The program is valid for both, so
what has no gradient rule there is an error only in the branch taken, at run time, at the
user's line, and never a refusal of the whole function. An object with nothing to
differentiate (a ``Box``) is a constant: its gradient is zero, as for an input the function
does not use.

Oracles: central differences in float64 along random directions of the function (first
order) and of its gradient written by hand (second order), and the closed form
``f = sum((x * c) ** 3)``.
"""

import inspect

import numpy as np
import pytest

import mindgrad
from mindgrad import grad, jvp


class Box:
    value = 2.0


class Holder:
    def __init__(self, value):
        self.value = value


def by_isinstance(x, c):
    if isinstance(c, Box):
        return x * c.value
    return x * c


def by_type(x, c):
    if type(c) is Holder:
        return x * c.value
    return x * c


def by_hasattr(x, c):
    if hasattr(c, "value"):
        return x * c.value
    return x * c


class Scaler:
    def __init__(self, value):
        self.value = value

    def scale(self, x):
        return x * self.value


def by_callable(x, c):
    if callable(c):
        return c(x)  # @call
    return x * c


def by_method(x, c):
    if isinstance(c, Scaler):
        return c.scale(x)  # @method
    return x * c


def through_helper(x, c):
    return np.sum(by_isinstance(x, c) ** 3)


def through_type_helper(x, c):
    return np.sum(by_type(x, c) ** 3)


def through_hasattr_helper(x, c):
    return np.sum(by_hasattr(x, c) ** 3)


def through_callable_helper(x, c):
    return np.sum(by_callable(x, c) ** 3)


def through_method_helper(x, c):
    return np.sum(by_method(x, c) ** 3)


def inline(x, c):
    if isinstance(c, Box):
        y = x * c.value
    else:
        y = x * c
    return np.sum(y ** 3)


FUNCTIONS = [through_helper, through_type_helper, through_hasattr_helper, inline]
IDS = ["isinstance in a helper", "type is in a helper", "hasattr in a helper", "isinstance"]
# a branch calling c, or a method of c, not taken by an array
CALLS = [through_callable_helper, through_method_helper]
CALL_IDS = ["callable in a helper", "isinstance then a method in a helper"]
# the object that takes the branch reading c.value in each function
OBJECTS = {through_helper: Box(), through_type_helper: Holder(2.0),
           through_hasattr_helper: Holder(2.0), inline: Box()}


def grads_by_hand(x, c):
    """The gradient of sum((x * c) ** 3) with respect to x and c."""
    return 3 * x ** 2 * c ** 3, 3 * c ** 2 * x ** 3


def sample(seed, n=3):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 1.5, n), rng.uniform(-1.5, 1.5, n)


def difference(fn, args, directions, eps=1e-6):
    """The central difference of ``fn`` at ``args`` along ``directions``."""
    plus = fn(*(a + eps * d for a, d in zip(args, directions)))
    minus = fn(*(a - eps * d for a, d in zip(args, directions)))
    if isinstance(plus, tuple):
        return tuple((p - m) / (2 * eps) for p, m in zip(plus, minus))
    return (plus - minus) / (2 * eps)


@pytest.mark.parametrize("f", FUNCTIONS + CALLS, ids=IDS + CALL_IDS)
def test_the_brief_reproducer_differentiates_an_array_argument(f):
    g = grad(f, 1)(np.array([1.0]), np.array([3.0]))
    np.testing.assert_allclose(g, [27.0], rtol=1e-12)  # 3 c^2 x^3


@pytest.mark.parametrize("f", FUNCTIONS + CALLS, ids=IDS + CALL_IDS)
def test_grad_with_an_array_matches_differences(f):
    x, c = sample(0)
    gx, gc = grad(f, (0, 1))(x, c)
    rng = np.random.default_rng(1)
    for _ in range(3):
        u, v = rng.standard_normal(3), rng.standard_normal(3)
        numeric = difference(f, (x, c), (u, v))
        np.testing.assert_allclose(gx @ u + gc @ v, numeric, rtol=1e-7)
    np.testing.assert_allclose((gx, gc), grads_by_hand(x, c), rtol=1e-12)


@pytest.mark.parametrize("f", FUNCTIONS, ids=IDS)
def test_grad_with_an_object_is_right_for_x_and_zero_for_the_object(f):
    x, _ = sample(2)
    box = OBJECTS[f]
    gx, gc = grad(f, (0, 1))(x, box)
    u = np.random.default_rng(3).standard_normal(3)
    numeric = difference(lambda x: f(x, box), (x,), (u,))
    np.testing.assert_allclose(gx @ u, numeric, rtol=1e-7)
    np.testing.assert_allclose(gx, grads_by_hand(x, 2.0)[0], rtol=1e-12)
    # an object gets the zero gradient, as an input the function does not use
    assert gc == 0 and grad(lambda x, c: np.sum(x ** 2), 1)(x, box) == 0
    assert grad(f, 1)(x, box) == 0


@pytest.mark.parametrize("f", FUNCTIONS, ids=IDS)
def test_jvp_matches_differences_for_both_types(f):
    x, c = sample(4)
    rng = np.random.default_rng(5)
    u, v = rng.standard_normal(3), rng.standard_normal(3)
    out, t = jvp(f, (x, c), (u, v))
    np.testing.assert_allclose(out, f(x, c), rtol=1e-12)
    np.testing.assert_allclose(t, difference(f, (x, c), (u, v)), rtol=1e-7)
    box = OBJECTS[f]
    out, t = jvp(lambda x: f(x, box), (x,), (u,))
    np.testing.assert_allclose(out, f(x, box), rtol=1e-12)
    np.testing.assert_allclose(t, difference(lambda x: f(x, box), (x,), (u,)), rtol=1e-7)


@pytest.mark.parametrize("f", CALLS, ids=CALL_IDS)
def test_jvp_and_jvp_over_grad_with_an_array_match_differences(f):
    x, c = sample(10)
    rng = np.random.default_rng(11)
    u, v = rng.standard_normal(3), rng.standard_normal(3)
    _, t = jvp(f, (x, c), (u, v))
    np.testing.assert_allclose(t, difference(f, (x, c), (u, v)), rtol=1e-7)
    _, (tx, tc) = jvp(lambda x, c: grad(f, (0, 1))(x, c), (x, c), (u, v))
    nx, nc = difference(grads_by_hand, (x, c), (u, v))
    np.testing.assert_allclose(tx, nx, rtol=1e-7)
    np.testing.assert_allclose(tc, nc, rtol=1e-7)


def _line_of(fn, marker):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, text in enumerate(lines) if marker in text)


def test_the_branch_calling_what_an_argument_holds_calls_it():
    # a function held in an argument is called through the run-time dispatcher:
    # d/dx sum((2 x)^3) = 24 x^2
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(grad(through_callable_helper)(x, lambda t: 2.0 * t), 24 * x * x)
    mindgrad.check_grads(lambda t: through_callable_helper(t, lambda u: np.sin(u) * 2.0),
                         (x,), modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("f, c, error, marker", [
    (through_method_helper, Scaler(2.0), mindgrad.NoGradientRuleError, "@method"),
], ids=CALL_IDS[1:])
def test_the_branch_calling_what_an_argument_holds_is_a_clear_error_where_it_runs(
        f, c, error, marker):
    # a bound method held in an argument cannot be followed: refused where the branch runs,
    # naming the user's line, never a gradient taking the call as a constant
    x = np.array([1.0, 2.0])
    with pytest.raises(error) as caught:
        grad(f)(x, c)
    assert f"{__file__}:{_line_of(by_method, marker)}" in str(caught.value)


@pytest.mark.parametrize("f", FUNCTIONS, ids=IDS)
def test_jvp_over_grad_matches_differences_of_the_gradient(f):
    x, c = sample(6)
    rng = np.random.default_rng(7)
    u, v = rng.standard_normal(3), rng.standard_normal(3)
    g = grad(f, (0, 1))
    _, (tx, tc) = jvp(lambda x, c: g(x, c), (x, c), (u, v))
    nx, nc = difference(grads_by_hand, (x, c), (u, v))
    np.testing.assert_allclose(tx, nx, rtol=1e-7)
    np.testing.assert_allclose(tc, nc, rtol=1e-7)
    # with respect to x alone: c an array, then an object
    _, tx = jvp(lambda x: grad(f, 0)(x, c), (x,), (u,))
    np.testing.assert_allclose(tx, difference(lambda x: grads_by_hand(x, c)[0], (x,), (u,)),
                               rtol=1e-7)
    box = OBJECTS[f]
    _, tx = jvp(lambda x: grad(f, 0)(x, box), (x,), (u,))
    np.testing.assert_allclose(tx, difference(lambda x: grads_by_hand(x, 2.0)[0], (x,), (u,)),
                               rtol=1e-7)


@pytest.mark.parametrize("f", FUNCTIONS + CALLS, ids=IDS + CALL_IDS)
def test_grad_over_grad_matches_differences_of_the_gradient(f):
    x, c = sample(8)
    v = np.random.default_rng(9).standard_normal(3)
    hv = grad(lambda c: np.sum(grad(f, 0)(x, c) * v))(c)
    # d/dc of v . (3 x^2 c^3) is 9 x^2 c^2 v
    np.testing.assert_allclose(hv, 9 * x ** 2 * c ** 2 * v, rtol=1e-12)


def reads_flat(x, c):
    return np.sum(x * c.flat[1])  # @flat


def _line(marker):
    return _line_of(reads_flat, marker)


def test_an_attribute_of_an_array_without_a_rule_is_a_clear_error_at_the_users_line():
    x = np.array([1.0, 2.0])
    with pytest.raises(mindgrad.NoGradientRuleError,
                       match=r"the attribute \.flat of a differentiated value has no gradient "
                             r"rule") as caught:
        grad(reads_flat, 1)(x, x)
    assert (caught.value.filename, caught.value.lineno) == (__file__, _line("@flat"))
    with pytest.raises(mindgrad.NoTangentRuleError,
                       match=r"the attribute \.flat has no tangent rule") as caught:
        jvp(lambda c: reads_flat(x, c), (x,), (x,))
    assert (caught.value.filename, caught.value.lineno) == (__file__, _line("@flat"))


@pytest.mark.parametrize("outer", ["jvp", "grad"])
def test_second_order_names_the_attribute_and_the_users_line_not_a_cell(outer):
    # grad w.r.t. x reads c.flat of a constant; differentiated again w.r.t. c, it has no rule
    x, c = np.array([1.0, 2.0]), np.array([0.5, -0.3])
    g = grad(reads_flat, 0)
    error = mindgrad.NoTangentRuleError if outer == "jvp" else mindgrad.NoGradientRuleError
    with pytest.raises(error, match=r"the attribute \.flat") as caught:
        if outer == "jvp":
            jvp(lambda c: g(x, c), (c,), (c,))
        else:
            grad(lambda c: np.sum(g(x, c)))(c)
    assert "Cell" not in str(caught.value) and "self." not in str(caught.value)
    assert (caught.value.filename, caught.value.lineno) == (__file__, _line("@flat"))


def first_of(x, cs):
    c = cs[0]
    if isinstance(c, Box):
        return np.sum(x * c.value)
    return np.sum(x * c)


def test_the_branch_taken_with_a_differentiated_value_without_a_rule_is_an_error():
    # the Box is an element of a list differentiated: its .value is read, and has no rule
    x = np.array([1.0, 2.0])
    with pytest.raises(mindgrad.NoGradientRuleError, match=r"the attribute \.value"):
        grad(first_of, 1)(x, [Box()])
    np.testing.assert_allclose(grad(first_of, 1)(x, [np.array([3.0, 4.0])])[0], x)
