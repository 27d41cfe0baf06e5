"""``mindgrad.debug``: pdb stops at the first line of the generated code, driven through stdin
in a subprocess of the interpreter running the tests."""

import os
import pathlib
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
    assert first.splitlines() == ["> <mindgrad model #2>(4)grad_model()",
                                  "-> (y, y_tape) = layer_forward(x, w)"], out
    where, after_next, printed, end = rest.split("(Pdb)")[:4]
    assert "> <mindgrad model #2>(4)grad_model()" in where
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
    assert out.startswith("> <mindgrad model #2>(4)jvp_model()\n"
                          "-> (y, t_y) = layer_jvp(x, w, t_w)\n"), out
    assert "(Pdb) (4, 2)" in out and "matches True" in out
