"""Part of stage 3, normalize: calls (see normalize.py).

A call's arguments become atoms, with ``*t`` and ``**d`` spelled out where they are displays or
the function's own ``*args``/``**kw`` (whole, or sliced by constants: ``*args[1:]``). Some calls
are rewritten into what they mean:

* a call of a local function or lambda is inlined (see inline.py);
* ``mindgrad.jvp(f, (x,), (v,))`` becomes a call of ``f``'s tangent code, ``grad(g)(x)`` a
  call of ``grad(g)`` built now, and ``out, back = mindgrad.vjp(f, x)`` then ``back(v)``
  ``f(x)`` and a call of a ``sens_param`` gradient of ``f`` built now, so that all are
  differentiated in turn;
* ``dict(a=x, b=y)`` (keywords, pairs displayed) is the dict display it builds,
  ``functools.partial(f, a)(b)`` the call ``f(a, b)``, ``getattr(obj, "name")`` ``obj.name``;
* generated code's ``restore_item(x, i, old)`` reads as ``x[i] = old``.
"""

from __future__ import annotations

import functools

import gast

from mindgrad import runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler import expansions, objects
from mindgrad.compiler.finish import assemble
from mindgrad.compiler.front import source


class Calls:
    """The part of ``Normalizer`` that normalizes calls."""

    def expr_Call(self, node, out, hint):
        plain = self._written_plainly(node)
        if plain is not None:
            return self.op(plain, out, hint)
        func = node.func
        if isinstance(func, gast.Name) and func.id in self.local_functions:
            return self.inline(self.local_functions[func.id], node, out)
        if isinstance(func, (gast.Lambda, gast.Call)):  # (lambda t: t * 2.0)(x), make(k)(x)
            fdef = self.function_value(func, out)
            if fdef is not None:
                return self.inline(fdef, node, out)
        lifted = self._gradient_of_local(node, out)
        if lifted is not None:
            return self.op(lifted, out, hint)
        if isinstance(func, gast.Name) and func.id in self.built_gradients:
            func = A.load(self.built_gradients[func.id])
        if isinstance(func, gast.Name) and func.id in self.pullbacks:
            return self.op(self._pullback_call(node), out, hint)
        tangent_call = self._jvp_call(node, out)
        if tangent_call is not None:
            return tangent_call
        display = self._dict_display(node)
        if display is not None:
            return self.expr_Dict(display, out, hint)
        if isinstance(func, gast.Name) or self._is_module_attr(func):
            callee = func
            name = func.id if isinstance(func, gast.Name) else func.attr
        elif isinstance(func, gast.Attribute):
            callee = gast.Attribute(value=self.atom(func.value, out, "obj"), attr=func.attr,
                                    ctx=gast.Load())
            name = func.attr
        else:
            built = self._built_callee(func)
            if built is None:  # a function known when the code runs: called through a name
                built = self.atom(func, out, "fn")
            callee, name = built, built.id
        unpacked = self._unpacked_args(node)
        stars = tuple(i for i, a in enumerate(unpacked) if isinstance(a, gast.Starred))
        args = [self.atom(a.value if isinstance(a, gast.Starred) else a, out, name)
                for a in unpacked]
        keywords = []
        for kw in self._unpacked_keywords(node):
            if kw.arg == "out" and not (isinstance(kw.value, gast.Constant)
                                        and kw.value.value is None):
                self.fail(node, "out= writes into an existing array, which mindgrad cannot "
                                "differentiate; assign the result instead (y = np.f(...))")
            keywords.append(gast.keyword(arg=kw.arg, value=self.atom(kw.value, out, kw.arg)))
        if stars:  # f(a, *seq): call_starred(f, (1,), a, seq), see runtime.call_starred
            helper = self.fresh(f"{name}_spread")  # names the result too: fn3_spread
            self.src.constants[helper] = runtime.call_starred
            if not isinstance(callee, gast.Name):
                callee = self.atom(callee, out, name)
            stars_node = A.tuple_(map(A.const, stars))
            return gast.Call(func=A.load(helper), args=[callee, stars_node] + args,
                             keywords=keywords)
        return gast.Call(func=callee, args=args, keywords=keywords)

    def _written_plainly(self, node):
        """The call ``node`` as the plain expression it stands for, or None: ``getattr(obj,
        "name")`` is ``obj.name``, and ``functools.partial(f, a, k=v)(b)`` called in place is
        ``f(a, b, k=v)`` (keywords of the call replace the partial's)."""
        func = node.func
        if isinstance(func, gast.Call) and len(func.args) >= 1 and \
                not any(isinstance(a, gast.Starred) for a in func.args) and \
                all(k.arg is not None for k in func.keywords + node.keywords) and \
                self._static(func.func) is functools.partial:
            given = {k.arg for k in node.keywords}
            keywords = [k for k in func.keywords if k.arg not in given] + list(node.keywords)
            return gast.copy_location(gast.Call(func=func.args[0],
                                                args=func.args[1:] + list(node.args),
                                                keywords=keywords), node)
        if isinstance(func, gast.Call):
            plain = self._written_plainly(func)
            if plain is not None:  # getattr(obj, "method")(x)
                return gast.copy_location(gast.Call(func=plain, args=node.args,
                                                    keywords=node.keywords), node)
        if len(node.args) == 2 and not node.keywords and \
                isinstance(node.args[1], gast.Constant) and \
                isinstance(node.args[1].value, str) and node.args[1].value.isidentifier() and \
                not isinstance(node.args[0], gast.Starred) and self._static(func) is getattr:
            return gast.copy_location(gast.Attribute(value=node.args[0],
                                                     attr=node.args[1].value,
                                                     ctx=gast.Load()), node)
        return None

    def _static(self, func):
        """What the name or attribute chain ``func`` denotes before the function runs."""
        if not isinstance(func, (gast.Name, gast.Attribute)):
            return source.MISSING
        return source.static_value(self.src, func, self.locals)

    def _unpacked_args(self, node):
        """The call's positional arguments with ``*t`` spelled out: ``t`` a tuple or list
        display, or the function's own ``*args`` (see ``specialise.specialise``), whole or a
        slice of it by constants (``*args[1:]``)."""
        args = []
        for arg in node.args:
            if not isinstance(arg, gast.Starred):
                args.append(arg)
            elif isinstance(arg.value, (gast.Tuple, gast.List)):
                args.extend(arg.value.elts)
            elif isinstance(arg.value, gast.Name) and \
                    isinstance(self.src.packed.get(arg.value.id), list):
                args.extend(A.load(p) for p in self.src.packed[arg.value.id])
            elif _packed_slice(arg.value, self.src.packed) is not None:
                args.extend(A.load(p) for p in _packed_slice(arg.value, self.src.packed))
            else:  # a sequence built while the code runs: spread where the call runs
                args.append(arg)
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

    def _dict_display(self, node):
        """``dict(a=x, b=y)``, ``dict([("a", x)], b=y)``, ``dict(**kw)`` as the dict display
        they build (``{"a": x, "b": y}``), whose gradient and tangent go key by key; None for
        another call, or ``dict(mapping)`` (the rule of ``dict``)."""
        if self._static(node.func) is not dict:
            return None
        if len(node.args) > 1 or any(isinstance(a, gast.Starred) for a in node.args):
            return None  # an error of Python's when it runs
        keywords = self._unpacked_keywords(node)
        keys, values = [], []
        if node.args:
            first = node.args[0]
            pairs = _pairs_of(first)
            if pairs is None and not keywords:
                return None
            if pairs is None:
                self.fail(node, "dict(mapping, key=value) of a mapping held in a variable is "
                                "not supported; build the dict as a display ({'a': m['a'], "
                                "'b': x}) or with keywords only (dict(a=m['a'], b=x))")
            for key, value in pairs:
                keys.append(key)
                values.append(value)
        elif not keywords:
            return None
        for kw in keywords:
            keys.append(A.const(kw.arg))
            values.append(kw.value)
        return gast.copy_location(gast.Dict(keys=keys, values=values), node)

    def _vjp_call(self, s, target, call, out) -> bool:
        """``out, back = mindgrad.vjp(f, x, y)``: ``out = f(x, y)`` now, and each ``back(v)``
        later a call of ``grad(f, (0, 1), sens_param=True)(x, y, v)``, built now, so that both
        are differentiated in turn (with respect to ``v`` too). False where ``call`` is not
        mindgrad's ``vjp``."""
        pullback_gradient = expansions.vjp_expander(self._static(call.func))
        if pullback_gradient is None:
            return False
        if call.keywords or len(call.args) < 2 or \
                any(isinstance(a, gast.Starred) for a in call.args) or len(target.elts) != 2 \
                or not all(isinstance(e, gast.Name) for e in target.elts):
            self.fail(s, "mindgrad.vjp inside a differentiated function is supported as "
                         "`out, back = mindgrad.vjp(f, x, ...)` (no weights or has_aux), then "
                         "back(v) called")
        fn = self._static(call.args[0])
        if fn is source.MISSING or not callable(fn):
            self.fail(s, "mindgrad.vjp inside a differentiated function needs a function "
                         "known before the function runs (a module-level function, a method "
                         "of self, a gradient function), not a local value")
        back = target.elts[1].id
        inputs = [self.atom(a, out, "primal") for a in call.args[1:]]
        changed = [a.id for a in inputs if isinstance(a, gast.Name) and
                   (self.assignments.get(a.id, 0) > 1 or _written_into(self.src.tree, a.id))]
        if self.assignments.get(back) != 1 or _read_as_value(self.src.tree, back) or changed:
            what = f"{changed[0]!r} changes after the call" if changed else \
                f"{back!r} is assigned again or used other than called"
            self.fail(s, f"mindgrad.vjp inside a differentiated function: {what}; call back(v) "
                         "on inputs that keep their values, or use mindgrad.grad with "
                         "sens_param=True")
        name = self.fresh(f"vjp_{getattr(fn, '__name__', 'fn')}")
        self.src.constants[name] = pullback_gradient(fn, len(inputs))
        self.src.static_arguments.append(call.args[0])
        self.pullbacks[back] = (name, inputs)
        self.assign_to(target.elts[0], gast.Call(func=call.args[0], args=list(inputs),
                                                 keywords=[]), out, s)
        return True

    def _pullback_call(self, node):
        """``back(v)`` of ``out, back = vjp(f, x)``: the call of the gradient built for it,
        ``vjp_f(x, v)``; ``back(v1, v2)`` passes ``(v1, v2)``."""
        name, inputs = self.pullbacks[node.func.id]
        if node.keywords or not node.args or any(isinstance(a, gast.Starred)
                                                 for a in node.args):
            self.fail(node, "the pullback of mindgrad.vjp takes the output's cotangent: "
                            "back(v), or one per output, back(v1, v2)")
        v = node.args[0] if len(node.args) == 1 else gast.Tuple(elts=list(node.args),
                                                                  ctx=gast.Load())
        return gast.copy_location(gast.Call(func=A.load(name), args=[A.clone(i) for i in inputs]
                                            + [v], keywords=[]), node)

    def _jvp_call(self, node, out):
        """``mindgrad.jvp(f, (x, y), (vx, vy))`` as a call of ``f``'s tangent code, written as
        Python now, so that it is differentiated in turn (reverse over forward)."""
        as_python = expansions.jvp_expander(self._static(node.func))
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
        inputs, tangents = ([*a.elts] if isinstance(a, gast.Tuple) else [a]
                            for a in node.args[1:])
        if len(inputs) != len(tangents):
            self.fail(node, f"mindgrad.jvp: {len(inputs)} input(s) but {len(tangents)} "
                            "tangent(s)")
        positions = tuple(i for i, t in enumerate(tangents)
                          if not (isinstance(t, gast.Constant) and t.value is None))
        fn = source.static_value(self.src, node.args[0], self.locals)
        free = []
        if fn is source.MISSING or not callable(fn):
            # a lambda or local def (reading the enclosing function's variables or not), or a
            # function reached when the code runs (called through a lambda of as many
            # parameters): lifted into a function taking its free variables first
            fn, free = self.lifted(self._jvp_target(node.args[0], len(inputs), out), node)
            positions = tuple(p + len(free) for p in positions)
        else:
            self.src.static_arguments.append(node.args[0])
        name = self.fresh(f"jvp_{getattr(fn, '__name__', 'fn')}")
        self.src.constants[name] = as_python(fn, positions, len(free) + len(inputs))
        args = [A.load(v) for v in free] + [self.atom(a, out, "x") for a in inputs] + \
            [self.atom(tangents[p - len(free)], out, "v") for p in positions]
        return gast.Call(func=A.load(name), args=args, keywords=[])

    def _jvp_target(self, target, count, out):
        """The local def ``jvp``'s function denotes: a lambda, a local def, or, for a
        function known only when the code runs, ``lambda x0, ..: target(x0, ..)``."""
        fdef = self.function_value(target, out)
        if fdef is not None:
            return fdef
        params = [f"x{i}" for i in range(count)]
        call = gast.Call(func=A.clone(target), args=[A.load(p) for p in params], keywords=[])
        lam = gast.Lambda(args=assemble.arguments_of(params, []), body=call)
        return self.function_value(gast.copy_location(lam, target), out)

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

    def _gradient_of_local(self, node, out):
        """``grad(inner, ...)(args)`` with ``inner`` a lambda or local def (reading the
        enclosing function's variables ``v``): ``grad(inner_, shifted)(v, args)`` of the
        function it is lifted into (lift.py), built now; None for another call."""
        func = node.func
        if not (isinstance(func, gast.Call) and func.args and
                expansions.is_gradient_maker(self._static(func.func)) and
                not any(isinstance(a, gast.Starred) for a in func.args)):
            return None
        target = func.args[0]
        if not (isinstance(target, gast.Lambda) or
                isinstance(target, gast.Name) and target.id in self.local_functions):
            return None
        fdef = self.function_value(target, out)
        fn, free = self.lifted(fdef, node)
        options = list(func.args[1:])
        keywords = list(func.keywords)
        position = next((k for k in keywords if k.arg == "grad_position"), None)
        given = options[0] if options else (position.value if position else A.const(0))
        value = _constant_value(given)
        if free and not (type(value) is int or isinstance(value, tuple) and
                         all(type(v) is int for v in value)):
            self.fail(node, "grad of a local function reading the enclosing function's "
                            "variables takes grad_position as int constants")
        if free:
            shifted = A.const(value + len(free)) if type(value) is int else \
                A.tuple_([A.const(v + len(free)) for v in value])
            if options:
                options[0] = shifted
            elif position is not None:
                position.value = shifted
            else:
                options = [shifted]
        values = [_constant_value(o) for o in options]
        kwargs = {k.arg: _constant_value(k.value) for k in keywords}
        if source.MISSING in values or source.MISSING in kwargs.values() or None in kwargs:
            self.fail(node, "a gradient of a local function takes constant "
                            "options (grad_position, has_aux, ...)")
        maker = self._static(func.func)
        built = self.fresh(f"{getattr(maker, '__name__', 'grad')}_{fdef.name}")
        self.src.constants[built] = maker(fn, *values, **kwargs)
        return gast.copy_location(gast.Call(func=A.load(built), args=[A.load(v) for v in free] +
                                            list(node.args), keywords=list(node.keywords)),
                                  node)

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


def _written_into(tree, name) -> bool:
    """Whether ``tree`` assigns into ``name``'s items (``name[i] = v``, ``name[i] += v``)."""
    for node in gast.walk(tree):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store):
            base = node.value
            while isinstance(base, gast.Subscript):
                base = base.value
            if isinstance(base, gast.Name) and base.id == name:
                return True
    return False


def _read_as_value(tree, name) -> bool:
    """Whether ``tree`` reads ``name`` other than as the function of a call."""
    called = {id(node.func) for node in gast.walk(tree) if isinstance(node, gast.Call)}
    return any(isinstance(node, gast.Name) and node.id == name and
               isinstance(node.ctx, gast.Load) and id(node) not in called
               for node in gast.walk(tree))


def _packed_slice(node, packed):
    """The parameters of ``args[lo:hi:step]``, a slice by int constants of the function's own
    ``*args`` (``packed``, see ``specialise.specialise``) or of such a slice; None for another
    expression."""
    if not (isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Slice)):
        return None
    if isinstance(node.value, gast.Name) and isinstance(packed.get(node.value.id), list):
        params = packed[node.value.id]
    else:
        params = _packed_slice(node.value, packed)  # args[::2][:2]
        if params is None:
            return None
    bounds = []
    for part in (node.slice.lower, node.slice.upper, node.slice.step):
        if isinstance(part, gast.UnaryOp) and isinstance(part.op, gast.USub) and \
                isinstance(part.operand, gast.Constant) and type(part.operand.value) is int:
            value = -part.operand.value  # args[:-1]
        else:
            value = _constant_value(part) if part is not None else None
        if value is source.MISSING or not (value is None or type(value) is int):
            return None
        bounds.append(value)
    if bounds[2] == 0:
        return None  # Python's error when it runs
    return params[slice(*bounds)]


def _pairs_of(node):
    """The ``(key, value)`` nodes of a dict display without ``**``, or of a list or tuple
    display of two-item tuple or list displays; else None."""
    if isinstance(node, gast.Dict):
        return None if any(k is None for k in node.keys) else list(zip(node.keys, node.values))
    if not isinstance(node, (gast.List, gast.Tuple)):
        return None
    pairs = []
    for item in node.elts:
        if not isinstance(item, (gast.Tuple, gast.List)) or len(item.elts) != 2 or \
                any(isinstance(e, gast.Starred) for e in item.elts):
            return None
        pairs.append((item.elts[0], item.elts[1]))
    return pairs


def _constant_value(node):
    """The value of a constant or a tuple of constants, else MISSING."""
    if isinstance(node, gast.Constant):
        return node.value
    if isinstance(node, gast.Tuple):
        values = [_constant_value(e) for e in node.elts]
        return source.MISSING if source.MISSING in values else tuple(values)
    return source.MISSING
