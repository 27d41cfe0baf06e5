"""Part of stage 5 (forward mode): the tangent of each kind of operation (operations.py).

``TangentWriter.write(op, s, name, value)`` gives the statements computing ``t_name``, the
tangent of the assignment ``s``, ``name = value``, classified as ``op``: from the tangent rule
of the operation (filled from its template, see expand.py), accumulating into ``t_name``, which
starts at 0. The writer reads and changes only its ``ForwardContext``.
"""

from __future__ import annotations

import gast

from mindgrad import rules, runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler.transform import operations as ops
from mindgrad.compiler.transform.forward_context import ForwardContext
from mindgrad.compiler.transform.messages import (
    closure_given_away,
    no_attribute_rule,
    no_rule,
    reads_self_in_generated_code,
    source_text,
)
from mindgrad.errors import NoTangentRuleError


class TangentWriter(ops.OperationWriter):
    """The tangents of classified operations, written in the context ``cx``."""

    def __init__(self, cx: ForwardContext):
        self.cx = cx

    def read(self, op, s, name, value):
        return [A.assign(self.cx.t(name), self.cx.tangent_of(value))]

    def concat(self, op, s, name, value):
        # sequences: x + y concatenates, and so do their tangents
        cx = self.cx
        return [A.assign(cx.t(name), A.call(cx.helper(runtime.concat_tangents),
                                            cx.tangent_of(op.left), A.clone(op.left),
                                            cx.tangent_of(op.right), A.clone(op.right)))]

    def repeat(self, op, s, name, value):  # x * n: the rule of * repeats the tangent list
        return self.operator(ops.Operator(ops.BINOPS[gast.Mult], [value.left, value.right]),
                             s, name, value)

    def operator(self, op, s, name, value):
        return self.cx.apply(s, rules.lookup_tangent(op.fn), op.fn, op.args, {}, name,
                             self.cx.t(name))

    def constant(self, op, s, name, value):
        return self.cx.merge_check(s, name) if isinstance(op.op, gast.BitOr) else []

    def index_read(self, op, s, name, value):
        cx = self.cx
        if not cx.is_active(op.base):
            return []
        return [A.assign(cx.t(name), A.call(cx.helper(runtime.item), cx.tangent_of(op.base),
                                            cx.index_value(op.index)))]

    def display(self, op, s, name, value):
        """The tangent of a tuple, list or dict display: the display of its items' tangents."""
        cx, value = self.cx, op.value
        if isinstance(value, gast.Dict):
            tangent = gast.Dict(keys=[A.clone(k) for k in value.keys],
                                values=[cx.tangent_of(v) for v in value.values])
        else:
            elts = [cx.tangent_of(e) for e in value.elts]
            tangent = gast.Tuple(elts=elts, ctx=gast.Load()) if isinstance(value, gast.Tuple) \
                else gast.List(elts=elts, ctx=gast.Load())
        return [A.assign(cx.t(name), tangent)]

    def attr_rule(self, op, s, name, value):
        cx = self.cx
        rule = rules.lookup_tangent_attr(op.attr)
        if rule is None and reads_self_in_generated_code(cx.src, value):
            # a constant of the object a method of the user's was called on: no tangent
            return [A.assign(cx.t(name), A.zero())]
        if rule is None:  # an error in the branch taken: it may be one never taken
            return cx.fail_when_run(s, no_attribute_rule(
                cx.src, s, value, f"the attribute .{op.attr} has no tangent rule; register one "
                f"with @mindgrad.rules.tangent_attr({op.attr!r})"),
                NoTangentRuleError, f"no_rule_for_{op.attr}")
        return cx.apply(s, rule, op.attr, [op.owner], {}, name, cx.t(name))

    # ----- methods -------------------------------------------------------------------------
    # A receiver of a kind not known when the code is built is checked where it runs.

    def constant_method(self, op, s, name, value):
        return self.cx.check_receiver(s, op.func, NoTangentRuleError)

    def list_pop(self, op, s, name, value):  # v = xs.pop(): the tangent list pops in step
        cx = self.cx
        return cx.check_receiver(s, op.func, NoTangentRuleError) + [A.assign(
            cx.t(name), A.call(cx.helper(runtime.tangent_pop), cx.tangent_of(op.receiver)))]

    def tangent_pop(self, op, s, name, value):  # a pop of a tangent list: its tangent pops too
        cx = self.cx
        return [A.assign(cx.t(name), A.call(cx.helper(runtime.tangent_pop),
                                            cx.tangent_of(op.receiver)))]

    def method_call(self, op, s, name, value):
        cx = self.cx
        checked = cx.check_receiver(s, op.func, NoTangentRuleError)
        rule = rules.lookup_tangent_method(op.method)
        if rule is None:  # an error in the branch taken: it may be one never taken
            return checked + cx.fail_when_run(
                s, f"the method .{op.method}() has no tangent rule", NoTangentRuleError,
                f"no_rule_for_{op.method}")
        return cx.after_check(
            s, checked, lambda: cx.apply(s, rule, op.method, op.args, op.keywords, name,
                                         cx.t(name)),
            NoTangentRuleError, op.method)

    # ----- functions -----------------------------------------------------------------------

    def unknown_function(self, op, s, name, value):
        # a function held in a variable: an error in the branch taken
        return self.cx.fail_when_run(s, f"cannot tell which function {source_text(op.func)} "
                                        "is", NameError, "unknown_function")

    def constant_call(self, op, s, name, value):
        return []

    def function_call(self, op, s, name, value):
        if op.target is runtime.Closure:
            self.cx.fail(s, closure_given_away(value), NoTangentRuleError)
        rule, fn, args = op.rule(rules.lookup_tangent)
        if rule is None:
            self.cx.fail(s, no_rule(op.target, "tangent"), NoTangentRuleError)
        return self.cx.apply(s, rule, fn, args, op.keywords, name, self.cx.t(name))

    def unsupported(self, op, s, name, value):
        self.cx.fail(s, f"mindgrad has no tangent for a {type(value).__name__} expression",
                     NoTangentRuleError)
