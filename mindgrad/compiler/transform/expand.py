"""Inlining gradient-rule templates into generated code (used by the reverse stage).

A template's parameters are replaced by the call's argument atoms, ``d[out]`` by the adjoint of
the call's result, its temporaries by fresh names, and the module names it reads (``np``,
``unbroadcast``, ...) by names that refer to the same objects in the generated function.
A statement ``d[p] = e`` becomes an accumulation into the adjoint of the argument bound to ``p``,
and is dropped when that argument needs no gradient. A template that cannot be applied raises;
it is never dropped silently.
"""

from __future__ import annotations

import builtins
import inspect

import gast
import numpy as np

from mindgrad import runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler.finish.optimize import Fold
from mindgrad.compiler.transform import reverse_numbers as numbers
from mindgrad.rules import RuleError, active_of, scaled
from mindgrad.rules.helpers import power
from mindgrad.runtime.origin import origin
from mindgrad.runtime.tangents import add_tangent, broadcast_tangent


def literal(value, bind):
    """An AST for a value known before the code runs (a default, a rule's constant argument):
    a constant when it is a plain literal, a tuple of such ASTs for a plain tuple, else a name
    bound to the object itself (never its ``repr``)."""
    if A.is_plain_literal(value):
        return A.const(value)
    if type(value) is tuple:
        return A.tuple_([literal(v, bind) for v in value])
    name = getattr(value, "__name__", None)
    return A.load(bind(value, name if isinstance(name, str) else "default"))


class _Substitute(A.Transformer):
    """Template names to generated ones. ``d_reads`` maps the template's readable ``d[...]``
    (the output's in an adjoint rule, the inputs' in a tangent rule) to expressions."""

    def __init__(self, rule, params, out_name, d_reads, temps, gen):
        self.rule, self.params, self.out_name = rule, params, out_name
        self.d_reads = d_reads if isinstance(d_reads, dict) else {rule.out: A.load(d_reads)}
        self.temps, self.bind = temps, gen.bind
        self.is_active = gen.is_active
        self.unbounded = gen.unbounded
        self.same_shape = gen.same_shape
        # reverse mode: the results known real (unbroadcast also takes a real operand's part)
        self.reals = gen.reals
        self.is_real = gen.is_real
        self.comprehension_names = set()
        self.unbroadcast = runtime.unbroadcast
        self.broadcasts = (broadcast_tangent, add_tangent)
        numeric, scalars = gen.numeric, gen.scalars  # read, not joined: a union per rule
        self.is_numeric = lambda node: isinstance(node, gast.Constant) and isinstance(
            node.value, (int, float, complex)) or isinstance(node, gast.Name) and \
            (node.id in numeric or node.id in scalars)

    def visit_comprehension(self, node):
        self.comprehension_names |= A.names_in(node.target, gast.Store)
        return self.generic_visit(node)

    def visit_ListComp(self, node):
        for gen in node.generators:
            self.comprehension_names |= A.names_in(gen.target, gast.Store)
        return self.generic_visit(node)

    visit_GeneratorExp = visit_ListComp

    def visit_Call(self, node):
        # unbroadcast(g, x) is the identity when x has the shape of the result, and the result
        # is real (else g may be complex where x is real: unbroadcast takes the real part)
        if isinstance(node.func, gast.Name) and self.rule.globals.get(node.func.id) is \
                self.unbroadcast and len(node.args) == 2 and isinstance(node.args[1], gast.Name):
            bound = self.params.get(node.args[1].id)
            if bound is not None and self.same_shape(bound, self.out_name) and \
                    self.real_unless_complex(bound):
                return self.visit(node.args[0])
        callee = self._callee(node.func)
        if callee is active_of:
            return self.active_positions(node)
        if callee is runtime.times_slope and self.rule.from_slopes:
            # an @elementwise slope: a plain product where it is finite (2 * x for x ** 2,
            # y for x * y), unless it reads a value that may be inf or NaN (unbounded_names)
            g, slope = (self.visit(arg) for arg in node.args)
            slope = Fold().visit(slope)
            # (a tangent rule has times_slope only for a slope at a pole: rules.derivation)
            if (_finite(slope) or not (self.rule.singular or self.rule.kind == "tangent")) and \
                    A.names_in(slope, gast.Load).isdisjoint(self.unbounded):
                return scaled(g, slope)
            return A.call(self.visit(node.func), g, slope)
        if callee is power and len(node.args) == 2 and not node.keywords:
            # x ** c for a constant c >= 0, which has no pole (2 * x for x ** 2)
            base, exponent = self.visit(node.args[0]), Fold().visit(self.visit(node.args[1]))
            if isinstance(exponent, gast.Constant) and type(exponent.value) in (int, float) \
                    and exponent.value >= 0:
                return Fold().visit(gast.BinOp(left=base, op=gast.Pow(), right=exponent))
            return A.call(self.visit(node.func), base, exponent)
        if callee in self.broadcasts and node.args:
            # broadcast_tangent(d[x], out) is d[x] when x is a number or an array of out's shape
            p = _tangent_param(node.args[0])
            bound = self.params.get(p) if p else None
            if bound is not None and self.same_shape(bound, self.out_name) and \
                    self.is_numeric(bound):
                return self.visit(node.args[0])
        node = self.generic_visit(node)
        return _without_defaults(node, callee)

    def active_positions(self, node):
        """``active_of(p, ...)``: the positions of the arguments bound to the template's
        parameters ``p, ...`` (a ``*args`` parameter's one by one) that take a gradient."""
        positions, index = [], 0
        for arg in node.args:
            if not (isinstance(arg, gast.Name) and arg.id in self.params):
                raise RuleError(f"the rule for {self.rule.name}: active_of() takes the "
                                "template's parameters")
            bound = self.params[arg.id]
            atoms = bound.elts if arg.id in self.rule.varargs else [bound]
            for atom in atoms:
                if isinstance(atom, gast.AST) and self.is_active(atom):
                    positions.append(index)
                index += 1
        return A.tuple_([A.const(i) for i in positions])

    def real_unless_complex(self, bound) -> bool:
        """Whether the result is real wherever ``bound`` (an operand) is: it is known real, or
        every other operand is (``x * 2.0``, ``h * h``). Else a real ``bound`` may meet a
        complex operand, and its gradient is the real part of a complex product."""
        if self.reals is None or self.out_name in self.reals:
            return True
        return all(node is bound or self.is_real(node) or isinstance(node, gast.Name) and
                   isinstance(bound, gast.Name) and node.id == bound.id
                   for node in self.params.values())

    def _callee(self, func):
        """The object a template's callee names (``np.sum``, ``reduce_sum_grad``), or None."""
        parts = []
        while isinstance(func, gast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name) or func.id in self.params or func.id in self.temps \
                or func.id not in self.rule.globals:
            return None
        value = self.rule.globals[func.id]
        for attr in reversed(parts):
            value = getattr(value, attr, None)
        return value

    def visit_Subscript(self, node):
        if isinstance(node.value, gast.Name) and node.value.id == "d":
            if node.slice.id not in self.d_reads:
                raise RuleError(f"the rule for {self.rule.name} reads d[{node.slice.id}], "
                                "which it may not read here")
            return A.clone(self.d_reads[node.slice.id])
        return self.generic_visit(node)

    def visit_Name(self, node):
        name = node.id
        if name in self.comprehension_names:
            return node
        if name == self.rule.out:
            return A.load(self.out_name)
        if name in self.params:
            return A.clone(self.params[name])
        if name in self.temps:
            return A.load(self.temps[name]) if isinstance(node.ctx, gast.Load) else A.store(
                self.temps[name])
        if name in self.rule.globals:
            return A.load(self.bind(self.rule.globals[name], name))
        if hasattr(builtins, name):
            return A.load(self.bind(getattr(builtins, name), name))
        raise RuleError(f"the rule for {self.rule.name} reads {name!r}, which is neither a "
                        "parameter, a temporary, nor a name of its module")


def _finite(expr) -> bool:
    """Whether ``expr`` is finite wherever the names it reads are: numbers, names, sums and
    products, powers of a non-negative integer exponent and quotients by a number other than
    0 (not ``1.0 / x``, ``x ** -1`` or a call such as ``np.sqrt(x)``)."""
    if isinstance(expr, gast.Name):
        return True
    if isinstance(expr, gast.Constant):
        return type(expr.value) in (int, float, bool) and np.isfinite(expr.value)
    if isinstance(expr, gast.UnaryOp):
        return isinstance(expr.op, (gast.USub, gast.UAdd)) and _finite(expr.operand)
    if not isinstance(expr, gast.BinOp) or not _finite(expr.left):
        return False
    if isinstance(expr.op, (gast.Add, gast.Sub, gast.Mult)):
        return _finite(expr.right)
    right = expr.right.value if isinstance(expr.right, gast.Constant) else None
    if isinstance(expr.op, gast.Pow):
        return type(right) is int and right >= 0
    return isinstance(expr.op, gast.Div) and type(right) in (int, float) and \
        right != 0 and np.isfinite(right)


def unbounded_names(fdef, resolve):
    """The locals of the normalized ``fdef`` that may hold inf or NaN where its arguments are
    finite: results of functions whose slope is singular (``np.log``, ``np.sqrt``, ``x / y``:
    the branch ``np.where`` does not take computes ``np.log(0)``) and what is computed from
    them, results of the user's functions (which may call those), and ``np.nan``,
    ``np.inf``. Objects called (a ``Cell``) are taken as finite where their arguments are.
    A gradient times a slope reading one of them is ``times_slope``: the 0 a branch not taken
    gets stays 0 (``d_mul * log`` for ``x * np.log(x)`` at 0). Flow-insensitive: a name
    assigned such a value anywhere is one."""
    from mindgrad import rules

    pairs = []
    for node in A.walk(fdef):
        if isinstance(node, gast.Assign):
            pairs.append((A.names_in(node.targets, gast.Store), node.value))
        elif isinstance(node, (gast.For, gast.AugAssign)):
            value = node.iter if isinstance(node, gast.For) else node
            pairs.append((A.names_in(node.target, gast.Store), value))

    def unbounded(value, found):
        for sub in A.walk(value):
            if isinstance(sub, gast.Name) and sub.id in found:
                return True
            if isinstance(sub, gast.Constant) and isinstance(sub.value, float) or \
                    isinstance(sub, (gast.Name, gast.Attribute)) and isinstance(sub.ctx, gast.Load):
                value = sub.value if isinstance(sub, gast.Constant) else resolve(sub)
                if isinstance(value, (float, np.floating)) and not np.isfinite(value):
                    return True  # np.nan, np.inf
            if isinstance(sub, gast.BinOp) and isinstance(
                    sub.op, (gast.Div, gast.Pow, gast.Mod, gast.FloorDiv)) and not _finite(sub):
                return True  # 1 / x, x ** -1, x ** 0.5
            if isinstance(sub, gast.Call) and resolve.receiver(sub.func) is None:
                target = resolve(sub.func)
                rule = rules.lookup(target)
                if rule is not None and rule.singular or rule is None and \
                        inspect.isfunction(target) and not origin(target).is_mindgrad:
                    return True  # np.log, or a function of the user's: it may call np.log
        return False

    found, changed = set(), True
    while changed:
        changed = False
        for names, value in pairs:
            if not names <= found and unbounded(value, found):
                found |= names
                changed = True
    return found


def _tangent_param(node):
    """``p`` for a template argument ``d[p]`` or ``-d[p]``, else None."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        node = node.operand
    if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and \
            node.value.id == "d" and isinstance(node.slice, gast.Name):
        return node.slice.id
    return None


_SIGNATURES = {}


def _defaults(fn):
    """Parameter name -> default of ``fn``, in order (None when it has no readable signature)."""
    key = id(fn)
    if key not in _SIGNATURES:
        try:
            params = inspect.signature(fn).parameters.values()
            _SIGNATURES[key] = (fn, [(p.name, p.default, p.kind) for p in params])
        except (TypeError, ValueError):
            _SIGNATURES[key] = (fn, None)
    return _SIGNATURES[key][1]


# NumPy marks some defaults as "no value given"; these are what that means
_NO_VALUE_MEANS = {"keepdims": False, "where": True}


def _is_default(node, default, name=None) -> bool:
    if default is getattr(np, "_NoValue", None) and name in _NO_VALUE_MEANS:
        default = _NO_VALUE_MEANS[name]
    return isinstance(node, gast.Constant) and type(node.value) is type(default) and \
        node.value == default


def _without_defaults(node, callee):
    """``node`` without the arguments that restate ``callee``'s defaults: trailing positional
    ones and keywords (``np.sum(t, None, None, None, False)`` reads ``np.sum(t)``)."""
    params = _defaults(callee) if callable(callee) else None
    if not params or any(isinstance(a, gast.Starred) for a in node.args):
        return node
    positional = [p for p in params
                  if p[2] in (inspect.Parameter.POSITIONAL_ONLY,
                              inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    defaults = {name: default for name, default, _ in params
                if default is not inspect.Parameter.empty}
    while node.args and len(node.args) <= len(positional):
        name, default, _ = positional[len(node.args) - 1]
        if default is inspect.Parameter.empty or not _is_default(node.args[-1], default, name):
            break
        node.args.pop()
    node.keywords = [k for k in node.keywords
                     if not (k.arg in defaults and _is_default(k.value, defaults[k.arg], k.arg))]
    return node


def instantiate(rule, args, keywords, out_name, d_out, gen):
    """The adjoint statements of ``out_name = f(*args, **keywords)`` from ``rule``.

    ``gen`` is reverse mode's ``ReverseContext`` (reverse_context.py): its ``is_active``,
    ``accumulate``, ``fresh``, ``bind`` and facts. ``args`` and ``keywords`` are atoms of the
    normalized call.
    """
    bound = _bound(rule, args, keywords, gen)
    if bound is None:
        return []
    params = {}
    for name, value in bound.items():
        if name in rule.varargs:
            params[name] = A.tuple_(value)
        elif isinstance(value, gast.AST):
            params[name] = value
        elif isinstance(value, dict):  # **kwargs of a rule: not inlined
            continue
        else:
            params[name] = literal(value, gen.bind)
    temps = {}
    out = []
    for stmt in rule.body:
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1):
            raise RuleError(f"the rule for {rule.name} may only contain assignments "
                            "(put branches in a helper function)")
        target = stmt.targets[0]
        if isinstance(target, gast.Subscript):  # d[p] = expr
            param = target.slice.id
            grads_for = _active_arguments(bound[param], param in rule.varargs, gen)
            if not grads_for:
                continue
            value = _Substitute(rule, params, out_name, d_out, temps, gen).visit(
                A.clone(stmt.value))
            numbers.note_reads(gen, value, d_out, out_name, rule)
            if param in rule.varargs or isinstance(grads_for, list):
                parts = gen.fresh("grads_" + _short(rule.name))
                gen.pure.add(parts)  # gradients: 0 where the one they come from is
                out.append(A.assign(parts, value))
                for index, atom in grads_for:
                    out.append(gen.accumulate(atom, A.subscript(A.load(parts), A.const(index))))
            else:
                numbers.note_producer(gen, stmt.value, value, grads_for, rule)
                out.append(gen.accumulate(grads_for, value))
        elif isinstance(target, gast.Name):
            temps.setdefault(target.id, gen.fresh(target.id))
            value = _Substitute(rule, params, out_name, d_out, temps, gen).visit(
                A.clone(stmt.value))
            if rule.singular or not A.names_in(value, gast.Load).isdisjoint(gen.unbounded):
                gen.unbounded.add(temps[target.id])  # a temporary of a slope: as unbounded
            out.append(A.assign(temps[target.id], value))
        else:
            raise RuleError(f"the rule for {rule.name} assigns to {type(target).__name__}")
    gen.pure.update(temps.values())
    return _unless_integer_at_run_time(out, bound, gen)


def instantiate_tangent(rule, args, keywords, out_name, t_out, gen):
    """The tangent statements of ``out_name = f(*args, **keywords)`` from a tangent ``rule``:
    each ``d[out] = expr`` reading ``d[p]`` becomes an accumulation into ``t_out``, dropped when
    the argument bound to ``p`` carries no tangent. ``gen`` is forward mode's ``ForwardContext``
    (forward_context.py)."""
    bound = _bound(rule, args, keywords, gen)
    if bound is None:
        return []
    params, tangents = {}, {}
    for name, value in bound.items():
        if name in rule.varargs:
            params[name] = A.tuple_(value)
            if any(gen.is_active(v) for v in value):
                tangents[name] = A.tuple_([gen.tangent_of(v) for v in value])
        elif isinstance(value, gast.AST):
            params[name] = value
            if gen.is_active(value):
                tangents[name] = gen.tangent_of(value)
        elif not isinstance(value, dict):
            params[name] = literal(value, gen.bind)
    for stmt in rule.body:
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1):
            raise RuleError(f"the tangent rule for {rule.name} may only contain assignments")
    temps, out = {}, []
    for stmt in rule.reading(tangents):  # an input without tangent contributes nothing
        value = _Substitute(rule, params, out_name, tangents, temps, gen).visit(
            A.clone(stmt.value))
        target = stmt.targets[0]
        if isinstance(target, gast.Subscript):
            out.append(gen.accumulate_tangent(t_out, value, out_name, rule))
        elif isinstance(target, gast.Name):
            temps.setdefault(target.id, gen.fresh(target.id))
            out.append(A.assign(temps[target.id], value))
        else:
            raise RuleError(f"the tangent rule for {rule.name} assigns to "
                            f"{type(target).__name__}")
    gen.pure.update(temps.values())
    return _unless_integer_at_run_time(out, bound, gen)


def _unless_integer_at_run_time(stmts, bound, gen):
    """``stmts`` under ``if inexact(dt):`` when the call's ``dtype=`` is a value known only
    at run time (``np.sum(x, dtype=dt)``, ``x.astype(y.dtype)``): an integer or boolean type
    makes the result a constant, whose gradient is zero."""
    dtype = bound.get("dtype")
    if not stmts or not isinstance(dtype, gast.AST) or \
            (isinstance(dtype, gast.Constant) and dtype.value is None) or \
            gen.resolve(dtype) is not None:
        return stmts
    return [A.if_(A.call(gen.helper(runtime.inexact), A.clone(dtype)), stmts, [])]


def _bound(rule, args, keywords, gen):
    """The call's arguments by the rule's parameter names, or None when the call casts to an
    integer (its result is a constant)."""
    try:
        bound = rule.bind(args, keywords)
    except TypeError as exc:
        raise RuleError(f"the call does not fit the rule for {rule.name}: {exc}") from None
    return None if casts_to_integer(bound, gen) else bound


def casts_to_integer(bound, gen) -> bool:
    """Whether the call's ``dtype=`` names an integer or boolean type (``np.sum(x, dtype=int)``,
    ``np.full(n, v, dtype=np.int64)``): its result is then a constant, whatever the rule says."""
    dtype = bound.get("dtype")
    if not isinstance(dtype, gast.AST):
        return False
    value = gen.resolve(dtype)
    try:
        return value is not None and np.dtype(value).kind not in "fc"
    except TypeError:
        return False


def _active_arguments(value, is_varargs, gen):
    if is_varargs:
        return [(i, a) for i, a in enumerate(value) if gen.is_active(a)]
    if isinstance(value, gast.AST) and gen.is_active(value):
        return value
    return None


def _short(name):
    return "".join(c for c in str(name) if c.isalnum() or c == "_")[:12] or "rule"
