"""Higher order and forward mode: grad of grad, jvp, vjp, jacfwd, jacrev, hessian.

Oracles: the documented outputs of API-SEMANTICS §5, closed forms (derivatives of polynomials),
and central finite differences of lower-order derivatives in float64.
"""

import numpy as np
import pytest

import mindgrad as mg
from mindgrad import grad, hessian, jacfwd, jacrev, jvp, vjp
from tests.corpus import corpus

F32 = np.float32


def X():
    return np.array([1.0, 2.0], F32)


def Y():
    return np.array([3.0, 4.0], F32)


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                               rtol=tol, atol=tol)


# ----- API-SEMANTICS §5: structures ------------------------------------------------------------


def square(a):
    return a * a


def cube_plus(a, b):
    return a ** 3 + b


def two_outputs(a, b):
    return a * b, a + b


def with_aux(a):
    return np.sum(a * a), a * 2.0


def test_vjp_returns_a_tuple_of_input_gradients():
    out, vjp_fn = vjp(square, X())
    close(out, [1, 4])
    grads = vjp_fn(np.ones(2, F32))
    assert isinstance(grads, tuple) and len(grads) == 1
    close(grads[0], [2, 4])
    assert grads[0].dtype == F32


def test_vjp_of_two_inputs_and_a_sensitivity():
    _, vjp_fn = vjp(cube_plus, X(), Y())
    ga, gb = vjp_fn(np.array([1.0, 10.0], F32))
    close(ga, [3, 120])
    close(gb, [1, 10])


def test_vjp_with_aux_gives_the_aux_bare():
    out, vjp_fn, aux = vjp(with_aux, X(), has_aux=True)
    close(out, 5.0)
    close(aux, [2, 4])
    (g,) = vjp_fn(F32(1.0))
    close(g, [2, 4])


def test_vjp_with_weights():
    w = mg.Parameter(np.array([2.0, 3.0]), name="w")

    def scaled(a):
        return a * w

    _, vjp_fn = vjp(scaled, np.array([1.0, 2.0]), weights=[w])
    (ga,), (gw,) = vjp_fn(np.ones(2))
    close(ga, [2, 3])
    close(gw, [1, 2])


FORWARD_SWEEPS = []


def count_forward_sweep():
    FORWARD_SWEEPS.append(1)


mg.nondifferentiable(count_forward_sweep)


def overwrites_and_appends(a, b):
    count_forward_sweep()
    y = a * 1.0
    hs = []
    for i in range(a.size):
        y[i] = y[i] * b[i] + np.sin(y[i])
        hs.append(y * b)
    return np.stack(hs) ** 2


def test_vjp_runs_the_forward_sweep_once_and_each_vjp_fn_call_agrees():
    a, b = np.array([0.3, -0.7, 1.1]), np.array([1.5, 0.4, -0.8])
    FORWARD_SWEEPS.clear()
    out, vjp_fn = vjp(overwrites_and_appends, a, b)
    assert len(FORWARD_SWEEPS) == 1
    v = np.random.default_rng(7).standard_normal(out.shape)
    first = vjp_fn(v)
    assert len(FORWARD_SWEEPS) == 1  # the first call used the kept tape
    np.testing.assert_allclose(out, overwrites_and_appends(a, b))
    second = vjp_fn(v)  # the tape served once: the forward sweep runs again
    third = vjp_fn(2.0 * v)
    for g1, g2, g3 in zip(first, second, third):
        np.testing.assert_allclose(g1, g2, rtol=1e-12)
        np.testing.assert_allclose(g3, 2.0 * g1, rtol=1e-12)
    # and against the full gradient code and central differences
    np.testing.assert_allclose(first[0], grad(lambda a, b: np.sum(v * overwrites_and_appends(
        a, b)))(a, b), rtol=1e-12)
    mg.check_grads(overwrites_and_appends, (a, b), modes=("rev", "fwd"))


def test_jacrev_shape_is_output_then_input():
    x = np.array([0.3, -0.2, 0.5])
    j = jacrev(sin_times)(x)
    assert j.shape == (3, 3)
    close(j, np.diag(np.cos(x) * 2.0))


def sin_times(a):
    return np.sin(a) * 2.0


def matrix_out(a):
    return np.outer(a, a)


def test_jacrev_of_a_matrix_output():
    x = np.array([0.3, -0.2, 0.5])
    j = jacrev(matrix_out)(x)
    assert j.shape == (3, 3, 3)
    expected = np.zeros((3, 3, 3))
    for i in range(3):
        for k in range(3):
            expected[i, k, i] += x[k]
            expected[i, k, k] += x[i]
    close(j, expected)


def test_jacrev_tuple_positions_and_several_outputs():
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    j = jacrev(two_outputs, (0, 1))(x, y)
    assert isinstance(j, tuple) and len(j) == 2           # outputs outside
    (d1x, d1y), (d2x, d2y) = j                             # inputs inside
    close(d1x, np.diag(y))
    close(d1y, np.diag(x))
    close(d2x, np.eye(2))
    close(d2y, np.eye(2))


def test_jacrev_with_aux():
    j, aux = jacrev(with_aux, has_aux=True)(np.array([1.0, 2.0]))
    close(j, [2, 4])
    close(aux, [2, 4])


# ----- grad of grad ----------------------------------------------------------------------------


def g_product(a, b):
    return a * a * b


def test_grad_of_grad_as_the_spec_writes_it():
    h = grad(lambda a, b: grad(g_product, (0, 1))(a, b)[0].sum(), (0, 1))
    ga, gb = h(X(), Y())
    close(ga, 2 * Y())          # d/da sum(2ab) = 2b
    close(gb, 2 * X())          # d/db sum(2ab) = 2a


def quintic(x):
    return 3.0 * x ** 5 - 2.0 * x ** 4 + x ** 3 - 7.0 * x


def quintic_loop(x):
    total = 0.0
    coefficients = [0.0, -7.0, 0.0, 1.0, -2.0, 3.0]
    power = 1.0
    for k in range(len(coefficients)):
        total = total + coefficients[k] * power
        power = power * x
    return total


@pytest.mark.parametrize("f", [quintic, quintic_loop])
@pytest.mark.parametrize("x", [-1.3, 0.4, 2.0])
def test_third_derivative_of_a_polynomial_in_closed_form(f, x):
    d1 = grad(f)
    d2 = grad(d1)
    d3 = grad(d2)
    close(d1(x), 15 * x ** 4 - 8 * x ** 3 + 3 * x ** 2 - 7, 1e-9)
    close(d2(x), 60 * x ** 3 - 24 * x ** 2 + 6 * x, 1e-9)
    close(d3(x), 180 * x ** 2 - 48 * x + 6, 1e-9)


def test_fourth_derivative_of_a_polynomial():
    d4 = grad(grad(grad(grad(quintic))))
    close(d4(0.7), 360 * 0.7 - 48, 1e-9)


def sum_of_quartics(x):
    return np.sum(x ** 4 + 2.0 * x ** 3)


def test_third_derivative_of_an_array_polynomial_along_directions():
    x = np.array([0.5, -1.2, 2.0])
    w = np.array([0.3, -0.7, 1.1])
    # s(x) = sum(w * f''(x) * w) with f'' the Hessian's diagonal: 12x^2 + 12x
    first = grad(sum_of_quartics)

    def second_along(a):
        return np.sum(w * first(a))

    second = grad(second_along)            # = w * (12 x^2 + 12 x)

    def third_along(a):
        return np.sum(w * second(a))

    third = grad(third_along)              # = w * w * (24 x + 12)
    close(second(x), w * (12 * x ** 2 + 12 * x), 1e-9)
    close(third(x), w * w * (24 * x + 12), 1e-9)


# ----- Hessians against finite differences of the gradient ------------------------------------


def h_quadratic(x):
    a = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 3.0]])
    return 0.5 * x @ a @ x


def h_tanh_sum(x):
    return np.sum(np.tanh(x) ** 2 * x)


def h_logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def h_rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def h_loop(x):
    h = x
    for i in range(3):
        h = np.sin(h) * 0.7 + h * 0.3
    return np.sum(h * h)


def h_branch(x):
    s = np.sum(x * x)
    if s > 1.0:
        y = np.exp(-s) * np.sum(x)
    else:
        y = s * np.sum(x ** 3)
    return y


def h_index_assign(x):
    y = np.zeros(3)
    y[0] = x[0] * x[1]
    y[1:] = x[1:] ** 2
    return np.sum(y * x)


def _helper_energy(a, scale=2.0):
    return scale * np.sum(a ** 4) - np.sum(a[:-1] * a[1:])


def h_subroutine(x):
    return _helper_energy(x) + _helper_energy(x * 0.5, scale=1.0)


def h_norm(x):
    return np.sqrt(np.sum(x * x) + 1.0) * np.mean(x)


def h_softplus(x):
    return np.sum(np.log1p(np.exp(x)) * np.cos(x))


def h_matrix(x):
    m = np.outer(x, x) + np.eye(3)
    return np.trace(np.linalg.inv(m))


def h_array_of_sums(x):
    # np.array's tangent of a list, read backwards (reverse over forward): it writes into an
    # array through a helper, which reverse mode read from its source as a zero
    return np.sum(np.array([np.sum(x ** 3), np.sum(np.sin(x))]) ** 2)


HESSIAN_FUNCTIONS = [h_quadratic, h_tanh_sum, h_logsumexp, h_rosenbrock, h_loop, h_branch,
                     h_index_assign, h_subroutine, h_norm, h_softplus, h_matrix, h_array_of_sums]


def _fd_hessian(f, x, eps=1e-5):
    g = grad(f)
    return np.stack([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


@pytest.mark.parametrize("f", HESSIAN_FUNCTIONS, ids=lambda f: f.__name__)
def test_hessian_by_reverse_over_reverse(f):
    x = np.array([0.3, -0.8, 0.6])
    h = jacrev(grad(f))(x)
    assert h.shape == (3, 3)
    np.testing.assert_allclose(h, _fd_hessian(f, x), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(h, h.T, rtol=1e-9, atol=1e-9)


# ----- forward mode ---------------------------------------------------------------------------


def test_jvp_as_the_spec_writes_it():
    out, t = jvp(cube_plus, (X(), Y()), (1, 1))
    close(out, [4, 12])
    close(t, [4, 13])


def test_jvp_of_one_input_and_with_aux():
    out, t = jvp(square, X(), np.array([1.0, 0.5], F32))
    close(out, [1, 4])
    close(t, [2, 2])
    out, t, aux = jvp(with_aux, (np.array([1.0, 2.0]),), (np.array([1.0, 1.0]),),
                      has_aux=True)
    close(out, 5.0)
    close(t, 6.0)
    close(aux, [2, 4])


def test_jvp_argument_errors():
    with pytest.raises(ValueError, match="has 2 element.* has 1"):
        jvp(cube_plus, (X(), Y()), (1,))
    # a list of inputs is taken as a tuple, as MindSpore's jvp takes it
    np.testing.assert_array_equal(jvp(square, [X()], [X()])[1], jvp(square, (X(),), (X(),))[1])


def test_jacfwd_equals_jacrev():
    x, y = np.array([0.3, -0.2]), np.array([1.5, 0.7])
    forward = jacfwd(two_outputs, (0, 1))(x, y)
    backward = jacrev(two_outputs, (0, 1))(x, y)
    for f_out, b_out in zip(forward, backward):
        for f, b in zip(f_out, b_out):
            close(f, b, 1e-12)
    close(jacfwd(matrix_out)(x[:2]), jacrev(matrix_out)(x[:2]), 1e-12)


def test_generated_tangent_code_reads_like_the_primal():
    from mindgrad.compiler import driver

    text = driver.run_forward(h_loop, (0,)).text
    assert "# tangent of: h = np.sin(h) * 0.7 + h * 0.3" in text
    assert "t_h" in text and "tape" not in text  # forward mode keeps no tape


@pytest.mark.parametrize("f", HESSIAN_FUNCTIONS, ids=lambda f: f.__name__)
def test_hessian_by_forward_over_reverse(f):
    x = np.array([0.3, -0.8, 0.6])
    h = hessian(f)(x)
    assert h.shape == (3, 3)
    np.testing.assert_allclose(h, _fd_hessian(f, x), rtol=1e-6, atol=1e-6)


def big_energy(x):
    pairs = np.log1p(np.exp(x[1:] * x[:-1]))
    return np.sum(pairs) + 0.5 * np.sum(x * x) + np.sum(np.sin(x) ** 3)


def test_hessian_vector_product_of_1000_parameters():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1000)
    g = grad(big_energy)
    for _ in range(3):
        v = rng.standard_normal(1000)
        _, hv = jvp(g, (x,), (v,))       # forward over reverse: no Hessian is formed
        assert hv.shape == (1000,)
        eps = 1e-6
        numeric = (g(x + eps * v) - g(x - eps * v)) / (2 * eps)
        np.testing.assert_allclose(hv, numeric, rtol=1e-5, atol=1e-6)
        w = rng.standard_normal(1000)
        # along a second direction: w . H v against the difference of w . grad along v
        close(w @ hv, (w @ g(x + eps * v) - w @ g(x - eps * v)) / (2 * eps), 1e-5)


def test_check_grads_checks_each_order_in_both_modes():
    x = np.array([0.4, -0.3, 0.8])
    mg.check_grads(h_loop, (x,), modes=("rev", "fwd"), order=3)


def cube_sum(a):
    return np.sum(a ** 3)


def cube_slope(a):
    return 3.0 * a * a


def test_check_grads_catches_a_wrong_second_derivative():
    """A rule whose gradient is right but goes through a constant: order 1 passes, 2 fails."""
    mg.nondifferentiable(cube_slope)
    mg.adjoint(cube_sum)(_cube_sum_rule)
    mg.rules.tangent(cube_sum)(_cube_sum_tangent)
    try:
        x = np.array([0.4, -0.3, 0.8])
        mg.check_grads(uses_cube_sum, (x,), order=1)
        with pytest.raises(AssertionError, match="order 2"):
            mg.check_grads(uses_cube_sum, (x,), order=2)
    finally:
        from mindgrad import rules

        rules._RULES.pop(cube_sum, None)
        rules._TANGENTS.pop(cube_sum, None)
        rules._NONDIFF.discard(cube_slope)
        rules._bump()


def uses_cube_sum(a):
    return cube_sum(a) * 2.0


def _cube_sum_rule(out, a):
    mg.d[a] = mg.d[out] * cube_slope(a)


def _cube_sum_tangent(out, a):
    mg.d[out] = np.sum(mg.d[a] * cube_slope(a))


# ----- reverse over forward: grad of a function that calls jvp ---------------------------------


def _directional(f, v):
    """x -> the derivative of f at x along v, by forward mode."""
    def along(x):
        _, slope = mg.jvp(f, (x,), (v,))
        return slope
    return along


@pytest.mark.parametrize("f", HESSIAN_FUNCTIONS, ids=lambda f: f.__name__)
def test_hessian_vector_product_by_reverse_over_forward(f):
    x = np.array([0.3, -0.8, 0.6])
    v = np.array([0.5, 1.5, -1.0])
    along = _directional(f, v)
    np.testing.assert_allclose(grad(along)(x), _fd_hessian(f, x) @ v, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("f", [h_loop, h_branch, h_index_assign, h_subroutine],
                         ids=lambda f: f.__name__)
def test_third_derivatives_through_reverse_over_forward(f):
    # order 2 of the directional derivative: third derivatives of f, by grad of grad of jvp
    # and by forward over reverse over forward
    along = _directional(f, np.array([0.5, 1.5, -1.0]))
    mg.check_grads(along, (np.array([0.3, -0.8, 0.6]),), order=2, modes=("rev", "fwd"))


def two_input_energy(a, b):
    return np.sum(np.tanh(a * b) + a ** 2 * b)


def mixed_partials(a, b):
    # the tangent along a only (b's is None): d/da of two_input_energy, summed with weights
    _, slope = mg.jvp(two_input_energy, (a, b), (np.ones(2), None))
    return slope


def test_reverse_over_forward_with_two_inputs_and_a_missing_tangent():
    a, b = np.array([0.4, -0.7]), np.array([1.2, 0.3])
    g_a, g_b = grad(mixed_partials, (0, 1))(a, b)
    # d/da sum_i d/da_i E and d/db of the same, in closed form
    t = np.tanh(a * b)
    s2 = 1.0 - t ** 2
    np.testing.assert_allclose(g_a, -2.0 * t * s2 * b * b + 2.0 * b, rtol=1e-10)
    np.testing.assert_allclose(g_b, s2 - 2.0 * t * s2 * a * b + 2.0 * a, rtol=1e-10)


def jvp_with_aux_inside(x):
    _, slope, _ = mg.jvp(with_aux, (x,), (x,), has_aux=True)
    return slope


def test_jvp_inside_a_differentiated_function_rejects_has_aux():
    with pytest.raises(mg.UnsupportedSyntaxError, match="has_aux is not supported there"):
        grad(jvp_with_aux_inside)(np.array([0.3, 0.2]))


# ----- second derivatives through the singular values ----------------------------------------

RNG_NORMS = np.random.default_rng(5)
M34 = RNG_NORMS.standard_normal((3, 4))
B233 = RNG_NORMS.standard_normal((2, 3, 3))


def nuclear_squared(m):
    return np.linalg.norm(m, "nuc") ** 2


def spectral_times_sum(m):
    return np.linalg.norm(m, 2) * np.sum(m)


def smallest_singular_cubed(m):
    return np.linalg.norm(m, -2) ** 3


def batched_nuclear(b):
    return np.sum(np.linalg.norm(b, "nuc", axis=(1, 2)) ** 2)


def spectral_over_swapped_axes(b):
    return np.sum(np.linalg.norm(b, 2, axis=(2, 0)))


@pytest.mark.parametrize("f, x", [(nuclear_squared, M34), (spectral_times_sum, M34),
                                  (smallest_singular_cubed, M34), (batched_nuclear, B233),
                                  (spectral_over_swapped_axes, B233)],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_spectral_and_nuclear_norms_to_second_order_in_both_modes(f, x):
    mg.check_grads(f, (x,), order=2, modes=("rev", "fwd"))


# ----- Jacobians of Jacobians ------------------------------------------------------------------

COMPOSITIONS = {"jacfwd(jacrev)": lambda f: jacfwd(jacrev(f)),
                "jacrev(jacrev)": lambda f: jacrev(jacrev(f)),
                "jacfwd(jacfwd)": lambda f: jacfwd(jacfwd(f)),
                "jacrev(jacfwd)": lambda f: jacrev(jacfwd(f))}


@pytest.mark.parametrize("compose", list(COMPOSITIONS), ids=list(COMPOSITIONS))
@pytest.mark.parametrize("f", [h_rosenbrock, h_loop, h_branch, h_index_assign, h_subroutine],
                         ids=lambda f: f.__name__)
def test_hessian_as_a_jacobian_of_a_jacobian(compose, f):
    # the issue writes the Hessian as mg.jacfwd(mg.jacrev(f))(x)
    x = np.array([0.3, -0.8, 0.6])
    h = COMPOSITIONS[compose](f)(x)
    np.testing.assert_allclose(h, _fd_hessian(f, x), rtol=1e-6, atol=1e-6)


def curve(x):
    return np.stack([np.sin(x[0] * x[1]) + x[2] ** 3, np.exp(0.5 * x[0]) * x[2]])


@pytest.mark.parametrize("compose", list(COMPOSITIONS), ids=list(COMPOSITIONS))
def test_second_derivative_tensor_of_a_vector_function(compose):
    x = np.array([0.4, -0.9, 0.7])
    t = COMPOSITIONS[compose](curve)(x)
    assert t.shape == (2, 3, 3)
    eps = 1e-5
    j = jacrev(curve)
    fd = np.stack([(j(x + eps * e) - j(x - eps * e)) / (2 * eps) for e in np.eye(3)], axis=-1)
    np.testing.assert_allclose(t, fd, rtol=1e-6, atol=1e-7)


def test_jacobian_of_a_jacobian_with_tuple_positions_is_refused_clearly():
    with pytest.raises(NotImplementedError, match="one int grad_position"):
        jacfwd(jacrev(cube_plus, (0, 1)))(X(), Y())


def test_the_higher_order_example_runs_and_agrees_with_itself():
    import os
    import pathlib
    import re
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root))  # this checkout's mindgrad
    run = subprocess.run([sys.executable, str(root / "examples" / "higher_order.py")],
                         cwd=str(root), capture_output=True, text=True, timeout=120, env=env,
                         check=False)
    assert run.returncode == 0, run.stderr
    text = run.stdout
    assert "def jvp_f(x, *, t_x):" in text and "t_h = t_mul + t_sin" in text
    assert "jacfwd(jacrev(energy)) equals hessian(energy): True" in text
    last_step = [line for line in text.splitlines() if line.startswith("Newton step")][-1]
    assert float(last_step.rsplit("= ", 1)[1]) < 1e-10
    rows = [re.findall(r"-?\d+\.\d+", line) for line in text.splitlines()
            if line.startswith(("grad of the directional derivative", "Hessian times"))]
    assert len(rows) == 2 and rows[0] == rows[1]


def _quadratic_energy(x):
    return np.sum(x * x)


def _cubic_energy(x):
    return np.sum(x * x * x)


ENERGY = _quadratic_energy


def slope_of_the_global_energy(x):
    _, t = mg.jvp(ENERGY, (x,), (np.ones(2),))
    return t


def test_rebinding_the_function_given_to_jvp_builds_fresh_code():
    # as a notebook cell redefining it would: the cached gradient must not keep the old one
    global ENERGY
    x = np.array([0.5, -1.5])
    g = grad(slope_of_the_global_energy)
    np.testing.assert_allclose(g(x), [2.0, 2.0])
    try:
        ENERGY = _cubic_energy
        np.testing.assert_allclose(g(x), 6.0 * x)
    finally:
        ENERGY = _quadratic_energy
    np.testing.assert_allclose(g(x), [2.0, 2.0])


REVERSE_OVER_FORWARD_CORPUS = ("list_appended_then_indexed", "append_then_stack",
                               "grow_list_by_concatenation", "while_collect_states",
                               "copy_and_update_in_loop", "swap_rows", "dict_literal",
                               "break_at_threshold")


@pytest.mark.parametrize("name", REVERSE_OVER_FORWARD_CORPUS)
def test_reverse_over_forward_and_forward_over_forward_on_corpus_functions(name):
    # loops, jumps, index assignment, lists and dicts under jvp, differentiated again
    fn, arg_sets, _, _ = next(c for c in corpus.CASES if c[0].__name__ == name)
    (x,) = arg_sets[0]
    along = _directional(fn, np.random.default_rng(3).standard_normal(x.shape))
    mg.check_grads(along, (x,), modes=("rev", "fwd"))


def rnn_first_input(xs):
    return corpus.rnn_unroll(xs, RNN_WX, RNN_WH, RNN_H0)


RNN_WX, RNN_WH, RNN_H0 = (np.random.default_rng(4).standard_normal(s) for s in
                          [(3, 2), (2, 2), (2,)])


def test_reverse_over_forward_through_an_rnn():
    xs = np.random.default_rng(5).standard_normal((4, 3))
    along = _directional(rnn_first_input, np.random.default_rng(6).standard_normal((4, 3)))
    mg.check_grads(along, (xs,), modes=("rev", "fwd"))


def test_vjp_of_a_gradient_and_of_a_jacobian():
    x = np.array([0.3, -0.8, 0.6])
    v = np.array([1.0, -0.5, 2.0])
    _, vjp_fn = vjp(grad(h_tanh_sum), x)
    np.testing.assert_allclose(vjp_fn(v)[0], _fd_hessian(h_tanh_sum, x) @ v, rtol=1e-6)
    _, vjp_fn = vjp(jacrev(h_tanh_sum), x)
    np.testing.assert_allclose(vjp_fn(v)[0], _fd_hessian(h_tanh_sum, x) @ v, rtol=1e-6)


def test_vjp_of_a_cell_with_its_weights_and_an_unused_one():
    net = mg.nn.Dense(3, 2)
    unused = mg.Parameter(np.ones(4, np.float32), name="unused")
    x = np.random.default_rng(8).standard_normal((4, 3)).astype(np.float32)
    weights = [*net.trainable_params(), unused]
    out, vjp_fn = vjp(net, x, weights=weights)
    v = np.random.default_rng(9).standard_normal(out.shape).astype(np.float32)
    (gx,), (gw, gb, gu) = vjp_fn(v)
    np.testing.assert_allclose(gx, v @ net.weight, rtol=1e-5)
    np.testing.assert_allclose(gw, v.T @ x, rtol=1e-5)
    np.testing.assert_allclose(gb, v.sum(axis=0), rtol=1e-5)
    np.testing.assert_array_equal(gu, np.zeros(4, np.float32))
    (gx2,), (gw2, gb2, gu2) = vjp_fn(v)  # the second call runs the forward sweep again
    for again, first in [(gx2, gx), (gw2, gw), (gb2, gb), (gu2, gu)]:
        np.testing.assert_allclose(again, first, rtol=1e-6)


# ----- a tangent broadcast to its input's shape (regression: np.sum along 1.0 gave 1) ------


def test_a_number_tangent_stands_for_that_value_everywhere():
    x = np.array([0.5, -1.0, 2.0])
    _, t = jvp(np.sum, (x,), (1.0,))
    assert t == 3.0
    _, t = jvp(lambda a: np.sum(np.sin(a)), (x,), (0.5,))
    np.testing.assert_allclose(t, 0.5 * np.sum(np.cos(x)))
    _, t = jvp(lambda a: a * a, (np.ones((2, 3)),), (np.array([1.0, 2.0, 3.0]),))
    np.testing.assert_allclose(t, 2.0 * np.broadcast_to([1.0, 2.0, 3.0], (2, 3)))


def test_a_tangent_that_does_not_broadcast_names_its_position():
    with pytest.raises(ValueError, match=r"v\[0\] has shape \(2,\) but inputs\[0\] has shape "
                                         r"\(3,\)"):
        jvp(np.sum, (np.ones(3),), (np.ones(2),))


# ----- reverse over forward over reverse: a list the gradient code pops -------------------------


def running_products(x):
    acc = []
    s = 0.0
    for i in range(3):
        s = s + np.sin(x[i]) * x[(i + 1) % 3]
        acc.append(s)
    return acc[-1] * acc[0]


def test_grad_of_jvp_of_grad_of_a_loop_that_builds_a_list():
    # the gradient pops its tape, a list; the tangent code pops the tangent list in step
    # (runtime.tangent_pop), which the reverse pass over it reads as a pop: the list's
    # gradient grows back one entry per pop (it was added whole, 1 entry to 2, and refused)
    x, v = np.array([0.3, -1.2, 2.4]), np.array([1.0, 0.5, -0.3])
    gradient = grad(running_products)

    def hvp_sum(a):
        return np.sum(jvp(gradient, (a,), (v,))[1])

    h = 1e-4
    numeric = np.array([(hvp_sum(x + h * e) - hvp_sum(x - h * e)) / (2 * h)
                        for e in np.eye(3)])
    np.testing.assert_allclose(grad(hvp_sum)(x), numeric, rtol=1e-6, atol=1e-7)
    mg.check_grads(running_products, (x,), modes=("rev", "fwd"), order=3)


def sqrt_where_positive(y):
    v = np.where(y > 0.0, np.sqrt(y), y)  # NaN in the branch not taken, below 0
    return np.sum(np.sin(v) * v)


def test_grad_of_jvp_of_grad_through_a_branch_np_where_did_not_take():
    # the tangent of sqrt below 0 is NaN, held at 0 where the gradient is 0 (times_slope); its
    # gradient for the slope, d_out * t, must be held where d_out is 0 too (it gave NaN)
    y, v = np.array([0.3, -1.2, 2.4, -0.5]), np.array([1.0, 0.5, -0.3, 0.2])
    gradient = grad(sqrt_where_positive)

    def hvp_sum(a):
        return np.sum(jvp(gradient, (a,), (v,))[1])

    h = 1e-5
    with np.errstate(invalid="ignore"):  # the program's own sqrt of the negative entries
        numeric = np.array([(hvp_sum(y + h * e) - hvp_sum(y - h * e)) / (2 * h)
                            for e in np.eye(4)])
        np.testing.assert_allclose(grad(hvp_sum)(y), numeric, rtol=1e-6, atol=1e-7)
