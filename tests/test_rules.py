"""Every NumPy gradient rule, checked directly through ``vjp_of`` against central differences.

For random inputs ``x_i``, a random cotangent ``g`` and random directions ``v_i`` (float64):
``sum_i vdot(vjp(g)_i, v_i)`` must match ``(vdot(g, f(x + eps v)) - vdot(g, f(x - eps v))) / 2eps``,
and each gradient must have its input's shape (and structure, for lists and tuples).
"""

import math

import linalg_inputs
import numpy as np
import pytest

import mindgrad
from mindgrad import rules
from mindgrad.rules import is_nondifferentiable, lookup, vjp_of
from mindgrad.rules import numpy_linalg as nl
from mindgrad.runtime import is_zero

RNG = np.random.default_rng(20240607)
EPS = 1e-6
RTOL = 1e-5
ATOL = 1e-8

MY_MODULES = {f"mindgrad.rules.{m}" for m in
              ("numpy_elementwise", "numpy_reductions", "numpy_shape", "numpy_linalg", "methods",
               "nondiff")}


# ----- random inputs -----------------------------------------------------------------------


def _shape(shape):
    return (shape,) if isinstance(shape, int) else tuple(shape)


def r(*shape):
    """Standard normal; ``r()`` is a 0-d array. Entries are kept away from 0 (kinks)."""
    x = RNG.standard_normal(shape)
    return np.where(np.abs(x) < 0.1, 0.1 + np.abs(x), x)


def pos(*shape):
    return RNG.uniform(0.5, 2.0, shape)


def unit(*shape):
    return RNG.uniform(-0.8, 0.8, shape)


def big(*shape):
    return RNG.uniform(1.5, 3.0, shape)


def f(gen=r):
    """A Python float from ``gen``."""
    return float(gen())


def well_conditioned(*shape):
    n = shape[-1]
    return 3.0 * np.eye(n) + 0.4 * RNG.standard_normal(shape)


# ----- trees of values: arrays, floats, lists and tuples of them ---------------------------


def is_float_leaf(v):
    if isinstance(v, bool):
        return False
    if isinstance(v, (float, np.floating)):
        return True
    return isinstance(v, np.ndarray) and v.dtype.kind == "f"


def random_like(v):
    if isinstance(v, (list, tuple)):
        return [random_like(x) for x in v]
    if not is_float_leaf(v):
        return None
    if isinstance(v, float):
        return float(RNG.standard_normal())
    return RNG.standard_normal(np.shape(v))


def perturb(v, dv, eps):
    if dv is None:
        return v
    if isinstance(v, (list, tuple)):
        return type(v)(perturb(x, dx, eps) for x, dx in zip(v, dv))
    if isinstance(v, float):
        return v + eps * dv
    return (v + eps * dv).astype(np.result_type(v), copy=False)


def tree_vdot(grad, v, where="gradient"):
    """``vdot(grad, v)`` over matching structures; checks that shapes agree."""
    if v is None or is_zero(grad):
        return 0.0
    if isinstance(v, (list, tuple)):
        assert isinstance(grad, (list, tuple)), f"{where}: expected a list, got {type(grad)}"
        assert len(grad) == len(v), f"{where}: {len(grad)} entries for {len(v)}"
        return sum(tree_vdot(gi, vi, where) for gi, vi in zip(grad, v))
    assert np.shape(grad) == np.shape(v), f"{where}: shape {np.shape(grad)} for {np.shape(v)}"
    return float(np.vdot(np.asarray(grad, dtype=float), np.asarray(v, dtype=float)))


# ----- the check ---------------------------------------------------------------------------


def check_vjp(fn, args, kwargs=None, key=None, zero_cotangent=(), fix=None):
    """``fix(out, values)``, if given, makes an output unique where it is so only up to signs
    (the factors of svd and eigh): it keeps, negates or zeroes each entry of ``values`` as
    ``out`` says, so it is linear and its own adjoint. The check is then of ``fix(y, y)`` for
    ``y = fn(x)``, with the cotangent ``fix(out, g)``."""
    kwargs = kwargs or {}
    extra = {} if key is None else {"_key": key}
    out, vjp = vjp_of(fn, *args, **kwargs, **extra)
    g = random_like(out)
    if g is not None and not isinstance(out, (list, tuple)) and np.ndim(out) == 0:
        g = float(g)  # a scalar's cotangent may come as a Python float
    for i in zero_cotangent:  # pieces of a list output that received no gradient
        g[i] = 0
    if isinstance(out, tuple) and isinstance(g, list):
        g = tuple(g)
    grads = vjp(g if fix is None else fix(out, g))
    assert len(grads) == len(args)
    directions = [random_like(a) for a in args]
    analytic = sum(tree_vdot(gr, v, f"argument {i}")
                   for i, (gr, v) in enumerate(zip(grads, directions)))
    plus = fn(*[perturb(a, v, EPS) for a, v in zip(args, directions)], **kwargs)
    minus = fn(*[perturb(a, v, -EPS) for a, v in zip(args, directions)], **kwargs)
    if fix is not None:
        plus, minus = fix(plus, plus), fix(minus, minus)
    numeric = (tree_vdot(g, plus, "output") - tree_vdot(g, minus, "output")) / (2 * EPS)
    assert abs(analytic - numeric) <= RTOL * max(abs(analytic), abs(numeric)) + ATOL, \
        f"vjp gives {analytic!r}, central differences {numeric!r}"
    return grads


class Case:
    def __init__(self, label, fn, *args, key=None, zero_cotangent=(), fix=None, **kwargs):
        self.label, self.fn, self.args, self.kwargs = label, fn, args, kwargs
        self.key = key
        self.zero_cotangent = zero_cotangent
        self.fix = fix

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


# ----- elementwise -------------------------------------------------------------------------

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
    case(fn, gen(2, 3, 4))
case(np.sinc, np.array([0.0, 0.5, -1.5]))

# Python's scalar functions sharing a NumPy function's template: checked on Python floats
for fn, gen in [(math.exp, r), (math.expm1, r), (math.log2, pos), (math.log10, pos),
                (math.sqrt, pos), (math.tan, unit), (math.atan, r), (math.tanh, r), (abs, r)]:
    case(fn, f(gen))
    case(fn, f(gen), label=getattr(fn, "__name__", str(fn)) + "_again")
case(math.atan2, f(), f())

BROADCAST_PAIRS = [((), ()), ((3,), (3,)), ((3, 1), (4,)), ((2, 3), ()), ((1, 3), (2, 1)),
                   ((2, 3, 4), (3, 4)), ((4,), (2, 3, 1))]
BINARY = [np.arctan2, np.hypot, np.maximum, np.minimum, np.fmax, np.fmin, np.logaddexp,
          np.logaddexp2, np.copysign]
for fn in BINARY:
    for sx, sy in BROADCAST_PAIRS:
        case(fn, r(*sx), r(*sy))
    case(fn, f(), r(3))
    case(fn, f(), f())

for sc, sx, sy in [((3, 4), (3, 4), (3, 4)), ((3, 1), (4,), ()), ((2, 3), (1, 3), (2, 1)),
                   ((), (3,), (3,))]:
    case(np.where, RNG.random(sc) > 0.5, r(*sx), r(*sy))

case(np.clip, r(3, 4), -0.5, 0.7)
case(np.clip, r(3, 4), RNG.uniform(-1, -0.2, 4), RNG.uniform(0.2, 1, (3, 1)))
case(np.clip, r(2, 3), None, RNG.uniform(-0.3, 0.3, 3))
case(np.clip, r(2, 3), RNG.uniform(-0.3, 0.3, (2, 1)), None)
case(np.clip, f(), -0.5, 0.5)
case(np.clip, r(5), min=-0.5, max=0.5)
case(np.clip, r(5), a_min=-0.5, a_max=None)

for fn in (np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray,
           np.copy):
    case(fn, r(2, 3))
    case(fn, f())
case(np.array, [r(3), r(3)])
case(np.array, [f(), f(), f()])
case(np.array, (r(2), r(2), r(2)), ndmin=3)
case(np.array, r(3), ndmin=2)
case(np.asarray, [[f(), f()], [f(), f()]])

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
case(np.sum, r(3, 4), axis=0, dtype=np.float64, initial=2.0)
case(np.max, r(3, 4), axis=0, initial=0.5)
case(np.prod, r(3, 4), axis=1, initial=2.0)
case(np.prod, np.array([1.5, 0.0, -2.0, 0.7]), label="prod-one-zero")
case(np.prod, np.array([1.5, 0.0, -2.0, 0.0]), label="prod-two-zeros")
case(np.prod, np.array([[1.5, 0.0, 2.0], [0.5, 1.2, -1.0]]), axis=1, label="prod-zeros")
case(np.prod, np.zeros((0, 3)), axis=0, label="prod-empty")
case(np.nansum, np.array([1.0, np.nan, 2.0, 3.0]))
case(np.nanmean, np.array([[1.0, np.nan], [2.0, 3.0]]), axis=0)
for fn in (np.var, np.std):
    case(fn, r(3, 4), axis=0, ddof=1)
    case(fn, r(3, 4), axis=1, correction=1, keepdims=True)
    case(fn, r(2, 3, 4), ddof=2)
    case(fn, r(3, 4), axis=1, where=mask, ddof=1)
    case(fn, r(3, 4), axis=0, keepdims=True, mean=np.zeros((1, 4)))

for fn in (np.cumsum, np.cumprod):
    case(fn, r(5))
    case(fn, r(3, 4))
    case(fn, r(3, 4), axis=0)
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

# ----- shape -------------------------------------------------------------------------------

case(np.reshape, r(2, 3), (3, 2))
case(np.reshape, r(2, 3, 4), (4, -1), order="F")
case(np.reshape, r(6), shape=(2, 3))
case(np.reshape, f(), (1, 1))
case(np.ravel, r(2, 3))
case(np.ravel, r(2, 3), order="F")
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
case(np.concatenate, [r(2, 3), r(4)], axis=None)
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
case(np.split, r(6, 2), 3, zero_cotangent=(1,), label="split-unused-piece")
case(np.array_split, r(7), 3)
case(np.array_split, r(2, 7), 3, axis=-1, zero_cotangent=(0, 2))
case(np.hsplit, r(2, 4), 2)
case(np.hsplit, r(4), [1])
case(np.vsplit, r(4, 2), 2)
case(np.dsplit, r(2, 2, 4), [1, 3])
case(np.unstack, r(3, 2))
case(np.unstack, r(3, 2, 4), axis=1, zero_cotangent=(0,))

case(np.tile, r(3), 2)
case(np.tile, r(2, 3), (2, 1))
case(np.tile, r(3), (2, 2, 2))
case(np.tile, f(), 3)
case(np.repeat, r(3), 2)
case(np.repeat, r(2, 3), 2, axis=0)
case(np.repeat, r(2, 3), [1, 0, 3], axis=-1)
case(np.repeat, r(2, 3), 2)
case(np.repeat, f(), 4)

case(np.flip, r(3))
case(np.flip, r(2, 3, 4), axis=(0, 2))
case(np.fliplr, r(2, 3))
case(np.flipud, r(2, 3))
case(np.roll, r(5), 2)
case(np.roll, r(2, 3), 1)
case(np.roll, r(2, 3, 4), (1, -2), axis=(0, 2))
case(np.rot90, r(2, 3))
case(np.rot90, r(2, 3, 4), 3, axes=(1, 2))
case(np.sort, r(5))
case(np.sort, r(3, 4), axis=0)
case(np.sort, r(3, 4), axis=None)
case(np.sort, r(2, 3, 4))

case(np.diag, r(3))
case(np.diag, r(3), 1)
case(np.diag, r(3), k=-2)
case(np.diag, r(3, 4))
case(np.diag, r(4, 3), 1)
case(np.diag, r(3, 4), -1)
case(np.diagonal, r(3, 3))
case(np.diagonal, r(3, 4), 1)
case(np.diagonal, r(2, 3, 4), -1, 2, 0)
case(np.trace, r(3, 3))
case(np.trace, r(3, 4), -1)
case(np.trace, r(2, 3, 4), axis1=1, axis2=2)
for fn in (np.triu, np.tril):
    case(fn, r(3, 3))
    case(fn, r(3, 4), 1)
    case(fn, r(2, 3, 3), k=-1)
    case(fn, r(4))

case(np.take, r(5), [0, 2, 2, 4])
case(np.take, r(3, 4), np.array([[0, 1], [3, 3]]), axis=1)
case(np.take, r(3, 4), [1, 1, -1], axis=0)
case(np.take, r(3, 4), 5)
case(np.take, r(3, 4), [0, 5, -7], axis=1, mode="clip")
case(np.take, r(3, 4), [0, 5, -7], mode="wrap")
case(np.take_along_axis, r(3, 4), np.argsort(RNG.random((3, 4)), axis=1)[:, :2], axis=1)
case(np.take_along_axis, r(3, 4), np.array([[0, 0, 2, 1]]), axis=0)

case(np.pad, r(3), 2)
case(np.pad, r(3), (1, 2), "constant", constant_values=5.0)
for mode in ("edge", "reflect", "symmetric", "wrap"):
    case(np.pad, r(2, 4), ((1, 2), (3, 1)), mode)
case(np.diff, r(6))
case(np.diff, r(6), 2)
case(np.diff, r(4, 5), axis=0)
case(np.diff, r(4, 5), 1, 1, r(4, 1), r(4, 2))
case(np.diff, r(5), 1, -1, f())

case(np.meshgrid, r(3), r(4))
case(np.meshgrid, r(3), r(4), indexing="ij")
case(np.meshgrid, r(2), r(3), r(4))
case(np.meshgrid, r(3), r(2, 2), sparse=True)

# ----- products and linear algebra ---------------------------------------------------------

DOT_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
              ((2, 2, 3), (3,)), ((2, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((), (2, 3)),
              ((2, 3), ())]
for sa, sb in DOT_SHAPES:
    case(np.dot, r(*sa), r(*sb))
case(np.dot, f(), f())
INNER_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (4, 3)), ((2, 3), (4, 3)),
                ((2, 2, 3), (5, 3)), ((), (2, 3)), ((2, 3), ())]
for sa, sb in INNER_SHAPES:
    case(np.inner, r(*sa), r(*sb))
case(np.outer, r(3), r(4))
case(np.outer, r(2, 2), r(3))
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
case(np.tensordot, r(2, 3, 4), r(5, 3), axes=(1, -1))
case(np.tensordot, r(3, 4), r(3, 4), axes=([1, 0], [1, 0]))

EINSUM = [("ij,jk->ik", (2, 3), (3, 4)), ("ij->", (2, 3)), ("ii->i", (3, 3)), ("ii", (3, 3)),
          ("ij->ji", (2, 3)), ("i,i->", (3,), (3,)), ("i,j->ij", (3,), (4,)),
          ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)), ("...ij,...jk->...ik", (2, 3, 4), (4, 5)),
          ("...ij,...jk->...ik", (2, 1, 3, 4), (5, 4, 2)), ("ij,jk", (2, 3), (3, 4)),
          ("ij,ij->i", (2, 3), (2, 3)), ("ijk->kj", (2, 3, 4)), ("ij,j", (2, 3), (3,)),
          ("ii,i->i", (3, 3), (3,)), ("iij->j", (3, 3, 2)), ("ij,kl->ijkl", (2, 3), (2, 2)),
          ("i...->...", (3, 2, 2)), ("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
          ("ab,b->", (2, 3), (3,)), ("i,i", (4,), (4,)), ("...,...", (3,), (2, 3)),
          ("ij,jk->ik", (1, 3), (3, 4))]
for spec, *shapes in EINSUM:
    case(np.einsum, spec, *[r(*s) for s in shapes])
LINALG_RNG = np.random.default_rng(20240613)  # its own stream: the other inputs stay as they are
case(nl.einsum_list, "ij,jk->ik", [LINALG_RNG.standard_normal((2, 3)),
                                   LINALG_RNG.standard_normal((3, 4))])
case(nl.einsum_list, "ii,i->i", [LINALG_RNG.standard_normal((3, 3)),
                                 LINALG_RNG.standard_normal(3)])

case(np.linalg.norm, r(5))
case(np.linalg.norm, f())
case(np.linalg.norm, r(3, 4))
case(np.linalg.norm, r(2, 3, 4))
case(np.linalg.norm, r(3, 4), axis=1)
case(np.linalg.norm, r(3, 4), axis=0, keepdims=True)
case(np.linalg.norm, r(2, 3, 4), axis=(0, 2))
case(np.linalg.norm, r(2, 3, 4), None, (1, 2), True)
case(np.linalg.norm, r(3, 4), keepdims=True)
for order in (1, 2, np.inf, -np.inf, 3, 0.5, 0):  # by keyword: a float ord is no input
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


for shape in [(3, 3), (4, 3), (3, 5), (2, 4, 3), (2, 3, 2, 4)]:
    case(np.linalg.svd, separated(*shape), full_matrices=False, fix=fix_svd)
    case(np.linalg.svd, separated(*shape), compute_uv=False)
    case(np.linalg.svdvals, separated(*shape))
for shape in [(3, 3), (2, 3, 3), (4, 3), (2, 3, 5)]:  # full_matrices: U (V^T) of a tall (wide)
    case(np.linalg.svd, separated(*shape), fix=fix_svd)  # matrix gets no gradient beyond k
case(np.linalg.svd, separated(4, 3), zero_cotangent=(0, 2), label="svd-values-only")
case(np.linalg.svd, symmetric_in("L", 3, 3), hermitian=True, fix=fix_svd)
case(np.linalg.svd, symmetric_in("L", 2, 4, 4), hermitian=True, fix=fix_svd)
case(np.linalg.svd, symmetric_in("L", 4, 4), False, False, True)
for uplo in ("L", "U"):
    for shape in [(3, 3), (2, 4, 4)]:
        case(np.linalg.eigh, symmetric_in(uplo, *shape), UPLO=uplo, fix=fix_eigh)
        case(np.linalg.eigvalsh, symmetric_in(uplo, *shape), UPLO=uplo)
case(np.linalg.eigh, symmetric_in("L", 3, 3), zero_cotangent=(1,), label="eigh-values-only")

# ----- constructors and casts --------------------------------------------------------------

case(np.linspace, f(), f(), 5)
case(np.linspace, r(3), f(), 4, False, axis=-1)
case(np.linspace, r(2, 3), r(3), 4, retstep=True, axis=1)
case(np.linspace, f(), f(), 1)
case(np.logspace, f(unit), f(unit), 5)
case(np.logspace, r(2) * 0.3, f(unit), 4, base=f(pos) + 1.0, axis=-1)
case(np.logspace, f(unit), f(unit), 4, True, pos(2) + 1.0)
case(np.geomspace, f(pos), f(big), 5)
case(np.geomspace, -pos(3), -f(big), 4, axis=1)
case(np.full, (2, 3), f())
case(np.full, (2, 3), r(3))
case(np.full_like, r(2, 3), r(2, 1))
case(np.full_like, r(2, 3), f())
for t in (np.float64, np.longdouble):
    case(t, f())
    case(t, r())
case(np.float64, r(2, 2))
# float32, float16, complex casts lose the precision central differences need: see
# test_scalar_casts_pass_the_gradient_back


def seeded(draw, seed):
    """``draw`` after seeding NumPy's global generator: every call draws the same entries."""
    def call(*args, **kwargs):
        np.random.seed(seed)
        return draw(*args, **kwargs)
    return call


case(seeded(np.random.permutation, 0), r(5), key=np.random.permutation, label="permutation")
case(seeded(np.random.permutation, 1), r(4, 3), key=np.random.permutation,
     label="permutation")
case(seeded(np.random.choice, 2), r(5), 7, key=np.random.choice, label="choice")
case(seeded(np.random.choice, 3), r(7), (2, 3), False, key=np.random.choice, label="choice")

CHECKED_EXACTLY = {("method", "items"), ("method", "values"), np.float16, np.float32,
                   np.complex64, np.complex128}

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
method("get", {"a": r(2), "b": r(2, 3)}, "b")
method("get", {"a": r(2)}, "c", r(3))
method("get", {"a": r(2)}, "a", r(3, 2))
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
method("copy", r(2, 3))
method("conj", r(2, 3))
method("conjugate", r(3))
method("take", r(3, 4), [1, 1, 0], 1)
method("take", r(3, 4), [0, 11])
method("item", r(1, 1))
method("item", r(3, 4), 5)
method("item", r(3, 4), 1, 2)
method("tolist", r(2, 3))
method("tolist", r(3))
attr("T", r(2, 3))
attr("T", r(2, 3, 4))
attr("mT", r(2, 3, 4))
attr("real", r(3))
attr("imag", r(3))  # complex inputs: tests/test_complex.py
case(np.angle, r(3))
case(np.angle, r(2, 2), deg=True)


# ----- the tests ---------------------------------------------------------------------------


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_rule_matches_central_differences(c):
    check_vjp(c.fn, c.args, c.kwargs, c.key, c.zero_cotangent, c.fix)


def _my_rule_keys():
    return [k for k, rule in rules._RULES.items() if rule.template.__module__ in MY_MODULES]


def test_every_rule_has_a_case():
    tested = {c.rule_key for c in CASES} | CHECKED_EXACTLY
    untested = [k for k in _my_rule_keys() if k not in tested]
    assert not untested, f"rules without a numerical check: {untested}"


# ----- ties and kinks: exact values --------------------------------------------------------


def test_max_splits_gradient_among_ties():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    _, vjp = vjp_of(np.max, x, axis=1)
    (gx,) = vjp(np.array([1.0, 3.0]))
    np.testing.assert_allclose(gx, [[0.0, 0.5, 0.5], [1.0, 1.0, 1.0]])
    _, vjp = vjp_of(np.min, x)
    np.testing.assert_allclose(vjp(1.0)[0], [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])


def test_max_method_splits_gradient_among_ties():
    x = np.array([3.0, 1.0, 3.0])
    _, vjp = vjp_of(lambda a: a.max(), x, _key=("method", "max"))
    np.testing.assert_allclose(vjp(2.0)[0], [1.0, 0.0, 1.0])


def test_maximum_minimum_split_ties_equally():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 5.0])
    for fn in (np.maximum, np.minimum, np.fmax, np.fmin):
        _, vjp = vjp_of(fn, x, y)
        gx, gy = vjp(np.ones(3))
        assert gx[0] == gy[0] == 0.5
        np.testing.assert_allclose(gx + gy, np.ones(3))


def test_fmax_ignores_nan():
    x, y = np.array([1.0, np.nan]), np.array([np.nan, 2.0])
    _, vjp = vjp_of(np.fmax, x, y)
    gx, gy = vjp(np.ones(2))
    np.testing.assert_array_equal(gx, [1.0, 0.0])
    np.testing.assert_array_equal(gy, [0.0, 1.0])


def test_prod_with_zeros_is_exact():
    x = np.array([2.0, 0.0, 3.0, 0.0])
    _, vjp = vjp_of(np.prod, x)
    np.testing.assert_array_equal(vjp(1.0)[0], [0.0, 0.0, 0.0, 0.0])
    x = np.array([2.0, 0.0, 3.0])
    _, vjp = vjp_of(np.prod, x)
    np.testing.assert_array_equal(vjp(1.0)[0], [0.0, 6.0, 0.0])


def test_clip_routes_gradient_to_the_active_bound():
    x = np.array([-2.0, 0.0, 2.0])
    _, vjp = vjp_of(np.clip, x, -1.0, 1.0)
    gx, glo, ghi = vjp(np.array([1.0, 2.0, 4.0]))
    np.testing.assert_array_equal(gx, [0.0, 2.0, 0.0])
    assert glo == 1.0 and ghi == 4.0


def test_split_gradient_fills_unused_pieces_with_zeros():
    x = np.arange(6.0)
    _, vjp = vjp_of(np.split, x, 3)
    gx, _ = vjp([0, np.ones(2), 0])
    np.testing.assert_array_equal(gx, [0, 0, 1, 1, 0, 0])


def test_take_accumulates_repeated_indices():
    _, vjp = vjp_of(np.take, np.zeros(3), [0, 2, 2, 2])
    np.testing.assert_array_equal(vjp(np.ones(4))[0], [1.0, 0.0, 3.0])


def test_array_of_a_list_gives_a_list():
    a, b = np.ones(2), np.zeros(2)
    _, vjp = vjp_of(np.array, [a, b])
    (grads,) = vjp(np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert isinstance(grads, list) and len(grads) == 2
    np.testing.assert_array_equal(grads[1], [3.0, 4.0])


def test_scalar_cotangent_for_array_outputs_of_reductions():
    # d[out] may come as a Python float or a NumPy scalar
    x = r(3, 4)
    for g in (2.0, np.float64(2.0), np.array(2.0)):
        _, vjp = vjp_of(np.sum, x)
        np.testing.assert_array_equal(vjp(g)[0], np.full((3, 4), 2.0))
        _, vjp = vjp_of(np.mean, x)
        np.testing.assert_allclose(vjp(g)[0], np.full((3, 4), 2.0 / 12))


def test_pad_of_a_statistic_mode_says_so():
    _, vjp = vjp_of(np.pad, r(3), 1, "mean")
    with pytest.raises(NotImplementedError, match="mean"):
        vjp(np.ones(5))


# ----- dtypes: float32 in, float32 gradient out --------------------------------------------


def x32(*shape, gen=r):
    return gen(*shape).astype(np.float32)


DTYPE_CASES = [
    Case("exp", np.exp, x32(3)), Case("log", np.log, x32(3, gen=pos)),
    Case("tanh", np.tanh, x32(2, 3)), Case("sqrt", np.sqrt, x32(3, gen=pos)),
    Case("maximum", np.maximum, x32(3, 1), x32(4)), Case("arctan2", np.arctan2, x32(3), x32(3)),
    Case("where", np.where, RNG.random(3) > 0.5, x32(3), x32(3)),
    Case("clip", np.clip, x32(3, 4), -0.5, 0.5), Case("sinc", np.sinc, x32(4)),
    Case("sum", np.sum, x32(3, 4), axis=0), Case("sum-f64", np.sum, x32(3, 4), dtype=np.float64),
    Case("mean", np.mean, x32(3, 4), axis=1), Case("prod", np.prod, x32(3, 4)),
    Case("max", np.max, x32(3, 4), axis=0), Case("var", np.var, x32(3, 4)),
    Case("std", np.std, x32(3, 4), axis=1), Case("cumsum", np.cumsum, x32(3, 4), axis=0),
    Case("cumprod", np.cumprod, x32(5)), Case("average", np.average, x32(3, 4), 0, x32(3)),
    Case("reshape", np.reshape, x32(2, 3), (3, 2)), Case("transpose", np.transpose, x32(2, 3)),
    Case("concatenate", np.concatenate, [x32(2), x32(3)]),
    Case("stack", np.stack, [x32(2), x32(2)]), Case("tile", np.tile, x32(3), 2),
    Case("repeat", np.repeat, x32(3), 2), Case("diag", np.diag, x32(3, 3)),
    Case("trace", np.trace, x32(3, 3)), Case("take", np.take, x32(4), [0, 0, 3]),
    Case("sort", np.sort, x32(4)), Case("pad", np.pad, x32(3), 1),
    Case("dot", np.dot, x32(2, 3), x32(3)), Case("inner", np.inner, x32(3), x32(3)),
    Case("outer", np.outer, x32(2), x32(3)),
    Case("tensordot", np.tensordot, x32(2, 3), x32(3, 2), 1),
    Case("einsum", np.einsum, "ij,jk->ik", x32(2, 3), x32(3, 2)),
    Case("einsum-diag", np.einsum, "ii->i", x32(3, 3)),
    Case("norm", np.linalg.norm, x32(3)), Case("norm-nuc", np.linalg.norm, x32(3, 3), "nuc"),
    Case("inv", np.linalg.inv, well_conditioned(3, 3).astype(np.float32)),
    Case("det", np.linalg.det, well_conditioned(3, 3).astype(np.float32)),
    Case("solve", np.linalg.solve, well_conditioned(3, 3).astype(np.float32), x32(3)),
    Case("svd-values", np.linalg.svd, separated(3, 4).astype(np.float32), compute_uv=False),
    Case("eigvalsh", np.linalg.eigvalsh, symmetric_in("L", 3, 3).astype(np.float32)),
    Case("array", np.array, x32(3), dtype=np.float64),
    Case("asarray", np.asarray, x32(3), dtype=np.float64),
    Case("float64", np.float64, np.float32(1.5)),
    Case(".astype", lambda a, t: a.astype(t), x32(3), np.float64, key=("method", "astype")),
    Case(".sum", lambda a: a.sum(dtype=np.float64), x32(3), key=("method", "sum")),
]


@pytest.mark.parametrize("c", DTYPE_CASES, ids=[c.label for c in DTYPE_CASES])
def test_float32_inputs_get_float32_gradients(c):
    extra = {} if c.key is None else {"_key": c.key}
    out, vjp = vjp_of(c.fn, *c.args, **c.kwargs, **extra)
    g = np.ones_like(out) if isinstance(out, np.ndarray) else np.asarray(out).dtype.type(1)
    for arg, grad in zip(c.args, vjp(g)):
        if is_float_leaf(arg):
            assert np.asarray(grad).dtype == np.float32, f"{np.asarray(grad).dtype} gradient"
        elif isinstance(arg, list) and all(is_float_leaf(a) for a in arg):
            assert all(np.asarray(gi).dtype == np.float32 for gi in grad)


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


def test_scalar_casts_pass_the_gradient_back():
    for t in (np.float16, np.float32, np.float64, np.complex64, np.complex128):
        for x in (np.float32(1.25), np.float64(1.25), np.array([1.25, 2.0], dtype=np.float32)):
            _, vjp = vjp_of(t, x)
            g = t(3.0) if np.ndim(x) == 0 else np.full(2, 3.0, dtype=t)
            (gx,) = vjp(g)
            assert np.asarray(gx).dtype == x.dtype
            np.testing.assert_array_equal(gx, np.full(np.shape(x), 3.0))
    _, vjp = vjp_of(np.float32, 1.5)
    assert vjp(np.float32(2.0))[0] == 2.0


def test_integer_casts_are_constants_and_float_casts_are_not():
    assert is_nondifferentiable(np.int64) and is_nondifferentiable(np.int32)
    assert lookup(np.float32) is not None and lookup(np.float64) is not None
    assert is_nondifferentiable(np.random.normal) and is_nondifferentiable(np.random.rand)


def test_templates_are_inlinable():
    """Bodies hold only ``d[p] = expr`` (``slope[p] = expr``) / ``name = expr`` assignments
    with plain ``d[...]`` indices, and defaults are literal constants: the transformer
    inlines them."""
    import ast
    import inspect
    import textwrap

    literal = (type(None), bool, int, float, str, tuple)
    for key in _my_rule_keys():
        rule = rules._RULES[key]
        for p in rule.signature.parameters.values():
            if p.default is not inspect.Parameter.empty:
                assert isinstance(p.default, literal), f"{rule.name}: default of {p.name}"
        fdef = ast.parse(textwrap.dedent(inspect.getsource(rule.template))).body[0]
        for stmt in fdef.body:
            assert isinstance(stmt, ast.Assign) and len(stmt.targets) == 1, rule.name
            target = stmt.targets[0]
            if isinstance(target, ast.Subscript):
                assert isinstance(target.value, ast.Name) and target.value.id in ("d", "slope")
                assert isinstance(target.slice, ast.Name), rule.name
            else:
                assert isinstance(target, ast.Name), rule.name


def test_dict_views_give_gradients_by_key():
    p = {"a": np.ones(2), "b": np.ones(3)}
    _, vjp = vjp_of(lambda m: m.values(), p, _key=("method", "values"))
    (g,) = vjp([np.full(2, 2.0), np.full(3, 3.0)])
    np.testing.assert_allclose(g["a"], [2.0, 2.0])
    np.testing.assert_allclose(g["b"], [3.0, 3.0, 3.0])
    _, vjp = vjp_of(lambda m: m.items(), p, _key=("method", "items"))
    (g,) = vjp([[0, np.full(2, 5.0)], 0])
    assert set(g) == {"a"}
    np.testing.assert_allclose(g["a"], [5.0, 5.0])


# ----- svd, eigh and einsum through the transformer, to second and third order -------------


def svd_values(a):
    s = np.linalg.svd(a, compute_uv=False)
    return np.sum(np.sin(s) * np.arange(1.0, s.shape[-1] + 1.0))


def svd_reconstruction(a):
    # (u * c) @ diag(s) @ vt does not change when a pair of singular vectors flips sign
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    c = np.arange(1.0, s.shape[-1] + 1.0)
    return np.sum(np.tanh((u * c) @ (s[..., :, None] * vt)))


def svd_factor_magnitudes(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(np.abs(u) * np.arange(u.shape[-1])) + np.sum(vt ** 2 * s[..., :, None])


def svd_full_values(a):
    return np.sum(np.linalg.svd(a)[1] ** 3)


def svd_hermitian(a):
    u, s, vt = np.linalg.svd(a, hermitian=True)
    return np.sum(s ** 2) + np.sum(((u * s[..., None, :]) @ vt) * a)


def svdvals_sines(a):
    return np.sum(np.sin(np.linalg.svdvals(a)))


def eigh_loss(a):
    w, v = np.linalg.eigh(a)
    weights = np.arange(w.shape[-1])
    return np.sum(w * weights) + np.sum(v ** 2 * weights) + np.sum(np.exp(w))


def eigvalsh_loss(a):
    return np.sum(np.linalg.eigvalsh(a, "U") ** 2)


def spectral_norms(a):
    return np.linalg.norm(a, "nuc") + np.linalg.norm(a, 2) + np.linalg.norm(a, -2)


SECOND_ORDER_DECOMPOSITIONS = [
    (svd_values, separated(4, 3)), (svd_values, separated(2, 3, 5)),
    (svd_reconstruction, separated(4, 3)), (svd_reconstruction, separated(3, 5)),
    (svd_reconstruction, separated(2, 3, 3)), (svd_factor_magnitudes, separated(4, 3)),
    (svd_factor_magnitudes, separated(2, 3, 4)), (svd_full_values, separated(3, 3)),
    (svd_hermitian, symmetric_in("L", 3, 3)), (svdvals_sines, separated(3, 4)),
    (eigh_loss, symmetric_in("L", 3, 3)), (eigh_loss, symmetric_in("L", 2, 3, 3)),
    (eigvalsh_loss, symmetric_in("U", 3, 3)),
]


@pytest.mark.parametrize("fn, a", SECOND_ORDER_DECOMPOSITIONS,
                         ids=[f"{fn.__name__}-{'x'.join(map(str, a.shape))}"
                              for fn, a in SECOND_ORDER_DECOMPOSITIONS])
def test_decompositions_to_second_order(fn, a):
    mindgrad.check_grads(fn, (a,), order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("fn, a", [(svd_full_values, separated(4, 3)),
                                   (svd_full_values, separated(3, 5)),
                                   (spectral_norms, separated(3, 4))],
                         ids=["svd-full-tall", "svd-full-wide", "spectral-norms"])
def test_decompositions_to_second_order_in_reverse(fn, a):
    # forward mode refuses full_matrices=True of a non-square matrix (it cannot tell which
    # factors are used); the norms' forward-over-reverse goes through norm_grad's tangent rule
    mindgrad.check_grads(fn, (a,), order=2, modes=("rev",))


def test_svd_extra_columns_of_full_matrices_have_no_gradient():
    a = separated(4, 3)
    _, vjp = vjp_of(np.linalg.svd, a)
    with pytest.raises(NotImplementedError, match="full_matrices=True"):
        vjp((np.ones((4, 4)), 0, 0))
    _, vjp = vjp_of(np.linalg.svd, a.T)
    with pytest.raises(NotImplementedError, match="full_matrices=True"):
        vjp((0, np.ones(3), np.ones((4, 4))))
    (g,) = vjp((0, np.ones(3), 0))  # the singular values alone are fine
    np.testing.assert_allclose(g, vjp_of(np.linalg.svd, a.T, compute_uv=False)[1](np.ones(3))[0])


def test_svd_and_eigh_gradients_keep_float32():
    a = separated(3, 3).astype(np.float32)
    _, vjp = vjp_of(np.linalg.svd, a)
    assert vjp((np.ones((3, 3)), np.ones(3), np.ones((3, 3))))[0].dtype == np.float32
    _, vjp = vjp_of(np.linalg.eigh, symmetric_in("L", 3, 3).astype(np.float32))
    assert vjp((np.ones(3), np.ones((3, 3))))[0].dtype == np.float32


def test_decompositions_of_complex_matrices_say_so():
    a = separated(3, 3) + 1j * separated(3, 3)
    _, vjp = vjp_of(np.linalg.svd, a)
    with pytest.raises(NotImplementedError, match="real matrices"):
        vjp((np.ones((3, 3)), np.ones(3), np.ones((3, 3))))
    _, vjp = vjp_of(np.linalg.eigh, a)
    with pytest.raises(NotImplementedError, match="real matrices"):
        vjp((np.ones(3), np.ones((3, 3))))


def einsum_cubed(spec):
    def one(a):
        return np.sum(np.einsum(spec, a) ** 3)

    def two(a, b):
        return np.sum(np.einsum(spec, a, b) ** 3)

    def three(a, b, c):
        return np.sum(np.einsum(spec, a, b, c) ** 3)

    return [one, two, three][spec.split("->")[0].count(",")]


SECOND_ORDER_EINSUM = [("ii->i", (3, 3)), ("iij->j", (3, 3, 2)), ("ij->", (2, 3)),
                       ("ij,j", (2, 3), (3,)), ("ii,i->i", (3, 3), (3,)),
                       ("...ij,...jk->...ik", (2, 1, 3, 4), (5, 4, 2)),
                       ("ij,jk->ik", (1, 3), (3, 4)), ("i,j->ij", (3,), (4,)),
                       ("ij,jk,kl->il", (2, 3), (3, 4), (4, 2))]


@pytest.mark.parametrize("spec, shapes", [(c[0], c[1:]) for c in SECOND_ORDER_EINSUM],
                         ids=[c[0] for c in SECOND_ORDER_EINSUM])
def test_einsum_to_second_order(spec, shapes):
    args = tuple(0.5 * r(*shape) for shape in shapes)
    mindgrad.check_grads(einsum_cubed(spec), args, order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("fn, args", [
    (svd_values, (separated(3, 5),)),
    (einsum_cubed("ii->i"), (0.5 * r(3, 3),)),
    (einsum_cubed("...ij,...jk->...ik"), (0.5 * r(2, 1, 3, 4), 0.5 * r(5, 4, 2))),
], ids=["svd-values", "einsum-diagonal", "einsum-broadcast"])
def test_svd_and_einsum_to_third_order(fn, args):
    mindgrad.check_grads(fn, args, order=3, modes=("rev", "fwd"), directions=1)
