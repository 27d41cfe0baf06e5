"""Derivatives of a scalar function of one array in every mode mindgrad has to second order
(grad, jvp, jvp over grad, grad over grad, jvp over jvp), each checked against central
differences in float64: ``(f(x+hv) - f(x-hv)) / 2h`` at first order, the mixed second
difference ``(f(x+hu+hv) - f(x+hu-hv) - f(x-hu+hv) + f(x-hu-hv)) / 4h^2`` at second.
"""

import numpy as np

import mindgrad as mg

H1, H2 = 1e-6, 1e-4
MODES = ("grad", "jvp", "jvp_of_grad", "grad_of_grad", "jvp_of_jvp")


def central(f, x, v, eps=H1):
    """``d/de f(x + e v)`` at 0 by central differences."""
    return (f(x + eps * v) - f(x - eps * v)) / (2 * eps)


def check_grad_and_jvp(f, x, rng, rtol=1e-6, atol=1e-8):
    """``grad`` and ``jvp`` of the scalar ``f`` at ``x`` against central differences along two
    random directions drawn from ``rng``; the gradient has ``x``'s shape."""
    for _ in range(2):
        v = rng.standard_normal(np.shape(x))
        truth = central(f, x, v)
        g = mg.grad(f)(x)
        assert np.shape(g) == np.shape(x)
        np.testing.assert_allclose(np.sum(g * v), truth, rtol=rtol, atol=atol)
        np.testing.assert_allclose(mg.jvp(f, (x,), (v,))[1], truth, rtol=rtol, atol=atol)


def fd_grad(f, x):
    g = np.zeros(np.shape(x))
    for i in np.ndindex(g.shape):
        e = np.zeros(g.shape)
        e[i] = H1
        g[i] = (f(x + e) - f(x - e)) / (2 * H1)
    return g


def fd_mixed(f, x, u, v):
    h = H2
    return (f(x + h * u + h * v) - f(x + h * u - h * v) - f(x - h * u + h * v)
            + f(x - h * u - h * v)) / (4 * h * h)


def fd_hessian_times(f, x, v):
    out = np.zeros(np.shape(x))
    for i in np.ndindex(out.shape):
        e = np.zeros(out.shape)
        e[i] = 1.0
        out[i] = fd_mixed(f, x, e, v)
    return out


def derivative(mode, f, x, u, v):
    """(mindgrad's derivative of ``f`` at ``x`` in ``mode``, the finite-difference one)."""
    if mode == "grad":
        return mg.grad(f)(x), fd_grad(f, x)
    if mode == "jvp":
        return mg.jvp(f, (x,), (v,))[1], (f(x + H1 * v) - f(x - H1 * v)) / (2 * H1)
    if mode == "jvp_of_grad":
        return mg.jvp(mg.grad(f), (x,), (v,))[1], fd_hessian_times(f, x, v)
    if mode == "grad_of_grad":
        return mg.grad(lambda y: np.sum(mg.grad(f)(y) * v))(x), fd_hessian_times(f, x, v)
    assert mode == "jvp_of_jvp"
    return mg.jvp(lambda y: mg.jvp(f, (y,), (v,))[1], (x,), (u,))[1], fd_mixed(f, x, u, v)


def check_all_modes(f, x, modes=MODES, label=None):
    rng = np.random.default_rng(0)
    u, v = rng.standard_normal(np.shape(x)), rng.standard_normal(np.shape(x))
    for mode in modes:
        got, want = derivative(mode, f, x, u, v)
        np.testing.assert_allclose(np.asarray(got, float), want, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{label or f.__name__}: {mode}")
