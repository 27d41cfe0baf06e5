"""The forward (tangent) pass, source in, source out: for small programs, the exact source the
pass writes (the "forward" stage: the tangent function's body before the optimize stage folds
it), so a change to what the pass generates shows here as a diff. Each program's tangent is also
checked against finite differences: the pinned source computes the right numbers.

The programs cover straight-line code, a branch, loops over a range, over an array and with a
break, a while loop, a list's append and pop, callees (once and in a loop), an index assignment,
a tuple result, containers, list concatenation, a parameter that becomes active, and a Cell
calling a Cell.
"""

import numpy as np
import pytest

import mindgrad
from mindgrad import nn
from mindgrad.compiler import driver
from tests.compiler.golden_programs import (
    branch,
    callee_in_loop,
    containers,
    for_over_items,
    for_range,
    loop_with_break,
    straight_line,
    tuple_return,
    while_loop,
    with_callee,
)
from tests.support.source_lines import dedented as _text


def _pass_output(fn, positions=(0,)):
    """The source the forward pass wrote, for each function built, in the order of the dump."""
    lines = []
    driver.run_forward(fn, positions, dump=lines.append)
    return "\n".join(line.strip() + "\n" for line in lines
                     if line.startswith("# ---- forward:")).strip()


# ----- the programs ------------------------------------------------------------------------------


def append_pop(x):
    xs = []
    for i in range(3):
        xs.append(x * i)
    v = xs.pop()
    xs.pop()
    return np.sum(v * xs[0])


def in_place(x):
    y = x.copy()
    y[0] = y[1] * 2.0
    return np.sum(y * y)


def concatenated(x):
    xs = [x] + [x * 2.0]
    return xs[0] + xs[1]


def swapped(x, y):
    x, y = y, x + y
    return x * y


class Dense(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = mindgrad.Parameter(np.ones((3, 2)) * 0.5, name="w")

    def construct(self, x):
        return np.tanh(x @ self.w)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = Dense()

    def construct(self, x):
        h = self.dense(x)
        return np.sum(h * h)

ARGS = {
    straight_line: (np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.3, -0.7])),
    branch: (np.array([0.5, -1.0, 2.0]),),
    for_range: (np.array([0.5, -1.0, 2.0]),),
    for_over_items: (np.array([0.5, -1.0, 2.0]),),
    while_loop: (np.array([0.5, -1.0, 1.2]),),
    append_pop: (np.array([0.5, -1.0, 2.0]),),
    with_callee: (np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.3, -0.7])),
    callee_in_loop: (np.array([0.5, -1.0, 1.2]),),
    loop_with_break: (np.array([0.5, 1.0, 2.0, 0.3]),),
    in_place: (np.array([0.5, -1.0, 2.0]),),
    tuple_return: (np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.3, -0.7])),
    containers: (np.array([0.5, -1.0, 2.0]),),
    concatenated: (np.array([0.5, -1.0, 2.0]),),
    swapped: (np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.3, -0.7])),
}


# ----- what the pass writes ----------------------------------------------------------------------


GOLDEN = {
    straight_line: """
        # ---- forward: straight_line ----
        # tangent of: z = x * y
        z = x * y
        t_z = zero
        t_z = t_z + t_x * y
        # tangent of: w = np.sin(z) + x
        sin = np.sin(z)
        t_sin = zero
        t_sin = t_sin + t_z * np.cos(z)
        w = sin + x
        t_w = zero
        t_w = t_w + add_tangent(t_sin, w, (), x)
        t_w = t_w + add_tangent(t_x, w, sin, ())
        # tangent of: return np.sum(w)
        sum_ = np.sum(w)
        t_sum_ = zero
        t_sum_ = t_sum_ + np.sum(t_w)
        return (sum_, t_sum_)
    """,
    branch: """
        # ---- forward: branch ----
        # tangent of: if np.sum(x) > 0.0:
        sum_ = np.sum(x)
        t_sum_ = zero
        t_sum_ = t_sum_ + np.sum(t_x)
        cond = sum_ > 0.0
        if cond:
            # tangent of: y = x * 2.0
            y = x * 2.0
            t_y = zero
            t_y = t_y + t_x * 2.0
        else:
            # tangent of: y = np.exp(x)
            y = np.exp(x)
            t_y = zero
            t_y = t_y + t_x * y
        # tangent of: return np.sum(y)
        sum_2 = np.sum(y)
        t_sum_2 = zero
        t_sum_2 = t_sum_2 + np.sum(t_y)
        return (sum_2, t_sum_2)
    """,
    for_range: """
        # ---- forward: for_range ----
        # tangent of: h = x
        h = x
        t_h = zero
        t_h = t_x
        for i in range(3):
            # tangent of: h = np.sin(h) * x
            sin = np.sin(h)
            t_sin = zero
            t_sin = t_sin + t_h * np.cos(h)
            h = sin * x
            t_h = zero
            t_h = t_h + t_sin * x
            t_h = t_h + t_x * sin
        # tangent of: return np.sum(h)
        sum_ = np.sum(h)
        t_sum_ = zero
        t_sum_ = t_sum_ + np.sum(t_h)
        return (sum_, t_sum_)
    """,
    for_over_items: """
        # ---- forward: for_over_items ----
        # tangent of: s = 0.0
        s = 0.0
        t_s = zero_tangent(s)
        for (k, v) in enumerate(xs):
            t_v = tangent_of_item(t_xs, xs, k, v)
            # tangent of: s = s + v * v
            mul = v * v
            t_mul = zero
            t_mul = t_mul + t_v * v
            t_mul = t_mul + t_v * v
            add = s + mul
            t_add = zero
            t_add = t_add + add_tangent(t_s, add, (), mul)
            t_add = t_add + add_tangent(t_mul, add, s, ())
            s = add
            t_s = zero
            t_s = t_add
        return (s, t_s)
    """,
    while_loop: """
        # ---- forward: while_loop ----
        k = 0
        cond = k < 3
        while cond:
            # tangent of: x = x * x
            mul = x * x
            t_mul = zero
            t_mul = t_mul + t_x * x
            t_mul = t_mul + t_x * x
            x = mul
            t_x = zero
            t_x = t_mul
            add = k + 1
            k = add
            cond = k < 3
        # tangent of: return np.sum(x)
        sum_ = np.sum(x)
        t_sum_ = zero
        t_sum_ = t_sum_ + np.sum(t_x)
        return (sum_, t_sum_)
    """,
    append_pop: """
        # ---- forward: append_pop ----
        # tangent of: xs = []
        xs = []
        t_xs = zero_tangent(xs)
        for i in range(3):
            # tangent of: xs.append(x * i)
            mul = x * i
            t_mul = zero
            t_mul = t_mul + t_x * i
            xs.append(mul)
            t_xs = tangent_append(t_xs, xs, t_mul)
        # tangent of: v = xs.pop()
        v = xs.pop()
        t_v = zero
        t_v = tangent_pop(t_xs)
        # tangent of: xs.pop()
        popped = xs.pop()
        t_popped = zero
        t_popped = tangent_pop(t_xs)
        # tangent of: return np.sum(v * xs[0])
        xs_i = xs[0]
        t_xs_i = zero
        t_xs_i = item(t_xs, 0)
        mul2 = v * xs_i
        t_mul2 = zero
        t_mul2 = t_mul2 + t_v * xs_i
        t_mul2 = t_mul2 + t_xs_i * v
        sum_ = np.sum(mul2)
        t_sum_ = zero
        t_sum_ = t_sum_ + np.sum(t_mul2)
        return (sum_, t_sum_)
    """,
    with_callee: """
        # ---- forward: with_callee ----
        (square2, t_square2) = square_jvp(x, t_x)
        # tangent of: z = square(x) * y
        z = square2 * y
        t_z = zero
        t_z = t_z + t_square2 * y
        # tangent of: return np.sum(z)
        sum_ = np.sum(z)
        t_sum_ = zero
        t_sum_ = t_sum_ + np.sum(t_z)
        return (sum_, t_sum_)

        # ---- forward: square ----
        # tangent of: return a * a
        mul = a * a
        t_mul = zero
        t_mul = t_mul + t_a * a
        t_mul = t_mul + t_a * a
        return (mul, t_mul)
    """,
    callee_in_loop: """
        # ---- forward: callee_in_loop ----
        for i in range(2):
            (square2, t_square2) = square_jvp(x, t_x)
            # tangent of: x = square(x)
            x = square2
            t_x = zero
            t_x = t_square2
        # tangent of: return np.sum(x)
        sum_ = np.sum(x)
        t_sum_ = zero
        t_sum_ = t_sum_ + np.sum(t_x)
        return (sum_, t_sum_)

        # ---- forward: square ----
        # tangent of: return a * a
        mul = a * a
        t_mul = zero
        t_mul = t_mul + t_a * a
        t_mul = t_mul + t_a * a
        return (mul, t_mul)
    """,
    loop_with_break: """
        # ---- forward: loop_with_break ----
        # tangent of: s = 0.0
        s = 0.0
        t_s = zero_tangent(s)
        stop = False
        for (k, v) in enumerate(xs):
            t_v = tangent_of_item(t_xs, xs, k, v)
            go = True
            cond = s > 2.0
            if cond:
                go = False
                stop = True
            if go:
                # tangent of: s = s + v * v
                mul = v * v
                t_mul = zero
                t_mul = t_mul + t_v * v
                t_mul = t_mul + t_v * v
                add = s + mul
                t_add = zero
                t_add = t_add + add_tangent(t_s, add, (), mul)
                t_add = t_add + add_tangent(t_mul, add, s, ())
                s = add
                t_s = zero
                t_s = t_add
            if stop:
                break
        return (s, t_s)
    """,
    in_place: """
        # ---- forward: in_place ----
        # tangent of: y = x.copy()
        y = x.copy()
        t_y = zero
        t_y = add(t_y, copy_tangent(t_x))
        # tangent of: y[0] = y[1] * 2.0
        y_i = y[1]
        t_y_i = zero
        t_y_i = item(t_y, 1)
        mul = y_i * 2.0
        t_mul = zero
        t_mul = t_mul + t_y_i * 2.0
        y[0] = mul
        t_y = tangent_setitem(t_y, y, 0, t_mul)
        # tangent of: return np.sum(y * y)
        mul2 = y * y
        t_mul2 = zero
        t_mul2 = t_mul2 + t_y * y
        t_mul2 = t_mul2 + t_y * y
        sum_ = np.sum(mul2)
        t_sum_ = zero
        t_sum_ = t_sum_ + np.sum(t_mul2)
        return (sum_, t_sum_)
    """,
    tuple_return: """
        # ---- forward: tuple_return ----
        # tangent of: a = x * y
        a = x * y
        t_a = zero
        t_a = t_a + t_x * y
        # tangent of: return a, np.sum(a)
        sum_ = np.sum(a)
        t_sum_ = zero
        t_sum_ = t_sum_ + np.sum(t_a)
        result = (a, sum_)
        t_result = zero
        t_result = (t_a, t_sum_)
        return (result, t_result)
    """,
    containers: """
        # ---- forward: containers ----
        # tangent of: pair = (x, x * 2.0)
        mul = x * 2.0
        t_mul = zero
        t_mul = t_mul + t_x * 2.0
        pair = (x, mul)
        t_pair = zero
        t_pair = (t_x, t_mul)
        # tangent of: d = {"a": pair[0], "b": pair[1]}
        pair_i = pair[0]
        t_pair_i = zero
        t_pair_i = item(t_pair, 0)
        pair_i2 = pair[1]
        t_pair_i2 = zero
        t_pair_i2 = item(t_pair, 1)
        d = {'a': pair_i, 'b': pair_i2}
        t_d = zero
        t_d = {'a': t_pair_i, 'b': t_pair_i2}
        # tangent of: return np.sum(d["a"] * d["b"])
        d_i = d['a']
        t_d_i = zero
        t_d_i = item(t_d, 'a')
        d_i2 = d['b']
        t_d_i2 = zero
        t_d_i2 = item(t_d, 'b')
        mul2 = d_i * d_i2
        t_mul2 = zero
        t_mul2 = t_mul2 + t_d_i * d_i2
        t_mul2 = t_mul2 + t_d_i2 * d_i
        sum_ = np.sum(mul2)
        t_sum_ = zero
        t_sum_ = t_sum_ + np.sum(t_mul2)
        return (sum_, t_sum_)
    """,
    concatenated: """
        # ---- forward: concatenated ----
        # tangent of: xs = [x] + [x * 2.0]
        add = [x]
        t_add = zero
        t_add = [t_x]
        mul = x * 2.0
        t_mul = zero
        t_mul = t_mul + t_x * 2.0
        add2 = [mul]
        t_add2 = zero
        t_add2 = [t_mul]
        xs = add + add2
        t_xs = zero
        t_xs = concat_tangents(t_add, add, t_add2, add2)
        # tangent of: return xs[0] + xs[1]
        xs_i = xs[0]
        t_xs_i = zero
        t_xs_i = item(t_xs, 0)
        xs_i2 = xs[1]
        t_xs_i2 = zero
        t_xs_i2 = item(t_xs, 1)
        add3 = xs_i + xs_i2
        t_add3 = zero
        t_add3 = t_add3 + add_tangent(t_xs_i, add3, (), xs_i2)
        t_add3 = t_add3 + add_tangent(t_xs_i2, add3, xs_i, ())
        return (add3, t_add3)
    """,
    swapped: """
        # ---- forward: swapped ----
        t_y = zero_tangent(y)
        # tangent of: x, y = y, x + y
        y_old = y
        t_y_old = zero
        t_y_old = t_y
        add = x + y
        t_add = zero
        t_add = t_add + add_tangent(t_x, add, (), y)
        t_add = t_add + add_tangent(t_y, add, x, ())
        x = y_old
        t_x = zero
        t_x = t_y_old
        y = add
        t_y = zero
        t_y = t_add
        # tangent of: return x * y
        mul = x * y
        t_mul = zero
        t_mul = t_mul + t_x * y
        t_mul = t_mul + t_y * x
        return (mul, t_mul)
    """,
}

NET = """
    # ---- forward: construct ----
    (h, t_h) = Dense_jvp(self.dense, x, t_x)
    # tangent of: return np.sum(h * h)
    mul = h * h
    t_mul = zero
    t_mul = t_mul + t_h * h
    t_mul = t_mul + t_h * h
    sum_ = np.sum(mul)
    t_sum_ = zero
    t_sum_ = t_sum_ + np.sum(t_mul)
    return (sum_, t_sum_)

    # ---- forward: construct ----
    # tangent of: return np.tanh(x @ self.w)
    matmul = x @ self.w
    t_matmul = zero
    t_matmul = t_matmul + np.matmul(t_x, self.w)
    tanh = np.tanh(matmul)
    t_tanh = zero
    t_tanh = t_tanh + t_matmul * (1.0 - tanh * tanh)
    return (tanh, t_tanh)
"""


@pytest.mark.parametrize("fn", list(GOLDEN), ids=[f.__name__ for f in GOLDEN])
def test_forward_pass_source(fn):
    assert _pass_output(fn) == _text(GOLDEN[fn])


@pytest.mark.parametrize("fn", list(GOLDEN), ids=[f.__name__ for f in GOLDEN])
def test_the_pinned_source_computes_the_tangent(fn):
    mindgrad.check_grads(fn, ARGS[fn], grad_position=0, modes=("fwd",))


def test_forward_pass_source_of_a_cell_calling_a_cell():
    assert _pass_output(Net()) == _text(NET)


def test_the_pinned_cell_source_computes_the_tangent():
    mindgrad.check_grads(Net(), (np.array([[0.5, -1.0, 2.0], [0.1, 0.2, -0.3]]),),
                         modes=("fwd",))
