"""Stage normalize: one operation per statement, the user's line numbers kept."""

import os

import gast
import numpy as np
import pytest

from mindgrad.compiler import astutil as A
from mindgrad.compiler.finish import emit
from mindgrad.compiler.front import fence, normalize, source
from mindgrad.compiler.naming import NameGen
from tests.support.source_lines import dedented as _text

HERE = os.path.realpath(__file__)


# ----- stage 3: normalize ------------------------------------------------------------------------


def _normalized(fn):
    src = source.get_source(fn)
    fence.check(src)
    names = NameGen(A.names_in(src.tree) | set(src.closure) | {src.name})
    return normalize.normalize(src, src.tree, names)[0]


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


def _augmented(x, v):
    y = x * 2.0
    y += v
    y = y * v
    return y


def test_an_in_place_operator_is_marked_on_its_assignment_and_the_mark_survives_a_copy():
    """``y += v`` becomes ``add = y + v; y = add``, the rebinding marked in place (marks.py),
    which the aliasing facts read as a write into ``y``'s memory; ``astutil.clone`` keeps the
    mark, and only that assignment carries it."""
    from mindgrad.compiler import marks

    fdef = _normalized(_augmented)
    assigns = [s for s in fdef.body if isinstance(s, gast.Assign)]
    marked = [emit.unparse([s]).strip() for s in assigns if marks.is_in_place(s)]
    assert marked == ["y = add"]
    assert "add = y + v" in _normalize_text(_augmented)
    copies = A.clone(assigns)
    assert [marks.is_in_place(s) for s in copies] == [marks.is_in_place(s) for s in assigns]
    assert marks.comment_text(marks.comment("grad of: y += v")) == "grad of: y += v"


# ----- stages return their results: the Source they are given stays as it was ------------------


def _scope_facts(src):
    return {name: type(getattr(src, name))(getattr(src, name)) for name in source.Source._FACTS}


def _with_star_args(x, *args, **kw):
    return x * args[0] + kw["scale"] * np.sum(args)


def test_specialise_returns_a_new_source_and_leaves_the_one_given_unchanged():
    from mindgrad.compiler.front import specialise

    src = source.get_source(_with_star_args)
    before_tree, before_facts = emit.unparse(src.tree), _scope_facts(src)
    out = specialise.specialise(src, (2, ("scale",)))
    assert out is not src
    assert emit.unparse(src.tree) == before_tree and _scope_facts(src) == before_facts
    assert src.tree.args.vararg is not None and src.tree.args.kwarg is not None
    assert [a.id for a in out.tree.args.args] == ["x", "args_0", "args_1"]
    assert [a.id for a in out.tree.args.kwonlyargs] == ["scale"]
    assert out.tree.args.vararg is None and out.tree.args.kwarg is None
    assert out.packed == {"args": ["args_0", "args_1"], "kw": {"scale": "scale"}}
    assert out.defaults is None


class _Layer:
    def __call__(self, x):
        return np.tanh(x)


_LAYERS = [_Layer(), _Layer()]


def _unrolled_with_alias(x):
    act = np.sin
    for layer in _LAYERS:
        x = layer(act(x))
    return x


def test_normalize_returns_what_it_found_and_leaves_the_source_given_unchanged():
    src = source.get_source(_unrolled_with_alias)
    fence.check(src)
    before = _scope_facts(src)
    names = NameGen(A.names_in(src.tree) | set(src.closure) | {src.name})
    fdef, found = normalize.normalize(src, src.tree, names)
    assert _scope_facts(src) == before  # nothing written into the stage's input
    assert found is not src and found.tree is src.tree and found.fn is src.fn
    assert [items for _, items in found.unrolled] == [_LAYERS]
    assert emit.unparse(found.unrolled[0][0]).strip() == "_LAYERS"
    assert sorted(found.aliases) != [] and all(n not in src.aliases for n in found.aliases)
    assert "layer" in emit.unparse(fdef)
