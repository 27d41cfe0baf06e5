"""Stage reuse (``compiler/finish/reuse.py``): the gradient of large arrays writes elementwise
results into dead temporaries (``np.exp(a, out=a) if spare(a) else np.exp(a)``, ``add_into``)
and releases dead names (``del``). Source in, source out, and the numbers: the same as the code
without the stage, and central differences. The whole corpus runs through the stage in
``tests/corpus/test_reuse_corpus.py``."""

import numpy as np
import pytest

import mindgrad
from mindgrad import runtime
from mindgrad.compiler import cache
from mindgrad.runtime import reuse

N = cache.LARGE
rng = np.random.default_rng(11)

KEPT = []


def softplus_logsumexp(x):
    m = np.max(x)
    return np.sum(np.logaddexp(0.0, x)) + np.log(np.sum(np.exp(x - m))) + m


def read_again(x):
    a = np.sin(x)
    b = np.exp(a)
    return np.sum(a * b)


def kept_by_the_user(x):
    a = x * 2.0
    KEPT.append(a)
    b = np.exp(a)
    return np.sum(b)


def read_by_a_lambda(x):
    a = np.sin(x)
    later = lambda: a  # noqa: E731
    b = np.exp(a)
    return np.sum(b * later())


def read_in_a_loop(x):
    a = np.cos(x)
    b = np.exp(a)
    s = 0.0
    for i in range(3):
        s = s + np.sum(a * i) + np.sum(b)
    return s


def _source(fn, *args):
    return mindgrad.source(mindgrad.grad(fn), *args)


def _small_path(fn, *args):
    """The gradient without the stage: the same function, no argument counted large."""
    with cache.large_from(10 ** 12):
        return mindgrad.grad(fn)(*args)


def test_dead_temporaries_are_written_into_and_released():
    x = rng.standard_normal(N)
    text = _source(softplus_logsumexp, x)
    assert "exp = np.exp(sub, out=sub) if spare(sub) else np.exp(sub)" in text
    assert "del sub" in text
    assert "d_x = add_into(d_x, " in text
    assert "spare(x" not in text and "add_into(x" not in text  # an argument: never
    got = mindgrad.grad(softplus_logsumexp)(x)
    np.testing.assert_array_equal(got, _small_path(softplus_logsumexp, x))
    mindgrad.check_grads(softplus_logsumexp, (x,), modes=("rev",), directions=1)


def test_small_arrays_keep_the_plain_code():
    text = _source(softplus_logsumexp, rng.standard_normal(N - 1))
    assert "spare" not in text and "add_into" not in text and "del " not in text


def test_a_name_read_later_is_not_written_into():
    x = rng.standard_normal(N)
    text = _source(read_again, x)
    # a is read by a * b after b = np.exp(a): its memory is not offered there (it is, to the
    # last operation that reads it, in the backward sweep)
    assert "np.exp(a, out=a)" not in text and "b = np.exp(a)" in text
    np.testing.assert_array_equal(mindgrad.grad(read_again)(x), _small_path(read_again, x))


def test_an_array_the_user_keeps_is_not_written_into():
    x = rng.standard_normal(N)
    KEPT.clear()
    g = mindgrad.grad(kept_by_the_user)(x)
    # the name is dead, so the code offers its memory; spare sees the list holding it
    assert "if spare(a)" in _source(kept_by_the_user, x)
    assert all(np.array_equal(k, x * 2.0) for k in KEPT) and KEPT
    np.testing.assert_allclose(g, 2.0 * np.exp(2.0 * x))


def test_a_lambda_inlined_by_the_compiler_leaves_a_plain_name():
    x = rng.standard_normal(N)
    np.testing.assert_array_equal(mindgrad.grad(read_by_a_lambda)(x),
                                  _small_path(read_by_a_lambda, x))


def _reused(text, scalars=()):
    """The stage run on the function ``text`` alone, unparsed."""
    import gast

    from mindgrad.compiler.finish import emit
    from mindgrad.compiler.finish import reuse as stage
    fdef = gast.parse(text).body[0]

    def resolve(node):
        if isinstance(node, gast.Name) and node.id in ("times_slope", "add_at", "unbroadcast"):
            return getattr(runtime, node.id)
        if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and \
                node.value.id == "np":
            return getattr(np, node.attr, None)
        return None
    stage.reuse_buffers(fdef, resolve, set(scalars), lambda obj, name: name)
    return emit.unparse(fdef).strip()


def test_source_in_source_out():
    assert _reused("""
def f(x, *, sens):
    a = x * 2.0
    b = np.exp(a)
    c = b + a2(b)
    return c
""") == """def f(x, *, sens):
    a = x * 2.0
    b = np.exp(a, out=a) if spare(a) else np.exp(a)
    del a
    c = add_into(b, a2(b))
    del b
    return c"""


def test_names_of_a_nested_scope_of_the_generated_code_are_left_alone():
    text = _reused("""
def f(x):
    a = np.sin(x)
    later = lambda: a
    b = np.exp(a)
    c = [a for _ in range(2)]
    return b, later, c
""")
    assert "spare(a)" not in text and "del a" not in text


def test_known_numbers_arguments_and_loop_bodies_are_left_alone():
    text = _reused("""
def f(x, s):
    t = s * 2.0
    u = np.exp(t)
    y = np.exp(x)
    for i in range(3):
        z = np.exp(y)
        y = z
    return u, y
""", scalars={"t", "s", "u"})
    assert "spare(t" not in text and "spare(x" not in text and "spare(y" not in text
    assert "del t" not in text  # a number is not worth a del
    assert "z = np.exp(y)" in text


def test_a_frame_read_by_locals_is_left_alone():
    text = _reused("""
def f(x):
    a = x * 2.0
    b = np.exp(a)
    return locals()
""")
    assert "spare" not in text and "del" not in text


def test_a_name_a_loop_reads_lives_through_the_loop():
    x = rng.standard_normal(N)
    text = _source(read_in_a_loop, x)
    assert "spare(a" not in text
    np.testing.assert_array_equal(mindgrad.grad(read_in_a_loop)(x),
                                  _small_path(read_in_a_loop, x))
    mindgrad.check_grads(read_in_a_loop, (x,), modes=("rev",), directions=1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_mlp_of_the_benchmark(dtype):
    def mlp(w1, x, y):
        h = np.tanh(x @ w1)
        return np.mean((h - y) ** 2)
    w1 = (rng.standard_normal((64, 64)) * 0.1).astype(dtype)
    x = rng.standard_normal((N // 64 + 1, 64)).astype(dtype)
    y = rng.standard_normal((N // 64 + 1, 64)).astype(dtype)
    text = mindgrad.source(mindgrad.grad(mlp), w1, x, y)
    assert "if spare(" in text
    got = mindgrad.grad(mlp)(w1, x, y)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, _small_path(mlp, w1, x, y))


def test_the_counts_were_measured_on_this_python():
    # every configuration CI runs this file in (3.10 to 3.13): the memory of an array one
    # name holds is reused, that of an array two names hold is not
    assert set(reuse._UNSHARED) == {0, 1, "into"}
    a = np.ones(N)
    b = 2.0
    r = np.multiply(a, b, out=a) if reuse.spare(a, b) else a * b
    assert r is a
    c = np.ones(N)
    held = c
    r = np.multiply(c, b, out=c) if reuse.spare(c, b) else c * b
    assert r is not c and held is c and (c == 1.0).all()
    d = np.ones(N)
    d = reuse.add_into(d, b)
    again = d
    e = reuse.add_into(d, b)
    assert e is not again and (again == 3.0).all() and (e == 5.0).all()


def test_reuse_needs_cpython_counts_or_stays_off(monkeypatch):
    monkeypatch.setattr(reuse, "_UNSHARED", {})
    a = np.ones(N)
    assert not reuse.spare(a) and reuse.add_into(a, 1.0) is not a


def test_a_nested_operation_with_a_dead_operand_becomes_a_statement_written_into_it():
    assert _reused("""
def f(x, g, *, sens):
    y = np.exp(x)
    d_x = g * 2.0
    d_x = d_x + times_slope(g, np.exp(x - y))
    return d_x
""") == """def f(x, g, *, sens):
    y = np.exp(x)
    d_x = g * 2.0
    sub = np.subtract(x, y, out=y) if spare(y, x) else x - y
    del y
    exp = np.exp(sub, out=sub) if spare(sub) else np.exp(sub)
    del sub
    d_x = add_into(d_x, times_slope(g, exp))
    del exp
    return d_x"""


def test_a_nested_operation_stays_where_its_order_could_matter():
    text = _reused("""
def f(x, g, *, sens):
    y = np.exp(x)
    z = np.exp(x)
    w = np.exp(x)
    a = user_function(g, np.exp(x - y))
    b = times_slope(g, np.exp(x - z), out=None)
    c = times_slope(np.exp(x - w), w)
    v = np.exp(x)
    e = times_slope(add_at(g, x, 0, z), np.exp(x - v))
    return a, b, c, e
""")
    # an unknown callee may change what a name holds; a call writing into an argument; a name
    # read twice: the operation is computed where it is written
    assert "user_function(g, np.exp(x - y))" in text
    assert "np.exp(x - z)" in text
    assert "times_slope(np.exp(x - w), w)" in text
    assert "np.exp(x - v)" in text  # add_at writes into its first argument


def test_each_dead_operand_is_offered_in_turn():
    offered = ("np.multiply(a, b, out=a) if spare(a, b) else "
               "np.multiply(a, b, out=b) if spare(b, a) else a * b")
    assert _reused("""
def f(x, g, *, sens):
    a = np.sin(x)
    b = np.cos(x)
    c = a * b
    return c
""") == f"""def f(x, g, *, sens):
    a = np.sin(x)
    b = np.cos(x)
    c = {offered}
    del a, b
    return c"""


def test_the_elementwise_benchmark_holds_three_arrays_at_most():
    import tracemalloc

    x = rng.standard_normal(4 * N)
    grad = mindgrad.grad(softplus_logsumexp)
    expected = _small_path(softplus_logsumexp, x)
    grad(x)
    tracemalloc.start()
    try:
        got = grad(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-16)
    # the forward pass holds two arrays of x's size at once; the gradient three, plus the
    # masks of the finiteness tests (one byte an element)
    assert peak <= 3 * x.nbytes + x.size + 2 ** 16, peak / x.nbytes


def test_a_global_array_is_never_written_into():
    # a module's array held by its namespace alone counts as a local name held once: only the
    # function's own names may take a result (a global offered its memory was overwritten by
    # d_mul * W, and the function computed with the product afterwards)
    source = "def f(x):\n    return np.sum(W * np.sin(x))\n"
    filename = "<mindgrad test: a global array>"
    import linecache
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np, "W": rng.standard_normal(N)}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102
    kept = namespace["W"].copy()
    x = rng.standard_normal(N)
    got = mindgrad.grad(namespace["f"], sens_param=True)(x, -0.5)
    np.testing.assert_array_equal(namespace["W"], kept)
    np.testing.assert_allclose(got, -0.5 * kept * np.cos(x), rtol=1e-14)
    assert "out=W" not in mindgrad.source(mindgrad.grad(namespace["f"]), x)


# ----- unbroadcast(a * b, x): the products summed without their array (np.einsum) ------------


def test_a_product_summed_down_is_one_call_source_in_source_out():
    assert _reused("""
def f(g, y, s, w, *, sens):
    d_w = unbroadcast(g * y, w)
    d_s = unbroadcast(times_slope(g, s), w)
    d_v = -unbroadcast(g * 2.0, w)
    return d_w + d_s + d_v
""") == """def f(g, y, s, w, *, sens):
    d_w = unbroadcast_product(g, y, w)
    d_s = unbroadcast_product(g, s, w, True)
    d_v = -unbroadcast(g * 2.0, w)
    return d_w + d_s + d_v"""


SUMMED = [((8, 16, 32), (8, 16, 1)), ((4, 5, 6), (6,)), ((4, 5, 6), (5, 1)),
          ((4, 5, 6), (1, 1, 1)), ((4, 5), (1,)), ((4, 5), (4, 5)), ((3, 1, 5), (1, 5)),
          ((4, 5), ())]


@pytest.mark.parametrize("shape, xshape", SUMMED)
@pytest.mark.parametrize("slope", [False, True])
def test_the_products_summed_are_unbroadcast_of_the_product(shape, xshape, slope, monkeypatch):
    monkeypatch.setattr(reuse, "SUMMED_FROM", 1)
    a, b, x = rng.standard_normal(shape), rng.standard_normal(shape), np.zeros(xshape)
    expected = runtime.unbroadcast(runtime.times_slope(a, b) if slope else a * b, x)
    got = reuse.unbroadcast_product(a, b, x, slope)
    assert type(got) is type(expected) and np.shape(got) == np.shape(expected)
    assert np.result_type(got) == np.result_type(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_the_products_summed_where_the_einsum_does_not_apply(monkeypatch):
    monkeypatch.setattr(reuse, "SUMMED_FROM", 1)
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    # a slope with inf where the gradient is 0: times_slope's 0, not nan
    a[0, 0], b[0, 0] = 0.0, np.inf
    x = np.zeros((4, 1))
    got = reuse.unbroadcast_product(a, b, x, True)
    np.testing.assert_array_equal(got, runtime.unbroadcast(runtime.times_slope(a, b), x))
    assert np.isfinite(got).all()
    # float32 (summed as NumPy sums, pairwise), operands of two shapes, a shape it cannot take
    a32, b32 = a.astype(np.float32), np.abs(b).astype(np.float32)
    b32[0, 0] = 1.0
    got = reuse.unbroadcast_product(a32, b32, x.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, runtime.unbroadcast(a32 * b32, x.astype(np.float32)))
    row = rng.standard_normal(5)
    np.testing.assert_array_equal(reuse.unbroadcast_product(a, row, np.zeros(5)),
                                  runtime.unbroadcast(a * row, np.zeros(5)))
    with pytest.raises(ValueError):
        reuse.unbroadcast_product(a, a, np.zeros((2, 5)))


def softmax_and_scale(w, x):
    p = np.exp(x - np.max(x, axis=-1, keepdims=True))
    p = p / np.sum(p, axis=-1, keepdims=True)
    return np.sum(np.tanh(p * w) ** 2)


def test_the_softmax_gradient_sums_its_products_without_their_array():
    w, x = rng.standard_normal((1, 64)), rng.standard_normal((N // 64, 64))
    text = _source(softmax_and_scale, w, x)
    assert "unbroadcast_product(" in text, text
    for p in (0, 1):
        got = mindgrad.grad(softmax_and_scale, p)(w, x)
        with cache.large_from(10 ** 12):
            expected = mindgrad.grad(softmax_and_scale, p)(w, x)
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    mindgrad.check_grads(softmax_and_scale, (w, x[:4]), grad_position=(0, 1), modes=("rev",))
