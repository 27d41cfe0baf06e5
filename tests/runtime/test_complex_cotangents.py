"""A real value's gradient is real, wherever complex values meet it.

A real array indexed, broadcast or cast and then multiplied by a complex number receives a
complex product of gradients; only its real part is the gradient (the convention that gives a
real input the real part). It must neither crash when written into the real array's gradient
buffer (``add_at``) nor leak its imaginary part through a cast from complex to real.

Every derivative is checked against central finite differences in float64
(``mindgrad.check_grads``), in reverse and forward mode, first and second order.
"""

import warnings

import numpy as np
import pytest

import mindgrad

# NumPy 1.25 moved it to np.exceptions; older NumPy has it at the top
ComplexWarning = getattr(np, "exceptions", np).ComplexWarning

X = np.array([0.7, 1.3, 2.1])
C = np.array([2 + 3j, -1 + 0.5j, 0.3 - 2j])


def check(fn, x=X):
    """Both modes, first and second order; the gradient and the tangent of a real input are
    real arrays of its dtype, and no ComplexWarning says an imaginary part was dropped by a
    cast."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ComplexWarning)
        for order in (1, 2):
            mindgrad.check_grads(fn, (x,), modes=("rev", "fwd"), order=order)
        g = mindgrad.grad(fn)(x)
        _, t = mindgrad.jvp(fn, (x,), (np.ones_like(x),))
    assert g.dtype == x.dtype and g.shape == x.shape
    assert not np.iscomplexobj(t)


def sliced_with_new_axis(x):
    s = x * 2.0
    return np.real(np.sum(s[None, :1] * (1 + 2j)))


def sliced(x):
    s = x * 2.0
    return np.real(np.sum(s[1:] * 1j * s[1:]))


def masked(x):
    s = np.sin(x)
    return np.real(np.sum((s[x > 1.0] * (1 + 1j)) ** 2))


def listed_index(x):
    s = np.sin(x)
    return np.real(np.sum((s[[0, 2, 0]] * (1 + 1j)) ** 2))


def integer_index(x):
    s = np.sin(x)
    t = s[0] * (1 + 2j)
    return np.real(t * t)


def reshaped(x):
    s = np.sin(x)
    return np.real(np.sum((s.reshape(3, 1) * (1 + 1j)) ** 2))


def broadcast_view(x):
    s = np.sin(x)
    return np.real(np.sum((np.broadcast_to(s, (2, 3)) * (1 + 1j)) ** 2))


def broadcast_against_complex(x):
    s = np.sin(x)
    return np.real(np.sum((s[:, None] + np.array([1j, 2j])) ** 2))


def added_in_place(x):
    s = np.cos(x)
    s = s * (1 + 1j)
    s += (0.5 + 1j) * x
    return np.real(np.sum(s ** 2))


def modulus_of_slice(x):
    s = np.sin(x)
    return np.abs(np.sum(s[None, :2] * (1 + 2j))) ** 2


@pytest.mark.parametrize("fn", [
    sliced_with_new_axis, sliced, masked, listed_index, integer_index, reshaped, broadcast_view,
    broadcast_against_complex, added_in_place, modulus_of_slice])
def test_complex_gradient_flowing_into_a_real_array(fn):
    check(fn)


def test_the_reported_program():
    def f(x):
        s = x * 2.0
        return np.real(np.sum(s[None, :1] * (1 + 2j)))

    g = mindgrad.grad(f)(np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [2.0, 0.0])  # d/dx0 of Re(2 x0 (1 + 2j))


def test_float32_slice():
    x = X.astype(np.float32)

    def f(x):
        return np.real(np.sum(x[1:] * C[1:]))

    g = mindgrad.grad(f)(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, [0.0, -1.0, 0.3], rtol=1e-6)  # Re of C where x is used


# ----- casts from complex to real take the real part of their gradient ----------------------


def wave(x):
    return np.exp(x * (0.3 + 1j)) + x


def cast_then_matmul(x):
    r = wave(x).astype(float)
    return np.real(np.sum(r @ np.outer(C, C)))


def cast_then_scale(x):
    r = np.asarray(wave(x), dtype=np.float64)
    return np.real(np.sum(r * C))


def array_then_vdot(x):
    r = np.array(wave(x), dtype=float)
    return np.real(np.sum(np.vdot(C, r) * C))


def scalar_cast_then_vdot(x):
    r = np.float64(wave(x)[0])
    return np.real(np.vdot(C[1], r))


@pytest.mark.parametrize("fn", [cast_then_matmul, cast_then_scale, array_then_vdot,
                                scalar_cast_then_vdot])
def test_cast_to_real_takes_the_real_part_of_its_gradient(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ComplexWarning)  # the user's own casts
        for order in (1, 2):
            mindgrad.check_grads(fn, (X,), modes=("rev", "fwd"), order=order)


def test_unbroadcast_and_add_at_give_a_real_array_a_real_gradient():
    from mindgrad.runtime import add_at, unbroadcast

    x = np.zeros((2, 3))
    g = np.full((2, 3), 1 + 2j)
    assert unbroadcast(g, x).dtype == np.float64
    np.testing.assert_array_equal(unbroadcast(g[None], x), np.ones((2, 3)))
    np.testing.assert_array_equal(unbroadcast(g, x + 0j), g)  # complex x keeps it all
    dx = add_at(0, x, np.s_[None, :1], g[None, :1])
    np.testing.assert_array_equal(dx, [[1, 1, 1], [0, 0, 0]])
    dx = add_at(dx, x, ([0, 0], [1, 1]), np.array([1j, 2 + 1j]))
    np.testing.assert_array_equal(dx, [[1, 3, 1], [0, 0, 0]])


@pytest.mark.parametrize("x", [2.0, np.float64(2.0), np.float32(2.0), np.float16(2.0),
                               np.longdouble(2.0)], ids=lambda x: type(x).__name__)
def test_unbroadcast_of_numbers_keeps_a_real_gradient_and_takes_a_complex_ones_real_part(x):
    """Real numbers (a loop over scalars) are given back as they are, at once; a complex
    gradient of a real number still loses its imaginary part, a 0-d array keeps its form."""
    from mindgrad.runtime import unbroadcast

    for g in (1.5, np.float64(-0.0), np.float32(3.0), np.float64(np.inf)):
        assert unbroadcast(g, x) is g
    assert unbroadcast(1.5 + 2j, x) == 1.5 and not np.iscomplexobj(unbroadcast(1.5 + 2j, x))
    assert unbroadcast(np.complex128(1 - 1j), x) == 1.0
    assert unbroadcast(1 + 1j, 1j * x) == 1 + 1j
    held = unbroadcast(np.array(1.5), x)
    assert held.shape == () and held == 1.5


# ----- a real operand of a complex product of its own shape -----------------------------------
# The product's gradient is complex; the real operand's is its real part. Where the shapes are
# known equal, unbroadcast (which takes that part) is left out of the generated code only when
# the product is known real (activity.real_names).


def column_times_complex_scalar(x):
    xx = np.stack([x, 2.0 * x], axis=1)
    c = xx[[1, 0]]
    c *= np.mean(x)
    v = xx[..., 0]                   # d_xx[..., 0] += d_v: a real gradient buffer
    z = v * (0.6 + 0.8j) + np.exp(1j * np.mean(c))
    return np.var(z) + np.sum(np.tanh(c))


def times_complex_of_itself(x):
    s = np.sin(x)
    w = s * np.exp(1j * s)           # a complex array of s's shape
    t = np.cos(x)
    t[1:] += np.real(w[1:] * w[1:])  # written into a real array in place
    return np.sum(t * t) + np.abs(np.sum(w)) ** 2


def complex_param_in_callee(x):
    def scale(a, b):
        return a * b                 # a callee: its arguments' dtypes are not known

    s = np.sin(x)
    return np.real(np.sum(scale(s, s * (1 + 2j)) ** 2))


@pytest.mark.parametrize("fn", [column_times_complex_scalar, times_complex_of_itself,
                                complex_param_in_callee])
def test_real_operand_of_a_complex_product_of_its_shape(fn):
    check(fn)


def test_the_fuzz_program_adding_a_complex_gradient_into_a_real_buffer():
    """Program 44 of ``python -m mindgrad.fuzz --seed 9026``: it raised UFuncTypeError
    (complex128 into float64) in grad, hvp, value and third order."""
    def f(x):
        c1 = x[[1, 0]]
        c1 *= np.mean(x)
        c1 += np.sum(x)
        v2 = x[..., 0]
        v3 = c1[0]
        z4 = v2 * (0.6 + 0.8j) + np.exp(1j * np.mean(c1))
        v5 = np.var(z4)
        v6 = np.exp(-np.where(v5 > 0.0, v5, np.inf))
        return np.sum(np.tanh(c1)) + np.sum(np.tanh(v6)) + v3

    x = np.array([[0.3, -0.2], [0.5, 0.4], [-0.1, 0.9]])
    check(f, x)


def test_the_real_part_is_taken_only_where_a_real_operand_meets_a_complex_one():
    """unbroadcast (shape, and the real part for a real operand) stays in the generated code
    where a real array meets a complex one of its shape, and nowhere else."""
    def f(x):
        a = x * 2.0
        e = np.exp(1j * a)
        b = a * e
        return np.real(np.sum(b * b))

    code = str(mindgrad.source(mindgrad.grad(f), X))
    assert "d_a = unbroadcast(d_b * e, a)" in code        # a real, a * e complex
    assert "unbroadcast(d_mul * 1j, a)" in code           # a real, 1j * a complex
    assert "d_e = d_b * a" in code                        # e complex: nothing to take
    assert "d_x = d_a * 2.0" in code                      # x * 2.0 real: plain product
    check(f)
