"""``vmap``'s batched code: the function's source rewritten to compute every example at once.

Each function of the table runs batched with no statement left to the loop (its source shows
neither ``stacked`` nor ``each_example``), and its result matches a Python loop over the
examples, stacked, on float64 and float32; the functions whose branches, loops or calls differ
between examples run those statements once per example, exactly; ``vmap(grad(f))``, ``jacrev``
and ``jacfwd`` through the batched code match the gradient of each example and closed forms."""

import numpy as np
import pytest

import mindgrad
from mindgrad import nn
from mindgrad.common.parameter import Parameter

RNG = np.random.default_rng(7)
A = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
M = RNG.normal(size=(3, 4))
V = RNG.normal(size=3)
B = 5


def _loop(fn, args, in_axes, out_axes=0):
    """The reference: ``fn`` on each example, stacked along ``out_axes``."""
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    outs = [fn(*[a if ax is None else np.take(a, i, ax) for a, ax in zip(args, in_axes)])
            for i in range(size)]
    return np.stack([np.asarray(o) for o in outs], axis=out_axes)


def _direct(fn, args, in_axes):
    """The batched code itself, called without vmap's wrapper (which runs the loop where the
    batched code raises: a test must see the batched code's own numbers)."""
    from mindgrad.api import batched

    made = batched.compiled(fn, args, list(in_axes))
    assert not isinstance(made, str), made
    moved = [a if ax is None else np.moveaxis(a, ax, 0) for a, ax in zip(args, in_axes)]
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    return made.function(*moved, size)


# ----- the table: each has a batching rule for every statement ----------------------------------


def elementwise_shared_higher(x):          # x: (3,) per example, shared M: (3, 4)
    return np.exp(-x[:, None] * M) + np.where(x[:, None] > 0, M, -M) * np.clip(x, -1, 1)[:, None]


def reductions(x):                          # x: (3, 4)
    a = np.sum(x, axis=0) + np.mean(x, axis=-1, keepdims=True).sum()
    b = x.max(axis=1) - x.min() + np.prod(x[:2, :2], axis=(0, 1))
    return a.sum() + b.sum() + np.std(x) + np.var(x, axis=1).sum() + np.linalg.norm(x)


def matmuls(x, y):                          # x: (3,), y: (3, 4)
    a = A @ x + x @ A + x @ x
    b = x @ y + np.dot(x, M) + y.T @ x
    c = y @ y.T @ x + np.matmul(A.T, x) + np.dot(x, x)
    return np.sum(a) * b + c.sum() + np.sum(x @ M)


def matmul_called(x, y):                    # np.matmul is a generalized ufunc, not elementwise
    return np.matmul(x, y) + np.matmul(A, x)


def stacked_matmul(x):                      # x: (2, 3, 3): a stack in every example
    return np.sum(x @ x, axis=0) + x[0] @ A


def einsums(x, y):                          # x: (3,), y: (3, 4)
    return np.einsum("ij,j->i", A, x) @ y + np.einsum("i,ij", x, y) + np.einsum("ij,ij->", y, y)


def indexing(x):                            # x: (3, 4)
    y = x.copy()
    y[0] = np.sin(x[1])
    y[:, 1] = 2.0
    y[1:, 2:] = x[:2, :2] * 3.0
    return x[0] + y[1:][::-1][0] + x[..., -1:].sum() + y[2, 3]


def joined(x, v):                           # x: (3,), v: (3,) shared
    parts = [x, v, x * v]
    s = np.stack(parts, axis=1)
    c = np.concatenate([x, v], axis=0)
    t = np.stack([x, v])
    return s.sum(axis=1) + c[:3] * c[3:] + np.array([x, v]).sum(axis=0) + t[0]


def solved(a, b):                           # a: (3, 3), b: (3,)
    x = np.linalg.solve(a, b)
    return x + np.linalg.inv(a) @ b + np.linalg.det(a) + np.linalg.solve(A, b)


def reshaped(x):                            # x: (3, 4)
    r = np.reshape(x, (4, 3)) + x.reshape(2, 6).reshape((4, 3))
    return np.transpose(r).sum(axis=1) + np.swapaxes(x.T, 0, 1)[:, 0] + \
        np.expand_dims(x, 0)[0, :, 1] + x.shape[0] + len(x)


def looped_shared(x, n):                    # a loop over shared items, a batched body
    total = x * 0.0
    for k in range(n):
        total = total + np.cos(x * k)
    return total


def control_on_shared(x, flag):             # a branch on a shared value
    if flag > 0:
        y = x * 2.0
    else:
        y = -x
    k = 0
    while k < 2:
        y = y + k
        k = k + 1
    return y


TABLE = [
    (elementwise_shared_higher, [(B, 3)], (0,)),
    (reductions, [(B, 3, 4)], (0,)),
    (matmuls, [(B, 3), (B, 3, 4)], (0, 0)),
    (matmuls, [(B, 3), (3, 4)], (0, None)),
    (matmuls, [(3,), (B, 3, 4)], (None, 0)),
    (stacked_matmul, [(B, 2, 3, 3)], (0,)),
    (matmul_called, [(3, 3), (3, 3)], (0, 0)),   # a batch of 3 vectors of 3: no (3, 3) result
    (einsums, [(B, 3), (3, 4)], (0, None)),
    (einsums, [(B, 3), (B, 3, 4)], (0, 0)),
    (indexing, [(B, 3, 4)], (0,)),
    (indexing, [(3, B, 4)], (1,)),
    (joined, [(B, 3), (3,)], (0, None)),
    (solved, [(B, 3, 3), (B, 3)], (0, 0)),
    (solved, [(B, 3, 3), (3,)], (0, None)),
    (solved, [(3, 3), (3, B)], (None, 1)),
    (reshaped, [(B, 3, 4)], (0,)),
]


def _args(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    args = [rng.normal(size=s).astype(dtype) for s in shapes]
    return [a + 3 * np.eye(3, dtype=dtype) if s[-2:] == (3, 3) else a
            for a, s in zip(args, shapes)]


@pytest.mark.parametrize("fn, shapes, in_axes", TABLE,
                         ids=[f"{f.__name__}-{ax}" for f, _, ax in TABLE])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_table_runs_batched_and_matches_the_loop(fn, shapes, in_axes, dtype):
    args = _args(shapes, dtype)
    mapped = mindgrad.vmap(fn, in_axes=in_axes)
    code = str(mindgrad.source(mapped, *args))
    assert "stacked(" not in code and "each_example(" not in code, code
    out = mapped(*args)
    expected = _loop(fn, args, in_axes)
    assert out.shape == expected.shape and out.dtype == expected.dtype
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(out, expected, rtol=tol, atol=tol)
    np.testing.assert_allclose(_direct(fn, args, in_axes), expected, rtol=tol, atol=tol)


def test_out_axes_one_and_in_axes_none_on_a_loop_and_branch_of_shared_values():
    x = _args([(B, 3)], np.float64)[0]
    for fn, extra in ((looped_shared, 3), (control_on_shared, -1.0)):
        mapped = mindgrad.vmap(fn, in_axes=(0, None), out_axes=1)
        assert "each_example(" not in str(mindgrad.source(mapped, x, extra))
        np.testing.assert_allclose(mapped(x, extra), _loop(fn, [x, extra], (0, None), 1),
                                   rtol=1e-13)
        np.testing.assert_allclose(_direct(fn, [x, extra], (0, None)),
                                   _loop(fn, [x, extra], (0, None)), rtol=1e-13)


def test_nested_vmap_matches_a_double_loop():
    x = _args([(4, B, 3)], np.float64)[0]
    inner = mindgrad.vmap(elementwise_shared_higher)
    outer = mindgrad.vmap(inner, in_axes=1, out_axes=0)
    expected = np.stack([np.stack([elementwise_shared_higher(x[i, b]) for i in range(4)])
                         for b in range(B)])
    np.testing.assert_allclose(outer(x), expected, rtol=1e-13)


# ----- statements run once per example: exact ---------------------------------------------------


def branch_on_data(x):
    if np.sum(x) > 0:
        y = x * 2.0
    else:
        y = np.cos(x)
    return y + 1.0


def while_on_data(x):
    s = x * 1.0
    while np.max(np.abs(s)) > 0.1:
        s = s / 2.0
    return s


def _helper(t):
    return t[::-1] * 2.0


def calls_a_helper(x):
    return _helper(x) + x


def picks(x):
    idx = np.array([2, 0])
    return x[idx] * x[1:]


def accumulates(x):
    total = 0.0
    for k in range(3):
        total = total + x[k] * x
    return total


@pytest.mark.parametrize("fn", [branch_on_data, while_on_data, calls_a_helper, accumulates,
                                picks])
def test_statements_without_a_batched_form_run_once_per_example(fn):
    x = _args([(B, 3)], np.float64, seed=3)[0]
    mapped = mindgrad.vmap(fn)
    code = str(mindgrad.source(mapped, x))
    assert "stacked(" in code or "each_example(" in code
    assert "run once per example" in str(mindgrad.stages(mapped, x))
    np.testing.assert_array_equal(mapped(x), _loop(fn, [x], (0,)))
    np.testing.assert_allclose(_direct(fn, [x], (0,)), _loop(fn, [x], (0,)), rtol=1e-13)


def test_stages_say_when_every_statement_is_batched():
    stages = mindgrad.stages(mindgrad.vmap(reductions), np.ones((2, 3, 4)))
    assert [s.stage for s in stages] == ["source", "fence", "normalize", "batch", "emit",
                                         "compile"]
    assert "every statement computes all the examples at once" in stages[3].code


WEIGHTS = np.ones(3)


def reads_a_global(x):
    return x * WEIGHTS


def test_a_global_that_changes_its_dimensions_rebuilds_the_code():
    global WEIGHTS
    x = np.arange(6.0).reshape(2, 3)
    mapped = mindgrad.vmap(reads_a_global)
    np.testing.assert_array_equal(mapped(x), x)
    try:
        WEIGHTS = np.arange(6.0).reshape(2, 3)   # per example: (3,) * (2, 3) -> (2, 3)
        np.testing.assert_array_equal(mapped(x), _loop(reads_a_global, [x], (0,)))
    finally:
        WEIGHTS = np.ones(3)


def fails_on_one_example(x):
    if x[0] > 0:
        return np.exp(x).sum() + undefined_name  # noqa: F821
    return x.sum()


def test_an_error_in_one_example_is_the_users_own():
    x = np.array([[-1.0, 2.0], [1.0, 0.0]])
    with pytest.raises(NameError, match="undefined_name"):
        mindgrad.vmap(fails_on_one_example)(x)


def writes_into_its_argument(x, w):
    y = x
    y[0] = 7.0          # the example's copy, in the loop: the caller's x is untouched
    z = w
    z[1] = -1.0         # w is the same in every example: written before it differs
    return y * 2.0 + z * x[0]


def test_writes_into_arguments_leave_the_callers_arrays_alone():
    x, w = np.arange(6.0).reshape(2, 3), np.ones(3)
    x0, w0 = x.copy(), w.copy()
    expected = _loop(writes_into_its_argument, [x.copy(), w.copy()], (0, None))
    out = mindgrad.vmap(writes_into_its_argument, in_axes=(0, None))(x, w)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(x, x0)
    del w0  # the loop writes into w itself, as the function does (it is passed whole)


def writes_through_an_alias(y):
    pair = (y * 1.5, np.tanh(y))
    a = pair[0]
    a *= np.sin(y)          # changes pair[0] too: read below
    return pair[1] * a + pair[0]


def test_an_in_place_operator_on_a_shared_array_runs_as_written():
    # normalizing writes a *= b as a = a * b; where a shares its memory with a value read
    # later, the batched code would lose the write: the loop runs it (found by the tester)
    y = _args([(B, 2, 3)], np.float64, seed=9)[0]
    mapped = mindgrad.vmap(writes_through_an_alias)
    np.testing.assert_array_equal(mapped(y), _loop(writes_through_an_alias, [y], (0,)))
    with pytest.raises(TypeError, match="runs as a loop"):
        mindgrad.source(mapped, y)


class Dense(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.linspace(-1.0, 1.0, 12).reshape(3, 4), name="w")
        self.b = Parameter(np.linspace(0.0, 0.3, 4), name="b")

    def construct(self, x):
        return np.tanh(x @ self.w + self.b)


def test_a_cell_with_parameters_runs_batched():
    net = Dense()
    x = _args([(B, 3)], np.float64)[0]
    mapped = mindgrad.vmap(net)
    assert "each_example(" not in str(mindgrad.source(mapped, x))
    np.testing.assert_allclose(mapped(x), np.stack([net(e) for e in x]), rtol=1e-13)


# ----- per-example gradients and Jacobians through the batched code -----------------------------


def mlp_loss(w1, b1, w2, x, y):
    h = np.tanh(x @ w1 + b1)
    return np.mean((h @ w2 - y) ** 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_per_example_gradients_match_each_examples_gradient(dtype):
    rng = np.random.default_rng(2)
    w1, b1, w2 = (rng.normal(size=s).astype(dtype) for s in ((4, 6), (6,), (6,)))
    x, y = rng.normal(size=(8, 4)).astype(dtype), rng.normal(size=8).astype(dtype)
    for make in (mindgrad.grad, mindgrad.value_and_grad):
        per_example = mindgrad.vmap(make(mlp_loss, (0, 1, 2)), in_axes=(None,) * 3 + (0, 0))
        out = per_example(w1, b1, w2, x, y)
        expected = [make(mlp_loss, (0, 1, 2))(w1, b1, w2, x[i], y[i]) for i in range(8)]
        grads = out[1] if make is mindgrad.value_and_grad else out
        tol = 1e-12 if dtype == np.float64 else 1e-5
        for k in range(3):
            want = np.stack([(e[1] if make is mindgrad.value_and_grad else e)[k]
                             for e in expected])
            np.testing.assert_allclose(grads[k], want, rtol=tol, atol=tol)
        if make is mindgrad.value_and_grad:
            np.testing.assert_allclose(out[0], [e[0] for e in expected], rtol=tol)
    # and they are the batched code's gradient, not a loop of gradients
    from mindgrad.api import batched
    grad_fn = mindgrad.grad(mlp_loss, (0, 1, 2))
    axes = [None, None, None, 0, 0]
    spread = [np.broadcast_to(a, (8,) + a.shape).copy() for a in (w1, b1, w2)]
    made = batched.compiled(mlp_loss, spread + [x, y], [0, 0, 0, 0, 0])
    assert not isinstance(made, str) and not made.looped
    assert batched.run(mindgrad.vmap(grad_fn, in_axes=axes), (w1, b1, w2, x, y), axes, 8) \
        is not batched.LOOP


def _vector(x, c):
    return np.sin(x) * np.sum(c) + np.sum(x ** 2) * c


@pytest.mark.parametrize("shape", [(3,), (2, 3)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_jacrev_and_jacfwd_match_the_closed_form(shape, dtype):
    rng = np.random.default_rng(4)
    x = rng.normal(size=shape).astype(dtype)
    c = rng.normal(size=shape).astype(dtype)
    # d/dx_j [sin(x_i) sum(c) + |x|^2 c_i] = cos(x_i) sum(c) delta_ij + 2 x_j c_i
    n = x.size
    expected = (np.diag(np.cos(x.ravel()) * np.sum(c)) +
                2 * np.outer(c.ravel(), x.ravel())).reshape(shape + shape)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for jac in (mindgrad.jacrev(_vector), mindgrad.jacfwd(_vector)):
        out = jac(x, c)
        assert out.shape == shape + shape and n == x.size
        np.testing.assert_allclose(out, expected, rtol=tol, atol=tol)
        assert "batch_size" in str(mindgrad.source(jac, x, c))  # every row at once


def test_jacobians_of_several_positions_and_a_2d_output():
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=3), rng.normal(size=4)

    def outer(x, y):
        return np.outer(np.tanh(x), y)

    for jac in (mindgrad.jacrev(outer, (0, 1)), mindgrad.jacfwd(outer, (0, 1))):
        jx, jy = jac(x, y)
        # d tanh(x_i) y_k / d x_j = delta_ij (1 - tanh^2 x_i) y_k; / d y_l = tanh(x_i) delta_kl
        want_x = np.einsum("ij,k->ikj", np.diag(1 - np.tanh(x) ** 2), y)
        want_y = np.einsum("i,kl->ikl", np.tanh(x), np.eye(4))
        np.testing.assert_allclose(jx, want_x, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(jy, want_y, rtol=1e-12, atol=1e-14)


def test_grad_of_vmap_differentiates_the_batched_code():
    rng = np.random.default_rng(6)
    x, w = rng.normal(size=(3, 5)), rng.normal(size=(3, 2))

    def per_example(x, w):
        return np.tanh(x @ w).sum()

    mapped = mindgrad.vmap(per_example, in_axes=(1, None))
    gx, gw = mindgrad.grad(mapped, (0, 1))(x, w)
    assert "batched(" in str(mindgrad.source(mindgrad.grad(mapped, (0, 1)), x, w))
    # d/dx sum_b sum_k tanh(x_b w)_k = w (1 - tanh^2)
    t = np.tanh(x.T @ w)
    np.testing.assert_allclose(gx, (w @ (1 - t ** 2).T), rtol=1e-12)
    np.testing.assert_allclose(gw, x @ (1 - t ** 2), rtol=1e-12)


def _energy(x):
    return np.sum(np.tanh(A @ x) ** 2) + np.sum(x ** 4)


def test_hessian_runs_the_batched_gradient_over_every_unit_vector():
    x = np.array([0.3, -0.6, 0.9])
    t = np.tanh(A @ x)
    # H = A^T diag(2 (1 - t^2)(1 - 3 t^2)) A + diag(12 x^2)
    expected = A.T @ np.diag(2 * (1 - t ** 2) * (1 - 3 * t ** 2)) @ A + np.diag(12 * x ** 2)
    hessian = mindgrad.hessian(_energy)
    np.testing.assert_allclose(hessian(x), expected, rtol=1e-12)
    assert "def grad_vmap__energy_jvp(" in str(mindgrad.source(hessian, x))


def _complex_sum(x):
    return np.sum(np.exp(1j * x) * x)


def test_per_example_gradients_of_a_complex_output_are_refused_as_the_loop_refuses():
    # the batched gradient takes a sensitivity, which a complex output accepts: the refusal
    # must come first (it says what to write instead)
    x = np.ones((2, 3))
    for ask in (lambda: mindgrad.vmap(mindgrad.grad(_complex_sum))(x),
                lambda: mindgrad.hessian(_complex_sum)(x[0])):
        with pytest.raises(TypeError, match="complex output"):
            ask()
