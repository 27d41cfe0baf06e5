"""A gradient asked of a complex output is refused at the user's ``return`` statement (its
file, line and text), not at the ``def`` line; where several returns could have given the
value, at the ``def``, since which one ran is not known."""

import inspect
import sys
import traceback

import numpy as np
import pytest

import mindgrad
from mindgrad import nn


def complex_product(x):
    y = np.sin(x) * 2.0
    return np.sum(y * (1 + 0.2j))


def complex_on_one_branch(x):
    if np.sum(x) > 0:
        return np.sum(x * 1j)
    return np.sum(x)


class ComplexCell(nn.Cell):
    def construct(self, x):
        z = x * 2.0
        return np.sum(z * (0.5 + 1j))


def _line(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _message(ask):
    with pytest.raises(TypeError, match="complex output") as info:
        ask()
    if sys.version_info >= (3, 11):  # the place is in a note
        return "\n".join([str(info.value)] + list(getattr(info.value, "__notes__", [])))
    # Python 3.10 has no notes: the place is a frame of the traceback
    return "\n".join([str(info.value)] + [f"{f.filename}:{f.lineno} {f.line}"
                                           for f in traceback.extract_tb(info.tb)])


X = np.array([0.3, -0.7, 1.1])


@pytest.mark.parametrize("ask, fn", [
    (lambda: mindgrad.grad(complex_product)(X), complex_product),
    (lambda: mindgrad.value_and_grad(complex_product)(X), complex_product),
    (lambda: mindgrad.jacrev(complex_product)(X), complex_product),
    (lambda: mindgrad.grad(ComplexCell())(X), ComplexCell.construct),
], ids=["grad", "value_and_grad", "jacrev", "cell"])
def test_refused_at_the_return_line_with_its_text(ask, fn):
    message = _message(ask)
    line = _line(fn, "return")
    assert f"{__file__}:{line}" in message, message
    assert inspect.getsourcelines(fn)[0][line - inspect.getsourcelines(fn)[1]].strip() \
        in message
    assert f"{__file__}:{fn.__code__.co_firstlineno}" not in message


def test_with_several_returns_refused_at_the_def():
    message = _message(lambda: mindgrad.grad(complex_on_one_branch)(X))
    assert f"{__file__}:{complex_on_one_branch.__code__.co_firstlineno}" in message, message
    assert mindgrad.grad(complex_on_one_branch)(-X) == pytest.approx(np.ones(3))
