"""Stage 6, optimize: zero propagation, copy propagation, dead code, constant folding, and
(where no large array reuses buffers) a gradient's terms written as one sum, ``x = a + b`` for
``x = a; x = x + b``.

Works on the backward sweep, where every statement assigning only adjoint names is *pure*
(no side effects) and linear in the one gradient it reads. Output guarantee: the statements
compute the same gradients; an accumulation into a gradient known to be zero became a plain
assignment ("first write assigns"), contributions of known-zero gradients are gone, and pure
statements whose results are never read are removed. Statements that pop the tape, restore
values, or call a generated backward function are never removed. A rule that cannot take the
symbolic zero arrives guarded by ``if not is_zero(d_v):``; the guard is dropped where ``d_v``
is known to hold a value on every path (in the user's code; mindgrad's own keeps them all).
"""

from __future__ import annotations

import operator

import gast

from mindgrad.compiler import astutil as A
from mindgrad.compiler.marks import is_comment

_IMPURE_METHODS = frozenset({"pop", "append"})


class Optimizer:
    def __init__(self, adjoint_names, impure_calls, owned, accumulators, add=None,
                 is_zero=None, array_helper=lambda name: None, merge=False):
        self.adjoint = set(adjoint_names)
        self.merge = merge  # write x = a; x = x + b as x = a + b (see merged)
        self.is_zero = is_zero  # the name of runtime.is_zero, which guards zero-unsafe rules
        # what a helper returns: "always" an array, an array given one ("keeps"), or None
        self.array_helper = array_helper
        self.add = add  # the name of runtime.add: add(a, b) accumulates b into a
        self.impure_calls = set(impure_calls)
        self.owned = set(owned)
        self.accumulators = set(accumulators)  # helpers whose 1st argument is the accumulator
        self.changes = 0
        self._pure = {}  # id(statement) -> (statement, purity); a rewrite keeps purity
        self._names = {}  # id(simple statement) -> (statement, loads, stores); see names()

    # ----- classification ------------------------------------------------------------------

    def is_pure(self, s) -> bool:
        key = id(s)
        cached = self._pure.get(key)
        if cached is not None and cached[0] is s:
            return cached[1]
        result = self._is_pure(s)
        self._pure[key] = (s, result)
        return result

    def _is_pure(self, s) -> bool:
        if not isinstance(s, gast.Assign):
            return False
        stores = A.names_in(s.targets, gast.Store)
        if not stores or not stores <= self.adjoint:
            return False
        for sub in A.walk(s.value):
            if isinstance(sub, gast.Call):
                f = sub.func
                if isinstance(f, gast.Attribute) and f.attr in _IMPURE_METHODS:
                    return False
                if isinstance(f, gast.Name) and f.id in self.impure_calls:
                    return False
        return True

    def names(self, s):
        """(loads, stores) of a simple statement, remembered until it is rewritten."""
        cached = self._names.get(id(s))
        if cached is not None and cached[0] is s:
            return cached[1], cached[2]
        loads, stores = A.names_in(s, gast.Load), A.names_in(s, gast.Store)
        self._names[id(s)] = (s, loads, stores)
        return loads, stores

    def _rewritten(self, node):
        for sub in A.walk(node):
            self._names.pop(id(sub), None)

    def _accumulation(self, s):
        """(target, contribution nodes) if ``s`` adds into its own target, else None."""
        if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
            return None
        t, v = s.targets[0].id, s.value
        if isinstance(v, gast.BinOp) and isinstance(v.op, gast.Add) and \
                isinstance(v.left, gast.Name) and v.left.id == t:
            return t, [v.right]
        if isinstance(v, gast.Call) and isinstance(v.func, gast.Name) and \
                v.func.id in self.accumulators and v.args and \
                isinstance(v.args[0], gast.Name) and v.args[0].id == t:
            return t, v.args[1:]
        return None

    # ----- zero propagation ----------------------------------------------------------------

    def flow(self, stmts, facts, rewrite, simple, branch=None):
        """A forward walk of ``stmts`` holding ``facts``, names a property surely holds for:
        a branch's two sides meet in what both keep, a loop's body runs to a fixed point.
        ``simple(s, facts, rewrite)`` gives (statements kept, facts after) for a statement
        that is neither; ``branch(s, facts, rewrite)`` may take an ``if`` whole the same way,
        or return None. Returns (statements, facts on exit). ``facts`` is the walk's own: the
        statements update it in place (a copy per statement made long code quadratic), and
        each side of a branch or loop gets a copy."""
        out = []
        for s in stmts:
            if isinstance(s, gast.If):
                taken = branch(s, facts, rewrite) if branch is not None else None
                if taken is not None:
                    kept, facts = taken
                    out.extend(kept)
                    continue
                body, f1 = self.flow(s.body, set(facts), rewrite, simple, branch)
                orelse, f2 = self.flow(s.orelse, set(facts), rewrite, simple, branch)
                if rewrite:
                    s.body, s.orelse = body or [gast.Pass()], orelse
                facts = f1 & f2
                out.append(s)
            elif isinstance(s, (gast.For, gast.While)):
                entry = set(facts)
                while True:
                    _, after = self.flow(s.body, set(entry), False, simple, branch)
                    new = facts & after
                    if new == entry:
                        break
                    entry = new
                body, after = self.flow(s.body, set(entry), rewrite, simple, branch)
                if rewrite:
                    s.body = body or [gast.Pass()]
                facts = facts & after
                out.append(s)
            else:
                kept, facts = simple(s, facts, rewrite)
                out.extend(kept)
        return out, facts

    def zeros(self, stmts, zero, rewrite=True):
        """Zero propagation: ``zero`` holds the gradients known to be the symbolic 0."""
        return self.flow(stmts, zero, rewrite, self._zero_stmt, self._zero_guard)

    def _zero_guard(self, s, zero, rewrite):
        """``if not is_zero(d_v):`` with ``d_v`` known to be 0 never runs its body: gone."""
        guarded = self._guarded(s)
        if guarded is None or guarded not in zero:
            return None
        self.changes += rewrite
        return [], zero

    def _zero_stmt(self, s, zero, rewrite):
        if not isinstance(s, gast.Assign):
            zero -= self.names(s)[1]
            return [s], zero
        stores = self.names(s)[1]
        if self.is_pure(s):
            acc = self._accumulation(s)
            if acc is not None:
                target, parts = acc
                if any(A.names_in(p, gast.Load) & zero for p in parts):
                    self.changes += rewrite
                    return [], zero  # adds a zero: nothing changes
                if target in zero and rewrite and (
                        isinstance(s.value, gast.BinOp) or
                        (s.value.func.id == self.add and target not in self.owned)):
                    # the first contribution: add() would copy it, which only an accumulator
                    # updated in place (owned) needs
                    s.value = parts[0]
                    self._rewritten(s)
                    self.changes += 1
                zero.discard(target)
                return [s], zero
            if isinstance(s.value, gast.Constant) and s.value.value == 0:
                zero |= stores
                return [s], zero
            loads = self.names(s)[0]
            gradients = loads & self.adjoint
            if gradients and gradients <= zero:
                # linear in gradients that are all zero (push_grad(d_xs, d_v) reads two: it is
                # zero only when both are): the result is zero
                if isinstance(s.targets[0], gast.Name):
                    if rewrite:
                        s.value = A.zero()
                        self._rewritten(s)
                        self.changes += 1
                    zero |= stores
                    return [s], zero
                self.changes += rewrite
                zero |= stores - loads
                return [], zero
        zero -= stores
        return [s], zero

    # ----- guards of zero-unsafe rules ------------------------------------------------------

    def arrays(self, stmts, known, rewrite=True):
        """Drop the guards ``if not is_zero(d_v):`` where ``d_v`` is known to hold a value,
        not the symbolic 0: ``known`` holds such names on entry; returns (stmts, known on
        exit). A name is known after ``d_v = e`` where ``e`` computes from a known gradient
        (arithmetic, a NumPy function or method, a helper that keeps arrays)."""
        return self.flow(stmts, known, rewrite, self._array_stmt, self._array_guard)

    def _array_guard(self, s, known, rewrite):
        guarded = self._guarded(s)
        if guarded is None or guarded not in known:
            return None
        self.changes += rewrite
        return self.arrays(s.body, known, rewrite)  # the guard always passes: its body

    def _array_stmt(self, s, known, rewrite):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and \
                len(s.targets) == 1:
            target = s.targets[0].id
            if self._holds_array(s.value, known):
                known.add(target)
            else:
                known.discard(target)
            return [s], known
        known -= self.names(s)[1]
        return [s], known

    def _guarded(self, s):
        """The gradient ``s`` tests when it is ``if not is_zero(d_v):`` alone, else None."""
        test = s.test
        if s.orelse or not (isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not)):
            return None
        call = test.operand
        if isinstance(call, gast.Call) and isinstance(call.func, gast.Name) and \
                call.func.id == self.is_zero and len(call.args) in (1, 2) and \
                isinstance(call.args[0], gast.Name):
            return call.args[0].id
        return None

    def _holds_array(self, node, known) -> bool:
        """Whether ``node`` cannot be the symbolic 0: it reads a gradient in ``known``
        through arithmetic, NumPy functions and methods, and helpers that keep arrays."""
        if isinstance(node, gast.Name):
            return node.id in known
        if isinstance(node, gast.BinOp):
            return self._holds_array(node.left, known) or self._holds_array(node.right, known)
        if isinstance(node, gast.UnaryOp):
            return self._holds_array(node.operand, known)
        if isinstance(node, gast.Call):
            func, operands = node.func, list(node.args)
            if isinstance(func, gast.Name):
                kind = self.array_helper(func.id)
                if kind == "always":
                    return True
                if kind != "keeps":
                    return False
            elif isinstance(func, gast.Attribute) and func.attr not in _IMPURE_METHODS:
                operands.append(func.value)  # a method of a known gradient
            else:
                return False
            return any(self._holds_array(a, known) for a in operands)
        return False

    # ----- copy propagation ----------------------------------------------------------------

    def copies(self, stmts):
        """Reads of ``a`` after a copy ``a = b`` read ``b``, until ``a`` or ``b`` is assigned
        again (a branch or loop assigning either keeps its reads of ``a``). One pass in order,
        the copies in effect held in a map, so long straight-line code costs linear time."""
        active = {}  # a -> b
        for s in stmts:
            compound = isinstance(s, (gast.If, gast.For, gast.While))
            assigned = A.assigned_names(s) if compound else self.names(s)[1]
            if compound:
                active = _without(active, assigned)
            if active:
                renamed = _rename_loads(s, active)
                if renamed:
                    self._rewritten(s)
                    self.changes += renamed
            for child in ("body", "orelse"):
                if hasattr(s, child) and isinstance(getattr(s, child), list):
                    self.copies(getattr(s, child))
            if assigned:
                active = _without(active, assigned)
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and \
                    isinstance(s.value, gast.Name):
                a, b = s.targets[0].id, s.value.id
                if a in self.adjoint and a not in self.owned and b not in self.owned and a != b:
                    active[a] = b
        return stmts

    def merged(self, stmts):
        """``x = a`` then ``x = x + b`` (``b`` not reading ``x``), both pure, one right after
        the other: ``x = a + b``, the sum as a person writes it (the same operations in the
        same order). Not where large arrays reuse buffers: ``a + b`` would hold a third array
        where ``x = x + b`` adds into ``x``'s (finish/reuse.py)."""
        out = []
        for s in stmts:
            for child in ("body", "orelse"):
                if isinstance(getattr(s, child, None), list):
                    setattr(s, child, self.merged(getattr(s, child)))
            prev = out[-1] if out else None
            if prev is not None and _adds_onto(prev, s) and self.is_pure(prev) and \
                    self.is_pure(s):
                prev.value = gast.BinOp(left=prev.value, op=gast.Add(), right=s.value.right)
                self._rewritten(prev)
                self.changes += 1
                continue
            out.append(s)
        return out

    # ----- dead code -----------------------------------------------------------------------

    def dead(self, stmts, live, rewrite=True):
        out = []
        for s in reversed(stmts):
            if is_comment(s):
                out.append(s)
                continue
            if isinstance(s, gast.If):
                body, l1 = self.dead(s.body, set(live), rewrite)
                orelse, l2 = self.dead(s.orelse, set(live), rewrite)
                if not _code(body) and not _code(orelse):
                    continue
                if rewrite:
                    s.body, s.orelse = body or [gast.Pass()], orelse
                live = l1 | l2 | A.names_in(s.test, gast.Load)
                out.append(s)
                continue
            if isinstance(s, (gast.For, gast.While)):
                header = A.names_in(s.iter if isinstance(s, gast.For) else s.test, gast.Load)
                entry = set(live) | header
                while True:
                    _, inner = self.dead(s.body, set(entry), False)
                    new = entry | inner
                    if new == entry:
                        break
                    entry = new
                body, inner = self.dead(s.body, set(entry), rewrite)
                if not _code(body):
                    continue
                if rewrite:
                    s.body = body
                live = entry | inner
                out.append(s)
                continue
            loads, stores = self.names(s)
            stores = stores if isinstance(s, gast.Assign) else set()
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and \
                    isinstance(s.value, gast.Name) and s.value.id == s.targets[0].id:
                self.changes += rewrite
                continue  # x = x
            if self.is_pure(s) and not (stores & live):
                self.changes += rewrite
                continue
            live -= stores  # in place: the caller gave a copy (see flow)
            live |= loads
            out.append(s)
        out.reverse()
        return _drop_orphan_comments(out), live

    # ----- constant folding ----------------------------------------------------------------

    def fold(self, stmts):
        folder = Fold()
        return [folder.visit(s) for s in stmts]

    def run(self, stmts, live_out, zero=(), arrays=()):
        """Optimize ``stmts``; ``zero`` holds gradients known zero on entry, ``arrays`` those
        known to hold a value (never the symbolic 0)."""
        stmts = self.fold(stmts)
        for _ in range(8):
            self.changes = 0
            stmts, _ = self.zeros(stmts, set(zero))
            if self.is_zero is not None:
                stmts, _ = self.arrays(stmts, set(arrays))
            if self.merge:
                stmts = self.merged(stmts)
            stmts = self.copies(stmts)
            stmts, _ = self.dead(stmts, set(live_out))
            if not self.changes:
                break
        return stmts


_COMPARE = {gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Lt: operator.lt,
            gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge}


def _number(node) -> bool:
    """Whether ``node`` is a constant int, float or bool (a comparison folded)."""
    return isinstance(node, gast.Constant) and type(node.value) in (int, float, bool)


class Fold(A.Transformer):
    """Constant folding of the numbers a rule's template meets (``2 - 1 + (2 == 0)``)."""

    def visit_Compare(self, node):
        # a rule's guard on a constant, as x ** (y - 1 + (y == 0)) with y = 2
        self.generic_visit(node)
        if len(node.ops) == 1 and type(node.ops[0]) in _COMPARE and \
                _number(node.left) and _number(node.comparators[0]):
            return A.const(_COMPARE[type(node.ops[0])](node.left.value,
                                                       node.comparators[0].value))
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right = node.left, node.right
        if _number(left) and _number(right) and \
                not (type(left.value) is bool and type(right.value) is bool):
            ops = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul}
            value = ops[type(node.op)](left.value, right.value) if type(node.op) in ops else None
            if A.is_plain_literal(value) and value is not None:
                return A.const(value)
        if isinstance(node.op, gast.Pow) and isinstance(right, gast.Constant) and \
                right.value == 1 and not isinstance(right.value, bool):
            return left
        return node


#: the most terms a sum merged into one statement reaches (a line a reader takes in at once;
#: a long sum stays a statement a term)
_MERGED_TERMS = 4


def _adds_onto(first, then) -> bool:
    """Whether ``first`` is ``x = a`` (not the zero, a sum of fewer than ``_MERGED_TERMS``
    terms) and ``then`` is ``x = x + b`` with ``b`` not reading ``x``."""
    if not (isinstance(first, gast.Assign) and isinstance(then, gast.Assign) and
            len(first.targets) == 1 and len(then.targets) == 1 and
            isinstance(first.targets[0], gast.Name) and isinstance(then.targets[0], gast.Name)):
        return False
    x, v = first.targets[0].id, then.value
    terms, left = 1, first.value
    while isinstance(left, gast.BinOp) and isinstance(left.op, gast.Add):
        terms, left = terms + 1, left.left
    return terms < _MERGED_TERMS and then.targets[0].id == x and \
        not A.is_zero_mark(first.value) and \
        isinstance(v, gast.BinOp) and isinstance(v.op, gast.Add) and \
        isinstance(v.left, gast.Name) and v.left.id == x and \
        x not in A.names_in(v.right, gast.Load)


def _without(copies, assigned):
    """The copies ``a -> b`` in which neither name is in ``assigned``."""
    if assigned.isdisjoint(copies) and assigned.isdisjoint(copies.values()):
        return copies
    return {a: b for a, b in copies.items() if a not in assigned and b not in assigned}


def _rename_loads(node, renames) -> int:
    """Rename the loads of ``node`` by ``renames`` (old -> new); the number renamed."""
    count = 0
    for sub in A.walk(node):
        if isinstance(sub, gast.Name) and sub.id in renames and isinstance(sub.ctx, gast.Load):
            sub.id = renames[sub.id]
            count += 1
    return count



def _code(stmts) -> bool:
    return any(not is_comment(s) and not isinstance(s, gast.Pass) for s in stmts)


def _drop_orphan_comments(stmts):
    out = []
    for i, s in enumerate(stmts):
        if is_comment(s):
            nxt = stmts[i + 1] if i + 1 < len(stmts) else None
            if nxt is None or is_comment(nxt):
                continue
        out.append(s)
    return out
