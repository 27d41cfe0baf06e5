"""The shapes of generated control flow, as source templates, for both modes.

Each template below is a function whose body is the Python shape of the code it generates.
``Template.fill(namespace, like, **values)`` writes it for a statement ``like`` of the user's:

* a parameter becomes its value: a name (``str``) or an expression (a gast node);
* ``run(body)`` becomes the statements of the parameter ``body``; where none remain and
  Python needs one, ``pass``;
* ``*p`` in a call or a tuple becomes the expressions of the list ``p``; a parameter assigned
  to, given a list of names, becomes a tuple of them (a bare name for one);
* a runtime helper it calls (``reversed_items``) becomes the name the generated function
  reaches it by (see naming.Namespace); builtins (``range``) stay as written.

A template with a body ``return <expr>`` gives that expression. Rule templates (``@adjoint``)
are filled alike by expand.py.

Reverse mode writes a forward sweep and a backward sweep: the adjoint of a loop runs its body's
adjoints in reverse, restoring from the tape (``push``/``pop``) the values each iteration
overwrote; loops the backward sweep cannot re-derive (``while``, a ``for`` with ``break``)
count their iterations. Forward mode keeps the control flow as written.
"""

from __future__ import annotations

import inspect
import textwrap

import gast

from mindgrad.compiler import astutil as A
from mindgrad.runtime import (
    add_at,
    bprop_grads,
    reversed_items,
    tangent_of_item,
    zero,
    zero_tangent,
)
from mindgrad.runtime.origin import Origin, origin


class Template:
    """A function whose body is the shape of generated code; parsed when first filled."""

    def __init__(self, fn):
        self.fn = fn
        self.name = fn.__name__
        self._tree = None

    def _parsed(self):
        if self._tree is None:
            tree = gast.parse(textwrap.dedent(inspect.getsource(self.fn))).body[0]
            first = tree.body[0]
            if isinstance(first, gast.Expr) and isinstance(first.value, gast.Constant):
                tree.body = tree.body[1:]  # the docstring
            self._tree = tree
            self.params = [a.id for a in tree.args.args]
        return self._tree

    def fill(self, namespace, like=None, **values):
        """The template's statements (or, for ``return <expr>``, its expression) with
        ``values`` for its parameters, located at the user's statement ``like``."""
        tree = self._parsed()
        if set(values) != set(self.params):
            raise TypeError(f"template {self.name} takes {self.params}, got {sorted(values)}")
        body = _Fill(values, self.fn.__globals__, namespace, like).copy(tree.body)
        if len(body) == 1 and isinstance(body[0], gast.Return):
            return body[0].value
        return body


def template(fn) -> Template:
    return Template(fn)


def run(statements):
    """Marks where a template's statements go (``run(body)``); never executed."""
    raise RuntimeError("run() marks a place in a code template and is never called")


class _Fill:
    """A copy of a template's tree with its parameters filled, in one walk."""

    def __init__(self, values, template_globals, namespace, like):
        self.values = values
        self.globals = template_globals
        self.namespace = namespace
        self.lineno = getattr(like, "lineno", None)  # the user's line, not the template's
        self.col_offset = getattr(like, "col_offset", 0)

    def copy(self, node):
        if isinstance(node, list):
            out = []
            for item in node:
                new = self.copy(item)
                out.extend(new) if isinstance(new, list) else out.append(new)
            return out
        if not isinstance(node, gast.AST) or isinstance(node, gast.expr_context):
            return node
        if isinstance(node, gast.Expr) and self._is_run(node.value):
            return list(self.values[node.value.args[0].id])  # run(body): body's statements
        if isinstance(node, gast.Starred):
            return [A.clone(v) for v in self.values[node.value.id]]  # *p: p's expressions
        if isinstance(node, gast.Name):
            return self._name(node)
        new = node.__class__(**{f: self.copy(getattr(node, f, None)) for f in node._fields})
        if hasattr(node, "lineno"):
            new.lineno, new.col_offset = self.lineno, self.col_offset
        if isinstance(new, (gast.If, gast.For, gast.While)) and not new.body:
            new.body = [gast.Pass()]
        return new

    def _is_run(self, node) -> bool:
        return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
            self.globals.get(node.func.id) is run

    def _name(self, node):
        if node.id in self.values:
            value = self.values[node.id]
            if isinstance(value, str):
                return gast.Name(id=value, ctx=node.ctx, annotation=None, type_comment=None)
            if isinstance(value, list):  # names assigned together
                names = [gast.Name(id=v, ctx=node.ctx, annotation=None, type_comment=None)
                         for v in value]
                return names[0] if len(names) == 1 else A.tuple_(names, node.ctx)
            return A.clone(value)
        helper = self.globals.get(node.id)
        if helper is zero:  # the symbolic zero: a constant 0 to the optimize stage
            return A.zero()
        if callable(helper) and origin(helper) is Origin.RUNTIME:
            return self.namespace.helper(helper)
        return gast.Name(id=node.id, ctx=node.ctx, annotation=None, type_comment=None)


# ----- the tape --------------------------------------------------------------------------------


@template
def push(tape, value):
    tape.append(value)


@template
def pop(tape, target):
    target = tape.pop()


@template
def popped(tape):
    return tape.pop()


# ----- branches: the same shape in the forward sweep, the backward sweep and forward mode ------


@template
def if_(test, body, orelse):
    if test:
        run(body)
    else:
        run(orelse)


@template
def if_not(test, body):
    """The backward sweep of a branch whose ``if`` body has no adjoint code."""
    if not test:
        run(body)


# ----- loops, reverse mode -----------------------------------------------------------------------


@template
def for_(target, items, body):
    for target in items:
        run(body)


@template
def counted_for(count, target, items, body):
    """A loop that may break: the backward sweep runs as many iterations as ran."""
    count = 0
    for target in items:
        count = count + 1
        run(body)


@template
def for_adjoint(target, items, body):
    for target in reversed(items):
        run(body)


@template
def counted_for_adjoint(target, items, count, body):
    for target in reversed(items[:count]):
        run(body)


@template
def for_adjoint_over_items(index, target, items, counted, body, d_items, d_target):
    """The adjoint of ``for target in items`` where the items carry gradients: each item's
    gradient goes back into ``d_items`` at its index (``counted``: ``[n_iter]`` or ``[]``)."""
    for index, target in reversed_items(items, *counted):
        run(body)
        d_items = add_at(d_items, items, index, d_target)
        d_target = zero


@template
def while_(test, body):
    while test:
        run(body)


@template
def counted_while(count, test, body):
    count = 0
    while test:
        count = count + 1
        run(body)


@template
def while_adjoint(count, body):
    for _ in range(count):
        run(body)


# ----- calls of the user's code, reverse mode ----------------------------------------------------


@template
def call_forward(result, result_tape, forward, args):
    """The forward function of a callee returns its result and the tape its backward takes."""
    result, result_tape = forward(*args)


@template
def call_backward(grads, backward, result_tape, d_result):
    grads = backward(result_tape, d_result)


@template
def call_bprop(grads, cell, args, result, d_result):
    """A Cell's own ``bprop``, run backwards: the gradients of its arguments, by position."""
    grads = bprop_grads(cell, (*args,), result, d_result)


# ----- forward mode --------------------------------------------------------------------------


@template
def tangent_for_over_items(index, target, items, t_target, t_items, body):
    """``for target in items`` where the items carry tangents: each item's tangent, by index."""
    for index, target in enumerate(items):
        t_target = tangent_of_item(t_items, items, index, target)
        run(body)


@template
def tangent_for_from_zero(target, items, t_target, body):
    """A loop target whose tangent the body may set: it starts at zero in each iteration."""
    for target in items:
        t_target = zero_tangent(target)
        run(body)


@template
def tangent_call(result, t_result, tangent_fn, args, tangents):
    """A callee's tangent function takes every argument positionally, then the tangents."""
    result, t_result = tangent_fn(*args, *tangents)

