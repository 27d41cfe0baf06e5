"""The random-program tester: a fixed-seed batch in every mode, and tests of the tester.

``MINDGRAD_FUZZ_COUNT=2000 pytest tests/fuzz/test_fuzz.py -k batch`` runs a larger batch; so does
``pytest -m slow``.
"""

import ast
import os
import re
import sys
import tempfile

import numpy as np
import pytest

import mindgrad
from mindgrad import rules
from mindgrad.fuzz import generator, known, oracle, runner, shrinker

SEED = 2026
COUNT = int(os.environ.get("MINDGRAD_FUZZ_COUNT", "24"))


def _unexpected(failures, libraries=()):
    """The failures that no known issue accounts for, as readable text."""
    out = []
    for index, mode, result in failures:
        source = generator.generate(SEED, index, libraries=libraries).source
        if known.known_issue(source, mode, result) is None:
            out.append(f"program {index} ({mode}): {result.outcome}: {result.detail}\n{source}")
    return out


FIRST_AND_SECOND = ("grad", "jvp", "hvp", "value")


#: Taylor mode takes float arrays and one real result: a third of the programs have others
#: (the share of each mode that may be skipped, in fifths)
SKIPPED = {"taylor": 2}


def _batch(count, modes=FIRST_AND_SECOND):
    counts, failures = runner.run_batch(SEED, count, modes, jobs=1, timeout=60.0)
    print(runner.table(counts))
    assert not _unexpected(failures), "\n\n".join(_unexpected(failures))
    for mode, c in counts.items():
        assert sum(c.values()) == count
        assert c["skipped"] <= count * SKIPPED.get(mode, 1) // 5, (mode, c)


def test_fixed_seed_batch():
    _batch(COUNT)


def test_fixed_seed_batch_third_order():
    """jvp over jvp over grad, jvp over jvp over jvp and grad over jvp over grad, the slowest
    modes, on the batch's first programs."""
    _batch(max(COUNT // 4, 6), ("third", "forward3", "rfr"))


def test_fixed_seed_batch_vmap_and_taylor():
    """vmap's batched code (each example, vmap(grad), jacrev), jet's Taylor code (against
    nested forward mode) and the gradient with buffers reused (against the one without) on
    the batch's first programs."""
    _batch(COUNT, ("vmap", "taylor", "reuse"))


@pytest.mark.slow
def test_large_batch():
    _batch(max(COUNT, 2000), oracle.MODES)


SCIPY_CALL = re.compile(r"\b(sp|norm|sla)\.(\w+)\(")


def test_fixed_seed_batch_with_scipy():
    """12 programs that call scipy.special, scipy.stats.norm and scipy.linalg too: every
    number in every mode matches the differences."""
    pytest.importorskip("scipy")
    count, libraries = 12, ("scipy",)
    sources = [generator.generate(SEED, i, libraries=libraries).source for i in range(count)]
    calls = [m.group(0) for s in sources for m in SCIPY_CALL.finditer(s)]
    assert len(calls) >= count, calls
    assert {c.split(".")[0] for c in calls} == {"sp", "norm", "sla"}
    assert sum(bool(SCIPY_CALL.search(s)) for s in sources) >= 2 * count // 3
    counts, failures = runner.run_batch(SEED, count, FIRST_AND_SECOND, jobs=1, timeout=60.0,
                                        libraries=libraries)
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
    for i in range(600):
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
                # as the oracle runs them: np.where computes the branch it does not take,
                # whose log of a negative number warns
                with np.errstate(all="ignore"):
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


@pytest.mark.parametrize("mode", ["grad", "jvp", "vmap"])
def test_oracle_flags_a_wrong_rule(wrong_sin, mode):
    with tempfile.TemporaryDirectory() as directory:
        result = oracle.check_program(_program(SIN), mode, directory)
    assert result.outcome == "wrong", result


SIN_TWICE = ("import numpy as np\n\ndef f(x):\n    a = np.sin(x) * 2.0\n"
             "    return np.sum(a * x + a)\n")


def test_oracle_flags_a_wrong_reuse(monkeypatch):
    from mindgrad.runtime import reuse

    def wrong_add_into(a, b):
        return a + 2.0 * b  # one gradient counted twice
    monkeypatch.setattr(reuse, "add_into", wrong_add_into)
    with tempfile.TemporaryDirectory() as directory:
        assert oracle.check_program(_program(SIN_TWICE), "grad", directory).outcome == "ok"
        result = oracle.check_program(_program(SIN_TWICE), "reuse", directory)
    assert result.outcome == "wrong", result


@pytest.mark.parametrize("mode", ["hvp", "forward3"])
def test_oracle_flags_a_wrong_second_derivative(wrong_cos, mode):
    with tempfile.TemporaryDirectory() as directory:
        assert oracle.check_program(_program(SIN), "grad", directory).outcome == "ok"
        result = oracle.check_program(_program(SIN), mode, directory)
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


def test_oracle_skips_an_output_that_changes_shape_near_the_sample_point():
    """A branch on the data returning another shape one step away: the differences say
    nothing (the batch of seed 2026 found this as a crash of the oracle's own vdot)."""
    threshold = float(np.sum(_program("").args()[0]))  # the branch's boundary is the sample
    source = ("import numpy as np\n\ndef f(x):\n"
              f"    if np.sum(x) > {threshold!r}:\n        return x * 2.0\n"
              "    return np.sum(x * x)\n")
    with tempfile.TemporaryDirectory() as directory:
        result = oracle.check_program(_program(source), "jvp", directory)
    assert result.outcome == "skipped" and "changes shape" in result.detail


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


# ----- the constructs of code written elsewhere ----------------------------------------------


def _loop_variable_read_after_the_loop(source):
    """Whether ``f`` loops over a dict (values, items or sorted keys) and reads the loop
    variable (or the value it looks up by key) after the loop."""
    tree = ast.parse(source)
    f = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")
    for i, stmt in enumerate(f.body):
        if not isinstance(stmt, ast.For) or not re.search(r"\.(values|items)\(\)|sorted\(dct",
                                                          ast.unparse(stmt.iter)):
            continue
        items = [stmt.target] + [a.targets[0] for a in stmt.body  # t = dct[key]
                                 if isinstance(a, ast.Assign)
                                 and isinstance(a.value, ast.Subscript)]
        bound = {n.id for target in items for n in ast.walk(target) if isinstance(n, ast.Name)}
        read = {n.id for later in f.body[i + 1:] for n in ast.walk(later)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        if bound & read - {"key"}:
            return True
    return False


#: what each construct's text looks like in a program
CONSTRUCT_TEXT = {
    "global_array": re.compile(r"^G\d+ = np\.linspace\(", re.MULTILINE),
    "zero_value": re.compile(r"^Z(\d+) = -?\d[^\n]* at the point\n(.|\n)* = .+ - Z\1$",
                             re.MULTILINE),
    "builtin_maxmin": re.compile(r"(?<![.\w])(max|min)\((?!.*,)"),
    "builtin_sum": re.compile(r"(?<![.\w])sum\("),
    "builtin_sorted": re.compile(r"(?<![.\w])sorted\("),
    "builtin_anyall": re.compile(r"(?<![.\w])(any|all)\(np\.ravel"),
    "builtin_zip": re.compile(r"for \w+, \w+ in zip\("),
    "enumerate": re.compile(r"for i, \w+ in enumerate\("),
    "r_c_": re.compile(r"np\.[rc]_\["),
    "einsum_sublist": re.compile(r"np\.einsum\(\w+, \["),
    "einsum_ellipsis": re.compile(r"np\.einsum\('[^']*\.\.\."),
    "dict_loop_var": _loop_variable_read_after_the_loop,
    "advindex_inplace": re.compile(r"(c\d+) = \w+\[(np\.array\(|\[|-\d)[^\n]*\n"
                                   r"(    \1 (-=|\*=|\+=)[^\n]*\n)+"),
    "complex": re.compile(r"(z\d+) = [^\n]*\dj\b[^\n]*\n    v\d+ = (?=[^\n]*\b\1\b)"
                          r"[^\n]*(abs|real|imag|var)"),
    "nan_branch": re.compile(r"np\.where\([^\n]*(np\.nan|np\.inf|np\.log|np\.sqrt)"),
    "container_output": re.compile(r"return [\[{]"),
    "user_object": re.compile(r"def (sum|mean)\(self, t\):\n[^\n]*self\.__scale[\s\S]*"
                              r"SCALED\d+\.(sum|mean|clip)\("),
    "multiline_lambda": re.compile(r"= lambda t: \([^\n]*\n\s+\+ t \* t\)"),
    "made_arrays": re.compile(r"np\.(unique|histogram|arange)\(\w+"),
    "list_concat": re.compile(r"(lst\d+) = \1 \+ \["),
    "list_slice": re.compile(r"lst\d+\[0:2\] = \[np\.sin\("),
    "zero_scaled": re.compile(r"np\.(sum|mean|max|var)\([^\n]*\) \* 0\.0 \+ "),
    "fft": re.compile(r"np\.fft\.(fft|ifft|rfft|hfft|ihfft)\(\w+, norm="),
    "pole_not_taken": re.compile(r"(z\d+) = (np\.where\((\w+) > 0\.0, \3, 0\.0\)|max\((\w+), "
                                 r"0\.0\))\n    \w+ = np\.where\((\3|\4) > 0\.0, [^\n]*\b\1\b"),
    "sequence_join": re.compile(r"(lst\d+) = (\w+ \+ \w+|sum\(\[\w+, \w+\], [^\n]*)\n"
                                r"    \w+ = \1\[-?\d\] \* \1\[-?\d\] \+ np\.sin\(\1\[-1\]\)"),
    "keyword_input": re.compile(r"(mean|constant_values|initial|a_min)=(np\.|1\.0 \+ np\.)"),
    "item_write": re.compile(r"(a\d+) = [^\n]*lst\d+\[-?\d\][^\n]*\n    \1(\[\d\] = | [-*+]=)"),
    "dict_call": re.compile(r"dct\d+ = (dict\((u=|\[\('u', )|keywords_dict\(u=)"),
    "call_forms": re.compile(r"functools\.partial\(h\d+, q=|return h\d+\(\*ps\[1:\]\)|"
                             r"getattr\(np, 'tanh'\)\("),
    "gradient_inside": re.compile(r"_vg = mindgrad\.value_and_grad\(lambda t|mindgrad\.grad\("
                                  r"lambda t: h\d+\(t\), sens_param=True|mindgrad\.vjp\(h\d+, "),
    "callable_value": re.compile(r"h\d+_(fns\[[01]\]\(|table\['h'\]\(|apply\(|dflt\()"),
    "star_runtime": re.compile(r"h\d+\(\*\[t \* 1\.0 for t in |ps = list\(ps\)"),
    "gradient_of_closure": re.compile(r"mindgrad\.(grad\(lambda t: np\.sum\(h\d+\(t\) \* |"
                                      r"jvp\(lambda t: h\d+\(t\) \* |"
                                      r"value_and_grad\(lambda t: np\.sum\(h\d+\(t\)\)\)\()"),
    "method_write": re.compile(r"(buf\d+)\.(fill|put)\(|(dw\d+)\.(update|setdefault)\(|"
                               r"(buf\d+)\[\.\.\.\] = "),
    "jacobian_inside": re.compile(r"np\.sum\(mindgrad\.jac(rev|fwd)\(h\d+\)\(\w+\), axis="),
}


def _first_with(construct, count=600):
    return next(i for i in range(count) if construct in generator.generate(SEED, i).constructs)


@pytest.mark.parametrize("construct", sorted(CONSTRUCT_TEXT))
def test_generator_writes_the_constructs_of_code_written_elsewhere(construct):
    """Each construct comes out of the fixed seed's first programs, its text is in the
    program that says so, the program is the same when generated again, and it runs."""
    assert construct in generator.CONSTRUCTS
    index = _first_with(construct)
    program = generator.generate(SEED, index)
    assert program == generator.generate(SEED, index)
    pattern = CONSTRUCT_TEXT[construct]
    found = pattern(program.source) if callable(pattern) else pattern.search(program.source)
    assert found, f"{construct}: program {index}\n{program.source}"
    with tempfile.TemporaryDirectory() as directory, np.errstate(all="ignore"):
        f, _ = oracle.load(program.source, directory)
        oracle.plain(f, program.args())


def test_no_construct_text_without_its_class():
    """The other way round: a program whose text has a construct declares its class (so the
    classes counted are the ones written)."""
    for i in range(200):
        program = generator.generate(SEED, i)
        for construct, pattern in CONSTRUCT_TEXT.items():
            if construct in ("builtin_sum", "enumerate", "nan_branch", "builtin_sorted"):
                continue  # also written by other statements (np.ravel(..) keepdims, loops)
            found = pattern(program.source) if callable(pattern) else \
                pattern.search(program.source)
            if found:
                assert construct in program.constructs, (construct, i, program.source)


# ----- the fifth mode: jvp over jvp over grad ------------------------------------------------

# (source of f, input shapes, second derivative along v, third along v and w, in closed form;
# each gives one array per input, as the gradient does)
THIRD_ORDER_PROGRAMS = [
    ("def f(x):\n    return np.sum(x ** 4)\n", [(3,)],
     lambda x, v: [12 * x[0] ** 2 * v[0]],
     lambda x, v, w: [24 * x[0] * v[0] * w[0]]),
    ("def f(x, y):\n    return np.sum(np.sin(x) * y)\n", [(2, 3), None],
     lambda x, v: [-np.sin(x[0]) * v[0] * x[1] + np.cos(x[0]) * v[1],
                   np.sum(np.cos(x[0]) * v[0])],
     lambda x, v, w: [-np.cos(x[0]) * w[0] * v[0] * x[1] - np.sin(x[0]) * v[0] * w[1]
                      - np.sin(x[0]) * w[0] * v[1], -np.sum(np.sin(x[0]) * w[0] * v[0])]),
    ("def f(x):\n    s = x * 1.0\n    for i in range(2):\n        s = s * x\n"
     "    return np.sum(s)\n", [(2, 2)],
     lambda x, v: [6 * x[0] * v[0]],
     lambda x, v, w: [6 * v[0] * w[0]]),
]


def _third_program(source, inputs):
    return generator.Program("import numpy as np\n\n" + source, list(inputs), seed=11)


@pytest.mark.parametrize("source, inputs, second, third", THIRD_ORDER_PROGRAMS)
def test_third_mode_reference_matches_the_closed_form(source, inputs, second, third):
    """What the fifth mode compares with: mindgrad's second derivative (jvp of grad) and its
    central differences, in float64, agree with the closed forms to 1e-7."""
    program = _third_program(source, inputs)
    args = program.args()
    rng = np.random.default_rng(3)
    v, w = oracle.directions(args, rng), oracle.directions(args, rng)
    with tempfile.TemporaryDirectory() as directory:
        f, _ = oracle.load(program.source, directory)
        along = oracle.second_order(mindgrad.grad(f, tuple(range(len(args)))), v)
        here = oracle.leaves(along(*args))
        assert len(here) == len(args)
        for got, want in zip(here, second(args, v)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        for u in np.eye(sum(np.size(a) for a in args)):  # every entry of the third derivative
            us = np.split(u, np.cumsum([np.size(a) for a in args])[:-1])
            us = [np.reshape(p, np.shape(a)) for p, a in zip(us, args)]
            fds = oracle.central(lambda a, us=us: oracle.vdot(along(*a), us), args, w)
            want = oracle.vdot(third(args, v, w), us)
            assert all(abs(fd - want) <= 1e-7 * (1 + abs(want)) for fd in fds), (fds, want)


def _closed_form_third(monkeypatch, third, factor=1.0):
    """oracle.third_order replaced by the closed form (times ``factor``)."""
    def exact(second, args, dirs):
        v = [second.__globals__[f"t{i}"] for i in range(len(args))]
        out = tuple(factor * np.asarray(t) for t in third(args, v, dirs))
        return out if len(out) > 1 else out[0]  # as the gradient of one input is

    monkeypatch.setattr(oracle, "third_order", exact)


@pytest.mark.parametrize("source, inputs, second, third", THIRD_ORDER_PROGRAMS)
def test_third_mode_passes_the_closed_form_and_flags_one_percent_off(monkeypatch, source,
                                                                      inputs, second, third):
    program = _third_program(source, inputs)
    with tempfile.TemporaryDirectory() as directory:
        for seed in (1, 2, 3):
            program.seed = seed
            _closed_form_third(monkeypatch, third)
            assert oracle.check_program(program, "third", directory).outcome == "ok"
            _closed_form_third(monkeypatch, third, 1.01)
            result = oracle.check_program(program, "third", directory)
            assert result.outcome == "wrong" and "third order" in result.detail, result


@pytest.mark.parametrize("source, inputs, second, third", THIRD_ORDER_PROGRAMS)
def test_third_mode_on_mindgrad_is_right_or_a_known_crash(source, inputs, second, third):
    """mindgrad's own third derivative of these programs is right, or (until the
    architecture's second step) a crash that known.py lists; never a wrong number."""
    with tempfile.TemporaryDirectory() as directory:
        result = runner.check(_third_program(source, inputs), "third", directory, 60.0)
    assert result.outcome in ("ok", "known"), result


def test_third_mode_flags_a_wrong_second_derivative(wrong_cos):
    """jvp of grad is checked first, against differences of the gradient."""
    with tempfile.TemporaryDirectory() as directory:
        result = oracle.check_program(_program(SIN), "third", directory)
    assert result.outcome == "wrong" and "second order" in result.detail, result


def test_a_derivative_of_other_types_than_the_value_is_reported():
    value = (np.ones((3, 1)), 2.0, [np.ones(2)], {"a": np.ones(2)})
    good = (np.zeros((3, 1)), 0.5, [np.ones(2)], {"a": np.zeros(2)})
    assert oracle.structure(good, value) is None
    assert "is 0 for a float of shape (3, 1)" in oracle.structure((0,) + good[1:], value)
    listed = good[:2] + (rules_tangent_list([np.ones(2)]),) + good[3:]
    assert "TangentList for a list" in oracle.structure(listed, value)
    assert "shape (2,) for a value of shape (3, 1)" in oracle.structure(
        (np.ones(2),) + good[1:], value)
    assert "keys" in oracle.structure(good[:3] + ({"b": np.ones(2)},), value)
    # an int 0 standing for zeros pairs with its value's leaf, not with the next one
    paired = oracle.like((0, np.ones(2)), (np.ones((3, 1)), np.ones(2)))
    assert [np.shape(x) for x in oracle.leaves(paired)] == [(3, 1), (2,)]


def rules_tangent_list(items):
    from mindgrad.runtime.tangents import TangentList

    return TangentList(items)


def test_differences_that_are_not_finite_skip():
    """A step that leaves the domain (or brings in a NaN) says nothing: skipped, not wrong."""
    with pytest.raises(oracle.Skip, match="not finite"):
        oracle.central(lambda a: np.log(a[0]) if a[0] > 1e-5 else np.nan, [np.float64(1e-5)],
                       [1.0])


@pytest.mark.parametrize("body", [
    "return np.sum(np.where(x > 0.0, np.log(x), 0.0))",
    "return np.nansum(np.where(x > 0.0, np.nan, x) * x)",
    "return np.sum(np.exp(-np.where(x > 0.0, x, np.inf)))",
])
def test_nan_in_a_branch_not_taken_is_no_false_alarm(body):
    """The oracle takes f's NaN and inf in branches np.where does not take in its stride."""
    program = _program(f"import numpy as np\n\ndef f(x):\n    {body}\n", [(4,)])
    with tempfile.TemporaryDirectory() as directory, np.errstate(all="ignore"):
        f, _ = oracle.load(program.source, directory)
        assert np.isfinite(oracle.total(oracle.plain(f, program.args())))
        rng = np.random.default_rng(0)
        args = program.args()
        dirs = oracle.directions(args, rng)
        fds = oracle.central(lambda a: oracle.total(oracle.plain(f, a)), args, dirs)
        assert abs(fds[0] - fds[1]) < 1e-6 * (1 + abs(fds[0]))


# ----- known issues and clear errors ---------------------------------------------------------

TANGENT_DICT = ("NoTangentRuleError: mindgrad.runtime.tangents.TangentDict has no tangent "
                "(forward-mode) rule, and it has no Python source to differentiate")


def test_known_crash_of_the_third_mode_counts_as_known(monkeypatch):
    crash = oracle.Result("crash", TANGENT_DICT, "NoTangentRuleError")
    assert known.known_issue(SIN, "third", crash) is not None
    assert known.known_issue(SIN, "grad", crash) is None
    assert known.known_issue(SIN, "third", oracle.Result("wrong", TANGENT_DICT)) is None
    with pytest.raises(ValueError, match="never a known issue"):
        known.KnownIssue("x", "y", outcomes=("wrong",))
    monkeypatch.setattr(oracle, "check_program", lambda program, mode, directory: crash)
    result = runner.check(_program(SIN), "third", "/nonexistent", 10.0)
    assert result.outcome == "known" and "Architecture, second step" in result.detail
    assert runner.check(_program(SIN), "grad", "/nonexistent", 10.0).outcome == "crash"


def test_an_error_mindgrad_locates_in_its_own_code_is_a_crash():
    from mindgrad.errors import UnsupportedSyntaxError

    path = "/tmp/p/mgfuzz_1.py"
    own = os.path.join(os.path.dirname(mindgrad.__file__), "rules", "builtins_math.py")
    assert oracle.is_clear_error(UnsupportedSyntaxError("no", path, 3, "y = x"), path)
    assert not oracle.is_clear_error(UnsupportedSyntaxError("no", own, 200, "key=lambda"), path)


def test_cli_takes_the_fifth_mode(capsys):
    from mindgrad.fuzz import __main__ as cli

    with pytest.raises(SystemExit):
        cli.main(["--count", "1", "--modes", "grad,fourth"])
    assert "unknown modes ['fourth']" in capsys.readouterr().err
    assert cli.main(["--count", "1", "--seed", "5", "--modes", "third", "--no-shrink"]) in (0, 1)
    out = capsys.readouterr().out
    assert re.search(r"^third(\s+\d+){6}\s+\d+\.\d{3}$", out, re.MULTILINE), out


def test_a_copy_refused_as_aliasing_is_a_crash():
    """NumPy copies on advanced indexing: refusing an in-place operator on such a copy as
    aliasing refuses a valid program (a basic slice, a view, may be refused)."""
    refusal = ("UnsupportedSyntaxError: the in-place operator on 'c1' would write into an array "
               "the caller passed in, which mindgrad cannot differentiate")
    for index in ("[np.array([0, 2])]", "[[0, 1]]", "[np.array([True, False, True])]"):
        assert oracle.refused_copy(f"def f(x):\n    c1 = x{index}\n    c1 -= 1.0\n", refusal)
    assert not oracle.refused_copy("def f(x):\n    c1 = x[1:]\n    c1 -= 1.0\n", refusal)
    assert not oracle.refused_copy("def f(x):\n    c1 = x[np.array([0])]\n", "ValueError: no")


def test_the_time_limit_counts_cpu_time_not_waiting():
    """A check that waits (a loaded machine gives it no CPU) is not a Timeout; one that
    computes past the limit is."""
    import time

    with runner.time_limit(0.2):
        time.sleep(0.4)  # waiting uses no CPU time
    with pytest.raises(runner.Timeout):
        with runner.time_limit(0.2):
            end = time.process_time() + 5.0
            while time.process_time() < end:
                pass


WARNS_IN_ITS_GRADIENT = '''import numpy as np
import mindgrad


def shifted_log(x):
    return np.sum(x * 0.5)


@mindgrad.adjoint(shifted_log)
def _(out, x):
    d[x] = d[out] * 0.5 + 0.0 * np.log(x - 10.0)  # the log of a negative, multiplied by 0


d = mindgrad.rules.d


def f(x):
    return shifted_log(x) * 2.0
'''


@pytest.fixture
def programs_rules_undone():
    """The rules a test's programs register (``@mindgrad.adjoint`` in their text) are taken
    out of the registry after it, so that no other test meets them."""
    before = set(rules._RULES), set(rules._TANGENTS)
    yield
    for table, keys in zip((rules._RULES, rules._TANGENTS), before):
        for key in set(table) - keys:
            del table[key]
    rules._bump()


@pytest.mark.parametrize("mode", ["grad", "value", "hvp"])
def test_a_warning_of_mindgrads_code_where_f_warns_of_nothing_is_a_failure(
        mode, programs_rules_undone):
    """The oracle runs the derivatives at the sample point with NumPy's warnings raised where
    f raises none there: a rule computing the log of a negative, then multiplying it by 0,
    gives the right number and a warning the user did not write, which the tester reports
    (as it reported ``x ** i`` at second order, log(x) of a negative x)."""
    program = _program(WARNS_IN_ITS_GRADIENT)
    with tempfile.TemporaryDirectory() as directory:
        result = oracle.check_program(program, mode, directory)
    assert (result.outcome, result.error) == ("crash", "SpuriousWarning"), result
    assert "invalid value encountered in log" in result.detail and "np.log(" in result.detail
    quiet = _program(WARNS_IN_ITS_GRADIENT.replace("np.log(x - 10.0)", "np.log(x + 10.0)"))
    with tempfile.TemporaryDirectory() as directory:
        assert oracle.check_program(quiet, mode, directory).outcome == "ok"


def test_a_program_that_warns_itself_is_not_watched():
    """Where f itself warns at the sample point (np.where computing the branch it does not
    take), its derivatives may too: the oracle compares the numbers only."""
    source = ("import numpy as np\n\ndef f(x):\n"
              "    return np.sum(np.where(x > 10.0, np.log(x - 10.0), x ** 2))\n")
    with tempfile.TemporaryDirectory() as directory:
        for mode in ("grad", "jvp", "hvp"):
            assert oracle.check_program(_program(source), mode, directory).outcome == "ok"



def test_programs_reading_a_module_array_keep_it_through_the_reuse_stage():
    """The reuse mode compares the module's arrays before and after the gradient: the stage
    once offered a module's array (held by the module alone, as a local name holds one) the
    result of an operation reading it, and wrote into it."""
    indexes = [i for i in range(200) if "global_array" in generator.generate(SEED, i).constructs]
    assert len(indexes) >= 5
    with tempfile.TemporaryDirectory() as directory, np.errstate(all="ignore"):
        for index in indexes[:5]:
            program = generator.generate(SEED, index)
            f, _ = oracle.load(program.source, directory)
            assert oracle.check_reuse(f, program.args(), np.random.default_rng(0)) is None, \
                program.source


def test_programs_with_a_value_zero_at_the_point_have_their_second_derivatives():
    """A reduction of an input less its value at the point (zero_value): the gradient a helper
    linear in it gets is a value that is 0 there; the helper returned 0 at once, and the
    Hessian-vector product through it was 0."""
    indexes = [i for i in range(200) if "zero_value" in generator.generate(SEED, i).constructs]
    checked = 0
    with tempfile.TemporaryDirectory() as directory:
        for index in indexes[:8]:
            program = generator.generate(SEED, index)
            result = oracle.check_program(program, "hvp", directory)
            if result.outcome != "clear-error":
                assert result.outcome == "ok", (result.detail, program.source)
                checked += 1
    assert checked >= 5
