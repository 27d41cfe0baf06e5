"""docs/functions.md, the catalog of supported functions, is what the registry gives: regenerated
here and compared with the committed page; every function it lists is reachable by the name it
shows, has the derivatives it says, and the assumptions come from the rule's docstring."""

import builtins
import importlib
import math
import operator
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import mindgrad
from mindgrad import rules
from mindgrad.rules import catalog

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "functions.md"


def _loaded():
    """Register every rule, the deferred topics' too; skip where their library is missing (the
    committed page lists SciPy's rules, so it cannot be generated without SciPy)."""
    for library in getattr(rules, "DEFERRED", {}):
        pytest.importorskip(library, reason=f"docs/functions.md lists the rules for {library}")
    catalog.load()
    return catalog.entries()


def test_the_committed_page_is_what_the_registry_gives():
    _loaded()
    shown = re.search(r"^Generated with (.*)\.$", PAGE.read_text(), re.MULTILINE).group(1)
    here = " and ".join(f"{name} {version}" for name, version in catalog.versions())
    if shown != here:
        pytest.skip(f"docs/functions.md was generated with {shown}, this is {here}: the names "
                    "a library has differ between versions")
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # this checkout's mindgrad, a fresh registry
    run = subprocess.run([sys.executable, "-m", "mindgrad.rules.catalog", "--check"],
                         capture_output=True, text=True, timeout=120, check=False, env=env,
                         cwd=ROOT)
    assert run.returncode == 0, (f"{run.stderr}\ndocs/functions.md is out of date: regenerate it "
                                 "with `python -m mindgrad.rules.catalog` and commit it")


def test_check_fails_on_a_stale_page_and_says_how_to_regenerate(tmp_path):
    _loaded()
    stale = tmp_path / "functions.md"
    stale.write_text("# Functions mindgrad differentiates\n")
    assert catalog.main(["--check", "--output", str(stale)]) == 1
    assert catalog.main(["--output", str(stale)]) == 0
    assert catalog.main(["--check", "--output", str(stale)]) == 0
    assert "`np.tanh`" in stale.read_text()


def _resolve(name):
    """The object a dotted name as a user writes it reads: ``np.fft.rfft``, ``math.sin``,
    ``scipy.stats.norm.pdf``, ``abs``."""
    head, *rest = name.split(".")
    if not rest:
        return getattr(builtins, head)
    if head == "scipy":
        obj, rest = importlib.import_module(f"scipy.{rest[0]}"), rest[1:]
    else:
        obj = {"np": np, "math": math, "operator": operator}[head]
    for part in rest:
        obj = getattr(obj, part)
    return obj


SYNTAX = {"a + b": operator.add, "a - b": operator.sub, "a * b": operator.mul,
          "a / b": operator.truediv, "a ** b": operator.pow, "a @ b": operator.matmul,
          "a % b": operator.mod, "a // b": operator.floordiv, "-a": operator.neg,
          "+a": operator.pos, "a & b": operator.and_, "a | b": operator.or_,
          "a ^ b": operator.xor, "a << b": operator.lshift, "a >> b": operator.rshift,
          "~a": operator.invert}


def test_every_name_listed_reads_a_function_with_the_derivatives_shown():
    found, _ = _loaded()
    assert len(found) > 300
    for entry in found:
        for name in entry.names:
            if name.startswith("x."):
                key = ("method", name[2:]) if ("method", name[2:]) in rules._RULES or \
                    ("method", name[2:]) in rules._TANGENTS else ("attr", name[2:])
                fn = None
            elif name.endswith("[...]"):  # np.r_[a, b]: the function the index computes
                fn = rules.index_call(_resolve(name[:-len("[...]")]))
                key = fn
            else:
                fn = SYNTAX[name] if name in SYNTAX else _resolve(name)
                key = fn
            adjoint = rules._RULES.get(key)
            tangent = rules._TANGENTS.get(key)
            if entry.constant:
                assert fn is not None and rules.is_nondifferentiable(fn), name
                assert adjoint is None, name
            else:
                assert (adjoint is not None, tangent is not None) == \
                    (entry.adjoint is not None, entry.tangent is not None), name
                assert adjoint is entry.adjoint, name


def test_the_page_names_each_function_once_in_its_topic():
    found, _ = _loaded()
    text = catalog.render()
    lines = text.splitlines()
    rows = [line for line in lines if line.startswith("| `")]
    constants = [item for line in lines if line.startswith("Constants (no gradient): ")
                 for item in re.sub(r" \(also [^)]*\)", "", line.split(": ", 1)[1]).split(", ")]
    assert len(rows) + len(constants) == len(found)
    for entry in found:
        shown = catalog.cell_names(entry.names)
        if entry.constant:
            assert constants.count(shown.split(" (also")[0]) == 1, entry.name
        else:
            assert sum(row.startswith(f"| {shown} |") for row in rows) == 1, entry.name
    for topic in {e.topic for e in found}:
        assert f"\n## {catalog.title(topic)}\n" in text


def test_known_functions_are_listed_with_their_derivatives():
    found, _ = _loaded()
    by_name = {name: e for e in found for name in e.names}
    assert by_name["np.tanh"].directions == "both"
    assert by_name["np.argmax"].directions == "constant"
    assert by_name["x.sum"].topic == "methods" and by_name["x.T"].directions == "both"
    assert by_name["math.sin"].directions == "both"
    assert by_name["a @ b"].topic == "operators"
    assert by_name["np.abs"] is by_name["np.absolute"]  # an alias is one entry
    assert by_name["np.absolute"].name == "np.absolute"  # listed under the function's own name


def test_the_assumptions_are_the_first_paragraph_of_the_rule_docstring():
    found, _ = _loaded()
    get = next(e for e in found if e.name == "x.get")
    first = " ".join(get.adjoint.template.__doc__.split("\n\n")[0].split())
    assert get.assumptions == first and "dict" in first
    assert catalog.markdown("``a`` | ``b``") == "`a` \\| `b`"


def _template(out, a):
    """Real ``a`` of full rank.

    A second paragraph the page leaves out."""


def test_first_paragraph_only_and_on_one_line():
    assert catalog.first_paragraph(_template) == "Real ``a`` of full rank."


def test_every_rule_of_a_public_function_has_a_public_name():
    """A function of NumPy or SciPy with a rule but no name in ``catalog.NAMESPACES`` would be
    missing from the page: only mindgrad's own helpers may go unnamed."""
    _, unnamed = _loaded()
    strays = [(topic, key) for topic, key in unnamed
              if not (getattr(key, "__module__", "") or "").startswith("mindgrad.")]
    assert not strays, f"add their namespace to catalog.NAMESPACES: {strays}"


def test_generating_the_page_imports_nothing_above_the_rules():
    assert catalog.__name__.startswith("mindgrad.rules.")
    assert mindgrad.rules.builtin.NOT_TOPICS >= {"catalog"}  # not imported as a topic


def _coverage():
    """benchmarks/coverage.py, which counts names from the catalog."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("coverage_script",
                                                  ROOT / "benchmarks" / "coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_coverage_counts_each_object_once_and_leaves_out_constants():
    _loaded()
    pytest.importorskip("scipy.signal")
    coverage = _coverage()
    names = coverage.Names()
    assert names.of("np.abs") == names.of("np.absolute") == "np.absolute"
    assert names.of("np.linalg.solve") == "np.linalg.solve" and names.of("np.nope") is None
    differentiable, constants = coverage.mindgrad_sets(names)
    found, _ = catalog.entries()
    expected = {names.of(n) for e in found if e.adjoint is not None and not e.constant
                for n in e.names if names.of(n)}
    assert differentiable == expected and "np.tanh" in differentiable
    excluded = coverage.no_derivative(names, constants)
    assert "np.argmax" in excluded and "np.tanh" not in excluded
    assert excluded["np.isnan"] in ("integer or boolean values",
                                    "mindgrad treats it as a constant")
    assert coverage._integer_valued(np.isfinite) and not coverage._integer_valued(np.frexp)


def test_the_coverage_reads_autograds_vjp_registry():
    pytest.importorskip("autograd")
    coverage = _coverage()
    found = coverage.autograd_set(coverage.Names())
    assert {"np.sin", "np.linalg.cholesky", "np.vstack"} <= found  # vstack: from primitives
    assert "np.floor" not in found and "np.argmax" not in found


def test_each_function_says_whether_its_adjoint_and_tangent_are_written_or_derived():
    """The Adjoint and Tangent columns follow the decorators that registered the rules, and
    the counts above the tables are the rows' own."""
    found, _ = _loaded()
    by_name = {name: e for e in found for name in e.names}
    assert (by_name["np.tanh"].adjoint_origin, by_name["np.tanh"].tangent_origin) == \
        ("slopes", "slopes")  # @elementwise
    assert (by_name["a @ b"].adjoint_origin, by_name["a @ b"].tangent_origin) == \
        ("written", "linear")  # @linear over @adjoint
    assert (by_name["np.fmax"].adjoint_origin, by_name["np.fmax"].tangent_origin) == \
        ("written", "diagonal")  # @diagonal over @adjoint
    solve = by_name["np.linalg.solve"]  # @transpose over @tangent
    assert (solve.adjoint_origin, solve.tangent_origin) == ("transposed", "written")
    twice = by_name["np.absolute"]  # still written twice (the real part of a complex slope)
    assert (twice.adjoint_origin, twice.tangent_origin) == ("written", "written")
    assert twice.written_twice and not solve.written_twice
    assert not by_name["np.tanh"].written_twice

    text = catalog.render()
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| `")]
    adjoints = [r[2] for r in rows]
    tangents = [r[3] for r in rows]
    differentiable = [e for e in found if not e.constant]
    assert len(rows) == len(differentiable)
    written_adjoints, written_tangents = adjoints.count("written"), tangents.count("written")
    derived_adjoints = sum(a not in ("written", "-") for a in adjoints)
    derived_tangents = sum(t not in ("written", "-") for t in tangents)
    assert f"- Adjoints: {written_adjoints} written, {derived_adjoints} derived" in text
    assert f"- Tangents: {written_tangents} written, {derived_tangents} derived" in text
    twice = sum(a == t == "written" for a, t in zip(adjoints, tangents))
    assert f"both written by hand: {twice}." in text
    assert twice == sum(e.written_twice for e in differentiable)


def test_a_rules_origin_follows_its_registration():
    """``catalog.origin`` of rules registered as a user registers them, one per decorator."""
    def f(x):
        return x

    def template(out, x):
        pass

    assert catalog.origin(None) is None
    assert catalog.origin(rules.Rule(f, template, "adjoint", lazy=True)) == "written"
    assert catalog.origin(rules.Rule(f, template, "tangent", lazy=True)) == "written"
    assert catalog.origin(rules.Rule(f, template, "adjoint", lazy=True,
                                     from_slopes=True)) == "slopes"
    assert catalog.origin(rules.Rule(f, template, "tangent", lazy=True,
                                     linear_in=("x",))) == "linear"
    assert catalog.origin(rules.Rule(f, template, "tangent", lazy=True,
                                     diagonal=True)) == "diagonal"
