"""Stage gather (``compiler/finish/gather.py``): a backward loop adding matmul gradients of a
matrix it does not change keeps the steps' pairs and adds them up in one product after the
loop. Source in, source out, and the numbers: against central differences, and against the
code built without the stage (``gather.off()``), on vectors and batches, float64 and float32,
and where the steps do not stack."""

import numpy as np
import pytest

import mindgrad
from mindgrad.compiler.finish import gather
from mindgrad.rules import operators

rng = np.random.default_rng(5)


def rnn(w, u, xs):
    h = np.zeros(w.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + u @ xs[t])
    return np.sum(h * h)


def rnn_batched(w, xs):
    # rows of a batch times the matrix on the right: matmul_grad_y's sum
    h = np.zeros((xs.shape[1], w.shape[0]))
    for t in range(xs.shape[0]):
        h = np.tanh(h @ w + xs[t])
    return np.sum(h ** 2)


def rnn_with_break(w, xs):
    h = np.ones(w.shape[0])
    for t in range(xs.shape[0]):
        h = np.sin(w @ h) + xs[t]
        if np.sum(h) > 1e6:
            break
    return np.sum(h)


def growing(w, xs):
    # the steps' operands change shape: their products are added one by one
    total = 0.0
    for k in range(1, 4):
        total = total + np.sum(np.tanh(xs[:k] @ w))
    return total


def _plain(fn, positions, *args):
    mindgrad.clear_cache()
    with gather.off():
        expected = mindgrad.grad(fn, positions)(*args)
    mindgrad.clear_cache()
    return expected


def _source(fn, positions, *args):
    return mindgrad.source(mindgrad.grad(fn, positions), *args)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_rnn_adds_its_outer_products_in_one_product(dtype):
    w = (rng.standard_normal((6, 6)) * 0.3).astype(dtype)
    u = (rng.standard_normal((6, 3)) * 0.3).astype(dtype)
    xs = rng.standard_normal((7, 3)).astype(dtype)
    text = _source(rnn, (0, 1), w, u, xs)
    assert "d_w_terms.append((d_matmul, h))" in text
    assert "d_w = d_w + matmul_grad_x_sum(d_w_terms, w)" in text
    assert "d_u_terms" in text
    got = mindgrad.grad(rnn, (0, 1))(w, u, xs)
    expected = _plain(rnn, (0, 1), w, u, xs)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for g, e, a in zip(got, expected, (w, u)):
        assert g.dtype == dtype and g.shape == a.shape
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)
    if dtype == np.float64:
        mindgrad.check_grads(rnn, (w, u, xs), grad_position=(0, 1), modes=("rev",))
        mindgrad.check_grads(rnn, (w, u, xs), grad_position=(0,), order=2, modes=("rev",),
                             directions=1)


def test_a_batch_times_the_matrix_on_the_right():
    w = rng.standard_normal((4, 4)) * 0.3
    xs = rng.standard_normal((5, 3, 4))
    text = _source(rnn_batched, 0, w, xs)
    assert "matmul_grad_y_sum(d_w_terms, w)" in text
    np.testing.assert_allclose(mindgrad.grad(rnn_batched)(w, xs), _plain(rnn_batched, 0, w, xs),
                               rtol=1e-12)
    mindgrad.check_grads(rnn_batched, (w, xs), grad_position=(0,), modes=("rev",))


def test_a_loop_that_breaks_and_steps_that_do_not_stack():
    w = rng.standard_normal((3, 3)) * 0.3
    xs = rng.standard_normal((4, 3))
    assert "matmul_grad_x_sum" in _source(rnn_with_break, 0, w, xs)
    np.testing.assert_allclose(mindgrad.grad(rnn_with_break)(w, xs),
                               _plain(rnn_with_break, 0, w, xs), rtol=1e-12)
    mindgrad.check_grads(rnn_with_break, (w, xs), grad_position=(0,), modes=("rev",))
    v = rng.standard_normal((3, 2))
    np.testing.assert_allclose(mindgrad.grad(growing)(v, xs[:, :3]),
                               _plain(growing, 0, v, xs[:, :3]), rtol=1e-12)
    mindgrad.check_grads(growing, (v, xs[:, :3]), grad_position=(0,), modes=("rev",))


def test_the_sums_against_their_steps():
    x = rng.standard_normal((4, 3))
    vectors = [(rng.standard_normal(4), rng.standard_normal(3)) for _ in range(5)]
    expected = sum(operators.matmul_grad_x(g, x, y) for g, y in vectors)
    np.testing.assert_allclose(operators.matmul_grad_x_sum(vectors, x), expected, rtol=1e-13)
    matrices = [(rng.standard_normal((4, 2)), rng.standard_normal((3, 2))) for _ in range(3)]
    expected = sum(operators.matmul_grad_x(g, x, y) for g, y in matrices)
    np.testing.assert_allclose(operators.matmul_grad_x_sum(matrices, x), expected, rtol=1e-13)
    rows = [(rng.standard_normal((2, 3)), rng.standard_normal((2, 4))) for _ in range(3)]
    expected = sum(operators.matmul_grad_y(g, a, x) for g, a in rows)
    np.testing.assert_allclose(operators.matmul_grad_y_sum(rows, x), expected, rtol=1e-13)
    single = [(rng.standard_normal(3), rng.standard_normal(4)) for _ in range(3)]
    expected = sum(operators.matmul_grad_y(g, a, x) for g, a in single)
    np.testing.assert_allclose(operators.matmul_grad_y_sum(single, x), expected, rtol=1e-13)
    # steps of other shapes, and zero gradients among them: step by step, zeros skipped
    mixed = [(0, rng.standard_normal(3)), (rng.standard_normal(4), rng.standard_normal(3)),
             (rng.standard_normal((4, 2)), rng.standard_normal((3, 2)))]
    expected = operators.matmul_grad_x(*mixed[1][:1], x, mixed[1][1]) + \
        operators.matmul_grad_x(mixed[2][0], x, mixed[2][1])
    np.testing.assert_allclose(operators.matmul_grad_x_sum(mixed, x), expected, rtol=1e-13)
    assert operators.matmul_grad_x_sum([], x) is mindgrad.runtime.zero
    # vectors that stack once the zeros are left out; a float32 step among float64 ones
    for zero in (mindgrad.runtime.zero, np.float64(0.0), np.zeros(())):
        steps = [(zero, rng.standard_normal(3))] + vectors
        expected = sum(operators.matmul_grad_x(g, x, y) for g, y in vectors)
        np.testing.assert_allclose(operators.matmul_grad_x_sum(steps, x), expected, rtol=1e-13)
    steps = vectors + [(rng.standard_normal(4).astype(np.float32), rng.standard_normal(3))]
    expected = sum(operators.matmul_grad_x(g, x, y) for g, y in steps)
    got = operators.matmul_grad_x_sum(steps, x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def _gathered(text):
    """The stage run on the function ``text`` alone, unparsed."""
    import gast

    from mindgrad import runtime
    from mindgrad.compiler.finish import emit
    fdef = gast.parse(text).body[0]
    known = {"matmul_grad_x": operators.matmul_grad_x, "matmul_grad_y": operators.matmul_grad_y,
             "unbroadcast": runtime.unbroadcast, "range": range, "reversed": reversed,
             "add": runtime.add, "add_at": runtime.add_at}
    local = {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name) and
             isinstance(n.ctx, gast.Store)}

    def resolve(node):
        if isinstance(node, gast.Name) and node.id not in local:
            return known.get(node.id)
        if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and \
                node.value.id == "np":
            return getattr(np, node.attr, None)
        return None
    gather.gather_products(fdef, resolve, lambda obj, name: name)
    return emit.unparse(fdef).strip()


def test_source_in_source_out():
    assert _gathered("""
def f(w, h, d_h, *, sens):
    tape = []
    d_w = 0
    for t in reversed(range(3)):
        h = tape.pop()
        d_w = add(d_w, matmul_grad_x(d_h, w, h))
        d_h = matmul_grad_y(d_h, w, h)
    return d_w, d_h
""") == """def f(w, h, d_h, *, sens):
    tape = []
    d_w = 0
    d_w_terms = []
    for t in reversed(range(3)):
        h = tape.pop()
        d_w_terms.append((d_h, h))
        d_h = matmul_grad_y(d_h, w, h)
    d_w = add(d_w, matmul_grad_x_sum(d_w_terms, w))
    return (d_w, d_h)"""


@pytest.mark.parametrize("body", [
    # the sum read in the loop; the matrix changed in the loop; a write in place in the function;
    # a call that may write into an argument; a return in the loop; an else clause
    "d_w = d_w + matmul_grad_x(d_h, w, h)\n        d_h = d_w[0]",
    "d_w = d_w + matmul_grad_x(d_h, w, h)\n        w = w * 0.5",
    "d_w = d_w + matmul_grad_x(d_h, w, h)\n        d_h[0] = 1.0",
    "d_w = d_w + matmul_grad_x(d_h, w, h)\n        d_h = add_at(d_h, h, 0, 1.0)",
    "d_w = d_w + matmul_grad_x(d_h, w, h)\n        if t:\n            return d_w",
])
def test_loops_left_alone(body):
    text = _gathered(f"""
def f(w, h, d_h, *, sens):
    d_w = 0
    for t in range(3):
        {body}
    return d_w
""")
    assert "_terms" not in text
    text = _gathered("""
def f(w, h, d_h, *, sens):
    d_w = 0
    for t in range(3):
        d_w = d_w + matmul_grad_x(d_h, w, h)
    else:
        d_h = d_w
    return d_w
""")
    assert "_terms" not in text
