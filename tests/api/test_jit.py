"""grad(..., jit=True): the gradient compiled by Numba, every number checked against central
differences, closed forms and the Python gradient; the refusals named; the cache."""

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("numba")

import mindgrad  # noqa: E402
from mindgrad.api.jit import JitUnsupportedError  # noqa: E402


@pytest.fixture(autouse=True)
def _jit_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MINDGRAD_JIT_CACHE", str(tmp_path / "jit"))


def scalar_loop(x):
    h = x
    for i in range(200):
        h = h * 0.99 + np.sin(h) * 0.01
    return h


def indexing(x):
    s = 0.0
    for i in range(100):
        s = s + x[i] * x[i + 1] + 0.5 * np.sum(x[i:i + 4] ** 2)
    return s


def while_loop(x):
    k = 0
    y = x
    while k < 5:
        y = y * np.cos(y) + 0.1
        k += 1
    return y


def if_in_loop(x):
    s = 0.0
    for i in range(6):
        if x[i] > 0:
            s = s + x[i] * x[i]
        else:
            s = s - np.sin(x[i])
    return s


def slice2d(a):
    t = 0.0
    for i in range(3):
        row = a[i, 1:]
        t = t + np.sum(row * row) * a[i, 0]
    return t


def array_loop(v):
    h = v
    for i in range(4):
        h = np.tanh(h) * 0.5 + h
    return np.sum(h * h)


def two_inputs(x, y):
    s = x * y
    for i in range(3):
        s = s + np.sin(s) * 0.1
    return s


SCALE = 1.5


def reads_global(x):
    return x * SCALE + np.sin(x)


def accumulates(x, y):
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.sin(x * y)) * i  # y's gradient starts as the symbolic zero
    return s


def changes_type(x):
    s = 0.0
    for i in range(3):
        s = s + np.sin(x) * i  # a float, then an array: one type per variable in Numba
    return s


def uses_einsum(a):
    return np.sum(np.einsum("ij,ij->i", a, a))


def _central(f, args, position, direction, eps):
    """The central difference of ``f`` along ``direction`` in input ``position``."""
    plus = list(args)
    minus = list(args)
    plus[position] = args[position] + eps * direction
    minus[position] = args[position] - eps * direction
    return (f(*plus) - f(*minus)) / (2 * eps)


def _check(f, *args, position=0):
    """The jit gradient against central differences of ``sum(f)`` along 3 random directions,
    and against the Python gradient to rounding."""
    g = mindgrad.grad(f, position, jit=True)(*args)
    python = mindgrad.grad(f, position)(*args)
    np.testing.assert_allclose(g, python, rtol=1e-12, atol=1e-14)
    rng = np.random.default_rng(7)
    x = np.asarray(args[position], np.float64)
    total = lambda *a: np.sum(f(*a))  # noqa: E731
    for _ in range(3):
        u = rng.standard_normal(x.shape)
        expected = _central(total, [np.asarray(a, np.float64) for a in args], position, u,
                            1e-6)
        np.testing.assert_allclose(np.sum(np.asarray(g) * u), expected, rtol=1e-6, atol=1e-8)
    return g


def test_scalar_loop_matches_the_closed_form_recurrence():
    g = _check(scalar_loop, np.float64(0.5))
    slope, h = 1.0, 0.5  # the derivative of h -> 0.99 h + 0.01 sin h, chained 200 times
    for _ in range(200):
        slope *= 0.99 + 0.01 * np.cos(h)
        h = h * 0.99 + np.sin(h) * 0.01
    assert g == pytest.approx(slope, rel=1e-12)
    assert type(g) is np.float64
    value, g2 = mindgrad.value_and_grad(scalar_loop, jit=True)(np.float64(0.5))
    assert value == pytest.approx(h, rel=1e-12) and type(value) is np.float64
    assert g2 == g


def test_indexing_loop_matches_its_closed_form():
    x = np.random.default_rng(0).standard_normal(104)
    g = _check(indexing, x)
    expected = np.zeros(104)
    for i in range(100):
        expected[i] += x[i + 1]
        expected[i + 1] += x[i]
        expected[i:i + 4] += x[i:i + 4]
    np.testing.assert_allclose(g, expected, rtol=1e-12)
    assert g.dtype == np.float64 and g.shape == (104,)


@pytest.mark.parametrize("f, make", [
    (while_loop, lambda r: np.float64(0.3)),
    (if_in_loop, lambda r: r.standard_normal(6)),
    (slice2d, lambda r: r.standard_normal((3, 4))),
    (array_loop, lambda r: r.standard_normal(5)),
])
def test_loop_shapes(f, make):
    _check(f, make(np.random.default_rng(3)))


def test_if_in_loop_takes_both_branches():
    x = np.array([0.5, -0.2, 1.5, -2.0, 0.1, -0.7])
    g = _check(if_in_loop, x)
    np.testing.assert_allclose(g, np.where(x > 0, 2 * x, -np.cos(x)), rtol=1e-12)


def test_second_input_and_value_and_grad():
    x, y = np.array([0.3, -1.2]), np.array([0.7, 0.4])
    gy = _check(two_inputs, x, y, position=1)
    gx = _check(two_inputs, x, y, position=0)
    s, slope = x * y, 1.0  # the chain rule through s -> s + 0.1 sin s, three times
    for _ in range(3):
        slope = slope * (1 + 0.1 * np.cos(s))
        s = s + np.sin(s) * 0.1
    np.testing.assert_allclose(gy, slope * x, rtol=1e-12)
    np.testing.assert_allclose(gx, slope * y, rtol=1e-12)
    value, (gx2, gy2) = mindgrad.value_and_grad(two_inputs, (0, 1), jit=True)(x, y)
    np.testing.assert_allclose(value, s, rtol=1e-12)
    np.testing.assert_allclose(gx2, gx, rtol=1e-12)
    np.testing.assert_allclose(gy2, gy, rtol=1e-12)


def test_zero_dimensional_and_float32_inputs():
    g = mindgrad.grad(scalar_loop, jit=True)(np.array(0.5))
    assert isinstance(g, np.ndarray) and g.shape == () and g.dtype == np.float64
    assert g == pytest.approx(mindgrad.grad(scalar_loop)(np.array(0.5)), rel=1e-12)
    x32 = np.random.default_rng(1).standard_normal(104).astype(np.float32)
    value, g32 = mindgrad.value_and_grad(indexing, jit=True)(x32)
    python_value, python = mindgrad.value_and_grad(indexing)(x32)
    assert g32.dtype == np.float32 and type(value) is type(python_value)
    np.testing.assert_allclose(g32, python, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(value, python_value, rtol=1e-5)
    h32 = mindgrad.grad(scalar_loop, jit=True)(np.float32(0.5))
    assert type(h32) is np.float32
    assert h32 == pytest.approx(mindgrad.grad(scalar_loop)(np.float64(0.5)), rel=1e-5)


def test_later_calls_give_the_first_calls_types_and_numbers():
    # the first call builds and checks; later calls take the lean path: same values, same types
    cases = [(scalar_loop, 0.5), (scalar_loop, np.float32(0.5)), (scalar_loop, np.array(0.5)),
             (indexing, np.random.default_rng(4).standard_normal(104).astype(np.float32)),
             (array_loop, np.random.default_rng(5).standard_normal(5))]
    for f, x in cases:
        vg = mindgrad.value_and_grad(f, jit=True)
        first = vg(x)
        python = mindgrad.value_and_grad(f)(x)
        for _ in range(3):
            value, g = vg(x)
            assert type(value) is type(first[0]) is type(python[0])
            assert type(g) is type(first[1]) is type(python[1])
            assert np.result_type(value) == np.result_type(python[0])
            np.testing.assert_array_equal(value, first[0])
            np.testing.assert_array_equal(g, first[1])
            tol = 1e-5 if np.result_type(g) == np.float32 else 1e-12
            np.testing.assert_allclose(g, python[1], rtol=tol, atol=tol)


def test_sens_param_scales_the_gradient():
    x = np.random.default_rng(2).standard_normal(5)
    g = mindgrad.grad(array_loop, sens_param=True, jit=True)(x, 2.5)
    np.testing.assert_allclose(g, 2.5 * mindgrad.grad(array_loop)(x), rtol=1e-12)
    v, a, b = np.array([1.0, -2.0]), np.array([0.3, 0.1]), np.array([0.7, 0.4])
    g2 = mindgrad.grad(two_inputs, sens_param=True, jit=True)(a, b, v)
    np.testing.assert_allclose(g2, v * mindgrad.grad(two_inputs)(a, b), rtol=1e-12)
    u = np.array([0.6, -0.8])
    expected = _central(lambda x: np.sum(v * two_inputs(x, b)), [a], 0, u, 1e-6)
    assert np.sum(g2 * u) == pytest.approx(expected, rel=1e-7)
    with pytest.raises(ValueError, match="sens has a shape"):
        mindgrad.grad(two_inputs, sens_param=True, jit=True)(
            np.array([0.3, 0.1]), np.array([0.7, 0.4]), np.ones(3))


def test_a_global_number_is_read_at_each_call():
    global SCALE
    g = mindgrad.grad(reads_global, jit=True)
    assert g(0.2) == pytest.approx(1.5 + np.cos(0.2), rel=1e-12)
    SCALE = 3.0
    try:
        assert g(0.2) == pytest.approx(3.0 + np.cos(0.2), rel=1e-12)
    finally:
        SCALE = 1.5


def test_source_shows_the_code_that_runs():
    text = str(mindgrad.source(mindgrad.grad(indexing, jit=True), np.zeros(104)))
    assert "compiled by Numba" in text
    assert "tape_x_i = []" in text and "tape.append" not in text
    assert "range(99, -1, -1)" in text and "reversed" not in text


def test_code_numba_does_not_take_is_refused_by_name():
    a = np.ones((3, 4))
    with pytest.raises(JitUnsupportedError, match=r"gradient of uses_einsum .*einsum.*drop "
                                                  r"jit=True"):
        mindgrad.grad(uses_einsum, jit=True)(a)
    with pytest.raises(JitUnsupportedError, match=r"changes_type is code Numba does not "
                                                  r"compile \(Cannot unify float64 and array"):
        mindgrad.grad(changes_type, jit=True)(np.ones(2))
    with pytest.raises(JitUnsupportedError, match=r"Cannot unify array\(float32, 1d, C\) and "
                                                  r"array\(float64"):
        mindgrad.grad(array_loop, jit=True)(np.ones(3, np.float32))  # 0.5 is a float64
    with pytest.raises(JitUnsupportedError, match="has_aux=True"):
        mindgrad.grad(lambda x: (np.sin(x), x), has_aux=True, jit=True)(0.5)
    with pytest.raises(NotImplementedError):  # JitUnsupportedError is one
        mindgrad.grad(uses_einsum, jit=True)(a)


def test_cache_compiles_once_per_signature():
    mindgrad.clear_cache()
    g = mindgrad.grad(indexing, jit=True)
    x = np.random.default_rng(4).standard_normal(104)
    g(x)
    builds = mindgrad.cache_stats()["builds"]
    generated = g._generated((x,))
    dispatcher_signatures = len(_dispatcher(generated).signatures)
    g(x * 2)
    g(np.ones(110))  # another shape, same kind: same compiled function
    assert mindgrad.cache_stats()["builds"] == builds
    assert len(_dispatcher(generated).signatures) == dispatcher_signatures
    g32 = g(x.astype(np.float32))  # a new dtype: a new build
    assert mindgrad.cache_stats()["builds"] == builds + 1
    assert g32.dtype == np.float32


def _dispatcher(generated):
    """The Numba dispatcher inside a jit gradient's function."""
    cells = [c.cell_contents for c in generated.function.__closure__]
    call = next(c for c in cells if callable(c) and c.__name__ == "call")
    return next(c.cell_contents for c in call.__closure__
                if type(c.cell_contents).__name__ == "CPUDispatcher")


@pytest.mark.parametrize("bad", [1, "yes", None])
def test_jit_must_be_a_bool(bad):
    with pytest.raises(TypeError, match="`jit` must be a bool"):
        mindgrad.grad(scalar_loop, jit=bad)
    with pytest.raises(TypeError, match="`jit` must be a bool"):
        mindgrad.value_and_grad(scalar_loop, jit=bad)


def test_import_mindgrad_does_not_import_numba():
    code = "import sys, mindgrad; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


# ----- matmul's gradients, and a gradient added to in a loop ------------------------------------


def mlp(w1, b1, w2, x):
    h = np.tanh(x @ w1 + b1)
    return np.mean((h @ w2) ** 2)


def rnn(w, u, xs):
    h = np.zeros(w.shape[0])
    for t in range(5):
        h = np.tanh(w @ h + u @ xs[t])
    return np.sum(h * h)


def linear_rnn(w, u, xs):
    h = np.zeros(w.shape[0], w.dtype)
    for t in range(5):
        h = w @ h + u @ xs[t]
    return np.sum(h * h)


def vecmat(v, m):
    return np.sum(np.sin(v @ m)) * (v @ v)


def dot(a, b):
    return np.sin(a @ b)


def batched(a, b):
    return np.sum(a @ b)


def _matmul_cases(rng, dtype):
    """(g, x, y) for matrix-matrix, matrix-vector, vector-matrix and vector-vector products."""
    n = lambda *s: rng.standard_normal(s).astype(dtype)  # noqa: E731
    return [(n(3, 5), n(3, 4), n(4, 5)), (n(3), n(3, 4), n(4)), (n(5), n(4), n(4, 5)),
            (dtype(n(1)[0]), n(4), n(4))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matmul_helpers_match_the_python_helpers(dtype):
    import numba

    from mindgrad.api import jit_runtime
    from mindgrad.rules.operators import matmul_grad_x, matmul_grad_y

    gx = numba.njit(lambda g, x, y: jit_runtime.matmul_grad_x(g, x, y))
    gy = numba.njit(lambda g, x, y: jit_runtime.matmul_grad_y(g, x, y))
    for g, x, y in _matmul_cases(np.random.default_rng(11), dtype):
        for ours, theirs, like in ((gx, matmul_grad_x, x), (gy, matmul_grad_y, y)):
            got, expected = ours(g, x, y), theirs(g, x, y)
            assert got.shape == like.shape and got.dtype == expected.dtype == dtype
            np.testing.assert_allclose(got, expected, rtol=1e-12 if dtype == np.float64
                                       else 1e-5, atol=1e-6)


def test_matmul_helpers_refuse_stacks_ints_complex_and_mixed_dtypes():
    import numba

    from mindgrad.api import jit_runtime

    gx = numba.njit(lambda g, x, y: jit_runtime.matmul_grad_x(g, x, y))
    gy = numba.njit(lambda g, x, y: jit_runtime.matmul_grad_y(g, x, y))
    cases = [(np.ones((2, 3, 5)), np.ones((2, 3, 4)), np.ones((2, 4, 5))),
             (np.ones((3, 5), np.int64), np.ones((3, 4), np.int64), np.ones((4, 5), np.int64)),
             (np.ones((3, 5), complex), np.ones((3, 4), complex), np.ones((4, 5), complex)),
             (np.ones((3, 5)), np.ones((3, 4), np.float32), np.ones((4, 5)))]
    for case in cases:
        for helper, name in ((gx, "matmul_grad_x"), (gy, "matmul_grad_y")):
            jit_runtime.REFUSED.clear()
            with pytest.raises(numba.core.errors.TypingError):
                helper(*case)
            assert jit_runtime.REFUSED and jit_runtime.REFUSED[0][0] == name


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matmul_gradient_sums_match_the_sum_of_the_python_helpers(dtype):
    import numba

    from mindgrad.api import jit_runtime
    from mindgrad.rules.operators import matmul_grad_x, matmul_grad_y

    sx = numba.njit(lambda terms, x: jit_runtime.matmul_grad_x_sum(terms, x))
    sy = numba.njit(lambda terms, y: jit_runtime.matmul_grad_y_sum(terms, y))
    r = np.random.default_rng(17)
    n = lambda *s: r.standard_normal(s).astype(dtype)  # noqa: E731
    tol = dict(rtol=1e-12 if dtype == np.float64 else 1e-5, atol=1e-5)
    for g_shape, x, y_shape in [((3,), n(3, 4), (4,)), ((3, 5), n(3, 4), (4, 5))]:
        terms = [(n(*g_shape), n(*y_shape)) for _ in range(4)]
        got = sx(numba.typed.List(terms), x)
        assert got.dtype == dtype and got.shape == x.shape
        np.testing.assert_allclose(got, sum(matmul_grad_x(g, x, y) for g, y in terms), **tol)
    for g_shape, x_shape, y in [((5,), (4,), n(4, 5)), ((3, 5), (3, 4), n(4, 5))]:
        terms = [(n(*g_shape), n(*x_shape)) for _ in range(3)]
        got = sy(numba.typed.List(terms), y)
        assert got.dtype == dtype and got.shape == y.shape
        np.testing.assert_allclose(got, sum(matmul_grad_y(g, x, y) for g, x in terms), **tol)
    np.testing.assert_array_equal(sx(numba.typed.List.empty_list(
        numba.types.UniTuple(numba.from_dtype(np.dtype(dtype))[::1], 2)), n(3, 4)), 0)
    with pytest.raises(ValueError, match="another shape"):
        sx(numba.typed.List([(n(2), n(4))]), n(3, 4))


def test_accumulate_checks_the_terms_shape_and_refuses_another_dtype():
    import numba

    from mindgrad.api import jit_runtime

    add = numba.njit(lambda a, v: jit_runtime.accumulate(a, v))
    start = numba.njit(lambda x: jit_runtime.zeros_grad(x))
    acc = start(np.ones((2, 3), np.float32))
    assert acc.dtype == np.float32 and acc.shape == (2, 3) and not acc.any()
    np.testing.assert_array_equal(add(acc, np.full((2, 3), 2, np.float32)), 2)
    with pytest.raises(ValueError, match="another shape"):
        add(acc, np.ones((3, 3), np.float32))
    jit_runtime.REFUSED.clear()
    with pytest.raises(numba.core.errors.TypingError):
        add(acc, np.ones((2, 3)))
    assert jit_runtime.REFUSED[0][0] == "accumulate"


@pytest.mark.parametrize("position", [0, 2])
def test_mlp_gradients(position):
    r = np.random.default_rng(12)
    args = (r.standard_normal((6, 8)) / 3, r.standard_normal(8), r.standard_normal((8, 3)),
            r.standard_normal((5, 6)))
    _check(mlp, *args, position=position)


@pytest.mark.parametrize("position", [0, 1])
def test_rnn_gradient_added_to_in_its_loop(position):
    r = np.random.default_rng(13)
    args = (r.standard_normal((7, 7)) * 0.3, r.standard_normal((7, 4)) * 0.3,
            r.standard_normal((5, 4)))
    _check(rnn, *args, position=position)
    text = mindgrad.source(mindgrad.grad(rnn, position, jit=True), *args)
    name = "d_w" if position == 0 else "d_u"
    assert f"{name} = zeros_grad({'wu'[position]})" in text
    assert f"{name} = accumulate({name}, matmul_grad_x" in text  # one step's or their sum


@pytest.mark.parametrize("position", [0, 1])
def test_vector_matrix_and_vector_vector_products(position):
    r = np.random.default_rng(14)
    _check(vecmat, r.standard_normal(4), r.standard_normal((4, 3)), position=position)
    g = _check(dot, r.standard_normal(4), r.standard_normal(4), position=position)
    assert g.shape == (4,)


def test_an_accumulated_gradient_of_a_number():
    x, y = np.array([0.3, -1.2]), 0.7
    g = _check(accumulates, x, y, position=1)
    assert g == pytest.approx(np.sum(np.cos(x * y) * x) * 3, rel=1e-12)


def test_float32_matmuls_and_loop():
    r = np.random.default_rng(15)
    args = tuple(a.astype(np.float32) for a in (
        r.standard_normal((7, 7)) * 0.3, r.standard_normal((7, 4)) * 0.3,
        r.standard_normal((5, 4))))
    for position in (0, 1):
        g = mindgrad.grad(linear_rnn, position, jit=True)(*args)
        python = mindgrad.grad(linear_rnn, position)(*args)
        assert g.dtype == python.dtype == np.float32 and g.shape == args[position].shape
        np.testing.assert_allclose(g, python, rtol=1e-4, atol=1e-5)
        exact = _check(linear_rnn, *(a.astype(np.float64) for a in args), position=position)
        np.testing.assert_allclose(g, exact, rtol=1e-3, atol=1e-4)
    m = (r.standard_normal((6, 8)) / 3, r.standard_normal(8), r.standard_normal((8, 3)),
         r.standard_normal((5, 6)))
    m32 = tuple(a.astype(np.float32) for a in m)
    # NumPy keeps float32 in 1.0 - h * h (tanh's derivative), Numba's float64 literal does
    # not: matmul_grad_y of float64 by float32 is refused, never computed in another dtype
    with pytest.raises(JitUnsupportedError, match=r"gradient of mlp calls a runtime helper "
                                                  r"for types .*matmul_grad_y\('array\(float64"):
        mindgrad.grad(mlp, jit=True)(*m32)
    with pytest.raises(JitUnsupportedError, match="gradient of rnn "):
        mindgrad.grad(rnn, jit=True)(*args)  # float32 @ float64 h


def test_large_arrays_are_compiled_without_the_reuse_stage():
    r = np.random.default_rng(16)
    args = (r.standard_normal((256, 256)) / 16, np.zeros(256), r.standard_normal((256, 3)),
            r.standard_normal((128, 256)))  # 65,536 and 32,768 elements: large arrays
    python = mindgrad.grad(mlp)
    assert "spare(" in mindgrad.source(python, *args)
    jitted = mindgrad.grad(mlp, jit=True)
    assert "spare(" not in mindgrad.source(jitted, *args)
    np.testing.assert_allclose(jitted(*args), python(*args), rtol=1e-10, atol=1e-14)
    assert "spare(" in mindgrad.source(python, *args)  # the Python gradient's code is kept


def test_batched_matmul_is_refused():
    a, b = np.ones((2, 3, 4)), np.ones((2, 4, 5))
    with pytest.raises(JitUnsupportedError, match=r"gradient of batched .*drop jit=True"):
        mindgrad.grad(batched, jit=True)(a, b)
