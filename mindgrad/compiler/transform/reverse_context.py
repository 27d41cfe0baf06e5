"""What reverse mode knows while it writes one function: ``ReverseContext``.

It extends the ``FunctionContext`` every transformation has with reverse mode's own state, all
of it set in ``__init__``: the adjoint variables (``Adjoints``), the tape and what is saved on
it, the gradient buffers of arrays read element by element, the weights asked for, and the
backward sweep's private copies. Its methods are those the writers share: accumulating into an
adjoint, pushing and popping the tape, applying a rule. ``ReverseInput`` is what the pass is
given and ``Sweeps`` what it returns (see reverse.py for the writers).
"""

from __future__ import annotations

import dataclasses

import gast

from mindgrad import rules, runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler import naming
from mindgrad.compiler.facts.analysis import Analysis
from mindgrad.compiler.front import source
from mindgrad.compiler.transform import control_flow as cf
from mindgrad.compiler.transform import reverse_numbers
from mindgrad.compiler.transform.context import FunctionContext
from mindgrad.compiler.transform.expand import instantiate, unbounded_names
from mindgrad.compiler.transform.messages import describe
from mindgrad.errors import NoGradientRuleError
from mindgrad.rules import RuleError


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReverseInput:
    """What the reverse pass differentiates: a normalized function and the facts it needs."""

    src: source.Source
    fdef: gast.FunctionDef     # normalized; the pass works on a copy
    active_params: list        # the parameters differentiated
    analysis: Analysis
    weights: list              # the Parameters whose gradients are asked for
    weight_reads: dict         # accumulator key (self.w) -> index of a weight read directly
    reads_weights: object      # whether a call reaches a weight (weights.Weights.read_by_call)
    arguments_shared: bool     # the user's code calls it: its arguments are the caller's


class Adjoints:
    """The adjoint variable of each name, made when first asked for: ``d_x`` for ``x``,
    ``d_self_w`` for a weight read as ``self.w``."""

    def __init__(self, fresh, pure):
        self._fresh = fresh
        self._pure = pure
        self.names = {}   # key -> its adjoint variable
        self.labels = {}  # key -> what its variable is named after, for keys that are not names

    def __call__(self, key: str) -> str:
        if key not in self.names:
            self.names[key] = self._fresh(naming.adjoint(self.labels.get(key, key)))
            self._pure.add(self.names[key])
        return self.names[key]


@dataclasses.dataclass(kw_only=True)
class Sweeps:
    """What the reverse pass wrote for one function, with the facts needed to assemble it into
    functions (see assemble.py)."""

    forward: list              # the forward sweep: the function's statements, with tape pushes
    backward: list             # the backward sweep, from the adjoint of the last statement
    result: gast.expr          # the atom the function returns
    result_key: str            # its adjoint's key: a name, or a weight's path (self.w)
    result_active: bool
    fdef: gast.FunctionDef     # the normalized function: its parameters
    active_params: list
    active: set                # names (and weight keys) carrying a gradient
    indexed: set               # names whose gradients are buffers add_at updates in place
    buffers: set               # array arguments whose gradients start as zeros_buffer(x)
    containers: set            # names holding lists, tuples or dicts
    local_names: set
    weight_keys: dict          # accumulator key -> index of its weight
    adjoints: Adjoints
    pure: set                  # names the optimizer may treat as pure: adjoints, temporaries
    impure_calls: set          # callees the optimizer must keep (backward functions)
    tape: str
    uses_tape: bool
    pushed: set                # names pushed before their first assignment: set to None first
    copies: object             # the backward sweep's {id: copy} (a name), or None
    namespace: naming.Namespace

    def reads(self) -> set:
        """The locals the backward sweep reads: the tape must hold their values."""
        return (A.names_in(self.backward, gast.Load) & self.local_names) - self.pure


class ReverseContext(FunctionContext):
    """One function differentiated in reverse mode. ``needed`` are the locals the backward
    sweep reads (None at first): those the forward sweep overwrites are saved on the tape; the
    driver runs the pass again until it holds."""

    def __init__(self, job: ReverseInput, names: naming.NameGen, callees, needed=None):
        analysis = job.analysis
        super().__init__(job.src, job.fdef, job.active_params, names, callees, analysis,
                         rule_of=rules.lookup, arguments_shared=job.arguments_shared,
                         reads_weights=job.reads_weights, reals=analysis.reals,
                         mutable=analysis.arrays)
        self.needed = needed
        self.defs = analysis.defs
        # array arguments read element by element get a gradient buffer, updated in place
        self.buffers = {p for p in analysis.arrays
                        if p in analysis.indexed and self.defs.get(p) == 1}
        self.indexed = set(analysis.indexed)
        self.weights = job.weights                  # the Parameters whose gradients are asked for
        self.weight_keys = dict(job.weight_reads)  # accumulator key -> index into weights
        self.active.update(self.weight_keys)
        self.tape = names(naming.TAPE)
        self.d = Adjoints(names, self.pure)
        self.uses_tape = False
        self.pushed = set()
        self.seen = set(self.params) | {a.id for a in self.fdef.args.kwonlyargs}
        self.copies = None                          # see private()
        # values that may be inf or NaN for finite arguments: their slopes go through
        # runtime.times_slope (expand.unbounded_names)
        self.unbounded = unbounded_names(self.fdef, self.resolve)
        self.numbers = reverse_numbers.Facts()  # whole reductions' gradients as numbers
        self.view_reads = _view_reads(self.fdef, self.containers, self.aliases.sharing_writes) \
            if self.aliases.checked else set()

    # ----- adjoints ------------------------------------------------------------------------

    def key(self, node):
        return self.resolve.key(node)

    def accumulate(self, name, value, like=None):
        """``d_name = d_name + value``; through ``runtime.add`` where ``name`` may hold a list
        or a dict, or its gradient is a buffer updated in place."""
        if not isinstance(name, str):
            name = self.key(name)
        dn = self.d(name)
        if name in self.indexed or name not in self.numeric:  # may hold a list or a dict
            return A.assign(dn, A.call(self.helper(runtime.add), A.load(dn), value), like)
        return A.assign(dn, A.binop(A.load(dn), gast.Add(), value), like)

    def weight_accumulator(self, index):
        """The key of the accumulator for weight ``index`` fed by callees."""
        key = f"@weight{index}"
        if key not in self.weight_keys:
            self.weight_keys[key] = index
            self.d.labels[key] = naming.object_label(self.weights[index])
            self.active.add(key)
        return key

    def apply_rule(self, s, rule, fn, args, keywords, name):
        """The statements of ``rule``, the adjoint of ``name = fn(*args, **keywords)`` in the
        statement ``s``."""
        if rule is None:
            label = describe(fn)
            self.fail(s, f"{label} has no gradient rule; register one with "
                         f"@mindgrad.adjoint({label})", NoGradientRuleError)
        try:
            stmts = instantiate(rule, args, keywords, name, self.d(name), self)
        except RuleError as exc:
            self.fail(s, str(exc), NoGradientRuleError)
        stmts = [A.located(st, s) for st in stmts]
        if stmts and rule.reads_zero_unsafely:
            # a user's rule passing the gradient to a helper that does not declare the zero
            # (Rule.reads_zero_unsafely; mindgrad's own rules all take it) runs only on a
            # value: the gradient may be the symbolic zero at run time. is_zero(d_v, v): v
            # tells a number 0 standing for an array (a user's bprop returning 0) from a value
            test = gast.UnaryOp(op=gast.Not(), operand=A.call(self.helper(runtime.is_zero),
                                                              A.load(self.d(name)), A.load(name)))
            return [A.if_(test, stmts, [], s)]
        return stmts

    # ----- the tape ------------------------------------------------------------------------

    def needs_push(self, name, in_loop) -> bool:
        """Whether assigning ``name`` here overwrites a value the backward sweep reads."""
        if self.needed is None or name not in self.needed:
            return False
        if in_loop:
            return True
        # outside loops, a first definition overwrites nothing
        return name in self.seen and self.defs.get(name, 0) > 1

    def push(self, value, like):
        """``tape.append(value)``, in the forward sweep."""
        self.uses_tape = True
        if isinstance(value, gast.Name) and value.id not in self.seen:
            self.pushed.add(value.id)  # may be pushed before its first assignment: set to None
        return cf.push.fill(self.namespace, like, tape=self.tape, value=value)[0]

    def pop(self, name, like):
        """``name = tape.pop()``, in the backward sweep: the value pushed last."""
        self.uses_tape = True
        return cf.pop.fill(self.namespace, like, tape=self.tape, target=name)[0]

    def popped(self):
        """``tape.pop()``, an expression."""
        self.uses_tape = True
        return cf.popped.fill(self.namespace, tape=self.tape)

    def private(self, name, like):
        """``[name = private_copy(name, copies)]``: before the backward sweep writes into the
        array, list or dict ``name``, a copy it owns (it never writes into one the caller can
        see); ``copies`` is the backward sweep's ``{id: copy}``. Generated code differentiated
        again restores in place: its arrays and lists are its own, and what it shares with
        its caller, the caller's backward sweep expects restored."""
        if not self.aliases.checked:
            return []
        if self.copies is None:
            self.copies = self.fresh(naming.COPIES)
        return [A.assign(name, A.call(self.helper(runtime.private_copy), A.load(name),
                                      A.load(self.copies)), like)]

    def reads_a_view_kept(self, name, value) -> bool:
        """Whether ``name = x[idx]`` must copy: the backward sweep reads ``name``, which may be
        a view of an array index-assigned later (the backward restores only private copies)."""
        return isinstance(value, gast.Subscript) and name in self.view_reads and \
            self.needed is not None and name in self.needed

    def basic_index(self, index) -> bool:
        """An index of ints, scalars and slices: ``d_x[idx] += g`` adds each element once. A
        new axis (``None``) is left to ``runtime.add_at``: the same statement then runs on a
        Dask array, whose item assignment takes no new axis."""
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        for part in parts:
            if isinstance(part, gast.Constant) and part.value is None:
                return False
            if isinstance(part, gast.Slice):
                if not all(p is None or self.is_scalar(p) or isinstance(p, gast.Constant)
                           for p in (part.lower, part.upper, part.step)):
                    return False
            elif not (self.is_scalar(part) or isinstance(part, gast.Constant)):
                return False
        return True


def _view_reads(fdef, containers, sharing_writes) -> set:
    """Names that may share memory with an index-assigned array and are only ever assigned
    ``name = x[idx]`` of an array ``x``: the reverse stage can make them copies."""
    shared = set().union(*sharing_writes.values())
    subscripts, others = set(), set()
    for node in A.walk(fdef.body):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            value, name = node.value, node.targets[0].id
            if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and \
                    value.value.id not in containers:
                subscripts.add(name)
            else:
                others.add(name)
        elif isinstance(node, gast.For) and isinstance(node.target, gast.Name):
            others.add(node.target.id)
    return (subscripts - others) & shared
