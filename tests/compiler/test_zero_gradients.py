"""Gradients that are the symbolic zero (the int 0) at run time, met by rules that move axes.

A value unused on the path taken (the branch not run, a helper that ignores its argument)
gets the symbolic zero as its gradient at run time. Shape rules (``np.swapaxes(d_out, ...)``,
``np.reshape(d_out, ...)``) cannot take it: they run only where the gradient holds an array,
and the generated code tests that only where it may not.

Oracles: closed forms, ``mindgrad.check_grads`` (central differences in float64, reverse and
forward mode, second order) and central differences of the gradient for grad of grad.
"""

import importlib.util

import numpy as np
import pytest

import mindgrad
from mindgrad import grad, jvp


def ignore(t):
    pass


# each moves the axes of a (2, 3, 2) array, or of a 0-d one (names ending in _0d)
SHAPE_OPS = {
    "swapaxes": "np.swapaxes(x, -1, -2)",
    "method_swapaxes": "x.swapaxes(0, 2)",
    "reshape": "np.reshape(x, (3, 4))",
    "reshape_0d": "np.reshape(x, (1, 1))",
    "transpose_axes": "np.transpose(x, (2, 0, 1))",
    "moveaxis": "np.moveaxis(x, 0, -1)",
    "expand_dims": "np.expand_dims(x, 1)",
    "expand_dims_0d": "np.expand_dims(x, 0)",
    "ravel": "x.ravel()",
    "squeeze": "np.squeeze(x[:1], 0)",
}

# the shape function written in the differentiated function itself, so that its rule meets
# the gradient of ``v`` directly
PROGRAMS = """
import numpy as np

from tests.compiler.test_zero_gradients import ignore


def branch_not_taken(x):
    v = {op}
    if np.sum(x * x) > 0.0:
        return np.sum(x * x)
    return np.sum(v * v)


def unused_by_helper(x):
    v = {op}
    w = ignore(v)
    return np.sum(np.sin(x) * x)


def branch_taken(x):
    v = {op}
    if np.sum(x * x) > 0.0:
        return np.sum(np.sin(v) * v)
    return np.sum(x)
"""


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """name -> the module of PROGRAMS for that shape function."""
    directory = tmp_path_factory.mktemp("zero_programs")
    modules = {}
    for name, op in SHAPE_OPS.items():
        path = directory / f"zero_{name}.py"
        path.write_text(PROGRAMS.format(op=op))
        spec = importlib.util.spec_from_file_location(f"zero_{name}", path)
        modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[name])
    return modules


def _x(name, dtype=np.float64):
    shape = () if name.endswith("_0d") else (2, 3, 2)
    return np.asarray(np.random.default_rng(3).standard_normal(shape) + 0.5, dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
def test_shape_rule_on_the_branch_not_taken(programs, name, dtype):
    f, x = programs[name].branch_not_taken, _x(name, dtype)
    g = grad(f)(x)
    np.testing.assert_allclose(g, 2.0 * x, rtol=1e-6)
    assert np.shape(g) == np.shape(x)
    _, t = jvp(f, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(t, np.sum(2.0 * x), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
def test_shape_rule_of_a_value_a_helper_ignores(programs, name, dtype):
    x = _x(name, dtype)
    g = grad(programs[name].unused_by_helper)(x)
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-5)


@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
def test_shape_rules_unused_on_the_path_taken_to_second_order(programs, name):
    module, x = programs[name], _x(name)
    for f in (module.branch_not_taken, module.unused_by_helper, module.branch_taken):
        mindgrad.check_grads(f, (x,), modes=("rev", "fwd"), order=2)


def test_hessian_vector_product_through_a_value_a_helper_ignores(programs):
    f = programs["swapaxes"].unused_by_helper
    x, v = _x("swapaxes"), np.random.default_rng(4).standard_normal((2, 3, 2))
    hv = grad(lambda y: np.sum(grad(f)(y) * v))(x)
    closed = (2.0 * np.cos(x) - np.sin(x) * x) * v  # f'' of sin(x) * x, elementwise
    np.testing.assert_allclose(hv, closed, rtol=1e-6)


def swapped_reshaped(x):
    v = np.swapaxes(x, -1, -2)
    w = np.reshape(np.sin(v) * v, (3, 4))
    return np.sum(np.moveaxis(w, 0, 1)[1:] * 2.0)


def swapped_where_not_taken(x):
    v = np.swapaxes(x, -1, -2)
    if np.sum(x * x) > 0.0:
        return np.sum(x)
    return np.sum(np.sin(v) * v)


def test_swapaxes_takes_the_zero_without_a_guard():
    # d_v is the symbolic zero at run time on the path taken: np.swapaxes of a runtime.Zero is
    # a zero, so the rule needs no guard (it had `if not is_zero(d_v, v):`)
    x = _x("swapaxes")
    assert "is_zero" not in grad(swapped_reshaped).source(x)  # straight-line code
    source = grad(swapped_where_not_taken).source(x)
    assert "is_zero" not in source and "np.swapaxes(d_v, -1, -2)" in source
    np.testing.assert_allclose(grad(swapped_where_not_taken)(x), np.ones_like(x))
    mindgrad.check_grads(swapped_where_not_taken, (x,), modes=("rev", "fwd"), order=2)


# ----- grad of grad: the adjoint of an index-add the first gradient skipped ---------------------


def write_then_ignore(y):
    c = y * 1.0
    c[0] -= y[1]
    w = ignore(c)  # noqa: F841  (an assigned call: the form the first gradient skips)
    return np.sum(y * y)


def tuple_output(x, y):
    c = np.tanh(y) * 1.0
    c[..., 0] -= np.sum(y)
    w = ignore(c)  # noqa: F841  (an assigned call: the form the first gradient skips)
    return (np.sum(np.tanh(y)), x)


def _r(*shape):
    return np.random.default_rng(5).standard_normal(shape)


def _central_hvp(f, x, v, eps=1e-5):
    g = grad(f)
    return np.sum(g(x + eps * v) - g(x - eps * v)) / (2 * eps)


def test_grad_of_grad_through_an_index_write_a_helper_ignores():
    y, v = _r(3), _r(3) + 1.0
    g2 = grad(grad(write_then_ignore))(y)  # of the summed gradient 2y
    np.testing.assert_allclose(g2, 2.0 * np.ones(3), rtol=1e-6)
    np.testing.assert_allclose(np.vdot(g2, v), _central_hvp(write_then_ignore, y, v),
                               rtol=1e-6)


def test_grad_of_grad_of_a_tuple_output_through_an_ignored_index_write():
    x, y = _r(2, 3), _r(2, 3) - 0.3
    gx, gy = grad(grad(tuple_output, (0, 1)), (0, 1))(x, y)
    # the gradients are ones for x (the tuple's array is differentiated as its sum) and
    # 1 - tanh(y)^2 for y; their summed derivatives:
    np.testing.assert_allclose(gx, 0.0)
    t = np.tanh(y)
    np.testing.assert_allclose(gy, -2.0 * t * (1.0 - t * t), rtol=1e-6)


def _times(p, q):
    return p * q


def _outer_product_unused(x):
    v3 = x.reshape(4, -1)
    v4 = v3 * x            # (4, 1) * (4,): a (4, 4) value whose gradient is the symbolic 0
    v6 = _times(v4, v4)  # noqa: F841 (the assignment keeps the call, whose result is unused)
    return np.sum(x * x)


def test_a_zero_gradient_times_an_operand_of_another_shape_unbroadcasts():
    # d_v4 is 0 at run time, so d_v4 * x has x's shape (4,), not v3's (4, 1)
    x = np.array([0.5, -1.0, 2.0, 0.25])
    np.testing.assert_allclose(mindgrad.grad(_outer_product_unused)(x), 2.0 * x)
    mindgrad.check_grads(_outer_product_unused, (x,), modes=("rev", "fwd"), order=2)


def unused_product_after_a_loop(x, y):
    v1 = x.T @ x
    s2 = v1 * 0.5
    for i in range(2):
        s2 = s2 * 0.7 + np.tanh(np.sum(x))
        if np.sum(s2) > 5.0:
            break
    v3 = np.einsum("ij,kj->ik", s2, v1)  # noqa: F841  (unused: its gradient is zero)
    return np.sum(y * y)


def test_a_guard_on_a_gradient_known_to_be_zero_is_dropped_with_its_rule():
    x, y = np.random.default_rng(7).standard_normal((3, 2)), np.array([0.5, -2.0])
    code = grad(unused_product_after_a_loop, (0, 1)).source(x, y)
    assert "einsum_grads" not in code and "matmul_grad" not in code, code  # v3 is unused
    dx, dy = grad(unused_product_after_a_loop, (0, 1))(x, y)
    np.testing.assert_array_equal(dx, np.zeros_like(x))
    np.testing.assert_allclose(dy, 2.0 * y, rtol=1e-12)
    mindgrad.check_grads(unused_product_after_a_loop, (x, y), modes=("rev", "fwd"), order=2)


def ihfft_on_the_branch_not_taken(x):
    v = np.fft.ihfft(x)
    w = v * 2.0
    if np.sum(x) > 100.0:
        return np.sum(np.abs(w))
    return np.sum(x * x)


def test_a_rule_conjugating_the_zero_before_its_helper_is_guarded():
    # ihfft's adjoint passes np.conj(d[out]) to rfft_grad: at the symbolic zero that is a
    # number, which rfft_grad cannot take; the rule crashed (AxisError) on the branch not taken
    for x in (np.linspace(0.1, 1.0, 6), np.random.default_rng(3).standard_normal((2, 5)),
              np.linspace(-1.0, 1.0, 5, dtype=np.float32)):
        np.testing.assert_allclose(grad(ihfft_on_the_branch_not_taken)(x), 2.0 * x, rtol=1e-6)
        mindgrad.check_grads(ihfft_on_the_branch_not_taken, (x.astype(float),),
                             modes=("rev", "fwd"), order=2)


def reductions_on_the_branch_not_taken(x):
    s = np.sum(x, axis=0) * 2.0
    m = np.mean(x, axis=-1)
    v = np.var(x, axis=0)
    e = np.max(x, axis=1)
    c = np.cumsum(x, axis=0)
    t = np.trace(x)
    if np.sum(x) > 100.0:
        return np.sum(s) + np.sum(m * m) + np.sum(v) + np.sum(e) + np.sum(c) + t
    return np.sum(np.sin(x))


def test_reductions_take_the_zero_without_a_guard():
    # their helpers take the symbolic zero in every form (takes_zero(any_number=True)): the
    # generated code calls them without `if not is_zero(...)`, and the gradient is cos(x)
    x = np.random.default_rng(5).standard_normal((3, 3))
    code = grad(reductions_on_the_branch_not_taken).source(x)
    assert "is_zero" not in code, code
    for y in (x, x[:, :2], np.float32(0.5) * x):
        np.testing.assert_allclose(grad(reductions_on_the_branch_not_taken)(y), np.cos(y),
                                   rtol=1e-6)
        mindgrad.check_grads(reductions_on_the_branch_not_taken, (y.astype(float),),
                             modes=("rev", "fwd"), order=2)


def a_zero_value_through_reductions_then_shape_rules(a):
    x = a.T
    y = np.swapaxes(x, 0, 1)
    v = np.mean(y, axis=0) @ np.ones((3, 2))
    return np.sum(y) * 0.0 + np.sum(v) * 0.0


def test_a_gradient_that_is_a_number_0_stays_a_value():
    # d_sum_ is 0.0 here, a value: the helpers that take any number 0 give zeros of their
    # argument's shape for it (runtime.zero_for), never the symbolic 0, as the optimizer
    # dropped the guards of the shape rules after them (swapaxes of the 0 crashed)
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(grad(a_zero_value_through_reductions_then_shape_rules)(a),
                                  np.zeros_like(a))
    mindgrad.check_grads(a_zero_value_through_reductions_then_shape_rules, (a,),
                         modes=("rev", "fwd"), order=2)


def nonlinear_reductions_not_taken(x):
    a = np.sin(x)
    whole = np.prod(a) + np.var(a) + np.std(a) + np.sum(np.cumprod(a)) + \
        np.einsum("i,i->", a, a)
    return np.where(x[0] > 10.0, whole, np.sum(x * x))


def test_second_order_through_helpers_given_the_zero():
    # the branch not taken gives np.var's, np.prod's, ... gradient helpers the zero, now
    # without a guard: their tangents from the array must give 0 there too, as the helpers do
    # (var_grad_tangent gave an array beside var_grad's 0, and adding them failed)
    for x in (np.array([0.3, -0.7, 1.1, 0.4]), np.array([0.5, 2.0])):
        np.testing.assert_allclose(grad(nonlinear_reductions_not_taken)(x), 2.0 * x)
        mindgrad.check_grads(nonlinear_reductions_not_taken, (x,), modes=("rev", "fwd"),
                             order=2)


def containers_and_products_on_the_branch_not_taken(x, m):
    # the random-program tester's commonest guards (seed 778): sorted, builtin max and sum,
    # np.r_, np.array of items, np.tile, np.dot, np.linalg.norm and solve; and the joins
    s = sorted([x[0], x[1], x[2]])
    b = max(x[0], x[1]) + max(x) + sum([x, 2.0 * x])
    r = np.r_[x, 2.0 * x]
    a = np.array([np.sum(x), x[0]])
    t = np.tile(x, 2)
    d = np.dot(m, x)
    n = np.linalg.norm(x) + np.linalg.norm(m, axis=0)
    y = np.linalg.solve(m + 3.0 * np.eye(3), x)
    j = np.concatenate([x, m[0]]) + np.hstack((x, x)) + np.ravel(np.vstack([x, m]))[:6]
    if np.sum(x) > 100.0:
        return s[0] * s[2] + np.sum(b * b) + np.sum(r * r) + np.sum(a * a) + np.sum(t * t) \
            + np.sum(d * d) + np.sum(n * n) + np.sum(y * y) + np.sum(j * j)
    return np.sum(np.sin(x)) + np.sum(m * m)


def test_container_and_product_helpers_take_the_zero_without_a_guard():
    rng = np.random.default_rng(7)
    x, m = rng.standard_normal(3), rng.standard_normal((3, 3))
    g = grad(containers_and_products_on_the_branch_not_taken, (0, 1))
    assert "is_zero" not in g.source(x, m), g.source(x, m)
    for y, n in ((x, m), (np.float32(0.5) * x, np.float32(2.0) * m)):
        gx, gm = g(y, n)
        np.testing.assert_allclose(gx, np.cos(y), rtol=1e-6)
        np.testing.assert_allclose(gm, 2.0 * n, rtol=1e-6)
    mindgrad.check_grads(containers_and_products_on_the_branch_not_taken, (x, m),
                         modes=("rev", "fwd"), order=2)


def containers_and_products_scaled_by_zero(x, m):
    # a number 0 that is a value reaching the helpers that keep values (sorted, np.dot,
    # np.linalg.norm): zeros of their argument's shape, never the 0
    s = sorted([x[0], x[1], x[2]])
    return (s[0] + np.sum(np.dot(m, x)) + np.linalg.norm(m @ x)) * 0.0 + np.sum(x)


def test_a_number_0_through_container_and_product_helpers():
    rng = np.random.default_rng(8)
    x, m = rng.standard_normal(3), rng.standard_normal((3, 3))
    gx, gm = grad(containers_and_products_scaled_by_zero, (0, 1))(x, m)
    np.testing.assert_array_equal(gx, np.ones(3))
    np.testing.assert_array_equal(gm, np.zeros((3, 3)))
    mindgrad.check_grads(containers_and_products_scaled_by_zero, (x, m),
                         modes=("rev", "fwd"), order=2)


# ----- rules whose helpers need a value: they take the zero themselves -------------------------
# Each of these passed the gradient to a helper that needs the array (a sort permutation, a
# solve, a split), so generated code ran it under `if not is_zero(d_v, v):`. The helper now
# tests for the zero itself (runtime.zero_in_zero_out), so the code reads without a guard, and
# on the path where v's gradient is the zero the gradient is that of the branch taken.
HELPER_RULES = {
    "sort": ("np.sort(x, axis=-1)", np.arange(6.0).reshape(2, 3) * 0.7 + 0.1),
    "det": ("np.linalg.det(x)", np.array([[2.0, 0.3], [0.1, 1.5]])),
    "inv": ("np.linalg.inv(x)", np.array([[2.0, 0.3], [0.1, 1.5]])),
    "pinv": ("np.linalg.pinv(x)", np.array([[2.0, 0.3, 0.2], [0.1, 1.5, 0.4]])),
    "quantile": ("np.quantile(x, 0.3)", np.array([0.4, 1.3, -0.2, 2.1])),
    "split": ("np.split(x, 2)[1]", np.array([0.4, 1.3, -0.2, 2.1])),
    "repeat": ("np.repeat(x, 2, axis=0)", np.arange(6.0).reshape(3, 2) * 0.3),
    "cumulative_sum": ("np.cumsum(x) * x", np.array([0.4, 1.3, -0.2, 2.1])),
    "pad": ("np.pad(x, 1)", np.array([0.4, 1.3, -0.2])),
    "trapezoid": ("np.trapezoid(x * x)" if hasattr(np, "trapezoid") else "np.trapz(x * x)",
                  np.array([0.4, 1.3, -0.2])),
    "average": ("np.average(x, weights=x * x + 1.0)", np.array([0.4, 1.3, -0.2])),
}


def _helper_rule_function(expr, taken, directory):
    """``f(x)``: ``v = expr``, then a branch that returns ``sum(x)`` or ``sum(sin(v))``."""
    name = f"helper_rule_{abs(hash((expr, taken)))}"
    path = directory / f"{name}.py"
    path.write_text(f"import numpy as np\n\n\n"
                    f"def f(x):\n"
                    f"    v = {expr}\n"
                    f"    if np.sum(x * x) {'>' if taken else '<'} 0.0:\n"
                    f"        return np.sum(x)\n"
                    f"    return np.sum(np.sin(v))\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


@pytest.mark.parametrize("name", sorted(HELPER_RULES))
def test_a_rule_whose_helper_needs_a_value_runs_unguarded(name, tmp_path):
    expr, x = HELPER_RULES[name]
    f = _helper_rule_function(expr, True, tmp_path)  # v's gradient: the zero at run time
    source = grad(f).source(x)
    assert "is_zero" not in source, source
    np.testing.assert_allclose(grad(f)(x), np.ones_like(x))
    g = _helper_rule_function(expr, False, tmp_path)  # v's gradient: a value
    assert "is_zero" not in grad(g).source(x)
    mindgrad.check_grads(g, (x,), modes=("rev", "fwd"), order=2)
