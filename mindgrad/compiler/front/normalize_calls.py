"""Part of stage 3, normalize: calls (see normalize.py).

A call's arguments become atoms, with ``*t`` and ``**d`` spelled out where they are displays or
the function's own ``*args``/``**kw``. Some calls are rewritten: a call of a local function or
lambda is inlined (see inline.py); ``mindgrad.jvp(f, (x,), (v,))`` becomes a call of ``f``'s
tangent code, and ``grad(g)(x)`` a call of ``grad(g)`` built now, so that both are
differentiated in turn; generated code's ``restore_item(x, i, old)`` reads as ``x[i] = old``.
"""

from __future__ import annotations

import gast

from mindgrad import runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler import expansions, objects
from mindgrad.compiler.front import source


class Calls:
    """The part of ``Normalizer`` that normalizes calls."""

    def expr_Call(self, node, out, hint):
        func = node.func
        if isinstance(func, gast.Name) and func.id in self.local_functions:
            return self.inline(self.local_functions[func.id], node, out)
        if isinstance(func, (gast.Lambda, gast.Call)):  # (lambda t: t * 2.0)(x), make(k)(x)
            fdef = self.function_value(func, out)
            if fdef is not None:
                return self.inline(fdef, node, out)
        if isinstance(func, gast.Name) and func.id in self.built_gradients:
            func = A.load(self.built_gradients[func.id])
        tangent_call = self._jvp_call(node, out)
        if tangent_call is not None:
            return tangent_call
        if isinstance(func, gast.Name) or self._is_module_attr(func):
            callee = func
            name = func.id if isinstance(func, gast.Name) else func.attr
        elif isinstance(func, gast.Attribute):
            callee = gast.Attribute(value=self.atom(func.value, out, "obj"), attr=func.attr,
                                    ctx=gast.Load())
            name = func.attr
        else:
            built = self._built_callee(func)
            if built is None:
                self.fail(node, "calls through an expression are not supported; call a "
                                "function by its name")
            callee, name = built, built.id
        args = [self.atom(a, out, name) for a in self._unpacked_args(node)]
        keywords = []
        for kw in self._unpacked_keywords(node):
            if kw.arg == "out" and not (isinstance(kw.value, gast.Constant)
                                        and kw.value.value is None):
                self.fail(node, "out= writes into an existing array, which mindgrad cannot "
                                "differentiate; assign the result instead (y = np.f(...))")
            keywords.append(gast.keyword(arg=kw.arg, value=self.atom(kw.value, out, kw.arg)))
        return gast.Call(func=callee, args=args, keywords=keywords)

    def _unpacked_args(self, node):
        """The call's positional arguments with ``*t`` spelled out: ``t`` a tuple or list
        display, or the function's own ``*args`` (see ``specialise.specialise``)."""
        args = []
        for arg in node.args:
            if not isinstance(arg, gast.Starred):
                args.append(arg)
            elif isinstance(arg.value, (gast.Tuple, gast.List)):
                args.extend(arg.value.elts)
            elif isinstance(arg.value, gast.Name) and \
                    isinstance(self.src.packed.get(arg.value.id), list):
                args.extend(A.load(p) for p in self.src.packed[arg.value.id])
            else:
                self.fail(arg, "*-unpacking is supported for a tuple display (*(a, b)) or the "
                               "function's own unchanged *args; pass the items one by one")
        return args

    def _unpacked_keywords(self, node):
        """The call's keywords with ``**d`` spelled out: ``d`` a dict display with string keys,
        or the function's own ``**kw`` (see ``specialise.specialise``)."""
        keywords = []
        for kw in node.keywords:
            value = kw.value
            if kw.arg is not None:
                keywords.append(kw)
            elif isinstance(value, gast.Dict) and all(
                    isinstance(k, gast.Constant) and isinstance(k.value, str) for k in value.keys):
                keywords.extend(gast.keyword(arg=k.value, value=v)
                                for k, v in zip(value.keys, value.values))
            elif isinstance(value, gast.Name) and isinstance(self.src.packed.get(value.id), dict):
                keywords.extend(gast.keyword(arg=k, value=A.load(p))
                                for k, p in self.src.packed[value.id].items())
            else:
                self.fail(node, "**-unpacking is supported for a dict display with string keys "
                                "or the function's own unchanged **kw; pass keywords by name")
        return keywords

    def _jvp_call(self, node, out):
        """``mindgrad.jvp(f, (x, y), (vx, vy))`` as a call of ``f``'s tangent code, written as
        Python now, so that it is differentiated in turn (reverse over forward)."""
        if not isinstance(node.func, (gast.Name, gast.Attribute)):
            return None
        as_python = expansions.jvp_expander(source.static_value(self.src, node.func,
                                                                self.locals))
        if as_python is None:
            return None
        for kw in node.keywords:
            if not (kw.arg == "has_aux" and isinstance(kw.value, gast.Constant) and
                    kw.value.value is False):
                self.fail(node, "mindgrad.jvp inside a differentiated function takes (fn, "
                                "inputs, v) only: has_aux is not supported there")
        if len(node.args) != 3 or any(isinstance(a, gast.Starred) for a in node.args):
            self.fail(node, "mindgrad.jvp inside a differentiated function takes (fn, inputs, "
                            "v), with the inputs and tangents written as tuples")
        fn = source.static_value(self.src, node.args[0], self.locals)
        if fn is source.MISSING or not callable(fn):
            self.fail(node, "the function given to mindgrad.jvp must be known before the run "
                            "(a module-level function or a closure variable)")
        inputs, tangents = ([*a.elts] if isinstance(a, gast.Tuple) else [a]
                            for a in node.args[1:])
        if len(inputs) != len(tangents):
            self.fail(node, f"mindgrad.jvp: {len(inputs)} input(s) but {len(tangents)} "
                            "tangent(s)")
        positions = tuple(i for i, t in enumerate(tangents)
                          if not (isinstance(t, gast.Constant) and t.value is None))
        self.src.static_arguments.append(node.args[0])
        name = self.fresh(f"jvp_{getattr(fn, '__name__', 'fn')}")
        self.src.constants[name] = as_python(fn, positions, len(inputs))
        args = [self.atom(a, out, "x") for a in inputs] + \
            [self.atom(tangents[p], out, "v") for p in positions]
        return gast.Call(func=A.load(name), args=args, keywords=[])

    def _restore_item(self, s):
        """``restore_item(x, idx, old)`` (in generated code) as the index assignment
        ``x[idx] = old`` it performs on arrays and lists, so it is differentiated as one."""

        call = s.value
        if not (isinstance(call, gast.Call) and len(call.args) == 3 and not call.keywords and
                isinstance(call.args[0], gast.Name)):
            return None
        if source.static_value(self.src, call.func, self.locals) is not runtime.restore_item:
            return None
        target = A.subscript(A.load(call.args[0].id), call.args[1], gast.Store())
        return A.assign(target, call.args[2], s)

    def _built_callee(self, func):
        """``grad(g, (0, 1))`` called in place: built now, from arguments known before the run,
        and called by a name. None when ``func`` is not such a call."""
        if not (isinstance(func, gast.Call) and not func.keywords or
                isinstance(func, gast.Call) and all(
                    isinstance(k.value, gast.Constant) for k in func.keywords)):
            return None
        maker = source.static_value(self.src, func.func, self.locals)
        # a primitive made and called in place, P.MatMul()(x, y): made now, once
        made_in_place = objects.is_primitive_class(maker)
        if not (made_in_place or expansions.is_gradient_maker(maker)):
            return None
        args = []
        for arg in func.args:
            value = _constant_value(arg)
            if value is source.MISSING:
                value = source.static_value(self.src, arg, self.locals)
            if value is source.MISSING:
                return None
            args.append(value)
        kwargs = {k.arg: k.value.value for k in func.keywords}
        if made_in_place:
            name = self.fresh(maker.__name__.lower() + "_op")
            self.src.constants[name] = maker(*args, **kwargs)
            return A.load(name)
        self.src.static_arguments.append(func.args[0])
        label = getattr(maker, "__name__", None) or "grad"
        name = self.fresh(f"{label}_{getattr(args[0], '__name__', type(args[0]).__name__)}")
        self.src.constants[name] = maker(*args, **kwargs)
        return A.load(name)


def _constant_value(node):
    """The value of a constant or a tuple of constants, else MISSING."""
    if isinstance(node, gast.Constant):
        return node.value
    if isinstance(node, gast.Tuple):
        values = [_constant_value(e) for e in node.elts]
        return source.MISSING if source.MISSING in values else tuple(values)
    return source.MISSING
