"""Errors raised while a gradient runs point at the user's file, line and text.

Each printer is run as users run it: Python's default excepthook and ``traceback.format_exc()``
in a subprocess of the interpreter running the tests (so each supported Python is checked
where the suite runs), IPython's own formatter where IPython is installed."""

import inspect
import os
import pathlib
import re
import subprocess
import sys
import textwrap
import traceback
import warnings

import numpy as np
import pytest

import mindgrad
from mindgrad.compiler.finish import emit

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = str(ROOT / "mindgrad") + os.sep

# the user's module every subprocess imports: each error below is at one of its marked lines
MODEL = '''\
import numpy as np
import mindgrad
from mindgrad import nn


def layer(x, w):
    h = x @ w  # LAYER
    return np.tanh(h)


def model(x, w):
    y = layer(x, w)  # MODEL
    return np.sum(y ** 2)


def top(x, w):
    return np.sum(x @ w)  # TOP


def checked(value):
    if value.shape != (3,):
        raise ValueError(f"checked got shape {value.shape}")  # CHECKED
    return value


def scale(x):
    return 2.0 * x


@mindgrad.adjoint(scale)
def _(out, x):
    mindgrad.d[x] = checked(mindgrad.d[out]) * 2.0  # RULE


def backward(x):
    y = scale(x)  # BACKWARD
    return np.sum(y)


def recursive(x, n):
    if n > 0:
        return recursive(x * 2.0, n - 1)
    return np.sum(x @ np.ones((5, 2)))  # RECURSIVE


def outer(x, w):
    def inner(v):
        return v @ w  # INLINED
    return np.sum(inner(x))


def no_rule(x):
    return np.sum(np.i0(x))  # NO_RULE


def unsupported(x):
    with open("data") as f:  # UNSUPPORTED
        pass
    return x


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = mindgrad.Parameter(np.ones((5, 2)), name="w")

    def construct(self, x):
        h = x @ self.w  # CELL
        return np.sum(h)
'''


def line_of(marker):
    return next(i for i, line in enumerate(MODEL.splitlines(), 1) if line.endswith(f"# {marker}"))


def run(tmp_path, main, env=None):
    """Run ``main`` (with the user's module importable) in a subprocess: (stdout, stderr)."""
    (tmp_path / "usermodel.py").write_text(MODEL)
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent(main))
    environment = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"}
    environment.pop("MINDGRAD_TRACEBACK_FILTERING", None)
    environment.update(env or {})
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=environment, cwd=tmp_path, timeout=120)
    return done.stdout, done.stderr


def printed_lines(text):
    """The lines of a printed traceback, without those only underlining the one above."""
    return [line for line in text.splitlines() if line.strip(" ^~")]


def mindgrad_frames(text):
    return [line for line in text.splitlines()
            if line.strip().startswith(f'File "{PACKAGE}')]


def assert_points_at_user(text, path, marker, function, generated_text):
    """``text``, a printed traceback, shows the user's file, line, function and text at
    ``marker``, the generated frame run for it, and at most one frame of mindgrad's."""
    lineno = line_of(marker)
    expected = f'File "{path}", line {lineno}, in {function}'
    assert expected in text, text
    user_line = MODEL.splitlines()[lineno - 1].strip()
    after = text.split(expected, 1)[1].splitlines()
    assert after[1].strip() == user_line, text  # the line's text, right under it
    assert re.search(r'File "<mindgrad [^"]+>", line \d+, in \w+', text), text
    if sys.version_info >= (3, 11):  # the note names the user's and the generated line
        assert f"mindgrad: raised at {path}:{lineno} in {function}: {user_line}" in text, text
        assert re.search(r"generated code: <mindgrad [^>]+>:\d+ in \w+: .*"
                         + re.escape(generated_text), text), text
    assert len(mindgrad_frames(text)) <= 1, text


def test_the_default_excepthook_shows_the_users_line(tmp_path):
    out, err = run(tmp_path, """
        import numpy as np, mindgrad, usermodel
        mindgrad.grad(usermodel.model, 1)(np.ones((3, 4)), np.ones((5, 2)))
    """)
    path = tmp_path / "usermodel.py"
    assert_points_at_user(err, path, "LAYER", "layer", "h = x @ w")
    assert f'File "{path}", line {line_of("MODEL")}, in model' in err
    assert err.rstrip().splitlines()[-3 if sys.version_info >= (3, 11) else -1].startswith(
        "ValueError: matmul: Input operand 1 has a mismatch")
    assert "During handling" not in err and len(printed_lines(err)) <= 16, err


# name -> (the call failing, marker, function at the marker, generated text there)
CASES = {
    "top": ("mindgrad.grad(usermodel.top, 1)(x, w)", "TOP", "top", "x @ w"),
    "callee": ("mindgrad.grad(usermodel.model, 1)(x, w)", "LAYER", "layer", "h = x @ w"),
    "backward": ("mindgrad.grad(usermodel.backward)(np.ones(4))",
                 "BACKWARD", "backward", "checked("),
    "jvp": ("mindgrad.jvp(usermodel.model, (x, w), (x, w))", "LAYER", "layer", "h = x @ w"),
    "jacfwd": ("mindgrad.jacfwd(usermodel.model, 1)(x, w)", "LAYER", "layer", "h = x @ w"),
    "vjp": ("mindgrad.vjp(usermodel.model, x, w)", "LAYER", "layer", "h = x @ w"),
    "cell": ("mindgrad.grad(usermodel.Net(), None, usermodel.Net().trainable_params())(x)",
             "CELL", "construct", "x @ self.w"),
    # a local function is inlined: its lines are the user's, in the function holding it
    "inlined": ("mindgrad.grad(usermodel.outer, 1)(x, w)", "INLINED", "outer", "@ w"),
    "vjp_backward": ("mindgrad.vjp(usermodel.backward, np.ones(4))[1](1.0)", "BACKWARD",
                     "backward", "checked("),
    "hessian": ("mindgrad.hessian(usermodel.model, 1)(x, w)", "LAYER", "layer", "h = x @ w"),
    "recursion": ("mindgrad.grad(usermodel.recursive)(x, 40)", "RECURSIVE", "recursive", "x @"),
    "grad_of_grad": ("mindgrad.grad(mindgrad.grad(usermodel.model, 1), 1)(x, w)", "LAYER",
                     "layer", "h = x @ w"),
    "gradoperation": ("mindgrad.GradOperation(get_all=True)(usermodel.model)(x, w)", "LAYER",
                      "layer", "h = x @ w"),
}


def test_format_exc_shows_the_users_line_in_every_transformation(tmp_path):
    building = {"no_rule": "mindgrad.grad(usermodel.no_rule)(np.ones(3))",
                "unsupported": "mindgrad.jvp(usermodel.unsupported, (1.0,), (1.0,))",
                "source_no_rule": "mindgrad.source(mindgrad.grad(usermodel.no_rule), np.ones(3))",
                "stages_unsupported": "mindgrad.stages(mindgrad.grad(usermodel.unsupported), 1.0)"}
    calls = "".join(f"try:\n    {call}\nexcept Exception:\n    print('==== {name}')\n"
                    f"    print(traceback.format_exc())\n"
                    for name, call in {**{n: c[0] for n, c in CASES.items()}, **building}.items())
    out, err = run(tmp_path, "import traceback\nimport numpy as np, mindgrad, usermodel\n"
                             "x, w = np.ones((3, 4)), np.ones((5, 2))\n" + calls)
    assert not err, err
    printed = dict(part.split("\n", 1) for part in out.split("==== ")[1:])
    assert set(printed) == set(CASES) | set(building), out
    path = tmp_path / "usermodel.py"
    for name, (_, marker, function, generated) in CASES.items():
        assert_points_at_user(printed[name], path, marker, function, generated)
    # the backward sweep raised in the user's helper the rule calls: its frame is kept
    for name in ("backward", "vjp_backward"):
        assert f"line {line_of('CHECKED')}, in checked" in printed[name]
    # the generated frames of the recursion repeat with nothing between, so Python folds them
    assert "[Previous line repeated 3" in printed["recursion"]
    assert len(printed_lines(printed["recursion"])) <= 30, printed["recursion"]
    # errors found while building: the user's line in the message, no frame of the compiler
    assert "NoGradientRuleError: np.i0 has no gradient rule" in printed["no_rule"]
    assert f"at {path}:{line_of('NO_RULE')}: return np.sum(np.i0(x))" in printed["no_rule"]
    assert f'File "{path}", line {line_of("UNSUPPORTED")}\n' in printed["unsupported"]
    assert "UnsupportedSyntaxError: `with` blocks" in printed["unsupported"]
    for name in building:
        assert len(mindgrad_frames(printed[name])) <= 1, printed[name]
        # two frames (the call, the re-raise) and the message with its rule template
        assert len(printed_lines(printed[name])) <= 12, printed[name]


def test_filtering_off_leaves_the_traceback_as_it_was(tmp_path):
    out, err = run(tmp_path, """
        import numpy as np, mindgrad, usermodel
        mindgrad.grad(usermodel.model, 1)(np.ones((3, 4)), np.ones((5, 2)))
    """, env={"MINDGRAD_TRACEBACK_FILTERING": "off"})
    assert len(mindgrad_frames(err)) >= 3, err
    assert f'line {line_of("LAYER")}, in layer' not in err
    assert "mindgrad: raised at" not in err


def test_the_plain_prompt_and_exec_say_what_works_in_a_short_error(tmp_path):
    code = ("import numpy as np, mindgrad\n"
            "def f(x): return np.sum(x * x)\n"
            "mindgrad.grad(f)(np.ones(3))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    err = done.stderr
    if sys.version_info >= (3, 13):  # python -c keeps its source
        assert done.returncode == 0, err
    else:
        assert "NoSourceError: f has no source that mindgrad can read: it was defined by " \
               "exec() of a string (or `python -c` before Python 3.13)" in err, err
        assert "a file, a notebook cell, IPython or Python 3.13's prompt" in err
        assert "During handling" not in err and len(printed_lines(err)) <= 6, err
    typed_in = code.replace("\nmindgrad", "\n\nmindgrad")  # a blank line ends the def
    typed = subprocess.run([sys.executable, "-i"], input=typed_in, capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    if sys.version_info >= (3, 13):  # its prompt keeps what was typed
        assert "Error" not in typed.stderr, typed.stderr
    else:
        assert "it was typed at a plain `python` prompt, which keeps no source before Python " \
               "3.13" in typed.stderr, typed.stderr
        assert "During handling" not in typed.stderr
        assert len(printed_lines(typed.stderr)) <= 10, typed.stderr  # banner, prompts included
    out, err = run(tmp_path, """
        import mindgrad
        namespace = {}
        exec("import numpy as np\\ndef f(x): return np.sum(x * x)", namespace)
        mindgrad.grad(namespace["f"])(namespace["np"].ones(3))
    """)
    assert "exec() of a string" in err and len(printed_lines(err)) <= 6, err


def test_ipython_shows_the_cells_line(tmp_path):
    pytest.importorskip("IPython")
    out, err = run(tmp_path, '''
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance(colors="NoColor")
        shell.run_cell("import numpy as np, mindgrad")
        shell.run_cell("def layer(x, w):\\n    h = x @ w\\n    return np.tanh(h)\\n")
        shell.run_cell("mindgrad.grad(layer, 1)(np.ones((3, 4)), np.ones((5, 2)))")
    ''')
    assert re.search(r"\n-*> *2 +h = x @ w", out), out  # the cell's line, marked
    assert "in layer" in out and "ValueError" in out, out
    assert "gradients.py" not in out and "cache.py" not in out, out


# ----- in the same process ---------------------------------------------------------------------


class Custom(Exception):
    pass


def failing():
    try:
        {}["missing"]
    except KeyError as key:
        raise Custom("the user's message", 42) from key


mindgrad.nondifferentiable(failing)  # run as it is, inside the generated code


def raises_with_a_cause(x):
    y = x * failing()
    return y


def test_the_exception_keeps_its_type_message_and_cause():
    with pytest.raises(Custom) as info:
        mindgrad.grad(raises_with_a_cause)(1.0)
    assert info.value.args == ("the user's message", 42)
    assert isinstance(info.value.__cause__, KeyError) and info.value.__suppress_context__
    frames = traceback.extract_tb(info.value.__traceback__)
    assert [f.name for f in frames][-3:] == ["raises_with_a_cause", "grad_raises_with_a_cause",
                                             "failing"]
    assert frames[-3].filename == __file__ and frames[-3].line == "y = x * failing()"
    assert frames[-1].line == 'raise Custom("the user\'s message", 42) from key'


def shape_error(x, w):
    return np.sum(x @ w)


def test_after_an_error_the_same_gradient_still_computes():
    g = mindgrad.grad(shape_error, 1)
    with pytest.raises(ValueError):
        g(np.ones((3, 4)), np.ones((5, 2)))
    x, w = np.arange(12.0).reshape(3, 4), np.ones((4, 2))
    np.testing.assert_allclose(g(x, w), np.repeat(x.sum(0)[:, None], 2, axis=1))


def test_every_line_of_the_generated_code_names_a_line_of_the_users_function():
    g = mindgrad.grad(shape_error, 1)
    g(np.ones((3, 4)), np.ones((4, 2)))
    filename = [f for f in emit._origins if f.startswith("<mindgrad shape_error #")][-1]
    first = shape_error.__code__.co_firstlineno
    lines = [emit.origin(filename, k) for k in range(1, len(emit._origins[filename]) + 1)]
    assert {where[1] for where in lines if where} == {first, first + 1}
    assert all(where[0] == __file__ and where[2] == "shape_error" for where in lines if where)


def caller(x, w):
    s = np.sin(x)
    return np.sum(callee(s, w) ** 2)


def callee(s, w):
    h = s @ w
    return np.tanh(h)


def test_each_users_frame_reads_as_its_function_with_its_values():
    # a frame standing for a user's line started at line 1 of the file: IPython, reading a
    # notebook cell's frame from its code's first line (inspect.getsourcelines), showed the
    # cell's first function with no arrow; and pdb's `p s` there was a NameError
    x, w = np.arange(12.0).reshape(3, 4), np.ones((5, 2))
    with pytest.raises(ValueError) as info:
        mindgrad.grad(caller, 1)(x, w)
    tb, users = info.value.__traceback__, []
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == __file__ and tb.tb_frame.f_code.co_name in (
                "caller", "callee"):
            users.append(tb)
        tb = tb.tb_next
    assert [tb.tb_frame.f_code.co_name for tb in users] == ["caller", "callee"]
    for tb, function in zip(users, (caller, callee)):
        lines, first = inspect.getsourcelines(tb.tb_frame)
        assert (lines, first) == inspect.getsourcelines(function)
        assert first <= tb.tb_lineno < first + len(lines)
    assert users[0].tb_lineno == caller.__code__.co_firstlineno + 2
    assert users[1].tb_lineno == callee.__code__.co_firstlineno + 1
    # the values the generated code holds for the user's names at the error
    caller_vars, callee_vars = (tb.tb_frame.f_locals for tb in users)
    assert set(caller_vars) == {"x", "w", "s"} and set(callee_vars) == {"s", "w"}
    np.testing.assert_array_equal(caller_vars["x"], x)
    np.testing.assert_array_equal(callee_vars["s"], np.sin(x))
    assert callee_vars["w"] is w or np.array_equal(callee_vars["w"], w)


def log_square(x):
    y = np.log(x)
    return np.sum(y * y)


def test_a_numpy_warning_in_generated_code_names_the_users_line():
    # it named the generated code: <mindgrad log_square #1>:2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = mindgrad.grad(log_square)(np.array([-1.0, 2.0]))
    assert np.isnan(g[0]) and g[1] == pytest.approx(np.log(2.0))  # 2 log(x) / x
    (warned,) = [w for w in caught if "encountered in log" in str(w.message)]
    assert warned.category is RuntimeWarning
    assert str(warned.message) == "invalid value encountered in log"
    assert (warned.filename, warned.lineno) == (__file__, log_square.__code__.co_firstlineno + 1)
    printed = warnings.formatwarning(warned.message, warned.category, warned.filename,
                                     warned.lineno)
    assert printed == (f"{__file__}:{warned.lineno}: RuntimeWarning: invalid value "
                       "encountered in log\n  y = np.log(x)\n")


def test_a_numpy_warning_stays_where_it_was_with_filtering_off(monkeypatch):
    monkeypatch.setenv("MINDGRAD_TRACEBACK_FILTERING", "off")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mindgrad.grad(log_square)(np.array([-1.0, 2.0]))
    (warned,) = [w for w in caught if "encountered in log" in str(w.message)]
    assert emit.is_generated(warned.filename)


def two(x, y):
    return np.sum(x * y)


@pytest.mark.parametrize("call, message", [
    (lambda: mindgrad.grad(two)(np.ones(3)), r"^two\(\): missing a required argument: 'y'$"),
    (lambda: mindgrad.grad(two)(x=np.ones(3), y=np.ones(3)), r"^grad_position 0 is two's input "),
    (lambda: mindgrad.grad(two, sens_param=True)(np.ones(3), 1.0),
     r"^two\(\): missing a required argument: 'y' \(sens"),
    (lambda: mindgrad.GradOperation(sens_param=True)(two)(), r"^sens_param=True needs the "),
])
def test_a_call_the_gradient_cannot_take_is_a_short_type_error(call, message):
    with pytest.raises(TypeError, match=message) as info:
        call()
    assert info.value.__cause__ is None and (info.value.__context__ is None or
                                             info.value.__suppress_context__)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert len([f for f in frames if f.filename.startswith(PACKAGE)]) <= 1, frames
