"""Deeply nested expressions, for the source stage: parsing them, and splitting them into
statements so that no later stage recurses deeper than ``MAX_HEIGHT`` levels per expression.

Output guarantee of ``split``: every expression of the function is at most ``MAX_HEIGHT``
levels high, or ``UnsupportedSyntaxError`` names the user's line. A part of an expression is
moved into an assignment before its statement only where that keeps Python's evaluation
order: the part is evaluated unconditionally, once, and everything evaluated before it is a
name, a constant or an attribute of a name (``x + x + ... + x``, ``np.sin(np.sin(...))``,
``a * (b * (...))``). The new assignments carry the statement's line number, so comments and
errors still point at the user's line.
"""

from __future__ import annotations

import ast
import sys

import gast

from mindgrad.compiler import astutil as A
from mindgrad.compiler.naming import NameGen
from mindgrad.errors import UnsupportedSyntaxError

MAX_HEIGHT = 32  # expression levels a statement keeps; deeper parts become statements
_STEP = MAX_HEIGHT // 2  # levels below the statement at which a part is moved out


def parse(text: str) -> gast.Module:
    """``gast.parse(text)``, with room on the stack for the converter's recursion on deeply
    nested expressions (Python's own parser accepted the text, so it is finite)."""
    return parse_measured(text)[0]


def parse_measured(text: str) -> tuple:
    """``(parse(text), h)``: ``h`` bounds the levels of every expression of the text (what
    ``split`` needs to know: at most ``MAX_HEIGHT``, nothing to split)."""
    tree = ast.parse(text)
    height = _height(tree)
    needed = 8 * height + 200
    limit = sys.getrecursionlimit()
    if needed <= limit - _stack_depth():
        return gast.ast_to_gast(tree), height
    sys.setrecursionlimit(limit + needed)
    try:
        return gast.ast_to_gast(tree), height
    finally:
        sys.setrecursionlimit(limit)


def _stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def _children(node):
    for field in node._fields:
        value = getattr(node, field, None)
        if isinstance(value, list):
            yield from (v for v in value if isinstance(v, (ast.AST, gast.AST)))
        elif isinstance(value, (ast.AST, gast.AST)):
            yield value


def _heights(root, own_only=False, memo=None) -> dict:
    """id(node) -> (node, levels of expressions at and below it) for every node under
    ``root``, computed without recursion; with ``own_only``, statements nested in ``root`` are
    left out. ``memo``, a dict this function filled before for the same ``own_only``, is filled
    further: a node it holds is not visited again (an entry is checked against its node, as
    an id may be reused once a node is freed)."""
    memo = {} if memo is None else memo
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        if not done:
            known = memo.get(id(node))
            if known is not None and known[0] is node:
                continue
        children = [c for c in _children(node)
                    if not (own_only and isinstance(c, (gast.stmt, gast.excepthandler)))]
        if done:
            below = [memo[id(c)][1] for c in children]
            own = 1 if isinstance(node, (ast.expr, gast.expr)) else 0
            memo[id(node)] = (node, own + max(below, default=0))
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in children)
    return memo


def _height(root, own_only=False, memo=None) -> int:
    return _heights(root, own_only, memo)[id(root)][1]


# ----- splitting -------------------------------------------------------------------------------


def split(src, height=None) -> None:
    """Move the deep parts of ``src.tree``'s expressions into assignments (see the module).
    ``height``: a bound on the levels of its expressions where known (``parse_measured``):
    at most ``MAX_HEIGHT``, the tree is not walked again."""
    if height is not None and height <= MAX_HEIGHT:
        return
    bodies = [getattr(node, field) for node in A.walk(src.tree)
              for field in ("body", "orelse", "finalbody")
              if isinstance(getattr(node, field, None), list)
              and all(isinstance(s, gast.stmt) for s in getattr(node, field))]
    checked = {}  # one walk of the tree: a block nested in a statement is not walked again
    if all(_height(s, memo=checked) <= MAX_HEIGHT for body in bodies for s in body):
        return
    names = NameGen(A.names_in(src.tree) | set(src.closure))
    memo = {}  # the heights of expressions, kept up to date as parts move out
    for body in bodies:
        new = []
        for stmt in body:
            new.extend(_split_statement(src, stmt, names, memo))
        body[:] = new


def _roots(stmt):
    """(node, field) of the expressions ``stmt`` evaluates first, unconditionally and once."""
    if isinstance(stmt, (gast.Assign, gast.Return, gast.Expr)) and stmt.value is not None:
        return [(stmt, "value")]
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
        return [(stmt, "value")]
    if isinstance(stmt, gast.If):
        return [(stmt, "test")]
    if isinstance(stmt, gast.For):
        return [(stmt, "iter")]
    return []


def _split_statement(src, stmt, names, memo):
    """``stmt``, preceded by the assignments of its moved parts (each split in turn).
    ``memo``: the heights of expressions (``_heights``); a moved part keeps its own, so that
    splitting a chain of n levels visits each level a bounded number of times, not n / _STEP."""
    out = []
    for holder, field in _roots(stmt):
        while _height(getattr(holder, field), memo=memo) > MAX_HEIGHT:
            part = _move_out(holder, field, names, memo)
            if part is None:
                break
            out.extend(_split_statement(src, A.located(part, stmt), names, memo))
    height = _height(stmt, own_only=True)  # nested blocks are split with their own block
    if height > MAX_HEIGHT:
        _too_deep(src, stmt, height)
    out.append(stmt)
    return out


def _move_out(holder, field, names, memo):
    """``part = <expression>`` for a part ``_STEP`` levels below ``holder.field`` along its
    deepest chain, replaced there by ``part``; None when the chain reaches a part that cannot
    move (evaluated conditionally, or after something that is not a plain read). The heights
    of the expressions above the part leave ``memo``: they change."""
    heights = _heights(getattr(holder, field), memo=memo)
    parent, slot, node = holder, field, getattr(holder, field)
    above = []
    for _ in range(_STEP):
        ordered = _evaluation_order(node)
        if not ordered:
            return None
        deepest = max(range(len(ordered)), key=lambda i: heights[id(ordered[i][2])][1])
        if not all(_plain(n) for _, _, n in ordered[:deepest]):
            return None
        above.append(node)
        parent, slot, node = ordered[deepest]
    name = names("part")
    _put(parent, slot, A.load(name))
    for n in above:
        memo.pop(id(n), None)
    return A.assign(name, node)


def _evaluation_order(node):
    """(parent, slot, child) for the children of ``node`` that Python evaluates
    unconditionally, in the order it evaluates them; ``slot`` is a field or (field, index)."""
    if isinstance(node, gast.BinOp):
        fields = [("left", None), ("right", None)]
    elif isinstance(node, (gast.UnaryOp, gast.Attribute, gast.Starred)):
        fields = [("operand" if isinstance(node, gast.UnaryOp) else "value", None)]
    elif isinstance(node, gast.Subscript):
        fields = [("value", None), ("slice", None)]
    elif isinstance(node, gast.Call):
        slots = ["func"] + [("args", i) for i in range(len(node.args))]
        return [(node, slot, _get(node, slot)) for slot in slots] + \
            [(k, "value", k.value) for k in node.keywords]
    elif isinstance(node, (gast.Tuple, gast.List, gast.Set)):
        fields = [("elts", i) for i in range(len(node.elts))]
    elif isinstance(node, gast.Compare):
        fields = [("left", None), ("comparators", 0)]  # later comparisons are conditional
    elif isinstance(node, gast.BoolOp):
        fields = [("values", 0)]
    elif isinstance(node, gast.IfExp):
        fields = [("test", None)]
    else:  # lambdas, comprehensions, dicts, f-strings, slices, ...: not split
        return []
    slots = [f if i is None else (f, i) for f, i in fields]
    return [(node, slot, _get(node, slot)) for slot in slots]


def _get(node, slot):
    if isinstance(slot, tuple):
        return getattr(node, slot[0])[slot[1]]
    return getattr(node, slot)


def _put(node, slot, value):
    if isinstance(slot, tuple):
        getattr(node, slot[0])[slot[1]] = value
    else:
        setattr(node, slot, value)


def _plain(node) -> bool:
    """A read without effects that a moved part could change: a name, a constant, or an
    attribute chain on a name."""
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, (gast.Name, gast.Constant))


def _too_deep(src, stmt, height):
    lineno = src.line_of(stmt)
    raise UnsupportedSyntaxError(
        f"this expression nests {height} operations deep, where mindgrad can split at most "
        f"{MAX_HEIGHT} levels without changing what Python evaluates first; assign its inner "
        "parts to names", src.filename, lineno, src.text_of(lineno))
