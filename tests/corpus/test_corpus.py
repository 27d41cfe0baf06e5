"""The corpus: every function of ``corpus.py`` at every input set, against finite differences.

Also: the corpus is big enough, a second gradient of each function hits the cache, the
generated source of representative functions is well formed, a few gradients match closed
forms, and float32 inputs get float32 gradients.

Cases that fail because of a known mindgrad bug are ``xfail(strict=True)`` with a one-line
diagnosis in ``XFAIL`` below; when the bug is fixed the case XPASSes and the entry must go.
"""

import re

import numpy as np
import pytest

import mindgrad
from tests.corpus import corpus
from tests.support.versions import NUMPY, needs_numpy

# ----- known bugs ------------------------------------------------------------------------------

# Cases whose gradient check is expected to fail, with the diagnosis: none at present. When a
# bug is found, add its case here (strict xfail) until it is fixed.
XFAIL = {}

# Functions whose gradient cannot even be built (so nothing is cached): none at present.
XFAIL_BUILD = {}

# Cases whose second derivative fails today, with the error seen (strict xfails): none at
# present. When a bug is found, add its case here until it is fixed.
XFAIL_SECOND_ORDER = {}

# Functions mindgrad rejects on purpose, with the error they must raise.
REJECTED = {
    "write_through_alias": (mindgrad.UnsupportedSyntaxError, "another name for the same"),
    "ufunc_with_out_argument": (mindgrad.UnsupportedSyntaxError, "out= writes into"),
}


# Functions that use what the oldest supported NumPy lacks: skipped there, wherever they run.
NEEDS_NUMPY = {"every_augmented_operator": ((2, 0), "`z @= a` on arrays")}


# ----- the cases -------------------------------------------------------------------------------


def _cases():
    """(id, fn, args, grad_position, kwargs) for every function and input set."""
    seen = {}
    out = []
    for fn, arg_sets, position, kwargs in corpus.CASES:
        if fn.__name__ in REJECTED:
            continue
        for args in arg_sets:
            k = seen.get(fn.__name__, 0)
            seen[fn.__name__] = k + 1
            out.append((f"{fn.__name__}-{k}", fn, args, position, kwargs))
    return out


CASES = _cases()


def _first_cases_of(cases):
    """The first input set of every function."""
    firsts = {}
    for case in cases:
        firsts.setdefault(case[1].__name__, case)
    return list(firsts.values())


def _params(cases, table):
    params = []
    for case_id, *rest in cases:
        marks = ()
        if case_id in table:
            marks = (pytest.mark.xfail(reason=table[case_id], strict=True),)
        if rest[0].__name__ in NEEDS_NUMPY:
            marks += (needs_numpy(*NEEDS_NUMPY[rest[0].__name__]),)
        params.append(pytest.param(*rest, id=case_id, marks=marks))
    return params


def test_xfail_table_names_real_cases():
    ids = {c[0] for c in CASES}
    assert set(XFAIL) <= ids
    assert set(XFAIL_BUILD) <= {fn.__name__ for fn in corpus.FUNCTIONS}


@pytest.mark.parametrize("fn, args, position, kwargs", _params(CASES, XFAIL))
def test_gradient_matches_finite_differences(fn, args, position, kwargs):
    mindgrad.check_grads(fn, args, grad_position=position, kwargs=kwargs)


@pytest.mark.parametrize("fn, args, position, kwargs", _params(CASES, XFAIL))
def test_forward_mode_matches_finite_differences(fn, args, position, kwargs):
    mindgrad.check_grads(fn, args, grad_position=position, kwargs=kwargs, modes=("fwd",),
                         directions=1)


def _scalar_or_array_output(case):
    _, fn, args, _, kwargs = case
    if fn.__name__ in NEEDS_NUMPY and NUMPY < NEEDS_NUMPY[fn.__name__][0]:
        return True  # it cannot run here, and its tests are skipped
    return isinstance(fn(*args, **(kwargs or {})), (float, np.floating, np.ndarray))


SECOND_ORDER = [case for case in _first_cases_of(CASES) if _scalar_or_array_output(case)]


def _alternate_modes(cases):
    """Function name -> "rev" or "fwd", alternately down ``cases``: the mode of the next order
    (reverse over the inner derivatives, or forward over them) the `large` tier checks it in,
    so that each mode meets every kind of construct; `pytest -m slow` checks the other."""
    return {case[1].__name__: ("rev", "fwd")[i % 2] for i, case in enumerate(cases)}


def _other_mode(mode):
    return "fwd" if mode == "rev" else "rev"


SECOND_ORDER_MODES = _alternate_modes(SECOND_ORDER)


def _check_in_mode(fn, args, position, kwargs, order, modes, other=False):
    """``check_grads`` at ``order`` in the mode ``modes`` gives ``fn`` (the other one if
    ``other``), one direction."""
    mode = modes[fn.__name__]
    mindgrad.check_grads(fn, args, grad_position=position, kwargs=kwargs, order=order,
                         modes=(_other_mode(mode) if other else mode,), directions=1)


@pytest.mark.parametrize("fn, args, position, kwargs", _params(SECOND_ORDER, XFAIL_SECOND_ORDER))
def test_second_order_matches_finite_differences(fn, args, position, kwargs):
    # reverse over reverse, or forward over reverse, against differences of the gradient
    _check_in_mode(fn, args, position, kwargs, 2, SECOND_ORDER_MODES)


@pytest.mark.slow
@pytest.mark.parametrize("fn, args, position, kwargs", _params(SECOND_ORDER, XFAIL_SECOND_ORDER))
def test_second_order_in_the_other_mode(fn, args, position, kwargs):
    _check_in_mode(fn, args, position, kwargs, 2, SECOND_ORDER_MODES, other=True)


# Third order on functions with loops, branches, jumps, index assignment, containers and user
# subroutines: reverse over reverse over reverse, and forward over both reverse passes.
THIRD_ORDER_FUNCTIONS = (
    "horner", "newton_sqrt", "break_at_threshold", "continue_on_odd", "early_return_in_loop",
    "nested_loop_break_inner", "nested_branches", "huber_scalar", "fill_zeros_rows",
    "slice_augmented", "overwrite_then_read", "swap_rows", "dict_literal", "append_then_stack",
    "power_recursive", "helper_in_loop", "rnn_unroll", "take_and_tensordot", "roll_and_pad",
    "item_and_float", "list_appended_then_indexed",
    # a list grown by concatenation: at third order reverse mode reads the adjoint of the
    # concatenation's adjoint (concat_grads_adjoint), which it once took for an array sum
    "grow_list_by_concatenation",
)
THIRD_ORDER = [case for case in SECOND_ORDER if case[1].__name__ in THIRD_ORDER_FUNCTIONS]
XFAIL_THIRD_ORDER = {}  # none at present: a case found failing goes here, as a strict xfail


# Each function is checked at third order in one mode in the `large` tier, reverse over reverse
# over reverse and forward over both reverse passes alternately down the list, so that both
# modes meet loops, jumps, containers and subroutines; `pytest -m slow` checks the other mode.
THIRD_ORDER_MODES = _alternate_modes(THIRD_ORDER)


@pytest.mark.parametrize("fn, args, position, kwargs", _params(THIRD_ORDER, XFAIL_THIRD_ORDER))
def test_third_order_matches_finite_differences(fn, args, position, kwargs):
    _check_in_mode(fn, args, position, kwargs, 3, THIRD_ORDER_MODES)


@pytest.mark.slow
@pytest.mark.parametrize("fn, args, position, kwargs", _params(THIRD_ORDER, XFAIL_THIRD_ORDER))
def test_third_order_in_the_other_mode(fn, args, position, kwargs):
    _check_in_mode(fn, args, position, kwargs, 3, THIRD_ORDER_MODES, other=True)


@pytest.mark.slow
@pytest.mark.parametrize("fn, args, position, kwargs",
                         _params([c for c in SECOND_ORDER if c not in THIRD_ORDER],
                                 XFAIL_THIRD_ORDER))
def test_third_order_of_the_whole_corpus(fn, args, position, kwargs):
    mindgrad.check_grads(fn, args, grad_position=position, kwargs=kwargs, order=3,
                         modes=("rev", "fwd"), directions=1)


def test_third_order_covers_the_functions_named():
    assert len(THIRD_ORDER) == len(THIRD_ORDER_FUNCTIONS)
    # both modes meet the list's constructs in the large tier
    assert set(THIRD_ORDER_MODES.values()) == set(SECOND_ORDER_MODES.values()) == {"rev", "fwd"}


# ----- (a) size ----------------------------------------------------------------------------------


def test_corpus_has_at_least_110_functions():
    assert len(corpus.FUNCTIONS) >= 110
    assert len({fn.__name__ for fn in corpus.FUNCTIONS}) == len(corpus.FUNCTIONS)
    assert len(CASES) >= 2 * 110


# ----- (b) the second gradient hits the cache --------------------------------------------------


def _positions(args, position):
    if position is not None:
        return position
    found = tuple(i for i, a in enumerate(args)
                  if (isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")
                      or (isinstance(a, (tuple, list, dict)) and a)))
    return found if len(found) > 1 else found[0]


def _first_cases():
    firsts = {}
    for case_id, fn, args, position, kwargs in CASES:
        firsts.setdefault(fn.__name__, (fn.__name__, fn, args, position, kwargs))
    return list(firsts.values())


@pytest.mark.parametrize("fn, args, position, kwargs", _params(_first_cases(), XFAIL_BUILD))
def test_second_gradient_hits_cache(fn, args, position, kwargs):
    positions = _positions(args, position)
    kwargs = kwargs or {}
    try:  # a run-time failure (see XFAIL) still leaves the built gradient in the cache
        mindgrad.grad(fn, positions)(*args, **kwargs)
    except (ValueError, IndexError, NameError, KeyError, UnboundLocalError, TypeError):
        pass
    before = mindgrad.cache_stats()
    try:
        mindgrad.grad(fn, positions)(*args, **kwargs)
    except (ValueError, IndexError, NameError, KeyError, UnboundLocalError, TypeError):
        pass
    after = mindgrad.cache_stats()
    assert after["builds"] == before["builds"]
    assert after["hits"] > before["hits"]


# ----- (c) generated source ------------------------------------------------------------------

REPRESENTATIVE = [
    corpus.affine_broadcast, corpus.strided_slices, corpus.block_slices, corpus.column_assignment,
    corpus.slice_augmented, corpus.ellipsis_and_negative_step, corpus.zip_layers,
    corpus.early_return_in_loop, corpus.two_layer_net, corpus.attention, corpus.rnn_unroll,
    corpus.layer_norm, corpus.dict_params_mlp, corpus.set_with_integer_array,
    corpus.fill_zeros_rows, corpus.break_at_threshold,
]

# a parenthesised slice such as ``(1:3)`` or ``(:, 0)`` in code (not comments)
_SLICE_IN_PARENS = re.compile(r"\([\w.\- ]*:[\w.\-, ]*\)")


@pytest.mark.parametrize("fn", REPRESENTATIVE, ids=lambda f: f.__name__)
def test_generated_source_is_well_formed(fn):
    _, _, args, position, _ = next(c for c in _first_cases() if c[1] is fn)
    text = mindgrad.grad(fn, _positions(args, position)).source(*args)
    compile(text, f"<generated {fn.__name__}>", "exec")
    assert "# grad of:" in text
    code_lines = [line for line in text.splitlines() if not line.strip().startswith("#")]
    bad = [line for line in code_lines if _SLICE_IN_PARENS.search(line)]
    assert not bad, bad
    assert f"def grad_{fn.__name__}(" in text


# ----- (d) closed forms ------------------------------------------------------------------------


def cube_sum(x):
    return np.sum(x ** 3)


def test_closed_form_cube_sum():
    x = np.array([0.5, -1.5, 2.0])
    np.testing.assert_allclose(mindgrad.grad(cube_sum)(x), 3 * x ** 2, rtol=1e-12)


def test_closed_form_logsumexp_is_softmax():
    z = np.array([0.3, -1.2, 2.0, 0.7])
    e = np.exp(z - z.max())
    np.testing.assert_allclose(mindgrad.grad(corpus.logsumexp)(z), e / e.sum(), rtol=1e-12)


def test_closed_form_cross_entropy():
    logits = np.array([[0.2, -1.0, 0.5], [1.5, 0.3, -0.2]])
    onehot = np.eye(3)[[2, 0]]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    expected = (e / e.sum(axis=1, keepdims=True) - onehot) / 2
    np.testing.assert_allclose(mindgrad.grad(corpus.cross_entropy_onehot)(logits, onehot),
                               expected, rtol=1e-12)


def test_closed_form_log_det_and_inverse():
    a = np.array([[3.0, 0.5], [-0.2, 2.0]])
    inv = np.linalg.inv(a)
    # d/dA [sum(inv(A)) + log det A] = -inv^T 1 1^T inv^T + inv^T
    ones = np.ones((2, 2))
    expected = -inv.T @ ones @ inv.T + inv.T
    np.testing.assert_allclose(mindgrad.grad(corpus.inverse_and_det)(a), expected, rtol=1e-12)


def test_closed_form_horner_and_newton():
    coeffs = np.array([2.0, -1.0, 0.5])  # 2x^2 - x + 0.5
    assert mindgrad.grad(corpus.horner, 1)(coeffs, 1.5) == pytest.approx(4 * 1.5 - 1)
    assert mindgrad.grad(corpus.newton_sqrt)(2.0) == pytest.approx(0.5 / np.sqrt(2.0))


def test_closed_form_matmul_chain_and_two_positions():
    a, b, c = np.arange(6.0).reshape(2, 3), np.ones((3, 4)), np.arange(8.0).reshape(4, 2)
    ga, gc = mindgrad.grad(corpus.matmul_chain, (0, 2))(a, b, c)
    np.testing.assert_allclose(ga, np.ones((2, 2)) @ (b @ c).T)
    np.testing.assert_allclose(gc, (a @ b).T @ np.ones((2, 2)))


# ----- float32 -----------------------------------------------------------------------------------

FLOAT32 = [(fn, args) for fn, arg_sets, _, _ in corpus.CASES for args in arg_sets
           if any(getattr(a, "dtype", None) == np.float32 for a in args)]


@pytest.mark.parametrize("fn, args", FLOAT32, ids=lambda v: getattr(v, "__name__", "args"))
def test_float32_inputs_get_float32_gradients(fn, args):
    positions = tuple(range(len(args)))
    grads = mindgrad.grad(fn, positions)(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    args64 = [a.astype(np.float64) for a in args]
    grads64 = mindgrad.grad(fn, positions)(*args64)
    grads64 = grads64 if isinstance(grads64, tuple) else (grads64,)
    for g, g64, a in zip(grads, grads64, args):
        assert g.dtype == np.float32
        assert g.shape == a.shape
        np.testing.assert_allclose(g, g64, rtol=1e-3, atol=1e-4)


def test_float32_scalar_and_container_gradients():
    x = np.float32(1.5)
    assert type(mindgrad.grad(corpus.scalar_only_arith)(x, np.float32(0.7))) is np.float32
    xs = [np.ones(2, np.float32), np.full(2, 2.0, np.float32)]
    g = mindgrad.grad(corpus.loop_over_list)(xs)
    assert isinstance(g, list) and all(gi.dtype == np.float32 for gi in g)


def test_container_gradients_keep_structure():
    p = {"w1": np.ones((3, 4)), "b1": np.zeros(4), "w2": np.ones((4, 2))}
    g = mindgrad.grad(corpus.dict_params_mlp)(p, np.ones((5, 3)) * 0.1)
    assert isinstance(g, dict) and set(g) == set(p)
    assert all(g[k].shape == p[k].shape for k in p)
    g = mindgrad.grad(corpus.tuple_params)((np.ones((3, 2)), np.zeros(2)), np.ones((4, 3)))
    assert isinstance(g, tuple) and [gi.shape for gi in g] == [(3, 2), (2,)]


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_rejected_functions_raise_a_clear_error(name):
    fn, arg_sets, position, kwargs = next(c for c in corpus.CASES if c[0].__name__ == name)
    error, message = REJECTED[name]
    with pytest.raises(error, match=message) as info:
        mindgrad.grad(fn, position if position is not None else 0)(*arg_sets[0], **(kwargs or {}))
    assert info.value.filename.endswith("corpus.py")
