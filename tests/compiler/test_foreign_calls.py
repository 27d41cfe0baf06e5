"""A call of another library's function that has no rule is not followed into that library's
source: the error is raised at the user's line, names the function, says why and shows the rule
to register. What "another library" means (``source.foreign_library``): code whose file lies
under an installation directory (site-packages, dist-packages, the standard library), outside
mindgrad; the user's own helpers are followed wherever else they live. The "no rule" message
says what is true: "no Python source" only for compiled code, and a ufunc method's rule keyed
as registering it is written (``np.add.reduce``)."""

import importlib.util
import inspect
import os
import statistics
import sys

import numpy as np
import pytest

import mindgrad
from mindgrad import rules
from mindgrad.compiler.front.source import foreign_library

HERE = os.path.realpath(__file__)


def _line(marker):
    with open(HERE) as f:
        for i, text in enumerate(f, 1):
            if text.rstrip().endswith(f"# @{marker}"):
                return i
    raise LookupError(marker)


def mean_of_stdlib(x):
    return statistics.fmean(x) * 2.0  # @fmean


def through_own_helper(x):
    return own_helper(x) + 1.0


def own_helper(x):
    return statistics.fmean(x)  # @helper-fmean


def own_square(x):
    return x * x


def uses_own_square(x):
    return np.sum(own_square(x) * 3.0)


@pytest.mark.parametrize("run, error", [
    (lambda fn, x: mindgrad.grad(fn)(x), mindgrad.NoGradientRuleError),
    (lambda fn, x: mindgrad.jvp(fn, (x,), (x,)), mindgrad.NoTangentRuleError),
], ids=["grad", "jvp"])
@pytest.mark.parametrize("fn, marker", [(mean_of_stdlib, "fmean"),
                                        (through_own_helper, "helper-fmean")])
def test_a_library_function_is_not_followed_into(run, error, fn, marker):
    with pytest.raises(error) as info:
        run(fn, [1.0, 2.0, 4.0])
    message = str(info.value)
    assert os.path.realpath(info.value.filename) == HERE and info.value.lineno == _line(marker)
    assert info.value.source_line == "return statistics.fmean(x)" + (
        " * 2.0  # @fmean" if marker == "fmean" else "  # @helper-fmean")
    assert "statistics.fmean has no" in message
    assert "another library, statistics" in message and "statistics.py:" in message
    assert "no Python source" not in message  # it has source: it is not followed
    decorator = "@mindgrad.adjoint" if error is mindgrad.NoGradientRuleError \
        else "@mindgrad.rules.tangent"
    assert f"{decorator}(statistics.fmean)" in message
    # the template has fmean's own parameters: (data, weights=None) since Python 3.11
    parameters = ", ".join(str(p) for p in inspect.signature(statistics.fmean).parameters.values())
    assert f"def _(out, {parameters}):" in message


def test_a_rule_for_a_library_function_is_used():
    @mindgrad.adjoint(statistics.fmean)
    def _(out, data, weights=None):
        d[data] = [d[out] / len(data)] * len(data)  # noqa: F821

    try:
        got = mindgrad.grad(lambda x: statistics.fmean(x) * 2.0)([1.0, 2.0, 4.0])
        assert got == pytest.approx([2.0 / 3.0] * 3)
    finally:
        rules._RULES.pop(statistics.fmean, None)
        rules._bump()


def test_the_users_own_helpers_are_still_followed():
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(mindgrad.grad(uses_own_square)(x), 6.0 * x)
    np.testing.assert_allclose(mindgrad.jvp(uses_own_square, (x,), (np.ones(3),))[1],
                               np.sum(6.0 * x))


def _module_from(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LIBRARY = "def double(x):\n    return x * 2.0\n"


@pytest.mark.parametrize("folder, foreign", [
    (("site-packages", "lib_a"), True), (("dist-packages", "lib_b"), True),
    ((".venv", "lib", "site-packages", "lib_c"), True), (("project", "lib_d"), False),
    (("project", "src", "lib_e"), False),
])
def test_another_library_is_code_under_an_installation_directory(tmp_path, folder, foreign):
    where = tmp_path.joinpath(*folder)
    where.mkdir(parents=True)
    (where / "core.py").write_text(LIBRARY)
    module = _module_from(where / "core.py", f"{folder[-1]}.core")
    assert (foreign_library(module.double) == folder[-1]) is foreign

    def f(x):
        return module.double(x) * 3.0

    if foreign:
        with pytest.raises(mindgrad.NoGradientRuleError, match=f"another library, {folder[-1]}"):
            mindgrad.grad(f)(1.5)
    else:
        assert mindgrad.grad(f)(1.5) == pytest.approx(6.0)


def test_the_standard_library_mindgrad_and_prompts_are_told_apart():
    from mindgrad.rules import numpy_linalg

    assert foreign_library(statistics.fmean) == "statistics"
    assert foreign_library(numpy_linalg.det_grad) is None  # generated code calls these
    assert foreign_library(own_square) is None
    ns = {}
    exec(compile("f = lambda x: x * 2", "<stdin>", "exec"), ns)  # noqa: S102
    assert foreign_library(ns["f"]) is None
    assert foreign_library(np.sin) is None and foreign_library(len) is None


def add_reduce(x):
    return np.add.reduce(x * x)  # @reduce


def test_a_ufunc_method_without_rule_names_its_key():
    with pytest.raises(mindgrad.NoGradientRuleError) as info:
        mindgrad.grad(add_reduce)(np.array([1.0, 2.0]))
    message = str(info.value)
    assert info.value.lineno == _line("reduce")
    assert "@mindgrad.adjoint(np.add.reduce)" in message and "ufunc.reduce" not in message
    assert "no Python source" in message  # compiled code: true
    try:  # the template has the method's own parameters where NumPy gives them (1.25+)
        parameters = str(inspect.signature(np.add.reduce))[1:-1]
    except ValueError:
        assert "def _(out, x):" in message
    else:
        assert f"def _(ans, {parameters}):" in message


def test_the_rule_the_message_shows_for_a_ufunc_method_works(tmp_path):
    """Registered as the message says, the rule is found for np.add.reduce (a new bound-method
    object at each attribute read, equal to the key)."""
    (tmp_path / "reduce_rule.py").write_text(
        "import numpy as np\nimport mindgrad\nfrom mindgrad import d\n\n\n"
        "@mindgrad.adjoint(np.add.reduce)\n"
        "def _(ans, array, /, axis=0, dtype=None, out=None, **kwargs):\n"
        "    d[array] = np.broadcast_to(d[ans], np.shape(array))\n")
    try:
        _module_from(tmp_path / "reduce_rule.py", "reduce_rule")
        x = np.array([1.0, -2.0, 3.0])
        np.testing.assert_allclose(mindgrad.grad(add_reduce)(x), 2.0 * x)
    finally:
        rules._RULES.pop(np.add.reduce, None)
        rules._bump()


def test_a_ufunc_is_named_by_its_module():
    sp = pytest.importorskip("scipy.special")

    def f(x):
        return np.sum(sp.erfcx(x))

    with pytest.raises(mindgrad.NoGradientRuleError) as info:
        mindgrad.grad(f)(np.array([0.5]))
    assert "@mindgrad.adjoint(scipy.special.erfcx)" in str(info.value)
    assert "def _(out, x):" in str(info.value)


def test_a_scipy_function_with_source_is_not_followed():
    integrate = pytest.importorskip("scipy.integrate")

    def f(x):
        return integrate.trapezoid(x * x)  # @trapezoid

    with pytest.raises(mindgrad.NoGradientRuleError) as info:
        mindgrad.grad(f)(np.array([0.5, 1.0]))
    message = str(info.value)
    assert info.value.lineno == _line("trapezoid")
    assert "another library, scipy" in message and "trapezoid" in message
    assert "def _(out, y, x=None, dx=1.0, axis=-1):" in message
    assert "@mindgrad.adjoint(scipy.integrate.trapezoid)" in message  # its public name
    assert "scipy" not in os.path.basename(info.value.filename)
    assert sys.modules["scipy"] is not None
