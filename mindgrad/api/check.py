"""``check_grads``: mindgrad's gradients against central finite differences, in float64."""

from __future__ import annotations

import itertools
import keyword
import linecache

import numpy as np

from mindgrad.api.tracebacks import user_frames
from mindgrad.runtime import is_zero, trees

__all__ = ["check_grads"]


def _to_float64(value):
    """``value`` with its float arrays and numbers in float64."""
    return trees.map_leaves(_leaf_to_float64, value)


def _leaf_to_float64(value):
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value.astype(np.float64)
    if isinstance(value, (float, np.floating)):
        return float(value)
    return value


# ----- the numerical core: directions, moved inputs, products --------------------------------
# check_grads and the rule tables' checker (tests/support/rule_check.py) share these: random
# directions in a value's structure, the value moved along one, and the real product of a
# derivative with a direction under the README's complex convention.


def is_float_leaf(v) -> bool:
    """A float number or array (not a bool)."""
    if isinstance(v, bool):
        return False
    if isinstance(v, (float, np.floating)):
        return True
    return isinstance(v, np.ndarray) and v.dtype.kind == "f"


def is_complex_leaf(v) -> bool:
    return isinstance(v, (complex, np.complexfloating)) or \
        isinstance(v, np.ndarray) and v.dtype.kind == "c"


def random_like(v, rng, complex_values=True):
    """Random float64 values shaped as ``v``'s float entries, complex128 ones for its complex
    entries (real ones without ``complex_values``), as lists and dicts of them; None where
    ``v`` has neither (an int, a string, a container of those)."""
    if isinstance(v, (list, tuple)):
        parts = [random_like(x, rng, complex_values) for x in v]
        return None if all(p is None for p in parts) else trees.rebuild(v, parts) \
            if isinstance(v, tuple) else parts
    if isinstance(v, dict):
        parts = {k: random_like(x, rng, complex_values) for k, x in v.items()}
        return None if all(p is None for p in parts.values()) else parts
    if is_complex_leaf(v):
        real = rng.standard_normal(np.shape(v))
        return real + 1j * rng.standard_normal(np.shape(v)) if complex_values else real
    if not is_float_leaf(v):
        return None
    if isinstance(v, float):
        return float(rng.standard_normal())
    return rng.standard_normal(np.shape(v))


def perturb(v, dv, eps):
    """``v`` moved by ``eps`` along the direction ``dv`` (entries without one stay), in ``v``'s
    dtype."""
    if dv is None:
        return v

    def moved(x, dx):
        if dx is None:
            return x
        if isinstance(x, float):
            return x + eps * dx
        return (x + eps * dx).astype(np.result_type(x), copy=False)

    return trees.map_leaves(moved, v, dv)


def tree_vdot(grad, v, where="gradient"):
    """``vdot(grad, v)`` over matching structures (0 where ``v`` is None or ``grad`` the
    symbolic zero), checking that they match; for complex values the README's convention: a
    cotangent ``c`` of ``w`` means ``dL = Re(c dw)``, no conjugate."""
    if v is None or is_zero(grad):
        return 0.0
    if isinstance(v, dict):
        assert isinstance(grad, dict), f"{where}: expected a dict, got {type(grad)}"
        return sum(tree_vdot(grad.get(k, 0), x, f"{where}[{k!r}]") for k, x in v.items())
    if isinstance(v, (list, tuple)):
        assert isinstance(grad, (list, tuple)), f"{where}: expected a list, got {type(grad)}"
        assert len(grad) == len(v), f"{where}: {len(grad)} entries for {len(v)}"
        return sum(tree_vdot(gi, vi, f"{where}[{i}]") for i, (gi, vi) in enumerate(zip(grad, v)))
    assert np.shape(grad) == np.shape(v), f"{where}: shape {np.shape(grad)} for {np.shape(v)}"
    if not np.iscomplexobj(v):
        assert not np.iscomplexobj(grad), f"{where}: a complex gradient for a real value"
        return float(np.vdot(np.asarray(grad, dtype=float), np.asarray(v, dtype=float)))
    return float(np.real(np.sum(np.asarray(grad) * np.asarray(v))))


def _float_positions(args):
    out = []
    for i, a in enumerate(args):
        if isinstance(a, (float, np.floating)) and not isinstance(a, bool) or \
                isinstance(a, np.ndarray) and a.dtype.kind == "f" or \
                isinstance(a, (tuple, list, dict)) and a:
            out.append(i)
    return tuple(out)


@user_frames
def check_grads(fn, args, grad_position=None, kwargs=None, eps=1e-6, rtol=1e-5, atol=1e-7,
                directions=2, seed=0, modes=("rev",), order=1):
    """Check mindgrad's derivatives of ``fn`` against central finite differences, in float64.

    Order 1, reverse mode: for a random output sensitivity ``u`` and random input directions
    ``v``, compares ``sum_i vdot(grad_i, v_i)`` (the gradients of ``vdot(u, fn(x))``) with
    ``(vdot(u, fn(x + eps v)) - vdot(u, fn(x - eps v))) / (2 eps)``; forward mode compares
    ``vdot(u, jvp(fn, x, v))`` with the same difference. Order ``k`` checks the derivative of
    ``s(x) = vdot(u_k, grad(... grad(vdot(u_1, fn(x)))...)(x))`` (``k - 1`` nested gradients,
    with respect to the first position) the same way, in each of ``modes``: ``"rev"`` nests one
    more reverse pass, ``"fwd"`` runs forward mode over the reverse passes.
    ``grad_position`` defaults to every float (or container) argument. Raises AssertionError on
    a mismatch, naming the order, mode, direction and both numbers. Returns what
    ``mindgrad.grad(fn, grad_position)(*args, **kwargs)`` returns (the checks weigh the output
    by a random sensitivity; the result does not).
    """
    kwargs = dict(kwargs or {})
    args = tuple(_to_float64(a) for a in args)
    positions = _float_positions(args) if grad_position is None else (
        (grad_position,) if isinstance(grad_position, int) else tuple(grad_position))
    if not positions:
        raise ValueError("check_grads found no float argument to differentiate")
    for mode in modes:
        if mode not in ("rev", "fwd"):
            raise ValueError(f"modes holds 'rev' and 'fwd', got {mode!r}")
    if not isinstance(order, int) or order < 1:
        raise ValueError(f"order must be a positive int, got {order!r}")
    if "fwd" in modes or order > 1:  # keywords are then passed by name in generated source
        _keywords(kwargs, {})
    rng = np.random.default_rng(seed)
    _check_first_order(fn, args, positions, kwargs, eps, rtol, atol, directions, rng, "rev")
    if "fwd" in modes:  # jvp takes no keywords: they are bound in a generated wrapper
        bound = _with_keywords(fn, len(args), kwargs) if kwargs else fn
        _check_first_order(bound, args, positions, {}, eps, rtol, atol, directions, rng, "fwd")
    scalar = None
    for k in range(2, order + 1):
        if scalar is None:  # s(x) = vdot(u, fn(x)), whose gradient is the first derivative
            scalar = _nested(fn, args, positions[0], kwargs, None, rng)
        scalar = _nested(fn, args, positions[0], kwargs, scalar, rng)  # one gradient deeper
        for mode in modes:
            _check_first_order(scalar, args, positions[:1], {}, max(eps, 1e-5), rtol * 10,
                               atol * 10, directions, rng, mode, label=f"order {k}")
    from mindgrad.api.gradients import grad

    return grad(fn, positions if len(positions) > 1 else positions[0])(*args, **kwargs)


def _check_first_order(fn, args, positions, kwargs, eps, rtol, atol, directions, rng, mode,
                       label="order 1"):
    from mindgrad.api.functional import jvp
    from mindgrad.api.gradients import grad

    out = fn(*args, **kwargs)
    u = random_like(out, rng)
    if u is None:
        raise ValueError(f"check_grads needs a float output, got {type(out).__name__}")
    grads = None
    if mode == "rev":
        grads = grad(fn, positions, sens_param=True)(*args, u, **kwargs)
        grads = (grads,) if len(positions) == 1 else grads
    elif kwargs:
        raise ValueError("forward mode in check_grads takes no keyword arguments")
    for direction in range(directions):
        v = {p: random_like(args[p], rng) for p in positions}
        plus, minus = list(args), list(args)
        for p in positions:
            plus[p] = perturb(args[p], v[p], eps)
            minus[p] = perturb(args[p], v[p], -eps)
        numeric = (tree_vdot(fn(*plus, **kwargs), u, "the output") -
                   tree_vdot(fn(*minus, **kwargs), u, "the output")) / (2 * eps)
        if mode == "rev":
            analytic = sum(tree_vdot(g, v[p], f"the gradient of argument {p}")
                           for g, p in zip(grads, positions))
        else:
            tangents = tuple(v.get(i) for i in range(len(args)))
            analytic = tree_vdot(jvp(fn, args, tangents)[1], u, "the tangent")
        if not np.isclose(analytic, numeric, rtol=rtol, atol=atol):
            raise AssertionError(
                f"{label} {mode}-mode check failed for {getattr(fn, '__name__', fn)} at "
                f"positions {positions}, direction {direction}: mindgrad gives {analytic!r}, "
                f"central differences give {numeric!r} (difference {analytic - numeric:.3e})")


_made = itertools.count(1)


def _generated(text, name, namespace):
    """Compile ``text`` (a def of ``name``) with its source registered, so it can be read."""
    filename = f"<mindgrad check_grads {name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 (the code is ours)
    return namespace[name]


def _keywords(kwargs, namespace):
    """Source text ``, k=keyword_k`` passing ``kwargs`` by name, each value bound in
    ``namespace`` (the text holds only the keyword names, which must be identifiers)."""
    text = ""
    for k, value in kwargs.items():
        if not (isinstance(k, str) and k.isidentifier() and not keyword.iskeyword(k)):
            raise ValueError(f"check_grads passes keyword arguments by name; {k!r} is not a name")
        namespace[f"keyword_{k}"] = value
        text += f", {k}=keyword_{k}"
    return text


def _with_keywords(fn, nargs, kwargs):
    """``fn`` with ``kwargs`` bound, as a Python function with source."""
    params = ", ".join(f"x{i}" for i in range(nargs))
    namespace = {"fn": fn}
    keywords = _keywords(kwargs, namespace)
    name = f"bound_{next(_made)}"
    return _generated(f"def {name}({params}):\n    return fn({params}{keywords})\n", name,
                      namespace)


def _dot_text(left, right, structure, namespace):
    """Source for ``vdot(left, right)``, unrolled over the structure of ``left`` (a gradient of
    a list, tuple or dict argument has that structure), so mindgrad can differentiate it. Dict
    keys are bound in ``namespace``, never written as text."""
    if not isinstance(structure, (list, tuple, dict)):
        return f"np.sum({left} * {right})"
    # the gradient is computed once (as g), then taken apart leaf by leaf
    paths = _leaf_paths(structure, namespace)
    parts = [f"np.sum({left}{path} * g{path})" for path in paths]
    return f"g = {right}\n    return " + " + ".join(parts or ["0.0"])


def _leaf_paths(structure, namespace, path=""):
    """Index paths (``[0][key_1]``) to the float leaves of nested lists, tuples and dicts; each
    dict key is bound in ``namespace`` under the name the path uses."""
    if isinstance(structure, (list, tuple)):
        items = [(str(i), s) for i, s in enumerate(structure)]
    elif isinstance(structure, dict):
        items = []
        for k, s in structure.items():
            name = f"key_{len(namespace)}"
            namespace[name] = k
            items.append((name, s))
    else:
        return [] if structure is None else [path]
    return [p for k, s in items for p in _leaf_paths(s, namespace, f"{path}[{k}]")]


def _nested(fn, args, position, kwargs, inner, rng):
    """``s(x) = sum(u * grad(inner)(x))`` as a Python function with source (so it can be
    differentiated again), where ``inner`` starts as ``sum(u * fn(x))``. The source holds
    only names: every value it uses is bound in its namespace."""
    from mindgrad.api.gradients import grad

    params = ", ".join(f"x{i}" for i in range(len(args)))
    if inner is None:
        out = fn(*args, **kwargs)
        if not isinstance(out, (float, np.floating, np.ndarray)):
            raise ValueError("order > 1 needs fn to return one float or array")
        namespace = {"np": np, "fn": fn, "u": random_like(out, rng, complex_values=False)}
        body = f"np.sum(u * fn({params}{_keywords(kwargs, namespace)}))"
    else:
        gradient = grad(inner, position)
        w = random_like(args[position], rng, complex_values=False)
        namespace = {"np": np, "gradient": gradient, "u": w}
        body = _dot_text("u", f"gradient({params})", w, namespace)
    name = f"nested_{next(_made)}"
    body = body if body.startswith("g = ") else "return " + body
    return _generated(f"def {name}({params}):\n    {body}\n", name, namespace)
