"""Stage 3, normalize: one operation per statement, structured control flow only.

Output guarantees, which every later stage relies on:

* Every assignment is ``name = <op>`` or ``name[index] = atom``, where ``<op>`` is one
  operation (arithmetic, comparison, call, attribute read, subscript, tuple/list/dict display)
  on *atoms* (names, constants, or dotted module attributes such as ``np.pi``), and the target
  name is not among the operation's operands.
* ``if``/``while`` tests are atoms not reassigned inside the statement; a ``for`` iterates a
  ``range(atoms)`` or a name not reassigned in its body, with a single-name target.
* ``break`` only appears as ``if flag: break``, the last statement of a loop body;
  ``continue`` and early ``return`` are gone (flags guard the rest of the block); the function
  ends with its only ``return <atom>``.
* Calls of local lambdas and nested defs (at any depth, and lambdas called where they are
  written) are inlined; comprehensions are loops.
* Calls have no ``*``/``**`` arguments: those of displays and of the function's own
  ``*args``/``**kw`` (see ``source.specialise``) are spelled out, others are refused.
* Each statement keeps the ``lineno`` of the user statement it came from.
"""

from __future__ import annotations

import gast

from mindgrad import runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler import expansions, source
from mindgrad.compiler.naming import NameGen
from mindgrad.errors import Located

_OP_NAMES = {
    gast.Add: "add", gast.Sub: "sub", gast.Mult: "mul", gast.Div: "div", gast.Pow: "pow",
    gast.MatMult: "matmul", gast.FloorDiv: "floordiv", gast.Mod: "mod",
    gast.USub: "neg", gast.UAdd: "pos", gast.Not: "not_",
}
_SEQUENCE_HELPERS = ("enumerate", "zip")


class Normalizer(Located):
    def __init__(self, src, names: NameGen):
        self.src = src
        self.names = names
        self.local_functions = {}
        self.locals = set()
        self.assignments = {}  # name -> how many statements bind it
        self.inlining = []

    def fresh(self, hint: str) -> str:
        """A new local name; it counts as a local from now on (``t.T`` is not a module
        attribute)."""
        name = self.names(hint)
        self.locals.add(name)
        return name

    # ----- entry --------------------------------------------------------------------------

    def function(self, fdef: gast.FunctionDef) -> gast.FunctionDef:
        params = [a.id for a in fdef.args.args + fdef.args.kwonlyargs]
        self.locals = set(params) | A.assigned_names(fdef.body)
        self.assignments = _assignment_counts(fdef.body)
        body = self._collect_local_functions(fdef.body)
        body = eliminate_jumps(body, self.fresh, self.src)
        out = []
        self.block(body, out)
        if not out or not isinstance(out[-1], gast.Return):
            out.append(A.located(gast.Return(value=A.const(None)), fdef))
        self._check_names(out, set(params))
        self._find_aliases(out)
        new = gast.FunctionDef(name=fdef.name, args=fdef.args, body=out, decorator_list=[],
                               returns=None, type_comment=None, type_params=[])
        return A.located(new, fdef)

    def _find_aliases(self, body):
        """Locals assigned once, from an attribute chain known before the run (f = self.block):
        calls through them resolve to that object."""
        counts, values = {}, {}
        for node in A.walk(body):
            if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
                name = node.targets[0].id
                counts[name] = counts.get(name, 0) + 1
                values[name] = node.value
            elif isinstance(node, gast.For):
                counts[node.target.id] = counts.get(node.target.id, 0) + 2
        for name, value in values.items():
            if counts[name] == 1 and isinstance(value, (gast.Attribute, gast.Subscript)) and \
                    source.static_value(self.src, value, self.locals) is not source.MISSING:
                self.src.aliases.setdefault(name, value)

    def _check_names(self, body, params):
        """A name that is neither local nor defined anywhere fails here, at the user's line,
        rather than as a NameError from inside generated code."""
        local_names = params | A.assigned_names(body)
        for stmt in body:
            for node in A.walk(stmt):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and \
                        node.id not in local_names and node.id not in self.src.bound and \
                        self.src.resolve(node.id, source.MISSING) is source.MISSING:
                    lineno = self.src.line_of(stmt)
                    raise NameError(f"name {node.id!r} is not defined\n  at "
                                    f"{self.src.filename}:{lineno}: "
                                    f"{self.src.text_of(lineno).strip()}")

    def _collect_local_functions(self, body):
        kept = []
        for stmt in body:
            if isinstance(stmt, gast.FunctionDef):
                self.local_functions[stmt.name] = stmt
                continue
            if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], gast.Name)
                    and isinstance(stmt.value, gast.Lambda)):
                fdef = _lambda_def(stmt.targets[0].id, stmt.value, stmt)
                self.local_functions[fdef.name] = fdef
                continue
            kept.append(stmt)
        return kept

    # ----- statements ---------------------------------------------------------------------

    def block(self, stmts, out):
        for stmt in stmts:
            self.stmt(stmt, out)

    def stmt(self, s, out):
        self.current = s
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            self.fail(s, f"{type(s).__name__} statements are not supported")
        method(s, out)

    def stmt_Pass(self, s, out):
        pass

    def stmt_Break(self, s, out):
        out.append(s)

    def stmt_Assert(self, s, out):
        out.append(s)

    def stmt_Raise(self, s, out):
        out.append(s)

    def stmt_Return(self, s, out):
        value = self.atom(s.value, out, "result") if s.value is not None else A.const(None)
        out.append(A.located(gast.Return(value=value), s))

    def stmt_Expr(self, s, out):
        if isinstance(s.value, gast.Constant):
            return  # docstring or bare constant
        restored = self._restore_item(s)
        if restored is not None:  # generated code undoing an index assignment
            self.stmt(restored, out)
            return
        value = self.op(s.value, out, "value")
        if isinstance(value, (gast.Name, gast.Constant)):
            return
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
                value.func.attr == "pop" and isinstance(value.func.value, gast.Name) and \
                value.func.value.id in self.locals and not value.args:
            # xs.pop() taken as a value, so the backward sweep can put the item back
            out.append(A.assign(self.fresh("popped"), value, s))
            return
        out.append(A.expr_stmt(value, s))

    def stmt_AnnAssign(self, s, out):
        if s.value is not None:
            self.assign_to(s.target, s.value, out, s)

    def stmt_Assign(self, s, out):
        value = s.value
        if len(s.targets) > 1:  # a = b = v
            first = self.atom(value, out, _hint(s.targets[-1]))
            for target in s.targets:
                self.assign_to(target, first, out, s)
            return
        target = s.targets[0]
        if isinstance(target, gast.Name) and self._names_a_function(value) and \
                self.assignments.get(target.id) == 1:
            # g = make(2.0) or g = inner: calls of g are calls of that def
            self.local_functions[target.id] = self.function_value(value, out)
            return
        self.assign_to(target, value, out, s)

    def _names_a_function(self, value) -> bool:
        """Whether ``value`` is a local def's name, or a call of a local closure factory."""
        if isinstance(value, gast.Call):
            value = value.func
            return isinstance(value, gast.Name) and value.id in self.local_functions and \
                _returns_a_def(self.local_functions[value.id])
        return isinstance(value, gast.Name) and value.id in self.local_functions

    def stmt_AugAssign(self, s, out):
        target = s.target
        if isinstance(target, gast.Name):
            value = gast.BinOp(left=A.load(target.id), op=s.op, right=s.value)
            self.assign_to(A.store(target.id), value, out, s)
            out[-1].in_place = True  # see aliasing.py: NumPy writes into the array
            return
        # x[i] += v  ->  x_i = x[i]; new = x_i + v; x[i] = new
        index = self.index(target.slice, out)
        old = self.fresh(target.value.id + "_i")
        out.append(A.assign(old, A.subscript(A.load(target.value.id), A.clone(index)), s))
        value = gast.BinOp(left=A.load(old), op=s.op, right=s.value)
        new = self.atom(value, out, _OP_NAMES.get(type(s.op), "t"))
        out.append(A.assign(A.subscript(A.load(target.value.id), index, gast.Store()), new, s))

    def assign_to(self, target, value, out, s):
        if isinstance(target, gast.Name):
            rhs = self.op(value, out, target.id)
            if _reads(rhs, target.id) and not isinstance(rhs, gast.Name):
                rhs = A.load(self._emit(rhs, out, _op_hint(rhs, target.id)))
            if isinstance(rhs, gast.Name) and rhs.id == target.id:
                return
            out.append(A.assign(target.id, rhs, s))
        elif isinstance(target, gast.Subscript):
            index = self.index(target.slice, out)
            atom = self.atom(value, out, target.value.id + "_new")
            out.append(A.assign(A.subscript(A.load(target.value.id), index, gast.Store()), atom, s))
        elif isinstance(target, (gast.Tuple, gast.List)):
            if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts):
                # a, b = b, a: evaluate every right-hand side before assigning any target
                atoms = [self._frozen(self.atom(v, out, _hint(t)), out, target)
                         for v, t in zip(value.elts, target.elts)]
                for t, a in zip(target.elts, atoms):
                    self.assign_to(t, a, out, s)
                return
            seq = self._frozen(self.atom(value, out, "seq"), out, target)
            for i, t in enumerate(target.elts):
                item = A.subscript(A.clone(seq), A.const(i))
                self.assign_to(t, item, out, s)
        else:
            self.fail(s, f"cannot assign to {type(target).__name__}")

    def _frozen(self, atom, out, target):
        """A copy of ``atom`` if a target of the unpacking would overwrite it."""
        if isinstance(atom, gast.Name) and atom.id in A.assigned_names(
                [A.assign(A.clone(target), A.const(None))]):
            copy = self.fresh(atom.id + "_old")
            out.append(A.assign(copy, atom, self.current))
            return A.load(copy)
        return atom

    def stmt_If(self, s, out):
        test = self.atom(s.test, out, "cond")
        body, orelse = [], []
        self.block(s.body, body)
        self.block(s.orelse, orelse)
        test = self._stable(test, body + orelse, out, "cond")
        if not body and not orelse:
            return
        out.append(A.if_(test, body or [gast.Pass()], orelse, s))

    def _stable(self, atom, stmts, out, hint):
        """``atom``, or a fresh copy of it when ``stmts`` reassign it."""
        if isinstance(atom, gast.Name) and atom.id in A.assigned_names(stmts):
            name = self.fresh(hint)
            out.append(A.assign(name, atom, self.current))
            return A.load(name)
        return atom

    def stmt_While(self, s, out):
        cond = self.fresh("cond")
        out.append(A.assign(cond, self.op(s.test, out, cond), s))
        body = []
        self.block(s.body, body)
        body.append(A.assign(cond, self.op(A.clone(s.test), body, cond), s))
        loop = gast.While(test=A.load(cond), body=body, orelse=[])
        out.append(A.located(loop, s))

    def stmt_For(self, s, out):
        target, iterable = s.target, s.iter
        items = source.static_sequence(self.src, iterable, self.locals - set(self.src.aliases))
        if items is not None and isinstance(target, gast.Name) and not any(
                isinstance(n, (gast.Break, gast.Continue)) for n in A.walk(s.body)):
            # for layer in self.layers: unrolled, so each call's Cell is known
            for k in range(len(items)):
                name = self.fresh(target.id)
                element = A.subscript(A.clone(iterable), A.const(k))
                out.append(A.assign(name, element, s))
                self.src.aliases[name] = element
                self.block([_renamed(b, {target.id: name}) for b in s.body], out)
            return
        pre, body = [], []
        if _is_call_to(iterable, _SEQUENCE_HELPERS, self):
            # for i, x in enumerate(xs): ...  ->  for i in range(len(xs)): x = xs[i]
            length, element = self.sequence(iterable, pre)
            index = self.fresh("k")
            iter_node = A.call("range", length)
            self.unpack(target, element(A.load(index)), body, s)
            target = A.store(index)
        elif _is_call_to(iterable, ("range",), self):
            args = [self.atom(a, pre, "n") for a in iterable.args]
            iter_node = A.call(A.clone(iterable.func), *args)
        elif isinstance(iterable, gast.Name):
            iter_node = A.load(iterable.id)
        elif isinstance(iterable, gast.Call):
            # a call may give a one-shot iterator; the backward sweep walks the items again
            seq = self.atom(iterable, pre, "seq")
            listed = self.fresh("items")
            pre.append(A.assign(listed, A.call("list", seq), s))
            iter_node = A.load(listed)
        else:
            iter_node = self.atom(iterable, pre, "seq")
        if not isinstance(target, gast.Name):
            item = self.fresh("item")
            self.unpack(target, A.load(item), body, s)
            target = A.store(item)
        self.block(s.body, body)
        out.extend(pre)
        loop_assigned = A.assigned_names(body) | {target.id}
        if isinstance(iter_node, gast.Name) and iter_node.id in loop_assigned:
            frozen = self.fresh(iter_node.id + "_seq")
            out.append(A.assign(frozen, iter_node, s))
            iter_node = A.load(frozen)
        if isinstance(iter_node, gast.Call):
            for i, arg in enumerate(iter_node.args):
                if isinstance(arg, gast.Name) and arg.id in loop_assigned:
                    frozen = self.fresh(arg.id + "_end")
                    out.append(A.assign(frozen, arg, s))
                    iter_node.args[i] = A.load(frozen)
        loop = gast.For(target=A.store(target.id), iter=iter_node, body=body,
                        orelse=[], type_comment=None)
        out.append(A.located(loop, s))

    def unpack(self, target, value, out, s):
        if isinstance(target, (gast.Tuple, gast.List)) and isinstance(value, gast.Tuple):
            for t, v in zip(target.elts, value.elts):
                self.unpack(t, v, out, s)
        else:
            self.assign_to(target, value, out, s)

    def sequence(self, node, out):
        """(length atom, k -> element expression) for range/enumerate/zip/sequence ``node``."""
        if _is_call_to(node, ("enumerate",), self):
            length, element = self.sequence(node.args[0], out)
            start = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "start"), None)
            start = self.atom(start, out, "start") if start is not None else None

            def enumerated(k):
                index = k if start is None else gast.BinOp(left=k, op=gast.Add(), right=start)
                return A.tuple_([index, element(A.clone(k))])
            return length, enumerated
        if _is_call_to(node, ("zip",), self):
            parts = [self.sequence(a, out) for a in node.args]
            if len(parts) == 1:
                length = parts[0][0]
            else:
                length = self.atom(A.call("min", *[p[0] for p in parts]), out, "n")
            return length, lambda k: A.tuple_([p[1](A.clone(k)) for p in parts])
        if _is_call_to(node, ("range", "list", "tuple", "sorted"), self):
            seq = self.atom(node, out, "seq")
        elif isinstance(node, gast.Call):  # d.items(), reversed(xs), map(...): one-shot views
            seq = self.atom(A.call("list", node), out, "items")
        else:  # indexed as it is, unless it is a dict, a set or an iterator
            value = self.atom(node, out, "seq")
            hint = value.id + "_seq" if isinstance(value, gast.Name) else "seq"
            seq = A.load(self._emit(A.call(self.constant(runtime.as_sequence), value), out,
                                    hint))
        length = self.atom(A.call("len", A.clone(seq)), out, "n")
        return length, lambda k: A.subscript(A.clone(seq), k)

    def constant(self, obj):
        """A name under which the normalized code reaches the mindgrad helper ``obj``."""
        for name, value in self.src.constants.items():
            if value is obj:
                return name
        name = self.fresh(obj.__name__)
        self.src.constants[name] = obj
        return name

    # ----- expressions --------------------------------------------------------------------

    def atom(self, node, out, hint="t"):
        """``node`` reduced to an atom, emitting the statements that compute it."""
        value = self.op(node, out, hint)
        if A.is_atom(value) or self._is_module_attr(value):
            return value
        return A.load(self._emit(value, out, _op_hint(value, hint)))

    def _emit(self, value, out, hint):
        name = self.fresh(hint)
        out.append(A.assign(name, value, self.current))
        return name

    def _is_module_attr(self, node):
        """``np.pi``, ``self.w``: attribute chains resolved before the function runs."""
        return isinstance(node, gast.Attribute) and \
            source.static_value(self.src, node, self.locals) is not source.MISSING

    def op(self, node, out, hint="t"):
        """``node`` reduced to a single operation on atoms (or an atom)."""
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            self.fail(node, f"{type(node).__name__} expressions are not supported")
        return method(node, out, hint)

    def expr_Name(self, node, out, hint):
        if node.id in self.local_functions:
            self.fail(node, f"the local function {node.id!r} may only be called, not passed "
                            "around as a value")
        return A.load(node.id)

    def expr_Constant(self, node, out, hint):
        return node

    def expr_JoinedStr(self, node, out, hint):
        return node  # f-strings carry no gradient; kept as written

    def expr_BinOp(self, node, out, hint):
        name = _OP_NAMES.get(type(node.op), "t")
        return gast.BinOp(left=self.atom(node.left, out, name), op=node.op,
                          right=self.atom(node.right, out, name))

    def expr_UnaryOp(self, node, out, hint):
        operand = self.atom(node.operand, out, _OP_NAMES.get(type(node.op), "t"))
        if isinstance(node.op, gast.USub) and isinstance(operand, gast.Constant):
            return A.const(-operand.value)
        return gast.UnaryOp(op=node.op, operand=operand)

    def expr_Compare(self, node, out, hint):
        if len(node.ops) == 1:
            return gast.Compare(left=self.atom(node.left, out, "lhs"), ops=node.ops,
                                comparators=[self.atom(node.comparators[0], out, "rhs")])
        # a < b < c  ->  (a < b) and (b < c), with b evaluated once
        left = self.atom(node.left, out, "lhs")
        pairs = []
        for op, right in zip(node.ops, node.comparators):
            right = self.atom(right, out, "rhs")
            pairs.append(gast.Compare(left=left, ops=[op], comparators=[right]))
            left = right
        return self.expr_BoolOp(gast.BoolOp(op=gast.And(), values=pairs), out, "cond")

    def expr_BoolOp(self, node, out, hint):
        # a and b  ->  t = a; if t: t = b   (short-circuit kept)
        result = self.fresh("cond" if hint == "t" else hint)
        out.append(A.assign(result, self.op(node.values[0], out, result), self.current))
        for value in node.values[1:]:
            branch = []
            branch.append(A.assign(result, self.op(value, branch, result), self.current))
            test = self.fresh("test")
            out.append(A.assign(test, A.load(result), self.current))
            if isinstance(node.op, gast.Or):
                out.append(A.if_(A.load(test), [gast.Pass()], branch, self.current))
            else:
                out.append(A.if_(A.load(test), branch, [], self.current))
        return A.load(result)

    def expr_IfExp(self, node, out, hint):
        test = self.atom(node.test, out, "cond")
        result = self.fresh(hint if hint != "t" else "choice")
        body, orelse = [], []
        body.append(A.assign(result, self.op(node.body, body, result), self.current))
        orelse.append(A.assign(result, self.op(node.orelse, orelse, result), self.current))
        out.append(A.if_(test, body, orelse, self.current))
        return A.load(result)

    def expr_Tuple(self, node, out, hint):
        return gast.Tuple(elts=[self.atom(e, out, hint + "_item") for e in node.elts],
                          ctx=gast.Load())

    def expr_List(self, node, out, hint):
        return gast.List(elts=[self.atom(e, out, hint + "_item") for e in node.elts],
                         ctx=gast.Load())

    def expr_Dict(self, node, out, hint):
        if any(k is None for k in node.keys):
            self.fail(node, "dict unpacking (**d) is not supported")
        return gast.Dict(keys=[self.atom(k, out, "key") for k in node.keys],
                         values=[self.atom(v, out, hint + "_item") for v in node.values])

    def expr_Attribute(self, node, out, hint):
        if self._is_module_attr(node):
            return node
        base = self.atom(node.value, out, "obj")
        return gast.Attribute(value=base, attr=node.attr, ctx=gast.Load())

    def expr_Subscript(self, node, out, hint):
        base = self.atom(node.value, out, "seq")
        return gast.Subscript(value=base, slice=self.index(node.slice, out), ctx=gast.Load())

    def index(self, node, out):
        if isinstance(node, gast.Slice):
            parts = [None if p is None else self.atom(p, out, "bound")
                     for p in (node.lower, node.upper, node.step)]
            return gast.Slice(lower=parts[0], upper=parts[1], step=parts[2])
        if isinstance(node, gast.Tuple):
            return gast.Tuple(elts=[self.index(e, out) for e in node.elts], ctx=gast.Load())
        return self.atom(node, out, "idx")

    def expr_Slice(self, node, out, hint):
        return self.index(node, out)

    def expr_ListComp(self, node, out, hint):
        # [f(x) for x in xs if c]  ->  lst = []; for x in xs: if c: lst.append(f(x))
        result = self.fresh(hint if hint != "t" else "items")
        out.append(A.assign(result, gast.List(elts=[], ctx=gast.Load()), self.current))
        renames = {}
        for comprehension in node.generators:
            for target in A.names_in(comprehension.target, gast.Store):
                renames[target] = self.fresh(target)
        elt = _renamed(node.elt, renames)
        inner = [A.expr_stmt(A.call(A.attr(A.load(result), "append"), elt), self.current)]
        for comprehension in reversed(node.generators):
            for cond in reversed(comprehension.ifs):
                inner = [A.if_(_renamed(cond, renames), inner, [], self.current)]
            loop = gast.For(target=_renamed(comprehension.target, renames),
                            iter=_renamed(comprehension.iter, renames), body=inner, orelse=[],
                            type_comment=None)
            inner = [A.located(loop, self.current)]
        saved = self.locals
        self.locals = self.locals | set(renames.values()) | {result}
        self.block(inner, out)
        self.locals = saved
        return A.load(result)

    expr_GeneratorExp = expr_ListComp

    def expr_Lambda(self, node, out, hint):
        self.fail(node, "a lambda may be assigned to a name and called, not used as a value")

    def expr_Call(self, node, out, hint):
        func = node.func
        if isinstance(func, gast.Name) and func.id in self.local_functions:
            return self.inline(self.local_functions[func.id], node, out)
        if isinstance(func, (gast.Lambda, gast.Call)):  # (lambda t: t * 2.0)(x), make(k)(x)
            fdef = self.function_value(func, out)
            if fdef is not None:
                return self.inline(fdef, node, out)
        tangent_call = self._jvp_call(node, out)
        if tangent_call is not None:
            return tangent_call
        if isinstance(func, gast.Name) or self._is_module_attr(func):
            callee = func
            name = func.id if isinstance(func, gast.Name) else func.attr
        elif isinstance(func, gast.Attribute):
            callee = gast.Attribute(value=self.atom(func.value, out, "obj"), attr=func.attr,
                                    ctx=gast.Load())
            name = func.attr
        else:
            built = self._built_callee(func)
            if built is None:
                self.fail(node, "calls through an expression are not supported; call a "
                                "function by its name")
            callee, name = built, built.id
        args = [self.atom(a, out, name) for a in self._unpacked_args(node)]
        keywords = []
        for kw in self._unpacked_keywords(node):
            if kw.arg == "out" and not (isinstance(kw.value, gast.Constant)
                                        and kw.value.value is None):
                self.fail(node, "out= writes into an existing array, which mindgrad cannot "
                                "differentiate; assign the result instead (y = np.f(...))")
            keywords.append(gast.keyword(arg=kw.arg, value=self.atom(kw.value, out, kw.arg)))
        return gast.Call(func=callee, args=args, keywords=keywords)

    def _unpacked_args(self, node):
        """The call's positional arguments with ``*t`` spelled out: ``t`` a tuple or list
        display, or the function's own ``*args`` (see ``source.specialise``)."""
        args = []
        for arg in node.args:
            if not isinstance(arg, gast.Starred):
                args.append(arg)
            elif isinstance(arg.value, (gast.Tuple, gast.List)):
                args.extend(arg.value.elts)
            elif isinstance(arg.value, gast.Name) and \
                    isinstance(self.src.packed.get(arg.value.id), list):
                args.extend(A.load(p) for p in self.src.packed[arg.value.id])
            else:
                self.fail(arg, "*-unpacking is supported for a tuple display (*(a, b)) or the "
                               "function's own unchanged *args; pass the items one by one")
        return args

    def _unpacked_keywords(self, node):
        """The call's keywords with ``**d`` spelled out: ``d`` a dict display with string keys,
        or the function's own ``**kw`` (see ``source.specialise``)."""
        keywords = []
        for kw in node.keywords:
            value = kw.value
            if kw.arg is not None:
                keywords.append(kw)
            elif isinstance(value, gast.Dict) and all(
                    isinstance(k, gast.Constant) and isinstance(k.value, str) for k in value.keys):
                keywords.extend(gast.keyword(arg=k.value, value=v)
                                for k, v in zip(value.keys, value.values))
            elif isinstance(value, gast.Name) and isinstance(self.src.packed.get(value.id), dict):
                keywords.extend(gast.keyword(arg=k, value=A.load(p))
                                for k, p in self.src.packed[value.id].items())
            else:
                self.fail(node, "**-unpacking is supported for a dict display with string keys "
                                "or the function's own unchanged **kw; pass keywords by name")
        return keywords

    def _jvp_call(self, node, out):
        """``mindgrad.jvp(f, (x, y), (vx, vy))`` as a call of ``f``'s tangent code, written as
        Python now, so that it is differentiated in turn (reverse over forward)."""
        if not isinstance(node.func, (gast.Name, gast.Attribute)):
            return None
        as_python = expansions.jvp_expander(source.static_value(self.src, node.func,
                                                                self.locals))
        if as_python is None:
            return None
        for kw in node.keywords:
            if not (kw.arg == "has_aux" and isinstance(kw.value, gast.Constant) and
                    kw.value.value is False):
                self.fail(node, "mindgrad.jvp inside a differentiated function takes (fn, "
                                "inputs, v) only: has_aux is not supported there")
        if len(node.args) != 3 or any(isinstance(a, gast.Starred) for a in node.args):
            self.fail(node, "mindgrad.jvp inside a differentiated function takes (fn, inputs, "
                            "v), with the inputs and tangents written as tuples")
        fn = source.static_value(self.src, node.args[0], self.locals)
        if fn is source.MISSING or not callable(fn):
            self.fail(node, "the function given to mindgrad.jvp must be known before the run "
                            "(a module-level function or a closure variable)")
        inputs, tangents = ([*a.elts] if isinstance(a, gast.Tuple) else [a]
                            for a in node.args[1:])
        if len(inputs) != len(tangents):
            self.fail(node, f"mindgrad.jvp: {len(inputs)} input(s) but {len(tangents)} "
                            "tangent(s)")
        positions = tuple(i for i, t in enumerate(tangents)
                          if not (isinstance(t, gast.Constant) and t.value is None))
        self.src.static_arguments.append(node.args[0])
        name = self.fresh(f"jvp_{getattr(fn, '__name__', 'fn')}")
        self.src.constants[name] = as_python(fn, positions, len(inputs))
        args = [self.atom(a, out, "x") for a in inputs] + \
            [self.atom(tangents[p], out, "v") for p in positions]
        return gast.Call(func=A.load(name), args=args, keywords=[])

    def _restore_item(self, s):
        """``restore_item(x, idx, old)`` (in generated code) as the index assignment
        ``x[idx] = old`` it performs on arrays and lists, so it is differentiated as one."""

        call = s.value
        if not (isinstance(call, gast.Call) and len(call.args) == 3 and not call.keywords and
                isinstance(call.args[0], gast.Name)):
            return None
        if source.static_value(self.src, call.func, self.locals) is not runtime.restore_item:
            return None
        target = A.subscript(A.load(call.args[0].id), call.args[1], gast.Store())
        return A.assign(target, call.args[2], s)

    def _built_callee(self, func):
        """``grad(g, (0, 1))`` called in place: built now, from arguments known before the run,
        and called by a name. None when ``func`` is not such a call."""
        if not (isinstance(func, gast.Call) and not func.keywords or
                isinstance(func, gast.Call) and all(
                    isinstance(k.value, gast.Constant) for k in func.keywords)):
            return None
        maker = source.static_value(self.src, func.func, self.locals)
        if not expansions.is_gradient_maker(maker):
            return None
        args = []
        for arg in func.args:
            value = _constant_value(arg)
            if value is source.MISSING:
                value = source.static_value(self.src, arg, self.locals)
            if value is source.MISSING:
                return None
            args.append(value)
        kwargs = {k.arg: k.value.value for k in func.keywords}
        self.src.static_arguments.append(func.args[0])
        name = self.fresh(f"{maker.__name__}_{getattr(args[0], '__name__', 'fn')}")
        self.src.constants[name] = maker(*args, **kwargs)
        return A.load(name)

    def function_value(self, node, out):
        """The local def that ``node`` denotes as a value, or None: a lambda, the name of a
        local function, or a call of a local function that returns one of its own defs (a
        closure factory; its body up to that return is inlined into ``out`` now)."""
        if isinstance(node, gast.Lambda):
            return _lambda_def(self.fresh("lambda_"), node, node)
        if isinstance(node, gast.Name) and node.id in self.local_functions:
            return self.local_functions[node.id]
        if isinstance(node, gast.Call):
            factory = self.function_value(node.func, out)
            if factory is not None and _returns_a_def(factory):
                return self.inline(factory, node, out, returns_function=True)
        return None

    def inline(self, fdef, node, out, returns_function=False):
        """The call ``node`` of a local function, with its body inlined: the atom it returns,
        or with ``returns_function`` the local def it returns (see ``function_value``).

        Arguments that are functions (a lambda, a local def) are bound as local functions, and
        those known before the run (``np.sin``, a module-level function) are substituted, so
        that calls through the parameter are calls of the argument."""
        if fdef.name in self.inlining:
            self.fail(node, f"the local function {fdef.name!r} calls itself; recursion is "
                            "supported for module-level functions only")
        params = [a.id for a in fdef.args.args]
        assigned = A.assigned_names(fdef.body) | set(params)
        renames = {n: self.fresh(f"{fdef.name}_{n}") for n in assigned}
        body = [_renamed(s, renames) for s in fdef.body]
        self.assignments.update(_assignment_counts(body))
        defaults = fdef.args.defaults
        bound = {}
        call_args = self._unpacked_args(node)
        for i, p in enumerate(params):
            if i < len(call_args):
                bound[p] = call_args[i]
        for kw in self._unpacked_keywords(node):
            bound[kw.arg] = kw.value
        first_default = len(params) - len(defaults)
        for i, p in enumerate(params):
            if p not in bound:
                if i < first_default:
                    self.fail(node, f"missing argument {p!r} in the call of {fdef.name}")
                bound[p] = defaults[i - first_default]
        passed_functions, known = {}, {}
        rebound = A.assigned_names(fdef.body)
        for p in params:
            function = self.function_value(bound[p], out) if p not in rebound else None
            if function is not None:
                passed_functions[renames[p]] = function
            elif p not in rebound and self._is_known_function(bound[p]):
                known[renames[p]] = bound[p]
            else:
                value = self.atom(bound[p], out, renames[p])
                out.append(A.assign(renames[p], value, self.current))
        body = [_substituted(s, known) for s in body] if known else body
        self.inlining.append(fdef.name)  # after the arguments: f(f(t)) is no recursion
        saved, outer_functions = self.locals, dict(self.local_functions)
        self.locals = (self.locals | set(renames.values())) - set(passed_functions) - set(known)
        self.local_functions.update(passed_functions)
        body = self._collect_local_functions(body)  # defs inside the def: in scope only here
        returned = None
        if returns_function:
            value = body.pop().value
            returned = _lambda_def(self.fresh("lambda_"), value, value) \
                if isinstance(value, gast.Lambda) else self.local_functions[value.id]
        body = eliminate_jumps(body, self.fresh, self.src)
        inner = []
        self.block(body, inner)
        self.locals, self.local_functions = saved, outer_functions
        self.inlining.pop()
        if returns_function:
            out.extend(inner)
            return returned
        result = A.const(None)
        if inner and isinstance(inner[-1], gast.Return):
            result = inner.pop().value
        out.extend(inner)
        return result


    def _is_known_function(self, node) -> bool:
        """Whether ``node`` names a function (or Cell) known before the run: ``np.sin``, ``f``."""
        if not isinstance(node, (gast.Name, gast.Attribute)):
            return False
        value = source.static_value(self.src, node, self.locals)
        return value is not source.MISSING and callable(value) and not isinstance(value, type)


# ----- helpers --------------------------------------------------------------------------------


def _assignment_counts(body) -> dict:
    """Name -> how many times ``body`` binds it (loop targets count twice: they rebind)."""
    counts = {}
    for node in A.walk(body):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            counts[node.id] = counts.get(node.id, 0) + 1
        elif isinstance(node, (gast.For, gast.comprehension)):
            for name in A.names_in(node.target, gast.Store):
                counts[name] = counts.get(name, 0) + 1
    return counts


def _returns_a_def(fdef) -> bool:
    """Whether ``fdef`` ends by returning one of the defs or lambdas written in its body, and
    returns nowhere else."""
    body = fdef.body
    if not body or not isinstance(body[-1], gast.Return):
        return False
    returns = [n for st in body[:-1] if not isinstance(st, gast.FunctionDef)
               for n in A.walk(st) if isinstance(n, gast.Return)]
    if isinstance(body[-1].value, gast.Lambda):
        return not returns
    if not isinstance(body[-1].value, gast.Name):
        return False
    name = body[-1].value.id
    defined = {st.name for st in body if isinstance(st, gast.FunctionDef)} | {
        st.targets[0].id for st in body if isinstance(st, gast.Assign) and len(st.targets) == 1
        and isinstance(st.targets[0], gast.Name) and isinstance(st.value, gast.Lambda)}
    return name in defined and not returns


def _substituted(node, values):
    """``node`` with the names in ``values`` read as those expressions."""
    class Substitute(gast.NodeTransformer):
        def visit_Name(self, name):
            if name.id in values and isinstance(name.ctx, gast.Load):
                return A.clone(values[name.id])
            return name

    return Substitute().visit(A.clone(node))


def _lambda_def(name, lam, like):
    """``def name(params): return body`` for ``lambda params: body``, at the line of ``like``."""
    fdef = gast.FunctionDef(name=name, args=lam.args,
                            body=[A.located(gast.Return(value=lam.body), like)],
                            decorator_list=[], returns=None, type_comment=None, type_params=[])
    return A.located(fdef, like)


def _constant_value(node):
    """The value of a constant or a tuple of constants, else MISSING."""
    if isinstance(node, gast.Constant):
        return node.value
    if isinstance(node, gast.Tuple):
        values = [_constant_value(e) for e in node.elts]
        return source.MISSING if source.MISSING in values else tuple(values)
    return source.MISSING


def _hint(target):
    if isinstance(target, gast.Name):
        return target.id
    if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
        return target.value.id + "_new"
    return "t"


def _op_hint(value, fallback):
    if isinstance(value, gast.BinOp):
        return _OP_NAMES.get(type(value.op), fallback)
    if isinstance(value, gast.UnaryOp):
        return _OP_NAMES.get(type(value.op), fallback)
    if isinstance(value, gast.Call):
        func = value.func
        return func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", fallback)
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        return value.value.id + "_i"
    if isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name):
        return f"{value.value.id}_{value.attr}"
    if isinstance(value, gast.Compare):
        return "cond"
    return fallback


def _reads(node, name):
    return name in A.names_in(node, gast.Load)


def _renamed(node, renames):
    node = A.clone(node)
    for sub in A.walk(node):
        if isinstance(sub, gast.Name) and sub.id in renames:
            sub.id = renames[sub.id]
    return node


def _is_call_to(node, names, normalizer):
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)):
        return False
    if node.func.id in normalizer.locals:
        return False
    return not names or node.func.id in names


# ----- jumps to flags ---------------------------------------------------------------------------


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


def normalize(src, fdef, names):
    return Normalizer(src, names).function(fdef)
