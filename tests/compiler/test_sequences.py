"""Lists and tuples repeated with ``*`` (regression: reverse mode gave each item only its first
copy's gradient): the gradient of ``xs * n`` sums the copies' gradients. Where the compiler cannot
tell that an operand is a sequence, a gradient of the wrong length is refused, never guessed."""

import numpy as np
import pytest

import mindgrad
from mindgrad.runtime import GradientError


def _weighted(a, b):
    xs = [a, b] * 2
    return xs[0] * 1.0 + xs[1] * 2.0 + xs[2] * 9.0 + xs[3] * 4.0


def _enumerated(a, b):
    xs = 3 * [a * b, np.sin(a)]
    total = 0.0
    for i, v in enumerate(xs):
        total = total + v * (i + 1.0)
    return total


def _param_list(xs):
    ys = xs * 2
    return ys[0] * 1.0 + ys[2] * 3.0 + ys[3] * 5.0


def _pair(a, b):
    return [a, b]


def _from_a_helper(a, b):
    xs = _pair(a, b) * 2
    return xs[0] * 1.0 + xs[3] * 4.0


def test_a_repeated_list_sums_its_copies_gradients():
    assert mindgrad.grad(_weighted, (0, 1))(1.0, 1.0) == (10.0, 6.0)  # 1 + 9, 2 + 4
    assert mindgrad.grad(_param_list)([1.0, 2.0]) == [4.0, 5.0]  # 1 + 3, 5
    value, grads = mindgrad.value_and_grad(_weighted, (0, 1))(0.5, 2.0)
    assert value == 0.5 * 10.0 + 2.0 * 6.0 and grads == (10.0, 6.0)


def test_a_repeated_list_in_both_modes_and_at_second_order():
    mindgrad.check_grads(_enumerated, (0.7, -1.2), modes=("rev", "fwd"), order=2)
    mindgrad.check_grads(_weighted, (0.7, -1.2), modes=("rev", "fwd"), order=2)


def test_a_list_the_compiler_cannot_see_is_refused_not_guessed():
    with pytest.raises(GradientError, match="sequence of 2 items has 8"):
        mindgrad.grad(_from_a_helper, (0, 1))(1.0, 1.0)
    # forward mode repeats the tangents as Python repeats the list: right as it is
    _, tangent = mindgrad.jvp(_from_a_helper, (1.0, 1.0), (1.0, 0.0))
    assert tangent == 1.0
    _, tangent = mindgrad.jvp(_from_a_helper, (1.0, 1.0), (0.0, 1.0))
    assert tangent == 4.0
