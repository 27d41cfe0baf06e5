"""Part of stage 3, normalize: expressions become one operation on atoms (see normalize.py).

``atom`` reduces an expression to a name or a constant, emitting the statements that compute it
into ``out`` under readable names (``mul``, ``sin``, ``x_i``); ``op`` reduces it to a single
operation on atoms. ``a and b`` and ``x if c else y`` become branches (short-circuit kept);
``a < b < c`` a chain of comparisons; a comprehension a loop appending to a list.
"""

from __future__ import annotations

import gast

from mindgrad import rules
from mindgrad.compiler import astutil as A
from mindgrad.compiler.front import source

OP_NAMES = {
    gast.Add: "add", gast.Sub: "sub", gast.Mult: "mul", gast.Div: "div", gast.Pow: "pow",
    gast.MatMult: "matmul", gast.FloorDiv: "floordiv", gast.Mod: "mod",
    gast.USub: "neg", gast.UAdd: "pos", gast.Not: "not_",
    gast.BitAnd: "and_", gast.BitOr: "or_", gast.BitXor: "xor", gast.LShift: "lshift",
    gast.RShift: "rshift", gast.Invert: "invert",
}


class Expressions:
    """The part of ``Normalizer`` that reduces expressions."""

    def atom(self, node, out, hint="t"):
        """``node`` reduced to an atom, emitting the statements that compute it."""
        value = self.op(node, out, hint)
        if A.is_atom(value) or self._is_module_attr(value):
            return value
        return A.load(self._emit(value, out, op_hint(value, hint)))

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
        if node.id in self.local_functions:  # a local def as a value: a function (lift.py)
            return self.function_as_value(self.local_functions[node.id], node)
        return A.load(node.id)

    def expr_Constant(self, node, out, hint):
        return node

    def expr_JoinedStr(self, node, out, hint):
        return node  # f-strings carry no gradient; kept as written

    def expr_BinOp(self, node, out, hint):
        name = OP_NAMES.get(type(node.op), "t")
        return gast.BinOp(left=self.atom(node.left, out, name), op=node.op,
                          right=self.atom(node.right, out, name))

    def expr_UnaryOp(self, node, out, hint):
        operand = self.atom(node.operand, out, OP_NAMES.get(type(node.op), "t"))
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
        call = self._index_call(node, out)
        if call is not None:
            return call
        base = self.atom(node.value, out, "seq")
        return gast.Subscript(value=base, slice=self.index(node.slice, out), ctx=gast.Load())

    def _index_call(self, node, out):
        """``np.r_[a, 0:3, b]`` as the call ``r_(a, slice(0, 3), b)`` of the function that
        computes it (``rules.indexed_as_call``), whose rules differentiate it; None for an
        index of anything else."""
        if not isinstance(node.value, (gast.Name, gast.Attribute)):
            return None
        fn = rules.index_call(source.static_value(self.src, node.value, self.locals))
        if fn is None:
            return None
        items = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        args = []
        for item in items:
            if isinstance(item, gast.Slice):
                item = A.call("slice", *[A.const(None) if p is None else p
                                         for p in (item.lower, item.upper, item.step)])
            args.append(self.atom(item, out, "item"))
        return gast.Call(func=A.load(self.constant(fn)), args=args, keywords=[])

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
        elt = A.renamed(node.elt, renames)
        inner = [A.expr_stmt(A.call(A.attr(A.load(result), "append"), elt), self.current)]
        for comprehension in reversed(node.generators):
            for cond in reversed(comprehension.ifs):
                inner = [A.if_(A.renamed(cond, renames), inner, [], self.current)]
            loop = gast.For(target=A.renamed(comprehension.target, renames),
                            iter=A.renamed(comprehension.iter, renames), body=inner, orelse=[],
                            type_comment=None)
            inner = [A.located(loop, self.current)]
        saved = self.locals
        self.locals = self.locals | set(renames.values()) | {result}
        self.block(inner, out)
        self.locals = saved
        return A.load(result)

    expr_GeneratorExp = expr_ListComp

    def expr_Lambda(self, node, out, hint):  # a lambda as a value: a function (lift.py)
        return self.function_as_value(self.function_value(node, out), node)


def op_hint(value, fallback):
    if isinstance(value, gast.BinOp):
        return OP_NAMES.get(type(value.op), fallback)
    if isinstance(value, gast.UnaryOp):
        return OP_NAMES.get(type(value.op), fallback)
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

