"""Programs written the way users outside the project write them: builtins over arrays
(``max(v)``, ``sum(m)``, ``sorted(v, key=...)``, ``enumerate``, ``zip``), dicts iterated by
``.values()``/``.items()`` with the loop variable read after the loop; in every mode: grad,
jvp, jvp over grad, grad over grad, jvp over jvp. A complex output, whose gradient is refused;
tangents and Jacobians in the containers the function returns.

Oracles: central differences in float64 (first order), the mixed second difference
``(f(x+hu+hv) - f(x+hu-hv) - f(x-hu+hv) + f(x-hu-hv)) / 4h^2`` (second order).
"""

import collections
import operator

import numpy as np
import pytest

import mindgrad as mg
from tests.support.orders import H1, check_all_modes, fd_grad

X3 = np.array([0.3, 1.2, -0.7])
X6 = np.array([0.3, 1.2, -0.7, 0.5, -1.1, 0.9])


# ----- builtins over arrays: iteration over the first axis -----------------------------------


def max_of_one_item(b):
    v7 = np.var(b, keepdims=True)
    return np.sin(max(v7 ** 3))


def max_of_array(v):
    return max(v ** 2) * 2.0


def min_of_array(v):
    return min(v ** 2) + 1.0


def max_by_key(v):
    return max(v, key=abs) ** 2


def min_with_default(v):
    return min(v * 3.0, default=0.0) ** 2


def max_of_empty_takes_default(v):
    return max([], default=v[0] * 2.0) * v[1]


def max_of_list(v):
    return max([v[0] * 2, v[1] ** 2, np.sin(v[2])])


def sum_of_array(v):
    return sum(v ** 2)


def sum_with_start(v):
    return sum(v ** 2, start=1.5) ** 2


def negated(a):
    return -a


def first(row):
    return row[0]


def sorted_array(v):
    s = sorted(v * 2.0)
    return s[0] * s[-1] ** 2


def sorted_by_key(v):
    s = sorted(v, key=negated)
    return s[0] * s[1] ** 2


def any_all_of_array(v):
    if any(v > 0.5) and all(v > -3):
        return np.sum(v ** 3)
    return np.sum(v)


def enumerate_array(v):
    s = 0.0
    for i, a in enumerate(v, start=1):
        s = s + i * a ** 2
    return s * a


def zip_arrays(v):
    w = np.cos(v)
    s = 0.0
    for a, b in zip(v, w):
        s = s + a * b
    return s * a


@pytest.mark.parametrize("f", [max_of_one_item, max_of_array, min_of_array, max_by_key,
                               min_with_default, max_of_empty_takes_default, max_of_list,
                               sum_of_array, sum_with_start, sorted_array, sorted_by_key,
                               any_all_of_array, enumerate_array, zip_arrays],
                         ids=lambda f: f.__name__)
def test_builtins_over_a_vector(f):
    check_all_modes(f, X3)


def test_max_of_a_one_element_array_is_its_element():
    check_all_modes(max_of_array, np.array([0.7]))
    check_all_modes(sum_of_array, np.array([0.7]))


def sum_of_rows(v):
    m = np.reshape(v, (2, 3))
    return np.sum(sum(m * m) ** 2)


def sum_of_rows_with_start(v):
    m = np.reshape(v, (3, 2))
    return np.sum(np.sin(sum(m, np.ones(2))))


def sorted_rows(v):
    m = np.reshape(v, (3, 2))
    s = sorted(m, key=first, reverse=True)
    return np.sum(s[0] * s[1] ** 2)


def max_row_by_key(v):
    m = np.reshape(v, (3, 2))
    return np.sum(max(m, key=first) ** 2)


def enumerate_rows(v):
    m = np.reshape(v, (2, 3))
    s = 0.0
    for i, r in enumerate(m):
        s = s + (i + 1) * np.sum(r ** 2)
    return s * np.sum(r)


def zip_rows(v):
    m = np.reshape(v, (2, 3))
    s = 0.0
    for r, c in zip(m, [1.0, 2.0]):
        s = s + c * np.sum(np.sin(r))
    return s * np.sum(r)


@pytest.mark.parametrize("f", [sum_of_rows, sum_of_rows_with_start, sorted_rows, max_row_by_key,
                               enumerate_rows, zip_rows], ids=lambda f: f.__name__)
def test_builtins_over_the_rows_of_a_matrix(f):
    check_all_modes(f, X6)


def _sorted_by_lambda(v):
    return sorted(v, key=lambda a: -a)[0] * 2.0 + sorted(v, key=lambda a: a * a)[1]


def test_a_lambda_as_key_is_a_function_value():
    """The key is a function when the code runs: the items sorted by it, the gradient going
    to the items picked (the largest, and the second smallest in square)."""
    v = np.array([0.3, 1.7, -1.1])
    np.testing.assert_allclose(mg.grad(_sorted_by_lambda)(v), [0.0, 2.0, 1.0])
    mg.check_grads(_sorted_by_lambda, (v,), modes=("rev", "fwd"), order=2)


# ----- dicts iterated, the loop variable read after the loop -------------------------------


def last_of_values(x):
    d = {"u": x * 2.0, "p": np.sin(x), "w": x ** 2}
    for t in d.values():
        pass
    return np.sum(t * x)


def last_of_items(x):
    d = {"u": x * 2.0, "p": np.sin(x), "w": x ** 2}
    s = 0.0
    for key, t in d.items():
        s = s + np.sum(t * x)
    return s * np.sum(t)


def last_of_keys(x):
    d = {"u": x * 2.0, "p": np.cos(x)}
    for key in d:
        t = d[key]
    return np.sum(t ** 2) * np.sum(d[key])


def last_of_sorted_keys(x):
    d = {"b": x * 2.0, "a": np.sin(x), "c": x ** 2}
    s = 0.0
    for k in sorted(d):
        s = s + np.sum(d[k] * x)
    return s * np.sum(d[k])


def last_of_sorted_items(x):
    d = {"b": x * 2.0, "a": np.sin(x), "c": x ** 2}
    s = 0.0
    for k, t in sorted(d.items(), key=operator.itemgetter(0)):
        s = s * np.sum(t) + np.sum(t)
    return s * np.sum(t)


def last_of_nested(x):
    d = {"a": [x, x * 2.0], "b": [np.sin(x)]}
    for _, ts in d.items():
        for t in ts:
            pass
    return np.sum(t * ts[0])


def last_of_list_values(x):
    d = {"u": [x, 2.0 * x], "p": [np.sin(x), x]}
    for v in d.values():
        pass
    return np.sum(v[0] * v[1])


def last_of_zip(x):
    for a, b in zip([x, x * 2.0], [np.sin(x), np.cos(x)]):
        pass
    return np.sum(a * b)


def last_of_list_of_dicts(x):
    for e in [{"w": x}, {"w": x ** 2}]:
        pass
    return np.sum(e["w"] * x)


def last_row(x):
    m = np.reshape(x, (2, 1)) ** 2
    for r in m:
        pass
    return np.sum(r * x)


@pytest.mark.parametrize("f", [last_of_values, last_of_items, last_of_keys, last_of_sorted_keys,
                               last_of_sorted_items, last_of_nested, last_of_list_values,
                               last_of_zip, last_of_list_of_dicts, last_row],
                         ids=lambda f: f.__name__)
def test_loop_variable_used_after_the_loop(f):
    check_all_modes(f, np.array([0.3, 0.8]))


# ----- a complex output: a gradient is of a real output ------------------------------------


def complex_scaled(x):
    return x * (1 + 0.2j)


def complex_sum(x):
    return np.sum(np.exp(1j * x) * x)


@pytest.mark.parametrize("ask", [
    lambda: mg.grad(complex_scaled)(1.0),
    lambda: mg.value_and_grad(complex_scaled)(1.0),
    lambda: mg.grad(complex_sum)(X3),
    lambda: mg.jacrev(complex_scaled)(X3),
    lambda: mg.hessian(complex_sum)(X3),
    lambda: mg.grad(mg.grad(lambda x: np.real(x) * complex_scaled(x)))(1.0),
    lambda: mg.ops.GradOperation()(complex_scaled)(1.0),
], ids=["grad", "value_and_grad", "grad-array", "jacrev", "hessian", "grad-of-grad",
        "GradOperation"])
def test_a_gradient_of_a_complex_output_is_refused(ask):
    with pytest.raises(TypeError, match=r"complex output.*np\.real\(out\).*np\.abs\(out\) \*\* 2"):
        ask()


def test_what_the_user_means_by_a_complex_output_is_differentiable():
    # closed forms: d/dx Re(x (1 + 0.2j)) = 1, d/dx |x (1 + 0.2j)|^2 = 2 x 1.04
    assert mg.grad(lambda x: np.real(complex_scaled(x)))(1.0) == pytest.approx(1.0)
    assert mg.grad(lambda x: np.imag(complex_scaled(x)))(1.0) == pytest.approx(0.2)
    assert mg.grad(lambda x: np.abs(complex_scaled(x)) ** 2)(1.5) == pytest.approx(3 * 1.04)
    # the complex derivative itself: forward mode, and vjp given a cotangent
    assert mg.jvp(complex_scaled, (1.0,), (1.0,))[1] == pytest.approx(1 + 0.2j)
    np.testing.assert_allclose(mg.jacfwd(complex_scaled)(X3), np.eye(3) * (1 + 0.2j))
    _, pullback = mg.vjp(complex_scaled, 1.0)
    assert pullback(1j)[0] == pytest.approx(np.real(1j * (1 + 0.2j)))
    g = mg.ops.GradOperation(sens_param=True)(complex_scaled)(1.0, 1.0 + 0j)
    assert g == pytest.approx(1.0)


# ----- tangents and Jacobians in the containers the function returns ------------------------


def returns_a_dict(x):
    return {"a": x * 2.0, "c": np.ones(2), "n": 3.0}


def returns_a_built_list(x):
    return list(x * 2.0)


def returns_a_list(x):
    out = []
    for k in range(2):
        out.append(np.sin(x) * k)
    return out + [1.5]


def returns_a_tuple(x):
    return x * 2.0, np.ones(2)


def _assert_same_tree(got, want):
    """``got`` has ``want``'s containers, exactly, with float arrays or floats at the leaves."""
    if not isinstance(want, (dict, list, tuple)):
        assert isinstance(got, (float, np.floating, np.ndarray)), type(got)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
        return
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            _assert_same_tree(got[k], want[k])
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same_tree(g, w)


def _leafwise(fn, *trees):
    first = trees[0]
    if isinstance(first, dict):
        return {k: _leafwise(fn, *(t[k] for t in trees)) for k in first}
    if isinstance(first, (list, tuple)):
        return type(first)(_leafwise(fn, *parts) for parts in zip(*trees))
    return fn(*trees)


@pytest.mark.parametrize("f", [returns_a_dict, returns_a_built_list, returns_a_list,
                               returns_a_tuple], ids=lambda f: f.__name__)
def test_forward_and_reverse_results_have_the_functions_containers(f):
    x, v = np.array([0.3, 1.2]), np.array([0.5, -2.0])
    # the oracle: central differences leaf by leaf, in f's own containers
    want = _leafwise(lambda a, b: (np.asarray(a, float) - b) / (2 * H1),
                     f(x + H1 * v), f(x - H1 * v))
    out, tangent = mg.jvp(f, (x,), (v,))
    _assert_same_tree(tangent, want)
    for jac in (mg.jacfwd(f)(x), mg.jacrev(f)(x)):
        _assert_same_tree(_leafwise(lambda j: np.asarray(j) @ v, jac), want)
    # a cotangent in the output's containers gives the gradient of its dot with the output
    cot = _leafwise(lambda o: np.ones(np.shape(o)) * 0.5, out)
    (g,) = mg.vjp(f, x)[1](cot)
    fd = fd_grad(lambda y: sum(np.sum(np.asarray(leaf) * 0.5) for leaf in _leaves(f(y))), x)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def _leaves(tree):
    if isinstance(tree, dict):
        tree = list(tree.values())
    if isinstance(tree, (list, tuple)):
        return [leaf for part in tree for leaf in _leaves(part)]
    return [tree]


def test_a_part_without_a_tangent_is_a_float_zero_not_the_int_0():
    _, tangent = mg.jvp(returns_a_dict, (np.array([0.3, 1.2]),), (np.ones(2),))
    assert isinstance(tangent["n"], float) and tangent["n"] == 0.0
    assert tangent["c"].dtype == np.float64 and not tangent["c"].any()


Pair = collections.namedtuple("Pair", "a b")


def scaled_pair(p):
    return Pair(p[0] * 2.0, p[1])


def test_a_namedtuple_in_and_out_keeps_its_type():
    p, t = Pair(np.array([0.3, 1.2]), 0.5), Pair(np.array([1.0, -1.0]), 2.0)
    _, tangent = mg.jvp(lambda q: q, (p,), (t,))
    assert type(tangent) is Pair
    np.testing.assert_allclose(tangent.a, t.a)
    assert tangent.b == 2.0
    (g,) = mg.vjp(lambda q: q, p)[1](t)
    assert type(g) is Pair
    np.testing.assert_allclose(g.a, t.a)
    assert g.b == 2.0
