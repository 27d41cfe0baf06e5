"""Every error of API-SEMANTICS.md section 1, and the transformer's errors.

Argument checks raise when ``grad(...)`` is called; the others when the returned function is.
Each message names the argument at fault, or the user's file, line and source text. A failed
build leaves nothing broken behind: the same call fails the same way again, and other gradients
still work.
"""

import functools
import operator
import os
import re
import traceback

import numpy as np
import pytest

import mindgrad
from mindgrad import grad, value_and_grad

F32 = np.float32
HERE = os.path.realpath(__file__)


def X():
    return np.array([1.0, 2.0], F32)


def Y():
    return np.array([3.0, 4.0], F32)


def f(x, y):
    return x * y


def _line(marker):
    """The line number of the one line of this file ending with ``# @marker``."""
    with open(__file__) as fh:
        hits = [i for i, text in enumerate(fh, 1) if text.rstrip().endswith(f"# @{marker}")]
    assert len(hits) == 1, marker
    return hits[0]


def _text(lineno):
    with open(__file__) as fh:
        return fh.read().splitlines()[lineno - 1]


def _ok(x):
    return x * x


def _still_works():
    assert grad(_ok)(3.0) == 6.0
    np.testing.assert_allclose(grad(f, (0, 1))(X(), Y())[1], [1, 2])


MAKERS = pytest.mark.parametrize("make", [grad, value_and_grad])


# ----- argument checks, raised by grad(...) itself ---------------------------------------------


@MAKERS
def test_position_and_weights_both_none(make):
    with pytest.raises(ValueError, match=r"`grad_position` and `weights` can not be None"):
        make(f, None)
    with pytest.raises(ValueError, match="grad_position"):
        make(f, grad_position=None, weights=None)


@MAKERS
@pytest.mark.parametrize("position", [[0], [0, 1], 0.0, 1.5, "0"],
                         ids=["list1", "list2", "float0", "float", "str"])
def test_position_not_int_or_tuple(make, position):
    with pytest.raises(TypeError, match="grad_position"):
        make(f, position)


@MAKERS
@pytest.mark.parametrize("position", [(0, 1.0), (0, True), (False,), (0, "1"), (0, None), ((0,),)],
                         ids=["float", "True", "False", "str", "None", "nested"])
def test_tuple_element_not_int(make, position):
    with pytest.raises(TypeError, match="grad_position"):
        make(f, position)


@MAKERS
def test_bare_bool_position_is_not_an_int(make):
    with pytest.raises(TypeError, match="grad_position"):
        make(f, True)


@MAKERS
@pytest.mark.parametrize("position", [-1, (0, -1), (-2,), (1, -1, 0)])
def test_negative_position(make, position):
    with pytest.raises(ValueError, match=r"grad_position.*>= 0"):
        make(f, position)


@MAKERS
@pytest.mark.parametrize("position", [(0, 0), (1, 0, 1)])
def test_duplicate_positions(make, position):
    with pytest.raises(ValueError, match=r"grad_position.*duplicate"):
        make(f, position)


@MAKERS
def test_empty_position_tuple(make):
    # as MindSpore: no error when the gradient function is made, a RuntimeError when called
    grad_fn = make(f, ())
    with pytest.raises(RuntimeError, match=r"grad_position should not be empty"):
        grad_fn(X(), Y())
    _still_works()


@MAKERS
@pytest.mark.parametrize("flag", ["has_aux", "return_ids", "sens_param"])
@pytest.mark.parametrize("value", [1, 0, None, "yes", 1.0])
def test_flags_must_be_bool(make, flag, value):
    with pytest.raises(TypeError, match=flag):
        make(f, 0, **{flag: value})


@MAKERS
def test_fn_not_callable(make):
    with pytest.raises(TypeError, match="fn"):
        make(3.0)


@MAKERS
@pytest.mark.parametrize("bad", [dict(fn=3.0), dict(fn=f, grad_position=-1),
                                 dict(fn=f, has_aux=1)])
def test_an_argument_error_shows_no_frame_of_mindgrads_checks(make, bad):
    # `fn` must be callable came from GradFunction.__init__, under grad's frame
    with pytest.raises((TypeError, ValueError)) as info:
        make(**bad)
    files = [entry.filename for entry in traceback.extract_tb(info.value.__traceback__)]
    package = os.path.dirname(mindgrad.__file__) + os.sep
    assert files[0] == __file__ and len([f for f in files if f.startswith(package)]) <= 1, files


def test_argument_errors_leave_everything_working():
    for bad in ([0], -1, (0, 0)):
        with pytest.raises((TypeError, ValueError)):
            grad(f, bad)
    _still_works()


# ----- raised when the returned function is called ---------------------------------------------


@MAKERS
@pytest.mark.parametrize("position", [5, (0, 5), (5,)])
def test_position_past_the_last_argument(make, position):
    g = make(f, position)  # not an error yet: the number of inputs is unknown
    with pytest.raises(IndexError, match=r"^grad_position 5 is out of range: f was given 2 "
                                         r"inputs \(positions 0 to 1\)$"):
        g(X(), Y())


def test_position_equal_to_argument_count():
    # it said "2 exceeds the 2 inputs"
    with pytest.raises(IndexError, match=r"^grad_position 2 is out of range: f was given 2 "
                                         r"inputs \(positions 0 to 1\)$"):
        grad(f, 2)(X(), Y())


def _returns_array(x, y):
    return x * y


def _returns_one_tuple(x, y):
    return (x * y,)


def _returns_float(x, y):
    return float((x * y).sum())


def _returns_list(x, y):
    return [(x * y).sum(), x]


@MAKERS
@pytest.mark.parametrize("fn, named", [
    (_returns_array, "ndarray"), (_returns_one_tuple, r"tuple of 1"), (_returns_float, "float"),
], ids=["array", "one-tuple", "float"])
def test_has_aux_without_a_tuple_of_two(make, fn, named):
    g = make(fn, 0, has_aux=True)  # not an error yet
    with pytest.raises(ValueError, match=named):
        g(X(), Y())


def test_has_aux_list_output_is_rejected():
    with pytest.raises(ValueError, match="list"):
        grad(_returns_list, 0, has_aux=True)(X(), Y())


@MAKERS
@pytest.mark.parametrize("sens", [np.ones(3, F32), np.ones((2, 1), F32), np.ones((1, 2), F32)],
                         ids=["(3,)", "(2,1)", "(1,2)"])
def test_sens_of_the_wrong_shape(make, sens):
    g = make(f, (0, 1), sens_param=True)
    shape = re.escape(str(sens.shape))
    with pytest.raises(ValueError, match=rf"{shape}.*\(2,\)|\(2,\).*{shape}"):
        g(X(), Y(), sens)


def test_sens_of_the_wrong_structure_for_two_outputs():
    def two(x, y):
        return x * y, x + y
    g = grad(two, 0, sens_param=True)
    with pytest.raises(ValueError):
        g(X(), Y(), np.ones(2, F32))
    with pytest.raises(ValueError):
        g(X(), Y(), (np.ones(2, F32),))
    with pytest.raises(ValueError, match=r"\(3,\)"):
        g(X(), Y(), (np.ones(2, F32), np.ones(3, F32)))


def _faux(x, y):
    return (x * y).sum(), x + y


def test_sens_of_the_wrong_shape_with_has_aux():
    with pytest.raises(ValueError, match=r"\(2,\)"):
        grad(_faux, 0, has_aux=True, sens_param=True)(X(), Y(), np.ones(2, F32))


# ----- which inputs are differentiable ---------------------------------------------------------


@pytest.mark.parametrize("value, type_name", [
    (np.array([3, 4]), "int"), (np.int64(3), "int"),
    (np.bool_(True), "bool"), (np.array([True, False]), "bool"),
    (np.array([3, 4], np.uint8), "uint8"),
], ids=["int-array", "np.int64", "np.bool_", "bool-array", "uint8-array"])
def test_int_or_bool_input_at_a_requested_position(value, type_name):
    with pytest.raises(TypeError) as info:
        grad(f, 1)(X(), value)
    message = str(info.value)
    assert re.search(r"(input|position|argument)\s*1\b", message), message
    assert type_name in message


@pytest.mark.parametrize("value", [3, True], ids=["int", "bool"])
def test_python_int_inputs_alone_give_no_gradient(value):
    # MindSpore's answer to grad(lambda a, b: a + b)(1, 2): Python ints are constants, so
    # where every requested input is one, the gradient is the empty tuple
    assert grad(f, 1)(X(), value) == ()
    assert grad(lambda a, b: a + b, (0, 1))(1, value) == ()
    value_and_gradient = value_and_grad(lambda a, b: a * b, 1)(2.0, value)
    assert value_and_gradient == (2.0 * value, ())


def test_int_input_named_in_a_tuple_of_positions():
    with pytest.raises(TypeError, match=r"\b0\b"):
        grad(f, (1, 0))(3, 4.0)


def test_int_leaf_of_a_requested_container():
    with pytest.raises(TypeError, match=r"\b0\b"):
        grad(lambda t: t[0] * t[1])((2.0, 3))


def test_int_inputs_elsewhere_are_constants():
    assert grad(f, 0)(2.0, 3) == 3.0
    np.testing.assert_allclose(grad(f, 0)(X(), np.array([3, 4])), [3, 4])


# ----- the transformer: unsupported syntax -----------------------------------------------------


def e_try(x):
    try:  # @try
        y = x * 2.0
    except ValueError:
        y = x
    return y


def e_with(x):
    with open(os.devnull):  # @with
        y = x * 2.0
    return y


def e_yield(x):
    yield x * 2.0  # @yield


def e_global(x):
    global _G  # noqa: PLW0602  # @global
    return x * 2.0


def e_nonlocal(x):
    scale = 2.0

    def inner():
        nonlocal scale  # @nonlocal
        scale = 3.0
    inner()
    return x * scale


def e_del(x):
    y = x * 2.0
    del y  # @del
    return x


def e_walrus(x):
    return (y := x * 2.0) * y  # @walrus


def e_attribute(x):
    e_attribute.seen = x  # @attribute
    return x * 2.0


def e_scaled(x, k=1.0):
    return x * k


def e_kwargs(x, options):
    return e_scaled(x, **options)  # @kwargs


def e_import(x):
    import math  # @import
    return x * math.pi


def e_loop_else(x):
    s = x * 0.0
    for i in range(3):  # @loop_else
        s = s + x
    else:  # noqa: PLW0120
        s = s * 2.0
    return s


def e_class(x):
    class Local:  # @class
        pass
    return x * 2.0


SYNTAX = [
    (e_try, "try"), (e_with, "with"), (e_yield, "yield"), (e_global, "global"),
    (e_nonlocal, "nonlocal"), (e_del, "del"), (e_walrus, "walrus"), (e_attribute, "attribute"),
    (e_kwargs, "kwargs"), (e_import, "import"),
    (e_loop_else, "loop_else"), (e_class, "class"),
]


def _fail_twice(thunk, error):
    """Run a failing gradient twice: the same error both times, no cache hit on a broken entry."""
    before = mindgrad.cache_stats()
    with pytest.raises(error) as first:
        thunk()
    with pytest.raises(error) as second:
        thunk()
    assert type(first.value) is type(second.value)
    assert str(first.value) == str(second.value)
    after = mindgrad.cache_stats()
    assert after["hits"] == before["hits"], "a failed build was served from the cache"
    _still_works()
    return first.value


@pytest.mark.parametrize("fn, marker", SYNTAX, ids=[m for _, m in SYNTAX])
def test_unsupported_syntax_points_at_the_line(fn, marker):
    args = (X(), {"k": 2.0}) if fn is e_kwargs else (X(),)
    error = _fail_twice(lambda: grad(fn)(*args), mindgrad.UnsupportedSyntaxError)
    assert isinstance(error, SyntaxError)
    lineno = _line(marker)
    assert os.path.realpath(error.filename) == HERE
    assert error.lineno == lineno
    assert error.text.rstrip("\n") == _text(lineno)
    assert str(error.msg)  # says what is wrong


def _fill_first(grid, v):
    grid[0] = v


def _append_twice(items, v):
    items.append(v * 2.0)


def _bump(p, v):
    p += v


def _only_reads(v):
    return float(np.sum(v))


def e_argument_index_write(x):
    grid = np.zeros(2)
    _fill_first(grid, x[0] * x[1])  # @argument_index_write
    return grid


def e_argument_append(x):
    items = [x]
    _append_twice(items, x * x)  # @argument_append
    return np.sum(items[0] + items[1])


def e_argument_in_place_operator(x):
    a = x * 1.0
    _bump(a, x * x)  # @argument_in_place_operator
    return a


def e_argument_read(x):
    _only_reads(x)
    return np.sum(x * x)


@pytest.mark.parametrize("fn, marker, param", [
    (e_argument_index_write, "argument_index_write", "grid"),
    (e_argument_append, "argument_append", "items"),
    (e_argument_in_place_operator, "argument_in_place_operator", "p")])
def test_a_call_writing_into_its_argument_for_its_effect_is_refused(fn, marker, param):
    # the call's result is unused: the change to the argument was not followed, and the
    # derivative through it came back zero in both modes
    x = np.array([0.3, -0.7])
    for thunk in (lambda: grad(lambda a: np.sum(fn(a)))(x),
                  lambda: mindgrad.jvp(fn, (x,), (np.ones(2),))):
        error = _fail_twice(thunk, mindgrad.UnsupportedSyntaxError)
        assert os.path.realpath(error.filename) == HERE
        assert error.lineno == _line(marker)
        assert f"argument {param!r} in place" in str(error)


def test_a_call_reading_its_argument_for_its_effect_is_differentiated():
    x = np.array([0.3, -0.7])
    np.testing.assert_allclose(grad(e_argument_read)(x), 2 * x)
    np.testing.assert_allclose(mindgrad.jvp(e_argument_read, (x,), (np.ones(2),))[1],
                               2 * np.sum(x))


def test_unsupported_syntax_message_says_what():
    with pytest.raises(mindgrad.UnsupportedSyntaxError, match="try"):
        grad(e_try)(X())
    with pytest.raises(mindgrad.UnsupportedSyntaxError, match=r"\*\*-unpacking"):
        grad(e_kwargs)(X(), {"k": 2.0})
    with pytest.raises(mindgrad.UnsupportedSyntaxError, match=":="):
        grad(e_walrus)(X())


def test_unsupported_syntax_in_a_called_user_function_points_at_its_line():
    def caller(x):
        return e_del(x) * 2.0
    error = _fail_twice(lambda: grad(caller)(X()), mindgrad.UnsupportedSyntaxError)
    assert os.path.realpath(error.filename) == HERE
    assert error.lineno == _line("del")


def test_unsupported_syntax_also_at_value_and_grad():
    with pytest.raises(mindgrad.UnsupportedSyntaxError):
        value_and_grad(e_with)(X())


# ----- the transformer: no rule, no source -----------------------------------------------------


def e_reduce(x):
    return functools.reduce(operator.mul, [x, x]) * 2.0  # @reduce


def e_emath_log(x):
    y = np.emath.log(x)  # @emath_log
    return y * x


@pytest.mark.parametrize("fn, marker, name", [
    (e_reduce, "reduce", "reduce"), (e_emath_log, "emath_log", "log"),
], ids=["functools.reduce", "np.emath.log"])
def test_call_without_rule_or_source(fn, marker, name):
    error = _fail_twice(lambda: grad(fn)(X()), mindgrad.NoGradientRuleError)
    message = str(error)
    assert name in message
    assert f"{__file__}:{_line(marker)}" in message or f"{HERE}:{_line(marker)}" in message
    assert "@mindgrad.adjoint" in message


def test_located_errors_carry_the_line_as_fields():
    line = _line("emath_log")
    with pytest.raises(mindgrad.NoGradientRuleError) as info:
        grad(e_emath_log)(X())
    with pytest.raises(mindgrad.NoTangentRuleError) as forward:
        mindgrad.jvp(e_emath_log, (X(),), (X(),))
    assert not isinstance(info.value, mindgrad.NoTangentRuleError)
    assert "tangent" in str(forward.value)
    for error in (info.value, forward.value):
        assert os.path.realpath(error.filename) == HERE and error.lineno == line
        assert error.source_line == "y = np.emath.log(x)  # @emath_log"
    with pytest.raises(mindgrad.UnsupportedSyntaxError) as syntax:
        grad(e_with)(X())
    assert os.path.realpath(syntax.value.filename) == HERE
    assert syntax.value.source_line.startswith("with ")


def test_no_rule_error_is_not_a_key_error():
    with pytest.raises(mindgrad.NoGradientRuleError) as info:
        grad(e_reduce)(X())
    assert not isinstance(info.value, (KeyError, NameError))


def test_lambda_typed_at_a_prompt_has_no_source():
    ns = {}
    exec(compile("f = lambda x: x * 2", "<stdin>", "exec"), ns)  # noqa: S102
    error = _fail_twice(lambda: grad(ns["f"])(X()), mindgrad.NoSourceError)
    message = str(error)
    assert "source" in message
    assert "@mindgrad.adjoint" in message or "file" in message


def test_function_exec_from_a_string_has_no_source():
    ns = {}
    exec("def h(x):\n    return x * 2\n", ns)  # noqa: S102
    _fail_twice(lambda: grad(ns["h"])(X()), mindgrad.NoSourceError)


# ----- names that do not exist ------------------------------------------------------------------


def e_undefined_function(x):
    return no_such_function(x) * 2.0  # noqa: F821  # @undefined_function


def e_undefined_value(x):
    return x * no_such_value  # noqa: F821  # @undefined_value


def test_undefined_function_names_the_line_not_a_bare_error():
    with pytest.raises(Exception) as info:
        grad(e_undefined_function)(X())
    assert not isinstance(info.value, KeyError)
    message = str(info.value)
    assert "no_such_function" in message
    assert f":{_line('undefined_function')}" in message
    _still_works()


def _error_names_line(error, lineno):
    if f"{HERE}:{lineno}" in str(error) or f"{__file__}:{lineno}" in str(error):
        return True
    tb = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if os.path.realpath(code.co_filename) == HERE and tb.tb_lineno == lineno:
            return True
        tb = tb.tb_next
    return False


def test_undefined_value_names_the_users_line():
    with pytest.raises(NameError) as info:
        grad(e_undefined_value)(X())
    assert _error_names_line(info.value, _line("undefined_value"))


# ----- writes into an array in place, which no data flow shows ------------------------------


def w_copyto(x):
    y = np.zeros(3)
    np.copyto(y, x)  # @copyto
    return np.sum(y ** 2)


def w_add_at(x):
    y = np.zeros(3)
    np.add.at(y, [0, 0, 2], x[:3])  # @add_at
    return np.sum(y ** 2)


def w_fill_diagonal(x):
    m = np.zeros((3, 3))
    np.fill_diagonal(m, x[:3])  # @fill_diagonal
    return np.sum(m ** 2)


def w_sort_method(x):
    y = x * 1.0
    y.sort()  # @sort_method
    return np.sum(y * np.arange(y.size))


# a method writing a differentiated value into an array or dict that is not differentiated
# (before the error: the write was no data flow, and the gradient silently lacked its term)
def w_fill_method(x):
    y = np.empty(3)
    y.fill(x[0])  # @fill_method
    return np.sum(y * x)


def w_put_method(x):
    y = np.zeros(3)
    y.put([1], x[2])  # @put_method
    return np.sum(y * x)


def w_dict_update(x):
    d = {"a": 1.0}
    d.update(b=x * 2.0)  # @dict_update
    return np.sum(d["b"] * x)


def w_dict_setdefault(x):
    d = {}
    d.setdefault("b", x * 2.0)  # @dict_setdefault
    return np.sum(d["b"] * x)


IN_PLACE = [(w_copyto, "copyto", r"np\.copyto\(\) writes into its first argument"),
            (w_add_at, "add_at", r"np\.add\.at\(\) writes into its first argument"),
            (w_fill_diagonal, "fill_diagonal", r"np\.fill_diagonal\(\) writes"),
            (w_sort_method, "sort_method", r"in-place method \.sort\(\)"),
            (w_fill_method, "fill_method", r"\.fill\(\) writes a differentiated value into y"),
            (w_put_method, "put_method", r"\.put\(\) writes a differentiated value into y"),
            (w_dict_update, "dict_update", r"\.update\(\) writes a differentiated value into d"),
            (w_dict_setdefault, "dict_setdefault", r"\.setdefault\(\) writes a differentiated")]


@pytest.mark.parametrize("fn, marker, message", IN_PLACE, ids=[m for _, m, _ in IN_PLACE])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_in_place_writes_with_a_differentiated_value_are_rejected(fn, marker, message, mode):
    # without the error both modes would return zero gradients: the write is no data flow
    x = np.array([0.3, -1.2, 0.7])
    if mode == "grad":
        error = _fail_twice(lambda: grad(fn)(x), mindgrad.UnsupportedSyntaxError)
    else:
        error = _fail_twice(lambda: mindgrad.jvp(fn, (x,), (np.ones(3),)),
                            mindgrad.UnsupportedSyntaxError)
    assert re.search(message, str(error.msg))
    assert error.lineno == _line(marker)
    assert error.text.rstrip("\n") == _text(_line(marker))


def test_in_place_writes_of_constants_are_allowed():
    def scaled(x):
        mask = np.zeros(3)
        np.copyto(mask, np.array([1.0, 0.0, 2.0]))  # no differentiated value involved
        extra = {}
        extra.update(k=2.0)  # nor here
        mask.put([1], extra["k"] - 2.0)
        return np.sum(mask * x ** 2)
    x = np.array([0.3, -1.2, 0.7])
    np.testing.assert_allclose(grad(scaled)(x), np.array([1.0, 0.0, 2.0]) * 2 * x)


async def _coroutine(x):
    return x * x


def test_an_async_def_is_named_as_such_at_its_line():
    with pytest.raises(mindgrad.UnsupportedSyntaxError, match="_coroutine is an async def") as info:
        mindgrad.grad(_coroutine)(1.0)
    assert info.value.lineno == _coroutine.__code__.co_firstlineno
    assert info.value.source_line == "async def _coroutine(x):"
