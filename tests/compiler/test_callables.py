"""What the user calls is what is differentiated: decorators, ``*args``/``**kw``, callables
without source (by their rules), ``functools.partial``, lambdas and nested defs.

Every gradient is checked against central finite differences (``mindgrad.check_grads``), in
reverse and forward mode and at second order where the function is twice differentiable.
"""

import functools
import sys

import numpy as np
import pytest

import mindgrad
from mindgrad import nn

RNG = np.random.default_rng(7)
X = RNG.normal(size=3)
Y = RNG.normal(size=3)


def check(fn, args, order=2, **options):
    """First and second order, reverse and forward mode."""
    for k in range(1, order + 1):
        mindgrad.check_grads(fn, args, modes=("rev", "fwd"), order=k, **options)


# ----- decorators ---------------------------------------------------------------------------


def twice(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 2.0 * fn(*args, **kwargs)
    return wrapper


def scale(factor):
    def decorate(fn):
        @functools.wraps(fn)
        def scaled(*args, **kwargs):
            return factor * fn(*args, **kwargs)
        return scaled
    return decorate


def plus_input(fn):  # no functools.wraps
    def inner(x):
        return fn(x) + x
    return inner


CALLS = []


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        out = fn(*args)
        CALLS.append(len(args))
        return out
    return wrapper


def square_sum(x):
    return np.sum(x ** 2)


@twice
def twice_square_sum(x):
    return np.sum(x ** 2)


@scale(3.0)
def scaled_product(x, y):
    return np.sum(np.sin(x) * y)


@twice
@scale(3.0)
def stacked(x):
    return np.sum(x ** 3)


@plus_input
def without_wraps(x):
    return x * x


@logged
def logged_square_sum(x):
    return np.sum(x ** 2)


def calls_decorated_helper(x):
    return twice_square_sum(x) + np.sum(without_wraps(x))


def test_a_wraps_decorator_is_differentiated_as_the_wrapper():
    # the wrapper doubles: the gradient is 4x, not the undecorated 2x
    np.testing.assert_allclose(mindgrad.grad(twice_square_sum)(X), 4.0 * X)
    check(twice_square_sum, (X,))


@pytest.mark.parametrize("fn, args", [
    (scaled_product, (X, Y)),
    (stacked, (X,)),
    (without_wraps, (X,)),
    (calls_decorated_helper, (X,)),
])
def test_decorated_functions_match_finite_differences(fn, args):
    check(fn, args)


def test_decorator_with_arguments_and_stacked_decorators_scale_the_gradient():
    np.testing.assert_allclose(mindgrad.grad(scaled_product, (0, 1))(X, Y),
                               (3.0 * np.cos(X) * Y, 3.0 * np.sin(X)))
    np.testing.assert_allclose(mindgrad.grad(stacked)(X), 6.0 * 3.0 * X ** 2)


def test_a_logging_decorator_keeps_the_undecorated_gradient():
    CALLS.clear()
    value, g = mindgrad.value_and_grad(logged_square_sum)(X)
    np.testing.assert_allclose(g, mindgrad.grad(square_sum)(X))
    np.testing.assert_allclose(value, square_sum(X))
    assert CALLS == [1]  # the wrapper ran once, as written
    check(logged_square_sum, (X,), order=1)


class Scaled(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(np.array([0.5, -1.5, 2.0]), name="w")

    @twice
    def construct(self, x):
        return np.sum(np.tanh(x * self.w))


class Plain:
    def __init__(self, k):
        self.k = k

    @scale(0.5)
    def energy(self, x):
        return np.sum(self.k * x ** 2)


class Doubled:
    """A decorator written as a class."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args, **kw):
        return self.fn(*args, **kw) * 2.0


@Doubled
def doubled_cube_sum(x):
    return np.sum(x ** 3)


@functools.cache
def cached_square(t):
    return t * t


def test_class_decorators_and_memoizers():
    np.testing.assert_allclose(mindgrad.grad(doubled_cube_sum)(X), 6.0 * X ** 2)
    check(doubled_cube_sum, (X,))
    check(lambda x: doubled_cube_sum(x) * 0.5, (X,))
    # a cache returns what the function returns: the gradient is the function's
    assert mindgrad.grad(cached_square)(3.0) == 6.0
    check(cached_square, (0.7,), order=1)


def test_decorated_methods_of_a_cell_and_a_class():
    net = Scaled()
    gx, (gw,) = mindgrad.grad(net, 0, net.trainable_params())(X)
    t = 1.0 - np.tanh(X * net.w) ** 2
    np.testing.assert_allclose(gx, 2.0 * t * net.w)
    np.testing.assert_allclose(gw, 2.0 * t * X)
    check(net, (X,), order=1)  # grad of grad of a Cell reads self.w as a value: not supported
    obj = Plain(3.0)
    np.testing.assert_allclose(mindgrad.grad(obj.energy)(X), 3.0 * X)
    check(obj.energy, (X,), order=1)


# ----- *args and **kw -----------------------------------------------------------------------


def product_of_all(*args):
    out = 1.0
    for a in args:
        out = out * a
    return np.sum(out)


def weighted(x, **kw):
    return np.sum(np.sin(x) * kw["w"] + kw["b"])


def first_and_rest(x, *rest, scale=2.0):
    return np.sum(x * scale + rest[0] ** 2) + np.sum(rest[-1])


def passes_everything_on(x, *rest, **kw):
    return 0.5 * weighted(x, **kw) + first_and_rest(x, *rest)


def unpacks_displays(x, y):
    return weighted(*(x,), **{"w": y, "b": 1.0}) + product_of_all(*[x, y, x])  # noqa: PIE804


class Sum(nn.Cell):
    def __init__(self):
        super().__init__()
        self.k = nn.Parameter(np.array([1.5, -0.5, 2.0]), name="k")

    def construct(self, *inputs):
        total = 0.0
        for t in inputs:
            total = total + np.tanh(t * self.k)
        return np.sum(total)


def test_positions_index_into_star_args():
    gx, gz = mindgrad.grad(product_of_all, (0, 2))(X, Y, 2.0 * X)
    np.testing.assert_allclose(gx, Y * 2.0 * X)
    np.testing.assert_allclose(gz, X * Y)
    check(product_of_all, (X, Y, X + 1.0))
    check(product_of_all, (X,))
    check(first_and_rest, (X, Y, 0.5 * X))


def test_star_args_in_vjp_and_jacobians():
    pair = lambda *a: a[0] * np.sin(a[1])
    _, vjp_fn = mindgrad.vjp(pair, X, Y)
    gx, gy = vjp_fn(np.ones(3))
    np.testing.assert_allclose(gx, np.sin(Y))
    np.testing.assert_allclose(gy, X * np.cos(Y))
    jx, jy = mindgrad.jacrev(pair, (0, 1))(X, Y)
    np.testing.assert_allclose(jy, np.diag(X * np.cos(Y)))
    np.testing.assert_allclose(jx, np.diag(np.sin(Y)))
    np.testing.assert_allclose(mindgrad.jacfwd(pair, 1)(X, Y), np.diag(X * np.cos(Y)))


def test_keyword_arguments_reach_star_star_kw():
    value, g = mindgrad.value_and_grad(weighted)(X, w=Y, b=0.5)
    np.testing.assert_allclose(value, weighted(X, w=Y, b=0.5))
    np.testing.assert_allclose(g, np.cos(X) * Y)
    # other keywords build other code: never the code of the earlier call
    np.testing.assert_allclose(mindgrad.grad(weighted)(X, w=2.0 * Y, b=0.5, c=1.0),
                               2.0 * np.cos(X) * Y)
    check(weighted, (X,), kwargs={"w": Y, "b": 0.5})


def test_a_keyword_whose_name_the_function_uses_is_still_passed():
    def uses_name_x(x, **kw):
        return np.sum(x * kw["x2"] * kw["np"])

    np.testing.assert_allclose(mindgrad.grad(uses_name_x)(X, x2=Y, np=3.0), Y * 3.0)


def test_calls_unpacking_star_args_and_displays():
    check(passes_everything_on, (X, Y, 0.5 * X), kwargs={"w": Y, "b": 0.5}, order=1)
    check(unpacks_displays, (X, Y))
    np.testing.assert_allclose(mindgrad.grad(passes_everything_on, 1)(X, Y, X, w=Y, b=0.0),
                               2.0 * Y)
    np.testing.assert_allclose(mindgrad.grad(passes_everything_on, 2)(X, Y, X, w=Y, b=0.0),
                               np.ones(3))


def test_cell_with_star_inputs():
    net = Sum()
    gx, gy = mindgrad.grad(net, (0, 1))(X, Y)
    np.testing.assert_allclose(gx, (1.0 - np.tanh(X * net.k) ** 2) * net.k)
    np.testing.assert_allclose(gy, (1.0 - np.tanh(Y * net.k) ** 2) * net.k)
    check(net, (X, Y), order=1)


def _unpacks_a_local(x):
    t = (x, np.sin(x))
    return product_of_all(*t)


def test_unpacking_a_local_sequence_is_spread_when_it_runs():
    mindgrad.check_grads(_unpacks_a_local, (X,), modes=("rev", "fwd"), order=2)


# ----- callables without source: by their rules; functools.partial -----------------------------


def affine(x, y, w, shift=0.0):
    return np.sum(np.tanh(x * w + y) + shift * x)


@pytest.mark.parametrize("fn, args", [
    (np.sin, (X,)),
    (np.sin, (0.3,)),
    (np.multiply, (X, Y)),
    (np.tanh, (X.astype(np.float32),)),
    (np.sum, (X.reshape(3, 1) * Y,)),
])
def test_a_function_with_a_rule_is_differentiated_by_it(fn, args):
    check(fn, args)


def test_builtins_and_math_functions_with_rules():
    import math

    np.testing.assert_allclose(mindgrad.grad(math.sin)(0.7), math.cos(0.7))
    assert mindgrad.grad(abs)(-2.5) == -1.0
    np.testing.assert_allclose(mindgrad.grad(np.sin)(X), np.cos(X))
    _, t = mindgrad.jvp(np.exp, (X,), (Y,))
    np.testing.assert_allclose(t, np.exp(X) * Y)
    check(math.exp, (0.4,))


def test_a_partial_is_its_function_with_bound_arguments():
    by_keyword = functools.partial(affine, y=Y, w=2.0 * X)
    np.testing.assert_allclose(mindgrad.grad(by_keyword)(X),
                               (1.0 - np.tanh(X * 2.0 * X + Y) ** 2) * 2.0 * X)
    check(by_keyword, (X,))
    by_position = functools.partial(affine, X, shift=0.5)
    # grad_position counts the partial's remaining positional arguments: (y, w)
    gy, gw = mindgrad.grad(by_position, (0, 1))(Y, 0.5 * X)
    t = 1.0 - np.tanh(X * 0.5 * X + Y) ** 2
    np.testing.assert_allclose(gy, t)
    np.testing.assert_allclose(gw, t * X)
    check(by_position, (Y, 0.5 * X))
    check(functools.partial(np.multiply, Y), (X,))


def test_a_callable_without_source_or_rule_is_named_in_the_error():
    import time

    # time.gmtime(secs) takes the argument given (Python 3.13 checks a call of time.time(1.0)
    # against its signature first)
    with pytest.raises(TypeError, match="gmtime.*no Python source and no gradient rule"):
        mindgrad.grad(time.gmtime)(1.0)


# ----- lambdas called where they are defined; defs inside defs ----------------------------------


def immediately_called_lambda(x):
    return np.sum((lambda t: t * 2.0)(x) * x)  # noqa: PLC3002 (the form under test)


def immediately_called_lambdas_nested(x, y):
    return np.sum((lambda a, k=3.0: (lambda b: a * b + k)(y))(np.sin(x)))  # noqa: PLC3002


def nested_two_deep(x):
    def outer(t):
        def inner(u):
            return u * np.tanh(t)
        return inner(t) + t ** 2
    return np.sum(outer(x))


def nested_defs_with_clashing_names(x):
    def inner(u):
        return u * 2.0

    def outer(t):
        def inner(u):  # shadows the outer inner only inside outer
            return u ** 3
        return inner(t)
    return np.sum(outer(x) + inner(x))


def nested_three_deep_with_closures(x, y):
    scale = 0.5

    def a(t):
        s = t * scale

        def b(u):
            def c(v):
                return v * s + y
            return c(u) * u
        return b(s)
    return np.sum(a(x))


@pytest.mark.parametrize("fn, args", [
    (immediately_called_lambda, (X,)),
    (immediately_called_lambdas_nested, (X, Y)),
    (nested_two_deep, (X,)),
    (nested_defs_with_clashing_names, (X,)),
    (nested_three_deep_with_closures, (X, Y)),
])
def test_lambdas_and_nested_defs_match_finite_differences(fn, args):
    check(fn, args)


def test_nested_def_shadowing_is_scoped():
    np.testing.assert_allclose(mindgrad.grad(nested_defs_with_clashing_names)(X),
                               3.0 * X ** 2 + 2.0)
    np.testing.assert_allclose(mindgrad.grad(immediately_called_lambda)(X), 4.0 * X)


def apply_twice(f, x):
    return f(f(x))


def lambda_to_a_helper(x):
    return np.sum(apply_twice(lambda t: t * 3.0, x))


def closure_from_a_factory(x):
    def make(k):
        def scaled(t):
            return t * k + x
        return scaled
    return np.sum(make(2.0)(x) * make(0.5)(x))


def closure_bound_to_a_name(x):
    def make(k):
        return lambda t: t ** k
    cube = make(3.0)
    square = make(2.0)
    return np.sum(cube(x) + square(x))


def lambda_to_a_local_helper(x, y):
    def apply_twice_locally(f, t):
        return f(f(t))
    return np.sum(apply_twice_locally(lambda u: np.sin(u) * y, x))


def functions_to_a_local_helper(x):
    def apply(f, t):
        return f(t) * t

    def make(k):
        def shifted(t):
            return np.tanh(t + k)
        return shifted
    return np.sum(apply(np.sin, x) + apply(make(0.5), x) + apply(square_sum, x))


@pytest.mark.parametrize("fn, args", [
    (closure_from_a_factory, (X,)),
    (closure_bound_to_a_name, (np.abs(X) + 0.5,)),
    (lambda_to_a_local_helper, (X, Y)),
    (functions_to_a_local_helper, (X,)),
])
def test_closures_and_functions_as_arguments_of_local_defs(fn, args):
    check(fn, args)


def test_a_closure_factory_gives_the_closure_s_gradient():
    # d/dx sum((2x + x) * (0.5x + x)) = 2 * 3 * 1.5 x
    np.testing.assert_allclose(mindgrad.grad(closure_from_a_factory)(X), 9.0 * X)


def closure_assigned_twice(x):
    def make(k):
        return lambda t: t * k
    g = make(2.0)
    if np.sum(x) > 100.0:
        g = make(3.0)
    return np.sum(g(x))


@pytest.mark.parametrize("fn", [lambda_to_a_helper, closure_assigned_twice])
def test_functions_passed_or_returned_as_values_are_function_values(fn):
    mindgrad.check_grads(fn, (X,), modes=("rev", "fwd"), order=2)


# ----- instances of one class holding different functions ------------------------------------


class _Act:
    def __init__(self, fn):
        self.fn = fn

    def apply(self, x):
        return self.fn(x)


def _square(x):
    return x * x


def _cube(x):
    return x * x * x


_SQUARE, _CUBE = _Act(_square), _Act(_cube)


def _two_acts(x):
    return np.sum(_SQUARE.apply(x) + _CUBE.apply(x))


def test_instances_of_one_class_holding_different_functions_get_their_own_code():
    # the method's code resolves self.fn when it is built: two instances share code only when
    # they hold the same functions
    x = np.array([1.0, 2.0, -0.5])
    np.testing.assert_allclose(mindgrad.grad(_two_acts)(x), 2 * x + 3 * x ** 2)
    _, t = mindgrad.jvp(_two_acts, (x,), (np.ones(3),))
    np.testing.assert_allclose(t, np.sum(2 * x + 3 * x ** 2))


# helpers whose names look like generated entry points: a function's role is data, not its name


def grad_scale(p, q=2.0):
    if np.sum(p) > 0:
        return p * q
    return p * 3.0


def jvp_scale(p, q=2.0):
    return np.sin(p) * q


def uses_helpers_named_like_entries(x):
    return np.sum(grad_scale(x) * grad_scale(x, 5.0)) + np.sum(jvp_scale(x))


def test_helpers_named_like_generated_entries():
    x = np.array([0.5, 1.0, -0.2])
    mindgrad.check_grads(uses_helpers_named_like_entries, (x,), modes=("rev", "fwd"), order=2)
    closed = 20.0 * x + 2.0 * np.cos(x)  # 10 * sum(x * x) + 2 * sum(sin(x)) while sum(x) > 0
    np.testing.assert_allclose(mindgrad.grad(uses_helpers_named_like_entries)(x), closed,
                               rtol=1e-12)


# ----- lambdas found by their columns (Python 3.11+) ---------------------------------------

_LAMBDAS = {"square": lambda v: np.sum(v * v), "cube": lambda v: np.sum((v + 1.0) * v * v)}
_SCALED = [(lambda a, b=2.0: a * b), (lambda a, b=3.0: a * b * b)]
_needs_columns = pytest.mark.skipif(sys.version_info < (3, 11),
                                    reason="code objects record columns from Python 3.11")


@_needs_columns
def test_lambdas_of_one_parameter_name_in_a_dict_are_told_apart():
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(mindgrad.grad(_LAMBDAS["square"])(x), 2 * x)
    np.testing.assert_allclose(mindgrad.grad(_LAMBDAS["cube"])(x), 3 * x * x + 2 * x)
    _, tangent = mindgrad.jvp(_LAMBDAS["cube"], (x,), (np.ones(3),))
    np.testing.assert_allclose(tangent, np.sum(3 * x * x + 2 * x))


@_needs_columns
def test_lambdas_with_defaults_in_a_list_and_on_a_continuation_line():
    assert [mindgrad.grad(f)(1.5) for f in _SCALED] == [2.0, 9.0]
    x = np.array([0.3, 1.1])
    g = mindgrad.grad(
        lambda v: np.sum(np.sin(v) *
                         v))
    np.testing.assert_allclose(g(x), np.cos(x) * x + np.sin(x))


@_needs_columns
def test_two_lambdas_on_one_line_passed_as_arguments():
    x = np.array([0.3, 1.1])
    f, h = mindgrad.grad(lambda v: np.sum(v * 3.0)), mindgrad.grad(lambda v: np.sum(v * v))
    np.testing.assert_allclose(f(x), [3.0, 3.0])
    np.testing.assert_allclose(h(x), 2 * x)


@pytest.mark.skipif(sys.version_info >= (3, 11), reason="Python 3.10 records no columns")
def test_without_columns_two_lambdas_on_a_line_are_told_apart_by_their_code():
    x = np.array([0.3, -1.2])
    np.testing.assert_allclose(mindgrad.grad(_LAMBDAS["square"])(x), 2 * x)
    np.testing.assert_allclose(mindgrad.grad(_LAMBDAS["cube"])(x), 3 * x * x + 2 * x)
