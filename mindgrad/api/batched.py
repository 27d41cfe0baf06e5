"""``vmap``'s batched code: a mapped function's source rewritten to compute every example at
once (``compiler.batching``), built once per kind of arguments and run in place of the loop.

``run(mapped, args, axes, size)`` gives the batched result, the batch axis first in each leaf,
or ``LOOP`` where the loop over examples must run instead: a function without Python source,
a build that failed, or a run that raised (the loop then raises the user's own error, at the
user's own line). A gradient function (``vmap(grad(f))``) runs as the gradient of the batched
``f`` with a sensitivity of ones: the examples do not mix, so the gradient of the sum over the
batch with respect to one example's inputs is that example's gradient.
"""

from __future__ import annotations

import inspect

import numpy as np

from mindgrad.api import display
from mindgrad.api.gradients import GradFunction
from mindgrad.compiler import batching, cache, driver, objects
from mindgrad.compiler.transform import batch_facts
from mindgrad.runtime import batching as helpers
from mindgrad.runtime import trees

LOOP = object()


def target(fn):
    """``(function, obj)`` whose source the batched code is written from, or None."""
    if objects.is_module(fn):
        return type(fn).construct, fn
    if inspect.ismethod(fn):
        return fn.__func__, fn.__self__
    if inspect.isfunction(fn):
        return fn, None
    return None


def _example(value, axes):
    return trees.map_leaves(
        lambda leaf, axis: leaf if axis is None else np.take(np.asanyarray(leaf), 0, axis),
        value, axes)


def _moved(value, axes, size, copy=False):
    """An argument with its batch axis first in each leaf (a copy with ``copy``: for code that
    writes into arrays, as each example of the loop is a copy); a leaf of a batched container
    without one is given it."""
    if all(a is None for a in trees.leaves(axes)):
        return value
    def leaf_moved(leaf, axis):
        if axis is None:
            return helpers.spread(leaf, size)
        moved = np.moveaxis(np.asanyarray(leaf), axis, 0)
        return np.array(moved, subok=True) if copy else moved

    return trees.map_leaves(leaf_moved, value, axes)


def _key(args, axes):
    def kind(leaf, axis):
        if isinstance(leaf, np.ndarray):
            return type(leaf), leaf.dtype.str, leaf.ndim, axis
        return type(leaf), axis

    return tuple(repr(trees.map_leaves(kind, a, ax)) for a, ax in zip(args, axes))


def compiled(fn, args, axes):
    """The batched build of ``fn`` for ``args`` (``batching.Compiled``), or the reason there
    is none (a string); built once per function, object and kinds of arguments."""
    found = target(fn)
    if found is None:
        return f"{type(fn).__name__} has no Python source to batch"
    function, obj = found
    built = cache.batched.setdefault(function, {})
    key = (id(obj), _key(args, axes))
    made = built.get(key)
    if made is not None and not isinstance(made, str) and not made.fits():
        made = None
    if made is None:
        batched = [i for i, ax in enumerate(axes) if any(a is not None for a in
                                                           trees.leaves(ax))]
        examples = [_example(a, ax) for a, ax in zip(args, axes)]
        if obj is not None:
            examples, batched = [obj] + examples, [i + 1 for i in batched]
        try:
            made = batching.build(function, obj, examples, batched)
        except Exception as e:  # the loop runs it instead: exact, and the user's own errors
            made = f"{type(e).__name__}: {e}"
        built[key] = made
    return made


def _call(made, fn, moved, size):
    function = made.function
    obj = target(fn)[1]
    return function(*([obj] if obj is not None else []), *moved, size)


def run(mapped, args, axes, size):
    fn = mapped.fn
    if isinstance(fn, GradFunction):
        return _gradients(mapped, fn, args, axes, size)
    made = compiled(fn, args, axes)
    if isinstance(made, str):
        return LOOP
    moved = [_moved(a, ax, size, made.writes) for a, ax in zip(args, axes)]
    try:
        out = _call(made, fn, moved, size)
    except Exception:
        return LOOP
    if not all(isinstance(leaf, np.ndarray) and leaf.ndim and leaf.shape[0] == size
               for leaf in trees.leaves(out)):
        return LOOP  # every leaf carries the batch axis, by construction: a check
    return out


def _gradients(mapped, g, args, axes, size):
    """``vmap(grad(f))``: the gradient of the batched ``f``, the sensitivity ones: each
    example's gradient. Differentiated arguments the same in every example are given the batch
    axis first (each example has its own gradient)."""
    if g.has_aux or g.has_weights or g.sens_param or g.return_ids or g.custom_bprop or \
            g.empty_position or target(g.fn) is None or target(g.fn)[1] is not None:
        return LOOP
    args, axes = list(args), list(axes)
    for p in g.positions:
        if p < len(args) and all(a is None for a in trees.leaves(axes[p])):
            args[p] = helpers.spread(args[p], size)
            axes[p] = trees.map_leaves(lambda _: 0, args[p])
    made = compiled(g.fn, args, axes)
    if isinstance(made, str) or made.looped or made.result != batch_facts.NUMBER:
        return LOOP
    grad_fn = _gradient_of(made, g.positions, g.with_value, g.tuple_result)
    moved = [_moved(a, ax, size, made.writes) for a, ax in zip(args, axes)] + [size]
    try:
        out, grads, wgrads = grad_fn.gradients(moved, {}, np.ones(size))
    except Exception:
        return LOOP
    if np.iscomplexobj(out):  # the loop refuses it, saying what to write instead
        return LOOP
    return grad_fn.shaped(moved, out, grads, wgrads)


def _real_output(made, inputs):
    """Whether the batched code gives a real result for ``inputs`` (a gradient of a complex
    one is refused: the loop raises the error that says what to write instead)."""
    try:
        return not np.iscomplexobj(made.function(*inputs))
    except Exception:
        return False


def _gradient_of(made, positions, with_value, tuple_result):
    """The gradient function of the batched code ``made`` taking the sensitivity last."""
    key = (positions, with_value, tuple_result)
    if key not in made.gradients:
        grad_fn = GradFunction(made.function, positions, None, False, False, True, with_value)
        grad_fn.tuple_result = tuple_result
        made.gradients[key] = grad_fn
    return made.gradients[key]


def _made_for(mapped, args, axes):
    fn = mapped.fn.fn if isinstance(mapped.fn, GradFunction) else mapped.fn
    made = compiled(fn, args, axes)
    if isinstance(made, str):
        raise TypeError(f"vmap: {getattr(fn, '__name__', fn)!r} runs as a loop over the "
                        f"examples, with no batched source: {made}")
    return made


def source(mapped, args, axes):
    return display.Code(_made_for(mapped, args, axes).text)


def stages(mapped, args, axes):
    return display.Stages(_made_for(mapped, args, axes).stages)


# ----- Jacobians: every row (or column) at once ----------------------------------------------


def _spread_at(args, positions, size):
    """``args`` with those at ``positions`` repeated along a new batch axis, and the axes."""
    args, axes = list(args), [trees.map_leaves(lambda _: None, a) for a in args]
    for p in positions:
        args[p] = helpers.spread(args[p], size)
        axes[p] = trees.map_leaves(lambda _: 0, args[p])
    return args, axes


def _plain(fn):
    return not isinstance(fn, GradFunction) and target(fn) is not None and \
        target(fn)[1] is None


def _rows_build(fn, positions, args, out):
    """``(what runs, its inputs)`` for every row of ``jacrev`` at once: the gradient of ``fn``
    batched over copies of the arguments, one per element of ``out = fn(*args)`` (the
    sensitivity, its unit vectors, comes last). None where it cannot run batched."""
    if not _plain(fn) or not isinstance(out, np.ndarray) or out.size < 2 or \
            any(not isinstance(args[p], np.ndarray) for p in positions):
        return None
    spread, axes = _spread_at(args, positions, out.size)
    made = compiled(fn, spread, axes)
    if isinstance(made, str) or made.looped or made.result != batch_facts.array(out.ndim):
        return None
    return _gradient_of(made, positions, False, True), (*spread, out.size), made


def jacobian_rows(fn, positions, args, out):
    """``jacrev``'s rows, one per element of the array ``out = fn(*args)``, by one gradient of
    the batched ``fn`` whose sensitivity holds every unit vector: for each position, an array
    of ``out.shape + args[p].shape``; None where the batched code cannot run (the loop then)."""
    found = _rows_build(fn, positions, args, out)
    if found is None:
        return None
    grad_fn, inputs, _ = found
    basis = np.eye(out.size, dtype=np.result_type(out.dtype, np.float32)).reshape(
        (out.size,) + out.shape)
    try:
        rows = grad_fn(*inputs, basis)
    except Exception:
        return None
    return tuple(np.reshape(r, out.shape + np.shape(args[p])) for r, p in zip(rows, positions))


def _simple_gradient(fn):
    """Whether ``fn`` is ``grad`` (or ``value_and_grad``) of a plain function, by positions."""
    return isinstance(fn, GradFunction) and not (
        fn.has_aux or fn.has_weights or fn.sens_param or fn.return_ids or fn.custom_bprop or
        fn.empty_position) and _plain(fn.fn)


def _columns_build(fn, p, args):
    """``(what jvp runs, its inputs)`` for every column of ``jacfwd`` along ``args[p]`` at
    once: ``fn`` batched over copies of the arguments; for ``grad(f)`` (``hessian``), the
    gradient of the batched ``f`` with a sensitivity of ones, each copy's gradient its own
    (so the gradient's positions are copied too). None where it cannot run batched."""
    x = args[p]
    gradient = _simple_gradient(fn)
    if not (gradient or _plain(fn)) or not isinstance(x, np.ndarray) or x.size < 2:
        return None
    at = tuple(sorted({p} | set(fn.positions))) if gradient else (p,)
    if any(not isinstance(args[q], np.ndarray) for q in at):
        return None
    size = x.size
    spread, axes = _spread_at(args, at, size)
    made = compiled(fn.fn if gradient else fn, spread, axes)
    if isinstance(made, str) or made.looped or \
            (gradient and made.result != batch_facts.NUMBER):
        return None
    if not gradient:
        return made.function, (*spread, size), made
    if not _real_output(made, (*spread, size)):
        return None  # the loop refuses the gradient of a complex output, with its message
    return (_gradient_of(made, fn.positions, fn.with_value, fn.tuple_result),
            (*spread, size, np.ones(size)), made)


def jacobian_columns(fn, p, args, jvp):
    """``jacfwd``'s columns along ``args[p]``, one per element, by one ``jvp`` of the batched
    code (``_columns_build``) whose tangent holds every unit vector: ``(out, [tangent of each
    output, the batch axis first])``, or None where the batched code cannot run (with ``jvp``
    None: ``()`` where it can, running nothing)."""
    found = _columns_build(fn, p, args)
    if found is None:
        return None
    if jvp is None:
        return ()
    run, inputs, _ = found
    x = args[p]
    basis = np.eye(x.size, dtype=np.result_type(x.dtype, np.float32)).reshape(
        (x.size,) + x.shape)
    tangents = [None] * len(inputs)
    tangents[p] = basis
    try:
        out, t_out = jvp(run, inputs, tuple(tangents))
    except Exception:
        return None
    return trees.map_leaves(lambda leaf: leaf[0], out), t_out  # every example's is fn's


def _jacobian_builds(fn, positions, args, mode):
    """``[(what runs, its inputs, positions, batched code)]``: one for ``jacrev``'s rows, one
    per position for ``jacfwd``'s columns; None where the Jacobian runs the loop."""
    if mode == "rev":
        found = _rows_build(fn, positions, args, fn(*args))
        return None if found is None else [(*found[:2], positions, found[2])]
    builds = [_columns_build(fn, p, args) for p in positions]
    if any(b is None for b in builds):
        return None
    return [(run, inputs, (p,), made) for (run, inputs, made), p in zip(builds, positions)]


def jacobian_code(fn, positions, args, mode, jvp_code, differentiable):
    """The generated code a Jacobian's call with ``args`` runs when it runs batched (a list, as
    ``Jacobian._generated``), or None when it runs the loop."""
    builds = _jacobian_builds(fn, positions, args, mode)
    if builds is None:
        return None
    if mode == "rev":
        run, inputs, _, _ = builds[0]
        return [run._generated(inputs)]
    return [jvp_code(differentiable(run, inputs), inputs, at) for run, inputs, at, _ in builds]


def codes_built(fn, mode):
    """``(kinds, text)`` of the Jacobian code (``mode`` "rev" or "fwd") built so far of
    ``fn``'s batched code (of ``grad(f)``'s ``f``, for ``hessian``)."""
    function = target(fn.fn if _simple_gradient(fn) else fn)
    if function is None:
        return []
    found = []
    for made in cache.batched.get(function[0], {}).values():
        if isinstance(made, str):
            continue
        # the batched function's own code, and (hessian) its gradients' as Python
        targets = [made.function] + [wrapper[1] for g in made.gradients.values()
                                     for wrapper in g.__dict__.get("_as_python", {}).values()]
        found += [(kinds, g.text) for target in targets
                  for options, kinds, g in cache.entries(target)
                  if (options[0] == "jvp") == (mode == "fwd")]
    return found


def jacobian_stages(fn, positions, args, mode, differentiable):
    """``(stage, function, code)`` of the batched build, then of the Jacobian code of the
    batched function, where the Jacobian runs batched; else None."""
    builds = _jacobian_builds(fn, positions, args, mode)
    if builds is None:
        return None
    found = []
    for run, inputs, at, made in builds:
        found += list(made.stages)
        if mode == "rev":
            found += list(run.stages(*inputs, None))
        else:
            found += driver.run_forward(differentiable(run, inputs), at,
                                        dump=lambda text: None, nargs=len(inputs)).stages
    return found
