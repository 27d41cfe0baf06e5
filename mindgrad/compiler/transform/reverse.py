"""Stage 5, reverse: the adjoint of a normalized function, as a forward and a backward sweep.

Output guarantees:

* The forward sweep is the normalized function, plus ``tape.append(v)`` before each assignment
  that overwrites a value the backward sweep reads, and an iteration counter on loops the
  backward sweep cannot re-derive (``while``, loops with ``break``).
* The backward sweep visits statements in reverse. At the adjoint of a statement every variable
  holds the value it had just after that statement ran in the forward sweep ("restore by pop"):
  the adjoint of ``y = f(x)`` adds to ``d_x`` from ``d_y``, clears ``d_y`` and pops the old ``y``.
* Every adjoint variable is set to 0 where the backward sweep begins; the optimize stage removes
  what is not needed. Accumulation is ``d_x = d_x + g`` (``add(d_x, g)`` for containers and
  indexed arrays, whose gradients are owned buffers that ``add_at`` updates in place).
* Calls of the user's own functions become calls of their own forward and backward functions:
  the pass asks ``callees.Callees`` for their names, and the driver builds them.
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
from mindgrad.compiler.transform.expand import unbounded_names
from mindgrad.compiler.transform.passes import FunctionPass
from mindgrad.compiler.transform.reverse_calls import CallAdjoints
from mindgrad.compiler.transform.reverse_statements import StatementAdjoints


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


class ReversePass(FunctionPass, StatementAdjoints, CallAdjoints):
    """Builds the forward and backward sweeps of one function for one set of active inputs:
    blocks, control flow and the tape here, the adjoints of single statements in
    reverse_statements.py, those of calls in reverse_calls.py.

    ``needed`` are the locals the backward sweep reads (None at first): those the forward sweep
    overwrites are saved on the tape. The driver runs the pass again until it holds."""

    rule_of = staticmethod(rules.lookup)

    def __init__(self, job: ReverseInput, names: naming.NameGen, callees, needed=None):
        super().__init__(job.src, job.fdef, job.active_params, names, callees,
                         job.arguments_shared, job.reads_weights)
        analysis = job.analysis
        self.needed = needed
        self.resolve.values = analysis.values
        self.defs, self.scalars = analysis.defs, analysis.scalars
        self.reals = analysis.reals
        self.containers, self.numeric = analysis.containers, analysis.numeric
        arrays = analysis.arrays
        # array arguments read element by element get a gradient buffer, updated in place
        self.buffers = {p for p in arrays if p in analysis.indexed and self.defs.get(p) == 1}
        self.active = set(analysis.active)
        self.indexed = set(analysis.indexed)
        self.weights = job.weights            # the Parameters whose gradients are asked for
        self.weight_keys = dict(job.weight_reads)  # accumulator key -> index into weights
        self.active.update(self.weight_keys)
        self.tape = names(naming.TAPE)
        self.adjoint_names = set()
        self.d = Adjoints(names, self.adjoint_names)
        self.impure_calls = set()
        self.uses_tape = False
        self.pushed = set()
        self.seen = set(self.params) | {a.id for a in self.fdef.args.kwonlyargs}
        self.copies = None                    # see private()
        self.aliases = self.check_aliasing((set(self.params) - self.scalars) | set(arrays))
        # values that may be inf or NaN for finite arguments: their slopes go through
        # runtime.times_slope (expand.unbounded_names)
        self.unbounded = unbounded_names(self.fdef, self.resolve)
        self.view_reads = _view_reads(self.fdef, self.containers, self.aliases.sharing_writes) \
            if self.aliases.checked else set()

    def sweeps(self) -> Sweeps:
        body = self.fdef.body
        forward, backward = self.block(body[:-1], False)
        result = body[-1].value
        return Sweeps(forward=forward, backward=backward, result=result,
                      result_key=self.key(result), result_active=self.is_active(result),
                      fdef=self.fdef, active_params=self.active_params, active=self.active,
                      indexed=self.indexed, buffers=self.buffers, containers=self.containers,
                      local_names=self.local_names, weight_keys=self.weight_keys,
                      adjoints=self.d, pure=self.adjoint_names,
                      impure_calls=self.impure_calls, tape=self.tape, uses_tape=self.uses_tape,
                      pushed=self.pushed, copies=self.copies, namespace=self.namespace)

    # ----- names ---------------------------------------------------------------------------

    def key(self, node):
        return self.resolve.key(node)

    def accumulate(self, name, value, like=None):
        if not isinstance(name, str):
            name = self.key(name)
        dn = self.d(name)
        if name in self.indexed or name not in self.numeric:  # may hold a list or a dict
            return A.assign(dn, A.call(self.helper(runtime.add), A.load(dn), value), like)
        return A.assign(dn, A.binop(A.load(dn), gast.Add(), value), like)

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

    # ----- blocks --------------------------------------------------------------------------

    def block(self, stmts, in_loop):
        fwd, chunks = [], []
        for s in stmts:
            f, b = self.stmt(s, in_loop)
            self.seen |= A.assigned_names(s)
            fwd.extend(f)
            if b:
                chunks.append((getattr(s, "lineno", None), b))
        bwd, last = [], None
        for lineno, chunk in reversed(chunks):
            if lineno is not None and lineno != last:
                bwd.append(self.comment_on("grad of", lineno))
            bwd.extend(chunk)
            last = lineno
        return fwd, bwd

    def stmt(self, s, in_loop):
        if isinstance(s, gast.Assign):
            target = s.targets[0]
            if isinstance(target, gast.Name):
                return self.assign(s, target.id, s.value, in_loop)
            return self.setitem(s, target, in_loop)
        if isinstance(s, gast.If):
            return self.if_(s, in_loop)
        if isinstance(s, gast.For):
            return self.for_(s, in_loop)
        if isinstance(s, gast.While):
            return self.while_(s, in_loop)
        if isinstance(s, gast.Expr):
            return self.expr(s, in_loop)
        if isinstance(s, (gast.Break, gast.Assert, gast.Raise, gast.Pass)):
            return [s], []
        self.fail(s, f"{type(s).__name__} statements are not supported here")

    # ----- control flow --------------------------------------------------------------------

    def if_(self, s, in_loop):
        saved, seen = dict(self.shapes), set(self.seen)
        body_f, body_b = self.block(s.body, in_loop)
        self.shapes, seen_in_body, self.seen = dict(saved), self.seen, set(seen)
        else_f, else_b = self.block(s.orelse, in_loop)
        self.shapes = saved
        self.seen |= seen_in_body
        self.forget_shapes(A.assigned_names(s))
        fwd = cf.if_.fill(self.namespace, s, test=s.test, body=body_f, orelse=else_f)
        if not _has_code(body_b) and not _has_code(else_b):
            return fwd, []
        if not _has_code(body_b):
            return fwd, cf.if_not.fill(self.namespace, s, test=s.test, body=else_b)
        return fwd, cf.if_.fill(self.namespace, s, test=s.test, body=body_b, orelse=else_b)

    def for_(self, s, in_loop):
        target = s.target.id
        self.forget_shapes(A.assigned_names(s))
        body_f, body_b = self.block(s.body, True)
        self.forget_shapes(A.assigned_names(s))
        fwd, bwd = [], []
        count = None
        push = self.needs_push(target, in_loop)
        if push:
            fwd.append(self.push(A.load(target), s))
        if _breaks(s.body):
            count = self.fresh(naming.ITERATIONS)
            self.local_names.add(count)
            if in_loop:  # one count per run of this loop: save the previous run's
                fwd.append(self.push(A.load(count), s))
            fwd += cf.counted_for.fill(self.namespace, s, count=count, target=target,
                                       items=s.iter, body=body_f)
        else:
            fwd += cf.for_.fill(self.namespace, s, target=target, items=s.iter, body=body_f)
        iter_active = self.is_active(s.iter) and target in self.active
        if not _has_code(body_b) and not iter_active:
            if push:
                bwd.append(self.pop(target, s))
            return fwd, bwd
        if iter_active:
            self.indexed.add(s.iter.id)
            bwd += cf.for_adjoint_over_items.fill(
                self.namespace, s, index=self.fresh(naming.INDEX), target=target, items=s.iter,
                counted=[A.load(count)] if count else [], body=body_b,
                d_items=self.d(s.iter.id), d_target=self.d(target))
        elif count:
            bwd += cf.counted_for_adjoint.fill(self.namespace, s, target=target, items=s.iter,
                                               count=count, body=body_b)
        else:
            bwd += cf.for_adjoint.fill(self.namespace, s, target=target, items=s.iter,
                                       body=body_b)
        if count and in_loop:
            bwd.append(self.pop(count, s))
        if push:
            bwd.append(self.pop(target, s))
        return fwd, bwd

    def while_(self, s, in_loop):
        self.forget_shapes(A.assigned_names(s))
        body_f, body_b = self.block(s.body, True)
        self.forget_shapes(A.assigned_names(s))
        if not _has_code(body_b):
            return cf.while_.fill(self.namespace, s, test=s.test, body=body_f), []
        count = self.fresh(naming.ITERATIONS)
        self.local_names.add(count)
        fwd = [self.push(A.load(count), s)] if in_loop else []
        fwd += cf.counted_while.fill(self.namespace, s, count=count, test=s.test, body=body_f)
        bwd = cf.while_adjoint.fill(self.namespace, s, count=count, body=body_b)
        if in_loop:
            bwd.append(self.pop(count, s))
        return fwd, bwd


def _breaks(body) -> bool:
    """Whether a loop body (not counting loops nested in it) contains a break."""
    for stmt in body:
        if isinstance(stmt, gast.Break):
            return True
        if isinstance(stmt, gast.If) and (_breaks(stmt.body) or _breaks(stmt.orelse)):
            return True
    return False


def _has_code(stmts) -> bool:
    from mindgrad.compiler.marks import is_comment

    return not all(is_comment(s) for s in stmts)


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
