"""The reverse pass, source in, source out: for small programs, the exact source the pass writes
(the "reverse" stage, before the optimize stage folds it), so a change to what the pass generates
shows here as a diff. Each program's gradient is also checked against finite differences: the
pinned source computes the right numbers.

The programs cover straight-line code, a branch, loops over a range, over an array and with a
break, a while loop, a list's append and pop, callees (once and in a loop), a Cell calling a
Cell (for its input and for its weights), an index assignment, a tuple result, containers, a
Cell with its own bprop, and the split functions ``vjp`` runs.
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
from tests.compiler.test_pipeline import _dumped
from tests.support.source_lines import dedented as _text


def _reverse_stage(lines):
    """The source the reverse pass wrote, for each function built, in the order of the dump."""
    return "\n".join(line.strip() + "\n" for line in lines
                     if line.startswith("# ---- reverse:")).strip()


def _pass_output(fn, positions=(0,)):
    _, lines, _ = _dumped(fn, positions)
    return _reverse_stage(lines)


# ----- the programs ------------------------------------------------------------------------------


def append_pop(x):
    xs = []
    for i in range(3):
        xs.append(x * i)
    v = xs.pop()
    return np.sum(v * xs[0] + xs[1])


def in_place(x):
    y = x.copy()
    y[0] = y[1] * 2.0
    y[2] += x[0]
    return np.sum(y * y)


class Dense(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = mindgrad.Parameter(np.ones((3, 2)) * 0.5, name="w")
        self.b = mindgrad.Parameter(np.zeros(2), name="b")

    def construct(self, x):
        return np.tanh(x @ self.w + self.b)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = Dense()

    def construct(self, x):
        h = self.dense(x)
        return np.sum(h * h)


class Tripled(nn.Cell):
    def construct(self, x):
        return x * 3.0

    def bprop(self, x, out, dout):
        return (dout * 3.0,)


TRIPLED = Tripled()


def with_bprop(x):
    return np.sum(TRIPLED(x) * x)

ARGS = {
    straight_line: (np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.3, -0.7])),
    branch: (np.array([0.5, -1.0, 2.0]),),
    for_range: (np.array([0.5, -1.0, 2.0]),),
    for_over_items: (np.array([0.5, -1.0, 2.0]),),
    loop_with_break: (np.array([0.5, 1.0, 2.0, 0.3]),),
    while_loop: (np.array([0.5, -1.0, 1.2]),),
    append_pop: (np.array([0.5, -1.0, 2.0]),),
    with_callee: (np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.3, -0.7])),
    callee_in_loop: (np.array([0.5, -1.0, 1.2]),),
    in_place: (np.array([0.5, -1.0, 2.0]),),
    tuple_return: (np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.3, -0.7])),
    containers: (np.array([0.5, -1.0, 2.0]),),
    with_bprop: (np.array([0.5, -1.0, 2.0]),),
}


# ----- what the pass writes ----------------------------------------------------------------------


GOLDEN = {
    straight_line: """
        # ---- reverse: straight_line ----
        def grad_straight_line(x, y, *, sens):
            z = x * y
            sin = np.sin(z)
            w = sin + x
            sum_ = np.sum(w)
            # backward sweep
            d_sum_ = seed(sum_, sens)
            d_sin = zero
            d_w = zero
            d_x = zero
            d_z = zero
            # grad of: return np.sum(w)
            d_w = d_w + reduce_sum_grad(d_sum_, w)
            d_sum_ = zero
            # grad of: w = np.sin(z) + x
            d_sin = d_sin + unbroadcast(d_w, sin)
            d_x = add(d_x, unbroadcast(d_w, x))
            d_w = zero
            d_z = add(d_z, d_sin * np.cos(z))
            d_sin = zero
            # grad of: z = x * y
            d_x = add(d_x, unbroadcast(d_z * y, x))
            d_z = zero
            return (sum_, (d_x,), ())
    """,
    branch: """
        # ---- reverse: branch ----
        def grad_branch(x, *, sens):
            sum_ = np.sum(x)
            cond = sum_ > 0.0
            if cond:
                y = x * 2.0
            else:
                y = np.exp(x)
            sum_2 = np.sum(y)
            # backward sweep
            d_sum_2 = seed(sum_2, sens)
            d_sum_ = zero
            d_x = zero
            d_y = zero
            # grad of: return np.sum(y)
            d_y = d_y + reduce_sum_grad(d_sum_2, y)
            d_sum_2 = zero
            # grad of: if np.sum(x) > 0.0:
            if cond:
                # grad of: y = x * 2.0
                d_x = add(d_x, d_y * 2.0)
                d_y = zero
            else:
                # grad of: y = np.exp(x)
                d_x = add(d_x, d_y * y)
                d_y = zero
            d_x = add(d_x, reduce_sum_grad(d_sum_, x))
            d_sum_ = zero
            return (sum_2, (d_x,), ())
    """,
    for_range: """
        # ---- reverse: for_range ----
        def grad_for_range(x, *, sens):
            sin = None
            tape = []
            h = x
            for i in range(3):
                tape.append(sin)
                sin = np.sin(h)
                tape.append(h)
                h = sin * x
            sum_ = np.sum(h)
            # backward sweep
            d_sum_ = seed(sum_, sens)
            d_h = zero
            d_sin = zero
            d_x = zero
            # grad of: return np.sum(h)
            d_h = add(d_h, reduce_sum_grad(d_sum_, h))
            d_sum_ = zero
            # grad of: for i in range(3):
            for i in reversed(range(3)):
                # grad of: h = np.sin(h) * x
                d_sin = d_sin + unbroadcast(d_h * x, sin)
                d_x = add(d_x, unbroadcast(d_h * sin, x))
                d_h = zero
                h = tape.pop()
                d_h = add(d_h, d_sin * np.cos(h))
                d_sin = zero
                sin = tape.pop()
            # grad of: h = x
            d_x = add(d_x, d_h)
            d_h = zero
            return (sum_, (d_x,), ())
    """,
    for_over_items: """
        # ---- reverse: for_over_items ----
        def grad_for_over_items(xs, *, sens):
            mul = None
            tape = []
            s = 0.0
            for v in xs:
                tape.append(mul)
                mul = v * v
                add = s + mul
                tape.append(s)
                s = add
            s_out = s
            # backward sweep
            d_s = seed(s, sens)
            d_add = zero
            d_mul = zero
            d_v = zero
            d_xs = zero
            # grad of: for v in xs:
            for (k, v) in reversed_items(xs):
                # grad of: s = s + v * v
                d_add = d_add + d_s
                d_s = zero
                s = tape.pop()
                d_s = d_s + unbroadcast(d_add, s)
                d_mul = add2(d_mul, unbroadcast(d_add, mul))
                d_add = zero
                d_v = add2(d_v, d_mul * v)
                d_v = add2(d_v, d_mul * v)
                d_mul = zero
                mul = tape.pop()
                d_xs = add_at(d_xs, xs, k, d_v)
                d_v = zero
            # grad of: s = 0.0
            d_s = zero
            return (s_out, (d_xs,), ())
    """,
    loop_with_break: """
        # ---- reverse: loop_with_break ----
        def grad_loop_with_break(xs, *, sens):
            cond = None
            go = None
            mul = None
            tape = []
            s = 0.0
            stop = False
            n_iter = 0
            for v in xs:
                n_iter = n_iter + 1
                tape.append(go)
                go = True
                tape.append(cond)
                cond = s > 2.0
                if cond:
                    tape.append(go)
                    go = False
                    stop = True
                if go:
                    tape.append(mul)
                    mul = v * v
                    add = s + mul
                    tape.append(s)
                    s = add
                if stop:
                    break
            s_out = s
            # backward sweep
            d_s = seed(s, sens)
            d_add = zero
            d_mul = zero
            d_v = zero
            d_xs = zero
            # grad of: for v in xs:
            for (k, v) in reversed_items(xs, n_iter):
                # grad of: s = s + v * v
                if go:
                    # grad of: s = s + v * v
                    d_add = d_add + d_s
                    d_s = zero
                    s = tape.pop()
                    d_s = d_s + unbroadcast(d_add, s)
                    d_mul = add2(d_mul, unbroadcast(d_add, mul))
                    d_add = zero
                    d_v = add2(d_v, d_mul * v)
                    d_v = add2(d_v, d_mul * v)
                    d_mul = zero
                    mul = tape.pop()
                # grad of: if s > 2.0:
                if cond:
                    # grad of: break
                    go = tape.pop()
                cond = tape.pop()
                # grad of: for v in xs:
                go = tape.pop()
                d_xs = add_at(d_xs, xs, k, d_v)
                d_v = zero
            # grad of: s = 0.0
            d_s = zero
            return (s_out, (d_xs,), ())
    """,
    while_loop: """
        # ---- reverse: while_loop ----
        def grad_while_loop(x, *, sens):
            tape = []
            k = 0
            cond = k < 3
            n_iter = 0
            while cond:
                n_iter = n_iter + 1
                mul = x * x
                tape.append(x)
                x = mul
                add = k + 1
                k = add
                cond = k < 3
            sum_ = np.sum(x)
            # backward sweep
            d_sum_ = seed(sum_, sens)
            d_mul = zero
            d_x = zero
            # grad of: return np.sum(x)
            d_x = add2(d_x, reduce_sum_grad(d_sum_, x))
            d_sum_ = zero
            # grad of: while k < 3:
            for _ in range(n_iter):
                # grad of: x = x * x
                d_mul = add2(d_mul, d_x)
                d_x = zero
                x = tape.pop()
                d_x = add2(d_x, d_mul * x)
                d_x = add2(d_x, d_mul * x)
                d_mul = zero
            return (sum_, (d_x,), ())
    """,
    append_pop: """
        # ---- reverse: append_pop ----
        def grad_append_pop(x, *, sens):
            xs = []
            for i in range(3):
                mul = x * i
                xs.append(mul)
            v = xs.pop()
            xs_i = xs[0]
            mul2 = v * xs_i
            xs_i2 = xs[1]
            add = mul2 + xs_i2
            sum_ = np.sum(add)
            # backward sweep
            d_sum_ = seed(sum_, sens)
            d_add = zero
            d_mul = zero
            d_mul2 = zero
            d_v = zero
            d_x = zero
            d_xs = zero
            d_xs_i = zero
            d_xs_i2 = zero
            copies = {}
            # grad of: return np.sum(v * xs[0] + xs[1])
            d_add = add2(d_add, reduce_sum_grad(d_sum_, add))
            d_sum_ = zero
            d_mul2 = add2(d_mul2, unbroadcast(d_add, mul2))
            d_xs_i2 = add2(d_xs_i2, unbroadcast(d_add, xs_i2))
            d_add = zero
            d_xs = add_at(d_xs, xs, 1, d_xs_i2)
            d_xs_i2 = zero
            d_v = add2(d_v, unbroadcast(d_mul2 * xs_i, v))
            d_xs_i = add2(d_xs_i, unbroadcast(d_mul2 * v, xs_i))
            d_mul2 = zero
            d_xs = add_at(d_xs, xs, 0, d_xs_i)
            d_xs_i = zero
            # grad of: v = xs.pop()
            d_xs = push_grad(d_xs, d_v, xs)
            d_v = zero
            xs = private_copy(xs, copies)
            xs.append(v)
            # grad of: for i in range(3):
            for i in reversed(range(3)):
                # grad of: xs.append(x * i)
                (d_xs_item, d_xs) = pop_grad(d_xs)
                d_mul = add2(d_mul, d_xs_item)
                xs = private_copy(xs, copies)
                xs.pop()
                d_x = add2(d_x, unbroadcast(d_mul * i, x))
                d_mul = zero
            # grad of: xs = []
            d_xs = zero
            return (sum_, (d_x,), ())
    """,
    with_callee: """
        # ---- reverse: with_callee ----
        def grad_with_callee(x, y, *, sens):
            (square2, square2_tape) = square_forward(x)
            z = square2 * y
            sum_ = np.sum(z)
            # backward sweep
            d_sum_ = seed(sum_, sens)
            d_square2 = zero
            d_x = zero
            d_z = zero
            # grad of: return np.sum(z)
            d_z = add(d_z, reduce_sum_grad(d_sum_, z))
            d_sum_ = zero
            # grad of: z = square(x) * y
            d_square2 = add(d_square2, unbroadcast(d_z * y, square2))
            d_z = zero
            d_x_square = square_backward(square2_tape, d_square2)
            d_x = add(d_x, d_x_square)
            d_square2 = zero
            return (sum_, (d_x,), ())

        # ---- reverse: square ----
        def square_forward(a):
            tape = []
            mul = a * a
            tape.append(a)
            return (mul, tape)

        def square_backward(tape, d_mul):
            a = tape.pop()
            d_a = zero
            # grad of: return a * a
            d_a = add(d_a, d_mul * a)
            d_a = add(d_a, d_mul * a)
            d_mul = zero
            return d_a
    """,
    callee_in_loop: """
        # ---- reverse: callee_in_loop ----
        def grad_callee_in_loop(x, *, sens):
            square2_tape = None
            tape = []
            for i in range(2):
                tape.append(square2_tape)
                (square2, square2_tape) = square_forward(x)
                tape.append(x)
                x = square2
            sum_ = np.sum(x)
            # backward sweep
            d_sum_ = seed(sum_, sens)
            d_square2 = zero
            d_x = zero
            # grad of: return np.sum(x)
            d_x = add(d_x, reduce_sum_grad(d_sum_, x))
            d_sum_ = zero
            # grad of: for i in range(2):
            for i in reversed(range(2)):
                # grad of: x = square(x)
                d_square2 = add(d_square2, d_x)
                d_x = zero
                x = tape.pop()
                d_x_square = square_backward(square2_tape, d_square2)
                d_x = add(d_x, d_x_square)
                square2_tape = tape.pop()
                d_square2 = zero
            return (sum_, (d_x,), ())

        # ---- reverse: square ----
        def square_forward(a):
            tape = []
            mul = a * a
            tape.append(a)
            return (mul, tape)

        def square_backward(tape, d_mul):
            a = tape.pop()
            d_a = zero
            # grad of: return a * a
            d_a = add(d_a, d_mul * a)
            d_a = add(d_a, d_mul * a)
            d_mul = zero
            return d_a
    """,
    in_place: """
        # ---- reverse: in_place ----
        def grad_in_place(x, *, sens):
            tape = []
            y = x.copy()
            y_i = y[1]
            mul = y_i * 2.0
            tape.append(saved_item(y, 0))
            y[0] = mul
            y_i2 = saved_item(y, 2)
            x_i = x[0]
            add = y_i2 + x_i
            tape.append(saved_item(y, 2))
            y[2] = add
            mul2 = y * y
            sum_ = np.sum(mul2)
            # backward sweep
            d_sum_ = seed(sum_, sens)
            d_add = zero
            d_mul = zero
            d_mul2 = zero
            d_x = zero
            d_x_i = zero
            d_y = zero
            d_y_i = zero
            d_y_i2 = zero
            copies = {}
            # grad of: return np.sum(y * y)
            d_mul2 = add2(d_mul2, reduce_sum_grad(d_sum_, mul2))
            d_sum_ = zero
            d_y = add2(d_y, d_mul2 * y)
            d_y = add2(d_y, d_mul2 * y)
            d_mul2 = zero
            # grad of: y[2] += x[0]
            (d_y_new2, d_y) = setitem_grad(d_y, 2, add)
            d_add = add2(d_add, d_y_new2)
            y = private_copy(y, copies)
            restore_item(y, 2, tape.pop())
            d_y_i2 = add2(d_y_i2, unbroadcast(d_add, y_i2))
            d_x_i = add2(d_x_i, unbroadcast(d_add, x_i))
            d_add = zero
            d_x = add_at(d_x, x, 0, d_x_i)
            d_x_i = zero
            d_y = add_at(d_y, y, 2, d_y_i2)
            d_y_i2 = zero
            # grad of: y[0] = y[1] * 2.0
            (d_y_new, d_y) = setitem_grad(d_y, 0, mul)
            d_mul = d_mul + d_y_new
            y = private_copy(y, copies)
            restore_item(y, 0, tape.pop())
            d_y_i = add2(d_y_i, d_mul * 2.0)
            d_mul = zero
            d_y = add_at(d_y, y, 1, d_y_i)
            d_y_i = zero
            # grad of: y = x.copy()
            d_x = add2(d_x, d_y)
            d_y = zero
            return (sum_, (d_x,), ())
    """,
    tuple_return: """
        # ---- reverse: tuple_return ----
        def grad_tuple_return(x, y, *, sens):
            a = x * y
            sum_ = np.sum(a)
            result = (a, sum_)
            # backward sweep
            d_result = seed(result, sens)
            d_a = zero
            d_sum_ = zero
            d_x = zero
            # grad of: return a, np.sum(a)
            d_a = add(d_a, item(d_result, 0))
            d_sum_ = d_sum_ + item(d_result, 1)
            d_result = zero
            d_a = add(d_a, reduce_sum_grad(d_sum_, a))
            d_sum_ = zero
            # grad of: a = x * y
            d_x = add(d_x, unbroadcast(d_a * y, x))
            d_a = zero
            return (result, (d_x,), ())
    """,
    containers: """
        # ---- reverse: containers ----
        def grad_containers(x, *, sens):
            mul = x * 2.0
            pair = (x, mul)
            pair_i = pair[0]
            pair_i2 = pair[1]
            d = {'a': pair_i, 'b': pair_i2}
            d_i = d['a']
            d_i2 = d['b']
            mul2 = d_i * d_i2
            sum_ = np.sum(mul2)
            # backward sweep
            d_sum_ = seed(sum_, sens)
            d_d = zero
            d_d_i = zero
            d_d_i2 = zero
            d_mul = zero
            d_mul2 = zero
            d_pair = zero
            d_pair_i = zero
            d_pair_i2 = zero
            d_x = zero
            # grad of: return np.sum(d["a"] * d["b"])
            d_mul2 = add(d_mul2, reduce_sum_grad(d_sum_, mul2))
            d_sum_ = zero
            d_d_i = add(d_d_i, unbroadcast(d_mul2 * d_i2, d_i))
            d_d_i2 = add(d_d_i2, unbroadcast(d_mul2 * d_i, d_i2))
            d_mul2 = zero
            d_d = add_at(d_d, d, 'b', d_d_i2)
            d_d_i2 = zero
            d_d = add_at(d_d, d, 'a', d_d_i)
            d_d_i = zero
            # grad of: d = {"a": pair[0], "b": pair[1]}
            d_pair_i = add(d_pair_i, item(d_d, 'a'))
            d_pair_i2 = add(d_pair_i2, item(d_d, 'b'))
            d_d = zero
            d_pair = add_at(d_pair, pair, 1, d_pair_i2)
            d_pair_i2 = zero
            d_pair = add_at(d_pair, pair, 0, d_pair_i)
            d_pair_i = zero
            # grad of: pair = (x, x * 2.0)
            d_x = add(d_x, item(d_pair, 0))
            d_mul = d_mul + item(d_pair, 1)
            d_pair = zero
            d_x = add(d_x, d_mul * 2.0)
            d_mul = zero
            return (sum_, (d_x,), ())
    """,
    with_bprop: """
        # ---- reverse: with_bprop ----
        def grad_with_bprop(x, *, sens):
            TRIPLED2 = TRIPLED(x)
            mul = TRIPLED2 * x
            sum_ = np.sum(mul)
            # backward sweep
            d_sum_ = seed(sum_, sens)
            d_TRIPLED2 = zero
            d_mul = zero
            d_x = zero
            # grad of: return np.sum(TRIPLED(x) * x)
            d_mul = add(d_mul, reduce_sum_grad(d_sum_, mul))
            d_sum_ = zero
            d_TRIPLED2 = add(d_TRIPLED2, unbroadcast(d_mul * x, TRIPLED2))
            d_x = add(d_x, unbroadcast(d_mul * TRIPLED2, x))
            d_mul = zero
            d_Tripled_bprop = bprop_grads(TRIPLED, (x,), TRIPLED2, d_TRIPLED2)
            d_x = add(d_x, d_Tripled_bprop[0])
            d_TRIPLED2 = zero
            return (sum_, (d_x,), ())
    """,
}

NET = """
    # ---- reverse: construct ----
    def grad_Net(self, x, *, sens):
        (h, h_tape) = Dense_forward(self.dense, x)
        mul = h * h
        sum_ = np.sum(mul)
        # backward sweep
        d_sum_ = seed(sum_, sens)
        d_h = zero
        d_mul = zero
        d_x = zero
        # grad of: return np.sum(h * h)
        d_mul = add(d_mul, reduce_sum_grad(d_sum_, mul))
        d_sum_ = zero
        d_h = add(d_h, d_mul * h)
        d_h = add(d_h, d_mul * h)
        d_mul = zero
        # grad of: h = self.dense(x)
        d_x_Dense = Dense_backward(h_tape, d_h)
        d_x = add(d_x, d_x_Dense)
        d_h = zero
        return (sum_, (d_x,), ())

    # ---- reverse: construct ----
    def Dense_forward(self, x):
        tape = []
        matmul = x @ self.w
        add = matmul + self.b
        tanh = np.tanh(add)
        tape.append((matmul, self, tanh, x))
        return (tanh, tape)

    def Dense_backward(tape, d_tanh):
        (matmul, self, tanh, x) = tape.pop()
        d_add = zero
        d_matmul = zero
        d_x = zero
        # grad of: return np.tanh(x @ self.w + self.b)
        d_add = add2(d_add, d_tanh * (1.0 - tanh * tanh))
        d_tanh = zero
        d_matmul = add2(d_matmul, unbroadcast(d_add, matmul))
        d_add = zero
        d_x = add2(d_x, matmul_grad_x(d_matmul, x, self.w))
        d_matmul = zero
        return d_x
"""

NET_WEIGHTS = """
    # ---- reverse: construct ----
    def grad_Net(self, x, *, sens):
        (h, h_tape) = Dense_forward(self.dense, x)
        mul = h * h
        sum_ = np.sum(mul)
        # backward sweep
        d_sum_ = seed(sum_, sens)
        d_dense_b = zero
        d_dense_w = zero
        d_h = zero
        d_mul = zero
        # grad of: return np.sum(h * h)
        d_mul = add(d_mul, reduce_sum_grad(d_sum_, mul))
        d_sum_ = zero
        d_h = add(d_h, d_mul * h)
        d_h = add(d_h, d_mul * h)
        d_mul = zero
        # grad of: h = self.dense(x)
        (d_dense_b_Dense, d_dense_w_Dense) = Dense_backward(h_tape, d_h)
        d_dense_b = add(d_dense_b, d_dense_b_Dense)
        d_dense_w = add(d_dense_w, d_dense_w_Dense)
        d_h = zero
        return (sum_, (), (d_dense_w, d_dense_b))

    # ---- reverse: construct ----
    def Dense_forward(self, x):
        tape = []
        matmul = x @ self.w
        add = matmul + self.b
        tanh = np.tanh(add)
        tape.append((matmul, self, tanh, x))
        return (tanh, tape)

    def Dense_backward(tape, d_tanh):
        (matmul, self, tanh, x) = tape.pop()
        d_add = zero
        d_matmul = zero
        d_self_b = zero
        d_self_w = zero
        # grad of: return np.tanh(x @ self.w + self.b)
        d_add = add2(d_add, d_tanh * (1.0 - tanh * tanh))
        d_tanh = zero
        d_matmul = add2(d_matmul, unbroadcast(d_add, matmul))
        d_self_b = add2(d_self_b, unbroadcast(d_add, self.b))
        d_add = zero
        d_self_w = add2(d_self_w, matmul_grad_y(d_matmul, x, self.w))
        d_matmul = zero
        return (d_self_b, d_self_w)
"""

SPLIT = """
    # ---- reverse: straight_line ----
    def straight_line_forward(x, y):
        tape = []
        z = x * y
        sin = np.sin(z)
        w = sin + x
        sum_ = np.sum(w)
        tape.append((sin, w, x, y, z))
        return (sum_, tape)

    def straight_line_backward(tape, d_sum_):
        (sin, w, x, y, z) = tape.pop()
        d_sin = zero
        d_w = zero
        d_x = zero
        d_z = zero
        # grad of: return np.sum(w)
        d_w = d_w + reduce_sum_grad(d_sum_, w)
        d_sum_ = zero
        # grad of: w = np.sin(z) + x
        d_sin = d_sin + unbroadcast(d_w, sin)
        d_x = add(d_x, unbroadcast(d_w, x))
        d_w = zero
        d_z = add(d_z, d_sin * np.cos(z))
        d_sin = zero
        # grad of: z = x * y
        d_x = add(d_x, unbroadcast(d_z * y, x))
        d_z = zero
        return d_x
"""


@pytest.mark.parametrize("fn", list(GOLDEN), ids=[f.__name__ for f in GOLDEN])
def test_reverse_pass_source(fn):
    assert _pass_output(fn) == _text(GOLDEN[fn])


@pytest.mark.parametrize("fn", list(GOLDEN), ids=[f.__name__ for f in GOLDEN])
def test_the_pinned_source_computes_the_gradient(fn):
    mindgrad.check_grads(fn, ARGS[fn], grad_position=0)


def test_reverse_pass_source_of_a_cell_calling_a_cell():
    assert _pass_output(Net()) == _text(NET)


def test_reverse_pass_source_for_weights():
    net, lines = Net(), []
    driver.run(net, (), weights=net.trainable_params(), dump=lines.append)
    assert _reverse_stage(lines) == _text(NET_WEIGHTS)


def test_reverse_pass_source_of_split_functions():
    lines = []
    driver.run(straight_line, (0,), split=True, dump=lines.append)
    assert _reverse_stage(lines) == _text(SPLIT)


def test_the_pinned_cell_sources_compute_the_gradients():
    net, x = Net(), np.array([[0.5, -1.0, 2.0], [0.1, 0.2, -0.3]])
    mindgrad.check_grads(net, (x,))
    grads = mindgrad.GradOperation(get_by_list=True)(net, net.trainable_params())(x)
    dense = net.dense
    h = np.tanh(x @ dense.w + dense.b)
    d_pre = 2 * h * (1 - h * h)
    np.testing.assert_allclose(grads[0], x.T @ d_pre)
    np.testing.assert_allclose(grads[1], d_pre.sum(axis=0))
