"""``check_grads``: mindgrad's gradients against central finite differences, in float64."""

from __future__ import annotations

import numpy as np

__all__ = ["check_grads"]


def _to_float64(value):
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value.astype(np.float64)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_to_float64(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_float64(v) for k, v in value.items()}
    return value


def _random_like(value, rng):
    if isinstance(value, np.ndarray):
        return rng.standard_normal(value.shape)
    if isinstance(value, (tuple, list)):
        return type(value)(_random_like(v, rng) for v in value)
    if isinstance(value, dict):
        return {k: _random_like(v, rng) for k, v in value.items()}
    if isinstance(value, (float, np.floating)):
        return float(rng.standard_normal())
    return None


def _axpy(alpha, v, x):
    """x + alpha * v, leaf by leaf (None leaves of v leave x unchanged)."""
    if v is None:
        return x
    if isinstance(x, (tuple, list)):
        return type(x)(_axpy(alpha, vi, xi) for vi, xi in zip(v, x))
    if isinstance(x, dict):
        return {k: _axpy(alpha, v[k], x[k]) for k in x}
    return x + alpha * v


def _vdot(a, b):
    """Sum of elementwise products over matching structures (None or non-float leaves: 0)."""
    if a is None or b is None:
        return 0.0
    if isinstance(a, (tuple, list)):
        return sum(_vdot(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return sum(_vdot(a[k], b[k]) for k in a)
    if isinstance(a, (bool, int, str)) and not isinstance(a, float):
        return 0.0
    return float(np.vdot(np.asarray(a, dtype=float), np.asarray(b, dtype=float)).real)


def _float_positions(args):
    out = []
    for i, a in enumerate(args):
        if isinstance(a, (float, np.floating)) and not isinstance(a, bool) or isinstance(a, np.ndarray) and a.dtype.kind == "f" or isinstance(a, (tuple, list, dict)) and a:
            out.append(i)
    return tuple(out)


def check_grads(fn, args, grad_position=None, kwargs=None, eps=1e-6, rtol=1e-5, atol=1e-7,
                directions=2, seed=0):
    """Check ``mindgrad.grad(fn)`` against central finite differences along random directions.

    For a random output sensitivity ``u`` and random input directions ``v``, compares
    ``sum_i vdot(grad_i, v_i)`` (the gradients of ``vdot(u, fn(x))``) with
    ``(vdot(u, fn(x + eps v)) - vdot(u, fn(x - eps v))) / (2 eps)``, all in float64.
    ``grad_position`` defaults to every float (or container) argument. Raises AssertionError
    on a mismatch, naming the direction and both numbers; returns the gradients otherwise.
    """
    from mindgrad.api import grad

    kwargs = dict(kwargs or {})
    args = tuple(_to_float64(a) for a in args)
    positions = _float_positions(args) if grad_position is None else (
        (grad_position,) if isinstance(grad_position, int) else tuple(grad_position))
    if not positions:
        raise ValueError("check_grads found no float argument to differentiate")
    rng = np.random.default_rng(seed)
    out = fn(*args, **kwargs)
    u = _random_like(out, rng)
    if u is None:
        raise ValueError(f"check_grads needs a float output, got {type(out).__name__}")
    grads = grad(fn, positions, sens_param=True)(*args, u, **kwargs)
    grads = (grads,) if len(positions) == 1 else grads
    for direction in range(directions):
        v = {p: _random_like(args[p], rng) for p in positions}
        plus = list(args)
        minus = list(args)
        for p in positions:
            plus[p] = _axpy(eps, v[p], args[p])
            minus[p] = _axpy(-eps, v[p], args[p])
        numeric = (_vdot(u, fn(*plus, **kwargs)) - _vdot(u, fn(*minus, **kwargs))) / (2 * eps)
        analytic = sum(_vdot(g, v[p]) for g, p in zip(grads, positions))
        if not np.isclose(analytic, numeric, rtol=rtol, atol=atol):
            raise AssertionError(
                f"gradient check failed for {getattr(fn, '__name__', fn)} at positions "
                f"{positions}, direction {direction}: mindgrad gives {analytic!r}, central "
                f"differences give {numeric!r} (difference {analytic - numeric:.3e})")
    return grads[0] if len(positions) == 1 else grads
