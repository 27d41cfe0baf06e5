"""Part of stage 5, reverse: the adjoint of each kind of operation (operations.py).

``AdjointWriter.write(op, s, name, value)`` gives the backward-sweep statements of the
assignment ``s``, ``name = value``, classified as ``op``: they add to the adjoints of the
operation's active operands from ``d_name``, by the rule of the operation (filled from its
template, see expand.py). The writer reads and changes only its ``ReverseContext``.
"""

from __future__ import annotations

import gast

from mindgrad import rules, runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler import naming
from mindgrad.compiler.transform import operations as ops
from mindgrad.compiler.transform.context import as_load
from mindgrad.compiler.transform.messages import (
    closure_given_away,
    no_attribute_rule,
    no_rule,
    reads_self_in_generated_code,
    source_text,
)
from mindgrad.compiler.transform.reverse_context import ReverseContext
from mindgrad.errors import NoGradientRuleError


class AdjointWriter(ops.OperationWriter):
    """The adjoints of classified operations, written in the context ``cx``."""

    def __init__(self, cx: ReverseContext):
        self.cx = cx

    def read(self, op, s, name, value):
        cx = self.cx
        return [cx.accumulate(value, A.load(cx.d(name)), s)] if cx.is_active(value) else []

    def concat(self, op, s, name, value):
        # sequences the code shows: x + y concatenates, x gets the head of d_name
        return self.split_sum(s, name, value, runtime.concat_grads)

    def repeat(self, op, s, name, value):
        # sequences: x * n repeats, so x gets the sum of its copies' gradients
        cx = self.cx
        if not cx.is_active(op.sequence):
            return []
        return [cx.accumulate(op.sequence, A.call(cx.helper(runtime.repeated_grads),
                                                  A.load(cx.d(name)), A.clone(op.sequence)),
                              s)]

    def operator(self, op, s, name, value):
        cx = self.cx
        if op.fn is ops.BINOPS[gast.Add] and cx.src.is_mindgrad_code and \
                cx.may_join_sequences(value) and \
                (cx.is_active(value.left) or cx.is_active(value.right)):
            # generated code (grad of grad), whose lists come from the tape, does not show
            # what they hold: runtime.add_or_concat_grads decides when it runs whether x + y
            # added or concatenated. (In the user's code an x + y of two lists the code does
            # not show is refused when it runs, by unbroadcast, saying to build the list with
            # a literal.)
            return self.split_sum(s, name, value, runtime.add_or_concat_grads)
        return cx.apply_rule(s, rules.lookup(op.fn), op.fn, op.args, {}, name)

    def split_sum(self, s, name, value, split):
        """``x + y``'s gradient as two parts of ``d_name``, by the helper ``split``."""
        cx = self.cx
        parts = [cx.fresh(part) for part in naming.concatenation_parts(name)]
        cx.pure.update(parts)
        stmts = [A.assign(A.tuple_([A.store(p) for p in parts], gast.Store()),
                          A.call(cx.helper(split), A.load(cx.d(name)), A.clone(value.left),
                                 A.clone(value.right)), s)]
        for part, operand in zip(parts, (value.left, value.right)):
            if cx.is_active(operand):
                stmts.append(cx.accumulate(operand, A.load(part), s))
        return stmts

    def constant(self, op, s, name, value):
        return self.cx.merge_check(s, name) if isinstance(op.op, gast.BitOr) else []

    def index_read(self, op, s, name, value):
        """``v = x[i]``: ``d_v`` added into ``d_x`` at ``i`` (in place in a buffer the
        gradient owns, for a basic index)."""
        cx = self.cx
        if not cx.is_active(op.base):
            return []
        key, d_out = cx.key(op.base), cx.d(name)
        if key in cx.buffers and cx.basic_index(op.index):
            target = A.subscript(A.load(cx.d(key)), as_load(A.clone(op.index)), gast.Store())
            return [A.located(gast.AugAssign(target=target, op=gast.Add(), value=A.load(d_out)),
                              s)]
        cx.indexed.add(key)
        call = A.call(cx.helper(runtime.add_at), A.load(cx.d(key)), A.clone(op.base),
                      cx.index_value(op.index), A.load(d_out))
        return [A.assign(cx.d(key), call, s)]

    def display(self, op, s, name, value):
        cx = self.cx
        item = cx.helper(runtime.item)
        pairs = zip(op.value.keys, op.value.values) if isinstance(op.value, gast.Dict) \
            else ((A.const(i), e) for i, e in enumerate(op.value.elts))
        return [cx.accumulate(v, A.call(A.clone(item), A.load(cx.d(name)), A.clone(k)), s)
                for k, v in pairs if cx.is_active(v)]

    def attr_rule(self, op, s, name, value):
        cx = self.cx
        rule = rules.lookup_attr(op.attr)
        if rule is None and not cx.weights and reads_self_in_generated_code(cx.src, value):
            return []  # a constant of the object a method of the user's was called on
        if rule is None:  # an error in the branch taken: it may be one never taken
            return cx.fail_when_run(s, no_attribute_rule(
                cx.src, s, value, f"the attribute .{op.attr} of a differentiated value has no "
                f"gradient rule; register one with @mindgrad.adjoint_attr({op.attr!r})"),
                NoGradientRuleError, f"no_rule_for_{op.attr}")
        return cx.apply_rule(s, rule, op.attr, [op.owner], {}, name)

    # ----- methods -------------------------------------------------------------------------
    # A receiver of a kind not known when the code is built is checked where it runs.

    def constant_method(self, op, s, name, value):
        return self.cx.check_receiver(s, op.func, NoGradientRuleError)

    def list_pop(self, op, s, name, value):
        # v = xs.pop(): the gradient goes back on the end of the list's gradient
        cx = self.cx
        checked = cx.check_receiver(s, op.func, NoGradientRuleError)
        key = cx.key(op.receiver)
        cx.indexed.add(key)
        return checked + [A.assign(cx.d(key), A.call(
            cx.helper(runtime.push_grad), A.load(cx.d(key)), A.load(cx.d(name)),
            A.clone(op.receiver)), s)]

    def tangent_pop(self, op, s, name, value):
        # v = tangent_pop(t_xs), in forward-mode code: as v = t_xs.pop(), where it popped
        cx = self.cx
        key = cx.key(op.receiver)
        cx.indexed.add(key)
        return [A.assign(cx.d(key), A.call(
            cx.helper(runtime.tangent_push_grad), A.load(cx.d(key)), A.load(cx.d(name)),
            A.clone(op.receiver)), s)]

    def method_call(self, op, s, name, value):
        cx = self.cx
        checked = cx.check_receiver(s, op.func, NoGradientRuleError)
        rule = rules.lookup_method(op.method)
        if rule is None:  # an error in the branch taken: it may be one never taken
            return checked + cx.fail_when_run(
                s, f"the method .{op.method}() has no gradient rule; register one with "
                   f"@mindgrad.adjoint_method({op.method!r})", NoGradientRuleError,
                f"no_rule_for_{op.method}")
        return cx.after_check(
            s, checked, lambda: cx.apply_rule(s, rule, op.method, op.args, op.keywords, name),
            NoGradientRuleError, op.method)

    # ----- functions -----------------------------------------------------------------------

    def unknown_function(self, op, s, name, value):
        return self.cx.fail_when_run(
            s, f"cannot tell which function {source_text(op.func)} is; call a module-level "
               "function, a method of an array, or a local lambda/def", NameError,
            "unknown_function")

    def constant_call(self, op, s, name, value):
        return []

    def function_call(self, op, s, name, value):
        if op.target is runtime.Closure:
            self.cx.fail(s, closure_given_away(value), NoGradientRuleError)
        rule, fn, args = op.rule(rules.lookup)
        if rule is None:
            self.cx.fail(s, no_rule(op.target), NoGradientRuleError)
        return self.cx.apply_rule(s, rule, fn, args, op.keywords, name)

    def unsupported(self, op, s, name, value):
        self.cx.fail(s, f"mindgrad has no adjoint for a {type(value).__name__} expression",
                     NoGradientRuleError)
