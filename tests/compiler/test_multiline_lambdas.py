"""Lambdas spanning several lines inside brackets (dict and list literals, call arguments):
read whole from the statement around them, never cut at the end of their first line.
Gradients are checked against closed forms and central differences in float64."""

import numpy as np
import pytest

import mindgrad
from mindgrad.compiler.finish import emit
from mindgrad.compiler.front import source, source_lambdas


def a(x):
    return np.sin(x)


def b(x):
    return x * x


IN_A_DICT = {"k": lambda x: a(x)
             + b(x)}
ON_CONTINUATION_LINES = {
    "k": lambda x: a(x)
    + b(x),
    "j": lambda x: a(x) * 2.0,
}
# the first line alone parses as a whole lambda (lambda x: a(x)): it must not be read so
CUT_WOULD_PARSE = [
    lambda x: a(x)
    + b(x)]
TWO_ON_A_LINE = [lambda x: a(x)
                 + b(x), lambda x: a(x) *
                 b(x)]
SAME_TEXT = [lambda x: a(x) * 3.0, lambda x: a(x) * 3.0]


def _through_a_call(f):
    return f


AS_ARGUMENT = _through_a_call(lambda x: np.sum(a(x)
                                               * b(x)))

X = np.array([0.3, -0.7, 1.1])
SUM_GRAD = np.cos(X) + 2 * X          # of a(x) + b(x)
PRODUCT_GRAD = np.cos(X) * X * X + np.sin(X) * 2 * X  # of a(x) * b(x)


@pytest.mark.parametrize("fn, truth", [
    (IN_A_DICT["k"], SUM_GRAD),
    (ON_CONTINUATION_LINES["k"], SUM_GRAD),
    (ON_CONTINUATION_LINES["j"], 2.0 * np.cos(X)),
    (CUT_WOULD_PARSE[0], SUM_GRAD),
    (TWO_ON_A_LINE[0], SUM_GRAD),
    (TWO_ON_A_LINE[1], PRODUCT_GRAD),
    (AS_ARGUMENT, PRODUCT_GRAD),
], ids=["dict", "continuation line", "next entry", "cut would parse", "first of two",
        "second of two", "call argument"])
def test_a_lambda_spanning_lines_is_read_whole(fn, truth):
    elementwise = fn is not AS_ARGUMENT

    def total(x):
        return np.sum(fn(x)) if elementwise else fn(x)

    np.testing.assert_allclose(mindgrad.grad(total)(X), truth, rtol=1e-12)
    np.testing.assert_allclose(mindgrad.grad(lambda x: np.sum(fn(x)))(X), truth, rtol=1e-12)
    if elementwise:  # the lambda itself, passed as the function
        np.testing.assert_allclose([mindgrad.grad(fn)(float(v)) for v in X], truth,
                                   rtol=1e-12)
        _, tangent = mindgrad.jvp(fn, (X,), (np.ones(3),))
        np.testing.assert_allclose(tangent, truth, rtol=1e-12)
    mindgrad.check_grads(total, (X,), modes=("rev", "fwd"), order=2)


def test_the_text_read_is_the_whole_lambda():
    assert emit.unparse(source.get_source(CUT_WOULD_PARSE[0]).tree) == \
        "def lambda_(x):\n    return a(x) + b(x)\n"


def test_lambdas_of_the_same_code_on_one_line_differentiate_alike():
    for f in SAME_TEXT:
        assert mindgrad.grad(f)(0.5) == pytest.approx(3.0 * np.cos(0.5), rel=1e-12)


def test_without_columns_lambdas_are_told_apart_by_their_code(monkeypatch):
    monkeypatch.setattr(source_lambdas, "_positions", lambda code: [])  # 3.10 records none
    for f in TWO_ON_A_LINE + [CUT_WOULD_PARSE[0], ON_CONTINUATION_LINES["k"]]:
        namespace = {"a": a, "b": b, "np": np}
        exec(emit.unparse(source.get_source(f).tree), namespace)  # noqa: S102
        np.testing.assert_allclose(namespace["lambda_"](X), f(X), rtol=1e-15)
    for f in SAME_TEXT:  # the same code: either text is the function's
        namespace = {"a": a, "b": b, "np": np}
        exec(emit.unparse(source.get_source(f).tree), namespace)  # noqa: S102
        np.testing.assert_allclose(namespace["lambda_"](X), f(X), rtol=1e-15)
