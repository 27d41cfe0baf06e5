"""What the statements of a normalized function read and write, for batching: the names a
statement may read before it assigns them, the values it changes in place, and the literals
normalizing hoisted into names (``axis = (0, 1)``), put back where they are read."""

from __future__ import annotations

import gast

from mindgrad.compiler import astutil as A


def constant(node, default=None):
    """The value of a literal (an int, a tuple of ints, None), or ``default``."""
    if node is None:
        return None
    if isinstance(node, gast.Constant):
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and \
            isinstance(node.operand, gast.Constant):
        return -node.operand.value
    if isinstance(node, gast.Tuple):
        values = [constant(e, default) for e in node.elts]
        return default if any(v is default for v in values) else tuple(values)
    return default


NOT_LITERAL = object()


def propagate_literals(fdef):
    """Replace the reads of each local assigned once, from a literal (``axis = (0, 1)``, which
    normalizing hoists out of a call), by the literal, and drop the assignment: the rules read
    axes and shapes as literals."""
    stores, values = {}, {}
    for node in gast.walk(fdef):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            values[node.targets[0].id] = node.value
    params = {a.id for a in fdef.args.args}
    literal = {name: value for name, value in values.items()
               if name not in params and stores.get(name) == 1 and
               constant(value, NOT_LITERAL) is not NOT_LITERAL}

    class Replace(gast.NodeTransformer):
        def visit_Name(self, node):
            if isinstance(node.ctx, gast.Load) and node.id in literal:
                return A.clone(literal[node.id])
            return node

        def visit_Assign(self, node):
            target = node.targets[0]
            if isinstance(target, gast.Name) and target.id in literal:
                return None
            self.generic_visit(node)
            return node

    Replace().visit(fdef)
    for node in gast.walk(fdef):  # a block the assignments leave empty
        if isinstance(node, (gast.If, gast.For, gast.While)) and not node.body:
            node.body = [gast.Pass()]


def base(target):
    while isinstance(target, (gast.Subscript, gast.Attribute)):
        target = target.value
    return target.id if isinstance(target, gast.Name) else None


MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort",
                      "reverse", "update", "setdefault", "popitem", "fill", "resize", "put",
                      "itemset", "partition"})


def written_bases(stmt):
    """The names whose values ``stmt`` (a node or a list) changes in place: ``x[i] = v``,
    ``xs.append(v)``."""
    found = set()
    for top in (stmt if isinstance(stmt, list) else [stmt]):
        for node in gast.walk(top):
            if isinstance(node, gast.Assign) and not isinstance(node.targets[0], gast.Name):
                found.add(base(node.targets[0]))
            elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                    isinstance(node.func.value, gast.Name) and node.func.attr in MUTATORS:
                found.add(node.func.value.id)
    return found - {None}


def exposed_reads(stmts, defined=frozenset()) -> set:
    """The names ``stmts`` may read before assigning them (``defined``: assigned before)."""
    defined, found = set(defined), set()
    for s in stmts:
        if isinstance(s, gast.If):
            found |= A.names_in(s.test, gast.Load) - defined
            found |= exposed_reads(s.body, defined) | exposed_reads(s.orelse, defined)
            defined |= A.assigned_names(s.body) & A.assigned_names(s.orelse)
        elif isinstance(s, (gast.For, gast.While)):
            head = s.iter if isinstance(s, gast.For) else s.test
            found |= A.names_in(head, gast.Load) - defined
            inner = defined | ({s.target.id} if isinstance(s, gast.For) else set())
            found |= exposed_reads(s.body, inner) | exposed_reads(s.orelse, defined)
        elif isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            found |= A.names_in(s.value, gast.Load) - defined
            defined.add(s.targets[0].id)
        else:
            found |= A.names_in(s, gast.Load) - defined
    return found
