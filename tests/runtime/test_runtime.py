"""The runtime helpers generated code calls, on their own: what they give for lists of
gradients."""

import pytest

from mindgrad import runtime


def test_a_list_gradient_keeps_one_entry_per_item():
    # a zero gradient pushed back after a pop stands for a zero per item left in the list
    assert runtime.push_grad(0, 3.0, [1.0, 2.0]) == [0, 0, 3.0]
    # sequences of gradients of different lengths are never added by dropping entries
    with pytest.raises(ValueError, match="1 and 2 items"):
        runtime.add([1.0], [1.0, 2.0])
