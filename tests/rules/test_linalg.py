"""The products and linear algebra rules (mindgrad/rules/numpy_products.py, numpy_linalg.py,
numpy_decompositions.py), in both directions:
dot, inner, outer, vdot, vecdot, tensordot, einsum, norm, inv, det, slogdet, solve, svd, eigh, and
the helpers their gradients call; svd, eigh and einsum also through the transformer, to second and
third order. The checks: tests/support/rule_check.py.
"""

import numpy as np
import pytest

import mindgrad
from mindgrad.rules import helpers as rhelpers
from mindgrad.rules import jvp_of, vjp_of
from mindgrad.rules import numpy_linalg as nl
from mindgrad.rules import numpy_products as npr
from tests.support import linalg_inputs
from tests.support.inputs import Draw
from tests.support.rule_check import (
    ADJOINT,
    TANGENTS,
    Cases,
    rule_tests,
)
from tests.support.versions import needs_numpy, numpy_function

draw = Draw(20240613)
r, f, x32, well_conditioned = draw.r, draw.f, draw.x32, draw.well_conditioned
# svd and eigh: inputs with distinct singular values and eigenvalues, and outputs made unique by
# ``fix`` (see linalg_inputs.py)
separated, symmetric_in = draw.separated, draw.symmetric_in
fix_svd, fix_eigh = linalg_inputs.fix_svd, linalg_inputs.fix_eigh
CASES = Cases()
case = CASES.add

DOT_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
              ((2, 2, 3), (3,)), ((2, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((), (2, 3)),
              ((2, 3), ())]
for sa, sb in DOT_SHAPES:
    case(np.dot, r(*sa), r(*sb))
case(np.dot, f(), f())
INNER_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (4, 3)), ((2, 3), (4, 3)),
                ((2, 2, 3), (5, 3)), ((), (2, 3)), ((2, 3), ())]
for sa, sb in INNER_SHAPES:
    case(np.inner, r(*sa), r(*sb))
case(np.outer, r(3), r(4))
case(np.outer, r(2, 2), r(3))
for sa, sb in [((3,), (2, 2)), ((3,), (2,)), ((2, 2), (3,)), ((3,), ())]:
    case(np.multiply.outer, r(*sa), r(*sb), label="multiply.outer")
case(np.multiply.outer, f(), r(2), label="multiply.outer")
case(np.vdot, r(3), r(3))
case(np.vdot, r(2, 3), r(3, 2))
for fn in (numpy_function("linalg.vecdot", (2, 0)), numpy_function("vecdot", (2, 0))):
    case(fn, r(3), r(3))
    case(fn, r(2, 3), r(3))
    case(fn, r(3, 4), r(3, 1), axis=0)

case(np.tensordot, r(2, 3, 4), r(3, 4, 5))
case(np.tensordot, r(2, 3), r(3, 4), 1)
case(np.tensordot, r(2, 3), r(4), 0)
case(np.tensordot, r(2, 3, 4), r(4, 2, 5), axes=([0, 2], [1, 0]))
case(np.tensordot, r(2, 3, 4), r(5, 3), axes=(1, -1))
case(np.tensordot, r(3, 4), r(3, 4), axes=([1, 0], [1, 0]))

EINSUM = [("ij,jk->ik", (2, 3), (3, 4)), ("ij->", (2, 3)), ("ii->i", (3, 3)), ("ii", (3, 3)),
          ("ij->ji", (2, 3)), ("i,i->", (3,), (3,)), ("i,j->ij", (3,), (4,)),
          ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)), ("...ij,...jk->...ik", (2, 3, 4), (4, 5)),
          ("...ij,...jk->...ik", (2, 1, 3, 4), (5, 4, 2)), ("ij,jk", (2, 3), (3, 4)),
          ("ij,ij->i", (2, 3), (2, 3)), ("ijk->kj", (2, 3, 4)), ("ij,j", (2, 3), (3,)),
          ("ii,i->i", (3, 3), (3,)), ("iij->j", (3, 3, 2)), ("ij,kl->ijkl", (2, 3), (2, 2)),
          ("i...->...", (3, 2, 2)), ("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
          ("ab,b->", (2, 3), (3,)), ("i,i", (4,), (4,)), ("...,...", (3,), (2, 3)),
          ("ij,jk->ik", (1, 3), (3, 4))]
for spec, *shapes in EINSUM:
    case(np.einsum, spec, *[r(*s) for s in shapes])
_x = r(3)
case(np.einsum, "i,i->", _x, _x, label="einsum-same-operand-twice")
case(npr.einsum_list, "ij,jk->ik", [r(2, 3), r(3, 4)])
# the interleaved form: (array, sublist, ...), an output sublist optional, Ellipsis as ...
case(np.einsum, r(2, 3), [0, 1], r(3, 4), [1, 2], [0, 2], label="einsum-sublists")
case(np.einsum, r(2, 3), [0, 1], r(3, 4), [1, 2], label="einsum-sublists")
case(np.einsum, r(3, 3), [0, 0], label="einsum-sublists")
case(np.einsum, r(3), [0], r(3), [0], [], label="einsum-sublists")
case(np.einsum, r(5, 2, 3), [Ellipsis, 0, 1], r(3, 4), [1, 2], [Ellipsis, 0, 2],
     label="einsum-sublists")
case(np.einsum, r(2, 3), [Ellipsis, 1], r(3), [1], label="einsum-sublists")
case(np.einsum, r(0, 2, 3), [Ellipsis, 0, 1], r(0, 3, 4), [Ellipsis, 1, 2],
     label="einsum-empty-batch")
case(np.einsum, "...ij,...jk->...ik", r(0, 2, 3), r(0, 3, 4), label="einsum-empty-batch")
case(npr.einsum_list, "ii,i->i", [r(3, 3), r(3)])
case(npr.einsum_list, "ii,i->i", [r(3, 3), r(3)], optimize=True)

case(np.linalg.norm, r(5))
case(np.linalg.norm, f())
case(np.linalg.norm, r(3, 4))
case(np.linalg.norm, r(2, 3, 4))
case(np.linalg.norm, r(3, 4), axis=1)
case(np.linalg.norm, r(3, 4), axis=0, keepdims=True)
case(np.linalg.norm, r(2, 3, 4), axis=(0, 2))
case(np.linalg.norm, r(2, 3, 4), None, (1, 2), True)
case(np.linalg.norm, r(3, 4), keepdims=True)
# a float ord held constant: where it moves, it is refused (test_a_moving_norm_order_is_refused)
for order in (1, 2, np.inf, -np.inf, 3, 0.5, 0):
    case(np.linalg.norm, r(5), ord=order, constant_keywords=("ord",))
    case(np.linalg.norm, r(3, 4), ord=order, axis=-1, constant_keywords=("ord",))
for order in ("fro", "nuc", 2, -2, 1, -1):
    case(np.linalg.norm, r(3, 4), order)
for order in (np.inf, -np.inf):
    case(np.linalg.norm, r(3, 4), ord=order, constant_keywords=("ord",))
    case(np.linalg.norm, r(2, 3, 4), ord=order, axis=(2, 1), constant_keywords=("ord",))

case(np.linalg.inv, well_conditioned(3, 3))
case(np.linalg.inv, well_conditioned(2, 3, 3))
case(np.linalg.det, well_conditioned(3, 3))
case(np.linalg.det, well_conditioned(2, 4, 4))
case(np.linalg.slogdet, well_conditioned(3, 3))
case(np.linalg.slogdet, -well_conditioned(2, 3, 3))
case(np.linalg.solve, well_conditioned(3, 3), r(3))
case(np.linalg.solve, well_conditioned(3, 3), r(3, 2))
case(np.linalg.solve, well_conditioned(2, 3, 3), r(3),
     skip=needs_numpy((2, 0), "np.linalg.solve of a stack of matrices and one vector"))
case(np.linalg.solve, well_conditioned(2, 3, 3), r(2, 3, 4))
case(np.linalg.solve, well_conditioned(3, 3), r(2, 3, 4))

for shape in [(3, 3), (4, 3), (3, 5), (2, 4, 3), (2, 3, 2, 4)]:
    case(np.linalg.svd, separated(*shape), full_matrices=False, fix=fix_svd)
    case(np.linalg.svd, separated(*shape), compute_uv=False)
    case(numpy_function("linalg.svdvals", (2, 0)), separated(*shape))
for shape in [(3, 3), (2, 3, 3)]:
    case(np.linalg.svd, separated(*shape), fix=fix_svd)
# full_matrices: U (V^T) of a tall (wide) matrix gets no gradient beyond k, and no tangent at all
# (test_svd_of_full_matrices_of_a_non_square_matrix_has_no_tangent)
for shape in [(4, 3), (2, 3, 5)]:
    case(np.linalg.svd, separated(*shape), fix=fix_svd, only=ADJOINT)
case(np.linalg.svd, separated(4, 3), zero_cotangent=(0, 2), label="svd-values-only",
     only=ADJOINT)
case(np.linalg.svd, symmetric_in("L", 3, 3), hermitian=True, fix=fix_svd)
case(np.linalg.svd, symmetric_in("L", 2, 4, 4), hermitian=True, fix=fix_svd)
case(np.linalg.svd, symmetric_in("L", 4, 4), False, False, True)
for uplo in ("L", "U"):
    for shape in [(3, 3), (2, 4, 4)]:
        case(np.linalg.eigh, symmetric_in(uplo, *shape), UPLO=uplo, fix=fix_eigh)
        case(np.linalg.eigvalsh, symmetric_in(uplo, *shape), UPLO=uplo)
# the eigenvectors' cotangent is zero, so they need no fix; their tangent does
case(np.linalg.eigh, symmetric_in("L", 3, 3), zero_cotangent=(1,), label="eigh-values-only",
     only=ADJOINT)

# ----- the helpers the gradients call (what grad of grad differentiates): forward over reverse
# only, they have no adjoint rules

helper = CASES.helper
helper(rhelpers.swap_last_axes, r(2, 3, 4), only=TANGENTS)
for _sa, _sb in [((2, 3), (3, 4)), ((3,), (3,)), ((2, 3), (5, 3, 4)), ((), (2, 3))]:
    _g = r(*np.shape(np.dot(np.ones(_sa), np.ones(_sb))))
    helper(npr.dot_grad_a, _g, r(*_sa), r(*_sb), only=TANGENTS)
    helper(npr.dot_grad_b, _g, r(*_sa), r(*_sb), only=TANGENTS)
for _sa, _sb in [((2, 3), (4, 3)), ((3,), (3,))]:
    _g = r(*np.shape(np.inner(np.ones(_sa), np.ones(_sb))))
    helper(npr.inner_grad_a, _g, r(*_sa), r(*_sb), only=TANGENTS)
    helper(npr.inner_grad_b, _g, r(*_sa), r(*_sb), only=TANGENTS)
helper(npr.outer_grad_a, r(3, 4), r(3), r(4), only=TANGENTS)
helper(npr.vecdot_grad, r(2), r(2, 3), r(3), only=TANGENTS)
helper(npr.tensordot_grad_a, r(2, 5), r(2, 3, 4), r(3, 4, 5), only=TANGENTS)
helper(npr.tensordot_grad_b, r(2, 5), r(2, 3, 4), r(3, 4, 5), only=TANGENTS)
helper(npr.tensordot_grad_a, r(3, 5), r(2, 3, 4), r(4, 2, 5), ([0, 2], [1, 0]), only=TANGENTS)
helper(npr.einsum_grads, r(2, 4), "ij,jk->ik", (r(2, 3), r(3, 4)), only=TANGENTS)
helper(npr.einsum_grads, r(2, 2), "ij,jk,kl->il", (r(2, 3), r(3, 4), r(4, 2)), only=TANGENTS)
helper(npr.einsum_grads, r(3), "ii->i", (r(3, 3),), only=TANGENTS)
helper(npr.einsum_args_grads, r(2, 4), "ij,jk->ik", (r(2, 3), r(3, 4)), only=TANGENTS)
helper(npr.einsum_args_grads, r(2, 4), r(2, 3), ([0, 1], r(3, 4), [1, 2], [0, 2]),
       only=TANGENTS)
helper(npr.einsum_args_grads, r(3), r(3, 3), ([0, 0], [0]), only=TANGENTS)
for _x, _kw in [(r(5), {}), (r(3, 4), {"axis": 1}), (r(3, 4), {}),
                (r(5), {"ord": 3}), (r(3, 4), {"ord": 0.5, "axis": 0}),
                (r(3, 4), {"ord": "fro"}), (r(3, 4), {"ord": 1}),
                (r(5), {"ord": np.inf}), (r(3, 4), {"axis": 0, "keepdims": True})]:
    _ans = np.linalg.norm(_x, **_kw)
    helper(nl.norm_grad, r(*np.shape(_ans)), _x, _ans + 0.1, **_kw, only=TANGENTS,
           constant_keywords=("ord",))
_a = well_conditioned(3, 3)
helper(nl.det_grad, f(), _a, np.linalg.det(_a), only=TANGENTS)
_a = well_conditioned(2, 3, 3)
helper(nl.det_grad, r(2), _a, np.linalg.det(_a), only=TANGENTS)
helper(nl.slogdet_grad, (0, f()), well_conditioned(3, 3), only=TANGENTS)
helper(nl.slogdet_grad, (r(2), r(2)), well_conditioned(2, 3, 3), only=TANGENTS)
helper(nl.solve_adjoint, r(3), well_conditioned(3, 3), r(3), only=TANGENTS)
helper(nl.solve_adjoint, r(3, 2), well_conditioned(3, 3), r(3, 2), only=TANGENTS)
helper(nl.solve_adjoint, r(2, 3), well_conditioned(2, 3, 3), r(3), only=TANGENTS)
helper(nl.solve_grad_a, r(3), well_conditioned(3, 3), r(3), r(3), only=TANGENTS)
helper(nl.solve_grad_a, r(3, 2), well_conditioned(3, 3), r(3, 2), r(3, 2), only=TANGENTS)

FLOAT32 = Cases()
FLOAT32.add(np.dot, x32(2, 3), x32(3))
FLOAT32.add(np.inner, x32(3), x32(3))
FLOAT32.add(np.outer, x32(2), x32(3))
FLOAT32.add(np.tensordot, x32(2, 3), x32(3, 2), 1)
FLOAT32.add(np.einsum, "ij,jk->ik", x32(2, 3), x32(3, 2))
FLOAT32.add(np.einsum, "ii->i", x32(3, 3), label="einsum-diag")
FLOAT32.add(np.linalg.norm, x32(3))
FLOAT32.add(np.linalg.norm, x32(3, 3), "nuc", label="norm-nuc")
FLOAT32.add(np.linalg.inv, well_conditioned(3, 3).astype(np.float32))
FLOAT32.add(np.linalg.det, well_conditioned(3, 3).astype(np.float32))
FLOAT32.add(np.linalg.solve, well_conditioned(3, 3).astype(np.float32), x32(3))
FLOAT32.add(np.linalg.svd, separated(3, 4).astype(np.float32), compute_uv=False,
            label="svd-values")
FLOAT32.add(np.linalg.eigvalsh, symmetric_in("L", 3, 3).astype(np.float32))


# the tables' checks: tests/support/rule_check.py
globals().update(rule_tests(CASES, FLOAT32))


# ----- svd, eigh and einsum through the transformer, to second and third order -------------


def svd_values(a):
    s = np.linalg.svd(a, compute_uv=False)
    return np.sum(np.sin(s) * np.arange(1.0, s.shape[-1] + 1.0))


def svd_reconstruction(a):
    # (u * c) @ diag(s) @ vt does not change when a pair of singular vectors flips sign
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    c = np.arange(1.0, s.shape[-1] + 1.0)
    return np.sum(np.tanh((u * c) @ (s[..., :, None] * vt)))


def svd_factor_magnitudes(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(np.abs(u) * np.arange(u.shape[-1])) + np.sum(vt ** 2 * s[..., :, None])


def svd_full_values(a):
    return np.sum(np.linalg.svd(a)[1] ** 3)


def svd_hermitian(a):
    u, s, vt = np.linalg.svd(a, hermitian=True)
    return np.sum(s ** 2) + np.sum(((u * s[..., None, :]) @ vt) * a)


def svdvals_sines(a):
    return np.sum(np.sin(np.linalg.svdvals(a)))


def eigh_loss(a):
    w, v = np.linalg.eigh(a)
    weights = np.arange(w.shape[-1])
    return np.sum(w * weights) + np.sum(v ** 2 * weights) + np.sum(np.exp(w))


def eigvalsh_loss(a):
    return np.sum(np.linalg.eigvalsh(a, "U") ** 2)


def spectral_norms(a):
    return np.linalg.norm(a, "nuc") + np.linalg.norm(a, 2) + np.linalg.norm(a, -2)


SECOND_ORDER_DECOMPOSITIONS = [
    (svd_values, separated(4, 3)), (svd_values, separated(2, 3, 5)),
    (svd_reconstruction, separated(4, 3)), (svd_reconstruction, separated(3, 5)),
    (svd_reconstruction, separated(2, 3, 3)), (svd_factor_magnitudes, separated(4, 3)),
    (svd_factor_magnitudes, separated(2, 3, 4)), (svd_full_values, separated(3, 3)),
    (svd_hermitian, symmetric_in("L", 3, 3)), (svdvals_sines, separated(3, 4)),
    (eigh_loss, symmetric_in("L", 3, 3)), (eigh_loss, symmetric_in("L", 2, 3, 3)),
    (eigvalsh_loss, symmetric_in("U", 3, 3)),
]


NEEDS_NUMPY = {svdvals_sines: needs_numpy((2, 0), "np.linalg.svdvals")}


@pytest.mark.parametrize("fn, a", [pytest.param(fn, a, marks=NEEDS_NUMPY.get(fn, ()),
                                                id=f"{fn.__name__}-{'x'.join(map(str, a.shape))}")
                                   for fn, a in SECOND_ORDER_DECOMPOSITIONS])
def test_decompositions_to_second_order(fn, a):
    mindgrad.check_grads(fn, (a,), order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("fn, a", [(svd_full_values, separated(4, 3)),
                                   (svd_full_values, separated(3, 5)),
                                   (spectral_norms, separated(3, 4))],
                         ids=["svd-full-tall", "svd-full-wide", "spectral-norms"])
def test_decompositions_to_second_order_in_reverse(fn, a):
    # forward mode refuses full_matrices=True of a non-square matrix (it cannot tell which
    # factors are used); the norms' forward-over-reverse goes through norm_grad's tangent rule
    mindgrad.check_grads(fn, (a,), order=2, modes=("rev",))


def test_svd_extra_columns_of_full_matrices_have_no_gradient():
    a = separated(4, 3)
    _, vjp = vjp_of(np.linalg.svd, a)
    with pytest.raises(NotImplementedError, match="full_matrices=True"):
        vjp((np.ones((4, 4)), 0, 0))
    _, vjp = vjp_of(np.linalg.svd, a.T)
    with pytest.raises(NotImplementedError, match="full_matrices=True"):
        vjp((0, np.ones(3), np.ones((4, 4))))
    (g,) = vjp((0, np.ones(3), 0))  # the singular values alone are fine
    np.testing.assert_allclose(g, vjp_of(np.linalg.svd, a.T, compute_uv=False)[1](np.ones(3))[0])


def test_svd_and_eigh_gradients_keep_float32():
    a = separated(3, 3).astype(np.float32)
    _, vjp = vjp_of(np.linalg.svd, a)
    assert vjp((np.ones((3, 3)), np.ones(3), np.ones((3, 3))))[0].dtype == np.float32
    _, vjp = vjp_of(np.linalg.eigh, symmetric_in("L", 3, 3).astype(np.float32))
    assert vjp((np.ones(3), np.ones((3, 3))))[0].dtype == np.float32


def test_qr_of_complex_matrices_says_so():
    a = separated(3, 3) + 1j * separated(3, 3)
    _, vjp = vjp_of(np.linalg.qr, a)
    with pytest.raises(NotImplementedError, match="real matrices"):
        vjp((np.ones((3, 3)), np.ones((3, 3))))


def einsum_cubed(spec):
    def one(a):
        return np.sum(np.einsum(spec, a) ** 3)

    def two(a, b):
        return np.sum(np.einsum(spec, a, b) ** 3)

    def three(a, b, c):
        return np.sum(np.einsum(spec, a, b, c) ** 3)

    return [one, two, three][spec.split("->")[0].count(",")]


SECOND_ORDER_EINSUM = [("ii->i", (3, 3)), ("iij->j", (3, 3, 2)), ("ij->", (2, 3)),
                       ("ij,j", (2, 3), (3,)), ("ii,i->i", (3, 3), (3,)),
                       ("...ij,...jk->...ik", (2, 1, 3, 4), (5, 4, 2)),
                       ("ij,jk->ik", (1, 3), (3, 4)), ("i,j->ij", (3,), (4,)),
                       ("ij,jk,kl->il", (2, 3), (3, 4), (4, 2))]


def einsum_sublists_product(a, b):
    return np.sum(np.einsum(a, [0, 1], b, [1, 2], [0, 2]) ** 3)


def einsum_sublists_batched(a, b):
    return np.sum(np.einsum(a, [Ellipsis, 0, 1], b, [Ellipsis, 1, 2]) ** 3)


def einsum_sublists_diagonal(a):
    return np.sum(np.einsum(a, [0, 0], [0]) ** 3)


@pytest.mark.parametrize("fn, shapes", [
    (einsum_sublists_product, ((2, 3), (3, 4))),
    (einsum_sublists_batched, ((2, 2, 3), (2, 3, 4))),
    (einsum_sublists_batched, ((2, 1, 2, 3), (3, 3, 2))),
    (einsum_sublists_diagonal, ((3, 3),)),
], ids=["product", "batched", "broadcast", "diagonal"])
def test_einsum_sublists_to_second_order(fn, shapes):
    args = tuple(0.5 * r(*shape) for shape in shapes)
    mindgrad.check_grads(fn, args, order=2, modes=("rev", "fwd"))


def test_einsum_sublists_match_the_string_form():
    a, b = r(2, 3), r(3, 4)
    u = r(2, 4)
    by_string = mindgrad.grad(lambda x, y: np.sum(np.einsum("ij,jk->ik", x, y) * u), (0, 1))
    by_lists = mindgrad.grad(lambda x, y: np.sum(np.einsum(x, [0, 1], y, [1, 2], [0, 2]) * u),
                             (0, 1))
    for mine, theirs in zip(by_lists(a, b), by_string(a, b)):
        np.testing.assert_allclose(mine, theirs)
        assert np.any(mine != 0)
    np.testing.assert_allclose(by_lists(a, b)[0], u @ b.T)
    t = mindgrad.jvp(lambda x, y: np.einsum(x, [0, 1], y, [1, 2]), (a, b), (u[:, :3], b))[1]
    np.testing.assert_allclose(t, u[:, :3] @ b + a @ b)


def test_einsum_of_an_empty_batch():
    a, b = r(0, 2, 3), r(0, 3, 4)
    for fn in (lambda x, y: np.sum(np.einsum("...ij,...jk->...ik", x, y)),
               lambda x, y: np.sum(np.einsum(x, [Ellipsis, 0, 1], y, [Ellipsis, 1, 2]))):
        ga, gb = mindgrad.grad(fn, (0, 1))(a, b)
        assert ga.shape == a.shape and gb.shape == b.shape
        assert mindgrad.jvp(fn, (a, b), (a, b))[1] == 0.0


@pytest.mark.parametrize("spec, shapes", [(c[0], c[1:]) for c in SECOND_ORDER_EINSUM],
                         ids=[c[0] for c in SECOND_ORDER_EINSUM])
def test_einsum_to_second_order(spec, shapes):
    args = tuple(0.5 * r(*shape) for shape in shapes)
    mindgrad.check_grads(einsum_cubed(spec), args, order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("fn, args", [
    (svd_values, (separated(3, 5),)),
    (einsum_cubed("ii->i"), (0.5 * r(3, 3),)),
    (einsum_cubed("...ij,...jk->...ik"), (0.5 * r(2, 1, 3, 4), 0.5 * r(5, 4, 2))),
], ids=["svd-values", "einsum-diagonal", "einsum-broadcast"])
def test_svd_and_einsum_to_third_order(fn, args):
    mindgrad.check_grads(fn, args, order=3, modes=("rev", "fwd"), directions=1)


def test_svd_of_full_matrices_of_a_non_square_matrix_has_no_tangent():
    # its extra columns of U (rows of V^T) are an arbitrary basis of a complement
    for a in (separated(4, 3), separated(2, 3, 5)):
        _, jvp = jvp_of(np.linalg.svd, a)
        with pytest.raises(NotImplementedError, match="full_matrices=True"):
            jvp(np.ones_like(a))


def test_svd_and_eigh_tangents_keep_float32_factors():
    a = separated(3, 3).astype(np.float32)
    _, jvp = jvp_of(np.linalg.svd, a)
    assert [np.asarray(t).dtype for t in jvp(np.ones_like(a))] == [np.float32] * 3
    _, jvp = jvp_of(np.linalg.eigh, symmetric_in("L", 3, 3).astype(np.float32))
    assert [np.asarray(t).dtype for t in jvp(np.ones((3, 3), np.float32))] == [np.float32] * 2


# einsum computes only the gradients that are read: an operand that takes none (a constant, a
# closure's array) costs no contraction, and a large contraction runs through NumPy's path search
# (a BLAS product); each is checked against finite differences to second order, and against the
# closed form of the product it is.
_FIXED = 0.5 * r(2, 3, 3)


@pytest.mark.parametrize("fn, shape, wanted", [
    (lambda w: np.sum(np.einsum("bij,kij->bk", _FIXED, w) ** 3), (4, 3, 3), (2,)),
    (lambda w: np.sum(np.einsum("bij,kij,k->b", _FIXED, w, np.arange(4.0)) ** 3), (4, 3, 3),
     (2,)),
    (lambda w: np.sum(np.einsum(_FIXED, [0, 1, 2], w, [3, 1, 2], [0, 3]) ** 3), (4, 3, 3), (2,)),
    (lambda a: np.sum(np.einsum(a, [0, 1, 2], _FIXED[0], [1, 2], [0]) ** 3), (2, 3, 3), (0,)),
], ids=["string", "three-operands", "sublists", "sublists-first"])
def test_einsum_with_an_operand_that_takes_no_gradient(fn, shape, wanted):
    x = 0.5 * r(*shape)
    mindgrad.check_grads(fn, (x,), order=2, modes=("rev", "fwd"))
    code = mindgrad.source(mindgrad.grad(fn), x)
    assert f"{wanted})" in code, code


def test_einsum_gradient_of_a_large_contraction_takes_the_optimized_path():
    from mindgrad.rules.numpy_products import EINSUM_PATH_SIZE, einsum_path_wanted

    patches, w = r(8, 30, 30, 3, 3), r(4, 3, 3)
    g = r(8, 4, 30, 30)
    assert einsum_path_wanted([g, patches]) and patches.size > EINSUM_PATH_SIZE
    assert not einsum_path_wanted([r(3, 4), r(4, 5)])
    d_patches, d_w = mindgrad.vjp(lambda p, k: np.einsum("bhwij,kij->bkhw", p, k),
                                  patches, w)[1](g)
    np.testing.assert_allclose(d_w, np.tensordot(g, patches, axes=([0, 2, 3], [0, 1, 2])),
                               rtol=1e-10)
    np.testing.assert_allclose(d_patches, np.tensordot(g, w, axes=([1], [0])), rtol=1e-10)
