"""jacrev, jacfwd and hessian (API-SEMANTICS §5): Jacobians, one gradient per output element
(reverse mode) or one tangent per input element (forward mode), and ``hessian(f) =
jacfwd(grad(f))``. A Jacobian can be differentiated again (``jacfwd(jacrev(f))``): the
transformations read it as Python that loops over the unit vectors and calls the generated code.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from mindgrad import runtime
from mindgrad.api import arguments, batched, display, runnable
from mindgrad.api import gradients as api
from mindgrad.api.arguments import positions_of
from mindgrad.api.functional import (
    as_python,
    compiled_function,
    differentiable,
    jvp,
    jvp_code,
    tangent_code,
    tangent_wrapper,
)
from mindgrad.api.gradients import GradFunction, grad
from mindgrad.api.tracebacks import user_frames
from mindgrad.compiler import cache, expansions
from mindgrad.rules import nondifferentiable

__all__ = ["Jacobian", "hessian", "jacfwd", "jacrev"]


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
    positions = positions_of(grad_position, None)
    single_position = isinstance(grad_position, int)
    grad_fn = GradFunction(fn, positions, None, has_aux, False, True, False)

    def jacobian(*args):
        out = fn(*args)
        aux = None
        if has_aux:
            out, aux = out[0], out[1:]
        api.check_real_output(out, fn, "jacrev (a gradient per output element)")
        if not has_aux:
            rows = batched.jacobian_rows(fn, positions, args, out)
            if rows is not None:
                return rows[0] if single_position else rows
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
    positions = positions_of(grad_position, None)
    single_position = isinstance(grad_position, int)

    def jacobian(*args):
        columns = {p: [] for p in positions}
        out = None
        for p in positions:
            found = None if has_aux else batched.jacobian_columns(fn, p, args, jvp)
            if found is not None:  # every column at once: the tangents' batch axis first
                out, t_out = found
                columns[p] = [_Columns(t) for t in _flat_outputs(t_out)]
                continue
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
                if columns[p] and isinstance(columns[p][0], _Columns):
                    stacked = np.moveaxis(np.asarray(columns[p][k].tangents), 0, -1)
                    blocks.append(np.reshape(stacked, np.shape(o) + np.shape(args[p])))
                    continue
                ts = [np.asarray(_flat_outputs(t)[k]) for t in columns[p]]
                stacked = np.stack(ts, axis=-1) if ts else np.zeros(np.shape(o) + (0,))
                blocks.append(np.reshape(stacked, np.shape(o) + np.shape(args[p])))
            per_output.append(blocks[0] if single_position else tuple(blocks))
        result = _as_outputs(out, per_output)
        if has_aux:
            return result, jvp(fn, tuple(args), tuple([None] * len(args)), has_aux=True)[2]
        return result

    return Jacobian(jacobian, fn, grad_position, has_aux, "fwd")


class _Columns:
    """The tangents of one output along every unit vector of an input, the batch axis first."""

    def __init__(self, tangents):
        self.tangents = tangents


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
        array_type = arguments.array_type_in((args,))
        if array_type is not None:  # MindSpore's Tensors in, Tensors out
            return arguments.as_type(self._jacobian(*arguments.as_plain(args)), array_type)
        return self._jacobian(*args)

    def _what(self):
        mode = "reverse mode" if self.mode == "rev" else "forward mode"
        return (f"the Jacobian of {api._name(self.fn)} with respect to grad_position "
                f"{self.grad_position!r}, by {mode}")

    def _generated(self, args, batch=True):
        """The generated code a call with ``args`` runs: the gradient taking an output
        sensitivity (``rev``, one call per output element), or the tangent code along each
        position (``fwd``, one call per input element)."""
        positions = positions_of(self.grad_position, None)
        if batch and not self.has_aux:  # every row or column at once, where it runs batched
            codes = batched.jacobian_code(self.fn, positions, args, self.mode, jvp_code,
                                          differentiable)
            if codes is not None:
                return codes
        if self.mode == "rev":
            return [GradFunction(self.fn, positions, None, False, False, True, False)
                    ._generated(args)]
        target = differentiable(self.fn, args)
        return [jvp_code(target, args, (p,)) for p in positions]

    def source(self, *args, standalone=False):
        """The generated code ``self(*args)`` runs, for arguments like ``args``; with
        ``standalone=True``, as a module that runs on its own (see ``GradFunction.source``)."""
        args = arguments.as_plain(args)
        # a module of its own gives the code of one row (column): its docstring says how
        generated = self._generated(args, batch=not standalone)
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
        positions = positions_of(self.grad_position, None)
        done = batched.codes_built(self.fn, self.mode)  # every row or column at once
        if self.mode == "rev":
            return done + [(kinds, g.text) for found, kinds, g in cache.entries(self.fn)
                           if found[:2] == (positions, ())]
        targets = [self.fn]
        if isinstance(self.fn, GradFunction):  # as_python's wrappers, by argument kinds
            targets = [made[1] for made in self.fn.__dict__.get("_as_python", {}).values()]
        elif isinstance(self.fn, Jacobian):    # jacobian_as_python's, by argument count
            targets = [made[1] for key, made in self.fn.__dict__.get("_as_python", {}).items()
                       if isinstance(key, int)]
        wanted = {("jvp", (p,)) for p in positions}
        return done + [(kinds, g.text) for target in targets
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


def _jacobian_python(jac, args, nargs, keywords=()):
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
        inner = tangent_code(jac.fn, (p,), nargs)
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
        namespace = {"tangent": tangent_wrapper(inner, (p,), nargs)}
        text = (f"def {name}({params}):\n"
                f"    columns = []\n"
                f"    for e in unit_vectors(x{p}):  # one input element at a time\n"
                f"        pair = tangent({params}, e)\n"
                f"        columns.append(pair[1])\n"
                f"    out = pair[0]\n"
                f"    return np.reshape(np.stack(columns, axis=-1), "
                f"np.shape(out) + np.shape(x{p}))\n")
    namespace.update(np=np, unit_vectors=unit_vectors)
    made[nargs] = (inner, compiled_function(text, name, namespace))
    return made[nargs][1]


def hessian(fn: Callable, grad_position: Any = 0):
    """The Hessian of a scalar function: forward mode over its reverse-mode gradient."""
    return jacfwd(grad(fn, grad_position), grad_position)


Jacobian.__mindgrad_python__ = _jacobian_python
expansions.register_gradient_maker(jacfwd, jacrev, hessian)
