"""Rules derived from the templates written: the adjoint and the tangent of an ``@elementwise``
template's slopes (``from_slopes_body``), the tangent of a function linear in some arguments
from its signature (``@linear``: ``linear_body``), and the tangent of an elementwise function
read forwards from its adjoint (``@diagonal``: ``diagonal_body``).

Each takes a parsed template (``template.Rule``) and gives the statements of the derived rule,
in the template language (``d[x]``), which the compiler expands like a written one.
"""

from __future__ import annotations

import builtins
import copy
import inspect
import types

import gast

from mindgrad.rules.markers import RuleError, is_d
from mindgrad.runtime import times_slope, unbroadcast
from mindgrad.runtime.origin import Origin, origin
from mindgrad.runtime.tangents import broadcast_tangent


def is_elementwise_call(func) -> bool:
    """Whether ``func`` is ``np.where`` or an elementwise NumPy ufunc (``np.<name>``): these
    take the symbolic 0 as a number and give zeros of the shape of their other operands. A
    generalized ufunc (``np.matmul``, with a core signature) does not: it needs dimensions."""
    import numpy as np

    if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)):
        return False
    fn = getattr(np, func.attr, None)
    return fn is np.where or isinstance(fn, np.ufunc) and fn.signature is None


def from_slopes_body(rule, body):
    """The adjoint (``d[x] = d[out] * s``) or tangent (``d[out] = d[x] * s``) statements of
    an ``@elementwise`` template's ``slope[x] = s``; other statements (temporaries) stay.

    A function of several arguments broadcasts them (``math`` functions take numbers): each
    gradient is summed back to its argument's shape (``unbroadcast``), and a tangent that a
    product with ``out`` or with every other argument does not give the output's shape is
    broadcast to it (``broadcast_tangent``: ``d[out] = broadcast_tangent(d[x], out)`` for
    ``x - y``, but ``d[out] = d[x] * y`` for ``x * y``).

    A gradient is ``times_slope(d[out], s)``: 0 where ``d[out]`` is 0, whatever the slope
    there. Expanded, it stays so where the slope may be inf or NaN: a ``singular`` rule's
    (``np.log``), or one reading a value that may be (``x * np.log(x)`` at 0, in the branch
    ``np.where`` did not take); elsewhere it is the product ``d[out] * s``
    (``compiler.expand``). Tangents stay products (a NaN tangent is where the value is NaN
    too, and ``np.where``'s tangent selects), but for a slope computed at a pole of a function
    finite there (``quotient``, ``power``: ``np.sqrt`` at 0), which is ``times_slope``."""
    out, params = rule.out, rule.params
    _bind_runtime(rule, "times_slope", times_slope)
    broadcasts = len(params) > 1 and origin(rule.key) is not Origin.MATH
    if broadcasts:
        _bind_runtime(rule, "unbroadcast", unbroadcast)
        _bind_runtime(rule, "broadcast_tangent", broadcast_tangent)
    reads = {}  # temporary -> the parameters and output its value reads
    derived = []
    for stmt in body:
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            else None
        if not (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)
                and target.value.id == "slope" and isinstance(target.slice, gast.Name)):
            if any(isinstance(n, gast.Name) and n.id == "slope" for n in gast.walk(stmt)):
                raise RuleError(f"the elementwise rule for {rule.name}: write slope[x] = ... "
                                "as a statement of its own")
            for name in stored_names(stmt):
                reads[name] = _reads(stmt.value, reads)
            derived.append(stmt)
            continue
        param, factor = target.slice.id, stmt.value
        local = set(params) | {out} | set(reads)
        if rule.kind == "tangent":
            value = _call("times_slope", _d_load(param), factor) if _at_pole(factor, rule) \
                else _times(_d_load(param), factor, local)
            shaped = _reads(factor, reads)
            if broadcasts and out not in shaped and not set(params) - {param} <= shaped:
                value = _call("broadcast_tangent", value, _name(out))
            stmt = _d_assign(out, value)
        else:
            value = _times(_d_load(out), factor, local) if _is_constant(factor, local) \
                else _call("times_slope", _d_load(out), factor)
            if broadcasts and isinstance(value, gast.UnaryOp) and \
                    isinstance(value.op, gast.USub):
                # -unbroadcast(g, y): summed to y's shape first, then negated, rather than a
                # negated array of the result's shape built only to be summed
                value = gast.UnaryOp(op=gast.USub(),
                                     operand=_call("unbroadcast", value.operand, _name(param)))
            elif broadcasts:
                value = _call("unbroadcast", value, _name(param))
            stmt = _d_assign(param, value)
        derived.append(stmt)
    return derived


def _at_pole(factor, rule) -> bool:
    """Whether a slope calls a helper that computes it at a pole of a function finite there
    (``quotient(0.5, out)``, ``np.sqrt``'s at 0): its tangent is ``times_slope(d[x], s)``
    too, 0 where ``d[x]`` is 0 (the branch ``np.where`` did not take), not ``0 * inf``."""
    return any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and
               getattr(rule.globals.get(n.func.id), "at_pole", False) for n in gast.walk(factor))


def _bind_runtime(rule, name, fn):
    """Make ``name`` in a derived body read the runtime's ``fn``."""
    if rule.globals.setdefault(name, fn) is not fn:
        raise RuleError(f"the rule for {rule.name} derives a body calling {name}, which its "
                        "module binds to something else")


def stored_names(stmt):
    """The names an assignment assigns (not a comprehension's variables in its value)."""
    return {n.id for target in getattr(stmt, "targets", []) for n in gast.walk(target)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _reads(expr, temporaries):
    """The names ``expr`` reads, with what the temporaries among them read."""
    names = set()
    for n in gast.walk(expr):
        if isinstance(n, gast.Name):
            names.add(n.id)
            names |= temporaries.get(n.id, set())
    return names


def _is_constant(factor, local) -> bool:
    """Whether a slope reads no parameter, output or temporary (``math.pi / 180.0``)."""
    return not _reads(factor, {}) & local


def _times(g, factor, local):
    """``g`` times ``factor``: a factor that reads no parameter, output or temporary is a
    constant, multiplied as one number (``d[x] * (math.pi / 180.0)``); else ``scaled``."""
    if isinstance(factor, gast.BinOp) and not _reads(factor, {}) & local:
        return gast.BinOp(left=g, op=gast.Mult(), right=factor)
    return scaled(g, factor)


def _call(name, *args):
    return gast.Call(func=_name(name), args=list(args), keywords=[])


def _d_load(name):
    return gast.Subscript(value=gast.Name(id="d", ctx=gast.Load(), annotation=None,
                                          type_comment=None),
                          slice=gast.Name(id=name, ctx=gast.Load(), annotation=None,
                                          type_comment=None),
                          ctx=gast.Load())


def _d_assign(name, value):
    target = _d_load(name)
    target.ctx = gast.Store()
    return gast.Assign(targets=[target], value=value, type_comment=None)


def scaled(g, factor):
    """``g`` times ``factor`` written as a person would: ``g * a / b`` for ``a / b``, ``g / b``
    for ``1.0 / b``, ``-g * a`` for ``-a``, ``g * (a + b)`` otherwise."""
    if isinstance(factor, gast.BinOp) and isinstance(factor.op, (gast.Mult, gast.Div)):
        return gast.BinOp(left=scaled(g, factor.left), op=factor.op, right=factor.right)
    if isinstance(factor, gast.UnaryOp) and isinstance(factor.op, gast.USub):
        return scaled(gast.UnaryOp(op=gast.USub(), operand=g), factor.operand)
    if isinstance(factor, gast.Constant) and not isinstance(factor.value, bool) and \
            factor.value == 1:
        return g
    return gast.BinOp(left=g, op=gast.Mult(), right=factor)


def _callee(rule, fn):
    """An expression naming ``fn`` as the template's module would write it: its own name where
    the module binds it (or a builtin), ``np.reshape`` where the module has ``np``,
    ``np.multiply.outer`` for a method of a ufunc, else a name added to the rule's namespace."""
    name = getattr(fn, "__name__", None)
    if isinstance(name, str) and name.isidentifier():
        if rule.globals.get(name, getattr(builtins, name, None)) is fn:
            return _name(name)  # bound in the module, or a builtin it does not shadow
        for module_name, module in sorted(rule.globals.items()):
            if isinstance(module, types.ModuleType) and getattr(module, name, None) is fn:
                return gast.Attribute(value=_name(module_name), attr=name, ctx=gast.Load())
        home = getattr(fn, "__module__", None) or ""
        for module_name, module in sorted(rule.globals.items()):  # np.fft.rfft where np is bound
            if isinstance(module, types.ModuleType) and home.startswith(module.__name__ + "."):
                path, owner = home[len(module.__name__) + 1:].split("."), module
                for part in path:
                    owner = getattr(owner, part, None)
                if getattr(owner, name, None) is fn:
                    node = _name(module_name)
                    for part in path + [name]:
                        node = gast.Attribute(value=node, attr=part, ctx=gast.Load())
                    return node
        owner = getattr(fn, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType) and \
                getattr(owner, name, None) == fn:  # np.multiply.outer: a new object each time
            return gast.Attribute(value=_callee(rule, owner), attr=name, ctx=gast.Load())
    alias = f"{name if isinstance(name, str) and name.isidentifier() else 'linear_fn'}_"
    rule.globals[alias] = fn
    return _name(alias)


def _name(ident):
    return gast.Name(id=ident, ctx=gast.Load(), annotation=None, type_comment=None)


def _is_out_buffer(p) -> bool:
    """NumPy's ``out=None``: where a call writes its result; a tangent is a new array."""
    return p.name == "out" and p.default is None


def linear_body(rule, params):
    """``d[out] = f(..., d[p], ...)`` for each parameter ``p`` a ``@linear`` rule is linear in:
    the function applied to the tangent, its other arguments as the call gave them (positional
    parameters by position, keyword-only ones by keyword; defaults are dropped when the
    template is expanded; NumPy's ``out=`` buffer is not passed on). An array method applies to
    the receiver's tangent (``d[a].ravel(order)``), an attribute reads it (``d[x].T``); with
    ``via``, that function is applied instead, the receiver first."""
    kinds = inspect.Parameter
    names = [p.name for p in params]
    for p in rule.linear_in:
        if p not in names:
            raise RuleError(f"the linear rule for {rule.name} names {p!r}, which is not a "
                            f"parameter of its template")
    if any(p.kind in (kinds.VAR_POSITIONAL, kinds.VAR_KEYWORD) for p in params
           if p.name in rule.linear_in):
        raise RuleError(f"the linear rule for {rule.name}: a *args or **kwargs parameter needs "
                        "a hand-written tangent")
    for p in rule.added:
        if p not in names or p in rule.linear_in:
            raise RuleError(f"the linear rule for {rule.name} adds {p!r}, which is not a "
                            "parameter of its template or is one it is linear in")
    body = []
    for wrt in rule.linear_in:
        def arg(p, wrt=wrt):
            return _d_load(p.name) if p.name == wrt else _name(p.name)

        if isinstance(rule.key, tuple) and rule.key[0] == "attr" and rule.via is None:
            call = gast.Attribute(value=arg(params[0]), attr=rule.key[1], ctx=gast.Load())
        else:
            rest = params
            if rule.via is not None:
                func = _callee(rule, rule.via)
            elif isinstance(rule.key, tuple):  # a method: the receiver is the first parameter
                func = gast.Attribute(value=arg(params[0]), attr=rule.key[1], ctx=gast.Load())
                rest = params[1:]
            else:
                func = _callee(rule, rule.key)
            args, keywords, by_keyword = [], [], False
            for p in rest:
                if _is_out_buffer(p) and not rule.of_helper:
                    by_keyword = True  # the parameters after it are passed by name
                elif p.name in rule.added:  # left at its default: its own term adds it
                    by_keyword = True
                elif p.kind is kinds.VAR_POSITIONAL:
                    args.append(gast.Starred(value=arg(p), ctx=gast.Load()))
                elif p.kind is kinds.VAR_KEYWORD:
                    keywords.append(gast.keyword(arg=None, value=_name(p.name)))
                elif p.kind is kinds.KEYWORD_ONLY or by_keyword:
                    keywords.append(gast.keyword(arg=p.name, value=arg(p)))
                else:
                    args.append(arg(p))
            call = gast.Call(func=func, args=args, keywords=keywords)
        body.append(_d_assign(rule.out, call))
    if rule.added:
        _bind_runtime(rule, "broadcast_tangent", broadcast_tangent)
    for p in rule.added:
        body.append(_d_assign(rule.out, _call("broadcast_tangent", _d_load(p), _name(rule.out))))
    return body


def output_parameter(fdef, params):
    """The output parameter a ``@linear_in`` helper's rule reads: ``out``, unless the helper
    has a parameter of that name (then ``ans``); added to the def's arguments in front."""
    taken = {p.name for p in params}
    name = next(n for n in ("out", "ans", "result", "out_") if n not in taken)
    node = gast.Name(id=name, ctx=gast.Param(), annotation=None, type_comment=None)
    (fdef.args.posonlyargs or fdef.args.args).insert(0, node)
    fdef.decorator_list = []
    return inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def diagonal_body(rule, body):
    """The tangent statements of a ``@diagonal`` rule from its adjoint template's ``d[x] = e``:
    ``d[out] = e`` with ``d[out]`` read as ``d[x]`` and ``unbroadcast(., x)`` as
    ``broadcast_tangent(., out)``."""
    _bind_runtime(rule, "broadcast_tangent", broadcast_tangent)
    derived = []
    for stmt in body:
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            else None
        if isinstance(target, gast.Subscript) and is_d(target.value):
            param = target.slice.id
            reads = [n for n in gast.walk(stmt.value)
                     if isinstance(n, gast.Subscript) and is_d(n.value)]
            if not reads:
                raise RuleError(f"the diagonal rule for {rule.name}: d[{param}] = ... must "
                                f"read d[{rule.out}]")
            derived.append(_d_assign(rule.out, _Forwards(rule, param).visit(stmt.value)))
        elif any(isinstance(n, gast.Subscript) and is_d(n.value) for n in gast.walk(stmt)):
            raise RuleError(f"the diagonal rule for {rule.name}: a temporary may not read "
                            "d[...]")
        else:
            derived.append(stmt)
    return derived


class _Forwards(gast.NodeTransformer):
    """An adjoint statement's value for ``d[param]`` read forwards (``diagonal_body``)."""

    def __init__(self, rule, param):
        self.rule, self.param = rule, param

    def visit_Subscript(self, node):
        if is_d(node.value):
            return _d_load(self.param)
        return self.generic_visit(node)

    def visit_Call(self, node):
        node = self.generic_visit(node)
        func = node.func
        if isinstance(func, gast.Name) and self.rule.globals.get(func.id) is unbroadcast and \
                len(node.args) == 2 and isinstance(node.args[1], gast.Name) and \
                node.args[1].id == self.param:
            return _call("broadcast_tangent", node.args[0], _name(self.rule.out))
        return node


def transposed_body(rule, body, lookup):
    """The adjoint statements of a ``@transpose`` rule from its tangent template: each
    ``d[out] = h(..., d[x], ...)``, a call of a function ``h`` linear in the argument given
    ``d[x]``, is transposed by ``h``'s own adjoint rule, ``d[t] = e`` for that argument ``t``:
    ``d[x] = e`` with ``h``'s output gradient read as ``d[out]`` and its other parameters as the
    call's arguments. The transpose of a linear map does not depend on the point: where ``h``'s
    rule reads ``t`` or ``h``'s output (for a shape, a dtype, the structure of a list), ``x`` and
    ``out`` stand in for them, which a tangent and its primal share. A tangent statement of
    another form is refused; temporaries of the tangent template stay (they read primal values
    only).
    ``lookup`` finds the adjoint rule of ``h`` (the registry's)."""
    local = set(rule.params) | {rule.out} | {n for s in body for n in stored_names(s)}
    derived = []
    for stmt in body:
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            else None
        if not (isinstance(target, gast.Subscript) and is_d(target.value)):
            if any(isinstance(n, gast.Subscript) and is_d(n.value) for n in gast.walk(stmt)):
                raise RuleError(f"the transposed rule for {rule.name}: a temporary may not read "
                                "d[...]")
            derived.append(stmt)
            continue
        call = stmt.value
        if not isinstance(call, gast.Call) or any(isinstance(a, gast.Starred) for a in call.args):
            raise RuleError(f"the transposed rule for {rule.name}: each d[{rule.out}] = ... must "
                            "be one call of a function linear in the tangent it reads")
        operands = list(call.args) + [k.value for k in call.keywords]
        reading = [a for a in operands if any(isinstance(n, gast.Subscript) and is_d(n.value)
                                              for n in gast.walk(a))]
        if len(reading) != 1 or not (isinstance(reading[0], gast.Subscript) and
                                     is_d(reading[0].value)):
            raise RuleError(f"the transposed rule for {rule.name}: the call must take one "
                            "tangent, d[x], as an argument of its own")
        param = reading[0].slice.id
        fn = _resolved(rule, call.func)
        inner = lookup(fn) if fn is not None else None
        if inner is None or inner.kind != "adjoint":
            raise RuleError(f"the transposed rule for {rule.name}: {_label(call.func)} has no "
                            "adjoint rule to transpose it by")
        try:
            bound = inner.signature.bind(*call.args, **{k.arg: k.value for k in call.keywords})
        except TypeError as exc:
            raise RuleError(f"the transposed rule for {rule.name}: {exc}") from None
        bound.apply_defaults()
        values = dict(bound.arguments)
        linear_param = next((q for q, v in values.items() if v is reading[0]), None)
        if linear_param is None:  # given to a *args or **kwargs parameter
            raise RuleError(f"the transposed rule for {rule.name}: d[{param}] must go to a "
                            f"parameter of {inner.name} of its own")
        for p, v in values.items():
            if not isinstance(v, gast.AST):
                if v is not None and not isinstance(v, (bool, int, float, str)):
                    raise RuleError(f"the transposed rule for {rule.name}: the default of "
                                    f"{p} is not a literal")
                values[p] = gast.Constant(value=v, kind=None)
        if not any(isinstance(st, gast.Assign) and isinstance(st.targets[0], gast.Subscript)
                   and st.targets[0].slice.id == linear_param for st in inner.body):
            raise RuleError(f"the transposed rule for {rule.name}: the adjoint of {inner.name} "
                            f"gives nothing for {linear_param}, which the tangent reads")
        for inner_stmt in inner.body:
            t = inner_stmt.targets[0] if isinstance(inner_stmt, gast.Assign) else None
            if not (isinstance(t, gast.Subscript) and is_d(t.value)):
                raise RuleError(f"the transposed rule for {rule.name}: the adjoint of "
                                f"{inner.name} has temporaries")
            if t.slice.id != linear_param:
                continue
            values[linear_param] = _name(param)  # the primal stands in for its tangent
            value = _Substituted(rule, inner, values, local).visit(
                copy.deepcopy(inner_stmt.value))
            derived.append(_d_assign(param, value))
    return _shared_parts(derived, local)


def _names_read(node):
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}


def _reads_gradient(node) -> bool:
    return any(isinstance(n, gast.Subscript) and is_d(n.value) for n in gast.walk(node))


def _shared_parts(body, local):
    """A call of the output's gradient that several derived statements make alike
    (``lstsq_grads(d[out], a, b, out)[0]`` and ``[1]``, the transposes of a helper that gives
    every argument's gradient at once; ``solve_adjoint(d[out], a, b)`` in ``b``'s gradient and
    ``a``'s): made once, in a temporary before the first, as a hand-written adjoint does."""
    while True:
        seen = {}  # dump -> (statements reading it, the node)
        for index, stmt in enumerate(body):
            if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript)
                    and is_d(stmt.targets[0].value)):
                continue
            for node in gast.walk(stmt.value):
                if isinstance(node, gast.Call) and _reads_gradient(node):
                    entry = seen.setdefault(gast.dump(node), (set(), node))
                    entry[0].add(index)
        shared = [(len(key), key, node, sorted(where)) for key, (where, node) in seen.items()
                  if len(where) > 1]
        if not shared:
            return body
        _, key, node, where = max(shared, key=lambda item: item[0])  # the outermost
        name = "grads"  # not a name the call reads (the helper's own)
        while name in local or name in _names_read(node):
            name += "_"
        local.add(name)
        for index in where:
            body[index] = _Replaced(key, name).visit(body[index])
        temp = gast.Assign(targets=[gast.Name(id=name, ctx=gast.Store(), annotation=None,
                                              type_comment=None)],
                           value=copy.deepcopy(node), type_comment=None)
        body = body[:where[0]] + [temp] + body[where[0]:]


class _Replaced(gast.NodeTransformer):
    """Every occurrence of the expression dumped as ``key`` read from the name ``name``."""

    def __init__(self, key, name):
        self.key, self.name = key, name

    def visit_Call(self, node):
        if gast.dump(node) == self.key:
            return _name(self.name)
        return self.generic_visit(node)


def _label(func) -> str:
    """A callee expression as written (``np.linalg.solve``), for an error message."""
    if isinstance(func, gast.Attribute):
        return f"{_label(func.value)}.{func.attr}"
    return func.id if isinstance(func, gast.Name) else type(func).__name__


def _resolved(rule, func):
    """The object the callee expression ``func`` of a template names, or None."""
    if isinstance(func, gast.Name):
        return rule.globals.get(func.id, getattr(builtins, func.id, None))
    if isinstance(func, gast.Attribute):
        owner = _resolved(rule, func.value)
        return getattr(owner, func.attr, None) if owner is not None else None
    return None


class _Substituted(gast.NodeTransformer):
    """An adjoint rule's expression (``transposed_body``) rewritten into the rule transposed:
    ``d[<its output>]`` as ``d[out]``, its output's value as ``out``, its parameters as the
    call's arguments, and the functions it calls named as the derived rule's module names them
    (bound in its namespace where it does not)."""

    def __init__(self, rule, inner, values, local):
        self.rule, self.inner, self.values = rule, inner, values
        self.local = local  # the tangent template's parameters, output and temporaries

    def visit_Subscript(self, node):
        if is_d(node.value):
            if not (isinstance(node.slice, gast.Name) and node.slice.id == self.inner.out):
                raise RuleError(f"the transposed rule for {self.rule.name}: the adjoint of "
                                f"{self.inner.name} reads another gradient than its output's")
            return _d_load(self.rule.out)
        return self.generic_visit(node)

    def visit_Attribute(self, node):
        obj = _resolved(self.inner, node)
        if callable(obj) and not isinstance(obj, type):  # nd.draw_grad: draw_grad where bound
            return _callee(self.rule, obj)
        return self.generic_visit(node)

    def visit_Name(self, node):
        if node.id == self.inner.out:
            return _name(self.rule.out)
        if node.id in self.values:
            return copy.deepcopy(self.values[node.id])
        obj = self.inner.globals.get(node.id, getattr(builtins, node.id, None))
        if obj is not None and node.id in self.local:
            raise RuleError(f"the transposed rule for {self.rule.name}: the adjoint of "
                            f"{self.inner.name} reads {node.id}, a name of the tangent template")
        if obj is not None and self.rule.globals.setdefault(node.id, obj) is not obj:
            raise RuleError(f"the transposed rule for {self.rule.name} calls {node.id}, which "
                            "its module binds to something else")
        return node
