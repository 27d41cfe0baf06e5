"""The origin classifier (``mindgrad.runtime.origin``): where a function, class or module comes
from, which decides what the compiler follows, which methods the rules describe and which
helpers generated code calls."""

import math
import operator

import numpy as np
import pytest

import mindgrad
from mindgrad import runtime
from mindgrad.rules import helpers
from mindgrad.runtime import origin as homes
from mindgrad.runtime.origin import Origin, origin, within


def users_function(x):
    return x


@pytest.mark.parametrize("obj, expected", [
    (np.sin, Origin.NUMPY),  # a ufunc: no __module__ on NumPy 1.x
    (np.add.reduce, Origin.NUMPY),
    (np.sum, Origin.NUMPY),
    (np.linalg.solve, Origin.NUMPY),
    (np.ndarray, Origin.NUMPY),
    (np.float32, Origin.NUMPY),
    (np, Origin.NUMPY),
    (math.sin, Origin.MATH),
    (len, Origin.BUILTINS),
    (list, Origin.BUILTINS),
    (operator.add, Origin.OPERATOR),  # its __module__ is _operator
    (operator.itemgetter, Origin.OPERATOR),
    (runtime.unbroadcast, Origin.RUNTIME),
    (helpers.swap_last_axes, Origin.RULES),
    (mindgrad.grad, Origin.MINDGRAD),
    (users_function, Origin.OTHER),
    (object(), Origin.OTHER),  # no __module__ of its own: its class's is not asked
])
def test_origin_of_functions_classes_and_modules(obj, expected):
    assert origin(obj) is expected


def test_scipy_ufuncs_are_scipys():
    special = pytest.importorskip("scipy.special")
    assert origin(special.gamma) is Origin.SCIPY
    assert origin(special.gammaln) is Origin.SCIPY


def test_a_module_is_matched_at_a_dot_boundary():
    """``numpy_extras`` is not NumPy, ``mindgrad_tools`` not mindgrad: a prefix of the name is
    not its home."""

    class Bag:
        __module__ = "numpy_extras"

        def sum(self):
            return 0.0

    class Tool:
        __module__ = "mindgrad_tools.core"

    assert origin(Bag) is Origin.OTHER
    assert origin(Tool) is Origin.OTHER
    # a method of a class of the user's library is the user's: the rules of .sum() do not
    # apply to it
    assert runtime.user_method(Bag(), "sum")
    assert not runtime.user_method(np.ones(2), "sum")
    assert not runtime.user_method([1.0], "index")


def test_within_names_submodules():
    assert within(np.fft.rfft, "numpy.fft")
    assert not within(np.sum, "numpy.fft")
    assert within(np.linalg.solve, "numpy")


def test_register_home_declares_a_module_and_what_it_holds():
    class Helper:
        __module__ = "somelib.kernels.fast"

    assert origin(Helper) is Origin.OTHER
    homes.register_home("somelib.kernels", Origin.NUMPY)
    try:
        assert origin(Helper) is Origin.NUMPY
        assert homes.home_of("somelib") is Origin.OTHER
    finally:
        del homes._HOMES["somelib.kernels"]
    assert origin(Helper) is Origin.OTHER
    with pytest.raises(TypeError, match="must be an Origin"):
        homes.register_home("somelib", "numpy")


def test_a_users_numpy_named_library_is_not_shown_as_numpy():
    from mindgrad.compiler.transform.messages import describe

    def kernel(x):
        return x

    kernel.__module__, kernel.__qualname__ = "numpy_extras", "kernel"
    assert describe(kernel) == "numpy_extras.kernel"
    assert describe(np.linalg.solve) == "np.linalg.solve"
