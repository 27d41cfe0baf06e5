"""``x.tolist()`` passes the gradient on (a nested list of floats), and a random permutation or
choice of an array is a gather of the entries drawn, found again from their values."""

import numpy as np
import pytest

import mindgrad as mg
from mindgrad.runtime import GradientError

X = np.array([[0.5, 1.5, -0.75], [2.0, -1.0, 0.25]])
V = np.array([0.5, 1.5, 2.0, -1.0])


def products_of_list_items(x):
    rows = x.tolist()
    return rows[0][1] * rows[1][0] + sum(rows[1]) * rows[0][2]


def sum_of_a_row_list(x):
    return sum(x[0].tolist()) * 2.0


def array_of_list(x):
    return np.sum(np.array(x.tolist()) ** 2)


def scalar_tolist(x):
    return x[0, 0].tolist() ** 3


@pytest.mark.parametrize("fn", [products_of_list_items, sum_of_a_row_list, array_of_list,
                                scalar_tolist], ids=lambda fn: fn.__name__)
def test_tolist_passes_the_gradient(fn):
    mg.check_grads(fn, (X,), modes=("rev", "fwd"), order=2)


def test_tolist_gradient_keeps_float32():
    x = X.astype(np.float32)
    g = mg.grad(products_of_list_items)(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, mg.grad(products_of_list_items)(X), rtol=1e-6)


def weighted_permutation(x):
    np.random.seed(0)
    drawn = np.random.permutation(x)
    weights = np.arange(1.0, 1.0 + len(x)).reshape((len(x),) + (1,) * (np.ndim(x) - 1))
    return np.sum(np.sin(drawn) * weights)


def weighted_choice(x):
    np.random.seed(1)
    return np.sum(np.sin(np.random.choice(x, 6)) * np.arange(6.0))


def weighted_choice_grid(x):
    np.random.seed(2)
    return np.sum(np.sin(np.random.choice(x, (2, 3), p=[0.1, 0.2, 0.3, 0.4])) *
                  np.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize("fn, x", [(weighted_permutation, V), (weighted_permutation, X.T),
                                   (weighted_choice, V), (weighted_choice_grid, V)],
                         ids=["permutation", "permutation-2d", "choice", "choice-grid"])
def test_random_draws_are_gathers(fn, x):
    mg.check_grads(fn, (x,), modes=("rev", "fwd"), order=2)


def test_random_permutation_gradient_follows_the_draw():
    np.random.seed(0)
    order = np.random.permutation(len(V))
    expected = np.zeros(4)
    expected[order] = np.cos(V[order]) * np.arange(1.0, 5.0)
    np.testing.assert_allclose(mg.grad(weighted_permutation)(V), expected)


def test_a_draw_from_equal_entries_is_an_error():
    def draw_from_repeats(x):
        np.random.seed(0)
        return np.sum(np.random.permutation(np.concatenate([x, x])) * np.arange(8.0))

    with pytest.raises(GradientError, match="equal entries"):
        mg.grad(draw_from_repeats)(V)
