"""The rewrite of ``jit=True``: the compiler's gradient code turned into code Numba types
(``jit`` compiles it). See ``mindgrad.api.jit`` for what it does; this module holds the AST
passes, and ``JitUnsupportedError``, which they raise.

A gradient returned for an input ``w`` that starts as the symbolic zero and is then only added
to (``d_w = zero`` before a loop, ``d_w = d_w + ...`` in it) starts as ``zeros_grad(w)``, zeros
of ``w``'s shape and dtype, and each of its sums is ``accumulate(d_w, value)``, which refuses
(at compile time) a value of another type or dtype and raises (at run time) for one of another
shape: where it runs, zeros plus the value is the value, what the symbolic zero gives.
"""

from __future__ import annotations

import ast

__all__ = ["JitUnsupportedError", "refuse", "rewrite", "zero_names"]


class JitUnsupportedError(NotImplementedError):
    """``jit=True`` met code it does not compile: the message names the construct and the
    function; without ``jit=True`` the gradient runs as Python."""


def refuse(name, what):
    return JitUnsupportedError(f"jit=True: the gradient of {name} {what}, which the Numba "
                               f"path does not compile; drop jit=True to run it as Python")


_refuse = refuse


def _is_call(node, obj_name, method, nargs):
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
        isinstance(node.func.value, ast.Name) and node.func.value.id == obj_name and \
        node.func.attr == method and len(node.args) == nargs and not node.keywords


def _tapes(fn_name, entry):
    """The tape lists of ``entry``: ``{tape: names pushed}``. A tape is a local list made
    empty once and used only as ``tape.append(name)`` and ``name = tape.pop()``."""
    made = {s.targets[0].id for s in entry.body if isinstance(s, ast.Assign) and
            len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and
            isinstance(s.value, ast.List) and not s.value.elts}
    pushed = {t: [] for t in made}
    popped = {t: [] for t in made}
    allowed = set()
    for node in ast.walk(entry):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            for t in made:
                if _is_call(node.value, t, "append", 1) and isinstance(node.value.args[0],
                                                                      ast.Name):
                    pushed[t].append(node.value.args[0].id)
                    allowed.add(id(node.value.func.value))
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            for t in made:
                if _is_call(node.value, t, "pop", 0):
                    popped[t].append(node.targets[0].id)
                    allowed.add(id(node.value.func.value))
    tapes = {}
    for t in made:
        if not popped[t]:
            continue  # a list of the user's, not a tape
        uses = [n for n in ast.walk(entry) if isinstance(n, ast.Name) and n.id == t and
                isinstance(n.ctx, ast.Load)]
        if any(id(n) not in allowed for n in uses) or set(pushed[t]) != set(popped[t]):
            raise _refuse(fn_name, f"uses its tape {t!r} other than by pushing and popping "
                                   f"named values")
        tapes[t] = sorted(set(pushed[t]))
    return tapes


def zero_names(entry, zero_name):
    """Whether every variable assigned the symbolic zero is only added, assigned or returned
    (where ``0.0`` gives what the symbolic zero gives)."""
    names = {s.targets[0].id for s in ast.walk(entry) if isinstance(s, ast.Assign) and
             isinstance(s.value, ast.Name) and s.value.id == zero_name and
             len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)}
    parents = {}
    for node in ast.walk(entry):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    for node in ast.walk(entry):
        if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
            continue
        if node.id not in names and node.id != zero_name:
            continue
        parent = parents.get(id(node))
        if node.id == zero_name:
            if not (isinstance(parent, ast.Assign) and parent.value is node):
                return False
            continue
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add) or \
                isinstance(parent, ast.AugAssign) and isinstance(parent.op, ast.Add) or \
                isinstance(parent, ast.Assign) and parent.value is node and \
                all(isinstance(t, ast.Name) for t in parent.targets):
            continue
        if isinstance(parent, ast.Tuple) and isinstance(parents.get(id(parent)),
                                                         (ast.Return, ast.Tuple)):
            continue
        return False
    return True


def _accumulators(entry, zero_name, positions, tapes, none_init):
    """``{gradient: input}``: the gradients returned for an input (``positions``) that are
    assigned the symbolic zero and read only as a term of a sum (``d + v``, ``v + d``,
    ``d += v``) or where they are returned, the input never assigned."""
    returns = [n for n in ast.walk(entry) if isinstance(n, ast.Return)]
    if zero_name is None or positions is None or len(returns) != 1:
        return {}
    value = returns[0].value
    if not (isinstance(value, ast.Tuple) and len(value.elts) == 3 and
            isinstance(value.elts[1], ast.Tuple) and len(value.elts[1].elts) == len(positions)):
        return {}
    params = [a.arg for a in entry.args.args]
    stored = {n.id for n in ast.walk(entry) if isinstance(n, ast.Name) and
              not isinstance(n.ctx, ast.Load)}
    zeroed = {s.targets[0].id for s in ast.walk(entry) if isinstance(s, ast.Assign) and
              len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and
              isinstance(s.value, ast.Name) and s.value.id == zero_name}
    pushed = {v for names in tapes.values() for v in names}
    returned = [e.id if isinstance(e, ast.Name) else None for e in value.elts[1].elts]
    found = {}
    for name, p in zip(returned, positions):
        if name is not None and returned.count(name) == 1 and name in zeroed and \
                isinstance(p, int) and 0 <= p < len(params) and params[p] not in stored and \
                name not in params and name not in pushed and name not in none_init:
            found[name] = params[p]
    allowed = {id(e) for e in value.elts[1].elts}
    for node in ast.walk(entry):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            allowed.update(id(o) for o in (node.left, node.right))
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and \
                isinstance(node.target, ast.Name) and node.target.id in found:
            allowed.add(id(node.target))
    for node in ast.walk(entry):
        if isinstance(node, ast.Name) and node.id in found and \
                isinstance(node.ctx, ast.Load) and id(node) not in allowed:
            del found[node.id]
    return found


class _Rewrite(ast.NodeTransformer):
    def __init__(self, fn_name, tapes, none_init, stack_names, some, accum=None, zero=None,
                 helpers=None):
        self.fn_name, self.tapes, self.none_init = fn_name, tapes, none_init
        self.stack = stack_names  # pushed name -> its stack's name
        self.some = some  # the name of jit_runtime.some
        self.accum, self.zero = accum or {}, zero  # accumulated gradient -> its input
        self.helpers = helpers or {}  # jit_runtime's zeros_grad and accumulate, by name

    def _helper(self, role, *args):
        return ast.Call(ast.Name(self.helpers[role], ast.Load()), list(args), [])

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Add):
            for acc, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(acc, ast.Name) and acc.id in self.accum:
                    return self._helper("accumulate", acc, other)
        return node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name) and \
                node.target.id in self.accum:
            return ast.Assign([ast.Name(node.target.id, ast.Store())], self._helper(
                "accumulate", ast.Name(node.target.id, ast.Load()), node.value))
        return node

    def visit_Name(self, node):
        if node.id in self.none_init and isinstance(node.ctx, ast.Load):
            return ast.Call(ast.Name(self.some, ast.Load()), [node], [])
        return node

    def visit_Delete(self, node):
        return ast.Pass()

    def visit_Assign(self, node):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
            if target in self.accum and isinstance(node.value, ast.Name) and \
                    node.value.id == self.zero:
                node.value = self._helper("zeros_grad", ast.Name(self.accum[target],
                                                                 ast.Load()))
                return node
            if target in self.tapes:
                return [ast.parse(f"{self.stack[v]} = []").body[0] for v in self.tapes[target]]
            if isinstance(node.value, ast.Call) and any(
                    _is_call(node.value, t, "pop", 0) for t in self.tapes):
                stack = self.stack[target]
                if target in self.none_init:
                    return ast.parse(f"if len({stack}) > 0:\n    {target} = {stack}.pop()\n"
                                     f"else:\n    {target} = None").body[0]
                return ast.parse(f"{target} = {stack}.pop()").body[0]
        return self.generic_visit(node)

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Call) and any(
                _is_call(node.value, t, "append", 1) for t in self.tapes):
            name = node.value.args[0].id
            stack = self.stack[name]
            if name in self.none_init:
                return ast.parse(f"if {name} is not None:\n"
                                 f"    {stack}.append({self.some}({name}))").body[0]
            return ast.parse(f"{stack}.append({name})").body[0]
        return self.generic_visit(node)

    def visit_For(self, node):
        self.generic_visit(node)
        it = node.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and \
                it.func.id == "reversed":
            inner = it.args[0] if len(it.args) == 1 and not it.keywords else None
            if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and
                    inner.func.id == "range" and 1 <= len(inner.args) <= 2 and
                    not inner.keywords):
                raise _refuse(self.fn_name, "loops over reversed() of something other than "
                                            "range(stop) or range(start, stop)")
            start = _minus_one(inner.args[0]) if len(inner.args) == 2 else "-1"
            node.iter = ast.parse(f"range({_minus_one(inner.args[-1])}, {start}, -1)",
                                  mode="eval").body
        return node


def _minus_one(node) -> str:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return str(node.value - 1)
    return f"{ast.unparse(node)} - 1" if isinstance(node, ast.Name) else \
        f"({ast.unparse(node)}) - 1"


def rewrite(fn_name, entry, code_names, zero_name=None, positions=None):
    """The entry function rewritten for Numba, the names it reads from outside, and the
    names it gives jit_runtime's ``some``, ``zeros_grad`` and ``accumulate`` (by role)."""
    for node in ast.walk(entry):
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                             ast.Try, ast.With, ast.Yield, ast.YieldFrom, ast.Global,
                             ast.Nonlocal, ast.Dict, ast.Set, ast.DictComp, ast.SetComp,
                             ast.ListComp, ast.GeneratorExp, ast.Starred)) and node is not entry:
            raise _refuse(fn_name, f"has a {type(node).__name__} "
                                   f"(line {getattr(node, 'lineno', '?')}: "
                                   f"{ast.unparse(node).splitlines()[0][:60]})")
        if isinstance(node, ast.Compare) and any(isinstance(o, (ast.Is, ast.IsNot))
                                                 for o in node.ops):
            raise _refuse(fn_name, f"tests identity ({ast.unparse(node)[:60]})")
    a = entry.args
    if a.vararg or a.kwarg or a.posonlyargs or len(a.kwonlyargs) != 1:
        raise _refuse(fn_name, "has a signature other than positional inputs and the sens")
    tapes = _tapes(fn_name, entry)
    none_init = {s.targets[0].id for s in entry.body if isinstance(s, ast.Assign) and
                 len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and
                 isinstance(s.value, ast.Constant) and s.value.value is None}
    local = {n.id for n in ast.walk(entry) if isinstance(n, ast.Name) and
             isinstance(n.ctx, (ast.Store, ast.Del))} | {p.arg for p in a.args + a.kwonlyargs}
    stack_names, taken = {}, set(local) | set(code_names)
    for names in tapes.values():
        for v in names:
            s = f"tape_{v}"
            while s in taken:
                s += "_"
            taken.add(s)
            stack_names[v] = s
    helpers = {}
    for role in ("some", "zeros_grad", "accumulate"):
        helpers[role] = role
        while helpers[role] in taken:
            helpers[role] += "_"
    some = helpers["some"]
    accum = _accumulators(entry, zero_name, positions, tapes, none_init)
    entry = _Rewrite(fn_name, tapes, none_init, stack_names, some, accum, zero_name,
                     helpers).visit(entry)
    a.args = a.args + a.kwonlyargs
    a.kwonlyargs, a.kw_defaults = [], []
    entry.decorator_list = []
    ast.fix_missing_locations(entry)
    loaded = {n.id for n in ast.walk(entry) if isinstance(n, ast.Name) and
              isinstance(n.ctx, ast.Load)}
    return entry, loaded - local - set(stack_names.values()) - set(helpers.values()), helpers
