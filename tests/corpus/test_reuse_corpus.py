"""The whole corpus through the reuse stage (``compiler/finish/reuse.py``): with the size
from which arrays count as large lowered to one element, every gradient is built with
``if spare(...)``, ``add_into`` and ``del``, and must equal, to the last bit, the gradient of
the code without them; its second derivative (the stage in the code of both orders) must match
central differences."""

import numpy as np
import pytest

import mindgrad
from mindgrad.compiler import cache
from tests.corpus.test_corpus import CASES, NEEDS_NUMPY, SECOND_ORDER, _params

FIRSTS = list({case[1].__name__: case for case in CASES}.values())


def _gradient(fn, args, position, kwargs, large):
    with cache.large_from(1 if large else cache.LARGE):
        grad = mindgrad.grad(fn, grad_position=position or 0)
        kwargs = kwargs or {}
        copies = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
        result = grad(*copies, **kwargs)
        for a, c in zip(args, copies):  # the caller's arrays are never written into
            if isinstance(a, np.ndarray):
                np.testing.assert_array_equal(a, c)
        return result, mindgrad.source(grad, *args, **kwargs)


def _equal(a, b):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b):
            _equal(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _equal(a[k], b[k])
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("fn, args, position, kwargs", _params(FIRSTS, {}))
def test_the_stage_changes_no_gradient(fn, args, position, kwargs):
    plain, plain_text = _gradient(fn, args, position, kwargs, large=False)
    reused, text = _gradient(fn, args, position, kwargs, large=True)
    assert "spare(" not in plain_text and "del " not in plain_text
    _equal(reused, plain)


def test_the_stage_rewrote_much_of_the_corpus():
    rewritten = 0
    for _, fn, args, position, kwargs in FIRSTS[:80]:
        if fn.__name__ in NEEDS_NUMPY:
            continue
        text = _gradient(fn, args, position, kwargs, large=True)[1]
        rewritten += "spare(" in text or "add_into(" in text
    assert rewritten >= 20  # 25 of these 80 when this was written


SECOND = [c for c in SECOND_ORDER if c[1].__name__ not in NEEDS_NUMPY][::3]


@pytest.mark.parametrize("fn, args, position, kwargs", _params(SECOND, {}))
def test_second_order_through_the_stage(fn, args, position, kwargs):
    with cache.large_from(1):
        mindgrad.check_grads(fn, args, grad_position=position, kwargs=kwargs, order=2,
                             modes=("rev",), directions=1)
