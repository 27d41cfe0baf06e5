"""The numerical check of rules, shared by the case tables of tests/rules/ (one per topic) and
tests/mindspore/.

A table (``Cases``) lists calls: a function, its arguments (arrays of several shapes, pairs that
broadcast, 0-d arrays, Python floats, lists, tuples, dicts) and keywords. Every case is checked
by all three checks; one marked ``only=...`` (its function has no rule in the other direction,
or the rule says it cannot) by those named:

- ``ADJOINT``: ``vjp_of`` runs the gradient rule for a random cotangent ``g`` and random
  directions ``v_i`` (float64): ``sum_i vdot(vjp(g)_i, v_i)`` must match the central difference
  ``(vdot(g, f(x + eps v)) - vdot(g, f(x - eps v))) / 2eps``, and each gradient must have its
  input's shape (and structure, for lists, tuples and dicts). Complex values get complex
  cotangents and directions, and ``vdot`` reads as the README's convention (a cotangent ``c``
  of ``w`` means ``dL = Re(c dw)``): ``Re(sum(c * w))``; a real input's gradient must be real;
- ``TANGENT``: ``jvp_of`` runs the tangent rule with every input moving: the tangent must match
  ``(f(x + eps v) - f(x - eps v)) / 2eps`` and have the output's shape (and structure);
- ``INLINED``: the tangent rule once per input, run the way the transformer inlines it
  (statements reading a tangent the call does not have are dropped, contributions accumulate
  with ``+``).

Tables of float32 inputs are checked for dtypes instead (``check_*_dtype``): central
differences in float32 are too coarse to check values.

The numerical core (random directions in a value's structure, the inputs moved along them, the
product of a derivative with a direction) is ``mindgrad.api.check``'s, which
``mindgrad.check_grads`` runs on too: one checker, with the case tables around it here.
"""

import ast
import copy
import importlib
import zlib

import gast
import numpy as np
import pytest

from mindgrad import rules
from mindgrad.api.check import (
    is_complex_leaf,
    is_float_leaf,
    perturb,
    random_like,
    tree_vdot,
)
from mindgrad.rules import builtin, jvp_of, vjp_of
from mindgrad.runtime import is_zero, trees
from tests.support.versions import Missing

EPS = 1e-6
RTOL = 1e-5
ATOL = 1e-8  # of the adjoint check, whose value is one number
TANGENT_ATOL = 1e-7  # of the tangent check, entry by entry

ADJOINT, TANGENT, INLINED = "adjoint", "tangent", "inlined"
TANGENTS = (TANGENT, INLINED)
ALL_CHECKS = (ADJOINT, TANGENT, INLINED)


# ----- cases -------------------------------------------------------------------------------


class Case:
    """A call ``fn(*args, **kwargs)`` whose rule (``key``'s, else ``fn``'s) is checked."""

    def __init__(self, label, fn, *args, key=None, only=ALL_CHECKS, fix=None, zero_cotangent=(),
                 derived=None, xfail=None, skip=None, constant_keywords=(), **kwargs):
        self.label, self.fn, self.args, self.kwargs = label, fn, args, kwargs
        # the keyword arguments that hold floats move too, as inputs, but for those named
        # constant (a tolerance, a norm's order: a function has no derivative there that a rule
        # could give)
        self.constant_keywords = tuple(constant_keywords)
        self.moving_keywords = [k for k, v in kwargs.items()
                                if k not in constant_keywords and
                                trees.any_leaf(lambda x: is_float_leaf(x) or is_complex_leaf(x),
                                               v)]
        self.key = key  # the rule's key where it is not ``fn`` (methods, wrappers)
        self.checks = frozenset((only,) if isinstance(only, str) else only)
        assert self.checks <= set(ALL_CHECKS), f"{label}: unknown checks {only!r}"
        # fix(out, values): makes an output unique where it is so only up to signs (the factors
        # of svd, eigh) by keeping, negating or zeroing each entry of ``values`` as ``out`` says;
        # the check is then of fix(y, y) for y = fn(x), against fix(out, g) and fix(out, tangent)
        self.fix = fix
        self.zero_cotangent = zero_cotangent  # pieces of a list output given no cotangent
        self.derived = derived or {}  # index -> function of the args: moves with them
        # check -> the known bug that makes it fail (strict: the case passes once it is fixed)
        self.xfail = xfail or {}
        # a skip mark where the installed NumPy lacks what the case calls (tests/support/versions)
        self.skip = fn.skip if isinstance(fn, Missing) else skip

    @property
    def rule_key(self):
        return self.key if self.key is not None else self.fn

    @property
    def id(self):
        kw = ",".join(f"{k}={_describe_keyword(v)}" for k, v in self.kwargs.items())
        return f"{self.label}({','.join(_describe(a) for a in self.args)}{';' + kw if kw else ''})"

    def __repr__(self):
        return self.id


def _describe(a):
    if isinstance(a, float):
        return "float"
    if isinstance(a, np.ndarray):
        return "x".join(map(str, a.shape)) or "0d"
    if isinstance(a, (list, tuple)):
        return "[" + ",".join(_describe(x) for x in a) + "]"
    if isinstance(a, dict):
        return "{" + ",".join(f"{k}:{_describe(v)}" for k, v in a.items()) + "}"
    if callable(a) and hasattr(a, "__name__"):
        return a.__name__
    if " at 0x" in repr(a):
        return type(a).__name__
    return repr(a)


def _describe_keyword(v):
    if isinstance(v, float):
        return f"{v:.3g}"
    if isinstance(v, (np.ndarray, list, dict)) or callable(v):
        return _describe(v)
    return repr(v)


class Cases(list):
    """One topic's table of cases."""

    def add(self, fn, *args, label=None, **options):
        self.append(Case(label or getattr(fn, "__name__", str(fn)), fn, *args, **options))

    def method(self, name, *args, **options):
        def call(x, *a, **k):
            return getattr(x, name)(*a, **k)
        self.append(Case(f".{name}", call, *args, key=("method", name), **options))

    def attr(self, name, *args, **options):
        def read(x):
            return getattr(x, name)
        self.append(Case(f".{name}", read, *args, key=("attr", name), **options))

    def helper(self, fn, *args, **options):
        """A function of mindgrad's that generated code calls, labelled by its module."""
        self.add(fn, *args, label=f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}", **options)

    def checked(self, check):
        """The cases checked by ``check`` (ADJOINT, TANGENT or INLINED), to parametrize a test
        with; those failing by a known bug marked so, those calling what the installed NumPy
        lacks skipped."""
        return [pytest.param(c, marks=c.skip) if c.skip is not None else
                c if check not in c.xfail else
                pytest.param(c, marks=pytest.mark.xfail(reason=c.xfail[check], strict=True))
                for c in self if check in c.checks]


def call(op, *args):
    """``op(*args)``: a case for a callable object (a MindSpore primitive) passes it first."""
    return op(*args)


def seeded(draw, seed):
    """``draw`` after seeding NumPy's global generator: every call draws the same entries."""
    def seeded_draw(*args, **kwargs):
        np.random.seed(seed)
        return draw(*args, **kwargs)
    return seeded_draw


def defined_in_rules(name):
    """The function ``name`` of whichever ``mindgrad.rules`` module defines it (helpers of
    tangent rules, wherever the rules live)."""
    for topic in builtin.TOPICS:
        module = importlib.import_module(f"mindgrad.rules.{topic}")
        fn = getattr(module, name, None)
        if fn is not None and getattr(fn, "__module__", None) == module.__name__:
            return fn
    raise LookupError(f"no module of mindgrad.rules defines {name}")


# ----- trees of values: arrays, floats, lists, tuples and dicts of them ----------------------


def zeros_like_tree(v):
    """Zeros in the structure of the direction ``v`` (0.0 for a float, None for None)."""
    return trees.map_leaves(lambda x: None if x is None else 0.0 if isinstance(x, float)
                            else np.zeros(np.shape(x)), v)


def filled(dv):
    """Random values as a gradient or tangent: entries of lists (and tuples, as lists) without
    one are 0, of dicts left out."""
    if isinstance(dv, (list, tuple)):
        return [0 if x is None else filled(x) for x in dv]
    if isinstance(dv, dict):
        return {k: filled(x) for k, x in dv.items() if x is not None}
    return dv


def tree(out):
    """An output as nested lists of float leaves (iterators and views listed, others None)."""
    if isinstance(out, dict):
        return {k: tree(v) for k, v in out.items()}
    if isinstance(out, (list, tuple)) or type(out).__name__ in ("dict_items", "dict_values",
                                                                 "list_reverseiterator",
                                                                 "reversed"):
        return [tree(o) for o in out]
    if is_float_leaf(out) or is_complex_leaf(out):
        return out
    return None


def difference(plus, minus):
    """The central difference of two outputs (``tree``s): None where they hold no value."""
    def quotient(p, m):
        if p is None:
            return None
        return (np.asarray(p, dtype=complex if np.iscomplexobj(p) else float) -
                np.asarray(m)) / (2 * EPS)

    return trees.map_leaves(quotient, plus, minus)


def scale_of(numeric):
    """The largest magnitude in a tree of differences (0 for none)."""
    return max([float(np.max(np.abs(x))) for x in trees.iter_leaves(numeric)
                if x is not None and np.size(x)] + [0.0])


def assert_close(t, numeric, where, scale):
    if numeric is None:
        return
    if isinstance(numeric, dict):
        for k in numeric:
            assert_close(0 if is_zero(t) else t.get(k, 0), numeric[k], f"{where}[{k!r}]", scale)
        return
    if isinstance(numeric, list):
        if is_zero(t):
            t = [0] * len(numeric)
        assert isinstance(t, (list, tuple)), f"{where}: expected a sequence, got {type(t)}"
        assert len(t) == len(numeric), f"{where}: {len(t)} tangents for {len(numeric)} items"
        for i, (ti, ni) in enumerate(zip(t, numeric)):
            assert_close(ti, ni, f"{where}[{i}]", scale)
        return
    if is_zero(t):
        t = np.zeros(np.shape(numeric))
    else:
        assert np.shape(t) == np.shape(numeric), \
            f"{where}: tangent shape {np.shape(t)}, output shape {np.shape(numeric)}"
    tol = RTOL * max(scale, 1.0) + TANGENT_ATOL
    err = float(np.max(np.abs(np.asarray(t) - numeric))) if np.size(numeric) else 0.0
    assert err <= tol, f"{where}: tangent {t!r} vs central differences {numeric!r}"


# ----- moving the inputs -------------------------------------------------------------------


def _rng(c, check):
    """A generator of the case's own: its directions do not depend on which cases ran first."""
    return np.random.default_rng(zlib.crc32(f"{check}:{c.id}".encode()))


def _same(args, i, j):
    return args[i] is args[j]


def _directions(c, rng):
    """A random direction per argument (the same one for an argument passed twice, none for a
    derived one), then one per moving keyword argument (``c.moving_keywords``, in order: index
    ``len(c.args) + j``)."""
    directions = []
    for i, a in enumerate(c.args):
        twin = next((j for j in range(i) if c.args[j] is a), None)
        directions.append(None if i in c.derived else
                          directions[twin] if twin is not None else random_like(a, rng))
    return directions + [random_like(c.kwargs[k], rng) for k in c.moving_keywords]


def _keyword_directions(c, directions):
    """The moving keyword arguments' directions, by name."""
    return dict(zip(c.moving_keywords, directions[len(c.args):]))


def _moved(c, directions, eps, only=None):
    """``fn`` at the arguments moved by ``eps`` along their directions (``only``'s alone if
    given: an index of ``_directions``), fixed by ``c.fix``, as a tree."""
    fresh = copy.deepcopy(c.args)  # helpers such as add_at update their argument
    n = len(c.args)
    args = [perturb(a, None if v is None or (only is not None and (only >= n or
                                                                   not _same(c.args, i, only)))
                    else v, eps)
            for i, (a, v) in enumerate(zip(fresh, directions))]
    for i, fn in c.derived.items():
        args[i] = fn(args)
    kwargs = dict(c.kwargs)
    for j, k in enumerate(c.moving_keywords):
        v = directions[n + j]
        if v is not None and only in (None, n + j):
            kwargs[k] = perturb(copy.deepcopy(kwargs[k]), v, eps)
    out = c.fn(*args, **kwargs)
    return tree(out if c.fix is None else c.fix(out, out))


def _key_option(c):
    return {} if c.key is None else {"_key": c.key}


def _vjp_options(c):
    return {**_key_option(c), "_constant": c.constant_keywords}


# ----- the checks --------------------------------------------------------------------------


def check_adjoint(c):
    rng = _rng(c, ADJOINT)
    args = copy.deepcopy(c.args)
    out, vjp = vjp_of(c.fn, *args, **c.kwargs, **_vjp_options(c))
    g = random_like(tree(out), rng)
    if g is not None and not isinstance(g, (list, dict)) and np.ndim(out) == 0:
        g = complex(g) if np.iscomplexobj(g) else float(g)  # a scalar's may come as a number
    g = filled(g)
    for i in c.zero_cotangent:
        g[i] = 0
    if isinstance(out, tuple) and isinstance(g, list):
        g = tuple(g)
    fixed = g if c.fix is None else c.fix(out, g)
    grads = vjp(fixed)
    assert len(grads) == len(args)
    directions = _directions(c, rng)
    analytic = sum(tree_vdot(gr, v, f"argument {i}")
                   for i, (gr, v) in enumerate(zip(grads, directions)))
    if c.moving_keywords:
        by_keyword = vjp.by_keyword(fixed)
        analytic += sum(tree_vdot(by_keyword[k], v, f"keyword {k}")
                        for k, v in _keyword_directions(c, directions).items())
    numeric = (tree_vdot(g, _moved(c, directions, EPS), "output") -
               tree_vdot(g, _moved(c, directions, -EPS), "output")) / (2 * EPS)
    assert abs(analytic - numeric) <= RTOL * max(abs(analytic), abs(numeric)) + ATOL, \
        f"vjp gives {analytic!r}, central differences {numeric!r}"


def _tangent_args(c, directions, only=None):
    """One tangent per positional argument for ``jvp``: the direction (for ``only``'s index
    alone if given, zeros for the others), None for arguments that have none; and the moving
    keyword arguments' by name."""
    out = []
    n = len(c.args)
    for i, v in enumerate(directions[:n]):
        if v is None:
            out.append(None)
        elif only is None or (only < n and _same(c.args, i, only)):
            out.append(filled(v))
        else:
            out.append(filled(zeros_like_tree(v)))
    keywords = {k: None if v is None else filled(v) if only in (None, n + j) else
                filled(zeros_like_tree(v))
                for j, (k, v) in enumerate(_keyword_directions(c, directions).items())}
    return out, keywords


def _numeric_tangent(c, directions, only=None):
    return difference(_moved(c, directions, EPS, only), _moved(c, directions, -EPS, only))


def check_tangent(c):
    rng = _rng(c, TANGENT)
    args = copy.deepcopy(c.args)
    out, jvp = jvp_of(c.fn, *args, **c.kwargs, **_key_option(c))
    directions = _directions(c, rng)
    assert any(v is not None for v in directions), "a case needs an input to move"
    numeric = _numeric_tangent(c, directions)
    positional, keywords = _tangent_args(c, directions)
    got = jvp(*positional, **keywords)
    if c.fix is not None:
        got = c.fix(out, got)
    if not isinstance(got, (dict, list, tuple)) and not is_zero(got) and \
            isinstance(out, np.ndarray) and out.dtype.kind in "fc":
        assert np.asarray(got).dtype == out.dtype, f"tangent dtype {np.asarray(got).dtype}"
    assert_close(got, numeric, "all inputs", scale_of(numeric))


def check_tangent_inlined(c):
    rng = _rng(c, INLINED)
    rule = rules.lookup_tangent(c.rule_key)  # loads the deferred topics (SciPy's) first
    out = c.fn(*copy.deepcopy(c.args), **c.kwargs)
    bound = rule.bind(c.args, c.kwargs)
    directions = _directions(c, rng)
    for i, v in enumerate(directions[:len(c.args)]):
        if v is None or any(_same(c.args, i, j) for j in range(i)):
            continue
        t = filled(v)
        tangents = {}
        for name, value in bound.items():
            if name in rule.varargs:
                parts = [t if id(x) == id(c.args[i]) else 0 for x in value]
                if any(not is_zero(p) for p in parts):
                    tangents[name] = tuple(parts)
            elif value is c.args[i]:
                tangents[name] = t
        got = run_inlined(rule, out, bound, tangents)
        if c.fix is not None:
            got = c.fix(out, got)
        numeric = _numeric_tangent(c, directions, only=i)
        assert_close(got, numeric, f"input {i}", scale_of(numeric))
    for j, (k, v) in enumerate(_keyword_directions(c, directions).items()):
        if v is None:
            continue
        got = run_inlined(rule, out, bound, {k: filled(v)})
        if c.fix is not None and not is_zero(got):  # 0: no statement reads its tangent
            got = c.fix(out, got)
        numeric = _numeric_tangent(c, directions, only=len(c.args) + j)
        assert_close(got, numeric, f"keyword {k}", scale_of(numeric))


def check_adjoint_dtype(c):
    """float32 inputs get float32 gradients."""
    out, vjp = vjp_of(c.fn, *c.args, **c.kwargs, **_vjp_options(c))
    g = np.ones_like(out) if isinstance(out, np.ndarray) else np.asarray(out).dtype.type(1)
    for arg, grad in zip(c.args, vjp(g)):
        if is_zero(grad):
            continue  # the symbolic zero (a branch np.where did not take): the API makes it
            # an array of the argument's dtype (tests/api)
        if is_float_leaf(arg):
            assert np.asarray(grad).dtype == np.float32, f"{np.asarray(grad).dtype} gradient"
        elif isinstance(arg, list) and all(is_float_leaf(a) for a in arg):
            assert all(np.asarray(gi).dtype == np.float32 for gi in grad)


def check_tangent_dtype(c):
    """Tangents have their output's dtype."""
    out, jvp = jvp_of(c.fn, *c.args, **c.kwargs, **_key_option(c))
    tangents = [np.ones_like(a) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else
                [np.ones_like(x) for x in a] if isinstance(a, list) else None for a in c.args]
    t = jvp(*tangents)
    assert np.asarray(t).dtype == np.asarray(out).dtype, f"{np.asarray(t).dtype} tangent"


# ----- the template run as the transformer inlines it --------------------------------------


class _Reads(ast.NodeTransformer):
    def visit_Subscript(self, node):
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "d" and \
                isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Name(id="_t_" + node.slice.id, ctx=ast.Load()), node)
        return node


def template_body(rule):
    """The statements the transformer inlines (an @elementwise or @linear rule's are derived)."""
    return gast.gast_to_ast(gast.Module(body=rule.body, type_ignores=[])).body


def run_inlined(rule, out, bound, tangents):
    """Run ``rule`` for the call ``bound`` (param -> value) with ``tangents`` (param -> tangent)
    as the transformer does: drop what reads a missing tangent, accumulate with ``+``."""
    ns = dict(bound)
    ns[rule.out] = out
    for name, t in tangents.items():
        ns["_t_" + name] = t
    env = dict(rule.globals)
    result, written, dropped = 0, False, set()
    for stmt in template_body(rule):
        reads = {n.slice.id for n in ast.walk(stmt.value) if isinstance(n, ast.Subscript)
                 and isinstance(n.value, ast.Name) and n.value.id == "d"}
        loads = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
        target = stmt.targets[0]
        if reads - set(tangents) or loads & dropped:
            if isinstance(target, ast.Name):
                dropped.add(target.id)
            continue
        expr = ast.Expression(_Reads().visit(stmt.value))
        value = eval(compile(ast.fix_missing_locations(expr), "<rule>", "eval"), env, ns)
        if isinstance(target, ast.Name):
            ns[target.id] = value
        elif written:
            result = result + value
        else:
            result, written = value, True
    return result


# ----- every rule has a case ---------------------------------------------------------------


def untested_rules(check, cases, in_module, exact=()):
    """The rules for ``check``'s direction whose template lives in a module ``in_module``
    accepts, keyed by the function (or method, attribute) they are for, that no case in
    ``cases`` checks and that are not in ``exact`` (checked exactly elsewhere)."""
    table = rules._RULES if check == ADJOINT else rules._TANGENTS
    kinds = (ADJOINT,) if check == ADJOINT else TANGENTS
    tested = {rules._key(c.rule_key) for c in cases if c.checks & set(kinds)}
    tested |= {rules._key(k) for k in exact}
    selected = {key: rule for key, rule in table.items() if in_module(rule.template.__module__)}
    assert selected, "no rule lives in the modules selected"
    return [rule.name if not isinstance(key, tuple) else key for key, rule in selected.items()
            if key not in tested]


def in_rules_package(module):
    """Whether ``module`` is a topic module of mindgrad.rules (any but the registry)."""
    return module.startswith("mindgrad.rules.")


def is_mindgrads(module):
    """Whether ``module`` is one of mindgrad's (not a user's, nor a test's)."""
    return module.startswith("mindgrad.")


_CHECKS = (  # (test name, which table: 0 the cases, 1 the float32 cases, check, checker)
    ("test_adjoint_matches_central_differences", 0, ADJOINT, check_adjoint),
    ("test_tangent_matches_central_differences", 0, TANGENT, check_tangent),
    ("test_tangent_per_input_as_inlined", 0, INLINED, check_tangent_inlined),
    ("test_float32_inputs_get_float32_gradients", 1, ADJOINT, check_adjoint_dtype),
    ("test_tangents_keep_the_output_dtype", 1, TANGENT, check_tangent_dtype),
)


def rule_tests(cases, float32=()):
    """The checks of a topic's tables as test functions, for the topic module to take in with
    ``globals().update(rule_tests(CASES, FLOAT32))``: every case against central differences
    in both directions, and the float32 cases' dtypes. A check no case asks for is left out."""
    tests = {}
    for name, table, check, checker in _CHECKS:
        params = (cases, float32)[table]
        params = params.checked(check) if params else []
        if not params:
            continue

        def test(c, checker=checker):
            checker(c)

        test.__name__ = test.__qualname__ = name
        tests[name] = pytest.mark.parametrize("c", params, ids=str)(test)
    return tests
