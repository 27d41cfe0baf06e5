"""Stage optimize: what the generated code does not need, removed."""

import os
import textwrap

import gast
import numpy as np

import mindgrad
from mindgrad.compiler import cache
from mindgrad.compiler.finish import emit, optimize
from tests.support.source_lines import dedented as _text

HERE = os.path.realpath(__file__)


# ----- stage 6: optimize -------------------------------------------------------------------------


def _optimize(text, adjoint, live, impure=(), owned=(), accumulators=(), merge=False):
    stmts = gast.parse(textwrap.dedent(text)).body
    opt = optimize.Optimizer(adjoint, impure, owned, accumulators, merge=merge)
    return emit.unparse(opt.run(stmts, set(live))).strip()


# ----- sums merged: x = a; x = x + b is x = a + b --------------------------------------------


def test_a_sum_is_one_statement_and_its_copy_goes():
    # the scalar loop's adjoint: d_mul = d_h copies the gradient that the sum then reads
    assert _optimize("""
        d_mul = d_h
        h = tape.pop()
        d_sin = d_h * 0.01
        d_h = d_sin * np.cos(h)
        d_h = d_h + d_mul * 0.99
    """, {"d_h", "d_mul", "d_sin"}, {"d_h"}, merge=True) == _text("""
        h = tape.pop()
        d_sin = d_h * 0.01
        d_h = d_sin * np.cos(h) + d_h * 0.99
    """)


def test_sums_are_not_merged_where_they_should_not_be():
    text = """
        d_x = a * b
        d_x = d_x + d_x * c
        d_y = a
        t = tape.pop()
        d_y = d_y + t
        d_z = 0
        d_z = d_z + a
    """
    # b reads x; a statement between (d_y = a is a copy, propagated); the zero (the first
    # write assigns instead)
    assert _optimize(text, {"d_x", "d_y", "d_z"}, {"d_x", "d_y", "d_z"}, merge=True) == _text("""
        d_x = a * b
        d_x = d_x + d_x * c
        t = tape.pop()
        d_y = a + t
        d_z = a
    """)
    # off (the default; large arrays): nothing merged
    assert _optimize("""
        d_x = a * b
        d_x = d_x + c
    """, {"d_x"}, {"d_x"}) == _text("""
        d_x = a * b
        d_x = d_x + c
    """)


def test_a_long_sum_is_written_four_terms_a_statement():
    text = "\n".join(["d_x = t0"] + [f"d_x = d_x + t{i}" for i in range(1, 9)])
    assert _optimize(text, {"d_x"}, {"d_x"}, merge=True) == _text("""
        d_x = t0 + t1 + t2 + t3
        d_x = d_x + t4 + t5 + t6
        d_x = d_x + t7 + t8
    """)


def test_optimize_first_write_assigns():
    assert _optimize("""
        d_x = 0
        d_x = d_x + g
    """, {"d_x", "g"}, {"d_x"}) == "d_x = g"


def test_optimize_adding_a_zero_gradient_is_dropped():
    assert _optimize("""
        d_x = 0
        d_y = 0
        d_x = d_x + d_y * 3.0
        d_x = d_x + g
    """, {"d_x", "d_y", "g"}, {"d_x"}) == "d_x = g"


def test_optimize_removes_dead_pure_statements_and_keeps_tape_pops():
    assert _optimize("""
        d_t = g * 2.0
        t = tape.pop()
        d_u = d_t
    """, {"d_t", "g", "d_u"}, set()) == "t = tape.pop()"


def test_optimize_keeps_what_is_live():
    assert _optimize("""
        d_x = 0
        d_t = g * y
        t = tape.pop()
        d_x = d_x + d_t * t
    """, {"d_x", "g", "d_t"}, {"d_x"}) == _text("""
        d_t = g * y
        t = tape.pop()
        d_x = d_t * t
    """)


def test_optimize_copy_propagation():
    assert _optimize("""
        d_a = g
        d_x = d_a * 2.0
    """, {"d_a", "g", "d_x"}, {"d_x"}) == "d_x = g * 2.0"


def test_optimize_keeps_impure_calls():
    assert _optimize("""
        d_z = g * 0.5
        d_x = back(tape, d_z)
    """, {"d_x", "g", "d_z"}, set(), impure={"back"}) == _text("""
        d_z = g * 0.5
        d_x = back(tape, d_z)
    """)


def test_optimize_branch_keeps_zero_on_the_other_path():
    assert _optimize("""
        d_x = 0
        if c:
            d_x = d_x + g
        d_y = d_x * 2
    """, {"d_x", "g", "d_y"}, {"d_y"}) == _text("""
        d_x = 0
        if c:
            d_x = g
        d_y = d_x * 2
    """)


def test_optimize_loop_accumulation_is_kept():
    assert _optimize("""
        d_x = 0
        for i in range(n):
            d_x = d_x + g
    """, {"d_x", "g"}, {"d_x"}) == _text("""
        d_x = 0
        for i in range(n):
            d_x = d_x + g
    """)


def damped(x):
    h = x
    for i in range(20):
        h = h * 0.99 + np.sin(h) * 0.01
    return np.sum(h)


def test_the_merged_sums_in_a_gradient_and_its_numbers():
    x = np.array([0.3, -1.2, 2.0])
    grad = mindgrad.grad(damped)
    text = mindgrad.source(grad, x)
    assert "d_h = d_sin * np.cos(h) + d_h * 0.99" in text, text
    slope = np.ones_like(x)
    for _ in range(20):  # the closed form: the product of each step's slope
        slope = slope * (0.99 + 0.01 * np.cos(x))
        x_next = x * 0.99 + np.sin(x) * 0.01
        x = x_next
    np.testing.assert_allclose(grad(np.array([0.3, -1.2, 2.0])), slope, rtol=1e-13)
    # large arrays: the terms added one by one (the reuse stage adds into the gradient's
    # buffer where it can), no sum of two temporaries
    with cache.large_from(1):
        text = mindgrad.source(mindgrad.grad(damped), np.array([0.3, -1.2, 2.0]))
    assert "d_h = d_h + d_mul * 0.99" in text and " + d_h * 0.99" not in text, text
