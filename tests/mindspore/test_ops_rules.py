"""The rules of MindSpore's primitives (mindgrad/mindspore/ops.py), in both directions: MatMul
with each transpose flag, Mul, Add, Sub on shapes that broadcast, ReduceSum and ReduceMean over
every axis form, and the helpers their gradients call. The checks: tests/support/rule_check.py.
"""

import pytest

from mindgrad import ops
from tests.support.inputs import Draw
from tests.support.rule_check import (
    ADJOINT,
    INLINED,
    TANGENT,
    TANGENTS,
    Cases,
    call,
    check_adjoint,
    check_tangent,
    check_tangent_inlined,
    untested_rules,
)

draw = Draw(20240615)
r = draw.r
CASES = Cases()

for ta in (False, True):
    for tb in (False, True):
        sa, sb = ((3, 2) if ta else (2, 3)), ((4, 3) if tb else (3, 4))
        CASES.add(call, ops.MatMul(ta, tb), r(*sa), r(*sb), key=ops.MatMul,
                  label=f"MatMul({ta},{tb})")
for klass in (ops.Mul, ops.Add, ops.Sub):
    for sx, sy in [((2, 3), (2, 3)), ((3, 1), (4,)), ((), (2, 2))]:
        CASES.add(call, klass(), r(*sx), r(*sy), key=klass, label=klass.__name__)
for klass in (ops.ReduceSum, ops.ReduceMean):
    for keep in (False, True):
        for axis in ((), 1, (0, -1)):
            CASES.add(call, klass(keep), r(2, 3, 4), axis, key=klass,
                      label=f"{klass.__name__}(keep_dims={keep})")

# ----- the helpers the gradients call (what grad of grad differentiates): forward over reverse
# only, they have no adjoint rules

CASES.helper(ops.matmul_op_grads, r(2, 4), ops.MatMul(), r(2, 3), r(3, 4), only=TANGENTS)
CASES.helper(ops.matmul_op_grads, r(2, 4), ops.MatMul(True, True), r(3, 2), r(4, 3),
             only=TANGENTS)
CASES.helper(ops.reduce_op_grad, r(2), ops.ReduceSum(), r(2, 3), 1, only=TANGENTS)
CASES.helper(ops.reduce_op_grad, r(2, 1), ops.ReduceMean(True), r(2, 3), -1, True,
             only=TANGENTS)


@pytest.mark.parametrize("c", CASES.checked(ADJOINT), ids=str)
def test_adjoint_matches_central_differences(c):
    check_adjoint(c)


@pytest.mark.parametrize("c", CASES.checked(TANGENT), ids=str)
def test_tangent_matches_central_differences(c):
    check_tangent(c)


@pytest.mark.parametrize("c", CASES.checked(INLINED), ids=str)
def test_tangent_per_input_as_inlined(c):
    check_tangent_inlined(c)


@pytest.mark.parametrize("check", [ADJOINT, TANGENT])
def test_every_rule_of_a_primitive_has_a_case(check):
    untested = untested_rules(check, CASES, lambda module: module == ops.MatMul.__module__)
    assert not untested, f"{check} rules without a numerical check: {untested}"
