"""Rules for ``scipy.integrate.odeint``, in both directions, to first order: derivatives of the
solution ``y(t_i)`` of ``dy/dt = func(y, t, *args)`` with respect to the initial state ``y0``,
the time points ``t`` and the extra arguments ``args`` (floats and float arrays).

SciPy is optional: this module is imported by the registry once the program has imported
``scipy.integrate`` (``DEFERRED`` in ``mindgrad/rules/registry.py``). ``func`` is differentiated
by mindgrad itself (through the API's ``vjp`` and ``jvp``, see ``numpy_callables.py``): it must
be a function mindgrad can read, defined outside the function being differentiated.

Reverse mode integrates the adjoint ODE backwards between the time points (as autograd does):
the state ``y``, its adjoint ``a`` (``da/dt = -a^T df/dy``), and the running gradients of the
first time and of ``args`` (``-a^T df/dt``, ``-a^T df/dargs``), starting from each time
point's cotangent. Forward mode integrates the sensitivity equations ``ds/dt = df/dy s +
df/dargs t_args`` alongside ``y``, from ``s(t_0) = t_y0 - func(y0, t_0) t_t0``; the tangent at
``t_i`` is ``s(t_i) + func(y_i, t_i) t_ti``. Both solve with the call's ``rtol``, ``atol``,
``mxstep``, ``h0``, ``hmax``, ``hmin``, so their accuracy is the solver's: ask for tight
tolerances where the derivative must be accurate. ``tfirst=True`` is followed;
``full_output``, ``Dfun`` (the Jacobian is mindgrad's own) and the banded options do not change
the solution and are ignored, but ``full_output=1`` (a tuple result) is refused. Second
derivatives are not implemented: they raise ``NotImplementedError``.
"""

import numpy as np
import scipy.integrate as si

from mindgrad.rules import adjoint, d, nondifferentiable, tangent
from mindgrad.rules.helpers import astype_grad
from mindgrad.rules.numpy_callables import refuse_second_order, user_jvp, user_vjp
from mindgrad.runtime import is_zero, zero, zero_in, zero_in_zero_out
from mindgrad.runtime.arrays import as_array
from mindgrad.runtime.tangents import as_dtype_of


def as_args(args):
    """``odeint``'s ``args`` as a tuple of float arrays (a single value is one argument)."""
    args = args if isinstance(args, tuple) else (args,)
    for a in args:
        if as_array(a).dtype.kind != "f":
            raise NotImplementedError(
                "mindgrad differentiates scipy.integrate.odeint with args of floats or float "
                f"arrays only, not {type(a).__name__}; bind others into func (a closure or "
                "functools.partial)")
    return args


def solver_options(rtol=None, atol=None, mxstep=0, h0=0.0, hmax=0.0, hmin=0.0,
                   full_output=0):
    """The options of the call its derivative's solves take."""
    if full_output:
        raise NotImplementedError("mindgrad differentiates scipy.integrate.odeint with "
                                  "full_output=0 only")
    return {"rtol": rtol, "atol": atol, "mxstep": mxstep, "h0": h0, "hmax": hmax, "hmin": hmin}


nondifferentiable(as_args, solver_options)


def ordered(func, tfirst=False):
    """``func`` as a function of ``(y, t, *args)``, mindgrad can read."""
    if not tfirst:
        def call(y, t, *extra):
            return func(y, t, *extra)
    else:
        def call(y, t, *extra):
            return func(t, y, *extra)
    return call


@zero_in_zero_out("g")
def odeint_grads(g, func, y0, t, ys, args=(), tfirst=False, options=None):
    """Gradients of ``ys = odeint(func, y0, t, args)`` for ``y0``, ``t`` and each of ``args``
    from the cotangent ``g`` of ``ys``: the adjoint ODE, backwards from each time point to the
    one before."""
    if zero_in(g):
        return zero
    args = as_args(args)
    f = ordered(func, tfirst)
    t = np.asarray(t, dtype=float)
    g = as_array(g) + np.zeros(np.shape(ys))
    n = np.size(y0)
    sizes = [np.size(a) for a in args]

    def augmented(state, time, *extra):
        y, a = state[:n], state[n:2 * n]
        dy, back = user_vjp(f, y, time, *extra)
        grads = back(np.reshape(-a, np.shape(dy)))
        parts = [np.ravel(dy), np.ravel(grads[0] + np.zeros(np.shape(y))), [float(grads[1])]]
        parts += [np.ravel(gr + np.zeros(np.shape(v))) for gr, v in zip(grads[2:], extra)]
        return np.concatenate(parts)

    a = g[-1]
    g_t = np.zeros(np.shape(t))
    g_t0 = 0.0
    g_args = np.zeros(sum(sizes))
    for i in range(len(t) - 1, 0, -1):
        g_t[i] = np.dot(np.ravel(f(ys[i], t[i], *args)), np.ravel(g[i]))
        g_t0 = g_t0 - g_t[i]
        state = np.concatenate([np.ravel(ys[i]), np.ravel(a), [g_t0], g_args])
        state = si.odeint(augmented, state, np.array([t[i], t[i - 1]]), args,
                          **(options or {}))[1]
        a = state[n:2 * n] + np.ravel(g[i - 1])
        g_t0 = state[2 * n]
        g_args = state[2 * n + 1:]
    g_t[0] = g_t0
    splits = np.split(g_args, np.cumsum(sizes)[:-1]) if args else []
    g_args = tuple(astype_grad(np.reshape(s, np.shape(v)) if np.ndim(v) else float(s[0]), v)
                   for s, v in zip(splits, args))
    return astype_grad(np.reshape(a, np.shape(y0)), y0), astype_grad(g_t, t), g_args


@zero_in_zero_out("t_y0", "t_t", "t_args")
def odeint_tangent(t_y0, t_t, t_args, func, y0, t, ys, args=(), tfirst=False, options=None):
    """Tangent of ``ys = odeint(func, y0, t, args)`` from those of ``y0``, ``t`` and ``args``
    (each 0 where it has none): the sensitivity equations, solved alongside ``y``."""
    if zero_in(t_y0) and zero_in(t_t) and zero_in(t_args):
        return zero
    args = as_args(args)
    f = ordered(func, tfirst)
    t = np.asarray(t, dtype=float)
    n = np.size(y0)
    t_args = [np.zeros(np.shape(a)) for a in args] if is_zero(t_args) else \
        [np.zeros(np.shape(a)) if is_zero(v) else v for a, v in zip(args, t_args)]
    t_y0 = np.zeros(np.shape(y0)) if is_zero(t_y0) else as_array(t_y0)
    t_t = np.zeros(np.shape(t)) if is_zero(t_t) else as_array(t_t)

    def augmented(state, time, *extra):
        y, s = state[:n], state[n:]
        dy, ds = user_jvp(f, (y, time, *extra), (s, 0.0, *t_args))
        return np.concatenate([np.ravel(dy), np.ravel(ds)])

    s0 = np.ravel(t_y0) - np.ravel(f(np.asarray(y0, dtype=float), t[0], *args)) * t_t[0]
    state = np.concatenate([np.ravel(y0), s0])
    solved = si.odeint(augmented, state, t, args, **(options or {}))
    s = solved[:, n:]
    moved = np.stack([np.ravel(f(ys[i], t[i], *args)) for i in range(len(t))])
    return as_dtype_of(np.reshape(s + moved * t_t[:, None], np.shape(ys)), ys)


@adjoint(si.odeint)
def _(out, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None,
      rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0, mxhnil=0,
      mxordn=12, mxords=5, printmessg=0, tfirst=False):
    """``func`` one mindgrad can read, ``args`` floats; derivatives as accurate as the solver
    (its tolerances are the call's); first order only; ``full_output=1`` refused."""
    options = solver_options(rtol, atol, mxstep, h0, hmax, hmin, full_output)
    grads = odeint_grads(d[out], func, y0, t, out, args, tfirst, options)
    d[y0] = grads[0]
    d[t] = grads[1]
    d[args] = grads[2]


@tangent(si.odeint)
def _(out, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None,
      rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0, mxhnil=0,
      mxordn=12, mxords=5, printmessg=0, tfirst=False):
    options = solver_options(rtol, atol, mxstep, h0, hmax, hmin, full_output)
    d[out] = odeint_tangent(d[y0], 0, 0, func, y0, t, out, args, tfirst, options)
    d[out] = odeint_tangent(0, d[t], 0, func, y0, t, out, args, tfirst, options)
    d[out] = odeint_tangent(0, 0, d[args], func, y0, t, out, args, tfirst, options)


def refuse_ode_second_order(x):
    return refuse_second_order(x, "scipy.integrate.odeint")


nondifferentiable(refuse_ode_second_order)


@adjoint(odeint_grads)
def _(res, g, func, y0, t, ys, args=(), tfirst=False, options=None):
    d[g] = refuse_ode_second_order(g)
    d[y0] = refuse_ode_second_order(y0)


@tangent(odeint_grads)
def _(res, g, func, y0, t, ys, args=(), tfirst=False, options=None):
    d[res] = refuse_ode_second_order(g)


@adjoint(odeint_tangent)
def _(res, t_y0, t_t, t_args, func, y0, t, ys, args=(), tfirst=False, options=None):
    d[t_y0] = refuse_ode_second_order(t_y0)
    d[y0] = refuse_ode_second_order(y0)


@tangent(odeint_tangent)
def _(res, t_y0, t_t, t_args, func, y0, t, ys, args=(), tfirst=False, options=None):
    d[res] = refuse_ode_second_order(t_y0)
