"""Generated source is safe and right whatever the user's source holds: comments stay one line,
string literals with line-breaking characters round-trip, user values reach generated code as
bindings (never as ``repr`` text), and long or deeply nested expressions build."""

import math
from typing import ClassVar

import gast
import numpy as np
import pytest

import mindgrad
from mindgrad.api.check import check_grads
from mindgrad.compiler.finish import emit
from mindgrad.errors import UnsupportedSyntaxError

# every character that str.splitlines() or Python's tokenizer reads as a line break
LINE_BREAKS = ["\u2028", "\u2029", "\x0c", "\x0b", "\x85", "\x1c", "\x1d", "\x1e", "\r", "\n",
               "\r\n"]
# those that can stand inside one line of a Python file (\r and \n end the line for Python)
IN_FILE = LINE_BREAKS[:8]


def _define(tmp_path, text, name, **namespace):
    """``name`` defined by ``text``, written byte for byte to a file of its own."""
    path = tmp_path / f"{name}_{abs(hash(text))}.py"
    path.write_text(text, encoding="utf-8", newline="")
    namespace.setdefault("np", np)
    exec(compile(text, str(path), "exec"), namespace)  # noqa: S102
    return namespace[name]


def _all_modes(f, x):
    """f through grad, value_and_grad, jvp and grad of grad, each against an independent oracle."""
    check_grads(f, (x,), modes=("rev", "fwd"), order=2)
    value, g = mindgrad.value_and_grad(f)(x)
    np.testing.assert_allclose(value, f(x))
    return g


# ----- comments and string literals ------------------------------------------------------------


@pytest.mark.parametrize("ch", LINE_BREAKS, ids=repr)
def test_generated_comment_is_one_line(ch):
    text = emit.unparse([emit.comment("grad of: y = x  # note" + ch + "    flag.append(1)")])
    assert len(text.splitlines()) == 1
    assert "flag" in text and text.startswith("# grad of:")


@pytest.mark.parametrize("ch", LINE_BREAKS, ids=repr)
def test_compiled_comment_runs_nothing(ch):
    flag = []
    g = gast.parse("def g(x):\n    return x\n").body[0]
    g.body.insert(0, emit.comment("grad of: note" + ch + "    flag.append(1)"))
    text = emit.unparse(g)
    made, _ = emit.compile_functions(text, ["g"], {}, {"flag": flag}, {}, "comment")
    assert made["g"](3.0) == 3.0 and flag == []


@pytest.mark.parametrize("ch", IN_FILE, ids=repr)
def test_comment_with_line_break_is_never_run(tmp_path, ch):
    flag = []
    f = _define(tmp_path, "def f(x):\n"
                          f"    y = x * x * 2.0  # note{ch}    flag.append(1)\n"
                          "    return np.sum(np.sin(y))\n", "f", flag=flag)
    x = np.array([0.3, -1.2, 0.7])
    g = _all_modes(f, x)
    np.testing.assert_allclose(g, np.cos(2 * x * x) * 4 * x)
    assert flag == []
    source = mindgrad.grad(f).source(x)
    assert "flag" in source  # the comment is there, escaped, on one line
    assert all(line.lstrip().startswith("#") for line in source.splitlines() if "flag" in line)


@pytest.mark.parametrize("ch", IN_FILE, ids=repr)
def test_string_literals_with_line_breaks_emit_and_run(tmp_path, ch):
    f = _define(tmp_path, "def f(x):\n"
                          f"    s = 'a{ch}b\\\\'\n"
                          f"    t = f'{{s}}{ch}z\\\\n{{len(s)!r:>3}}'\n"
                          f"    y = x * x * len(s) * len(t) * len('q{ch}')\n"
                          "    return np.sum(y)\n", "f")
    x = np.array([0.5, -2.0])
    scale = 4 * 11 * 2  # len(s), len(t) (s, <ch>, z, backslash, n, '  4'), len('q<ch>')
    assert f(x) == pytest.approx(scale * np.sum(x * x))
    np.testing.assert_allclose(_all_modes(f, x), 2 * scale * x)


def test_fstring_keeps_backslashes_and_braces(tmp_path):
    f = _define(tmp_path, "def f(x):\n"
                          "    s = f'a\\\\b{{c}}{len(\"xy\")}\\t'\n"
                          "    return np.sum(x * len(s))\n", "f")
    assert f(np.ones(2)) == 2 * 8  # a, backslash, b, {, c, }, 2, tab
    np.testing.assert_allclose(mindgrad.grad(f)(np.ones(2)), [8.0, 8.0])


# ----- user values reach generated code as bindings, never as text -----------------------------


class _Hostile:
    """A dict key whose repr is code: it must never be written into source."""

    ran: ClassVar[list] = []

    def __init__(self, n):
        self.n = n

    def __hash__(self):
        return hash(self.n)

    def __eq__(self, other):
        return isinstance(other, _Hostile) and other.n == self.n

    def __repr__(self):
        return "__import__('tests.test_emission').test_emission._Hostile.ran.append(1) or 'w'"

    __float__ = lambda self: float(self.n)


def _with_hostile_key(p):
    return np.sum(np.sin(p[_KEY]) * p["b"] ** 2) + np.sum(p["c"][0] * p[_KEY])


_KEY = _Hostile(1)


def test_check_grads_second_order_binds_dict_keys():
    _Hostile.ran.clear()
    p = {_KEY: np.array([0.3, 0.4]), "b": np.array([1.5, -0.5]), "c": [np.array([0.2, 0.1])]}
    check_grads(_with_hostile_key, (p,), modes=("rev", "fwd"), order=3)
    assert _Hostile.ran == []


def _keyworded(x, **kw):
    return np.sum(x * x) * len(kw)


@pytest.mark.parametrize("key", ["a=1)\nimport os\nos.getcwd(", "if", "x y"])
def test_check_grads_refuses_keywords_that_are_not_names(key):
    with pytest.raises(ValueError, match="not a name"):
        check_grads(_keyworded, (np.ones(2),), kwargs={key: 1.0}, modes=("fwd",), order=2)


class _Boxed:
    """A default that is neither a number nor an array."""

    def __init__(self, v):
        self.v = v

    def __repr__(self):
        raise AssertionError("a default's repr must not be taken")


def _h_nan(x, a=float("nan")):
    return x * 2.0 if math.isnan(a) else x


def _h_inf(x, a=float("inf"), b=-float("inf")):
    return x * 3.0 if a > 1e308 and b < -1e308 else x


def _h_negzero(x, a=-0.0):
    return x * np.copysign(1.0, a)


def _h_float32(x, a=np.float32(1.5)):  # noqa: B008
    return x * a


def _h_float64(x, a=np.float64(2.5), b=np.int64(3)):  # noqa: B008
    return x * a * b


def _h_object(x, a=_Boxed(4.0)):  # noqa: B008
    return x * a.v


def _h_tuple(x, a=(1.0, float("nan"), np.float64(2.0))):  # noqa: B008
    return x * a[0] * a[2] if math.isnan(a[1]) else x


def _h_huge(x, a=10 ** 5000):
    return x * 1.5 if a > 5 else x


def _h_bool_none(x, a=True, b=None):
    return x * 5.0 if a and b is None else x


HELPERS = [(_h_nan, 2.0), (_h_inf, 3.0), (_h_negzero, -1.0), (_h_float32, 1.5),
           (_h_float64, 7.5), (_h_object, 4.0), (_h_tuple, 2.0), (_h_huge, 1.5),
           (_h_bool_none, 5.0)]


@pytest.mark.parametrize("helper,scale", HELPERS, ids=lambda h: getattr(h, "__name__", ""))
def test_helper_defaults_of_every_kind(helper, scale):
    def f(x):
        return np.sum(helper(x) * x)

    for x in (np.array([0.5, -2.0, 1.25]), 0.75, np.array([[0.5], [1.5]], dtype=np.float32)):
        g = mindgrad.grad(f)(x)
        np.testing.assert_allclose(g, 2 * scale * np.asarray(x), rtol=1e-6)
        assert np.asarray(g).dtype == np.asarray(x).dtype
    _all_modes(f, np.array([0.5, -2.0, 1.25]))


def test_unparse_refuses_what_is_not_a_literal():
    for value in (float("nan"), np.float64(1.0), _Boxed(1.0), 10 ** 5000, (1, 2)):
        with pytest.raises(TypeError, match="bound by name"):
            emit.unparse([gast.Expr(value=gast.Constant(value=value, kind=None))])


def test_unparse_negative_zero_keeps_its_sign():
    pow_ = gast.BinOp(left=gast.Constant(value=-0.0, kind=None), op=gast.Pow(),
                      right=gast.Constant(value=2, kind=None))
    text = emit.unparse([gast.Expr(value=pow_)]).strip()
    assert eval(text) == (-0.0) ** 2 and np.copysign(1, eval(text)) == 1


# ----- long and deeply nested expressions ------------------------------------------------------


def _long(tmp_path, name, expr, **namespace):
    return _define(tmp_path, f"def {name}(x):\n    return np.sum({expr})\n", name, **namespace)


@pytest.mark.parametrize("n", [300, 1000])
def test_long_sum_builds(tmp_path, n):
    f = _long(tmp_path, "long_sum", "np.sin(" + " + ".join(["x"] * n) + ")")
    x, v = np.array([0.5, -2.0, 1.25]), np.array([1.0, 0.5, -1.0])
    points = (x, 0.75, np.array([[0.5], [1.5]], dtype=np.float32)) if n < 1000 else (x,)
    for point in points:
        value, g = mindgrad.value_and_grad(f)(point)
        assert value == f(point)  # the same operations in the same order
        np.testing.assert_allclose(g, n * np.cos(n * np.asarray(point)), rtol=1e-4)
    _, t = mindgrad.jvp(f, (x,), (v,))
    np.testing.assert_allclose(t, np.sum(n * np.cos(n * x) * v))


def test_long_sum_second_order(tmp_path):
    n = 300
    f = _long(tmp_path, "long_sum2", "np.sin(" + " + ".join(["x"] * n) + ")")
    x, v = np.array([0.5, -2.0, 1.25]), np.array([1.0, 0.5, -1.0])
    _, hv = mindgrad.jvp(mindgrad.grad(f), (x,), (v,))
    np.testing.assert_allclose(hv, -n * n * np.sin(n * x) * v)


NESTED = {
    "left parentheses": "(" * 100 + "np.sin(x)" + " * 1.01)" * 100,
    "right parentheses": "1.01 * (" * 100 + "np.sin(x)" + ")" * 100,
    "calls": "np.sin(" * 100 + "x" + ")" * 100,
    "unary": "- " * 100 + "np.sin(x)",
    "power tower": " ** ".join(["x"] * 40),
}


@pytest.mark.parametrize("expr", NESTED.values(), ids=NESTED.keys())
def test_deeply_nested_expression(tmp_path, expr):
    f = _long(tmp_path, "nested", expr)
    x = np.array([0.9, 1.05, 1.2])
    check_grads(f, (x,), modes=("rev", "fwd"), order=2)
    assert mindgrad.value_and_grad(f)(x)[0] == f(x)


def test_deep_expression_that_cannot_be_split_is_a_located_error(tmp_path):
    # g(x) runs before the nested product: moving the product out would run it first
    text = "def deep(x):\n    return np.sum(g(x) * (" + "x * (" * 60 + "x" + ")" * 60 + "))\n"
    f = _define(tmp_path, text, "deep", g=lambda t: t * 2.0)
    with pytest.raises(UnsupportedSyntaxError, match="nests 6[0-9] operations deep") as info:
        mindgrad.grad(f)(np.ones(2))
    assert info.value.lineno == 2 and info.value.filename.endswith(".py")


def test_generated_functions_are_named_as_written_not_inside_their_factory():
    # IPython and Jupyter print a frame by its code's qualified name: it showed
    # __mindgrad_bindings__.<locals>.grad_loss
    made, _ = emit.compile_functions("def grad_loss(x):\n    return helper(x)\n\n"
                                     "def helper(x):\n    return 2 * x\n",
                                     ["grad_loss", "helper"], {}, {}, {}, "loss")
    for name, fn in made.items():
        assert fn.__qualname__ == name
        if hasattr(fn.__code__, "co_qualname"):  # Python 3.11+
            assert fn.__code__.co_qualname == name
    assert made["grad_loss"](3.0) == 6.0
