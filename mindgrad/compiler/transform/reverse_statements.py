"""Part of stage 5, reverse: the adjoints of single statements (see reverse.py).

``y = <op>`` adds to the adjoints of the operation's active operands from ``d_y``, by the rule
of the operation (filled from its template, see expand.py), then clears ``d_y``; an assignment
that overwrites a value the backward sweep reads saves it on the tape first. ``x[i] = v``,
``xs.append(v)`` and ``xs.pop()`` change a value in place: their adjoints restore it (in a copy
the backward sweep owns) and split the gradient of the whole into its parts.
"""

from __future__ import annotations

import gast

from mindgrad import rules, runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler import naming
from mindgrad.compiler.facts import activity
from mindgrad.compiler.transform import operations as ops
from mindgrad.compiler.transform.expand import instantiate
from mindgrad.compiler.transform.passes import (
    as_load,
    describe,
    no_attribute_rule,
    reads_self_in_generated_code,
)
from mindgrad.errors import NoGradientRuleError
from mindgrad.rules import RuleError


class StatementAdjoints:
    """The part of ``ReversePass`` that writes the adjoints of assignments and expression
    statements."""

    def reads_a_view_kept(self, name, value) -> bool:
        """Whether ``name = x[idx]`` must copy: the backward sweep reads ``name``, which may be
        a view of an array index-assigned later (the backward restores only private copies)."""
        return isinstance(value, gast.Subscript) and name in self.view_reads and \
            self.needed is not None and name in self.needed

    def basic_index(self, index) -> bool:
        """An index of ints, scalars and slices: ``d_x[idx] += g`` adds each element once."""
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        for part in parts:
            if isinstance(part, gast.Slice):
                if not all(p is None or self.is_scalar(p) or isinstance(p, gast.Constant)
                           for p in (part.lower, part.upper, part.step)):
                    return False
            elif not (self.is_scalar(part) or isinstance(part, gast.Constant)):
                return False
        return True

    def assign(self, s, name, value, in_loop):
        self.refuse_argument_method(s)
        fwd, bwd = self.number_check(s), []
        push = self.needs_push(name, in_loop)
        self.shapes[name] = self.result_token(value)
        if push:
            fwd.append(self.push(A.load(name), s))
        if isinstance(value, gast.Call) and (self.weights or self.is_active_call(value)):
            refused = self.check_callee(s, value)
            if refused:  # raised where the call runs: no gradient goes through it
                return fwd + refused + [s], []
        if self.reads_a_view_kept(name, value):
            s = A.assign(name, A.call(self.helper(runtime.saved_item), A.clone(value.value),
                                      self.index_value(value.slice)), s)
        if isinstance(value, gast.Call) and self.is_active_call(value):
            callee = self.callee_of(value)
            if callee is not None:
                f, b = self.call_user(s, name, value, callee, in_loop)
                fwd.extend(f)
                bwd.extend(b)
            else:
                fwd.append(s)
                bwd.extend(self.adjoint_of(s, name, value))
        else:
            fwd.append(s)
            if name in self.active and activity.value_is_active(value, self.active, self.resolve):
                bwd.extend(self.adjoint_of(s, name, value))
        if name in self.active:
            bwd.append(A.assign(self.d(name), A.zero(), s))
        receiver = self.resolve.receiver(value.func) if isinstance(value, gast.Call) else None
        if receiver is not None and value.func.attr == "pop" and not value.args:
            # undo the pop, so the statements before it see the list as it was
            undo = A.expr_stmt(A.call(A.attr(A.clone(receiver), "append"), A.load(name)), s)
            bwd.extend((self.private(receiver.id, s) if isinstance(receiver, gast.Name)
                        else []) + [undo])
        elif isinstance(value, gast.Call) and \
                ops.is_tangent_pop(value, self.resolve(value.func)):
            tangents = value.args[0].id  # forward-mode code: the tangent list popped in step
            undo = A.expr_stmt(A.call(self.helper(runtime.tangent_unpop), A.load(tangents),
                                      A.load(name)), s)
            bwd.extend(self.private(tangents, s) + [undo])
        if push:
            bwd.append(self.pop(name, s))
        return fwd, bwd

    def split_of_sum(self, value):
        """The helper splitting the gradient of ``x + y`` between its operands, where the code
        shows sequences (``concat_grads``: x + y concatenates, x gets the head) or, in
        generated code (grad of grad), whose lists come from the tape, where it does not show
        what they hold (``add_or_concat_grads``: the values decide). None for a sum the rule
        of ``+`` differentiates. (In the user's code an x + y of two lists the code does not
        show is refused when it runs, by unbroadcast, saying to build the list with a
        literal.)"""
        if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add)):
            return None
        if self.key(value.left) in self.containers or self.key(value.right) in self.containers:
            return runtime.concat_grads
        if self.src.is_mindgrad_code and self._may_join_sequences(value) and \
                (self.is_active(value.left) or self.is_active(value.right)):
            return runtime.add_or_concat_grads
        return None

    def adjoint_of(self, s, name, value):
        """Adjoint statements of ``name = value``, reading ``d_name``."""
        d_out = self.d(name)
        op = ops.classify(value, self.resolve, self.containers, self.weight_keys)
        if isinstance(op, ops.Read):
            return [self.accumulate(value, A.load(d_out), s)] if self.is_active(value) else []
        split = self.split_of_sum(value)
        if split is not None:
            # x + y as two parts of d_out: the head and the tail of a concatenation, or each
            # operand's share of a sum (runtime.add_or_concat_grads decides when it runs)
            parts = [self.fresh(part) for part in naming.concatenation_parts(name)]
            self.adjoint_names.update(parts)
            stmts = [A.assign(A.tuple_([A.store(p) for p in parts], gast.Store()),
                              A.call(self.helper(split), A.load(d_out), A.clone(value.left),
                                     A.clone(value.right)), s)]
            for part, operand in zip(parts, (value.left, value.right)):
                if self.is_active(operand):
                    stmts.append(self.accumulate(operand, A.load(part), s))
            return stmts
        if isinstance(op, ops.Repeat):
            # sequences: x * n repeats, so x gets the sum of its copies' gradients
            if not self.is_active(op.sequence):
                return []
            return [self.accumulate(op.sequence, A.call(self.helper(runtime.repeated_grads),
                                                        A.load(d_out), A.clone(op.sequence)), s)]
        if isinstance(op, ops.Constant):
            return self.merge_check(s, name) if isinstance(op.op, gast.BitOr) else []
        if isinstance(op, ops.Operator):
            return self.apply_rule(s, rules.lookup(op.fn), op.fn, op.args, {}, name)
        if isinstance(op, ops.IndexRead):
            return self.index_read_adjoint(s, op.base, op.index, d_out)
        if isinstance(op, ops.Display):
            item = self.helper(runtime.item)
            pairs = zip(op.value.keys, op.value.values) if isinstance(op.value, gast.Dict) \
                else ((A.const(i), e) for i, e in enumerate(op.value.elts))
            return [self.accumulate(v, A.call(A.clone(item), A.load(d_out), A.clone(k)), s)
                    for k, v in pairs if self.is_active(v)]
        if isinstance(op, ops.AttrRule):
            rule = rules.lookup_attr(op.attr)
            if rule is None and not self.weights and reads_self_in_generated_code(self.src, value):
                return []  # a constant of the object a method of the user's was called on
            if rule is None:  # an error in the branch taken: it may be one never taken
                return self.fail_when_run(s, no_attribute_rule(
                    self.src, s, value, f"the attribute .{op.attr} of a differentiated "
                    f"value has no gradient rule; register one with @mindgrad.adjoint_attr"
                    f"({op.attr!r})"), NoGradientRuleError, f"no_rule_for_{op.attr}")
            return self.apply_rule(s, rule, op.attr, [op.owner], {}, name)
        if isinstance(op, ops.Unsupported):
            self.fail(s, f"mindgrad has no adjoint for a {type(value).__name__} expression",
                      NoGradientRuleError)
        return self.adjoint_call(s, name, op)

    def index_read_adjoint(self, s, base, index, d_out):
        """``v = x[i]``: ``d_v`` added into ``d_x`` at ``i`` (in place in a buffer the
        gradient owns, for a basic index)."""
        if not self.is_active(base):
            return []
        key = self.key(base)
        if key in self.buffers and self.basic_index(index):
            target = A.subscript(A.load(self.d(key)), as_load(A.clone(index)), gast.Store())
            return [A.located(gast.AugAssign(target=target, op=gast.Add(), value=A.load(d_out)),
                              s)]
        self.indexed.add(key)
        call = A.call(self.helper(runtime.add_at), A.load(self.d(key)), A.clone(base),
                      self.index_value(index), A.load(d_out))
        return [A.assign(self.d(key), call, s)]

    def apply_rule(self, s, rule, fn, args, keywords, name):
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
            # the gradient may be the symbolic zero at run time (a value unused on the path
            # taken; in mindgrad's own code, grad of grad, often). A rule linear in it takes
            # it (runtime.Zero is linear); one that passes it where a value is needed (the
            # analysis of Rule.reads_zero_unsafely) runs only on a value. The optimize stage
            # drops the guard where the gradient is known to be a value. is_zero(d_v, v): v
            # tells a number 0 standing for an array (a user's bprop returning 0) from a value
            test = gast.UnaryOp(op=gast.Not(), operand=A.call(self.helper(runtime.is_zero),
                                                              A.load(self.d(name)), A.load(name)))
            return [A.if_(test, stmts, [], s)]
        return stmts

    def setitem(self, s, target, in_loop):
        """``x[idx] = v``: the old value is saved; its gradient is cleared in the backward."""
        base = target.value.id
        self.refuse_argument_write(s)
        read_back = self.aliases.sharing_writes.get(id(s), set()) & (self.needed or set())
        for other in sorted(read_back - self.view_reads) if self.aliases.checked else ():
            self.fail(s, f"index assignment into {base!r} changes {other!r}, which may share its "
                         f"memory (another name for the same array, or a view) and which the "
                         f"gradient reads; make a copy ({other} = {other}.copy())")
        index = self.index_value(target.slice)
        fwd, bwd = [], []
        needed = self.needed is not None and base in self.needed
        if needed:
            saved = A.call(self.helper(runtime.saved_item), A.load(base), A.clone(index))
            fwd.append(self.push(saved, s))
        fwd.append(s)
        if base in self.active:
            v = s.value
            part = self.fresh(naming.assigned_item(base))
            self.adjoint_names.add(part)
            grad = A.call(self.helper(runtime.setitem_grad), A.load(self.d(base)),
                          A.clone(index), A.clone(v))
            bwd.append(A.assign(A.tuple_([A.store(part), A.store(self.d(base))], gast.Store()),
                                grad, s))
            if self.is_active(v):
                bwd.append(self.accumulate(v.id, A.load(part), s))
        if needed:
            restore = A.call(self.helper(runtime.restore_item), A.load(base), A.clone(index),
                             self.popped())
            bwd.extend(self.private(base, s) + [A.expr_stmt(restore, s)])
        return fwd, bwd

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

    def expr(self, s, in_loop):
        call = s.value
        if not isinstance(call, gast.Call):
            return [s], []
        self.refuse_argument_method(s)
        func = call.func
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
                and func.value.id in self.local_names:
            base = func.value.id
            if func.attr == "append" and (base in self.active or (
                    self.needed is not None and base in self.needed)):
                bwd = []
                if base in self.active:
                    part = self.fresh(naming.appended_item(base))
                    self.adjoint_names.add(part)
                    bwd.append(A.assign(A.tuple_([A.store(part), A.store(self.d(base))],
                                                 gast.Store()),
                                        A.call(self.helper(runtime.pop_grad),
                                               A.load(self.d(base))), s))
                    if call.args and self.is_active(call.args[0]):
                        bwd.append(self.accumulate(call.args[0].id, A.load(part), s))
                if self.needed is not None and base in self.needed:
                    bwd.extend(self.private(base, s) +
                               [A.expr_stmt(A.call(A.attr(A.load(base), "pop")), s)])
                return [s], bwd
        self.refuse_lost_write(s, call)
        return [s], []
