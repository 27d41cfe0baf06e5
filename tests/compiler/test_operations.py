"""The one classification of a normalized assignment (``compiler/transform/operations.py``)
that forward and reverse mode share: each kind of value gets its record, read from a real
function after the normalize stage. A transformation of its own (here a counter of the rules
a function needs) reuses it without touching the two passes."""

import operator

import gast
import numpy as np

from mindgrad import rules
from mindgrad.compiler import astutil as A
from mindgrad.compiler import driver
from mindgrad.compiler.facts.analysis import Resolver
from mindgrad.compiler.transform import operations as ops


class Box:
    def __init__(self):
        self.w = np.ones(3)


BOX = Box()


def program(x, xs, d):
    a = x
    b = xs + [x]
    c = xs * 2
    e = x * x
    f = -e
    g = x // 2.0
    h = x[0]
    t = (a, e)
    dd = {"k": e}
    u = x.T
    v = x.argmax()
    p = xs.pop()
    m = x.sum(axis=0)
    n = np.sin(x)
    k = np.argmax(x)
    w = BOX.w
    return a, b, c, f, g, h, t, dd, u, v, p, m, n, k, w


OWN = set("abcefghtuvpmnkw") | {"dd"}


def _assignments():
    src, fdef, _ = driver.Build().parse(program)
    local = {a.id for a in fdef.args.args} | A.assigned_names(fdef.body)
    resolve = Resolver(src, local)
    return {st.targets[0].id: (st.value, resolve) for st in fdef.body
            if isinstance(st, gast.Assign) and isinstance(st.targets[0], gast.Name)}


def test_each_kind_of_value_has_its_record():
    found = {name: ops.classify(value, resolve, {"xs", "b"}, {"BOX.w"})
             for name, (value, resolve) in _assignments().items()}
    # the normalize stage's temporaries (the list display [x] of b) are left out
    kinds = {name: type(op).__name__ for name, op in found.items() if name in OWN}
    assert kinds == {
        "a": "Read", "b": "Concat", "c": "Repeat", "e": "Operator", "f": "Operator",
        "g": "Constant", "h": "IndexRead", "t": "Display", "dd": "Display", "u": "AttrRule",
        "v": "ConstantMethod", "p": "ListPop", "m": "MethodCall", "n": "FunctionCall",
        "k": "ConstantCall", "w": "Read"}
    assert found["e"].fn is operator.mul and found["f"].fn is operator.neg
    assert found["m"].method == "sum" and list(found["m"].keywords) == ["axis"]
    assert found["n"].target is np.sin
    rule, key, args = found["n"].rule(rules.lookup)
    assert rule is rules.lookup(np.sin) and key is np.sin and len(args) == 1
    assert found["c"].sequence.id == "xs"


def test_an_attribute_not_tracked_is_the_rule_of_its_name():
    value, resolve = _assignments()["w"]
    assert isinstance(ops.classify(value, resolve, set(), set()), ops.AttrRule)


class RulesNeeded(ops.OperationWriter):
    """A writer of its own, as a batching or Taylor writer starts: for each operator or
    function call, whether the table of tangent rules has its rule; nothing for the rest."""

    def operator(self, op):
        return {(op.fn.__name__, rules.lookup_tangent(op.fn) is not None)}

    def function_call(self, op):
        return {(op.target.__name__, op.rule(rules.lookup_tangent)[0] is not None)}

    def _nothing(self, op):
        return set()

    read = concat = repeat = constant = index_read = display = attr_rule = _nothing
    constant_method = list_pop = tangent_pop = method_call = unknown_function = _nothing
    constant_call = unsupported = _nothing


def test_a_transformation_of_its_own_reuses_the_classification():
    """A new writer over the same records, touching neither pass."""
    needed = set()
    writer = RulesNeeded()
    for value, resolve in _assignments().values():
        needed |= writer.write(ops.classify(value, resolve, {"xs", "b"}, set()))
    assert needed == {("mul", True), ("neg", True), ("sin", True)}
