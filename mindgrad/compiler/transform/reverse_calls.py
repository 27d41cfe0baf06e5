"""Part of stage 5, reverse: the adjoints of calls (see reverse.py).

A call of a function with a gradient rule (``np.sin``, a method of an array) is filled from
the rule's template. A call of the user's own code (a function, a method, a Cell, a callable
object) runs its forward function in the forward sweep and its backward function in the backward
sweep; the pass asks ``callees.Callees`` for their names, the driver builds them. A Cell with
its own ``bprop`` runs as written and its ``bprop`` backwards.
"""

from __future__ import annotations

import gast

from mindgrad import rules, runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler import naming, objects
from mindgrad.compiler.facts.analysis import call_shape, without_receiver
from mindgrad.compiler.transform import control_flow as cf
from mindgrad.compiler.transform import operations as ops
from mindgrad.compiler.transform.passes import no_rule, source_text
from mindgrad.errors import NoGradientRuleError


class CallAdjoints:
    """The part of ``ReversePass`` that writes the adjoints of calls."""

    def adjoint_call(self, s, name, op):
        """The adjoint statements of a call, classified as ``op`` (operations.py)."""
        if isinstance(op, ops.TangentPop):
            # v = tangent_pop(t_xs), in forward-mode code: as v = t_xs.pop(), where it popped
            key = self.key(op.receiver)
            self.indexed.add(key)
            return [A.assign(self.d(key), A.call(
                self.helper(runtime.tangent_push_grad), A.load(self.d(key)),
                A.load(self.d(name)), A.clone(op.receiver)), s)]
        if isinstance(op, (ops.ConstantMethod, ops.ListPop, ops.MethodCall)):
            # a receiver of a kind not known yet is checked where it runs
            checked = self.check_receiver(s, op.func, NoGradientRuleError)
            if isinstance(op, ops.ConstantMethod):
                return checked
            if isinstance(op, ops.ListPop):
                # v = xs.pop(): the gradient goes back on the end of the list's gradient
                key = self.key(op.receiver)
                self.indexed.add(key)
                return checked + [A.assign(self.d(key), A.call(
                    self.helper(runtime.push_grad), A.load(self.d(key)), A.load(self.d(name)),
                    A.clone(op.receiver)), s)]
            rule = rules.lookup_method(op.method)
            if rule is None:  # an error in the branch taken: it may be one never taken
                return checked + self.fail_when_run(
                    s, f"the method .{op.method}() has no gradient rule; register one with "
                       f"@mindgrad.adjoint_method({op.method!r})", NoGradientRuleError,
                    f"no_rule_for_{op.method}")
            return self.after_check(
                s, checked, lambda: self.apply_rule(s, rule, op.method, op.args, op.keywords,
                                                    name),
                NoGradientRuleError, op.method)
        if isinstance(op, ops.UnknownFunction):
            return self.fail_when_run(
                s, f"cannot tell which function {source_text(op.func)} is; call a module-level "
                   "function, a method of an array, or a local lambda/def", NameError,
                "unknown_function")
        if isinstance(op, ops.ConstantCall):
            return []
        rule, fn, args = op.rule(rules.lookup)
        if rule is None:
            self.fail(s, no_rule(op.target), NoGradientRuleError)
        return self.apply_rule(s, rule, fn, args, op.keywords, name)

    def check_callee(self, s, call):
        """A call through a local variable holding a function or Cell cannot be followed:
        the statements refusing it where it runs, before it (a branch the arguments never
        take may hold it: ``if callable(c): c(x)``), rather than take its result as a
        constant; else none."""
        func = call.func
        if self.resolve.receiver(func) is not None and self.weights and \
                not self.is_active_call(call):
            # a method of a Cell held in a local may read the weights asked for
            return self.check_receiver(s, func, NoGradientRuleError)
        if self.resolve.receiver(func) is not None or self.resolve(func) is not None:
            return []
        root = func
        while isinstance(root, (gast.Attribute, gast.Subscript)):
            root = root.value
        if isinstance(root, gast.Name) and root.id in self.local_names:
            return self.fail_when_run(
                s, f"cannot tell which function {source_text(func)} is: it is a local "
                   "variable set while the function runs. Call the Cell or function through "
                   "its attribute (self.block(x)) or a global name, or loop over a list of "
                   "Cells stored on the Cell (for layer in self.layers)", NameError,
                "unknown_function")
        return []

    def call_user(self, s, name, call, callee, in_loop=False):
        """``name = f(...)`` for the user's own code: its forward now, its backward later.

        ``name, name_tape = f_forward(...)``; later ``f_backward(name_tape, d_name)``.
        """
        fn, obj, self_expr = callee
        call = without_receiver(call, self_expr)
        if obj is not None and hasattr(type(obj), "bprop") and objects.is_module(obj):
            return self.call_bprop(s, name, call, obj)
        args = self.bound_arguments(s, fn, obj, call)
        mask = tuple(self.is_active(a) for a in args)
        scalar = tuple(self.is_scalar(a) for a in args)
        if name not in self.active:
            return [s], []  # nothing to differentiate: the call as written
        real = tuple(self.is_real(a) for a in args)
        names = self.callees.names_for(fn, obj, mask, scalar, call_shape(fn, obj, call), real)
        head = [A.clone(self_expr)] if obj is not None else []
        ctx = self.fresh(naming.callee_tape(name))
        self.local_names.add(ctx)
        forward = cf.call_forward.fill(self.namespace, s, result=name, result_tape=ctx,
                                       forward=names.forward, args=head + args)
        restore = []
        if in_loop or self.defs.get(name, 0) > 1:  # each run of the call keeps its own tape
            forward.insert(0, self.push(A.load(ctx), s))
            restore = [self.pop(ctx, s)]
        label = naming.label(fn.__name__, obj)
        active_args = [a for a, m in zip(args, mask) if m]
        parts = [self.fresh(naming.callee_part(self.key(a), label)) for a in active_args]
        weight_parts = [self.fresh(naming.callee_part(naming.object_label(self.weights[i]),
                                                      label)) for i in names.weights]
        everything = parts + weight_parts
        self.adjoint_names.update(everything)
        bwd = cf.call_backward.fill(self.namespace, s, grads=everything,
                                    backward=names.backward, result_tape=ctx,
                                    d_result=self.d(name))
        self.impure_calls.add(names.backward)
        for part, arg in zip(parts, active_args):
            bwd.append(self.accumulate(arg, A.load(part), s))
        for part, index in zip(weight_parts, names.weights):
            bwd.append(self.accumulate(self.weight_accumulator(index), A.load(part), s))
        return forward, bwd + restore

    def weight_accumulator(self, index):
        """The key of the accumulator for weight ``index`` fed by callees."""
        key = f"@weight{index}"
        if key not in self.weight_keys:
            self.weight_keys[key] = index
            self.d.labels[key] = naming.object_label(self.weights[index])
            self.active.add(key)
        return key

    def call_bprop(self, s, name, call, cell):
        """A Cell with its own ``bprop``: run it as written, and call ``bprop`` backwards."""
        args = list(call.args)
        if call.keywords:
            self.fail(s, "a Cell with a custom bprop must be called with positional arguments",
                      TypeError)
        forward = A.assign(name, call, s)
        if name not in self.active:
            return [forward], []
        parts = self.fresh(naming.bprop_part(cell))
        self.adjoint_names.add(parts)
        bwd = cf.call_bprop.fill(self.namespace, s, grads=parts, cell=call.func, args=args,
                                 result=name, d_result=self.d(name))
        self.impure_calls.add(parts)
        for i, arg in enumerate(args):
            if self.is_active(arg):
                bwd.append(self.accumulate(arg, A.subscript(A.load(parts), A.const(i)), s))
        return [forward], bwd
