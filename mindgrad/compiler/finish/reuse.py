"""Stage 6b, reuse: the gradient function of large arrays writes into dead temporaries and
releases them.

It runs on the assembled entry function of a gradient whose arguments include a large array
(``cache.kind`` marks them), over the statements of its body, not those nested in loops or
branches (a loop's scalar arithmetic would pay for the checks on every step). Two rewrites,
both from one liveness analysis of the body, conservative where control flows (a compound
statement reads every name it reads anywhere in it, and is taken to assign none):

* an elementwise operation of names and constants, ``t = a * b``, ``t = -a`` or
  ``t = np.exp(a)`` with a NumPy ufunc that keeps its operands' dtype, whose operand ``a`` is
  a local name never read after it (or ``t`` itself), becomes
  ``t = np.multiply(a, b, out=a) if spare(a, b) else a * b``: ``runtime.reuse.spare`` says
  yes only when nothing else holds the array and the result fits it, so the expression as
  written runs otherwise (a tuple's ``+``, a number's ``*``);
* an elementwise operation of atoms nested in a statement, one of whose names is dead after
  the statement and read nowhere else in it, is first made a statement of its own, just
  before, so that the rewrite above writes it into the dead name's memory
  (``d_x = add_into(d_x, times_slope(g, np.exp(x - y)))`` with ``y`` dead computes
  ``x - y`` into ``y``, then its exponential in place), when every call of the statement is
  NumPy's or one of mindgrad's pure helpers (which change no name's value, so the order the
  parts are computed in does not matter); when two operands are dead, each is offered in
  turn (a gradient broadcast from a number, a read-only view, cannot take the result; the
  other may);
* an accumulation ``t = a + <expression>``, ``a`` dead after it, becomes
  ``t = add_into(a, <expression>)``: ``a + <expression>`` into ``a``'s memory on the same
  conditions, else as written;
* a local name dead after a statement is released (``del a, b``) right after it, when every
  assignment of it is a statement of the body (so it is bound there) and it is not read in a
  nested scope.

Output guarantee: the function computes the same values; an operand written into is never
read again, by name (the liveness) or through another reference (``spare``).
"""

from __future__ import annotations

import gast
import numpy as np

from mindgrad.compiler import astutil as A
from mindgrad.compiler.facts import activity
from mindgrad.compiler.naming import NameGen
from mindgrad.runtime.origin import origin

_OPERATORS = {gast.Add: np.add, gast.Sub: np.subtract, gast.Mult: np.multiply,
              gast.Div: np.true_divide}
_UNARY = {gast.USub: np.negative}

#: ufuncs whose float (or complex) result has the dtype of their operands
SAME_DTYPE = frozenset({
    np.add, np.subtract, np.multiply, np.true_divide, np.negative, np.positive, np.power,
    np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sqrt, np.square,
    np.reciprocal, np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh,
    np.tanh, np.arcsinh, np.arccosh, np.arctanh, np.maximum, np.minimum, np.fmax, np.fmin,
    np.logaddexp, np.logaddexp2, np.arctan2, np.hypot})

_SCOPES = (gast.Lambda, gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.ListComp,
           gast.SetComp, gast.DictComp, gast.GeneratorExp)
_INTROSPECTION = frozenset({"locals", "vars", "eval", "exec", "globals"})


def reuse_buffers(fdef, resolve, scalars, bind):
    """Rewrite the body of ``fdef`` (the entry function) in place. ``resolve(node)`` gives the
    object a function expression names (None if unknown); ``scalars``, names known to hold
    numbers; ``bind(obj, name)``, the name the code reaches a runtime object by."""
    body = fdef.body
    args = fdef.args
    params = {a.id for a in args.args + args.kwonlyargs + [args.vararg, args.kwarg] if a}
    if A.names_in(body, gast.Load) & _INTROSPECTION:
        return  # the code reads its frame's names by other means than their loads
    excluded = params | set(scalars) | _scoped_names(body)
    # only the function's own names: a global or a closure's array is the user's, and a
    # dict holding it once counts as one local name does
    excluded |= A.names_in(body, gast.Load) - A.names_in(body, gast.Store)
    numbers = _numbers(fdef, params, scalars, resolve)
    _contract(body, resolve, bind)  # a product of names, before it is hoisted
    body = fdef.body = _hoisted(body, resolve, excluded | numbers, A.names_in(fdef))
    _contract(body, resolve, bind)  # a slope hoisted into a name of its own
    top_stores = {}
    nested_stores = set()
    for i, stmt in enumerate(body):
        if _simple(stmt):
            for name in A.names_in(stmt, gast.Store):
                top_stores.setdefault(name, i)
        else:
            nested_stores |= A.names_in(stmt, gast.Store)
    live = _live_after(body)
    spare = np_name = add_into = None
    out = []
    for i, stmt in enumerate(body):
        rewrite = _operation(stmt, resolve) if _simple(stmt) else None
        into = _accumulation(stmt) if rewrite is None else None
        if into is not None and into.id not in excluded and \
                (into.id == stmt.targets[0].id or into.id not in live[i]):
            if add_into is None:
                from mindgrad.runtime.reuse import add_into as add_into_fn
                add_into = bind(add_into_fn, "add_into")
            stmt.value = A.call(A.load(add_into), A.load(into.id), stmt.value.right)
        if rewrite is not None:
            target, ufunc, operands = rewrite
            donors = [o.id for o in operands if isinstance(o, gast.Name) and
                      o.id not in excluded and (o.id == target or o.id not in live[i])]
            # a donor read once by the operation: its memory takes the result
            donors = [n for n in dict.fromkeys(donors)
                      if sum(isinstance(o, gast.Name) and o.id == n for o in operands) == 1]
            if donors and spare is None:
                from mindgrad.runtime.reuse import spare as spare_fn
                spare, np_name = bind(spare_fn, "spare"), bind(np, "np")
            for donor in reversed(donors):
                others = [o for o in operands if not (isinstance(o, gast.Name) and
                                                      o.id == donor)]
                stmt.value = gast.IfExp(
                    test=A.call(A.load(spare), A.load(donor), *[A.clone(o) for o in others]),
                    body=_ufunc_call(np_name, ufunc, operands, donor),
                    orelse=stmt.value)
        out.append(stmt)
        if isinstance(stmt, gast.Return):
            continue
        used = A.names_in(stmt)
        dead = sorted(n for n in used - live[i] if n not in excluded and n not in numbers and
                      n not in nested_stores and top_stores.get(n, len(body)) <= i)
        if dead:
            out.append(gast.Delete(targets=[gast.Name(id=n, ctx=gast.Del(), annotation=None,
                                                      type_comment=None) for n in dead]))
    fdef.body = out


def _contract(body, resolve, bind):
    """``unbroadcast(a * b, x)`` and ``unbroadcast(times_slope(a, b), x)`` of names, in the
    statements of ``body``, as ``unbroadcast_product(a, b, x[, True])``: the sum of the products
    without their array, where they are float64 arrays of one shape (``runtime.reuse``)."""
    from mindgrad import runtime
    from mindgrad.runtime.reuse import unbroadcast_product
    helper = None
    for stmt in body:
        if not _simple(stmt):
            continue
        for node in A.walk(stmt):
            if not (isinstance(node, gast.Call) and len(node.args) == 2 and
                    not node.keywords and resolve(node.func) is runtime.unbroadcast):
                continue
            product, x = node.args
            if isinstance(product, gast.BinOp) and isinstance(product.op, gast.Mult):
                operands, slope = [product.left, product.right], []
            elif isinstance(product, gast.Call) and len(product.args) == 2 and \
                    not product.keywords and resolve(product.func) is runtime.times_slope:
                operands, slope = list(product.args), [A.const(True)]
            else:
                continue
            if not all(isinstance(o, gast.Name) for o in operands + [x]):
                continue
            helper = helper or bind(unbroadcast_product, "unbroadcast_product")
            node.func, node.args = A.load(helper), operands + [x] + slope


_NAMES = {gast.Add: "add", gast.Sub: "sub", gast.Mult: "mul", gast.Div: "div",
          gast.USub: "neg"}


def _hoisted(body, resolve, excluded, taken):
    """``body`` with the elementwise operations of atoms nested in its statements that have a
    dead operand to write into made statements of their own, innermost first (see the module's
    note). ``excluded``: names never written into; ``taken``: the names in use."""
    fresh = NameGen(taken)
    live = _live_after(body)
    out = []
    for i, stmt in enumerate(body):
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], gast.Name)) or not _pure_calls(stmt, resolve):
            out.append(stmt)
            continue
        loads = {}
        for node in A.walk(stmt.value):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                loads[node.id] = loads.get(node.id, 0) + 1
        dead = {n for n, count in loads.items()
                if count == 1 and n not in excluded and n not in live[i]}
        before = []
        _hoist(stmt.value, stmt, dead, before, resolve, fresh, root=True)
        out.extend(before)
        out.append(stmt)
    return out


def _hoist(node, stmt, dead, before, resolve, fresh, root=False):
    """``node`` with its nested elementwise operations of atoms that read a name of ``dead``
    replaced by fresh names, whose assignments go to ``before`` (innermost first)."""
    if isinstance(node, gast.Call):
        node.args = [_hoist(a, stmt, dead, before, resolve, fresh) for a in node.args]
    elif isinstance(node, gast.BinOp):
        node.left = _hoist(node.left, stmt, dead, before, resolve, fresh)
        node.right = _hoist(node.right, stmt, dead, before, resolve, fresh)
    elif isinstance(node, gast.UnaryOp):
        node.operand = _hoist(node.operand, stmt, dead, before, resolve, fresh)
    if root:
        return node
    operation = _elementwise(node, resolve)
    if operation is None or not any(isinstance(o, gast.Name) and o.id in dead
                                    for o in operation[1]):
        return node
    name = fresh(_NAMES.get(type(getattr(node, "op", None))) or operation[0].__name__)
    before.append(A.assign(name, node, stmt))
    dead.add(name)  # a temporary of its own, read once, by the operation above
    return A.load(name)


#: NumPy's functions that write into an argument
_WRITERS = frozenset({np.copyto, np.put, np.place, np.putmask, np.fill_diagonal,
                      np.put_along_axis})
_PURE_HELPERS = set()


def _pure_helpers():
    """mindgrad's helpers that gradient code calls and that write into none of their
    arguments (``add_at`` and the tape's helpers do, and are not here), and the builtins a
    loop's header calls."""
    if not _PURE_HELPERS:
        from mindgrad import runtime
        from mindgrad.rules.helpers import quotient
        from mindgrad.rules.numpy_reductions import (
            mean_number,
            reduce_mean_grad,
            reduce_sum_grad,
            sum_number,
        )
        from mindgrad.rules.operators import matmul_grad_x, matmul_grad_y
        from mindgrad.runtime.reuse import unbroadcast_product
        _PURE_HELPERS.update({runtime.seed, runtime.times_slope, runtime.unbroadcast,
                              unbroadcast_product, runtime.add, reduce_sum_grad,
                              reduce_mean_grad, sum_number, mean_number, quotient,
                              matmul_grad_x, matmul_grad_y, range, reversed, len})
    return _PURE_HELPERS


def writes_no_argument(call, resolve) -> bool:
    """Whether ``call`` writes into none of its arguments: no ``out=``, and a NumPy function
    (none of its writers) or one of mindgrad's pure helpers (``_pure_helpers``)."""
    if any(k.arg == "out" for k in call.keywords):
        return False
    fn = resolve(call.func)
    try:
        if isinstance(fn, np.ufunc) or fn in _pure_helpers():
            return True
        if fn is None or fn in _WRITERS:
            return False
    except TypeError:  # an unhashable callable: not one of them
        return False
    return (getattr(fn, "__module__", None) or "").split(".")[0] == "numpy"


def _pure_calls(stmt, resolve) -> bool:
    """Whether every call in ``stmt`` writes into none of its arguments, so the order its
    parts are computed in does not change their values, and it has no lambda, comprehension
    or conditional part."""
    for node in A.walk(stmt):
        if isinstance(node, (*_SCOPES, gast.IfExp, gast.BoolOp, gast.NamedExpr)):
            return False
        if isinstance(node, gast.Call) and not writes_no_argument(node, resolve):
            return False
    return True


def _accumulation(stmt):
    """The name ``a`` of ``t = a + <expression>`` (not an operation of atoms), or None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.BinOp) and \
            isinstance(stmt.value.op, gast.Add) and isinstance(stmt.value.left, gast.Name):
        return stmt.value.left
    return None


_FULL_REDUCTIONS = frozenset({np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.prod,
                              np.var, np.std, np.linalg.norm})


def _numbers(fdef, params, scalars, resolve) -> set:
    """Names the function assigns numbers only (``activity.scalar_names``, with full
    reductions, ``np.sum(x)``, and mindgrad's helpers of numbers giving numbers): the names
    not worth a ``del``. An array taken for a number costs memory held longer, never a value."""
    def number_call(fn, call, is_scalar):
        if call.keywords:
            return False
        if fn in _FULL_REDUCTIONS:
            return len(call.args) == 1
        return origin(fn).is_mindgrad and bool(call.args) and all(map(is_scalar, call.args))
    return activity.scalar_names(fdef, set(scalars) & params, resolve, None, number_call)


def _simple(stmt) -> bool:
    return isinstance(stmt, (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr))


def _scoped_names(body) -> set:
    """Names read or written in a nested scope (a lambda, a comprehension, a def), or
    declared global or nonlocal: a closure may read them after the statement that last
    names them."""
    names = set()
    for node in A.walk(body):
        if isinstance(node, _SCOPES):
            names |= A.names_in(node)
        elif isinstance(node, (gast.Global, gast.Nonlocal)):
            names |= set(node.names)
    return names


def _live_after(body) -> list:
    """For each statement of ``body``, the names read after it before being assigned again."""
    live = set()
    after = [None] * len(body)
    for i in range(len(body) - 1, -1, -1):
        after[i] = set(live)
        stmt = body[i]
        if _simple(stmt) and not isinstance(stmt, gast.AugAssign):
            live = (live - A.names_in(stmt, gast.Store)) | A.names_in(stmt, gast.Load)
        else:  # a compound statement (or x += ...): reads all it names, assigns nothing
            live = live | A.names_in(stmt)
    return after


def _operation(stmt, resolve):
    """``(target, ufunc, operands)`` of ``target = <elementwise operation of atoms>``."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], gast.Name)):
        return None
    operation = _elementwise(stmt.value, resolve)
    return None if operation is None else (stmt.targets[0].id, *operation)


def _elementwise(value, resolve):
    """``(ufunc, operands)`` of an elementwise operation of atoms, or None."""
    if isinstance(value, gast.BinOp) and type(value.op) in _OPERATORS:
        ufunc, operands = _OPERATORS[type(value.op)], [value.left, value.right]
    elif isinstance(value, gast.UnaryOp) and type(value.op) in _UNARY:
        ufunc, operands = _UNARY[type(value.op)], [value.operand]
    elif isinstance(value, gast.Call) and not value.keywords and value.args:
        ufunc, operands = resolve(value.func), list(value.args)
        if not isinstance(ufunc, np.ufunc) or ufunc not in SAME_DTYPE or \
                ufunc.nin != len(operands):
            return None
    else:
        return None
    if not all(isinstance(o, gast.Name) or isinstance(o, gast.Constant) and
               type(o.value) in (int, float, complex) for o in operands):
        return None
    return ufunc, operands


def _ufunc_call(np_name, ufunc, operands, donor):
    func = gast.Attribute(value=A.load(np_name), attr=ufunc.__name__, ctx=gast.Load())
    out = gast.keyword(arg="out", value=A.load(donor))
    return gast.Call(func=func, args=[A.clone(o) for o in operands], keywords=[out])
