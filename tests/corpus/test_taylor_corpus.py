"""jet's Taylor code on the corpus: every corpus function of float arguments and one real result
that has Taylor code gives, along a random curve, the derivatives nested forward mode gives
(``taylor.nested``, itself checked against closed forms in tests/api/test_taylor.py): order 2
here, orders 3 and 4 in the slow tier. A function without Taylor code runs nested forward mode,
so it agrees by construction and is not counted."""

import math

import numpy as np
import pytest

import mindgrad
from mindgrad.api import taylor
from tests.corpus.corpus import CASES


def _candidates():
    for fn, arg_sets, _, kwargs in CASES:
        args = arg_sets[0]
        if kwargs or not all(isinstance(a, (np.ndarray, float)) for a in args):
            continue
        args = tuple(np.asarray(a, dtype=float) if isinstance(a, np.ndarray) else a
                     for a in args)
        try:
            out = fn(*args)
        except Exception:  # noqa: BLE001  a case meant for another argument set
            continue
        if isinstance(out, (float, np.floating, np.ndarray)) and not np.iscomplexobj(out):
            yield fn, args


def _compare(order):
    checked, wrong = [], []
    rng = np.random.default_rng(order)
    for fn, args in _candidates():
        if isinstance(taylor.taylor_code(fn, args), str):
            continue
        series = tuple(0.3 * rng.standard_normal((order,) + np.shape(a)) for a in args)
        coefficients = [s[k] / math.factorial(k + 1) for s in series for k in range(order)]
        out, got = mindgrad.jet(fn, args, series)
        expected = taylor.nested(fn, args, coefficients, order, out)
        checked.append(fn.__name__)
        if not np.allclose(got, expected, rtol=1e-8, atol=1e-10):
            wrong.append((fn.__name__, float(np.max(np.abs(got - expected)))))
    return checked, wrong


def test_the_corpus_taylor_code_matches_nested_forward_mode_at_order_two():
    checked, wrong = _compare(2)
    assert not wrong, wrong
    assert len(checked) >= 85, f"only {len(checked)} corpus functions have Taylor code"


@pytest.mark.slow
@pytest.mark.parametrize("order", [3, 4])
def test_the_corpus_taylor_code_at_higher_orders(order):
    checked, wrong = _compare(order)
    assert not wrong, wrong
