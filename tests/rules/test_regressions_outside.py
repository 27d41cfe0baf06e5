"""Cases found by programs written outside the project (other libraries' tests, another random
program generator): each gave a silent wrong number or a crash inside mindgrad. Every check is
against central differences along random directions, and against autograd where it is
installed and has the function."""

import warnings

import numpy as np
import pytest

import mindgrad as mg
from tests.support.orders import central, check_grad_and_jvp

RNG = np.random.default_rng(2020)




def check_both_modes(f, x, rtol=1e-5, atol=1e-7):
    check_grad_and_jvp(f, x, RNG, rtol, atol)


def second_order(f, x, rtol=1e-4, atol=1e-6, forward_over_forward=True):
    """Hessian-vector products of the scalar ``f``: forward over forward, forward over reverse
    and reverse over reverse, against central differences of the first derivative."""
    v, w = RNG.standard_normal(np.shape(x)), RNG.standard_normal(np.shape(x))

    def along_v(y):
        return mg.jvp(f, (y,), (v,))[1]

    truth = central(along_v, x, w, eps=1e-5)
    if forward_over_forward:
        np.testing.assert_allclose(mg.jvp(along_v, (x,), (w,))[1], truth, rtol=rtol,
                                   atol=atol)

    def grad_along_v(y):
        return np.sum(mg.grad(f)(y) * v)

    np.testing.assert_allclose(mg.jvp(grad_along_v, (x,), (w,))[1], truth, rtol=rtol,
                               atol=atol)
    np.testing.assert_allclose(np.sum(mg.grad(grad_along_v)(x) * w), truth, rtol=rtol,
                               atol=atol)


# ----- x ** 0 at x = 0 ---------------------------------------------------------------------


def power_zero(x):
    return np.power(x, 0.0)


def pow_operator_int(x):
    return x ** 0


def pow_operator_float(x):
    return x ** 0.0


def float_power_zero(x):
    return np.float_power(x, 0.0)


@pytest.mark.parametrize("fn", [power_zero, pow_operator_int, pow_operator_float,
                                float_power_zero])
@pytest.mark.parametrize("x", [0.0, np.float64(0.0), np.zeros(3), np.zeros(2, np.float32)],
                         ids=["float", "float64", "array", "float32"])
def test_zeroth_power_at_zero_has_zero_derivative(fn, x):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0 * inf on the way
        if np.ndim(x) == 0:
            g = mg.grad(fn)(x)
            t = mg.jvp(fn, (x,), (1.0,))[1]
            h = mg.grad(mg.grad(fn))(x)
        else:
            first = mg.grad(lambda y: np.sum(fn(y)))
            g = first(x)
            t = mg.jvp(fn, (x,), (np.ones_like(x),))[1]
            h = mg.grad(lambda y: np.sum(first(y)))(x)
    for value in (g, t, h):
        np.testing.assert_array_equal(value, np.zeros(np.shape(x)))
    if np.ndim(x):
        assert g.dtype == x.dtype


def test_exponent_gradient_at_zero_base():
    # d/dy 0 ** y at y = 0 and y = 2: 0, as autograd gives (0 ** y is 1 at 0, 0 above)
    for y in (0.0, 2.0):
        g = mg.grad(lambda e: np.power(0.0, e), 0)(y)
        assert g == 0.0 and np.isfinite(g)
        assert mg.jvp(lambda e: 0.0 ** e, (y,), (1.0,))[1] == 0.0


def test_powers_at_zero_agree_with_autograd():
    ag = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    x = np.array([0.0, 0.5, 2.0])
    for y in (0.0, 1.0, 2.0, 3.0):
        mine = mg.grad(lambda z, y=y: np.sum(np.power(z, y)))(x)
        theirs = ag.grad(lambda z, y=y: anp.sum(anp.power(z, y)))(x)
        np.testing.assert_allclose(mine, theirs)


# ----- masks select, never multiply (0 * nan is nan) ---------------------------------------


MASK = np.array([True, False, False, True])
X4 = np.array([0.3, -1.2, 2.0, 0.7])


def nan_branch(x):
    return np.nansum(np.where(MASK, np.nan, x))


def nan_branch_sine(x):
    return np.nansum(np.sin(np.where(MASK, np.nan, x)))


def nan_branch_squared(x):
    return np.nansum(np.where(MASK, np.nan, x) ** 2)


def inf_branch(x):
    return np.sum(np.where(MASK, 1.0, np.exp(np.where(MASK, np.inf, x))))


def clipped_nan(x):
    return np.nansum(np.sin(np.clip(np.where(MASK, np.nan, x), -1.0, 1.5)))


def maximum_nan(x):
    return np.nansum(np.cos(np.maximum(np.where(MASK, np.nan, x), 0.0)))


def nan_to_num_inf(x):
    return np.sum(np.sqrt(np.nan_to_num(np.where(MASK, np.nan, x * x), nan=0.0)))


def selected_nan(x):
    return np.nansum(np.sin(np.select([MASK], [np.nan], x)))


def chosen_nan(x):
    return np.nansum(np.sin(np.choose(MASK.astype(int), [x, np.full(4, np.nan)])))


def masked_mean(x):
    return np.sum(np.sin(np.mean(np.where(MASK, np.nan, x), where=~MASK)))


@pytest.mark.parametrize("fn", [nan_branch, nan_branch_sine, nan_branch_squared, inf_branch,
                                clipped_nan, maximum_nan, nan_to_num_inf,
                                selected_nan, chosen_nan, masked_mean])
def test_a_branch_not_taken_gives_no_nan(fn):
    x = X4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the primal itself computes nan and inf
        g = mg.grad(fn)(x)
        t = [mg.jvp(fn, (x,), (e,))[1] for e in np.eye(4)]
        truth = []
        for e in np.eye(4):
            truth.append(central(fn, x, e))
    truth = np.array(truth)
    np.testing.assert_allclose(g, truth, rtol=1e-5, atol=1e-7)
    if fn is not nan_to_num_inf:  # forward mode: a zero tangent times sqrt's slope at 0, inf
        np.testing.assert_allclose(t, truth, rtol=1e-5, atol=1e-7)


def test_where_of_nan_agrees_with_autograd():
    ag = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    theirs = ag.grad(lambda x: anp.sum(anp.where(MASK, 0.0, anp.where(MASK, 1.0, x)) ** 2))(X4)
    mine = mg.grad(lambda x: np.sum(np.where(MASK, 0.0, np.where(MASK, 1.0, x)) ** 2))(X4)
    np.testing.assert_allclose(mine, theirs)
    mine = mg.grad(nan_branch_squared)(X4)
    np.testing.assert_allclose(mine, np.where(MASK, 0.0, 2 * X4))


# ----- variance and standard deviation of complex arrays ------------------------------------


Z = RNG.standard_normal((2, 3)) + 1j * RNG.standard_normal((2, 3))


def complex_reductions():
    where = np.array([[True, False, True], [True, True, True]])
    return {
        "var": lambda z: np.var(z),
        "var-axis-ddof": lambda z: np.sum(np.var(z, axis=0, ddof=1) * np.array([1.0, 2.0, 3.0])),
        "std": lambda z: np.std(z),
        "std-axis-keepdims": lambda z: np.sum(np.sin(np.std(z, axis=1, keepdims=True))),
        "var-where": lambda z: np.var(z, where=where),
        "var-method": lambda z: z.var(),
        "std-method": lambda z: z.std(axis=0)[1],
        "nanvar": lambda z: np.nanvar(z),
        "nanstd": lambda z: np.nanstd(z, axis=0)[2],
        "mean-abs": lambda z: np.mean(np.abs(z)),
        "abs-mean": lambda z: np.abs(np.mean(z)),
    }


@pytest.mark.parametrize("name", list(complex_reductions()))
def test_complex_variances_in_both_modes(name):
    f = complex_reductions()[name]
    for _ in range(2):
        v = RNG.standard_normal(Z.shape) + 1j * RNG.standard_normal(Z.shape)
        truth = central(f, Z, v)
        np.testing.assert_allclose(mg.jvp(f, (Z,), (v,))[1], truth, rtol=1e-5, atol=1e-8)
        # the README's convention: a real loss's gradient c gives dL = Re(sum(c dz))
        np.testing.assert_allclose(np.real(np.sum(mg.grad(f)(Z) * v)), truth, rtol=1e-5,
                                   atol=1e-8)


@pytest.mark.parametrize("name", ["var", "var-axis-ddof", "std", "std-axis-keepdims"])
def test_complex_variances_to_second_order(name):
    f = complex_reductions()[name]
    v = RNG.standard_normal(Z.shape) + 1j * RNG.standard_normal(Z.shape)
    w = RNG.standard_normal(Z.shape) + 1j * RNG.standard_normal(Z.shape)

    def along_v(z):
        return mg.jvp(f, (z,), (v,))[1]

    def grad_along_v(z):
        return np.real(np.sum(mg.grad(f)(z) * v))

    truth = central(along_v, Z, w, eps=1e-5)
    if name.startswith("var"):  # jvp over jvp of np.std: a separate item of the same issue
        np.testing.assert_allclose(mg.jvp(along_v, (Z,), (w,))[1], truth, rtol=1e-4,
                                   atol=1e-7)
    np.testing.assert_allclose(mg.jvp(grad_along_v, (Z,), (w,))[1], truth, rtol=1e-4,
                               atol=1e-7)
    np.testing.assert_allclose(np.real(np.sum(mg.grad(grad_along_v)(Z) * w)), truth,
                               rtol=1e-4, atol=1e-7)


def test_complex_variance_agrees_with_autograd():
    ag = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    theirs = ag.grad(lambda z: anp.var(z))(Z)  # the same convention as the README's
    np.testing.assert_allclose(mg.grad(np.var)(Z), theirs)
    theirs = ag.grad(lambda z: anp.std(z, axis=0)[1])(Z)
    np.testing.assert_allclose(mg.grad(lambda z: np.std(z, axis=0)[1])(Z), theirs)


# ----- norms at second order: every ord and axis ---------------------------------------------


def norm_cases():
    """Every ord of a vector norm (along an axis of a 1-d and a 3-d array) and of a matrix
    norm (over two axes of a 2-d and a 3-d array, given or implied), keepdims both ways."""
    vector_ords = [None, 2, 1, 3, 0.5, -1, np.inf, -np.inf, 0]
    matrix_ords = [None, "fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf]
    cases = [((5,), o, None, False) for o in vector_ords]
    cases += [((2, 3, 4), o, -1, o in (None, 3)) for o in vector_ords]
    cases += [((3, 4), o, None, o == "nuc") for o in matrix_ords]
    cases += [((2, 3, 4), o, (0, 1), o in (None, 2)) for o in matrix_ords]
    cases += [((2, 3, 4), o, (-1, -3), False) for o in (None, "fro", "nuc", 1)]
    cases += [((2, 3, 4), None, None, False), ((2, 3, 4), None, None, True)]
    return cases


@pytest.mark.parametrize("shape, ord, axis, keepdims", norm_cases())
def test_norms_to_second_order(shape, ord, axis, keepdims):
    def f(x):
        n = np.linalg.norm(x, ord, axis, keepdims)
        return np.sum(0.5 * n ** 2 + np.sin(n))

    x = RNG.standard_normal(shape)
    second_order(f, x + 0.5 * np.sign(x), atol=1e-5)  # no entry near 0, where p < 1 blows up


def test_frobenius_norm_over_two_axes_forward_over_forward():
    x = np.arange(1.0, 13.0).reshape(2, 3, 2) / 7.0
    v = np.linspace(-1.0, 1.0, 12).reshape(2, 3, 2)

    def norm(z):
        return np.linalg.norm(z, axis=(0, 1))

    def first(y):
        return mg.jvp(norm, (y,), (v,))[1]

    truth = central(first, x, v, eps=1e-5)
    assert np.all(np.abs(truth) > 0.1)
    np.testing.assert_allclose(mg.jvp(first, (x,), (v,))[1], truth, rtol=1e-5)


def test_norm_after_ravel_in_a_closure_to_second_order():
    scale = 0.3

    def f(x):
        v8 = np.reshape(np.ravel(x * scale), (4, 3))
        inner = lambda y: np.linalg.norm(y, axis=(0, 1)) ** 3  # noqa: E731
        return inner(v8) + np.sum(np.sin(v8))

    second_order(f, RNG.standard_normal((2, 6)))


# ----- np.r_ and np.c_ -------------------------------------------------------------------------


def r_pair(x):
    return np.r_[x, x]


def r_mixed(x):
    return np.r_[x[0], 0:3, 2.0 * x, -1.5, np.sin(x)]


def r_linspace(x):
    return np.r_[np.cos(x), 0:1:4j] * np.r_[x, x]


def r_rows(x):
    return np.r_["0,2", x, x * x]


def r_directive(x):
    return np.r_["1,2,0", x, np.tanh(x)]


def r_axis(x):
    return np.r_["-1", x, x ** 2]


def r_scalars(x):
    return np.r_[np.sum(x), 2.0, np.prod(x)]


def c_columns(x):
    return np.c_[x, np.exp(x), x[::-1]]


def c_matrices(x):
    return np.c_[x, 2.0 * x]


def c_scalars(x):
    return np.c_[np.sum(x), x[0]]


INDEX_JOINS = [(r_pair, (2, 3)), (r_pair, (4,)), (r_mixed, (3,)), (r_linspace, (4,)),
               (r_rows, (3,)), (r_directive, (3,)), (r_axis, (2, 3)), (r_scalars, (3,)),
               (c_columns, (4,)), (c_matrices, (2, 3)), (c_scalars, (2,)), (r_pair, ())]


@pytest.mark.parametrize("fn, shape", INDEX_JOINS,
                         ids=[f"{fn.__name__}-{shape}" for fn, shape in INDEX_JOINS])
def test_index_joins_in_both_modes_and_to_second_order(fn, shape):
    x = RNG.standard_normal(shape)
    weights = RNG.standard_normal(np.shape(fn(x)))

    def loss(y):
        return np.sum(np.sin(fn(y)) * weights)

    check_both_modes(loss, x)
    second_order(loss, x)


def test_index_joins_match_numpy_and_keep_float32():
    x = RNG.standard_normal(3)
    assert mg.jvp(r_mixed, (x,), (x,))[0].shape == r_mixed(x).shape
    np.testing.assert_array_equal(mg.jvp(c_columns, (x,), (x,))[0], c_columns(x))
    g = mg.grad(lambda y: np.sum(np.r_[y, y] * np.arange(6.0)))(x)
    np.testing.assert_array_equal(g, np.arange(3.0) + np.arange(3.0, 6.0))
    x32 = x.astype(np.float32)
    g32 = mg.grad(lambda y: np.sum(np.c_[y, y]))(x32)
    assert g32.dtype == np.float32
    np.testing.assert_array_equal(g32, np.full(3, 2.0, np.float32))
    assert mg.jvp(c_matrices, (x32,), (x32,))[1].dtype == np.float32


def test_index_joins_agree_with_autograd():
    ag = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    x = RNG.standard_normal(4)
    theirs = ag.grad(lambda y: anp.sum(anp.concatenate([y, anp.sin(y)]) ** 2))(x)
    np.testing.assert_allclose(mg.grad(lambda y: np.sum(np.r_[y, np.sin(y)] ** 2))(x), theirs)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
def test_a_matrix_directive_is_a_clear_error():
    x = RNG.standard_normal(3)
    with pytest.raises(NotImplementedError, match="directive 'r'"):
        mg.grad(lambda y: np.sum(np.r_["r", y, y]))(x)


# ----- arrays built from lists mixing 0-d arrays and numbers ------------------------------------


def array_of_a_sum(b):
    return np.array([np.sum(b * b)]) * b


def array_of_mixed(b):
    return np.array([np.sum(b * b), 2.0, b[1], np.float64(1.5) * b[0]])


def asarray_of_mixed(b):
    return np.asarray([np.sum(b) ** 2, b[0], 3.0]) * b[:3]


def stack_of_mixed(b):
    return np.stack([np.sum(b * b), 2.0, b[1]]) ** 2


def nested_lists(b):
    return np.array([[np.sum(b * b), 1.0], [b[2], np.prod(b)]])


def array_of_keepdims(b):
    return np.array([np.sum(b * b, keepdims=True)]) * b


ARRAY_BUILDERS = [array_of_a_sum, array_of_mixed, asarray_of_mixed, stack_of_mixed,
                  nested_lists, array_of_keepdims]


@pytest.mark.parametrize("fn", ARRAY_BUILDERS, ids=[f.__name__ for f in ARRAY_BUILDERS])
def test_arrays_of_lists_mixing_0d_and_numbers(fn):
    b = np.array([0.5, -1.0, 2.0])
    weights = RNG.standard_normal(np.shape(fn(b)))

    def loss(x):
        return np.sum(np.sin(fn(x)) * weights)

    check_both_modes(loss, b)
    # jvp over jvp of np.array of a list is refused (a separate item of the same issue)
    second_order(loss, b, forward_over_forward=fn is stack_of_mixed)
