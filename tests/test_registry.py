"""The rule registry: mindgrad's own templates are parsed when a program first uses them (so
``import mindgrad`` reads none), every one of them parses and validates, and a user's rule is
checked at its decorator."""

import subprocess
import sys

import numpy as np
import pytest

import mindgrad
from mindgrad import rules
from mindgrad.rules import Rule, RuleError


def _all_rules():
    return list(rules._RULES.values()) + list(rules._TANGENTS.values())


def test_import_parses_no_template():
    code = ("import mindgrad\n"
            "from mindgrad import rules\n"
            "every = list(rules._RULES.values()) + list(rules._TANGENTS.values())\n"
            "print(len(every), sum('body' in r.__dict__ for r in every))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert int(out[0]) > 500 and int(out[1]) == 0


def test_every_builtin_rule_parses_and_validates():
    for rule in _all_rules():
        assert rule.params is not None and rule.out, rule
        assert isinstance(rule.body, list), rule
        rule.reads_zero_unsafely  # noqa: B018  walks the parsed body


def test_a_rule_parses_once_when_first_used():
    x = np.array([0.3, -1.2, 2.0])
    rule = rules.lookup(np.arcsinh)
    rule.__dict__.pop("body", None)  # as after import
    for attr in Rule._PARSED:
        rule.__dict__.pop(attr, None)
    g = mindgrad.grad(lambda v: np.sum(np.arcsinh(v)))(x)
    np.testing.assert_allclose(g, 1.0 / np.sqrt(x * x + 1.0), rtol=1e-12)
    assert "body" in rule.__dict__


def _writes_the_output(out, x):
    rules.d[out] = x  # malformed: a rule writes the inputs' gradients, not the output's


def test_a_malformed_lazy_rule_fails_at_every_use():
    rule = Rule(np.sinh, _writes_the_output, lazy=True)
    for _ in range(2):  # all or nothing: the second use does not see a half-parsed rule
        with pytest.raises(RuleError, match="writes d\\[out\\]"):
            rule.body  # noqa: B018


def test_a_users_malformed_rule_fails_at_its_decorator():
    def my_function(x):
        return x

    with pytest.raises(RuleError, match="writes d\\[out\\]"):
        rules.adjoint(my_function)(_writes_the_output)
    assert rules.lookup(my_function) is None


def test_runtime_all_lists_every_public_helper():
    import types

    from mindgrad import runtime

    public = {n for n, v in vars(runtime).items() if not n.startswith("_")
              and isinstance(v, (types.FunctionType, type))
              and getattr(v, "__module__", "") == "mindgrad.runtime"}
    assert set(runtime.__all__) == public
