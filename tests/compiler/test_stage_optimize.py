"""Stage optimize: what the generated code does not need, removed."""

import os
import textwrap

import gast

from mindgrad.compiler.finish import emit, optimize
from tests.support.source_lines import dedented as _text

HERE = os.path.realpath(__file__)


# ----- stage 6: optimize -------------------------------------------------------------------------


def _optimize(text, adjoint, live, impure=(), owned=(), accumulators=()):
    stmts = gast.parse(textwrap.dedent(text)).body
    opt = optimize.Optimizer(adjoint, impure, owned, accumulators)
    return emit.unparse(opt.run(stmts, set(live))).strip()


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
