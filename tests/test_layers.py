"""The package's import graph, read from its source (imports inside functions included): no
cycle, and each layer imports only the layers below it::

    runtime     what generated code calls; imports no other part of mindgrad
    rules       the registry and one module per topic: runtime
    compiler    source to derivative code, the cache: rules, runtime, errors
    api         grad, jvp, vjp, ...: compiler, rules, runtime, errors
    mindspore   Cell, Parameter, nn, ops, Tensor: any of the above, and nothing below imports it
    ops, nn, common, context
                MindSpore's module layout (mindgrad.ops.composite, ...): the MindSpore layer

Upper layers register into lower ones instead of being imported by them (the API's gradient
makers into ``compiler.expansions``, Cells and Parameters into ``compiler.objects``)."""

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


LAYERS = {  # layer: the layers it may import besides itself
    "runtime": set(),
    "errors": set(),
    "rules": {"runtime"},
    "compiler": {"rules", "runtime", "errors"},
    "api": {"compiler", "rules", "runtime", "errors"},
    "mindspore": {"api", "compiler", "rules", "runtime", "errors"},
    "ops": {"mindspore", "ops"},
    "nn": {"mindspore"},
    "common": {"mindspore", "common"},
    "context": {"mindspore"},
}


def _layer(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_each_layer_imports_only_the_layers_below_it():
    for name, imports in _graph().items():
        layer = _layer(name)
        if layer not in LAYERS:
            continue  # the package itself and the random-program tester sit on top
        allowed = LAYERS[layer] | {layer}
        wrong = sorted(m for m in imports if _layer(m) not in allowed)
        assert not wrong, f"{name} ({layer}) imports {wrong}"


def test_every_module_is_in_a_layer():
    top = {_layer(name) for name in _graph()} - {None}
    assert top <= set(LAYERS) | {"fuzz"}, sorted(top - set(LAYERS))


def test_the_checker_sees_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert _cycle(graph) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


# the most lines a module of these packages may hold: a reader finds one subject in each
SIZE_LIMITS = {"compiler": 500, "api": 500, "runtime": 500, "rules": 900}


def test_no_module_outgrows_its_subject():
    """No module of the compiler, the API or the runtime is over 500 lines, and no module of
    the rules (a topic, or the registry's own) over 900: a module that grows past its limit is
    split by subject, as the linear algebra was into products, decompositions and the rest."""
    over = []
    for package, limit in SIZE_LIMITS.items():
        for path in sorted((ROOT / package).rglob("*.py")):
            count = len(path.read_text().splitlines())
            if count > limit:
                where = path.relative_to(ROOT.parent)
                over.append(f"{where}: {count} lines (limit {limit})")
    assert not over, "\n".join(over)
