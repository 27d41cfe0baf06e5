"""vjp and jvp (API-SEMANTICS §5), on both transformations; the Jacobians built on them are
``jacobians.py``'s.

``jvp`` runs the forward-mode transformation (tangent code next to the primal code); ``vjp``
the reverse mode. A gradient function (what ``grad`` returns) can itself be differentiated in
forward mode: ``jvp(grad(f), (x,), (v,))`` is a Hessian-vector product that never forms the
Hessian.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numpy as np

from mindgrad import runtime
from mindgrad.api import arguments
from mindgrad.api import gradients as api
from mindgrad.api.gradients import GradFunction
from mindgrad.api.tracebacks import user_frames
from mindgrad.compiler import cache, driver, expansions
from mindgrad.compiler.finish.emit import compiled_function
from mindgrad.runtime.tangents import tangent_like

__all__ = ["jvp", "vjp"]


# ----- gradient functions as Python, so they can be transformed again ------------------------


def as_python(grad_fn: GradFunction, args, nargs=None):
    """A Python function with source computing what ``grad_fn(*args)`` returns, for arguments
    of the kinds of ``args`` (any kinds, for ``nargs`` arguments, when ``args`` is None): it
    calls the generated gradient code, so the transformations can differentiate it again.
    With ``sens_param``, the output sensitivity is its last parameter, as for ``grad_fn``
    (``nargs`` does not count it); a ``value_and_grad`` function returns ``(value,
    gradients)``."""
    if grad_fn.has_aux or grad_fn.weights or grad_fn.return_ids:
        raise NotImplementedError("a gradient function differentiated again supports "
                                  "grad and value_and_grad (fn, grad_position, sens_param) "
                                  "without has_aux, weights or return_ids")
    made = grad_fn.__dict__.setdefault("_as_python", {})
    if args is None:  # called from code being transformed: no argument kinds to specialise on
        kinds = ("any", nargs)
        generated = cache.lookup(grad_fn.fn, ("any", grad_fn.positions, nargs), (),
                                 lambda: driver.run(grad_fn.fn, grad_fn.positions, nargs=nargs))
    else:
        args = args[:-1] if grad_fn.sens_param else args
        kinds = tuple(cache.kind(a) for a in args)
        generated = grad_fn._generated(args)
        nargs = len(args)
    if kinds in made and made[kinds][0] is generated:
        return made[kinds][1]
    entry = generated.function
    params = [f"x{i}" for i in range(nargs)]
    call_args = ", ".join(params)
    grads = [f"as_grad(grads[{k}], x{p})" for k, p in enumerate(grad_fn.positions)]
    if len(grads) == 1 and not grad_fn.tuple_result:
        result = grads[0]
    else:
        result = "(" + ", ".join(grads) + ("," if len(grads) == 1 else "") + ")"
    if grad_fn.with_value:
        result = f"(out, {result})"
    sens = "sens" if grad_fn.sens_param else "None"
    name = f"{entry.__name__}_value"
    text = (f"def {name}({', '.join(params + (['sens'] if grad_fn.sens_param else []))}):\n"
            f"    out, grads, weight_grads = {entry.__name__}({call_args}, "
            f"{entry.sens_name}={sens})\n"
            f"    return {result}\n")
    # a Cell's gradient code takes the Cell first: called as its bound method, so that reading
    # it again knows what ``self`` is (self.mul is the Cell's primitive, not a method .mul())
    called = entry if generated.bound is None else types.MethodType(entry, generated.bound)
    made[kinds] = (generated, compiled_function(text, name, {entry.__name__: called,
                                                      "as_grad": runtime.as_grad}))
    return made[kinds][1]


def tangent_as_python(fn, positions, nargs):
    """A Python function with source computing ``jvp(fn, inputs, v)`` for ``nargs`` inputs with
    tangents at ``positions``, taking the inputs then those tangents: it calls the generated
    tangent code, so reverse mode can differentiate it (reverse over forward)."""
    return tangent_wrapper(tangent_code(fn, positions, nargs), positions, nargs)


def tangent_code(fn, positions, nargs):
    """The generated tangent code of ``fn`` for any argument kinds, from the cache."""
    target = as_python(fn, None, nargs) if isinstance(fn, GradFunction) else fn
    return cache.lookup(target, ("tangent", positions, nargs), (),
                        lambda: driver.run_forward(target, positions, nargs=nargs))


def tangent_wrapper(generated, positions, nargs):
    entry = generated.function
    params = [f"x{i}" for i in range(nargs)]
    tangents = [f"t{p}" for p in positions]
    head = ["self_"] if generated.bound is not None else []
    given = [f"{name}=t{p}" for name, p in zip(generated.tangent_names, positions)]
    name = f"{entry.__name__}_value"
    # the tangent as jvp gives it: zeros of each output's shape, never the symbolic zero 0
    # (read as the value by code differentiating this call again)
    text = (f"def {name}({', '.join(params + tangents)}):\n"
            f"    out, slope = {entry.__name__}({', '.join(head + params + given)})\n"
            f"    return out, as_grad(slope, out)\n")
    return compiled_function(text, name, {entry.__name__: entry, "self_": generated.bound,
                                  "as_grad": runtime.as_grad})


def differentiable(fn, args):
    """``fn`` as something the transformations read: a gradient function or a Jacobian
    becomes Python."""
    return expansions.python_of(fn, args, len(args)) or fn


# ----- jvp -------------------------------------------------------------------------------------


def as_tuple(value, label):
    if isinstance(value, (tuple, list)):  # a list of inputs, as MindSpore's jvp takes
        return tuple(value)
    return (value,)


def _tangent_of_shape(x, t, t_label, x_label):
    """The tangent ``t`` with its input's structure and shape: a number (or an array that
    broadcasts) stands for that value everywhere, as the API documents (``jvp(f, (x, y), (1,
    1))``); ``np.sum(x)`` along ``1.0`` is then ``x.size``, not 1. Another shape is an error."""
    if isinstance(x, (list, tuple)):
        if not isinstance(t, (list, tuple)) or len(t) != len(x):
            raise ValueError(f"{t_label} must be a list or tuple of {len(x)} tangents, like "
                             f"{x_label}; got {type(t).__name__}")
        return runtime.rebuild(t, [_tangent_of_shape(xk, tk, f"{t_label}[{k}]",
                                                     f"{x_label}[{k}]")
                                   for k, (xk, tk) in enumerate(zip(x, t))])
    if isinstance(x, dict):
        if not isinstance(t, dict) or set(t) != set(x):
            raise ValueError(f"{t_label} must be a dict with the keys of {x_label}")
        return {k: _tangent_of_shape(x[k], t[k], f"{t_label}[{k!r}]", f"{x_label}[{k!r}]")
                for k in x}
    if not isinstance(x, (np.ndarray, np.generic, float, int, complex)):
        return t  # an input of another type is refused when the code is built
    shape = np.shape(x)
    if np.shape(t) == shape:
        return t
    try:
        dtype = np.result_type(x, 1.0) if isinstance(x, np.ndarray) else np.result_type(t, 1.0)
        return np.broadcast_to(np.asarray(t, dtype), shape).copy()
    except ValueError:
        raise ValueError(f"{t_label} has shape {np.shape(t)} but {x_label} has shape {shape}: "
                         "a tangent has its input's shape, or broadcasts to it") from None


@user_frames
def jvp(fn: Callable, inputs: Any, v: Any, has_aux: bool = False):
    """Forward mode: ``(fn(*inputs), the derivative of fn at inputs along v)``.

    ``inputs`` and ``v`` are an array or tuples of equal length; with ``has_aux``, ``fn``
    returns ``(out, aux...)`` and the result is ``(out, jvp_out, aux)``. Inputs of a
    registered array type (MindSpore's Tensor) give results of that type.
    """
    array_type = arguments.array_type_in((inputs, v))
    if array_type is not None:
        plain = jvp(fn, arguments.as_plain(inputs), arguments.as_plain(v), has_aux)
        return arguments.as_type(plain, array_type)
    inputs = as_tuple(inputs, "inputs")
    tangents = as_tuple(v, "v")
    if len(inputs) != len(tangents):
        raise ValueError(f"`inputs` has {len(inputs)} element(s) but `v` has {len(tangents)}")
    if not isinstance(has_aux, bool):
        raise TypeError("`has_aux` must be a bool")
    positions = tuple(i for i, t in enumerate(tangents) if t is not None)
    arguments.check_array_types(tangents, [f"tangent {i}" for i in range(len(tangents))])
    tangents = tuple(t if t is None else _tangent_of_shape(inputs[i], t, f"v[{i}]", f"inputs[{i}]")
                     for i, t in enumerate(tangents))
    generated = jvp_code(differentiable(fn, inputs), inputs, positions)
    head = () if generated.bound is None else (generated.bound,)
    given = dict(zip(generated.tangent_names, (tangents[p] for p in positions)))
    out, t_out = generated.function(*head, *inputs, **given)
    api.check_output(out, fn, has_aux)
    t_out = tangent_like(t_out, out)
    if has_aux:
        if not isinstance(out, tuple) or len(out) < 2:
            raise ValueError("has_aux=True needs fn to return a tuple (out, aux, ...)")
        aux = out[1:]
        return out[0], t_out[0], (aux[0] if len(aux) == 1 else aux)
    return out, t_out


def jvp_code(target, inputs, positions):
    """The generated tangent code ``jvp`` runs: of ``target`` (``differentiable(fn)``), for
    arguments like ``inputs`` with tangents at ``positions``."""

    def build():
        arguments.check_argument_types(inputs)
        return driver.run_forward(target, positions, nargs=len(inputs))

    return cache.lookup(target, ("jvp", positions), inputs, build)


# ----- vjp -------------------------------------------------------------------------------------


@user_frames
def vjp(fn: Callable, *inputs, weights=None, has_aux: bool = False):
    """Reverse mode: ``(out, vjp_fn)`` (``(out, vjp_fn, aux)`` with ``has_aux``).

    ``vjp_fn(v)`` gives the gradients of ``vdot(v, out)``: always a tuple over the inputs
    (``((input grads), (weight grads))`` when ``weights`` are given). ``vjp`` runs the forward
    sweep of the generated code once and keeps its tape: the first ``vjp_fn(v)`` runs only the
    backward sweep; later calls run the forward sweep again (a tape serves once).

    What ``vjp_fn`` differentiates at is fixed when ``vjp`` is called: the forward sweep runs
    on private copies of the input arrays (the values ``fn`` writes into them are then written
    into the caller's arrays, as ``fn`` itself would), and the caller gets a copy of the output,
    so changing an input or the output in place later changes no gradient.

    ``vjp_fn`` takes the cotangent of each output, as one tuple ``vjp_fn((v1, v2))`` or one
    argument each ``vjp_fn(v1, v2)``. Inputs of a registered array type (MindSpore's Tensor)
    give results of that type, the gradients ``vjp_fn`` returns included.
    """
    array_type = arguments.array_type_in((inputs,))
    if array_type is not None:
        plain = vjp(fn, *arguments.as_plain(inputs), weights=weights, has_aux=has_aux)
        plain_vjp_fn = plain[1]

        @user_frames
        def typed_vjp_fn(*v):
            return arguments.as_type(plain_vjp_fn(*arguments.as_plain(v)), array_type)

        typed = arguments.as_type((plain[0],) + plain[2:], array_type)
        return (typed[0], typed_vjp_fn) + typed[1:]
    if not isinstance(has_aux, bool):
        raise TypeError("`has_aux` must be a bool")
    positions = tuple(range(len(inputs)))
    grad_fn = GradFunction(fn, positions, weights, has_aux, False, True, False)
    arguments.check_argument_types(inputs)
    kept = _private(inputs)  # the inputs as they were: a later call runs the forward again
    run = _private(kept)
    if grad_fn.custom_bprop or expansions.is_gradient_object(fn):
        raw = fn(*run)
        tape = None
    else:
        generated = split_code(fn, inputs, grad_fn.weights)
        head = () if generated.bound is None else (generated.bound,)
        raw, tape = generated.function(*head, *run)
    _write_back(inputs, run)
    api.check_output(raw, fn, has_aux)
    out, aux = _private(raw), None  # the caller's copy: the backward sweep reads raw
    if has_aux:
        if not isinstance(raw, tuple) or len(raw) < 2:
            raise ValueError("has_aux=True needs fn to return a tuple (out, aux, ...)")
        out, aux = out[0], out[1:]
        aux = aux[0] if len(aux) == 1 else aux
    tapes = [tape] if tape is not None else []

    @user_frames
    def vjp_fn(*v):
        if not v:
            raise TypeError("vjp_fn takes the cotangent of the output: vjp_fn(v), or one per "
                            "output, vjp_fn(v1, v2) (or as a tuple, vjp_fn((v1, v2)))")
        v = v[0] if len(v) == 1 else v
        arguments.check_array_types((v,), ["the cotangent v"])
        if not tapes:  # the tape was used: the forward sweep runs again (via the full code)
            _, grads, wgrads = grad_fn.gradients(_private(kept), {}, v)
            return (grads, wgrads) if weights is not None else grads
        d_out = runtime.seed(raw, runtime.AuxSens(v) if has_aux else v)
        found = generated.backward(tapes.pop(), d_out)
        count = len(positions) + len(generated.weight_indices)
        found = (found,) if count == 1 else tuple(found)
        grads = tuple(runtime.as_grad(g, inputs[p]) for g, p in zip(found, positions))
        by_weight = dict(zip(generated.weight_indices, found[len(positions):]))
        wgrads = tuple(runtime.as_grad(by_weight.get(k, 0), w)
                       for k, w in enumerate(grad_fn.weights))
        grads, wgrads = runtime.independent(grads + wgrads, len(grads))
        return (grads, wgrads) if weights is not None else grads

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def _private(value):
    """``value`` with a copy of every array in it (through lists, tuples and dicts)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if value.__class__ in (list, tuple):
        return value.__class__(_private(v) for v in value)
    if value.__class__ is dict:
        return {k: _private(v) for k, v in value.items()}
    return value


def _write_back(caller, ran):
    """Write into the caller's arrays the values a function left in ``ran``, the private
    copies it ran on: the caller's arrays end as running the function on them leaves them."""
    if isinstance(caller, np.ndarray):
        if not np.array_equal(caller, ran, equal_nan=caller.dtype.kind in "fc"):
            caller[...] = ran
    elif caller.__class__ in (list, tuple) and ran.__class__ is caller.__class__:
        for a, b in zip(caller, ran):
            _write_back(a, b)
    elif caller.__class__ is dict and ran.__class__ is dict:
        for k, a in caller.items():
            if k in ran:
                _write_back(a, ran[k])


def split_code(fn, inputs, weights):
    """The generated forward and backward functions ``vjp`` runs, for arguments like
    ``inputs`` (all of them differentiated) and ``weights`` (a list of Parameters)."""
    options = ("vjp", tuple(range(len(inputs))), tuple(id(w) for w in weights))
    return cache.lookup(fn, options, inputs, lambda: _build_split(fn, inputs, weights))


def _build_split(fn, inputs, weights):
    # the argument kinds are part of the cache key, so checking them on a miss suffices
    for p, value in enumerate(inputs):
        arguments.check_differentiable(p, value)
    return driver.run(fn, tuple(range(len(inputs))), kinds=[cache.kind(a) for a in inputs],
                        weights=weights, split=True)


# what grad(...), jacrev(...) and jvp(...) become inside code that is differentiated again
def _gradient_python(grad_fn, args, nargs=None, keywords=()):
    """``as_python`` for a call of ``grad_fn`` in code being transformed: ``nargs`` counts
    its positional arguments, the sensitivity among them unless passed as ``sens=``."""
    if args is None and grad_fn.sens_param and "sens" not in keywords:
        nargs -= 1
    return as_python(grad_fn, args, nargs)


GradFunction.__mindgrad_python__ = _gradient_python
expansions.register_jvp(jvp, tangent_as_python)


def _pullback_gradient(fn, n):
    """What ``vjp(fn, x1, ..., xn)``'s pullback computes, as a gradient function taking
    ``(x1, ..., xn, v)``: for ``vjp`` inside a differentiated function."""
    made = GradFunction(fn, tuple(range(n)), None, False, False, True, False)
    made.tuple_result = True  # a tuple over the inputs, as the pullback gives
    return made


expansions.register_vjp(vjp, _pullback_gradient)
