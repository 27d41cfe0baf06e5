"""``runtime.reuse``: ``spare`` and ``add_into`` hand a dead array's memory over only when
nothing else holds the array and the result fits it. Every holder the generated code or the
user may have is tried: another name, a list (the tape), a view, an attribute; and every
misfit: a small array, a scalar, an integer or read-only array, a dtype or shape the result
does not have."""

import numpy as np
import pytest

from mindgrad.runtime import reuse
from mindgrad.runtime.reuse import LARGE, add_into, spare

N = LARGE


def test_the_counts_were_measured_here():
    # CPython with the GIL (every configuration the suite runs): reuse is on
    assert set(reuse._UNSHARED) == {0, 1, "into"}


def test_an_array_one_name_holds_is_reused():
    a = np.random.default_rng(0).standard_normal(N)
    expected = a * 2.0
    b = 2.0
    r = np.multiply(a, b, out=a) if spare(a, b) else a * b
    assert r is a
    np.testing.assert_array_equal(r, expected)
    c = np.ones(N)
    r2 = np.exp(c, out=c) if spare(c) else np.exp(c)
    assert r2 is c and np.allclose(r2, np.e)


def test_an_accumulation_is_written_in_place():
    a, e = np.ones(N), np.arange(N, dtype=float)
    a = add_into(a, e)
    b = a
    np.testing.assert_array_equal(b, 1.0 + np.arange(N))
    # held twice now (a and b): a new array
    c = add_into(a, e)
    assert c is not a and c is not b
    np.testing.assert_array_equal(b, 1.0 + np.arange(N))


@pytest.mark.parametrize("holder", ["name", "list", "view", "attribute", "dict"])
def test_an_array_held_elsewhere_is_not_reused(holder):
    a = np.ones(N)
    keep = {"name": lambda: a, "list": lambda: [a], "view": lambda: a[::2],
            "attribute": lambda: type("Box", (), {"value": a})(),
            "dict": lambda: {"a": a}}[holder]()
    b = 2.0
    r = np.multiply(a, b, out=a) if spare(a, b) else a * b
    assert r is not a
    np.testing.assert_array_equal(a, 1.0)  # untouched
    assert keep is not None


def test_a_view_is_never_written():
    base = np.ones(2 * N)
    v = base[:N]
    del base  # the view alone holds the base, yet its memory is not its own
    r = np.negative(v, out=v) if spare(v) else -v
    assert r is not v and (v == 1.0).all()


@pytest.mark.parametrize("make, other", [
    (lambda: np.ones(N - 1), 2.0),                            # too small to be worth it
    (lambda: np.ones(N, dtype=np.int64), 2),                  # not a float
    (lambda: np.ones(N, dtype=np.float32), np.ones(N)),       # the result is float64
    (lambda: np.ones(N), np.ones((3, N))),                    # the result is larger
    (lambda: np.ones(N), [2.0] * N),                          # a list operand
    (lambda: 3.0, 2.0),                                       # a number
    (lambda: np.float64(3.0), 2.0),
    (lambda: np.ones(()), 2.0),                               # 0-d: its result is a number
])
def test_a_result_that_does_not_fit_gets_new_memory(make, other):
    a = make()
    before = np.array(a, copy=True)
    r = np.multiply(a, other, out=a) if spare(a, other) else a * other
    assert r is not a
    np.testing.assert_array_equal(np.asarray(a), before)
    np.testing.assert_array_equal(r, np.multiply(before, other))


def test_a_read_only_array_is_not_written():
    a = np.ones(N)
    a.flags.writeable = False
    assert not spare(a) and add_into(a, 1.0) is not a


def test_float32_keeps_float32_and_broadcasting_operands_fit():
    a = np.ones((4, N // 4), dtype=np.float32)
    row = np.arange(N // 4, dtype=np.float32)
    r = np.add(a, row, out=a) if spare(a, row) else a + row
    assert r is a and r.dtype == np.float32
    np.testing.assert_array_equal(r[2], 1.0 + row)
