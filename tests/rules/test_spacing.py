"""``np.linspace``, ``np.logspace``, ``np.geomspace`` and ``math.copysign`` are differentiable in
their start, stop (base, magnitude): array endpoints, ``axis``, ``endpoint``, ``retstep``, in
both modes and at second order."""

import math

import numpy as np
import pytest

import mindgrad as mg
from tests.support.versions import needs_numpy


def linspace_scalars(a, b):
    return np.sum(np.sin(np.linspace(a, b, 5)).T * np.arange(5.0))


def linspace_last_axis_open(a, b):
    return np.sum(np.sin(np.linspace(a, b, 4, endpoint=False, axis=-1)) *
                  np.arange(12.0).reshape(3, 4))


def linspace_with_step(a, b):
    samples, step = np.linspace(a, b, 4, retstep=True, axis=1)
    return np.sum(np.sin(samples) * np.arange(24.0).reshape(2, 4, 3)) + np.sum(step ** 2)


def geomspace_sum(a, b):
    return np.sum(np.sin(np.geomspace(a, b, 5)))


def geomspace_axis(a, b):
    return np.sum(np.sin(np.geomspace(a, b, 4, axis=1)) * np.arange(12.0).reshape(3, 4))


def logspace_sum(a, b):
    return np.sum(np.sin(np.logspace(a, b, 5)))


def logspace_base(a, b, base):
    return np.sum(np.sin(np.logspace(a, b, 4, base=base, axis=-1)))


def copysign_mix(x, y):
    return math.copysign(x, y) * x + math.copysign(x * 2.0, -y)


CASES = [
    (linspace_scalars, (0.3, 1.7)), (linspace_scalars, (0.3, np.array([1.0, 2.0]))),
    (linspace_last_axis_open, (np.array([0.1, 0.2, 0.3]), 2.5)),
    (linspace_with_step, (np.array([[0.1, 0.2, 0.3], [0.5, 0.1, -0.2]]),
                          np.array([1.0, 2.0, 0.5]))),
    (geomspace_sum, (0.5, 2.0)), (geomspace_sum, (-0.5, -3.0)),
    (geomspace_axis, (np.array([0.5, 1.0, 2.0]), 3.0)),
    (logspace_sum, (0.1, 0.7)), (logspace_sum, (np.array([0.1, 0.2]), 0.7)),
    (logspace_base, (0.1, np.array([0.3, 0.5]), 2.5)),
    (logspace_base, (0.1, 0.4, np.array([2.0, 3.0]))),
    (copysign_mix, (0.7, -1.3)), (copysign_mix, (-0.7, 1.3)),
]


def _marks(fn, args):
    if fn is logspace_base and np.ndim(args[2]) > 0:
        return needs_numpy((1, 25), "an array base of np.logspace")
    return ()


@pytest.mark.parametrize("fn, args", [pytest.param(fn, args, id=f"{fn.__name__}-{i}",
                                                   marks=_marks(fn, args))
                                      for i, (fn, args) in enumerate(CASES)])
def test_spacing_functions_match_central_differences(fn, args):
    mg.check_grads(fn, args, modes=("rev", "fwd"), order=2)


def test_linspace_gradient_closed_form_and_float32():
    a, b = np.float32(0.25), np.array([1.0, 3.0], np.float32)
    ga, gb = mg.grad(lambda a, b: np.sum(np.linspace(a, b, 5, axis=-1) ** 2), (0, 1))(a, b)
    t = np.linspace(0.0, 1.0, 5)
    samples = a + (b[:, None] - a) * t
    assert ga.dtype == gb.dtype == np.float32
    np.testing.assert_allclose(ga, np.sum(2 * samples * (1 - t)), rtol=1e-6)
    np.testing.assert_allclose(gb, np.sum(2 * samples * t, axis=-1), rtol=1e-6)
