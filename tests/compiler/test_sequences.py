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


def _grown_in_a_loop(x):
    lst = [x, np.tanh(x)]
    for i in range(2):
        lst = lst + [x * (i + 0.5)]
    return np.sum(lst[0] * lst[-1] + lst[1])


def _grown_then_summed(x, y):
    items = [x]
    for _ in range(2):
        items = items + [np.sin(items[-1]) * y]
    total = items[0] + items[1]
    return np.sum(total * items[2])


GROWN = [(_grown_in_a_loop, (np.array([0.3, -0.4]),)), (_grown_in_a_loop, (np.array(0.8),)),
         (_grown_then_summed, (np.array([0.3, -0.4, 1.1]), np.array(0.7)))]


@pytest.mark.parametrize("fn, args", GROWN, ids=["vector", "0d", "two_inputs"])
def test_a_list_grown_by_concatenation_in_a_loop_to_second_order(fn, args):
    """Grad of grad reads the lists of the gradient's code from its tape, where the code does
    not show them: its x + y joins or adds as the values say (add_or_concat_grads). It raised
    "the gradient of a sequence of 3 items has 4" (found by the tester's list_concat)."""
    mindgrad.check_grads(fn, args, modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("fn, args", GROWN, ids=["vector", "0d", "two_inputs"])
def test_a_list_grown_by_concatenation_in_a_loop_at_third_order(fn, args):
    mindgrad.check_grads(fn, args, modes=("rev", "fwd"), order=3)
