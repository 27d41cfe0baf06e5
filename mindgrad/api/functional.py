"""vjp, jvp, jacrev, jacfwd and hessian (API-SEMANTICS §5), on both transformations.

``jvp`` runs the forward-mode transformation (tangent code next to the primal code); ``vjp``
and ``jacrev`` the reverse mode. A gradient function (what ``grad`` returns) can itself be
differentiated in forward mode: ``jvp(grad(f), (x,), (v,))`` is a Hessian-vector product that
never forms the Hessian, and ``hessian(f) = jacfwd(grad(f))``.
"""

from __future__ import annotations

import functools
import itertools
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from mindgrad import runtime
from mindgrad.api import display, runnable
from mindgrad.api import gradients as api
from mindgrad.api.gradients import GradFunction, _positions, grad
from mindgrad.api.tracebacks import user_frames
from mindgrad.compiler import cache, driver, emit, expansions
from mindgrad.rules import nondifferentiable
from mindgrad.runtime.tangents import tangent_like

__all__ = ["Jacobian", "hessian", "jacfwd", "jacrev", "jvp", "vjp"]

_counter = itertools.count(1)


# ----- gradient functions as Python, so they can be transformed again ------------------------


def as_python(grad_fn: GradFunction, args, nargs=None):
    """A Python function with source computing what ``grad_fn(*args)`` returns, for arguments
    of the kinds of ``args`` (any kinds, for ``nargs`` arguments, when ``args`` is None): it
    calls the generated gradient code, so the transformations can differentiate it again.
    With ``sens_param``, the output sensitivity is its last parameter, as for ``grad_fn``."""
    if grad_fn.has_aux or grad_fn.weights or grad_fn.return_ids or grad_fn.with_value:
        raise NotImplementedError("a gradient function differentiated again supports "
                                  "grad(fn, grad_position, sens_param) without has_aux, "
                                  "weights, return_ids or value_and_grad")
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
    sens = "sens" if grad_fn.sens_param else "None"
    name = f"{entry.__name__}_value"
    text = (f"def {name}({', '.join(params + (['sens'] if grad_fn.sens_param else []))}):\n"
            f"    out, grads, weight_grads = {entry.__name__}({call_args}, "
            f"{entry.sens_name}={sens})\n"
            f"    return {result}\n")
    # a Cell's gradient code takes the Cell first: called as its bound method, so that reading
    # it again knows what ``self`` is (self.mul is the Cell's primitive, not a method .mul())
    called = entry if generated.bound is None else types.MethodType(entry, generated.bound)
    made[kinds] = (generated, _compiled(text, name, {entry.__name__: called,
                                                      "as_grad": runtime.as_grad}))
    return made[kinds][1]


def _compiled(text, name, namespace):
    """The function ``name`` defined by ``text``, with its source registered for reading."""
    filename = f"<mindgrad {name} #{next(_counter)}>"
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 (the code is ours)
    emit.keep_lines(filename, text, [namespace[name].__code__])
    return namespace[name]


def tangent_as_python(fn, positions, nargs):
    """A Python function with source computing ``jvp(fn, inputs, v)`` for ``nargs`` inputs with
    tangents at ``positions``, taking the inputs then those tangents: it calls the generated
    tangent code, so reverse mode can differentiate it (reverse over forward)."""
    return _tangent_wrapper(_tangent_code(fn, positions, nargs), positions, nargs)


def _tangent_code(fn, positions, nargs):
    """The generated tangent code of ``fn`` for any argument kinds, from the cache."""
    target = as_python(fn, None, nargs) if isinstance(fn, GradFunction) else fn
    return cache.lookup(target, ("tangent", positions, nargs), (),
                        lambda: driver.run_forward(target, positions, nargs=nargs))


def _tangent_wrapper(generated, positions, nargs):
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
    return _compiled(text, name, {entry.__name__: entry, "self_": generated.bound,
                                  "as_grad": runtime.as_grad})


def _differentiable(fn, args):
    """``fn`` as something the transformations read: a gradient function or a Jacobian
    becomes Python."""
    if isinstance(fn, GradFunction):
        return as_python(fn, args)
    if isinstance(fn, Jacobian):
        return jacobian_as_python(fn, len(args))
    return fn


# ----- jvp -------------------------------------------------------------------------------------


def _as_tuple(value, label):
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
    array_type = api._array_type_in((inputs, v))
    if array_type is not None:
        plain = jvp(fn, api._as_plain(inputs), api._as_plain(v), has_aux)
        return api._as_type(plain, array_type)
    inputs = _as_tuple(inputs, "inputs")
    tangents = _as_tuple(v, "v")
    if len(inputs) != len(tangents):
        raise ValueError(f"`inputs` has {len(inputs)} element(s) but `v` has {len(tangents)}")
    if not isinstance(has_aux, bool):
        raise TypeError("`has_aux` must be a bool")
    positions = tuple(i for i, t in enumerate(tangents) if t is not None)
    api.check_array_types(tangents, [f"tangent {i}" for i in range(len(tangents))])
    tangents = tuple(t if t is None else _tangent_of_shape(inputs[i], t, f"v[{i}]", f"inputs[{i}]")
                     for i, t in enumerate(tangents))
    generated = _jvp_code(_differentiable(fn, inputs), inputs, positions)
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


def _jvp_code(target, inputs, positions):
    """The generated tangent code ``jvp`` runs: of ``target`` (``_differentiable(fn)``), for
    arguments like ``inputs`` with tangents at ``positions``."""

    def build():
        api.check_argument_types(inputs)
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
    array_type = api._array_type_in((inputs,))
    if array_type is not None:
        plain = vjp(fn, *api._as_plain(inputs), weights=weights, has_aux=has_aux)
        plain_vjp_fn = plain[1]

        @user_frames
        def typed_vjp_fn(*v):
            return api._as_type(plain_vjp_fn(*api._as_plain(v)), array_type)

        typed = api._as_type((plain[0],) + plain[2:], array_type)
        return (typed[0], typed_vjp_fn) + typed[1:]
    if not isinstance(has_aux, bool):
        raise TypeError("`has_aux` must be a bool")
    positions = tuple(range(len(inputs)))
    grad_fn = GradFunction(fn, positions, weights, has_aux, False, True, False)
    api.check_argument_types(inputs)
    kept = _private(inputs)  # the inputs as they were: a later call runs the forward again
    run = _private(kept)
    if grad_fn.custom_bprop or isinstance(fn, (GradFunction, Jacobian)):
        raw = fn(*run)
        tape = None
    else:
        generated = _split_code(fn, inputs, grad_fn.weights)
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
        api.check_array_types((v,), ["the cotangent v"])
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
        grads, wgrads = api._independent(grads + wgrads, len(grads))
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


def _split_code(fn, inputs, weights):
    """The generated forward and backward functions ``vjp`` runs, for arguments like
    ``inputs`` (all of them differentiated) and ``weights`` (a list of Parameters)."""
    options = ("vjp", tuple(range(len(inputs))), tuple(id(w) for w in weights))
    return cache.lookup(fn, options, inputs, lambda: _build_split(fn, inputs, weights))


def _build_split(fn, inputs, weights):
    # the argument kinds are part of the cache key, so checking them on a miss suffices
    for p, value in enumerate(inputs):
        api._check_differentiable(p, value)
    return driver.run(fn, tuple(range(len(inputs))), kinds=[cache.kind(a) for a in inputs],
                        weights=weights, split=True)


# ----- Jacobians -------------------------------------------------------------------------------


def _flat_outputs(out):
    """The outputs a Jacobian has a block for: the items of a tuple or list, the values of a
    dict, else ``out`` itself."""
    if isinstance(out, (tuple, list)):
        return list(out)
    if isinstance(out, dict):
        return list(out.values())
    return [out]


def _as_outputs(out, blocks):
    """``blocks``, one per entry of ``_flat_outputs(out)``, in ``out``'s own container."""
    if isinstance(out, (tuple, list)):
        return runtime.rebuild(out, blocks)
    if isinstance(out, dict):
        return dict(zip(out, blocks))
    return blocks[0]


def jacrev(fn: Callable, grad_position: Any = 0, has_aux: bool = False):
    """The Jacobian by reverse mode, one gradient per output element: ``out.shape +
    in.shape``; a tuple position gives a tuple over inputs, several outputs a tuple over
    outputs (outputs outside, inputs inside)."""
    positions = _positions(grad_position, None)
    single_position = isinstance(grad_position, int)
    grad_fn = GradFunction(fn, positions, None, has_aux, False, True, False)

    def jacobian(*args):
        out = fn(*args)
        aux = None
        if has_aux:
            out, aux = out[0], out[1:]
        api.check_real_output(out, fn, "jacrev (a gradient per output element)")
        outputs = _flat_outputs(out)
        per_output = []
        for k, o in enumerate(outputs):
            rows = [[] for _ in positions]
            for index in np.ndindex(np.shape(o)):
                sens = [np.zeros(np.shape(p), dtype=np.result_type(p, np.float32))
                        for p in outputs]
                sens[k][index] = 1.0
                seed = _as_outputs(out, sens)
                _, grads, _ = grad_fn.gradients(args, {}, seed)
                for row, g in zip(rows, grads):
                    row.append(np.asarray(g))
            blocks = tuple(np.reshape(np.stack(row), np.shape(o) + np.shape(args[p]))
                           for row, p in zip(rows, positions))
            per_output.append(blocks[0] if single_position else blocks)
        result = _as_outputs(out, per_output)
        if has_aux:
            return result, (aux[0] if len(aux) == 1 else aux)
        return result

    return Jacobian(jacobian, fn, grad_position, has_aux, "rev")


def jacfwd(fn: Callable, grad_position: Any = 0, has_aux: bool = False):
    """The Jacobian by forward mode, one tangent per input element; the same structure as
    ``jacrev``. ``fn`` may be a gradient function: ``jacfwd(grad(f))`` is the Hessian."""
    positions = _positions(grad_position, None)
    single_position = isinstance(grad_position, int)

    def jacobian(*args):
        columns = {p: [] for p in positions}
        out = None
        for p in positions:
            x = np.asarray(args[p])
            for index in np.ndindex(x.shape):
                v = [None] * len(args)
                e = np.zeros(x.shape, dtype=np.result_type(x.dtype, np.float32))
                e[index] = 1.0
                v[p] = e if isinstance(args[p], np.ndarray) else type(args[p])(1.0)
                result = jvp(fn, tuple(args), tuple(v), has_aux=has_aux)
                out, t_out = result[0], result[1]
                columns[p].append(t_out)
        outputs = _flat_outputs(out)
        per_output = []
        for k, o in enumerate(outputs):
            blocks = []
            for p in positions:
                ts = [np.asarray(_flat_outputs(t)[k]) for t in columns[p]]
                stacked = np.stack(ts, axis=-1) if ts else np.zeros(np.shape(o) + (0,))
                blocks.append(np.reshape(stacked, np.shape(o) + np.shape(args[p])))
            per_output.append(blocks[0] if single_position else tuple(blocks))
        result = _as_outputs(out, per_output)
        if has_aux:
            return result, jvp(fn, tuple(args), tuple([None] * len(args)), has_aux=True)[2]
        return result

    return Jacobian(jacobian, fn, grad_position, has_aux, "fwd")


class Jacobian:
    """What ``jacrev`` and ``jacfwd`` return: call it like ``fn``. It can be differentiated
    again (``jacfwd(jacrev(f))``): the transformations read it as Python that loops over the
    unit vectors and calls ``fn``'s generated gradient or tangent code."""

    def __init__(self, jacobian, fn, grad_position, has_aux, mode):
        self._jacobian = jacobian
        self.fn, self.grad_position, self.has_aux, self.mode = fn, grad_position, has_aux, mode
        functools.update_wrapper(self, fn, updated=())
        self.__name__ = f"jac{mode}_{getattr(fn, '__name__', type(fn).__name__)}"

    @user_frames
    def __call__(self, *args):
        array_type = api._array_type_in((args,))
        if array_type is not None:  # MindSpore's Tensors in, Tensors out
            return api._as_type(self._jacobian(*api._as_plain(args)), array_type)
        return self._jacobian(*args)

    def _what(self):
        mode = "reverse mode" if self.mode == "rev" else "forward mode"
        return (f"the Jacobian of {api._name(self.fn)} with respect to grad_position "
                f"{self.grad_position!r}, by {mode}")

    def _generated(self, args):
        """The generated code a call with ``args`` runs: the gradient taking an output
        sensitivity (``rev``, one call per output element), or the tangent code along each
        position (``fwd``, one call per input element)."""
        positions = _positions(self.grad_position, None)
        if self.mode == "rev":
            return [GradFunction(self.fn, positions, None, False, False, True, False)
                    ._generated(args)]
        target = _differentiable(self.fn, args)
        return [_jvp_code(target, args, (p,)) for p in positions]

    def source(self, *args, standalone=False):
        """The generated code ``self(*args)`` runs, for arguments like ``args``; with
        ``standalone=True``, as a module that runs on its own (see ``GradFunction.source``)."""
        args = api._as_plain(args)
        generated = self._generated(args)
        text = "\n\n".join(dict.fromkeys(g.text.rstrip() + "\n" for g in generated))
        if not standalone:
            return display.Code(text)
        entries = [g.function for g in generated]
        if len({f.__name__ for f in entries}) < len(entries):
            raise ValueError(f"{self.__name__} runs separate code for each of the positions "
                             f"{self.grad_position!r}: ask for one position at a time, "
                             f"e.g. mindgrad.source(mindgrad.jac{self.mode}(fn, 0), ...)")
        if self.mode == "rev":
            sens = f"{runtime.AuxSens.__module__}.AuxSens(e)" if self.has_aux else "e"
            how = (f"Row k of the Jacobian is the gradient {display.signature(entries[0])} "
                   f"returns for sens={sens}, e the unit vector k of the output's shape "
                   "(second item).")
        else:
            part = " (its first item, with has_aux)" if self.has_aux else ""
            how = (f"Column k of the Jacobian is the tangent {display.signature(entries[0])} "
                   "returns for the unit vector k of the input's shape as the tangent "
                   f"(second item{part}).")
        about = runnable.about(self._what(), args, generated[0].bound, how)
        return runnable.module(text, entries, about)

    def compiled(self):
        """``(argument kinds, code)`` for each argument signature compiled so far."""
        positions = _positions(self.grad_position, None)
        if self.mode == "rev":
            return [(kinds, g.text) for found, kinds, g in cache.entries(self.fn)
                    if found[:2] == (positions, ())]
        targets = [self.fn]
        if isinstance(self.fn, GradFunction):  # as_python's wrappers, by argument kinds
            targets = [made[1] for made in self.fn.__dict__.get("_as_python", {}).values()]
        elif isinstance(self.fn, Jacobian):    # jacobian_as_python's, by argument count
            targets = [made[1] for key, made in self.fn.__dict__.get("_as_python", {}).items()
                       if isinstance(key, int)]
        wanted = {("jvp", (p,)) for p in positions}
        return [(kinds, g.text) for target in targets
                for found, kinds, g in cache.entries(target) if found in wanted]

    def __repr__(self):
        return display.described(self, self._what(), self.compiled())

    def _repr_html_(self):
        return display.described_html(self, self._what(), self.compiled())


def unit_vectors(x):
    """Arrays of ``x``'s shape, each 1.0 at one element and 0 elsewhere, in C order."""
    x = np.asarray(x)
    dtype = np.result_type(x.dtype, np.float32)
    return list(np.eye(x.size, dtype=dtype).reshape((x.size,) + x.shape))


nondifferentiable(unit_vectors)  # constants: they depend on x's shape only


def _jacobian_python(jac, args, nargs):
    return jacobian_as_python(jac, len(args) if args is not None else nargs)


def jacobian_as_python(jac: Jacobian, nargs: int):
    """A Python function with source computing ``jac(*args)`` for ``nargs`` arguments, which
    the transformations can differentiate: ``jacfwd(jacrev(f))``, ``jacrev(jacrev(f))``."""
    if not isinstance(jac.grad_position, int) or jac.has_aux:
        raise NotImplementedError("a Jacobian differentiated again supports one int "
                                  "grad_position without has_aux")
    made = jac.__dict__.setdefault("_as_python", {})
    p = jac.grad_position
    # the code it calls, from the cache (so stale code is rebuilt); a new one makes a new wrapper
    if jac.mode == "rev":
        if ("gradient", nargs) not in made:
            made["gradient", nargs] = GradFunction(jac.fn, (p,), None, False, False, True, False)
        inner = as_python(made["gradient", nargs], None, nargs)
    else:
        inner = _tangent_code(jac.fn, (p,), nargs)
    if nargs in made and made[nargs][0] is inner:
        return made[nargs][1]
    params = ", ".join(f"x{i}" for i in range(nargs))
    name = "".join(c if c.isalnum() else "_" for c in jac.__name__)  # jacrev_<lambda>
    if jac.mode == "rev":
        namespace = {"fn": jac.fn, "gradient": inner}
        text = (f"def {name}({params}):\n"
                f"    out = fn({params})\n"
                f"    rows = []\n"
                f"    for e in unit_vectors(out):  # one output element at a time\n"
                f"        rows.append(gradient({params}, e))\n"
                f"    return np.reshape(np.stack(rows), np.shape(out) + np.shape(x{p}))\n")
    else:
        namespace = {"tangent": _tangent_wrapper(inner, (p,), nargs)}
        text = (f"def {name}({params}):\n"
                f"    columns = []\n"
                f"    for e in unit_vectors(x{p}):  # one input element at a time\n"
                f"        pair = tangent({params}, e)\n"
                f"        columns.append(pair[1])\n"
                f"    out = pair[0]\n"
                f"    return np.reshape(np.stack(columns, axis=-1), "
                f"np.shape(out) + np.shape(x{p}))\n")
    namespace.update(np=np, unit_vectors=unit_vectors)
    made[nargs] = (inner, _compiled(text, name, namespace))
    return made[nargs][1]


def hessian(fn: Callable, grad_position: Any = 0):
    """The Hessian of a scalar function: forward mode over its reverse-mode gradient."""
    return jacfwd(grad(fn, grad_position), grad_position)


# what grad(...), jacrev(...) and jvp(...) become inside code that is differentiated again
GradFunction.__mindgrad_python__ = as_python
Jacobian.__mindgrad_python__ = _jacobian_python
expansions.register_jvp(jvp, tangent_as_python)
