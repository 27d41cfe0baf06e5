"""Every rule of mindgrad/rules has a numerical case in each direction it has a rule for, and
its template is one the transformer can inline. Rules are selected by the registry's keys (the
function, method or attribute they are for), from every module of mindgrad.rules but the
registry, wherever a topic keeps them; the cases from every table of tests/rules/.
"""

import ast
import importlib
import inspect
import pkgutil
import textwrap

import numpy as np
import pytest

import tests.rules
from mindgrad import rules
from mindgrad.rules import is_nondifferentiable, lookup, nondiff
from mindgrad.rules.numpy_callables import (
    apply_along_axis_grads,
    apply_along_axis_tangent,
    piecewise_grads,
    piecewise_tangent,
)
from mindgrad.rules.numpy_joining import mgrid_, ogrid_
from mindgrad.rules.numpy_pinv import no_second_derivative
from tests.support.rule_check import (
    ADJOINT,
    TANGENT,
    Cases,
    in_rules_package,
    is_mindgrads,
    template_body,
    untested_rules,
)

# casts checked exactly (float16, float32 and complex64 lose the precision central differences
# need): test_nondiff.py's test_scalar_casts_pass_the_gradient_back and ..._the_tangent
# and rules that refuse, checked to raise: numpy_pinv.no_second_derivative
# (test_linalg_spectral.py's test_pinv_of_a_rank_deficient_matrix_refuses_a_second_derivative)
# and the helpers of numpy_callables (test_numpy_callables.py's
# test_the_helpers_refuse_their_derivatives), and ranges whose bounds move (slice, np.mgrid,
# np.ogrid: test_silent_constants.py's test_slice_rules_refuse), and values that move with no
# rule (np.unique's, histograms', random draws': its test_values_that_move_are_refused_...,
# zip and enumerate kept as values: its test_zip_and_enumerate_kept_as_values_are_refused;
# the refusal itself, at second order: its test_a_draw_is_refused_at_second_order_...)
REFUSING = {no_second_derivative, apply_along_axis_grads, apply_along_axis_tangent,
            piecewise_grads, piecewise_tangent, slice, mgrid_, ogrid_, *nondiff.REFUSED, zip,
            enumerate, nondiff.moves_refused}
try:  # and scipy_integrate's (test_scipy_integrate.py's test_second_derivatives_are_refused)
    from mindgrad.rules.scipy_integrate import odeint_grads, odeint_tangent
    REFUSING |= {odeint_grads, odeint_tangent}
except ImportError:  # no SciPy: its rules are not there either
    pass
CHECKED_EXACTLY = {ADJOINT: {np.float16, np.float32, np.complex64} | REFUSING,
                   TANGENT: {np.float16, np.float32, np.complex64} | REFUSING}


def all_cases():
    """The cases of every table in tests/rules/."""
    cases = []
    for info in pkgutil.iter_modules(tests.rules.__path__):
        try:
            module = importlib.import_module(f"tests.rules.{info.name}")
        except pytest.skip.Exception:  # a table of an optional library's rules (SciPy's)
            continue
        table = getattr(module, "CASES", None)
        if isinstance(table, Cases):
            cases.extend(table)
    rules._load_deferred()  # the rules of the optional libraries the tables imported
    return cases


@pytest.mark.parametrize("check", [ADJOINT, TANGENT])
def test_every_rule_has_a_case(check):
    untested = untested_rules(check, all_cases(), in_rules_package, CHECKED_EXACTLY[check])
    assert not untested, f"{check} rules without a numerical check: {untested}"


def test_every_adjoint_rule_has_a_tangent_rule():
    all_cases()
    missing = [k for k in rules._RULES if k not in rules._TANGENTS]
    assert not missing, f"adjoint rules without a tangent rule: {missing}"


def test_adjoint_templates_are_inlinable():
    """Bodies hold only ``d[p] = expr`` (``slope[p] = expr``) / ``name = expr`` assignments
    with plain ``d[...]`` indices, after an optional docstring (what the rule assumes), and
    defaults are literal constants: the transformer inlines them."""
    literal = (type(None), bool, int, float, str, tuple)
    for rule in rules._RULES.values():
        if not is_mindgrads(rule.template.__module__):
            continue
        for p in rule.signature.parameters.values():
            if p.default is not inspect.Parameter.empty:
                assert isinstance(p.default, literal), f"{rule.name}: default of {p.name}"
        fdef = ast.parse(textwrap.dedent(inspect.getsource(rule.template))).body[0]
        body = fdef.body[1:] if ast.get_docstring(fdef) is not None else fdef.body
        for stmt in body:
            assert isinstance(stmt, ast.Assign) and len(stmt.targets) == 1, rule.name
            target = stmt.targets[0]
            if isinstance(target, ast.Subscript):
                assert isinstance(target.value, ast.Name) and target.value.id in ("d", "slope")
                assert isinstance(target.slice, ast.Name), rule.name
            else:
                assert isinstance(target, ast.Name), rule.name


def test_tangent_templates_are_inlinable():
    """Bodies hold only ``d[out] = expr`` / ``name = expr`` assignments, each reading at most one
    input tangent (never in a temporary), and defaults are literal constants."""
    literal = (type(None), bool, int, float, str, tuple)
    for rule in rules._TANGENTS.values():
        if not is_mindgrads(rule.template.__module__):
            continue
        for p in rule.signature.parameters.values():
            if p.default is not inspect.Parameter.empty:
                assert isinstance(p.default, literal), f"{rule.name}: default of {p.name}"
        for stmt in template_body(rule):
            assert isinstance(stmt, ast.Assign) and len(stmt.targets) == 1, rule.name
            target = stmt.targets[0]
            reads = [n for n in ast.walk(stmt.value) if isinstance(n, ast.Subscript)
                     and isinstance(n.value, ast.Name) and n.value.id == "d"]
            assert len({n.slice.id for n in reads}) <= 1, rule.name
            if isinstance(target, ast.Subscript):
                assert target.value.id == "d" and target.slice.id == rule.out, rule.name
            else:
                assert isinstance(target, ast.Name) and not reads, rule.name


def test_tangent_signatures_mirror_the_adjoint_rules():
    for key, rule in rules._TANGENTS.items():
        adj = rules._RULES.get(key)
        if adj is None or not is_mindgrads(rule.template.__module__):
            continue
        assert list(rule.signature.parameters) == list(adj.signature.parameters), rule.name
        assert rule.out == adj.out, rule.name


# ----- coverage of the functions users reach for -------------------------------------------

REQUIRED = [
    "exp", "log", "log1p", "expm1", "sqrt", "square", "sin", "cos", "tan", "arcsin", "arccos",
    "arctan", "sinh", "cosh", "tanh", "arctan2", "abs", "sign", "power", "maximum", "minimum",
    "clip", "where", "logaddexp", "sum", "mean", "prod", "max", "min", "var", "std", "cumsum",
    "dot", "matmul", "inner", "outer", "tensordot", "einsum", "reshape", "ravel", "transpose",
    "swapaxes", "moveaxis", "expand_dims", "squeeze", "broadcast_to", "concatenate", "stack",
    "hstack", "vstack", "split", "tile", "repeat", "flip", "diag", "trace", "triu", "tril", "take",
    "linalg.norm", "linalg.inv", "linalg.det", "linalg.solve", "linalg.svd", "linalg.eigh",
    "zeros", "ones", "zeros_like", "ones_like", "full", "arange", "linspace", "shape", "argmax",
    "argmin", "sort", "indices",
]


def _resolve(name):
    obj = np
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("name", REQUIRED)
def test_required_function_has_a_rule_or_is_nondifferentiable(name):
    fn = _resolve(name)
    assert lookup(fn) is not None or is_nondifferentiable(fn), f"np.{name} is not covered"
