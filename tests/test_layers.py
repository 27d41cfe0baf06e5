"""The package's import graph, read from its source (imports inside functions included): no
cycle, and the lower layers never reach up. ``runtime`` is what generated code calls; ``rules``
is the registry and the rules; ``transform`` (the compiler) imports those, never the API
(``api``, ``higher``, ``ops``, ``testing``), which registers into it instead."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1] / "mindgrad"


def _modules():
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _graph():
    modules = _modules()
    graph = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    kept = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(kept + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                           for a in node.names]
            else:
                continue
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def _cycle(graph):
    """One import cycle as a list of modules, or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return None


def test_no_import_cycle():
    cycle = _cycle(_graph())
    assert cycle is None, " -> ".join(cycle)


def test_lower_layers_do_not_import_upper_ones():
    api = {"mindgrad.api", "mindgrad.higher", "mindgrad.ops", "mindgrad.testing", "mindgrad"}
    for name, imports in _graph().items():
        if name == "mindgrad.runtime":
            assert not imports, f"runtime imports {sorted(imports)}"
        elif name.startswith("mindgrad.rules"):
            allowed = {m for m in imports if m.startswith(("mindgrad.rules", "mindgrad.runtime"))}
            assert imports == allowed, f"{name} imports {sorted(imports - allowed)}"
        elif name.startswith("mindgrad.transform"):
            assert not imports & api, f"{name} imports {sorted(imports & api)}"


def test_the_checker_sees_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert _cycle(graph) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
