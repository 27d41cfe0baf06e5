"""The stages of the pipeline, executable and in order; ``driver.Build`` runs them.

    PARSE    source -> fence -> normalize                 once per function and build
    REVERSE  activity -> reverse -> optimize              once per reverse-mode request
    FORWARD  activity -> forward -> optimize              once per forward-mode request
    FINISH   emit -> compile                              once per build

Each ``Stage`` is a function ``run(build, state)`` that reads what the stages before it left in
``state`` and writes its own result there, and a function ``show(state)`` giving the source
after it (what ``grad(f).stages(x)`` prints). A new transformation is a new list of stages:
activity, its own writer over ``operations.classify``'s records, optimize.
"""

from __future__ import annotations

import dataclasses

import gast

from mindgrad import runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler import naming
from mindgrad.compiler.facts import analysis
from mindgrad.compiler.finish import assemble, emit, gather, reuse
from mindgrad.compiler.front import fence, normalize, source, specialise
from mindgrad.compiler.transform import forward, reverse
from mindgrad.compiler.transform.callees import SPLIT, Callees, Placeholder


@dataclasses.dataclass(frozen=True)
class Stage:
    name: str
    run: object   # (build, state) -> None: writes its result into state
    show: object  # state -> the source after the stage, for the dump


@dataclasses.dataclass
class Parsed:
    """The state of PARSE: a function, then its source, then its normalized tree."""

    fn: object
    obj: object
    shape: tuple
    src: source.Source | None = None
    fdef: object = None
    taken: set = dataclasses.field(default_factory=set)  # the names the function uses


@dataclasses.dataclass
class Transform:
    """The state of REVERSE or FORWARD for one request."""

    request: object
    src: source.Source
    fdef: object
    taken: set
    active: list = dataclasses.field(default_factory=list)
    facts: object = None
    weight_reads: dict = dataclasses.field(default_factory=dict)  # reverse mode: see weights.py
    callees: Callees | None = None
    written: object = None     # what the transformation wrote (reverse.Sweeps, TangentCode)
    functions: object = None   # assemble.ReverseFunctions
    code: object = None        # the code the optimize stage rewrites
    defs: list = dataclasses.field(default_factory=list)  # the functions compiled
    bindings: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Finish:
    """The state of FINISH: every unit of the build, printed, then compiled."""

    label: str
    printed: list = dataclasses.field(default_factory=list)  # per unit: [(text, lines)]
    text: str = ""
    made: dict = dataclasses.field(default_factory=dict)
    files: list = dataclasses.field(default_factory=list)


# ----- PARSE -------------------------------------------------------------------------------


def read_source(build, state):
    src = specialise.specialise(source.get_source(state.fn), state.shape)
    build.dependencies.on_defaults(state.fn)
    if state.obj is not None:
        src = src.derive(bound={src.tree.args.args[0].id: state.obj})
    state.src = src


def check_fence(build, state):
    fence.check(state.src)


def normalize_source(build, state):
    src = state.src
    names = naming.NameGen(A.names_in(src.tree) | set(src.closure) | {src.name})
    state.fdef, state.src = normalize.normalize(src, src.tree, names)
    state.taken = set(names.taken)


PARSE = (
    Stage("source", read_source, lambda s: "".join(s.src.lines)),
    Stage("fence", check_fence, lambda s: emit.unparse(s.src.tree)),
    Stage("normalize", normalize_source, lambda s: emit.unparse(s.fdef)),
)


# ----- REVERSE and FORWARD -----------------------------------------------------------------


def _params(state):
    return [a.id for a in state.fdef.args.args + state.fdef.args.kwonlyargs]


def reverse_activity(build, state):
    request, params = state.request, _params(state)
    weight_reads = build.weights.direct_reads(state.src, state.fdef)
    # an object with nothing to differentiate is a constant: its gradient is zero
    seeds = [params[i] for i in request.active if i not in request.opaque]
    state.facts = analysis.analyse(
        state.src, state.fdef, seeds + list(weight_reads),
        [params[i] for i in request.scalars if i < len(params)],
        [params[i] for i in request.containers if i < len(params)],
        build.weights.read_by_call,
        {params[i]: n for i, n in request.arrays.items() if i < len(params)},
        [params[i] for i in request.reals if i < len(params)])
    state.weight_reads = weight_reads
    state.active = sorted(set(state.facts.active) | set(weight_reads))


def reverse_pass(build, state):
    request, params = state.request, _params(state)
    # a callee takes its keyword-only parameters positionally too, after the others
    job = reverse.ReverseInput(src=state.src, fdef=state.fdef,
                               active_params=[params[i] for i in request.active],
                               analysis=state.facts, weights=build.weights.requested,
                               weight_reads=state.weight_reads,
                               reads_weights=build.weights.read_by_call,
                               arguments_shared=request.arguments_shared)
    # Which values must the tape save? Those the backward sweep reads; but saving them
    # adds restoring code that reads more (branch tests, ...): iterate to a fixed point.
    needed = None
    while True:
        names = naming.NameGen(state.taken)
        callees = Callees(build.callees, state.src, names)
        sweeps = reverse.ReversePass(job, names, callees, needed).sweeps()
        reads = sweeps.reads()
        if needed is not None and reads <= needed:
            break
        needed = reads | (needed or set())
    split = request.mode == SPLIT
    weight_indices = [i for _, i in build.weights.reached(request.fn, request.obj)] \
        if split else range(len(build.weights.requested))
    state.written, state.callees = sweeps, callees
    # (large arrays: no sums merged into one statement, their accumulations reuse buffers)
    state.functions = assemble.ReverseFunctions(sweeps, request.names, split, weight_indices,
                                                merge=not build.large)
    state.code = state.functions.code()


def _load_zeros(defs, namespace):
    """The symbolic zeros of ``defs`` loads of ``runtime.zero``, bound in ``namespace``."""
    A.load_zeros(defs, lambda: namespace.bind(runtime.zero, "zero"))


def optimize_reverse(build, state):
    state.code = state.functions.optimize(state.code)
    state.defs = state.functions.assemble(state.code)
    _load_zeros(state.defs, state.written.namespace)
    entry = state.defs[0]
    if state.request.mode != SPLIT and build.callees.roles.get(entry.name) == "entry":
        namespace = state.written.namespace
        if gather.ON:
            gather.gather_products(entry, namespace.resolver(A.names_in(entry, gast.Store)),
                                   namespace.bind)
        if build.large:
            reuse.reuse_buffers(entry, namespace.resolver(A.names_in(entry, gast.Store)),
                                state.facts.scalars, namespace.bind)
    state.bindings = {**state.written.namespace.bindings, **state.callees.placeholders()}


def _show_functions(defs):
    return "\n".join(emit.unparse(f) for f in defs)


REVERSE = (
    Stage("activity", reverse_activity, lambda s: "active: " + ", ".join(s.active)),
    Stage("reverse", reverse_pass,
          lambda s: _show_functions(s.functions.assemble(s.code, copy=True))),
    Stage("optimize", optimize_reverse, lambda s: _show_functions(s.defs)),
)


def forward_activity(build, state):
    params = _params(state)
    state.facts = analysis.analyse(state.src, state.fdef,
                                   [params[i] for i in state.request.active], [])
    state.active = sorted(state.facts.active)


def forward_pass(build, state):
    request, params = state.request, _params(state)
    job = forward.ForwardInput(src=state.src, fdef=state.fdef,
                               active_params=[params[i] for i in request.active],
                               analysis=state.facts, arguments_shared=request.arguments_shared)
    names = naming.NameGen(state.taken | {request.names[0]})
    state.callees = Callees(build.callees, state.src, names)
    state.code = forward.ForwardPass(job, names, state.callees).tangent_code()


def optimize_forward(build, state):
    state.code = assemble.optimize_tangents(state.code)
    state.defs = [assemble.tangent_function(state.code, state.request.names[0],
                                            state.request.entry)]
    _load_zeros(state.defs, state.code.namespace)
    state.bindings = {**state.code.namespace.bindings, **state.callees.placeholders()}


FORWARD = (
    Stage("activity", forward_activity, lambda s: "active: " + ", ".join(s.active)),
    Stage("forward", forward_pass, lambda s: emit.unparse(s.code.statements)),
    Stage("optimize", optimize_forward, lambda s: emit.unparse(s.defs[0])),
)


# ----- FINISH ------------------------------------------------------------------------------


def emit_units(build, state):
    texts = []
    for unit in build.units:
        printed = [emit.unparse_with_lines(d) for d in unit.functions]
        state.printed.append(printed)
        texts.append("\n".join(t for t, _ in printed))
    state.text = "\n\n".join(texts)


def _entry_defaults(fn, src):
    """The defaults of the generated entry ``fn``: those of the user's positional parameters,
    and where ``fn`` takes the keyword-only ones by position after them (the forward function
    ``vjp`` calls), theirs after those, when each has one."""
    defaults = src.defaults
    code = src.fn.__code__
    kwonly = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    if not kwonly or fn.__code__.co_kwonlyargcount:
        return defaults
    given = src.fn.__kwdefaults__ or {}
    if not all(k in given for k in kwonly):
        return None  # the positional defaults would fall on the keyword-only parameters
    return (defaults or ()) + tuple(given[k] for k in kwonly)


def compile_units(build, state):
    for unit, printed in zip(build.units, state.printed):
        src, defs = unit.src, unit.functions
        text = "\n".join(t for t, _ in printed)
        functions, filename = emit.compile_functions(
            text, [d.name for d in defs], {**src.constants, **unit.bindings}, src.globals,
            src.closure, state.label,
            origins(src, [line for _, lines in printed for line in lines]))
        for d in defs:
            fn = functions[d.name]
            role = build.callees.roles.get(d.name)
            fn.__defaults__ = _entry_defaults(fn, src) if role == "entry" else None
            if role in ("entry", "tangent"):
                fn.__kwdefaults__ = dict(src.fn.__kwdefaults__ or {})
        state.made.update(functions)
        state.files.append(filename)
    for fn in state.made.values():
        for cell in fn.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if isinstance(value, Placeholder):
                cell.cell_contents = state.made[value.name]


def origins(src, lines):
    """For each generated line, the user's ``(filename, line, function name)`` it comes from:
    ``lines`` holds line numbers in ``src``'s function (None, for code of mindgrad's own
    making, stands for its ``def`` line)."""
    code = getattr(src.fn, "__code__", None)
    name = code.co_name if code is not None else src.name
    return [(src.filename, src.first_line + (line or 1) - 1, name) for line in lines]


FINISH = (
    Stage("emit", emit_units, lambda s: s.text),
    Stage("compile", compile_units, lambda s: "compiled as " + ", ".join(s.files)),
)

#: the stages of reverse mode, in order (forward mode runs "forward" where this has "reverse")
STAGES = tuple(s.name for s in PARSE + REVERSE + FINISH)
