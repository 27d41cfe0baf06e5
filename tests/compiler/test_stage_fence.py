"""Stage fence: what cannot be differentiated is refused at the user's line; the rest passes
unchanged."""

import functools
import os

import pytest

from mindgrad.compiler.finish import emit
from mindgrad.compiler.front import fence, source
from mindgrad.errors import UnsupportedSyntaxError
from tests.support.source_lines import marked_line

HERE = os.path.realpath(__file__)


def _line(marker):
    return marked_line(__file__, marker)


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
