"""Lists and dicts mutated after being read, at first and second order.

A list's gradient is zero or has one entry per item, in the items' order, so appends and pops
after a read route each item's gradient to its own place. Oracles: central finite differences in
float64 (``check_grads``, and a hand-written difference of the gradient), NumPy in float64 for
float32 inputs.
"""

import numpy as np
import pytest

import mindgrad as mg


def append_after_read(x):
    out = []
    out.append(x * 2.0)
    s = np.stack(out)
    out.append(x * np.sum(s * s))
    return np.sum(np.stack(out) ** 2)


def append_after_read_returned(x):
    out = []
    out.append(x * 2.0)
    s = np.stack(out)
    out.append(x * np.sum(s * s))
    return np.stack(out)


def reads_between_appends_in_a_loop(x):
    out = [x]
    for _ in range(3):
        s = np.sum(np.stack(out) ** 2)
        out.append(np.sin(x) * s)
    return np.sum(np.stack(out) ** 2)


def pop_after_read(x):
    out = [x * 1.0, x * 2.0]
    s = np.sum(np.stack(out))
    v = out.pop()
    return s * np.sum(v * v)


def pop_of_a_list_never_read_whole(x):
    out = [x * 1.0, x * 2.0]
    v = out.pop()
    return np.sum(v * v * x)


def pop_then_append_again(x):
    out = [x * 1.0]
    out.append(x * 2.0)
    s = np.sum(out[0] * out[1])
    v = out.pop()
    out.append(v * s)
    return np.sum(np.stack(out) ** 3)


def pop_and_append_in_a_loop(x):
    out = []
    for i in range(3):
        out.append(x * (i + 1.0))
        if i == 1:
            v = out.pop()
            out.append(v * np.sum(np.stack(out[:1]) ** 2))
    return np.sum(np.stack(out) ** 2)


def pops_after_reads_in_a_loop(x):
    out = []
    s = 0.0
    for i in range(3):
        out.append(x * (i + 1.0))
        s = s + np.sum(np.stack(out))
    v = out.pop()
    w = out.pop()
    return np.sum(v * w) * s


def pop_until_empty(x):
    xs = [x * 1.0, x * 2.0, x * 3.0]
    acc = 0.0
    while xs:
        v = xs.pop()
        acc = acc + np.sum(v * v) * len(xs)
    return acc * np.sum(x)


def items_assigned_after_read(x):
    out = [x]
    out[0] = out[0] * 2.0
    s = np.sum(out[0] ** 2)
    out.append(x * s)
    out[0] = out[1] * out[0]
    return np.sum(out[0] * out[1])


def concatenated_then_appended(x):
    out = [x * 1.0]
    t = out + [x * 2.0]
    out.append(np.sum(np.stack(t)) * x)
    return np.sum(np.stack(out) ** 2) + np.sum(np.stack(t) ** 3)


def dict_written_after_read(x):
    d = {}
    d["a"] = x * 2.0
    s = np.sum(d["a"] ** 2)
    d["b"] = x * s
    d["a"] = d["a"] * s
    return np.sum(d["a"] * d["b"])


PROGRAMS = [append_after_read, append_after_read_returned, reads_between_appends_in_a_loop,
            pop_after_read, pop_of_a_list_never_read_whole, pop_then_append_again,
            pop_and_append_in_a_loop, pops_after_reads_in_a_loop, pop_until_empty,
            items_assigned_after_read, concatenated_then_appended, dict_written_after_read]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [np.array([0.3, -0.7, 1.1]), np.array(0.4)], ids=["1d", "0d"])
def test_lists_mutated_after_read_against_finite_differences(fn, x):
    mg.check_grads(fn, (x,), order=2, modes=("rev", "fwd"))


def items_of_different_shapes(x):
    out = [np.sum(x)]
    out.append(x[:2] * out[0])
    a = out[1]
    out.append(np.outer(x, a))
    v = out.pop()
    out.append(v * a[0])
    return out[0] ** 2 + np.sum(out[1] ** 2) * np.sum(out[2])


def test_list_of_arrays_of_different_shapes_at_second_order():
    mg.check_grads(items_of_different_shapes, (np.array([0.3, -0.7, 1.1]),), order=2,
                   modes=("rev", "fwd"))


@pytest.mark.parametrize("fn", [append_after_read, pop_after_read, pop_then_append_again],
                         ids=lambda f: f.__name__)
def test_hessian_vector_product_is_the_difference_of_gradients(fn):
    rng = np.random.default_rng(3)
    x, u, v = rng.normal(size=(3, 4))
    g = mg.grad(fn)
    hvp = mg.grad(lambda t: np.sum(g(t) * u))(x) @ v
    eps = 1e-5
    difference = (g(x + eps * v) @ u - g(x - eps * v) @ u) / (2 * eps)
    np.testing.assert_allclose(hvp, difference, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", [append_after_read, pop_after_read, pop_of_a_list_never_read_whole],
                         ids=lambda f: f.__name__)
def test_float32_gradients_of_lists_mutated_after_read(fn):
    x = np.array([0.3, -0.7, 1.1], np.float32)
    g32 = mg.grad(fn)(x)
    g64 = mg.grad(fn)(x.astype(np.float64))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, g64, rtol=1e-5)
    mg.check_grads(fn, (x,), order=2, modes=("rev", "fwd"))


def test_a_popped_gradient_goes_to_the_popped_item():
    # the gradient of a pop from a list whose gradient is still zero lands on the last item
    g = mg.grad(pop_of_a_list_never_read_whole)(np.array([0.5, -1.0]))
    np.testing.assert_allclose(g, 3 * 4.0 * np.array([0.5, -1.0]) ** 2)


# ----- a called function changing its list argument in place --------------------------------


def appends_to(xs, v):
    xs.append(v)
    return xs


def pops_from(xs):
    return xs.pop()


def grows_then_pops_through_callees(x):
    xs = []
    for i in range(3):
        xs = appends_to(xs, x[i] ** 2)
    s = 0.0
    for i in range(3):
        s = s + pops_from(xs) * (i + 1)
    return s


def pops_through_a_callee(x):
    xs = [x[0], x[1]]
    a = pops_from(xs)
    xs.append(x[2] * 3.0)
    return a * pops_from(xs) + pops_from(xs)


def appends_to_a_copy(xs, v):
    xs = list(xs)
    xs.append(v)
    return xs


def pops_from_a_copy(xs):
    xs = xs.copy()
    v = xs.pop()
    return v, xs


def appends_to_its_own_list(v):
    ys = [v]
    ys.append(v * 2.0)
    return ys


def changes_copies_in_callees(x):
    xs = []
    for i in range(3):
        xs = appends_to_a_copy(xs, x[i] ** 2)
    s = 0.0
    for i in range(3):
        v, xs = pops_from_a_copy(xs)
        s = s + v * (i + 1)
    ys = appends_to_its_own_list(x[0])
    return s + ys[0] * ys[1]


@pytest.mark.parametrize("fn, method", [(grows_then_pops_through_callees, "append"),
                                        (pops_through_a_callee, "pop")],
                         ids=["append", "pop"])
def test_a_callee_changing_its_list_argument_is_refused_in_reverse_mode(fn, method):
    """The backward sweep cannot follow the caller's list across the call: the gradient of
    grows_then_pops_through_callees was [0, 0, 26.4] for [4.2, -5.2, 4.4] at
    x = [0.7, -1.3, 2.2], and pops_through_a_callee raised an internal error."""
    x = np.array([0.7, -1.3, 2.2])
    with pytest.raises(mg.errors.UnsupportedSyntaxError,
                       match=rf"xs\.{method}\(\) changes 'xs', an argument of a called function"):
        mg.grad(fn)(x)


@pytest.mark.parametrize("fn", [grows_then_pops_through_callees, pops_through_a_callee],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_callee_changing_its_list_argument_in_forward_mode(fn, dtype):
    """Forward mode follows the change: the tangent list changes in step."""
    rng = np.random.default_rng(4)
    x, v = rng.standard_normal(3).astype(dtype), rng.standard_normal(3).astype(dtype)
    _, tangent = mg.jvp(fn, (x,), (v,))
    x64, v64 = x.astype(np.float64), v.astype(np.float64)
    want = (fn(x64 + 1e-6 * v64) - fn(x64 - 1e-6 * v64)) / 2e-6
    np.testing.assert_allclose(tangent, want, rtol=1e-4 if dtype == np.float32 else 1e-7)


def test_callees_changing_copies_of_their_list_arguments():
    mg.check_grads(changes_copies_in_callees, (np.array([0.7, -1.3, 2.2]),), order=2,
                   modes=("rev", "fwd"))


# ----- a slice of a list assigned -----------------------------------------------------------------


def slice_replaced(x):
    items = [x, x * 2.0, x * 3.0]
    items[0:2] = [np.sin(x), x * x]
    return np.sum(items[0] * items[1] + items[2])


def slice_replaced_by_a_tuple_and_an_array(x):
    items = [x, x * 2.0, x * 3.0, np.cos(x)]
    items[1:3] = (np.tanh(x), x * x)
    items[::2] = np.stack([x * x, np.sin(x)])
    return np.sum(items[0] * items[1] + items[2] * items[3])


def slice_inserted(x):
    items = [x, x * 2.0]
    items[1:1] = [np.sin(x)]
    return np.sum(items[0] * items[1] + items[2])


@pytest.mark.parametrize("fn", [slice_replaced, slice_replaced_by_a_tuple_and_an_array])
@pytest.mark.parametrize("x", [np.array([0.3, -1.2, 2.4]), np.array(0.7)],
                         ids=["vector", "0-d"])
def test_a_slice_of_a_list_assigned(fn, x):
    # the items' gradients go to the values assigned (a TypeError before: a list's gradient
    # cannot take the number 0 into a slice)
    mg.check_grads(fn, (x,), modes=("rev", "fwd"), order=2)


def test_a_slice_assignment_that_changes_a_list_length_is_refused_in_reverse_mode():
    x = np.array([0.3, -1.2, 2.4])
    with pytest.raises(NotImplementedError, match="changes its length"):
        mg.grad(slice_inserted)(x)
    # forward mode follows the items as they move
    _, t = mg.jvp(slice_inserted, (x,), (np.ones(3),))
    np.testing.assert_allclose(t, np.sum(np.sin(x) + x * np.cos(x) + 2.0), rtol=1e-12)
