"""The pipeline: its stages, executable, in order, and ``run`` which takes a function to its
compiled adjoint.

    source -> fence -> normalize -> activity -> reverse -> optimize -> emit -> compile

``PARSE`` (source, fence, normalize) runs once per function and build; ``REVERSE`` or
``FORWARD`` (activity, the transformation, optimize) once per request; ``FINISH`` (emit,
compile) once per build, for every unit built. Each ``Stage`` takes the state the one before it
left (``Parsed``, ``Transform``) and leaves its own; ``run(fn, spec, dump=print)`` prints the
source after each stage. A ``Build`` drives them: it parses each function once, runs the
reverse pass to the fixed point of what the tape saves (or the forward pass once), optimizes and
assembles the functions (assemble.py), builds the callees the passes asked for (callees.py)
after their caller's pass, and compiles everything. The caching of what ``run`` returns is
``mindgrad.compiler.cache``'s business.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import weakref

import numpy as np

from mindgrad.compiler import cache, naming
from mindgrad.compiler.dependencies import Dependencies
from mindgrad.compiler.front import source, specialise
from mindgrad.compiler.front.source import unbind
from mindgrad.compiler.pipeline import (
    FINISH,
    FORWARD,
    PARSE,
    REVERSE,
    STAGES,
    Finish,
    Parsed,
    Transform,
)
from mindgrad.compiler.transform.callees import GRADIENT, SPLIT, TANGENT, Request
from mindgrad.compiler.transform.callees import Table as CalleeTable
from mindgrad.compiler.transform.weights import Weights

__all__ = ["STAGES", "Build", "CompiledDerivative", "run", "run_forward"]


class CompiledDerivative:
    """A compiled derivative, what a build returns: the entry point (the gradient or tangent
    function) and everything shown to users.

    ``bound`` (the Cell or instance the entry takes first, or None) is held weakly where it
    allows that: the cache keeps this result as long as that object lives, never longer.
    """

    def __init__(self, function, text, files, dependencies, stages):
        self.function = function
        self.text = text
        self.files = files
        self.dependencies = dependencies
        self.stages = stages
        self.keyword_params = {}  # a keyword of the entry's **kw -> its parameter, if renamed
        self.backward = None      # split: the backward function ``function``'s tape goes to
        self.weight_indices = []  # split: the weights whose gradients ``backward`` returns
        self.tangent_names = []   # forward mode: the entry's tangent parameters, in order
        self._bound = lambda: None

    @property
    def bound(self):
        return self._bound()

    @bound.setter
    def bound(self, obj):
        try:
            self._bound = weakref.ref(obj)
        except TypeError:
            self._bound = lambda: obj


@dataclasses.dataclass
class Unit:
    """Generated functions compiled together: those of one request."""

    src: source.Source
    functions: list            # gast.FunctionDef
    bindings: dict             # name -> object the code reaches by it (see naming.Namespace)


class Build:
    """One transformation: the entry function and every user function it calls.

    The passes never build a callee: they ask for its names (callees.Callees), and ``build``
    transforms each requested function after the pass of the function that asked, depth first,
    so that a callee's code precedes its caller's in the compiled text."""

    def __init__(self, dump=None, weights=()):
        self.dump = dump
        self._parsed = {}
        # (where, root, path, object): what the result depends on (see dependencies.py)
        self.dependencies = Dependencies(weights)
        self.weights = Weights(weights, self.parse, self.dependencies)
        self.callees = CalleeTable(self.weights.reached)
        self.units = []
        self._started = set()      # request keys built or being built
        self.stages = []           # (stage, function name, text)
        self.large = False         # an argument is a large array: the entry reuses buffers

    def record(self, stage, name, text):
        """Dump the source after ``stage``; ``text`` may be a function making it, called only
        when there is a dump to write to."""
        if self.dump is None:
            return
        text = text() if callable(text) else text
        self.stages.append((stage, name, text))
        self.dump(f"# ---- {stage}: {name} ----\n{text.rstrip()}\n")

    # ----- stages source, fence, normalize ---------------------------------------------------

    def parse(self, fn, obj=None, shape=(0, ())):
        """The stages of ``PARSE`` for ``fn`` (with ``obj`` bound to its first parameter, for
        methods and Cells; ``*args`` and ``**kw`` specialised for a call of ``shape``, see
        ``specialise.call_shape``), done once per build: ``(src, fdef, names taken)``."""
        cache_key = (fn.__code__, id(obj), shape)
        if cache_key not in self._parsed:
            state = Parsed(fn, obj, shape)
            for stage in PARSE:
                stage.run(self, state)
                self.record(stage.name, state.src.name, functools.partial(stage.show, state))
            self._parsed[cache_key] = (state.src, state.fdef, state.taken)
        return self._parsed[cache_key]

    # ----- the worklist ----------------------------------------------------------------------

    def build(self, request: Request):
        """Transform ``request``'s function, then each function its code calls that is not
        built yet; their units come first."""
        self._started.add(request.key)
        transform = self._tangent if request.mode == TANGENT else self._reverse
        unit, requested = transform(request)
        for callee in requested:
            if callee.key not in self._started:
                self.build(callee)
        self.units.append(unit)
        return unit

    # ----- stages activity, reverse or forward, optimize -----------------------------------

    def _transform(self, request, stages):
        src, fdef, taken = self.parse(request.fn, request.obj, request.shape)
        state = Transform(request, src, fdef, taken)
        for stage in stages:
            stage.run(self, state)
            self.record(stage.name, src.name, functools.partial(stage.show, state))
        self.dependencies.on_callees(src, fdef)
        return Unit(src, state.defs, state.bindings), state.callees.requested

    def _reverse(self, request):
        return self._transform(request, REVERSE)

    def _tangent(self, request):
        """The tangent function ``name(params..., t_<active>...) -> (result, tangent)``."""
        return self._transform(request, FORWARD)

    # ----- stages emit, compile --------------------------------------------------------------

    def compile(self, label):
        state = Finish(label)
        for stage in FINISH:
            stage.run(self, state)
            self.record(stage.name, label, functools.partial(stage.show, state))
        return state.made, state.files, state.text

    def finish(self, function, entry_fn):
        """The compiled derivative whose entry is ``entry_fn``, after stage compile."""
        made, files, text = self.compile(getattr(function, "__name__", "fn"))
        return made, CompiledDerivative(made[entry_fn], text, files, self.dependencies.items,
                                        self.stages)


def without_cycle_collection(build):
    """``build`` run with Python's cycle collector paused: a build makes hundreds of thousands
    of AST nodes that live until it ends, and each full collection walks them all, which made
    the build time of a long function grow with its square. The collector resumes (if it ran
    before) when the build ends, and frees then whatever cycles the build left."""
    @functools.wraps(build)
    def paused(*args, **kwargs):
        if not gc.isenabled():
            return build(*args, **kwargs)
        gc.disable()
        try:
            return build(*args, **kwargs)
        finally:
            gc.enable()
    return paused


@without_cycle_collection
def run_forward(fn, positions, dump=None, nargs=0):
    """Transform ``fn`` into its tangent function for the inputs at ``positions`` and compile.

    The entry takes the bound object first (a Cell or a bound method), then ``fn``'s
    ``nargs`` arguments, then one tangent per position, and returns ``(out, tangent of out)``.
    """
    build = Build(dump)
    function, obj = unbind(fn)
    offset = 0 if obj is None else 1
    label = naming.label(function.__name__, obj)
    name = build.callees.name_function(naming.tangent_entry(label), "entry")
    build.build(Request(TANGENT, function, obj, tuple(p + offset for p in positions), (name,),
                        ("entry",), shape=specialise.call_shape(function, offset, nargs, ()),
                        entry=True))
    made, derivative = build.finish(function, name)
    derivative.bound = obj
    derivative.tangent_names = _keyword_only(made[name])[-len(positions):] if positions else []
    return derivative


def _keyword_only(fn):
    """The keyword-only parameters of a generated entry function, in order."""
    code = fn.__code__
    return list(code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount])


@without_cycle_collection
def run(fn, positions, dump=None, kinds=(), weights=(), split=False, nargs=None, keywords=()):
    """Transform ``fn`` for gradients at ``positions`` (and ``weights``) and compile.

    ``kinds`` (see ``cache.kind``) of the positional arguments let the code specialise:
    arithmetic on scalars needs no ``unbroadcast``. The number of positional arguments
    (``nargs``, else ``len(kinds)``) and the names of the ``keywords`` fix ``*args``/``**kw``.
    The entry function takes the bound object first when ``fn`` is a Cell or a bound method,
    and returns ``(out, input grads, weight grads)``. With ``split``, the result holds a
    forward function, returning ``(out, tape)``, and ``backward(tape, d_out)``, returning the
    input gradients then the weights' (a bare value when there is one): what ``vjp`` runs, the
    forward pass once.
    """
    from mindgrad.compiler.facts.activity import is_opaque_kind, is_real_kind, is_scalar_kind

    build = Build(dump, weights)
    build.large = any(cache.is_large_kind(k) for k in kinds)
    function, obj = unbind(fn)
    offset = 0 if obj is None else 1
    shape = specialise.call_shape(function, offset, len(kinds) if nargs is None else nargs,
                                  keywords)
    scalars = [i + offset for i, k in enumerate(kinds) if is_scalar_kind(k)]
    containers = [i + offset for i, k in enumerate(kinds)
                  if isinstance(k, tuple) and k[0] in (list, tuple, dict)]
    arrays = {i + offset: k[2] for i, k in enumerate(kinds)
              if isinstance(k, tuple) and k[0] is np.ndarray and k[1][1] in "fc"}
    opaque = tuple(i + offset for i, k in enumerate(kinds) if is_opaque_kind(k))
    reals = tuple(i + offset for i, k in enumerate(kinds) if is_real_kind(k))
    if split:
        label = naming.label(function.__name__, obj)
        # the forward function is what vjp calls: it takes the defaults of fn's parameters
        forward, backward = naming.split_functions(label)
        names = (build.callees.name_function(forward, "entry"),
                 build.callees.name_function(backward))
        mode = SPLIT
    else:
        label = naming.label(build.parse(function, obj, shape)[0].name, obj)
        names = (build.callees.name_function(naming.gradient_entry(label), "entry"),)
        mode = GRADIENT
    unit = build.build(Request(mode, function, obj, tuple(p + offset for p in positions), names,
                               ("entry",), tuple(scalars), tuple(containers), arrays, shape,
                               entry=True, opaque=opaque, reals=reals))
    made, derivative = build.finish(function, names[0])
    derivative.bound = obj
    if split:
        derivative.backward = made[names[1]]
        # the backward function returns the gradients of the weights it reaches, in this order
        derivative.weight_indices = [index for _, index in build.weights.reached(function, obj)]
        return derivative
    entry_fn = derivative.function
    entry_fn.__kwdefaults__ = dict(entry_fn.__kwdefaults__ or {})
    sens_name = [a.id for a in unit.functions[0].args.kwonlyargs][-1]
    entry_fn.__kwdefaults__[sens_name] = None
    entry_fn.sens_name = sens_name
    derivative.keyword_params = build.parse(function, obj, shape)[0].keyword_params
    return derivative
