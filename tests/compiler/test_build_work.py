"""The compiler's work grows linearly with the length of straight-line code: a function of a few
hundred statements builds in a few seconds. Measured as work done (lines of the compiler run,
sets copied), not as time, which a busy machine varies."""

import importlib.util
import sys

import gast
import numpy as np

import mindgrad
from mindgrad.compiler.finish import emit, optimize


def _chain(tmp_path, n):
    """``y1 = np.sin(y0) * 1.01 + x``, ... ``n`` statements, each with new names."""
    name = f"chain_{n}"
    body = "".join(f"    y{i + 1} = np.sin(y{i}) * 1.01 + x\n" for i in range(n))
    path = tmp_path / f"{name}.py"
    path.write_text(f"import numpy as np\n\n\ndef {name}(x):\n    y0 = x\n{body}"
                    f"    return np.sum(y{n})\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def _lines_run(fn, file_suffix):
    """How many lines of the compiler files ending in ``file_suffix`` ``fn()`` runs."""
    count = [0]

    def local(frame, event, arg):
        if event == "line":
            count[0] += 1
        return local

    def calls(frame, event, arg):
        return local if frame.f_code.co_filename.endswith(file_suffix) else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        fn()
    finally:
        sys.settrace(previous)
    return count[0]


def test_the_aliasing_facts_take_linear_work(tmp_path):
    """Each binding updated only the groups of the names sharing memory with it, not every
    group of the function (which made 120 statements take three times the work of 60)."""
    x = np.array([0.1, -0.4])
    work = {}
    for n in (60, 120):
        f = _chain(tmp_path, n)
        work[n] = _lines_run(lambda f=f: mindgrad.grad(f)(x), "aliasing.py")
        np.testing.assert_allclose(mindgrad.grad(f)(x), _chain_gradient(n, x))
    assert work[120] < 2.4 * work[60], work


def _chain_gradient(n, x):
    y, slope = x, np.ones_like(x)
    for _ in range(n):
        slope = np.cos(y) * 1.01 * slope + 1.0
        y = np.sin(y) * 1.01 + x
    return slope


def test_zero_propagation_updates_one_set_of_facts_in_straight_line_code():
    """The optimizer's walks update their facts in place: a copy per statement made a long
    backward sweep, with many gradients known zero, quadratic. The result is unchanged: every
    contribution of a zero gradient is gone and the first contribution assigns."""
    n = 200
    text = "d_x = 0\n" + "".join(f"d_y{i} = 0\n" for i in range(n)) + "".join(
        f"d_y{i + 1} = d_y{i + 1} + d_y{i} * 2.0\n" for i in range(n - 1)) + "d_x = d_x + g\n"
    stmts = gast.parse(text).body
    adjoint = {f"d_y{i}" for i in range(n)} | {"d_x", "g"}
    opt = optimize.Optimizer(adjoint, (), (), ())
    zero = set()
    kept, after = opt.zeros(stmts, zero)
    assert after is zero  # one set, updated in place
    assert after >= {f"d_y{i}" for i in range(n)} and "d_x" not in after
    live = {"d_x"}
    kept, live_after = opt.dead(kept, live)
    assert live_after is live
    out = optimize.Optimizer(adjoint, (), (), ()).run(gast.parse(text).body, {"d_x"})
    assert emit.unparse(out).strip() == "d_x = g"
