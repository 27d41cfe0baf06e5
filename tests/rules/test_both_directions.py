"""A rule's two directions differentiate the same arguments, and a keyword argument that moves
with the input gets its derivative, as a positional one does.

Two silent wrong gradients had one cause: the adjoint of ``np.var``/``np.std`` (and their
``nan`` and method forms) gave nothing for a ``mean=`` that moves with the input, and that of
``np.pad`` nothing for ``constant_values=``, while their tangents read both; the gradient was
the tangent's number without those terms. The rule tables held keyword arguments constant, so
no check saw it (tests/support/rule_check.py now moves them, unless a case names them
``constant_keywords``). The registry-wide test below finds the class: every argument one
direction differentiates, the other does too. The cases check against central differences,
in both modes and at second order.
"""

import traceback

import gast
import numpy as np
import pytest

import mindgrad
from mindgrad import rules
from mindgrad.rules.markers import is_d
from tests.support.versions import needs_numpy

RNG = np.random.default_rng(20261127)


def _targets(rule):
    """The parameters an adjoint rule writes ``d[p]`` for."""
    return {s.targets[0].slice.id for s in rule.body
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript)
            and is_d(s.targets[0].value)}


def _reads(rule):
    """The parameters whose tangent a tangent rule reads, or None when a statement reads
    none (a refusal of every tangent, whatever moves: it needs no list)."""
    read = set()
    for s in rule.body:
        if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript)):
            continue
        here = {n.slice.id for n in gast.walk(s.value)
                if isinstance(n, gast.Subscript) and is_d(n.value) and
                isinstance(n.slice, gast.Name)}
        if not here:
            return None
        read |= here
    return read


def test_both_directions_differentiate_the_same_arguments():
    rules._load_deferred()
    mismatched = []
    for key, adjoint in list(rules._RULES.items()):
        tangent = rules._TANGENTS.get(key)
        if tangent is None or not adjoint.template.__module__.startswith("mindgrad."):
            continue
        read = _reads(tangent)
        if read is not None and _targets(adjoint) != read:
            mismatched.append(f"{adjoint.name}: gradients for {sorted(_targets(adjoint))}, "
                              f"tangents of {sorted(read)}")
    assert not mismatched, "\n".join(mismatched)


# ----- a moving mean= of the variance and the standard deviation ------------------------------


def _var_of_moving_mean(x):
    m = np.mean(x, axis=0, keepdims=True) * 1.1 + 0.2
    return np.sum(np.var(x, axis=0, mean=m) * np.arange(1.0, x.shape[1] + 1.0))


def _std_of_moving_mean(x):
    m = np.sin(np.mean(x, axis=0, keepdims=True))
    return np.sum(np.std(x, axis=0, ddof=1, mean=m))


def _nan_forms(x):
    y = np.where(np.arange(x.size).reshape(x.shape) == 4, np.nan, x)
    m = np.nanmean(y, axis=1, keepdims=True) * 0.7
    return np.sum(np.nanvar(y, axis=1, mean=m)) + np.sum(np.nanstd(y, axis=1, mean=m) ** 2)


def _methods(x):
    m = np.mean(x) * 0.5
    return x.var(mean=m) + x.std(mean=m, ddof=1)


def _whole_array(x):  # a 0-d mean over every axis
    return np.var(x, mean=np.max(x) * 0.3)


MEANS = [_var_of_moving_mean, _std_of_moving_mean, _nan_forms, _methods, _whole_array]


@needs_numpy((2, 0), "np.var(mean=)")
@pytest.mark.parametrize("fn", MEANS, ids=[f.__name__.strip("_") for f in MEANS])
@pytest.mark.parametrize("shape", [(4, 3), (2, 5)])
def test_a_moving_mean_gets_its_gradient(fn, shape):
    x = RNG.standard_normal(shape)
    mindgrad.check_grads(fn, (x,), modes=("rev", "fwd"), order=2)


@needs_numpy((2, 0), "np.var(mean=)")
def test_a_moving_mean_in_float32_and_against_the_closed_form():
    x = RNG.standard_normal((4, 3))
    # d/dx sum(var(x, mean=c*mean(x))): 2 (x - m) / n, less the mean's share 2 c sum(x - m) / n^2
    c = 1.1
    m = c * x.mean(axis=0, keepdims=True)
    expected = 2 * (x - m) / 4 - 2 * c * np.sum(x - m, axis=0, keepdims=True) / 16

    def f(v):
        return np.sum(np.var(v, axis=0, mean=c * np.mean(v, axis=0, keepdims=True)))

    np.testing.assert_allclose(mindgrad.grad(f)(x), expected, rtol=1e-12)
    g32 = mindgrad.grad(f)(x.astype(np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, expected, rtol=1e-5)


# ----- np.pad's constant_values and end_values ------------------------------------------------


def _padded_by_a_moving_number(x):
    c = np.sum(x) * 0.5
    return np.sum(np.sin(np.pad(x, 2, mode="constant", constant_values=c)))


def _padded_per_side(x):  # one value per axis and side: the corners take the later axis's
    c = np.stack([x[0, :2], x[1, :2] * 2.0])
    return np.sum(np.pad(x, ((1, 2), (2, 1)), constant_values=c) ** 2)


def _padded_per_axis(x):  # one pair for every axis
    c = x[0, :2] * np.array([1.0, -1.0])
    return np.sum(np.cos(np.pad(x, 1, constant_values=c)))


PADS = [_padded_by_a_moving_number, _padded_per_side, _padded_per_axis]


@pytest.mark.parametrize("fn", PADS, ids=[f.__name__.strip("_") for f in PADS])
def test_a_moving_constant_value_gets_its_gradient(fn):
    x = RNG.standard_normal((2, 3))
    mindgrad.check_grads(fn, (x,), modes=("rev", "fwd"), order=2)


def test_the_padding_gradient_in_closed_form():
    # sum(pad(x, 1, constant_values=c)) = sum(x) + c * (number of padded entries), c = k sum(x)
    x = RNG.standard_normal((2, 3))

    def f(v):
        return np.sum(np.pad(v, 1, constant_values=0.25 * np.sum(v)))

    padded = 4 * 5 - 2 * 3
    np.testing.assert_allclose(mindgrad.grad(f)(x), np.full((2, 3), 1 + 0.25 * padded))
    np.testing.assert_allclose(mindgrad.grad(f)(np.float64(2.0) * x[0]),
                               np.full(3, 1 + 0.25 * 2))


def _ramp_to_a_moving_end(x):  # the padded array a constant: the end value alone moves
    return np.sum(np.pad(np.ones(3), 2, mode="linear_ramp", end_values=np.sum(x)))


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_a_moving_end_value_is_refused_at_the_users_line(mode):
    x = RNG.standard_normal(4)
    with pytest.raises(NotImplementedError, match="end_values") as info:
        if mode == "rev":
            mindgrad.grad(_ramp_to_a_moving_end)(x)
        else:
            mindgrad.jvp(_ramp_to_a_moving_end, (x,), (np.ones(4),))
    frames = traceback.extract_tb(info.value.__traceback__)
    assert any(f.filename == __file__ and "linear_ramp" in (f.line or "") for f in frames)


# ----- a norm's moving order: refused, not a silent 0 -----------------------------------------


def _norm_of_moving_order(x):
    return np.linalg.norm(x, ord=2.0 + np.sum(x) ** 2)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_a_moving_norm_order_is_refused(mode):
    x = RNG.standard_normal(3)
    with pytest.raises(NotImplementedError, match="the order ord of a norm"):
        if mode == "rev":
            mindgrad.grad(_norm_of_moving_order)(x)
        else:
            mindgrad.jvp(_norm_of_moving_order, (x,), (np.ones(3),))


def test_a_constant_norm_order_is_differentiated_as_before():
    x = RNG.standard_normal(5)
    mindgrad.check_grads(lambda v: np.linalg.norm(v, ord=3.0) + np.linalg.norm(v, 1),
                         (x,), modes=("rev", "fwd"), order=2)
