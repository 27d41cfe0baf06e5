"""A rule template, parsed: its signature, its body (written, or derived by ``derivation``),
the names it reads, and what it asks of the symbolic zero. ``Rule`` parses on first use, so
`import mindgrad` does not read every template.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import textwrap
import types

import gast
import numpy as np

from mindgrad import runtime
from mindgrad.rules.derivation import (
    diagonal_body,
    from_slopes_body,
    is_elementwise_call,
    linear_body,
    output_parameter,
    stored_names,
    transposed_body,
)
from mindgrad.rules.markers import RuleError, d, is_d, slope
from mindgrad.runtime import symbolic_zero as zero_protocol

# the functions mindgrad.runtime exports (from its modules core, buffers, forward, outputs)
_RUNTIME_HELPERS = frozenset(id(getattr(runtime, name)) for name in runtime.__all__)

def _takes_a_number(call) -> bool:
    """Whether ``call`` is ``np.sum(v)``, ``np.real(v)``, ``np.imag(v)`` or ``np.transpose(v)``
    of one argument alone: these take a number (the symbolic zero, or a number 0 standing for
    an array) and give a number (a 0-d array: ``runtime.is_any_zero`` takes it)."""
    func = call.func
    if call.keywords or len(call.args) != 1 or not (
            isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and
            func.value.id == "np"):
        return False
    return getattr(np, func.attr, None) in (np.sum, np.real, np.imag, np.transpose)


# what runtime.Zero takes as a zero and gives a zero for: NumPy functions linear in their first
# argument, products linear in each, and the array methods and attributes it has
_ZERO_FIRST = zero_protocol.VIEWS | zero_protocol.LINEAR_FIRST
_MULTIPLY_OUTER = np.multiply.outer
_ZERO_PRODUCTS = zero_protocol.PRODUCTS | zero_protocol.PRODUCT_UFUNCS | {_MULTIPLY_OUTER}
_ZERO_SECOND = zero_protocol.LINEAR_SECOND
# by id (a value a template names may not hash); the elementwise ufuncs are elementwise calls
_ZERO_FUNCTIONS = {id(f): f for f in _ZERO_FIRST | _ZERO_PRODUCTS | _ZERO_SECOND |
                   {np.pad, np.polyint}
                   if not isinstance(f, np.ufunc) or f in _ZERO_PRODUCTS}
_ZERO_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "conj", "conjugate", "copy", "astype",
                              "reshape", "transpose", "swapaxes", "ravel", "flatten", "squeeze",
                              "sum", "mean", "cumsum", "diagonal"})


class Rule:
    """A parsed rule template: its signature, body and the names it reads.

    An adjoint rule writes ``d[param] = f(d[out])``; a tangent rule (forward mode) writes
    ``d[out] = f(d[param])``, one input tangent per statement, so the statements of inputs that
    carry no tangent can be dropped.
    """

    # what parsing the template gives; read through __getattr__, which parses on first use
    _PARSED = frozenset({"out", "signature", "params", "varargs", "globals", "body",
                         "differentiates", "_fdef"})

    def __init__(self, key, template, kind="adjoint", lazy=False, from_slopes=False,
                 linear_in=None, via=None, diagonal=False, singular=False, transposed=False,
                 added=()):
        self.kind = kind
        self.key = key
        self.template = template
        self.from_slopes = from_slopes  # an @elementwise template: the body is derived
        self.singular = singular  # an @elementwise slope that may be inf or NaN (np.log)
        self.linear_in = linear_in  # a @linear tangent: d[out] = key(..., d[p], ...) per p
        self.via = via  # the function a @linear tangent applies, if not the key itself
        self.added = tuple(added)  # a @linear tangent's parameters added to its result
        self.diagonal = diagonal  # a @diagonal tangent: the adjoint template read forwards
        # a @transpose adjoint, the tangent template transposed: the lookup of the adjoint
        # rules that transpose its linear helpers (the registry's), else False
        self.transposed = transposed
        # a @linear_in helper: the template is the helper itself, its output a new parameter
        self.of_helper = template is key and linear_in is not None
        self.name = getattr(key, "__name__", None) or \
            (key[1] if isinstance(key, tuple) else str(key))
        if not lazy:
            self._parse()

    def __getattr__(self, attr):
        # only called for attributes not set yet: mindgrad's own rules parse when a program
        # first uses them, so `import mindgrad` does not read ~600 templates
        if attr in Rule._PARSED:
            self._parse()
            return self.__dict__[attr]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

    def _parse(self):
        """Parse on a draft and publish all its results in one step: a build in another
        thread reads the rule whole or parses it too, never half parsed (a ``differentiates``
        still being filled would drop gradients); on an error nothing is kept, and a later use
        raises again."""
        draft = object.__new__(Rule)
        draft.__dict__.update((k, v) for k, v in self.__dict__.items()
                              if k not in Rule._PARSED)
        draft._read_template(self.template)
        self.__dict__.update({k: draft.__dict__[k] for k in Rule._PARSED})

    def _read_template(self, template):
        try:
            source = textwrap.dedent(inspect.getsource(template))
        except (OSError, TypeError) as exc:
            raise RuleError(f"the rule for {self.name} has no readable source: {exc}") from None
        fdef = gast.parse(source).body[0]
        if not isinstance(fdef, gast.FunctionDef):
            raise RuleError(f"the rule for {self.name} must be a def")
        self._fdef = fdef
        sig = inspect.signature(template)
        params = list(sig.parameters.values())
        if self.of_helper:
            params = [output_parameter(fdef, params)] + params
        if not params:
            raise RuleError(f"the rule for {self.name} needs the output as its first parameter")
        self.out = params[0].name
        self.signature = sig.replace(parameters=params[1:])
        self.params = [p.name for p in params[1:]]
        self.varargs = {p.name for p in params[1:] if p.kind is p.VAR_POSITIONAL}
        self.globals = template.__globals__
        if self.derived:
            self.globals = dict(self.globals)  # the derived body may name more functions
        body = fdef.body
        if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
            body = body[1:]  # docstring
        if self.of_helper:
            body = []  # the helper's own code: only its signature makes the rule
        self.body = [_MarkerNames(self.globals).visit(stmt) for stmt in body]
        if self.from_slopes:
            self.body = from_slopes_body(self, self.body)
        elif self.linear_in is not None:
            self.body = linear_body(self, params[1:])
        elif self.diagonal:
            self.body = diagonal_body(self, self.body)
        elif self.transposed:
            self.body = transposed_body(self, self.body, self.transposed)
        self.differentiates = set()
        self._validate()

    @functools.cached_property
    def runnable(self):
        """The template as a function ``vjp_of``/``jvp_of`` run: for an ``@elementwise`` one,
        its derived body compiled (``d[x] = d[out] * slope``), else the template itself."""
        if not self.derived:
            return self.template
        return self._compiled(self.body)

    def reading(self, present):
        """The statements of a tangent rule run when the parameters ``present`` carry tangents:
        a statement reading another one's tangent contributes nothing, and is dropped with the
        temporaries computed from it (how a rule is expanded, and how ``jvp_of`` runs it)."""
        kept, dropped = [], set()
        for stmt in self.body:
            value = getattr(stmt, "value", None) or gast.Constant(value=None, kind=None)
            reads = {sub.slice.id for sub in gast.walk(value)
                     if isinstance(sub, gast.Subscript) and is_d(sub.value)}
            loads = {n.id for n in gast.walk(value) if isinstance(n, gast.Name)}
            if reads - set(present) or loads & dropped:
                dropped |= stored_names(stmt)
                continue
            kept.append(stmt)
        return kept

    def _compiled(self, body):
        """A function of the template's parameters running ``body``."""
        fields = {"name": "_", "args": self._fdef.args, "body": body or [gast.Pass()],
                  "decorator_list": [], "returns": None, "type_comment": None,
                  "type_params": []}
        fdef = gast.FunctionDef(**{k: v for k, v in fields.items()
                                   if k in gast.FunctionDef._fields})
        tree = gast.gast_to_ast(gast.Module(body=[fdef], type_ignores=[]))
        import ast

        ast.fix_missing_locations(tree)
        made = {}
        exec(compile(tree, inspect.getsourcefile(self.template) or "<rule>", "exec"),  # noqa: S102
             self.globals, made)
        return made["_"]

    def writing(self, present):
        """The statements of an adjoint rule run when the parameters ``present`` take gradients:
        a ``d[p] = ...`` for another parameter is dropped (as the transformer drops it for an
        argument that does not move), its temporaries kept."""
        def target(stmt):
            t = stmt.targets[0] if isinstance(stmt, gast.Assign) else None
            return t.slice.id if isinstance(t, gast.Subscript) and is_d(t.value) else None

        return [stmt for stmt in self.body if target(stmt) in (None, *present)]

    def run_with(self, marker, present=None):
        """The template as a function whose ``d`` is ``marker`` (``vjp_of``/``jvp_of``); given
        the parameters ``present`` that carry tangents (a tangent rule) or take gradients (an
        adjoint rule), only the statements reading those (``reading``) or writing them
        (``writing``)."""
        fn = self.runnable
        if present is not None:
            kept = self.reading(present) if self.kind == "tangent" else self.writing(present)
            if len(kept) < len(self.body):
                fn = self._compiled(kept)
        env = dict(self.globals)
        env["d"] = marker
        body = types.FunctionType(fn.__code__, env, "rule", fn.__defaults__, fn.__closure__)
        body.__kwdefaults__ = fn.__kwdefaults__
        return body

    @property
    def derived(self) -> bool:
        """Whether the body is derived (``@elementwise``, ``@linear``, ``@linear_in``,
        ``@diagonal``, ``@transpose``), not written by hand."""
        return self.from_slopes or self.linear_in is not None or self.diagonal or \
            bool(self.transposed)

    def _validate(self):
        if self.kind == "tangent":
            return self._validate_tangent()
        for node in self.body:
            for sub in gast.walk(node):
                if isinstance(sub, gast.Subscript) and is_d(sub.value):
                    target = sub.slice
                    if not isinstance(target, gast.Name) or \
                            target.id not in self.params + [self.out]:
                        raise RuleError(
                            f"the rule for {self.name}: d[...] must name the output or a "
                            f"parameter, got d[{gast.dump(target)}]")
                    if isinstance(sub.ctx, gast.Store):
                        if target.id == self.out:
                            raise RuleError(f"the rule for {self.name} writes d[{self.out}]")
                        self.differentiates.add(target.id)
            if isinstance(node, gast.AugAssign):
                raise RuleError(f"the rule for {self.name}: write d[x] = ..., not +=; "
                                "later writes accumulate by themselves")

    def _validate_tangent(self):
        for node in self.body:
            if isinstance(node, gast.AugAssign):
                raise RuleError(f"the tangent rule for {self.name}: write d[out] = ..., not +=; "
                                "later writes accumulate by themselves")
            reads = set()
            for sub in gast.walk(node):
                if isinstance(sub, gast.Subscript) and is_d(sub.value):
                    target = sub.slice
                    if not isinstance(target, gast.Name) or \
                            target.id not in self.params + [self.out]:
                        raise RuleError(f"the tangent rule for {self.name}: d[...] must name "
                                        f"the output or a parameter")
                    if isinstance(sub.ctx, gast.Store):
                        if target.id != self.out:
                            raise RuleError(f"the tangent rule for {self.name} may only write "
                                            f"d[{self.out}]")
                    elif target.id == self.out:
                        raise RuleError(f"the tangent rule for {self.name} reads d[{self.out}]")
                    else:
                        reads.add(target.id)
            if len(reads) > 1:
                raise RuleError(f"the tangent rule for {self.name}: each statement may read one "
                                f"input tangent, this one reads {sorted(reads)}")
            self.differentiates |= reads

    @functools.cached_property
    def reads_zero_unsafely(self) -> bool:
        """Whether the template may fail on the symbolic zero gradient (the int 0, or the
        number arithmetic on it gives): it passes ``d[out]``, or a value elementwise arithmetic
        made of it (``np.conj(d[out])``, ``d[out] * 2``, a temporary holding one: a number
        then, standing for an array), to a function other than mindgrad's runtime helpers
        (``np.reshape(d[out], ...)``), indexes it, reads an attribute of it or multiplies it
        with ``@``. Elementwise arithmetic on ``d[out]`` is safe."""
        carriers = set()  # temporaries holding a value made of d[out]
        for node in self.body:
            for sub in gast.walk(node):
                if isinstance(sub, gast.Call):
                    operands = list(sub.args) + [k.value for k in sub.keywords]
                    if any(self._carries_zero(a, carriers) for a in operands) and \
                            not self._helper_takes(sub, carriers) and \
                            not is_elementwise_call(sub.func) and not _takes_a_number(sub) and \
                            not self._zero_linear(sub, carriers):
                        return True
                elif isinstance(sub, gast.Attribute) and sub.attr not in _ZERO_ATTRIBUTES and \
                        self._carries_zero(sub.value, carriers):
                    return True
            if isinstance(node, gast.Assign) and self._carries_zero(node.value, carriers):
                if any(isinstance(t, (gast.Tuple, gast.List)) for t in node.targets):
                    return True  # unpacked: the untyped zero has no items

                carriers |= {n.id for target in node.targets
                             for n in (target.elts if isinstance(target, gast.Tuple) else
                                       [target]) if isinstance(n, gast.Name)}
        return False

    def _is_d_out(self, node) -> bool:
        """``d[out]`` in an adjoint rule; in a tangent rule, the tangent of an input
        (``d[x]``), which the symbolic zero may be as well."""
        if not (isinstance(node, gast.Subscript) and is_d(node.value) and
                isinstance(node.slice, gast.Name)):
            return False
        return node.slice.id != self.out if self.kind == "tangent" else \
            node.slice.id == self.out

    def _carries_zero(self, node, carriers) -> bool:
        """Whether ``node`` is ``d[out]``, a temporary made of it, or elementwise arithmetic on
        one of these: at the symbolic zero, the 0 or a number 0 standing for an array."""
        if self._is_d_out(node):
            return True
        if isinstance(node, gast.Name):
            return node.id in carriers
        if isinstance(node, gast.BinOp):  # zero @ y is a zero too
            return self._carries_zero(node.left, carriers) or \
                self._carries_zero(node.right, carriers)
        if isinstance(node, gast.UnaryOp):
            return self._carries_zero(node.operand, carriers)
        if isinstance(node, gast.Call) and (is_elementwise_call(node.func) or
                                            _takes_a_number(node)):
            return any(self._carries_zero(a, carriers) for a in node.args)
        if isinstance(node, gast.Call) and self._zero_linear(node, carriers):
            return True
        if isinstance(node, gast.Call) and any(
                self._carries_zero(a, carriers) for a in
                list(node.args) + [k.value for k in node.keywords]):
            return self._helper_takes(node, carriers)  # the zero, for the zero
        if isinstance(node, (gast.Subscript, gast.Attribute)):  # zero[i], zero.T: a zero
            return (not isinstance(node, gast.Attribute) or node.attr in _ZERO_ATTRIBUTES) and \
                self._carries_zero(node.value, carriers)
        return False

    def _zero_linear(self, call, carriers) -> bool:
        """Whether ``call`` gives the zero for the zero it is passed: a NumPy function
        ``runtime.Zero`` takes as linear in its first argument given the zero there (and no
        other), a product given it in any factor, or an array method of a zero."""
        func = call.func
        args = list(call.args) + [k.value for k in call.keywords]
        zeros = [self._carries_zero(a, carriers) for a in args]
        if isinstance(func, gast.Attribute) and func.attr in _ZERO_ATTRIBUTES and \
                self._carries_zero(func.value, carriers):
            return not any(zeros)  # a method of the zero: zero.reshape(shape)
        target = self._numpy_function(func)
        if target is None:
            return False
        if target in _ZERO_PRODUCTS:
            return any(zeros)
        if target in _ZERO_SECOND:
            return len(call.args) > 1 and zeros[1] and not zeros[0] and not any(zeros[2:])
        if target is np.pad and any(k.arg in zero_protocol.PAD_VALUES for k in call.keywords):
            return False  # padded with a value: affine
        if target is np.polyint and (len(call.args) > 2 or call.keywords):
            return False  # integration constants given: affine
        return (target in _ZERO_FIRST or target in (np.pad, np.polyint)) and bool(call.args) \
            and zeros[0] and not any(zeros[1:])

    def _numpy_function(self, func):
        """The NumPy function ``func`` names (``np.reshape``, ``np.fft.fft``) if ``Zero`` takes
        it (``_ZERO_FUNCTIONS``), else None."""
        value = self._resolve(func)
        if value == _MULTIPLY_OUTER:  # a bound method: a new object each time it is read
            return _MULTIPLY_OUTER
        found = _ZERO_FUNCTIONS.get(id(value))
        return found if found is value else None

    def _helper_takes(self, call, carriers) -> bool:
        """Whether ``call`` passes the zero (``d[out]``, or a value made of it) only to
        parameters of a helper that take it and give the zero for it: every function of
        mindgrad.runtime; a helper marked ``runtime.takes_zero(any_number=True)``; one declared
        ``runtime.zero_in_zero_out(*params)`` (``linear_in``), whose first test is
        ``zero_in(*params)``, given the zero in those parameters alone. A helper marked
        ``runtime.takes_zero`` without ``any_number`` may need the array's shape: a rule passing
        it ``d[out]`` is guarded by ``is_zero(d_v, v)``."""
        value, bound = self._resolve(call.func), False
        if value is None and isinstance(call.func, gast.Name) and self.params and \
                call.func.id == self.params[0] and isinstance(self.key, type):
            value, bound = self.key.__call__, True  # op(d[x], y): the primitive the rule is for
        if value is None:
            return False
        if getattr(value, "takes_any_zero", False):  # takes_zero(any_number=True)
            return True
        if value is float or value is complex:  # of a zero: the number 0
            return True
        params = getattr(value, "zero_in_zero_out", None)
        if params is not None:  # its first test is zero_in(*params)
            return self._zero_only_in(call, value, params, carriers, bound)
        return id(value) in _RUNTIME_HELPERS

    def _resolve(self, func):
        """The object a call's function names: ``name`` or ``module.name`` of the template's
        globals; None for another expression."""
        parts = []
        while isinstance(func, gast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name):
            return None
        value = self.globals[func.id] if func.id in self.globals else \
            getattr(builtins, func.id, None)
        for part in reversed(parts):
            value = getattr(value, part, None)
        return value

    def _zero_only_in(self, call, helper, params, carriers, bound=False) -> bool:
        """Whether each argument of ``call`` that may be the zero binds to one of ``params``
        of ``helper`` (a method called on its instance where ``bound``)."""
        try:
            names = list(inspect.signature(helper).parameters)[1 if bound else 0:]
        except (TypeError, ValueError):
            return False
        for i, arg in enumerate(call.args):
            if isinstance(arg, gast.Starred) or i >= len(names):
                if self._carries_zero(arg, carriers):
                    return False
            elif self._carries_zero(arg, carriers) and names[i] not in params:
                return False
        return all(k.arg in params for k in call.keywords
                   if self._carries_zero(k.value, carriers))

    def bind(self, args, kwargs):
        """Map parameter names to the call's arguments; missing ones get the defaults."""
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    def __repr__(self):
        return f"<{'tangent' if self.kind == 'tangent' else 'gradient'} rule for {self.name}>"


class _MarkerNames(gast.NodeTransformer):
    """``mindgrad.d`` or ``mg.d`` in a template: the marker ``d``, as if imported by name."""

    def __init__(self, namespace):
        self.namespace = namespace

    def visit_Attribute(self, node):
        path, root = [node.attr], node.value
        while isinstance(root, gast.Attribute):
            path.append(root.attr)
            root = root.value
        if isinstance(root, gast.Name) and root.id in self.namespace:
            obj = self.namespace[root.id]
            for part in reversed(path):
                obj = getattr(obj, part, None)
            if obj is d or obj is slope:
                name = "d" if obj is d else "slope"
                return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)
        return self.generic_visit(node)
