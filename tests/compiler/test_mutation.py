"""Arrays are mutable: index assignment, in-place operators and views must differentiate as
NumPy runs them, or be refused at the user's line. Oracles: central finite differences
(``check_grads``) and the plain function itself."""

import numpy as np
import pytest

import mindgrad as mg
from tests.support.inputs import Draw

r = Draw(7).normal


# ----- repeated advanced indices in a write: NumPy keeps one write per element -----------------


def write_repeated(b, t):
    b = b * 1.0
    b[np.array([0, 0])] = t
    return np.sum(b * b * t[0])


def scale_repeated(b):
    b = b * 1.0
    b[np.array([2, 2])] *= 1.11
    return np.sum(b * b)


def write_repeated_rows(a, t):
    a = a * 1.0
    a[[1, 0, 1]] = t
    return np.sum(np.sin(a) * a)


def write_repeated_scalar(b, s):
    b = b * 1.0
    b[np.array([1, 1, 2])] = s * s
    return np.sum(b * b)


@pytest.mark.parametrize("fn, args", [
    (write_repeated, (r(3), r(2))),
    (scale_repeated, (r(4),)),
    (write_repeated_rows, (r(2, 3), r(3, 3))),
    (write_repeated_rows, (r(2, 3), r(3))),          # broadcast over the written rows
    (write_repeated_scalar, (r(4), 0.7)),
    (write_repeated_scalar, (r(4), np.float64(-1.3))),
])
def test_repeated_index_write_counts_once(fn, args):
    mg.check_grads(fn, args, modes=("rev", "fwd"), order=2)


def test_repeated_index_write_float32():
    b, t = np.float32(r(3)), np.float32(r(2))
    g_b, g_t = mg.grad(write_repeated, (0, 1))(b, t)
    assert g_b.dtype == g_t.dtype == np.float32
    ref = mg.grad(write_repeated, (0, 1))(b.astype(np.float64), t.astype(np.float64))
    np.testing.assert_allclose(g_t, ref[1], rtol=1e-5)
    np.testing.assert_allclose(g_b, ref[0], rtol=1e-5)
    # only the last write of t survives: t[0]'s gradient comes from the factor t[0] alone
    b64, t64 = b.astype(np.float64), t.astype(np.float64)
    kept = b64 * 1.0
    kept[0] = t64[1]
    np.testing.assert_allclose(ref[1][0], np.sum(kept * kept), rtol=1e-12)


# ----- the caller receives what f returns and keeps what f leaves --------------------------------


def scale_first(b):
    c = b * 1.0
    c[0] = c[0] * 3.0
    return c


def _copy_and_write(p):
    c = p.copy()
    c[0] = c[0] * 3.0
    return c


def scale_first_in_helper(b):
    return _copy_and_write(b * 1.0)


def rebinds_result(x):
    y = x * 2.0
    z = np.sin(y)
    y = z * y
    return y


def writes_argument(x):
    x[0] = x[1] * 2.0
    return np.sum(np.sin(x) * x)


def writes_returned_list(x):
    out = [x * 1.0, x * 2.0]
    out[0] = out[1] * out[0]
    return out


def appends_and_returns_list(x):
    out = []
    for i in range(3):
        out.append(x * float(i + 1))
    s = np.stack(out)
    out.append(x * np.sum(s * s))
    return out


@pytest.mark.parametrize("fn", [scale_first, scale_first_in_helper, rebinds_result,
                                writes_argument, writes_returned_list,
                                appends_and_returns_list])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_value_and_outputs_are_what_f_returns(fn, dtype):
    b = np.array([0.1, -0.25, 1.6], dtype=dtype)
    x = b.copy()
    expected = fn(x)
    for run in (lambda a: mg.value_and_grad(fn)(a)[0], lambda a: mg.jvp(fn, (a,), (a,))[0],
                lambda a: mg.vjp(fn, a)[0]):
        a = b.copy()
        value = run(a)
        np.testing.assert_array_equal(np.asarray(value), np.asarray(expected))
        np.testing.assert_array_equal(a, x)  # the argument as f leaves it
    vjp_out, vjp_fn = mg.vjp(fn, b.copy())
    vjp_fn(np.ones_like(np.asarray(vjp_out)) if not isinstance(vjp_out, list)
           else [np.ones_like(v) for v in vjp_out])
    np.testing.assert_array_equal(np.asarray(vjp_out), np.asarray(expected))


def stacked_appends(x):
    return np.stack(appends_and_returns_list(x))


@pytest.mark.parametrize("fn", [scale_first, scale_first_in_helper, rebinds_result])
def test_gradients_of_functions_writing_what_they_return(fn):
    mg.check_grads(fn, (r(3),), modes=("rev", "fwd"), order=2)


def test_gradients_of_a_function_appending_to_what_it_returns():
    mg.check_grads(stacked_appends, (r(3),), modes=("rev", "fwd"))
    mg.check_grads(stacked_appends, (r(3),), modes=("fwd",), order=2)


def test_gradient_of_a_function_writing_its_argument():
    # each evaluation gets a fresh copy: f overwrites x[0], so x[0] has no influence
    x = r(3)
    g = mg.grad(writes_argument)(x.copy())
    mg.check_grads(writes_argument, (x,), modes=("rev", "fwd"))
    assert g[0] == 0.0


def _fragile(x):
    return x * 1.0


class _Stop(Exception):
    pass


_ERROR = [None]  # what the rule of _fragile raises in the backward sweep


def _raise(g):
    raise _ERROR[0]


def interrupted(x):
    x[0] = x[1] * 2.0
    y = _fragile(x)
    x[1] = 5.0
    return np.sum(y * x)


@pytest.mark.parametrize("error", [_Stop, KeyboardInterrupt])
def test_error_in_the_backward_sweep_leaves_the_arguments_as_f_leaves_them(error):
    from mindgrad import rules
    from mindgrad.rules import d

    @mg.adjoint(_fragile)
    def _(out, x):
        d[x] = _raise(d[out])

    _ERROR[0] = error
    try:
        x = np.array([0.5, 1.5, -2.0])
        expected = x.copy()
        interrupted(expected)
        with pytest.raises(error):
            mg.grad(interrupted)(x)
        np.testing.assert_array_equal(x, expected)
    finally:
        del rules._RULES[rules._key(_fragile)]


# ----- vjp holds what it differentiates at ------------------------------------------------------


def tanh_product(x, w):
    return np.tanh(x * w) * x


def writes_argument_scaled(x, w):
    x[0] = x[1] * 2.0
    return np.sin(x) * x * w


@pytest.mark.parametrize("fn", [tanh_product, writes_argument_scaled])
def test_vjp_is_fixed_when_called(fn):
    x, w, v = r(3), r(3), r(3)
    expected_out = fn(x.copy(), w.copy())
    expected = mg.vjp(fn, x.copy(), w.copy())[1](v)
    a, b = x.copy(), w.copy()
    out, vjp_fn = mg.vjp(fn, a, b)
    after_f = x.copy()
    fn(after_f, w.copy())
    np.testing.assert_array_equal(a, after_f)   # the caller's arrays as f leaves them
    a += 10.0
    b *= -3.0
    out_seen = np.array(out)
    out[...] = 7.0                               # the caller's copy of the output
    for _ in range(2):                           # the kept tape, then a fresh forward sweep
        for got, want in zip(vjp_fn(v), expected):
            np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_array_equal(out_seen, expected_out)
    # and against central differences at the point vjp was called
    eps = 1e-6
    for i, p in enumerate((x, w)):
        d = r(3)
        args = [x, w]
        plus = [q + eps * d if j == i else q for j, q in enumerate(args)]
        minus = [q - eps * d if j == i else q for j, q in enumerate(args)]
        numeric = (np.vdot(v, fn(*[q.copy() for q in plus])) -
                   np.vdot(v, fn(*[q.copy() for q in minus]))) / (2 * eps)
        np.testing.assert_allclose(np.vdot(expected[i], d), numeric, rtol=1e-6)


# ----- writes through shared memory: right, or refused at the user's line -----------------------


def inplace_through_other_name(x):
    y = x * 1.0
    z = y
    y += 1.0
    return np.sum(z * y)


def inplace_through_slice_view(x):
    y = x * 1.0
    v = y[0:2]
    v *= 3
    return np.sum(y * y)


def inplace_through_transpose(m):
    y = m * 2.0
    t = y.T
    t -= 1.0
    return np.sum(y * m)


def inplace_through_reshape(x):
    y = x * 2.0
    r2 = y.reshape(2, -1)
    r2 += 1.0
    return np.sum(y * x)


def inplace_through_asarray(x):
    y = np.sin(x)
    a = np.asarray(y)
    a *= 2.0
    return np.sum(y)


def inplace_on_argument(x):
    x += 1.0
    return np.sum(x * x)


def inplace_on_row(m):
    for row in m:
        row *= 2.0
    return np.sum(m)


def base_written_view_read(x):
    y = x * 1.0
    v = y[0:2]
    y[0] = 10.0
    return np.sum(v * x[0:2])


def container_element_written(x):
    y = x * 1.0
    pair = [y, x]
    y[0] = 3.0
    return np.sum(pair[0] * x)


def _double_first(a):
    a[0] = a[0] * 2.0
    return a[0]


def helper_writes_argument(x):
    y = x * 1.0
    s = np.sum(y * y)
    t = _double_first(y)
    return s + t + np.sum(y)


REFUSED = [
    (helper_writes_argument, "a[0] = a[0] * 2.0", (3,)),
    (inplace_through_other_name, "y += 1.0", (4,)),
    (inplace_through_slice_view, "v *= 3", (4,)),
    (inplace_through_transpose, "t -= 1.0", (2, 3)),
    (inplace_through_reshape, "r2 += 1.0", (4,)),
    (inplace_through_asarray, "a *= 2.0", (4,)),
    (inplace_on_argument, "x += 1.0", (4,)),
    (inplace_on_row, "row *= 2.0", (2, 3)),
    (base_written_view_read, "y[0] = 10.0", (4,)),
    (container_element_written, "y[0] = 3.0", (4,)),
]


@pytest.mark.parametrize("fn, line, shape", REFUSED)
def test_write_through_shared_memory_is_refused_at_the_line(fn, line, shape):
    x = r(*shape)
    for run in (lambda: mg.grad(fn)(x.copy()), lambda: mg.jvp(fn, (x.copy(),), (x,)),
                lambda: mg.value_and_grad(fn)(x.copy())):
        with pytest.raises(mg.UnsupportedSyntaxError) as info:
            run()
        assert line in info.value.text and info.value.filename == __file__
    mg.grad(fn)  # nothing is left broken: the next call raises the same error
    with pytest.raises(mg.UnsupportedSyntaxError):
        mg.grad(fn)(x.copy())


def fresh_in_place(x):
    y = x * 2.0
    y += x
    y *= x
    y /= 1.5
    y **= 2
    return np.sum(y)


def alias_dead_after_in_place(x):
    y = x * 1.0
    z = y
    s = np.sum(z * x)
    y += 1.0
    return s + np.sum(y * y)


def scalar_in_place(x, a):
    c = a
    c += 1.0
    c *= a
    return np.sum(x * c)


def view_read_before_base_written(x):
    y = x * 1.0
    v = y[0:2]
    s = np.sum(v * v)
    y[0] = 10.0
    return s + np.sum(y * x)


def row_view_read_before_write(m):
    y = m * 1.0
    top = y[0]
    s = np.sum(np.sin(top) * m[1])
    y[0] = m[1] * 3.0
    return s + np.sum(y * y)


@pytest.mark.parametrize("fn, args", [
    (fresh_in_place, (r(4),)),
    (fresh_in_place, (r(),)),
    (alias_dead_after_in_place, (r(3),)),
    (view_read_before_base_written, (r(4),)),
    (row_view_read_before_write, (r(2, 3),)),
])
def test_writes_numpy_runs_the_same_way_are_right(fn, args):
    mg.check_grads(fn, args, modes=("rev", "fwd"), order=2)
    value = mg.value_and_grad(fn)(*[np.copy(a) for a in args])[0]
    np.testing.assert_allclose(value, fn(*[np.copy(a) for a in args]), rtol=1e-12)


def test_fresh_in_place_stays_plain_code():
    source = mg.grad(fresh_in_place).source(r(4))
    assert "copy" not in source and "saved_item" not in source


def test_float32_in_place_and_view_reads():
    x = np.float32(r(4))
    for fn in (fresh_in_place, view_read_before_base_written):
        g = mg.grad(fn)(x.copy())
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, mg.grad(fn)(x.astype(np.float64)), rtol=2e-4)


def test_in_place_on_a_python_number_rebinds():
    # c = a; c += 1.0 leaves a alone when a is a float: d/da sum(x (a + 1) a) = sum(x) (2a + 1)
    x, a = r(3), 0.7
    g_x, g_a = mg.grad(scalar_in_place, (0, 1))(x, a)
    np.testing.assert_allclose(g_x, np.full(3, (a + 1.0) * a), rtol=1e-12)
    np.testing.assert_allclose(g_a, np.sum(x) * (2 * a + 1.0), rtol=1e-12)
    _, t = mg.jvp(scalar_in_place, (x, a), (np.zeros(3), 1.0))
    np.testing.assert_allclose(t, np.sum(x) * (2 * a + 1.0), rtol=1e-12)
    # a 0-d array is mutable: there c += 1.0 would write into the caller's array
    with pytest.raises(mg.UnsupportedSyntaxError):
        mg.grad(scalar_in_place, (0, 1))(x, np.array(a))


# ----- rebinding a slot of a container made by a display ---------------------------------------
# ``d['p'] = v`` rebinds a slot of the dict ``d`` only: another display holding the same arrays
# (``[x, ...]`` beside ``{'u': x, ...}``) does not change, and is not refused. A container that
# may be ``d`` itself (``d2 = d``) or holds it (``[d]``) does change: refused as before.


def dict_slot_beside_a_list_of_the_same_arrays(x):
    lst = [x, np.tanh(x)]
    lst.append(x * 0.5)
    d = {'u': x, 'w': np.sin(x)}
    d['p'] = d['u'] * 2.0
    return np.sum(d['p'] * lst[1] * lst[2]) + np.sum(d['w'])


def list_slot_beside_a_tuple_of_the_same_arrays(x):
    t = (x, x * x)
    lst = [x, np.cos(x)]
    if np.sum(x) > 0.0:
        lst[1] = lst[0] * 3.0
    return np.sum(lst[1] * t[1]) + np.sum(t[0])


def nested_displays_beside_each_other(x):
    pair = [[x, 1.0], {'k': x}]
    d = {'a': (x, 2.0)}
    d['b'] = np.exp(x)
    return np.sum(d['b'] * pair[0][0]) + np.sum(pair[1]['k'] * d['a'][0])


@pytest.mark.parametrize("fn", [dict_slot_beside_a_list_of_the_same_arrays,
                                list_slot_beside_a_tuple_of_the_same_arrays,
                                nested_displays_beside_each_other], ids=lambda f: f.__name__)
def test_a_slot_rebound_in_a_display_leaves_other_displays_alone(fn):
    for x in (r(3), r(2, 3), np.array(0.7)):
        mg.check_grads(fn, (x,), modes=("rev", "fwd"), order=2)


def dict_slot_beside_a_list_grown_by_concatenation(x):
    lst = [x, np.tanh(x)]
    for i in range(2):
        lst = lst + [x * (i + 0.5)]  # a new list each time: it is never d
    d = {'u': x, 'w': np.sin(x)}
    d['p'] = d['u'] * 2.0
    return np.sum(d['p'] * lst[1] * lst[-1]) + np.sum(d['w'])


def list_slot_beside_a_list_made_by_concatenation(x):
    lst = [x, np.tanh(x)]
    grown = lst + [x * 2.0]
    same = grown
    if np.sum(x) > 100.0:
        grown = [x]
    lst[0] = np.cos(x)  # lst is neither grown nor same, whatever they hold
    return np.sum(lst[0] * grown[0] * same[-1] + lst[1])


def test_a_slot_rebound_in_a_dict_leaves_a_list_made_by_concatenation_alone():
    """Found by the random-program tester (seed 24020, program 75; 24021, program 125): a list
    made by concatenation was taken as maybe the dict whose slot is rebound (refused as
    aliasing); it holds the same arrays but is a new list, whether or not the loop ran."""
    for x in (r(3), r(2, 3), np.array(0.7)):
        mg.check_grads(dict_slot_beside_a_list_grown_by_concatenation, (x,),
                       modes=("rev", "fwd"), order=2)
        mg.check_grads(list_slot_beside_a_list_made_by_concatenation, (x,),
                       modes=("rev", "fwd"), order=2)


def slot_of_another_name_for_the_dict(x):
    d = {'u': x}
    d2 = d
    d['p'] = x * 2.0
    return np.sum(d2['p'])


def slot_of_a_dict_held_by_a_list(x):
    d = {'u': x}
    outer = [d, x]
    d['p'] = x * 2.0
    return np.sum(outer[0]['p'])


def slot_of_a_dict_appended_to_a_list(x):
    d = {'u': x}
    outer = [x]
    outer.append(d)
    d['p'] = x * 2.0
    return np.sum(outer[1]['p'])


def slot_of_another_name_for_a_concatenated_list(x):
    lst = [x]
    for i in range(2):
        lst = lst + [x * (i + 1.0)]
    d = lst
    d[0] = x * 2.0
    return np.sum(lst[0])


def slot_of_a_list_bound_in_one_branch_to_another_name(x):
    first = [x, x]
    d = first + [x]
    if np.sum(x) > 0.0:
        d = first
    d[0] = x * 2.0
    return np.sum(first[0])


@pytest.mark.parametrize("fn", [slot_of_another_name_for_the_dict, slot_of_a_dict_held_by_a_list,
                                slot_of_a_dict_appended_to_a_list,
                                slot_of_another_name_for_a_concatenated_list,
                                slot_of_a_list_bound_in_one_branch_to_another_name],
                         ids=lambda f: f.__name__)
def test_a_slot_rebound_in_a_container_another_name_reaches_is_refused(fn):
    with pytest.raises(mg.UnsupportedSyntaxError) as info:
        mg.grad(fn)(r(3))
    assert info.value.text.strip() in ("d['p'] = x * 2.0", "d[0] = x * 2.0")


# ----- writing into an item taken from a list or tuple -------------------------------------------
# ``a = xs[0]; a[0] = 5.0`` writes into the array ``xs`` holds (and that a list made from ``xs``
# by ``+`` or ``*`` holds): while ``xs`` is read afterwards, the write is refused at its line.
# These returned a gradient as if the item were unchanged (5.5 for 5.0 in the first entry).


def item_of_a_list_written(x):
    lst = [x * 1.0]
    a = lst[0]
    a[0] = 5.0
    return np.sum(lst[0] * x)


def item_of_a_concatenated_list_written(x):
    lst = [x * 1.0]
    lst2 = lst + [x]
    a = lst2[0]
    a[0] = 5.0
    return np.sum(lst[0] * x)


def item_of_a_concatenated_tuple_written(x):
    t = (x * 1.0,)
    t2 = t + (x,)
    a = t2[0]
    a[0] = 5.0
    return np.sum(t[0] * x)


def item_of_a_repeated_list_written(x):
    lst = [x * 1.0]
    lst2 = lst * 2
    a = lst2[1]
    a[0] = 5.0
    return np.sum(lst[0] * x)


@pytest.mark.parametrize("fn", [item_of_a_list_written, item_of_a_concatenated_list_written,
                                item_of_a_concatenated_tuple_written,
                                item_of_a_repeated_list_written], ids=lambda f: f.__name__)
def test_a_write_into_an_item_a_container_holds_is_refused_at_its_line(fn):
    for mode in (mg.grad(fn), lambda x: mg.jvp(fn, (x,), (np.ones_like(x),))):
        with pytest.raises(mg.UnsupportedSyntaxError) as info:
            mode(np.array([0.5, -1.0, 2.0]))
        assert "a[0] = 5.0" in info.value.text

