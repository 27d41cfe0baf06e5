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

The pass writes in a ``ReverseContext`` (reverse_context.py): blocks, control flow and the tape
here, single statements in reverse_statements.py, the adjoint of each kind of operation
(operations.py) in reverse_operations.py.
"""

from __future__ import annotations

import gast

from mindgrad.compiler import astutil as A
from mindgrad.compiler import naming
from mindgrad.compiler.marks import is_comment
from mindgrad.compiler.transform import control_flow as cf
from mindgrad.compiler.transform import reverse_numbers
from mindgrad.compiler.transform.reverse_context import (  # noqa: F401 (the stage's types)
    Adjoints,
    ReverseContext,
    ReverseInput,
    Sweeps,
)
from mindgrad.compiler.transform.reverse_statements import StatementAdjoints


class ReversePass:
    """Builds the forward and backward sweeps of one function for one set of active inputs.

    ``needed`` are the locals the backward sweep reads (None at first): those the forward sweep
    overwrites are saved on the tape. The driver runs the pass again until it holds."""

    def __init__(self, job: ReverseInput, names: naming.NameGen, callees, needed=None):
        self.cx = ReverseContext(job, names, callees, needed)
        self.statements = StatementAdjoints(self.cx)

    def sweeps(self) -> Sweeps:
        cx = self.cx
        body = cx.fdef.body
        forward, backward = self.block(body[:-1], False)
        reverse_numbers.pass_numbers(cx, forward + backward)
        result = body[-1].value
        return Sweeps(forward=forward, backward=backward, result=result,
                      result_key=cx.key(result), result_active=cx.is_active(result),
                      fdef=cx.fdef, active_params=cx.active_params, active=cx.active,
                      indexed=cx.indexed, buffers=cx.buffers, containers=cx.containers,
                      local_names=cx.local_names, weight_keys=cx.weight_keys,
                      adjoints=cx.d, pure=cx.pure, impure_calls=cx.impure_calls, tape=cx.tape,
                      uses_tape=cx.uses_tape, pushed=cx.pushed, copies=cx.copies,
                      namespace=cx.namespace)

    # ----- blocks --------------------------------------------------------------------------

    def block(self, stmts, in_loop):
        cx = self.cx
        fwd, chunks = [], []
        for s in stmts:
            f, b = self.stmt(s, in_loop)
            cx.seen |= A.assigned_names(s)
            fwd.extend(f)
            if b:
                chunks.append((getattr(s, "lineno", None), b))
        bwd, last = [], None
        for lineno, chunk in reversed(chunks):
            if lineno is not None and lineno != last:
                bwd.append(cx.comment_on("grad of", lineno))
            bwd.extend(chunk)
            last = lineno
        return fwd, bwd

    def stmt(self, s, in_loop):
        cx = self.cx
        if isinstance(s, gast.Assign):
            target = s.targets[0]
            if isinstance(target, gast.Name):
                return self.statements.assign(s, target.id, s.value, in_loop)
            return self.statements.setitem(s, target, in_loop)
        if isinstance(s, gast.If):
            return self.if_(s, in_loop)
        if isinstance(s, gast.For):
            return self.for_(s, in_loop)
        if isinstance(s, gast.While):
            return self.while_(s, in_loop)
        if isinstance(s, gast.Expr):
            return self.statements.expr(s, in_loop)
        if isinstance(s, (gast.Break, gast.Assert, gast.Raise, gast.Pass)):
            return [s], []
        cx.fail(s, f"{type(s).__name__} statements are not supported here")

    # ----- control flow --------------------------------------------------------------------

    def if_(self, s, in_loop):
        cx = self.cx
        saved, seen = dict(cx.shapes), set(cx.seen)
        body_f, body_b = self.block(s.body, in_loop)
        cx.shapes, seen_in_body, cx.seen = dict(saved), cx.seen, set(seen)
        else_f, else_b = self.block(s.orelse, in_loop)
        cx.shapes = saved
        cx.seen |= seen_in_body
        cx.forget_shapes(A.assigned_names(s))
        fwd = cf.if_.fill(cx.namespace, s, test=s.test, body=body_f, orelse=else_f)
        if not _has_code(body_b) and not _has_code(else_b):
            return fwd, []
        if not _has_code(body_b):
            return fwd, cf.if_not.fill(cx.namespace, s, test=s.test, body=else_b)
        return fwd, cf.if_.fill(cx.namespace, s, test=s.test, body=body_b, orelse=else_b)

    def for_(self, s, in_loop):
        cx = self.cx
        target = s.target.id
        cx.forget_shapes(A.assigned_names(s))
        body_f, body_b = self.block(s.body, True)
        cx.forget_shapes(A.assigned_names(s))
        fwd, bwd = [], []
        count = None
        push = cx.needs_push(target, in_loop)
        if push:
            fwd.append(cx.push(A.load(target), s))
        if _breaks(s.body):
            count = cx.fresh(naming.ITERATIONS)
            cx.local_names.add(count)
            if in_loop:  # one count per run of this loop: save the previous run's
                fwd.append(cx.push(A.load(count), s))
            fwd += cf.counted_for.fill(cx.namespace, s, count=count, target=target,
                                       items=s.iter, body=body_f)
        else:
            fwd += cf.for_.fill(cx.namespace, s, target=target, items=s.iter, body=body_f)
        iter_active = cx.is_active(s.iter) and target in cx.active
        if not _has_code(body_b) and not iter_active:
            if push:
                bwd.append(cx.pop(target, s))
            return fwd, bwd
        if iter_active:
            cx.indexed.add(s.iter.id)
            bwd += cf.for_adjoint_over_items.fill(
                cx.namespace, s, index=cx.fresh(naming.INDEX), target=target, items=s.iter,
                counted=[A.load(count)] if count else [], body=body_b,
                d_items=cx.d(s.iter.id), d_target=cx.d(target))
        elif count:
            bwd += cf.counted_for_adjoint.fill(cx.namespace, s, target=target, items=s.iter,
                                               count=count, body=body_b)
        else:
            bwd += cf.for_adjoint.fill(cx.namespace, s, target=target, items=s.iter,
                                       body=body_b)
        if count and in_loop:
            bwd.append(cx.pop(count, s))
        if push:
            bwd.append(cx.pop(target, s))
        return fwd, bwd

    def while_(self, s, in_loop):
        cx = self.cx
        cx.forget_shapes(A.assigned_names(s))
        body_f, body_b = self.block(s.body, True)
        cx.forget_shapes(A.assigned_names(s))
        if not _has_code(body_b):
            return cf.while_.fill(cx.namespace, s, test=s.test, body=body_f), []
        count = cx.fresh(naming.ITERATIONS)
        cx.local_names.add(count)
        fwd = [cx.push(A.load(count), s)] if in_loop else []
        fwd += cf.counted_while.fill(cx.namespace, s, count=count, test=s.test, body=body_f)
        bwd = cf.while_adjoint.fill(cx.namespace, s, count=count, body=body_b)
        if in_loop:
            bwd.append(cx.pop(count, s))
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
    return not all(is_comment(s) for s in stmts)
