"""Stage source: a function's text read, as the user wrote it."""

import ast
import functools
import inspect
import os
import textwrap

import gast
import numpy as np
import pytest

from mindgrad.compiler.finish import emit
from mindgrad.compiler.front import source
from mindgrad.errors import NoSourceError
from tests.support.source_lines import marked_line

HERE = os.path.realpath(__file__)


def _line(marker):
    return marked_line(__file__, marker)


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


# ----- deep expressions split into statements ----------------------------------------------------


def _long_sum(tmp_path, n):
    path = tmp_path / f"long_sum_{n}.py"
    path.write_text("import numpy as np\n\n\ndef long_sum(x):\n"
                    f"    return np.sum(np.sin({' + '.join(['x'] * n)}))\n")
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102 (our text)
    return namespace["long_sum"]


def test_splitting_a_long_chain_visits_each_level_a_bounded_number_of_times(tmp_path, monkeypatch):
    """A sum of n terms nests n levels deep; the split moves a part out every 16 levels. Each
    level's height is computed a bounded number of times, not once per part moved above it
    (which made a sum of 1,000 terms take seconds to parse): twice the terms, about twice the
    visits. The parts still add the terms in Python's order."""
    from mindgrad.compiler.front import depth

    visits = []
    children = depth._children

    def counted(node):
        visits.append(1)
        return children(node)

    monkeypatch.setattr(depth, "_children", counted)
    counts = {}
    for n in (500, 1000):
        visits.clear()
        src = source.get_source(_long_sum(tmp_path, n))
        counts[n] = len(visits)
        body = src.tree.body
        assert len(body) > n // depth._STEP // 2  # split into parts
        assert all(depth._height(s) <= depth.MAX_HEIGHT for s in body)
        x = np.array([0.5, -2.0])
        namespace = {"np": np, "x": x}
        for s in body[:-1]:
            exec(compile(emit.unparse([s]), "<part>", "exec"), namespace)  # noqa: S102
        returned = eval(compile(emit.unparse([body[-1].value]), "<ret>", "eval"), namespace)
        assert returned == np.sum(np.sin(n * x))
    assert counts[1000] < 2.5 * counts[500], counts


def _shallow(x, y):
    z = np.sin(x) * y + np.cos(y) / (1.0 + x * x)
    return np.sum(z * z)


def test_a_shallow_function_is_measured_once_when_parsed(monkeypatch):
    """Parsing measures the height of the text's expressions (room on the stack for the
    converter); ``split`` does not walk the tree again where that height is within
    ``MAX_HEIGHT``: one walk, which meets each node at most twice (down and up), not two."""
    from mindgrad.compiler.front import depth

    visits = []
    children = depth._children

    def counted(node):
        visits.append(node)
        return children(node)

    monkeypatch.setattr(depth, "_children", counted)
    source.forget_parsed()
    src = source.get_source(_shallow)
    nodes = sum(1 for _ in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(_shallow)))))
    assert 0 < len(visits) <= 2 * nodes, (len(visits), nodes)
    assert emit.unparse(src.tree).count("np.sin(x)") == 1  # nothing moved out


def test_generated_code_read_again_is_not_compiled_again_to_check_it(monkeypatch):
    """Grad of grad reads mindgrad's generated code, compiled from the very text it registered:
    the check that a file's text compiles to the function's code (an edited file) is for
    the user's files; the user's function is still checked."""
    import mindgrad

    checked = []
    check = source.check_matches

    def counted(fn, *args):
        checked.append(fn.__code__.co_filename)
        return check(fn, *args)

    monkeypatch.setattr(source, "check_matches", counted)
    mindgrad.clear_cache()
    hessian_diagonal = mindgrad.grad(lambda x: np.sum(mindgrad.grad(_cubic)(x)))
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(hessian_diagonal(x), 6 * x)
    assert checked and all(not f.startswith("<mindgrad ") for f in checked), checked
    assert any(f == os.path.realpath(__file__) or f == __file__ for f in checked), checked


# ----- each function read and parsed once -------------------------------------------------------


def _cubic(x):
    y = x * x
    return np.sum(y * x)


def _square(x):
    return np.sum(x * x)


def test_a_function_is_read_once_however_many_derivatives_are_built(monkeypatch):
    """Each order and mode of a function's derivatives, and each set of inputs, reads its
    source: the text is read and parsed once, and each Source gets its own tree, which the
    stages change. A function whose code is replaced is read again."""
    import mindgrad

    reads = []
    read = source._read

    def counted(fn):
        reads.append(fn.__code__.co_name)
        return read(fn)

    monkeypatch.setattr(source, "_read", counted)
    fn = functools.wraps(_cubic)(lambda x: _cubic(x))  # a function object of the test's own
    fn.__code__ = _cubic.__code__
    x, v = np.array([0.5, -1.5]), np.array([1.0, 2.0])
    np.testing.assert_allclose(mindgrad.grad(fn)(x), 3 * x ** 2)
    np.testing.assert_allclose(mindgrad.jvp(mindgrad.grad(fn), (x,), (v,))[1], 6 * x * v)
    np.testing.assert_allclose(mindgrad.grad(lambda x: np.sum(mindgrad.grad(fn)(x)))(x), 6 * x)
    assert reads.count("_cubic") == 1, reads
    first, second = source.get_source(fn), source.get_source(fn)
    assert first.tree is not second.tree and first.constants is not second.constants
    first.tree.body.clear()
    assert len(source.get_source(fn).tree.body) == 2
    fn.__code__ = _square.__code__
    np.testing.assert_allclose(mindgrad.grad(fn)(2 * x), 4 * x)  # a new signature: built
    np.testing.assert_allclose(mindgrad.grad(fn)(3 * x[:1]), 6 * x[:1])
    assert reads.count("_cubic") == 1 and reads.count("_square") == 1, reads
    mindgrad.clear_cache()  # forgets the text read too
    np.testing.assert_allclose(mindgrad.grad(fn)(x), 2 * x)
    assert reads.count("_square") == 2, reads
