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
"""

from __future__ import annotations

import dataclasses

import gast

from mindgrad import rules, runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler import naming, objects
from mindgrad.compiler.facts import activity
from mindgrad.compiler.facts.analysis import (
    Analysis,
    call_shape,
    without_receiver,
)
from mindgrad.compiler.front import source
from mindgrad.compiler.transform import control_flow as cf
from mindgrad.compiler.transform import operations as ops
from mindgrad.compiler.transform.expand import instantiate_tangent
from mindgrad.compiler.transform.passes import (
    BINOPS,
    FunctionPass,
    describe,
    no_attribute_rule,
    no_rule,
    reads_self_in_generated_code,
    source_text,
)
from mindgrad.errors import NoGradientRuleError, NoTangentRuleError
from mindgrad.rules import RuleError
from mindgrad.runtime.origin import Origin, origin


@dataclasses.dataclass(frozen=True, kw_only=True)
class ForwardInput:
    """What the forward pass differentiates: a normalized function and the facts it needs."""

    src: source.Source
    fdef: gast.FunctionDef     # normalized; the pass works on a copy
    active_params: list        # the parameters given tangents
    analysis: Analysis
    arguments_shared: bool     # the user's code calls it: its arguments are the caller's


@dataclasses.dataclass(kw_only=True)
class TangentCode:
    """What the forward pass wrote for one function (see assemble.tangent_function)."""

    statements: list           # the body, ending with ``return (result, tangent of result)``
    fdef: gast.FunctionDef     # the normalized function: its parameters
    tangent_params: list       # the parameters' tangents, taken after the parameters
    pure: set                  # names the optimizer may treat as pure: tangents, temporaries
    impure_calls: set          # helpers the optimizer must keep (tangent list updates)
    namespace: naming.Namespace


class ForwardPass(FunctionPass):
    """Builds the tangent code of one function for one set of active inputs."""

    rule_of = staticmethod(rules.lookup_tangent)

    def __init__(self, job: ForwardInput, names: naming.NameGen, callees):
        super().__init__(job.src, job.fdef, job.active_params, names, callees,
                         job.arguments_shared)
        analysis = job.analysis
        self.resolve.values = analysis.values
        self.active = set(analysis.active)
        self.scalars = set(analysis.scalars)
        self.containers = set(analysis.containers)
        self.numeric = set(analysis.numeric)  # arrays or numbers at every assignment: no lists
        self.tnames = {}
        self.adjoint_names = set()   # names the optimizer may treat as pure: tangents, temps
        self.impure_calls = set()
        self.aliases = self.check_aliasing(set(self.params) - self.scalars)

    def tangent_code(self) -> TangentCode:
        fdef = self.fdef
        body = self.block(fdef.body[:-1])
        # parameters given no tangent that become active later (x, y = y, x + y) start at zero
        params = self.params + [a.id for a in fdef.args.kwonlyargs]
        start = [A.assign(self.t(p), A.call(self.helper(runtime.zero_tangent), A.load(p)))
                 for p in params if p in self.active and p not in self.active_params]
        result = fdef.body[-1].value
        ret = gast.Return(value=A.tuple_([A.clone(result), self.tangent_of(result)]))
        return TangentCode(statements=start + body + [ret], fdef=fdef,
                           tangent_params=[self.t(p) for p in self.active_params],
                           pure=self.adjoint_names, impure_calls=self.impure_calls,
                           namespace=self.namespace)

    # ----- names ---------------------------------------------------------------------------

    def t(self, key: str) -> str:
        """The tangent variable of a local name: ``t_x``."""
        if key not in self.tnames:
            self.tnames[key] = self.fresh(naming.tangent(key))
            self.adjoint_names.add(self.tnames[key])
        return self.tnames[key]

    def helper(self, fn) -> gast.Name:
        name = self.bind(fn, fn.__name__)
        if fn in (runtime.tangent_pop, runtime.tangent_append):
            self.impure_calls.add(name)  # they update a tangent list in step with the values
        return A.load(name)

    def tangent_of(self, node):
        """The tangent of an atom: ``t_x`` for an active name, else 0."""
        if self.is_active(node):
            return A.load(self.t(self.resolve.key(node)))
        return A.zero()

    def accumulate_tangent(self, t_out, value, out_name=None, rule=None):
        """``t_out = t_out + value``; through ``runtime.add`` where ``out_name`` may hold a
        list, a tuple or a dict (``divmod``, ``np.gradient``, a sequence joined), whose ``+``
        would join the tangents, not add them. An operator's own tangent (``x + y``: ``t_x +
        t_y``) keeps ``+``: of two sequences, it joins their tangents as the operator joins
        them. ``t_out`` starts at 0 on each assignment: the optimizer makes the first write a
        plain one."""
        if out_name is not None and out_name not in self.numeric and \
                origin(getattr(rule, "key", None)) is not Origin.OPERATOR:
            return A.assign(t_out, A.call(self.helper(runtime.add), A.load(t_out), value))
        return A.assign(t_out, A.binop(A.load(t_out), gast.Add(), value))

    # ----- blocks --------------------------------------------------------------------------

    def block(self, stmts):
        out, last = [], None
        for s in stmts:
            new = self.stmt(s)
            lineno = getattr(s, "lineno", None)
            if len(new) > 1 and lineno is not None and lineno != last:
                out.append(self.comment_on("tangent of", lineno))
                last = lineno
            out.extend(new)
        return out

    def stmt(self, s):
        if isinstance(s, gast.Assign):
            target = s.targets[0]
            if isinstance(target, gast.Name):
                return self.number_check(s) + self.assign(s, target.id, s.value)
            return self.setitem(s, target)
        if isinstance(s, gast.If):
            saved = dict(self.shapes)
            body = self.block(s.body)
            self.shapes = dict(saved)
            orelse = self.block(s.orelse)
            self.shapes = saved
            self.forget_shapes(A.assigned_names(s))
            return cf.if_.fill(self.namespace, s, test=s.test, body=body, orelse=orelse)
        if isinstance(s, (gast.For, gast.While)):
            self.forget_shapes(A.assigned_names(s))  # the body runs after itself
            if isinstance(s, gast.For):
                out = self.for_(s)
            else:
                out = cf.while_.fill(self.namespace, s, test=s.test, body=self.block(s.body))
            self.forget_shapes(A.assigned_names(s))
            return out
        if isinstance(s, gast.Expr):
            return self.expr(s)
        if isinstance(s, (gast.Break, gast.Assert, gast.Raise, gast.Pass)):
            return [s]
        self.fail(s, f"{type(s).__name__} statements are not supported here")

    # ----- assignments ---------------------------------------------------------------------

    def assign(self, s, name, value):
        self.shapes[name] = self.result_token(value)
        if name not in self.active:
            return [s]
        t_out = self.t(name)
        if isinstance(value, gast.Call):
            callee = self.callee_of(value)
            if callee is not None and self.is_active_call(value):
                return self.call_user(s, name, value, callee)
        if not activity.value_is_active(value, self.active, self.resolve):
            # a value without tangent given to a name with one: a zero of its shape, so the
            # tangent rules downstream get an array, not the symbolic 0
            return [s, A.assign(t_out, A.call(self.helper(runtime.zero_tangent), A.load(name)),
                                s)]
        out = [s, A.assign(t_out, A.zero(), s)]
        out.extend(A.located(st, s) for st in self.tangent(s, name, value, t_out))
        return out

    def tangent(self, s, name, value, t_out):
        op = ops.classify(value, self.resolve, self.containers, self.active)
        if isinstance(op, ops.Read):
            return [A.assign(t_out, self.tangent_of(value))]
        if isinstance(op, ops.Concat):
            # sequences: x + y concatenates, and so do their tangents
            return [A.assign(t_out, A.call(self.helper(runtime.concat_tangents),
                                           self.tangent_of(op.left), A.clone(op.left),
                                           self.tangent_of(op.right), A.clone(op.right)))]
        if isinstance(op, ops.Repeat):  # x * n: the rule of * repeats the tangent list
            op = ops.Operator(BINOPS[gast.Mult], [op.value.left, op.value.right])
        if isinstance(op, ops.Constant):
            return self.merge_check(s, name) if isinstance(op.op, gast.BitOr) else []
        if isinstance(op, ops.Operator):
            return self.apply(s, rules.lookup_tangent(op.fn), op.fn, op.args, {}, name, t_out)
        if isinstance(op, ops.IndexRead):
            if not self.is_active(op.base):
                return []
            return [A.assign(t_out, A.call(self.helper(runtime.item), self.tangent_of(op.base),
                                           self.index_value(op.index)))]
        if isinstance(op, ops.Display):
            return [A.assign(t_out, self.display_tangent(op.value))]
        if isinstance(op, ops.AttrRule):
            rule = rules.lookup_tangent_attr(op.attr)
            if rule is None and reads_self_in_generated_code(self.src, value):
                # a constant of the object a method of the user's was called on: no tangent
                return [A.assign(t_out, A.zero())]
            if rule is None:  # an error in the branch taken: it may be one never taken
                return self.fail_when_run(s, no_attribute_rule(
                    self.src, s, value, f"the attribute .{op.attr} has no tangent rule; "
                    f"register one with @mindgrad.rules.tangent_attr({op.attr!r})"),
                    NoTangentRuleError, f"no_rule_for_{op.attr}")
            return self.apply(s, rule, op.attr, [op.owner], {}, name, t_out)
        if isinstance(op, ops.Unsupported):
            self.fail(s, f"mindgrad has no tangent for a {type(value).__name__} expression",
                      NoTangentRuleError)
        return self.tangent_call(s, name, op, t_out)

    def display_tangent(self, value):
        """The tangent of a tuple, list or dict display: the display of its items' tangents."""
        if isinstance(value, gast.Dict):
            return gast.Dict(keys=[A.clone(k) for k in value.keys],
                             values=[self.tangent_of(v) for v in value.values])
        elts = [self.tangent_of(e) for e in value.elts]
        return gast.Tuple(elts=elts, ctx=gast.Load()) if isinstance(value, gast.Tuple) \
            else gast.List(elts=elts, ctx=gast.Load())

    def apply(self, s, rule, fn, args, keywords, name, t_out):
        if rule is None:
            label = describe(fn)
            self.fail(s, f"{label} has no tangent (forward-mode) rule; register one with "
                         f"@mindgrad.rules.tangent({label})", NoTangentRuleError)
        try:
            stmts = instantiate_tangent(rule, args, keywords, name, t_out, self)
        except RuleError as exc:
            self.fail(s, str(exc), NoTangentRuleError)
        if stmts and self.src.is_mindgrad_code and rule.reads_zero_unsafely:
            # over mindgrad's own code a tangent is often the symbolic zero at run time: a
            # rule linear in it takes it (runtime.Zero is linear); one that passes it where a
            # value is needed (Rule.reads_zero_unsafely) runs only on a value
            return self.zero_guarded(stmts)
        return stmts

    def zero_guarded(self, stmts):
        """Each assignment of ``stmts`` under ``if not is_zero(t):`` for the tangent it reads."""
        guarded = []
        for st in stmts:
            if isinstance(st, gast.If):  # a rule under a run-time dtype test
                st.body = self.zero_guarded(st.body)
                guarded.append(st)
                continue
            targets = A.names_in(st.targets, gast.Store)
            reads = [n for n in A.names_in(st.value, gast.Load)
                     if n in self.tnames.values() and n not in targets]
            if reads:
                test = A.call(self.helper(runtime.is_zero), A.load(reads[-1]))
                st = A.if_(gast.UnaryOp(op=gast.Not(), operand=test), [st], [])
            guarded.append(st)
        return guarded

    def tangent_call(self, s, name, op, t_out):
        """The tangent statements of a call, classified as ``op`` (operations.py)."""
        if isinstance(op, ops.TangentPop):  # a pop of a tangent list: its tangent pops too
            return [A.assign(t_out, A.call(self.helper(runtime.tangent_pop),
                                           self.tangent_of(op.receiver)))]
        if isinstance(op, (ops.ConstantMethod, ops.ListPop, ops.MethodCall)):
            # a receiver of a kind not known yet is checked where it runs
            checked = self.check_receiver(s, op.func, NoTangentRuleError)
            if isinstance(op, ops.ConstantMethod):
                return checked
            if isinstance(op, ops.ListPop):  # v = xs.pop(): the tangent list pops in step
                return checked + [A.assign(t_out, A.call(self.helper(runtime.tangent_pop),
                                                         self.tangent_of(op.receiver)))]
            rule = rules.lookup_tangent_method(op.method)
            if rule is None:  # an error in the branch taken: it may be one never taken
                return checked + self.fail_when_run(
                    s, f"the method .{op.method}() has no tangent rule", NoTangentRuleError,
                    f"no_rule_for_{op.method}")
            return self.after_check(
                s, checked, lambda: self.apply(s, rule, op.method, op.args, op.keywords, name,
                                               t_out),
                NoTangentRuleError, op.method)
        if isinstance(op, ops.UnknownFunction):  # a function held in a variable: an error
            # in the branch taken
            return self.fail_when_run(s, f"cannot tell which function {source_text(op.func)} "
                                         "is", NameError, "unknown_function")
        if isinstance(op, ops.ConstantCall):
            return []
        rule, fn, args = op.rule(rules.lookup_tangent)
        if rule is None:
            self.fail(s, no_rule(op.target, "tangent"), NoTangentRuleError)
        return self.apply(s, rule, fn, args, op.keywords, name, t_out)

    def call_user(self, s, name, call, callee):
        """``name = f(...)`` for code with Python source: its tangent function."""
        fn, obj, self_expr = callee
        call = without_receiver(call, self_expr)
        if obj is not None and objects.is_module(obj) and hasattr(type(obj), "bprop"):
            self.fail(s, "forward mode does not use a Cell's custom bprop; differentiate it in "
                         "reverse mode", NoGradientRuleError)
        args = self.bound_arguments(s, fn, obj, call)
        mask = tuple(self.is_active(a) for a in args)
        name_fn = self.callees.tangent_name_for(fn, obj, mask, call_shape(fn, obj, call))
        head = [A.clone(self_expr)] if obj is not None else []
        tangents = [self.tangent_of(a) for a, m in zip(args, mask) if m]
        return cf.tangent_call.fill(self.namespace, s, result=name, t_result=self.t(name),
                                    tangent_fn=name_fn, args=head + args, tangents=tangents)

    def setitem(self, s, target):
        """``x[idx] = v``: the tangent array gets ``t_v`` at ``idx`` (a copy: tangents may be
        shared by names whose values are not)."""
        self.refuse_argument_write(s)
        base = target.value.id
        if base not in self.active:
            return [s]
        index = self.index_value(target.slice)
        update = A.call(self.helper(runtime.tangent_setitem), A.load(self.t(base)),
                        A.load(base), index, self.tangent_of(s.value))
        return [s, A.assign(self.t(base), update, s)]

    def expr(self, s):
        call = s.value
        if not isinstance(call, gast.Call):
            return [s]
        self.refuse_lost_write(s, call)
        func = call.func
        receiver = self.resolve.receiver(func)
        if receiver is not None and isinstance(receiver, gast.Name) and \
                receiver.id in self.active:
            key = receiver.id
            if func.attr == "append" and call.args:
                update = A.call(self.helper(runtime.tangent_append), A.load(self.t(key)),
                                A.load(key), self.tangent_of(call.args[0]))
                return [s, A.assign(self.t(key), update, s)]
            if func.attr == "pop" and not call.args:
                return [s, A.expr_stmt(A.call(self.helper(runtime.tangent_pop),
                                              A.load(self.t(key))), s)]
        return [s]

    # ----- loops ---------------------------------------------------------------------------

    def for_(self, s):
        body = self.block(s.body)
        target = s.target.id
        if target in self.active and self.is_active(s.iter):
            return cf.tangent_for_over_items.fill(
                self.namespace, s, index=self.fresh(naming.INDEX), target=target, items=s.iter,
                t_target=self.t(target), t_items=self.tangent_of(s.iter), body=body)
        if target in self.active:
            return cf.tangent_for_from_zero.fill(self.namespace, s, target=target, items=s.iter,
                                                 t_target=self.t(target), body=body)
        return cf.for_.fill(self.namespace, s, target=target, items=s.iter, body=body)
