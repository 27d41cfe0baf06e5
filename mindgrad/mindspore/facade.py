"""MindSpore's module layout on mindgrad: ``mindgrad.ops.composite``, ``mindgrad.common.dtype``,
``mindgrad.context``, ... are thin modules that take, from the MindSpore layer, the names that
MindSpore's module of the same path has (``mindspore_names``, recorded from MindSpore 2.10).

A name that MindSpore's module has and mindgrad lacks raises an AttributeError saying so,
instead of a bare "has no attribute" (or a ModuleNotFoundError for an import path).
"""

from __future__ import annotations

import types

from mindgrad.mindspore.mindspore_names import NAMES

__all__ = ["fill", "unsupported"]


def unsupported(module: str, mindspore_module: str, name: str) -> AttributeError:
    """The error for ``module.name`` where ``mindspore_module.name`` is MindSpore's and
    mindgrad has no such name; a plain AttributeError for a name MindSpore lacks too."""
    if name in NAMES.get(mindspore_module, ()):
        return AttributeError(
            f"module {module!r} has no attribute {name!r}: {mindspore_module}.{name} is "
            f"MindSpore's and is not supported by mindgrad (see docs/mindspore.md for what is)")
    return AttributeError(f"module {module!r} has no attribute {name!r} (and MindSpore's "
                          f"{mindspore_module} has none either)")


def fill(namespace: dict, mindspore_module: str, *sources, everything=False) -> None:
    """Give the facade module whose globals are ``namespace`` the names of
    ``mindspore_module`` that one of ``sources`` (modules or dicts, first wins) has, or all
    their public names with ``everything``; names the module defines itself are kept. Sets its
    ``__all__`` and a ``__getattr__`` that refuses MindSpore's missing names clearly."""
    wanted = None if everything else set(NAMES[mindspore_module])
    for source in sources:
        items = vars(source) if isinstance(source, types.ModuleType) else source
        public = getattr(source, "__all__", None) or \
            [n for n in items if not n.startswith("_")]
        if everything:  # the whole module, as it was before it became a package
            public = list(public) + [n for n in items
                                     if not n.startswith("__") and n not in public]
        for name in public:
            if isinstance(items[name], types.ModuleType):
                continue  # submodules are the facade's own: mindgrad.common.dtype
            if (wanted is None or name in wanted) and name not in namespace:
                namespace[name] = items[name]
    module = namespace["__name__"]
    listed = set()
    for source in sources:
        items = vars(source) if isinstance(source, types.ModuleType) else source
        listed.update(getattr(source, "__all__", None) or items)
    namespace["__all__"] = sorted(n for n, v in namespace.items()
                                  if not n.startswith("_") and n in listed
                                  and not isinstance(v, types.ModuleType))

    def __getattr__(name):  # noqa: N807  (a module's __getattr__)
        if name.startswith("__"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        raise unsupported(module, mindspore_module, name)

    namespace["__getattr__"] = __getattr__
