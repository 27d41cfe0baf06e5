"""Generated source is safe and right whatever the user's source holds: comments stay one line,
string literals with line-breaking characters round-trip, user values reach generated code as
bindings (never as ``repr`` text), and long or deeply nested expressions build."""

import gast
import numpy as np
import pytest

import mindgrad
from mindgrad.testing import check_grads
from mindgrad.transform import emit

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
