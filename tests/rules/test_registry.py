"""The rule registry: mindgrad's own templates are parsed when a program first uses them (so
``import mindgrad`` reads none), every one of them parses and validates, and a user's rule is
checked at its decorator."""

import contextlib
import copy
import math
import subprocess
import sys

import gast
import numpy as np
import pytest

import mindgrad
from mindgrad import rules
from mindgrad.compiler.finish.emit import unparse
from mindgrad.rules import Rule, RuleError, d, slope
from mindgrad.runtime import unbroadcast, zero, zero_in, zero_in_zero_out


@contextlib.contextmanager
def _removed_after(*keys):
    """Run the block, then take the rules of ``keys`` (both directions) out of the registry:
    a test's rules never reach the tests after it."""
    try:
        yield
    finally:
        for key in keys:
            rules._RULES.pop(key, None)
            rules._TANGENTS.pop(key, None)
        rules._bump()


def _all_rules():
    return list(rules._RULES.values()) + list(rules._TANGENTS.values())


def test_import_parses_no_template():
    code = ("import mindgrad\n"
            "from mindgrad import rules\n"
            "every = list(rules._RULES.values()) + list(rules._TANGENTS.values())\n"
            "print(len(every), sum('body' in r.__dict__ for r in every))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert int(out[0]) > 500 and int(out[1]) == 0


def test_every_builtin_rule_parses_and_validates():
    for rule in _all_rules():
        assert rule.params is not None and rule.out, rule
        assert isinstance(rule.body, list), rule
        rule.reads_zero_unsafely  # noqa: B018  walks the parsed body


def test_a_rule_parses_once_when_first_used():
    x = np.array([0.3, -1.2, 2.0])
    rule = rules.lookup(np.arcsinh)
    rule.__dict__.pop("body", None)  # as after import
    for attr in Rule._PARSED:
        rule.__dict__.pop(attr, None)
    g = mindgrad.grad(lambda v: np.sum(np.arcsinh(v)))(x)
    np.testing.assert_allclose(g, 1.0 / np.sqrt(x * x + 1.0), rtol=1e-12)
    assert "body" in rule.__dict__


def _writes_the_output(out, x):
    rules.d[out] = x  # malformed: a rule writes the inputs' gradients, not the output's


def test_a_malformed_lazy_rule_fails_at_every_use():
    rule = Rule(np.sinh, _writes_the_output, lazy=True)
    for _ in range(2):  # all or nothing: the second use does not see a half-parsed rule
        with pytest.raises(RuleError, match="writes d\\[out\\]"):
            rule.body  # noqa: B018


def test_a_users_malformed_rule_fails_at_its_decorator():
    def my_function(x):
        return x

    with pytest.raises(RuleError, match="writes d\\[out\\]"):
        rules.adjoint(my_function)(_writes_the_output)
    assert rules.lookup(my_function) is None


def test_runtime_all_lists_every_public_helper():
    import types

    from mindgrad import runtime

    public = {n for n, v in vars(runtime).items() if not n.startswith("_")
              and isinstance(v, (types.FunctionType, type))
              and getattr(v, "__module__", "") == "mindgrad.runtime"}
    public |= {n for n, v in vars(runtime).items() if isinstance(v, runtime.Zero)}  # zero
    assert set(runtime.__all__) == public


# The adjoint and tangent templates of these functions were written by hand, twice; they are
# now derived from one slope (@elementwise). Derived, they print exactly as written before.
HAND_WRITTEN = [
    ((np.exp, math.exp), 'd[x] = d[out] * out',
     'd[out] = d[x] * out'),
    ((np.exp2,), 'd[x] = d[out] * out * math.log(2.0)',
     'd[out] = d[x] * out * math.log(2.0)'),
    ((np.expm1, math.expm1), 'd[x] = d[out] * (out + 1.0)',
     'd[out] = d[x] * (out + 1.0)'),
    ((np.log,), 'd[x] = d[out] / x',
     'd[out] = d[x] / x'),
    ((np.log2, math.log2), 'd[x] = d[out] / (x * math.log(2.0))',
     'd[out] = d[x] / (x * math.log(2.0))'),
    ((np.log10, math.log10), 'd[x] = d[out] / (x * math.log(10.0))',
     'd[out] = d[x] / (x * math.log(10.0))'),
    ((np.log1p,), 'd[x] = d[out] / (x + 1.0)',
     'd[out] = d[x] / (x + 1.0)'),
    # a slope at a pole of a function finite there: computed without NumPy's warning, and
    # its tangent held at 0 where the tangent is 0 (rules.helpers.quotient)
    ((np.sqrt, math.sqrt), 'd[x] = d[out] * quotient(0.5, out)',
     'd[out] = times_slope(d[x], quotient(0.5, out))'),
    ((np.cbrt,), 'd[x] = d[out] * quotient(1.0, 3.0 * out * out)',
     'd[out] = times_slope(d[x], quotient(1.0, 3.0 * out * out))'),
    ((np.square,), 'd[x] = d[out] * 2.0 * x',
     'd[out] = d[x] * 2.0 * x'),
    ((np.reciprocal,), 'd[x] = -d[out] * out * out',
     'd[out] = -d[x] * out * out'),
    ((np.sin,), 'd[x] = d[out] * np.cos(x)',
     'd[out] = d[x] * np.cos(x)'),
    ((np.cos,), 'd[x] = -d[out] * np.sin(x)',
     'd[out] = -d[x] * np.sin(x)'),
    ((np.tan, math.tan), 'd[x] = d[out] * (1.0 + out * out)',
     'd[out] = d[x] * (1.0 + out * out)'),
    ((np.arcsin,), 'd[x] = d[out] * quotient(1.0, np.sqrt(1.0 - x * x))',
     'd[out] = times_slope(d[x], quotient(1.0, np.sqrt(1.0 - x * x)))'),
    ((np.arccos,), 'd[x] = d[out] * quotient(-1.0, np.sqrt(1.0 - x * x))',
     'd[out] = times_slope(d[x], quotient(-1.0, np.sqrt(1.0 - x * x)))'),
    ((np.arctan, math.atan), 'd[x] = d[out] / (1.0 + x * x)',
     'd[out] = d[x] / (1.0 + x * x)'),
    ((np.sinh,), 'd[x] = d[out] * np.cosh(x)',
     'd[out] = d[x] * np.cosh(x)'),
    ((np.cosh,), 'd[x] = d[out] * np.sinh(x)',
     'd[out] = d[x] * np.sinh(x)'),
    ((np.tanh, math.tanh), 'd[x] = d[out] * (1.0 - out * out)',
     'd[out] = d[x] * (1.0 - out * out)'),
    ((np.arcsinh,), 'd[x] = d[out] / np.sqrt(x * x + 1.0)',
     'd[out] = d[x] / np.sqrt(x * x + 1.0)'),
    ((np.arccosh,), 'd[x] = d[out] * quotient(1.0, np.sqrt(x * x - 1.0))',
     'd[out] = times_slope(d[x], quotient(1.0, np.sqrt(x * x - 1.0)))'),
    ((np.arctanh,), 'd[x] = d[out] / (1.0 - x * x)',
     'd[out] = d[x] / (1.0 - x * x)'),
    ((math.sin,), 'd[x] = d[out] * math.cos(x)',
     'd[out] = d[x] * math.cos(x)'),
    ((math.cos,), 'd[x] = -d[out] * math.sin(x)',
     'd[out] = -d[x] * math.sin(x)'),
    ((math.log1p,), 'd[x] = d[out] / (1.0 + x)',
     'd[out] = d[x] / (1.0 + x)'),
    ((math.sinh,), 'd[x] = d[out] * math.cosh(x)',
     'd[out] = d[x] * math.cosh(x)'),
    ((math.cosh,), 'd[x] = d[out] * math.sinh(x)',
     'd[out] = d[x] * math.sinh(x)'),
    ((math.asin,), 'd[x] = d[out] * quotient(1.0, math.sqrt(1.0 - x * x))',
     'd[out] = times_slope(d[x], quotient(1.0, math.sqrt(1.0 - x * x)))'),
    ((math.acos,), 'd[x] = d[out] * quotient(-1.0, math.sqrt(1.0 - x * x))',
     'd[out] = times_slope(d[x], quotient(-1.0, math.sqrt(1.0 - x * x)))'),
    ((math.fabs,), 'd[x] = d[out] * math.copysign(1.0, x)',
     'd[out] = d[x] * math.copysign(1.0, x)'),
    ((math.erf,), 'd[x] = d[out] * 2.0 / math.sqrt(math.pi) * math.exp(-x * x)',
     'd[out] = d[x] * 2.0 / math.sqrt(math.pi) * math.exp(-x * x)'),
]


class _Products(gast.NodeTransformer):
    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, gast.Name) and node.func.id == "times_slope":
            return rules.scaled(*node.args)
        return node


def _as_products(rule):
    """A derived adjoint template's text as expansion writes it where the slope is finite:
    ``times_slope(g, s)`` (0 where ``g`` is 0, in a branch np.where did not take) as the
    product ``g * s``, written as a person would (``rules.scaled``)."""
    return unparse([_Products().visit(copy.deepcopy(stmt)) for stmt in rule.body]).strip()


@pytest.mark.parametrize("fns, adjoint_text, tangent_text", HAND_WRITTEN,
                         ids=lambda v: getattr(v[0], "__name__", "")
                         if isinstance(v, tuple) else "")
def test_elementwise_rules_derive_the_templates_once_written_by_hand(fns, adjoint_text,
                                                                      tangent_text):
    for fn in fns:
        assert _as_products(rules.lookup(fn)).strip() == adjoint_text
        assert unparse(rules.lookup_tangent(fn).body).strip() == tangent_text


def softsign(x):
    return x / (1.0 + np.abs(x))


def _uses_softsign(x):
    return np.sum(np.tanh(softsign(x)) * x)


def test_a_slope_gives_both_directions_for_a_new_function():
    @rules.elementwise(softsign)
    def _(out, x):
        slope[x] = 1.0 / ((1.0 + np.abs(x)) * (1.0 + np.abs(x)))

    with _removed_after(softsign):
        assert _as_products(rules.lookup(softsign)).strip() == \
            "d[x] = d[out] / ((1.0 + np.abs(x)) * (1.0 + np.abs(x)))"
        assert unparse(rules.lookup_tangent(softsign).body).strip() == \
            "d[out] = d[x] / ((1.0 + np.abs(x)) * (1.0 + np.abs(x)))"
        x = np.array([0.3, -1.7, 2.5, 0.05])
        np.testing.assert_allclose(mindgrad.grad(lambda v: np.sum(softsign(v)))(x),
                                   1.0 / (1.0 + np.abs(x)) ** 2, rtol=1e-12)
        _, tangent = mindgrad.jvp(softsign, (x,), (np.ones(4),))
        np.testing.assert_allclose(tangent, 1.0 / (1.0 + np.abs(x)) ** 2, rtol=1e-12)
        mindgrad.check_grads(_uses_softsign, (x,), modes=("rev", "fwd"), order=2)


def test_a_derived_rule_runs_directly_before_any_other_use():
    rule = Rule(np.tanh, rules.lookup(np.tanh).template, lazy=True, from_slopes=True)
    assert rule.runnable.__code__.co_varnames[:2] == ("out", "x")
    x = np.array([0.2, -1.1])
    _, vjp = rules.vjp_of(np.tanh, x)
    np.testing.assert_allclose(vjp(np.ones(2))[0], 1.0 - np.tanh(x) ** 2, rtol=1e-12)


def _shift(a, k, scale=1.0):
    return scale * np.roll(a, k)


def _bilinear(a, b):
    return np.outer(a, b)


def test_linear_derives_the_tangent_from_the_signature():
    @rules.linear(_shift)
    @rules.adjoint(_shift)
    def _(out, a, k, scale=1.0):
        d[a] = scale * np.roll(d[out], -k)

    @rules.linear(_bilinear, wrt=("a", "b"))
    @rules.adjoint(_bilinear)
    def _(out, a, b):
        d[a] = d[out] @ b
        d[b] = a @ d[out]

    with _removed_after(_shift, _bilinear):
        assert unparse(rules.lookup_tangent(_shift).body).strip() == \
            "d[out] = _shift(d[a], k, scale)"
        assert unparse(rules.lookup_tangent(_bilinear).body).strip().splitlines() == \
            ["d[out] = _bilinear(d[a], b)", "d[out] = _bilinear(a, d[b])"]
        a, b = np.array([0.3, -1.2, 2.0]), np.array([0.7, 1.1])
        _, tangent = mindgrad.jvp(lambda u: _shift(u, 1, 2.5), (a,), (np.array([1.0, 2, 3]),))
        np.testing.assert_allclose(tangent, 2.5 * np.array([3.0, 1, 2]))
        _, tangent = mindgrad.jvp(_bilinear, (a, b), (np.ones(3), np.zeros(2)))
        np.testing.assert_allclose(tangent, np.outer(np.ones(3), b))

        def loss(u, v):
            return np.sum(np.sin(_bilinear(_shift(u, 2, scale=0.5), v)))

        mindgrad.check_grads(loss, (a, b), modes=("rev", "fwd"), order=2)


def test_linear_refuses_a_parameter_the_template_lacks():
    def f(a):
        return a

    def template(out, a):
        d[a] = d[out]

    with pytest.raises(rules.RuleError, match="names 'b', which is not a parameter"):
        rules.linear(f, wrt="b")(template)
    assert rules.lookup_tangent(f) is None  # nothing half-registered


# ----- slopes of several arguments, constant slopes, @diagonal, @linear(via=), @linear_in -----


def _ratio(x, y):
    return x / (1.0 + y * y)


def _shifted(x, y):
    return x + 2.0 * y


def _uses_ratio(x, y):
    return np.sum(np.sin(_ratio(x, y)))


def _uses_shifted(x, y):
    return np.sum(np.sin(_shifted(x, y)) * _shifted(x, y))


def test_slopes_of_two_arguments_sum_gradients_back_and_broadcast_tangents():
    @rules.elementwise(_ratio)
    def _(out, x, y):
        den = 1.0 + y * y
        slope[x] = 1.0 / den
        slope[y] = -2.0 * out * y / den

    @rules.elementwise(_shifted)
    def _(out, x, y):
        slope[x] = 1
        slope[y] = 2.0

    with _removed_after(_ratio, _shifted):
        assert _as_products(rules.lookup(_ratio)).strip().splitlines() == [
            "den = 1.0 + y * y", "d[x] = unbroadcast(d[out] / den, x)",
            "d[y] = unbroadcast(-d[out] * 2.0 * out * y / den, y)"]
        # x's slope reads only y, through a temporary: the product has the output's shape
        assert unparse(rules.lookup_tangent(_ratio).body).strip().splitlines() == [
            "den = 1.0 + y * y", "d[out] = d[x] / den",
            "d[out] = -d[y] * 2.0 * out * y / den"]
        # slopes reading neither the output nor the other argument: broadcast to the output
        assert unparse(rules.lookup_tangent(_shifted).body).strip().splitlines() == [
            "d[out] = broadcast_tangent(d[x], out)",
            "d[out] = broadcast_tangent(d[y] * 2.0, out)"]
        for shapes in [((3,), (3,)), ((3, 1), (4,)), ((), (2, 3)), ((2, 3), ())]:
            args = tuple(np.linspace(-1.0, 1.5, int(np.prod(s))).reshape(s) for s in shapes)
            mindgrad.check_grads(_uses_ratio, args, modes=("rev", "fwd"), order=2)
            mindgrad.check_grads(_uses_shifted, args, modes=("rev", "fwd"), order=2)
            x, y = args
            _, t = mindgrad.jvp(_shifted, (x, y), (np.ones_like(x), np.zeros_like(y)))
            assert np.shape(t) == np.broadcast_shapes(np.shape(x), np.shape(y))


def test_math_functions_take_numbers_nothing_to_unbroadcast():
    assert _as_products(rules.lookup(math.pow)).strip().splitlines() == [
        "d[x] = d[out] * y * power(x, y - 1.0 + (y == 0))",
        "d[y] = d[out] * out * math.log(x + (x == 0))"]
    assert unparse(rules.lookup_tangent(math.atan2).body).strip().splitlines() == [
        "d[out] = times_slope(d[y], quotient(x, x * x + y * y))",
        "d[out] = times_slope(d[x], quotient(-y, x * x + y * y))"]


def test_a_constant_slope_is_one_factor():
    assert unparse(rules.lookup(np.deg2rad).body).strip() == "d[x] = d[out] * (math.pi / 180.0)"
    assert unparse(rules.lookup_tangent(np.rad2deg).body).strip() == \
        "d[out] = d[x] * (180.0 / math.pi)"


def test_math_log_gives_its_base_a_gradient():
    # the adjoint once had no statement for base: d/dbase log(8, base) came out 0
    g = mindgrad.grad(lambda b: math.log(8.0, b))(2.0)
    np.testing.assert_allclose(g, -math.log(8.0) / (2.0 * math.log(2.0) ** 2), rtol=1e-12)
    mindgrad.check_grads(lambda x, b: math.log(x, b), (3.0, 1.7), modes=("rev", "fwd"), order=2)


def _gate(x, y):
    return np.where(x > y, x, 0.0 * x)


def test_diagonal_reads_the_adjoint_forwards():
    @rules.diagonal(_gate)
    @rules.adjoint(_gate)
    def _(out, x, y):
        d[x] = unbroadcast(np.where(x > y, d[out], d[out] * 0), x)

    with _removed_after(_gate):
        assert unparse(rules.lookup_tangent(_gate).body).strip() == \
            "d[out] = broadcast_tangent(np.where(x > y, d[x], d[x] * 0), out)"
        x, y = np.array([[0.5, -1.0, 2.0]]), np.array([[0.0], [1.0]])
        _, t = mindgrad.jvp(lambda a: _gate(a, y), (x,), (np.ones_like(x),))
        np.testing.assert_array_equal(t, np.where(x > y, 1.0, 0.0))


def test_diagonal_refuses_a_statement_that_does_not_read_the_gradient():
    def f(x):
        return x

    def template(out, x):
        d[x] = x

    with pytest.raises(RuleError, match="must read d\\[out\\]"):
        rules.diagonal(f)(template)
    rules._TANGENTS.pop(f, None)


def test_linear_via_another_function_and_without_the_out_buffer():
    import operator

    assert unparse(rules.lookup_tangent(operator.matmul).body).strip().splitlines() == [
        "d[out] = np.matmul(d[x], y)", "d[out] = np.matmul(x, d[y])"]
    assert unparse(rules.lookup_tangent_method("dot").body).strip().splitlines() == [
        "d[ans] = np.dot(d[a], b)", "d[ans] = np.dot(a, d[b])"]
    # np.outer(a, b, out=None): the buffer is not passed on
    assert unparse(rules.lookup_tangent(np.outer).body).strip().splitlines() == [
        "d[ans] = np.outer(d[a], b)", "d[ans] = np.outer(a, d[b])"]
    # a method of a ufunc is spelled through the ufunc
    assert unparse(rules.lookup_tangent(np.multiply.outer).body).strip().splitlines() == [
        "d[out] = np.multiply.outer(d[a], b)", "d[out] = np.multiply.outer(a, d[b])"]
    a, b = np.array([1.0, 2.0]), np.array([[0.5, -1.0], [2.0, 3.0]])
    _, t = mindgrad.jvp(lambda u: u.dot(b), (a,), (np.array([1.0, 0.0]),))
    np.testing.assert_allclose(t, b[0])


def _blend(g, w, k=2):
    return g * w[:k]


def test_linear_in_derives_a_helpers_tangent_and_declares_its_zero():
    rules.linear_in("g", "w")(_blend)
    with _removed_after(_blend):
        rule = rules.lookup_tangent(_blend)
        assert rule.derived and rule.params == ["g", "w", "k"]
        assert unparse(rule.body).strip().splitlines() == [
            "d[out] = _blend(d[g], w, k)", "d[out] = _blend(g, d[w], k)"]
        assert _blend.zero_in_zero_out == ("g", "w")
        assert not hasattr(_blend, "keeps_values")
        g, w = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])
        _, jvp = rules.jvp_of(_blend, g, w)
        np.testing.assert_allclose(jvp(np.ones(2), np.ones(3)), g + w[:2])


def test_a_helper_with_a_parameter_named_out_gets_another_output_name():
    from mindgrad.rules.helpers import array_grad

    rule = rules.lookup_tangent(array_grad)
    assert rule.out == "ans" and unparse(rule.body).strip() == \
        "d[ans] = array_grad(d[g], obj, out)"


# ----- symbolic zeros: a rule runs directly as generated code runs it ------------------------


def test_vjp_of_skips_a_rule_that_cannot_take_a_zero_gradient():
    from mindgrad.rules.operators import matmul_grad_x

    assert matmul_grad_x.zero_in_zero_out == ("g", "y")  # it holds no zero test of its own
    x, y = np.ones((2, 3)), np.ones((3, 4))
    _, vjp = rules.vjp_of(np.matmul, x, y)
    assert vjp(0) == (0, 0)
    np.testing.assert_allclose(vjp(np.ones((2, 4)))[0], np.full((2, 3), 4.0))


def test_jvp_of_runs_only_the_statements_of_inputs_with_tangents():
    from mindgrad.rules.operators import matmul_grad_x

    rule = rules.lookup_tangent(matmul_grad_x)
    assert [unparse(s).strip() for s in rule.reading({"y"})] == \
        ["d[out] = matmul_grad_x(g, x, d[y])"]
    assert rule.reading(set()) == []
    g, x, y = np.ones((2, 4)), np.ones((2, 3)), np.ones((3, 4))
    _, jvp = rules.jvp_of(matmul_grad_x, g, x, y)
    np.testing.assert_allclose(jvp(None, None, np.full((3, 4), 2.0)), np.full((2, 3), 8.0))
    np.testing.assert_allclose(jvp(np.ones((2, 4)), None, None), np.full((2, 3), 4.0))


def test_method_and_attribute_keys_go_to_the_three_decorators():
    """``Method`` and ``Attr`` name the rules of array methods and attributes; ``adjoint``,
    ``tangent`` and ``linear`` take them as they take functions, and a user's rule for a
    method without one (``x.compress``) differentiates it in both modes."""
    from mindgrad.rules import Attr, Method, adjoint, tangent

    assert Method("sum") == ("method", "sum") and hash(Method("sum")) == hash(("method", "sum"))
    assert Attr("T").name == "T" and repr(Attr("T")) == "Attr('T')"
    assert rules.lookup(Method("sum")) is rules.lookup_method("sum")
    assert rules.lookup_tangent(Attr("T")) is rules.lookup_tangent_attr("T")
    with pytest.raises(TypeError, match="name of an array method"):
        Method("not a name")
    assert rules.lookup_method("compress") is None

    def compressed(x):
        return np.sum(np.sin(x.compress([True, False, True])))

    x, v = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -2.0])
    with _removed_after(Method("compress")):
        @adjoint(Method("compress"))
        def _(out, a, condition, axis=None, out_=None):
            d[a] = rules_take_back(d[out], a, condition)

        @tangent(Method("compress"))
        def _(out, a, condition, axis=None, out_=None):
            d[out] = np.compress(condition, d[a], axis)

        expected = np.cos(x) * np.array([1.0, 0.0, 1.0])
        np.testing.assert_allclose(mindgrad.grad(compressed)(x), expected, rtol=1e-12)
        _, t = mindgrad.jvp(compressed, (x,), (v,))
        np.testing.assert_allclose(t, expected @ v, rtol=1e-12)
    assert rules.lookup_method("compress") is None


def rules_take_back(g, a, condition):
    """The gradient of ``a.compress(condition)``: ``g`` put back where ``condition`` holds."""
    out = np.zeros(np.shape(a))
    out[np.flatnonzero(condition)] = g
    return out


# ----- @transpose: the adjoint of a tangent that calls a linear helper -----------------------

TRANSPOSED = [
    ((np.reshape, np.ravel, ("method", "ravel"), ("method", "flatten"), ("method", "reshape")),
     "d[a] = reshape_grad(d[out], a, order)"),
    ((np.arange,), "d[args] = arange_grads(d[out], args, out)"),
    (((("method", "transpose")),), "d[a] = transpose_grad(d[out], method_transpose_axes(axes))"),
    # np.mean's rule reads its argument a for its shape: the primal a stands in for d[a]
    ((np.nanmean,),
     "d[a] = reduce_mean_grad(d[ans], a, axis, keepdims, np.logical_and(where, ~np.isnan(a)))"),
    # the helper's rule calls nd.draw_grad: named as nondiff.py names it
    ((np.random.permutation,), "d[x] = draw_grad(d[out], x, out)"),
    ((np.random.choice,), "d[a] = draw_grad(d[out], a, out)"),
]


@pytest.mark.parametrize("keys, text", TRANSPOSED,
                         ids=["reshape", "arange", "transpose", "nanmean", "permutation", "choice"])
def test_transposed_adjoints_are_the_ones_once_written_by_hand(keys, text):
    for key in keys:
        rule = rules.lookup(key)
        assert rule.transposed and rule.derived
        assert unparse(rule.body).strip() == text


def roll_twice(x, k):
    return np.roll(np.roll(x, k), k)


def test_a_users_tangent_transposed_gives_the_gradient():
    """A function with rules of its own: the tangent written once, the adjoint transposed
    from it through np.roll's rule; both checked against central differences."""
    from mindgrad.rules import tangent, transpose

    with _removed_after(roll_twice):
        @transpose(roll_twice)
        @tangent(roll_twice)
        def _(out, x, k):
            d[out] = np.roll(d[x], 2 * k)

        assert unparse(rules.lookup(roll_twice).body).strip() == \
            "d[x] = np.roll(d[out], np.negative(2 * k), None)"
        x = np.array([0.3, -1.2, 2.0, 0.7])
        mindgrad.check_grads(lambda x: np.sin(roll_twice(x, 1)) * x, (x,), modes=("rev", "fwd"),
                             order=2)


def running_total(x):
    return np.cumsum(x, 0)


def test_a_transposed_rule_reads_the_primal_where_the_helpers_rule_reads_its_argument():
    """np.cumsum's rule reads its argument for its shape (cumsum_grad(d[ans], a, axis)); the
    transpose of a tangent calling it reads the primal there, of the tangent's shape."""
    from mindgrad.rules import tangent, transpose

    with _removed_after(running_total):
        @transpose(running_total)
        @tangent(running_total)
        def _(out, x):
            d[out] = np.cumsum(d[x], 0)

        assert unparse(rules.lookup(running_total).body).strip() == \
            "d[x] = cumsum_grad(d[out], x, 0)"
        for x in (np.array([0.3, -1.2, 2.0]), np.array([[0.3, -1.2], [2.0, 0.5]]),
                  np.array([0.7], dtype=np.float32)):
            mindgrad.check_grads(lambda x: np.sin(running_total(x)) * x, (x,),
                                 modes=("rev", "fwd"), order=2)


def _scale_tangent(t, c):
    return t * c


def _not_one_call(out, x, k):
    d[out] = np.roll(d[x], k) * 2.0


def _tangent_inside(out, x, k):
    d[out] = np.roll(d[x] * 2.0, k)


def _helper_without_adjoint(out, x, k):
    d[out] = _scale_tangent(d[x], k)


def _adjoint_with_temporaries(out, x, k):
    d[out] = np.clip(d[x], 0.0, k)  # np.clip's rule computes its bounds first


def _tangent_to_a_star_parameter(out, x, k):
    d[out] = np.atleast_1d(d[x])  # np.atleast_1d's rule takes *arys


def _temporary_reads_the_tangent(out, x, k):
    t = d[x] * 2.0
    d[out] = np.roll(t, k)


@pytest.mark.parametrize("template, words", [
    (_not_one_call, "one call of a function linear"),
    (_tangent_inside, "one tangent, d\\[x\\], as an argument of its own"),
    (_helper_without_adjoint, "no adjoint rule to transpose it by"),
    (_adjoint_with_temporaries, "the adjoint of clip has temporaries"),
    (_temporary_reads_the_tangent, "a temporary may not read"),
    (_tangent_to_a_star_parameter, "must go to a parameter of atleast_1d of its own"),
], ids=lambda v: v.__name__.strip("_") if callable(v) else "")
def test_a_tangent_that_cannot_be_transposed_is_refused_at_its_decorator(template, words):
    from mindgrad.rules import tangent, transpose

    def target(x, k):
        return x

    with _removed_after(target):
        with pytest.raises(RuleError, match=words):
            transpose(target)(tangent(target)(template))


def _times(t, c):
    return t * c


UNIT = 1.0  # a global the rule of _times reads


def test_a_transposed_rule_refuses_a_helpers_global_named_as_its_own_parameter():
    """The rule of ``h`` reads its module's ``UNIT``; a tangent template with a parameter
    ``UNIT`` would read its own argument there: refused, not bound to the wrong value."""
    from mindgrad.rules import adjoint, tangent, transpose

    def target(x, UNIT):
        return x

    def template(out, x, UNIT):
        d[out] = _times(d[x], UNIT)

    template.__module__ = __name__
    with _removed_after(_times, target):
        @adjoint(_times)
        def _(out, t, c):
            d[t] = d[out] * c * UNIT

        with pytest.raises(RuleError, match="reads UNIT, a name of the tangent template"):
            transpose(target)(tangent(target)(template))


# ----- the symbolic zero: mindgrad's rules take it, a user's rule may be guarded ---------------


def _every_table_rule():
    import importlib

    for name in ("scipy_special", "scipy_stats", "scipy_linalg", "scipy_signal",
                 "scipy_integrate"):
        with contextlib.suppress(ImportError):  # SciPy is optional
            importlib.import_module(f"mindgrad.rules.{name}")
    for table in (rules._RULES, rules._TANGENTS, rules._TRANSPOSES):
        yield from table.values()


def test_no_rule_of_mindgrad_runs_under_a_zero_guard():
    # every helper a template passes the gradient (or tangent) to takes the symbolic zero:
    # mindgrad.runtime, NumPy's linear functions (runtime.Zero's protocol) or a helper declared
    # runtime.zero_in_zero_out; so generated code has no `if not is_zero(d_v, v):` of its rules,
    # and tests/rules/test_zero_cotangent.py runs every one of them at the zero
    guarded = sorted({f"{rule.kind} rule for {rule.name}" for rule in _every_table_rule()
                      if rule.reads_zero_unsafely})
    assert not guarded, guarded


def user_cube(x):
    return x ** 3


def _cube_slope_times(g, x):
    """A helper of the user's that needs an array: the symbolic zero's shape is unknown."""
    return np.reshape(np.asarray(g) * 3.0 * x * x, np.shape(x))


@zero_in_zero_out("g")
def _cube_slope_times_declared(g, x):
    if zero_in(g):
        return zero
    return np.reshape(np.asarray(g) * 3.0 * x * x, np.shape(x))


def _cube_rule(out, x):
    d[x] = _cube_slope_times(d[out], x)


def _cube_rule_declared(out, x):
    d[x] = _cube_slope_times_declared(d[out], x)


def _unused_on_the_branch_taken(x):
    c = user_cube(x)
    if np.sum(x) > 0.0:
        return np.sum(np.sin(x))
    return np.sum(c)


@pytest.mark.parametrize("declared", [False, True])
def test_a_user_rule_passing_the_gradient_to_its_own_helper(declared):
    # a helper the analysis does not know runs only on a value (the guard); one declared as
    # mindgrad's own are (runtime.zero_in_zero_out, a first test) runs unguarded
    x = np.array([0.4, 1.3, -0.2])
    with _removed_after(user_cube):
        rules.adjoint(user_cube)(_cube_rule_declared if declared else _cube_rule)
        assert rules.lookup(user_cube).reads_zero_unsafely is not declared
        gradient = mindgrad.grad(_unused_on_the_branch_taken)
        assert ("is_zero(" in gradient.source(x)) is not declared
        np.testing.assert_allclose(gradient(x), np.cos(x), rtol=1e-12)
        np.testing.assert_allclose(mindgrad.grad(_unused_on_the_branch_taken)(-x),
                                   3.0 * x * x, rtol=1e-12)
