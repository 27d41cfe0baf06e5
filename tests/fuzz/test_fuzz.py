"""The random-program tester: a fixed-seed batch in four modes, and tests of the tester.

``MINDGRAD_FUZZ_COUNT=2000 pytest tests/fuzz/test_fuzz.py -k batch`` runs a larger batch; so does
``pytest -m slow``.
"""

import os
import re
import sys
import tempfile

import numpy as np
import pytest

from mindgrad import rules
from mindgrad.fuzz import generator, known, oracle, runner, shrinker

SEED = 2026
COUNT = int(os.environ.get("MINDGRAD_FUZZ_COUNT", "150"))


def _unexpected(failures, libraries=()):
    """The failures that no known issue accounts for, as readable text."""
    out = []
    for index, mode, result in failures:
        source = generator.generate(SEED, index, libraries=libraries).source
        if known.known_issue(source, mode, result) is None:
            out.append(f"program {index} ({mode}): {result.outcome}: {result.detail}\n{source}")
    return out


def _batch(count):
    counts, failures = runner.run_batch(SEED, count, jobs=1, timeout=60.0)
    print(runner.table(counts))
    assert not _unexpected(failures), "\n\n".join(_unexpected(failures))
    for mode, c in counts.items():
        assert sum(c.values()) == count
        assert c["skipped"] <= count // 5, (mode, c)


def test_fixed_seed_batch():
    _batch(COUNT)


@pytest.mark.slow
def test_large_batch():
    _batch(max(COUNT, 2000))


SCIPY_CALL = re.compile(r"\b(sp|norm|sla)\.(\w+)\(")


def test_fixed_seed_batch_with_scipy():
    """30 programs that call scipy.special, scipy.stats.norm and scipy.linalg too: every
    number in every mode matches the differences."""
    pytest.importorskip("scipy")
    count, libraries = 30, ("scipy",)
    sources = [generator.generate(SEED, i, libraries=libraries).source for i in range(count)]
    calls = [m.group(0) for s in sources for m in SCIPY_CALL.finditer(s)]
    assert len(calls) >= 30, calls
    assert {c.split(".")[0] for c in calls} == {"sp", "norm", "sla"}
    assert sum(bool(SCIPY_CALL.search(s)) for s in sources) >= 20
    counts, failures = runner.run_batch(SEED, count, jobs=1, timeout=60.0, libraries=libraries)
    print(runner.table(counts))
    assert not _unexpected(failures, libraries), "\n\n".join(_unexpected(failures, libraries))
    for mode, c in counts.items():
        assert c["ok"] >= count - 3, (mode, c)


def test_default_programs_do_not_call_scipy():
    """SciPy is opt-in: the default batch neither imports nor calls it, and asking for it
    changes nothing but adds its calls."""
    for i in range(60):
        program = generator.generate(SEED, i)
        assert "scipy" not in program.source and not SCIPY_CALL.search(program.source)
        assert program == generator.generate(SEED, i, libraries=())
    assert "import scipy.special as sp" in generator.generate(SEED, 0, libraries=("scipy",)).source
    with pytest.raises(ValueError, match="libraries: unknown \\['sympy'\\]"):
        generator.generate(SEED, 0, libraries=("sympy",))


# ----- the tester itself ---------------------------------------------------------------------


def test_generator_writes_every_construct():
    seen = set()
    for i in range(400):
        seen |= generator.generate(SEED, i).constructs
    assert seen == set(generator.CONSTRUCTS)


def test_generator_is_deterministic_and_programs_run():
    skipped = 0
    with tempfile.TemporaryDirectory() as directory:
        for i in range(40):
            program = generator.generate(SEED, i)
            assert program == generator.generate(SEED, i)
            f, _ = oracle.load(program.source, directory)
            try:
                oracle.plain(f, program.args())
            except oracle.Skip:
                skipped += 1
    assert skipped <= 4


def _program(source, inputs=((3,),)):
    return generator.Program(source, list(inputs), seed=5)


SIN = "import numpy as np\n\ndef f(x):\n    return np.sum(np.sin(x) * 2.0)\n"


def _sin_adjoint(out, x):
    rules.d[x] = rules.d[out] * np.cos(x) * 2.0


def _sin_tangent(out, x):
    rules.d[out] = rules.d[x] * np.cos(x) * 2.0


def _cos_adjoint(out, x):
    rules.d[x] = -rules.d[out] * np.sin(x) * 2.0


def _cos_tangent(out, x):
    rules.d[out] = -rules.d[x] * np.sin(x) * 2.0


def _replace_rules(monkeypatch, fn, adjoint, tangent):
    monkeypatch.setitem(rules._RULES, fn, rules.Rule(fn, adjoint, "adjoint"))
    monkeypatch.setitem(rules._TANGENTS, fn, rules.Rule(fn, tangent, "tangent"))
    rules._bump()


@pytest.fixture
def wrong_sin(monkeypatch):
    """np.sin's rules twice too large."""
    _replace_rules(monkeypatch, np.sin, _sin_adjoint, _sin_tangent)
    yield
    rules._bump()


@pytest.fixture
def wrong_cos(monkeypatch):
    """np.cos's rules twice too large: the gradient of ``sin`` is right, its derivative not."""
    _replace_rules(monkeypatch, np.cos, _cos_adjoint, _cos_tangent)
    yield
    rules._bump()


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_oracle_flags_a_wrong_rule(wrong_sin, mode):
    with tempfile.TemporaryDirectory() as directory:
        result = oracle.check_program(_program(SIN), mode, directory)
    assert result.outcome == "wrong", result


def test_oracle_flags_a_wrong_second_derivative(wrong_cos):
    with tempfile.TemporaryDirectory() as directory:
        assert oracle.check_program(_program(SIN), "grad", directory).outcome == "ok"
        result = oracle.check_program(_program(SIN), "hvp", directory)
    assert result.outcome == "wrong", result


@pytest.mark.parametrize("mode", oracle.MODES)
def test_oracle_passes_a_right_program(mode):
    with tempfile.TemporaryDirectory() as directory:
        result = oracle.check_program(_program(SIN), mode, directory)
    assert result.outcome == "ok", result


def test_oracle_counts_a_mismatch_only_when_both_steps_agree():
    assert oracle.compare(1.0, [1.0 + 1e-9, 3.0], 1.0) is None
    assert "differences give" in oracle.compare(1.0, [2.0, 2.0 + 1e-9], 1.0)
    with pytest.raises(oracle.Skip):
        oracle.compare(1.0, [2.0, 7.0], 1.0)


def test_oracle_skips_a_failing_program():
    raises = "import numpy as np\n\ndef f(x):\n    return x[7]\n"
    with tempfile.TemporaryDirectory() as directory:
        assert oracle.check_program(_program(raises), "grad", directory).outcome == "skipped"


def test_clear_error_is_a_located_error():
    with tempfile.TemporaryDirectory() as directory:
        program = _program("import numpy as np\n\ndef f(x):\n    global q\n    return x\n")
        result = oracle.check_program(program, "grad", directory)
    assert result.outcome == "clear-error", result
    path = "/tmp/p/mgfuzz_1.py"
    assert oracle.is_clear_error(TypeError(f"bad thing at {path}:3: y = x"), path)
    assert not oracle.is_clear_error(TypeError("'float' object is not subscriptable"), path)
    assert not oracle.is_clear_error(KeyError("x"), path)


def test_value_mode_sees_a_wrong_value(monkeypatch):
    """A value_and_grad that hands back something else than f's value is caught."""
    import mindgrad

    real = mindgrad.value_and_grad

    def off(fn, *args, **kwargs):
        inner = real(fn, *args, **kwargs)

        def call(*a):
            value, grads = inner(*a)
            return value * 1.0000001, grads

        return call

    monkeypatch.setattr(mindgrad, "value_and_grad", off)
    with tempfile.TemporaryDirectory() as directory:
        assert oracle.check_program(_program(SIN), "value", directory).outcome == "wrong"


def test_shrinker_reduces_a_failing_program(wrong_sin):
    source = ("import numpy as np\n\ndef h(p):\n    return p * 3.0\n\n"
              "def f(x, y):\n    a = np.tanh(x) * y\n    b = a[0] + np.sum(y)\n"
              "    c = np.sin(x * 2.0) + h(b)\n    for i in range(2):\n        a = a * 0.5\n"
              "    return np.sum(c) + np.sum(a)\n")
    program = _program(source, [(2, 3), (3,)])
    with tempfile.TemporaryDirectory() as directory:
        assert oracle.check_program(program, "grad", directory).outcome == "wrong"
        small = shrinker.shrink(program, "grad", directory)
        assert oracle.check_program(small, "grad", directory).outcome == "wrong"
    assert "np.sin" in small.source
    assert "for " not in small.source and "def h" not in small.source
    assert len(small.source.splitlines()) <= 5
    assert all(len(s) <= 1 for s in small.inputs)


def test_scipy_option_needs_scipy(monkeypatch, capsys):
    """Where SciPy cannot be imported, ``--scipy`` is a clear error; the default tester runs."""
    from mindgrad.fuzz import __main__ as cli

    monkeypatch.setitem(sys.modules, "scipy", None)  # import scipy raises ImportError
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--scipy", "--count", "1"])
    assert exit_.value.code == 2
    assert "--scipy: scipy cannot be imported here" in capsys.readouterr().err
    assert cli.main(["--count", "2", "--modes", "grad"]) == 0
