"""The gradient API's semantics: API-SEMANTICS.md sections 1 and 2, table row by table row.

Examples use the spec's values: ``x = [1., 2.]``, ``y = [3., 4.]`` (float32), ``f = x * y``.
"""

import re

import numpy as np
import pytest

import mindgrad
from mindgrad import get_grad, grad, value_and_grad

F32 = np.float32


def X():
    return np.array([1.0, 2.0], F32)


def Y():
    return np.array([3.0, 4.0], F32)


def check(actual, expected, dtype=F32):
    """``actual`` is an ndarray of ``dtype`` equal to ``expected``."""
    assert isinstance(actual, np.ndarray), f"expected a bare array, got {type(actual).__name__}"
    assert actual.dtype == dtype
    np.testing.assert_allclose(actual, np.asarray(expected, dtype), rtol=1e-6)


def check_all(actual, expected, dtype=F32):
    """``actual`` is a tuple of arrays equal to the sequence ``expected``."""
    assert isinstance(actual, tuple), f"expected a tuple, got {type(actual).__name__}"
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        check(a, e, dtype)


# ----- the functions differentiated --------------------------------------------------------


def f(x, y):
    return x * y


def f2(x, y):
    return (x * y, x + y)


def f_nested_tuple(x, y):
    return ((x * y, (x + y,)), x)


def f_nested_list(x, y):
    return [x * y, [x + y, (x,)]]


def f_matrix(x, y):
    return x[:, None] * y[None, :]  # a (2, 2) output: the gradient is that of its sum


def f_with_int(x, y):
    return (x * y, 3)


def f_with_none(x, y):
    return (x * y, None)


def f_with_str_int_none(x, y):
    return (x * y, "label", 7, None)


def faux(x, y):
    return (x * y).sum(), x + y


def faux_dependent(x, y):
    return (x * y).sum(), x * 3.0  # the aux depends on x: its gradient must not flow


def faux_two(x, y):
    return (x * y).sum(), x * x, y + 1.0


def faux_structured(x, y):
    return (x * y).sum(), (x * 5.0, [y * 7.0])


def unused(x, y):
    return x * 2.0


def f_keyword(x, y, k=2.0):
    return x * y * k


def f_keyword_only(x, y, *, k=2.0):
    return x * y * k


def f_tuple_arg(t, s):
    a, b = t
    return a * b * s


def f_list_arg(xs, s):
    return (xs[0] * xs[1] + xs[2]) * s


def f_nested_arg(t, d):
    return t[0] * t[1][0] + d["a"] * t[1][1]


def x_x_y(x, y):
    return x * x * y


def square_plus(x, y):
    return x**2 + y


def square_plus_tuple(x, y):
    return (x**2 + y, x)


# ----- return structure: positions -----------------------------------------------------------


def test_default_position_gives_bare_array():
    check(grad(f)(X(), Y()), [3, 4])


def test_int_position():
    check(grad(f, 1)(X(), Y()), [1, 2])


def test_one_element_tuple_gives_bare_array():
    check(grad(f, (0,))(X(), Y()), [3, 4])
    check(grad(f, (1,))(X(), Y()), [1, 2])


def test_tuple_of_two_positions_gives_tuple():
    check_all(grad(f, (0, 1))(X(), Y()), [[3, 4], [1, 2]])


def test_positions_in_the_order_given():
    check_all(grad(f, (1, 0))(X(), Y()), [[1, 2], [3, 4]])


def test_returned_function_takes_fns_positional_parameters_plus_sens():
    assert callable(grad(f, (0, 1)))
    check_all(grad(f, (0, 1))(X(), Y()), [[3, 4], [1, 2]])
    check(grad(f, 0, sens_param=True)(X(), Y(), np.ones(2, F32)), [3, 4])


# ----- several outputs -----------------------------------------------------------------------


def test_several_outputs_are_summed():
    check_all(grad(f2, (0, 1))(X(), Y()), [[4, 5], [2, 3]])


@pytest.mark.parametrize("fn", [f_nested_tuple, f_nested_list], ids=["tuple", "list"])
def test_nested_outputs_are_summed(fn):
    # d/dx sum(x*y + x + y + x) = y + 2, d/dy = x + 1
    check_all(grad(fn, (0, 1))(X(), Y()), [[5, 6], [2, 3]])


def test_non_scalar_output_needs_no_sens():
    # sum_ij x_i y_j: d/dx_i = sum(y) = 7, d/dy_j = sum(x) = 3
    check_all(grad(f_matrix, (0, 1))(X(), Y()), [[7, 7], [3, 3]])


@pytest.mark.parametrize("fn", [f_with_int, f_with_none, f_with_str_int_none],
                         ids=["int", "None", "str-int-None"])
def test_outputs_that_are_not_floats_are_ignored(fn):
    check_all(grad(fn, (0, 1))(X(), Y()), [[3, 4], [1, 2]])


def test_value_is_the_full_output_with_ignored_outputs():
    value, g = value_and_grad(f_with_str_int_none, 0)(X(), Y())
    assert isinstance(value, tuple) and value[1:] == ("label", 7, None)
    check(value[0], [3, 8])
    check(g, [3, 4])


# ----- has_aux -------------------------------------------------------------------------------


def test_has_aux_one_aux_is_a_tuple():
    g, aux = grad(faux, 0, has_aux=True)(X(), Y())
    check(g, [3, 4])
    assert isinstance(aux, tuple) and len(aux) == 1
    check(aux[0], [4, 6])


def test_has_aux_unpacks_as_in_the_spec():
    g, (aux,) = grad(faux, 0, has_aux=True)(X(), Y())
    check(g, [3, 4])
    check(aux, [4, 6])


def test_has_aux_blocks_gradient_through_aux():
    # without the block the gradient would be y + 3 = [6, 7]
    g, (aux,) = grad(faux_dependent, 0, has_aux=True)(X(), Y())
    check(g, [3, 4])
    check(aux, [3, 6])


def test_has_aux_several_aux():
    g, aux = grad(faux_two, (0, 1), has_aux=True)(X(), Y())
    check_all(g, [[3, 4], [1, 2]])
    assert isinstance(aux, tuple) and len(aux) == 2
    check(aux[0], [1, 4])
    check(aux[1], [4, 5])


def test_has_aux_structured_aux_kept_as_returned():
    g, aux = grad(faux_structured, 0, has_aux=True)(X(), Y())
    check(g, [3, 4])
    assert len(aux) == 1
    inner = aux[0]
    assert isinstance(inner, tuple) and isinstance(inner[1], list)
    check(inner[0], [5, 10])
    check(inner[1][0], [21, 28])


def test_without_has_aux_the_aux_is_differentiated_too():
    check(grad(faux_dependent, 0)(X(), Y()), [6, 7])


# ----- value_and_grad ------------------------------------------------------------------------


def test_value_and_grad_with_has_aux():
    (out, aux), g = value_and_grad(faux, 0, has_aux=True)(X(), Y())
    assert out == pytest.approx(11.0)
    check(aux, [4, 6])
    check(g, [3, 4])


def test_value_and_grad_with_has_aux_value_is_the_whole_output():
    value, g = value_and_grad(faux_two, 0, has_aux=True)(X(), Y())
    assert isinstance(value, tuple) and len(value) == 3
    assert value[0] == pytest.approx(11.0)
    check(value[1], [1, 4])
    check(value[2], [4, 5])
    check(g, [3, 4])


def test_value_and_grad_without_has_aux_sums_all_outputs():
    (out, second), g = value_and_grad(faux, 0)(X(), Y())
    assert out == pytest.approx(11.0)
    check(second, [4, 6])
    check(g, [4, 5])


def test_value_and_grad_bare_and_tuple():
    value, g = value_and_grad(f)(X(), Y())
    check(value, [3, 8])
    check(g, [3, 4])
    value, gs = value_and_grad(f, (0, 1))(X(), Y())
    check(value, [3, 8])
    check_all(gs, [[3, 4], [1, 2]])
    value, g = value_and_grad(f, (1,))(X(), Y())
    check(g, [1, 2])


def test_value_and_grad_several_outputs():
    value, gs = value_and_grad(f2, (0, 1))(X(), Y())
    assert isinstance(value, tuple)
    check(value[0], [3, 8])
    check(value[1], [4, 6])
    check_all(gs, [[4, 5], [2, 3]])


# ----- return_ids and get_grad ---------------------------------------------------------------


def test_return_ids_two_positions():
    (i0, gx), (i1, gy) = grad(f, (0, 1), return_ids=True)(X(), Y())
    assert (i0, i1) == (0, 1)
    check(gx, [3, 4])
    check(gy, [1, 2])


def test_return_ids_structure_is_tuple_of_pairs():
    result = grad(f, (0, 1), return_ids=True)(X(), Y())
    assert isinstance(result, tuple) and len(result) == 2
    assert all(isinstance(p, tuple) and len(p) == 2 for p in result)


def test_return_ids_one_element_tuple_is_a_bare_pair():
    result = grad(f, (1,), return_ids=True)(X(), Y())
    assert isinstance(result, tuple) and len(result) == 2 and result[0] == 1
    check(result[1], [1, 2])


def test_return_ids_int_position():
    i, g = grad(f, 0, return_ids=True)(X(), Y())
    assert i == 0
    check(g, [3, 4])


def test_return_ids_order_given():
    (i0, g0), (i1, g1) = grad(f, (1, 0), return_ids=True)(X(), Y())
    assert (i0, i1) == (1, 0)
    check(g0, [1, 2])
    check(g1, [3, 4])


def test_return_ids_with_has_aux():
    ids, (aux,) = grad(faux, (0, 1), has_aux=True, return_ids=True)(X(), Y())
    assert [i for i, _ in ids] == [0, 1]
    check(ids[0][1], [3, 4])
    check(aux, [4, 6])


def test_return_ids_with_value_and_grad():
    value, ids = value_and_grad(f, (0, 1), return_ids=True)(X(), Y())
    check(value, [3, 8])
    assert [i for i, _ in ids] == [0, 1]


def test_get_grad_by_position():
    grads = grad(f, (0, 1), return_ids=True)(X(), Y())
    check(get_grad(grads, 0), [3, 4])
    check(get_grad(grads, 1), [1, 2])


def test_get_grad_on_a_single_pair():
    grads = grad(f, (1,), return_ids=True)(X(), Y())
    check(get_grad(grads, 1), [1, 2])


def test_get_grad_with_has_aux_gradients():
    grads, _ = grad(faux, (0, 1), has_aux=True, return_ids=True)(X(), Y())
    check(get_grad(grads, 1), [1, 2])


def test_get_grad_missing_position_raises_value_error():
    grads = grad(f, (0, 1), return_ids=True)(X(), Y())
    with pytest.raises(ValueError, match="2"):
        get_grad(grads, 2)
    single = grad(f, (1,), return_ids=True)(X(), Y())
    with pytest.raises(ValueError):
        get_grad(single, 0)


def test_get_grad_without_return_ids_raises_value_error():
    grads = grad(f, (0, 1))(X(), Y())
    with pytest.raises(ValueError):
        get_grad(grads, 0)


# ----- sens_param ----------------------------------------------------------------------------


def test_sens_param_scales_the_output():
    gs = grad(f, (0, 1), sens_param=True)(X(), Y(), np.array([10, 100], F32))
    check_all(gs, [[30, 400], [10, 200]])


def test_sens_param_bare_position():
    check(grad(f, 0, sens_param=True)(X(), Y(), np.array([10, 100], F32)), [30, 400])


def test_sens_param_tuple_for_two_outputs():
    s1, s2 = np.array([10, 100], F32), np.array([1, 2], F32)
    gs = grad(f2, (0, 1), sens_param=True)(X(), Y(), (s1, s2))
    # d/dx = s1 * y + s2, d/dy = s1 * x + s2
    check_all(gs, [[31, 402], [11, 202]])


def test_sens_param_with_has_aux_scales_only_the_output():
    g, (aux,) = grad(faux, 0, has_aux=True, sens_param=True)(X(), Y(), F32(2.0))
    check(g, [6, 8])
    check(aux, [4, 6])


def test_sens_param_with_value_and_grad():
    value, gs = value_and_grad(f, (0, 1), sens_param=True)(X(), Y(), np.array([10, 100], F32))
    check(value, [3, 8])  # the value is not scaled
    check_all(gs, [[30, 400], [10, 200]])


def test_sens_param_python_floats():
    assert grad(f, (0, 1), sens_param=True)(2.0, 3.0, 10.0) == (30.0, 20.0)


# ----- unused inputs, dtypes -------------------------------------------------------------------


def test_unused_input_gets_zeros_of_its_shape_and_dtype():
    gx, gy = grad(unused, (0, 1))(X(), Y())
    check(gx, [2, 2])
    check(gy, [0, 0])


@pytest.mark.parametrize("value", [
    np.ones((2, 3), F32), np.ones((2, 3)), np.float32(1.5), np.float64(1.5), np.array(1.5, F32),
], ids=["2d-f32", "2d-f64", "np.float32", "np.float64", "0d-f32"])
def test_unused_input_zeros_keep_type(value):
    _, g = grad(unused, (0, 1))(X(), value)
    assert type(g) is type(value)
    assert np.shape(g) == np.shape(value)
    assert np.asarray(g).dtype == np.asarray(value).dtype
    assert not np.any(g)


def test_unused_python_float_gets_python_zero():
    _, g = grad(unused, (0, 1))(1.0, 5.0)
    assert type(g) is float and g == 0.0


def test_gradient_is_never_none():
    gs = grad(unused, (0, 1))(X(), Y())
    assert all(g is not None for g in gs)


def test_dtype_float32_in_float32_out():
    g = grad(f, (0, 1))(X(), Y())
    assert all(a.dtype == np.float32 for a in g)


def test_dtype_float64_in_float64_out():
    g = grad(f, (0, 1))(X().astype(np.float64), Y().astype(np.float64))
    check_all(g, [[3, 4], [1, 2]], np.float64)


def test_mixed_dtypes_each_gradient_has_its_inputs_dtype():
    gx, gy = grad(f, (0, 1))(X(), Y().astype(np.float64))
    check(gx, [3, 4], np.float32)
    check(gy, [1, 2], np.float64)


def test_python_float_in_python_float_out():
    g = grad(f, (0, 1))(2.0, 3.0)
    assert g == (3.0, 2.0)
    assert all(type(v) is float for v in g)


@pytest.mark.parametrize("scalar", [np.float32, np.float64])
def test_numpy_scalar_in_numpy_scalar_out(scalar):
    g = grad(f)(scalar(2.0), scalar(3.0))
    assert type(g) is scalar and g == 3.0


def test_zero_dimensional_array_in_zero_dimensional_array_out():
    g = grad(f)(np.array(2.0, F32), np.array(3.0, F32))
    assert isinstance(g, np.ndarray) and g.shape == () and g.dtype == F32 and g == 3.0


def test_broadcast_input_gets_gradient_of_its_own_shape():
    gx, gy = grad(f, (0, 1))(np.ones((2, 3)), np.arange(3.0))
    np.testing.assert_allclose(gx, np.tile(np.arange(3.0), (2, 1)))
    np.testing.assert_allclose(gy, [2, 2, 2])


# ----- structured and keyword arguments --------------------------------------------------------


def test_gradient_wrt_tuple_argument_is_a_tuple():
    g = grad(f_tuple_arg)((X(), Y()), 2.0)
    assert isinstance(g, tuple) and len(g) == 2
    check(g[0], [6, 8])
    check(g[1], [2, 4])


def test_gradient_wrt_list_argument_is_a_list():
    g = grad(f_list_arg)([X(), Y(), X()], 2.0)
    assert isinstance(g, list) and len(g) == 3
    check(g[0], [6, 8])
    check(g[1], [2, 4])
    check(g[2], [2, 2])


def test_gradient_wrt_nested_tuple_list_dict_same_structure():
    t = (X(), [Y(), X()])
    d = {"a": Y(), "b": X()}
    gt, gd = grad(f_nested_arg, (0, 1))(t, d)
    assert isinstance(gt, tuple) and isinstance(gt[1], list) and len(gt[1]) == 2
    check(gt[0], [3, 4])
    check(gt[1][0], [1, 2])
    check(gt[1][1], [3, 4])
    assert isinstance(gd, dict) and set(gd) == {"a", "b"}
    check(gd["a"], [1, 2])
    check(gd["b"], [0, 0])  # unused entry: zeros, not missing


def test_keyword_argument_is_a_constant():
    gs = grad(f_keyword, (0, 1))(X(), Y(), k=3.0)
    check_all(gs, [[9, 12], [3, 6]])


def test_keyword_only_argument_is_a_constant_and_default_is_used():
    check_all(grad(f_keyword_only, (0, 1))(X(), Y(), k=3.0), [[9, 12], [3, 6]])
    check_all(grad(f_keyword_only, (0, 1))(X(), Y()), [[6, 8], [2, 4]])


def test_grad_position_counts_positional_arguments_only():
    # y passed by keyword: position 1 does not exist among the positional arguments
    with pytest.raises(TypeError, match="'y', given by keyword"):
        grad(f_keyword, 1)(X(), y=Y())


def test_positional_default_is_used_when_omitted():
    check(grad(f_keyword)(X(), Y()), [6, 8])


def test_int_argument_not_differentiated_is_a_constant():
    assert grad(f)(2.0, 3) == 3.0
    check(grad(f)(X(), np.array([3, 4])), [3, 4])


# ----- stop_gradient, control flow, grad of grad -----------------------------------------------


def _stop(a, b):
    return mindgrad.stop_gradient(a * b) + a * a


@pytest.mark.skipif(not hasattr(mindgrad, "stop_gradient"),
                    reason="stop_gradient not yet available")
def test_stop_gradient():
    check_all(grad(_stop, (0, 1))(X(), Y()), [[2, 4], [0, 0]])


def _g_inner(a, b):
    return a * a * b


def test_grad_of_grad():
    outer = grad(lambda a, b: grad(_g_inner, (0, 1))(a, b)[0].sum(), (0, 1))
    # sum(2 a b): d/da = 2 b, d/db = 2 a
    check_all(outer(X(), Y()), [[6, 8], [2, 4]])


def _control(x, n):
    s = x * 0.0
    for i in range(n):
        if i % 2 == 0:
            s = s + x * x
        else:
            s = s + x
    return s


def test_control_flow():
    # n = 3: s = 2 x^2 + x, ds/dx = 4x + 1
    check(grad(_control)(X(), 3), [5, 9])


# ----- the seed documents' functional examples ---------------------------------------------------


def test_seed_x_x_y():
    assert grad(x_x_y, (0, 1))(2.0, 3.0) == (12.0, 4.0)


def test_seed_square_plus_y():
    assert grad(square_plus, 0)(1.0, 2.0) == 2.0
    assert grad(square_plus, 1)(1.0, 2.0) == 1.0


def test_seed_square_plus_tuple_output():
    assert grad(square_plus_tuple, 0)(1.0, 2.0) == 3.0


def test_seed_examples_with_float32_arrays():
    a, b = np.array([2.0], F32), np.array([3.0], F32)
    check_all(grad(x_x_y, (0, 1))(a, b), [[12], [4]])


# ----- what grad accepts ----------------------------------------------------------------------


def test_lambda():
    check(grad(lambda a, b: a * b)(X(), Y()), [3, 4])


class _Model:
    def __init__(self, scale):
        self.scale = scale

    def method(self, x, y):
        return x * y * self.scale


def test_bound_method_positions_count_its_own_parameters():
    m = _Model(2.0)
    check_all(grad(m.method, (0, 1))(X(), Y()), [[6, 8], [2, 4]])


def test_calling_twice_gives_the_same_result_and_does_not_mutate_inputs():
    x, y = X(), Y()
    g = grad(f, (0, 1))
    first = g(x, y)
    second = g(x, y)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(x, [1, 2])
    np.testing.assert_array_equal(y, [3, 4])


def test_returned_gradients_are_independent_writable_arrays():
    g = grad(f2, (0, 1))(X(), Y())
    for a in g:
        assert a.flags.writeable
    g[0][0] = 100.0
    check(g[1], [2, 3])


# ----- an output with nothing to differentiate ---------------------------------------------


def _returns_nothing(x):
    x * 2.0


def _returns_a_string(x):
    return "done"


def _returns_an_int(x):
    return int(np.argmax(x))


def _returns_a_bool(x):
    return bool(x[0] > 0)


def _returns_indices(x):
    return np.argsort(x), None


def _returns_a_float_and_labels(x):
    return np.sum(x * x), "label", None, 3


def test_an_output_without_return_names_the_missing_return():
    with pytest.raises(TypeError, match=r"_returns_nothing returned None: is a return missing\?"):
        grad(_returns_nothing)(X())
    with pytest.raises(TypeError, match="returned None"):
        mindgrad.vjp(_returns_nothing, X())
    with pytest.raises(TypeError, match="returned None"):
        mindgrad.jvp(_returns_nothing, (X(),), (X(),))


def test_an_output_without_float_names_the_def_line():
    def where(fn):
        return re.escape(f"(def at {__file__}:{fn.__code__.co_firstlineno})")

    for fn, call in ((_returns_nothing, lambda f: grad(f)(X())),
                     (_returns_nothing, lambda f: mindgrad.jvp(f, (X(),), (X(),))),
                     (_returns_nothing, lambda f: mindgrad.vjp(f, X())),
                     (_returns_an_int, lambda f: value_and_grad(f)(X()))):
        with pytest.raises(TypeError, match=where(fn)):
            call(fn)


@pytest.mark.parametrize("fn, shown", [(_returns_a_string, "'done' (str)"),
                                       (_returns_an_int, "1 (int)"),
                                       (_returns_a_bool, "True (bool)"),
                                       (_returns_indices, "a tuple of 2")])
def test_an_output_holding_no_float_is_a_type_error(fn, shown):
    for make in (grad, value_and_grad):
        with pytest.raises(TypeError, match=f"{fn.__name__} returned {re.escape(shown)}.*no float"):
            make(fn)(X())


def test_non_float_parts_of_a_mixed_output_are_still_ignored():
    check(grad(_returns_a_float_and_labels)(X()), [2, 4])
    with pytest.raises(TypeError, match="holds no float"):
        grad(lambda x: ("aux", x * 2.0), has_aux=True)(X())


# ----- errors that name the user's function and say what to do -----------------------------


def _two(x, y=2.0):
    return np.sum(x * x * y)


def test_a_wrong_argument_count_names_the_function_not_generated_code():
    with pytest.raises(TypeError, match=r"^_two\(\): too many positional arguments") as info:
        grad(_two)(np.ones(3), 1.0, 3.0)
    assert "mindgrad" not in str(info.value) and "<locals>" not in str(info.value)


def test_an_input_given_by_keyword_says_to_pass_it_positionally():
    with pytest.raises(TypeError, match="'x', given by keyword.*pass x positionally"):
        grad(_two)(x=np.ones(3))


def test_sens_param_without_a_sens_says_what_the_call_takes():
    op = mindgrad.GradOperation(sens_param=True)
    with pytest.raises(TypeError, match="sens_param=True: call the gradient function with "
                                        "_two's inputs and then the output sensitivity"):
        op(_two)(np.ones(3))
    np.testing.assert_allclose(op(_two)(np.ones(3), 1.0), 4.0 * np.ones(3))


def test_source_without_example_arguments_asks_for_them():
    with pytest.raises(TypeError, match=r"needs _two's arguments.*source\(grad_fn, x\)"):
        mindgrad.source(grad(_two))


def test_check_grads_returns_the_gradients_grad_gives():
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(mindgrad.check_grads(_two, (x,)), 4.0 * x)  # d/dx sum(2 x^2)
    gx, gy = mindgrad.check_grads(_two, (x, 3.0))
    np.testing.assert_allclose(gx, 6.0 * x)
    np.testing.assert_allclose(gy, np.sum(x * x))


@pytest.mark.parametrize("x", [0.7, np.float64(0.7), np.float32(0.7), np.array(0.7),
                               np.array([0.7, -0.2], np.float32)])
def test_a_gradient_comes_back_in_the_input_type_on_every_call(x):
    # the calls after the first take the short paths of seed and as_grad: the same type and
    # number as the first
    grad = mindgrad.grad(lambda v: np.sum(v ** 3))
    first, again = grad(x), grad(x)
    for g in (first, again):
        assert type(g) is type(x) and np.asarray(g).dtype == np.asarray(x).dtype
        np.testing.assert_allclose(g, 3 * np.asarray(x) ** 2, rtol=1e-6)
    value, g = mindgrad.value_and_grad(lambda v: v * v * 2.0)(x)
    assert type(value) is type(x * x * 2.0) and type(g) is type(x)
