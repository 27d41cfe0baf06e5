"""Generated code as a module that runs on its own (``source(..., standalone=True)``): the
code, with the imports of what it reads at its top, found by where each object is defined.
"""

from __future__ import annotations

import builtins
import importlib
import math
import symtable
import textwrap
import types

from mindgrad import runtime
from mindgrad.api.display import Code, kinds

__all__ = ["AS_GRAD", "about", "module"]


def _generated(fn) -> bool:
    """Whether ``fn`` is a function mindgrad compiled (its code has a ``<mindgrad ...>`` file)."""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith("<mindgrad ")


def _reached(entries):
    """The generated functions ``entries`` are and call (through their closures), by name."""
    found, todo = {}, list(entries)
    while todo:
        fn = todo.pop()
        if fn.__name__ in found:
            continue
        found[fn.__name__] = fn
        for cell in fn.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if _generated(value):
                todo.append(value)
    return found


def _free_names(text):
    """``(defined, reads)``: the names ``text``'s top level defines, and each name its
    functions read from outside their own scopes, with the top-level functions reading it."""
    module = symtable.symtable(text, "<generated>", "exec")
    defined = {symbol.get_name() for symbol in module.get_symbols() if symbol.is_assigned()
               or symbol.is_imported() or symbol.is_namespace()}
    reads = {}
    for function in module.get_children():
        scopes = [function]
        while scopes:
            scope = scopes.pop()
            scopes.extend(scope.get_children())
            for symbol in scope.get_symbols():
                name = symbol.get_name()
                if symbol.is_referenced() and symbol.is_global():
                    reads.setdefault(name, []).append(function.get_name())
    return defined, reads


def _lookup(name, fn):
    """What ``name`` means in generated function ``fn``: its closure, then its globals, then
    the builtins. ``(found, value, module)``, ``module`` the name of the module whose global
    it is (or None)."""
    for free, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        if free == name:
            try:
                return True, cell.cell_contents, None
            except ValueError:
                return False, None, None
    if name in fn.__globals__:
        return True, fn.__globals__[name], fn.__globals__.get("__name__")
    if hasattr(builtins, name):
        return True, getattr(builtins, name), None
    return False, None, None


def _literal(value):
    """Python text evaluating to ``value`` when it is a plain constant (a number, a string,
    None, a tuple of them), else None."""
    if type(value) is tuple:
        items = [_literal(v) for v in value]
        if any(item is None for item in items):
            return None
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if type(value) is float and not math.isfinite(value):
        return f'float("{value}")'  # inf, -inf, nan
    if type(value) in (int, float, complex, bool, str, bytes) or value is None or \
            value is Ellipsis:
        text = repr(value)
        try:
            back = eval(text, {})  # noqa: S307 (a literal's repr)
        except (SyntaxError, NameError):
            return None
        return text if back == value or back is value else None
    return None


def _importable(value, name, module):
    """``(module, path)`` from which ``value`` imports as itself: where it was defined
    (``__module__`` and ``__qualname__``), or as the global ``name`` of ``module``; None
    where neither holds (an object of a ``__main__`` script, one defined in a function)."""
    places = []
    defined_in = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if isinstance(defined_in, str) and isinstance(qualname, str) and "<" not in qualname:
        places.append((defined_in, qualname))
    if module is not None:
        places.append((module, name))
    if value is runtime.zero:  # an instance: the symbolic zero generated code starts at
        places.append(("mindgrad.runtime", "zero"))
    for module_name, path in places:
        if module_name == "__main__":
            continue
        try:
            found = importlib.import_module(module_name)
            for part in path.split("."):
                found = getattr(found, part)
        except (ImportError, AttributeError):
            continue
        if found is value:
            return module_name, path
    return None


def _describe(value) -> str:
    if isinstance(getattr(value, "__qualname__", None), str) and \
            isinstance(getattr(value, "__module__", None), str):
        return f"{type(value).__name__} {value.__module__}.{value.__qualname__}"
    shape = getattr(value, "shape", None)
    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    if shape is not None and hasattr(value, "dtype"):
        return f"a {kind} of shape {shape} and dtype {value.dtype}"
    return f"a {kind}"


def _header_lines(names):
    """The import and assignment lines binding ``names`` (name -> (object, the module whose
    global it is)), and the names they cannot bind, each with what it is."""
    modules, froms, assignments, missing = [], {}, [], []
    for name, (value, module) in sorted(names.items(), key=lambda item: item[0]):
        if value is getattr(builtins, name, None) and value is not None:
            continue  # a builtin under its own name
        if isinstance(value, types.ModuleType):
            modules.append(f"import {value.__name__}" if value.__name__ == name
                           else f"import {value.__name__} as {name}")
            continue
        literal = _literal(value)
        if literal is not None:
            assignments.append(f"{name} = {literal}")
            continue
        where = _importable(value, name, module)
        if where is None:
            missing.append(f"{name} ({_describe(value)})")
        elif "." in where[1]:  # a method or a nested class: import its outermost class
            head, rest = where[1].split(".", 1)
            froms.setdefault(where[0], set()).add(head)
            assignments.append(f"{name} = {head}.{rest}")
        else:
            froms.setdefault(where[0], set()).add(
                where[1] if where[1] == name else f"{where[1]} as {name}")
    lines = sorted(modules)
    for module, items in sorted(froms.items()):
        line = f"from {module} import {', '.join(sorted(items))}"
        if len(line) > 96:
            line = textwrap.fill(", ".join(sorted(items)) + ",", 96, initial_indent="    ",
                                 subsequent_indent="    ", break_on_hyphens=False)
            line = f"from {module} import (\n{line}\n)"
        lines.append(line)
    return lines, assignments, missing


def _defaults_lines(functions):
    """Lines restoring the defaults the compiled functions carry but their text does not
    (``sens=None`` of a gradient entry, the user's default arguments)."""
    lines, missing = [], []
    for name, fn in functions.items():
        for attribute in ("__defaults__", "__kwdefaults__"):
            value = getattr(fn, attribute)
            if not value:
                continue
            items = value.values() if isinstance(value, dict) else value
            if all(_literal(v) is not None for v in items):
                lines.append(f"{name}.{attribute} = {value!r}")
            else:
                missing.append(f"{name}.{attribute} ({', '.join(map(_describe, items))})")
    return lines, missing


def module(text: str, entries, about: str, epilogue: str = "", needs=None) -> Code:
    """``text``, the generated code of ``entries`` (the compiled functions a caller calls), as a
    module that runs on its own: the imports of what the code reads at its top (found by where
    each object lives, ``__module__`` and ``__qualname__``), plain constants assigned, and the
    defaults the compiled functions carry set after them, then ``epilogue`` (which may use
    ``needs``, name -> object, imported with the rest). ``about`` (how to call it) starts the
    module. A value that can be neither imported nor written as a literal (a closure's array,
    a function of a ``__main__`` script) raises a ValueError naming it."""
    functions = _reached(entries)
    defined, readers = _free_names(text)
    values, missing = {}, []
    for name, owners in readers.items():
        meanings = [_lookup(name, functions[owner]) if owner in functions else
                    (False, None, None) for owner in owners]
        if name in defined:  # the text's own function: each reader must mean that one
            if any(found and not (_generated(value) and value.__name__ == name)
                   for found, value, _ in meanings):
                missing.append(f"{name} (a function of this code, and another value elsewhere)")
        elif not all(found for found, _, _ in meanings):
            missing.append(f"{name} (unbound)")
        elif any(value is not meanings[0][1] for _, value, _ in meanings):
            missing.append(f"{name} (different values in {', '.join(owners)})")
        else:
            values[name] = meanings[0][1:]
    values.update((name, (value, None)) for name, value in (needs or {}).items())
    imports, assignments, not_imported = _header_lines(values)
    defaults, no_defaults = _defaults_lines(
        {name: fn for name, fn in functions.items() if name in defined})
    missing += not_imported + no_defaults
    if missing:
        raise ValueError("the generated code reads values that cannot be imported or written "
                         "as Python literals: " + "; ".join(missing) + ". Define them at the "
                         "top level of an importable module, or pass them as arguments; "
                         "source() without standalone=True shows the code")
    about = "\n\n".join(textwrap.fill(paragraph, 92) for paragraph in about.strip().split("\n\n"))
    parts = ['"""' + about + '\n"""', "\n".join(imports)]
    if assignments:
        parts.append("\n".join(assignments))
    parts.append("\n" + text.strip() + "\n")
    if defaults:
        parts.append("\n".join(defaults))
    if epilogue:
        parts.append(epilogue.strip())
    return Code("\n\n".join(p for p in parts if p) + "\n")


# how the gradients a gradient function returns differ from those its code computes
AS_GRAD = (" Each gradient is as the code computes it (0 for an input it does not reach); "
           "mindgrad.runtime.as_grad(g, x) gives it x's type, shape and dtype, as grad does.")


def about(what: str, args, bound, how: str) -> str:
    """The docstring of a standalone module: ``what`` it computes, for arguments like
    ``args``, and ``how`` to call it (the ``bound`` object, if any, first)."""
    text = f"{what[0].upper()}{what[1:]}, written by mindgrad for arguments like ({kinds(args)})."
    text += "\n\n" + how
    if bound is not None:
        text += (f"\n\nIts first argument is the {type(bound).__name__} whose method is "
                 "differentiated.")
    return text
