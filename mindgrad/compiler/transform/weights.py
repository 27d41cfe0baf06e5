"""Which of the weights asked for (``grad(..., weights=...)``) each function reads.

A function reads a weight directly (``self.w``, a global Parameter ``w``) or through the user
functions it calls (``self.dense(x)`` reads ``self.dense.w``). The reverse pass accumulates a
weight's gradient under the path it is read by; a callee's backward function returns the
gradients of the weights it reaches, sorted by path, so that instances of one class reaching
their weights by the same paths share code.
"""

from __future__ import annotations

import gast

from mindgrad.compiler import astutil as A
from mindgrad.compiler import expansions, objects
from mindgrad.compiler.facts.analysis import Resolver, as_method, user_code
from mindgrad.compiler.front import source


class Weights:
    def __init__(self, requested, parse, dependencies):
        self.requested = list(requested)   # the Parameters whose gradients are asked for
        self._parse = parse                # (fn, obj) -> (Source, normalized def, names)
        self._dependencies = dependencies
        self._reached = {}                 # (code, id(obj)) -> [(path, index)]
        self._read_paths = {}              # id(Source) -> paths of the Parameters it reads

    def direct_reads(self, src, fdef) -> dict:
        """Accumulator keys (``self.w``, ``w``) of the weights ``fdef`` reads directly, with
        their indices. Each Parameter read is a dependency, requested or not: which one a path
        holds decides which gradient the code gives (``net.a, net.b = net.b, net.a`` builds
        fresh code)."""
        if not self.requested:
            return {}
        local_names = {a.id for a in fdef.args.args} | A.assigned_names(fdef.body)
        found, depended = {}, self._read_paths.setdefault(id(src), set())
        for node in A.walk(fdef):
            if isinstance(node, (gast.Name, gast.Attribute)) and isinstance(node.ctx, gast.Load):
                obj = source.static_value(src, node, local_names)
                if not objects.is_weight(obj):
                    continue
                path = source.dotted(node)
                if path not in depended:
                    depended.add(path)
                    self._dependencies.on(src, node, obj)
                for index, weight in enumerate(self.requested):
                    if obj is weight:
                        found[path] = index
        return found

    def reached(self, fn, obj) -> list:
        """The weights a call of the user's ``fn`` (bound to ``obj``) reads, through its own
        callees too: ``[(path, index)]`` sorted by path (``self.weight``, ``self.inner.k``, or
        a global's name), one entry per weight. Its backward function returns their gradients
        in this order."""
        if not self.requested:
            return []
        cache_key = (fn.__code__, id(obj))
        if cache_key in self._reached:
            return self._reached[cache_key]
        src, fdef, _ = self._parse(fn, obj)
        found = dict(self.direct_reads(src, fdef))
        self._reached[cache_key] = _by_path(found)  # for recursion: direct reads
        local_names = {a.id for a in fdef.args.args} | A.assigned_names(fdef.body)
        resolver = Resolver(src, local_names)
        for node in A.walk(fdef):
            if not (isinstance(node, gast.Call) and resolver.receiver(node.func) is None):
                continue
            target = resolver(node.func)
            inner = user_code(target, node.func) if target is not None else None
            inner = as_method(src, node, inner)
            if inner is None:
                continue
            inner_self = inner[2]
            prefix = source.dotted(inner_self) if inner_self is not None else None
            inner_fdef = self._parse(inner[0], inner[1])[1]
            inner_self_name = inner_fdef.args.args[0].id if inner[1] is not None else None
            for path, index in self.reached(inner[0], inner[1]):
                head, _, rest = path.partition(".")
                if inner_self_name is not None and head == inner_self_name and prefix:
                    path = prefix + ("." + rest if rest else "")
                found.setdefault(path, index)
        self._reached[cache_key] = _by_path(found)
        return self._reached[cache_key]

    def read_by_call(self, src, local_names, func) -> bool:
        """Whether calling ``func`` (an expression of ``src``) runs user code that reads a
        requested weight: its result then carries a gradient even from constant arguments."""
        if not self.requested:
            return False
        resolver = Resolver(src, local_names)
        if resolver.receiver(func) is not None:
            return False
        target = resolver(func)
        if expansions.is_gradient_object(target):
            # a gradient function (grad(g)): its generated code, built for the call's
            # arguments, may read any weight; taken as reading them, it is differentiated,
            # and second order with respect to weights refuses there, by name
            return True
        inner = user_code(target, func) if target is not None else None
        return bool(inner and self.reached(inner[0], inner[1]))


def _by_path(found):
    """``{path: index}`` as ``[(path, index)]`` sorted by path, one entry per weight."""
    out, seen = [], set()
    for path, index in sorted(found.items()):
        if index not in seen:
            seen.add(index)
            out.append((path, index))
    return out
