"""Random NumPy programs as Python source, for the differentiation tester.

``generate(seed, index)`` returns a ``Program``: the text of a module defining ``f`` (and the
helpers it calls), the kinds of ``f``'s inputs, and the construct classes the text uses. Every
program is valid: the generator tracks the shape of each name it defines, so every operation
it writes is well formed for the inputs it chooses. Values stay in smooth domains (``log`` and
``sqrt`` of ``t * t + c``, division by ``t * t + c``, ``max``/``min`` only of inputs, whose
entries are distinct and away from 0), so central differences are valid at the sample point.
The same ``(seed, index)`` always gives the same program and inputs.

``libraries=("scipy",)`` also writes calls to SciPy's functions that have rules
(``scipy.special``, ``scipy.stats.norm``, ``scipy.linalg``), on inputs inside their domains.
It is opt-in: without it the programs are exactly those of the default batch, and neither
the generator nor its programs import SciPy.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np

#: every construct class the generator writes; ``Program.constructs`` holds a subset
CONSTRUCTS = (
    "elementwise", "broadcast", "reduction", "method", "matmul", "einsum", "index_basic",
    "index_slice", "index_negative", "index_newaxis", "index_ellipsis", "index_intarray",
    "index_repeated", "index_bool", "index_assign", "aug_assign", "for_range", "for_iter",
    "while", "break", "continue", "branch", "early_return", "list", "dict", "helper",
    "closure", "lambda", "recursion", "linalg", "pyscalar",
    # what code written elsewhere does: Python's builtins over arrays, np.r_/np.c_, einsum
    # in both notations, a dict's loop variable read after the loop, an advanced-index copy
    # written in place, complex intermediates, NaN or inf in a branch np.where does not take
    "builtin_maxmin", "builtin_sum", "builtin_sorted", "builtin_anyall", "builtin_zip",
    "enumerate", "r_c_", "einsum_sublist", "einsum_ellipsis", "dict_loop_var",
    "advindex_inplace", "complex", "nan_branch", "container_output",
    # classes found by code written elsewhere since: an object of the user's whose methods
    # have array methods' names and read private attributes, a lambda spanning lines, NumPy
    # functions that make new arrays from values (np.unique, np.histogram, np.arange)
    "user_object", "multiline_lambda", "made_arrays", "list_concat",
    # a slice of a list replaced (``xs[0:2] = [a, b]``): its gradient met the number 0 written
    # into a list's slice
    "list_slice",
    # a power by a loop index (``x ** i``, ``x`` maybe negative) in a helper: at second order
    # the index read back from the helper's tape reached the exponent's slope, log(x), which
    # warned
    "power_index",
    # an item taken from a list or tuple and written in place, the container read afterwards:
    # the write changed the container too, which the gradient did not see
    "item_write",
    # a Fourier transform: a rule that conjugates the gradient before its helper met the
    # symbolic zero as a number
    "fft",
    # a reduction scaled by 0: a gradient that is a number 0 and a value
    "zero_scaled",
    # a function finite at a pole of its slope (np.sqrt at 0), computed exactly there in the
    # branch np.where does not take: NumPy warned of the slope's division, f did not
    "pole_not_taken",
    # sequences joined (``a + b``, Python's ``sum(rows, ())``), items of both halves read: the
    # tangent of a join adds one term per half, and ``+`` of two tuples joined them (the third
    # order read a zero); ``sum`` of sequences was taken for a sum of numbers
    "sequence_join",
    # a keyword argument that moves with the input (np.var's mean=, np.pad's constant_values=,
    # initial=, clip's bounds by name): the gradient rules of var, std and pad gave nothing for
    # theirs, while their tangents did
    "keyword_input",
    # a helper changing its list argument in place (``xs.append(v)``, ``xs.pop()``), or a copy
    # of it: the backward sweep added the helper's gradient of the list to the caller's, of
    # another length (a wrong gradient or an internal error); the tangent of a list's
    # ``.copy()`` was an array
    "list_callee",
    # a dict built by a call of dict with keywords or pairs (``dict(u=x, w=y)``,
    # ``dict([("u", x)], w=y)``, ``dict(**kw)`` in a helper): the call did not fit the rule of
    # ``dict(mapping)``
    "dict_call",
    # a callee reached the ways code written elsewhere reaches it: ``functools.partial(h,
    # q=c)(x)`` called in place, ``getattr(obj, "name")``, a star-call of a slice of the
    # function's own ``*args`` (``h(*ps[1:])``): each was refused as a call through an
    # expression or an unpacking of what is not a display
    "call_forms",
    # an array of the module's read by the function as an operand, nowhere else: the reuse
    # stage offered its memory to the result (a namespace holding an array once counts as a
    # local name does), and wrote into the user's array
    "global_array",
    # a reduction less itself through stop_gradient, squared: a value exactly 0 whose
    # derivative is not; the helpers linear in a gradient returned 0 at once for the gradient
    # that was a value 0, and the second derivative through them was 0
    "zero_value",
    # mindgrad's own gradient functions called inside: value_and_grad's (value, gradient), a
    # grad with sens_param=True given a sensitivity that moves with the input (its derivative
    # along the sensitivity was taken as 0)
    "gradient_inside",
    # a function reached only when the code runs: an item of a list or dict of functions, a
    # parameter (``apply(h, x)``, ``apply(lambda t: ..., x)``), a default (``act=h``): each was
    # refused as a call through an expression or of a local variable
    "callable_value",
    # a star-call of a sequence built while the code runs (``h(*[t * 1.0 for t in (x, y)])``,
    # ``ps = list(ps); ps[0] = ...; h(*ps)``): refused as an unpacking of what is not a display
    "star_runtime",
    # grad or jvp of a lambda reading the function's own variables, value_and_grad of a
    # lambda, in place: refused as calls through an expression
    "gradient_of_closure",
    # jacrev or jacfwd of a helper, in place: the list of the Jacobian's rows is read by two
    # backward sweeps at third order in reverse mode (an internal error once)
    "jacobian_inside",
    # a value written into a new array or dict by a method (``a.fill(t)``, ``a.put([0], t)``,
    # ``d.update(k=t)``, ``d.setdefault('k', t)``), or a constant so written, then read: the
    # write of a differentiated value was no data flow, and the gradient lacked its term
    "method_write",
)
#: a helper's body: a power series, ``p ** i`` by the loop index
POWER_SERIES = ("    s = 0.0 * p\n    for i in range(3):\n        s = s + q * p ** i\n"
                "    return s")
#: stands for a constant of zero_value until the inputs are drawn
ZERO_POINT = "ZERO_POINT"
#: the optional libraries ``generate`` can also call; each adds its construct classes
LIBRARIES = {"scipy": ("scipy_special", "scipy_stats", "scipy_linalg")}
#: the imports a program calling SciPy starts with
SCIPY_IMPORTS = ("import scipy.linalg as sla\nimport scipy.special as sp\n"
                 "from scipy.stats import norm\n")


@dataclasses.dataclass
class Program:
    """A module's text defining ``f``, and how to make ``f``'s inputs."""

    source: str
    inputs: list            # one entry per input: None for a Python float, else a shape tuple
    seed: int               # seeds the input values
    constructs: frozenset = frozenset()

    def args(self):
        """``f``'s inputs: float64 arrays and Python floats, entries in +-[0.3, 1.5]."""
        rng = np.random.default_rng(self.seed)
        out = []
        for shape in self.inputs:
            size = () if shape is None else shape
            mag = rng.uniform(0.3, 1.5, size)
            val = np.where(rng.random(size) < 0.5, -mag, mag).astype(np.float64)
            out.append(float(val) if shape is None else np.array(val))
        return out


@dataclasses.dataclass
class Var:
    name: str
    shape: tuple
    py: bool = False        # a Python float
    distinct: bool = False  # an input: entries distinct and away from 0


def broadcast(a, b):
    """The broadcast shape of ``a`` and ``b``, or None."""
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


UNARY = (
    "np.tanh({0})", "np.sin({0})", "np.cos({0})", "np.exp(np.tanh({0}))",
    "np.log({0} * {0} + 1.0)", "np.sqrt({0} * {0} + 0.5)", "{0} / ({0} * {0} + 2.0)",
    "{0} ** 2", "np.square({0})", "-{0}", "np.arctan({0})", "0.5 * {0} + 1.0",
    "np.where({0} > 0.0, {0}, 0.1 * {0})",
)
PY_UNARY = ("math.sin({0})", "math.tanh({0})", "math.exp(math.tanh({0}))", "{0} * {0} + 0.5",
            "math.sqrt({0} * {0} + 1.0)", "abs({0})",
            # math's and Python's functions of floats written elsewhere: pow, divmod, fsum,
            # prod, dist, the inverse hyperbolic functions, erfc, gamma, lgamma, complex
            "pow({0} * {0} + 1.0, 1.5)", "divmod(3.0 * {0}, 1.3)[1]",
            "math.fsum([{0}, math.sin({0}), 0.5])", "math.prod([{0}, math.cos({0})], start=0.5)",
            "math.dist([{0}, 1.0], [0.5, {0} * {0} + 2.0])", "math.asinh({0})",
            "math.atanh(math.tanh({0}) * 0.5)", "math.acosh({0} * {0} + 1.5)",
            "math.erfc({0})", "math.lgamma({0} * {0} + 0.5)", "math.gamma(math.tanh({0}) + 2.0)",
            "abs(complex({0}, 0.5 * {0} + 1.0) * (0.6 + 0.8j))")
#: the last two only of two different inputs, whose entries never tie
BINARY = ("{0} * {1}", "{0} + {1}", "{0} - {1}", "{0} / ({1} * {1} + 1.0)",
          "np.maximum({0}, {1})", "np.hypot({0}, {1})")
#: scipy.special of one argument, on any real ({0}) or, for gammaln and digamma, a positive one
SCIPY_UNARY = ("sp.expit({0})", "sp.log_expit({0})", "sp.erf({0})", "sp.erfc({0})",
               "sp.ndtr({0})", "sp.log_ndtr({0})", "sp.gammaln({0} * {0} + 0.5)",
               "sp.digamma({0} * {0} + 0.5)", "sp.expm1(np.tanh({0}))",
               "sp.log1p({0} * {0})", "sp.logit(sp.expit({0}) * 0.8 + 0.1)")
#: scipy.special of two arguments that broadcast; the second positive where it must be
SCIPY_BINARY = ("sp.xlogy({0}, {1} * {1} + 0.5)", "sp.xlog1py({0}, {1} * {1})")


class Generator:
    """Writes one program; ``run()`` returns its module text."""

    def __init__(self, rng: random.Random, size: int, libraries=()):
        self.rng = rng
        self.libraries = tuple(libraries)
        self.size = size
        self.vars: list[Var] = []
        self.count = 0
        self.helpers: list[str] = []
        self.zero_points: list = []  # (k, expression): Z{k} is the expression at the inputs
        self.used: set[str] = set()
        self.inputs: list = []

    # ----- names and shapes ------------------------------------------------------------------

    def fresh(self, stem="v"):
        self.count += 1
        return f"{stem}{self.count}"

    def pick(self, pred=lambda v: True):
        """A defined name satisfying ``pred``, recent ones more likely (None if there is none)."""
        choices = [v for v in self.vars if pred(v)]
        if not choices:
            return None
        return self.rng.choices(choices, [1 + i for i in range(len(choices))])[0]

    def fit(self, var: Var, shape):
        """An expression of ``var`` that broadcasts to exactly ``shape``."""
        if broadcast(var.shape, shape) == tuple(shape):
            return var.name
        self.used.add("reduction")
        return f"np.{self.rng.choice(['sum', 'mean'])}({var.name})"

    def other_fit(self, shape):
        return self.fit(self.pick(), shape)

    def full(self, var: Var):
        """An expression with exactly ``var``'s shape, mixing in another name."""
        return f"({var.name} * 0.5 + {self.other_fit(var.shape)})"

    def define(self, lines, expr, shape, py=False, stem="v"):
        name = self.fresh(stem)
        lines.append(f"{name} = {expr}")
        self.vars.append(Var(name, tuple(shape), py))
        return name

    # ----- inputs ----------------------------------------------------------------------------

    def make_inputs(self):
        base = self.rng.choice([(), (3,), (2, 3), (3, 2), (3, 3), (2, 3, 2), (4,)])
        n = self.rng.choice([1, 2, 2, 3])
        names = ["x", "y", "z"][:n]
        for i, name in enumerate(names):
            if i == 0 or self.rng.random() < 0.3:
                shape = base
            else:
                shape = list(base[self.rng.randrange(len(base) + 1):]) if base else []
                shape = tuple(1 if self.rng.random() < 0.3 else s for s in shape)
            kind = self.rng.random()
            if shape == () and kind < 0.5:
                self.inputs.append(None)
                self.vars.append(Var(name, (), py=True, distinct=True))
                self.used.add("pyscalar")
            else:
                self.inputs.append(tuple(shape))
                self.vars.append(Var(name, tuple(shape), distinct=True))
            if i and broadcast(shape, base) == base and tuple(shape) != base:
                self.used.add("broadcast")
        return names

    # ----- statements ------------------------------------------------------------------------

    def s_unary(self, lines):
        v = self.pick()
        if v.py and self.rng.random() < 0.6:
            self.used.add("pyscalar")
            return self.define(lines, self.rng.choice(PY_UNARY).format(v.name), (), py=True)
        self.used.add("elementwise")
        return self.define(lines, self.rng.choice(UNARY).format(v.name), v.shape)

    def s_binary(self, lines):
        a = self.pick()
        b = self.pick(lambda w: w.name != a.name) or a
        shape = broadcast(a.shape, b.shape)
        if shape is None:
            return self.define(lines, f"{a.name} * {self.fit(b, a.shape)}", a.shape)
        if a.shape != b.shape:
            self.used.add("broadcast")
        self.used.add("elementwise")
        ops = BINARY if a.distinct and b.distinct and a is not b else BINARY[:4]
        expr = self.rng.choice(ops).format(a.name, b.name)
        return self.define(lines, expr, shape, py=a.py and b.py and "np." not in expr)

    def axis_args(self, v):
        nd = len(v.shape)
        if nd == 0 or self.rng.random() < 0.25:
            return "", ()
        axis = self.rng.randrange(-nd, nd)
        keep = self.rng.random() < 0.4
        shape = list(v.shape)
        if keep:
            shape[axis] = 1
        else:
            del shape[axis]
        return f"axis={axis}" + (", keepdims=True" if keep else ""), tuple(shape)

    def s_reduction(self, lines):
        v = self.pick(lambda v: not v.py)
        if v is None:
            return self.s_unary(lines)
        self.used.add("reduction")
        args, shape = self.axis_args(v)
        fns = ["sum", "mean", "var"] + (["max", "min"] if v.distinct and v.shape else [])
        fn = self.rng.choice(fns)
        if self.rng.random() < 0.4 and len(v.shape) > 0:
            self.used.add("method")
            return self.define(lines, f"{v.name}.{fn}({args})", shape)
        sep = ", " if args else ""
        return self.define(lines, f"np.{fn}({v.name}{sep}{args})", shape)

    def s_method(self, lines):
        v = self.pick(lambda v: len(v.shape) >= 1)
        if v is None:
            return self.s_unary(lines)
        self.used.add("method")
        s = v.shape
        size = int(np.prod(s))
        options = [(f"{v.name}.T", s[::-1]), (f"{v.name}.reshape(-1)", (size,)),
                   (f"{v.name}.ravel()", (size,)), (f"{v.name}.flatten()", (size,)),
                   (f"np.transpose({v.name})", s[::-1]), (f"{v.name}.copy()", s),
                   (f"np.expand_dims({v.name}, 0)", (1,) + s),
                   (f"np.concatenate([{v.name}, {self.full(v)}], axis=0)", (2 * s[0],) + s[1:]),
                   (f"np.stack([{v.name}, {self.full(v)}])", (2,) + s),
                   (f"{v.name}.reshape({s[-1]}, -1)", (s[-1], size // s[-1])),
                   (f"np.cumsum({v.name}, axis=0)", s), (f"np.prod({v.name}, axis=0)", s[1:]),
                   (f"np.flip({v.name}, axis=0)", s), (f"np.clip({v.name}, -5.0, 5.0)", s),
                   (f"np.tile({v.name}, 2)", s[:-1] + (2 * s[-1],)),
                   (f"np.fft.irfft(np.fft.rfft({v.name}) * 0.5, {s[-1]})", s),
                   (f"np.real(np.fft.ifft(np.fft.fft({v.name}, axis=0) * 1j))", s),
                   (f"np.median({v.name}, axis=0)", s[1:]), (f"np.ptp({v.name}, axis=0)", s[1:]),
                   (f"np.append({v.name}, {self.full(v)})", (2 * size,)),
                   # shapes joined with + (tuples, not arrays: no elementwise rewrite of +)
                   (f"np.broadcast_to({v.name}, (2,) + {v.name}.shape)", (2,) + s),
                   (f"np.reshape({v.name}, {v.name}.shape + (1,))", s + (1,))]
        if len(s) == 2:
            n = s[0]
            options.append((f"np.linalg.cholesky({v.name} @ {v.name}.T + {n}.0 * np.eye({n}))",
                            (n, n)))
        if len(s) >= 2:
            options.append((f"{v.name}.transpose(1, 0{', 2' * (len(s) == 3)})",
                            (s[1], s[0]) + s[2:]))
            options.append((f"np.swapaxes({v.name}, 0, -1)", (s[-1],) + s[1:-1] + (s[0],)))
        expr, shape = self.rng.choice(options)
        return self.define(lines, expr, shape)

    def s_matmul(self, lines):
        v = self.pick(lambda v: len(v.shape) >= 1)
        if v is None:
            return self.s_unary(lines)
        s = v.shape
        w = self.pick(lambda w: w.shape == s and w.name != v.name) or v
        n = v.name
        if len(s) == 1:
            options = [(f"{n} @ {w.name}", ()), (f"np.dot({n}, {w.name})", ()),
                       (f"np.einsum('i,i->', {n}, {w.name})", ()),
                       (f"np.outer({n}, {w.name})", (s[0], s[0])),
                       (f"np.einsum('i,j->ij', {n}, {w.name})", (s[0], s[0]))]
            m = self.pick(lambda m: len(m.shape) == 2 and m.shape[0] == s[0])
            if m is not None:
                options.append((f"{n} @ {m.name}", (m.shape[1],)))
        elif len(s) == 2:
            options = [(f"{n} @ {w.name}.T", (s[0], s[0])), (f"{n}.T @ {w.name}", (s[1], s[1])),
                       (f"np.dot({n}, {w.name}.T)", (s[0], s[0])),
                       (f"np.matmul({n}.T, {w.name})", (s[1], s[1])),
                       (f"np.einsum('ij,ij->i', {n}, {w.name})", (s[0],)),
                       (f"np.einsum('ij->j', {n})", (s[1],)),
                       (f"np.einsum('ij,kj->ik', {n}, {w.name})", (s[0], s[0])),
                       (f"{n} @ {w.name}[0]", (s[0],))]
        else:
            options = [(f"{n} @ np.swapaxes({w.name}, -1, -2)", s[:-1] + (s[-2],)),
                       (f"np.einsum('bij,bkj->bik', {n}, {w.name})", s[:-1] + (s[-2],))]
        expr, shape = self.rng.choice(options)
        self.used.add("einsum" if "einsum" in expr else "matmul")
        return self.define(lines, expr, shape)

    def index_expr(self, v: Var, write=False):
        """``(index text, result shape, construct)`` for an index into ``v``."""
        s = v.shape
        r = self.rng
        s0 = s[0]
        options = [("[0]", s[1:], "index_basic"), ("[-1]", s[1:], "index_negative"),
                   ("[::-1]", s, "index_slice"), ("[::2]", ((s0 + 1) // 2,) + s[1:], "index_slice"),
                   ("[..., 0]", s[:-1], "index_ellipsis"), ("[...]", s, "index_ellipsis")]
        if s0 >= 2:
            options += [("[1:]", (s0 - 1,) + s[1:], "index_slice"),
                        ("[:-1]", (s0 - 1,) + s[1:], "index_slice")]
        idx = [r.randrange(s0) for _ in range(r.choice([1, 2, 3]))]
        repeated = len(set(idx)) < len(idx)
        if write and repeated and r.random() < 0.7:
            idx = sorted(set(idx))
            repeated = False
        options.append((f"[np.array({idx})]", (len(idx),) + s[1:],
                        "index_repeated" if repeated else "index_intarray"))
        mask = [r.random() < 0.5 for _ in range(s0)]
        mask[r.randrange(s0)] = True
        options.append((f"[np.array({mask})]", (sum(mask),) + s[1:], "index_bool"))
        if len(s) >= 2 and s[1] >= 2:
            options += [("[0, 1]", s[2:], "index_basic"), ("[:, 1]", (s0,) + s[2:], "index_slice"),
                        (f"[{s0 - 1}, :]", s[1:], "index_slice"),
                        ("[-1, 1:]", (s[1] - 1,) + s[2:], "index_negative")]
        if not write:
            options += [("[None]", (1,) + s, "index_newaxis"),
                        ("[:, None]", (s0, 1) + s[1:], "index_newaxis"),
                        ("[..., np.newaxis]", s + (1,), "index_newaxis")]
        return r.choice(options)

    def s_index(self, lines):
        v = self.pick(lambda v: len(v.shape) >= 1)
        if v is None:
            return self.s_unary(lines)
        if self.rng.random() < 0.15:
            self.used.add("index_bool")
            return self.define(lines, f"np.sum({v.name}[{v.name} > 0.0])", ())
        text, shape, kind = self.index_expr(v)
        self.used.add(kind)
        return self.define(lines, f"{v.name}{text}", shape)

    def s_write(self, lines):
        """A fresh array, then one or two index or augmented writes into it."""
        v = self.pick()
        if v.py or not v.shape:
            return self.s_aug(lines)
        name = self.define(lines, f"{v.name} * 1.0", v.shape, stem="c")
        var = self.vars[-1]
        self.vars.pop()
        for _ in range(self.rng.choice([1, 2])):
            text, shape, kind = self.index_expr(var, write=True)
            if kind == "index_ellipsis" and text == "[...]":
                text = "[..., 0]" if self.rng.random() < 0.5 else text
                shape = shape[:-1] if text == "[..., 0]" else shape
            self.used.update((kind, "index_assign"))
            if self.rng.random() < 0.2:
                self.used.add("index_bool")
                lines.append(f"{name}[{name} > 0.0] *= 2.0")
                continue
            op = self.rng.choice(["=", "+=", "*=", "-="])
            rhs = self.other_fit(shape)
            if op == "=":
                rhs = f"np.tanh({rhs})"
            lines.append(f"{name}{text} {op} {rhs}")
        self.vars.append(var)
        return name

    def s_aug(self, lines):
        v = self.pick()
        name = self.define(lines, f"{v.name} * 1.5", v.shape, py=v.py, stem="a")
        self.used.add("aug_assign")
        for _ in range(self.rng.choice([1, 2])):
            op = self.rng.choice(["+=", "-=", "*="])
            rhs = self.fit(self.pick(lambda w: w.shape == () or not v.py), v.shape)
            if v.py:
                rhs = self.pick(lambda w: w.py).name
            lines.append(f"{name} {op} {rhs}")
        return name

    def update(self, acc: Var):
        """A shape-keeping update expression for accumulator ``acc``."""
        other = self.other_fit(acc.shape)
        return self.rng.choice([f"np.sin({acc.name}) * 0.8 + {other}",
                                f"{acc.name} * 0.7 + np.tanh({other})",
                                f"np.tanh({acc.name} + {other})"])

    def start_acc(self, lines, stem="s"):
        """A fresh accumulator array (never a Python float), defined in ``lines``."""
        v = self.pick()
        self.define(lines, f"{v.name} * 0.5", v.shape, stem=stem)
        return self.vars[-1]

    def s_loop(self, lines):
        acc = self.start_acc(lines)
        kind = self.rng.choice(["for_range", "for_range", "for_iter", "while"])
        self.used.add(kind)
        body = [f"{acc.name} = {self.update(acc)}"]
        if self.rng.random() < 0.35:
            self.used.add("break")
            body.append(f"if np.sum({acc.name}) > {self.rng.choice([0.5, 2.0, 5.0])}:")
            body.append("    break")
        if self.rng.random() < 0.35:
            self.used.add("continue")
            body.insert(0, "if i == 1:")
            body.insert(1, "    continue")
        if kind == "for_range":
            head = [f"for i in range({self.rng.choice([1, 2, 3])}):"]
        elif kind == "for_iter":
            rows = self.pick(lambda v: len(v.shape) >= 1)
            if rows is None:
                head = ["for i in [0, 1, 2]:"]
                self.used.add("list")
            else:
                row = self.fresh("row")
                self.used.add("enumerate")
                head = [f"for i, {row} in enumerate({rows.name}):"]
                term = self.fit(Var(row, rows.shape[1:]), acc.shape)
                body.insert(0, f"{acc.name} = {acc.name} + {term} * 0.3")
        else:
            k = self.fresh("k")
            lines.append(f"{k} = 0")
            head = [f"while {k} < {self.rng.choice([2, 3])}:"]
            body = [f"{k} += 1", f"i = {k}"] + body
        lines += head + ["    " + b for b in body]
        return acc.name

    def s_branch(self, lines):
        c = self.pick()
        cond = f"np.sum({c.name}) > {self.rng.choice(['0.0', '0.5', '-0.5'])}"
        self.used.add("branch")
        a = self.pick()
        e1 = self.rng.choice(UNARY).format(a.name)
        e2 = self.rng.choice(UNARY).format(a.name)
        name = self.fresh()
        if self.rng.random() < 0.3:
            lines.append(f"{name} = {e1} if {cond} else {e2}")
        else:
            lines += [f"if {cond}:", f"    {name} = {e1}", "else:", f"    {name} = {e2}"]
        self.vars.append(Var(name, a.shape))
        return name

    def s_early_return(self, lines):
        v = self.pick()
        self.used.update(("early_return", "branch"))
        lines += [f"if np.sum({v.name}) > {self.rng.choice(['1.0', '0.0'])}:",
                  f"    return {self.result()}"]

    def s_list(self, lines):
        v = self.pick()
        self.used.add("list")
        lst = self.fresh("lst")
        lines.append(f"{lst} = [{v.name}, np.tanh({self.other_fit(v.shape)})]")
        grow = self.rng.random()
        if grow < 0.35:
            lines.append(f"{lst}.append({v.name} * 0.5)")
        elif grow < 0.55:  # grown by concatenation, in a loop
            self.used.add("list_concat")
            lines += [f"for i in range({self.rng.choice([1, 2])}):",
                      f"    {lst} = {lst} + [{v.name} * (i + 0.5)]"]
        elif grow < 0.7:  # a slice of it replaced
            self.used.add("list_slice")
            lines.append(f"{lst}[0:2] = [np.sin({v.name}), {v.name} * 1.5]")
        if self.rng.random() < 0.4:  # the accumulator has the items' shape
            acc = self.define(lines, f"{v.name} * 0.5", v.shape, stem="s")
            self.used.add("for_iter")
            lines += [f"for item in {lst}:", f"    {acc} = {acc} + item * 0.5"]
            return acc
        return self.define(lines, f"{lst}[0] * {lst}[-1] + {lst}[1]", broadcast(v.shape, v.shape))

    def s_dict(self, lines):
        v = self.pick()
        self.used.add("dict")
        dct = self.fresh("dct")
        other = f"np.sin({self.other_fit(v.shape)})"
        form = self.rng.random()
        if form < 0.25:
            self.used.add("dict_call")
            lines.append(f"{dct} = dict(u={v.name}, w={other})")
        elif form < 0.5:
            self.used.add("dict_call")
            lines.append(f"{dct} = dict([('u', {v.name})], w={other})")
        elif form < 0.62:
            self.used.add("dict_call")
            if "def keywords_dict(**kw):" not in "".join(self.helpers):
                self.helpers.append("def keywords_dict(**kw):\n    return dict(**kw)\n")
            lines.append(f"{dct} = keywords_dict(u={v.name}, w={other})")
        else:
            lines.append(f"{dct} = {{'u': {v.name}, 'w': {other}}}")
        if self.rng.random() < 0.5:
            lines.append(f"{dct}['p'] = {dct}['u'] * 2.0")
        if self.rng.random() < 0.4:  # the accumulator has the values' shape
            acc = self.define(lines, f"{v.name} * 0.5", v.shape, stem="s")
            self.used.add("for_iter")
            it = self.rng.choice([f"{dct}.values()", f"{dct}", f"{dct}.items()"])
            if it.endswith("items()"):
                lines += [f"for key, val in {it}:", f"    {acc} = {acc} + val * 0.5"]
            elif it.endswith("values()"):
                lines += [f"for val in {it}:", f"    {acc} = {acc} * val"]
            else:
                lines += [f"for key in {it}:", f"    {acc} = {acc} + np.tanh({dct}[key])"]
            return acc
        return self.define(lines, f"{dct}['u'] * {dct}['w']", v.shape)

    def s_helper(self, lines):
        v = self.pick()
        self.used.add("helper")
        h = f"h{len(self.helpers)}"
        body = self.rng.choice(["    t = np.tanh(p) * q\n    return t + p * p",
                                "    if np.sum(p) > 0.0:\n        return p * q\n    return p - q",
                                "    return np.sin(p) / (q * q + 1.0)",
                                POWER_SERIES])
        if body == POWER_SERIES:
            self.used.add("power_index")
        self.helpers.append(f"def {h}(p, q=0.5):\n{body}\n")
        q = self.other_fit(v.shape)
        call = self.rng.choice([f"{h}({v.name}, {q})", f"{h}({v.name}, q={q})", f"{h}({v.name})"])
        form = self.rng.random()
        if form < 0.12:
            self.used.add("call_forms")
            call = f"functools.partial({h}, q={q})({v.name})"
        elif form < 0.24:
            self.used.add("call_forms")
            self.helpers.append(f"def {h}_star(*ps):\n    return {h}(*ps[1:])\n")
            call = f"{h}_star(0.0, {v.name}, {q})"
        elif form < 0.3:
            self.used.add("call_forms")
            call = f"getattr(np, 'tanh')({h}({v.name}))"
        elif form < 0.36:
            self.used.add("gradient_inside")
            self.helpers.append(f"{h}_vg = mindgrad.value_and_grad(lambda t: np.sum({h}(t)))\n")
            call = f"{h}_vg({v.name})[1] * 0.5 + {h}_vg({v.name})[0]"
        elif form < 0.42:
            self.used.add("gradient_inside")
            self.helpers.append(f"{h}_gs = mindgrad.grad(lambda t: {h}(t), sens_param=True)\n")
            call = f"{h}_gs({v.name}, np.cos({v.name}))"
        elif form < 0.48:
            self.used.add("gradient_inside")
            out, back = self.fresh("out"), self.fresh("back")
            lines.append(f"{out}, {back} = mindgrad.vjp({h}, {v.name})")
            call = f"{back}(np.cos({v.name}))[0] + {out}"
        elif form < 0.55:
            self.used.add("callable_value")
            self.helpers.append(f"{h}_fns = [{h}, np.tanh]\n{h}_table = {{'h': {h}}}\n")
            call = self.rng.choice([f"{h}_fns[0]({v.name}, {q})", f"{h}_table['h']({v.name})",
                                    f"{h}_fns[1]({v.name}) * 0.5"])
        elif form < 0.62:
            self.used.add("callable_value")
            self.helpers.append(f"def {h}_apply(fn, t):\n    return fn(t) * 0.5 + t\n")
            call = self.rng.choice([f"{h}_apply({h}, {v.name})",
                                    f"{h}_apply(lambda t: {h}(t, 0.25), {v.name})",
                                    f"{h}_apply(np.sin, {v.name})"])
        elif form < 0.66:
            self.used.add("callable_value")
            self.helpers.append(f"def {h}_dflt(t, act={h}):\n    return act(t) * 2.0\n")
            call = f"{h}_dflt({v.name})"
        elif form < 0.78:
            self.used.add("star_runtime")
            if self.rng.random() < 0.5:
                call = f"{h}(*[t * 1.0 for t in ({v.name}, {q})])"
            else:
                self.helpers.append(f"def {h}_list(*ps):\n    ps = list(ps)\n"
                                    f"    ps[0] = np.sin(ps[0])\n    return {h}(*ps)\n")
                call = f"{h}_list({v.name}, {q})"
        elif form < 0.85:
            self.used.add("gradient_of_closure")
            call = self.rng.choice([
                f"mindgrad.grad(lambda t: np.sum({h}(t) * {v.name}))({v.name})",
                f"mindgrad.value_and_grad(lambda t: np.sum({h}(t)))({v.name})[1] * 0.5",
                f"mindgrad.jvp(lambda t: {h}(t) * {v.name}, ({v.name},), "
                f"(np.cos({v.name}),))[1]"])
        elif form < 0.92:
            # the Jacobian's rows summed over the output's axes: the input's shape again
            self.used.add("jacobian_inside")
            axes = tuple(range(len(v.shape)))
            jac = self.rng.choice(["jacrev", "jacfwd"])
            call = f"np.sum(mindgrad.{jac}({h})({v.name}), axis={axes})"
        return self.define(lines, call, v.shape)

    def s_recursion(self, lines):
        v = self.pick()
        self.used.update(("recursion", "helper"))
        h = f"r{len(self.helpers)}"
        self.helpers.append(f"def {h}(t, n):\n    if n == 0:\n        return t\n"
                            f"    return {h}(np.sin(t) * 0.9 + t * 0.1, n - 1)\n")
        return self.define(lines, f"{h}({v.name}, {self.rng.choice([1, 2, 3])})", v.shape)

    def s_closure(self, lines):
        v = self.pick()
        self.used.add("closure")
        inner = self.fresh("inner")
        cap = self.other_fit(v.shape)
        lines += [f"def {inner}(t):", f"    return t * {cap} + np.cos(t)"]
        return self.define(lines, f"{inner}({v.name})", v.shape)

    def s_lambda(self, lines):
        v = self.pick()
        self.used.add("lambda")
        lam = self.fresh("lam")
        lines.append(f"{lam} = lambda t, u=1.0: t * t * u + 0.5")
        arg = self.other_fit(v.shape)
        return self.define(lines, self.rng.choice([f"{lam}({v.name})", f"{lam}({v.name}, {arg})"]),
                           v.shape)

    def s_linalg(self, lines):
        v = self.pick(lambda v: len(v.shape) in (1, 2))
        if v is None:
            return self.s_unary(lines)
        self.used.add("linalg")
        if len(v.shape) == 1:
            return self.define(lines, f"np.linalg.norm({v.name})", ())
        m = v.shape[0]
        mat = self.define(lines, f"{v.name} @ {v.name}.T + 2.0 * np.eye({m})", (m, m), stem="m")
        expr, shape = self.rng.choice([(f"np.linalg.solve({mat}, {v.name}[:, 0])", (m,)),
                                       (f"np.linalg.inv({mat})", (m, m)),
                                       (f"np.linalg.det({mat})", ()),
                                       (f"np.linalg.slogdet({mat})[1]", ()),
                                       (f"np.linalg.norm({v.name})", ()),
                                       (f"np.linalg.norm({v.name}, axis=1)", (m,)),
                                       (f"np.linalg.solve({mat}, {v.name})", v.shape)])
        return self.define(lines, expr, shape)

    # ----- constructs of code written elsewhere ----------------------------------------------

    def untied(self, lines):
        """A 1-d name whose entries never tie (an input's, or a single entry), for max, min
        and sorted: defined here from any name when there is none."""
        v = self.pick(lambda v: v.shape == (1,) or len(v.shape) == 1 and v.distinct)
        if v is not None:
            return v
        w = self.pick()
        fn = self.rng.choice(["var", "sum", "mean"])
        self.define(lines, f"np.{fn}(np.ravel({w.name}), keepdims=True)", (1,))
        return self.vars[-1]

    def s_builtin(self, lines):
        """Python's builtins over arrays: one-argument max, min and sum (which iterate over
        the array), sorted, any and all in a condition, a loop over zip of two arrays."""
        r = self.rng
        kind = r.choice(["maxmin", "maxmin", "sum", "sorted", "anyall", "zip"])
        if kind == "maxmin":
            self.used.add("builtin_maxmin")
            v = self.untied(lines)
            arg = r.choice([v.name, f"{v.name} ** 3", f"np.tanh({v.name})"])
            expr = f"{r.choice(['max', 'min'])}({arg})"
            return self.define(lines, r.choice([expr, f"np.sin({expr})"]), ())
        if kind == "sum":
            self.used.add("builtin_sum")
            v = self.pick(lambda v: len(v.shape) >= 1)
            if v is not None and r.random() < 0.6:
                return self.define(lines, f"sum({v.name})", v.shape[1:])
            a = self.pick()
            return self.define(lines, f"sum([{a.name}, np.cos({self.other_fit(a.shape)})])",
                               a.shape)
        if kind == "sorted":
            self.used.add("builtin_sorted")
            v = self.untied(lines)
            srt = self.fresh("srt")
            lines.append(f"{srt} = sorted({v.name}{r.choice(['', ', reverse=True'])})")
            return self.define(lines, f"{srt}[0] * 0.5 + {srt}[-1] * {srt}[0]", ())
        if kind == "anyall":
            self.used.update(("builtin_anyall", "branch"))
            c = self.pick()
            test = r.choice([f"any(np.ravel({c.name}) > 0.5)", f"all(np.ravel({c.name}) < 1.0)",
                             f"any(np.ravel({c.name}) < -0.5) or all(np.ravel({c.name}) > 0.0)"])
            a = self.pick()
            e1, e2 = (r.choice(UNARY).format(a.name) for _ in range(2))
            return self.define(lines, f"{e1} if {test} else {e2}", a.shape)
        a = self.pick(lambda v: len(v.shape) >= 1)
        if a is None:
            return self.s_unary(lines)
        self.used.update(("builtin_zip", "for_iter"))
        b = self.pick(lambda w: len(w.shape) >= 1 and w.shape[0] == a.shape[0]) or a
        acc = self.start_acc(lines)
        p, q = self.fresh("p"), self.fresh("q")
        term = (f"{self.fit(Var(p, a.shape[1:]), acc.shape)} * "
                f"{self.fit(Var(q, b.shape[1:]), acc.shape)}")
        lines += [f"for {p}, {q} in zip({a.name}, {b.name}):",
                  f"    {acc.name} = {acc.name} * 0.5 + np.tanh({term})"]
        return acc.name

    def s_rc(self, lines):
        """np.r_ and np.c_: concatenation by index notation."""
        r = self.rng
        a, b = self.pick(), self.pick()
        if r.random() < 0.5:
            self.used.add("r_c_")
            def flat(v):  # an operand of r_ and its length
                if len(v.shape) <= 1:
                    return v.name, int(np.prod(v.shape))
                return f"np.ravel({v.name})", int(np.prod(v.shape))
            (ta, na), (tb, nb) = flat(a), flat(b)
            parts, n = r.choice([([ta, tb], na + nb), ([ta, "0.5", tb], na + nb + 1),
                                 ([ta, f"np.tanh({ta})"], 2 * na)])
            return self.define(lines, f"np.r_[{', '.join(parts)}]", (n,))
        v = self.pick(lambda v: len(v.shape) in (1, 2))
        if v is None:
            return self.s_unary(lines)
        self.used.add("r_c_")
        rest = v.shape[1:] if len(v.shape) == 2 else (1,)
        w = self.pick(lambda w: w.shape == v.shape and w.name != v.name)
        other = w.name if w is not None else self.full(v)
        return self.define(lines, f"np.c_[{v.name}, {other}]", (v.shape[0], 2 * rest[0]))

    def s_einsum(self, lines):
        """einsum with subscripts written as a string with an ellipsis, or as sublists."""
        v = self.pick(lambda v: len(v.shape) >= 1)
        if v is None:
            return self.s_unary(lines)
        s = v.shape
        w = self.pick(lambda w: w.shape == s and w.name != v.name)
        n, m = v.name, (w.name if w is not None else self.full(v))
        batch = s[:-2]
        if len(s) == 1:
            options = [(f"np.einsum({n}, [0], {m}, [0], [])", (), "einsum_sublist"),
                       (f"np.einsum({n}, [0], {m}, [1], [0, 1])", (s[0], s[0]), "einsum_sublist"),
                       (f"np.einsum({n}, [Ellipsis], [Ellipsis])", s, "einsum_sublist"),
                       (f"np.einsum('...i,...i->...', {n}, {m})", (), "einsum_ellipsis"),
                       (f"np.einsum('i...->...', {n})", (), "einsum_ellipsis")]
        else:
            options = [(f"np.einsum({n}, [Ellipsis, 0, 1], {m}, [Ellipsis, 2, 1], "
                        f"[Ellipsis, 0, 2])", batch + (s[-2], s[-2]), "einsum_sublist"),
                       (f"np.einsum({n}, [Ellipsis, 1], {m}, [Ellipsis, 1], [Ellipsis])",
                        s[:-1], "einsum_sublist"),
                       (f"np.einsum('...ij,...kj->...ik', {n}, {m})", batch + (s[-2], s[-2]),
                        "einsum_ellipsis"),
                       (f"np.einsum('...ij,...ij->...', {n}, {m})", batch, "einsum_ellipsis"),
                       (f"np.einsum('...ij->...ji', {n})", batch + (s[-1], s[-2]),
                        "einsum_ellipsis")]
            if len(s) == 2:
                options += [(f"np.einsum({n}, [0, 1], {m}, [2, 1], [0, 2])", (s[0], s[0]),
                             "einsum_sublist"),
                            (f"np.einsum({n}, [0, 1], [1, 0])", (s[1], s[0]), "einsum_sublist")]
        expr, shape, kind = self.rng.choice(options)
        self.used.add(kind)
        return self.define(lines, expr, shape)

    def s_dict_loop(self, lines):
        """A dict built from names, a loop over its values or items (or its sorted keys), and
        the loop variable read after the loop."""
        r = self.rng
        v = self.pick()
        self.used.update(("dict", "dict_loop_var", "for_iter"))
        dct = self.fresh("dct")
        lines.append(f"{dct} = {{'u': {v.name}, 'w': np.sin({self.full(v)})}}")  # one shape
        if r.random() < 0.5:
            lines.append(f"{dct}['p'] = {dct}['u'] * 2.0")
        acc = self.define(lines, f"{v.name} * 0.5", v.shape, stem="s")
        t = self.fresh("t")
        step = r.choice([f"{acc} = {acc} + {t} * 0.5", f"{acc} = {acc} * np.tanh({t})"])
        head = r.choice([f"for {t} in {dct}.values():", f"for key, {t} in {dct}.items():",
                         f"for key, {t} in sorted({dct}.items(), key=operator.itemgetter(0)):"])
        if r.random() < 0.25:
            self.used.add("builtin_sorted")
            lines += [f"for key in sorted({dct}):", f"    {t} = {dct}[key]", f"    {step}"]
        else:
            lines += [head, f"    {step}"]
        return self.define(lines, r.choice([f"{acc} + {t}", f"{acc} * {t}", f"np.sin({t})"]),
                           v.shape)

    def s_adv_copy(self, lines):
        """A copy made by advanced indexing (an integer array, a list, a boolean mask, a
        negative index of a 1-d array), then written in place: the name's own memory."""
        r = self.rng
        v = self.pick(lambda v: len(v.shape) >= 1)
        if v is None:
            return self.s_unary(lines)
        self.used.add("advindex_inplace")
        s = v.shape
        idx = [r.randrange(s[0]) for _ in range(r.choice([1, 2, 3]))]
        mask = [r.random() < 0.5 for _ in range(s[0])]
        mask[r.randrange(s[0])] = True
        options = [(f"[np.array({idx})]", (len(idx),) + s[1:]), (f"[{idx}]", (len(idx),) + s[1:]),
                   (f"[np.array({mask})]", (sum(mask),) + s[1:])]
        if len(s) == 1:
            options.append((f"[{-r.randrange(1, s[0] + 1)}]", ()))
        text, shape = r.choice(options)
        if len(set(idx)) < len(idx) and str(idx) in text:
            self.used.add("index_repeated")
        name = self.fresh("c")
        lines.append(f"{name} = {v.name}{text}")
        for _ in range(r.choice([1, 2])):
            op = r.choice(["-=", "*=", "+="])
            rhs = self.other_fit(shape)
            lines.append(f"{name} {op} {r.choice([f'np.sin({rhs})', rhs])}")
        self.vars.append(Var(name, shape))
        if r.random() < 0.3:  # the array copied from, read again after the write
            return self.define(lines, f"{v.name} * 0.5 + np.sum({name})", v.shape)
        return name

    def s_item_write(self, lines):
        """An item taken from a list or a tuple (maybe one made by ``+`` or ``*`` from
        another), written into in place, then the container read again: the item is the
        container's memory unless it was copied (``.copy()``, ``np.array``)."""
        r = self.rng
        v = self.pick(lambda v: not v.py)
        if v is None:
            return self.s_unary(lines)
        self.used.add("item_write")
        s = v.shape
        seq = self.fresh("lst")
        opener, closer = r.choice([("[", "]"), ("(", ")")])
        # both items of v's shape exactly (another name alone may only broadcast to it)
        lines.append(f"{seq} = {opener}{v.name} * 1.5, "
                     f"np.tanh({self.other_fit(s)}) + {v.name} * 0.25{closer}")
        join = r.random()
        if join < 0.4:  # a new container holding the same items
            more = f"[{v.name} * 0.5]" if opener == "[" else f"({v.name} * 0.5,)"
            made = self.fresh("lst")
            lines.append(f"{made} = " + (f"{seq} + {more}" if join < 0.2 else
                                         f"{more} + {seq}" if join < 0.3 else f"{seq} * 2"))
            seq = made
        item = self.fresh("a")
        k = r.choice([0, 1, -1])
        take = r.choice([f"{seq}[{k}]", f"{seq}[{k}]", f"{seq}[{k}].copy()",
                         f"np.array({seq}[{k}])"])
        lines.append(f"{item} = {take}")
        if s and r.random() < 0.5:  # an index write (a 0-d item may be a NumPy scalar)
            lines.append(f"{item}[{r.randrange(s[0])}] = np.sum({self.other_fit(s)}) * 0.5")
        else:
            op = r.choice(["-=", "*=", "+="])
            lines.append(f"{item} {op} np.sin({self.other_fit(s)})")
        self.vars.append(Var(item, s))
        return self.define(lines, f"{seq}[{r.choice([0, 1, -1])}] * {item} + {seq}[{k}]", s)

    def s_sequence_join(self, lines):
        """Two sequences, each item a function of the inputs, joined by ``+`` or by Python's
        ``sum(..., start)``, and items of both halves read and combined."""
        r = self.rng
        v = self.pick()
        self.used.add("sequence_join")
        s, n = v.shape, v.name
        opener, closer, one = r.choice([("[", "]", ""), ("(", ")", ",")])
        head, tail = self.fresh("lst"), self.fresh("lst")
        lines.append(f"{head} = {opener}np.sin({n}), {self.other_fit(s)} * 1.5{closer}")
        lines.append(f"{tail} = {opener}np.tanh({n}) * {self.other_fit(s)}{one}{closer}")
        joined = r.choice([f"{head} + {tail}", f"{tail} + {head}",
                           f"sum([{head}, {tail}], {opener}{closer})",
                           f"sum([{tail}, {head}], {opener}np.cos({n}){one}{closer})"])
        seq = self.fresh("lst")
        lines.append(f"{seq} = {joined}")
        i, j = r.sample([0, 1, 2, -1], 2)
        return self.define(lines, f"{seq}[{i}] * {seq}[{j}] + np.sin({seq}[-1])", s)

    def s_list_callee(self, lines):
        """A helper given a list: it appends to it or pops from it, in place or on a copy
        (``list(xs)``, ``xs.copy()``), and the caller reads the list afterwards."""
        r = self.rng
        v = self.pick()
        self.used.update(("list_callee", "helper"))
        s, n = v.shape, v.name
        h = f"m{len(self.helpers)}"
        kind = r.choice(["append", "pop", "copy_append", "copy_pop"])
        copy = r.choice(["    xs = list(xs)\n", "    xs = xs.copy()\n"])
        self.helpers.append({
            "append": f"def {h}(xs, v):\n    xs.append(v)\n    return xs\n",
            "copy_append": f"def {h}(xs, v):\n{copy}    xs.append(v)\n    return xs\n",
            "pop": f"def {h}(xs):\n    return xs.pop()\n",
            "copy_pop": f"def {h}(xs):\n{copy}    v = xs.pop()\n    return v, xs\n"}[kind])
        lst = self.fresh("lst")
        lines.append(f"{lst} = [np.sin({n}), {self.other_fit(s)} * 1.5 + {n}]")
        if kind.endswith("append"):
            grown = self.fresh("lst")
            lines.append(f"{grown} = {h}({lst}, np.tanh({n}) * 0.5)")
            return self.define(lines, f"{grown}[0] * {grown}[-1] + {grown}[1]", s)
        item = self.fresh("a")
        if kind == "pop":
            lines.append(f"{item} = {h}({lst})")
            return self.define(lines, f"{item} * {lst}[0] + {item}", s)
        rest = self.fresh("lst")
        lines.append(f"{item}, {rest} = {h}({lst})")
        return self.define(lines, f"{item} * {rest}[0] + {lst}[1]", s)

    def s_keyword_input(self, lines):
        """A call whose keyword argument moves with the inputs: ``np.var``/``np.std``'s
        ``mean=`` (NumPy 2), ``np.pad``'s ``constant_values=``, a reduction's ``initial=``,
        ``np.clip``'s bounds by name."""
        v = self.pick(lambda v: len(v.shape) >= 1)
        if v is None:
            return self.s_unary(lines)
        self.used.add("keyword_input")
        n, s = v.name, v.shape
        moving = f"np.mean({self.pick().name}) * 0.1"
        options = [(f"np.pad({n}, 1, constant_values={moving})", tuple(d + 2 for d in s)),
                   (f"np.sum({n}, axis=-1, initial={moving})", s[:-1]),
                   (f"np.prod(np.tanh({n}), axis=-1, initial=1.0 + {moving})", s[:-1]),
                   (f"np.max({n}, axis=-1, initial=np.mean({n}))", s[:-1]),
                   (f"np.clip({n}, a_min=np.min({n}) * 0.5, a_max=np.max({n}) * 0.5)", s)]
        if int(np.__version__.split(".")[0]) >= 2:  # mean= is NumPy 2's
            mean = f"np.mean({n}, axis=-1, keepdims=True) * 0.9 + {moving}"
            options += [(f"np.var({n}, axis=-1, mean={mean})", s[:-1]),
                        (f"np.std({n}, axis=-1, mean={mean}) + 0.1", s[:-1])]
        expr, shape = self.rng.choice(options)
        return self.define(lines, expr, shape)

    def s_fft(self, lines):
        """A discrete Fourier transform along the last axis, ending in a real name: rules that
        conjugate or cut the gradient before their helper (ihfft's met the symbolic zero as a
        number on a branch not taken, and crashed)."""
        v = self.pick(lambda v: len(v.shape) >= 1 and v.shape[-1] >= 2)
        if v is None:
            return self.s_unary(lines)
        self.used.add("fft")
        n, head = v.shape[-1], v.shape[:-1]
        half = n // 2 + 1
        norm = f"norm={self.rng.choice(['None', repr('ortho'), repr('forward')])}"
        options = [(f"np.real(np.fft.fft({v.name}, {norm}))", n),
                   (f"np.imag(np.fft.ifft({v.name}, {norm}))", n),
                   (f"np.real(np.fft.rfft({v.name}, {norm}))", half),
                   (f"np.fft.irfft(np.fft.rfft({v.name}, {norm}), {n})", n),
                   (f"np.fft.hfft({v.name}, {norm})", 2 * (n - 1)),
                   (f"np.real(np.fft.ihfft({v.name}, {norm}) * (1.0 + 0.5j))", half)]
        expr, m = self.rng.choice(options)
        return self.define(lines, expr, head + (m,))

    def s_zero_scaled(self, lines):
        """A reduction of a moved or reshaped array scaled by 0: its gradient is a number 0
        that is a value, which helpers keeping values must give back as zeros of their
        argument's shape (the symbolic 0 crashed the shape rules after them)."""
        v = self.pick(lambda v: not v.py)
        if v is None:
            return self.s_unary(lines)
        self.used.add("zero_scaled")
        moved = self.rng.choice([f"{v.name}.T", f"np.transpose({v.name})",
                                 f"np.reshape({v.name}, -1)", f"np.swapaxes({v.name}, 0, -1)"
                                 if len(v.shape) >= 2 else f"np.ravel({v.name})"])
        reduced = self.rng.choice([f"np.sum({moved})", f"np.mean({moved})",
                                   f"np.max({moved})", f"np.var({moved})"])
        return self.define(lines, f"{reduced} * 0.0 + {self.fit(self.pick(), ())}", ())

    def s_zero_value(self, lines):
        """A reduction of an input less its value at the point the program is run at (a
        constant of the module, written in once the inputs are drawn): a value exactly 0 there
        whose derivative is not, squared or multiplied, so its second derivative is not 0."""
        v = self.pick(lambda v: v.distinct and v.name in ("x", "y", "z"))
        if v is None:
            return self.s_unary(lines)
        self.used.add("zero_value")
        reduced = self.rng.choice([f"np.sum({v.name})", f"np.mean({v.name})",
                                   f"np.max({v.name})", f"np.sum(np.sin({v.name}))"])
        k = len(self.helpers)
        self.helpers.append(f"Z{k} = {ZERO_POINT}  # {reduced} at the point\n")
        self.zero_points.append((k, reduced))
        zero = self.fresh("z")
        lines.insert(0, f"{zero} = {reduced} - Z{k}")  # before anything writes an input
        return self.define(lines, self.rng.choice([f"{zero} ** 2", f"{zero} * {zero} * 1.5",
                                                   f"{zero} * {reduced}"]), ())

    def s_pole(self, lines):
        """A function finite at a pole of its slope (``np.sqrt`` at 0, ``np.hypot`` at the
        origin, ``np.arcsin`` at 1), computed exactly at the pole in the branch ``np.where``
        does not take: its slope there, inf, must reach no gradient and raise no warning."""
        v = (self.rng.random() < 0.5 and self.pick(lambda u: u.py)) or self.pick()
        self.used.add("pole_not_taken")
        n, z = v.name, self.fresh("z")
        if v.py:  # a Python float: math's functions, whose slopes divided by a float 0
            lines.append(f"{z} = max({n}, 0.0)")
            pole = self.rng.choice([f"math.sqrt({z})", f"{z} ** 0.5", f"math.pow({z}, 0.5)",
                                    f"math.hypot({z}, 2.0 * {z})", f"math.atan2({z}, {z})",
                                    f"math.asin(1.0 / (1.0 + {z}))"])
            return self.define(lines, f"np.where({n} > 0.0, {pole}, {n})", ())
        lines.append(f"{z} = np.where({n} > 0.0, {n}, 0.0)")
        pole = self.rng.choice([f"np.sqrt({z})", f"{z} ** 0.5", f"np.cbrt({z})",
                                f"np.power({z}, 0.25)", f"np.hypot({z}, 2.0 * {z})",
                                f"np.arctan2({z}, {z})", f"np.arcsin(1.0 / (1.0 + {z}))",
                                f"np.arccosh(1.0 + {z})"])
        return self.define(lines, f"np.where({n} > 0.0, {pole}, {n})", v.shape)

    def s_complex(self, lines):
        """Complex arithmetic that ends in a real name (the complex one is never picked)."""
        r = self.rng
        a = self.pick()
        self.used.add("complex")
        b = self.other_fit(a.shape)
        z = self.fresh("z")
        options = [f"{a.name} * (0.6 + 0.8j) + np.exp(1j * {b})", f"{a.name} + 1j * {b}",
                   f"np.exp((0.5 + 1j) * {a.name}) * {b}",
                   # a real operand times a complex value of its own shape: its gradient is
                   # the real part of a complex product
                   f"{a.name} * np.exp(1j * {a.name})"]
        if a.shape and not a.py:
            options.append(f"np.fft.fft({a.name}, axis=-1) + 0.5j")
            # read by indexing: the product's gradient goes into a real gradient buffer
            options.append(f"{a.name}[..., ::-1] * (0.6 + 0.8j) + {b}")
        lines.append(f"{z} = {r.choice(options)}")
        real, shape = r.choice([(f"np.abs({z})", a.shape), (f"np.real({z} * {z})", a.shape),
                                (f"{z}.imag", a.shape), (f"abs({z}) ** 2", a.shape),
                                (f"np.real(np.conj({z}) * {z} + {z})", a.shape),
                                (f"np.var({z})", ()), (f"({z} * {z}).real", a.shape)])
        return self.define(lines, real, shape)

    def s_nan_branch(self, lines):
        """NaN or inf in the branch of np.where that is not taken, reduced by nansum or
        masked, so f stays finite."""
        v = self.pick()
        self.used.add("nan_branch")
        n = v.name
        expr, shape = self.rng.choice([
            (f"np.nansum(np.where({n} > 0.0, np.nan, {n}) * {self.other_fit(v.shape)})", ()),
            (f"np.nansum(np.where({n} < 0.0, {n} ** 2, np.nan))", ()),
            (f"np.where({n} > 0.0, np.log({n}), 0.0)", v.shape),
            (f"np.where({n} > 0.0, np.sqrt({n}), {n})", v.shape),
            (f"np.exp(-np.where({n} > 0.0, {n}, np.inf))", v.shape),
        ] + self.whole_branch_not_taken(v))
        return self.define(lines, expr, shape)

    def whole_branch_not_taken(self, v):
        """A scalar condition: where it fails, a whole branch of NaNs (the log of a negative
        number) feeds a function that is not elementwise (its adjoint multiplies by them)."""
        if v.py or not v.shape:
            s = f"({v.name})"
        else:
            s = f"{v.name}[{', '.join('0' for _ in v.shape)}]"
        w = self.pick(lambda u: len(u.shape) == 1 and not u.py)
        if w is None:
            return []
        a = f"np.log({s} * ({w.name} * {w.name} + 0.5))"
        reduce = self.rng.choice(["np.prod({0})", "np.var({0})", "np.linalg.norm({0})",
                                  "{0} @ {0}", "np.std({0})", "np.sum(np.cumprod({0}))",
                                  "np.sum(np.outer({0}, {0}))"])
        return [(f"np.where({s} > 0.0, {reduce.format(a)}, {s})", ())]

    def s_user_object(self, lines):
        """A method of an object of the user's, made at module level: its name is an array
        method's (``sum``, ``mean``, ``clip``) and it reads a private attribute."""
        v = self.pick()
        self.used.add("user_object")
        k = len(self.helpers)
        self.helpers.append(
            f"class Scaled{k}:\n"
            f"    def __init__(self, scale):\n        self.__scale = scale\n\n"
            f"    def sum(self, t):\n        return np.sum(t * self.__scale)\n\n"
            f"    def mean(self, t):\n        return np.mean(np.tanh(t)) * self.__scale\n\n"
            f"    def clip(self, t):\n        return t * self.__scale + np.sin(t)\n\n\n"
            f"SCALED{k} = Scaled{k}({self.rng.choice([0.5, 0.7, 1.5])})\n")
        method = self.rng.choice(["sum", "mean", "clip"])
        return self.define(lines, f"SCALED{k}.{method}({v.name})",
                           v.shape if method == "clip" else ())

    def s_method_write(self, lines):
        """A scalar written into a new array or dict by a method (or by indexing), read after:
        a differentiated value so written is refused; a constant is a constant."""
        v = self.pick()
        self.used.add("method_write")
        k = self.count + 1
        value = self.rng.choice([f"np.sum({v.name}) * 0.5", "0.25"])
        shape = v.shape if v.shape else (2,)
        into = self.rng.choice(["fill", "put", "update", "setdefault", "index"])
        if into in ("fill", "put", "index"):
            lines.append(f"buf{k} = np.ones({shape})")
            lines.append({"fill": f"buf{k}.fill({value})", "put": f"buf{k}.put([0], {value})",
                          "index": f"buf{k}[...] = {value}"}[into])
            read = f"buf{k}"
        else:
            lines.append(f"dw{k} = {{'a': 1.0}}")
            lines.append(f"dw{k}.update(b={value})" if into == "update" else
                         f"dw{k}.setdefault('b', {value})")
            read = f"dw{k}['b']"
        target = self.pick(lambda t: broadcast(t.shape, shape) == tuple(shape))
        return self.define(lines, f"{read} * {target.name if target else 1.0}", shape)

    def s_global_array(self, lines):
        """An array made at module level, of a name's shape, read once as an operand."""
        v = self.pick(lambda v: not v.py)
        if v is None:
            return None
        self.used.add("global_array")
        k = len(self.helpers)
        size = int(np.prod(v.shape)) if v.shape else 1
        made = f"np.linspace(-0.8, 1.2, {size})" + (f".reshape({v.shape})" if v.shape else "[0]")
        self.helpers.append(f"G{k} = {made}\n")
        expr = self.rng.choice([f"G{k} * {v.name}", f"{v.name} - G{k}",
                                f"np.sin({v.name}) * G{k}", f"np.exp(G{k} * 0.5) + {v.name}"])
        return self.define(lines, expr, v.shape)

    def s_multiline_lambda(self, lines):
        """A lambda whose body spans lines, called once or twice."""
        v = self.pick()
        self.used.update(("lambda", "multiline_lambda"))
        lam = self.fresh("lam")
        lines.append(f"{lam} = lambda t: (np.sin(t) * 0.5\n" + " " * (8 + len(lam))
                     + "+ t * t)")
        call = self.rng.choice([f"{lam}({v.name})", f"{lam}({lam}({v.name}))"])
        return self.define(lines, call, v.shape)

    def s_made_arrays(self, lines):
        """NumPy functions that make arrays from values: np.unique (sorted distinct entries),
        np.histogram (edges from the extremes, counts), np.arange with a float start."""
        v = self.pick(lambda v: len(v.shape) == 1 and v.distinct and not v.py)
        if v is None:
            return self.s_unary(lines)
        self.used.add("made_arrays")
        n = v.shape[0]
        expr, shape = self.rng.choice([
            (f"np.unique({v.name}) * np.tanh({v.name})", (n,)),
            (f"np.histogram({v.name}, bins=3)[1] * 0.5", (4,)),
            (f"np.sum(np.histogram({v.name}, bins=2)[0] * {v.name}[0]) + {v.name}", (n,)),
            (f"{v.name} * np.arange(0.5, {n} + 0.5)", (n,)),
        ])
        return self.define(lines, expr, shape)

    # ----- SciPy (only with libraries=("scipy",)) ---------------------------------------------

    def s_scipy(self, lines):
        return getattr(self, self.rng.choice(["s_scipy_special", "s_scipy_special",
                                              "s_scipy_axis", "s_scipy_stats",
                                              "s_scipy_linalg"]))(lines)

    def s_scipy_special(self, lines):
        self.used.add("scipy_special")
        a = self.pick()
        b = self.pick(lambda w: w.name != a.name)
        shape = broadcast(a.shape, b.shape) if b is not None else None
        if shape is None or self.rng.random() < 0.6:
            return self.define(lines, self.rng.choice(SCIPY_UNARY).format(a.name), a.shape)
        return self.define(lines, self.rng.choice(SCIPY_BINARY).format(a.name, b.name), shape)

    def s_scipy_axis(self, lines):
        """logsumexp, softmax or log_softmax of an array, along an axis or all of them."""
        v = self.pick(lambda v: not v.py)
        if v is None:
            return self.s_scipy_special(lines)
        self.used.add("scipy_special")
        fn = self.rng.choice(["logsumexp", "logsumexp", "softmax", "log_softmax"])
        if fn == "logsumexp":
            args, shape = self.axis_args(v)
            if not v.shape:
                shape = ()
            return self.define(lines, f"sp.logsumexp({v.name}{', ' if args else ''}{args})",
                               shape)
        nd = len(v.shape)
        axis = f", axis={self.rng.randrange(-nd, nd)}" if nd and self.rng.random() < 0.7 else ""
        return self.define(lines, f"sp.{fn}({v.name}{axis})", v.shape)

    def s_scipy_stats(self, lines):
        """A log-probability (or probability) of the normal distribution with loc and scale."""
        v = self.pick()
        self.used.add("scipy_stats")
        fn = self.rng.choice(["logpdf", "logpdf", "logcdf", "logcdf", "pdf", "cdf"])
        loc = self.rng.choice(["0.5", self.other_fit(v.shape)])
        scale = self.rng.choice(["1.5", f"{self.other_fit(v.shape)} ** 2 + 0.5"])
        if self.rng.random() < 0.5:
            args = f"{loc}, {scale}"
        else:
            args = f"loc={loc}, scale={scale}"
        return self.define(lines, f"norm.{fn}({v.name}, {args})", v.shape)

    def s_scipy_linalg(self, lines):
        """expm of a small matrix, or a solve with a well-conditioned one (of a 2-d name, or
        of an outer product of a 1-d one)."""
        v = self.pick(lambda v: len(v.shape) == 2)
        if v is None:
            w = self.pick(lambda w: len(w.shape) == 1)
            if w is None:
                return self.s_scipy_special(lines)
            self.define(lines, f"np.outer({w.name}, np.tanh({w.name}))", w.shape * 2)
            v = self.vars[-1]
        self.used.add("scipy_linalg")
        m = v.shape[0]
        if self.rng.random() < 0.35:
            return self.define(lines, f"sla.expm(0.5 * np.tanh({v.name} @ {v.name}.T))", (m, m))
        mat = self.define(lines, f"{v.name} @ {v.name}.T + {m}.0 * np.eye({m})", (m, m),
                          stem="m")
        rhs, shape = self.rng.choice([(f"{v.name}[:, 0]", (m,)), (v.name, v.shape)])
        lower = self.rng.choice(["lower=True", "lower=False"])
        options = [(f"sla.solve_triangular({mat}, {rhs}, {lower})", shape),
                   (f"sla.solve_triangular({mat}, {rhs}, trans=1, {lower})", shape),
                   (f"sla.solve_triangular({mat}, {rhs}, {lower}, unit_diagonal=True)", shape),
                   (f"sla.solve({mat}, {rhs})", shape), (f"sla.inv({mat})", (m, m)),
                   (f"sla.det({mat})", ()), (f"sla.cholesky({mat}, {lower})", (m, m)),
                   (f"sla.cho_solve(sla.cho_factor({mat}), {rhs})", shape),
                   (f"sla.expm(0.2 * {mat})", (m, m))]
        expr, shape = self.rng.choice(options)
        return self.define(lines, expr, shape)

    STATEMENTS = (("s_unary", 4), ("s_binary", 4), ("s_reduction", 2), ("s_method", 2),
                  ("s_matmul", 1.5), ("s_index", 3), ("s_write", 1.5), ("s_aug", 0.7),
                  ("s_loop", 1), ("s_branch", 1), ("s_early_return", 0.3), ("s_list", 0.6),
                  ("s_dict", 0.6), ("s_helper", 0.5), ("s_recursion", 0.3), ("s_closure", 0.4),
                  ("s_lambda", 0.4), ("s_linalg", 0.8), ("s_builtin", 1.0), ("s_rc", 0.5),
                  ("s_einsum", 0.6), ("s_dict_loop", 0.5), ("s_adv_copy", 0.7),
                  ("s_complex", 0.6), ("s_nan_branch", 0.6), ("s_user_object", 0.3),
                  ("s_multiline_lambda", 0.3), ("s_made_arrays", 0.4),
                  ("s_item_write", 0.5), ("s_fft", 0.4),
                  ("s_zero_scaled", 0.4), ("s_pole", 0.4), ("s_sequence_join", 0.4),
                  ("s_keyword_input", 0.4), ("s_list_callee", 0.4), ("s_global_array", 0.4),
                  ("s_zero_value", 0.4), ("s_method_write", 0.3))

    def result(self):
        """A return value: a scalar made of a few names, an array, a tuple, a list or a dict."""
        vs = [self.pick() for _ in range(self.rng.choice([1, 2]))]
        terms = " + ".join(f"np.sum({v.name} * {v.name})" if self.rng.random() < 0.5
                           else f"np.sum(np.tanh({v.name}))" for v in vs)
        r = self.rng.random()
        if r < 0.75:
            return terms
        if r < 0.9:
            return self.pick().name
        if r < 0.96:
            return f"{terms}, {self.pick().name}"
        self.used.add("container_output")
        if r < 0.98:
            return f"[{terms}, {self.pick().name}]"
        return f"{{'a': {terms}, 'b': {self.pick().name}}}"

    def run(self):
        names = self.make_inputs()
        lines = []
        statements = self.STATEMENTS + (("s_scipy", 12),) * ("scipy" in self.libraries)
        funcs, weights = zip(*statements)
        for _ in range(self.size):
            getattr(self, self.rng.choices(funcs, weights)[0])(lines)
        lines.append(f"return {self.result()}")
        body = "\n".join("    " + ln for ln in lines)
        helpers = "\n\n".join(self.helpers)
        head = "import functools\n" * ("functools." in body) + "import math\n" + \
            ("import operator\n" * ("operator." in body))
        if "mindgrad." in helpers + body:
            head += "\nimport mindgrad\n"
        head += "\nimport numpy as np\n"
        head += (SCIPY_IMPORTS if "scipy" in self.libraries else "") + "\n\n"
        signature = f"def f({', '.join(names)}):\n{body}\n"
        return head + (helpers + "\n\n" if helpers else "") + signature


def generate(seed: int, index: int, size: int | None = None, libraries=()) -> Program:
    """The ``index``-th program of the batch ``seed``; ``libraries`` names the optional
    libraries (keys of ``LIBRARIES``) whose functions it may call too."""
    unknown = set(libraries) - set(LIBRARIES)
    if unknown:
        raise ValueError(f"libraries: unknown {sorted(unknown)}; choose from {sorted(LIBRARIES)}")
    rng = random.Random(f"{seed}:{index}")
    gen = Generator(rng, size or rng.randint(2, 9), libraries)
    source = gen.run()
    program = Program(source, gen.inputs, rng.randrange(2 ** 31), frozenset(gen.used))
    if gen.zero_points:  # the constants zero_value subtracts: their expressions at the inputs
        namespace = {"np": np, **dict(zip(("x", "y", "z"), program.args()))}
        for k, expression in gen.zero_points:
            value = float(eval(expression, namespace))  # noqa: S307 (the generator's own text)
            source = source.replace(f"Z{k} = {ZERO_POINT}", f"Z{k} = {value!r}", 1)
        program = dataclasses.replace(program, source=source)
    return program
