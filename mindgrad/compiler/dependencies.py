"""What a build's result depends on, recorded while it is built (see mindgrad.compiler.cache).

A dependency is ``(where, root, path, object)``: the attribute chain ``path`` from ``root`` (a
bound object, a closure cell, or the globals) held ``object`` when the code was built. A
rebinding (a helper redefined in a notebook, ``net.block = Other()``, a closure variable
reassigned, a default changed) makes the cache build fresh code.
"""

from __future__ import annotations

import gast

from mindgrad.compiler import astutil as A
from mindgrad.compiler import cache
from mindgrad.compiler.front import source


class Dependencies:
    def __init__(self, weights=()):
        # The weights asked for come first: a cache key names them by id, so the entry must
        # die with them, or a new Parameter at a freed one's address would find it
        self.items = [("object", w, (), w) for w in weights]

    def on_defaults(self, fn):
        """The code fills in ``fn``'s defaults: changing them must build fresh code. (The
        defaults are a tuple, replaced whole; the keyword-only ones a dict, changed in place.)"""
        if fn.__defaults__:
            self.items.append(("object", fn, ("__defaults__",), fn.__defaults__))
        if fn.__kwdefaults__:
            self.items.append(("object", fn, ("__kwdefaults__",),
                               cache.Items.of(fn.__kwdefaults__)))

    def on_callees(self, src, fdef):
        """What each callee expression of ``fdef`` denotes, and the items of each list a loop
        was unrolled over (``net.layers.append(...)`` builds fresh code)."""
        local_names = {a.id for a in fdef.args.args} | A.assigned_names(fdef.body)
        callees = [sub.func for sub in A.walk(fdef) if isinstance(sub, gast.Call)]
        for node in callees + src.static_arguments:
            obj = source.static_value(src, node, local_names)
            if obj is not source.MISSING:
                self.on(src, node, obj)
        for node, items in src.unrolled:
            self.on(src, node, cache.Items(items))

    def on(self, src, node, obj):
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
            self.items.append(("object", src.bound[root.id], path, obj))
        elif root.id in src.closure:
            self.items.append(("cell", src.closure[root.id], path, obj))
        elif root.id in src.globals:
            self.items.append(("global", src.globals, (root.id,) + path, obj))
