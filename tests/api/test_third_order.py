"""Third order: jvp over jvp over grad, against central differences of the second derivative.

The second derivative (jvp of grad, checked against differences of the gradient) is the oracle's
function; its own derivative along a random direction is compared with central differences in
float64.
"""

import numpy as np
import pytest

import mindgrad as mg

EPS = 1e-5


def _parts(value):
    return value if isinstance(value, tuple) else (value,)


def _difference(fn, xs, d):
    ahead = _parts(fn(*(x + EPS * di for x, di in zip(xs, d))))
    behind = _parts(fn(*(x - EPS * di for x, di in zip(xs, d))))
    return [(a - b) / (2 * EPS) for a, b in zip(ahead, behind)]


def check_third(f, *xs, positions=0, seed=0, tol=1e-6):
    """The third derivative of ``f`` along two random directions by jvp(jvp(grad(f))), against
    central differences of the second derivative; each part of its input's shape, never the
    int 0."""
    rng = np.random.default_rng(seed)
    v = tuple(rng.standard_normal(np.shape(x)) for x in xs)
    w = tuple(rng.standard_normal(np.shape(x)) for x in xs)
    g = mg.grad(f, positions)

    v0, v1 = v + v[:1] * (2 - len(v))
    if len(xs) == 1:
        def second(x):
            _, slope = mg.jvp(g, (x,), (v0,))
            return slope
    else:
        def second(x, y):
            _, slope = mg.jvp(g, (x, y), (v0, v1))
            return slope

    # the second derivative itself against differences of the gradient
    for got, want in zip(_parts(second(*xs)), _difference(g, xs, v), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    value, third = mg.jvp(second, xs, w)
    for got, want in zip(_parts(value), _parts(second(*xs)), strict=True):
        assert not isinstance(got, int) and np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    for got, want in zip(_parts(third), _difference(second, xs, w), strict=True):
        assert not isinstance(got, int) and np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


X = np.array([0.3, -0.7, 1.1, 0.4])


# ----- a second derivative that is zero for an input --------------------------------------------


def ignores_x(x, y):
    return np.sum(np.tanh(y * y))


def last_of_y(x, y):
    c = y[-1]
    c += np.mean(x)
    lst = [c, c * 0.5]
    s = c * 0.5
    for item in lst:
        s = s + item
    return np.sum(np.tanh(np.sin(x)))


@pytest.mark.parametrize("f, shapes", [(ignores_x, ((3,), (3,))), (last_of_y, ((2,), (1,)))],
                         ids=["ignores_x", "last_of_y"])
def test_third_order_where_an_input_has_a_zero_second_derivative(f, shapes):
    # the jvp inside gave the symbolic zero 0 for x's part, which the outer jvp returned as the
    # value (0 for an array of zeros) and as a tangent of shape ()
    rng = np.random.default_rng(3)
    xs = tuple(rng.standard_normal(s) for s in shapes)
    check_third(f, *xs, positions=(0, 1))


# ----- products whose gradient helpers sum tuples of gradients ---------------------------------
# The tangent code of an einsum's gradient adds TangentTuples element by element; differentiated
# again, that sum was read as a concatenation (wrong numbers) or refused as joining a list with
# the zero 0.

A4 = np.array([[1.0, 0.2, -0.3, 0.1], [0.3, 1.5, 0.2, -0.4], [0.1, -0.2, 2.0, 0.3],
               [0.2, 0.1, -0.1, 1.2]])
C4 = np.array([1.0, 2.0, -1.0, 0.5])


def matrix(x):
    return A4 + 0.3 * np.outer(x, C4)


def einsum_outer_cubed(x):
    v3 = np.einsum('i,j->ij', x, x)
    return np.sum(v3 * v3 * v3)


def einsum_outer_scaled(x):
    return np.sum(np.einsum('i,j->ij', x, 2 * x) ** 2)


def einsum_diagonal_product(x):
    return np.sum(np.einsum('i,i->i', x, x) ** 3)


def einsum_matrix_product(x):
    return np.sum(np.einsum('ij,jk->ik', matrix(x), matrix(x)) ** 2)


def einsum_three_operands(x):
    return np.sum(np.einsum('i,j,k->ijk', x, x, x) ** 2)


def einsum_ellipsis(x):
    return np.sum(np.einsum('...i,...i->...', matrix(x), matrix(x)) ** 2)


def einsum_implicit_output(x):
    return np.sum(np.einsum('ij,j', matrix(x), x) ** 2)


def einsum_sublists(x):
    return np.sum(np.einsum(matrix(x), [0, 1], matrix(x), [1, 2], [0, 2]) ** 2)


def einsum_to_scalar(x):
    return np.einsum('i,i->', x, x * x) ** 2


def slogdet_squared(x):
    return np.linalg.slogdet(matrix(x))[1] ** 2


def multi_dot_squared(x):
    return np.sum(np.linalg.multi_dot([matrix(x), matrix(x), x]) ** 2)


def array_of_sums(x):
    return np.sum(np.array([np.sum(x * x), np.sum(x ** 3)]) ** 2)


def array_of_vectors(x):
    return np.sum(np.array([x * x, x]) ** 2)


FIXED = [einsum_outer_cubed, einsum_outer_scaled, einsum_diagonal_product, einsum_matrix_product,
         einsum_three_operands, einsum_ellipsis, einsum_implicit_output, einsum_sublists,
         einsum_to_scalar, slogdet_squared, multi_dot_squared, array_of_sums, array_of_vectors]


@pytest.mark.parametrize("f", FIXED, ids=lambda f: f.__name__)
def test_third_order_of_products_against_differences(f):
    check_third(f, X, tol=1e-5)


def test_third_order_of_einsum_at_a_0d_input_and_float32():
    check_third(lambda s: np.einsum(',->', s, s * s) ** 2, np.float64(0.7))
    x32 = X.astype(np.float32)
    rng = np.random.default_rng(4)
    v, w = rng.standard_normal(4), rng.standard_normal(4)
    g = mg.grad(einsum_outer_cubed)

    def second(x):
        _, slope = mg.jvp(g, (x,), (v,))
        return slope

    _, third = mg.jvp(second, (x32,), (w.astype(np.float32),))
    want = _difference(second, (X,), (w,))[0]
    assert third.shape == (4,)
    np.testing.assert_allclose(third, want, rtol=2e-3, atol=2e-3)


# ----- a sweep of multilinear and product rules (right before, kept right) -------------------

SWEEP = {
    "matmul": lambda x: np.sum((matrix(x) @ matrix(x)) ** 2),
    "dot": lambda x: np.dot(x, x) ** 2 + np.sum(np.dot(matrix(x), x) ** 3),
    "tensordot": lambda x: np.sum(np.tensordot(matrix(x), matrix(x), axes=1) ** 2),
    "outer": lambda x: np.sum(np.outer(x, x * x) ** 2),
    "kron": lambda x: np.sum(np.kron(x, x) ** 3),
    "inner": lambda x: np.inner(x, x * x) ** 2,
    "solve": lambda x: np.sum(np.linalg.solve(matrix(x), x) ** 2),
    "inv": lambda x: np.sum(np.linalg.inv(matrix(x)) ** 2),
    "det": lambda x: np.linalg.det(matrix(x)) ** 2,
    "cumprod": lambda x: np.sum(np.cumprod(x) ** 2),
    "prod": lambda x: np.prod(x) ** 2 + np.sum(np.prod(matrix(x), axis=0) ** 2),
    "concatenate": lambda x: np.sum(np.concatenate([x, x * x]) ** 3),
    "eigh": lambda x: np.sum(np.linalg.eigh(matrix(x) + matrix(x).T)[0] ** 3),
}


@pytest.mark.parametrize("name", sorted(SWEEP))
def test_third_order_sweep_of_product_rules(name):
    check_third(SWEEP[name], X, tol=1e-5)


# ----- sequences concatenated: the tangent of concat_tangents has one term per tangent, added
# item by item (``+`` of two tuples concatenates them: the third order read a zero) -----------

def tuple_repeating_an_item(x):
    s = np.sin(x)
    t = (s,) + (s, x)
    return np.sum(np.tanh(t[1] * t[-1]))


def list_of_three(x):
    s = np.sin(x)
    t = [s * 2.0] + [s, x * x]
    return np.sum(t[0] * t[1] * t[2])


def tuple_broadcast(x, y):
    t = (x,) + (np.sin(y), x * y)
    return np.sum(t[0] * t[1] * t[2])


@pytest.mark.parametrize("f, shapes", [
    (tuple_repeating_an_item, ((4,),)), (tuple_repeating_an_item, ((),)),
    (tuple_repeating_an_item, ((2, 3),)), (list_of_three, ((4,),)), (list_of_three, ((),)),
    (tuple_broadcast, ((2, 1), (3,)))], ids=lambda c: getattr(c, "__name__", str(c)))
def test_third_order_of_sequences_concatenated(f, shapes):
    rng = np.random.default_rng(7)
    check_third(f, *(rng.standard_normal(s) for s in shapes), tol=1e-5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_forward_over_forward_of_a_sequence_concatenated_closed_form(shape, dtype):
    """d/dw d/dv sum(((cos(x),) + (sin(x),))[1]) = sum(-sin(x) v w), an item after the join."""
    def f(x):
        t = (np.cos(x),) + (np.sin(x),)
        return np.sum(t[1])

    rng = np.random.default_rng(3)
    x, v, w = (rng.standard_normal(shape).astype(dtype) for _ in range(3))

    def first(x):
        return mg.jvp(f, (x,), (v,))[1]

    _, second = mg.jvp(first, (x,), (w,))
    want = np.sum(-np.sin(x.astype(np.float64)) * v * w)
    np.testing.assert_allclose(second, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


def square_then_sum_and_sine(x):
    y = x * x
    return y * y + np.sin(y)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_forward_over_forward_over_forward_closed_form(shape, dtype):
    """jvp of jvp of jvp: the tangent function of a tangent function calls the tangents of
    ``add_tangent`` twice; one was given the name of a local its own code already held, and
    the third derivative failed with UnboundLocalError. For h = x**4 + sin(x**2) along the
    directions u, v, w: h''' u v w = (24 x - 12 x sin(x**2) - 8 x**3 cos(x**2)) u v w."""
    rng = np.random.default_rng(11)
    x, u, v, w = (rng.standard_normal(shape).astype(dtype) for _ in range(4))

    def first(x):
        return mg.jvp(square_then_sum_and_sine, (x,), (u,))[1]

    def second(x):
        return mg.jvp(first, (x,), (v,))[1]

    _, third = mg.jvp(second, (x,), (w,))
    x64 = x.astype(np.float64)
    want = (24 * x64 - 12 * x64 * np.sin(x64 ** 2) - 8 * x64 ** 3 * np.cos(x64 ** 2)) * u * v * w
    assert np.shape(third) == shape
    np.testing.assert_allclose(third, want, rtol=1e-4 if dtype == np.float32 else 1e-10,
                               atol=1e-4 if dtype == np.float32 else 1e-10)
