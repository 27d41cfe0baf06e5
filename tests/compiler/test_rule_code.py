"""The code of mindgrad's own rules differentiates at the next order.

A rule's template calls helpers (``sum_tangent``, ``var_grad``, ...). Differentiated again
(jvp over jvp, jvp over grad, grad over grad), the generated code calls them with values that
carry derivatives; a helper without a rule of its own for that direction is then read as Python
and transformed like user code. So every such helper must be written in the Python mindgrad
differentiates: no call through an expression (``type(x)(...)``), no lambda or function held
as a value, no dict comprehension, no ``*`` of a list, no method of a value that carries a
derivative without a rule (``dtype.type(t)``).

Two checks: every helper reachable from a rule, transformed by forward mode (and reverse mode
where it has no adjoint) with its value parameters active; and second-order derivatives of
programs calling a broad sample of rules, against central differences.
"""

import inspect
import operator
import textwrap
import types

import gast
import numpy as np
import pytest

import mindgrad as mg
from mindgrad import rules
from mindgrad.compiler import driver
from tests.support.orders import check_all_modes

# Parameters that take integers, flags, dtypes or names: constants in every real call.
CONSTANT_PARAMETERS = {
    "axis", "axes", "dtype", "order", "keepdims", "ddof", "n", "shape", "kind", "mode", "which",
    "wrt", "edge_order", "indexing", "sparse", "copy", "correction", "norm", "side", "method",
    "key", "reverse", "start", "stop", "num", "endpoint", "idx", "index", "i", "k",
    "subscripts", "spec", "specs"}

# Helpers refused in a direction, each a clear error (none at present; one found goes here
# with the reason, and the test says when it differentiates again)
KNOWN = set()


def _called(namespace, tree):
    """The functions of mindgrad's modules that ``tree`` calls by name (``f(...)``,
    ``module.f(...)``)."""
    for node in gast.walk(tree):
        if not isinstance(node, gast.Call):
            continue
        func, found = node.func, None
        if isinstance(func, gast.Name):
            found = namespace.get(func.id)
        elif isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name):
            module = namespace.get(func.value.id)
            if isinstance(module, types.ModuleType) and module.__name__.startswith("mindgrad"):
                found = getattr(module, func.attr, None)
        if isinstance(found, types.FunctionType) and found.__module__.startswith("mindgrad."):
            yield found


def _read_as_code(fn):
    """Whether a derivative of code calling ``fn`` reads ``fn`` as Python (in a direction)."""
    if rules.is_nondifferentiable(fn):
        return False
    return rules.lookup(fn) is None or rules.lookup_tangent(fn) is None


def helpers_of_rules():
    """Every helper the rules reach that a next-order derivative reads as code."""
    pytest.importorskip("scipy")
    import scipy.linalg  # noqa: F401  (their rules are loaded once SciPy is imported)
    import scipy.special  # noqa: F401
    import scipy.stats  # noqa: F401

    rules.lookup(np.sin)  # loads the deferred topics
    todo = []
    for table in (rules._RULES, rules._TANGENTS):
        for rule in list(table.values()):
            for stmt in rule.body:
                todo.extend(_called(rule.globals, stmt))
    seen, found = set(), []
    while todo:
        fn = todo.pop()
        if fn in seen or not _read_as_code(fn):
            continue
        seen.add(fn)
        found.append(fn)
        tree = gast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
        for stmt in tree.body:
            todo.extend(_called(fn.__globals__, stmt))
    return found


# slow (pytest -m slow): every helper's code built in both modes, about two minutes; the
# second- and third-order tables of the large tier differentiate the helpers their rules reach
@pytest.mark.slow
@pytest.mark.parametrize("direction", ["fwd", "rev"])  # rev: reverse over a helper (grad of jvp)
def test_every_helper_of_a_rule_differentiates(direction):
    helpers = helpers_of_rules()
    assert len(helpers) > 250  # the walk found the helpers
    refused = {}
    lookup, transform = (rules.lookup_tangent, driver.run_forward) if direction == "fwd" else \
        (rules.lookup, driver.run)
    for fn in helpers:
        if lookup(fn) is not None:
            continue
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        active = [i for i, p in enumerate(params) if p.name not in CONSTANT_PARAMETERS]
        try:
            transform(fn, active, nargs=len(params))
        except Exception as exc:  # noqa: BLE001 (every refusal is listed)
            name = f"{fn.__module__}.{fn.__qualname__}"
            refused[direction, name] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    known = {k for k in KNOWN if k[0] == direction}
    unexpected = {k: v for k, v in refused.items() if k not in known}
    assert not unexpected, "rule code mindgrad refuses to differentiate:\n" + "\n".join(
        f"  {d} {n}: {why}" for (d, n), why in sorted(unexpected.items()))
    fixed = known - set(refused)
    assert not fixed, f"these differentiate now: take them out of KNOWN: {sorted(fixed)}"


# ----- second order through a broad sample of rules, against central differences ----------


def sorted_items_loop(x):
    d = {"b": x * 2.0, "a": np.sin(x)}
    s = 0.0
    for _, t in sorted(d.items(), key=operator.itemgetter(0)):
        s = s * np.sum(t) + np.sum(t ** 2)
    return s


def sorted_keys_loop(x):
    d = {"b": x * 2.0, "a": np.sin(x)}
    s = 0.0
    for k in sorted(d):
        s = s * np.sum(d[k]) + np.sum(d[k] ** 2)
    return s


def grids(x):
    a, b = np.meshgrid(x, x[:3] ** 2)
    c, e = np.meshgrid(x[:2], np.sin(x), indexing="ij", sparse=True)
    return np.sum(a * b ** 2) + np.sum(c * e ** 3)


def solve_det(x):
    m = np.outer(x, x)
    return np.sum(np.linalg.solve(m + 3 * np.eye(4), x)) + np.linalg.det(m + np.eye(4))


def list_reversed_dict(x):
    first = list(reversed(list(x ** 2)))[0]
    return np.sum(first * x) + np.sum(dict([("a", 1.0), ("b", x)])["b"] ** 3)


SAMPLE = {
    "std": lambda x: np.std(x * x),
    "var-axis": lambda x: np.sum(np.var(np.reshape(x, (2, 2)) ** 2, axis=0) ** 2),
    "diff": lambda x: np.sum(np.diff(x) ** 2),
    "diff-n2-prepend": lambda x: np.sum(np.diff(x ** 2, n=2, prepend=x[:1]) ** 3),
    "gradient": lambda x: np.sum(np.gradient(x) ** 2),
    "gradient-spacing": lambda x: np.sum(np.gradient(x ** 2, 0.5) ** 2),
    "gradient-2d": lambda x: sum(np.sum(g ** 2) for g in np.gradient(np.reshape(x, (2, 2)) ** 2)),
    "real_if_close": lambda x: np.sum(np.real_if_close(x + 0j) ** 3),
    "array-of-list": lambda x: np.sum(np.array([x, 2 * x]) ** 3),
    "astype": lambda x: np.sum(np.sin(x).astype(np.float64) ** 3),
    "builtin-sum-list": lambda x: np.sum(sum([x * x, np.sin(x)]) ** 2),
    "builtin-max": lambda x: max(x ** 2) * np.sum(x),
    "item": lambda x: np.sin(x).item(1) * np.sum(x ** 2),
    "sorted-items": sorted_items_loop,
    "sorted-keys": sorted_keys_loop,
    "meshgrid": grids,
    "concatenate": lambda x: np.sum(np.concatenate([x, x ** 2]) ** 3),
    "hstack-vstack": lambda x: np.sum(np.hstack([x, x ** 2]) ** 3) + np.sum(np.vstack([x, x]) ** 3),
    "column_stack": lambda x: np.sum(np.column_stack([x, np.sin(x)]) ** 3),
    "stack": lambda x: np.sum(np.stack([x, np.cos(x)], axis=1) ** 3),
    "cumsum-cumprod": lambda x: np.sum(np.cumsum(x) ** 2) + np.sum(np.cumprod(x)),
    "prod-norm": lambda x: np.prod(x) + np.linalg.norm(x) ** 3,
    "sort-where-clip": lambda x: np.sum(np.sort(x) ** 3 * np.where(x > 0, x, 2 * x)
                                        * np.clip(x, -0.5, 0.8)),
    "einsum-outer-trace": lambda x: np.einsum("i,j->", x, x ** 2) + np.trace(np.outer(x, x) ** 2),
    "solve-det": solve_det,
    "roll-flip-tile": lambda x: np.sum(np.roll(x, 1) * np.flip(x) ** 2 * np.tile(x, 2)[:4]),
    "fft": lambda x: np.sum(np.abs(np.fft.fft(x)) ** 2),
    "list-reversed-dict": list_reversed_dict,
}


@pytest.mark.parametrize("name", sorted(SAMPLE))
def test_second_order_through_rules(name):
    check_all_modes(SAMPLE[name], np.array([0.3, 1.2, -0.7, 0.4]),
                    modes=("jvp_of_jvp", "jvp_of_grad", "grad_of_grad"), label=name)


# Third order (jvp over jvp over grad): every sample program gives the right number (those
# that join lists of gradients once stopped with an error, refusing a sum of tangent tuples
# with the zero 0 as if it were a concatenation); an error would have to be listed here.
THIRD_ORDER_REFUSED = set()


def _fd_third(f, x, u, v, w, h=1e-3):
    def mixed(y):
        return (f(y + h * u + h * v) - f(y + h * u - h * v) - f(y - h * u + h * v)
                + f(y - h * u - h * v)) / (4 * h * h)
    return (mixed(x + h * w) - mixed(x - h * w)) / (2 * h)


def third_order(f, x, u, v, w):
    """``d3f(x)[u, v, w]`` as jvp over jvp over grad."""
    g = mg.grad(f)

    def along_w(z):
        return np.sum(g(z) * w)

    def along_v(y):
        return mg.jvp(along_w, (y,), (v,))[1]

    return mg.jvp(along_v, (x,), (u,))[1]


def test_third_order_through_rules_is_right_or_an_error():
    rng = np.random.default_rng(1)
    x = np.array([0.3, 1.2, -0.7, 0.4])
    u, v, w = rng.standard_normal((3, 4))
    refused = set()
    for name, f in sorted(SAMPLE.items()):
        try:
            got = third_order(f, x, u, v, w)
        except NotImplementedError as exc:  # a clear error, listed below
            assert "third order" in str(exc)
            refused.add(name)
            continue
        np.testing.assert_allclose(got, _fd_third(f, x, u, v, w), rtol=2e-3, atol=2e-4,
                                   err_msg=name)
    assert refused == THIRD_ORDER_REFUSED

