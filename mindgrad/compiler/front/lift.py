"""Part of stage 3, normalize: a local def or lambda used as a value becomes a function.

A local function called where the code shows it is inlined (inline.py). Used as a value (passed
to a function, stored in a container, given to ``grad``), it must be an object when the code
runs: it is compiled now into a function of its free variables, then its own parameters,

    lambda y: x * y          ->    def lambda_(x, y): return x * y
                                   Closure(lambda_, x)   (the value)

whose lines name the user's own (tracebacks, ``mindgrad.source``). ``grad(inner)`` of such a
function differentiates ``grad(lambda_, 1)(x, ...)``, so that the gradient follows ``x`` too.
"""

from __future__ import annotations

import ast
import itertools
import types

import gast

from mindgrad import runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler.finish import emit

_counter = itertools.count(1)


class Lifting:
    """The part of ``Normalizer`` that turns local functions into values."""

    def free_variables(self, fdef):
        """The names ``fdef`` reads from the enclosing function (its locals, parameters and
        closure variables), in the order they are first read."""
        own = {a.id for a in fdef.args.args + fdef.args.kwonlyargs}
        for extra in (fdef.args.vararg, fdef.args.kwarg):
            if extra is not None:
                own.add(extra.id)
        own |= A.assigned_names(fdef.body)
        free = []
        for node in A.walk(fdef.body + fdef.args.defaults +
                           [d for d in fdef.args.kw_defaults if d is not None]):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and \
                    node.id not in own and node.id not in free and \
                    (node.id in self.locals or node.id in self.src.closure or
                     node.id in self.local_functions):
                if node.id in self.local_functions:
                    self.fail(node, f"the local function {fdef.name!r} is used as a value and "
                                    f"calls the local function {node.id!r}; define "
                                    f"{node.id!r} at module level, or call {fdef.name!r} "
                                    "where it is written")
                free.append(node.id)
        return free

    def lifted(self, fdef, like):
        """``(function, free variables)``: ``fdef`` compiled now as a function taking its free
        variables first (see the module's docstring)."""
        free = self.free_variables(fdef)
        args = A.clone(fdef.args)
        args.args = [gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None)
                     for n in free] + list(args.args)
        lifted = gast.FunctionDef(name=fdef.name, args=args, body=A.clone(fdef.body),
                                  decorator_list=[], returns=None, type_comment=None,
                                  type_params=[])
        module = gast.gast_to_ast(gast.Module(body=[lifted], type_ignores=[]))
        ast.fix_missing_locations(module)
        text = ast.unparse(module) + "\n"
        filename = f"<mindgrad {fdef.name} #{next(_counter)}>"
        scratch = dict(self.src.globals)
        try:  # the defaults are evaluated as the def would evaluate them
            exec(compile(text, filename, "exec"), scratch)  # noqa: S102 (the user's code)
        except NameError as error:
            self.fail(like, f"a default of {fdef.name!r} reads {error.name!r}, a variable of "
                            "the enclosing function: pass it as an argument instead")
        made = scratch[fdef.name]
        fn = types.FunctionType(made.__code__, self.src.globals, fdef.name, made.__defaults__)
        fn.__kwdefaults__ = made.__kwdefaults__
        fcode = made.__code__
        line = self.src.line_of(like)
        emit.keep_lines(filename, text, [fcode],
                        [(self.src.filename, line, self.src.name)] * text.count("\n"))
        return fn, free

    def function_as_value(self, fdef, like):
        """The expression a local function used as a value becomes: the lifted function, or a
        ``runtime.Closure`` (a ``functools.partial``) of it holding its free variables'
        values. Where those move with the input, the transformations refuse it
        (``messages.closure_given_away``): the gradient cannot follow them into the object."""
        fn, free = self.lifted(fdef, like)
        name = self.fresh(fdef.name)
        self.src.constants[name] = fn
        if not free:
            return A.load(name)
        partial = self.fresh("closure")
        self.src.constants[partial] = runtime.Closure
        return gast.Call(func=A.load(partial), args=[A.load(name)] + [A.load(v) for v in free],
                         keywords=[])
