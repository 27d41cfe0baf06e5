"""SciPy stays optional: ``import mindgrad`` does not import it, mindgrad works where it cannot
be imported, and its rules are registered once the program has imported SciPy, before the first
function calling it is differentiated (``DEFERRED`` in mindgrad/rules/__init__.py). Each check
runs in a fresh interpreter."""

import math
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(code, tmp_path):
    script = tmp_path / "program.py"  # a file: mindgrad reads the functions' source
    script.write_text(textwrap.dedent(code))
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # this checkout's mindgrad
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, check=False, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_import_mindgrad_does_not_import_scipy(tmp_path):
    out = run("""
        import sys
        import mindgrad
        print(sorted(m for m in sys.modules if m == "scipy" or m.startswith("scipy.")))
    """, tmp_path)
    assert out.strip() == "[]"


def test_mindgrad_works_where_scipy_cannot_be_imported(tmp_path):
    out = run("""
        import sys
        sys.modules["scipy"] = None  # import scipy raises ImportError
        import numpy as np
        import mindgrad
        from mindgrad import rules

        def f(x):
            return np.sum(np.tanh(x) ** 2)

        print(repr(float(mindgrad.grad(f)(np.array([0.5]))[0])), rules.lookup(len),
              sorted(rules._pending) == sorted(rules.DEFERRED))
    """, tmp_path)
    assert out.split()[-1] == "True"  # no SciPy topic loaded
    t = math.tanh(0.5)
    assert float(out.split()[0]) == pytest.approx(2 * t * (1 - t * t), rel=1e-12)


def test_rules_are_registered_once_scipy_is_imported(tmp_path):
    pytest.importorskip("scipy")
    out = run("""
        import numpy as np
        import mindgrad
        from mindgrad import rules
        before = sorted(rules._pending)
        import scipy.special as sp

        def f(x):
            return sp.logsumexp(x)

        print(before == sorted(rules.DEFERRED),
              np.allclose(mindgrad.grad(f)(np.zeros(2)), 0.5), sorted(rules._pending))
    """, tmp_path)
    assert out.split()[:2] == ["True", "True"]
    assert "'scipy.special'" not in out


def test_loading_the_rules_does_not_rebuild_what_was_built(tmp_path):
    pytest.importorskip("scipy")
    """The build that loads SciPy's rules is cached under the registry version it ends with:
    its next call does not build again."""
    out = run("""
        import numpy as np
        import scipy.special as sp
        import mindgrad

        def f(x):
            return np.sum(sp.expit(x))

        g = mindgrad.grad(f)
        g(np.ones(2))
        g(np.ones(2))
        print(mindgrad.cache_stats()["builds"], mindgrad.cache_stats()["hits"])
    """, tmp_path)
    assert out.split() == ["1", "1"]
