"""Part of stage 3, normalize: ``return``, ``break`` and ``continue`` become flags.

After ``eliminate_jumps`` each block runs to its end: a jump sets flags, and the rest of its
block is guarded by ``if <flag>:``; a loop whose body may break ends its body with
``if stop: break``. A single final ``return`` stays.
"""

from __future__ import annotations

import gast

from mindgrad.compiler import astutil as A


class _Loop:
    def __init__(self, fresh):
        self.go = fresh("go")
        self.stop = fresh("stop")
        self.breaks = False


def eliminate_jumps(body, fresh, src):
    """Rewrite ``return``/``break``/``continue`` so each block runs to its end.

    A jump sets flags, and the rest of its block is guarded by ``if <flag>:``; a loop whose
    body may break ends its body with ``if stop: break``. A single final ``return`` stays.
    """
    returns = [n for s in body for n in A.walk(s) if isinstance(n, gast.Return)]
    early = len(returns) > 1 or (returns and not (isinstance(body[-1], gast.Return)
                                                  and body[-1] is returns[0]))
    jumps = any(isinstance(n, (gast.Break, gast.Continue)) for s in body for n in A.walk(s))
    if not early and not jumps:
        return body
    state = _JumpState(fresh, early)
    new = state.block(body, [])
    if not early:
        return new
    head = [A.assign(state.running, A.const(True), body[0]),
            A.assign(state.result, A.const(None), body[0])]
    return head + new + [A.located(gast.Return(value=A.load(state.result)), body[-1])]


class _JumpState:
    def __init__(self, fresh, early):
        self.fresh = fresh
        self.early = early
        self.running = fresh("running") if early else None
        self.result = fresh("result") if early else None

    def block(self, stmts, loops):
        out = []
        for i, s in enumerate(stmts):
            new, jumps = self.stmt(s, loops)
            out.extend(new)
            if jumps and i < len(stmts) - 1:
                rest = self.block(stmts[i + 1:], loops)
                guard = loops[-1].go if loops else self.running
                if rest:
                    out.append(A.if_(A.load(guard), rest, [], stmts[i + 1]))
                return out
        return out

    def stmt(self, s, loops):
        if isinstance(s, gast.Return):
            if not self.early:
                return [s], False
            value = s.value if s.value is not None else A.const(None)
            new = [A.assign(self.result, value, s), A.assign(self.running, A.const(False), s)]
            for loop in loops:
                loop.breaks = True
                new += [A.assign(loop.go, A.const(False), s), A.assign(loop.stop, A.const(True), s)]
            return new, True
        if isinstance(s, gast.Break):
            loops[-1].breaks = True
            return [A.assign(loops[-1].go, A.const(False), s),
                    A.assign(loops[-1].stop, A.const(True), s)], True
        if isinstance(s, gast.Continue):
            return [A.assign(loops[-1].go, A.const(False), s)], True
        if isinstance(s, gast.If):
            body = self.block(s.body, loops)
            orelse = self.block(s.orelse, loops)
            return [A.if_(s.test, body or [gast.Pass()], orelse, s)], _jumps_out(s)
        if isinstance(s, (gast.For, gast.While)):
            jumps = _jumps_out(s)  # before the body is rewritten: its returns become flags
            loop = _Loop(self.fresh)
            inner = self.block(s.body, loops + [loop])
            has_jump = any(isinstance(n, (gast.Break, gast.Continue, gast.Return))
                           for b in s.body for n in A.walk(b))
            if has_jump:
                inner = [A.assign(loop.go, A.const(True), s)] + inner
            pre = []
            if loop.breaks:
                pre.append(A.assign(loop.stop, A.const(False), s))
                inner.append(A.if_(A.load(loop.stop), [gast.Break()], [], s))
            s.body = inner
            return pre + [s], jumps
        return [s], False


def _jumps_out(node) -> bool:
    """Whether ``node`` may leave its block: a return anywhere, or a break/continue of its own."""
    if isinstance(node, gast.Return):
        return True
    if isinstance(node, (gast.Break, gast.Continue)):
        return True
    if isinstance(node, (gast.For, gast.While)):
        return any(isinstance(n, gast.Return) for b in node.body for n in A.walk(b))
    return any(_jumps_out(child) for child in gast.iter_child_nodes(node)
               if isinstance(child, gast.stmt))
