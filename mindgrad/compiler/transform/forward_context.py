"""What forward mode knows while it writes one function: ``ForwardContext``.

It extends the ``FunctionContext`` every transformation has with forward mode's own state, all
of it set in ``__init__``: the tangent variable of each name, and the helpers that update a
tangent list in step with its values. Its methods are those the writers share: the tangent of
an atom, accumulating into a tangent, applying a tangent rule. ``ForwardInput`` is what the
pass is given and ``TangentCode`` what it returns (see forward.py for the writers).
"""

from __future__ import annotations

import dataclasses

import gast

from mindgrad import rules, runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler import naming
from mindgrad.compiler.facts.analysis import Analysis
from mindgrad.compiler.front import source
from mindgrad.compiler.transform.context import FunctionContext
from mindgrad.compiler.transform.expand import instantiate_tangent
from mindgrad.compiler.transform.messages import describe
from mindgrad.errors import NoTangentRuleError
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


class ForwardContext(FunctionContext):
    """One function differentiated in forward mode."""

    def __init__(self, job: ForwardInput, names: naming.NameGen, callees):
        super().__init__(job.src, job.fdef, job.active_params, names, callees, job.analysis,
                         rule_of=rules.lookup_tangent, arguments_shared=job.arguments_shared)
        self.tnames = {}  # name -> its tangent variable

    def t(self, key: str) -> str:
        """The tangent variable of a local name: ``t_x``."""
        if key not in self.tnames:
            self.tnames[key] = self.fresh(naming.tangent(key))
            self.pure.add(self.tnames[key])
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

    def apply(self, s, rule, fn, args, keywords, name, t_out):
        """The statements of the tangent ``rule`` of ``name = fn(*args, **keywords)`` in the
        statement ``s``, accumulating into ``t_out``."""
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
            # user's rule passing it to a helper that does not declare the zero
            # (Rule.reads_zero_unsafely; mindgrad's own rules all take it) runs only on a value
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
