"""The gradient API: ``grad``, ``value_and_grad`` and their result structure, nothing about
ASTs (the checks of their arguments are ``arguments.py``'s).

Behaviour follows ``API-SEMANTICS.md``: MindSpore's ``grad``/``value_and_grad`` with the
bare-vs-tuple rules, ``has_aux``, ``return_ids``, ``sens_param`` and ``get_grad``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from mindgrad import runtime
from mindgrad.api import display, dynamic, runnable
from mindgrad.api.arguments import (
    REGISTERED,
    array_type_in,
    as_plain,
    as_type,
    check_argument_types,
    check_array_types,
    check_bool,
    check_differentiable,
    positions_of,
    python_int,
    register_array_type,
    result_type,
    weights_of,
)
from mindgrad.api.tracebacks import user_frames
from mindgrad.compiler import cache, driver, expansions, objects
from mindgrad.compiler.finish import assemble
from mindgrad.compiler.front import source
from mindgrad.errors import NoSourceError, UnsupportedSyntaxError

__all__ = ["GradFunction", "get_grad", "grad", "register_array_type", "stop_gradient",
           "value_and_grad"]


# ----- the gradient function ------------------------------------------------------------------


class GradFunction:
    """What ``grad`` and ``value_and_grad`` return: call it like ``fn``.

    ``.source(*args)`` gives the generated adjoint for those arguments' kinds (a ``Code``;
    ``standalone=True`` makes it a module that runs on its own); ``.stages(*args)`` the source
    after every stage of the driver. Its ``repr`` (and its display in a notebook) shows the
    code compiled so far.
    """

    def __init__(self, fn, positions, weights, has_aux, return_ids, sens_param, with_value,
                 empty_position=False, jit=False):
        if not callable(fn):
            raise TypeError(f"`fn` must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.positions = positions or ()
        self.empty_position = empty_position  # grad_position=(): an error when called
        self.tuple_result = False  # GradOperation(get_all=True): a tuple even for one input
        self.weights, self.bare_weight = weights_of(weights)
        self.has_weights = weights is not None
        self.has_aux = has_aux
        self.return_ids = return_ids
        self.sens_param = sens_param
        self.with_value = with_value
        self.jit = jit  # compiled by Numba (api/jit.py)
        self.custom_bprop = _custom_bprop(fn)
        functools.update_wrapper(self, fn, updated=())
        self.__name__ = ("value_and_grad_" if with_value else "grad_") + \
            getattr(fn, "__name__", type(fn).__name__)
        if sens_param:  # called with the output sensitivity last: a grad of it binds that too
            signature = _signature(fn)
            params = list(signature.parameters.values()) if signature is not None else None
            if params is not None and all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                                          for p in params):
                name = "sens"
                while name in {p.name for p in params}:
                    name += "_"
                # after parameters with defaults it needs one too: None, which fn's gradient
                # code refuses with its own message when the call leaves it out
                default = None if any(p.default is not p.empty for p in params) else \
                    inspect.Parameter.empty
                self.__signature__ = signature.replace(parameters=params + [
                    inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                      default=default)])

    def _generated(self, args, kwargs=None):
        positions = self.positions
        if positions and max(positions) >= len(args):
            self._explain_missing_input(args, kwargs or {})
        options = (positions, tuple(map(id, self.weights)))
        keywords = tuple(sorted(kwargs)) if kwargs else ()
        if keywords:  # they fix the parameters of a **kw
            options += (keywords,)
        if self.jit:  # the gradient compiled by Numba (jit.py, which imports Numba)
            from mindgrad.api import jit
            return cache.lookup(self.fn, options + ("jit",), args,
                                lambda: jit.compiled(self, args, keywords))
        return cache.lookup(self.fn, options, args, lambda: self._build(args, keywords))

    def _explain_missing_input(self, args, kwargs):
        """Raise the error for a ``grad_position`` past the positional arguments given: a
        TypeError for a call the gradient function cannot take (an input given by keyword, a
        missing sens, no argument at all: ``source(grad_fn)``), else an IndexError."""
        p, name = max(self.positions), _name(self.fn)
        signature = _signature(self.fn)
        params = [q.name for q in signature.parameters.values()
                  if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)] if signature else []
        if p < len(params) and params[p] in kwargs:
            raise TypeError(f"grad_position {p} is {name}'s input {params[p]!r}, given by "
                            f"keyword: gradients are taken with respect to positional "
                            f"arguments, so pass {params[p]} positionally")
        if self.sens_param:
            raise TypeError(f"sens_param=True: call the gradient function with {name}'s inputs "
                            f"and then the output sensitivity (sens) last; it got "
                            f"{len(args) + 1} positional argument(s), so grad_position {p} "
                            f"has no input")
        if not args and not kwargs:
            raise TypeError(f"the gradient of {name} needs {name}'s arguments (the code is "
                            f"built for their shapes and types): source(grad_fn, x) or "
                            f"grad_fn.source(x) with example arguments like x")
        raise IndexError(f"grad_position {p} is out of range: {name} was given "
                         f"{_inputs(len(args))}")

    def _check_call(self, args, kwargs):
        """Bind the call to ``fn``'s signature, so a wrong argument count names ``fn`` (not the
        generated function it calls)."""
        signature = _signature(self.fn)
        if signature is None:
            return
        try:
            signature.bind(*args, **kwargs)
        except TypeError as exc:
            hint = ""
            if self.sens_param:
                hint = (f" (sens_param=True: the last positional argument is the output "
                        f"sensitivity, so {_name(self.fn)} got {len(args)} positional input(s))")
            raise TypeError(f"{_name(self.fn)}(): {exc}{hint}") from None

    def _build(self, args, keywords=(), kind=cache.kind):
        """The generated gradient for ``args``; ``kind`` gives an argument's kind, which the
        code is built for (``cache.kind``; ``jit=True`` marks no array large)."""
        # the argument kinds are part of the cache key, so checking them on a miss suffices
        check_argument_types(args)
        self._check_call(args, dict.fromkeys(keywords))
        for p in self.positions:
            check_differentiable(p, args[p])
        fn = self.fn
        # grad of grad, jacrev(jacrev(f)): differentiate the gradient's code, as Python
        fn = expansions.python_of(fn, args, len(args)) or fn
        return driver.run(fn, self.positions, kinds=[kind(a) for a in args],
                            weights=self.weights, keywords=keywords)

    def gradients(self, args, kwargs, sens):
        """``(output, input gradients, weight gradients)``, both tuples, no structure applied.
        Arguments of a registered array type are computed on as plain arrays, and the result
        comes back in that type (``register_array_type``). The input gradients are those of
        ``kept_positions(args)``."""
        if self.empty_position:
            raise RuntimeError("grad_position should not be empty when grad by position! "
                               "(grad_position=() asks for no input's gradient: give a "
                               "position, or grad_position=None with weights)")
        array_type = result_type(args, kwargs, sens, self.weights)
        kept = self.kept_positions(args, array_type is not None)
        if kept != self.positions:
            return self._kept(kept)._typed_gradients(args, kwargs, sens, array_type)
        return self._typed_gradients(args, kwargs, sens, array_type)

    def kept_positions(self, args, typed=True):
        """The positions whose gradients a call with ``args`` gives. With an argument of a type
        with Tensor rules among them, those holding one (MindSpore differentiates Tensors
        only); where every requested input is a Python int or bool, none (as MindSpore).
        ``typed=False``: no argument is of a registered array type (``result_type`` said)."""
        positions = self.positions
        if typed and REGISTERED.tensor and array_type_in((args,)) in REGISTERED.tensor:
            return tuple(p for p in positions if p < len(args) and (
                isinstance(args[p], REGISTERED.tensor) or objects.is_weight(args[p]) or
                any(keep(args[p]) for keep in REGISTERED.keep)))
        for p in positions:  # a loop, not all(...): this runs on every call
            if p >= len(args) or not python_int(args[p]):
                return positions
        return ()

    def _kept(self, positions):
        """This gradient function for ``positions`` only (made once, kept)."""
        made = self.__dict__.setdefault("_by_positions", {})
        if positions not in made:
            made[positions] = GradFunction(self.fn, positions, self.weights, self.has_aux,
                                           self.return_ids, self.sens_param, self.with_value,
                                           jit=self.jit)
            made[positions].has_weights = self.has_weights
            made[positions].bare_weight = self.bare_weight
            made[positions].tuple_result = self.tuple_result
        return made[positions]

    def _typed_gradients(self, args, kwargs, sens, array_type):
        if not self.positions and not self.weights:  # nothing to differentiate: the value
            out = self.fn(*args, **kwargs)
            return (out, (), ()) if array_type is None else as_type((out, (), ()), array_type)
        if array_type is None:
            return self._gradients(args, kwargs, sens)
        plain = as_plain(args)
        integer = [p for p in self.positions if array_type in REGISTERED.tensor
                   and isinstance(args[p], np.ndarray) and args[p].dtype.kind in "iub"]
        if integer:  # MindSpore's rule: the gradient of an integer Tensor, cast to its dtype
            plain = tuple(np.asarray(a, np.float64) if k in integer else a
                          for k, a in enumerate(plain))
        out, grads, wgrads = self._gradients(plain, as_plain(kwargs), as_plain(sens))
        if integer:
            grads = tuple(np.asarray(g).astype(args[p].dtype) if p in integer else g
                          for g, p in zip(grads, self.positions))
            out = self.fn(*args, **kwargs)  # the value as computed on the integers
        return as_type((out, grads, wgrads), array_type)

    def _gradients(self, args, kwargs, sens):
        if kwargs:
            check_argument_types((), kwargs)
        if sens is not None and sens.__class__ is not np.ndarray:
            check_array_types((sens,), ["the sens"])
        if self.custom_bprop:
            check_argument_types(args)
            return _call_bprop(self.fn, args, kwargs, sens, self)
        generated = self._generated(args, kwargs)
        if generated.keyword_params:  # a keyword of **kw whose name the function uses
            kwargs = {generated.keyword_params.get(k, k): v for k, v in kwargs.items()}
        seed = runtime.AuxSens(sens) if self.has_aux else sens
        if generated.bound is None and not kwargs:  # the common call, without packing
            out, raw, raw_w = generated.function(*args, sens=seed) \
                if generated.function.sens_name == "sens" else \
                generated.function(*args, **{generated.function.sens_name: seed})
        else:
            head = () if generated.bound is None else (generated.bound,)
            out, raw, raw_w = generated.function(*head, *args, **kwargs,
                                                 **{generated.function.sens_name: seed})
        check_output(out, self.fn, self.has_aux)
        grads = tuple([runtime.as_grad(g, args[p]) for g, p in zip(raw, self.positions)])
        wgrads = tuple([runtime.as_grad(g, w) for g, w in zip(raw_w, self.weights)])
        grads, wgrads = runtime.independent(grads + wgrads, len(grads))
        return out, grads, wgrads

    def _split_sens(self, args):
        if not self.sens_param:
            return args, None
        if not args:
            raise TypeError("sens_param=True needs the output sensitivity as the last "
                            "positional argument")
        return args[:-1], args[-1]

    @user_frames
    def __call__(self, *args, **kwargs):
        args, sens = self._split_sens(args)
        return self.shaped(args, *self.gradients(args, kwargs, sens))

    def shaped(self, args, out, grads, wgrads):
        """What a call returns, from ``gradients``' ``(out, grads, wgrads)`` for ``args``."""
        if self.return_ids:
            grads = tuple((p, g) for p, g in zip(self.kept_positions(args), grads))
            wgrads = tuple((w.name, g) for w, g in zip(self.weights, wgrads))
        if not self.has_weights:
            result = grads[0] if len(grads) == 1 and not self.tuple_result else grads
        else:
            weights = wgrads[0] if self.bare_weight else wgrads
            if not self.positions:
                result = weights
            else:
                result = (grads[0] if len(grads) == 1 else grads, weights)
        if self.has_aux:
            if self.with_value:
                return out, result
            return result, tuple(out[1:])
        if self.with_value:
            return out, result
        return result

    def source(self, *args, standalone=False, **kwargs) -> display.Code:
        """The generated adjoint (and the functions it calls) for arguments like ``args``.
        With ``standalone=True``, a module that runs on its own: the imports it needs at its
        top (a value it reads that cannot be imported raises a ValueError naming it)."""
        args, _ = self._split_sens(as_plain(args))
        generated = self._generated(args, kwargs)
        if not standalone:  # with the code built for its calls through the dispatcher
            return display.Code(generated.text + dynamic.built_from(generated.files))
        if self.jit:
            raise ValueError("jit=True code is shown by source(grad_fn, *args), not standalone")
        entry = generated.function
        signature, epilogue, needs = display.signature(entry), "", {}
        if self.has_aux:  # only the first output is differentiated: sens is an AuxSens
            sens = entry.sens_name
            signature = signature.replace(f"{sens}=None", f"{sens}=AuxSens()")
            epilogue = f"{entry.__name__}.__kwdefaults__[{sens!r}] = AuxSens()"
            needs = {"AuxSens": runtime.AuxSens}
        how = (f"{signature} returns (the output of {_name(self.fn)}, the gradients of the "
               f"inputs at {self.positions}, the gradients of the weights).")
        if self.has_aux:
            how += " With has_aux, only the first output is differentiated: sens=AuxSens(s)."
        how += runnable.AS_GRAD
        about = runnable.about(self._what(), args, generated.bound, how)
        return runnable.module(generated.text, [entry], about, epilogue, needs)

    def stages(self, *args, **kwargs) -> display.Stages:
        """The source after every stage of the pipeline, for arguments like ``args``: a
        sequence of ``(stage, function, code)``; ``str()`` of it is the whole dump."""
        args, _ = self._split_sens(as_plain(args))
        for p in self.positions:
            if p >= len(args):
                raise IndexError(f"grad_position {p} is out of range: {_name(self.fn)} was "
                                 f"given {_inputs(len(args))}")
        fn = expansions.python_of(self.fn, args, len(args)) or self.fn  # as _build reads it
        built = driver.run(fn, self.positions, dump=lambda text: None,
                           kinds=[cache.kind(a) for a in args], weights=self.weights,
                           keywords=tuple(sorted(kwargs)))
        return display.Stages(built.stages)

    def compiled(self):
        """``(argument kinds, code)`` for each argument signature compiled so far."""
        options = (self.positions, tuple(id(w) for w in self.weights))
        return [(kinds, generated.text) for found, kinds, generated in cache.entries(self.fn)
                if found[:2] == options]

    def __repr__(self):
        return display.described(self, self._what(), self.compiled())

    def _repr_html_(self):
        return display.described_html(self, self._what(), self.compiled())

    def _what(self):
        what = "the value and gradient" if self.with_value else "the gradient"
        return f"{what} of {_name(self.fn)} with respect to grad_position {self.positions}"


def _inputs(count) -> str:
    """``count`` positional inputs, as an error says it: "2 inputs (positions 0 to 1)"."""
    if count == 0:
        return "no positional input"
    if count == 1:
        return "1 input (position 0)"
    return f"{count} inputs (positions 0 to {count - 1})"


def _signature(fn):
    """``fn``'s signature as its callers see it (a Cell's ``construct`` without ``self``), or
    None where Python cannot tell it."""
    try:
        return inspect.signature(fn.construct if objects.is_module(fn) else fn)
    except (TypeError, ValueError):
        return None


def _name(fn) -> str:
    """How errors name the differentiated function."""
    return getattr(fn, "__name__", None) or type(fn).__name__


def check_output(out, fn, has_aux):
    """``runtime.check_output_differentiable`` for ``fn``'s output, naming ``fn`` and the
    line of its ``def`` only when it raises (the check runs on every call)."""
    if not runtime.output_is_differentiable(out, has_aux):
        runtime.check_output_differentiable(out, _name(fn), has_aux, where_defined(fn))


def check_real_output(out, fn, what):
    """Raise a TypeError where ``out`` holds a complex value: ``what`` (jacrev's rows, ...)
    is a gradient, defined for a real output only (``runtime.complex_output_error``)."""
    if runtime.holds_complex(out):
        returned = _returned_at(fn)
        where = where_defined(fn)
        at = f" (returned at {returned})" if returned else f" (def at {where})" if where else ""
        raise runtime.complex_output_error(f"{what} of {_name(fn)}", at)


def _function_of(fn):
    """The Python function that calling ``fn`` runs (a Cell's ``construct``), or ``fn``."""
    target = type(fn).construct if objects.is_module(fn) else fn
    while isinstance(target, functools.partial):
        target = target.func
    return getattr(target, "__func__", target)


def where_defined(fn) -> str:
    """``file:line`` of the ``def`` of ``fn`` (a Cell's ``construct``), or ""."""
    code = getattr(_function_of(fn), "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else ""


def _returned_at(fn) -> str:
    """``file:line: text`` of the one ``return`` statement of ``fn``'s own body, or "" (no
    source, or several returns: which one ran is not known here)."""
    try:
        src = source.get_source(_function_of(fn))
    except (NoSourceError, UnsupportedSyntaxError):
        return ""
    returns = assemble.own_returns(src.tree)
    if len(returns) != 1:
        return ""
    line = src.line_of(returns[0])
    return f"{src.filename}:{line}: {src.text_of(line).strip()}"


def _custom_bprop(fn) -> bool:
    return objects.is_module(fn) and callable(getattr(fn, "bprop", None))


def _call_bprop(cell, args, kwargs, sens, grad_fn):
    """A Cell with its own ``bprop``: ``bprop(*inputs, out, dout)`` gives the input gradients."""
    out = cell(*args, **kwargs)
    check_output(out, cell, grad_fn.has_aux)
    seed = runtime.AuxSens(sens) if grad_fn.has_aux else sens
    dout = runtime.seed(out, seed)
    if grad_fn.has_aux:
        dout = dout[0]
    grads = runtime.bprop_grads(cell, args, out, dout)
    grads = tuple(runtime.as_grad(grads[p], args[p]) for p in grad_fn.positions)
    wgrads = tuple(runtime.as_grad(0, w) for w in grad_fn.weights)
    return out, grads, wgrads


@user_frames  # an argument error names the user's line, not mindgrad's checks
def grad(fn: Callable, grad_position: Any = 0, weights: Any = None, has_aux: bool = False,
         return_ids: bool = False, sens_param: bool = False, jit: bool = False) -> GradFunction:
    """The gradient of ``fn`` with respect to its positional inputs at ``grad_position``.

    Returns a function taking ``fn``'s arguments (plus a trailing output sensitivity if
    ``sens_param``). An int position, or a tuple of one, gives a bare gradient; a longer tuple
    gives a tuple. Several outputs are summed; non-scalar outputs get a sensitivity of ones.
    ``jit=True``: compiled by Numba, or a JitUnsupportedError naming what it does not take.
    """
    empty = isinstance(grad_position, tuple) and not grad_position  # raised when called
    positions = () if empty else positions_of(grad_position, weights)
    check_bool("has_aux", has_aux)
    check_bool("return_ids", return_ids)
    check_bool("sens_param", sens_param)
    check_bool("jit", jit)
    return GradFunction(fn, positions, weights, has_aux, return_ids, sens_param, False, empty, jit)


@user_frames
def value_and_grad(fn: Callable, grad_position: Any = 0, weights: Any = None,
                   has_aux: bool = False, return_ids: bool = False,
                   sens_param: bool = False, jit: bool = False) -> GradFunction:
    """Like ``grad``, but returns ``(value, gradients)``; ``value`` is ``fn``'s whole output."""
    empty = isinstance(grad_position, tuple) and not grad_position  # raised when called
    positions = () if empty else positions_of(grad_position, weights)
    check_bool("has_aux", has_aux)
    check_bool("return_ids", return_ids)
    check_bool("sens_param", sens_param)
    check_bool("jit", jit)
    return GradFunction(fn, positions, weights, has_aux, return_ids, sens_param, True, empty, jit)


def get_grad(gradients, identifier):
    """The gradient for ``identifier`` (an input position) in a ``return_ids=True`` result."""
    found = _find(gradients, identifier)
    if found is _NOT_FOUND:
        raise GradientNotFoundError(f"no gradient with identifier {identifier!r} in the "
                                    "gradients given; were they computed with return_ids=True?")
    return found


_NOT_FOUND = object()


class GradientNotFoundError(ValueError, RuntimeError):
    """``get_grad`` found no gradient for the identifier: a ValueError, and a RuntimeError as
    MindSpore raises."""


def _find(gradients, identifier):
    if isinstance(gradients, tuple) and len(gradients) == 2 and \
            isinstance(gradients[0], (int, str)) and not isinstance(gradients[0], bool):
        key = gradients[0]
        if isinstance(key, str):  # a weight's id: its name; look up by Parameter or by name
            name = identifier if isinstance(identifier, str) else getattr(identifier, "name", None)
            found = name is not None and name == key
        else:
            found = isinstance(identifier, int) and not isinstance(identifier, bool) and \
                identifier == key
        return gradients[1] if found else _NOT_FOUND
    if isinstance(gradients, tuple):
        for g in gradients:
            found = _find(g, identifier)
            if found is not _NOT_FOUND:
                return found
    return _NOT_FOUND


def stop_gradient(value):
    """``value`` itself, through which no gradient flows."""
    return value


expansions.register_gradient_maker(grad, value_and_grad)
