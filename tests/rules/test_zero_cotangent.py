"""Every adjoint rule the transformer runs unguarded takes the symbolic zero.

The gradient of a value unused on the path taken is the symbolic zero at run time
(``runtime.Zero``: the untyped ``zero`` generated code starts at, or a zero of the output's
shape and dtype). A rule whose template the analysis finds safe (``Rule.reads_zero_unsafely``
false) runs on it without the ``if not is_zero(d_v, v):`` guard in generated code, in the
user's code and in mindgrad's own (grad of grad); this checks that claim on every case of every
table of tests/rules/ (``test_every_rule.all_cases``): given such a zero as its output's
gradient, the rule gives each argument a zero gradient (a zero, or an array of zeros of the
argument's shape and a float type), never an error or another shape.
Oracle: the gradient of a zero cotangent is zero, as the rule is linear in it.
"""

import copy

import numpy as np
import pytest

from mindgrad import rules
from mindgrad.rules import jvp_of, vjp_of
from mindgrad.runtime import Zero, is_zero, trees, zero
from tests.rules.test_every_rule import all_cases
from tests.support.rule_check import ADJOINT, TANGENT


def unguarded(case):
    rule = rules.lookup(case.rule_key)
    return rule is not None and not rule.reads_zero_unsafely


# a rule guarded in generated code never meets the symbolic zero
CASES = [c for c in all_cases() if ADJOINT in c.checks and c.skip is None and unguarded(c)]


def zeros_standing_for(out):
    """The forms the symbolic zero takes as ``out``'s gradient: the untyped zero, and the zero
    of ``out``'s type (of each leaf's, for a tuple or list of arrays)."""
    forms = [zero]
    if isinstance(out, (np.ndarray, np.generic)):
        forms.append(Zero.like(out))
    elif isinstance(out, (tuple, list)) and all(isinstance(o, np.ndarray) for o in out):
        forms.append(trees.rebuild(out, [Zero.like(o) for o in out]))
    return forms


def assert_zero_gradient(gr, arg, where):
    if gr.__class__ is Zero or gr is None:
        if gr is not None and gr.typed and isinstance(arg, np.ndarray):
            assert gr.shape == arg.shape, \
                f"{where}: a zero of shape {gr.shape} for an argument of shape {arg.shape}"
        return
    for leaf, like in zip(trees.leaves(gr), trees.leaves(arg)) if \
            isinstance(gr, (list, tuple, dict)) else [(gr, arg)]:
        if leaf.__class__ is Zero or is_zero(leaf):
            continue
        assert np.shape(leaf) == np.shape(like), \
            f"{where}: a gradient of shape {np.shape(leaf)} for an argument of shape " \
            f"{np.shape(like)}"
        assert not np.any(leaf), f"{where}: {leaf!r} from a zero cotangent"


@pytest.mark.filterwarnings("ignore:`row_stack` alias is deprecated:DeprecationWarning")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_a_rule_run_unguarded_takes_the_symbolic_zero(case):
    args = copy.deepcopy(case.args)
    key = {} if case.key is None else {"_key": case.key}
    with np.errstate(all="ignore"):
        out, vjp = vjp_of(case.fn, *args, **case.kwargs, **key)
        for g in zeros_standing_for(out):
            grads = vjp(g)
            for i, (gr, arg) in enumerate(zip(grads, args)):
                assert_zero_gradient(gr, arg, f"argument {i}, output gradient {g!r}")


# ----- helpers that keep values: a number 0 is a value, and gives one ---------------------------
# A gradient helper marked to keep values (``takes_zero``, ``linear_in(keeps_values=True)``)
# lets the optimizer drop the guards of the rules after it. Given a gradient that is a number 0
# (a value: the gradient of a 0-d result, or of one scaled by 0), it must return zeros of its
# argument's shape, not the symbolic 0 those rules cannot take.


def _helper_calls():
    from mindgrad.rules import numpy_elementwise as el
    from mindgrad.rules import numpy_reductions as red
    from mindgrad.rules import numpy_shape as shp
    from mindgrad.rules import numpy_statistics as st
    from mindgrad.rules import operators as ops

    m, v, cube = np.arange(1.0, 7.0).reshape(2, 3), np.array([0.5, -1.0, 2.0]), \
        np.arange(24.0).reshape(2, 3, 4)
    m32 = m.astype(np.float32)
    return [
        (red.reduce_sum_grad, (m, 1), m), (red.reduce_sum_grad, (m32,), m32),
        (red.reduce_mean_grad, (cube, (0, 2)), cube), (red.prod_grad, (m, 0), m),
        (red.extremum_grad, (m, np.max(m, 1), 1), m), (red.cumsum_grad, (v,), v),
        (red.cumprod_grad, (m, np.cumprod(m, 0), 0), m), (st.var_grad, (m, 1), m),
        (st.std_grad, (m32, np.std(m32)), m32), (shp.diagonal_grad, (m,), m),
        (shp.diag_grad, (v,), v), (shp.trace_grad, (cube, 0, 1, 2), cube),
        (shp.take_grad, (m, [0, 2], 1), m), (shp.take_along_axis_grad,
                                             (m, np.array([[0], [2]]), 1), m),
        (shp.reshape_grad, (cube,), cube), (ops.matmul_grad_x, (m, v), m),
        (ops.matmul_grad_y, (m, v), v), (ops.matmul_grad_x, (v, v), v),
        (el.maximum_grad, (m, v), m), (el.maximum_grad, (m32, np.float32(2.0)), m32),
    ]


@pytest.mark.parametrize("helper, args, like", _helper_calls(),
                         ids=lambda a: getattr(a, "__name__", None) or "")
def test_a_helper_keeping_values_gives_zeros_for_a_number_0(helper, args, like):
    assert helper.keeps_values and helper.takes_any_zero
    for g in (0.0, np.float64(0), np.float32(0), 0j):
        grad = helper(g, *args)
        assert isinstance(grad, np.ndarray) and grad.shape == like.shape and not np.any(grad), \
            f"{helper.__name__}({g!r}, ...) gives {grad!r}"
    out = helper(0, *args)  # the symbolic 0 gives the symbolic 0, or zeros
    assert is_zero(out) or np.shape(out) == like.shape and not np.any(out)


# ----- tangent rules: the zero tangent in, the zero tangent out --------------------------------
# Over mindgrad's own code (forward mode over gradient code) a tangent is often the symbolic
# zero at run time; a tangent rule the analysis finds safe runs on it unguarded there.


def _inexact(a):
    return isinstance(a, (float, complex, np.floating, np.complexfloating)) or \
        isinstance(a, np.ndarray) and a.dtype.kind in "fc"


def tangent_unguarded(case):
    rule = rules.lookup_tangent(case.rule_key)
    return rule is not None and not rule.reads_zero_unsafely


TANGENT_CASES = [c for c in all_cases() if TANGENT in c.checks and c.skip is None and
                 tangent_unguarded(c) and any(_inexact(a) for a in c.args)]


@pytest.mark.filterwarnings("ignore:`row_stack` alias is deprecated:DeprecationWarning")
@pytest.mark.parametrize("case", TANGENT_CASES, ids=lambda c: c.id)
def test_a_tangent_rule_run_unguarded_takes_the_symbolic_zero(case):
    key = {} if case.key is None else {"_key": case.key}
    with np.errstate(all="ignore"):
        args = copy.deepcopy(case.args)
        out, jvp = jvp_of(case.fn, *args, **case.kwargs, **key)
        for typed in (False, True):
            tangents = [(Zero.like(a) if typed else zero) if _inexact(a) else None
                        for a in args]
            got = jvp(*tangents)
            assert_zero_gradient(got, out, f"output tangent, {'typed' if typed else 'untyped'}"
                                 " zeros in")
