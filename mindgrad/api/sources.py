"""``source`` and ``stages`` for every transformation: the code ``grad``, ``value_and_grad``,
``jacfwd``, ``jacrev`` and ``hessian`` results run, and the code ``jvp`` and ``vjp`` run for
given arguments (``source(mindgrad.jvp, f, inputs, v)``, ``source(mindgrad.vjp, f, *inputs)``).
"""

from __future__ import annotations

import numpy as np

from mindgrad.api import arguments, batched, display, runnable, taylor
from mindgrad.api import functional as F
from mindgrad.api import gradients as api
from mindgrad.api import jacobians as J
from mindgrad.api.gradients import GradFunction
from mindgrad.api.mapping import Mapped
from mindgrad.api.tracebacks import user_frames
from mindgrad.compiler import cache, driver, expansions

__all__ = ["source", "stages"]

_TAKES = ("source() and stages() take what mindgrad.grad, value_and_grad, jacfwd, jacrev or "
          "hessian returned, then example arguments; or mindgrad.jvp or mindgrad.vjp, then "
          "the arguments you would call them with: source(mindgrad.jvp, f, inputs, v), "
          "source(mindgrad.vjp, f, *inputs)")


@user_frames
def source(transformed, *args, standalone=False, **kwargs) -> display.Code:
    """The generated code ``transformed`` runs for arguments like ``args``: ``source(g, x)``
    for ``g = grad(f)`` (or ``jacfwd``, ``jacrev``, ``hessian``), ``source(mindgrad.jvp, f,
    inputs, v)``, ``source(mindgrad.vjp, f, *inputs, weights=None)``. Its ``repr`` is the
    code; a notebook shows it highlighted. With ``standalone=True``, a module that runs on its
    own: the imports the code needs at its top (a value it reads that cannot be imported, a
    closure's array, raises a ValueError naming it)."""
    if isinstance(transformed, GradFunction):
        return transformed.source(*args, standalone=standalone, **kwargs)
    if isinstance(transformed, J.Jacobian):
        _no_keywords(kwargs)
        return transformed.source(*args, standalone=standalone)
    if transformed in (taylor.jet, taylor.derivative):
        return display.Code(_taylor_made(transformed, args, kwargs).text)
    if isinstance(transformed, Mapped):
        _no_keywords(kwargs)
        if standalone:
            raise ValueError("vmap's batched code is shown as it runs; standalone=True is for "
                             "the derivatives")
        return transformed.source(*args)
    if transformed is F.jvp:
        fn, inputs, positions = _jvp_arguments(args, kwargs)
        generated = F.jvp_code(F.differentiable(fn, inputs), inputs, positions)
        if not standalone:
            return display.Code(generated.text)
        entry = generated.function
        how = (f"{display.signature(entry)} returns (the output of {api._name(fn)}, its "
               f"derivative along the tangents {', '.join(generated.tangent_names)}), as "
               "mindgrad.jvp does.")
        what = f"the forward-mode derivative (jvp) of {api._name(fn)}"
        return runnable.module(generated.text, [entry],
                                  runnable.about(what, inputs, generated.bound, how))
    if transformed is F.vjp:
        fn, inputs, weights = _vjp_arguments(args, kwargs)
        if _runs_directly(fn):  # vjp runs the full gradient code, with a sensitivity
            return GradFunction(fn, tuple(range(len(inputs))), weights, False, False, True,
                                False).source(*inputs, None, standalone=standalone)
        generated = F.split_code(fn, inputs, arguments.weights_of(weights)[0])
        if not standalone:
            return display.Code(generated.text)
        forward, backward = generated.function, generated.backward
        how = (f"{display.signature(forward)} returns (the output of {api._name(fn)}, a tape); "
               f"{display.signature(backward)} takes that tape and the cotangent of the "
               "output as mindgrad.runtime.seed(out, v) makes it (seed(out, AuxSens(v)) with "
               "has_aux: only the first output is differentiated), and returns the gradients "
               "of the inputs (then of the weights), a bare value where there is one."
               + runnable.AS_GRAD)
        what = f"the reverse-mode derivative (vjp) of {api._name(fn)}"
        return runnable.module(generated.text, [forward, backward],
                                  runnable.about(what, inputs, generated.bound, how))
    raise TypeError(f"{_TAKES}; got {type(transformed).__name__}")


@user_frames
def stages(transformed, *args, **kwargs) -> display.Stages:
    """The source after every stage of the pipeline that writes the code ``source`` shows
    (same arguments), stage by stage; ``str()`` of it is the whole dump."""
    if isinstance(transformed, GradFunction):
        return transformed.stages(*args, **kwargs)
    dump = lambda text: None  # noqa: E731 (the stages are kept on the result)
    if transformed in (taylor.jet, taylor.derivative):
        return display.Stages(_taylor_made(transformed, args, kwargs).stages)
    if isinstance(transformed, Mapped):
        _no_keywords(kwargs)
        return transformed.stages(*args)
    if isinstance(transformed, J.Jacobian):
        _no_keywords(kwargs)
        args = arguments.as_plain(args)
        positions = arguments.positions_of(transformed.grad_position, None)
        found = None if transformed.has_aux else batched.jacobian_stages(
            transformed.fn, positions, args, transformed.mode, F.differentiable)
        if found is not None:  # every row or column at once: vmap's code, then its Jacobian
            return display.Stages(found)
        if transformed.mode == "rev":
            return GradFunction(transformed.fn, positions, None, False, False, True,
                                False).stages(*args, None)
        target = F.differentiable(transformed.fn, args)
        return display.Stages([stage for p in positions for stage in driver.run_forward(
            target, (p,), dump=dump, nargs=len(args)).stages])
    if transformed is F.jvp:
        fn, inputs, positions = _jvp_arguments(args, kwargs)
        target = F.differentiable(fn, inputs)
        return display.Stages(driver.run_forward(target, positions, dump=dump,
                                                 nargs=len(inputs)).stages)
    if transformed is F.vjp:
        fn, inputs, weights = _vjp_arguments(args, kwargs)
        if _runs_directly(fn):
            return GradFunction(fn, tuple(range(len(inputs))), weights, False, False, True,
                                False).stages(*inputs, None)
        fn = expansions.python_of(fn, inputs, len(inputs)) or fn
        weight_list = arguments.weights_of(weights)[0]
        return display.Stages(driver.run(fn, tuple(range(len(inputs))), dump=dump,
                                         kinds=[cache.kind(a) for a in inputs],
                                         weights=weight_list, split=True).stages)
    raise TypeError(f"{_TAKES}; got {type(transformed).__name__}")


def _taylor_made(transformed, args, kwargs):
    """The Taylor code ``jet(fn, primals, series)`` or ``derivative(fn, primals, order)`` runs
    (the same arguments)."""
    _no_keywords(kwargs)
    name = transformed.__name__
    if len(args) != 3:
        raise TypeError(f"source(mindgrad.{name}, fn, primals, ...) takes {name}'s three "
                        f"arguments")
    fn, primals = args[0], arguments.as_plain(args[1])
    primals = tuple(primals) if isinstance(primals, (tuple, list)) else (primals,)
    made = taylor.taylor_code(fn, tuple(np.asarray(p) if not np.isscalar(p) else p
                                        for p in primals))
    if isinstance(made, str):
        raise TypeError(f"{name}: {api._name(fn)} has no Taylor code, so it runs as forward "
                        f"mode nested once per order: {made}")
    return made


def _no_keywords(kwargs):
    if kwargs:
        raise TypeError(f"a Jacobian takes positional arguments only, got {sorted(kwargs)}")


def _jvp_arguments(args, kwargs):
    """``(fn, inputs, positions)`` from ``jvp``'s arguments ``fn, inputs, v``."""
    kwargs = dict(kwargs)
    kwargs.pop("has_aux", None)  # the same code either way
    if len(args) != 3 or kwargs:
        raise TypeError("source(mindgrad.jvp, fn, inputs, v) takes jvp's three arguments")
    fn, inputs, v = args
    inputs, tangents = F.as_tuple(inputs, "inputs"), F.as_tuple(v, "v")
    if len(inputs) != len(tangents):
        raise ValueError(f"`inputs` has {len(inputs)} element(s) but `v` has {len(tangents)}")
    inputs = arguments.as_plain(inputs)
    return fn, inputs, tuple(i for i, t in enumerate(tangents) if t is not None)


def _vjp_arguments(args, kwargs):
    """``(fn, inputs, weights)`` from ``vjp``'s arguments ``fn, *inputs, weights=None``."""
    kwargs = dict(kwargs)
    kwargs.pop("has_aux", None)  # the same code either way
    weights = kwargs.pop("weights", None)
    if not args or kwargs:
        raise TypeError("source(mindgrad.vjp, fn, *inputs, weights=None) takes vjp's "
                        "arguments")
    api.check_argument_types(args[1:])
    return args[0], arguments.as_plain(args[1:]), weights


def _runs_directly(fn) -> bool:
    """Whether ``vjp`` runs ``fn``'s full gradient code rather than a forward/backward pair."""
    return api._custom_bprop(fn) or isinstance(fn, (GradFunction, J.Jacobian))
