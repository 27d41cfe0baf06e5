"""Python as people write it (issue: Python as written): forms that code written for other
libraries uses, each checked against central differences at first, second and third order in
both modes (``mindgrad.check_grads``)."""

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


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fn", [dict_of_keywords, dict_of_pairs_and_keywords,
                                dict_of_a_tuple_of_pairs, dict_then_items])
@pytest.mark.parametrize("order", [1, 2, 3])
def test_dict_built_by_keywords_and_pairs(fn, shape, order):
    mindgrad.check_grads(fn, (_x(shape),), modes=("rev", "fwd"), order=order)


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


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fn", [partial_called_in_place, partial_keyword_replaced,
                                method_by_getattr])
@pytest.mark.parametrize("order", [1, 2, 3])
def test_callee_reached_through_partial_or_getattr(fn, shape, order):
    mindgrad.check_grads(fn, (_x(shape),), modes=("rev", "fwd"), order=order)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("order", [1, 2, 3])
def test_star_call_of_a_slice_of_own_args(shape, order):
    args = tuple(_x(shape, seed) for seed in range(4))
    mindgrad.check_grads(star_of_a_slice, args, grad_position=0 if order > 1 else None,
                         modes=("rev", "fwd"), order=order)


def test_partial_keyword_of_the_call_wins():
    x = _x((3,))
    assert np.allclose(mindgrad.grad(partial_keyword_replaced)(x),
                       2 * 2.0 * x + np.cos(x + 0.25))


def test_star_call_of_a_slice_by_a_variable_is_refused_clearly():
    def f(x, *args):
        k = 1
        return three(*args[k:])

    with pytest.raises(UnsupportedSyntaxError, match=r"sliced by constants"):
        mindgrad.grad(f)(_x((3,)), _x((3,)), _x((3,)), _x((3,)), _x((3,)))
