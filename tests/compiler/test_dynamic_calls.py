"""Calls of functions the code reaches only when it runs (the run-time dispatcher,
``mindgrad.api.dynamic``): callables in containers, parameters and defaults, lambdas as values,
star-calls of sequences built at run time, and mindgrad's own transformations of local
functions. Each form is checked against central differences (``mindgrad.check_grads``) in both
modes at first order on several shapes and at second order; the ``large`` tier checks six at
third order in both modes, ``-m slow`` every one. Then the cache: a callable made afresh at
each call reuses what was built, a callable replaced is followed; and what is refused."""

import functools

import numpy as np
import pytest

import mindgrad
from mindgrad.api import dynamic
from mindgrad.errors import UnsupportedSyntaxError

SHAPES = [(), (3,), (2, 3)]


def _x(shape, seed=0):
    return np.random.default_rng(seed).uniform(0.5, 1.5, shape)


def sine(t):
    return np.sin(t)


def square(t):
    return t * t


def scaled(t, k=2.0):
    return np.tanh(t) * k


FUNCTIONS = {"s": sine, "q": square}
LISTED = [sine, square, scaled]


def from_a_dict(x):
    return np.sum(FUNCTIONS["s"](x) + FUNCTIONS["q"](x) * 0.5)


def from_a_list_by_index(x):
    return np.sum(LISTED[1](x) * LISTED[0](x) + LISTED[2](x, k=0.5))


def from_a_list_in_a_loop(x):
    total = 0.0
    for fn in LISTED:
        total = total + np.sum(fn(x) * x)
    return total


def keyword_through_a_list(x):
    """A keyword moving with the input, through the dispatcher: at higher orders the generated
    tangent calls take tangents by keyword too (t_x0 met t_x0)."""
    return np.sum(LISTED[2](x, k=x * 2.0) + LISTED[0](x))


def with_a_numpy_default(x, reduce=np.sum):
    return reduce(np.sin(x) * x)


def with_a_default_of_its_own(x, act=scaled):
    return np.sum(act(x) * x)


def apply(fn, t):
    return fn(t)


def apply_twice(fn, t, k):
    return fn(fn(t) * k)


def given_to_a_function(x):
    return np.sum(apply(sine, x) * apply(lambda t: t * 3.0, x))


def a_lambda_given_on(x):
    k = 0.5
    return np.sum(apply_twice(lambda t: np.cos(t) + k, x, 2.0))


PARTIALS = [functools.partial(scaled, k=1.5), functools.partial(np.multiply, 2.0)]


def partials_held(x):
    return np.sum(PARTIALS[0](x) * PARTIALS[1](x))


def three(a, b, c):
    return np.sum(a * np.sin(b) * c)


def star_of_a_list_built(x):
    rest = [np.cos(x), x * x]
    return three(x, *rest)


def star_of_a_comprehension(x):
    return three(*[x * (i + 1.0) for i in range(3)])


def star_of_a_list_changed(*args):
    args = list(args)
    args[0] = np.sin(args[0])
    return three(*args)


def star_of_args_changed(x):
    return star_of_a_list_changed(x, x * 2.0, np.exp(x))


CLOSED_ARGS = (1.5, 2.0, 0.5)
CLOSED_AT = (0, 2)


def closed(*ps):
    """The wrapper that differentiates some arguments of a function, closing over the rest."""
    return three(*[ps[CLOSED_AT.index(i)] if i in CLOSED_AT else a
                   for i, a in enumerate(CLOSED_ARGS)])


def wrapper_of_some_arguments(x):
    return closed(x, np.cos(x))


def grad_of_a_closure(x):
    inner = lambda y: np.sum(x * y * y)  # noqa: E731 (a lambda reading x, as written)
    return np.sum(x * mindgrad.grad(inner)(np.array(2.0)))


def grad_of_a_local_def(x):
    def inner(y, z):
        return np.sum(np.sin(x * y) * z)

    gy, gz = mindgrad.grad(inner, (0, 1))(x * 0.5, x)
    return np.sum(gy * gz)


def value_and_grad_of_a_lambda(x):
    v, g = mindgrad.value_and_grad(lambda t: np.sum(t ** 3))(x)
    return v * np.sum(g)


def jacfwd_in_place(x):
    return np.sum(mindgrad.jacfwd(scaled)(x) ** 2)


def jacrev_in_place(x):
    return np.sum(mindgrad.jacrev(sine)(x) ** 2 * 1.5)


def hessian_of_a_lambda(x):
    return np.sum(mindgrad.hessian(lambda t: np.sum(np.sin(t) * t))(x))


def jvp_of_a_parameter(x, fn=scaled):
    """jvp of a function reached when the code runs: once refused ("must be known before the
    run")."""
    y, t = mindgrad.jvp(fn, (x,), (np.cos(x),))
    return np.sum(y * t)


def jvp_of_a_closure(x):
    k = np.sin(x)
    y, t = mindgrad.jvp(lambda u, w: np.sin(u * k) * w, (x, x * 2.0), (x, None))
    return np.sum(y + t * t)


FORMS = [from_a_dict, from_a_list_by_index, from_a_list_in_a_loop, keyword_through_a_list,
         with_a_numpy_default,
         with_a_default_of_its_own, given_to_a_function, a_lambda_given_on, partials_held,
         star_of_a_list_built, star_of_a_comprehension, star_of_args_changed,
         wrapper_of_some_arguments, grad_of_a_closure, grad_of_a_local_def,
         value_and_grad_of_a_lambda, jacfwd_in_place, jacrev_in_place, hessian_of_a_lambda,
         jvp_of_a_parameter, jvp_of_a_closure]
# the Jacobians of vectors: a 0-d input is one of a vector's shapes too
VECTOR_ONLY = {jacfwd_in_place, jacrev_in_place, hessian_of_a_lambda}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fn", FORMS, ids=lambda f: f.__name__)
def test_each_form_at_first_order(fn, shape):
    if fn in VECTOR_ONLY and len(shape) != 1:
        shape = (3,)
    mindgrad.check_grads(fn, (_x(shape),), modes=("rev", "fwd"))


@pytest.mark.parametrize("fn", FORMS, ids=lambda f: f.__name__)
def test_each_form_at_second_order(fn):
    shape = (3,) if fn in VECTOR_ONLY else (2, 3)
    mindgrad.check_grads(fn, (_x(shape),), modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("fn", [from_a_dict, a_lambda_given_on, star_of_args_changed,
                                wrapper_of_some_arguments, grad_of_a_closure,
                                keyword_through_a_list],
                         ids=lambda f: f.__name__)
def test_forms_at_third_order(fn):
    """Reverse over reverse over reverse, and forward over those: the modes that build the
    most code."""
    mindgrad.check_grads(fn, (_x((3,)),), modes=("rev", "fwd"), order=3)


@pytest.mark.slow
@pytest.mark.parametrize("fn", FORMS, ids=lambda f: f.__name__)
def test_every_form_at_third_order_in_both_modes(fn):
    mindgrad.check_grads(fn, (_x((3,)),), modes=("rev", "fwd"), order=3)


def _jacobian_squared(x):
    return np.sum(mindgrad.jacrev(_square)(x) ** 2)


def _square(x):
    return x * x


def test_a_jacobian_at_third_order_in_reverse_mode():
    """f = sum((2 diag(x))^2) = 4 sum(x^2): its third derivative along any direction is zero
    and its gradient of gradient sums are closed forms. Reverse mode three times over once
    met an internal error: the list a Jacobian's rows are kept in is read by two backward
    sweeps, and the backward of the backward appended to it without undoing the append."""
    x = _x((3,))
    g1 = mindgrad.grad(_jacobian_squared)
    g2 = mindgrad.grad(lambda t: np.sum(g1(t) ** 2))  # sum(64 t^2): 128 t
    g3 = mindgrad.grad(lambda t: np.sum(g2(t)))  # 128
    np.testing.assert_allclose(g1(x), 8.0 * x)
    np.testing.assert_allclose(g2(x), 128.0 * x)
    np.testing.assert_allclose(g3(x), np.full(3, 128.0))
    mindgrad.check_grads(_jacobian_squared, (x,), modes=("rev",), order=3)


def test_the_closure_is_followed():
    """grad(lambda y: sum(x y^2))(2) = 4 sum(x), so f = 4 sum(x)^2 and df/dx = 8 sum(x):
    the lambda reads x."""
    x = _x((3,))
    np.testing.assert_allclose(mindgrad.grad(grad_of_a_closure)(x), np.full(3, 8.0 * np.sum(x)))


def test_float32_and_broadcast_arguments():
    x = _x((2, 3)).astype(np.float32)
    g = mindgrad.grad(lambda t, u: np.sum(apply(sine, t) * u), (0, 1))(x, np.float32(2.0))
    assert g[0].dtype == np.float32
    np.testing.assert_allclose(g[0], 2.0 * np.cos(x), rtol=1e-6)
    np.testing.assert_allclose(g[1], np.sum(np.sin(x)), rtol=1e-6)


# ----- the cache -------------------------------------------------------------------------------


def _made(k):
    return lambda t: np.sin(t) * k


def test_a_function_made_afresh_at_each_call_reuses_what_was_built():
    grad_apply = mindgrad.grad(lambda fn, t: np.sum(apply(fn, t)), 1)
    x = _x((3,))
    grad_apply(_made(np.array(1.0)), x)
    builds = mindgrad.cache_stats()["builds"]
    rebound = dynamic.stats()["rebound"]
    for k in (2.0, 3.0, 4.0):  # new closures: the same code, new cells
        np.testing.assert_allclose(grad_apply(_made(np.array(k)), x), np.cos(x) * k)
    assert mindgrad.cache_stats()["builds"] == builds
    assert dynamic.stats()["rebound"] == rebound + 3


def _made_of(fn):
    return lambda t: fn(t) * 2.0


def test_closures_of_one_code_holding_other_functions_are_told_apart():
    """A closure cell holding a function is read when the code is built: closures of one code
    holding np.sin and np.cos get code of their own, never each other's."""
    grad_apply = mindgrad.grad(lambda fn, t: np.sum(apply(fn, t)), 1)
    x = _x((3,))
    for _ in range(2):
        np.testing.assert_allclose(grad_apply(_made_of(np.sin), x), 2.0 * np.cos(x))
        np.testing.assert_allclose(grad_apply(_made_of(np.cos), x), -2.0 * np.sin(x))
        np.testing.assert_allclose(grad_apply(_made_of(np.exp), x), 2.0 * np.exp(x))


def test_a_lambda_written_in_the_function_is_built_once():
    x = _x((3,))
    g = mindgrad.grad(a_lambda_given_on)
    g(x)
    builds = mindgrad.cache_stats()["builds"]
    for _ in range(3):
        g(x)
    assert mindgrad.cache_stats()["builds"] == builds


def test_a_function_replaced_in_its_container_is_followed():
    x = _x((3,))
    saved = FUNCTIONS["s"]
    try:
        np.testing.assert_allclose(mindgrad.grad(from_a_dict)(x), np.cos(x) + x)
        FUNCTIONS["s"] = np.exp
        np.testing.assert_allclose(mindgrad.grad(from_a_dict)(x), np.exp(x) + x)
    finally:
        FUNCTIONS["s"] = saved


# ----- what it refuses ---------------------------------------------------------------------------


def a_local_def_given_on(x):
    def inner(t):
        return np.sin(t) * x

    return np.sum(apply(inner, np.array(2.0)) + apply(inner, x) * 0.0) + np.sum(x * x)


def _lambda_reading_x_given_away(x, y):
    return np.sum(apply(lambda t: t * x, y))


def _lambda_reading_x_stored(x):
    fs = [lambda t: t * x]
    return np.sum(fs[0](x))


@pytest.mark.parametrize("fn, args", [(_lambda_reading_x_given_away, 2),
                                      (_lambda_reading_x_stored, 1),
                                      (a_local_def_given_on, 1)])
def test_a_function_value_reading_a_differentiated_value_is_refused_at_its_line(fn, args):
    """Its values would move with the input inside an object the gradient cannot enter:
    refused in both modes, never a gradient taking them as constants."""
    xs = tuple(_x((3,), i) for i in range(args))
    with pytest.raises(mindgrad.NoGradientRuleError, match="reading x, which the derivative "
                                                           "follows") as info:
        mindgrad.grad(fn)(*xs)
    assert "test_dynamic_calls.py" in str(info.value)
    with pytest.raises(mindgrad.NoTangentRuleError, match="Pass x to it as arguments"):
        mindgrad.jvp(fn, xs, xs)


def test_a_function_value_reading_constants_is_followed():
    def f(x):
        k = np.array([1.0, 2.0, 3.0])
        return np.sum(apply(lambda t: t * k, x) * apply(lambda t: np.sin(t), x))

    x = _x((3,))
    k = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(mindgrad.grad(f)(x), k * (np.sin(x) + x * np.cos(x)))


def test_a_local_function_as_a_value_calling_another_is_refused_clearly():
    def f(x):
        def a(t):
            return t * 2.0

        def b(t):
            return a(t) + 1.0

        return np.sum(apply(b, x))

    with pytest.raises(UnsupportedSyntaxError, match="calls the local function 'a'"):
        mindgrad.grad(f)(_x((3,)))


# ----- what the user reads ---------------------------------------------------------------------


def _shown(x, act=scaled):
    return np.sum(act(x) * x)


def test_source_shows_the_dispatch_and_the_callee_built_when_it_ran():
    x = _x((3,))
    g = mindgrad.grad(_shown)
    text = str(mindgrad.source(g, x))
    assert "(act_forward, act_backward) = call_split(act, (0,), x)" in text
    assert "d_x_act = act_backward(act2_tape, d_act2)" in text
    assert "def call_scaled_forward" not in text  # not built yet: the code has not run
    g(x)
    text = str(mindgrad.source(g, x))
    assert "built when the code ran" in text and "def call_scaled_forward(x0)" in text
