"""``mindgrad.debug``: pdb stops at the first line of the generated code, driven through stdin
in a subprocess of the interpreter running the tests."""

import os
import pathlib
import re
import subprocess
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[2]

MODEL = '''\
import numpy as np
import mindgrad


def layer(x, w):
    h = x @ w
    return np.tanh(h)


def model(x, w):
    y = layer(x, w)
    return np.sum(y ** 2)


x = np.arange(12.0).reshape(3, 4) / 10
w = np.ones((4, 2)) / 4
'''


def debug(tmp_path, call, commands):
    """Run ``call`` under ``mindgrad.debug`` with pdb reading ``commands``: its stdout."""
    script = tmp_path / "usermodel.py"
    script.write_text(MODEL + textwrap.dedent(call))
    done = subprocess.run([sys.executable, str(script)], input="\n".join(commands) + "\n",
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_debug_stops_at_the_first_line_of_the_gradient_and_steps_through_it(tmp_path):
    out = debug(tmp_path, """
        g = mindgrad.debug(mindgrad.grad(model, 1), x, w)
        y = np.tanh(x @ w)
        expected = x.T @ (2 * y * (1 - y * y))
        print("matches", np.allclose(g, expected))
    """, ["where", "next", "p y.shape", "continue"])
    first, rest = out.split("(Pdb)", 1)
    # the first stop: the entry of the generated gradient, at its first line
    assert first.splitlines() == ["> <mindgrad model #2>(2)grad_model()",
                                  "-> (y, y_tape) = layer_forward(x, w)"], out
    where, after_next, printed, end = rest.split("(Pdb)")[:4]
    assert "> <mindgrad model #2>(2)grad_model()" in where
    assert "-> pow_ = y ** 2" in after_next
    assert printed.strip() == "(3, 2)"
    assert "matches True" in end


def test_debug_stops_in_the_tangent_code_of_jvp(tmp_path):
    out = debug(tmp_path, """
        v = np.ones((4, 2))
        value, tangent = mindgrad.debug(mindgrad.jvp, model, (x, w), (None, v))
        y = np.tanh(x @ w)
        print("matches", np.allclose(tangent, np.sum(2 * y * (1 - y * y) * (x @ v))))
    """, ["p t_w.shape", "continue"])
    assert out.startswith("> <mindgrad model #2>(2)jvp_model()\n"
                          "-> (y, t_y) = layer_jvp(x, w, t_w)\n"), out
    assert "(Pdb) (4, 2)" in out and "matches True" in out



def post_mortem(tmp_path, call, commands):
    """Run the model then ``call``, which raises, under ``python -m pdb`` reading ``commands``
    after the crash: (what the script printed, what pdb printed from the crash on)."""
    script = tmp_path / "usermodel.py"
    script.write_text(MODEL + textwrap.dedent(call))
    done = subprocess.run([sys.executable, "-m", "pdb", str(script)],
                          input="\n".join(["continue", *commands, "quit"]) + "\n",
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    before, crash, after = done.stdout.partition("Entering post mortem debugging")
    assert crash, done.stdout + done.stderr
    return before, after


def test_after_a_crash_the_users_frame_holds_the_values_of_its_names(tmp_path):
    # the frame at the user's line had no variables: `p x` there was a NameError
    _, out = post_mortem(tmp_path, """
        w = np.ones((5, 2))
        mindgrad.grad(model, 1)(x, w)
    """, ["u", "p x.shape, w.shape", "p float(np.sum(x))", "u", "u", "p sorted(locals())"])
    stops = out.split("(Pdb)")
    # the crash stops in the generated code; up is the user's line it was run for
    assert "<mindgrad model #1>(3)layer_forward()\n-> h = x @ w" in stops[0], out
    assert "usermodel.py(6)layer()\n-> h = x @ w" in stops[1], out
    assert stops[2].strip() == "((3, 4), (5, 2))", out
    assert float(stops[3]) == sum(range(12)) / 10, out  # the module's globals are there too
    assert "usermodel.py(11)model()\n-> y = layer(x, w)" in stops[5], out
    # the caller's frame: its arguments; y, not yet set when the error came, is not there
    assert stops[6].strip() == "['w', 'x']", out


def test_the_generated_code_is_numbered_as_source_prints_it(tmp_path):
    # pdb and tracebacks said line 5 for what mindgrad.source printed at line 3, and pdb's
    # list showed the block binding the code's names (`if True:`) as if it were code
    printed, out = post_mortem(tmp_path, """
        print(mindgrad.source(mindgrad.grad(model, 1), x, np.ones((4, 2))))
        mindgrad.grad(model, 1)(x, np.ones((5, 2)))
    """, ["list", "u", "u", "list"])
    stops = out.split("(Pdb)")
    assert "if True" not in out and " = None" not in out, out
    lines = printed.replace("(Pdb) ", "").splitlines()
    for shown, function, text in [(stops[0] + stops[1], "layer_forward", "h = x @ w"),
                                  (stops[3] + stops[4], "grad_model",
                                   "(y, y_tape) = layer_forward(x, w)")]:
        # each function here is the first of its generated file: its lines as source prints
        # them, counted from its def
        start = next(k for k, line in enumerate(lines) if line.startswith(f"def {function}("))
        expected = next(k for k, line in enumerate(lines[start:], 1) if line.strip() == text)
        assert re.search(rf"\({expected}\){function}\(\)\n-> {re.escape(text)}", shown), out
        assert re.search(rf"^ *{expected}  ->\t *{re.escape(text)}$", shown, re.M), out
