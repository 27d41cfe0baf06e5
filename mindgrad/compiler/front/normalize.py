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
  ``*args``/``**kw`` (see ``specialise.specialise``) are spelled out, others are refused.
* Each statement keeps the ``lineno`` of the user statement it came from.
"""

from __future__ import annotations

import gast

from mindgrad import runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler import marks
from mindgrad.compiler.front import source
from mindgrad.compiler.front.inline import LocalFunctions, assignment_counts
from mindgrad.compiler.front.jumps import eliminate_jumps
from mindgrad.compiler.front.lift import Lifting
from mindgrad.compiler.front.normalize_calls import Calls
from mindgrad.compiler.front.normalize_expressions import OP_NAMES, Expressions, op_hint
from mindgrad.compiler.naming import NameGen
from mindgrad.errors import Located

_SEQUENCE_HELPERS = ("enumerate", "zip")


class Normalizer(Expressions, Calls, LocalFunctions, Lifting, Located):
    """Normalizes one function: its statements here, expressions in normalize_expressions.py,
    calls in normalize_calls.py, local functions and lambdas in inline.py, jumps in jumps.py."""

    def __init__(self, src, names: NameGen):
        self.src = src
        self.names = names
        self.local_functions = {}
        self.built_gradients = {}  # g = grad_op(net), assigned once: g -> the built constant
        self.pullbacks = {}  # out, back = vjp(f, x): back -> (grad of f with sens, inputs)
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
        self.assignments = assignment_counts(fdef.body)
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
        if isinstance(target, (gast.Tuple, gast.List)) and isinstance(value, gast.Call) and \
                self._vjp_call(s, target, value, out):
            return
        if isinstance(target, gast.Name) and isinstance(value, gast.Call) and \
                self.assignments.get(target.id) == 1:
            built = self._built_callee(value)  # g = self.grad_op(self.net); g(x)
            if built is not None:
                self.built_gradients[target.id] = built.id
                value = built
        self.assign_to(target, value, out, s)

    def stmt_AugAssign(self, s, out):
        target = s.target
        if isinstance(target, gast.Name):
            value = gast.BinOp(left=A.load(target.id), op=s.op, right=s.value)
            self.assign_to(A.store(target.id), value, out, s)
            marks.mark_in_place(out[-1])  # NumPy writes into the array: see marks.py
            return
        # x[i] += v  ->  x_i = x[i]; new = x_i + v; x[i] = new
        index = self.index(target.slice, out)
        old = self.fresh(target.value.id + "_i")
        out.append(A.assign(old, A.subscript(A.load(target.value.id), A.clone(index)), s))
        value = gast.BinOp(left=A.load(old), op=s.op, right=s.value)
        new = self.atom(value, out, OP_NAMES.get(type(s.op), "t"))
        out.append(A.assign(A.subscript(A.load(target.value.id), index, gast.Store()), new, s))

    def assign_to(self, target, value, out, s):
        if isinstance(target, gast.Name):
            rhs = self.op(value, out, target.id)
            if _reads(rhs, target.id) and not isinstance(rhs, gast.Name):
                rhs = A.load(self._emit(rhs, out, op_hint(rhs, target.id)))
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
            self.src.unrolled.append((iterable, items))
            for k in range(len(items)):
                name = self.fresh(target.id)
                element = A.subscript(A.clone(iterable), A.const(k))
                out.append(A.assign(name, element, s))
                self.src.aliases[name] = element
                self.block([A.renamed(b, {target.id: name}) for b in s.body], out)
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


# ----- helpers --------------------------------------------------------------------------------


def _hint(target):
    if isinstance(target, gast.Name):
        return target.id
    if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
        return target.value.id + "_new"
    return "t"


def _reads(node, name):
    return name in A.names_in(node, gast.Load)


def _is_call_to(node, names, normalizer):
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)):
        return False
    if node.func.id in normalizer.locals:
        return False
    return not names or node.func.id in names


def normalize(src, fdef, names):
    """``fdef`` normalized, and ``src`` with what normalizing found of its scope: aliases,
    constants, the functions used as values, the sequences unrolled (see ``Source``)."""
    normalizer = Normalizer(src.derive(), names)
    return normalizer.function(fdef), normalizer.src
