"""Runs one program in one mode and says what happened: the tester's oracle.

Modes: ``grad`` (reverse mode against central differences of the summed output), ``jvp``
(forward mode against central differences of ``vdot(u, f)``), ``hvp`` (grad of grad against
central differences of the summed gradient), ``value`` (``value_and_grad``'s value and its
effect on the caller's arrays against plain ``f``'s), ``third`` (``jvp`` over ``jvp`` over
``grad``: first the second derivative ``jvp(grad(f))`` along ``v`` against central differences
of the gradient, then the third derivative along ``v`` and ``w`` against central differences of
that second derivative), ``forward3`` (``jvp`` three times) and ``rfr`` (``grad`` over ``jvp``
over ``grad``: the third derivative by reverse mode over the tangent code of the gradient
code, against central differences of the second derivative). Each difference is taken at two
step sizes: a number counts as wrong only when both disagree with mindgrad and agree with each
other; when they disagree with each other the function is not smooth there, and when one is
not finite (a step that leaves the domain, a NaN in a branch not taken that a step brings in)
the differences say nothing: the program is skipped. A NaN or inf from mindgrad where both
differences are finite and agree is wrong.

Outcomes: ``ok``, ``wrong``, ``crash`` (an exception that is not a clear error),
``clear-error`` (see ``is_clear_error``), ``skipped`` (``f`` raises or is not finite) and
``known`` (a wrong or crash that ``known.py`` accounts for; given by the runner).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import itertools
import linecache
import math
import os
import re
import sys
import traceback

import numpy as np

import mindgrad
from mindgrad.api import taylor
from mindgrad.errors import NoGradientRuleError, NoSourceError, UnsupportedSyntaxError
from mindgrad.runtime import trees

MODES = ("grad", "jvp", "hvp", "value", "third", "forward3", "rfr", "vmap", "taylor", "reuse")
OUTCOMES = ("ok", "wrong", "crash", "clear-error", "skipped", "known")
STEPS = (1e-5, 1e-4)
RTOL = 1e-4
ATOL = 1e-6

_module_ids = itertools.count()
#: mindgrad's own source directory: an error located there is not about the user's program
_PACKAGE = os.path.dirname(os.path.abspath(mindgrad.__file__)) + os.sep


@dataclasses.dataclass
class Result:
    """What one mode did on one program; ``detail`` says what disagreed or what was raised."""

    outcome: str
    detail: str = ""
    error: str = ""     # the exception's type name, for crashes and clear errors

    @property
    def signature(self):
        """The failure class: outcome, exception type and the place that raised it (what the
        shrinker keeps fixed, so a crash does not shrink into another one of the same type)."""
        where = self.detail.rsplit(" (at ", 1)[1] if " (at " in self.detail else ""
        # generated code is numbered as it is built, and its lines follow the program's
        where = re.sub(r"<mindgrad (\w+?)(?:_\d+)? #\d+>:\d+", r"<mindgrad \1>", where)
        return (self.outcome, self.error, where)


class Skip(Exception):
    """``f`` itself fails or is not finite at the sample point (or near it)."""


def is_clear_error(exc: BaseException, filename: str) -> bool:
    """Whether ``exc`` is a clear error about the program in ``filename``.

    mindgrad's located error classes are clear by construction, unless they locate the
    trouble in mindgrad's own code (its rules or runtime helpers refused at a higher order:
    an internal failure, however it is worded); a ``TypeError``, ``ValueError`` or
    ``NotImplementedError`` is clear when its message names the program's file and a line
    (``file.py:12``).
    """
    if isinstance(exc, (UnsupportedSyntaxError, NoGradientRuleError, NoSourceError)):
        where = getattr(exc, "filename", None)
        return not (isinstance(where, str) and os.path.abspath(where).startswith(_PACKAGE))
    if isinstance(exc, (TypeError, ValueError, NotImplementedError)):
        base = os.path.basename(filename)
        text = str(exc)
        return any(f"{name}:" in text and text.split(f"{name}:", 1)[1][:1].isdigit()
                   for name in (filename, base))
    return False


def load(source: str, directory: str):
    """``f`` of ``source``, written to a fresh module file in ``directory`` and imported."""
    name = f"mgfuzz_{os.getpid()}_{next(_module_ids)}"
    path = os.path.join(directory, name + ".py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.f, path


# ----- values ------------------------------------------------------------------------------


def leaves(value):
    """The float leaves of an output, in order (ints, bools, None and strings dropped)."""
    return [np.asarray(v, dtype=np.float64) for v in trees.leaves(value)
            if not _is_constant(v)]


def _is_constant(value):
    return isinstance(value, (bool, int, str)) or value is None


def _items(value):
    return list(value.items()) if isinstance(value, dict) else list(enumerate(value))


def like(got, value):
    """``got`` (a derivative of ``value``) with an int 0 standing for a float leaf of
    ``value`` read as zeros of its shape, so its leaves pair with ``value``'s; whether that
    stand-in is allowed is ``structure``'s question."""
    if isinstance(value, (tuple, list, dict)) and isinstance(got, (tuple, list, dict)):
        if len(got) != len(value):
            return got
        if isinstance(value, dict):
            return {k: like(got.get(k), v) for k, v in value.items()}
        return [like(g, v) for g, v in zip(got, value)]
    if not _is_constant(value) and isinstance(got, int) and not isinstance(got, bool) \
            and got == 0:
        return np.zeros(np.shape(value))
    return got


def structure(got, value, path="the result"):
    """None if ``got``, a derivative of ``value``, has ``value``'s containers (the same types:
    a list for a list, a dict for a dict) and, at each float leaf, a float or array of its
    shape; else what differs. A user gets the types ``f`` returns, never mindgrad's own
    containers nor the int 0 that stands for a zero inside generated code."""
    if isinstance(value, (tuple, list, dict)):
        if type(got) is not type(value):
            return (f"{path} is a {type(got).__module__}.{type(got).__name__} for a "
                    f"{type(value).__name__}")
        if len(got) != len(value):
            return f"{path} has {len(got)} items for {len(value)}"
        if isinstance(value, dict) and set(got) != set(value):
            return f"{path} has the keys {sorted(got)} for {sorted(value)}"
        for k, v in _items(value):
            problem = structure(got[k], v, f"{path}[{k!r}]")
            if problem:
                return problem
        return None
    if _is_constant(value):
        return None
    if isinstance(got, (bool, int)) or _is_constant(got):
        return f"{path} is {got!r} for a float of shape {np.shape(value)}"
    if np.shape(got) != np.shape(value):
        return f"{path} has shape {np.shape(got)} for a value of shape {np.shape(value)}"
    return None


def total(value):
    return float(sum(np.sum(v) for v in leaves(value)))


def vdot(a, b):
    return float(sum(np.vdot(np.ravel(x), np.ravel(y)) for x, y in zip(leaves(a), leaves(b))))


def same_shapes(value, like_leaves):
    """``value``, whose float leaves have the shapes of ``like_leaves`` (the output at the
    sample point); Skip where a step changes them (a branch returning another shape)."""
    if [np.shape(v) for v in leaves(value)] != [np.shape(v) for v in like_leaves]:
        raise Skip("the output changes shape near the sample point")
    return value


def copy_args(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def shifted(args, dirs, eps):
    return [a + eps * d for a, d in zip(args, dirs)]


def directions(args, rng):
    return [rng.standard_normal(np.shape(a)) if isinstance(a, np.ndarray)
            else float(rng.standard_normal()) for a in args]


def plain(f, args):
    """``f(*args)`` on copies; Skip if it raises or gives a non-finite value."""
    try:
        out = f(*copy_args(args))
    except Exception as exc:  # the program itself fails: nothing to test
        raise Skip(f"f raises {type(exc).__name__}: {exc}") from exc
    if not all(np.all(np.isfinite(v)) for v in leaves(out)):
        raise Skip("f is not finite")
    return out


def central(fn, args, dirs):
    """Central differences of the scalar ``fn`` along ``dirs`` at each step size; Skip when
    one is not finite (a step leaves the domain: the differences say nothing there)."""
    fds = [(fn(shifted(args, dirs, h)) - fn(shifted(args, dirs, -h))) / (2 * h) for h in STEPS]
    if not all(np.isfinite(fds)):
        raise Skip("differences not finite")
    return fds


def compare(ad, fds, scale):
    """None if ``ad`` matches; else why it is wrong; Skip if the differences are noise."""
    tol = ATOL * (1 + scale)
    close = [abs(ad - fd) <= tol + RTOL * max(abs(ad), abs(fd)) for fd in fds]
    if any(close):
        return None
    a, b = fds
    if abs(a - b) > tol + RTOL * max(abs(a), abs(b)):
        raise Skip("not smooth at the sample point")
    if not np.isfinite(ad):
        return f"mindgrad gives {ad}, differences give {fds[0]:.10g}"
    return f"mindgrad gives {ad:.10g}, differences give {fds[0]:.10g} and {fds[1]:.10g}"


def finite_grads(grads):
    if not all(np.all(np.isfinite(g)) for g in leaves(grads)):
        raise Skip("gradient not finite")


# ----- warnings ----------------------------------------------------------------------------
# NumPy warns of a division by zero, an invalid operation (log of a negative, 0/0) or an
# overflow (underflow is silent by default). Where f computes without one at the sample point,
# the derivative at that point must not raise one either: a user would read a warning of a
# computation they did not write (a slope computed, then masked). ``watch`` runs mindgrad's
# derivatives at the sample point with those warnings raised as errors, and only then.

_WARNINGS = {"divide": "raise", "invalid": "raise", "over": "raise", "under": "ignore"}
_watching = False


class SpuriousWarning(Exception):
    """mindgrad's code warned where ``f`` does not."""


def quiet(f, args) -> bool:
    """Whether ``f(*args)`` computes without a NumPy floating-point warning."""
    with np.errstate(**_WARNINGS):
        try:
            f(*copy_args(args))
        except FloatingPointError:
            return False
    return True


@contextlib.contextmanager
def watch():
    """NumPy's warnings raised as ``SpuriousWarning`` while the derivatives at the sample
    point run, where ``f`` raises none there."""
    if not _watching:
        yield
        return
    with np.errstate(**_WARNINGS):
        try:
            yield
        except FloatingPointError as exc:
            tb = traceback.extract_tb(exc.__traceback__)
            where = f" at {tb[-1].filename}:{tb[-1].lineno}: {tb[-1].line}" if tb else ""
            raise SpuriousWarning(f"{exc}{where}") from None


# ----- modes -------------------------------------------------------------------------------


def check_grad(f, args, rng):
    positions = tuple(range(len(args)))
    with watch():
        grads = mindgrad.grad(f, positions)(*copy_args(args))
    dirs = directions(args, rng)
    fds = central(lambda a: total(plain(f, a)), args, dirs)
    ad = vdot(grads, dirs)
    return compare(ad, fds, abs(total(plain(f, args))) + abs(ad))


def check_jvp(f, args, rng):
    dirs = directions(args, rng)
    with watch():
        out, tangent = mindgrad.jvp(f, tuple(copy_args(args)), tuple(dirs))
    us = [rng.standard_normal(v.shape) for v in leaves(plain(f, args))]
    fds = central(lambda a: vdot(same_shapes(plain(f, a), us), us), args, dirs)
    ad = vdot(like(tangent, out), us)
    problem = compare(ad, fds, abs(vdot(out, us)) + abs(ad))
    return problem or structure(tangent, out, "jvp's tangent")


def check_hvp(f, args, rng):
    positions = tuple(range(len(args)))
    g = mindgrad.grad(f, positions)
    with watch():
        hv = mindgrad.grad(g, positions)(*copy_args(args))
    dirs = directions(args, rng)

    def summed(a):
        grads = g(*copy_args(a))
        finite_grads(grads)
        return total(grads)

    fds = central(summed, args, dirs)
    ad = vdot(hv, dirs)
    return compare(ad, fds, abs(summed(args)) + abs(ad))


def same(a, b, rtol=1e-12, scale=0.0):
    """Whether ``a`` and ``b`` hold the same float leaves, to ``rtol`` and an absolute
    tolerance of ``scale`` times each leaf of ``b``'s largest magnitude (plus one)."""
    la, lb = leaves(a), leaves(b)
    return len(la) == len(lb) and all(
        x.shape == y.shape and np.allclose(x, y, rtol=rtol, equal_nan=True, atol=scale and
                                           scale * (1 + np.max(np.abs(y), initial=0)))
        for x, y in zip(la, lb))


def check_value(f, args, rng):
    positions = tuple(range(len(args)))
    mine, theirs = copy_args(args), copy_args(args)
    with watch():
        value, _ = mindgrad.value_and_grad(f, positions)(*mine)
    expected = f(*theirs)
    if not same(value, expected):
        return f"value_and_grad gives {value!r}, f gives {expected!r}"
    if not all(same(a, b) for a, b in zip(mine, theirs)):
        return "value_and_grad leaves the inputs different from what f leaves"
    return None


def magnitude(a, b):
    """``sum |a| |b|`` over the leaves: the size of the terms ``vdot(a, b)`` adds, which bounds
    its rounding error better than the sum itself, that may cancel."""
    return float(sum(np.vdot(np.abs(np.ravel(x)), np.abs(np.ravel(y)))
                     for x, y in zip(leaves(a), leaves(b))))


def second_order(g, dirs):
    """``x -> jvp(g, x, dirs)[1]`` for a gradient function ``g``, as a Python function with
    source, so that mindgrad can differentiate it again (it reads ``dirs`` as globals)."""
    params = [f"x{i}" for i in range(len(dirs))]
    tangents = "".join(f"t{i}, " for i in range(len(dirs)))
    name = f"second_{next(_module_ids)}"
    text = (f"def {name}({', '.join(params)}):\n"
            f"    _, slope = mindgrad.jvp(g, ({''.join(p + ', ' for p in params)}),"
            f" ({tangents}))\n"
            f"    return slope\n")
    namespace = {"mindgrad": mindgrad, "g": g, **{f"t{i}": t for i, t in enumerate(dirs)}}
    return with_source(name, text, namespace)


def with_source(name, text, namespace):
    """The function ``name`` that ``text`` defines, compiled in ``namespace`` with its source
    registered, so that mindgrad can read it."""
    filename = f"<mindgrad fuzz {name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 (the text is ours)
    return namespace[name]


def third_order(second, args, dirs):
    """mindgrad's derivative of ``second`` (a ``second_order`` function) along ``dirs``: the
    third derivative, by forward mode over the forward mode over the gradient."""
    return mindgrad.jvp(second, tuple(copy_args(args)), tuple(dirs))[1]


def check_third(f, args, rng):
    positions = tuple(range(len(args)))
    g = mindgrad.grad(f, positions)
    with watch():
        grads = g(*copy_args(args))
    finite_grads(grads)  # the grad mode reports a gradient that is not finite
    v, w = directions(args, rng), directions(args, rng)
    us = [rng.standard_normal(x.shape) for x in leaves(grads)]
    second = second_order(g, v)

    def along(a):  # vdot(u, second derivative along v) at a
        return vdot(second(*copy_args(a)), us)

    def gradient(a):
        return vdot(g(*copy_args(a)), us)

    # the second derivative along v (forward over reverse) against differences of the gradient
    with watch():
        here = second(*copy_args(args))
    ad = vdot(like(here, grads), us)
    problem = compare(ad, central(gradient, args, v), magnitude(here, us) + abs(ad))
    problem = problem or structure(here, grads, "jvp(grad(f))'s tangent")
    if problem:
        return f"second order, jvp of grad: {problem}"
    # the third derivative along v and w against differences of the second derivative
    with watch():
        third = third_order(second, args, w)
    ad = vdot(like(third, here), us)
    problem = compare(ad, central(along, args, w), magnitude(here, us) + abs(ad))
    problem = problem or structure(third, here, "jvp(jvp(grad(f)))'s tangent")
    return f"third order, jvp of jvp of grad: {problem}" if problem else None


def weighted_sum(fn, weights, bare):
    """``x -> sum_i np.sum(fn(x)[i] * weights[i])`` for ``fn`` giving one array or float per
    argument (``bare``: the one itself, for one argument), as a Python function with source,
    so that mindgrad can differentiate it (it reads ``fn`` and ``weights`` as globals)."""
    params = [f"x{i}" for i in range(len(weights))]
    name = f"weighted_{next(_module_ids)}"
    terms = "np.sum(out * u0)" if bare else \
        " + ".join(f"np.sum(out[{i}] * u{i})" for i in range(len(weights)))
    text = (f"def {name}({', '.join(params)}):\n"
            f"    out = fn({', '.join(params)})\n"
            f"    return {terms}\n")
    namespace = {"np": np, "fn": fn, **{f"u{i}": u for i, u in enumerate(weights)}}
    return with_source(name, text, namespace)


def check_reverse_third(f, args, rng):
    """grad over jvp over grad: reverse mode over the tangent code of the gradient code, the
    third derivative along ``v`` and ``w``, against central differences of the second
    derivative ``vdot(jvp(grad(f))(x, v), u)`` along ``w``."""
    positions = tuple(range(len(args)))
    g = mindgrad.grad(f, positions)
    with watch():
        grads = g(*copy_args(args))
    finite_grads(grads)
    bare = not isinstance(grads, tuple)
    if len(leaves(grads)) != len(args) or bare and len(args) != 1:
        raise Skip("a gradient that is not one array or float per argument")
    v, w = directions(args, rng), directions(args, rng)
    us = [rng.standard_normal(np.shape(x)) for x in leaves(grads)]
    second = second_order(g, v)
    weighted = weighted_sum(second, us, bare)
    with watch():
        here = second(*copy_args(args))
        third = mindgrad.grad(weighted, positions)(*copy_args(args))
    ad = vdot(third, w)
    fds = central(lambda a: vdot(like(second(*copy_args(a)), grads), us), args, w)
    problem = compare(ad, fds, magnitude(like(here, grads), us) + abs(ad))
    problem = problem or structure(third, grads, "grad(jvp(grad(f)))")
    return f"third order, grad of jvp of grad: {problem}" if problem else None


def check_forward_third(f, args, rng):
    """jvp over jvp over jvp: forward mode three times, over the tangent code of the tangent
    code, each order against central differences of the one below."""
    u, v, w = directions(args, rng), directions(args, rng), directions(args, rng)
    first = second_order(f, u)   # x -> jvp(f, x, u)[1]
    second = second_order(first, v)
    with watch():
        here = second(*copy_args(args))
    us = [rng.standard_normal(np.shape(x)) for x in leaves(plain(f, args))]

    def along(fn):
        return lambda a: vdot(same_shapes(fn(*copy_args(a)), us), us)

    ad = vdot(like(here, plain(f, args)), us)
    problem = compare(ad, central(along(first), args, v), magnitude(here, us) + abs(ad))
    if problem:
        return f"second order, jvp of jvp: {problem}"
    with watch():
        third = third_order(second, args, w)
    ad = vdot(like(third, here), us)
    problem = compare(ad, central(along(second), args, w), magnitude(here, us) + abs(ad))
    problem = problem or structure(third, here, "jvp(jvp(jvp(f)))'s tangent")
    return f"third order, jvp of jvp of jvp: {problem}" if problem else None


def mapped_sum(mapped, weights, count):
    """``(x0, ..) -> np.sum(mapped(x0, ..) * weights)`` as a Python function with source."""
    params = ", ".join(f"x{i}" for i in range(count))
    name = f"mapped_{next(_module_ids)}"
    text = (f"def {name}({params}):\n"
            f"    return np.sum(mapped({params}) * u)\n")
    return with_source(name, text, {"np": np, "mapped": mapped, "u": weights})


def check_vmap(f, args, rng):
    """``vmap(f)`` over a batch of three examples (the sample point and two points near it):
    each slice of its result against ``f`` of that example; then, for one array result, the
    gradient of a weighted sum of the mapped function (``grad`` through ``vmap``) against
    central differences."""
    global _watching
    batch = [args] + [shifted(args, directions(args, rng), 0.05) for _ in range(2)]
    outs = [plain(f, b) for b in batch]
    # the batch computes at every example: a warning is mindgrad's only where f warns at none
    _watching = _watching and all(quiet(f, b) for b in batch[1:])
    stacked = [np.stack([np.asarray(b[i], dtype=np.float64) for b in batch])
               for i in range(len(args))]
    with watch():
        mapped = mindgrad.vmap(f)(*copy_args(stacked))
    # the batched code computes the same operations, but NumPy's loops over arrays may round
    # differently from its scalar paths (SIMD): a cancellation to 0 may leave 1e-17
    for k, out in enumerate(outs):
        got = [np.take(leaf, k, axis=0) for leaf in leaves(mapped)]
        if len(got) != len(leaves(out)) or not all(
                np.allclose(g, e, rtol=1e-12, atol=1e-14, equal_nan=True)
                for g, e in zip(got, leaves(out))):
            return f"vmap's example {k} gives {got!r}, f gives {leaves(out)!r}"
    problem = _check_batched_derivatives(f, args, batch, stacked, outs[0], rng)
    if problem or not isinstance(outs[0], (np.ndarray, float)):
        return problem
    loss = mapped_sum(mindgrad.vmap(f), rng.standard_normal(np.shape(mapped)), len(stacked))
    positions = tuple(range(len(stacked)))
    with watch():
        grads = mindgrad.grad(loss, positions)(*copy_args(stacked))
    dirs = directions(stacked, rng)
    fds = central(lambda a: loss(*a), stacked, dirs)
    ad = vdot(grads, dirs)
    return compare(ad, fds, abs(loss(*stacked)) + abs(ad))


def _check_batched_derivatives(f, args, batch, stacked, out, rng):
    """What runs vmap's batched code with derivatives: per-example gradients (``vmap(grad)``,
    against the gradient of each example) for a scalar ``f``; else ``jacrev`` (every row at
    once) contracted with random weights and directions, against central differences."""
    positions = tuple(range(len(args)))
    if not all(isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in args) or \
            not isinstance(out, (np.ndarray, float)) or np.iscomplexobj(out):
        return None
    if np.ndim(out) == 0:
        with watch():
            per_example = mindgrad.vmap(mindgrad.grad(f, positions))(*copy_args(stacked))
        for k, example in enumerate(batch):
            with watch():
                expected = mindgrad.grad(f, positions)(*copy_args(example))
            got = [np.take(leaf, k, axis=0) for leaf in leaves(per_example)]
            if not all(np.allclose(g, e, rtol=1e-10, atol=1e-12)
                       for g, e in zip(got, leaves(expected))):
                return f"vmap(grad)'s example {k} gives {got!r}, grad gives {expected!r}"
        return None
    if not isinstance(out, np.ndarray) or out.size < 2:
        return None
    with watch():
        jac = mindgrad.jacrev(f, positions)(*copy_args(args))
    weights, dirs = rng.standard_normal(out.shape), directions(args, rng)
    ad = sum(float(np.sum(weights * np.tensordot(j, d, axes=d.ndim)))
             for j, d in zip(jac, dirs))
    fds = central(lambda a: float(np.sum(weights * plain(f, a))), args, dirs)
    return compare(ad, fds, abs(ad))


def check_taylor(f, args, rng):
    """jet's Taylor code, run on its own (``jet`` would run nested forward mode where it
    raises), along a random curve to order 2, against forward mode nested once per order."""
    if not all(isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in args):
        raise Skip("Taylor mode here takes float arrays")
    out = plain(f, args)
    if not isinstance(out, (np.ndarray, float)) or np.iscomplexobj(out):
        raise Skip("Taylor mode here takes one real result")
    args = copy_args(args)
    made = taylor.taylor_code(f, args)
    if isinstance(made, str):  # jet nests forward mode: the jvp modes check that
        return None
    order = 2
    series = [0.3 * rng.standard_normal((order,) + a.shape) for a in args]
    coefficients = [s[k] / math.factorial(k + 1) for s in series for k in range(order)]
    with watch():
        got = made.function(*[np.concatenate([a[None], s / np.array(
            [math.factorial(k + 1) for k in range(order)]).reshape((order,) + (1,) * a.ndim)])
            for a, s in zip(args, series)], order + 1)
    expected = taylor.nested(f, args, coefficients, order, out)
    got = np.stack([got[k] * math.factorial(k) for k in range(1, order + 1)])
    if np.shape(got) != np.shape(expected) or not np.allclose(
            got, expected, rtol=1e-8, atol=1e-10 * (1 + np.max(np.abs(expected)))):
        return f"the Taylor code gives {got!r}, nested forward mode {expected!r}"
    return None


def check_reuse(f, args, rng):
    """The reuse stage (``compiler/finish/reuse.py``), made to run on these small arrays (the
    size from which arrays count as large set to one element): the gradient must equal, to the
    last bit, the one without it, and leave the arguments and the module's arrays as they
    were; with the products of ``unbroadcast(a * b, x)`` summed by ``np.einsum`` too, equal up
    to the order of the sums."""
    from mindgrad.compiler import cache

    module_arrays = {k: v.copy() for k, v in getattr(f, "__globals__", {}).items()
                     if isinstance(v, np.ndarray)}

    positions = tuple(range(len(args)))
    with watch():
        expected = mindgrad.grad(f, positions)(*copy_args(args))
    with cache.large_from(1):
        given = copy_args(args)
        with watch():
            got = mindgrad.grad(f, positions)(*given)
    if not same(got, expected):
        return f"with buffers reused the gradient is {got!r}, without {expected!r}"
    if not same(given, args):
        return "with buffers reused the gradient wrote into its arguments"
    changed = [k for k, v in module_arrays.items() if not same(f.__globals__[k], v)]
    if changed:
        return f"with buffers reused the gradient wrote into the module's {', '.join(changed)}"
    # products summed down by np.einsum (runtime.reuse.unbroadcast_product) on these small
    # arrays too: the same gradient up to the order of its sums
    from mindgrad.runtime import reuse
    with cache.large_from(1):
        was, reuse.SUMMED_FROM = reuse.SUMMED_FROM, 1
        try:
            with watch():
                summed = mindgrad.grad(f, positions)(*copy_args(args))
        finally:
            reuse.SUMMED_FROM = was
    if not same(summed, expected, rtol=1e-9, scale=1e-12):
        return f"with products summed by einsum the gradient is {summed!r}, without " \
               f"{expected!r}"
    return None


CHECKS = {"grad": check_grad, "jvp": check_jvp, "hvp": check_hvp, "value": check_value,
          "third": check_third, "forward3": check_forward_third, "rfr": check_reverse_third,
          "vmap": check_vmap, "taylor": check_taylor, "reuse": check_reuse}


def run(f, path, args, mode, seed=0) -> Result:
    """One mode on one loaded program."""
    global _watching
    rng = np.random.default_rng(seed)
    try:
        plain(f, args)
        _watching = quiet(f, args)
        problem = CHECKS[mode](f, args, rng)
    except Skip as exc:
        return Result("skipped", str(exc))
    except SpuriousWarning as exc:
        return Result("crash", f"mindgrad's code warns where f does not: {exc}"[:600],
                      "SpuriousWarning")
    except Exception as exc:  # noqa: BLE001  the tester's job is to classify every exception
        kind = "clear-error" if is_clear_error(exc, path) else "crash"
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" (at {tb[-1].filename}:{tb[-1].lineno})" if tb else ""
        return Result(kind, f"{type(exc).__name__}: {exc}{where}"[:600], type(exc).__name__)
    finally:
        _watching = False
        mindgrad.clear_cache()
    return Result("wrong", problem) if problem else Result("ok")


#: a refusal of an in-place operator as aliasing, naming the array written
_ALIASING = re.compile(r"the in-place operator on '(\w+)' (would write into an array the caller "
                       r"passed in|also changes)")
#: ``name = other[...]`` by advanced indexing: an integer array, a list or a boolean mask
_ADVANCED_COPY = r"^\s*{name} = \w+\[(np\.array\(|\[)[^\n]*\]\s*$"


def refused_copy(source, detail):
    """Whether ``detail`` refuses an in-place operator on a name ``source`` made by advanced
    indexing, which NumPy makes a copy of: no memory is shared, the program is valid."""
    match = _ALIASING.search(detail)
    return match is not None and re.search(_ADVANCED_COPY.format(name=match.group(1)), source,
                                           re.MULTILINE) is not None


def check_program(program, mode, directory) -> Result:
    """Load ``program`` (a ``generator.Program``) and run ``mode`` on it. A valid program
    refused as aliasing (an in-place operator on an advanced-index copy) is a crash."""
    with np.errstate(all="ignore"):
        try:
            f, path = load(program.source, directory)
        except Exception as exc:  # noqa: BLE001  a program that does not even import
            return Result("skipped", f"does not load: {exc}")
        result = run(f, path, program.args(), mode, program.seed)
    if result.outcome == "clear-error" and refused_copy(program.source, result.detail):
        return Result("crash", f"a copy refused as aliasing: {result.detail}", result.error)
    return result
