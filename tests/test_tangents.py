"""Every tangent (forward-mode) rule, checked against central differences in float64.

For random inputs and random directions ``v_i``, the rule's tangent must match
``(f(x + eps v) - f(x - eps v)) / 2eps``: once with every input moving (through ``jvp_of``),
and once per input, with the template run the way the transformer inlines it (statements
reading a tangent the call does not have are dropped, contributions accumulate with ``+``).
Tangents must have the output's shape (and structure, for lists and tuples).
"""

import ast
import builtins
import copy
import inspect
import math
import operator

import gast
import linalg_inputs
import numpy as np
import pytest

import mindgrad  # noqa: F401  (registers the rules)
from mindgrad import ops, rules, runtime
from mindgrad.rules import builtins_math as bm
from mindgrad.rules import forward_numpy_shape as fns
from mindgrad.rules import jvp_of
from mindgrad.rules import methods as me
from mindgrad.rules import nondiff as nd
from mindgrad.rules import numpy_elementwise as ne
from mindgrad.rules import numpy_linalg as nl
from mindgrad.rules import numpy_reductions as nr
from mindgrad.rules import numpy_shape as ns
from mindgrad.rules import operators as op_rules
from mindgrad.rules import runtime_rules as rr
from mindgrad.runtime import is_zero
from mindgrad.runtime.tangents import TangentList, TangentTuple

RNG = np.random.default_rng(20240611)
EPS = 1e-6
RTOL = 1e-5

FORWARD_MODULES = {f"mindgrad.rules.forward_{m}" for m in
                   ("operators", "builtins_math", "numpy_elementwise", "numpy_reductions",
                    "numpy_shape", "numpy_linalg", "methods", "runtime")} | \
    {f"mindgrad.rules.{m}" for m in ("operators", "builtins_math", "numpy_elementwise",
                                     "numpy_linalg", "runtime_rules")}

# ----- random inputs -----------------------------------------------------------------------


def r(*shape):
    """Standard normal, kept away from 0 (kinks)."""
    x = RNG.standard_normal(shape)
    return np.where(np.abs(x) < 0.1, 0.1 + np.abs(x), x)


def pos(*shape):
    return RNG.uniform(0.5, 2.0, shape)


def unit(*shape):
    return RNG.uniform(-0.8, 0.8, shape)


def big(*shape):
    return RNG.uniform(1.5, 3.0, shape)


def f(gen=r):
    return float(gen())


def well_conditioned(*shape):
    return 3.0 * np.eye(shape[-1]) + 0.4 * RNG.standard_normal(shape)


def is_float_leaf(v):
    if isinstance(v, bool):
        return False
    if isinstance(v, (float, np.floating)):
        return True
    return isinstance(v, np.ndarray) and v.dtype.kind == "f"


def random_like(v):
    if isinstance(v, (list, tuple)):
        parts = [random_like(x) for x in v]
        return None if all(p is None for p in parts) else parts
    if isinstance(v, dict):
        parts = {k: random_like(x) for k, x in v.items()}
        return None if all(p is None for p in parts.values()) else parts
    if not is_float_leaf(v):
        return None
    if isinstance(v, float):
        return float(RNG.standard_normal())
    return RNG.standard_normal(np.shape(v))


def zeros_like_tree(v):
    if isinstance(v, dict):
        return {k: zeros_like_tree(x) for k, x in v.items()}
    if isinstance(v, list):
        return [zeros_like_tree(x) for x in v]
    if isinstance(v, float):
        return 0.0
    return None if v is None else np.zeros(np.shape(v))


def as_tangent(dv):
    """A direction as a tangent: lists keep 0 for their entries without one."""
    if isinstance(dv, list):
        return [0 if x is None else as_tangent(x) for x in dv]
    if isinstance(dv, dict):
        return {k: as_tangent(x) for k, x in dv.items() if x is not None}
    return dv


def perturb(v, dv, eps):
    if dv is None:
        return v
    if isinstance(v, (list, tuple)):
        return type(v)(perturb(x, dx, eps) for x, dx in zip(v, dv))
    if isinstance(v, dict):
        return {k: perturb(x, dv[k], eps) for k, x in v.items()}
    if isinstance(v, float):
        return v + eps * dv
    return (v + eps * dv).astype(np.result_type(v), copy=False)


def tree(out):
    """An output as nested lists of float leaves (iterators and views listed, others None)."""
    if isinstance(out, dict):
        return {k: tree(v) for k, v in out.items()}
    if isinstance(out, (list, tuple)) or type(out).__name__ in ("dict_items", "dict_values",
                                                                 "list_reverseiterator",
                                                                 "reversed"):
        return [tree(o) for o in out]
    if is_float_leaf(out) or (isinstance(out, np.ndarray) and out.dtype.kind == "c"):
        return out
    return None


def difference(plus, minus):
    if plus is None:
        return None
    if isinstance(plus, dict):
        return {k: difference(plus[k], minus[k]) for k in plus}
    if isinstance(plus, list):
        return [difference(p, m) for p, m in zip(plus, minus)]
    return (np.asarray(plus, dtype=complex if np.iscomplexobj(plus) else float) -
            np.asarray(minus)) / (2 * EPS)


def scale_of(numeric):
    if numeric is None:
        return 0.0
    if isinstance(numeric, dict):
        return max([scale_of(v) for v in numeric.values()] + [0.0])
    if isinstance(numeric, list):
        return max([scale_of(v) for v in numeric] + [0.0])
    return float(np.max(np.abs(numeric))) if np.size(numeric) else 0.0


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
    tol = RTOL * max(scale, 1.0) + 1e-7
    err = float(np.max(np.abs(np.asarray(t) - numeric))) if np.size(numeric) else 0.0
    assert err <= tol, f"{where}: tangent {t!r} vs central differences {numeric!r}"


# ----- the template run as the transformer inlines it --------------------------------------


class _Reads(ast.NodeTransformer):
    def visit_Subscript(self, node):
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "d" and \
                isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Name(id="_t_" + node.slice.id, ctx=ast.Load()), node)
        return node


def _body(rule):
    """The statements the transformer inlines (an @elementwise rule's are derived)."""
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
    for stmt in _body(rule):
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


# ----- cases -------------------------------------------------------------------------------


class Case:
    def __init__(self, label, fn, *args, key=None, derived=None, inlined_only=False, fix=None,
                 **kwargs):
        self.label, self.fn, self.args, self.kwargs = label, fn, args, kwargs
        # fix(out, values): makes an output unique where it is so only up to signs (the factors
        # of svd, eigh) by keeping, negating or zeroing each entry of ``values`` as ``out`` says;
        # the check is then of fix(y, y) for y = fn(x), against fix(out, tangent)
        self.fix = fix
        # jvp_of runs every statement, reading 0 for arguments without tangent: a rule whose
        # statement for such an argument fails on 0 (``xs * d[n]``) is checked inlined only
        self.inlined_only = inlined_only
        self.key = key
        self.derived = derived or {}  # index -> function of the args: moves with them

    @property
    def rule_key(self):
        return self.key if self.key is not None else self.fn

    @property
    def id(self):
        def describe(a):
            if isinstance(a, float):
                return "float"
            if isinstance(a, np.ndarray):
                return "x".join(map(str, a.shape)) or "0d"
            if isinstance(a, (list, tuple)):
                return "[" + ",".join(describe(x) for x in a) + "]"
            if isinstance(a, dict):
                return "{dict}"
            if callable(a) and hasattr(a, "__name__"):
                return a.__name__
            return repr(a)
        kw = ",".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"{self.label}({','.join(describe(a) for a in self.args)}{';' + kw if kw else ''})"


CASES = []


def case(fn, *args, label=None, **kwargs):
    label = label or getattr(fn, "__name__", str(fn))
    CASES.append(Case(label, fn, *args, **kwargs))


def method(name, *args, **kwargs):
    def call(x, *a, **k):
        return getattr(x, name)(*a, **k)
    CASES.append(Case(f".{name}", call, *args, key=("method", name), **kwargs))


def attr(name, *args):
    def read(x):
        return getattr(x, name)
    CASES.append(Case(f".{name}", read, *args, key=("attr", name)))


def helper(fn, *args, derived=None, **kwargs):
    CASES.append(Case(f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}", fn, *args,
                      derived=derived, **kwargs))


# ----- operators ---------------------------------------------------------------------------

BROADCAST_PAIRS = [((), ()), ((3,), (3,)), ((3, 1), (4,)), ((2, 3), ()), ((1, 3), (2, 1)),
                   ((2, 3, 4), (3, 4)), ((4,), (2, 3, 1))]
for fn in (operator.add, np.add, operator.sub, np.subtract, operator.mul, np.multiply,
           operator.truediv, np.divide, operator.mod, np.remainder):
    for sx, sy in BROADCAST_PAIRS:
        case(fn, r(*sx), r(*sy))
    case(fn, f(), r(3))
    case(fn, f(), f())
for fn in (operator.pow, np.power):
    for sx, sy in BROADCAST_PAIRS:
        case(fn, pos(*sx), r(*sy))
    case(fn, f(pos), f())
    case(fn, pos(3), 2, label="pow-int-exponent")
for fn in (operator.neg, np.negative, operator.pos, np.positive):
    case(fn, r(2, 3))
    case(fn, f())
case(operator.add, [r(2), f()], [r(3)], label="list-concat")
case(operator.add, (r(2),), (f(), r(1)), label="tuple-concat")
case(operator.mul, [r(2), f()], 2, label="list-repeat", inlined_only=True)
MATMUL_SHAPES = [((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)),
                 ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 1, 2, 3), (4, 3, 2)),
                 ((3,), (5, 3, 2)), ((5, 2, 3), (3,))]
for fn in (operator.matmul, np.matmul):
    for sx, sy in MATMUL_SHAPES:
        case(fn, r(*sx), r(*sy))

def call_op(op, *args):
    return op(*args)


for ta in (False, True):
    for tb in (False, True):
        sa, sb = ((3, 2) if ta else (2, 3)), ((4, 3) if tb else (3, 4))
        CASES.append(Case(f"MatMul({ta},{tb})", call_op, ops.MatMul(ta, tb), r(*sa), r(*sb),
                          key=ops.MatMul))
for klass in (ops.Mul, ops.Add, ops.Sub):
    for sx, sy in [((2, 3), (2, 3)), ((3, 1), (4,)), ((), (2, 2))]:
        CASES.append(Case(klass.__name__, call_op, klass(), r(*sx), r(*sy), key=klass))
for klass in (ops.ReduceSum, ops.ReduceMean):
    for keep in (False, True):
        for axis in ((), 1, (0, -1)):
            CASES.append(Case(f"{klass.__name__}(keep_dims={keep})", call_op, klass(keep),
                              r(2, 3, 4), axis, key=klass))

# ----- builtins and math -------------------------------------------------------------------

case(builtins.float, r())
case(builtins.float, f())
case(builtins.float, np.float64(1.5) + 0.25)
case(builtins.sum, [r(3), r(3), f()])
case(builtins.sum, [r(3, 1), r(4)], label="sum-broadcast")
case(builtins.sum, r(4, 3))
case(builtins.sum, [f(), f()], f())
case(builtins.sum, [r(2), r(2)], r(2))
for fn in (builtins.max, builtins.min):
    case(fn, f(), f(), f())
    case(fn, [f(), f(), f()])
    case(fn, r(5))
    case(fn, r(), r())
case(builtins.list, r(3, 2))
case(builtins.list, [r(2), f()])
case(builtins.dict, {"a": r(2), "b": f()})
case(builtins.dict, [("a", r(2)), ("b", f())])
case(builtins.tuple, (r(2), f(), r(1)))
case(builtins.tuple, r(4))
case(builtins.reversed, [r(2), f(), r(3)])
case(builtins.reversed, r(3, 2))
case(builtins.abs, f())
case(builtins.abs, r(2, 3))

MATH = [(math.sin, r), (math.cos, r), (math.log, pos), (math.log1p, pos), (math.sinh, r),
        (math.cosh, r), (math.asin, unit), (math.acos, unit), (math.fabs, r), (math.erf, r),
        (math.exp, r), (math.expm1, r), (math.log2, pos), (math.log10, pos), (math.sqrt, pos),
        (math.tan, unit), (math.atan, r), (math.tanh, r)]
for fn, gen in MATH:
    case(fn, f(gen))
    case(fn, f(gen), label=fn.__name__ + "_again")
case(math.log, f(pos), f(big), label="log-base")
case(math.pow, f(pos), f())
case(math.atan2, f(), f())
case(math.copysign, f(), f())
case(math.copysign, f(), -f(pos))
case(np.linspace, f(), f(), 5)
case(np.linspace, r(3), f(), 4, False, axis=-1)
case(np.linspace, r(2, 3), r(3), 4, retstep=True, axis=1)
case(np.linspace, f(), f(), 1)
case(np.logspace, f(unit), f(unit), 5)
case(np.logspace, r(2) * 0.3, f(unit), 4, base=f(pos) + 1.0, axis=-1)
case(np.logspace, f(unit), f(unit), 4, True, pos(2) + 1.0)
case(np.geomspace, f(pos), f(big), 5)
case(np.geomspace, -pos(3), -f(big), 4, axis=1)
case(math.hypot, f(), f())
case(math.hypot, f(), f(), f())
case(math.hypot, f())

# ----- NumPy elementwise -------------------------------------------------------------------

UNARY = [
    (np.exp, r), (np.exp2, r), (np.expm1, r), (np.log, pos), (np.log2, pos), (np.log10, pos),
    (np.log1p, pos), (np.sqrt, pos), (np.cbrt, pos), (np.square, r), (np.reciprocal, pos),
    (np.sin, r), (np.cos, r), (np.tan, unit), (np.arcsin, unit), (np.arccos, unit),
    (np.arctan, r), (np.sinh, r), (np.cosh, r), (np.tanh, r), (np.arcsinh, r),
    (np.arccosh, big), (np.arctanh, unit), (np.sinc, r), (np.deg2rad, r), (np.rad2deg, r),
    (np.radians, r), (np.degrees, r), (np.absolute, r), (np.fabs, r), (np.conjugate, r),
    (np.real, r), (np.imag, r),
]
for fn, gen in UNARY:
    case(fn, f(gen))
    case(fn, gen())
    case(fn, gen(3))
    case(fn, gen(2, 3))
case(np.sinc, np.array([0.0, 0.5, -1.5]), label="sinc-at-zero")

BINARY = [np.arctan2, np.hypot, np.maximum, np.minimum, np.fmax, np.fmin, np.logaddexp,
          np.logaddexp2, np.copysign]
for fn in BINARY:
    for sx, sy in BROADCAST_PAIRS:
        case(fn, r(*sx), r(*sy))
    case(fn, f(), r(3))
    case(fn, f(), f())

for sc, sx, sy in [((3, 4), (3, 4), (3, 4)), ((3, 1), (4,), ()), ((2, 3), (1, 3), (2, 1)),
                   ((), (3,), (3,)), ((3,), (), ())]:
    case(np.where, RNG.random(sc) > 0.5, r(*sx), r(*sy))

case(np.clip, r(3, 4), -0.5, 0.7)
case(np.clip, r(3, 4), RNG.uniform(-1, -0.2, 4), RNG.uniform(0.2, 1, (3, 1)))
case(np.clip, r(2, 3), None, RNG.uniform(-0.3, 0.3, 3))
case(np.clip, r(2, 3), RNG.uniform(-0.3, 0.3, (2, 1)), None)
case(np.clip, r(3), RNG.uniform(-0.3, 0.3, (2, 3)), 0.5, label="clip-bound-broadcasts")
case(np.clip, f(), -0.5, 0.5)
case(np.clip, r(5), min=-0.5, max=0.5)
case(np.clip, r(5), a_min=-0.5, a_max=None)

for fn in (np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray,
           np.copy):
    case(fn, r(2, 3))
    case(fn, f())
case(np.array, [r(3), r(3)])
case(np.array, [f(), f(), f()])
case(np.array, [[f(), 1.0], [f(), f()]], label="array-nested")
case(np.array, (r(2), r(2), r(2)), ndmin=3)
case(np.array, r(3), ndmin=2)
case(np.array, r(3), dtype=np.complex128)
case(np.asarray, [[f(), f()], [f(), f()]])

case(np.full, (2, 3), f())
case(np.full, (2, 3), r(3))
case(np.full_like, r(2, 3), r(2, 1))
case(np.full_like, r(2, 3), f())
for t in (np.float64, np.longdouble):
    case(t, f())
    case(t, r())
case(np.float64, r(2, 2))
case(np.complex128, r(2), label="complex128-of-real")

# ----- reductions --------------------------------------------------------------------------

REDUCTION_FORMS = [((), {}), ((4,), {}), ((3, 4), {}), ((3, 4), {"axis": 0}),
                   ((3, 4), {"axis": -1, "keepdims": True}), ((2, 3, 4), {"axis": (0, 2)}),
                   ((2, 3, 4), {"axis": (-1, 1), "keepdims": True}), ((2, 3, 4), {"axis": 1})]
for fn in (np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std, np.nansum,
           np.nanmean, np.nanmax, np.nanmin):
    for shape, kw in REDUCTION_FORMS:
        case(fn, r(*shape), **kw)
    case(fn, f())
mask = RNG.random((3, 4)) > 0.3
mask[:, 0] = True
for fn in (np.sum, np.mean, np.prod, np.max, np.min):
    case(fn, r(3, 4), axis=1, where=mask, **({"initial": -10.0} if fn is np.max else
                                              {"initial": 10.0} if fn is np.min else {}))
case(np.sum, r(3, 4), 0, None, None, False, f(), label="sum-initial-positional")
case(np.sum, r(3, 4), axis=0, dtype=np.float64, initial=2.0)
case(np.max, r(3, 4), axis=0, initial=0.5)
case(np.prod, r(3, 4), 1, None, None, False, f(), label="prod-initial-positional")
case(np.prod, np.array([1.5, 0.0, -2.0, 0.7]), label="prod-one-zero")
case(np.prod, np.array([[1.5, 0.0, 2.0], [0.5, 1.2, -1.0]]), axis=1, label="prod-zeros")
case(np.nansum, np.array([1.0, np.nan, 2.0, 3.0]))
case(np.nanmean, np.array([[1.0, np.nan], [2.0, 3.0]]), axis=0)
for fn in (np.var, np.std):
    case(fn, r(3, 4), 0, None, None, 1)
    case(fn, r(3, 4), axis=1, correction=1, keepdims=True)
    case(fn, r(2, 3, 4), ddof=2)
    case(fn, r(3, 4), axis=1, where=mask, ddof=1)
    case(fn, r(3, 4), axis=0, keepdims=True, mean=np.full((1, 4), 0.3))

for fn in (np.cumsum, np.cumprod):
    case(fn, r(5))
    case(fn, r(3, 4))
    case(fn, r(3, 4), 0)
    case(fn, r(2, 3, 4), axis=-1)
    case(fn, f())
case(np.cumprod, np.array([1.5, 0.0, -2.0, 0.7, 1.1]), label="cumprod-zero")
case(np.cumprod, np.array([[1.5, 0.0, 2.0, 0.0], [0.5, 1.2, -1.0, 2.0]]), axis=1,
     label="cumprod-zeros")

case(np.average, r(3, 4))
case(np.average, r(3, 4), 1)
case(np.average, r(3, 4), None, pos(3, 4))
case(np.average, r(3, 4), 0, pos(3))
case(np.average, r(2, 3, 4), -1, pos(4), keepdims=True)
case(np.average, r(3, 4), 1, pos(3, 4), True)
case(np.average, r(3, 4), 0, None, True)

# ----- shape -------------------------------------------------------------------------------

case(np.reshape, r(2, 3), (3, 2))
case(np.reshape, r(2, 3, 4), (4, -1), order="F")
case(np.reshape, r(6), shape=(2, 3))
case(np.reshape, f(), (1, 1))
case(np.ravel, r(2, 3))
case(np.ravel, r(2, 3), "F")
case(np.expand_dims, r(2, 3), (0, 2))
case(np.expand_dims, f(), 0)
case(np.squeeze, r(1, 3, 1))
case(np.squeeze, r(1, 3, 1), axis=-1)
case(np.atleast_1d, f())
case(np.atleast_1d, r(), r(3))
case(np.atleast_2d, r(3))
case(np.atleast_3d, r(2, 3), r(), f())
case(np.broadcast_to, r(3, 1), (2, 3, 4))
case(np.broadcast_to, f(), (2, 2))
case(np.transpose, r(2, 3))
case(np.transpose, r(2, 3, 4))
case(np.transpose, r(2, 3, 4), (1, 0, 2))
case(np.transpose, r(2, 3, 4), axes=(-1, 0, 1))
case(np.swapaxes, r(2, 3, 4), 0, -1)
case(np.moveaxis, r(2, 3, 4), 0, -1)
case(np.moveaxis, r(2, 3, 4), (0, 1), (2, 0))
case(np.matrix_transpose, r(2, 3, 4))

case(np.concatenate, [r(2, 3), r(1, 3), r(4, 3)])
case(np.concatenate, [r(2, 3), r(2, 1)], axis=1)
case(np.concatenate, [r(2, 3), r(2, 1)], -1)
case(np.concatenate, [r(2, 3), r(4)], axis=None)
case(np.concatenate, r(3, 2, 2), label="concatenate-of-an-array")
case(np.stack, [r(2, 3), r(2, 3)])
case(np.stack, [r(2, 3), r(2, 3), r(2, 3)], axis=-1)
case(np.stack, [f(), f()])
case(np.hstack, [r(3), r(2)])
case(np.hstack, [r(2, 3), r(2, 1)])
case(np.hstack, (f(), r(2)))
case(np.vstack, [r(3), r(3)])
case(np.vstack, [r(2, 3), r(1, 3), r(3)])
case(np.dstack, [r(2, 3), r(2, 3, 2)])
case(np.column_stack, [r(3), r(3, 2)])

case(np.split, r(6), 3)
case(np.split, r(4, 6), [1, 4], axis=1)
case(np.array_split, r(7), 3)
case(np.array_split, r(2, 7), 3, axis=-1)
case(np.hsplit, r(2, 4), 2)
case(np.hsplit, r(4), [1])
case(np.vsplit, r(4, 2), 2)
case(np.dsplit, r(2, 2, 4), [1, 3])
case(np.unstack, r(3, 2))
case(np.unstack, r(3, 2, 4), axis=1)

case(np.tile, r(3), 2)
case(np.tile, r(2, 3), (2, 1))
case(np.tile, r(3), (2, 2, 2))
case(np.tile, f(), 3)
case(np.repeat, r(3), 2)
case(np.repeat, r(2, 3), 2, axis=0)
case(np.repeat, r(2, 3), [1, 0, 3], axis=-1)
case(np.repeat, f(), 4)

case(np.flip, r(3))
case(np.flip, r(2, 3, 4), axis=(0, 2))
case(np.fliplr, r(2, 3))
case(np.flipud, r(2, 3))
case(np.roll, r(5), 2)
case(np.roll, r(2, 3, 4), (1, -2), axis=(0, 2))
case(np.rot90, r(2, 3))
case(np.rot90, r(2, 3, 4), 3, axes=(1, 2))
case(np.sort, r(5))
case(np.sort, r(3, 4), axis=0)
case(np.sort, r(3, 4), axis=None)
case(np.sort, r(2, 3, 4))

case(np.diag, r(3))
case(np.diag, r(3), 1)
case(np.diag, r(3, 4))
case(np.diag, r(4, 3), -1)
case(np.diagonal, r(3, 3))
case(np.diagonal, r(2, 3, 4), -1, 2, 0)
case(np.trace, r(3, 3))
case(np.trace, r(2, 3, 4), axis1=1, axis2=2)
for fn in (np.triu, np.tril):
    case(fn, r(3, 3))
    case(fn, r(2, 3, 3), k=-1)
    case(fn, r(4))

case(np.take, r(5), [0, 2, 2, 4])
case(np.take, r(3, 4), np.array([[0, 1], [3, 3]]), axis=1)
case(np.take, r(3, 4), [0, 5, -7], axis=1, mode="clip")
case(np.take, r(3, 4), 5)
case(np.take_along_axis, r(3, 4), np.argsort(RNG.random((3, 4)), axis=1)[:, :2], axis=1)
case(np.take_along_axis, r(3, 4), np.array([[0, 0, 2, 1]]), axis=0)

case(np.pad, r(3), 2)
case(np.pad, r(3), (1, 2), "constant", constant_values=5.0)
for mode in ("edge", "reflect", "symmetric", "wrap", "mean", "linear_ramp"):
    case(np.pad, r(2, 4), ((1, 2), (3, 1)), mode)
case(np.pad, r(5), 2, "reflect", reflect_type="odd")
case(np.diff, r(6))
case(np.diff, r(6), 2)
case(np.diff, r(4, 5), axis=0)
case(np.diff, r(4, 5), 1, 1, r(4, 1), r(4, 2))
case(np.diff, r(5), 1, -1, f())

case(np.meshgrid, r(3), r(4))
case(np.meshgrid, r(3), r(4), indexing="ij")
case(np.meshgrid, r(2), r(3), r(4))
case(np.meshgrid, r(3), r(2), sparse=True)

# ----- products and linear algebra ---------------------------------------------------------

DOT_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
              ((2, 2, 3), (3,)), ((2, 3), (5, 3, 4)), ((), (2, 3)), ((2, 3), ())]
for sa, sb in DOT_SHAPES:
    case(np.dot, r(*sa), r(*sb))
case(np.dot, f(), f())
for sa, sb in [((3,), (3,)), ((2, 3), (4, 3)), ((2, 2, 3), (5, 3)), ((), (2, 3))]:
    case(np.inner, r(*sa), r(*sb))
case(np.outer, r(3), r(4))
case(np.outer, r(2, 2), r(3))
case(np.multiply.outer, r(3), r(2, 2), label="multiply.outer")
case(np.multiply.outer, f(), r(2), label="multiply.outer")
case(np.vdot, r(3), r(3))
case(np.vdot, r(2, 3), r(3, 2))
for fn in (np.linalg.vecdot, np.vecdot):
    case(fn, r(3), r(3))
    case(fn, r(2, 3), r(3))
    case(fn, r(3, 4), r(3, 1), axis=0)
case(np.tensordot, r(2, 3, 4), r(3, 4, 5))
case(np.tensordot, r(2, 3), r(3, 4), 1)
case(np.tensordot, r(2, 3), r(4), 0)
case(np.tensordot, r(2, 3, 4), r(4, 2, 5), axes=([0, 2], [1, 0]))
EINSUM = [("ij,jk->ik", (2, 3), (3, 4)), ("ij->", (2, 3)), ("ii->i", (3, 3)),
          ("i,i->", (3,), (3,)), ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
          ("...ij,...jk->...ik", (2, 1, 3, 4), (5, 4, 2)), ("ij,jk,kl->il", (2, 3), (3, 4), (4, 2))]
for spec, *shapes in EINSUM:
    case(np.einsum, spec, *[r(*s) for s in shapes])
_x = r(3)
case(np.einsum, "i,i->", _x, _x, label="einsum-same-operand-twice")
LINALG_RNG = np.random.default_rng(20240614)  # its own stream: the other inputs stay as they are
helper(nl.einsum_list, "ij,jk->ik", [LINALG_RNG.standard_normal((2, 3)),
                                     LINALG_RNG.standard_normal((3, 4))])
helper(nl.einsum_list, "ii,i->i", [LINALG_RNG.standard_normal((3, 3)),
                                   LINALG_RNG.standard_normal(3)], optimize=True)

case(np.linalg.norm, r(5))
case(np.linalg.norm, f())
case(np.linalg.norm, r(3, 4))
case(np.linalg.norm, r(2, 3, 4))
case(np.linalg.norm, r(3, 4), axis=1)
case(np.linalg.norm, r(3, 4), axis=0, keepdims=True)
case(np.linalg.norm, r(2, 3, 4), axis=(0, 2))
for order in (1, 2, np.inf, -np.inf, 3, 0.5):
    case(np.linalg.norm, r(5), ord=order)
    case(np.linalg.norm, r(3, 4), ord=order, axis=-1)
for order in ("fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf):
    case(np.linalg.norm, r(3, 4), order)
    case(np.linalg.norm, r(2, 3, 4), ord=order, axis=(2, 1))

case(np.linalg.inv, well_conditioned(3, 3))
case(np.linalg.inv, well_conditioned(2, 3, 3))
case(np.linalg.det, well_conditioned(3, 3))
case(np.linalg.det, well_conditioned(2, 4, 4))
case(np.linalg.slogdet, well_conditioned(3, 3))
case(np.linalg.slogdet, -well_conditioned(2, 3, 3))
case(np.linalg.solve, well_conditioned(3, 3), r(3))
case(np.linalg.solve, well_conditioned(3, 3), r(3, 2))
case(np.linalg.solve, well_conditioned(2, 3, 3), r(3))
case(np.linalg.solve, well_conditioned(2, 3, 3), r(2, 3, 4))
case(np.linalg.solve, well_conditioned(3, 3), r(2, 3, 4))

# svd and eigh: inputs with distinct singular values and eigenvalues, and outputs made
# unique by ``fix`` (see linalg_inputs.py)


def separated(*shape):
    return linalg_inputs.separated(LINALG_RNG, *shape)


def symmetric_in(uplo, *shape):
    return linalg_inputs.symmetric_in(LINALG_RNG, uplo, *shape)


fix_svd, fix_eigh = linalg_inputs.fix_svd, linalg_inputs.fix_eigh


for _shape in [(3, 3), (4, 3), (3, 5), (2, 4, 3), (2, 3, 2, 4)]:
    case(np.linalg.svd, separated(*_shape), full_matrices=False, fix=fix_svd)
    case(np.linalg.svd, separated(*_shape), compute_uv=False)
    case(np.linalg.svdvals, separated(*_shape))
case(np.linalg.svd, separated(3, 3), fix=fix_svd)
case(np.linalg.svd, separated(2, 3, 3), fix=fix_svd)
case(np.linalg.svd, symmetric_in("L", 3, 3), hermitian=True, fix=fix_svd)
case(np.linalg.svd, symmetric_in("L", 2, 4, 4), hermitian=True, fix=fix_svd)
case(np.linalg.svd, symmetric_in("L", 4, 4), False, False, True)
for _uplo in ("L", "U"):
    for _shape in [(3, 3), (2, 4, 4)]:
        case(np.linalg.eigh, symmetric_in(_uplo, *_shape), UPLO=_uplo, fix=fix_eigh)
        case(np.linalg.eigvalsh, symmetric_in(_uplo, *_shape), UPLO=_uplo)

# ----- methods and attributes --------------------------------------------------------------

for name in ("sum", "mean", "prod", "max", "min", "var", "std"):
    method(name, r(3, 4))
    method(name, r(3, 4), 0)
    method(name, r(2, 3, 4), (0, -1), keepdims=True)
    method(name, r(2, 3), axis=-1)
method("var", r(3, 4), 1, None, None, 1)
method("std", r(3, 4), ddof=1)
method("sum", r(3, 4), where=mask)
for name in ("cumsum", "cumprod"):
    method(name, r(3, 4))
    method(name, r(3, 4), 1)
method("trace", r(3, 4))
method("trace", r(2, 3, 3), 0, 1, 2)
method("reshape", r(2, 3), 3, 2)
method("reshape", r(2, 3), (6,))
method("reshape", r(2, 3), -1, order="F")
method("ravel", r(2, 3))
method("flatten", r(2, 3), "F")
method("transpose", r(2, 3))
method("transpose", r(2, 3, 4), 2, 0, 1)
method("transpose", r(2, 3, 4), (1, 2, 0))
method("transpose", r(2, 3, 4), None)
method("swapaxes", r(2, 3, 4), 0, 2)
method("squeeze", r(1, 3, 1))
method("squeeze", r(1, 3, 1), 0)
method("repeat", r(2, 3), 2, 1)
method("diagonal", r(3, 4), 1)
method("dot", r(2, 3), r(3, 4))
method("dot", r(3), r(3))
method("clip", r(3, 4), -0.5, 0.5)
method("clip", r(3, 4), RNG.uniform(-1, -0.2, 4), RNG.uniform(0.2, 1, (3, 1)))
method("clip", r(3, 4), max=0.3)
method("astype", r(2, 3), np.float64)
method("astype", r(2, 3), np.complex128)
method("astype", r(2, 3), np.int64)
method("copy", r(2, 3))
method("conj", r(2, 3))
method("conjugate", r(3))
method("take", r(3, 4), [1, 1, 0], 1)
method("take", r(3, 4), [0, 11])
method("item", r(1, 1))
method("item", r(3, 4), 5)
method("item", r(3, 4), 1, 2)
method("items", {"a": r(2), "b": f()})
method("get", {"a": r(2), "b": r(2, 3)}, "b")
method("get", {"a": r(2)}, "c", r(3))
method("get", {"a": r(2)}, "a", r(3, 2))
method("values", {"a": r(2), "b": f(), "c": r(1, 2)})
attr("T", r(2, 3))
attr("T", r(2, 3, 4))
attr("mT", r(2, 3, 4))
attr("real", r(3))

# ----- the runtime helpers that generated adjoint code calls (forward over reverse) --------

helper(runtime.unbroadcast, r(2, 3, 4), r(3, 1))
helper(runtime.unbroadcast, r(3), r(3))
helper(runtime.unreduce, r(3), r(3, 4), 1)
helper(runtime.unreduce, r(3, 1), r(3, 4), -1, True)
helper(runtime.unreduce, r(), r(2, 2))
helper(runtime.add, r(3), r(3))
helper(runtime.add, r(3), f())
helper(runtime.add, [r(2), f()], [r(2), f()])
helper(runtime.add, (r(2), 0), [r(2), f()])
helper(runtime.add, {"a": r(2)}, {"a": r(2), "b": f()})
helper(runtime.add_at, r(4), r(4), 1, f())
helper(runtime.add_at, r(3, 4), r(3, 4), (slice(None), [0, 2, 2]), r(3, 3))
helper(runtime.add_at, 0, r(3, 4), 1, r(4))
helper(runtime.add_at, [r(2), 0, f()], [r(2), r(3), f()], 1, r(3))
helper(runtime.add_at, {"a": r(2)}, {"a": r(2), "b": f()}, "b", f())
helper(rr.added_grad, r(3, 4), r(3, 4), 1, r(4))
helper(rr.added_grad, r(3, 4), r(3, 4), (slice(None), [0, 2, 2]), r(3, 3))
helper(rr.added_grad, r(4), r(4), 2, f())
helper(runtime.item, [r(2), f()], 1)
helper(runtime.item, r(3, 2), 2)
helper(runtime.reversed_items, r(3, 2))
case(sorted, [1.5, -0.3, 0.7])
helper(runtime.reversed_items, r(4), 2)
helper(runtime.concat_grads, [r(2), f(), r(1)], [1.0, 2.0], [3.0])
helper(runtime.as_grad, r(3, 1), r(3, 4))
helper(runtime.as_grad, r(3), r(3))
helper(runtime.as_grad, [r(2), f()], [r(2), 1.5])
helper(runtime.as_grad, r(2), 1.5)
helper(runtime.saved_item, r(3, 4), 1)
helper(runtime.saved_item, [r(2), f()], 0)
helper(runtime.saved_item, {"a": r(2)}, "a")
helper(runtime.setitem_grad, r(3, 4), 1, r(4))
helper(runtime.setitem_grad, r(3, 4), (slice(None), 0), r(1))
helper(runtime.setitem_grad, [r(2), f()], 1, 1.0)
helper(runtime.pop_grad, [r(2), f(), r(3)])
helper(runtime.push_grad, [r(2), f()], r(3))
helper(runtime.push_grad, 0, r(3))

helper(op_rules.matmul_grad_x, r(2, 4), r(2, 3), r(3, 4))
helper(op_rules.matmul_grad_x, r(4), r(3), r(3, 4))
helper(op_rules.matmul_grad_x, r(5, 2, 4), r(2, 3), r(5, 3, 4))
helper(op_rules.matmul_grad_x, r(2), r(2, 3), r(3))
helper(op_rules.matmul_grad_y, r(2, 4), r(2, 3), r(3, 4))
helper(op_rules.matmul_grad_y, r(5, 2, 4), r(5, 2, 3), r(3, 4))
helper(op_rules.matmul_grad_y, r(4), r(3), r(3, 4))
helper(op_rules.matmul_grad_y, r(2), r(2, 3), r(3))
helper(ops.matmul_op_grads, r(2, 4), ops.MatMul(), r(2, 3), r(3, 4))
helper(ops.matmul_op_grads, r(2, 4), ops.MatMul(True, True), r(3, 2), r(4, 3))
helper(ops.reduce_op_grad, r(2), ops.ReduceSum(), r(2, 3), 1)
helper(ops.reduce_op_grad, r(2, 1), ops.ReduceMean(True), r(2, 3), -1, True)

helper(bm.sum_grad, r(3), [r(3), r(3)])
helper(bm.sum_grad, r(3), r(4, 3))
helper(bm.select_grad, f(), 2.0, (1.0, 2.0, 0.5))
helper(bm.select_grad, f(), 2.0, ([1.0, 2.0, 0.5],))
helper(bm.sequence_grad, [r(2), f()], [r(2), 1.5])
helper(bm.sequence_grad, [r(2), 0, r(2)], r(3, 2))
helper(bm.reversed_grad, [r(2), f()], [1.5, r(2)])
helper(bm.dict_grad, {"a": r(2), "b": f()}, {"a": r(2), "b": 1.0})
helper(bm.dict_grad, {"a": r(2), "b": f()}, [("a", r(2)), ("b", 1.0)])
helper(bm.sorted_grad, [f(), f(), f()], [1.5, -0.3, 0.7])
helper(rr.reversed_items_grad, [(0, r(2)), (1, f()), (2, r(2))], [r(2), 1.5, r(2)])
helper(me.dict_items_grad, [[0, r(2)], [0, f()]], {"a": r(2), "b": 1.0})
helper(me.dict_values_grad, [r(2), f()], {"a": r(2), "b": 1.0})
helper(me.item_grad, f(), r(3, 4), (1, 2))
helper(me.item_grad, f(), r(3, 4), (5,))

def seeded(draw, seed):
    """``draw`` after seeding NumPy's global generator: every call draws the same entries."""
    def call(*args, **kwargs):
        np.random.seed(seed)
        return draw(*args, **kwargs)
    return call


CASES.append(Case("permutation", seeded(np.random.permutation, 0), r(5),
                  key=np.random.permutation))
CASES.append(Case("permutation", seeded(np.random.permutation, 1), r(4, 3),
                  key=np.random.permutation))
CASES.append(Case("choice", seeded(np.random.choice, 2), r(5), 7, key=np.random.choice))
attr("imag", r(3))  # complex inputs: tests/test_complex.py
case(np.angle, r(3))
case(np.angle, r(2, 2), deg=True)
method("tolist", r(2, 3))
method("tolist", r(3))

helper(me.tolist_grad, [[f(), f(), f()], [f(), 0, f()]], r(2, 3))
helper(me.tolist_grad, f(), r())
_population = r(5)
helper(nd.draw_grad, r(4), _population, _population[[2, 0, 4, 0]],
       derived={2: lambda args: args[1][[2, 0, 4, 0]]})
helper(nd.draw_tangent, r(5), _population, _population[[3, 1, 1]],
       derived={2: lambda args: args[1][[3, 1, 1]]})

helper(ne.astype_grad, r(3), r(3))
helper(ne.astype_grad, r(3) + 1j * r(3), r(3))
helper(ne.array_grad, r(2, 3), [r(3), r(3)])
helper(ne.array_grad, r(2, 3), r(2, 3))
helper(ne.imag_grad, r(3), r(3) + 1j * r(3))
helper(ne.maximum_grad, r(3, 4), r(3, 4), r(4))
helper(ne.fmax_grad, r(3, 4), r(3, 4), r(4))
helper(ne.clip_grad_a, r(3, 4), r(3, 4), -0.5, 0.5)
helper(ne.clip_grad_lower, r(3, 4), r(3, 4), r(4) * 0.3, 0.5)
helper(ne.clip_grad_upper, r(3, 4), r(3, 4), -0.5, r(3, 1) * 0.3)
helper(ne.clip_bounds, r(3), f(), f(), None, None)
helper(ne.clip_bounds, r(3), None, None, f(), f())
helper(ne.clip_bounds, r(3), None, f(), f(), None)
helper(ne.sinc_grad, r(4), r(4))
helper(ne.sinc_grad, r(3), np.array([0.25, 0.5, -1.5]))

helper(nr.reduce_sum_grad, r(3), r(4, 3), 0)
helper(nr.reduce_sum_grad, f(), r(4, 3))
helper(nr.reduce_sum_grad, r(4), r(4, 3), 1, False, mask.T)
helper(nr.reduce_mean_grad, r(4, 1), r(4, 3), -1, True)
helper(nr.reduce_mean_grad, f(), r(4, 3))
helper(nr.average_grad_a, r(4), r(3, 4), 0, pos(3))
helper(nr.average_grad_a, r(3, 1), r(3, 4), 1, pos(3, 4), False, True)
helper(nr.average_grad_a, [r(3), r(3)], r(3, 4), 1, pos(3, 4), True)
helper(nr.average_grad_weights, r(4), r(3, 4), 0, pos(3))
helper(nr.average_grad_weights, r(3), r(3, 4), 1, pos(3, 4))
helper(nr.average_grad_weights, [r(3), r(3)], r(3, 4), 1, pos(3, 4), True)
helper(nr.prod_grad, r(3), r(3, 4), 1)
helper(nr.prod_grad, f(), r(2, 3))
helper(nr.prod_grad, r(1, 4), r(3, 4), 0, True, 2.0)
helper(nr.prod_grad, r(3), r(3, 4), 1, False, 1, mask)
helper(nr.prod_grad, f(), np.array([1.5, 0.0, -2.0, 0.7]))
helper(nr.prod_grad, r(2), np.array([[1.5, 0.0, 2.0, 0.0], [0.5, 1.2, -1.0, 2.0]]), 1)
_a = r(3, 4)
helper(nr.extremum_grad, r(3), _a, np.max(_a, axis=1), 1,
       derived={2: lambda args: np.max(args[1], axis=1)})
helper(nr.var_grad, r(3), r(3, 4), 1)
helper(nr.var_grad, f(), r(3, 4), None, 1)
helper(nr.var_grad, r(1, 4), r(3, 4), 0, 0, True, None, True, np.full((1, 4), 0.2))
helper(nr.var_grad, r(3), r(3, 4), 1, 1, False, None, mask)
_a = r(3, 4)
helper(nr.std_grad, r(3), _a, np.std(_a, axis=1) + 0.5, 1)
helper(nr.std_grad, f(), _a, f(pos))
helper(nr.std_grad, r(1, 4), _a, pos(1, 4), 0, 1, True, None, True, np.full((1, 4), 0.2))
helper(nr.cumsum_grad, r(3, 4), r(3, 4), 1)
helper(nr.cumsum_grad, r(12), r(3, 4))
for _a, _axis in [(r(5), None), (r(3, 4), 1), (r(3, 4), 0),
                  (np.array([1.5, 0.0, -2.0, 0.7, 1.1]), None),
                  (np.array([[1.5, 0.0, 2.0, 0.0], [0.5, 1.2, -1.0, 2.0]]), 1)]:
    helper(nr.cumprod_grad, r(*np.cumprod(_a, axis=_axis).shape), _a,
           np.cumprod(_a, axis=_axis), _axis,
           derived={2: lambda args, ax=_axis: np.cumprod(args[1], axis=ax)})

helper(ns.atleast_grads, r(1), (f(),))
helper(ns.atleast_grads, (r(1), r(1, 3)), (f(), r(3)))
helper(ns.transpose_grad, r(3, 2))
helper(ns.transpose_grad, r(3, 4, 2), (1, 2, 0))
helper(ns.concatenate_grad, r(5, 3), [r(2, 3), r(3, 3)])
helper(ns.concatenate_grad, r(7), [r(2, 2), r(3)], None)
helper(ns.stack_grad, r(2, 3, 2), [r(2, 3), r(2, 3)], -1)
helper(ns.hstack_grad, r(2, 4), [r(2, 3), r(2, 1)])
helper(ns.vstack_grad, r(3, 3), [r(2, 3), r(3)])
helper(ns.dstack_grad, r(2, 3, 3), [r(2, 3), r(2, 3, 2)])
helper(ns.column_stack_grad, r(3, 3), [r(3), r(3, 2)])
_p = np.split(r(6), 3)
helper(ns.split_grad, [r(2), 0, r(2)], _p, r(6))
helper(ns.unstack_grad, (r(2), r(2), 0), tuple(np.unstack(r(3, 2))), r(3, 2))
helper(ns.tile_grad, r(2, 6), r(3), (2, 2))
helper(ns.repeat_grad, r(2, 6), r(2, 3), 2, 1)
helper(ns.sort_grad, r(3, 4), r(3, 4), 0)
helper(ns.sort_grad, r(12), r(3, 4), None)
helper(ns.diagonal_grad, r(3), r(3, 4), 1)
helper(ns.diag_grad, r(3, 3), r(3))
helper(ns.diag_grad, r(3), r(3, 4))
helper(ns.trace_grad, f(), r(3, 3))
helper(ns.take_grad, r(4), r(5), [0, 2, 2, 4])
helper(ns.take_along_axis_grad, r(3, 2), r(3, 4), np.array([[0, 1], [3, 3], [2, 0]]), 1)
helper(ns.pad_grad, r(7), r(3), 2)
helper(ns.pad_grad, r(4, 7), r(2, 4), ((1, 1), (2, 1)), "reflect")
helper(ns.diff_grads, r(5), r(6))
helper(ns.diff_grads, r(4, 7), r(4, 5), 1, 1, r(4, 1), r(4, 2))
helper(ns.meshgrid_grads, (r(4, 3), 0), (r(3), r(4)))
helper(ns.meshgrid_grads, (r(3, 4), r(3, 4)), (r(3), r(4)), "ij")

helper(nl.swap_last_axes, r(2, 3, 4))
for _sa, _sb in [((2, 3), (3, 4)), ((3,), (3,)), ((2, 3), (5, 3, 4)), ((), (2, 3))]:
    _g = r(*np.shape(np.dot(np.ones(_sa), np.ones(_sb))))
    helper(nl.dot_grad_a, _g, r(*_sa), r(*_sb))
    helper(nl.dot_grad_b, _g, r(*_sa), r(*_sb))
for _sa, _sb in [((2, 3), (4, 3)), ((3,), (3,))]:
    _g = r(*np.shape(np.inner(np.ones(_sa), np.ones(_sb))))
    helper(nl.inner_grad_a, _g, r(*_sa), r(*_sb))
    helper(nl.inner_grad_b, _g, r(*_sa), r(*_sb))
helper(nl.outer_grad_a, r(3, 4), r(3), r(4))
helper(nl.vecdot_grad, r(2), r(2, 3), r(3))
helper(nl.tensordot_grad_a, r(2, 5), r(2, 3, 4), r(3, 4, 5))
helper(nl.tensordot_grad_b, r(2, 5), r(2, 3, 4), r(3, 4, 5))
helper(nl.tensordot_grad_a, r(3, 5), r(2, 3, 4), r(4, 2, 5), ([0, 2], [1, 0]))
helper(nl.einsum_grads, r(2, 4), "ij,jk->ik", (r(2, 3), r(3, 4)))
helper(nl.einsum_grads, r(2, 2), "ij,jk,kl->il", (r(2, 3), r(3, 4), r(4, 2)))
helper(nl.einsum_grads, r(3), "ii->i", (r(3, 3),))
for _x, _kw in [(r(5), {}), (r(3, 4), {"axis": 1}), (r(3, 4), {}),
                (r(5), {"ord": 3}), (r(3, 4), {"ord": 0.5, "axis": 0}),
                (r(3, 4), {"ord": "fro"}), (r(3, 4), {"ord": 1}),
                (r(5), {"ord": np.inf}), (r(3, 4), {"axis": 0, "keepdims": True})]:
    _ans = np.linalg.norm(_x, **_kw)
    helper(nl.norm_grad, r(*np.shape(_ans)), _x, _ans + 0.1, **_kw)
_a = well_conditioned(3, 3)
helper(nl.det_grad, f(), _a, np.linalg.det(_a))
_a = well_conditioned(2, 3, 3)
helper(nl.det_grad, r(2), _a, np.linalg.det(_a))
helper(nl.slogdet_grad, (0, f()), well_conditioned(3, 3))
helper(nl.slogdet_grad, (r(2), r(2)), well_conditioned(2, 3, 3))
helper(nl.solve_adjoint, r(3), well_conditioned(3, 3), r(3))
helper(nl.solve_adjoint, r(3, 2), well_conditioned(3, 3), r(3, 2))
helper(nl.solve_adjoint, r(2, 3), well_conditioned(2, 3, 3), r(3))
helper(nl.solve_grad_a, r(3), well_conditioned(3, 3), r(3), r(3))
helper(nl.solve_grad_a, r(3, 2), well_conditioned(3, 3), r(3, 2), r(3, 2))

for _name, _args in [("broadcast_back", (r(3), r(2, 3))), ("gather", (r(3, 4), r(3, 4), 1)),
                     ("setitem_grad_adjoint", ((r(4), r(3, 4)), r(3, 4), 1, r(4))),
                     ("pop_grad_adjoint", ((f(), [r(2)]), [r(2), f()])),
                     ("pop_grad_adjoint", ((r(3), 0), [0, 0, r(3)])),
                     ("push_grad_parts", ([r(2), f()],)),
                     ("concat_grads_adjoint", (([r(2)], [f()]),)),
                     ("unreduce_adjoint", (r(3, 4), r(3), r(3, 4), 1, False)),
                     ("outer_grad_a", (r(3, 2), r(3), r(2))),
                     ("outer_grad_b", (r(3, 2), r(3), r(2))),
                     ("outer_grad_a", (r(3, 2, 2), r(3), r(2, 2))),
                     ("outer_grad_b", (r(3), f(), r(3))),
                     ("as_grad_adjoint", (r(4), r(3, 4), r(4))),
                     ("add_operand_grad", (r(3, 4), r(4))),
                     ("add_operand_grad", (r(3), 0)),
                     ("add_operand_transpose", (r(4), r(3, 4), r(4))),
                     ("add_operand_transpose", (r(3), r(3), 0)),
                     ("as_grad_adjoint", ([r(2), f()], [r(3, 2), f()], [r(2), 1.5])),
                     ("as_sequence_grad", (r(3, 2), r(3, 2))),
                     ("as_sequence_grad", ([r(2), f()], [r(2), 1.5]))]:
    helper(getattr(rr, _name), *_args)
helper(TangentList, [r(2), f()])
helper(TangentTuple, (r(2), r(1, 2)))
helper(runtime.as_sequence, r(3, 2))
helper(runtime.concat_tangents, [r(2), f()], [r(2), f()], [r(3)], [r(3)])
helper(rr.concat_tangents_adjoint, [r(2), f(), r(3)], [r(2), f()], [r(3)], 0)
helper(rr.concat_tangents_adjoint, [r(2), f(), r(3)], [r(2), f()], [r(3)], 1)
helper(fns.join_tangent, np.concatenate, [r(2, 3), r(1, 3)], [r(2, 3), r(1, 3)], r(3, 3), 0)
helper(fns.join_tangent, np.concatenate, [r(2, 3), r(4)], [r(2, 3), r(4)], r(10), None)
helper(fns.join_tangent, np.vstack, [r(3), r(2, 3)], [r(3), r(2, 3)], r(3, 3))
helper(runtime.snapshot, [r(2), f()])
helper(runtime.snapshot, {"a": r(2)})
helper(runtime.private_copy, r(2, 3), {})
helper(runtime.as_sequence, [r(2), f()])

# ----- the checks --------------------------------------------------------------------------


def _same(args, i, j):
    return args[i] is args[j]


def _tangent_args(c, directions, only=None):
    """One tangent per positional argument for ``jvp``: the direction (for ``only``'s index
    alone if given, zeros for the others), None for arguments that have none."""
    out = []
    for i, v in enumerate(directions):
        if v is None:
            out.append(None)
        elif only is None or _same(c.args, i, only):
            out.append(as_tangent(v))
        else:
            out.append(as_tangent(zeros_like_tree(v)))
    return out


def _numeric(c, directions, only=None):
    def moved(eps):
        fresh = copy.deepcopy(c.args)  # helpers such as add_at update their argument
        args = [perturb(a, None if v is None or (only is not None and not _same(c.args, i, only))
                        else v, eps)
                for i, (a, v) in enumerate(zip(fresh, directions))]
        for i, fn in c.derived.items():
            args[i] = fn(args)
        out = c.fn(*args, **c.kwargs)
        return tree(out if c.fix is None else c.fix(out, out))
    return difference(moved(EPS), moved(-EPS))


def _directions(c):
    """A random direction per argument (the same one for an argument passed twice)."""
    directions = []
    for i, a in enumerate(c.args):
        twin = next((j for j in range(i) if c.args[j] is a), None)
        directions.append(None if i in c.derived else
                          directions[twin] if twin is not None else random_like(a))
    return directions


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_tangent_matches_central_differences(c):
    if c.inlined_only:
        pytest.skip("checked inlined only")
    extra = {} if c.key is None else {"_key": c.key}
    c = copy.copy(c)
    c.args = copy.deepcopy(c.args)
    out, jvp = jvp_of(c.fn, *c.args, **c.kwargs, **extra)
    directions = _directions(c)
    assert any(v is not None for v in directions), "a case needs an input to move"
    numeric = _numeric(c, directions)
    got = jvp(*_tangent_args(c, directions))
    if c.fix is not None:
        got = c.fix(out, got)
    if not isinstance(got, (dict, list, tuple)) and not is_zero(got) and \
            isinstance(out, np.ndarray) and out.dtype.kind in "fc":
        assert np.asarray(got).dtype == out.dtype, f"tangent dtype {np.asarray(got).dtype}"
    assert_close(got, numeric, "all inputs", scale_of(numeric))


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_tangent_per_input_as_inlined(c):
    rule = rules._TANGENTS[rules._key(c.rule_key)]
    out = c.fn(*copy.deepcopy(c.args), **c.kwargs)
    bound = rule.bind(c.args, c.kwargs)
    directions = _directions(c)
    for i, v in enumerate(directions):
        if v is None or any(_same(c.args, i, j) for j in range(i)):
            continue
        t = as_tangent(v)
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
        numeric = _numeric(c, directions, only=i)
        assert_close(got, numeric, f"input {i}", scale_of(numeric))


def test_every_adjoint_rule_has_a_tangent_rule():
    missing = [k for k in rules._RULES if k not in rules._TANGENTS]
    assert not missing, f"adjoint rules without a tangent rule: {missing}"


# float16/float32/complex64 casts lose the precision central differences need: see
# test_scalar_casts_pass_the_tangent
CHECKED_EXACTLY = {np.float16, np.float32, np.complex64}


def test_every_tangent_rule_has_a_case():
    tested = {rules._key(c.rule_key) for c in CASES} | CHECKED_EXACTLY
    untested = [k for k, rule in rules._TANGENTS.items()
                if rule.template.__module__ in FORWARD_MODULES and k not in tested]
    assert not untested, f"tangent rules without a numerical check: {untested}"


def test_templates_are_inlinable():
    """Bodies hold only ``d[out] = expr`` / ``name = expr`` assignments, each reading at most one
    input tangent (never in a temporary), and defaults are literal constants."""
    literal = (type(None), bool, int, float, str, tuple)
    for rule in rules._TANGENTS.values():
        if rule.template.__module__ not in FORWARD_MODULES:
            continue
        for p in rule.signature.parameters.values():
            if p.default is not inspect.Parameter.empty:
                assert isinstance(p.default, literal), f"{rule.name}: default of {p.name}"
        for stmt in _body(rule):
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
        if adj is None or rule.template.__module__ not in FORWARD_MODULES:
            continue
        assert list(rule.signature.parameters) == list(adj.signature.parameters), rule.name
        assert rule.out == adj.out, rule.name


# ----- exact values ------------------------------------------------------------------------


def test_list_concatenation_tangents_add_element_by_element():
    a, b = np.ones(2), np.zeros(3)
    rule = rules.lookup_tangent(operator.add)
    out = [a] + [b]
    t = run_inlined(rule, out, {"x": [a], "y": [b]}, {"x": [np.full(2, 2.0)],
                                                      "y": [np.full(3, 3.0)]})
    assert isinstance(t, list) and len(t) == 2
    np.testing.assert_array_equal(t[0], [2.0, 2.0])
    np.testing.assert_array_equal(t[1], [3.0, 3.0, 3.0])
    assert 0 + TangentList([1.0]) == [1.0] and TangentTuple((1.0, 0)) + (2.0, 3.0) == (3.0, 3.0)


def test_max_and_maximum_split_ties_like_the_gradient():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    _, jvp = jvp_of(np.max, x, axis=1)
    np.testing.assert_allclose(jvp(np.array([[0.0, 1.0, 3.0], [1.0, 2.0, 6.0]])), [2.0, 3.0])
    _, jvp = jvp_of(np.maximum, np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    np.testing.assert_allclose(jvp(np.array([2.0, 2.0]), np.array([4.0, 4.0])), [3.0, 2.0])


def test_dict_views_give_tangents_in_key_order():
    p = {"a": np.ones(2), "b": 1.5}
    _, jvp = jvp_of(lambda m: m.values(), p, _key=("method", "values"))
    t = jvp({"a": np.full(2, 2.0)})
    np.testing.assert_array_equal(t[0], [2.0, 2.0])
    assert is_zero(t[1])


def test_pad_of_a_statistic_mode_says_so():
    _, jvp = jvp_of(np.pad, r(3), 1, "maximum")
    with pytest.raises(NotImplementedError, match="maximum"):
        jvp(np.ones(3))


def test_prod_tangent_with_zeros_is_exact():
    x = np.array([2.0, 0.0, 3.0])
    _, jvp = jvp_of(np.prod, x)
    assert jvp(np.array([1.0, 1.0, 1.0])) == 6.0
    _, jvp = jvp_of(np.prod, np.array([2.0, 0.0, 0.0]))
    assert jvp(np.ones(3)) == 0.0


def x32(*shape, gen=r):
    return gen(*shape).astype(np.float32)


DTYPE_CASES = [
    Case("tanh", np.tanh, x32(3)), Case("add-float", np.add, x32(3), 1.5),
    Case("maximum", np.maximum, x32(3, 1), x32(4)), Case("where", np.where,
                                                         RNG.random(3) > 0.5, x32(3), 0.0),
    Case("sum", np.sum, x32(3, 4), axis=0), Case("sum-f64", np.sum, x32(3, 4), dtype=np.float64),
    Case("mean", np.mean, x32(3, 4)), Case("prod", np.prod, x32(3, 4)),
    Case("max", np.max, x32(3, 4), axis=0), Case("var", np.var, x32(3, 4)),
    Case("std", np.std, x32(3, 4)), Case("cumprod", np.cumprod, x32(5)),
    Case("concatenate", np.concatenate, [x32(2), x32(3)]),
    Case("einsum", np.einsum, "ij,jk->ik", x32(2, 3), x32(3, 2)),
    Case("norm", np.linalg.norm, x32(3)), Case("det", np.linalg.det,
                                               well_conditioned(3, 3).astype(np.float32)),
    Case("array", np.array, x32(3), dtype=np.float64),
    Case(".astype", lambda a, t: a.astype(t), x32(3), np.float64, key=("method", "astype")),
    Case("svd-values", np.linalg.svd, separated(3, 4).astype(np.float32), compute_uv=False),
    Case("eigvalsh", np.linalg.eigvalsh, symmetric_in("L", 3, 3).astype(np.float32)),
]


@pytest.mark.parametrize("c", DTYPE_CASES, ids=[c.label for c in DTYPE_CASES])
def test_tangents_keep_the_output_dtype(c):
    extra = {} if c.key is None else {"_key": c.key}
    out, jvp = jvp_of(c.fn, *c.args, **c.kwargs, **extra)
    tangents = [np.ones_like(a) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else
                [np.ones_like(x) for x in a] if isinstance(a, list) else None for a in c.args]
    t = jvp(*tangents)
    assert np.asarray(t).dtype == np.asarray(out).dtype, f"{np.asarray(t).dtype} tangent"


def test_scalar_casts_pass_the_tangent():
    for t in (np.float16, np.float32, np.float64, np.complex64, np.complex128):
        for x in (np.float32(1.25), np.float64(1.25), np.array([1.25, 2.0], dtype=np.float32)):
            out, jvp = jvp_of(t, x)
            v = np.full(np.shape(x), 3.0, dtype=np.asarray(x).dtype)[()] if np.ndim(x) == 0 \
                else np.full(2, 3.0, dtype=x.dtype)
            got = jvp(v)
            assert np.asarray(got).dtype == np.asarray(out).dtype
            np.testing.assert_array_equal(got, np.full(np.shape(x), 3.0))


def test_sinc_second_derivative_at_zero():
    from mindgrad.rules.numpy_elementwise import sinc_grad_tangent

    got = sinc_grad_tangent(2.0, np.array([0.0, 1e-3]), np.array([1.0, 1.0]))
    np.testing.assert_allclose(got, [-2.0 * np.pi ** 2 / 3.0] * 2, rtol=1e-5)


def test_pow_of_a_negative_base_by_an_int_exponent_drops_the_log():
    rule = rules.lookup_tangent(operator.pow)
    x = np.array([-2.0, 3.0])
    t = run_inlined(rule, x ** 2, {"x": x, "y": 2}, {"x": np.ones(2)})
    np.testing.assert_allclose(t, [-4.0, 6.0])


def test_svd_of_full_matrices_of_a_non_square_matrix_has_no_tangent():
    # its extra columns of U (rows of V^T) are an arbitrary basis of a complement
    for a in (separated(4, 3), separated(2, 3, 5)):
        _, jvp = jvp_of(np.linalg.svd, a)
        with pytest.raises(NotImplementedError, match="full_matrices=True"):
            jvp(np.ones_like(a))


def test_svd_and_eigh_tangents_keep_float32_factors():
    a = separated(3, 3).astype(np.float32)
    _, jvp = jvp_of(np.linalg.svd, a)
    assert [np.asarray(t).dtype for t in jvp(np.ones_like(a))] == [np.float32] * 3
    _, jvp = jvp_of(np.linalg.eigh, symmetric_in("L", 3, 3).astype(np.float32))
    assert [np.asarray(t).dtype for t in jvp(np.ones((3, 3), np.float32))] == [np.float32] * 2
