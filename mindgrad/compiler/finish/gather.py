"""Stage 6c, gather: a backward loop that adds up matmul gradients of a matrix it does not
change computes them in one product after the loop.

The backward sweep of ``h = np.tanh(w @ h + ...)`` run for ``t`` steps adds one outer product
a step into ``w``'s gradient::

    for t in reversed(range(50)):
        ...
        d_w = d_w + matmul_grad_x(d_matmul, w, h)

Each step makes and adds a ``w``-sized array, where the sum of the steps is one matrix product
of the steps' vectors stacked. The loop keeps the pairs, and one call after it adds them up::

    d_w_terms = []
    for t in reversed(range(50)):
        ...
        d_w_terms.append((d_matmul, h))
    d_w = d_w + matmul_grad_x_sum(d_w_terms, w)

(``rules.operators.matmul_grad_x_sum``: ``G.T @ Y`` where every step's arrays stack, else the
steps' products added one by one.) The same for ``matmul_grad_y``.

It runs on the entry function of a gradient (the code that runs, not code differentiated
again), on its loops at the top level, when:

* the statement is ``d = d + f(g, a, b)`` or ``d = add(d, f(g, a, b))`` of names, directly in
  the loop's body, ``f`` one of the two helpers, and the operand that stays (``a`` for
  ``matmul_grad_x``, ``b`` for ``matmul_grad_y``) is not assigned in the loop;
* ``d`` is read and assigned nowhere else in the loop, which has no ``return``;
* nothing in the function writes into an array in place (no augmented or index assignment,
  every call NumPy's, a list's ``append``/``pop`` or one of mindgrad's helpers that write into
  none of their arguments), so a pair kept holds the values the step had.

Output guarantee: the same gradient, up to the order the terms are added in.
"""

from __future__ import annotations

import gast

from mindgrad import runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler.finish.reuse import writes_no_argument
from mindgrad.compiler.naming import NameGen
from mindgrad.compiler.switch import Switch

#: whether gradients are built with this stage; ``off()`` leaves it out in a block: for code
#: another compiler reads again (``jit=True``'s Numba rewrite takes the steps' products as they
#: are)
ON = Switch()
off = ON.off


_LIST_METHODS = frozenset({"append", "pop"})


def _sums():
    """The helpers whose loop sums this stage writes: helper -> (its sum, the position of the
    operand that stays, that of the one that varies)."""
    from mindgrad.rules import operators
    return {operators.matmul_grad_x: (operators.matmul_grad_x_sum, 1, 2),
            operators.matmul_grad_y: (operators.matmul_grad_y_sum, 2, 1)}


def gather_products(fdef, resolve, bind):
    """Rewrite the loops at the top level of ``fdef`` (the entry function) in place.
    ``resolve(node)``: the object a function expression names (None if unknown); ``bind(obj,
    name)``: the name the code reaches a runtime object by."""
    sums = _sums()
    if not _writes_nothing(fdef, resolve):
        return
    fresh = NameGen(A.names_in(fdef))
    out = []
    for stmt in fdef.body:
        if isinstance(stmt, gast.For) and not stmt.orelse and \
                not any(isinstance(n, gast.Return) for n in A.walk(stmt.body)):
            before, after = _gather(stmt, resolve, sums, bind, fresh)
            out.extend(before)
            out.append(stmt)
            out.extend(after)
        else:
            out.append(stmt)
    fdef.body = out


def _gather(loop, resolve, sums, bind, fresh):
    """The statements to put before and after ``loop``, whose body it rewrites."""
    stores = A.names_in(loop.body, gast.Store) | A.names_in(loop.target, gast.Store)
    loads = {}
    for node in A.walk(loop.body):
        if isinstance(node, gast.Name):
            loads[node.id] = loads.get(node.id, 0) + 1
    before, after, body = [], [], []
    for stmt in loop.body:
        found = _accumulation(stmt, resolve, sums)
        if found is None:
            body.append(stmt)
            continue
        target, call, combine = found
        total, kept, other = sums[resolve(call.func)]
        g, fixed, varying = call.args[0], call.args[kept], call.args[other]
        # d read and written by this statement alone (twice: ``d = d + ...``), the matrix fixed
        if loads.get(target) != 2 or fixed.id in stores:
            body.append(stmt)
            continue
        terms = fresh(f"{target}_terms")
        before.append(A.assign(terms, gast.List(elts=[], ctx=gast.Load()), loop))
        body.append(A.expr_stmt(A.call(A.attr(A.load(terms), "append"),
                                       A.tuple_([A.load(g.id), A.load(varying.id)])), stmt))
        summed = A.call(A.load(bind(total, total.__name__)), A.load(terms), A.load(fixed.id))
        after.append(A.assign(target, combine(A.load(target), summed), stmt))
    loop.body = body
    return before, after


def _accumulation(stmt, resolve, sums):
    """``(d, call, combine)`` of ``d = d + f(g, a, b)`` or ``d = add(d, f(g, a, b))``, ``f``
    a key of ``sums`` called with three names; ``combine(left, right)`` writes the sum the
    same way. None otherwise."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], gast.Name)):
        return None
    target, value = stmt.targets[0].id, stmt.value
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add):
        left, call = value.left, value.right

        def combine(a, b):
            return gast.BinOp(left=a, op=gast.Add(), right=b)
    elif isinstance(value, gast.Call) and len(value.args) == 2 and not value.keywords and \
            resolve(value.func) is runtime.add:
        left, call = value.args
        func = value.func

        def combine(a, b):
            return A.call(A.clone(func), a, b)
    else:
        return None
    if not (isinstance(left, gast.Name) and left.id == target and
            isinstance(call, gast.Call) and not call.keywords and len(call.args) == 3 and
            all(isinstance(a, gast.Name) for a in call.args)):
        return None
    try:
        if resolve(call.func) not in sums:
            return None
    except TypeError:
        return None
    return target, call, combine


def _writes_nothing(fdef, resolve) -> bool:
    """Whether no statement of ``fdef`` writes into an array in place: no augmented or index
    assignment, and every call a list's ``append``/``pop`` or one that writes into none of its
    arguments (``reuse.writes_no_argument``)."""
    for node in A.walk(fdef.body):
        if isinstance(node, (gast.AugAssign, gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            return False
        if isinstance(node, (gast.Subscript, gast.Attribute)) and \
                isinstance(node.ctx, (gast.Store, gast.Del)):
            return False
        if isinstance(node, gast.Call):
            func = node.func
            if isinstance(func, gast.Attribute) and func.attr in _LIST_METHODS and \
                    isinstance(func.value, gast.Name) and resolve(func) is None:
                continue  # tape.append(v), tape.pop(): the tape, a list of the code's own
            if not writes_no_argument(node, resolve):
                return False
    return True
