"""The corpus on Dask arrays, computed on a ``dask.distributed.LocalCluster``: every corpus
function that Dask computes as NumPy does gives, with its float arrays made Dask arrays, the
gradient (reverse mode) and the tangent (forward mode) NumPy's arguments give, from the same
generated source.

For each function (its first input set): the function is run on NumPy and on Dask arrays;
where Dask computes it as NumPy does, ``grad`` and ``jvp`` run on the Dask arrays with every
computation refused (the gradient is built and stays lazy: nothing is computed before the
caller asks), the gradients of Dask inputs are Dask arrays with the inputs' chunks, and, once
computed on the cluster, they equal NumPy's. A function whose gradient Dask cannot compute
lazily must raise the clear error ``REFUSED`` names; a function Dask does not compute is
named in ``NOT_DASK`` with Dask's reason, so the table cannot go stale either way.
"""

import numpy as np
import pytest

import mindgrad
from mindgrad.api.check import _with_keywords
from mindgrad.runtime import GradientError
from tests.corpus import corpus
from tests.corpus.test_corpus import REJECTED

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

# gradients that have no lazy form on a Dask array: the function, and the error they raise
REFUSED = {
    "boolean_mask": "with a boolean mask on Dask arrays",
    "mask_from_other_array": "with a boolean mask on Dask arrays",
    "masked_assignment": "with an array of indices on Dask arrays",
    "pick_by_argmax": "that is itself lazy on Dask arrays",
}

# functions Dask does not compute as NumPy does, by what it raises or gives
NOT_DASK = {
    "fancy_2d_index": "Don't yet support nd fancy indexing",
    "cross_entropy": "Don't yet support nd fancy indexing",
    "method_chain": "cumsum() missing 1 required positional argument",
    "ravel_flatten_trace": "has no attribute 'diagonal'",
    "item_and_float": "has no attribute 'item'",
    "linear_solve_loss": "All chunks must be a square matrix",
    "inverse_and_det": "All chunks must be a square matrix",
    "quadratic_form_slogdet": "All chunks must be a square matrix",
    "batched_inv_det": "Dimension must be 2 to perform lu decomposition",
}


# gradients that fail on Dask arrays today, with the diagnosis (strict: a fix makes them pass,
# and the entry must go)
XFAIL = {
}


def _dask(value):
    """A float array as a Dask array of about two chunks per axis; else the value."""
    if isinstance(value, np.ndarray) and value.ndim and value.dtype.kind in "fc":
        return da.from_array(value, chunks=tuple(max(1, (n + 1) // 2) for n in value.shape))
    if isinstance(value, (list, tuple)):
        return type(value)(_dask(v) for v in value)
    if isinstance(value, dict):
        return {k: _dask(v) for k, v in value.items()}
    return value


def _holds_dask(value):
    if isinstance(value, da.Array):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_dask(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_dask(v) for v in value.values())
    return False


def _cases(mode):
    out = []
    for fn, arg_sets, position, kwargs in corpus.CASES:
        args = arg_sets[0]
        if fn.__name__ in REJECTED:
            continue
        if any(_holds_dask(_dask(a)) for a in args):
            position = position or 0
            modes, reason = XFAIL.get(fn.__name__, ("", ""))
            marks = (pytest.mark.xfail(reason=reason, strict=True),) if mode in modes else ()
            out.append(pytest.param(fn, args, position if isinstance(position, int) else
                                    position[0], kwargs or {}, id=fn.__name__, marks=marks))
    return out


CASES = _cases("rev")


def _refuse_compute(*args, **kwargs):
    raise AssertionError("a Dask graph was computed while the derivative was built")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _computed(client, value):
    futures = client.compute(value)
    return client.gather(futures)


def _leaves(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, dict):
        for k in sorted(value, key=repr):
            yield from _leaves(value[k])
    else:
        yield value


def _assert_same(got, want, what):
    got, want = list(_leaves(got)), list(_leaves(want))
    assert len(got) == len(want), what
    for g, w in zip(got, want):
        if isinstance(w, (str, bytes)) or w is None:
            assert g == w, what
            continue
        single = np.result_type(w) in (np.float32, np.complex64)
        np.testing.assert_allclose(np.asarray(g, complex), np.asarray(w, complex),
                                   rtol=1e-5 if single else 1e-7, atol=1e-6 if single else 1e-12,
                                   err_msg=what)


_FORWARD = {}


def _dask_computes(fn, args, dargs, kwargs):
    """Whether Dask computes ``fn`` as NumPy does (else the reason), and whether it does so
    lazily: without a computation before the caller asks for one (a function whose own code
    branches on an array's values computes there, as Dask does, and so does its gradient).
    Read once per function, in this process, without the cluster (the derivatives use it)."""
    if fn.__name__ in _FORWARD:
        return _FORWARD[fn.__name__]
    try:
        with dask.config.set(scheduler=_refuse_compute), np.errstate(all="ignore"):
            lazy_out = fn(*dargs, **kwargs)
        lazy = True
    except Exception:  # noqa: BLE001 (a NumPy array written with Dask values computes them)
        lazy = False
    try:
        with np.errstate(all="ignore"), dask.config.set(scheduler="synchronous"):
            want = fn(*args, **kwargs)
            got = dask.compute(lazy_out if lazy else fn(*dargs, **kwargs))[0]
        _assert_same(got, want, "forward")
        found = None, lazy
    except Exception as e:  # noqa: BLE001 (what Dask raises is its own)
        found = f"{type(e).__name__}: {e}", False
    _FORWARD[fn.__name__] = found
    return found


def test_the_tables_name_corpus_functions():
    names = {case.id for case in CASES}
    assert set(REFUSED) <= names and set(NOT_DASK) <= names and set(XFAIL) <= names


@pytest.mark.parametrize("fn, args, position, kwargs", CASES)
def test_reverse_mode_on_dask(fn, args, position, kwargs, client):
    dargs = tuple(_dask(a) for a in args)
    reason, lazy = _dask_computes(fn, args, dargs, kwargs)
    if fn.__name__ in NOT_DASK:
        assert reason is not None and NOT_DASK[fn.__name__] in reason, reason
        return
    assert reason is None, f"Dask does not compute {fn.__name__} as NumPy does: {reason}"
    gradient = mindgrad.grad(fn, position)
    want = gradient(*args, **kwargs)
    with dask.config.set(scheduler=_refuse_compute if lazy else client.get):
        if fn.__name__ in REFUSED:
            with pytest.raises(GradientError, match=REFUSED[fn.__name__]):
                gradient(*dargs, **kwargs)
            return
        got = gradient(*dargs, **kwargs)
    if isinstance(dargs[position], da.Array):
        assert isinstance(got, da.Array), type(got)
        assert got.chunks == dargs[position].chunks
    _assert_same(_computed(client, got), want, f"the gradient of {fn.__name__}")
    # one spelling for every array type: the code that ran is the code NumPy's arguments run
    assert mindgrad.source(gradient, *dargs, **kwargs) == \
        mindgrad.source(gradient, *args, **kwargs)


@pytest.mark.parametrize("fn, args, position, kwargs", _cases("fwd"))
def test_forward_mode_on_dask(fn, args, position, kwargs, client):
    if fn.__name__ in NOT_DASK or fn.__name__ in REFUSED:
        pytest.skip("checked in reverse mode")
    if not isinstance(args[position], (np.ndarray, float)):
        pytest.skip("the tangent of a container argument: tests/corpus/test_corpus.py")
    bound = _with_keywords(fn, len(args), kwargs) if kwargs else fn
    rng = np.random.default_rng(0)
    tangent = rng.standard_normal(np.shape(args[position])).astype(
        np.result_type(args[position], np.float32))
    if not isinstance(args[position], np.ndarray):
        tangent = type(args[position])(tangent) if np.ndim(tangent) == 0 else tangent
    dargs = tuple(_dask(a) for a in args)
    reason, lazy = _dask_computes(fn, args, dargs, kwargs)
    assert reason is None, f"Dask does not compute {fn.__name__} as NumPy does: {reason}"
    want = mindgrad.jvp(bound, args, tuple(tangent if i == position else None
                                           for i in range(len(args))))
    with dask.config.set(scheduler=_refuse_compute if lazy else client.get):
        got = mindgrad.jvp(bound, dargs, tuple(_dask(tangent) if i == position else None
                                               for i in range(len(args))))
    _assert_same(_computed(client, got), want, f"the tangent of {fn.__name__}")


@pytest.mark.parametrize("broken", [None, "inf", "nan"])
def test_times_slope_on_dask_is_numpys(broken):
    """The branch-free product on Dask arrays picks what NumPy's test of the slope picks: at
    second order (``of`` given), where ``of`` is 0 and every slope finite, ``g * slope``, not 0."""
    from mindgrad.runtime.core import times_slope

    rng = np.random.default_rng(1)
    g, slope, of = rng.standard_normal((3, 6))
    of[1], g[2] = 0.0, 0.0
    if broken:
        slope[3] = float(broken)

    def lazy(a):
        return da.from_array(a, chunks=3)

    for o in (None, of):
        want = times_slope(g, slope, o)
        got = times_slope(lazy(g), lazy(slope), None if o is None else lazy(o))
        assert isinstance(got, da.Array)
        got = got.compute(scheduler="synchronous")
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
