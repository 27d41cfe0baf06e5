"""The tangents now derived by a decorator (``@elementwise`` slopes of one or two arguments,
``@linear``, ``@linear_in``, ``@diagonal``) instead of written by hand: each prints as it did
(or differs only in how it names the same function), and computes right in forward mode and at
second order, on broadcast shapes, 0-d arrays, Python floats and float32."""

import ast
import builtins
import math
import operator

import numpy as np
import pytest

import mindgrad
from mindgrad import rules, runtime
from mindgrad.compiler.finish.emit import unparse
from mindgrad.rules import builtins_math as bm
from mindgrad.rules import helpers as rhelpers
from mindgrad.rules import numpy_elementwise as ne
from mindgrad.rules import numpy_linalg as nl
from mindgrad.rules import numpy_products as npr
from mindgrad.rules import operators as op_rules
from mindgrad.rules import runtime_rules as rr

SAME = "as before"
NEW = "no tangent before"
# a slope at a pole of a function finite there (np.sqrt at 0): computed without NumPy's warning
# and held at 0 where the tangent is 0 (rules.helpers.quotient, power), no longer the product
POLE = "a product before: times_slope at a pole"

# key, the derived text, the hand-written text it replaces (SAME: identical)
PINNED = [
    (operator.matmul,
     ('d[out] = np.matmul(d[x], y)',
      'd[out] = np.matmul(x, d[y])'),
     SAME),
    (operator.mod,
     ('d[out] = broadcast_tangent(d[x], out)',
      'd[out] = -d[y] * np.floor_divide(x, y)'),
     SAME),
    (operator.mul,
     ('d[out] = d[x] * y',
      'd[out] = d[y] * x'),
     ('d[out] = d[x] * y',
      'd[out] = x * d[y]')),
    (operator.neg,
     ('d[out] = -d[x]',),
     SAME),
    (operator.pos,
     ('d[out] = d[x]',),
     SAME),
    (operator.pow,
     ('d[out] = times_slope(d[x], y * power(x, y - 1 + (y == 0)))',
      'd[out] = d[y] * out * log_base(x)'),
     POLE),
    (operator.sub,
     ('d[out] = broadcast_tangent(d[x], out)',
      'd[out] = broadcast_tangent(-d[y], out)'),
     SAME),
    (operator.truediv,
     ('d[out] = d[x] / y',
      'd[out] = -d[y] * out / y'),
     SAME),
    (builtins.float,
     ('d[out] = float(d[x])',),
     SAME),
    (np.multiply.outer,
     ('d[out] = np.multiply.outer(d[a], b)',
      'd[out] = np.multiply.outer(a, d[b])'),
     SAME),
    (math.atan2,
     ('d[out] = times_slope(d[y], quotient(x, x * x + y * y))',
      'd[out] = times_slope(d[x], quotient(-y, x * x + y * y))'),
     POLE),
    (math.copysign,
     ('d[out] = d[x] * math.copysign(1.0, x) * math.copysign(1.0, out)',),
     SAME),
    (math.log,
     ('d[out] = d[x] / (x * math.log(base))',
      'd[out] = -d[base] * out / (base * math.log(base))'),
     SAME),
    (math.pow,
     ('d[out] = times_slope(d[x], y * power(x, y - 1.0 + (y == 0)))',
      'd[out] = d[y] * out * math.log(x + (x == 0))'),
     POLE),
    (("method", "dot"),
     ('d[ans] = np.dot(d[a], b)',
      'd[ans] = np.dot(a, d[b])'),
     SAME),
    (bm.dict_grad,
     ('d[out] = dict_grad(d[g], mapping)',),
     NEW),
    (bm.reversed_grad,
     ('d[out] = reversed_grad(d[g], seq)',),
     ('d[out] = bm.reversed_grad(d[g], seq)',)),
    (bm.select_grad,
     ('d[ans] = select_grad(d[g], out, args, default)',),
     ('d[ans] = bm.select_grad(d[g], out, args, default)',)),
    (bm.sequence_grad,
     ('d[out] = sequence_grad(d[g], iterable)',),
     ('d[out] = bm.sequence_grad(d[g], iterable)',)),
    (bm.sorted_grad,
     ('d[out] = sorted_grad(d[g], iterable, key, reverse)',),
     NEW),
    (bm.sum_grad,
     ('d[out] = sum_grad(d[g], xs, start)',),
     ('d[out] = bm.sum_grad(d[g], xs, start)',)),
    (ne.array_grad,
     ('d[ans] = array_grad(d[g], obj, out)',),
     ('d[ans] = ne.array_grad(d[g], obj, out)',)),
    (ne.astype_grad,
     ('d[out] = astype_grad(d[g], x)',),
     ('d[out] = ne.astype_grad(d[g], x)',)),
    (ne.clip_grad_a,
     ('d[out] = clip_grad_a(d[g], a, lo, hi)',),
     ('d[out] = ne.clip_grad_a(d[g], a, lo, hi)',)),
    (ne.clip_grad_lower,
     ('d[out] = clip_grad_lower(d[g], a, lo, hi)',),
     ('d[out] = ne.clip_grad_lower(d[g], a, lo, hi)',)),
    (ne.clip_grad_upper,
     ('d[out] = clip_grad_upper(d[g], a, lo, hi)',),
     ('d[out] = ne.clip_grad_upper(d[g], a, lo, hi)',)),
    (ne.clip_tangent_a,
     ('d[out] = clip_tangent_a(d[t], a, lo, hi, ans)',),
     NEW),
    (ne.clip_tangent_lower,
     ('d[out] = clip_tangent_lower(d[t], a, lo, hi, ans)',),
     NEW),
    (ne.clip_tangent_upper,
     ('d[out] = clip_tangent_upper(d[t], a, lo, hi, ans)',),
     NEW),
    (ne.fmax_grad,
     ('d[out] = fmax_grad(d[g], x, y)',),
     ('d[out] = ne.fmax_grad(d[g], x, y)',)),
    (ne.imag_grad,
     ('d[out] = imag_grad(d[g], val)',),
     ('d[out] = ne.imag_grad(d[g], val)',)),
    (ne.maximum_grad,
     ('d[out] = maximum_grad(d[g], x, y)',),
     ('d[out] = ne.maximum_grad(d[g], x, y)',)),
    (npr.dot_grad_a,
     ('d[out] = dot_grad_a(d[g], a, b)',
      'd[out] = dot_grad_a(g, a, d[b])'),
     ('d[out] = npr.dot_grad_a(d[g], a, b)',
      'd[out] = npr.dot_grad_a(g, a, d[b])')),
    (npr.dot_grad_b,
     ('d[out] = dot_grad_b(d[g], a, b)',
      'd[out] = dot_grad_b(g, d[a], b)'),
     ('d[out] = npr.dot_grad_b(d[g], a, b)',
      'd[out] = npr.dot_grad_b(g, d[a], b)')),
    (npr.inner_grad_a,
     ('d[out] = inner_grad_a(d[g], a, b)',
      'd[out] = inner_grad_a(g, a, d[b])'),
     ('d[out] = npr.inner_grad_a(d[g], a, b)',
      'd[out] = npr.inner_grad_a(g, a, d[b])')),
    (npr.inner_grad_b,
     ('d[out] = inner_grad_b(d[g], a, b)',
      'd[out] = inner_grad_b(g, d[a], b)'),
     ('d[out] = npr.inner_grad_b(d[g], a, b)',
      'd[out] = npr.inner_grad_b(g, d[a], b)')),
    (npr.outer_grad_a,
     ('d[out] = outer_grad_a(d[g], a, b)',
      'd[out] = outer_grad_a(g, a, d[b])'),
     ('d[out] = npr.outer_grad_a(d[g], a, b)',
      'd[out] = npr.outer_grad_a(g, a, d[b])')),
    (nl.solve_grad_a,
     ('d[out] = solve_grad_a(d[g_b], a, b, x)',
      'd[out] = solve_grad_a(g_b, a, b, d[x])'),
     ('d[out] = nl.solve_grad_a(d[g_b], a, b, x)',
      'd[out] = nl.solve_grad_a(g_b, a, b, d[x])')),
    (rhelpers.swap_last_axes,
     ('d[out] = swap_last_axes(d[x])',),
     ('d[out] = rhelpers.swap_last_axes(d[x])',)),
    (npr.tensordot_grad_a,
     ('d[out] = tensordot_grad_a(d[g], a, b, axes)',
      'd[out] = tensordot_grad_a(g, a, d[b], axes)'),
     ('d[out] = npr.tensordot_grad_a(d[g], a, b, axes)',
      'd[out] = npr.tensordot_grad_a(g, a, d[b], axes)')),
    (npr.tensordot_grad_b,
     ('d[out] = tensordot_grad_b(d[g], a, b, axes)',
      'd[out] = tensordot_grad_b(g, d[a], b, axes)'),
     ('d[out] = npr.tensordot_grad_b(d[g], a, b, axes)',
      'd[out] = npr.tensordot_grad_b(g, d[a], b, axes)')),
    (op_rules.matmul_grad_x,
     ('d[out] = matmul_grad_x(d[g], x, y)',
      'd[out] = matmul_grad_x(g, x, d[y])'),
     ('d[out] = op_rules.matmul_grad_x(d[g], x, y)',
      'd[out] = op_rules.matmul_grad_x(g, x, d[y])')),
    (op_rules.matmul_grad_y,
     ('d[out] = matmul_grad_y(d[g], x, y)',
      'd[out] = matmul_grad_y(g, d[x], y)'),
     ('d[out] = op_rules.matmul_grad_y(d[g], x, y)',
      'd[out] = op_rules.matmul_grad_y(g, d[x], y)')),
    (rr.add_operand_grad,
     ('d[out] = add_operand_grad(d[g], a)',),
     ('d[out] = rr.add_operand_grad(d[g], a)',)),
    (rr.add_operand_transpose,
     ('d[out] = add_operand_transpose(d[g_out], g, a)',),
     ('d[out] = rr.add_operand_transpose(d[g_out], g, a)',)),
    (rr.added_grad,
     ('d[out] = added_grad(d[g_out], x, idx, g)',),
     ('d[out] = rr.added_grad(d[g_out], x, idx, g)',)),
    (rr.as_grad_adjoint,
     ('d[out] = as_grad_adjoint(d[g_out], g, x)',),
     ('d[out] = rr.as_grad_adjoint(d[g_out], g, x)',)),
    (rr.as_sequence_grad,
     ('d[out] = as_sequence_grad(d[g], x)',),
     ('d[out] = rr.as_sequence_grad(d[g], x)',)),
    (rr.broadcast_back,
     ('d[out] = broadcast_back(d[g], like, x)',),
     ('d[out] = rr.broadcast_back(d[g], like, x)',)),
    (rr.concat_grads_adjoint,
     ('d[out] = concat_grads_adjoint(d[g_out], x, y)',),
     ('d[out] = rr.concat_grads_adjoint(d[g_out], x, y)',)),
    (rr.concat_tangents_adjoint,
     ('d[out] = concat_tangents_adjoint(d[g], x, y, part)',),
     ('d[out] = rr.concat_tangents_adjoint(d[g], x, y, part)',)),
    (rr.gather,
     ('d[out] = gather(d[g], x, idx)',),
     ('d[out] = rr.gather(d[g], x, idx)',)),
    (rr.outer_grad_a,
     ('d[out] = outer_grad_a(d[g], a, b)',
      'd[out] = outer_grad_a(g, a, d[b])'),
     ('d[out] = rr.outer_grad_a(d[g], a, b)',
      'd[out] = rr.outer_grad_a(g, a, d[b])')),
    (rr.outer_grad_b,
     ('d[out] = outer_grad_b(d[g], a, b)',
      'd[out] = outer_grad_b(g, d[a], b)'),
     ('d[out] = rr.outer_grad_b(d[g], a, b)',
      'd[out] = rr.outer_grad_b(g, d[a], b)')),
    (rr.pop_grad_adjoint,
     ('d[out] = pop_grad_adjoint(d[g_out], dxs)',),
     ('d[out] = rr.pop_grad_adjoint(d[g_out], dxs)',)),
    (rr.reversed_items_grad,
     ('d[out] = reversed_items_grad(d[g], seq, count)',),
     NEW),
    (rr.setitem_grad_adjoint,
     ('d[out] = setitem_grad_adjoint(d[g_out], dx, idx, v)',),
     ('d[out] = rr.setitem_grad_adjoint(d[g_out], dx, idx, v)',)),
    (rr.unreduce_adjoint,
     ('d[out] = unreduce_adjoint(d[g_out], g, x, axis, keepdims)',),
     ('d[out] = rr.unreduce_adjoint(d[g_out], g, x, axis, keepdims)',)),
    (runtime.as_grad,
     ('d[out] = runtime.as_grad(d[g], x)',),
     ('d[out] = as_grad(d[g], x)',)),
    (runtime.item,
     ('d[out] = item(d[g], i)',),
     SAME),
    (runtime.private_copy,
     ('d[out] = d[x]',),
     SAME),
    (runtime.snapshot,
     ('d[out] = d[x]',),
     SAME),
    (runtime.unbroadcast,
     ('d[out] = unbroadcast(d[g], x)',),
     SAME),
    (runtime.unreduce,
     ('d[out] = runtime.unreduce(d[g], x, axis, keepdims)',),
     ('d[out] = unreduce(d[g], x, axis, keepdims)',)),
    (np.arctan2,
     ('d[out] = times_slope(d[y], quotient(x, x * x + y * y))',
      'd[out] = times_slope(d[x], quotient(-y, x * x + y * y))'),
     POLE),
    (np.conjugate,
     ('d[out] = np.conjugate(d[x])',),
     ('d[out] = np.conj(d[x])',)),
    (np.copysign,
     ('d[out] = d[x] * np.sign(x) * np.sign(out)',),
     SAME),
    (np.deg2rad,
     ('d[out] = d[x] * (math.pi / 180.0)',),
     SAME),
    (np.degrees,
     ('d[out] = d[x] * (180.0 / math.pi)',),
     SAME),
    (np.divide,
     ('d[out] = d[x] / y',
      'd[out] = -d[y] * out / y'),
     SAME),
    (np.dot,
     ('d[ans] = np.dot(d[a], b)',
      'd[ans] = np.dot(a, d[b])'),
     SAME),
    (np.fmax,
     ('d[out] = broadcast_tangent(fmax_grad(d[x], x, y), out)',
      'd[out] = broadcast_tangent(fmax_grad(d[y], y, x), out)'),
     SAME),
    (np.fmin,
     ('d[out] = broadcast_tangent(fmax_grad(d[x], -x, -y), out)',
      'd[out] = broadcast_tangent(fmax_grad(d[y], -y, -x), out)'),
     SAME),
    (np.hypot,
     ('d[out] = times_slope(d[x], quotient(x, out))',
      'd[out] = times_slope(d[y], quotient(y, out))'),
     POLE),
    (np.imag,
     ('d[out] = np.imag(d[val])',),
     SAME),
    (np.inner,
     ('d[out] = np.inner(d[a], b)',
      'd[out] = np.inner(a, d[b])'),
     SAME),
    (np.logaddexp,
     ('d[out] = d[x] * np.exp(x - out)',
      'd[out] = d[y] * np.exp(y - out)'),
     SAME),
    (np.logaddexp2,
     ('d[out] = d[x] * np.exp2(x - out)',
      'd[out] = d[y] * np.exp2(y - out)'),
     SAME),
    (np.matmul,
     ('d[out] = np.matmul(d[x], y)',
      'd[out] = np.matmul(x, d[y])'),
     SAME),
    (np.maximum,
     ('d[out] = broadcast_tangent(maximum_grad(d[x], x, y), out)',
      'd[out] = broadcast_tangent(maximum_grad(d[y], y, x), out)'),
     SAME),
    (np.minimum,
     ('d[out] = broadcast_tangent(maximum_grad(d[x], -x, -y), out)',
      'd[out] = broadcast_tangent(maximum_grad(d[y], -y, -x), out)'),
     SAME),
    (np.multiply,
     ('d[out] = d[x] * y',
      'd[out] = d[y] * x'),
     ('d[out] = d[x] * y',
      'd[out] = x * d[y]')),
    (np.negative,
     ('d[out] = -d[x]',),
     SAME),
    (np.outer,
     ('d[ans] = np.outer(d[a], b)',
      'd[ans] = np.outer(a, d[b])'),
     SAME),
    (np.positive,
     ('d[out] = d[x]',),
     SAME),
    (np.power,
     ('d[out] = times_slope(d[x], y * power(x, y - 1 + (y == 0)))',
      'd[out] = d[y] * out * log_base(x)'),
     POLE),
    (np.rad2deg,
     ('d[out] = d[x] * (180.0 / math.pi)',),
     SAME),
    (np.radians,
     ('d[out] = d[x] * (math.pi / 180.0)',),
     SAME),
    (np.real,
     ('d[out] = np.real(d[val])',),
     SAME),
    (np.remainder,
     ('d[out] = broadcast_tangent(d[x], out)',
      'd[out] = -d[y] * np.floor_divide(x, y)'),
     SAME),
    (np.sinc,
     ('d[out] = sinc_grad(d[x], x)',),
     SAME),
    (np.subtract,
     ('d[out] = broadcast_tangent(d[x], out)',
      'd[out] = broadcast_tangent(-d[y], out)'),
     SAME),
    (np.tensordot,
     ('d[out] = np.tensordot(d[a], b, axes)',
      'd[out] = np.tensordot(a, d[b], axes)'),
     SAME),
    (np.vdot,
     ('d[out] = np.vdot(d[a], b)',
      'd[out] = np.vdot(a, d[b])'),
     SAME),
    (np.where,
     ('d[out] = broadcast_tangent(where_grad(d[x], condition), out)',
      'd[out] = broadcast_tangent(where_grad(d[y], condition, False), out)'),
     SAME),
]
if hasattr(np, "vecdot"):  # NumPy >= 2.0
    for _key in (np.vecdot, np.linalg.vecdot):
        PINNED.append((_key, ("d[out] = np.vecdot(d[x1], x2, axis=axis)",
                              "d[out] = np.vecdot(x1, d[x2], axis=axis)"), SAME))
    PINNED.append((npr.vecdot_grad, ("d[out] = vecdot_grad(d[g], x, other, axis)",
                                    "d[out] = vecdot_grad(g, x, d[other], axis)"),
                   ("d[out] = npr.vecdot_grad(d[g], x, other, axis)",
                    "d[out] = npr.vecdot_grad(g, x, d[other], axis)")))


def _tangent_rule(key):
    if isinstance(key, tuple):
        return rules.lookup_tangent_method(key[1])
    return rules.lookup_tangent(key)


def _label(entry):
    key = entry[0]
    if isinstance(key, tuple):
        return ".".join(key)
    return f"{getattr(key, '__module__', None) or 'np'}.{getattr(key, '__name__', key)}"


@pytest.mark.parametrize("key, text, before", PINNED, ids=[_label(e) for e in PINNED])
def test_the_derived_tangent_prints_as_pinned(key, text, before):
    rule = _tangent_rule(key)
    assert rule.derived, f"{rule.name}: written by hand"
    assert tuple(unparse(rule.body).strip().splitlines()) == text


# the names the hand-written tangents used for the same functions
_OLD_NAMES = {"bm": bm, "ne": ne, "nl": nl, "npr": npr, "rhelpers": rhelpers, "rr": rr,
              "op_rules": op_rules, "as_grad": runtime.as_grad, "unreduce": runtime.unreduce}


class _Callees(ast.NodeTransformer):
    """Each call's function replaced by the identity of the object it names."""

    def __init__(self, namespace):
        self.namespace = namespace

    def visit_Call(self, node):
        self.generic_visit(node)
        fn = eval(compile(ast.Expression(node.func), "<pin>", "eval"), dict(self.namespace))
        node.func = ast.Name(id=f"fn_{id(fn)}", ctx=ast.Load())
        return node


def _resolved(lines, namespace):
    return [ast.dump(_Callees(namespace).visit(ast.parse(line))) for line in lines]


@pytest.mark.parametrize("key, text, before",
                         [e for e in PINNED if e[2] not in (SAME, NEW, POLE)],
                         ids=[_label(e) for e in PINNED if e[2] not in (SAME, NEW, POLE)])
def test_a_changed_text_calls_the_same_functions(key, text, before):
    """Where the derived text is not the one written before, it calls the same function objects
    on the same arguments (``npr.dot_grad_a`` is ``dot_grad_a``, ``np.conj`` is
    ``np.conjugate``), except ``x * d[y]``, which became ``d[y] * x``."""
    rule = _tangent_rule(key)
    namespace = {**rule.globals, **_OLD_NAMES}
    if key in (operator.mul, np.multiply):
        assert text[1] == "d[out] = d[y] * x" and before[1] == "d[out] = x * d[y]"
        text, before = text[:1], before[:1]
    assert _resolved(text, namespace) == _resolved(before, namespace)


BROADCAST = [((3,), (3,)), ((3, 1), (4,)), ((2, 3), ()), ((), (2, 3)), ((1, 3), (2, 1))]


def _arrays(shapes, dtype=np.float64, low=0.4, high=1.7, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(low, high, s).astype(dtype) if s else
                 np.asarray(rng.uniform(low, high), dtype) for s in shapes)


@pytest.mark.parametrize("fn", [operator.mul, operator.sub, operator.truediv, operator.pow,
                                operator.mod, np.multiply, np.subtract, np.divide, np.power,
                                np.remainder])
@pytest.mark.parametrize("shapes", BROADCAST, ids=str)
def test_the_product_and_quotient_tangents_give_the_output_shape(fn, shapes):
    x, y = _arrays(shapes, seed=1)
    y = y + 0.3 if fn in (operator.mod, np.remainder) else y  # away from the jumps of x % y
    out, t = mindgrad.jvp(fn, (x, y), (np.ones_like(x), np.zeros_like(y)))
    assert np.shape(t) == np.shape(out)
    out, t = mindgrad.jvp(fn, (x, y), (np.zeros_like(x), np.ones_like(y)))
    assert np.shape(t) == np.shape(out)


def _product(x, y):
    return np.sum(np.sin(x * y) + x / (1.0 + y * y) - (x - y) ** 2)


def _powers(x, y):
    return np.sum(x ** y + np.power(y, x) + np.remainder(x + 3.0, y + 0.3) * x)


def _operators_unary(x, y):
    return np.sum(-x * (+y) + np.negative(np.positive(x * y)) * x)


def _logs_and_angles(x, y):
    return np.sum(np.logaddexp(x, y) * np.logaddexp2(y, x) + np.hypot(x, y) * np.arctan2(y, x)
                  + np.copysign(x, y - 1.0) * x)


def _selections(x, y):
    z = np.maximum(x, y) * np.minimum(x, 2.0 * y) + np.fmax(x * x, y) * np.fmin(y, x)
    return np.sum(z * np.where(x > y, x * y, y) + np.sinc(x - y))


def _degrees(x, y):
    return np.sum(np.sin(np.deg2rad(x * 50.0)) * np.rad2deg(y) + np.radians(x) * np.degrees(y))


def _complex_parts(x, y):
    z = x * (1.0 + 2.0j) + y * 1j
    return np.sum(np.real(z) * np.imag(z) + np.real(np.conj(z) * z) + np.real(np.conjugate(z)))


ELEMENTWISE = [_product, _powers, _operators_unary, _logs_and_angles, _selections, _degrees,
               _complex_parts]


@pytest.mark.parametrize("fn", ELEMENTWISE)
@pytest.mark.parametrize("shapes", BROADCAST, ids=str)
def test_elementwise_tangents_at_second_order(fn, shapes):
    mindgrad.check_grads(fn, _arrays(shapes, seed=2), modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("fn", ELEMENTWISE)
def test_elementwise_tangents_of_0d_arrays_and_python_floats(fn):
    mindgrad.check_grads(fn, (np.asarray(0.8), np.asarray(1.3)), modes=("rev", "fwd"), order=2)
    mindgrad.check_grads(fn, (0.8, 1.3), modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("fn", ELEMENTWISE)
def test_elementwise_tangents_keep_float32(fn):
    x, y = _arrays(((3, 1), (4,)), dtype=np.float32, seed=3)
    tx, ty = np.full(x.shape, 0.5, np.float32), np.full(y.shape, -0.25, np.float32)
    inner = {_selections: None}.get(fn, fn)
    if inner is None:  # the sum of a float32 array: check the array itself
        def inner(a, b):
            return np.maximum(a, b) * np.where(a > b, a * b, b) + np.sinc(a - b)
    out32, t32 = mindgrad.jvp(inner, (x, y), (tx, ty))
    out64, t64 = mindgrad.jvp(inner, (x.astype(np.float64), y.astype(np.float64)),
                              (tx.astype(np.float64), ty.astype(np.float64)))
    np.testing.assert_allclose(t32, t64, rtol=2e-4, atol=1e-5)
    assert np.asarray(t32).dtype == np.asarray(out32).dtype


def _math_scalars(x, y):
    return (math.atan2(y, x) * math.pow(x, y) + math.log(x + 2.0, y + 1.5)
            + math.copysign(x, y - 1.0) * float(y))


def test_math_tangents_at_second_order():
    for x, y in [(0.8, 1.3), (1.7, 0.6), (0.5, 0.45)]:
        mindgrad.check_grads(_math_scalars, (x, y), modes=("rev", "fwd"), order=2)


def _dot_family(a, b):
    return (np.sum(np.dot(a, b) ** 2) + np.sum(a.dot(b)) + np.sum(np.inner(a, b.T) ** 2)
            + np.sum(np.outer(a, b) ** 2) + np.vdot(a, a @ (b @ b.T)) ** 2
            + np.sum(np.tensordot(a, b, axes=1) ** 2) + np.sum(np.sin(a @ b))
            + np.sum(np.matmul(a, b) * np.multiply.outer(a[0], b[:, 0]).T[0, 0]))


def test_product_tangents_at_second_order():
    for shapes in [((2, 3), (3, 4)), ((3, 3), (3, 3)), ((1, 2), (2, 1))]:
        a, b = _arrays(shapes, low=-1.0, high=1.0, seed=4)
        mindgrad.check_grads(_dot_family, (a, b), modes=("rev", "fwd"), order=2)


def _vector_products(a, b):
    return np.sum(np.dot(a, b) * np.inner(a, b) * np.vdot(b, a) + np.tensordot(a, b, axes=1)
                  + np.outer(a, b) ** 2 + np.multiply.outer(a, b) * (a @ b))


def test_product_tangents_of_vectors_and_0d():
    a, b = _arrays(((3,), (3,)), low=-1.0, high=1.0, seed=5)
    mindgrad.check_grads(_vector_products, (a, b), modes=("rev", "fwd"), order=2)
    mindgrad.check_grads(lambda u, v: np.sum(np.dot(u, v) * np.multiply.outer(u, v)),
                         (np.asarray(0.7), np.asarray(-1.2)), modes=("rev", "fwd"), order=2)


@pytest.mark.skipif(not hasattr(np, "vecdot"), reason="np.vecdot is NumPy >= 2.0")
def test_vecdot_tangents_at_second_order():
    a, b = _arrays(((2, 3), (3,)), low=-1.0, high=1.0, seed=6)
    mindgrad.check_grads(lambda u, v: np.sum(np.sin(np.vecdot(u, v)) * np.linalg.vecdot(u, u)),
                         (a, b), modes=("rev", "fwd"), order=2)


def _inner_of_rows(a, b):
    return np.inner(a, b.T)


def _tensordot_1(a, b):
    return np.tensordot(a, b, axes=1)


def test_product_tangents_keep_float32():
    a, b = _arrays(((2, 3), (3, 4)), dtype=np.float32, low=-1.0, high=1.0, seed=7)
    ta, tb = np.ones_like(a), np.full(b.shape, 0.5, np.float32)
    for fn in (np.dot, np.matmul, operator.matmul, _inner_of_rows, _tensordot_1):
        out32, t32 = mindgrad.jvp(fn, (a, b), (ta, tb))
        _, t64 = mindgrad.jvp(fn, (a.astype(float), b.astype(float)),
                              (ta.astype(float), tb.astype(float)))
        assert t32.dtype == np.float32 == out32.dtype
        np.testing.assert_allclose(t32, t64, rtol=1e-5, atol=1e-6)


def _containers(x, y):
    items = [x * y, x + 1.0, y * y]
    mapping = dict([("a", x * x), ("b", y)])
    backwards = list(reversed(items))
    return (sum(items) * float(x) + max(x, y * 0.5) * mapping["a"] + mapping["b"] * x
            + backwards[0] * tuple(items)[1] + min([x, y]) + dict({"c": x})["c"] * y)


def test_container_helper_tangents_at_second_order():
    for x, y in [(0.8, 1.3), (1.6, 0.7)]:
        mindgrad.check_grads(_containers, (x, y), modes=("rev", "fwd"), order=2)


def _sorted(x, y):
    ordered = sorted([x, 2.0 * y, x * y])
    return ordered[0] * x + ordered[2] * y


def test_sorted_has_a_tangent_over_its_gradient():
    # forward over reverse: sorted_grad's tangent is derived (it had none; the second reverse
    # pass still reads sorted_grad's source, whose key=lambda mindgrad does not differentiate)
    for x, y in [(0.8, 1.3), (1.6, 0.7)]:
        mindgrad.check_grads(_sorted, (x, y), modes=("fwd",), order=2)


def _runtime_helpers(x, w):
    h = np.tanh(x[:, None] * w + w[1])  # unbroadcast; an item of w
    s = np.sum(h, axis=0) + np.mean(h, axis=1)[0]  # unreduce
    parts = [s, h[0]]
    total = 0.0
    for p in parts:  # the loop's items, add
        total = total + np.sum(p * p)
    return total + np.sum(np.clip(x, 0.5, 1.2) * np.abs(np.real(x)))


def test_runtime_helper_tangents_at_second_and_third_order():
    x, w = _arrays(((3,), (3,)), low=-1.0, high=1.5, seed=8)
    mindgrad.check_grads(_runtime_helpers, (x, w), modes=("rev", "fwd"), order=2)
    mindgrad.check_grads(_runtime_helpers, (x, w), modes=("rev", "fwd"), order=3)


def _solve_and_products(a, b):
    x = np.linalg.solve(a, b)
    return np.sum(x * x) + np.sum(np.swapaxes(a @ a, -1, -2) * b[..., None])


def test_linalg_helper_tangents_at_third_order():
    a = np.array([[2.0, 0.3, -0.1], [0.2, 1.5, 0.4], [-0.3, 0.1, 1.8]])
    b = np.array([0.5, -1.0, 0.8])
    mindgrad.check_grads(_solve_and_products, (a, b), modes=("rev", "fwd"), order=3)


# ----- symbolic zeros: declared by the helpers, tested once by the code calling them ---------

# helpers declaring zero_in_zero_out that still test for that zero themselves, and why
KEEP_THEIR_TEST = {
    # called directly by helpers of numpy_shape.py and numpy_reductions.py, whose gradients
    # may be the 0 (unreduce of a zero gradient)
    ne.astype_grad: "g",
    # recursion over the items of a list or dict gradient, some of them 0
    rr.as_grad_adjoint: "g_out",
    # its contract with a direct caller: gather(0, x, idx) is 0 (tests/test_runtime_rules.py)
    rr.gather: "g",
    # a sum of two terms: one tangent may be the zero while the other holds a value
    nl.tensorsolve_tangent: "t_a t_b",
}


def _declared_helpers():
    for module in (op_rules, ne, nl, bm, rr):
        for value in vars(module).values():
            if callable(value) and getattr(value, "__module__", None) == module.__name__ and \
                    hasattr(value, "zero_in_zero_out"):
                yield value


def test_helpers_declaring_their_zero_do_not_test_it():
    import inspect
    import textwrap

    helpers = list(_declared_helpers())
    assert len(helpers) > 40
    for fn in helpers:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        tested = {call.args[0].id for call in ast.walk(tree)
                  if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                  and call.func.id == "is_zero" and call.args
                  and isinstance(call.args[0], ast.Name)}
        own = tested & set(fn.zero_in_zero_out)
        assert own <= set(KEEP_THEIR_TEST.get(fn, "").split()), f"{fn.__name__} tests {own}"


def _unused_on_a_branch(x, w, flag):
    y = x @ w
    z = np.dot(x, w) + np.inner(x, w.T) + np.tensordot(x, w, axes=1)
    n = np.linalg.norm(x) + np.linalg.norm(w, ord=2)
    s = np.linalg.solve(w.T @ w + 3.0 * np.eye(2), x)
    u = np.linalg.svd(w, compute_uv=False)
    e = np.linalg.eigh(w.T @ w)[0]
    m = np.maximum(x, 0.5) + np.clip(x, 0.2, 0.9) + np.angle(x + 1j)
    items = list(reversed([x[0, 0], w[0, 0], x[1, 1], w[1, 1]]))
    mapping = dict({"a": x[0, 1]})
    if flag > 0:  # the gradients of all the above are the symbolic 0 on the other branch
        return np.sum(y * z) + n * np.sum(s) + np.sum(u) + np.sum(e) + np.sum(m) + \
            items[0] * items[3] + mapping["a"]
    return np.sum(x * x) + np.sum(w)


def test_zero_gradients_never_reach_a_helper_without_its_test():
    x = np.array([[0.45, 0.8, -0.2], [0.3, 1.1, 0.6]])
    w = np.array([[0.9, -0.4], [0.2, 0.7], [-0.5, 0.3]])
    for flag in (1, -1):
        mindgrad.check_grads(_unused_on_a_branch, (x, w, flag), grad_position=(0, 1),
                             modes=("rev", "fwd"), order=2)
        mindgrad.check_grads(_sorted_on_a_branch, (0.7, 1.3, flag), grad_position=(0, 1),
                             modes=("fwd",), order=2)


def _sorted_on_a_branch(x, y, flag):
    ordered = sorted([x, 2.0 * y, x * y])
    if flag > 0:
        return ordered[0] * x + ordered[2]
    return x * y
