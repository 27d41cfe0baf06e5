"""Rules run directly, outside generated code: ``vjp_of`` and ``jvp_of`` evaluate a function's
rule on values (what the API's checks and the tests of the rules call).
"""

from __future__ import annotations

import inspect

from mindgrad.rules.markers import RuleError
from mindgrad.rules.registry import lookup, lookup_tangent
from mindgrad.runtime import trees, zero


class _Recorder:
    """Plays ``d`` when a template is run directly: keyed by the identity of the values."""

    def __init__(self, out, g, slots):
        self.out, self.g, self.slots, self.grads = out, g, slots, {}

    def __getitem__(self, value):
        if value is self.out:
            return self.g
        raise RuntimeError("a template may only read d[out]")

    def __setitem__(self, value, grad):
        from mindgrad.runtime import add

        for name, v in self.slots.items():
            same = v is value or (isinstance(v, tuple) and isinstance(value, tuple)
                                  and len(v) == len(value)
                                  and all(a is b for a, b in zip(v, value)))
            if same:
                self.grads[name] = add(self.grads.get(name, 0), grad)
                return
        raise RuntimeError("d[...] written for a value that is not an argument")


def _inexact(leaf) -> bool:
    """Whether a leaf may take a gradient: a float or complex number or array, or an object
    that may hold one (a Cell, a closure's arrays); not an int, a bool, a str, None or a type."""
    import numpy as np

    if isinstance(leaf, (bool, int, str, bytes, type(None), type)):
        return False
    dtype = getattr(leaf, "dtype", None)
    return dtype is None or np.dtype(dtype).kind in "fcO"


def vjp_of(fn, *args, **kwargs):
    """Run ``fn`` and return ``(out, vjp)`` using only its registered rule, as a check on rules.

    ``vjp(g)`` returns one gradient per positional argument of the call (0 where the rule gives
    none); ``vjp.by_keyword(g)`` those of the call's keyword arguments, by name; ``_constant``
    names keyword arguments that take none (their ``d[p] = ...`` does not run), ``_active``
    parameters that take one whatever they hold (an int 0 standing for a gradient). The transformer
    inlines the same template; this evaluates it directly, and as generated code does not run a
    template that cannot take a zero ``g``.
    """
    key = kwargs.pop("_key", fn)
    constant = set(kwargs.pop("_constant", ()))
    active = set(kwargs.pop("_active", ()))
    rule = lookup(key)
    if rule is None:
        raise RuleError(f"no gradient rule registered for {key!r}")
    out = fn(*args, **kwargs)
    bound = rule.bind(args, kwargs)
    # the parameters that take a gradient: those given numbers (generated code differentiates
    # no int, str or None), but for the keyword arguments named in ``_constant``
    present = {p for p in rule.params
               if p in active or p not in constant and trees.any_leaf(_inexact, bound[p])}

    def recorded(g):
        from mindgrad.runtime import is_zero

        if rule.reads_zero_unsafely and is_zero(g, out):
            return None  # as generated code, which guards such a rule
        recorder = _Recorder(out, g, bound)
        body = rule.run_with(recorder, present)
        pos = [bound[p] for p in rule.params if p not in rule.varargs and
               rule.signature.parameters[p].kind not in (inspect.Parameter.KEYWORD_ONLY,
                                                         inspect.Parameter.VAR_KEYWORD)]
        star = [v for p in rule.params if p in rule.varargs for v in bound[p]]
        kw = {p: bound[p] for p in rule.params
              if rule.signature.parameters[p].kind is inspect.Parameter.KEYWORD_ONLY}
        body(out, *pos, *star, **kw)
        return recorder

    def vjp(g):
        from mindgrad.runtime import is_zero

        recorder = recorded(g)
        if recorder is None:
            return (0,) * len(args)
        # one gradient per positional argument of the call, in call order
        flat = []
        for p in rule.params:
            if p in rule.varargs:
                grads = recorder.grads.get(p, 0)
                flat.extend([zero] * len(bound[p]) if is_zero(grads) else grads)
            else:
                flat.append(recorder.grads.get(p, 0))
        return tuple(flat[: len(args)])

    def by_keyword(g):
        recorder = recorded(g)
        grads = {} if recorder is None else recorder.grads
        return {name: grads.get(name, 0) for name in kwargs}

    vjp.by_keyword = by_keyword
    return out, vjp


class _TangentRecorder:
    """Plays ``d`` when a tangent template is run directly."""

    def __init__(self, tangents):
        self.tangents, self.out = tangents, 0

    def __getitem__(self, value):
        for v, t in self.tangents:
            same = v is value or (isinstance(v, tuple) and isinstance(value, tuple) and
                                  len(v) == len(value) and all(a is b for a, b in zip(v, value)))
            if same:
                return t
        return zero

    def __setitem__(self, value, tangent):
        from mindgrad.runtime import add

        self.out = add(self.out, tangent)


def jvp_of(fn, *args, **kwargs):
    """Run ``fn`` and return ``(out, jvp)`` using only its registered tangent rule.

    ``jvp(*tangents, **keyword_tangents)`` takes one tangent per positional argument (None for
    none), and those of keyword arguments by name, and returns the output's tangent, evaluating
    the template directly, as a check on tangent rules; as in generated code, the statements
    reading an argument without tangent do not run.
    """
    key = kwargs.pop("_key", fn)
    rule = lookup_tangent(key)
    if rule is None:
        raise RuleError(f"no tangent rule registered for {key!r}")
    out = fn(*args, **kwargs)
    bound = rule.bind(args, kwargs)

    def jvp(*tangents, **keyword_tangents):
        by_value = []
        flat = list(args)
        for value, t in zip(flat, tangents):
            if t is not None:
                by_value.append((value, t))
        for name, t in keyword_tangents.items():
            if t is not None:
                by_value.append((kwargs[name], t))
        for name in rule.varargs:
            known = {id(v): t for v, t in by_value}
            parts = [known.get(id(v), 0) for v in bound[name]]
            by_value.append((bound[name], tuple(parts)))
        recorder = _TangentRecorder(by_value)
        given = {id(v) for v, t in by_value[:len(by_value) - len(rule.varargs)]}
        present = {p for p in rule.params if (any(id(v) in given for v in bound[p])
                                              if p in rule.varargs else id(bound[p]) in given)}
        body = rule.run_with(recorder, present)
        kinds = inspect.Parameter
        pos = [bound[p] for p in rule.params if p not in rule.varargs and
               rule.signature.parameters[p].kind not in (kinds.KEYWORD_ONLY, kinds.VAR_KEYWORD)]
        star = [v for p in rule.params if p in rule.varargs for v in bound[p]]
        kw = {p: bound[p] for p in rule.params
              if rule.signature.parameters[p].kind is kinds.KEYWORD_ONLY}
        body(out, *pos, *star, **kw)
        return recorder.out

    return out, jvp
