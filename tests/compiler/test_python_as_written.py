"""Python as people write it: forms that code written for other libraries uses, each checked
against central differences (``mindgrad.check_grads``) in both modes at first order on several
shapes and at second order, and (the ``large`` tier) at third order in reverse mode."""

import functools

import numpy as np
import pytest

import mindgrad
from mindgrad.errors import UnsupportedSyntaxError

SHAPES = [(), (3,), (2, 3)]


def _x(shape, seed=0):
    return np.random.default_rng(seed).uniform(0.5, 1.5, shape)


def dict_of_keywords(x):
    d = dict(a=x, b=np.sin(x) * 2.0)
    return np.sum(d["a"] * d["b"])


def dict_of_pairs_and_keywords(x):
    d = dict([("a", x), ("c", x * x)], b=np.cos(x))
    return np.sum(d["a"] * d["b"] + d["c"])


def dict_of_a_tuple_of_pairs(x):
    d = dict((("a", np.exp(x)), ("b", x)))
    return np.sum(d["a"] / d["b"])


def dict_of_keywords_unpacked(x, **kw):
    d = dict(**kw, a=x)
    return np.sum(d["a"] * d["s"])


def dict_then_items(x):
    total = 0.0
    for key, value in dict(u=x, v=x ** 2).items():
        total = total + np.sum(value) * (2.0 if key == "u" else 3.0)
    return total


@pytest.mark.parametrize("order", [1, 2])
def test_dict_of_the_functions_own_keywords(order):
    mindgrad.check_grads(lambda x, s: dict_of_keywords_unpacked(x, s=s),
                         (_x((3,)), _x((3,), 1)), modes=("rev", "fwd"), order=order)


def test_dict_merged_from_a_mapping_and_keywords_is_refused_clearly():
    def f(x, m):
        d = dict(m, b=x)
        return np.sum(d["b"])

    with pytest.raises(UnsupportedSyntaxError, match=r"dict\(m, b=x\)|dict\(mapping, key=value"):
        mindgrad.grad(f)(_x((3,)), {"a": 1.0})


def quadratic(x, cov, shift=0.0):
    return np.sum(x * cov * x + np.sin(x + shift))


def partial_called_in_place(x):
    return functools.partial(quadratic, cov=2.0)(x) + \
        functools.partial(quadratic, x, shift=0.5)(cov=1.5)


def partial_keyword_replaced(x):
    return functools.partial(quadratic, cov=2.0, shift=1.0)(x, shift=0.25)


class Holder:
    def scaled(self, x):
        return np.tanh(x) * 3.0


HOLDER = Holder()


def method_by_getattr(x):
    # the getattr calls are the point
    return np.sum(getattr(HOLDER, "scaled")(x) * getattr(np, "exp")(x)) + \
        np.sum(getattr(x, "T") * 2.0)  # noqa: B009


def three(a, b, c):
    return np.sum(a * np.sin(b) * c)


def star_of_a_slice(*args):
    return three(*args[1:]) + three(*args[:-1]) + three(*args[::2][:2], args[3])


def star_of_a_slice_of(x):
    return star_of_a_slice(x, x * 1.5, np.cos(x), x * x)


@pytest.mark.parametrize("shape", SHAPES)
def test_star_call_of_a_slice_of_own_args(shape):
    args = tuple(_x(shape, seed) for seed in range(4))
    mindgrad.check_grads(star_of_a_slice, args, modes=("rev", "fwd"))


def test_partial_keyword_of_the_call_wins():
    x = _x((3,))
    assert np.allclose(mindgrad.grad(partial_keyword_replaced)(x),
                       2 * 2.0 * x + np.cos(x + 0.25))


def _star_of_a_slice_by_a_variable(x, *args):
    k = 1
    return three(*args[k:]) * np.sum(x)


def test_star_call_of_a_slice_by_a_variable_is_spread_when_it_runs():
    args = tuple(_x((3,), seed) for seed in range(5))
    mindgrad.check_grads(_star_of_a_slice_by_a_variable, args, modes=("rev", "fwd"), order=2)


VALUE_AND_GRAD = mindgrad.value_and_grad(lambda t: np.sum(np.sin(t) * t))
VALUE_AND_GRADS = mindgrad.value_and_grad(lambda t, u: np.sum(np.sin(t) * u * u), (0, 1))
GRAD_WITH_SENS = mindgrad.grad(lambda t: np.sin(t) * t, sens_param=True)


def value_and_grad_inside(x):
    v, g = VALUE_AND_GRAD(x)
    return v * 0.5 + np.sum(g * g)


def value_and_grads_inside(x):
    v, (g1, g2) = VALUE_AND_GRADS(x, x * 2.0)
    return v * np.sum(g1 * g2)


def grad_with_a_sensitivity_inside(x):
    # the sensitivity depends on x too: its derivative passes through the gradient
    return np.sum(GRAD_WITH_SENS(x, np.cos(x)) ** 2)


@pytest.mark.parametrize("shape", SHAPES)
def test_derivative_with_respect_to_the_sensitivity(shape):
    """grad(f, sens_param=True)(x, s) is linear in s: its derivative along s is f's gradient
    at x along that direction (it was 0: the sensitivity was taken as a constant)."""
    x, s = _x(shape), _x(shape, 1)
    mindgrad.check_grads(GRAD_WITH_SENS, (x, s), modes=("rev", "fwd"), order=1)
    got = mindgrad.grad(GRAD_WITH_SENS, 1)(x, s)
    np.testing.assert_allclose(got, np.cos(x) * x + np.sin(x), rtol=1e-12)
    got = mindgrad.grad(lambda t, u: np.sum(GRAD_WITH_SENS(t, u) ** 2), 1)(x, s)
    np.testing.assert_allclose(got, 2 * (np.cos(x) * x + np.sin(x)) ** 2 * s, rtol=1e-12)


GRAD_WITH_SENSES = mindgrad.grad(lambda t: (np.sin(t), t * t), sens_param=True)


@pytest.mark.parametrize("order", [1, 2])
def test_sensitivity_of_a_tuple_output(order):
    x = _x((3,))
    mindgrad.check_grads(lambda t, s: np.sum(GRAD_WITH_SENSES(t, s) ** 2),
                         (x, (np.cos(x), np.sin(x))), modes=("rev", "fwd"), order=order)


def _wave(t):
    return np.sin(t) * t


def _pair(t, u):
    return np.sum(t * u), t * np.cos(u)


def vjp_inside(x):
    out, back = mindgrad.vjp(_wave, x)
    (gx,) = back(np.cos(x))
    return np.sum(gx * out)


def vjp_of_two_inputs_and_outputs_inside(x):
    out, back = mindgrad.vjp(_pair, x, x * 2.0)
    gx, gu = back(1.5, np.ones_like(x))  # one cotangent per output
    return np.sum(gx * gu) + out[0]


def test_vjp_inside_gives_what_vjp_gives():
    x = _x((3,))
    _, back = mindgrad.vjp(_wave, x)
    np.testing.assert_allclose(vjp_inside(x), np.sum(back(np.cos(x))[0] * _wave(x)))


def _vjp_then_changed(x):
    out, back = mindgrad.vjp(_wave, x)
    x[0] = 2.0
    return np.sum(back(out)[0])


def _pullback_as_a_value(x):
    out, back = mindgrad.vjp(_wave, x)
    keep = [back]
    return np.sum(keep[0](out)[0])


@pytest.mark.parametrize("fn, message", [(_vjp_then_changed, "'x' changes after the call"),
                                         (_pullback_as_a_value, "used other than called")])
def test_vjp_inside_refuses_what_it_cannot_follow(fn, message):
    with pytest.raises(UnsupportedSyntaxError, match=message):
        mindgrad.grad(fn)(_x((3,)))


def _with_a_default(p, q=0.5, *, r=2.0):
    return np.sin(p) * q * r


@pytest.mark.parametrize("shape", SHAPES)
def test_vjp_of_a_function_with_defaults(shape):
    """vjp's forward function took no defaults: vjp(h, x) of ``def h(p, q=0.5)`` raised
    "h_forward() missing 1 required positional argument" (found by the random-program
    tester's vjp inside)."""
    x, v = _x(shape), _x(shape, 1)
    out, back = mindgrad.vjp(_with_a_default, x)
    np.testing.assert_allclose(out, np.sin(x) * 1.0)
    np.testing.assert_allclose(back(v)[0], v * np.cos(x) * 1.0)
    out, back = mindgrad.vjp(_with_a_default, x, 3.0)
    np.testing.assert_allclose(back(v)[0], v * np.cos(x) * 6.0)


FORMS = [dict_of_keywords, dict_of_pairs_and_keywords, dict_of_a_tuple_of_pairs,
         dict_then_items, partial_called_in_place, partial_keyword_replaced, method_by_getattr,
         star_of_a_slice_of, value_and_grad_inside, value_and_grads_inside,
         grad_with_a_sensitivity_inside, vjp_inside, vjp_of_two_inputs_and_outputs_inside]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fn", FORMS)
def test_each_form_at_first_order(fn, shape):
    mindgrad.check_grads(fn, (_x(shape),), modes=("rev", "fwd"))


@pytest.mark.parametrize("fn", FORMS)
def test_each_form_at_second_order(fn):
    mindgrad.check_grads(fn, (_x((2, 3)),), modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("fn", [dict_then_items, star_of_a_slice_of,
                                grad_with_a_sensitivity_inside,
                                vjp_of_two_inputs_and_outputs_inside])
def test_forms_at_third_order(fn):
    """Reverse over reverse over reverse: the mode that builds the most code."""
    mindgrad.check_grads(fn, (_x((3,)),), order=3)


def _keyword_without_a_default(p, q=0.5, *, r):
    return np.sin(p) * q * r


def test_vjp_of_a_keyword_only_parameter_without_a_default_is_not_filled_in():
    """vjp passes inputs by position: h(p, q=0.5, *, r) cannot get r, and the default of q
    must not fall on r (h_forward(p, q, r) with defaults (0.5,) would read r = 0.5)."""
    with pytest.raises(TypeError, match="missing"):
        mindgrad.vjp(_keyword_without_a_default, _x((3,)), 2.0)
