"""The pipeline: ``STAGES`` in order, and ``run`` which takes a function to its compiled adjoint.

    source -> fence -> normalize -> activity -> reverse -> optimize -> emit -> compile

``run(fn, spec, dump=print)`` prints the source after each stage. The caching of what ``run``
returns is ``mindgrad.compiler.cache``'s business.
"""

from __future__ import annotations

import functools
import types
import weakref

import gast
import numpy as np

from mindgrad import runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler import (
    cache,
    emit,
    fence,
    naming,
    normalize,
    objects,
    optimize,
    reverse,
    source,
)
from mindgrad.compiler.naming import NameGen
from mindgrad.compiler.source import unbind

STAGES = ("source", "fence", "normalize", "activity", "reverse", "optimize", "emit", "compile")
# forward mode (jvp) runs "forward" where reverse mode runs "reverse"


class CompiledDerivative:
    """A compiled derivative, what a build returns: the entry point (the gradient or tangent
    function) and everything shown to users.

    ``bound`` (the Cell or instance the entry takes first, or None) is held weakly where it
    allows that: the cache keeps this result as long as that object lives, never longer.
    """

    def __init__(self, function, text, files, dependencies, stages):
        self.function = function
        self.text = text
        self.files = files
        self.dependencies = dependencies
        self.stages = stages
        self.keyword_params = {}  # a keyword of the entry's **kw -> its parameter, if renamed
        self._bound = lambda: None

    @property
    def bound(self):
        return self._bound()

    @bound.setter
    def bound(self, obj):
        try:
            self._bound = weakref.ref(obj)
        except TypeError:
            self._bound = lambda: obj


class _Pending:
    """A generated function referenced before it is compiled (callees, recursion)."""

    def __init__(self, key):
        self.key = key


class Build:
    """One transformation: the entry function and every user function it calls."""

    def __init__(self, dump=None, weights=()):
        self.dump = dump
        self.weights = list(weights)   # the Parameters whose gradients are asked for
        self._parsed = {}
        self._weight_sets = {}
        self._parameter_reads = {}  # id(Source) -> paths of the Parameters it reads, recorded
        self.units = []          # (src, [FunctionDef], bindings)
        self.callees = {}        # (code, mask) -> (forward name, backward name)
        self.function_names = NameGen()
        # the role of each generated function that is not a plain split callee: "entry" (what
        # a user's call reaches: it takes the user function's defaults) or "tangent" (a
        # callee's tangent function, with the user function's keyword defaults)
        self.roles = {}
        # (where, root, path, object): what the result depends on (see mindgrad.compiler.cache). The
        # weights asked for come first: a cache key names them by id, so the entry must die
        # with them, or a new Parameter at a freed one's address would find it
        self.dependencies = [("object", w, (), w) for w in self.weights]
        self.stages = []         # (stage, function name, text)

    def record(self, stage, name, text):
        """Dump the source after ``stage``; ``text`` may be a function making it, called only
        when there is a dump to write to."""
        if self.dump is None:
            return
        text = text() if callable(text) else text
        self.stages.append((stage, name, text))
        self.dump(f"# ---- {stage}: {name} ----\n{text.rstrip()}\n")

    # ----- one function --------------------------------------------------------------------

    def parse(self, fn, obj=None, shape=(0, ())):
        """Stages source, fence and normalize for ``fn`` (with ``obj`` bound to its first
        parameter, for methods and Cells; ``*args`` and ``**kw`` specialised for a call of
        ``shape``, see ``source.call_shape``), done once per build."""
        cache_key = (fn.__code__, id(obj), shape)
        if cache_key not in self._parsed:
            src = source.specialise(source.get_source(fn), shape)
            self._depend_on_defaults(fn)
            if obj is not None:
                src.bound[src.tree.args.args[0].id] = obj
            self.record("source", src.name, "".join(src.lines))
            fence.check(src)
            self.record("fence", src.name, lambda: emit.unparse(src.tree))
            names = NameGen(A.names_in(src.tree) | set(src.closure) | {src.name})
            fdef = normalize.normalize(src, src.tree, names)
            self.record("normalize", src.name, lambda: emit.unparse(fdef))
            self._parsed[cache_key] = (src, fdef, set(names.taken))
        return self._parsed[cache_key]

    def _depend_on_defaults(self, fn):
        """The code fills in ``fn``'s defaults: changing them must build fresh code. (The
        defaults are a tuple, replaced whole; the keyword-only ones a dict, changed in place.)"""
        if fn.__defaults__:
            self.dependencies.append(("object", fn, ("__defaults__",), fn.__defaults__))
        if fn.__kwdefaults__:
            self.dependencies.append(("object", fn, ("__kwdefaults__",),
                                      cache.Items.of(fn.__kwdefaults__)))

    def weight_reads(self, src, fdef):
        """Accumulator keys (``self.w``, ``w``) of the weights ``fdef`` reads directly. Each
        Parameter read is a dependency, requested or not: which one a path holds decides
        which gradient the code gives (``net.a, net.b = net.b, net.a`` builds fresh code)."""
        if not self.weights:
            return {}
        local_names = {a.id for a in fdef.args.args} | A.assigned_names(fdef.body)
        found, depended = {}, self._parameter_reads.setdefault(id(src), set())
        for node in A.walk(fdef):
            if isinstance(node, (gast.Name, gast.Attribute)) and isinstance(node.ctx, gast.Load):
                obj = source.static_value(src, node, local_names)
                if not objects.is_weight(obj):
                    continue
                path = source.dotted(node)
                if path not in depended:
                    depended.add(path)
                    self._depend(src, node, obj)
                for index, weight in enumerate(self.weights):
                    if obj is weight:
                        found[path] = index
        return found

    def weights_of(self, callee):
        """The weights a call of the user's ``callee`` reads, through its own callees too:
        ``[(path, index)]`` sorted by path (``self.weight``, ``self.inner.k``, or a global's
        name), one entry per weight. Its backward function returns their gradients in this
        order, so instances of one class that reach their weights by the same paths share code.
        """
        if not self.weights:
            return []
        fn, obj, _ = callee
        cache_key = (fn.__code__, id(obj))
        if cache_key in self._weight_sets:
            return self._weight_sets[cache_key]
        src, fdef, _ = self.parse(fn, obj)
        found = dict(self.weight_reads(src, fdef))
        self._weight_sets[cache_key] = _by_path(found)  # for recursion: direct reads
        local_names = {a.id for a in fdef.args.args} | A.assigned_names(fdef.body)
        resolver = reverse.Resolver(src, local_names)
        self_name = fdef.args.args[0].id if obj is not None and fdef.args.args else None
        for node in A.walk(fdef):
            if not (isinstance(node, gast.Call) and resolver.receiver(node.func) is None):
                continue
            target = resolver(node.func)
            inner = reverse.user_code(target, node.func) if target is not None else None
            inner = reverse.as_method(src, node, inner)
            if inner is None:
                continue
            inner_self = inner[2]
            prefix = source.dotted(inner_self) if inner_self is not None else None
            inner_fdef = self.parse(inner[0], inner[1])[1]
            inner_self_name = inner_fdef.args.args[0].id if inner[1] is not None else None
            for path, index in self.weights_of(inner):
                head, _, rest = path.partition(".")
                if inner_self_name is not None and head == inner_self_name and prefix:
                    path = prefix + ("." + rest if rest else "")
                found.setdefault(path, index)
        del self_name
        self._weight_sets[cache_key] = _by_path(found)
        return self._weight_sets[cache_key]

    def reads_weights(self, src, local_names, func):
        """Whether calling ``func`` (an expression of ``src``) runs user code that reads a
        requested weight: its result then carries a gradient even from constant arguments."""
        if not self.weights:
            return False
        resolver = reverse.Resolver(src, local_names)
        if resolver.receiver(func) is not None:
            return False
        target = resolver(func)
        inner = reverse.user_code(target, func) if target is not None else None
        return bool(inner and self.weights_of(inner))

    def function(self, fn, obj, active, split, key=None, scalars=(), containers=(),
                 arrays=None, shape=(0, ()), arguments_shared=False):
        src, fdef, taken = self.parse(fn, obj, shape)
        names = NameGen(taken)
        # a callee takes its keyword-only parameters positionally too, after the others
        params = [a.id for a in fdef.args.args + fdef.args.kwonlyargs]
        active_params = [params[i] for i in active]
        # Which values must the tape save? Those the backward sweep reads; but saving them
        # adds restoring code that reads more (branch tests, ...): iterate to a fixed point.
        needed, recorded = None, False
        weight_keys = list(self.weight_reads(src, fdef))
        analysis = reverse.analyse(src, fdef, active_params + weight_keys,
                                   [params[i] for i in scalars if i < len(params)],
                                   [params[i] for i in containers if i < len(params)],
                                   self.reads_weights,
                                   {params[i]: n for i, n in (arrays or {}).items()
                                    if i < len(params)})
        while True:
            names.taken = set(taken)
            pass_ = reverse.ReversePass(self, src, A.clone(fdef), active_params, names, split,
                                        analysis)
            pass_.needed, pass_.callee_key, pass_.obj = needed, key, obj
            pass_.arguments_shared = arguments_shared
            if not recorded:
                active = sorted(pass_.active)
                self.record("activity", src.name,
                            lambda names=active: "active: " + ", ".join(names))
                recorded = True
            fwd, bwd, result = self._sweeps(pass_, pass_.fdef)
            reads = (_loads(bwd) & pass_.local_names) - pass_.adjoint_names
            if needed is not None and reads <= needed:
                break
            needed = reads | (needed or set())
        self.record("reverse", src.name, lambda: "\n".join(
            emit.unparse(f) for f in self._assemble(pass_, fwd, bwd, result, split, False)))
        defs = self._assemble(pass_, fwd, bwd, result, split, optimize_=True)
        self.record("optimize", src.name, lambda: "\n".join(emit.unparse(f) for f in defs))
        self.units.append((src, defs, pass_.bindings))
        self._track(src, fdef)
        return defs

    def _sweeps(self, pass_, fdef):
        body = fdef.body
        ret = body[-1]
        fwd, bwd = pass_.block(body[:-1], False)
        result = ret.value
        return fwd, bwd, result

    def _track(self, src, fdef):
        """Remember what each callee expression denotes, so a rebinding (a helper redefined in a
        notebook, ``net.block = Other()``, a closure variable reassigned) builds fresh code; and
        the items of each list a loop was unrolled over (``net.layers.append(...)``)."""
        local_names = {a.id for a in fdef.args.args} | A.assigned_names(fdef.body)
        callees = [sub.func for sub in A.walk(fdef) if isinstance(sub, gast.Call)]
        for node in callees + src.static_arguments:
            obj = source.static_value(src, node, local_names)
            if obj is not source.MISSING:
                self._depend(src, node, obj)
        for node, items in src.unrolled:
            self._depend(src, node, cache.Items(items))

    def _depend(self, src, node, obj):
        """Record that the attribute chain ``node`` (``self.block``, ``layers[0]``) of ``src``
        denotes ``obj``; an expression of another form is not recorded."""
        path, root = [], node
        while isinstance(root, (gast.Attribute, gast.Subscript, gast.Name)):
            if isinstance(root, gast.Name):
                if root.id in src.bound or root.id not in src.aliases:
                    break
                root = src.aliases[root.id]  # layers = self.layers: the chain it stands for
                continue
            if isinstance(root, gast.Subscript):
                if not (isinstance(root.slice, gast.Constant) and
                        isinstance(root.slice.value, int)):
                    return
                path.append(root.slice.value)
            else:
                path.append(root.attr)
            root = root.value
        path = tuple(reversed(path))
        if not isinstance(root, gast.Name):
            return
        if root.id in src.bound:
            self.dependencies.append(("object", src.bound[root.id], path, obj))
        elif root.id in src.closure:
            self.dependencies.append(("cell", src.closure[root.id], path, obj))
        elif root.id in src.globals:
            self.dependencies.append(("global", src.globals, (root.id,) + path, obj))

    def _assemble(self, pass_, fwd, bwd, result, split, optimize_):
        if not optimize_:  # only for the dump of the reverse stage: keep the originals intact
            fwd, bwd = A.clone(fwd), A.clone(bwd)
        res_active = pass_.is_active(result)
        d_res = pass_.d(result.id) if res_active else None
        owned = {pass_.d(n) for n in pass_.indexed if n in pass_.active}
        adjoint_names = set(pass_.adjoint_names)
        grads = [pass_.d(p) if p in pass_.active else None for p in pass_.active_params]
        weight_grads = self._weight_returns(pass_, split)
        buffers = {pass_.d(p): p for p in pass_.buffers if p in pass_.active}
        inits = [A.assign(dn, A.call(pass_.helper(runtime.zeros_buffer), A.load(buffers[dn]))
                          if dn in buffers else A.const(0))
                 for dn in sorted(set(pass_.dnames.values()) - {d_res}) if dn is not None]
        if pass_.copies is not None:
            inits.append(A.assign(pass_.copies, gast.Dict(keys=[], values=[])))
        if split:
            seed = []
        else:
            seed_fn = pass_.helper(runtime.seed)
            sens = pass_.sens = getattr(pass_, "sens", None) or pass_.fresh(naming.SENSITIVITY)
            seed = [A.assign(d_res, A.call(seed_fn, A.clone(result), A.load(sens)))] \
                if res_active else []
        back = seed + inits + bwd
        returned = [A.load(g) if g else A.const(0) for g in grads]
        if optimize_:
            add = pass_.bind(runtime.add, "add")
            opt = optimize.Optimizer(adjoint_names, pass_.impure_calls, owned,
                                     {add, pass_.bind(runtime.add_at, "add_at")}, add,
                                     _zero_test(pass_), functools.partial(_array_helper, pass_))
            live_out = {g for g in grads if g} | A.names_in(weight_grads, gast.Load)
            # a backward function that restores no values returns at once for a zero d_res
            guarded = split and d_res is not None and not _restores_values(back, pass_.tape)
            back = opt.run(back, live_out, zero=(), arrays={d_res} if guarded else ())
        params = pass_.fdef.args
        arguments = {a.id for a in params.args + params.kwonlyargs}
        if split:
            saved = self._saved_locals(pass_, back)
            always = {t.id for st in pass_.fdef.body if isinstance(st, gast.Assign)
                      for t in st.targets if isinstance(t, gast.Name)}
            prologue = [A.assign(n, A.const(None)) for n in
                        sorted(pass_.pushed | (set(saved) - always)) if n not in arguments]
            return self._split_defs(pass_, fwd, back, result, d_res, returned + weight_grads,
                                    prologue, saved)
        prologue = [A.assign(n, A.const(None)) for n in sorted(pass_.pushed - arguments)]
        if isinstance(result, gast.Name) and result.id in A.names_in(back, gast.Store):
            # the backward sweep pops or restores this name: return the forward sweep's value
            kept = pass_.fresh(naming.kept_result(result.id))
            fwd = fwd + [A.assign(kept, A.load(result.id))]
            result = A.load(kept)
        tape = [A.assign(pass_.tape, gast.List(elts=[], ctx=gast.Load()))] \
            if pass_.uses_tape else []
        args = _arguments([a.id for a in params.args], [a.id for a in params.kwonlyargs] +
                          [pass_.sens])
        ret = gast.Return(value=A.tuple_([A.clone(result), A.tuple_(returned),
                                          A.tuple_(weight_grads)]))
        body = prologue + tape + fwd + [emit.comment("backward sweep")] + back + [ret]
        if not hasattr(pass_, "entry_name"):
            label = naming.label(pass_.fdef.name, pass_.obj)
            pass_.entry_name = self.function_names(naming.gradient_entry(label))
            self.roles[pass_.entry_name] = "entry"
        return [_def(pass_.entry_name, args, body)]

    def _weight_returns(self, pass_, split):
        """One expression per weight returned: the sum of its accumulators (0 if none)."""
        indices = [i for _, i in self.weights_of((pass_.fdef_fn, pass_.obj, None))] if split else \
            range(len(self.weights))
        out = []
        for index in indices:
            keys = [k for k, i in pass_.weight_keys.items() if i == index]
            terms = [A.load(pass_.d(k)) for k in keys]
            expr = terms[0] if terms else A.const(0)
            for term in terms[1:]:
                expr = A.binop(expr, gast.Add(), term)
            out.append(expr)
        return out

    @staticmethod
    def _saved_locals(pass_, back):
        """The locals a split backward function reads: saved by its forward when it returns."""
        return sorted((_loads(back) & pass_.local_names) - pass_.adjoint_names - {pass_.tape})

    def _split_defs(self, pass_, fwd, back, result, d_res, returned, prologue, locals_):
        fwd_name, bwd_name = self.callees[pass_.callee_key]
        save, load = [], []
        if locals_:
            values = [A.call(pass_.helper(runtime.snapshot), A.load(n))
                      if n in pass_.containers else A.load(n) for n in locals_]
            packed = A.tuple_(values) if len(values) > 1 else values[0]
            save = [A.expr_stmt(A.call(A.attr(A.load(pass_.tape), "append"), packed))]
            target = A.tuple_([A.store(n) for n in locals_], gast.Store()) if len(locals_) > 1 \
                else A.store(locals_[0])
            load = [A.assign(target, A.call(A.attr(A.load(pass_.tape), "pop")))]
        # Callers pass every argument positionally, keyword-only ones too. The forward function
        # keeps its own tape and returns it: the caller hands it to the backward function, so
        # no list is shared and mutated across calls (grad of grad differentiates through it).
        params = [a.id for a in pass_.fdef.args.args + pass_.fdef.args.kwonlyargs]
        new_tape = A.assign(pass_.tape, gast.List(elts=[], ctx=gast.Load()))
        returned_pair = A.tuple_([A.clone(result), A.load(pass_.tape)])
        forward = _def(fwd_name, _arguments(params, []),
                       prologue + [new_tape] + fwd + save + [gast.Return(value=returned_pair)])
        d_in = d_res or pass_.fresh(naming.RESULT_ADJOINT)
        ret = returned[0] if len(returned) == 1 else A.tuple_(returned)
        guard = []
        if not _restores_values(back, pass_.tape):
            # a zero gradient in gives zero gradients out: the rules never see a symbolic zero
            zeros = A.const(0) if len(returned) == 1 else A.tuple_([A.const(0)] * len(returned))
            guard = [A.if_(A.call(pass_.helper(runtime.is_zero), A.load(d_in)),
                           [gast.Return(value=zeros)], [])]
        backward = _def(bwd_name, _arguments([pass_.tape, d_in], []),
                        guard + load + back + [gast.Return(value=ret)])
        return [forward, backward]

    # ----- callees -------------------------------------------------------------------------

    def callee(self, fn, obj, mask, scalar, caller, shape=(0, ())):
        """Names of the forward and backward functions of ``fn`` (bound to ``obj``, if any) for
        active arguments ``mask`` and scalar arguments ``scalar``, and the indices of the weights
        whose gradients its backward function returns after the inputs'."""
        reached = self.weights_of((fn, obj, None))
        pattern = tuple(path for path, _ in reached)
        shared = static_parts(obj)
        # a user's caller may read what the callee writes into its arguments (see aliasing.py)
        user_caller = not reverse._differentiates_mindgrad_code(caller.src)
        key = (fn.__code__, shared, mask, scalar, pattern, shape, user_caller)
        weights = [index for _, index in reached]
        if key not in self.callees:
            label = naming.label(fn.__name__, obj)
            names = tuple(self.function_names(n) for n in naming.split_functions(label))
            self.callees[key] = names
            offset = 0 if obj is None else 1
            self.function(fn, obj, [i + offset for i, m in enumerate(mask) if m], split=True,
                          key=key, scalars=[i + offset for i, m in enumerate(scalar) if m],
                          shape=shape, arguments_shared=user_caller)
        fwd, bwd = self.callees[key]
        for name in (fwd, bwd):
            caller.bindings[name] = _Pending(name)
            caller.fresh.reserve([name])
        return fwd, bwd, weights

    # ----- forward mode ----------------------------------------------------------------------

    def forward_function(self, fn, obj, active, name, entry=False, shape=(0, ()),
                         arguments_shared=False):
        """The tangent function ``name(params..., t_<active>...) -> (result, tangent)``."""
        from mindgrad.compiler import forward

        src, fdef, taken = self.parse(fn, obj, shape)
        names = NameGen(taken | {name})
        fdef = A.clone(fdef)
        params = [a.id for a in fdef.args.args]
        active_params = [(params + [a.id for a in fdef.args.kwonlyargs])[i] for i in active]
        analysis = reverse.analyse(src, fdef, active_params, [])
        pass_ = forward.ForwardPass(self, src, fdef, active_params, names, analysis)
        pass_.arguments_shared = arguments_shared
        active_names = sorted(pass_.active)
        self.record("activity", src.name, lambda: "active: " + ", ".join(active_names))
        body = pass_.block(fdef.body[:-1])
        # parameters given no tangent that become active later (x, y = y, x + y) start at zero
        start = [A.assign(pass_.t(p), A.call(pass_.helper(runtime.zero_tangent), A.load(p)))
                 for p in params + [a.id for a in fdef.args.kwonlyargs]
                 if p in pass_.active and p not in active_params]
        body = start + body
        result = fdef.body[-1].value
        ret = gast.Return(value=A.tuple_([A.clone(result), pass_.tangent_of(result)]))
        self.record("forward", src.name, lambda: emit.unparse(list(body) + [ret]))
        opt = optimize.Optimizer(pass_.adjoint_names, pass_.impure_calls, set(), set())
        body = opt.run(body + [ret], set())
        t_params = [pass_.t(p) for p in active_params]
        kwonly = [a.id for a in fdef.args.kwonlyargs]
        # the entry takes the tangents by keyword (defaulted parameters may be left out)
        args = _arguments(params, kwonly + t_params) if entry else \
            _arguments(params + kwonly + t_params, [])
        definition = _def(name, args, body)
        self.record("optimize", src.name, lambda: emit.unparse(definition))
        self.units.append((src, [definition], pass_.bindings))
        self._track(src, fdef)
        return definition

    def tangent_callee(self, fn, obj, mask, caller, shape=(0, ())):
        """The name of ``fn``'s tangent function for active arguments ``mask``."""
        shared = static_parts(obj)
        user_caller = not reverse._differentiates_mindgrad_code(caller.src)
        key = ("jvp", fn.__code__, shared, mask, shape, user_caller)
        if key not in self.callees:
            name = self.function_names(naming.tangent_callee(naming.label(fn.__name__, obj)))
            self.roles[name] = "tangent"
            self.callees[key] = name
            offset = 0 if obj is None else 1
            self.forward_function(fn, obj, [i + offset for i, m in enumerate(mask) if m], name,
                                  shape=shape, arguments_shared=user_caller)
        name = self.callees[key]
        caller.bindings[name] = _Pending(name)
        caller.fresh.reserve([name])
        return name

    # ----- compile -------------------------------------------------------------------------

    def compile(self, label):
        made, files, texts = {}, [], []
        for src, defs, bindings in self.units:
            text = "\n".join(emit.unparse(d) for d in defs)
            texts.append(text)
            names = [d.name for d in defs]
            functions, filename = emit.compile_functions(
                text, names, {**src.constants, **bindings}, src.globals, src.closure, label)
            for d in defs:
                fn = functions[d.name]
                role = self.roles.get(d.name)
                fn.__defaults__ = src.defaults if role == "entry" else None
                if role in ("entry", "tangent"):
                    fn.__kwdefaults__ = dict(src.fn.__kwdefaults__ or {})
            made.update(functions)
            files.append(filename)
        for fn in made.values():
            for cell in fn.__closure__ or ():
                try:
                    value = cell.cell_contents
                except ValueError:
                    continue
                if isinstance(value, _Pending):
                    cell.cell_contents = made[value.key]
        self.record("emit", label, "\n\n".join(texts))
        return made, files, "\n\n".join(texts)


def static_parts(obj, seen=None):
    """What the code of ``obj``'s methods resolves through ``self`` when it is built, so that
    objects alike in it share generated code: ``id(obj)`` for None or a class; otherwise its
    class, the functions it holds and, recursively, the parts of the objects it holds (Cells
    included). Two Dense layers with different activations do not share code."""
    if obj is None or isinstance(obj, type):
        return id(obj)
    attributes = getattr(obj, "__dict__", None)
    if not isinstance(attributes, dict) or isinstance(obj, np.ndarray):
        return type(obj)
    seen = set() if seen is None else seen
    if id(obj) in seen:  # a cycle (a child holding its parent)
        return id(obj)
    seen.add(id(obj))
    parts = []
    for name, value in attributes.items():
        if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                              functools.partial)):
            parts.append((name, id(value)))
        elif not isinstance(value, (types.ModuleType, type)) and \
                isinstance(getattr(value, "__dict__", None), dict):
            parts.append((name, static_parts(value, seen)))
    return type(obj), tuple(parts)


def _by_path(found):
    """``{path: index}`` as ``[(path, index)]`` sorted by path, one entry per weight."""
    out, seen = [], set()
    for path, index in sorted(found.items()):
        if index not in seen:
            seen.add(index)
            out.append((path, index))
    return out


def _loads(stmts) -> set:
    return A.names_in(list(stmts), gast.Load)


def _arguments(names, kwonly):
    return gast.arguments(args=[A.store(n) for n in names], posonlyargs=[], vararg=None,
                          kwonlyargs=[A.store(n) for n in kwonly],
                          kw_defaults=[None for _ in kwonly], kwarg=None, defaults=[])


def _def(name, args, body):
    for n in args.args + args.kwonlyargs:
        n.ctx = gast.Param()
    return gast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None,
                            type_comment=None, type_params=[])


def run_forward(fn, positions, dump=None, nargs=0):
    """Transform ``fn`` into its tangent function for the inputs at ``positions`` and compile.

    The entry takes the bound object first (a Cell or a bound method), then ``fn``'s
    ``nargs`` arguments, then one tangent per position, and returns ``(out, tangent of out)``.
    """
    build = Build(dump)
    function, obj = unbind(fn)
    offset = 0 if obj is None else 1
    name = build.function_names(naming.tangent_entry(naming.label(function.__name__, obj)))
    build.roles[name] = "entry"
    build.forward_function(function, obj, [p + offset for p in positions], name, entry=True,
                           shape=source.call_shape(function, offset, nargs, ()))
    made, files, text = build.compile(getattr(function, "__name__", "fn"))
    build.record("compile", function.__name__, lambda: "compiled as " + ", ".join(files))
    derivative = CompiledDerivative(made[name], text, files, build.dependencies, build.stages)
    derivative.bound = obj
    derivative.tangent_names = [a.id for a in made_args(made[name])][-len(positions):] \
        if positions else []
    return derivative


def made_args(fn):
    """The keyword-only parameters of a generated entry function, in order."""
    code = fn.__code__
    names = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    return [gast.Name(id=n, ctx=gast.Load(), annotation=None, type_comment=None) for n in names]


def run(fn, positions, dump=None, kinds=(), weights=(), split=False, nargs=None, keywords=()):
    """Transform ``fn`` for gradients at ``positions`` (and ``weights``) and compile.

    ``kinds`` (see ``cache.kind``) of the positional arguments let the code specialise:
    arithmetic on scalars needs no ``unbroadcast``. The number of positional arguments
    (``nargs``, else ``len(kinds)``) and the names of the ``keywords`` fix ``*args``/``**kw``.
    The entry function takes the bound object first when ``fn`` is a Cell or a bound method,
    and returns ``(out, input grads, weight grads)``. With ``split``, the result holds a
    forward function, returning ``(out, tape)``, and ``backward(tape, d_out)``, returning the
    input gradients then the weights' (a bare value when there is one): what ``vjp`` runs, the
    forward pass once.
    """
    from mindgrad.compiler.activity import is_scalar_kind

    build = Build(dump, weights)
    function, obj = unbind(fn)
    offset = 0 if obj is None else 1
    shape = source.call_shape(function, offset, len(kinds) if nargs is None else nargs,
                              keywords)
    scalars = [i + offset for i, k in enumerate(kinds) if is_scalar_kind(k)]
    containers = [i + offset for i, k in enumerate(kinds)
                  if isinstance(k, tuple) and k[0] in (list, tuple, dict)]
    import numpy

    arrays = {i + offset: k[2] for i, k in enumerate(kinds)
              if isinstance(k, tuple) and k[0] is numpy.ndarray and k[1][1] in "fc"}
    if split:
        return _run_split(build, function, obj, [p + offset for p in positions], scalars,
                          containers, arrays, shape)
    defs = build.function(function, obj, [p + offset for p in positions], split=False,
                          scalars=scalars, containers=containers, arrays=arrays, shape=shape)
    entry = defs[0].name
    made, files, text = build.compile(getattr(function, "__name__", "fn"))
    build.record("compile", function.__name__, lambda: "compiled as " + ", ".join(files))
    entry_fn = made[entry]
    entry_fn.__kwdefaults__ = dict(entry_fn.__kwdefaults__ or {})
    sens_name = [a.id for a in defs[0].args.kwonlyargs][-1]
    entry_fn.__kwdefaults__[sens_name] = None
    entry_fn.sens_name = sens_name
    derivative = CompiledDerivative(entry_fn, text, files, build.dependencies, build.stages)
    derivative.bound = obj
    derivative.keyword_params = build.parse(function, obj, shape)[0].keyword_params
    return derivative


def _run_split(build, function, obj, positions, scalars, containers, arrays, shape):
    key = ("split entry", id(function))
    names = tuple(build.function_names(n)
                  for n in naming.split_functions(naming.label(function.__name__, obj)))
    build.callees[key] = names
    build.function(function, obj, positions, split=True, key=key, scalars=scalars,
                   containers=containers, arrays=arrays, shape=shape)
    made, files, text = build.compile(getattr(function, "__name__", "fn"))
    build.record("compile", function.__name__, lambda: "compiled as " + ", ".join(files))
    derivative = CompiledDerivative(made[names[0]], text, files, build.dependencies, build.stages)
    derivative.backward = made[names[1]]
    # the backward function returns the gradients of the weights it reaches, in this order
    derivative.weight_indices = [index for _, index in build.weights_of((function, obj, None))]
    derivative.bound = obj
    return derivative


def _restores_values(stmts, tape) -> bool:
    """Whether a backward sweep writes back values the forward sweep overwrote (index
    assignments, list appends and pops other than the tape's): it must run even when its
    gradient is zero, or the caller would read overwritten values."""
    for node in (n for s in stmts for n in A.walk(s)):
        if isinstance(node, gast.Assign) and any(isinstance(t, gast.Subscript)
                                                 for t in node.targets):
            return True
        if isinstance(node, gast.Expr) and isinstance(node.value, gast.Call):
            func = node.value.func
            if not (isinstance(func, gast.Attribute) and func.attr == "pop" and
                    isinstance(func.value, gast.Name) and func.value.id == tape):
                return True
    return False


def _zero_test(pass_):
    """The name of ``runtime.is_zero`` in ``pass_``'s code, whose guards of zero-unsafe rules the
    optimize stage drops where the gradient is known to hold a value; None in mindgrad's own
    code (grad of grad), where any value may be a symbolic zero: its guards all stay."""
    if reverse._differentiates_mindgrad_code(pass_.src):
        return None
    return pass_.bind(runtime.is_zero, "is_zero")


def _array_helper(pass_, name):
    """What the helper ``name`` of ``pass_``'s code returns: ``"always"`` a value (never the
    symbolic 0), ``"keeps"``: a value when a gradient it is given holds one (helpers marked
    ``runtime.takes_zero``, and ``add_at``: in the user's code the array it indexes is a
    value, never a zero), or None: not known."""
    obj = pass_.bindings.get(name)
    if obj is None:
        obj = pass_.src.resolve(name, None)
    if obj is runtime.seed or obj is runtime.zeros_buffer:
        return "always"
    if getattr(obj, "keeps_values", False) is True or any(
            obj is f for f in (runtime.unbroadcast, runtime.unreduce, runtime.add,
                               runtime.add_at)):
        return "keeps"
    return None
