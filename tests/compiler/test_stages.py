"""Each stage of the pipeline, source in, source out, through the modules in mindgrad.compiler."""

import ast
import functools
import inspect
import linecache
import os
import textwrap
import traceback

import gast
import numpy as np
import pytest

import mindgrad
from mindgrad.compiler import astutil as A
from mindgrad.compiler import driver, emit, fence, normalize, optimize, source
from mindgrad.compiler.naming import NameGen
from mindgrad.errors import NoSourceError, UnsupportedSyntaxError

HERE = os.path.realpath(__file__)


def _line(marker):
    """The line number of the one line of this file ending with ``# @marker``."""
    with open(__file__) as fh:
        hits = [i for i, text in enumerate(fh, 1) if text.rstrip().endswith(f"# @{marker}")]
    assert len(hits) == 1, marker
    return hits[0]


def _text(expected):
    return textwrap.dedent(expected).strip()


# ----- stage 1: source ---------------------------------------------------------------------------


REGISTERED = []


def _register(fn):
    REGISTERED.append(fn)
    return fn


@_register
@functools.cache
def decorated(x):  # @decorated
    return x * 2.0  # @decorated_body


class Holder:
    scale = 3.0

    def method(self, x):  # @method
        return x * self.scale

    @staticmethod
    def static(x):
        return x + 1.0


first_value = 1; square = lambda x: x * x; last_value = 2  # @lambda_line
pair = (lambda x: x + 1.0, lambda a, b: a * b)  # @two_lambdas
twins = (lambda x: x + 1.0, lambda x: x * 2.0)


def test_source_of_a_decorated_function_drops_the_decorators():
    src = source.get_source(decorated)
    assert src.tree.decorator_list == []
    assert src.name == "decorated"
    assert emit.unparse(src.tree) == "def decorated(x):\n    return x * 2.0\n"
    assert src.first_line == _line("decorated")
    assert os.path.realpath(src.filename) == HERE
    body_line = src.line_of(src.tree.body[0])
    assert body_line == _line("decorated_body")
    assert src.text_of(body_line).strip().startswith("return x * 2.0")


@pytest.mark.parametrize("fn", [Holder.method, Holder().method], ids=["function", "bound"])
def test_source_of_a_method_is_dedented(fn):
    src = source.get_source(fn)
    assert emit.unparse(src.tree) == "def method(self, x):\n    return x * self.scale\n"
    assert src.first_line == _line("method")
    assert src.line_of(src.tree.body[0]) == _line("method") + 1


def test_source_of_a_staticmethod():
    src = source.get_source(Holder.static)
    assert emit.unparse(src.tree) == "def static(x):\n    return x + 1.0\n"


def test_source_of_a_lambda_on_a_line_with_other_code():
    src = source.get_source(square)
    assert isinstance(src.tree, gast.FunctionDef)
    assert emit.unparse(src.tree) == "def lambda_(x):\n    return x * x\n"
    assert src.line_of(src.tree.body[0]) == _line("lambda_line")


def test_source_of_one_of_two_lambdas_told_apart_by_parameters():
    assert emit.unparse(source.get_source(pair[1]).tree) == "def lambda_(a, b):\n    return a * b\n"
    assert emit.unparse(source.get_source(pair[0]).tree) == "def lambda_(x):\n    return x + 1.0\n"


def test_source_of_lambdas_of_the_same_parameters_told_apart():
    # by the columns their code records (3.11+), else by the code each compiles to
    texts = [emit.unparse(source.get_source(f).tree) for f in twins]
    assert texts[0] != texts[1]
    for f, text in zip(twins, texts):
        assert text.startswith("def lambda_(")
        namespace = {"np": np}
        exec(text, namespace)  # the text read computes what the lambda computes
        assert namespace["lambda_"](1.5) == f(1.5)


def test_source_of_a_builtin_raises():
    with pytest.raises(NoSourceError):
        source.get_source(np.sin)
    with pytest.raises(NoSourceError):
        source.get_source(len)


def test_source_of_a_prompt_lambda_raises():
    ns = {}
    exec(compile("f = lambda x: x * 2", "<stdin>", "exec"), ns)  # noqa: S102
    with pytest.raises(NoSourceError, match="source"):
        source.get_source(ns["f"])


def _make_closure():
    k = 5.0

    def inner(x):
        return x * k
    return inner


def test_resolve_closure_global_builtin_and_default():
    src = source.get_source(_make_closure())
    assert src.resolve("k") == 5.0
    assert src.resolve("np") is np
    assert src.resolve("len") is len
    assert src.resolve("no_such_name_anywhere", 42) == 42


# ----- stage 2: fence -----------------------------------------------------------------------------


def fine(x, y):
    z = x * y
    for i in range(3):
        z = z + x[i]
    return z


def fenced_starred(x):
    a, *_rest = x  # @starred
    return a


def fenced_nested_target(x):
    x[0][1] = 2.0  # @nested_target
    return x


def fenced_set(x):
    s = {1, 2}  # @set
    return x * len(s)


def fenced_inner_decorator(x):
    @functools.lru_cache  # @inner_decorator
    def inner(a):
        return a
    return inner(x)


def test_fence_passes_supported_code_unchanged():
    src = source.get_source(fine)
    before = emit.unparse(src.tree)
    assert fence.check(src) is src.tree
    assert emit.unparse(src.tree) == before


@pytest.mark.parametrize("fn, marker, words", [
    (fenced_starred, "starred", "(?i)starred"),
    (fenced_nested_target, "nested_target", "index assignment"),
    (fenced_set, "set", "set"),
    (fenced_inner_decorator, "inner_decorator", "decorators"),
])
def test_fence_rejects_with_line(fn, marker, words):
    src = source.get_source(fn)
    with pytest.raises(UnsupportedSyntaxError, match=words) as info:
        fence.check(src)
    assert info.value.lineno in (_line(marker), _line(marker) + 1)
    assert os.path.realpath(info.value.filename) == HERE


# ----- stage 3: normalize ------------------------------------------------------------------------


def _normalized(fn):
    src = source.get_source(fn)
    fence.check(src)
    names = NameGen(A.names_in(src.tree) | set(src.closure) | {src.name})
    return normalize.normalize(src, src.tree, names)


def _normalize_text(fn):
    return emit.unparse(_normalized(fn)).strip()


def one_op(x, y, z):
    return x * y + np.sin(z) / 2.0


def augassign(x, y):
    x += y
    x *= 2.0
    return x


def tuple_unpack(x, y):
    a, (b, c) = x, (y, x)
    return a * b * c


def chained(a, b, c):
    return a < b < c


def conditional(x, y, c):
    return x if c else y


def enumerated(xs):
    s = 0.0
    for i, v in enumerate(xs):
        s = s + i * v
    return s


def with_break(xs):
    s = 0.0
    for v in xs:
        if v > 3.0:
            break
        s = s + v
    return s


def with_continue(xs):
    s = 0.0
    for v in xs:
        if v > 3.0:
            continue
        s = s + v
    return s


def early_return(x):
    if x > 0.0:
        return x * 2.0
    return x


def comprehension(xs):
    return [v * v for v in xs]


def local_lambda(x):
    sq = lambda a: a * a
    return sq(x) + 1.0


NORMALIZED = {
    one_op: """
        def one_op(x, y, z):
            mul = x * y
            sin = np.sin(z)
            div = sin / 2.0
            add = mul + div
            return add
    """,
    augassign: """
        def augassign(x, y):
            add = x + y
            x = add
            mul = x * 2.0
            x = mul
            return x
    """,
    tuple_unpack: """
        def tuple_unpack(x, y):
            t = (y, x)
            a = x
            b = t[0]
            c = t[1]
            mul = a * b
            mul2 = mul * c
            return mul2
    """,
    chained: """
        def chained(a, b, c):
            cond = a < b
            test = cond
            if test:
                cond = b < c
            return cond
    """,
    conditional: """
        def conditional(x, y, c):
            if c:
                result = x
            else:
                result = y
            return result
    """,
    enumerated: """
        def enumerated(xs):
            s = 0.0
            xs_seq = as_sequence(xs)
            len_ = len(xs_seq)
            for k in range(len_):
                i = k
                v = xs_seq[k]
                mul = i * v
                add = s + mul
                s = add
            return s
    """,
    with_break: """
        def with_break(xs):
            s = 0.0
            stop = False
            for v in xs:
                go = True
                cond = v > 3.0
                if cond:
                    go = False
                    stop = True
                if go:
                    add = s + v
                    s = add
                if stop:
                    break
            return s
    """,
    with_continue: """
        def with_continue(xs):
            s = 0.0
            for v in xs:
                go = True
                cond = v > 3.0
                if cond:
                    go = False
                if go:
                    add = s + v
                    s = add
            return s
    """,
    early_return: """
        def early_return(x):
            running = True
            result = None
            cond = x > 0.0
            if cond:
                result = x * 2.0
                running = False
            cond2 = running
            if cond2:
                result = x
                running = False
            return result
    """,
    comprehension: """
        def comprehension(xs):
            result = []
            for v2 in xs:
                mul = v2 * v2
                result.append(mul)
            return result
    """,
    local_lambda: """
        def local_lambda(x):
            sq_a = x
            mul = sq_a * sq_a
            add = mul + 1.0
            return add
    """,
}


@pytest.mark.parametrize("fn", list(NORMALIZED), ids=[f.__name__ for f in NORMALIZED])
def test_normalize_text(fn):
    assert _normalize_text(fn) == _text(NORMALIZED[fn])


_ATOMS = (gast.Name, gast.Constant)


def _operands(value):
    if isinstance(value, gast.BinOp):
        return [value.left, value.right]
    if isinstance(value, gast.UnaryOp):
        return [value.operand]
    if isinstance(value, gast.Compare):
        return [value.left] + list(value.comparators)
    if isinstance(value, gast.Call):
        return list(value.args) + [k.value for k in value.keywords]
    if isinstance(value, (gast.Tuple, gast.List)):
        return list(value.elts)
    if isinstance(value, gast.Subscript):
        return [value.value]
    return []


def _is_module_attribute(node):
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, gast.Name)


@pytest.mark.parametrize("fn", list(NORMALIZED), ids=[f.__name__ for f in NORMALIZED])
def test_normalize_guarantees(fn):
    """One operation per assignment, on atoms; the target is not an operand; one final return."""
    fdef = _normalized(fn)
    returns = [n for n in gast.walk(fdef) if isinstance(n, gast.Return)]
    assert len(returns) == 1 and fdef.body[-1] is returns[0]
    assert isinstance(returns[0].value, _ATOMS)
    for node in gast.walk(fdef):
        assert not isinstance(node, (gast.AugAssign, gast.Continue, gast.IfExp, gast.ListComp,
                                     gast.Lambda, gast.BoolOp))
        if isinstance(node, gast.Assign):
            assert len(node.targets) == 1
            target = node.targets[0]
            assert isinstance(target, (gast.Name, gast.Subscript))
            for operand in _operands(node.value):
                assert isinstance(operand, _ATOMS) or _is_module_attribute(operand), \
                    emit.unparse([node])
                if isinstance(target, gast.Name) and isinstance(operand, gast.Name):
                    assert operand.id != target.id, emit.unparse([node])
        if isinstance(node, (gast.If, gast.While)):
            assert isinstance(node.test, _ATOMS)
        if isinstance(node, gast.For):
            assert isinstance(node.target, gast.Name)
        if isinstance(node, (gast.For, gast.While)):
            breaks = [i for i, s in enumerate(node.body) if isinstance(s, gast.Break)
                      or (isinstance(s, gast.If)
                          and any(isinstance(b, gast.Break) for b in s.body))]
            assert all(i == len(node.body) - 1 for i in breaks)


def test_normalize_keeps_the_users_line_numbers():
    src = source.get_source(with_break)
    fdef = _normalized(with_break)
    loop = next(n for n in fdef.body if isinstance(n, gast.For))
    assert src.text_of(src.line_of(loop)).strip() == "for v in xs:"
    test_line = src.line_of(loop.body[1])  # cond = v > 3.0
    assert src.text_of(test_line).strip() == "if v > 3.0:"


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


def test_unparse_built_nodes_with_negative_constants():
    assert _expr_text(A.binop(A.const(-2), gast.Pow(), A.const(2))) == "(-2) ** 2"
    assert _expr_text(A.binop(A.load("x"), gast.Sub(), A.const(-1.5))) == "x - -1.5"
    assert _expr_text(A.attr(A.const(-2.0), "real")) == "(-2.0).real"
    assert eval(_expr_text(A.binop(A.const(-2), gast.Pow(), A.const(2)))) == 4


def test_unparse_comment_marker():
    out = emit.unparse([emit.comment("grad of: y = x"), A.assign("y", A.load("x"))])
    assert out == "# grad of: y = x\ny = x\n"


def test_unparse_a_function_reparses():
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


# ----- stage 6: optimize -------------------------------------------------------------------------


def _optimize(text, adjoint, live, impure=(), owned=(), accumulators=()):
    stmts = gast.parse(textwrap.dedent(text)).body
    opt = optimize.Optimizer(adjoint, impure, owned, accumulators)
    return emit.unparse(opt.run(stmts, set(live))).strip()


def test_optimize_first_write_assigns():
    assert _optimize("""
        d_x = 0
        d_x = d_x + g
    """, {"d_x", "g"}, {"d_x"}) == "d_x = g"


def test_optimize_adding_a_zero_gradient_is_dropped():
    assert _optimize("""
        d_x = 0
        d_y = 0
        d_x = d_x + d_y * 3.0
        d_x = d_x + g
    """, {"d_x", "d_y", "g"}, {"d_x"}) == "d_x = g"


def test_optimize_removes_dead_pure_statements_and_keeps_tape_pops():
    assert _optimize("""
        d_t = g * 2.0
        t = tape.pop()
        d_u = d_t
    """, {"d_t", "g", "d_u"}, set()) == "t = tape.pop()"


def test_optimize_keeps_what_is_live():
    assert _optimize("""
        d_x = 0
        d_t = g * y
        t = tape.pop()
        d_x = d_x + d_t * t
    """, {"d_x", "g", "d_t"}, {"d_x"}) == _text("""
        d_t = g * y
        t = tape.pop()
        d_x = d_t * t
    """)


def test_optimize_copy_propagation():
    assert _optimize("""
        d_a = g
        d_x = d_a * 2.0
    """, {"d_a", "g", "d_x"}, {"d_x"}) == "d_x = g * 2.0"


def test_optimize_keeps_impure_calls():
    assert _optimize("""
        d_z = g * 0.5
        d_x = back(tape, d_z)
    """, {"d_x", "g", "d_z"}, set(), impure={"back"}) == _text("""
        d_z = g * 0.5
        d_x = back(tape, d_z)
    """)


def test_optimize_branch_keeps_zero_on_the_other_path():
    assert _optimize("""
        d_x = 0
        if c:
            d_x = d_x + g
        d_y = d_x * 2
    """, {"d_x", "g", "d_y"}, {"d_y"}) == _text("""
        d_x = 0
        if c:
            d_x = g
        d_y = d_x * 2
    """)


def test_optimize_loop_accumulation_is_kept():
    assert _optimize("""
        d_x = 0
        for i in range(n):
            d_x = d_x + g
    """, {"d_x", "g"}, {"d_x"}) == _text("""
        d_x = 0
        for i in range(n):
            d_x = d_x + g
    """)


# ----- the pipeline ------------------------------------------------------------------------------


def simple(x, y):
    z = x * y
    return np.sin(z)


def _pipeline_helper(a):
    return a * a


def with_callee(x, y):
    z = _pipeline_helper(x) * y
    return np.sin(z)


def _dumped(fn, positions=(0,)):
    lines = []
    generated = driver.run(fn, positions, dump=lines.append)
    headers = [line.splitlines()[0] for line in lines]
    stages = [(h.split()[2].rstrip(":"), h.split()[3]) for h in headers]
    return generated, lines, stages


def test_pipeline_dumps_its_stages_in_order():
    _, lines, stages = _dumped(simple)
    names = [s for s, _ in stages]
    order = [driver.STAGES.index(s) for s in names]
    assert order == sorted(order)
    assert len(set(names)) == len(names)
    assert all(line.startswith("# ---- ") for line in lines)


def test_pipeline_dumps_every_stage():
    _, _, stages = _dumped(simple)
    assert [s for s, _ in stages] == list(driver.STAGES)


def test_pipeline_dumps_callee_stages_in_order_per_function():
    _, _, stages = _dumped(with_callee)
    for name in ("with_callee", "_pipeline_helper"):
        mine = [s for s, fn in stages if fn == name]
        assert mine[:6] == ["source", "fence", "normalize", "activity", "reverse", "optimize"]
    assert [s for s, _ in stages[-2:]] == ["emit", "compile"]


def test_pipeline_dump_texts():
    generated, lines, _ = _dumped(simple)
    by_stage = {line.splitlines()[0].split()[2].rstrip(":"): line for line in lines}
    assert "def simple(x, y):" in by_stage["source"]
    assert "mul" not in by_stage["fence"]
    assert _text("""
        # ---- normalize: simple ----
        def simple(x, y):
            z = x * y
            sin = np.sin(z)
            return sin
    """) == by_stage["normalize"].strip()
    assert by_stage["activity"].strip().endswith("active: sin, x, z")
    assert "def grad_simple(x, y, *, sens):" in by_stage["reverse"]
    assert generated.text.strip() in by_stage["emit"]


def test_pipeline_generated_code_reads_well():
    generated = driver.run(simple, (0,))
    assert generated.text.strip() == _text("""
        def grad_simple(x, y, *, sens):
            z = x * y
            sin = np.sin(z)
            # backward sweep
            d_sin = seed(sin, sens)
            # grad of: return np.sin(z)
            d_z = d_sin * np.cos(z)
            # grad of: z = x * y
            d_x = unbroadcast(d_z * y, x)
            return (sin, (d_x,), ())
    """)


def test_generated_function_is_in_linecache():
    generated = driver.run(with_callee, (0,))
    fn = generated.function
    assert fn.__code__.co_filename.startswith("<mindgrad")
    assert all(f.startswith("<mindgrad") for f in generated.files)
    text = inspect.getsource(fn)
    assert "def grad_with_callee(" in text
    assert "_pipeline_helper_backward(" in text


def test_grad_function_source_matches_the_pipeline():
    g = mindgrad.grad(simple)
    x, y = np.ones(2), np.ones(2)
    assert g.source(x, y) == mindgrad.source(g, x, y)
    assert g.source(x, y).strip() == driver.run(simple, (0,)).text.strip()
    assert "# ---- normalize: simple ----" in g.stages(x, y)


def index_error(x):
    return x[5] * 2.0


def test_runtime_error_traceback_points_into_generated_code():
    with pytest.raises(IndexError) as info:
        mindgrad.grad(index_error)(np.ones(2))
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].filename.startswith("<mindgrad")
    assert "x[5]" in frames[-1].line  # the generated line is shown, from linecache


def pass_only_loop(x):
    for v in x:
        pass
    return x * 2.0


def test_loop_with_only_pass_compiles():
    np.testing.assert_allclose(mindgrad.grad(pass_only_loop)(np.ones(2)), [2, 2])
