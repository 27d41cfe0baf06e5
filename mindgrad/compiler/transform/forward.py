"""Stage 5 (forward mode), forward: tangent code next to the primal code (``jvp``).

Output guarantees:

* Every statement of the normalized function is kept, in order, with the same control flow;
  after each assignment to an active name ``y`` comes the assignment of its tangent ``t_y``,
  from the tangent rule of the operation (or ``0`` when no operand carries a tangent).
* ``t_x`` is the tangent of ``x`` for every active name; names without tangent have none.
  Index assignments, list appends and pops update the tangent in parallel with the value.
* Calls of the user's own code call their own tangent functions, which return
  ``(value, tangent)``: the pass asks ``callees.Callees`` for their names, and the driver
  builds them.
* The function returns ``(result, tangent of result)``.

The pass writes in a ``ForwardContext`` (forward_context.py): blocks, control flow and the
statements that change a value in place here, the tangent of each kind of operation
(operations.py) in forward_operations.py.
"""

from __future__ import annotations

import gast

from mindgrad import runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler import expansions, naming, objects
from mindgrad.compiler.facts import activity
from mindgrad.compiler.facts.analysis import call_shape, without_receiver
from mindgrad.compiler.transform import control_flow as cf
from mindgrad.compiler.transform import operations as ops
from mindgrad.compiler.transform.forward_context import (  # noqa: F401 (the stage's types)
    ForwardContext,
    ForwardInput,
    TangentCode,
)
from mindgrad.compiler.transform.forward_operations import TangentWriter
from mindgrad.errors import NoGradientRuleError


class ForwardPass:
    """Builds the tangent code of one function for one set of active inputs."""

    def __init__(self, job: ForwardInput, names: naming.NameGen, callees):
        self.cx = ForwardContext(job, names, callees)
        self.operations = TangentWriter(self.cx)

    def tangent_code(self) -> TangentCode:
        cx = self.cx
        fdef = cx.fdef
        body = self.block(fdef.body[:-1])
        # parameters given no tangent that become active later (x, y = y, x + y) start at zero
        params = cx.params + [a.id for a in fdef.args.kwonlyargs]
        start = [A.assign(cx.t(p), A.call(cx.helper(runtime.zero_tangent), A.load(p)))
                 for p in params if p in cx.active and p not in cx.active_params]
        result = fdef.body[-1].value
        ret = gast.Return(value=A.tuple_([A.clone(result), cx.tangent_of(result)]))
        return TangentCode(statements=start + body + [ret], fdef=fdef,
                           tangent_params=[cx.t(p) for p in cx.active_params],
                           pure=cx.pure, impure_calls=cx.impure_calls,
                           namespace=cx.namespace)

    # ----- blocks --------------------------------------------------------------------------

    def block(self, stmts):
        cx = self.cx
        out, last = [], None
        for s in stmts:
            new = self.stmt(s)
            lineno = getattr(s, "lineno", None)
            if len(new) > 1 and lineno is not None and lineno != last:
                out.append(cx.comment_on("tangent of", lineno))
                last = lineno
            out.extend(new)
        return out

    def stmt(self, s):
        cx = self.cx
        if isinstance(s, gast.Assign):
            target = s.targets[0]
            if isinstance(target, gast.Name):
                return cx.number_check(s) + self.assign(s, target.id, s.value)
            return self.setitem(s, target)
        if isinstance(s, gast.If):
            saved = dict(cx.shapes)
            body = self.block(s.body)
            cx.shapes = dict(saved)
            orelse = self.block(s.orelse)
            cx.shapes = saved
            cx.forget_shapes(A.assigned_names(s))
            return cf.if_.fill(cx.namespace, s, test=s.test, body=body, orelse=orelse)
        if isinstance(s, (gast.For, gast.While)):
            cx.forget_shapes(A.assigned_names(s))  # the body runs after itself
            if isinstance(s, gast.For):
                out = self.for_(s)
            else:
                out = cf.while_.fill(cx.namespace, s, test=s.test, body=self.block(s.body))
            cx.forget_shapes(A.assigned_names(s))
            return out
        if isinstance(s, gast.Expr):
            return self.expr(s)
        if isinstance(s, (gast.Break, gast.Assert, gast.Raise, gast.Pass)):
            return [s]
        cx.fail(s, f"{type(s).__name__} statements are not supported here")

    # ----- assignments ---------------------------------------------------------------------

    def assign(self, s, name, value):
        cx = self.cx
        s, value = cx.strict_zero_test(s, name, value)
        cx.shapes[name] = cx.result_token(value)
        if name not in cx.active:
            return [s]
        t_out = cx.t(name)
        if isinstance(value, gast.Call) and ops.starred_call(value, cx.resolve):
            return self.call_dynamic(s, name, value)
        if isinstance(value, gast.Call):
            callee = cx.callee_of(value)
            if callee is not None and cx.is_active_call(value):
                return self.call_user(s, name, value, callee)
            if callee is None and cx.is_active_call(value) and isinstance(
                    ops.classify(value, cx.resolve, cx.containers, cx.active),
                    ops.UnknownFunction):
                return self.call_dynamic(s, name, value)
        if not activity.value_is_active(value, cx.active, cx.resolve):
            # a value without tangent given to a name with one: a zero of its shape, so the
            # tangent rules downstream get an array, not the symbolic 0
            return [s, A.assign(t_out, A.call(cx.helper(runtime.zero_tangent), A.load(name)),
                                s)]
        out = [s, A.assign(t_out, A.zero(), s)]
        op = ops.classify(value, cx.resolve, cx.containers, cx.active)
        out.extend(A.located(st, s) for st in self.operations.write(op, s, name, value))
        return out

    def call_user(self, s, name, call, callee):
        """``name = f(...)`` for code with Python source: its tangent function."""
        cx = self.cx
        fn, obj, self_expr = callee
        call = without_receiver(call, self_expr)
        if obj is not None and objects.is_module(obj) and hasattr(type(obj), "bprop"):
            cx.fail(s, "forward mode does not use a Cell's custom bprop; differentiate it in "
                       "reverse mode", NoGradientRuleError)
        args = cx.bound_arguments(s, fn, obj, call)
        mask = tuple(cx.is_active(a) for a in args)
        name_fn = cx.callees.tangent_name_for(fn, obj, mask, call_shape(fn, obj, call))
        head = [A.clone(self_expr)] if obj is not None else []
        tangents = [cx.tangent_of(a) for a, m in zip(args, mask) if m]
        return cf.tangent_call.fill(cx.namespace, s, result=name, t_result=cx.t(name),
                                    tangent_fn=name_fn, args=head + args, tangents=tangents)

    def call_dynamic(self, s, name, call):
        """``name = f(...)`` for a function ``f`` the code reaches only when it runs: the
        run-time dispatcher gives its tangent function for the kinds of the arguments
        (``expansions.dynamic_tangent``), which takes the tangents by keyword."""
        cx = self.cx
        active, label, made, passed = cx.dispatched(call, expansions.dynamic_tangent)
        if not active:
            return [s, A.assign(cx.t(name), A.call(cx.helper(runtime.zero_tangent),
                                                   A.load(name)), s)]
        tangent_fn = cx.fresh(f"{label}_tangent")
        names = expansions.dynamic_tangent_names(tuple(p for p, _ in active))
        # the generated tangent function takes every argument by position, then the tangents
        run = A.call(A.load(tangent_fn), *passed)
        run.keywords = [gast.keyword(arg=n, value=cx.tangent_of(a))
                        for n, (_, a) in zip(names, active)]
        return [A.assign(tangent_fn, made, s),
                A.assign(A.tuple_([A.store(name), A.store(cx.t(name))], gast.Store()), run, s)]

    def setitem(self, s, target):
        """``x[idx] = v``: the tangent array gets ``t_v`` at ``idx`` (a copy: tangents may be
        shared by names whose values are not)."""
        cx = self.cx
        cx.refuse_argument_write(s)
        base = target.value.id
        if base not in cx.active:
            return [s]
        index = cx.index_value(target.slice)
        update = A.call(cx.helper(runtime.tangent_setitem), A.load(cx.t(base)),
                        A.load(base), index, cx.tangent_of(s.value))
        return [s, A.assign(cx.t(base), update, s)]

    def expr(self, s):
        cx = self.cx
        call = s.value
        if not isinstance(call, gast.Call):
            return [s]
        cx.refuse_lost_write(s, call)
        func = call.func
        receiver = cx.resolve.receiver(func)
        if receiver is not None and isinstance(receiver, gast.Name) and \
                receiver.id in cx.active:
            key = receiver.id
            if func.attr == "append" and call.args:
                update = A.call(cx.helper(runtime.tangent_append), A.load(cx.t(key)),
                                A.load(key), cx.tangent_of(call.args[0]))
                return [s, A.assign(cx.t(key), update, s)]
            if func.attr == "pop" and not call.args:
                return [s, A.expr_stmt(A.call(cx.helper(runtime.tangent_pop),
                                              A.load(cx.t(key))), s)]
        return [s]

    # ----- loops ---------------------------------------------------------------------------

    def for_(self, s):
        cx = self.cx
        body = self.block(s.body)
        target = s.target.id
        if target in cx.active and cx.is_active(s.iter):
            return cf.tangent_for_over_items.fill(
                cx.namespace, s, index=cx.fresh(naming.INDEX), target=target, items=s.iter,
                t_target=cx.t(target), t_items=cx.tangent_of(s.iter), body=body)
        if target in cx.active:
            return cf.tangent_for_from_zero.fill(cx.namespace, s, target=target, items=s.iter,
                                                 t_target=cx.t(target), body=body)
        return cf.for_.fill(cx.namespace, s, target=target, items=s.iter, body=body)
