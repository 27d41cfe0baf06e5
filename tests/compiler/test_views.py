"""Which subscripts share memory follows NumPy's rules: basic indexing (slices, ``...``,
``None``, fewer integers than axes) gives a view, advanced indexing (an integer or boolean
array, a list, a mask, alone or beside slices) a copy, and an integer for every axis a number.
A write into a copy is differentiated; a write into memory another live name or the caller
really holds is refused at the user's line.

Oracles: central differences in float64 along random directions, computed here, the plain
function's own value, and the caller's arrays compared with copies taken before the call."""

import numpy as np
import pytest

import mindgrad as mg
from tests.support.inputs import Draw

r = Draw(20).normal


def numeric_derivative(fn, args, directions, eps=1e-6):
    plus = [a + eps * d for a, d in zip(args, directions)]
    minus = [a - eps * d for a, d in zip(args, directions)]
    return (fn(*plus) - fn(*minus)) / (2 * eps)


def check_against_differences(fn, args):
    """Reverse and forward mode against central differences, the value against ``fn``, and
    the caller's arrays left as they were."""
    kept = [np.copy(a) for a in args]
    rng = np.random.default_rng(5)
    directions = [rng.normal(size=np.shape(a)) for a in args]
    numeric = numeric_derivative(fn, [np.copy(a) for a in kept], directions)
    positions = tuple(range(len(args)))
    value, grads = mg.value_and_grad(fn, positions)(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for a, k in zip(args, kept):
        np.testing.assert_array_equal(a, k)
    np.testing.assert_allclose(value, fn(*[np.copy(a) for a in kept]), rtol=1e-12)
    along = sum(np.vdot(g, d) for g, d in zip(grads, directions))
    np.testing.assert_allclose(along, numeric, rtol=1e-6, atol=1e-8)
    out, tangent = mg.jvp(fn, tuple(args), tuple(directions))
    for a, k in zip(args, kept):
        np.testing.assert_array_equal(a, k)
    np.testing.assert_allclose(out, value, rtol=1e-12)
    np.testing.assert_allclose(tangent, numeric, rtol=1e-6, atol=1e-8)


# ----- advanced indexing copies: in-place operators on the copy are plain arithmetic ---------


def integer_array_copy(d, v1):
    v2 = d[np.array([0, 1, 2])]
    v2 -= np.sin(v1)
    return np.sum(v2 * v2) + np.sum(d)


def mask_and_scalar_of_a_local(x):
    v6 = np.sin(x)
    nz = v6 > 0
    v7 = v6[nz]
    v10 = v6[-3]
    v7 -= np.cos(v10)
    return np.sum(v7 * v7) + v10 * np.sum(v6)


def ellipsis_beside_an_array(x):
    a = x[..., np.array([0, 2])]
    a += x[..., 1:2] * a
    return np.sum(a * a) + np.sum(x * x)


def list_beside_a_slice(x):
    e = x[[0, 1], 1:]
    e *= np.cos(x[0, 1:])
    return np.sum(e) * np.sum(x)


def mask_in_a_name(x):
    m = x > 0.1
    y = x[m]
    y **= 2
    return np.sum(y) + np.sum(x * x)


def nonzero_of_a_local(x):
    y = np.tanh(x)
    z = y[np.nonzero(y > -0.5)]
    z -= 1.0
    return np.sum(z * z) + np.sum(y * x)


def list_of_a_local(x):
    y = np.sin(x)
    z = y[[2, 0]]
    z *= 3.0
    return np.sum(z * x[0:2]) + np.sum(y * y)


def zero_d_integer_array(x):
    y = x * 2.0
    row = y[np.array(1)]
    row += 1.0
    return np.sum(row * row) + np.sum(y * x)


def copies_by_method_and_by_array(x):
    z = x.copy()
    z += 1.0
    w = np.array(x)
    w *= z
    return np.sum(w * x)


def number_of_every_axis(x):
    c = x[1, 2]
    c *= c
    return c + np.sum(x * x)


def number_of_a_local_vector(x):
    v6 = np.sin(x)
    v10 = v6[-3]
    v10 *= v10
    return v10 + np.sum(v6 * x)


def number_of_a_local_matrix(m):
    y = np.tanh(m)
    c = y[1, -2]
    c -= np.sum(m)
    return c * np.sum(y)


ACCEPTED = [
    (integer_array_copy, (r(4), r(3))),
    (mask_and_scalar_of_a_local, (np.array([0.4, -0.7, 1.1, 0.3, -0.2]),)),
    (ellipsis_beside_an_array, (r(2, 3),)),
    (ellipsis_beside_an_array, (r(4, 2, 3),)),
    (list_beside_a_slice, (r(2, 3),)),
    (mask_in_a_name, (np.array([0.5, -0.3, 0.9, 0.05]),)),
    (nonzero_of_a_local, (np.array([0.5, -0.9, 0.9, 0.05]),)),
    (list_of_a_local, (r(3),)),
    (zero_d_integer_array, (r(2, 3),)),
    (copies_by_method_and_by_array, (r(3),)),
    (number_of_every_axis, (r(2, 3),)),
    (number_of_a_local_vector, (r(4),)),
    (number_of_a_local_matrix, (r(2, 3),)),
]


@pytest.mark.parametrize("fn, args", ACCEPTED)
def test_writes_into_copies_are_differentiated(fn, args):
    check_against_differences(fn, [np.copy(a) for a in args])


def test_a_write_into_a_copy_stays_float32():
    x = np.float32(r(4))
    g = mg.grad(integer_array_copy)(x, np.float32(r(3)))
    assert g.dtype == np.float32


# ----- views: the write would change another live name or the caller's array ---------------


def new_axis_view(x):
    y = x * 1.0
    v = y[None]
    v += 1.0
    return np.sum(y * x)


def row_view(m):
    y = m * 1.0
    v = y[1]
    v *= 2.0
    return np.sum(y * m)


def row_with_ellipsis(m):
    y = m * 1.0
    v = y[1, ...]
    v *= 2.0
    return np.sum(y * m)


def column_view(m):
    y = m * 1.0
    v = y[:, 0]
    v -= 1.0
    return np.sum(y * m)


def ravel_view(m):
    y = m * 1.0
    v = y.ravel()
    v *= 2.0
    return np.sum(y * m)


def real_part_of_complex(x):
    y = x * (1.0 + 0.5j)
    re = y.real
    re *= 2.0
    return np.sum(np.abs(y))


def slice_of_the_argument(x):
    v = x[1:]
    v += 1.0
    return np.sum(v * v)


def index_of_unknown_kind(x, idx):
    y = x * 1.0
    v = y[idx]
    v += 1.0
    return np.sum(y * x)


REFUSED = [
    (new_axis_view, "v += 1.0", (r(3),)),
    (row_view, "v *= 2.0", (r(2, 3),)),
    (row_with_ellipsis, "v *= 2.0", (r(2, 3),)),
    (column_view, "v -= 1.0", (r(2, 3),)),
    (ravel_view, "v *= 2.0", (r(2, 3),)),
    (real_part_of_complex, "re *= 2.0", (r(3),)),
    (slice_of_the_argument, "v += 1.0", (r(3),)),
    (index_of_unknown_kind, "v += 1.0", (r(3), slice(0, 2))),
]


@pytest.mark.parametrize("fn, line, args", REFUSED)
def test_writes_into_shared_memory_are_refused(fn, line, args):
    first = np.copy(args[0])
    for run in (lambda: mg.grad(fn)(np.copy(first), *args[1:]),
                lambda: mg.jvp(fn, (np.copy(first),) + args[1:], (first,) + args[1:])):
        with pytest.raises(mg.UnsupportedSyntaxError) as info:
            run()
        assert line in info.value.text and info.value.filename == __file__


def test_a_row_of_a_local_matrix_is_refused_when_the_run_shows_a_view():
    # x[i] is a number for a vector, a row (a view) for a matrix: the run tells
    with pytest.raises(mg.UnsupportedSyntaxError, match=r"memory of 'y'.*v holds a view") as info:
        mg.grad(row_view)(r(2, 3))
    assert "v *= 2.0" in info.value.text and info.value.filename == __file__
    check_against_differences(row_view, [r(4)])  # on a vector, v is a number


def test_an_index_of_unknown_kind_says_how_to_copy():
    with pytest.raises(mg.UnsupportedSyntaxError, match=r"copy"):
        mg.grad(index_of_unknown_kind)(r(3), np.array([0, 2]))
