"""Stage "batch" of ``vmap``: the normalized function rewritten to compute every example at
once, each batched value holding its examples along axis 0.

Output guarantees:

* The batched function takes the function's parameters, then ``batch_size``; batched arguments
  come with their batch axis first, and it returns the function's result with the batch axis
  first in every leaf.
* Each assignment whose operation has a batching rule (batch_operations.py) computes all the
  examples in one NumPy expression; a value the same in every example stays unbatched, and is
  given the batch axis where a batched name takes it.
* Everything else runs once per example, exactly as written: an assignment without a rule
  stacks the examples' values; a branch, loop or ``while`` whose test or items differ from one
  example to another becomes a local function called once per example
  (``runtime.batching.each_example``). ``looped`` lists each with its reason, for the stage's
  dump: the numbers are the loop's either way.
"""

from __future__ import annotations

import dataclasses

import gast
import numpy as np

from mindgrad.compiler import astutil as A
from mindgrad.compiler import naming
from mindgrad.compiler.facts import aliasing, analysis
from mindgrad.compiler.facts.analysis import Resolver
from mindgrad.compiler.finish import assemble
from mindgrad.compiler.transform import batch_facts as F
from mindgrad.compiler.transform import batch_scope
from mindgrad.compiler.transform.batch_operations import BatchRules, parse, text
from mindgrad.runtime import batching


class Unbatchable(Exception):
    """The function cannot be written batched, even with loops per statement: ``vmap`` runs
    the whole function once per example instead."""


@dataclasses.dataclass
class Batched:
    fdef: gast.FunctionDef
    looped: list            # (line, what) of each statement run once per example
    batched: set            # the names holding batched values
    namespace: naming.Namespace


class BatchWriter:
    """Writes the batched function of ``fdef`` (normalized; ``src`` its source) for parameters
    of the examples' ``params`` (name -> Info) of which ``batched`` carry the batch axis."""

    rules_class = BatchRules
    facts_class = F.Facts
    size_name = "batch_size"

    def __init__(self, src, fdef, params, batched, names: naming.NameGen, name, examples=()):
        self.src, self.fdef, self.name = src, fdef, name
        self.params = [a.id for a in fdef.args.args]
        if fdef.args.vararg or fdef.args.kwarg or fdef.args.kwonlyargs:
            raise Unbatchable("a function with *args, **kw or keyword-only parameters")
        check_writes(src, fdef, dict(zip(self.params, examples)))
        batch_scope.propagate_literals(fdef)
        local_names = set(self.params) | A.assigned_names(fdef.body)
        self.namespace = naming.Namespace(src, local_names, names)
        self.resolve = Resolver(src, local_names)
        self.facts = self.facts_class(fdef, params, batched, self.resolve)
        self.fresh = names
        self.size = names(self.size_name)
        self.np = self.namespace.bind(np, "np")
        self.rules = self.rules_class(self.facts, self.np, self.size,
                                      self.namespace.bind(batching.spread, "spread"))
        self.written = batch_scope.written_bases(fdef.body)
        self.looped = []
        self.input_batched = set(batched)

    def write(self) -> Batched:
        facts = self.facts
        body = []
        for p in self.params:  # a parameter given per example later: the same in each at first
            if p in facts.batched and p not in self.input_batched:
                body.extend(self.spread_stmt(p, self.fdef))
        body += self.block(self.fdef.body[:-1])
        ret = self.fdef.body[-1]
        value = ret.value
        if isinstance(value, (gast.Tuple, gast.List, gast.Dict)):
            result = self.rules.value(value)  # each item given the batch axis
            if result is None:
                raise Unbatchable("a result display without a batched form")
        elif facts.reads_batched(value):
            result = text(value)
        else:
            result = self.rules.spread(value)
        body.append(A.located(gast.Return(value=parse(result)), ret))
        fdef = assemble.function_def(
            self.name, assemble.arguments_of(self.params + [self.size], []), body)
        A.located(fdef, self.fdef)
        return Batched(fdef, self.looped, set(facts.batched), self.namespace)

    # ----- blocks -------------------------------------------------------------------------------

    def block(self, stmts):
        out = []
        for s in stmts:
            out.extend(A.located(n, s) for n in self.stmt(s))
        return out

    def stmt(self, s):
        facts = self.facts
        if isinstance(s, (gast.If, gast.For, gast.While)):
            if id(s) in facts.looped:
                return self.each_example(s, "its test or items differ between examples")
            s.body = self.block(s.body)
            s.orelse = self.block(s.orelse)
            if isinstance(s, gast.For) and s.target.id in facts.batched:
                s.body = self.spread_stmt(s.target.id, s) + s.body
            return [s]
        if isinstance(s, gast.Assign):
            target = s.targets[0]
            if isinstance(target, gast.Name):
                return self.assign(s, target.id)
            return self.setitem(s, target)
        if isinstance(s, gast.Expr):
            return self.expr(s)
        if isinstance(s, gast.Assert) and facts.reads_batched(s):
            return self.each_example(s, "an assert on each example")
        return [s]

    def assign(self, s, name):
        facts = self.facts
        if not facts.reads_batched(s.value):
            if name in facts.batched:
                return [s] + self.spread_stmt(name, s)
            return [s]
        value = self.rules.value(s.value)
        if value is None and (facts.shape_only(s.value) or facts.constant_valued(s.value)):
            # the facts hold it the same in every example: no per-example stack may stand in
            raise Unbatchable(f"no rule for {text(s.value)}, which is the same in every example")
        if value is None:
            return [self.stacked(s, name)]
        out = [A.assign(name, parse(value), s)]
        if facts.constant_valued(s.value) and name in facts.batched:
            out += self.spread_stmt(name, s)
        return out

    def setitem(self, s, target):
        facts = self.facts
        base = target.value
        if not isinstance(target, gast.Subscript) or not isinstance(base, gast.Name) or \
                base.id not in facts.batched:
            return [s] if not facts.reads_batched(s) else \
                self.each_example(s, "a write into a value of another kind")
        kind = self.rules.kind(base)
        if kind in (F.SEQ, F.DICT) and not facts.reads_batched(target.slice):
            return [gast.Assign(targets=[target], value=parse(self.rules.spread(s.value)),
                                type_comment=None)]
        if kind != F.ARRAY or facts.reads_batched(target.slice):
            return self.each_example(s, "an index that differs between examples")
        index = self.rules.index_text(base, target.slice)
        value, value_batched = self.rules.written(s.value)
        if index is not None and value_batched:
            selected = F.index_ndim(facts.ndim(base), facts.index_parts(target.slice))
            ndim = facts.ndim(s.value)
            if selected is None or ndim is None or ndim > selected or \
                    (facts.of(s.value) or F.UNKNOWN).kind != F.ARRAY:
                index = None
            elif ndim < selected:
                value = f"{value}[:{', None' * (selected - ndim)}]"
        if index is None:
            return self.each_example(s, "no batching rule for this write")
        return [gast.Assign(targets=[parse(index)], value=parse(value), type_comment=None)]

    def expr(self, s):
        facts = self.facts
        call = s.value
        if not facts.reads_batched(s):
            return [s]
        func = call.func if isinstance(call, gast.Call) else None
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and \
                func.value.id in facts.batched and self.rules.kind(func.value) == F.SEQ:
            if func.attr == "append" and len(call.args) == 1 and not call.keywords:
                return [A.expr_stmt(parse(f"{text(func)}({self.rules.spread(call.args[0])})"),
                                    s)]
            if func.attr == "pop" and not call.args:
                return [s]
        return self.each_example(s, "a call made once per example")

    # ----- per example --------------------------------------------------------------------------

    def example_of(self, node, index):
        """``node`` with each batched name read replaced by its example ``index``."""
        facts, rules = self.facts, self.rules
        example = self.helper(batching.example)
        node = A.clone(node)

        class Slicer(gast.NodeTransformer):
            def visit_Name(self, n):
                if isinstance(n.ctx, gast.Load) and n.id in facts.batched:
                    if rules.kind(n) == F.ARRAY:
                        return parse(f"{n.id}[{index}]")
                    return parse(f"{example}({n.id}, {index})")
                return n

        return Slicer().visit(node)

    def helper(self, fn):
        return self.namespace.bind(fn, fn.__name__)

    def stacked(self, s, name):
        """``name = value`` without a rule: the value of each example, stacked."""
        index = self.fresh("e")
        self.looped.append((s.lineno, f"{text(s.value)}: no batching rule"))
        value = text(self.example_of(s.value, index))
        stacked = self.helper(batching.stacked)
        return A.assign(name, parse(f"{stacked}([{value} for {index} in range({self.size})])"),
                        s)

    def each_example(self, s, why):
        """A statement run once per example, as a local function of what it reads."""
        facts = self.facts
        for node in gast.walk(s):
            if isinstance(node, (gast.Break, gast.Continue)) and not _inside_loop(s, node):
                raise Unbatchable("a break out of a loop whose examples differ")
        self.looped.append((s.lineno, why))
        local = self.namespace.local_names
        changed = (A.assigned_names([s]) | batch_scope.written_bases(s)) & local
        # what it reads of the function's values: a batched one sliced, one it assigns given
        passed = sorted(n for n in batch_scope.exposed_reads([s]) & local
                        if n in facts.batched or n in changed)
        # a value the same in every example that it changes in place would be changed once
        # per example, each run seeing the others' changes: the loop runs instead
        shared = sorted(n for n in passed if n not in facts.batched and
                        n in batch_scope.written_bases(s))
        if shared:
            raise Unbatchable(f"{shared[0]} is changed in place by a statement run once per "
                              f"example, and is the same in every example")
        # what it gives back: the values it changes that the rest of the function reads
        assigned = sorted(n for n in changed if n in self.read_elsewhere(s))
        fn = self.fresh(f"each_{self.name}")
        result = parse("(" + "".join(f"{n}, " for n in assigned) + ")")
        local = assemble.function_def(fn, assemble.arguments_of(passed, []),
                                      [s, gast.Return(value=result)])
        run = self.helper(batching.each_example)
        flags = tuple(n in facts.batched for n in passed)
        call = parse(f"{run}({fn}, ({''.join(p + ', ' for p in passed)}), {flags!r}, "
                     f"{self.size})")
        target = parse("(" + "".join(f"{n}, " for n in assigned) + ")")
        A.located(local, s)
        if not assigned:
            return [local, A.expr_stmt(call, s)]
        target.ctx = gast.Store()
        for e in target.elts:
            e.ctx = gast.Store()
        return [local, gast.Assign(targets=[target], value=call, type_comment=None)]

    def read_elsewhere(self, s):
        """The names read outside the statement ``s`` (and its own, when it sits in a loop:
        its next run reads them)."""
        outside = set()
        stack = [(self.fdef, False)]
        while stack:
            node, in_loop = stack.pop()
            if node is s:
                if in_loop:
                    outside |= A.names_in(s, gast.Load)
                continue
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                outside.add(node.id)
            loop = in_loop or isinstance(node, (gast.For, gast.While))
            stack.extend((c, loop) for c in gast.iter_child_nodes(node))
        return outside

    def spread_stmt(self, name, like):
        """``name``, the same in every example so far, given the batch axis. A value written
        into later is copied: it must be one the function made (a view of another value
        would part from it: the loop runs instead)."""
        if name in self.written and not (isinstance(like, gast.Assign) and
                                         _fresh(like.value, self.resolve)):
            raise Unbatchable(f"{name} is written into, and may share its data with another "
                              f"value, before it differs between examples")
        node = gast.Name(name, gast.Load(), None, None)
        value = self.rules.spread(node, writable=name in self.written, now=True)
        return [A.assign(name, parse(value), like)]


def check_writes(src, fdef, examples):
    """Raise ``Unbatchable`` where normalizing rewrote an in-place operator (``a *= b`` as
    ``a = a * b``) on an array that shares its memory with a value read later, or that may be
    the caller's: the aliasing facts the derivatives check (facts/aliasing.py), whose every
    refusal leaves the function to the loop, which runs it as written."""
    scalars = [p for p, v in examples.items()
               if isinstance(v, (bool, int, float, complex, np.number, np.bool_))]
    containers = [p for p, v in examples.items() if isinstance(v, (tuple, list, dict))]
    arrays = {p: v.ndim for p, v in examples.items() if isinstance(v, np.ndarray)}
    facts = analysis.analyse(src, fdef, [], scalars, containers, None, arrays)
    local_names = set(examples) | A.assigned_names(fdef.body)
    resolve = Resolver(src, local_names)
    resolve.values = facts.values

    def refuse(node, message, *rest):
        raise Unbatchable(message)

    def caller_write(s, name, shared=None):
        raise Unbatchable(f"an in-place operator on {name!r}, which may be an argument's array")

    aliasing.Aliases(fdef, facts.scalars, facts.containers, resolve, refuse,
                     set(examples) - facts.scalars, caller_write)


FRESH = frozenset({np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like,
                   np.empty_like, np.full_like, np.array, np.copy, np.arange, np.eye,
                   np.linspace, np.identity, np.stack, np.concatenate})


def _fresh(value, resolve):
    """Whether ``value`` is an array (or list) made by the expression itself: an arithmetic
    result, a display, a copy, a constructor."""
    if isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.List, gast.Tuple,
                          gast.Constant)):
        return True
    if isinstance(value, gast.Call):
        if isinstance(value.func, gast.Attribute) and value.func.attr == "copy":
            return True
        return resolve(value.func) in FRESH or resolve(value.func) is list
    return False


def _inside_loop(top, node):
    for loop in gast.walk(top):
        if isinstance(loop, (gast.For, gast.While)) and any(n is node for n in gast.walk(loop)):
            return True
    return False
