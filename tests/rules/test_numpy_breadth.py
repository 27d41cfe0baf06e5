"""The rules for NumPy functions added across topics, in both directions: fmod, float_power,
nan_to_num, interp, ldexp, modf, divmod, unwrap, real_if_close and astype
(numpy_elementwise.py); ptp, median, quantile, percentile and their nan- forms, nanprod, nanvar,
nanstd, nancumsum, nancumprod, trapezoid, cov, corrcoef, ediff1d, cumulative_sum and
cumulative_prod (numpy_reductions.py); append, delete, compress, insert, choose, select,
partition, rollaxis, resize, extract, diagflat, broadcast_arrays and block (numpy_shape.py);
cross, kron, convolve, correlate, polyval, polyfit, vander, polyadd, polysub, polymul and polyder
(numpy_products.py, numpy_polynomial.py); the helpers their gradients call; each group through
the transformer to second order. The checks: tests/support/rule_check.py.
"""

import numpy as np
import pytest

import mindgrad
from mindgrad.rules import numpy_statistics as nstat
from mindgrad.rules import vjp_of
from tests.support.inputs import Draw
from tests.support.rule_check import ADJOINT, TANGENTS, Cases, rule_tests
from tests.support.versions import numpy_before

# np.cross of 2-vectors is deprecated in NumPy 2 and still checked here, up to NumPy 2.5, which
# removed it
pytestmark = pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")
CROSS_OF_2_VECTORS = numpy_before((2, 5), "np.cross of 2-vectors")
draw = Draw(20261127)
r, pos, f, x32 = draw.r, draw.pos, draw.f, draw.x32
CASES = Cases()
case = CASES.add

# ----- elementwise -----------------------------------------------------------------------------

for fn in (np.fmod, np.float_power):
    case(fn, pos(3, 4), pos(3, 4))
    case(fn, pos(3, 4), pos(4))  # broadcast
    case(fn, pos(2, 1, 3), pos(4, 1))
    case(fn, pos(), pos(3))
    case(fn, pos(3), f(pos))
case(np.fmod, -pos(3, 4), pos(3, 4), label="fmod-negative")  # truncates toward 0
case(np.fmod, pos(3, 4), -pos(4), label="fmod-negative-divisor")
case(np.nan_to_num, np.array([[1.5, np.nan, -0.3], [0.7, -2.0, np.nan]]))
with_special = np.array([[1.5, np.nan, -0.3], [np.inf, -2.0, -np.inf]])
case(np.nan_to_num, with_special, True, f(), f(), f())  # the replacements move too
case(np.nan_to_num, with_special, posinf=5.0, neginf=-5.0)
case(np.nan_to_num, r(3, 4))
case(np.nan_to_num, r())

# ----- reductions ------------------------------------------------------------------------------

for shape, kw in [((5,), {}), ((3, 4), {}), ((3, 4), {"axis": 0}),
                  ((3, 4), {"axis": -1, "keepdims": True}), ((2, 3, 4), {"axis": (0, 2)}),
                  ((1, 4), {"axis": 0})]:
    case(np.ptp, r(*shape), **kw)

QUANTILE_FORMS = [((5,), {}), ((6,), {}), ((3, 4), {"axis": 0}), ((3, 4), {"axis": -1}),
                  ((3, 4), {"axis": 1, "keepdims": True}), ((2, 3, 4), {"axis": (0, 2)}),
                  ((2, 3, 4), {}), ((1, 4), {"axis": 0})]
for shape, kw in QUANTILE_FORMS:
    case(np.median, r(*shape), **kw)
    case(np.nanmedian, r(*shape), **kw)
    case(np.quantile, r(*shape), 0.3, **kw)
    case(np.percentile, r(*shape), np.array([10.0, 55.0, 90.0]), **kw)
for q in (0.3, np.array([0.1, 0.65]), np.array([[0.2], [0.9]])):
    case(np.quantile, r(7), q)
    case(np.nanquantile, r(3, 5), q, axis=1)
for method in ("lower", "higher", "nearest", "midpoint"):
    case(np.quantile, r(3, 5), np.array([0.3, 0.6]), axis=1, method=method)
    case(np.percentile, r(6), 37.0, method=method)
with_nan = r(3, 5)
with_nan[0, 1] = with_nan[2, 4] = np.nan
case(np.nanmedian, with_nan, axis=1)
case(np.nanquantile, with_nan, np.array([0.2, 0.7]), axis=-1)
case(np.nanpercentile, with_nan, 40.0, axis=1, keepdims=True)
case(np.nanmedian, np.array([[1.0, np.nan], [2.0, 3.0]]), axis=0)

for fn in (np.nanprod, np.nanvar, np.nanstd, np.nancumsum, np.nancumprod):
    case(fn, r(3, 4))
    case(fn, with_nan)
    case(fn, with_nan, axis=1)
    case(fn, with_nan, axis=0)
for fn in (np.nanprod, np.nanvar, np.nanstd):
    case(fn, with_nan, axis=-1, keepdims=True)
    case(fn, r(2, 3, 4), axis=(0, 2))
case(np.nanvar, with_nan, axis=1, ddof=1)
case(np.nanstd, with_nan, 0, None, None, 1, label="nanstd-ddof-positional")
case(np.nanprod, with_nan, 1, None, None, False, f(), label="nanprod-initial")
if np.lib.NumpyVersion(np.__version__) >= "2.0.0":  # mean=
    case(np.nanvar, with_nan, axis=1, keepdims=True, mean=np.full((3, 1), 0.2))

for fn in (np.cov, np.corrcoef):
    case(fn, r(3, 5))
    case(fn, r(5))
    case(fn, r(5, 3), rowvar=False)
    case(fn, r(2, 5), r(5))
    case(fn, r(5, 2), r(5, 3), rowvar=False)
    case(fn, r(1, 4), r(2, 4))
case(np.cov, r(3, 5), bias=True)
case(np.cov, r(3, 5), ddof=2)
case(np.cov, r(3, 5), fweights=np.array([1, 2, 1, 3, 1]))
# aweights by position: moved by the checks
case(np.cov, r(3, 5), None, True, False, None, None, pos(5), label="cov-aweights")
case(np.cov, r(3, 5), None, True, False, 0, np.array([1, 2, 1, 3, 1]), pos(5),
     label="cov-weights-ddof-0")
case(np.cov, r(3, 5), None, True, False, 2, np.array([1, 2, 1, 3, 1]), pos(5),
     label="cov-weights-ddof-2")

# the gradient helper linear in g (its tangent is derived)
CASES.helper(nstat.quantile_grad, r(2, 3), r(3, 5), np.array([0.2, 0.7]), 1, only=TANGENTS)
CASES.helper(nstat.quantile_grad, r(), with_nan, 0.45, None, "linear", True, only=TANGENTS)

TRAPEZOID = getattr(np, "trapezoid", None) or np.trapz
for y, args, kw in [(r(5), (), {}), (r(3, 4), (), {"axis": 0}), (r(3, 4), (), {}),
                    (r(5), (np.sort(r(5)),), {}), (r(3, 4), (np.sort(r(4)),), {}),
                    (r(3, 4), (np.sort(r(3)),), {"axis": 0}),
                    (r(3, 4), (np.sort(r(3, 4), axis=1),), {}),
                    (r(2, 3, 4), (np.sort(r(2, 3, 4), axis=1),), {"axis": 1}),
                    (r(4), (None, f(pos)), {}), (r(3, 4), (None, f(pos), 0), {})]:
    case(TRAPEZOID, y, *args, **kw)

# ----- joining, removing, choosing --------------------------------------------------------------

case(np.append, r(3), r(2))
case(np.append, r(2, 3), r(4))  # both flattened
case(np.append, r(2, 3), r(2, 2), axis=1)
case(np.append, r(2, 3), r(1, 3), axis=-2)
case(np.append, r(3), f())
case(np.delete, r(5), 1)
case(np.delete, r(3, 4), [0, 2], axis=1)
case(np.delete, r(3, 4), slice(0, 2), axis=0)
case(np.delete, r(3, 4), np.array([1, 5, 6]))  # flattened
case(np.compress, np.array([True, False, True]), r(3, 4), axis=0)
case(np.compress, np.array([False, True]), r(3, 4), axis=1)
case(np.compress, np.array([True, False, True, True]), r(2, 3))  # flattened
case(np.insert, r(4), 1, f())
case(np.insert, r(4), [0, 2, 4], r(3))
case(np.insert, r(4), 2, r(2))  # two values at one place
case(np.insert, r(2, 3), 1, r(3), axis=0)
case(np.insert, r(2, 3), 1, r(2), axis=1)  # a single obj: values along the axis
case(np.insert, r(2, 3), [1, 3], r(2, 1), axis=1)
case(np.insert, r(2, 3), [1, 3], f(), axis=1)
case(np.insert, r(2, 3), 3, r(2))  # flattened
_index = np.array([[0, 2, 1], [1, 1, 0]])
case(np.choose, _index, [r(2, 3), r(3), r()])
case(np.choose, _index, r(3, 2, 3))
case(np.choose, np.array([0, 4, -1]), [r(3), r(3), r(3)], mode="wrap")
case(np.choose, np.array([0, 4, -1]), [r(3), r(3), r(3)], mode="clip")
_x = r(2, 4)
case(np.select, [_x > 0.5, _x < -0.5], [r(2, 4), r(4)], f())
case(np.select, [_x > 0.0, _x > -1.0], [r(2, 4), r(2, 4)], r(4))
case(np.select, [np.array([True, False, False])], [r(3)])

# ----- products, polynomials, interpolation ----------------------------------------------------

case(np.cross, r(3), r(3))
case(np.cross, r(4, 3), r(3))  # broadcast
case(np.cross, r(2), r(3), skip=CROSS_OF_2_VECTORS)
case(np.cross, r(3), r(2), skip=CROSS_OF_2_VECTORS)
case(np.cross, r(4, 2), r(4, 2), skip=CROSS_OF_2_VECTORS)  # the third entry alone
case(np.cross, r(3, 4), r(4, 3), axisa=0)
case(np.cross, r(3, 2), r(2, 3), axisa=0, axisb=1, axisc=0)
case(np.cross, r(3, 5), r(3, 5), axis=0)
case(np.kron, r(2), r(3))
case(np.kron, r(2, 3), r(2, 2))
case(np.kron, r(2, 1, 3), r(2, 2))
case(np.kron, r(3), r(2, 2))
case(np.kron, r(), r(2))
for fn in (np.convolve, np.correlate):
    for n, m in [(5, 3), (3, 5), (4, 4), (2, 5), (1, 3)]:
        for mode in ("full", "same", "valid"):
            case(fn, r(n), r(m), mode)
    case(fn, r(4) + 1j * r(4), r(3) + 1j * r(3), "same")
case(np.polyval, r(4), r(3, 2))
case(np.polyval, r(1), r(3))
case(np.polyval, [f(), f(), f()], r(4))
case(np.polyval, r(3), f())
case(np.vander, r(4))
case(np.vander, r(3), 5)
case(np.vander, r(3), 2, True)
case(np.vander, np.array([0.0, 1.5, -2.0]), 3, label="vander-at-zero")
_xp = np.array([-1.5, -0.4, 0.3, 1.2, 2.0])
_x = np.array([-2.0, -1.0, 0.0, 0.5, 1.7, 2.5, 1.9])
case(np.interp, _x, _xp, r(5))
case(np.interp, r(2, 3), _xp, r(5))
case(np.interp, _x, _xp, r(5), f(), f())
case(np.interp, f(), _xp, r(5))
case(np.interp, _x, _xp, [f(), f(), f(), f(), f()])

# ----- more gathers, splits and parts -----------------------------------------------------------

case(np.ldexp, r(3, 4), np.array([0, 1, -2, 3]))
case(np.modf, 3.0 * r(3, 4))
case(np.divmod, 3.0 * r(3, 4), pos(4))
case(np.unwrap, np.cumsum(2.0 * pos(6)))
case(np.unwrap, 2.0 * r(3, 5), axis=0)
case(np.real_if_close, r(3) + 0j, only=ADJOINT)  # a complex tangent makes it complex
case(np.real_if_close, r(3) + 1j * r(3))
if hasattr(np, "astype"):  # NumPy >= 2.1
    case(np.astype, r(3, 4), np.float64)
    case(np.astype, r(3), np.complex128)
case(np.partition, r(6), 2)
case(np.partition, r(3, 5), (1, 3), axis=1)
case(np.partition, r(3, 5), 1, axis=0)
case(np.partition, r(3, 4), 5, axis=None)
case(np.rollaxis, r(2, 3, 4), 2)
case(np.rollaxis, r(2, 3, 4), 0, 3)
case(np.rollaxis, r(2, 3, 4), -1, 1)
case(np.resize, r(2, 3), (3, 4))
case(np.resize, r(5), 3)
case(np.extract, r(3, 4) > 0.0, r(3, 4))
case(np.diagflat, r(3))
case(np.diagflat, r(2, 2), -1)
case(np.broadcast_arrays, r(3, 1), r(4), r())
case(np.block, [r(2), r(3)])
case(np.block, [[r(2, 2), r(2, 3)], [r(1, 5)]])
case(np.block, [[r(2, 2), r(2, 1)], [r(3)]], label="block-promoted")
case(np.block, [[[r(2, 1, 2)], [r(2, 1, 2)]]])
case(np.block, r(3))
case(np.ediff1d, r(5))
case(np.ediff1d, r(2, 3), r(2), r(1))
case(np.ediff1d, r(4), None, f())
if hasattr(np, "cumulative_sum"):  # NumPy >= 2.1
    for fn in (np.cumulative_sum, np.cumulative_prod):
        case(fn, r(5))
        case(fn, r(3, 4), axis=1)
        case(fn, r(3, 4), axis=0, include_initial=True)
        case(fn, r(4), include_initial=True)
case(np.polyadd, r(3), r(5))
case(np.polyadd, r(4), r(2))
case(np.polysub, r(3), r(5))
case(np.polysub, r(4), r(4))
case(np.polymul, r(3), r(4))
case(np.polyder, r(5))
case(np.polyder, r(5), 2)
if hasattr(np, "matvec"):  # NumPy >= 2.2
    case(np.matvec, r(3, 4), r(4))
    case(np.matvec, r(2, 3, 4), r(4))
    case(np.matvec, r(3, 4), r(2, 4))  # the vectors broadcast over the matrix
    case(np.matvec, r(1, 1), r(1))
    case(np.matvec, r(3, 4) + 1j * r(3, 4), r(4) + 1j * r(4))
    case(np.vecmat, r(3), r(3, 4))
    case(np.vecmat, r(2, 3), r(3, 4))
    case(np.vecmat, r(3), r(2, 3, 4))
    case(np.vecmat, r(3) + 1j * r(3), r(3, 4) + 1j * r(3, 4))
case(np.roots, np.poly(np.array([-1.5, 0.4, 2.0])))  # real roots
case(np.roots, np.array([1.0, 0.3, 2.0, -0.7]))  # a complex pair
case(np.roots, np.array([2.0, -1.0, 0.5]) + 1j * np.array([0.0, 0.4, -0.3]))
case(np.roots, np.array([0.7, -1.3]))
case(np.roots, np.array([1.0, -0.5, -2.0, 0.0]))  # a simple root at 0
case(np.polydiv, r(5), np.array([1.5, -0.4, 0.8]))
case(np.polydiv, r(5), r(3) + np.array([2.0, 0.0, 0.0]))
case(np.polydiv, r(4), r(4) + np.array([2.0, 0.0, 0.0, 0.0]))
case(np.polydiv, r(3), np.array([0.7]) + pos(1))  # a number divides every coefficient
case(np.polydiv, r(2), r(4) + np.array([2.0, 0.0, 0.0, 0.0]))  # quotient 0, remainder u
_WELL = np.reshape(np.eye(6) * 3.0, (2, 3, 6))  # plus r(...): a well-conditioned matrix
case(np.linalg.tensorinv, r(2, 3, 6) + _WELL)
case(np.linalg.tensorinv, r(6, 2, 3) + np.reshape(np.eye(6) * 3.0, (6, 2, 3)), 1)
case(np.linalg.tensorinv, r(3, 3) + 3.0 * np.eye(3), 1)
case(np.linalg.tensorsolve, r(2, 3, 6) + _WELL, r(2, 3))
case(np.linalg.tensorsolve, r(2, 3, 2, 3) + np.reshape(np.eye(6) * 3.0, (2, 3, 2, 3)), r(2, 3))
case(np.linalg.tensorsolve, np.moveaxis(r(2, 3, 6) + _WELL, 2, 1), r(2, 3), (1,))
case(np.polyint, r(4))
case(np.polyint, r(4), 2)
case(np.polyint, r(4), 1, f())
case(np.polyint, r(3), 3, f())  # one constant for every integration
case(np.polyint, r(3), 2, r(2))
case(np.polyint, r(3), 2, r(3))  # the constants past m are unused
case(np.polyint, r(3), 0, f())
case(np.poly, r(3))
case(np.poly, r(1))
case(np.poly, r(5))
case(np.polyfit, np.linspace(-1.0, 1.0, 6) + 0.05 * r(6), r(6), 2)
case(np.polyfit, np.linspace(-1.0, 1.0, 6) + 0.05 * r(6), r(6, 2), 3)
case(np.polyfit, np.linspace(-1.0, 1.0, 5) + 0.05 * r(5), r(5), 1, None, False, pos(5))
case(np.polyfit, np.linspace(-1.0, 1.0, 5) + 0.05 * r(5), r(5, 3), 2, None, False, pos(5))
for _kw in ({}, {"edge_order": 2}):
    case(np.gradient, r(5), **_kw)
    case(np.gradient, r(4, 5), **_kw)  # one result per axis
    case(np.gradient, r(4, 5), f(), **_kw)  # the spacing moves too
    case(np.gradient, r(3, 4), f(), f(), **_kw)
    case(np.gradient, r(3, 4, 5), f(), axis=-1, **_kw)
    case(np.gradient, r(3, 4, 5), f(), f(), axis=(2, 0), **_kw)
    case(np.gradient, r(1, 5), axis=1, **_kw)  # a size-1 axis not differentiated

FLOAT32 = Cases()
FLOAT32.add(np.fmod, x32(3, gen=pos), x32(3, gen=pos))
FLOAT32.add(np.float_power, x32(3, gen=pos), x32(3, gen=pos))
FLOAT32.add(np.nan_to_num, x32(2, 3))
FLOAT32.add(np.ptp, x32(3, 4), axis=0)
FLOAT32.add(np.median, x32(3, 4), axis=1)
FLOAT32.add(np.quantile, x32(3, 4), np.float32(0.3))
FLOAT32.add(TRAPEZOID, x32(3, 4))
FLOAT32.add(np.cov, x32(3, 5))
FLOAT32.add(np.partition, x32(6), 2)
FLOAT32.add(np.rollaxis, x32(2, 3), 1)
FLOAT32.add(np.resize, x32(3), 5)
FLOAT32.add(np.diagflat, x32(3))
FLOAT32.add(np.block, [x32(2), x32(3)])
FLOAT32.add(np.ediff1d, x32(4))
FLOAT32.add(np.polyadd, x32(3), x32(4))
FLOAT32.add(np.polyder, x32(4))
FLOAT32.add(np.polyint, x32(4))
FLOAT32.add(np.linalg.tensorinv, x32(2, 2) + np.float32(3.0) * np.eye(2, dtype=np.float32), 1)
FLOAT32.add(np.linalg.tensorsolve, x32(2, 2) + np.float32(3.0) * np.eye(2, dtype=np.float32),
            x32(2))
FLOAT32.add(np.roots, np.array([1.0, -0.5, -2.0], np.float32))
if hasattr(np, "matvec"):
    FLOAT32.add(np.matvec, x32(3, 4), x32(4))
    FLOAT32.add(np.vecmat, x32(3), x32(3, 4))
FLOAT32.add(np.poly, x32(3))
FLOAT32.add(np.gradient, x32(3, 4), axis=1)
FLOAT32.add(np.gradient, x32(5), np.float32(0.5), edge_order=2)
FLOAT32.add(np.polyfit, np.linspace(-1.0, 1.0, 5).astype(np.float32), x32(5), 2)
FLOAT32.add(np.unwrap, x32(4))
FLOAT32.add(np.corrcoef, x32(3, 5))
for _fn in (np.nanprod, np.nanvar, np.nanstd, np.nancumsum, np.nancumprod):
    FLOAT32.add(_fn, x32(3, 4), axis=1)
FLOAT32.add(np.append, x32(3), x32(2))
FLOAT32.add(np.insert, x32(4), [0, 2], x32(2))
FLOAT32.add(np.delete, x32(4), 1)
FLOAT32.add(np.compress, np.array([True, False, True]), x32(3))
FLOAT32.add(np.choose, np.array([0, 1, 0]), [x32(3), x32(3)])
FLOAT32.add(np.select, [np.array([True, False, False])], [x32(3)])
FLOAT32.add(np.cross, x32(2, 3), x32(3))
FLOAT32.add(np.kron, x32(2), x32(3))
FLOAT32.add(np.convolve, x32(4), x32(3))
FLOAT32.add(np.correlate, x32(4), x32(3), "same")
FLOAT32.add(np.polyval, x32(3), x32(4))
FLOAT32.add(np.vander, x32(3))
FLOAT32.add(np.interp, x32(3), np.array([-1.0, 0.0, 1.0], np.float32), x32(3))

globals().update(rule_tests(CASES, FLOAT32))


def test_float_power_gradients_keep_the_inputs_dtype():
    _, vjp = vjp_of(np.float_power, x32(3, gen=pos), np.float32(2.0))
    grads = vjp(np.ones(3))
    assert grads[0].dtype == np.float32 and np.asarray(grads[1]).dtype == np.float32


def test_quantile_gradient_is_a_gather_of_the_sorted_entries():
    a = np.array([3.0, -1.0, 2.0, 7.0, 0.5])  # sorted: -1, 0.5, 2, 3, 7
    _, vjp = vjp_of(np.quantile, a, 0.6)  # position 2.4: 0.6 * 2 + 0.4 * 3
    grad_a, grad_q = vjp(1.0)
    np.testing.assert_allclose(grad_a, [0.4, 0.0, 0.6, 0.0, 0.0])
    np.testing.assert_allclose(grad_q, (3.0 - 2.0) * 4)


def test_gradient_with_coordinates_is_linear_in_the_values_and_refuses_the_coordinates():
    x = np.cumsum(0.5 + pos(6))  # uneven, increasing sample points
    values = r(6)
    for edge_order in (1, 2):
        def f(v, edge_order=edge_order):
            return np.sum(np.sin(np.gradient(v, x, edge_order=edge_order)))
        eps = 1e-6
        numeric = np.array([(f(values + eps * e) - f(values - eps * e)) / (2 * eps)
                            for e in np.eye(6)])
        np.testing.assert_allclose(mindgrad.grad(f)(values), numeric, rtol=1e-6, atol=1e-8)

    def g(coords):
        return np.sum(np.gradient(values, coords) ** 2)
    with pytest.raises(NotImplementedError, match="coordinate arrays"):
        mindgrad.grad(g)(x)


def test_gradient_of_a_quadratic_matches_its_closed_form():
    # np.gradient of c * x^2 sampled at spacing h, edge_order 2, is exact: 2 c x; so
    # d/dc sum(gradient) = sum(2 x), and d/dh (at fixed samples) = -sum(2 c x) / h
    h, c = 0.25, 1.5
    x = h * np.arange(7.0)
    grad_c = mindgrad.grad(lambda c: np.sum(np.gradient(c * x * x, h, edge_order=2)))(c)
    np.testing.assert_allclose(grad_c, np.sum(2.0 * x))
    grad_h = mindgrad.grad(lambda h: np.sum(np.gradient(c * x * x, h, edge_order=2)))(h)
    np.testing.assert_allclose(grad_h, -np.sum(2.0 * c * x) / h)


def test_poly_gradient_matches_its_closed_form_and_refuses_a_matrix():
    # np.poly([a, b]) = [1, -(a + b), a b]: d/da of its sum is -1 + b
    a, b = 0.3, -1.7
    _, vjp = vjp_of(np.poly, np.array([a, b]))
    np.testing.assert_allclose(vjp(np.ones(3))[0], [-1.0 + b, -1.0 + a])
    _, vjp = vjp_of(np.poly, r(3, 3))
    with pytest.raises(NotImplementedError, match="characteristic polynomial"):
        vjp(np.ones(4))


def test_roots_gradient_matches_vietas_formulas():
    # the roots of p0 x^2 + p1 x + p2 sum to -p1 / p0 and multiply to p2 / p0
    p = np.array([2.0, -1.0, -3.0])  # roots 1.5 and -1
    _, vjp = vjp_of(np.roots, p)
    np.testing.assert_allclose(vjp(np.ones(2))[0], [p[1] / p[0] ** 2, -1.0 / p[0], 0.0],
                               atol=1e-12)

    def product(p):
        found = np.roots(p)
        return found[0] * found[1]
    np.testing.assert_allclose(mindgrad.grad(product)(p),
                               [-p[2] / p[0] ** 2, 0.0, 1.0 / p[0]], atol=1e-12)
    mindgrad.check_grads(roots_squared, (p,), order=2, modes=("rev", "fwd"), directions=1)


def roots_squared(p):
    return np.sum(np.roots(p * p[1]) ** 3)


def test_polydiv_remainder_by_a_linear_factor_is_the_value_at_its_root():
    # the remainder of u divided by (x - a) is u(a): d/du = [a^2, a, 1], d/dv = -u'(a) [a, 1]
    u, a = np.array([1.2, -0.5, 0.3]), 0.7
    _, vjp = vjp_of(np.polydiv, u, np.array([1.0, -a]))
    grad_u, grad_v = vjp((0, np.ones(1)))
    slope = 2.0 * u[0] * a + u[1]
    np.testing.assert_allclose(grad_u, [a * a, a, 1.0])
    np.testing.assert_allclose(grad_v, [-slope * a, -slope])
    mindgrad.check_grads(divided, (u, np.array([1.0, -a])), order=2, modes=("rev", "fwd"),
                         directions=1)


def test_polydiv_gradients_keep_float32():
    out, vjp = vjp_of(np.polydiv, x32(4), np.array([1.5, -0.4], np.float32))
    grads = vjp((np.ones_like(out[0]), np.ones_like(out[1])))
    assert [g.dtype for g in grads] == [np.float32, np.float32]


def divided(u, v):
    q, r = np.polydiv(u * u, v)
    return np.sum(q ** 3) + np.sum(np.sin(r))


def test_polyfit_diagnostics_are_refused():
    x = np.linspace(-1.0, 1.0, 5)
    _, vjp = vjp_of(np.polyfit, x, r(5), 2, full=True)
    with pytest.raises(NotImplementedError, match="full=True"):
        vjp((np.ones(3), 0, 0, 0, 0))


def test_weighted_quantiles_and_other_methods_are_refused():
    _, vjp = vjp_of(np.quantile, r(5), 0.3, method="inverted_cdf")
    with pytest.raises(NotImplementedError, match="inverted_cdf"):
        vjp(1.0)


# ----- through the transformer, to second order ----------------------------------------------


def robust_spread(x):
    return np.sum(np.quantile(x, np.array([0.25, 0.75]), axis=1) ** 2) + np.median(x) ** 3 + \
        np.ptp(x * x)


def integrals(y, x):
    return TRAPEZOID(np.sin(y) * y, np.cumsum(np.exp(x))) + np.sum(np.float_power(y * y, 1.5))


def covariances(x):
    return np.sum(np.cov(x) ** 2) + np.sum(np.corrcoef(x.T, rowvar=False) ** 3) + \
        np.sum(np.nanstd(x, axis=1) * np.nanprod(x, axis=0)[:3])


def rearranged(x):
    frac, whole = np.modf(3.0 * x)
    first, second = np.broadcast_arrays(x[:, None], x[None, :2])
    poly = np.polyadd(np.polymul(x, x), np.polyder(x * x * x))
    return np.sum(np.partition(x, 2) ** 3 * np.arange(6.0)) + np.sum(frac ** 2 + whole * x) + \
        np.sum(np.resize(x, (2, 4)) ** 2 * np.ediff1d(x, None, x[0])[:4]) + \
        np.sum(np.diagflat(x) @ first * second) + np.sum(poly ** 2) + np.sum(np.unwrap(x) ** 3)


def signals(a, v):
    return np.sum(np.convolve(a, v, "same") ** 2) + np.sum(np.correlate(a, v * v, "full") * a[0]) \
        + np.sum(np.cross(a[:3], v) ** 2) + np.sum(np.kron(a, v) ** 3)


def polynomials(p, x):
    fitted = np.polyfit(x + np.linspace(-2.0, 2.0, 4), x * x * p[1], 2)
    return np.sum(np.polyval(p, x) ** 2) + np.sum(np.vander(x, 3) ** 2 * p[0]) + \
        np.sum(np.interp(x, np.array([-1.0, 0.0, 1.0]), p) ** 2) + np.sum(fitted ** 3)


def roots_and_integrals(p, roots):
    return np.sum(np.polyint(p * p, 2, p[0]) ** 2) + np.sum(np.poly(roots * p[1]) ** 3)


def differences(f, h):
    rows, cols = np.gradient(f * f, h, 2.0 * h, edge_order=2)
    return np.sum(rows * cols) + np.sum(np.gradient(np.sin(f), axis=-1) ** 3)


def gathers(x):
    picked = np.choose(np.array([0, 1, 0, 1]), [x, x * x])
    chosen = np.select([x > 0], [x ** 3], x)
    return np.sum(np.append(x, x[:2] * 2.0) ** 2) + np.sum(np.insert(x, [1, 2], x[0]) ** 3) + \
        np.sum(np.delete(x, 1) * x[1:]) + np.sum(picked * chosen) + \
        np.sum(np.compress(np.array([True, False, True, True]), x) ** 3) + \
        np.sum(np.block([[x[:2], x[2:]], [x[::2] * x[1], x[1::2]]]) ** 3)


@pytest.mark.parametrize("fn, args", [(robust_spread, (r(3, 5),)), (integrals, (r(4), r(4))),
                                      (signals, (r(5), r(3))), (polynomials, (r(3), 0.6 * r(4))),
                                      (gathers, (r(4),)),
                                      (differences, (r(3, 4), 0.7)),
                                      (roots_and_integrals, (r(3), r(3))),
                                      (covariances, (r(3, 5),)),
                                      (rearranged, (r(6),))],
                         ids=["robust_spread", "integrals", "signals", "polynomials", "gathers",
                              "differences", "roots_and_integrals", "covariances", "rearranged"])
def test_through_the_transformer_to_second_order(fn, args):
    mindgrad.check_grads(fn, args, order=2, modes=("rev", "fwd"), directions=1)


@pytest.mark.skipif(not hasattr(np, "matvec"), reason="np.matvec and np.vecmat: NumPy >= 2.2")
def test_matvec_and_vecmat_to_second_order():
    def products(a, v):
        return np.sum(np.matvec(a * a, v) ** 3) + np.sum(np.vecmat(v * v, a) ** 2)

    mindgrad.check_grads(products, (r(3, 3), r(3)), order=2, modes=("rev", "fwd"), directions=1)


def test_matvec_with_axes_is_refused_at_the_users_line():
    if not hasattr(np, "matvec"):
        pytest.skip("np.matvec: NumPy >= 2.2")
    with pytest.raises(mindgrad.errors.NoGradientRuleError, match="axes"):
        mindgrad.grad(matvec_along_axes)(r(3, 3), r(3))


def matvec_along_axes(a, v):
    return np.sum(np.matvec(a, v, axes=[(0, 1), 0, 0]) ** 2)


def tensor_systems(a, b):
    return np.sum(np.linalg.tensorinv(a * a + 3.0 * np.eye(4).reshape(2, 2, 4)) ** 3) + \
        np.sum(np.sin(np.linalg.tensorsolve(a + 3.0 * np.eye(4).reshape(2, 2, 4), b * b)))


def test_tensorinv_and_tensorsolve_to_second_order():
    mindgrad.check_grads(tensor_systems, (0.3 * r(2, 2, 4), r(2, 2)), order=2,
                         modes=("rev", "fwd"), directions=1)


def _block_with_a_constant(x, y):
    return np.block([[x * x, y], [np.sin(x), 2.0 * y]])


def test_block_tangent_with_a_constant_piece():
    # a piece without a tangent gets zeros of its shape: np.block reads each piece's shape
    # (the symbolic zero in its place made a tangent of the wrong length)
    x, y = np.array([0.3, -1.2]), np.array([1.5, 0.4, -0.7])
    mindgrad.check_grads(_block_with_a_constant, (x, y), grad_position=0, modes=("rev", "fwd"),
                         order=2)
    mindgrad.check_grads(lambda a: np.block([a, y]), (x,), modes=("fwd",))
