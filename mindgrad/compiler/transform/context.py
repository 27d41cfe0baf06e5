"""The context a transformation writes one function in: ``FunctionContext``.

Every writer (reverse mode's adjoints, forward mode's tangents, and any new one) needs the
function and its locals, the names its code reaches objects by (``naming.Namespace``), what its
names and callees refer to (``analysis.Resolver``), the facts of the analysis (which names are
active, numbers, sequences, real), which names hold arrays of one shape (shape tokens), the
aliasing checks on in-place writes, and the arguments a call of the user's code passes. A
transformation extends it with its own state (``reverse_context.ReverseContext``,
``forward.ForwardContext``); every attribute is set in ``__init__``.
"""

from __future__ import annotations

import copy
import inspect
import linecache

import gast

from mindgrad import rules, runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler import naming
from mindgrad.compiler.facts import aliasing
from mindgrad.compiler.facts.analysis import (
    Resolver,
    argument_write_error,
    as_method,
    in_place_write,
    user_code,
)
from mindgrad.compiler.finish import emit
from mindgrad.compiler.marks import comment
from mindgrad.compiler.transform import operations
from mindgrad.compiler.transform.expand import literal
from mindgrad.errors import Located, UnsupportedSyntaxError, located


class FunctionContext(Located):
    """One normalized function (``fdef``, a copy the writers may change) of ``src``,
    transformed for ``active_params`` with the facts ``analysis`` found. ``names`` makes its
    fresh names; ``callees`` gives the names of the functions its calls of the user's code
    reach (see callees.py); ``rule_of`` is the table of rules the transformation applies
    (``rules.lookup`` for adjoints, ``rules.lookup_tangent`` for tangents): a call of a
    function without such a rule, whose source mindgrad can read, is transformed as a callee
    (``callee_of``). ``reals``: the names known real, where the transformation tells real
    from complex results (None: it does not). ``mutable``: array arguments the aliasing
    checks guard besides the parameters that are not numbers."""

    def __init__(self, src, fdef, active_params, names, callees, analysis, *, rule_of,
                 arguments_shared, reads_weights=None, reals=None, mutable=()):
        self.src = src
        self.fdef = A.clone(fdef)
        self.params = [a.id for a in self.fdef.args.args]
        self.active_params = list(active_params)
        self.fresh = names
        self.callees = callees
        self.rule_of = rule_of
        self.arguments_shared = arguments_shared  # the user's code calls it: see aliasing.py
        self.local_names = set(self.params) | {a.id for a in self.fdef.args.kwonlyargs} | \
            A.assigned_names(self.fdef.body)
        self.namespace = naming.Namespace(src, self.local_names, names)
        self.resolve = Resolver(src, self.local_names, reads_weights)
        self.resolve.values = analysis.values
        self.active = set(analysis.active)
        self.scalars = set(analysis.scalars)
        self.containers = set(analysis.containers)
        self.numeric = set(analysis.numeric)  # arrays or numbers at every assignment: no lists
        self.reals = reals
        self.shapes = {}
        self.pure = set()          # names the optimizer may treat as pure: adjoints, tangents
        self.impure_calls = set()  # calls the optimizer must keep
        self.unbounded = set()     # values that may be inf or NaN (see expand.unbounded_names)
        self.number_checks = {}    # see check_aliasing
        self.aliases = self.check_aliasing((set(self.params) - self.scalars) | set(mutable))

    # ----- names ---------------------------------------------------------------------------

    def bind(self, obj, preferred: str) -> str:
        return self.namespace.bind(obj, preferred)

    def helper(self, fn) -> gast.Name:
        return self.namespace.helper(fn)

    def is_active(self, node) -> bool:
        key = self.resolve.key(node)
        return key is not None and key in self.active

    def strict_zero_test(self, s, name, value):
        """``(s, value)``, but ``name = is_any_zero(g)`` in mindgrad's own helpers, ``g`` one
        the derivative follows, written ``name = is_zero(g)``. ``is_any_zero`` takes a number
        0 for the symbolic zero, and a helper linear in ``g`` returns 0 at once; where ``g`` is
        a value that is 0, the helper's derivative is not 0, and must come from the branch
        that computes (the second derivative of ``np.sum(x) ** 2`` where the sum was 0 was 0).
        """
        if self.src.is_mindgrad_code and isinstance(value, gast.Call) and value.args and \
                self.resolve(value.func) is runtime.is_any_zero and \
                any(self.is_active(a) for a in value.args):
            value = A.call(self.helper(runtime.is_zero), *[A.clone(a) for a in value.args])
            s = A.assign(name, value, s)
        return s, value

    def is_active_call(self, call) -> bool:
        """Whether ``call`` reads a value the derivative follows: an active argument or
        receiver, or (a call of the user's code) a weight asked for."""
        operands = list(call.args) + [k.value for k in call.keywords]
        receiver = self.resolve.receiver(call.func)
        if receiver is not None:
            operands.append(receiver)
        if any(self.is_active(o) for o in operands):
            return True
        # a call of the user's own code may read weights even with constant arguments
        return self.resolve.reads_weights(call.func)

    def callee_of(self, call):
        """``(function, bound self or None, self expression)`` when ``call`` runs the user's own
        code (a function, a method, a Cell, a callable object) that has no rule in this
        transformation; otherwise None (tangent_pop pops in place: operations.TangentPop)."""
        func = call.func
        if self.resolve.receiver(func) is not None:
            return None
        target = self.resolve(func)
        if target is None or target is runtime.tangent_pop or self.rule_of(target) is not None or \
                rules.is_nondifferentiable(target) or (
                    not isinstance(target, type) and self.rule_of(type(target)) is not None):
            return None
        # generated code (grad of grad) calls mindgrad's helpers: differentiated from source
        return as_method(self.src, call, user_code(
            target, func, allow_helpers=True, nargs=len(call.args),
            keywords=[k.arg for k in call.keywords]))

    def dispatched(self, call, dispatcher):
        """A call the run-time dispatcher differentiates (``operations.dynamic_parts``):
        ``(active, label, made, passed)``: its active arguments as ``(position, node)`` (an
        index, or a keyword's name), a label for the names of its functions, the dispatcher's
        call ``dispatcher(f, [stars,] positions, *args, **kw)`` (``dispatcher(starred)`` is
        ``expansions.dynamic_split`` or ``dynamic_tangent``) and the arguments the function it
        gives takes, every one by position; only the first two where no argument is active."""
        func, stars, call = operations.dynamic_parts(call, self.resolve)
        active = [(i, a) for i, a in enumerate(call.args) if self.is_active(a)]
        active += [(k.arg, k.value) for k in call.keywords if self.is_active(k.value)]
        label = func.id if isinstance(func, gast.Name) else "fn"
        if not active:
            return active, label, None, None
        made = A.call(self.helper(dispatcher(bool(stars))), A.clone(func),
                      *([A.tuple_([A.const(i) for i in stars])] if stars else []),
                      A.tuple_([A.const(p) for p, _ in active]),
                      *[A.clone(a) for a in call.args])
        made.keywords = [gast.keyword(arg=k.arg, value=A.clone(k.value)) for k in call.keywords]
        passed = [A.clone(a) for a in call.args] + [A.clone(k.value) for k in call.keywords]
        return active, label, made, passed

    def index_value(self, index):
        """A subscript's index as an expression that can be passed to a function."""
        index = as_load(A.clone(index))
        if not any(isinstance(sub, gast.Slice) for sub in A.walk(index)):
            return index
        import numpy

        return A.subscript(A.attr(A.load(self.bind(numpy, "np")), "s_"), index)

    def comment_on(self, what, lineno):
        """``# <what>: <the user's line>``, above the code written for that line."""
        line = _Line(lineno)
        return comment(f"{what}: " + self.src.text_of(self.src.line_of(line)).strip(), line)

    def refuse_lost_write(self, s, call):
        """Refuse the expression statement ``s`` calling ``call`` where it writes into a
        differentiated array in place (``np.add(x, y, out=x)``) or calls the user's function
        that writes into its argument, a change the derivative cannot follow."""
        problem = in_place_write(call, self.resolve, self.is_active)
        callee = self.callee_of(call)
        if not problem and callee is not None and self.is_active_call(call):
            problem = argument_write_error(callee[0])
        if problem:
            self.fail(s, problem)

    def fail_when_run(self, s, message, error, what):
        """Statements raising ``error`` for ``message`` when they run, where ``fail`` would
        raise it now: for an operation on what the arguments decide (an attribute or method
        without a rule, a function held in a variable), which may sit in a branch that they
        never take (``if isinstance(c, Box): v = c.value`` with ``c`` an array). ``what``
        names it in the generated code. In generated code (grad of grad), the error names the
        user's line."""
        filename, lineno = self.src.filename, self.src.line_of(s)
        text = self.src.text_of(lineno)
        found = emit.origin(filename, lineno) if self.src.is_mindgrad_code else None
        if found is not None:
            filename, lineno = found[:2]
            text = linecache.getline(filename, lineno)
        made = _Failure(located(error, message, filename, lineno, text))
        name = self.bind(made, what)
        return [A.located(gast.Raise(exc=A.call(A.load(name)), cause=None), s)]

    def check_receiver(self, s, func, error):
        """Statements refusing, where it runs, the method call ``func`` when its receiver, of a
        kind not known when the code is built, is an object whose method of that name is the
        user's code (``acc.count(x)``, ``box.sum()``): the rules of arrays, lists, dicts and
        strings do not apply to it. Nothing where the receiver is known to be such a value."""
        receiver = self.resolve.receiver(func)
        if self.resolve.known_value(receiver):
            return []
        refuse = self.fail_when_run(
            s, f".{func.attr}() is called on a local value that is not an array, a number, a "
               "list, a dict or a string (a module, an object of the user's class), whose "
               "method mindgrad cannot follow: the rules of arrays' methods do not apply to it. "
               "Call it through a name known before the function runs (a module imported at "
               "the top of the file, a global object, an attribute of self) or as a function "
               f"(ClassName.{func.attr}(obj, ...))", error,
            f"user_method_{func.attr}")
        test = A.call(self.helper(runtime.user_method), A.load(receiver.id), A.const(func.attr))
        return [A.if_(test, refuse, like=s)]

    def after_check(self, s, checked, write, error, what):
        """``checked`` (``check_receiver``'s statements) then those ``write()`` gives for a
        method's rule. Where the receiver is checked when it runs, a rule that does not fit the
        call (a user's method taking other arguments) is an error where it runs too, after
        the check, which names the user's method first."""
        if not checked:
            return write()
        try:
            return checked + write()
        except error as e:
            message = str(e).split("\n  at ")[0]
            return checked + self.fail_when_run(s, message, error, f"no_rule_for_{what}")

    # ----- shapes --------------------------------------------------------------------------
    # Within a straight-line block, an elementwise operation whose array operands have one shape
    # gives that shape, so unbroadcast between them (broadcast in forward mode) is the identity.
    # A "token" names a shape; names assigned in a loop or branch get a fresh token after it.

    def is_scalar(self, node) -> bool:
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (int, float, complex))
        return isinstance(node, gast.Name) and node.id in self.scalars

    def is_real(self, node) -> bool:
        """Whether ``node`` is known to hold a real value (``activity.real_names``)."""
        if isinstance(node, gast.Constant):
            return not isinstance(node.value, complex)
        return isinstance(node, gast.Name) and node.id in (self.reals or ())

    def token(self, node):
        if self.is_scalar(node):
            return "scalar"
        if not isinstance(node, gast.Name):
            return None
        if node.id not in self.shapes:
            self.shapes[node.id] = object()
        return self.shapes[node.id]

    def result_token(self, value):
        """The shape token of ``value``'s result, or a fresh one when it is not known."""
        operands = None
        if isinstance(value, gast.Name):
            return self.token(value)
        if isinstance(value, gast.BinOp) and self.may_join_sequences(value):
            return object()  # [a, b] * 2 and xs + xs are longer than their operands
        if isinstance(value, gast.BinOp) and not isinstance(value.op, gast.MatMult):
            operands = [value.left, value.right]
        elif isinstance(value, gast.UnaryOp):
            operands = [value.operand]
        elif isinstance(value, gast.Call) and not value.keywords:
            func = value.func
            if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
                    and func.value.id in self.local_names:
                if func.attr in ("astype", "copy", "conj", "clip"):
                    return self.token(func.value)
            else:
                import numpy

                fn = self.resolve(func)
                if isinstance(fn, numpy.ufunc) and fn.nout == 1:
                    operands = list(value.args)
        if operands:
            tokens = {self.token(o) for o in operands} - {"scalar"}
            if not tokens:
                return "scalar"
            if len(tokens) == 1 and None not in tokens:
                return tokens.pop()
        return object()

    def may_join_sequences(self, value) -> bool:
        """Whether ``x * n`` or ``x + y`` may repeat or concatenate lists or tuples: an operand
        not known to be a number or an array, times what may be an int (a float cannot repeat
        a list), or plus another such operand."""
        numeric, scalars = self.numeric, self.scalars

        def unknown(node):
            return isinstance(node, gast.Name) and node.id not in numeric and \
                node.id not in scalars

        def may_be_int(node):  # a number held in a name may be an int
            return isinstance(node, gast.Constant) and type(node.value) is int or \
                isinstance(node, gast.Name)

        left, right = value.left, value.right
        if isinstance(value.op, gast.Mult):
            if isinstance(left, gast.Name) and isinstance(right, gast.Name) and \
                    left.id == right.id:
                return False  # x * x: a sequence cannot multiply a sequence
            return unknown(left) and may_be_int(right) or unknown(right) and may_be_int(left)
        return isinstance(value.op, gast.Add) and unknown(left) and unknown(right)

    def same_shape(self, node, out_name) -> bool:
        a, b = self.token(node), self.shapes.get(out_name)
        return a is not None and a is b or (a == "scalar" and self.is_scalar(A.load(out_name)))

    def forget_shapes(self, names):
        for name in names:
            self.shapes.pop(name, None)

    # ----- writes into arrays --------------------------------------------------------------

    def check_aliasing(self, mutable_params):
        """The aliasing facts of the function (see aliasing.py), its refusals raised now, or
        for generated code (differentiated again), only the facts. An in-place operator on
        what may be an argument is checked at run time (see number_check): a number is
        rebound."""
        # id(statement) -> (the name, which must not hold an array; the live name it would
        # change, None for the caller's array)
        checked = not self.src.is_mindgrad_code
        aliases = aliasing.Aliases(self.fdef, self.scalars, self.containers, self.resolve,
                                   self.fail if checked else None, mutable_params,
                                   lambda s, name, shared=None:
                                   self.number_checks.__setitem__(id(s), (name, shared)))
        aliases.checked = checked
        return aliases

    def number_check(self, s):
        """Before an in-place operator on what may be the caller's argument: a check that it
        holds a number (rebound), not an array (NumPy would write into the caller's array)."""
        name, shared = self.number_checks.get(id(s), (None, None))
        if name is None:
            return []
        lineno = self.src.line_of(s)
        where = "an array the caller passed in (or a view of it)" if shared is None else \
            f"the memory of {shared!r}, read afterwards ({name} holds a view of it, not a " \
            f"number)"
        error = UnsupportedSyntaxError(
            f"the in-place operator on {name!r} would write into {where}, which mindgrad "
            f"cannot differentiate; write {name} = {name} <op> ... instead, or copy it first "
            f"({name} = {name}.copy())", self.src.filename, lineno, self.src.text_of(lineno))
        check = A.call(self.helper(runtime.refuse_array), A.load(name),
                       A.load(self.bind(error, "in_place_error")))
        return [A.expr_stmt(check, s)]

    def merge_check(self, s, name):
        """After ``name = a | b`` on values that may carry gradients: ``|`` of integers,
        booleans or sets is a constant, but of dicts it merges them, which mindgrad does not
        differentiate: a check at run time that ``name`` is no dict. Generated code (grad
        of grad) has its own check, which names the user's line."""
        if self.src.is_mindgrad_code:
            return []
        lineno = self.src.line_of(s)
        error = UnsupportedSyntaxError(
            f"merging dicts with | (into {name!r}) is not supported; build the merged dict as "
            "a literal or key by key", self.src.filename, lineno, self.src.text_of(lineno))
        check = A.call(self.helper(runtime.refuse_dict), A.load(name),
                       A.load(self.bind(error, "merge_error")))
        return [A.expr_stmt(check, s)]

    def refuse_argument_write(self, s):
        """In a function a user's function calls, an index assignment into (a view of) an
        argument writes into the caller's array, which the caller's code would not see:
        refused."""
        base = self.aliases.argument_writes.get(id(s))
        if self.arguments_shared and base is not None and self.aliases.checked:
            self.fail(s, f"index assignment into {base!r} writes into an argument of a called "
                         f"function, the caller's array, which mindgrad cannot follow across "
                         f"the call; copy it first ({base} = {base}.copy()) and return it")

    def refuse_argument_method(self, s):
        """Refuse, in a called function, ``xs.append(v)`` (or another method changing it) on a
        list or dict argument: the backward sweep cannot follow it across the call."""
        base, method = self.aliases.argument_methods.get(id(s), (None, None))
        if self.arguments_shared and base is not None:
            kind = "dict" if method in ("update", "setdefault", "popitem") else "list"
            self.fail(s, f"{base}.{method}() changes {base!r}, an argument of a called "
                         f"function, in place: the caller's list or dict, whose gradient "
                         f"mindgrad cannot follow across the call; copy it first ({base} = "
                         f"{kind}({base})) and return it")

    # ----- calls of the user's code --------------------------------------------------------

    def bound_arguments(self, s, fn, obj, call):
        """The call's arguments in the order of ``fn``'s parameters (after the bound ``self``,
        if ``obj``), defaults filled in as constants: what a generated callee is given
        positionally."""
        signature = inspect.signature(fn)
        params = list(signature.parameters.values())
        if obj is not None:
            signature = signature.replace(parameters=params[1:])
        try:
            bound = signature.bind(*call.args, **{k.arg: k.value for k in call.keywords})
        except TypeError as exc:
            self.fail(s, f"the call of {fn.__qualname__} does not fit its signature: {exc}",
                      TypeError)
        bound.apply_defaults()
        values = []
        for param, value in zip(signature.parameters.values(), bound.arguments.values()):
            if param.kind is param.VAR_POSITIONAL:  # see specialise.specialise
                values.extend(value)
            elif param.kind is param.VAR_KEYWORD:
                values.extend(value[k] for k in sorted(value))
            else:
                values.append(value)
        return [value if isinstance(value, gast.AST) else literal(value, self.bind)
                for value in values]


def as_load(node):
    """``node`` with every name and subscript in it read, not assigned (in place)."""
    for sub in A.walk(node):
        if hasattr(sub, "ctx"):
            sub.ctx = gast.Load()
    return node


class _Failure:
    """Called by generated code, a new copy of ``error`` to raise: one object raised again
    would gather the traceback and notes of every call."""

    def __init__(self, error):
        self.error = error

    def __call__(self):
        return copy.copy(self.error)


class _Line:
    def __init__(self, lineno):
        self.lineno = lineno
