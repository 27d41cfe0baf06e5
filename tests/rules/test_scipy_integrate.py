"""The rules for scipy.integrate.odeint (mindgrad/rules/scipy_integrate.py): the adjoint ODE in
reverse mode, the sensitivity equations in forward mode, with respect to y0, the time points t
and args, against central differences, autograd's odeint (y0) and JAX's odeint where installed;
tfirst=True; the second derivative and full_output refused. The solves ask for tight
tolerances, so that central differences of the solution are accurate. Skipped where SciPy is not
installed.
"""

import numpy as np
import pytest

si = pytest.importorskip("scipy.integrate")

import mindgrad  # noqa: E402
from mindgrad.rules import jvp_of, vjp_of  # noqa: E402
from mindgrad.rules.scipy_integrate import odeint_grads, odeint_tangent  # noqa: E402
from tests.support.inputs import Draw  # noqa: E402
from tests.support.rule_check import Cases, rule_tests  # noqa: E402

draw = Draw(20261132)
r = draw.r
# tolerances: the solution moves with them only by its error, which no rule differentiates
TIGHT = {"rtol": 1e-12, "atol": 1e-12, "constant_keywords": ("rtol", "atol")}


def decay(y, t, p):
    return -p[:2] * y + p[2] * np.sin(t) * y[::-1]


def logistic(y, t, rate, cap):
    return rate * y * (1.0 - y / cap)


def oscillator(t, y, omega):
    return np.array([y[1], -omega ** 2 * y[0] - 0.1 * y[1]])


def autonomous(y, t):
    return -y ** 3 + 0.5 * y


CASES = Cases()
case = CASES.add
times = np.array([0.0, 0.4, 1.1, 1.5])
case(si.odeint, decay, np.array([1.0, 0.5]), times, (np.array([0.7, 1.3, 0.3]),), **TIGHT)
case(si.odeint, logistic, np.array([0.2, 0.5, 0.1]), np.array([0.0, 1.0, 2.0]), (1.5, 2.0),
     **TIGHT)
case(si.odeint, oscillator, np.array([1.0, 0.0]), np.array([0.0, 0.5, 0.7, 2.0]), (1.7,),
     tfirst=True, **TIGHT)
case(si.odeint, autonomous, np.array([0.8]), np.array([0.3, 1.2]), **TIGHT)
case(si.odeint, autonomous, np.array([0.8, -0.4]), np.array([0.0, 0.5, 1.0]), (), **TIGHT)

globals().update(rule_tests(CASES))


def loss(y0, p):
    ys = si.odeint(decay, y0, times, args=(p,), rtol=1e-12, atol=1e-12)
    return np.sum(ys ** 2 * np.arange(ys.size).reshape(ys.shape))


def test_gradient_for_y0_matches_autograd():
    ag = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    aodeint = pytest.importorskip("autograd.scipy.integrate").odeint
    p = np.array([0.7, 1.3, 0.3])

    def adecay(y, t, p):
        return -p[:2] * y + p[2] * anp.sin(t) * y[::-1]

    def aloss(y0):
        ys = aodeint(adecay, y0, times, (p,), rtol=1e-12, atol=1e-12)
        return anp.sum(ys ** 2 * anp.arange(ys.size).reshape(ys.shape))

    y0 = np.array([1.0, 0.5])
    np.testing.assert_allclose(mindgrad.grad(loss)(y0, p), ag.grad(aloss)(y0), rtol=1e-8)


def test_derivatives_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jode = pytest.importorskip("jax.experimental.ode")
    jnp = jax.numpy
    y0, p = np.array([1.0, 0.5]), np.array([0.7, 1.3, 0.3])

    def jdecay(y, t, p):
        return -p[:2] * y + p[2] * jnp.sin(t) * y[::-1]

    def solution(y0, t, p):
        return jode.odeint(jdecay, y0, t, p, rtol=1e-12, atol=1e-12)

    tight = {k: v for k, v in TIGHT.items() if k != "constant_keywords"}  # the harness's
    g = r(4, 2)
    _, back = jax.vjp(solution, y0, times, p)
    want = back(g)
    _, vjp = vjp_of(si.odeint, decay, y0, times, (p,), **tight)
    got = vjp(g)
    np.testing.assert_allclose(got[1], np.asarray(want[0]), rtol=1e-7)
    np.testing.assert_allclose(got[2], np.asarray(want[1]), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got[3][0], np.asarray(want[2]), rtol=1e-7)
    ty, tt, tp = r(2), 0.1 * r(4), r(3)  # JAX's odeint has no jvp: <g, jvp> = <vjp(g), t>
    want_t = sum(np.vdot(np.asarray(w), v) for w, v in zip(want, (ty, tt, tp)))
    _, jvp = jvp_of(si.odeint, decay, y0, times, (p,), **tight)
    np.testing.assert_allclose(np.vdot(g, jvp(None, ty, tt, (tp,))), want_t, rtol=1e-7)


def test_second_derivatives_are_refused():
    y0, p = np.array([1.0, 0.5]), np.array([0.7, 1.3, 0.3])
    with pytest.raises(NotImplementedError, match="second derivative of scipy.integrate.odeint"):
        mindgrad.hessian(loss)(y0, p)
    with pytest.raises(NotImplementedError, match="second derivative of scipy.integrate.odeint"):
        mindgrad.jvp(mindgrad.grad(loss), (y0, p), (y0, p))
    args = (np.ones((2, 2)), decay, y0, times[:2], np.ones((2, 2)), (p,))
    with pytest.raises(NotImplementedError, match="second derivative"):
        vjp_of(odeint_grads, *args)[1]((np.ones(2), np.ones(2), (np.ones(3),)))
    targs = (y0, 0, 0, decay, y0, times[:2], np.ones((2, 2)), (p,))
    with pytest.raises(NotImplementedError, match="second derivative"):
        vjp_of(odeint_tangent, *targs)[1](np.ones((2, 2)))
    with pytest.raises(NotImplementedError, match="second derivative"):
        jvp_of(odeint_tangent, *targs)[1](y0, None, None, None, None, None, None, None)
    with pytest.raises(NotImplementedError, match="second derivative"):
        jvp_of(odeint_grads, *args)[1](np.ones((2, 2)), None, None, None, None, None)


def test_full_output_and_integer_args_are_refused():
    y0 = np.array([1.0, 0.5])

    def full(y0):
        return np.sum(si.odeint(autonomous, y0, times, full_output=1)[0])

    with pytest.raises(NotImplementedError, match="full_output=0"):
        mindgrad.grad(full)(y0)

    def counted(y, t, n):
        return -y * n

    def with_int(y0):
        return np.sum(si.odeint(counted, y0, times, args=(2,)))

    with pytest.raises(NotImplementedError, match="floats or float arrays only"):
        mindgrad.grad(with_int)(y0)
