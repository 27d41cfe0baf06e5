"""The gradient-rule registry: one table, one decorator, shared by built-in and user rules.

A rule is a short template, output first, whose body reads like the math it stands for::

    @adjoint(np.tanh)
    def _(out, x):
        d[x] = d[out] * (1.0 - out * out)

``d[out]`` is the gradient flowing into the call's result; ``d[x] = expr`` adds ``expr`` to
the gradient of argument ``x`` (later writes accumulate). The parameters after ``out`` mirror
the differentiated function's own signature, defaults included, so calls with keywords bind as
they would in NumPy. A ``*args`` parameter stands for a tuple of arguments; ``d[args] = (...)``
gives one gradient per argument. The transformer inlines the body into the generated adjoint,
replacing each name by the argument at the call site; statements writing ``d[p]`` for an argument
that needs no gradient are dropped. Names the body reads from its module (``np``,
``unbroadcast``, ...) are resolved to those objects.

Methods and attributes of arrays have rules keyed by their name: ``@adjoint_method("sum")``
(the receiver is the parameter after ``out``) and ``@adjoint_attr("T")``.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import inspect
import sys
import textwrap
import threading
import types

import gast

from mindgrad.runtime import times_slope, unbroadcast, zero_in_zero_out
from mindgrad.runtime.tangents import broadcast_tangent

__all__ = [
    "Rule",
    "RuleError",
    "adjoint",
    "adjoint_attr",
    "adjoint_method",
    "d",
    "diagonal",
    "index_call",
    "indexed_as_call",
    "elementwise",
    "is_nondifferentiable",
    "linear",
    "linear_attr",
    "linear_in",
    "linear_method",
    "jvp_of",
    "lookup",
    "lookup_attr",
    "lookup_method",
    "lookup_tangent",
    "lookup_tangent_attr",
    "lookup_tangent_method",
    "nondifferentiable",
    "registry_version",
    "slope",
    "tangent",
    "tangent_attr",
    "tangent_method",
    "vjp_of",
]


class RuleError(Exception):
    """A rule template that cannot be used (malformed, or asked for something it lacks)."""


class _Marker:
    """The ``d`` of rule templates. It only has meaning inside a template: executing it raises."""

    def __getitem__(self, key):
        raise RuntimeError("`d[...]` only has meaning inside a gradient-rule template")

    def __setitem__(self, key, value):
        raise RuntimeError("`d[...]` only has meaning inside a gradient-rule template")

    def __repr__(self):
        return "mindgrad.rules.d"


d = _Marker()


class _SlopeMarker(_Marker):
    """The ``slope`` of ``@elementwise`` templates: ``slope[x] = dout/dx``."""

    def __repr__(self):
        return "mindgrad.rules.slope"


slope = _SlopeMarker()

_RULES: dict = {}
_TANGENTS: dict = {}
_NONDIFF: set = set()
_DECLARED_IN: dict = {}  # a constant's key -> the module that declared it (the catalog's topic)
_version = 0
_version_lock = threading.Lock()
_quiet = threading.local()  # the registrations of deferred topics (``_load_deferred``)


# Rules for optional libraries, by the module they are for: a topic module of this package
# imported only once the program itself has imported that library. A lookup that finds no rule
# loads the topics of the libraries now in sys.modules (``_load_deferred``), so `import
# mindgrad` imports none of them, and mindgrad works where they are not installed.
DEFERRED = {"scipy.special": "scipy_special", "scipy.stats": "scipy_stats",
            "scipy.linalg": "scipy_linalg", "scipy.signal": "scipy_signal",
            "scipy.integrate": "scipy_integrate"}
_pending = dict(DEFERRED)


def _load_deferred() -> bool:
    """Register the rules of the optional libraries imported since the last call; whether any
    were.

    Their registrations leave the registry's version as it was: code built before could not
    reach these functions (looking one up would have missed and loaded them), so it stays
    valid, and the build that triggers the load is not rebuilt at its next call. Only this
    thread's registrations are quiet: one another thread makes meanwhile still counts."""
    loaded = False
    for library, topic in list(_pending.items()):
        if library in sys.modules:
            _quiet.loading = getattr(_quiet, "loading", 0) + 1
            try:
                importlib.import_module(f"{__name__}.{topic}")
            finally:
                _quiet.loading -= 1
            _pending.pop(library, None)
            loaded = True
    return loaded


def _find(table, fn):
    """``table``'s entry for ``fn``, loading the deferred rules when it has none yet."""
    def get():
        try:
            return table.get(_key(fn))
        except TypeError:
            return None

    found = get()
    if found is None and _pending and _load_deferred():
        found = get()
    return found


def registry_version() -> int:
    """Bumped by every registration, so cached gradients built before it are rebuilt."""
    return _version


def _bump():
    global _version
    if getattr(_quiet, "loading", 0):
        return
    with _version_lock:
        _version += 1


def _key(fn):
    try:
        hash(fn)
        return fn
    except TypeError:
        return id(fn)


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
                 linear_in=None, via=None, diagonal=False, singular=False):
        self.kind = kind
        self.key = key
        self.template = template
        self.from_slopes = from_slopes  # an @elementwise template: the body is derived
        self.singular = singular  # an @elementwise slope that may be inf or NaN (np.log)
        self.linear_in = linear_in  # a @linear tangent: d[out] = key(..., d[p], ...) per p
        self.via = via  # the function a @linear tangent applies, if not the key itself
        self.diagonal = diagonal  # a @diagonal tangent: the adjoint template read forwards
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
            params = [_output_parameter(fdef, params)] + params
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
            self.body = _from_slopes(self, self.body)
        elif self.linear_in is not None:
            self.body = _linear_body(self, params[1:])
        elif self.diagonal:
            self.body = _diagonal_body(self, self.body)
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
                     if isinstance(sub, gast.Subscript) and _is_d(sub.value)}
            loads = {n.id for n in gast.walk(value) if isinstance(n, gast.Name)}
            if reads - set(present) or loads & dropped:
                dropped |= _stored_names(stmt)
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

    def run_with(self, marker, present=None):
        """The template as a function whose ``d`` is ``marker`` (``vjp_of``/``jvp_of``); for a
        tangent rule given the parameters ``present`` that carry tangents, only the statements
        reading those (``reading``)."""
        fn = self.runnable
        if present is not None:
            kept = self.reading(present)
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
        ``@diagonal``), not written by hand."""
        return self.from_slopes or self.linear_in is not None or self.diagonal

    def _validate(self):
        if self.kind == "tangent":
            return self._validate_tangent()
        for node in self.body:
            for sub in gast.walk(node):
                if isinstance(sub, gast.Subscript) and _is_d(sub.value):
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
                if isinstance(sub, gast.Subscript) and _is_d(sub.value):
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
        number arithmetic on it gives): it passes ``d[out]`` to a function other than
        mindgrad's runtime helpers (``np.reshape(d[out], ...)``), indexes it, reads an
        attribute of it or multiplies it with ``@``. Elementwise arithmetic on ``d[out]`` is
        safe."""
        for node in self.body:
            for sub in gast.walk(node):
                if isinstance(sub, gast.Call):
                    operands = list(sub.args) + [k.value for k in sub.keywords]
                    if any(self._is_d_out(a) for a in operands) and not self._in_runtime(sub.func) \
                            and not _elementwise(sub.func):
                        return True
                elif isinstance(sub, (gast.Subscript, gast.Attribute)) and \
                        self._is_d_out(sub.value):
                    return True
                elif isinstance(sub, gast.BinOp) and isinstance(sub.op, gast.MatMult) and \
                        (self._is_d_out(sub.left) or self._is_d_out(sub.right)):
                    return True  # 0 @ y fails: matmul takes no 0-d operand
        return False

    def _is_d_out(self, node) -> bool:
        return isinstance(node, gast.Subscript) and _is_d(node.value) and \
            isinstance(node.slice, gast.Name) and node.slice.id == self.out

    def _in_runtime(self, func) -> bool:
        """Whether ``func`` names a function of mindgrad.runtime: all of them take the
        symbolic 0, and a number 0 standing for an array (``0 * 1.0``) as any number. A helper
        marked ``runtime.takes_zero`` takes the 0 but may need the array's shape, so a rule
        passing it ``d[out]`` is guarded by ``is_zero(d_v, v)``, which tells that number; so is
        one declared ``runtime.zero_in_zero_out`` (``linear_in``), which relies on that guard
        instead of testing for 0."""
        if not isinstance(func, gast.Name):
            return False
        value = self.globals.get(func.id)
        return getattr(value, "__module__", None) == "mindgrad.runtime" and \
            not hasattr(value, "zero_in_zero_out")

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


def _elementwise(func) -> bool:
    """Whether ``func`` is ``np.where`` or an elementwise NumPy ufunc (``np.<name>``): these
    take the symbolic 0 as a number and give zeros of the shape of their other operands. A
    generalized ufunc (``np.matmul``, with a core signature) does not: it needs dimensions."""
    import numpy as np

    if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)):
        return False
    fn = getattr(np, func.attr, None)
    return fn is np.where or isinstance(fn, np.ufunc) and fn.signature is None


def _is_d(node) -> bool:
    return isinstance(node, gast.Name) and node.id == "d"


def _from_slopes(rule, body):
    """The adjoint (``d[x] = d[out] * s``) or tangent (``d[out] = d[x] * s``) statements of
    an ``@elementwise`` template's ``slope[x] = s``; other statements (temporaries) stay.

    A function of several arguments broadcasts them (``math`` functions take numbers): each
    gradient is summed back to its argument's shape (``unbroadcast``), and a tangent that a
    product with ``out`` or with every other argument does not give the output's shape is
    broadcast to it (``broadcast_tangent``: ``d[out] = broadcast_tangent(d[x], out)`` for
    ``x - y``, but ``d[out] = d[x] * y`` for ``x * y``).

    A gradient is ``times_slope(d[out], s)``: 0 where ``d[out]`` is 0, whatever the slope
    there. Expanded, it stays so where the slope may be inf or NaN: a ``singular`` rule's
    (``np.log``), or one reading a value that may be (``x * np.log(x)`` at 0, in the branch
    ``np.where`` did not take); elsewhere it is the product ``d[out] * s``
    (``compiler.expand``). Tangents stay products: a NaN tangent is where the value is NaN
    too, and ``np.where``'s tangent selects."""
    out, params = rule.out, rule.params
    if rule.kind != "tangent":
        _bind_runtime(rule, "times_slope", times_slope)
    broadcasts = len(params) > 1 and getattr(rule.key, "__module__", None) != "math"
    if broadcasts:
        _bind_runtime(rule, "unbroadcast", unbroadcast)
        _bind_runtime(rule, "broadcast_tangent", broadcast_tangent)
    reads = {}  # temporary -> the parameters and output its value reads
    derived = []
    for stmt in body:
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            else None
        if not (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)
                and target.value.id == "slope" and isinstance(target.slice, gast.Name)):
            if any(isinstance(n, gast.Name) and n.id == "slope" for n in gast.walk(stmt)):
                raise RuleError(f"the elementwise rule for {rule.name}: write slope[x] = ... "
                                "as a statement of its own")
            for name in _stored_names(stmt):
                reads[name] = _reads(stmt.value, reads)
            derived.append(stmt)
            continue
        param, factor = target.slice.id, stmt.value
        local = set(params) | {out} | set(reads)
        if rule.kind == "tangent":
            value = _times(_d_load(param), factor, local)
            shaped = _reads(factor, reads)
            if broadcasts and out not in shaped and not set(params) - {param} <= shaped:
                value = _call("broadcast_tangent", value, _name(out))
            stmt = _d_assign(out, value)
        else:
            value = _times(_d_load(out), factor, local) if _is_constant(factor, local) \
                else _call("times_slope", _d_load(out), factor)
            stmt = _d_assign(param, _call("unbroadcast", value, _name(param))
                             if broadcasts else value)
        derived.append(stmt)
    return derived


def _bind_runtime(rule, name, fn):
    """Make ``name`` in a derived body read the runtime's ``fn``."""
    if rule.globals.setdefault(name, fn) is not fn:
        raise RuleError(f"the rule for {rule.name} derives a body calling {name}, which its "
                        "module binds to something else")


def _stored_names(stmt):
    """The names an assignment assigns (not a comprehension's variables in its value)."""
    return {n.id for target in getattr(stmt, "targets", []) for n in gast.walk(target)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _reads(expr, temporaries):
    """The names ``expr`` reads, with what the temporaries among them read."""
    names = set()
    for n in gast.walk(expr):
        if isinstance(n, gast.Name):
            names.add(n.id)
            names |= temporaries.get(n.id, set())
    return names


def _is_constant(factor, local) -> bool:
    """Whether a slope reads no parameter, output or temporary (``math.pi / 180.0``)."""
    return not _reads(factor, {}) & local


def _times(g, factor, local):
    """``g`` times ``factor``: a factor that reads no parameter, output or temporary is a
    constant, multiplied as one number (``d[x] * (math.pi / 180.0)``); else ``scaled``."""
    if isinstance(factor, gast.BinOp) and not _reads(factor, {}) & local:
        return gast.BinOp(left=g, op=gast.Mult(), right=factor)
    return scaled(g, factor)


def _call(name, *args):
    return gast.Call(func=_name(name), args=list(args), keywords=[])


def _d_load(name):
    return gast.Subscript(value=gast.Name(id="d", ctx=gast.Load(), annotation=None,
                                          type_comment=None),
                          slice=gast.Name(id=name, ctx=gast.Load(), annotation=None,
                                          type_comment=None),
                          ctx=gast.Load())


def _d_assign(name, value):
    target = _d_load(name)
    target.ctx = gast.Store()
    return gast.Assign(targets=[target], value=value, type_comment=None)


def scaled(g, factor):
    """``g`` times ``factor`` written as a person would: ``g * a / b`` for ``a / b``, ``g / b``
    for ``1.0 / b``, ``-g * a`` for ``-a``, ``g * (a + b)`` otherwise."""
    if isinstance(factor, gast.BinOp) and isinstance(factor.op, (gast.Mult, gast.Div)):
        return gast.BinOp(left=scaled(g, factor.left), op=factor.op, right=factor.right)
    if isinstance(factor, gast.UnaryOp) and isinstance(factor.op, gast.USub):
        return scaled(gast.UnaryOp(op=gast.USub(), operand=g), factor.operand)
    if isinstance(factor, gast.Constant) and not isinstance(factor.value, bool) and \
            factor.value == 1:
        return g
    return gast.BinOp(left=g, op=gast.Mult(), right=factor)


def elementwise(*fns, singular=False):
    """Register the adjoint and the tangent of elementwise functions from their slopes, one
    per argument, ``dout/dx``::

        @elementwise(np.tanh, math.tanh)
        def _(out, x):
            slope[x] = 1.0 - out * out

    gives ``d[x] = d[out] * (1.0 - out * out)`` (reverse mode) and ``d[out] = d[x] * (1.0 -
    out * out)`` (forward mode). A template may assign temporaries before its slopes. For a
    function of several arguments (``np.arctan2``) the gradients are summed back to each
    argument's shape, and the tangents broadcast to the output's (see ``_from_slopes``); an
    argument without a slope (the sign of ``np.copysign``) gets no gradient.

    ``singular=True`` for a function whose slope is inf or NaN on part of its domain (a pole,
    or outside the domain: ``np.log``, ``np.sqrt``, ``x / y``): its gradient is
    ``times_slope(d[out], s)``, 0 wherever ``d[out]`` is 0, so that the branch ``np.where``
    did not take gives no NaN; so are its results' (``compiler.expand.unbounded_names``). A
    slope finite wherever its operands are (``np.tanh``, ``2 * x`` for ``x ** 2``) reading
    none of those is the plain product.
    """
    if not fns:
        raise TypeError("elementwise() needs at least one function to register a rule for")

    def decorate(template):
        _register(fns, template, "adjoint", from_slopes=True, singular=singular)
        _register(fns, template, "tangent", from_slopes=True)
        return template

    return decorate


def _register(keys, template, kind="adjoint", **derive):
    table = _TANGENTS if kind == "tangent" else _RULES
    # a user's rule is checked when registered, so a malformed one fails at its decorator;
    # mindgrad's own are tested, and parsed when first used
    lazy = getattr(template, "__module__", "").startswith("mindgrad.")
    for key in keys:
        table[_key(key)] = Rule(key, template, kind, lazy=lazy, **derive)
        if kind == "adjoint":  # a tangent alone does not make a function differentiable
            _NONDIFF.discard(_key(key))
    _bump()
    return template


def _callee(rule, fn):
    """An expression naming ``fn`` as the template's module would write it: its own name where
    the module binds it (or a builtin), ``np.reshape`` where the module has ``np``,
    ``np.multiply.outer`` for a method of a ufunc, else a name added to the rule's namespace."""
    name = getattr(fn, "__name__", None)
    if isinstance(name, str) and name.isidentifier():
        if rule.globals.get(name, getattr(builtins, name, None)) is fn:
            return _name(name)  # bound in the module, or a builtin it does not shadow
        for module_name, module in sorted(rule.globals.items()):
            if isinstance(module, types.ModuleType) and getattr(module, name, None) is fn:
                return gast.Attribute(value=_name(module_name), attr=name, ctx=gast.Load())
        home = getattr(fn, "__module__", None) or ""
        for module_name, module in sorted(rule.globals.items()):  # np.fft.rfft where np is bound
            if isinstance(module, types.ModuleType) and home.startswith(module.__name__ + "."):
                path, owner = home[len(module.__name__) + 1:].split("."), module
                for part in path:
                    owner = getattr(owner, part, None)
                if getattr(owner, name, None) is fn:
                    node = _name(module_name)
                    for part in path + [name]:
                        node = gast.Attribute(value=node, attr=part, ctx=gast.Load())
                    return node
        owner = getattr(fn, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType) and \
                getattr(owner, name, None) == fn:  # np.multiply.outer: a new object each time
            return gast.Attribute(value=_callee(rule, owner), attr=name, ctx=gast.Load())
    alias = f"{name if isinstance(name, str) and name.isidentifier() else 'linear_fn'}_"
    rule.globals[alias] = fn
    return _name(alias)


def _name(ident):
    return gast.Name(id=ident, ctx=gast.Load(), annotation=None, type_comment=None)


def _is_out_buffer(p) -> bool:
    """NumPy's ``out=None``: where a call writes its result; a tangent is a new array."""
    return p.name == "out" and p.default is None


def _linear_body(rule, params):
    """``d[out] = f(..., d[p], ...)`` for each parameter ``p`` a ``@linear`` rule is linear in:
    the function applied to the tangent, its other arguments as the call gave them (positional
    parameters by position, keyword-only ones by keyword; defaults are dropped when the
    template is expanded; NumPy's ``out=`` buffer is not passed on). An array method applies to
    the receiver's tangent (``d[a].ravel(order)``), an attribute reads it (``d[x].T``); with
    ``via``, that function is applied instead, the receiver first."""
    kinds = inspect.Parameter
    names = [p.name for p in params]
    for p in rule.linear_in:
        if p not in names:
            raise RuleError(f"the linear rule for {rule.name} names {p!r}, which is not a "
                            f"parameter of its template")
    if any(p.kind in (kinds.VAR_POSITIONAL, kinds.VAR_KEYWORD) for p in params
           if p.name in rule.linear_in):
        raise RuleError(f"the linear rule for {rule.name}: a *args or **kwargs parameter needs "
                        "a hand-written tangent")
    body = []
    for wrt in rule.linear_in:
        def arg(p, wrt=wrt):
            return _d_load(p.name) if p.name == wrt else _name(p.name)

        if isinstance(rule.key, tuple) and rule.key[0] == "attr" and rule.via is None:
            call = gast.Attribute(value=arg(params[0]), attr=rule.key[1], ctx=gast.Load())
        else:
            rest = params
            if rule.via is not None:
                func = _callee(rule, rule.via)
            elif isinstance(rule.key, tuple):  # a method: the receiver is the first parameter
                func = gast.Attribute(value=arg(params[0]), attr=rule.key[1], ctx=gast.Load())
                rest = params[1:]
            else:
                func = _callee(rule, rule.key)
            args, keywords, by_keyword = [], [], False
            for p in rest:
                if _is_out_buffer(p) and not rule.of_helper:
                    by_keyword = True  # the parameters after it are passed by name
                elif p.kind is kinds.VAR_POSITIONAL:
                    args.append(gast.Starred(value=arg(p), ctx=gast.Load()))
                elif p.kind is kinds.VAR_KEYWORD:
                    keywords.append(gast.keyword(arg=None, value=_name(p.name)))
                elif p.kind is kinds.KEYWORD_ONLY or by_keyword:
                    keywords.append(gast.keyword(arg=p.name, value=arg(p)))
                else:
                    args.append(arg(p))
            call = gast.Call(func=func, args=args, keywords=keywords)
        body.append(_d_assign(rule.out, call))
    return body


def _output_parameter(fdef, params):
    """The output parameter a ``@linear_in`` helper's rule reads: ``out``, unless the helper
    has a parameter of that name (then ``ans``); added to the def's arguments in front."""
    taken = {p.name for p in params}
    name = next(n for n in ("out", "ans", "result", "out_") if n not in taken)
    node = gast.Name(id=name, ctx=gast.Param(), annotation=None, type_comment=None)
    (fdef.args.posonlyargs or fdef.args.args).insert(0, node)
    fdef.decorator_list = []
    return inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def linear(*fns, wrt=None, via=None):
    """Derive the tangent of functions linear in some of their arguments from a template's
    signature: the function applied to the tangent. Stack it on the hand-written adjoint::

        @linear(np.reshape)                  # d[out] = np.reshape(d[a], shape, order)
        @adjoint(np.reshape)
        def _(out, a, shape=None, order="C", *, copy=None):
            d[a] = np.reshape(d[out], np.shape(a))

    ``wrt`` names the parameters the function is linear in (the first one by default); naming
    several makes it multilinear, one term per parameter: ``@linear(np.dot, wrt=("a", "b"))``
    gives ``d[out] = np.dot(d[a], b)`` and ``d[out] = np.dot(a, d[b])``. Keys made by
    ``adjoint_method``/``adjoint_attr`` names work too: ``linear(("method", "ravel"))``.
    ``via`` is the function the tangent applies where it is not each key itself: the one that
    implements an operator or a method (``@linear(operator.matmul, np.matmul, via=np.matmul)``
    gives ``np.matmul(d[x], y)`` for both; a method's receiver is then passed first).
    """
    if not fns:
        raise TypeError("linear() needs at least one function to register a rule for")
    if isinstance(wrt, str):
        wrt = (wrt,)

    def decorate(template):
        params = list(inspect.signature(template).parameters)[1:]
        names = tuple(wrt) if wrt is not None else tuple(params[:1])
        return _register(fns, template, "tangent", linear_in=names, via=via)

    return decorate


def linear_method(*names, wrt=None, via=None):
    """``@linear`` for the array methods ``names`` (the receiver follows ``out``)."""
    return linear(*(("method", n) for n in names), wrt=wrt, via=via)


def linear_attr(*names):
    """``@linear`` for the array attributes ``names`` (``x.T``)."""
    return linear(*(("attr", n) for n in names))


def linear_in(*names, keeps_values=False):
    """Declare a helper of gradient code linear in its arguments ``names`` (its gradient, and
    the factors of a product) and constant in the others, which it reads for shapes, dtypes,
    masks or orders::

        @linear_in("g", "y")
        def matmul_grad_x(g, x, y):
            ...

    Two things follow, and neither is written again. Its tangent (forward mode over gradient
    code) is derived from its own signature: ``d[out] = matmul_grad_x(d[g], x, y)`` and
    ``d[out] = matmul_grad_x(g, x, d[y])``. And a symbolic zero in any of ``names`` gives the
    symbolic zero, which the helper does not test for: ``runtime.zero_in_zero_out`` says who
    does. A helper that also moves with another argument (``norm_grad`` with ``x``) declares
    only its zero (``runtime.zero_in_zero_out``) and has its tangent written out.
    ``keeps_values``: given values, it returns a value, never the 0 (as
    ``runtime.takes_zero``), which lets the optimizer drop later guards.
    """
    def decorate(fn):
        lazy = getattr(fn, "__module__", "").startswith("mindgrad.")
        zero_in_zero_out(*names, keeps_values=keeps_values)(fn)
        _TANGENTS[_key(fn)] = Rule(fn, fn, "tangent", lazy=lazy, linear_in=names)
        _bump()
        return fn

    return decorate


def diagonal(*fns):
    """Derive the tangent of elementwise functions whose derivative is applied by a helper or a
    mask rather than a slope (``np.maximum``, ``np.where``) from the adjoint template below it::

        @diagonal(np.maximum)
        @adjoint(np.maximum)
        def _(out, x, y):
            d[x] = unbroadcast(maximum_grad(d[out], x, y), x)
            ...

    gives ``d[out] = broadcast_tangent(maximum_grad(d[x], x, y), out)``. An elementwise
    function has a diagonal (real) Jacobian: the map an adjoint applies to ``d[out]`` is its
    own transpose, so the tangent applies it to ``d[x]``; ``unbroadcast(e, x)``, the transpose
    of broadcasting, becomes ``broadcast_tangent(e, out)``.
    """
    if not fns:
        raise TypeError("diagonal() needs at least one function to register a rule for")

    def decorate(template):
        return _register(fns, template, "tangent", diagonal=True)

    return decorate


def _diagonal_body(rule, body):
    """The tangent statements of a ``@diagonal`` rule from its adjoint template's ``d[x] = e``:
    ``d[out] = e`` with ``d[out]`` read as ``d[x]`` and ``unbroadcast(., x)`` as
    ``broadcast_tangent(., out)``."""
    _bind_runtime(rule, "broadcast_tangent", broadcast_tangent)
    derived = []
    for stmt in body:
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            else None
        if isinstance(target, gast.Subscript) and _is_d(target.value):
            param = target.slice.id
            reads = [n for n in gast.walk(stmt.value)
                     if isinstance(n, gast.Subscript) and _is_d(n.value)]
            if not reads:
                raise RuleError(f"the diagonal rule for {rule.name}: d[{param}] = ... must "
                                f"read d[{rule.out}]")
            derived.append(_d_assign(rule.out, _Forwards(rule, param).visit(stmt.value)))
        elif any(isinstance(n, gast.Subscript) and _is_d(n.value) for n in gast.walk(stmt)):
            raise RuleError(f"the diagonal rule for {rule.name}: a temporary may not read "
                            "d[...]")
        else:
            derived.append(stmt)
    return derived


class _Forwards(gast.NodeTransformer):
    """An adjoint statement's value for ``d[param]`` read forwards (``_diagonal_body``)."""

    def __init__(self, rule, param):
        self.rule, self.param = rule, param

    def visit_Subscript(self, node):
        if _is_d(node.value):
            return _d_load(self.param)
        return self.generic_visit(node)

    def visit_Call(self, node):
        node = self.generic_visit(node)
        func = node.func
        if isinstance(func, gast.Name) and self.rule.globals.get(func.id) is unbroadcast and \
                len(node.args) == 2 and isinstance(node.args[1], gast.Name) and \
                node.args[1].id == self.param:
            return _call("broadcast_tangent", node.args[0], _name(self.rule.out))
        return node


def tangent(*fns):
    """Register a forward-mode (tangent) rule template for ``fns``::

        @tangent(np.tanh)
        def _(out, x):
            d[out] = d[x] * (1.0 - out * out)

    ``d[x]`` is the tangent of argument ``x``; each ``d[out] = ...`` adds one input's
    contribution to the output's tangent.
    """
    if not fns:
        raise TypeError("tangent() needs at least one function to register a rule for")

    def decorate(template):
        return _register(fns, template, "tangent")

    return decorate


def tangent_method(*names):
    """Register a tangent rule for the array methods ``names`` (the receiver follows ``out``)."""
    return tangent(*(("method", n) for n in names))


def tangent_attr(*names):
    """Register a tangent rule for the array attributes ``names``."""
    return tangent(*(("attr", n) for n in names))


def lookup_tangent(fn):
    return _find(_TANGENTS, fn)


def lookup_tangent_method(name):
    return _TANGENTS.get(("method", name))


def lookup_tangent_attr(name):
    return _TANGENTS.get(("attr", name))


def adjoint(*fns, singular=False):
    """Register a gradient-rule template for the functions ``fns`` (see the module docstring).
    ``singular``: as for ``@elementwise``, the functions' results may be inf or NaN where their
    arguments are finite (``np.float_power(x, 0.5)`` below 0), and the products with slopes
    reading them are ``times_slope``."""
    if not fns:
        raise TypeError("adjoint() needs at least one function to register a rule for")

    def decorate(template):
        return _register(fns, template, singular=singular)

    return decorate


def adjoint_method(*names):
    """Register a rule for the array methods ``names`` (the receiver follows ``out``)."""
    return adjoint(*(("method", n) for n in names))


def adjoint_attr(*names):
    """Register a rule for the array attributes ``names``: ``def _(out, x)``."""
    return adjoint(*(("attr", n) for n in names))


def nondifferentiable(*fns):
    """Declare ``fns`` as having no gradient: their results are constants."""
    module = inspect.currentframe().f_back.f_globals.get("__name__")
    for fn in fns:
        _NONDIFF.add(_key(fn))
        _DECLARED_IN[_key(fn)] = module
        _RULES.pop(_key(fn), None)
        _TANGENTS.pop(_key(fn), None)
    _bump()


_INDEXED: dict = {}  # an object whose obj[...] computes (np.r_) -> the function computing it


def indexed_as_call(obj, fn):
    """Declare that ``obj[a, b, ...]`` computes ``fn(a, b, ...)`` (a slice ``i:j`` passed as
    ``slice(i, j)``): the transformer writes the call, and ``fn``'s rules differentiate it."""
    _INDEXED[id(obj)] = (obj, fn)
    _bump()


def index_call(obj):
    """The function ``obj[...]`` computes as a call (``indexed_as_call``), or None."""
    found = _INDEXED.get(id(obj))
    return found[1] if found is not None and found[0] is obj else None


def lookup(fn):
    """The rule for ``fn``, or None."""
    return _find(_RULES, fn)


def lookup_method(name):
    return _RULES.get(("method", name))


def lookup_attr(name):
    return _RULES.get(("attr", name))


def is_nondifferentiable(fn) -> bool:
    def get():
        try:
            return _key(fn) in _NONDIFF
        except TypeError:
            return False

    return get() or bool(_pending) and _load_deferred() and get()


class _Recorder:
    """Plays ``d`` when a template is run directly: keyed by the identity of the values."""

    def __init__(self, out, g, slots):
        self.out, self.g, self.slots, self.grads = out, g, slots, {}

    def __getitem__(self, value):
        if value is self.out:
            return self.g
        raise RuntimeError("a template may only read d[out]")

    def __setitem__(self, value, grad):
        from mindgrad.runtime import add

        for name, v in self.slots.items():
            same = v is value or (isinstance(v, tuple) and isinstance(value, tuple)
                                  and len(v) == len(value)
                                  and all(a is b for a, b in zip(v, value)))
            if same:
                self.grads[name] = add(self.grads.get(name, 0), grad)
                return
        raise RuntimeError("d[...] written for a value that is not an argument")


def vjp_of(fn, *args, **kwargs):
    """Run ``fn`` and return ``(out, vjp)`` using only its registered rule, as a check on rules.

    ``vjp(g)`` returns one gradient per positional argument of the call (0 where the rule gives
    none). The transformer inlines the same template; this evaluates it directly, and as
    generated code does not run a template that cannot take a zero ``g``.
    """
    key = kwargs.pop("_key", fn)
    rule = _find(_RULES, key)
    if rule is None:
        raise RuleError(f"no gradient rule registered for {key!r}")
    out = fn(*args, **kwargs)
    bound = rule.bind(args, kwargs)

    def vjp(g):
        from mindgrad.runtime import is_zero

        if rule.reads_zero_unsafely and is_zero(g, out):
            return (0,) * len(args)  # as generated code, which guards such a rule
        recorder = _Recorder(out, g, bound)
        body = rule.run_with(recorder)
        pos = [bound[p] for p in rule.params if p not in rule.varargs and
               rule.signature.parameters[p].kind not in (inspect.Parameter.KEYWORD_ONLY,
                                                         inspect.Parameter.VAR_KEYWORD)]
        star = [v for p in rule.params if p in rule.varargs for v in bound[p]]
        kw = {p: bound[p] for p in rule.params
              if rule.signature.parameters[p].kind is inspect.Parameter.KEYWORD_ONLY}
        body(out, *pos, *star, **kw)
        # one gradient per positional argument of the call, in call order
        flat = []
        for p in rule.params:
            if p in rule.varargs:
                grads = recorder.grads.get(p, 0)
                flat.extend([0] * len(bound[p]) if is_zero(grads) else grads)
            else:
                flat.append(recorder.grads.get(p, 0))
        return tuple(flat[: len(args)])

    return out, vjp


class _TangentRecorder:
    """Plays ``d`` when a tangent template is run directly."""

    def __init__(self, tangents):
        self.tangents, self.out = tangents, 0

    def __getitem__(self, value):
        for v, t in self.tangents:
            same = v is value or (isinstance(v, tuple) and isinstance(value, tuple) and
                                  len(v) == len(value) and all(a is b for a, b in zip(v, value)))
            if same:
                return t
        return 0

    def __setitem__(self, value, tangent):
        from mindgrad.runtime import add

        self.out = add(self.out, tangent)


def jvp_of(fn, *args, **kwargs):
    """Run ``fn`` and return ``(out, jvp)`` using only its registered tangent rule.

    ``jvp(*tangents)`` takes one tangent per positional argument (None for none) and returns
    the output's tangent, evaluating the template directly, as a check on tangent rules; as in
    generated code, the statements reading an argument without tangent do not run.
    """
    key = kwargs.pop("_key", fn)
    rule = _find(_TANGENTS, key)
    if rule is None:
        raise RuleError(f"no tangent rule registered for {key!r}")
    out = fn(*args, **kwargs)
    bound = rule.bind(args, kwargs)

    def jvp(*tangents):
        by_value = []
        flat = list(args)
        for value, t in zip(flat, tangents):
            if t is not None:
                by_value.append((value, t))
        for name in rule.varargs:
            known = {id(v): t for v, t in by_value}
            parts = [known.get(id(v), 0) for v in bound[name]]
            by_value.append((bound[name], tuple(parts)))
        recorder = _TangentRecorder(by_value)
        given = {id(v) for v, t in by_value[:len(by_value) - len(rule.varargs)]}
        present = {p for p in rule.params if (any(id(v) in given for v in bound[p])
                                              if p in rule.varargs else id(bound[p]) in given)}
        body = rule.run_with(recorder, present)
        kinds = inspect.Parameter
        pos = [bound[p] for p in rule.params if p not in rule.varargs and
               rule.signature.parameters[p].kind not in (kinds.KEYWORD_ONLY, kinds.VAR_KEYWORD)]
        star = [v for p in rule.params if p in rule.varargs for v in bound[p]]
        kw = {p: bound[p] for p in rule.params
              if rule.signature.parameters[p].kind is kinds.KEYWORD_ONLY}
        body(out, *pos, *star, **kw)
        return recorder.out

    return out, jvp
