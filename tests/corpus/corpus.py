"""The main corpus of user-style functions that mindgrad must differentiate.

Every function here is a small, realistic piece of numerical Python/NumPy. Each is registered
in ``CASES`` as ``(fn, [args, ...], grad_position_or_None, kwargs_or_None)`` with several input
sets (shapes, branches taken both ways, loops running 0, 1 and many times). Inputs are drawn
from one fixed ``numpy`` Generator and kept inside each function's smooth domain: away from
the kinks of abs/max/relu/clip, positive where logs and square roots need it, and matrices
well conditioned.

``tests/corpus/test_corpus.py`` checks each case with ``mindgrad.check_grads``.
"""

import math

import numpy as np

from tests.support.inputs import Draw

_draw = Draw(20240611)
RNG = _draw.rng

CASES = []


def case(fn, *arg_sets, pos=None, kwargs=None):
    """Register ``fn`` with the argument tuples ``arg_sets``."""
    CASES.append((fn, list(arg_sets), pos, kwargs))


# ----- input generators ------------------------------------------------------------------------


def rn(*shape):
    """Standard normal, entries kept at least 0.15 away from 0."""
    x = RNG.standard_normal(shape)
    return np.where(np.abs(x) < 0.15, np.sign(x + 1e-12) * (0.15 + np.abs(x)), x)


pos, unit = _draw.pos, _draw.unit


def fl(lo=-2.0, hi=2.0):
    """A Python float in [lo, hi]."""
    return float(RNG.uniform(lo, hi))


def wellcond(n):
    return _draw.well_conditioned(n, n)


def spd(n):
    a = RNG.standard_normal((n, n))
    return a @ a.T / n + np.eye(n)


def distinct(*shape):
    """Entries with gaps of at least 0.2 between any two (for sort/max/argmax)."""
    n = int(np.prod(shape)) if shape else 1
    values = np.arange(n) * 0.37 - 0.37 * n / 2 + RNG.uniform(0, 0.1, n)
    return RNG.permutation(values).reshape(shape)


# ----- module globals read by functions -----------------------------------------------------------

SCALE = 2.5
OFFSET = np.array([0.5, -1.0, 2.0])
PROJ = np.array([[1.0, 0.5], [-0.3, 2.0], [0.7, -1.1]])
EPS_NORM = 1e-5
N_STEPS = 4


# ======================================================================================
# Arithmetic operators and broadcasting
# ======================================================================================


def affine_broadcast(x, b):
    """(3,1) with (4,), scalars with arrays."""
    y = x * 2.0 + b - 0.5 * x / (1.0 + b * b)
    return y.sum()


def all_binary_ops(x, y):
    """+ - * / ** with a positive base."""
    return x + y - x * y + x / (y + 3.0) + x ** 2 + x ** y + 2.0 ** y - x ** -1.5


def matmul_chain(a, b, c):
    return a @ b @ c


def floordiv_and_mod(x, y):
    """``//`` is piecewise constant; ``%`` has slope 1 in x and -floor(x/y) in y."""
    q = x // y
    r = x % y
    return q * x + r * r + (x % 1.5) * y


def unary_minus(x):
    return -x * -(x - 1.0) + (-x).sum() + +x


def broadcast_3d(a, b):
    """(2,1,3) with (4,1) gives (2,4,3)."""
    z = a * b + a / (b * b + 1.0) - b
    return np.sum(z * z)


def scalar_array_mix(s, x):
    """A Python float with an array."""
    return s * x + s ** 2 - x / s + 1.0 / (s + x * x)


def scalar_only_arith(a, b):
    """Pure Python float arithmetic."""
    c = a * b - a / b + a ** 3 - 2.0 * b ** 2
    return c / (1.0 + a * a) - c


def int_and_float_consts(x):
    return 3 * x + 2 - x / 4 + x * 0.5 ** 2 - 7 // 2 * x


def reverse_ops_with_constants(x):
    """Constants on the left of every operator."""
    return (1.0 - x) * (2.0 / x) + 3.0 ** x - 4.0 * x + 1.0 % x


case(affine_broadcast, (rn(3, 1), rn(4)), (rn(3, 4), rn(4)), (fl(), rn(4)), (rn(3, 1), fl()))
case(all_binary_ops, (pos(3), rn(3)), (pos(2, 3), rn(3)), (fl(0.5, 2.0), fl()))
case(matmul_chain, (rn(2, 3), rn(3, 4), rn(4, 2)), (rn(3), rn(3, 3), rn(3)),
     (rn(2, 2, 3), rn(3, 3), rn(3, 1)))
case(floordiv_and_mod,
     (np.array([1.3, 2.6, 4.1]), np.array([0.9, 1.1, 1.7])),
     (np.array([[3.2, -1.4], [0.4, 5.3]]), np.array([0.7, 1.3])), (2.2, 0.8))
case(unary_minus, (rn(4),), (rn(2, 3),))
case(broadcast_3d, (rn(2, 1, 3), rn(4, 1)), (rn(2, 4, 3), rn(4, 1)), (rn(1, 1, 3), rn(4, 3)))
case(scalar_array_mix, (fl(0.5, 2.0), rn(3)), (fl(-2.0, -0.5), rn(2, 2)))
case(scalar_only_arith, (fl(), fl(0.5, 2.0)), (fl(-2, -0.2), fl(-2.0, -0.5)))
case(int_and_float_consts, (rn(3),), (fl(),))
case(reverse_ops_with_constants, (np.array([0.6, 1.3, 1.7]),), (0.7,))


# ======================================================================================
# Comparisons and boolean operators as conditions
# ======================================================================================


def clamp_piecewise(x, lo, hi):
    if x < lo and lo < hi:  # noqa: PLR1716
        return lo + 0.1 * x
    elif x > hi or not (lo < hi):
        return hi * x
    else:
        return x * x


def huber_scalar(r, delta=1.0):
    if abs(r) <= delta:
        return 0.5 * r * r
    return delta * (abs(r) - 0.5 * delta)


def chained_comparison(x):
    if 0.0 < x < 1.0:
        return x * (1.0 - x)
    return math.sin(x)


def array_conditions(x):
    if x.sum() > 0 and x.max() < 10.0:
        return (x ** 2).sum()
    if not x.min() > -5.0 or x.mean() < -1.0:
        return np.exp(x).sum()
    return x.sum()


def optional_argument(x, w=None):
    if w is not None:
        x = x * w
    return np.sum(x ** 3)


case(clamp_piecewise, (-1.5, -1.0, 1.0), (0.3, -1.0, 1.0), (1.7, -1.0, 1.0), (0.2, 1.0, -1.0))
case(huber_scalar, (0.4,), (-2.3,), (1.6,))
case(chained_comparison, (0.3,), (1.4,), (-0.8,))
case(array_conditions, (pos(4),), (-pos(3),), (np.array([0.5, -2.0, 0.1]),))
case(optional_argument, (rn(3),), (rn(3), rn(3)))


# ======================================================================================
# if / elif / else and conditional expressions
# ======================================================================================


def piecewise_smooth(x):
    if x < -1.0:
        y = -2.0 * x - 1.0
    elif x < 1.0:
        y = x * x
    else:
        y = 2.0 * x - 1.0
    return y * math.exp(-0.1 * x)


def leaky_scalar(x, alpha):
    y = x if x > 0 else alpha * x
    return y * y + y


def sign_dependent_scale(x):
    scale = 2.0 if x.mean() > 0 else -3.0
    return (scale * x ** 2).sum()


def nested_branches(x, y):
    if x > 0:
        if y > 0:
            z = x * y
        else:
            z = x - y
    else:
        if y > x:
            z = y * y
        else:
            z = x * x * y
    return z


def branch_on_shape(x):
    if x.ndim == 1:
        return np.dot(x, x)
    elif x.shape[0] > x.shape[1]:
        return np.sum(x.T @ x)
    else:
        return np.sum(x @ x.T)


def branch_assigns_different_vars(x):
    a = x * 2.0
    if x.sum() > 0:
        b = np.sin(a)
        c = b * x
    else:
        c = np.cos(a) + x
    return np.sum(c * a)


case(piecewise_smooth, (-1.6,), (0.4,), (1.8,))
case(leaky_scalar, (0.9, 0.1), (-1.2, 0.1))
case(sign_dependent_scale, (pos(3),), (-pos(2, 2),))
case(nested_branches, (1.0, 0.5), (1.0, -0.5), (-1.0, 0.5), (-1.0, -2.0))
case(branch_on_shape, (rn(3),), (rn(4, 2),), (rn(2, 4),))
case(branch_assigns_different_vars, (pos(3),), (-pos(3),))


# ======================================================================================
# for loops: range, arrays, lists, tuples, zip, enumerate, nested
# ======================================================================================


def range_one_arg(x, n):
    acc = 0.0 * x
    for i in range(n):
        acc = acc + x ** (i + 1) / (i + 1)
    return acc.sum()


def range_two_args(x, lo, hi):
    s = x * 0.0
    for k in range(lo, hi):
        s = s + np.sin(k * x) / k
    return np.sum(s)


def range_three_args(x):
    out = x
    for step in range(1, 10, 3):
        out = out * 0.5 + np.tanh(step * out)
    return out.sum()


def reverse_accumulate(x):
    """Horner-like recurrence walking backwards with a negative step."""
    acc = 0.0
    for i in range(len(x) - 1, -1, -1):
        acc = acc * 0.5 + x[i] * x[i]
    return acc


def loop_over_rows(m):
    total = 0.0
    for row in m:
        total = total + np.dot(row, row) * np.sin(row[0])
    return total


def loop_over_list(xs):
    total = 0.0
    for x in xs:
        total = total + np.sum(x * x) * 0.5
    return total


def loop_over_tuple_literal(a, b):
    s = 0.0
    for t in (a, b, a * b):
        s = s + np.sum(np.exp(t * 0.3))
    return s


def zip_layers(ws, bs, x):
    """An MLP written as a loop over (weight, bias) pairs."""
    h = x
    for w, b in zip(ws, bs):
        h = np.tanh(h @ w + b)
    return h.sum()


def enumerate_with_start(xs):
    s = 0.0
    for i, x in enumerate(xs, 1):
        s = s + i * np.sum(x ** 2)
    return s


def enumerate_rows_keyword_start(m):
    s = 0.0
    for k, row in enumerate(m, start=2):
        s = s + np.sum(row) ** 2 / k
    return s


def nested_index_loops(m):
    rows, cols = m.shape
    s = 0.0
    for i in range(rows):
        for j in range(cols):
            s = s + m[i, j] * m[i, j] * (i + 1) * (j + 2)
    return s


def loop_over_vector_elements(v):
    s = 0.0
    for e in v:
        s = s + e * e * e
    return s


def horner(coeffs, x):
    """Polynomial evaluation in a loop; ``coeffs`` highest degree first."""
    y = 0.0 * x
    for c in coeffs:
        y = y * x + c
    return y


def zip_three_lists(xs, ys, zs):
    out = 0.0
    for x, y, z in zip(xs, ys, zs):
        out = out + x * y - z
    return out


def nested_loop_matrix_power(a, n):
    result = np.eye(a.shape[0])
    for _ in range(n):
        result = result @ a
    total = 0.0
    for i in range(a.shape[0]):
        for j in range(i, a.shape[1]):
            total = total + result[i, j]
    return total


def loop_variable_reused_after(x):
    y = x
    for i in range(3):
        y = y * 1.5 - i
    return y * i


case(range_one_arg, (rn(3), 0), (rn(3), 1), (unit(2, 2), 5))
case(range_two_args, (rn(3), 1, 1), (rn(3), 1, 2), (rn(4), 2, 6))
case(range_three_args, (rn(3),), (fl(),))
case(reverse_accumulate, (rn(1),), (rn(5),))
case(loop_over_rows, (rn(1, 3),), (rn(4, 3),))
case(loop_over_list, ([rn(3)],), ([rn(2), rn(2, 2), rn(3)],))
case(loop_over_list, ([],), pos=0)
case(loop_over_tuple_literal, (rn(3), rn(3)), (rn(2, 2), fl()))
case(zip_layers, ([rn(3, 4) * 0.5, rn(4, 2) * 0.5], [rn(4), rn(2)], rn(5, 3)),
     ([rn(3, 3) * 0.5], [rn(3)], rn(3)), pos=None)
case(enumerate_with_start, ([rn(2), rn(3)],), ([rn(2, 2)],))
case(enumerate_rows_keyword_start, (rn(3, 2),), (rn(1, 4),))
case(nested_index_loops, (rn(2, 3),), (rn(1, 1),), (rn(3, 2),))
case(loop_over_vector_elements, (rn(4),), (rn(1),))
case(horner, (rn(4), rn(3)), (rn(1), fl()), (rn(5), fl()))
case(zip_three_lists, ([fl(), fl()], [fl(), fl()], [fl(), fl(), fl()]),
     ([rn(2)], [rn(2)], [rn(2)]))
case(nested_loop_matrix_power, (rn(3, 3) * 0.5, 0), (rn(3, 3) * 0.5, 1), (rn(3, 3) * 0.5, 3))
case(loop_variable_reused_after, (rn(3),), (fl(),))


# ======================================================================================
# while, break, continue, early returns
# ======================================================================================


def newton_sqrt(a):
    x = a
    i = 0
    while i < 6:
        x = 0.5 * (x + a / x)
        i += 1
    return x


def halve_until_small(x):
    """The iteration count depends on the data (sampled away from the switch points)."""
    s = x
    n = 0
    while np.sum(s * s) > 1.0:
        s = s * 0.5
        n = n + 1
    return s * (n + 1)


def break_at_threshold(x):
    acc = 0.0
    for i in range(len(x)):
        if acc > 2.0:
            break
        acc = acc + x[i] * x[i]
    return acc


def continue_on_odd(x):
    s = 0.0
    for i in range(len(x)):
        if i % 2 == 1:
            continue
        s = s + np.exp(x[i])
    return s


def continue_on_negative(v):
    s = 0.0
    for e in v:
        if e < 0:
            continue
        s = s + e ** 2
    return s


def early_return_in_loop(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 1.5:
            return x[i] * s
        s = s + x[i]
    return s


def multiple_returns(x):
    m = np.mean(x)
    if m > 1.0:
        return np.sum(x ** 2)
    if m < -1.0:
        return np.sum(np.exp(x))
    return np.sum(np.sin(x))


def while_true_break(x):
    y = x
    k = 0
    while True:
        y = np.tanh(y) + 0.5 * x
        k = k + 1
        if k >= 3:
            break
    return y.sum()


def while_with_continue(x):
    i = 0
    s = 0.0
    while i < len(x):
        i = i + 1
        if x[i - 1] < 0:
            continue
        s = s + x[i - 1] * 3.0
    return s


def nested_loop_break_inner(m):
    s = 0.0
    for row in m:
        for e in row:
            if e > 1.0:
                break
            s = s + e * e
    return s


def return_from_nested_loop(m):
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s = s + m[i, j]
            if s > 2.0:
                return s * m[i, j]
    return -s


case(newton_sqrt, (2.0,), (0.7,))
case(halve_until_small, (np.array([0.3, 0.2]),), (np.array([2.3, -1.1]),), (np.array([7.3, 5.1]),))
case(break_at_threshold, (np.array([0.5, 0.6, 2.0, 0.9]),), (np.array([0.3, 0.2]),),
     (np.array([1.7, 0.2, 0.3]),))
case(continue_on_odd, (rn(5),), (rn(1),))
case(continue_on_negative, (np.array([0.5, -0.6, 1.1, -0.2]),), (np.array([-1.0, -0.5]),))
case(early_return_in_loop, (np.array([0.5, 2.0, 0.3]),), (np.array([0.5, 0.7]),),
     (np.array([1.8, 0.3]),))
case(multiple_returns, (np.array([1.5, 2.0]),), (np.array([-1.5, -2.0]),),
     (np.array([0.3, -0.2]),))
case(while_true_break, (rn(3),), (fl(),))
case(while_with_continue, (np.array([0.5, -0.3, 1.2]),), (np.array([-0.4]),))
case(nested_loop_break_inner, (np.array([[0.5, 1.5, 0.2], [0.3, 0.4, 0.6]]),),
     (np.array([[1.4, 0.2]]),))
case(return_from_nested_loop, (np.array([[0.5, 0.4], [1.6, 0.3]]),),
     (np.array([[0.2, 0.3], [0.1, -0.4]]),))


# ======================================================================================
# Tuple / list / dict literals, unpacking, list building
# ======================================================================================


def tuple_unpack(x):
    a, b = np.sin(x), np.cos(x)
    return np.sum(a * b + a)


def swap_in_loop(x, y):
    for _ in range(3):
        x, y = y, x + 0.5 * y
    return x * y


def shape_unpack(m):
    rows, cols = m.shape
    return m.sum() / (rows * cols) + m[rows - 1, cols - 1] ** 2


def append_then_stack(x):
    out = []
    for i in range(3):
        out.append(x * i + np.sin(x))
    return np.stack(out).sum(axis=0)


def append_then_builtin_sum(m):
    parts = []
    for row in m:
        parts.append(row @ row)
    return sum(parts)


def list_literal_indexing(x):
    ys = [x, x * 2.0, x ** 2]
    return ys[0] * ys[-1] + ys[1]


def dict_literal(x):
    d = {"a": x, "b": x * x, "c": 3.0}
    return d["a"] * d["b"] + d["c"] * d["a"]


def several_outputs(x):
    return x.sum(), (x * x).sum()


def nested_unpack(x):
    (a, b), c = (x, 2.0 * x), 3.0 * x
    return np.sum(a * b * c)


def list_comprehension(x):
    return sum([v * v for v in x])


def append_then_index(x):
    hist = []
    h = x
    for _ in range(4):
        h = np.sin(h) + x
        hist.append(h)
    return hist[-1] * hist[0] + hist[2]


def tuple_return_unpacked(x):
    mu, sigma = mean_and_std(x)
    return (x - mu) / sigma


def mean_and_std(x):
    mu = np.mean(x)
    sigma = np.sqrt(np.mean((x - mu) ** 2) + 1e-3)
    return mu, sigma


def output_list_and_dict(x):
    return [x * 2.0, {"s": np.sum(x), "t": (x[0], x[1] ** 2)}]


case(tuple_unpack, (rn(3),), (fl(),))
case(swap_in_loop, (fl(), fl()), (rn(3), rn(3)))
case(shape_unpack, (rn(2, 3),), (rn(4, 1),))
case(append_then_stack, (rn(3),), (rn(2, 2),))
case(append_then_builtin_sum, (rn(3, 2),), (rn(1, 4),))
case(list_literal_indexing, (rn(3),), (fl(),))
case(dict_literal, (rn(2),), (fl(),))
case(several_outputs, (rn(3),), (rn(2, 2),))
case(nested_unpack, (rn(3),),)
case(list_comprehension, (rn(4),), (rn(3, 2),))
case(append_then_index, (rn(3),), (fl(),))
case(tuple_return_unpacked, (rn(4),), (rn(2, 3),))
case(output_list_and_dict, (rn(3),),)


# ======================================================================================
# Subscripts, slices, newaxis, boolean masks, integer-array indexing
# ======================================================================================


def basic_indexing(x):
    return x[0] * x[-1] + x[1, 2] * x[-1, -2]


def strided_slices(x):
    return np.sum(x[::2] * x[1::2]) + x[::-1][0] * x[1:-1].sum()


def newaxis_outer(x, y):
    z = x[:, None] * y[None, :] + x[:, np.newaxis]
    return np.sum(np.tanh(z))


def boolean_mask(x):
    return np.sum(x[x > 0] ** 2) - np.sum(x[x < 0])


def repeated_integer_index(x):
    idx = np.array([0, 2, 2, 1, 0])
    return np.sum((x[idx] * x[idx]).T * np.arange(5))


def fancy_2d_index(m):
    return np.sum(m[[0, 1, 1], [2, 0, 0]] ** 2) + m[[1, 0]].sum()


def block_slices(m):
    return np.sum(m[1:, :2] @ m[:2, 1:])


def ellipsis_and_negative_step(x):
    return np.sum(x[..., 0] * x[..., -1]) + np.sum(x[:, ::-2] ** 2)


def index_with_computed_int(x):
    n = x.shape[0]
    mid = n // 2
    return x[mid] * x[n - 1] + x[mid - 1]


def mask_from_other_array(x, y):
    keep = y > 0.5
    return np.sum(np.exp(x[keep]))


def row_gather(table, ids):
    """Embedding lookup with an integer id array (ids are constants)."""
    return np.sum(np.tanh(table[ids]) ** 2)


case(basic_indexing, (rn(3, 4),), (rn(2, 3),))
case(strided_slices, (rn(6),), (rn(4, 2),))
case(newaxis_outer, (rn(3), rn(4)), (rn(1), rn(2)))
case(boolean_mask, (rn(5),), (rn(3, 3),))
case(repeated_integer_index, (rn(3),), (rn(3, 2),))
case(fancy_2d_index, (rn(2, 3),), (rn(3, 4),))
case(block_slices, (rn(3, 3),), (rn(4, 4),))
case(ellipsis_and_negative_step, (rn(2, 5),), (rn(3, 2),))
case(index_with_computed_int, (rn(5),), (rn(2, 3),))
case(mask_from_other_array, (rn(4), np.array([0.1, 0.9, 0.7, 0.2])), pos=0)
case(row_gather, (rn(5, 3), np.array([0, 3, 3, 4])), (rn(4, 2), np.array([[1, 1], [0, 2]])),
     pos=0)


# ======================================================================================
# Index and slice assignment, augmented assignment
# ======================================================================================


def fill_zeros_rows(x):
    out = np.zeros((3, x.shape[0]))
    out[0] = x
    out[1] = x ** 2
    out[2, :] = np.sin(x)
    return np.sum(out * out.sum(axis=1, keepdims=True))


def slice_augmented(x):
    y = x.copy()
    y[1:3] += x[:2] * 2.0
    y[-1] *= y[0]
    return np.sum(y ** 2)


def column_assignment(m):
    y = np.zeros_like(m)
    y[:, 0] = m[:, 1]
    y[:, 1:] = m[:, :-1] * 2.0
    return np.sum(y * m)


def every_augmented_operator(x, a):
    """a is a square matrix for ``@=``."""
    y = x + 1.0
    y += x
    y -= 0.5
    y *= x
    y /= 2.0
    y **= 2
    z = a.copy()
    z @= a
    w = x * 3.0
    w //= 1.0
    w %= 1.0
    return np.sum(y) + np.sum(z) + np.sum(w * x)


def copy_then_set_element(x):
    y = np.array(x)
    y[0] = 0.0
    y[2] = x[1] * x[0]
    return np.sum(y * x)


def elementwise_fill_loop(x):
    n = x.shape[0]
    out = np.zeros(n)
    for i in range(n):
        out[i] = x[i] * x[n - 1 - i]
    return out


def index_augmented_in_loop(x):
    y = np.ones_like(x)
    for i in range(x.shape[0]):
        y[i] *= x[i] + 2.0
        y[i] += y[i - 1] * 0.5
    return np.sum(y)


def overwrite_then_read(x):
    y = np.zeros((2, 3))
    y[0] = x
    z = y[0] * 2.0
    y[0] = np.exp(x)
    y[1] = z + y[0]
    return y.sum()


def masked_assignment(x):
    y = x.copy()
    y[y < 0] = 0.0
    return np.sum(y * y)


def scalar_augmented(a, b):
    c = a
    c += b
    c *= a
    c -= b * b
    c /= 1.0 + a * a
    c **= 2
    return c


def set_with_integer_array(x):
    y = np.zeros(5)
    y[np.array([0, 3])] = x[:2]
    y[1:3] = x[1] * x[2]
    return np.sum(y * np.arange(1, 6))


case(fill_zeros_rows, (rn(3),), (rn(1),))
case(slice_augmented, (rn(4),), (rn(5, 2),))
case(column_assignment, (rn(3, 3),), (rn(2, 4),))
case(every_augmented_operator,
     (np.array([0.4, 1.3, -0.7]), rn(2, 2)), (np.array([[0.3, 1.6], [-0.6, 2.2]]), rn(3, 3)))
case(copy_then_set_element, (rn(3),), (rn(4),))
case(elementwise_fill_loop, (rn(3),), (rn(1),), (rn(4),))
case(index_augmented_in_loop, (rn(3),), (rn(1),))
case(overwrite_then_read, (rn(3),),)
case(masked_assignment, (rn(5),), (rn(2, 3),))
case(scalar_augmented, (fl(), fl()), (1.3, -0.4))
case(set_with_integer_array, (rn(3),), (rn(4),))


# ======================================================================================
# Attributes and methods of arrays
# ======================================================================================


def gram_and_column_sums(m):
    g = m.T @ m
    return g.sum(axis=0) * m.mean()


def reshape_both_forms(x):
    a = x.reshape(-1)
    b = x.reshape((3, 2))
    c = x.reshape(2, 3)
    return np.sum(a) * np.sum(b[0]) + np.sum(c[:, 1] ** 2)


def dot_method(m, v):
    return m.dot(v).dot(v)


def max_and_std(x):
    return x.max() * x.std() + x.min()


def astype_and_clip(x):
    y = x.astype(np.float64)
    return np.sum(y.clip(-1.0, 1.0) ** 2)


def ndim_dependent(x):
    if x.ndim == 2:
        return x.sum(axis=1).prod()
    return x.prod()


def method_chain(x):
    return x.T.reshape(-1).cumsum().mean()


def transpose_swap_squeeze(x):
    y = x.transpose(1, 0, 2).swapaxes(0, 2)
    return np.sum(y.squeeze() ** 2) + x.var()


def ravel_flatten_trace(m):
    return m.ravel()[1] + m.flatten().sum() + m.trace() + m.diagonal().prod()


def size_and_shape_attrs(x):
    return x.sum() / x.size + x.shape[-1] * x.mean(axis=-1).sum()


case(gram_and_column_sums, (rn(3, 2),), (rn(4, 4),))
case(reshape_both_forms, (rn(6),), (rn(2, 3),))
case(dot_method, (rn(3, 3), rn(3)),)
case(max_and_std, (distinct(5),), (distinct(2, 3),))
case(astype_and_clip, (np.array([0.5, -1.5, 0.2, 2.3]),),)
case(ndim_dependent, (rn(2, 3),), (rn(3),))
case(method_chain, (rn(3, 2),),)
case(transpose_swap_squeeze, (rn(2, 1, 3),),)
case(ravel_flatten_trace, (rn(3, 3),),)
case(size_and_shape_attrs, (rn(2, 3),), (rn(4),))


# ======================================================================================
# Calls to other module-level functions, globals, closures, local functions
# ======================================================================================


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def dense(x, w, b=None, activation="tanh"):
    z = x @ w
    if b is not None:
        z = z + b
    if activation == "tanh":
        return np.tanh(z)
    if activation == "sigmoid":
        return sigmoid(z)
    return z


def two_layer_net(x, w1, b1, w2):
    h = dense(x, w1, b1)
    out = dense(h, w2, activation="sigmoid")
    return out.sum()


def softplus(x):
    return logaddexp_helper(x, 0.0 * x)


def logaddexp_helper(a, b):
    m = np.maximum(a, b)
    return m + np.log(np.exp(a - m) + np.exp(b - m))


def helper_calls_helper(x):
    return np.sum(softplus(x) * sigmoid(x))


def power_recursive(x, n):
    if n == 0:
        return 1.0 + 0.0 * x
    return x * power_recursive(x, n - 1)


def helper_in_loop(x):
    for _ in range(3):
        x = sigmoid(x) * 1.5 + x * 0.1
    return np.sum(x)


def reads_globals(x):
    y = x * SCALE + OFFSET
    return np.sum((y @ PROJ) ** 2) + N_STEPS * EPS_NORM


def make_scaled(c):
    def scaled(x):
        return np.sum(c * np.sin(x) * x)
    return scaled


scaled_by_three = make_scaled(3.0)


def make_polynomial(coeffs):
    def poly(x):
        y = 0.0 * x
        for k in range(len(coeffs)):
            y = y + coeffs[k] * x ** k
        return np.sum(sigmoid(y))
    return poly


cubic_poly = make_polynomial(np.array([0.5, -1.0, 0.3, 0.2]))


def nested_def(x):
    def sq(v):
        return v * v

    def shifted(v, s=1.0):
        return sq(v + s)
    return np.sum(sq(x) + shifted(x) + shifted(x, s=-2.0))


def local_lambdas(x, y):
    gauss = lambda v: np.exp(-v * v)
    mix = lambda a, b: a * b + a
    return np.sum(mix(gauss(x), y))


def keyword_call_to_helper(x, w):
    return np.sum(dense(x, w=w, activation="linear") ** 2)


def helper_with_scalar_param(x, temperature):
    return np.sum(softmax_temp(x, temperature=temperature) * x)


def softmax_temp(x, temperature=1.0):
    z = x / temperature
    z = z - np.max(z)
    e = np.exp(z)
    return e / np.sum(e)


case(two_layer_net, (rn(4, 3), rn(3, 5) * 0.5, rn(5), rn(5, 2) * 0.5),)
case(helper_calls_helper, (rn(4),), (rn(2, 3),))
case(power_recursive, (rn(3), 0), (rn(3), 1), (fl(), 4))
case(helper_in_loop, (rn(3),), (fl(),))
case(reads_globals, (rn(3),), (rn(2, 3),))
case(scaled_by_three, (rn(3),), (fl(),))
case(cubic_poly, (rn(4),),)
case(nested_def, (rn(3),), (fl(),))
case(local_lambdas, (rn(3), rn(3)), (rn(2, 2), fl()))
case(keyword_call_to_helper, (rn(2, 3), rn(3, 2)),)
case(helper_with_scalar_param, (distinct(4), 0.7), (distinct(3), 2.0))


# ======================================================================================
# math functions and builtins on Python floats
# ======================================================================================


def math_mix(x):
    return math.sin(x) * math.exp(-x) + math.log(1.0 + x * x) + math.sqrt(x * x + 1.0) \
        + math.tanh(x) * math.cos(2.0 * x)


def math_two_args(y, x):
    return math.atan2(y, x) + math.hypot(x, y) + math.pow(abs(x) + 1.0, y)


def math_log_family(x):
    base2 = math.log(x, 2.0)  # noqa: FURB163
    return base2 + math.log1p(x) + math.log10(x) + math.log2(x) + math.expm1(-x)


def builtins_scalar(x, y):
    return abs(x - y) + max(x, y) * min(x, y) + float(x) * 2.0


def builtin_sum_and_max_of_list(xs):
    return sum(xs) * max(xs) + min(xs[0], xs[1], 0.0)


def builtins_on_arrays(x):
    return float(np.sum(x ** 2)) + abs(x).sum() + sum(x)


def math_trig_inverse(x):
    return math.asin(x) + math.acos(x * 0.5) + math.atan(x) * math.sinh(x) + math.cosh(x) \
        + math.erf(x) + math.tan(x)


case(math_mix, (0.7,), (-1.3,))
case(math_two_args, (0.5, 1.2), (-1.1, -0.4))
case(math_log_family, (0.8,), (2.5,))
case(builtins_scalar, (1.3, -0.4), (-0.6, 0.9))
case(builtin_sum_and_max_of_list, ([1.3, 0.4, -0.5],), ([-1.0, -2.0, 0.7, 1.9],))
case(builtins_on_arrays, (rn(4),), (rn(2),))
case(math_trig_inverse, (0.4,), (-0.3,))


# ======================================================================================
# NumPy models
# ======================================================================================


def mlp_layer(x, w, b):
    return np.sum(np.maximum(x @ w + b, 0.0) ** 2)


def softmax(z):
    z = z - np.max(z, axis=-1, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=-1, keepdims=True)


def softmax_output(z):
    return softmax(z)


def log_softmax(z):
    m = np.max(z, axis=-1, keepdims=True)
    shifted = z - m
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


def logsumexp(z):
    m = np.max(z)
    return m + np.log(np.sum(np.exp(z - m)))


def cross_entropy(logits, labels):
    """labels are integer class ids (constants)."""
    lp = log_softmax(logits)
    n = logits.shape[0]
    return -np.mean(lp[np.arange(n), labels])


def cross_entropy_onehot(logits, onehot):
    return -np.sum(onehot * log_softmax(logits)) / logits.shape[0]


def attention(q, k, v):
    d = q.shape[-1]
    scores = q @ k.T / np.sqrt(d)
    return softmax(scores) @ v


def layer_norm(x, gamma, beta):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(var + EPS_NORM) + beta


def rnn_unroll(xs, wx, wh, h0):
    h = h0
    hs = []
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ wx + h @ wh)
        hs.append(h)
    return np.sum(np.stack(hs) ** 2)


def gaussian_log_likelihood(x, mu, log_sigma):
    sigma = np.exp(log_sigma)
    z = (x - mu) / sigma
    return np.sum(-0.5 * z ** 2 - log_sigma - 0.5 * np.log(2.0 * np.pi))


def where_select(x, y):
    return np.sum(np.where(x > y, x * y, x - y ** 2))


def relu_network(x, w1, w2):
    h = np.maximum(x @ w1, 0)
    return np.sum(np.maximum(h @ w2, 0.0))


def clipped_loss(pred, target):
    r = np.clip(pred - target, -1.0, 1.0)
    return np.mean(r ** 2)


def normalize_rows(m):
    n = np.linalg.norm(m, axis=1, keepdims=True)
    return np.sum((m / n) * np.arange(m.shape[1]))


def linear_solve_loss(a, b):
    x = np.linalg.solve(a, b)
    return np.sum(x ** 2)


def inverse_and_det(a):
    return np.sum(np.linalg.inv(a)) + np.log(np.linalg.det(a))


def einsum_bilinear(x, w, y):
    return np.einsum("bi,ij,bj->b", x, w, y)


def concat_stack_split(a, b):
    c = np.concatenate([a, b], axis=0)
    s = np.stack([a, b], axis=-1)
    p, q = np.split(c, 2)
    return np.sum(s[..., 0] * s[..., 1]) + np.sum(p * q ** 2) + np.sum(c)


def cumsum_var_prod(x):
    return np.sum(np.cumsum(x) ** 2) + np.var(x) * np.prod(x)


def tile_repeat_flip(x):
    t = np.tile(x, 2)
    r = np.repeat(x, 3)
    return np.sum(t * np.flip(t)) + np.sum(r * np.arange(r.shape[0]))


def diag_trace_triu(m):
    return np.sum(np.diag(np.diag(m))) * np.trace(m) + np.sum(np.triu(m) ** 2) \
        + np.sum(np.tril(m, -1))


def take_and_tensordot(a, b):
    t = np.take(a, np.array([2, 0, 2]), axis=1)
    return np.sum(np.tensordot(t, b, axes=([1], [0])) ** 2)


def outer_inner(x, y):
    return np.sum(np.outer(x, y) ** 2) + np.inner(x, x) * np.inner(y, y)


def sorted_weights(x):
    s = np.sort(x)
    return np.sum(s * np.arange(1, x.shape[0] + 1))


def logaddexp_arctan2(x, y):
    return np.sum(np.logaddexp(x, y) + np.arctan2(y, x))


def elementwise_zoo(x):
    """x in (0.5, 2)."""
    return np.sum(np.log1p(x) + np.sqrt(x) + np.cbrt(x) + np.square(x) + np.reciprocal(x)
                  + np.arcsinh(x) + np.expm1(-x) + np.log2(x) + np.log10(x) + np.exp2(x)
                  + np.sinh(x) * np.cosh(x) + np.arctan(x) + np.hypot(x, 1.0))


def unit_interval_zoo(x):
    """x in (-0.8, 0.8)."""
    return np.sum(np.arcsin(x) + np.arccos(x) + np.arctanh(x) + np.tan(x) + np.sinc(x + 0.3))


def power_iteration_normed(a, v):
    for _ in range(5):
        v = a @ v
        v = v / np.linalg.norm(v)
    return v @ a @ v


def batch_matmul_mean(x, w):
    return np.mean(np.tanh(np.matmul(x, w)), axis=(0, 2)).sum()


def polynomial_features(x, w):
    feats = [x ** k for k in range(4)]
    f = np.stack(feats, axis=-1)
    return np.sum(np.dot(f, w))


def kl_divergence(logits_p, logits_q):
    p = softmax(logits_p)
    return np.sum(p * (log_softmax(logits_p) - log_softmax(logits_q)))


def gru_like_cell(x, h, wz, wh):
    xh = np.concatenate([x, h])
    z = sigmoid(wz @ xh)
    cand = np.tanh(wh @ xh)
    return np.sum((1.0 - z) * h + z * cand)


def mse_with_l2(w, x, y, lam):
    pred = x @ w
    return np.mean((pred - y) ** 2) + lam * np.sum(w * w)


def quadratic_form_slogdet(a, x):
    _sign, logdet = np.linalg.slogdet(a)
    return x @ np.linalg.solve(a, x) + logdet


def pairwise_sq_distances(x):
    sq = np.sum(x * x, axis=1)
    d = sq[:, None] + sq[None, :] - 2.0 * x @ x.T
    return np.sum(np.exp(-d))


def average_pool_1d(x):
    return np.mean(x.reshape(-1, 2), axis=1) @ np.arange(x.shape[0] // 2)


def hstack_vstack_diff(a, b):
    h = np.hstack([a, b])
    v = np.vstack([a, b])
    return np.sum(np.diff(h, axis=1) ** 2) + np.sum(v[:, 0] * v[:, -1])


def minimum_maximum_soft(x, y):
    return np.sum(np.minimum(x, y) * np.maximum(x, y) + np.fmax(x, 0.1) * np.fmin(y, 0.2))


def mean_std_axis(x):
    return np.sum(np.std(x, axis=0) + np.mean(x, axis=1).max() + np.max(x, axis=0))


def average_weighted(x, w):
    return np.average(x, weights=w) * np.sum(w)


def expand_broadcast_moveaxis(x):
    y = np.expand_dims(x, 0)
    z = np.broadcast_to(y, (3,) + x.shape)
    return np.sum(np.moveaxis(z, 0, -1) * np.arange(3))


def roll_and_pad(x):
    r = np.roll(x, 1)
    p = np.pad(x, 1)
    return np.sum(r * x) + np.sum(p[:-2] * p[2:])


case(mlp_layer, (rn(4, 3), rn(3, 5), rn(5)),)
case(softmax_output, (rn(4),), (rn(3, 5),))
case(log_softmax, (rn(4),), (rn(2, 3),))
case(logsumexp, (distinct(5),), (distinct(2, 3),))
case(cross_entropy, (rn(4, 3), np.array([0, 2, 1, 2])), (rn(2, 5), np.array([4, 4])), pos=0)
case(cross_entropy_onehot, (rn(3, 4), np.eye(4)[[0, 3, 1]]), pos=0)
case(attention, (rn(3, 4), rn(5, 4), rn(5, 2)), (rn(1, 2), rn(1, 2), rn(1, 3)))
case(layer_norm, (rn(3, 4), pos(4), rn(4)), (rn(5), pos(5), rn(5)))
case(rnn_unroll, (rn(4, 3), rn(3, 2) * 0.5, rn(2, 2) * 0.5, rn(2)),
     (rn(1, 3), rn(3, 2) * 0.5, rn(2, 2) * 0.5, rn(2)))
case(gaussian_log_likelihood, (rn(5), rn(5), rn(5) * 0.3), (rn(4), fl(), fl(-0.5, 0.5)))
case(where_select, (rn(5), rn(5)), (rn(3, 2), rn(2)))
case(relu_network, (rn(4, 3), rn(3, 6), rn(6, 2)),)
case(clipped_loss, (np.array([0.3, 2.0, -1.9, 0.1]), np.array([0.1, 0.2, 0.3, 0.5])),)
case(normalize_rows, (rn(3, 4),),)
case(linear_solve_loss, (wellcond(3), rn(3)), (wellcond(4), rn(4, 2)))
case(inverse_and_det, (wellcond(3),), (spd(2),))
case(einsum_bilinear, (rn(4, 3), rn(3, 2), rn(4, 2)),)
case(concat_stack_split, (rn(4), rn(4)), (rn(2, 3), rn(2, 3)))
case(cumsum_var_prod, (rn(5),), (pos(3),))
case(tile_repeat_flip, (rn(3),),)
case(diag_trace_triu, (rn(3, 3),), (rn(4, 4),))
case(take_and_tensordot, (rn(2, 3), rn(3, 4)),)
case(outer_inner, (rn(3), rn(4)),)
case(sorted_weights, (distinct(5),),)
case(logaddexp_arctan2, (rn(4), rn(4)), (rn(2, 2), rn(2)))
case(elementwise_zoo, (pos(4),), (pos(2, 2),))
case(unit_interval_zoo, (unit(5),),)
case(power_iteration_normed, (spd(3), rn(3)),)
case(batch_matmul_mean, (rn(2, 3, 4), rn(4, 2)),)
case(polynomial_features, (rn(5), rn(4)),)
case(kl_divergence, (rn(4), rn(4)), (rn(2, 3), rn(2, 3)))
case(gru_like_cell, (rn(2), rn(3), rn(3, 5) * 0.5, rn(3, 5) * 0.5),)
case(mse_with_l2, (rn(3), rn(6, 3), rn(6), 0.1), (rn(3, 2), rn(4, 3), rn(4, 2), 0.5))
case(quadratic_form_slogdet, (spd(3), rn(3)),)
case(pairwise_sq_distances, (rn(4, 2) * 0.5,),)
case(average_pool_1d, (rn(6),),)
case(hstack_vstack_diff, (rn(2, 3), rn(2, 3)), (rn(3, 2), rn(3, 2)))
case(minimum_maximum_soft, (distinct(5), distinct(5) + 0.05),)
case(mean_std_axis, (distinct(3, 4),),)
case(average_weighted, (rn(4), pos(4)),)
case(expand_broadcast_moveaxis, (rn(2, 3),),)
case(roll_and_pad, (rn(5),),)


# ======================================================================================
# Tuple / list / dict arguments differentiated as a whole
# ======================================================================================


def dict_params_mlp(params, x):
    h = np.tanh(x @ params["w1"] + params["b1"])
    return np.sum(h @ params["w2"])


def tuple_params(wb, x):
    w, b = wb
    return np.sum(sigmoid(x @ w + b) ** 2)


def list_of_weights(ws, x):
    h = x
    for w in ws:
        h = np.sin(h @ w)
    return np.sum(h)


def nested_container_params(p, x):
    (a, b), c = p["pair"], p["scale"]
    return np.sum(a * x + b * x ** 2) * c


def tuple_of_floats(t):
    a, b, c = t
    return a * b + math.sin(c) * a


case(dict_params_mlp, ({"w1": rn(3, 4), "b1": rn(4), "w2": rn(4, 2)}, rn(5, 3)), pos=0)
case(tuple_params, ((rn(3, 2), rn(2)), rn(4, 3)), pos=0)
case(list_of_weights, ([rn(3, 3) * 0.5, rn(3, 2) * 0.5], rn(2, 3)), ([rn(2, 2)], rn(2)), pos=0)
case(nested_container_params, ({"pair": (rn(3), rn(3)), "scale": 1.5}, rn(3)), pos=0)
case(tuple_of_floats, ((fl(), fl(), fl()),), pos=0)


# ======================================================================================
# Loops: nesting, data-dependent trip counts, first definitions inside loops and branches
# ======================================================================================


def last_value_of_loop(x, n):
    """``last`` is first defined inside the loop (n >= 1)."""
    for i in range(n):
        last = x * (i + 1.0)
    return np.sum(last * x)


def defined_in_branch_in_loop(x):
    s = 0.0
    for i in range(3):
        if i == 1:
            t = x * 2.0
            s = s + t
    return np.sum(s * t)


def branch_in_loop_first_iteration(x):
    for i in range(3):
        if i == 0:
            y = x * 2.0
        else:
            y = y * x
    return np.sum(y * x)


def continue_in_nested_loops(m):
    s = 0.0
    for row in m:
        for e in row:
            if e < 0:
                continue
            s = s + e * e
    return s


def while_inside_for(m):
    """A data-dependent number of halvings per row."""
    out = 0.0
    for row in m:
        s = row
        while np.sum(s * s) > 1.0:
            s = s * 0.5
        out = out + np.sum(s * row)
    return out


def for_inside_while(x):
    k = 0
    s = x
    while k < 2:
        for i in range(k + 1):
            s = np.sin(s) * 1.1
        k = k + 1
    return np.sum(s)


def triangular_double_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(i):
            s = s + x[i] * x[j]
    return s


def while_return_when_small(x):
    y = x
    while True:
        y = y * 0.5
        if np.sum(y * y) < 0.5:
            return np.sum(y * x)


def while_break_when_small(x):
    y = x
    while True:
        y = y * 0.7
        if np.sum(y * y) < 0.5:
            break
    return np.sum(y)


def break_in_while_in_for(x):
    s = 0.0
    for v in x:
        t = v
        while True:
            t = t * 0.5
            if abs(t) < 0.3:
                break
        s = s + t * v
    return s


def first_pair_over_threshold(x):
    """An early return from a doubly nested loop."""
    for i in range(x.shape[0]):
        for j in range(x.shape[0]):
            if x[i] * x[j] > 1.0:
                return x[i] * x[j]
    return x[0]


def return_row_norm_in_loop(m):
    for row in m:
        if row[0] > 1.0:
            return np.sum(row * row)
    return np.sum(m)


def while_float_counter(x):
    t = 0.0
    y = x
    while t < 1.0:
        y = y + np.sin(y) * 0.25
        t = t + 0.25
    return np.sum(y)


def ifexp_in_loop(x):
    s = 0.0
    for v in x:
        s = s + (v * v if v > 0 else -v * 0.5)
    return s


def nested_conditional_expression(x):
    return np.sum(x * (2.0 if x.sum() > 0 else 3.0 if x.min() > -1.0 else 4.0))


def loop_over_columns(m):
    s = 0.0
    for col in m.T:
        s = s + np.prod(col)
    return s


def loop_over_function_result(m):
    s = 0.0
    for v in np.tanh(m):
        s = s + np.sum(v ** 2)
    return s


def loop_over_reversed_list(xs):
    s = 0.0
    for x in reversed(xs):
        s = s * 0.5 + x
    return np.sum(s)


def zip_neighbours(x):
    s = 0.0
    for a, b in zip(x, x[1:]):  # noqa: RUF007
        s = s + (b - a) ** 2
    return s


def enumerate_zip(xs, ys):
    s = 0.0
    for i, (a, b) in enumerate(zip(xs, ys)):
        s = s + i * a * b
    return np.sum(s)


def len_of_list_loop(xs):
    s = 0.0
    for i in range(len(xs)):
        s = s + np.sum(xs[i] * xs[len(xs) - 1 - i])
    return s


case(last_value_of_loop, (rn(3), 1), (rn(3), 3))
case(defined_in_branch_in_loop, (rn(3),), (fl(),))
case(branch_in_loop_first_iteration, (rn(3),), (fl(),))
case(continue_in_nested_loops, (np.array([[0.5, -0.4, 0.2], [-0.3, 1.4, 0.6]]),),)
case(while_inside_for, (np.array([[1.3, 0.2], [2.3, 1.1], [0.3, 0.1]]),),)
case(for_inside_while, (rn(3),), (fl(),))
case(triangular_double_loop, (rn(4),), (rn(1),))
case(while_return_when_small, (np.array([1.3, 2.2]),), (np.array([0.3, 0.2]),))
case(while_break_when_small, (np.array([1.3, 2.2]),), (np.array([0.3, 0.2]),))
case(break_in_while_in_for, (np.array([1.4, 0.2, 3.3]),), (1.3 * np.ones(1),))
case(first_pair_over_threshold, (np.array([0.5, 0.9, 1.6]),), (np.array([0.5, 0.4]),))
case(return_row_norm_in_loop, (np.array([[0.5, 0.2], [1.5, 0.3]]),),
     (np.array([[0.5, 0.2], [0.5, 0.3]]),))
case(while_float_counter, (rn(3),), (fl(),))
case(ifexp_in_loop, (np.array([0.5, -0.4, 1.2]),),)
case(nested_conditional_expression, (np.array([0.5, 0.2, 0.1]),), (np.array([0.3, -1.2, 0.8]),),
     (np.array([-0.3, -2.2, 0.1]),))
case(loop_over_columns, (rn(2, 3),),)
case(loop_over_function_result, (rn(3, 2),),)
case(loop_over_reversed_list, ([rn(2), rn(2)],),)
case(zip_neighbours, (rn(5),), (rn(1),))
case(enumerate_zip, (rn(4), rn(4)),)
case(len_of_list_loop, ([rn(2), rn(2), rn(2)],),)


# ======================================================================================
# Helpers, recursion, closures over locals
# ======================================================================================


def first_under_limit(row):
    s = 0.0
    for e in row:
        if e > 1.0:
            break
        s = s + e * e
    return s


def sum_of_prefixes(m):
    """A helper whose loop breaks, called once per row."""
    t = 0.0
    for row in m:
        t = t + first_under_limit(row)
    return t


def pair_step(a, b):
    return np.sin(a) + b, a * b + 1.0


def iterate_pair_step(x):
    a = x
    b = x * 0.0
    for _ in range(3):
        a, b = pair_step(a, b)
    return np.sum(a * b)


def alternating_recursion(x, n):
    if n <= 0:
        return x
    if n % 2 == 0:
        return alternating_recursion(np.sin(x), n - 1) * 1.5
    return alternating_recursion(x * x, n - 1) + x


def discounted_tail(x):
    """Recursion on slices."""
    if x.shape[0] == 1:
        return x[0]
    return x[0] + 0.5 * discounted_tail(x[1:]) * x[0]


def recursive_halves(x, depth):
    if depth == 0:
        return np.tanh(x)
    left = recursive_halves(x[: x.shape[0] // 2], depth - 1)
    right = recursive_halves(x[x.shape[0] // 2:], depth - 1)
    return np.sum(left) * np.sum(right) + np.sum(x)


def closure_over_local(x):
    c = x * 2.0

    def times_c(v):
        return v * c
    return np.sum(times_c(x) + times_c(c))


def activation_by_name(x, act):
    if act == "relu":
        return np.sum(np.maximum(x, 0.0))
    return np.sum(np.tanh(x))


def dropout_flag(x, training=True):
    if training:
        return np.sum(x * 0.5)
    return np.sum(x)


def weighted_default_global(x, w=OFFSET):
    return np.sum(x * w)


def three_inputs(x, y, z):
    return np.sum(x * y * z + np.sin(y))


case(sum_of_prefixes, (np.array([[0.5, 0.4, 0.2], [0.3, 1.4, 0.6]]),),)
case(iterate_pair_step, (rn(3),), (fl(),))
case(alternating_recursion, (rn(3), 4), (fl(), 0), (fl(), 1))
case(discounted_tail, (rn(4),), (rn(1),))
case(recursive_halves, (rn(8), 2), (rn(2), 0))
case(closure_over_local, (rn(3),), (fl(),))
case(activation_by_name, (np.array([0.5, -0.3]), "relu"), (np.array([0.5, -0.3]), "tanh"))
case(dropout_flag, (rn(3), False), (rn(3), True))
case(dropout_flag, (rn(3),), kwargs={"training": False})
case(weighted_default_global, (rn(3),), (rn(2, 3),))
case(three_inputs, (rn(3), rn(3), rn(3)), pos=(0, 2))
case(three_inputs, (rn(3), rn(3), fl()), pos=(2, 0))
case(three_inputs, (rn(3), rn(3), rn(3)), pos=1)


# ======================================================================================
# Containers built and changed inside the function
# ======================================================================================


def list_item_update(x):
    xs = [x, x * 2.0, x * 3.0]
    for i in range(3):
        xs[i] = np.sin(xs[i])
    return np.sum(xs[0] * xs[2] + xs[1])


def dict_built_incrementally(x):
    d = {}
    d["a"] = x * 2.0
    d["b"] = d["a"] ** 2
    return np.sum(d["b"])


def generator_sum(x):
    return sum(v ** 2 for v in x)


def sum_with_start(xs):
    return sum(xs, 0.5) + sum([x * 2.0 for x in xs], 1.0)


def grow_list_by_concatenation(x):
    hs = []
    for i in range(3):
        hs = hs + [x * i]
    return np.sum(hs[2] * hs[1])


def tuple_concatenation(a, b):
    t = (a,) + (b, a * b)
    return t[2] + t[1]


def dict_params_items(params):
    s = 0.0
    for name, v in params.items():  # noqa: PERF102
        s = s + np.sum(v ** 2)
    return s


def dict_params_values(params):
    return sum(np.sum(v) * 2.0 for v in params.values())


def dict_params_key_loop(params):
    s = 0.0
    for k in params:
        s = s + np.sum(np.sin(params[k]))
    return s


def enumerate_dict_items(params):
    s = 0.0
    for i, (name, v) in enumerate(params.items()):
        s = s + (i + 1.0) * np.sum(np.sin(v))
    return s


def zip_dict_keys_with_scales(params, scales):
    s = 0.0
    for k, c in zip(params, scales):
        s = s + c * np.sum(params[k] ** 2)
    return s


def zip_reversed_pairs(xs):
    s = 0.0
    for a, b in zip(xs, reversed(xs)):
        s = s + np.sum(a * b ** 2)
    return s


def pass_list_through(xs):
    ys = xs
    if len(ys) > 1:
        zs = ys
    else:
        zs = xs
    return zs


def callee_returns_the_list(xs):
    zs = pass_list_through(xs)
    return np.sum(zs[0] * zs[1] ** 2)


def dict_get_with_defaults(params, x):
    w = params.get("w", 1.0)
    b = params.get("b", x)  # absent: the default (x) is used
    return np.sum(np.tanh(w * x + b) ** 2)


def list_appended_then_indexed(x):
    hs = []
    h = x
    for _ in range(3):
        h = np.sin(h)
        hs.append(h)
    return np.sum(hs[2] ** 3 + hs[0])


def build_gram_elementwise(x):
    n = x.shape[0]
    g = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            g[i, j] = np.dot(x[i], x[j])
    return np.sum(g * g)


def chained_subscripts(x):
    return x[1][2] * x[0][0]


def strided_slice_update(x):
    y = x.copy()
    y[::2] += x[::2] ** 2
    y[-1] = y[0] * 3.0
    return np.sum(y * y)


def write_through_alias(x):
    y = x.copy()
    z = y
    z[0] = 0.0
    return np.sum(y * x)


def residual_with_anchor(x, b):
    anchor = x[0] * 3.0
    h = x + b
    return np.sum(np.tanh(h) * 2.0) + anchor


def index_plus_total(x):
    return x[0] + np.sum(x)


def corner_plus_column_totals(m):
    return m[0, 0] + np.sum(np.sum(m, axis=0) ** 2)


def item_and_float(x):
    return x.item(1) * x[0] + float(np.sum(x))


case(list_item_update, (rn(3),), (fl(),))
case(dict_built_incrementally, (rn(3),),)
case(generator_sum, (rn(3),), (rn(2, 2),))
case(sum_with_start, ([0.3, 0.6],), ([rn(2)],))
case(grow_list_by_concatenation, (rn(3),),)
case(tuple_concatenation, (1.5, 2.0), (rn(2), rn(2)))
case(dict_params_items, ({"a": rn(2), "b": rn(3)},), pos=0)
case(dict_params_values, ({"a": rn(2), "b": rn(3)},), pos=0)
case(dict_params_key_loop, ({"a": rn(2), "b": rn(3)},), pos=0)
case(dict_get_with_defaults, ({"w": rn(3)}, rn(3)), ({"w": rn(2, 3), "b": rn(3)}, rn(3)),
     pos=(0, 1))
case(list_appended_then_indexed, (rn(3),), (rn(2, 2),))
case(enumerate_dict_items, ({"a": rn(2), "b": rn(2, 3)},), pos=0)
case(zip_dict_keys_with_scales, ({"a": rn(2), "b": rn(3)}, [0.5, -1.5]), pos=(0, 1))
case(zip_reversed_pairs, ([rn(2), rn(2), rn(2)],), ([rn(3, 1), rn(1, 2)],), pos=0)
case(callee_returns_the_list, ([rn(2), rn(2)],), ([rn(2, 3), rn(3)],), pos=0)
case(build_gram_elementwise, (rn(3, 2),),)
case(chained_subscripts, (rn(2, 3),),)
case(strided_slice_update, (rn(5),), (rn(4, 2),))
case(write_through_alias, (rn(3),),)
case(residual_with_anchor, (rn(3), rn(3)),)
case(index_plus_total, (rn(3),), (rn(2, 2),))
case(corner_plus_column_totals, (rn(2, 3),), (rn(3, 1),))
case(item_and_float, (rn(3),),)


# ======================================================================================
# More NumPy
# ======================================================================================


def zero_dim_input(x):
    return x * x + np.sin(x) * np.exp(x)


def positional_axes(x):
    return np.sum(x.mean(0) * x.max(1).sum() + np.sum(x, 0) + x.sum(axis=0, keepdims=True))


def einsum_variants(a, b):
    return np.einsum("ii->", a) + np.sum(np.einsum("ij,jk->ik", a, b)) + np.einsum("ij,ij", a, a)


def cumprod_and_prod_axis(x):
    return np.sum(np.cumprod(x, axis=1)) + np.sum(np.prod(x, axis=0))


def vector_norms(x):
    return np.linalg.norm(x) + np.linalg.norm(x, ord=1) + np.linalg.norm(x, np.inf)


def matrix_norms(m):
    return np.linalg.norm(m) + np.linalg.norm(m, "fro")


def power_forms(x):
    return np.sum(x ** 0.5 + x ** 3 + x ** -1 + np.power(x, 2.5) + 2 ** x)


def builtin_max_min_of_elements(x):
    return max(x[0], x[1]) * min(x[1], x[2], x[0])


def abs_builtin_and_np(x):
    return np.sum(abs(x) * np.abs(x - 3.0))


def slogdet_sign_logdet(a):
    sign, ld = np.linalg.slogdet(a)
    return sign * ld


def batched_inv_det(a):
    return np.sum(np.linalg.inv(a)) + np.sum(np.linalg.det(a))


def sort_rows_by_argsort(x):
    idx = np.argsort(x, axis=1)
    return np.sum(np.take_along_axis(x, idx, axis=1) * np.arange(x.shape[1]))


def pick_by_argmax(x):
    return x[np.argmax(x)] * 2.0 + x[np.argmin(x)]


def meshgrid_surface(x, y):
    a, b = np.meshgrid(x, y)
    return np.sum(np.sin(a) * b)


def split_three_ways(x):
    a, b, c = np.split(x, 3)
    return np.sum(a * b * c)


def array_split_parts(x):
    parts = np.array_split(x, [1, 3])
    return np.sum(parts[0]) * np.sum(parts[2] ** 2) + np.sum(parts[1])


def array_from_scalars(a, b):
    v = np.array([a, b, a * b])
    return np.sum(v ** 2)


def array_from_rows(x):
    m = np.array([x, 2.0 * x])
    return np.sum(m @ m.T)


def full_and_full_like(x):
    y = np.full_like(x, 2.0)
    y[0] = x[1]
    z = np.full(3, x[2])
    return np.sum(y * x) + np.sum(z * z)


def rotations_and_flips(m):
    return np.sum(np.rot90(m) * np.fliplr(m).T) + np.sum(np.flipud(m) * m)


def column_stack_atleast(x):
    return np.sum(np.column_stack([x, x ** 2]) @ np.array([1.0, 2.0])) + np.sum(np.atleast_2d(x))


def dstack_squares(a, b):
    return np.sum(np.dstack([a, b]) ** 2)


case(zero_dim_input, (np.array(0.7),), (np.array(-1.3),))
case(positional_axes, (distinct(3, 4),),)
case(einsum_variants, (rn(3, 3), rn(3, 2)),)
case(cumprod_and_prod_axis, (pos(2, 3),),)
case(vector_norms, (np.array([0.5, -1.3, 2.1]),),)
case(matrix_norms, (rn(2, 3),),)
case(power_forms, (pos(3),),)
case(builtin_max_min_of_elements, (distinct(3),),)
case(abs_builtin_and_np, (np.array([0.3, -1.2, 0.8]),),)
case(slogdet_sign_logdet, (wellcond(3),),)
case(batched_inv_det, (np.stack([wellcond(3), wellcond(3)]),),)
case(sort_rows_by_argsort, (distinct(2, 3),),)
case(pick_by_argmax, (distinct(6),),)
case(meshgrid_surface, (rn(3), rn(2)),)
case(split_three_ways, (rn(6),),)
case(array_split_parts, (rn(6),),)
case(array_from_scalars, (0.5, -1.2),)
case(array_from_rows, (rn(3),),)
case(full_and_full_like, (rn(3),),)
case(rotations_and_flips, (rn(3, 3),),)
case(column_stack_atleast, (rn(3),),)
case(dstack_squares, (rn(2, 2), rn(2, 2)),)


# ======================================================================================
# Small algorithms: simulation, optimisation, sorting, scans
# ======================================================================================


def euler_ode(y0, k, n):
    """dy/dt = -k y + sin t, n explicit Euler steps."""
    y = y0
    dt = 0.1
    t = 0.0
    for _ in range(n):
        y = y + dt * (-k * y + np.sin(t))
        t = t + dt
    return y


def sgd_on_linear_model(w, xs, ys):
    """Unrolled SGD; the gradient is taken through the optimisation."""
    for x, y in zip(xs, ys):
        err = x @ w - y
        w = w - 0.05 * err * x
    return np.sum(w * w)


def manual_cumprod(x):
    y = np.ones_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] * x[i]
    return np.sum(y)


def bubble_sort_weighted(x):
    xs = [x[0], x[1], x[2]]
    for i in range(3):
        for j in range(2 - i):
            if xs[j] > xs[j + 1]:
                xs[j], xs[j + 1] = xs[j + 1], xs[j]
    return xs[0] * 1.0 + xs[1] * 2.0 + xs[2] * 3.0


def running_minimum(x):
    best = x[0]
    for v in x[1:]:
        if v < best:  # noqa: PLR1730
            best = v
    return best * 2.0


def piecewise_scan_with_return(x):
    s = 0.0
    for v in x:
        if v > 1.0:
            return s * v
        elif v < -1.0:
            s = s - v
        else:
            s = s + v * v
    return s


def score_row(v):
    if v[0] > 0:
        return np.sum(v * v)
    return np.sum(v)


def score_all_rows(m):
    """A helper with an early return, called in a loop."""
    s = 0.0
    for row in m:
        s = s + score_row(row)
    return s


def while_collect_states(x):
    hs = []
    h = x
    while len(hs) < 3:
        h = np.tanh(h) + x
        hs.append(h)
    return np.sum(np.stack(hs))


def newaxis_forms(x):
    return np.sum(x[None] * x[..., None] + x[np.newaxis, :, np.newaxis])


def update_strided_block(m):
    y = m.copy()
    y[1:3, ::2] -= m[:2, 1:] * 0.5
    return np.sum(y ** 2)


def swap_rows(m):
    m = m.copy()
    m[0], m[1] = m[1].copy(), m[0].copy()
    return np.sum(m * np.arange(m.size).reshape(m.shape))


def copy_and_update_in_loop(x):
    y = x
    for i in range(x.shape[0]):
        y = y.copy()
        y[i] = y[i] * 2.0 + y[i - 1]
    return np.sum(y * y)


def ufunc_with_out_argument(x):
    y = np.empty_like(x)
    np.multiply(x, 2.0, out=y)
    return np.sum(y * x)


case(euler_ode, (1.0, 0.5, 10), (np.array([1.0, 2.0]), 0.5, 10), (1.0, 0.5, 0))
case(sgd_on_linear_model, (rn(3), rn(4, 3), rn(4)), pos=(0, 1, 2))
case(manual_cumprod, (rn(4),), (rn(1),))
case(bubble_sort_weighted, (np.array([0.5, -0.3, 0.9]),), (np.array([0.9, 0.5, -0.3]),))
case(running_minimum, (np.array([0.5, -0.3, 0.9, -1.2, 0.2]),), (np.array([-0.5, 0.3]),))
case(piecewise_scan_with_return, (np.array([0.5, -1.3, 0.2, 1.4]),),
     (np.array([0.5, -1.3, 0.2]),))
case(score_all_rows, (np.array([[0.5, 0.2], [-0.5, 0.3], [0.4, 0.9]]),),)
case(while_collect_states, (rn(3),), (fl(),))
case(newaxis_forms, (rn(3),),)
case(update_strided_block, (rn(3, 3),),)
case(swap_rows, (rn(2, 3),),)
case(copy_and_update_in_loop, (rn(3),),)
case(ufunc_with_out_argument, (rn(3),),)


# ======================================================================================
# float32 inputs (check_grads converts to float64; see test_corpus for dtype tests)
# ======================================================================================


def f32_mlp(x, w):
    return np.sum(np.tanh(x @ w) * x.sum())


def f32_elementwise(x):
    return np.sum(np.exp(-x * x) + np.log1p(x * x))


case(f32_mlp, (rn(2, 3).astype(np.float32), rn(3, 3).astype(np.float32)),)
case(f32_elementwise, (rn(4).astype(np.float32),), (rn(2, 2).astype(np.float32),))
case(layer_norm, (rn(2, 3).astype(np.float32), pos(3).astype(np.float32),
                  rn(3).astype(np.float32)),)


FUNCTIONS = list(dict.fromkeys(fn for fn, _, _, _ in CASES))
