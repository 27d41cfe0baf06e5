"""Programs whose generated code tests/compiler/test_golden_reverse.py and
test_golden_forward.py pin, source in, source out (the ones both passes are shown on)."""

import numpy as np


def straight_line(x, y):
    z = x * y
    w = np.sin(z) + x
    return np.sum(w)


def branch(x):
    if np.sum(x) > 0.0:
        y = x * 2.0
    else:
        y = np.exp(x)
    return np.sum(y)


def for_range(x):
    h = x
    for i in range(3):
        h = np.sin(h) * x
    return np.sum(h)


def for_over_items(xs):
    s = 0.0
    for v in xs:
        s = s + v * v
    return s


def while_loop(x):
    k = 0
    while k < 3:
        x = x * x
        k += 1
    return np.sum(x)


def square(a):
    return a * a


def with_callee(x, y):
    z = square(x) * y
    return np.sum(z)


def callee_in_loop(x):
    for i in range(2):
        x = square(x)
    return np.sum(x)


def loop_with_break(xs):
    s = 0.0
    for v in xs:
        if s > 2.0:
            break
        s = s + v * v
    return s


def tuple_return(x, y):
    a = x * y
    return a, np.sum(a)


def containers(x):
    pair = (x, x * 2.0)
    d = {"a": pair[0], "b": pair[1]}
    return np.sum(d["a"] * d["b"])
