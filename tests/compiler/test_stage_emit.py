"""Stage emit: the generated tree printed as readable Python, and compiled with its lines
registered."""

import ast
import inspect
import linecache
import os

import gast
import pytest

import mindgrad
from mindgrad.compiler import astutil as A
from mindgrad.compiler.finish import emit
from mindgrad.compiler.front import source

HERE = os.path.realpath(__file__)


# ----- emit: unparse ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "x[1:2, None]", "x[:, None]", "x[::2, ..., 0]", "x[i,]", "x[()]",
    "a * (b + c)", "a * b + c", "a - (b - c)", "a - b - c", "a / (b * c)",
    "-x ** 2", "(-x) ** 2", "x ** -2", "2 ** 3 ** 2", "(2 ** 3) ** 2",
    "not (a and b)", "(a or b) and c", "a < (b < c)",
    "x if c else y", "(x if c else y) + 1", "(a if b else c) if d else e",
    "(a + b).sum()", "(1).real", "a @ b.T", "f(*a, **k)", "(a, b)[0]",
    "y = a @ b", "z = x if c else y", "x[a, b] = v",
])
def test_unparse_prints_minimal_parentheses_and_reparses(text):
    out = emit.unparse(gast.parse(text)).strip()
    assert out == text
    assert ast.dump(ast.parse(out)) == ast.dump(ast.parse(text))


@pytest.mark.parametrize("text, expected", [
    ("x[(1, 2)]", "x[1, 2]"), ("(a * b) + c", "a * b + c"), ("y = (a @ b)", "y = a @ b"),
    ("z = (x if c else y)", "z = x if c else y"), ("-(-x)", "--x"),
])
def test_unparse_drops_needless_parentheses(text, expected):
    out = emit.unparse(gast.parse(text)).strip()
    assert out == expected
    assert ast.dump(ast.parse(out)) == ast.dump(ast.parse(text))


def _expr_text(node):
    return emit.unparse([A.expr_stmt(node)]).strip()


def _same_tree(tree):
    """Whether ``emit.to_ast(tree)`` is ``gast.gast_to_ast(tree)``: the same classes, fields
    and locations throughout (a pair of nodes compared once: generated trees share nodes)."""
    seen = set()

    def same(a, b):
        if isinstance(a, list) or isinstance(b, list):
            return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and \
                all(same(x, y) for x, y in zip(a, b))
        if not isinstance(a, ast.AST):
            return type(a) is type(b) and a == b
        if (id(a), id(b)) in seen:
            return True
        seen.add((id(a), id(b)))
        return type(a) is type(b) and all(
            same(getattr(a, f, None), getattr(b, f, None))
            for f in a._fields + a._attributes)

    return same(_TO_AST(tree), gast.gast_to_ast(tree))


_TO_AST = emit.to_ast  # as it is, while a test below records the trees it is given


def test_to_ast_converts_as_gast_does_every_module_of_mindgrad():
    """``emit.to_ast`` copies most nodes itself: node for node, location for location, the
    tree gast's converter makes, on this Python and this gast (the oldest admitted too)."""
    package = os.path.dirname(os.path.abspath(mindgrad.__file__))
    paths = [os.path.join(folder, name) for folder, _, names in os.walk(package)
             for name in names if name.endswith(".py")]
    assert len(paths) > 100
    for path in paths:
        with open(path, encoding="utf-8") as f:
            assert _same_tree(gast.parse(f.read())), path


def test_to_ast_converts_as_gast_does_the_generated_code(monkeypatch):
    """The trees the pipeline prints (comments, tapes, loops, closures, lambdas, *args)."""
    trees, convert = [], emit.to_ast
    monkeypatch.setattr(emit, "to_ast", lambda tree: trees.append(tree) or convert(tree))

    def f(x, *rest, scale=2.0):
        total = 0.0
        for i in range(3):
            if i % 2:
                continue
            total = total + np.sum(np.tanh(x) * (lambda t: t * scale)(x[i]))
        while total > 100.0:
            total = total / 2.0
        return total + rest[0] * sum(t * t for t in [x[0], x[1]])

    np = __import__("numpy")
    mindgrad.grad(f)(np.linspace(0.1, 0.9, 4), 0.5)
    mindgrad.jvp(f, (np.linspace(0.1, 0.9, 4), 0.5), (np.ones(4), 1.0))
    assert len(trees) >= 2
    assert all(_same_tree(tree) for tree in trees)


def test_unparse_built_nodes_with_negative_constants():
    assert _expr_text(A.binop(A.const(-2), gast.Pow(), A.const(2))) == "(-2) ** 2"
    assert _expr_text(A.binop(A.load("x"), gast.Sub(), A.const(-1.5))) == "x - -1.5"
    assert _expr_text(A.attr(A.const(-2.0), "real")) == "(-2.0).real"
    assert eval(_expr_text(A.binop(A.const(-2), gast.Pow(), A.const(2)))) == 4


def test_unparse_comment_marker():
    out = emit.unparse([emit.comment("grad of: y = x"), A.assign("y", A.load("x"))])
    assert out == "# grad of: y = x\ny = x\n"


def test_unparse_a_function_reparses():
    from tests.compiler.test_stage_normalize import _normalized, with_break

    fdef = _normalized(with_break)
    text = emit.unparse(fdef)
    again = emit.unparse(gast.parse(text).body[0])
    assert again == text


def test_compile_functions_registers_linecache():
    text = "def double(x):\n    return x * 2.0\n"
    made, filename = emit.compile_functions(text, ["double"], {}, {}, {}, "double")
    assert made["double"](3.0) == 6.0
    assert filename.startswith("<mindgrad")
    assert "return x * 2.0" in "".join(linecache.getlines(filename))
    assert "return x * 2.0" in inspect.getsource(made["double"])


def test_source_registered_in_linecache_is_read_as_inspect_reads_it():
    """Source that is not on disk but in linecache (a notebook cell, generated code) is read
    without inspect's search of every module, with inspect's answer: the def's lines, a
    decorated def from its decorator, a lambda inside an expression."""
    text = ("import functools\n"
            "def plain(x):\n"
            "    return x * 2.0\n"
            "\n"
            "@functools.lru_cache\n"
            "def decorated(x):\n"
            "    y = x + 1.0\n"
            "    return y\n"
            "pair = (1,\n"
            "        lambda x: x ** 2)\n")
    filename = "<mindgrad test registered cell>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {}
    exec(compile(text, filename, "exec"), namespace)
    for fn in (namespace["plain"], namespace["decorated"].__wrapped__, namespace["pair"][1]):
        assert source._registered_lines(fn.__code__) == inspect.getsourcelines(fn.__code__)
    assert source._registered_lines(plain_for_source.__code__) is None  # on disk: inspect's
    for fn in (namespace["plain"], namespace["pair"][1]):
        assert mindgrad.grad(fn)(3.0) == pytest.approx(2.0 if fn is namespace["plain"] else 6.0)


def plain_for_source(x):
    return x


def _rewrites(base):
    """A transformer on ``base`` renaming names, dropping ``pass``, splitting each ``del`` of
    two names in two and replacing constants 2 by 3 (a node, None, a list: every return)."""

    class Rewrite(base):
        def visit_Name(self, node):
            node.id = node.id + "_r"
            return node

        def visit_Pass(self, node):
            return None

        def visit_Delete(self, node):
            if len(node.targets) == 2:
                return [gast.Delete(targets=[t]) for t in node.targets]
            return self.generic_visit(node)

        def visit_Constant(self, node):
            return gast.Constant(value=3, kind=None) if node.value == 2 else node
    return Rewrite()


def test_the_fast_transformer_rewrites_as_gasts_does():
    """``astutil.Transformer`` (the rule templates' substitution, constant folding) makes the
    tree ``gast.NodeTransformer`` makes, on every module of mindgrad."""
    package = os.path.dirname(os.path.abspath(mindgrad.__file__))
    for folder, _, names in os.walk(package):
        for name in (n for n in names if n.endswith(".py")):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                text = f.read()
            text += "\ndef _extra(a, b):\n    pass\n    del a, b\n    return 2\n"
            ours = _rewrites(A.Transformer).visit(gast.parse(text))
            theirs = _rewrites(gast.NodeTransformer).visit(gast.parse(text))
            assert gast.dump(ours) == gast.dump(theirs), name
