"""Part of stage 3, normalize: local functions and lambdas are inlined where they are called.

A ``def`` or ``lambda`` written in the function (at any depth, and lambdas called where they are
written) is not code the transformation can call: each call of it becomes its body, with its
parameters renamed apart and bound to the call's arguments. A closure factory (a local
function returning one of its own defs) inlines up to that return; a function passed as an
argument stays a function, so calls through the parameter are calls of the argument.
"""

from __future__ import annotations

import gast

from mindgrad.compiler import astutil as A
from mindgrad.compiler.front import source
from mindgrad.compiler.front.jumps import eliminate_jumps


class LocalFunctions:
    """The part of ``Normalizer`` that inlines local functions."""

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

    def _names_a_function(self, value) -> bool:
        """Whether ``value`` is a local def's name, or a call of a local closure factory."""
        if isinstance(value, gast.Call):
            value = value.func
            return isinstance(value, gast.Name) and value.id in self.local_functions and \
                _returns_a_def(self.local_functions[value.id])
        return isinstance(value, gast.Name) and value.id in self.local_functions

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
        body = [A.renamed(s, renames) for s in fdef.body]
        self.assignments.update(assignment_counts(body))
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


def assignment_counts(body) -> dict:
    """Name -> how many times ``body`` binds it (loop targets count twice: they rebind)."""
    counts = {}
    for node in A.walk(body):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            counts[node.id] = counts.get(node.id, 0) + 1
        elif isinstance(node, (gast.For, gast.comprehension)):
            for name in A.names_in(node.target, gast.Store):
                counts[name] = counts.get(name, 0) + 1
    return counts
