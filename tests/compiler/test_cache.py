"""The cache of generated gradients, counted with ``mindgrad.cache_stats()``.

A key is (function, options, argument kinds); an entry is rebuilt when the function's code, a
global it calls, or the rule registry changes. Counting builds, not timing them.
"""

import itertools
import linecache
import types

import numpy as np
import pytest

import mindgrad
from mindgrad import d, grad, rules, value_and_grad
from mindgrad.rules import registry as rule_registry


@pytest.fixture(autouse=True)
def clean_registry():
    """Leave the global rule registry as it was found, whatever a test registers."""
    rules._load_deferred()  # SciPy's, if imported: a lookup in the test would load them, lost
    saved_rules, saved_nondiff = dict(rules._RULES), set(rules._NONDIFF)
    yield
    rules._RULES.clear()
    rules._RULES.update(saved_rules)
    rules._NONDIFF.clear()
    rules._NONDIFF.update(saved_nondiff)
    rules._bump()


class Counter:
    """Builds and hits since the last ``delta()``."""

    def __init__(self):
        self.last = mindgrad.cache_stats()

    def delta(self):
        now = mindgrad.cache_stats()
        out = (now["builds"] - self.last["builds"], now["hits"] - self.last["hits"])
        self.last = now
        return out


def _mul(a, b):
    return a * b


def _square(a):
    return a * a


# ----- the key: kinds of arguments -------------------------------------------------------------


def test_second_call_same_signature_does_not_build():
    g = grad(_mul, (0, 1))
    c = Counter()
    g(np.ones(3), np.ones(3))
    assert c.delta() == (1, 0)
    g(np.ones(3), np.ones(3))
    assert c.delta() == (0, 1)


def test_same_shape_different_values_does_not_build():
    g = grad(_square)
    c = Counter()
    np.testing.assert_allclose(g(np.array([1.0, 2.0])), [2, 4])
    assert c.delta() == (1, 0)
    np.testing.assert_allclose(g(np.array([5.0, -7.0])), [10, -14])
    assert c.delta() == (0, 1)


class _Scaler:
    factor = 3.0

    @classmethod
    def scale(cls, t):
        return t * cls.factor


def _through_a_classmethod(x):
    return np.sum(_Scaler.scale(x) * x)


def _slope_of_square(x):
    return mindgrad.jvp(_square, (x,), (np.ones_like(x),))[1]


def test_code_calling_a_classmethod_is_built_once():
    """``_Scaler.scale`` gives a new bound method at each access: the cache once compared it
    by identity and built the gradient again at every call (so did jvp of a function calling
    jvp, whose tangent code calls ``Zero.like``)."""
    x = np.array([1.0, -2.0])
    c = Counter()
    for _ in range(3):
        np.testing.assert_allclose(grad(_through_a_classmethod)(x), 6.0 * x)
        np.testing.assert_allclose(mindgrad.jvp(_slope_of_square, (x,), (x,))[1], 2.0 * x)
    builds, hits = c.delta()
    assert hits >= 4 and builds <= 3, (builds, hits)
    c.delta()
    grad(_through_a_classmethod)(x)
    mindgrad.jvp(_slope_of_square, (x,), (x,))
    assert c.delta()[0] == 0


def test_python_float_values_do_not_build():
    g = grad(_square)
    c = Counter()
    assert g(3.0) == 6.0
    assert c.delta()[0] == 1
    assert g(-4.5) == -9.0
    assert c.delta() == (0, 1)


@pytest.mark.parametrize("first, second", [
    (np.ones(3, np.float64), np.ones(3, np.float32)),
    (np.ones(3), np.ones((3, 1))),
    (np.ones(3), np.ones(())),
    (2.0, np.float64(2.0)),
    (2.0, np.ones(())),
    ((1.0, 2.0), [1.0, 2.0]),
    ((1.0, 2.0), (1.0, 2.0, 3.0)),
], ids=["dtype", "ndim", "0d", "float-vs-np.float64", "float-vs-0d", "tuple-vs-list", "length"])
def test_a_different_kind_builds_again(first, second):
    def total(a):
        return _sum_all(a)
    g = grad(total)
    c = Counter()
    g(first)
    assert c.delta() == (1, 0)
    g(second)
    assert c.delta() == (1, 0)
    g(first)
    g(second)
    assert c.delta() == (0, 2)


def _sum_all(a):
    if isinstance(a, (tuple, list)):
        s = 0.0
        for v in a:
            s = s + v * v
        return s
    return np.sum(a * a)


def test_a_constant_argument_of_another_kind_builds_again():
    g = grad(_mul, 0)
    c = Counter()
    g(np.ones(2), 3.0)
    g(np.ones(2), np.ones(2))
    assert c.delta() == (2, 0)


def test_new_grad_object_for_the_same_function_shares_the_entry():
    c = Counter()
    grad(_mul, (0, 1))(np.ones(2), np.ones(2))
    built, _ = c.delta()
    grad(_mul, (0, 1))(np.ones(2), np.ones(2))
    value_and_grad(_mul, (0, 1))(np.ones(2), np.ones(2))
    assert c.delta() == (0, 2)
    assert built <= 1


def test_other_positions_build_again():
    c = Counter()
    grad(_mul, 0)(np.ones(2), np.ones(2))
    c.delta()
    grad(_mul, 1)(np.ones(2), np.ones(2))
    assert c.delta()[0] == 1


def test_clear_cache_forgets():
    g = grad(_square)
    g(np.ones(2))
    c = Counter()
    g(np.ones(2))
    assert c.delta() == (0, 1)
    mindgrad.clear_cache()
    g(np.ones(2))
    assert c.delta() == (1, 0)


def test_stats_is_a_copy():
    stats = mindgrad.cache_stats()
    stats["builds"] = -1
    assert mindgrad.cache_stats()["builds"] >= 0


# ----- redefining the function -----------------------------------------------------------------


_cells = itertools.count()


def _define_in_cell(text, name):
    """Execute ``text`` like a notebook cell: its source lives in linecache only."""
    filename = f"<mindgrad-test-cell-{next(_cells)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    ns = {"np": np}
    exec(compile(text, filename, "exec"), ns)  # noqa: S102
    return ns[name]


def _define_in_file(path, text, name):
    path.write_text(text)
    ns = {"np": np}
    exec(compile(text, str(path), "exec"), ns)  # noqa: S102
    return ns[name]


def test_redefined_notebook_function_gets_fresh_code():
    c = Counter()
    v1 = _define_in_cell("def model(x):\n    return x * 2.0\n", "model")
    assert grad(v1)(1.0) == 2.0
    v2 = _define_in_cell("def model(x):\n    return x * x * 3.0\n", "model")
    assert grad(v2)(1.0) == 6.0
    assert c.delta()[0] == 2
    assert grad(v1)(1.0) == 2.0  # the old definition keeps its own gradient


def test_recompiled_file_function_gets_fresh_code(tmp_path):
    c = Counter()
    v1 = _define_in_file(tmp_path / "m1.py", "def model(x):\n    return x * 2.0\n", "model")
    assert grad(v1)(1.0) == 2.0
    v2 = _define_in_file(tmp_path / "m2.py", "def model(x):\n    return x * x * x\n", "model")
    assert grad(v2)(2.0) == 12.0
    assert c.delta()[0] == 2


def test_replaced_code_object_builds_again():
    def model(x):
        return x * 2.0

    def other(x):
        return x * 5.0
    g = grad(model)
    assert g(1.0) == 2.0
    c = Counter()
    model.__code__ = other.__code__
    assert g(1.0) == 5.0
    assert c.delta() == (1, 0)


# ----- redefining a function it calls ----------------------------------------------------------


def _helper(a):
    return a * a


def _calls_helper(a):
    return _helper(a) * 2.0


def _helper_inner(a):
    return a * a


def _helper_outer(a):
    return _helper_inner(a) + a


def _calls_nested(a):
    return _helper_outer(a) * 2.0


@pytest.fixture
def restore_globals():
    saved = dict(globals())
    yield
    globals().update({k: saved[k] for k in ("_helper", "_helper_inner")})


def test_rebinding_a_called_global_builds_again(restore_globals):
    global _helper
    g = grad(_calls_helper)
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(g(x), [4, 8])
    c = Counter()
    g(x)
    assert c.delta() == (0, 1)

    def _helper(a):  # the notebook pattern: redefine, re-run
        return a * a * a
    np.testing.assert_allclose(g(x), [6, 24])  # 2 * 3 x^2
    assert c.delta() == (1, 0)
    g(x)
    assert c.delta() == (0, 1)


def test_rebinding_a_global_called_by_a_callee_builds_again(restore_globals):
    global _helper_inner
    g = grad(_calls_nested)
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(g(x), [6, 10])  # 2 (2x + 1)

    def _helper_inner(a):
        return a * a * a
    np.testing.assert_allclose(g(x), [8, 26])  # 2 (3x^2 + 1)


def test_rebinding_an_unrelated_global_does_not_build():
    g = grad(_calls_helper)
    g(np.ones(2))
    c = Counter()
    globals()["_unrelated"] = object()
    g(np.ones(2))
    assert c.delta() == (0, 1)


_SCALE = 2.0


def _scaled(a):
    return a * _SCALE


def test_a_global_value_is_read_when_called():
    global _SCALE
    g = grad(_scaled)
    try:
        assert g(1.0) == 2.0
        _SCALE = 7.0
        assert g(1.0) == 7.0
    finally:
        _SCALE = 2.0


_NAMESPACE = types.SimpleNamespace(helper=_helper)


def _calls_attribute(a):
    return _NAMESPACE.helper(a)


def test_rebinding_a_called_attribute_builds_again():
    def cube(a):
        return a * a * a
    g = grad(_calls_attribute)
    x = np.array([1.0, 2.0])
    saved = _NAMESPACE.helper
    try:
        np.testing.assert_allclose(g(x), [2, 4])
        _NAMESPACE.helper = cube
        np.testing.assert_allclose(g(x), [3, 12])
    finally:
        _NAMESPACE.helper = saved


def test_rebinding_a_called_closure_function_builds_again():
    def make():
        def helper(a):
            return a * a

        def model(a):
            return helper(a)

        def redefine():
            nonlocal helper

            def helper(a):
                return a * a * a
        return model, redefine
    model, redefine = make()
    g = value_and_grad(model)
    x = np.array([1.0, 2.0])
    value, gx = g(x)
    np.testing.assert_allclose(gx, [2, 4])
    redefine()
    value, gx = g(x)
    np.testing.assert_allclose(value, [1, 8])
    np.testing.assert_allclose(gx, [3, 12])


# ----- registering a rule ----------------------------------------------------------------------


def _wrapped(a):
    return a * 3.0


def _calls_wrapped(a):
    return _wrapped(a) + a


def test_registering_a_rule_after_a_build_builds_again():
    g = grad(_calls_wrapped)
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(g(x), [4, 4])
    c = Counter()
    g(x)
    assert c.delta() == (0, 1)

    @mindgrad.adjoint(_wrapped)
    def _(out, a):
        d[a] = d[out] * 100.0  # deliberately wrong, so its use shows

    np.testing.assert_allclose(g(x), [101, 101])
    assert c.delta() == (1, 0)
    g(x)
    assert c.delta() == (0, 1)


def test_removing_the_rule_again_builds_again():
    g = grad(_calls_wrapped)
    x = np.array([1.0, 2.0])

    @mindgrad.adjoint(_wrapped)
    def _(out, a):
        d[a] = d[out] * 100.0

    np.testing.assert_allclose(g(x), [101, 101])
    del rules._RULES[_wrapped]
    rules._bump()
    np.testing.assert_allclose(g(x), [4, 4])
    assert rules.lookup(_wrapped) is None


def test_declaring_nondifferentiable_after_a_build_builds_again():
    g = grad(_calls_wrapped)
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(g(x), [4, 4])
    mindgrad.nondifferentiable(_wrapped)
    np.testing.assert_allclose(g(x), [1, 1])


_triple = np.vectorize(lambda a: 3.0 * a)  # no source mindgrad reads, and no rule


def _calls_partial(a):
    return _triple(a) * a


def test_rule_for_a_function_without_source():
    x = np.array([1.0, 2.0])
    with pytest.raises(mindgrad.NoGradientRuleError, match="@mindgrad.adjoint"):
        grad(_calls_partial)(x)

    @mindgrad.adjoint(_triple)
    def _(out, a):
        d[a] = d[out] * 3.0

    # d/da (3a * a) = 6a
    np.testing.assert_allclose(grad(_calls_partial)(x), [6, 12])


def test_registry_left_clean():
    # the fixture restored everything: no rule for this module's functions is left behind
    assert rules.lookup(_wrapped) is None
    assert rules.lookup(_triple) is None
    assert not rules.is_nondifferentiable(_wrapped)


# ----- notebook cells: source only in linecache -------------------------------------------------


def _run_cell(text, number, namespace):
    """What IPython does with a cell: register its text in linecache, then run it."""
    import linecache

    filename = f"<ipython-input-{number}-0123456789ab>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 (as IPython runs a cell)


def test_function_defined_in_a_notebook_cell_and_redefined():
    namespace = {"np": np}
    _run_cell("def cell_f(x):\n    return np.sum(x ** 3)\n", 1, namespace)
    x = np.array([1.0, 2.0])
    g = mindgrad.grad(namespace["cell_f"])
    np.testing.assert_allclose(g(x), 3 * x ** 2)
    assert "grad of: return np.sum(x ** 3)" in g.source(x)
    # the user edits the cell and runs it again: a new function, fresh code
    _run_cell("def cell_f(x):\n    return np.sum(x ** 4)\n", 2, namespace)
    np.testing.assert_allclose(mindgrad.grad(namespace["cell_f"])(x), 4 * x ** 3)


def test_helper_redefined_in_a_later_cell_is_picked_up():
    namespace = {"np": np}
    _run_cell("def helper(x):\n    return x * x\n\ndef model(x):\n    return np.sum(helper(x))\n",
              3, namespace)
    x = np.array([1.0, 2.0])
    g = mindgrad.grad(namespace["model"])
    np.testing.assert_allclose(g(x), 2 * x)
    _run_cell("def helper(x):\n    return x * x * x\n", 4, namespace)
    np.testing.assert_allclose(g(x), 3 * x ** 2)


def test_a_rule_registered_during_a_build_builds_again(monkeypatch):
    # the registry version is read before the build: code built while a rule was being
    # registered (another thread, or an import the build triggers) is not kept
    from mindgrad.compiler import driver

    compile_ = driver.Build.compile

    def compile_while_registering(self, label):
        monkeypatch.setattr(driver.Build, "compile", compile_)

        @mindgrad.adjoint(_wrapped)
        def _(out, a):
            d[a] = d[out] * 100.0  # deliberately wrong, so its use shows

        return compile_(self, label)

    monkeypatch.setattr(driver.Build, "compile", compile_while_registering)
    g = grad(_calls_wrapped)
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(g(x), [4, 4])  # built from the source, as the build began
    c = Counter()
    np.testing.assert_allclose(g(x), [101, 101])
    assert c.delta() == (1, 0)


# ----- what the cache keeps alive ---------------------------------------------------------------


class _Block(mindgrad.nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = mindgrad.nn.Parameter(np.full((3, 3), 0.1), name="w")

    def construct(self, x):
        return np.tanh(x @ self.w)


class _Model(mindgrad.nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = _Block()
        self.b = _Block()

    def construct(self, x):
        return np.sum(self.b(self.a(x)))


class _Scaled:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return np.sum(x * self.k)

    def loss(self, x):
        return np.sum(x * x * self.k)


def test_cached_models_and_callables_are_freed():
    import gc
    import weakref

    x = np.full((2, 3), 0.5)
    gc.collect()
    lines = _generated_lines()
    refs = []
    for _ in range(30):
        net, obj = _Model(), _Scaled(2.0)
        weights = net.trainable_params()
        mindgrad.grad(net, 0, weights)(x)
        mindgrad.value_and_grad(net)(x)
        mindgrad.jvp(net, (x,), (x,))
        mindgrad.vjp(net, x)[1](1.0)
        np.testing.assert_allclose(mindgrad.grad(obj)(x), np.full_like(x, 2.0))
        np.testing.assert_allclose(mindgrad.grad(obj.loss)(x), 4.0 * x)
        refs += [weakref.ref(net), weakref.ref(obj)] + [weakref.ref(w) for w in weights]
        del net, obj, weights
    while gc.collect():  # an entry's weak references die in one pass, the entry in the next
        pass
    assert [r for r in refs if r() is not None] == []
    # the generated code's lines are dropped with it
    assert _generated_lines() <= lines + 2, \
        sorted(n for n in linecache.cache if n.startswith("<mindgrad"))


def _generated_lines():
    """How many entries of linecache hold generated code (real files read once are not)."""
    return sum(1 for name in linecache.cache if name.startswith("<mindgrad"))


def test_grad_of_a_bound_method_builds_once():
    obj = _Scaled(3.0)
    x = np.array([0.5, -1.0, 2.0])
    c = Counter()
    for _ in range(3):
        np.testing.assert_allclose(mindgrad.grad(obj.loss)(x), 6.0 * x)
    assert c.delta() == (1, 2)
    other = _Scaled(5.0)  # another instance: its own entry, its own numbers
    np.testing.assert_allclose(mindgrad.grad(other.loss)(x), 10.0 * x)
    np.testing.assert_allclose(mindgrad.grad(obj.loss)(x), 6.0 * x)
    assert c.delta() == (1, 1)


# ----- loops unrolled over lists of Cells or functions ------------------------------------------


class _Tanh(mindgrad.nn.Cell):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def construct(self, x):
        return np.tanh(x * self.k)


class _Stack(mindgrad.nn.Cell):
    def __init__(self, layers):
        super().__init__()
        self.layers = layers

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return np.sum(x * x)


def _stack_value(ks, x):
    for k in ks:
        x = np.tanh(x * k)
    return np.sum(x * x)


def _check_stack(net, ks, x):
    """grad and jvp of ``net`` against central differences of the same stack in NumPy."""
    mindgrad.check_grads(net, (x,), modes=("rev", "fwd"))
    v = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    eps = 1e-6
    numeric = (_stack_value(ks, x + eps * v) - _stack_value(ks, x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(np.vdot(mindgrad.grad(net)(x), v), numeric, rtol=1e-6)
    np.testing.assert_allclose(mindgrad.jvp(net, (x,), (v,))[1], numeric, rtol=1e-6)


@pytest.mark.parametrize("container", [list, mindgrad.nn.CellList])
def test_changing_the_list_of_cells_a_loop_was_unrolled_over_builds_again(container):
    x = np.array([0.3, -0.7, 1.1])
    net = _Stack(container([_Tanh(0.5), _Tanh(-1.5)]))
    _check_stack(net, [0.5, -1.5], x)
    c = Counter()
    mindgrad.grad(net)(x)
    assert c.delta() == (0, 1)
    net.layers.append(_Tanh(2.0))
    _check_stack(net, [0.5, -1.5, 2.0], x)
    if container is list:  # a CellList has no item assignment
        net.layers[0] = _Tanh(0.25)
        _check_stack(net, [0.25, -1.5, 2.0], x)
        del net.layers[1]
        _check_stack(net, [0.25, 2.0], x)
    net.layers = container([_Tanh(3.0)])
    _check_stack(net, [3.0], x)


_FUNCTIONS = [np.sin, np.tanh]


def _through_functions(x):
    for fn in _FUNCTIONS:
        x = fn(x)
    return np.sum(x)


def test_changing_a_global_list_of_functions_a_loop_was_unrolled_over_builds_again():
    x = np.array([0.2, 0.9])
    g = grad(_through_functions)
    np.testing.assert_allclose(g(x), np.cos(x) * (1 - np.tanh(np.sin(x)) ** 2))
    try:
        _FUNCTIONS.append(np.exp)
        np.testing.assert_allclose(g(x), np.exp(np.tanh(np.sin(x))) *
                                   (1 - np.tanh(np.sin(x)) ** 2) * np.cos(x))
        _FUNCTIONS[0] = np.cos
        np.testing.assert_allclose(g(x), np.exp(np.tanh(np.cos(x))) *
                                   (1 - np.tanh(np.cos(x)) ** 2) * -np.sin(x))
        mindgrad.check_grads(_through_functions, (x,), modes=("rev", "fwd"), order=2)
    finally:
        _FUNCTIONS[:] = [np.sin, np.tanh]


# ----- defaults ---------------------------------------------------------------------------------


def _power(x, k=2.0):
    return np.sum(x ** k)


def _power_kw(x, *, k=2.0):
    return np.sum(x ** k)


def _power_helper(x, k=2.0):
    return x ** k


def _calls_power_helper(x):
    return np.sum(_power_helper(x) * 1.5)


@pytest.fixture
def restore_defaults():
    saved = [(f, f.__defaults__, dict(f.__kwdefaults__ or {}) or None)
             for f in (_power, _power_kw, _power_helper)]
    yield
    for f, defaults, kwdefaults in saved:
        f.__defaults__, f.__kwdefaults__ = defaults, kwdefaults


@pytest.mark.parametrize("fn, scale, change", [
    (_power, 1.0, lambda: setattr(_power, "__defaults__", (3.0,))),
    (_power_kw, 1.0, lambda: _power_kw.__kwdefaults__.update(k=3.0)),
    (_calls_power_helper, 1.5, lambda: setattr(_power_helper, "__defaults__", (3.0,))),
])
def test_changed_defaults_build_again(restore_defaults, fn, scale, change):
    x = np.array([1.5, 2.0, 0.5])
    v = np.array([0.3, -1.0, 2.0])
    for k in (2.0, 3.0):
        if k == 3.0:
            change()
        expected = scale * k * x ** (k - 1)  # d/dx sum(scale x^k)
        np.testing.assert_allclose(grad(fn)(x), expected)
        np.testing.assert_allclose(mindgrad.jvp(fn, (x,), (v,))[1], np.vdot(expected, v))
        mindgrad.check_grads(fn, (x,), modes=("rev", "fwd"), order=2)
    c = Counter()
    grad(fn)(x)
    assert c.delta() == (0, 1)


# ----- weights ----------------------------------------------------------------------------------


class _TwoWeights(mindgrad.nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = mindgrad.nn.Parameter(np.array([2.0, -1.0]), name="a")
        self.b = mindgrad.nn.Parameter(np.array([5.0, 0.5]), name="b")

    def construct(self, x):
        return np.sum(x * self.a * self.a + np.sin(x * self.b))


def test_swapping_parameters_between_attributes_builds_again():
    net, x = _TwoWeights(), np.array([0.7, -1.3])
    a, b = net.a, net.b
    g = grad(net, None, [a, b])
    for _ in range(2):
        ga, gb = g(x)  # d/da sum(x a^2 + sin(x b)) = 2 x a, d/db = x cos(x b)
        np.testing.assert_allclose(ga, 2 * x * net.a if net.a is a else x * np.cos(x * a))
        np.testing.assert_allclose(gb, x * np.cos(x * b) if net.b is b else 2 * x * b)
        net.a, net.b = b, a
    net.a = mindgrad.nn.Parameter(np.array([1.0, 1.0]), name="c")  # neither weight asked for
    ga, gb = g(x)
    np.testing.assert_allclose(ga, x * np.cos(x * a))
    np.testing.assert_allclose(gb, 0.0)


def test_a_new_parameter_at_a_freed_ones_address_builds_again(monkeypatch):
    import gc
    import weakref

    # a cache key names the weights by id, and CPython reuses a freed object's address:
    # make every Parameter's id collide, as a reused address does
    Parameter = mindgrad.nn.Parameter
    monkeypatch.setattr(mindgrad.api.gradients, "id",
                        lambda o: 1 if isinstance(o, Parameter) else id(o),
                        raising=False)
    net, x = _TwoWeights(), np.array([0.7, -1.3])
    unused = Parameter(np.array([1.0]), name="unused")
    np.testing.assert_allclose(grad(net, None, [unused])(x)[0], 0.0)
    freed = weakref.ref(unused)
    del unused
    gc.collect()
    assert freed() is None
    (ga,) = grad(net, None, [net.a])(x)
    np.testing.assert_allclose(ga, 2 * x * net.a)


# ----- a source file edited without a reload ----------------------------------------------------


_FIRST = "import numpy as np\n\n\ndef f(x):\n    return np.sum(x * x)\n\n\ndef g(x):\n" \
         "    return np.sum(x * 5.0)\n"


def _import_file(path, text):
    import importlib.util

    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"_edited_{next(_cells)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _edit(path, text):
    """Rewrite the file as an editor does, without reloading the module."""
    import os

    stat = path.stat()
    path.write_text(text)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))


def test_a_rebuild_reads_the_source_it_read_first(tmp_path):
    module = _import_file(tmp_path / "model.py", _FIRST)
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(grad(module.f)(x), 2 * x)
    _edit(tmp_path / "model.py", _FIRST.replace("x * x", "x * x * x"))
    # new argument kinds build again, from the text the function was defined by
    x32 = x.astype(np.float32)
    np.testing.assert_allclose(grad(module.f)(x32), 2 * x32)
    assert "grad of: return np.sum(x * x)\n" in grad(module.f).source(x32)
    np.testing.assert_allclose(mindgrad.jvp(module.f, (x32,), (np.ones(3, np.float32),))[1],
                               np.sum(2 * x32), rtol=1e-6)


def test_a_function_whose_definition_moved_in_the_edited_file_is_a_clear_error(tmp_path):
    module = _import_file(tmp_path / "model.py", _FIRST)
    # g now sits on f's old line and f on g's: neither text is the function's own
    _edit(tmp_path / "model.py", "import numpy as np\n\n\ndef g(x):\n    return np.sum(x * 5.0)"
                                 "\n\n\ndef f(x):\n    return np.sum(x * x)\n")
    x = np.array([1.0, 2.0])
    with pytest.raises(mindgrad.NoSourceError, match=r"model\.py:4: def g\(x\):.*reload"):
        grad(module.f)(x)
    with pytest.raises(mindgrad.NoSourceError, match=r"model\.py:8: def f\(x\):"):
        grad(module.g)(x)
    # the same name with other parameters is no match either
    module = _import_file(tmp_path / "other.py", _FIRST)
    _edit(tmp_path / "other.py", _FIRST.replace("def f(x)", "def f(y)"))
    with pytest.raises(mindgrad.NoSourceError, match=r"parameters \(y\), not \(x\)"):
        grad(module.f)(x)


def test_a_body_edited_before_the_first_gradient_is_a_clear_error(tmp_path):
    # same line, name and parameters: only compiling the text shows it is not f's code
    text = "import numpy as np\n\n\ndef f(x):\n    return np.sum(x ** 3)\n"
    module = _import_file(tmp_path / "model.py", text)
    _edit(tmp_path / "model.py", text.replace("x ** 3", "np.cos(x)"))
    x = np.array([0.5, -1.25, 2.0])
    np.testing.assert_allclose(module.f(x), np.sum(x ** 3))  # what the function computes
    runs = [lambda: grad(module.f)(x), lambda: value_and_grad(module.f)(x),
            lambda: mindgrad.jvp(module.f, (x,), (x,)), lambda: mindgrad.source(grad(module.f), x)]
    for run in runs:
        with pytest.raises(mindgrad.NoSourceError,
                           match=r"model\.py:4: def f\(x\):.*edited.*importlib\.reload"):
            run()
    # reloaded, the module defines the new f: its gradient is the new text's
    module.__spec__.loader.exec_module(module)
    value, g = value_and_grad(module.f)(x)
    np.testing.assert_allclose(value, np.sum(np.cos(x)))
    np.testing.assert_allclose(g, -np.sin(x))


def test_a_multi_line_string_in_a_method_keeps_its_spaces(tmp_path):
    # the text is parsed where it stands: dedenting it would shorten the string's second line
    text = ("import numpy as np\n\n\nclass K:\n    def loss(self, x):\n"
            "        s = \"\"\"a\n        b\"\"\"\n        return np.sum(x * len(s))\n")
    module = _import_file(tmp_path / "strings.py", text)
    x = np.array([0.5, -1.25])
    value, g = value_and_grad(module.K().loss)(x)
    np.testing.assert_allclose(value, module.K().loss(x))
    np.testing.assert_allclose(g, np.full(2, 11.0))  # len("a\n        b")


_CONSTRUCTS = '''from __future__ import annotations
import functools
import numpy as np


def logged(f):
    @functools.wraps(f)
    def wrapper(*args):
        return f(*args)
    return wrapper


@logged
def decorated(x):
    """Two lines
    of docstring."""
    return np.sum(np.sin(x))


def scaled_by(k):
    def inner(x):
        def times(y: np.ndarray) -> np.ndarray:
            return y * k
        return np.sum(times(x) * x)
    return inner


class Model:
    def __init__(self):
        self.k = 3.0

    def loss(self, x):
        return np.sum([v * self.k for v in x])

    @staticmethod
    def cube(x):
        return np.sum(x ** 3)

    square = staticmethod(lambda x: np.sum(x * x))


pair = [lambda x: np.sum(x * 2.0), lambda y: np.sum(np.exp(y))]
'''


def test_unedited_functions_of_every_kind_are_read(tmp_path):
    # the check compiles the text in a scope like the function's own: no false alarm
    module = _import_file(tmp_path / "constructs.py", _CONSTRUCTS)
    x = np.array([0.5, -1.25, 2.0])
    cases = [(module.decorated, np.cos(x)), (module.scaled_by(1.5), 3.0 * x),
             (module.Model().loss, np.full(3, 3.0)), (module.Model.cube, 3 * x ** 2),
             (module.Model.square, 2 * x), (module.pair[0], np.full(3, 2.0)),
             (module.pair[1], np.exp(x))]
    for fn, expected in cases:
        np.testing.assert_allclose(grad(fn)(x), expected)


# ----- generated code that calls generated code -------------------------------------------------


def _inner_helper(a):
    return a * a


def _inner_cube(a):
    return a * a * a


def _inner_loss(a):
    return np.sum(_inner_helper(a))


_inner_gradient = grad(_inner_loss)


def _calls_a_gradient(a):
    return np.sum(_inner_gradient(a) * a)


@pytest.fixture
def restore_inner_helper():
    saved = _inner_helper
    yield
    globals()["_inner_helper"] = saved


def test_rebinding_what_an_inner_gradient_calls_builds_the_outer_again(restore_inner_helper):
    x = np.array([0.5, -1.0, 2.0])
    outer = {
        "grad(grad(f))": mindgrad.grad(mindgrad.grad(_inner_loss)),
        "jacrev(jacrev(f))": lambda a: np.diag(mindgrad.jacrev(mindgrad.jacrev(_inner_loss))(a)),
        "jacfwd(jacrev(f))": lambda a: np.diag(mindgrad.jacfwd(mindgrad.jacrev(_inner_loss))(a)),
        "jvp(grad(f))": lambda a: mindgrad.jvp(_inner_gradient, (a,), (np.ones_like(a),))[1],
        "grad(f calling grad(g))": grad(_calls_a_gradient),
    }
    # f = sum(h(a)): f'' = h''; f calling grad: d/da sum(h'(a) a) = h''(a) a + h'(a)
    for helper, h1, h2 in [(_inner_helper, lambda a: 2 * a, lambda a: 2 + 0 * a),
                           (_inner_cube, lambda a: 3 * a ** 2, lambda a: 6 * a)]:
        globals()["_inner_helper"] = helper
        expected = {name: h2(x) for name in outer}
        expected["grad(f calling grad(g))"] = h2(x) * x + h1(x)
        for name, fn in outer.items():
            np.testing.assert_allclose(fn(x), expected[name], err_msg=name)


# ----- threads: a rule registered while other threads build --------------------------------------


def _doubled(a):
    return a * 2.0


def _copied(a):
    return a * 1.0  # no rule: looking it up misses, which may load deferred rules


def _uses_doubled(k):
    def f(x):
        return np.sum(_doubled(_copied(x)) * k)
    return f


def test_a_rule_registered_while_threads_build_reaches_every_later_call(monkeypatch):
    import threading
    import time

    # a program that has not imported an optional library: every lookup that misses asks
    # whether it has been imported since (rules._load_deferred)
    monkeypatch.setitem(rules._pending, "mindgrad_tests.absent_library", "absent")

    @mindgrad.adjoint(_doubled)
    def _(out, a):
        d[a] = d[out] * 2.0

    fns = [_uses_doubled(float(k + 1)) for k in range(90)]
    x = np.array([0.5, -1.5])
    errors = []

    def build(part):
        try:
            for f in part:
                grad(f)(x)
        except BaseException as exc:  # noqa: BLE001 (reported by the main thread)
            errors.append(exc)

    start = mindgrad.cache_stats()["builds"]
    threads = [threading.Thread(target=build, args=(fns[i::3],)) for i in range(3)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 10.0
    while mindgrad.cache_stats()["builds"] - start < len(fns) // 3 and \
            time.monotonic() < deadline:
        time.sleep(0.001)

    @mindgrad.adjoint(_doubled)
    def _(out, a):
        d[a] = d[out] * 5.0  # deliberately not the derivative, so its use shows

    for t in threads:
        t.join(timeout=60.0)
    assert not errors and not any(t.is_alive() for t in threads)
    # every gradient called after the registration uses the new rule: d/dx sum(5 x k) = 5 k
    stale = [k for k, f in enumerate(fns) if not np.allclose(grad(f)(x), 5.0 * (k + 1))]
    assert stale == []
    c = Counter()
    for f in fns:  # and is kept: the next calls find it
        grad(f)(x)
    assert c.delta() == (0, len(fns))


def test_a_rule_registered_while_another_thread_loads_deferred_rules(monkeypatch):
    # thread A loads the rules of an optional library the program just imported (a lookup
    # that missed); meanwhile the main thread registers a rule. Code built before must not
    # stay valid: the registration counts although A's load is quiet.
    import sys
    import threading

    @mindgrad.adjoint(_doubled)
    def _(out, a):
        d[a] = d[out] * 2.0

    x = np.array([0.5, -1.5])
    before = [_uses_doubled(float(k + 1)) for k in range(3)]
    for k, f in enumerate(before):
        np.testing.assert_allclose(grad(f)(x), 2.0 * (k + 1))
    entered, registered = threading.Event(), threading.Event()
    real_import = rule_registry.importlib.import_module

    def slow_import(name):
        if not name.endswith(".mindgrad_tests_slow_topic"):
            return real_import(name)
        entered.set()
        registered.wait(10.0)
        return None

    slow = types.SimpleNamespace(import_module=slow_import)
    monkeypatch.setattr(rule_registry, "importlib", slow)
    monkeypatch.setitem(sys.modules, "mindgrad_tests_library", types.ModuleType("library"))
    monkeypatch.setitem(rules._pending, "mindgrad_tests_library", "mindgrad_tests_slow_topic")
    loader = threading.Thread(target=lambda: grad(_uses_doubled(7.0))(x))
    loader.start()
    assert entered.wait(10.0)

    @mindgrad.adjoint(_doubled)
    def _(out, a):
        d[a] = d[out] * 5.0  # deliberately not the derivative, so its use shows

    registered.set()
    loader.join(10.0)
    assert not loader.is_alive()
    for k, f in enumerate(before):
        np.testing.assert_allclose(grad(f)(x), 5.0 * (k + 1))


def test_a_rule_parsed_in_one_thread_is_read_whole_in_another(monkeypatch):
    # mindgrad's own rules are parsed at first use; a build in another thread reading the
    # rule meanwhile must not see it half parsed (an empty ``differentiates`` drops d[a])
    import threading

    def template(out, a, b):
        d[a] = d[out] * b
        d[b] = d[out] * a

    rule = rules.Rule(_mul, template, lazy=True)
    validating, release = threading.Event(), threading.Event()
    validate = rules.Rule._validate

    def slow_validate(self):
        if threading.current_thread() is parser:
            validating.set()
            release.wait(10.0)
        return validate(self)

    monkeypatch.setattr(rules.Rule, "_validate", slow_validate)
    parser = threading.Thread(target=lambda: rule.body)
    parser.start()
    assert validating.wait(10.0)
    try:
        assert rule.differentiates == {"a", "b"}
    finally:
        release.set()
        parser.join(10.0)
    assert rule.differentiates == {"a", "b"} and len(rule.body) == 2
