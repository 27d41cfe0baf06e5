"""Stage 5, reverse: the adjoint of a normalized function, as a forward and a backward sweep.

Output guarantees:

* The forward sweep is the normalized function, plus ``tape.append(v)`` before each assignment
  that overwrites a value the backward sweep reads, and an iteration counter on loops the
  backward sweep cannot re-derive (``while``, loops with ``break``).
* The backward sweep visits statements in reverse. At the adjoint of a statement every variable
  holds the value it had just after that statement ran in the forward sweep ("restore by pop"):
  the adjoint of ``y = f(x)`` adds to ``d_x`` from ``d_y``, clears ``d_y`` and pops the old ``y``.
* Every adjoint variable is set to 0 where the backward sweep begins; the optimize stage removes
  what is not needed. Accumulation is ``d_x = d_x + g`` (``add(d_x, g)`` for containers and
  indexed arrays, whose gradients are owned buffers that ``add_at`` updates in place).
* Calls of the user's own functions become calls of their own forward and backward functions:
  the pass asks ``callees.Callees`` for their names, and the driver builds them.
"""

from __future__ import annotations

import dataclasses
import inspect

import gast

from mindgrad import rules, runtime
from mindgrad.compiler import activity, aliasing, naming, objects, source
from mindgrad.compiler import astutil as A
from mindgrad.compiler import control_flow as cf
from mindgrad.compiler.analysis import (
    Analysis,
    Resolver,
    as_method,
    call_shape,
    in_place_write,
    user_code,
    without_receiver,
)
from mindgrad.compiler.emit import comment
from mindgrad.compiler.expand import instantiate, literal
from mindgrad.errors import Located, NoGradientRuleError, UnsupportedSyntaxError
from mindgrad.rules import RuleError


def check_aliasing(pass_, mutable_params):
    """The aliasing facts of the pass's function (see aliasing.py), its refusals raised now, or
    for generated code (differentiated again), only the facts. An in-place operator on what
    may be an argument is checked at run time (see number_check): a number is rebound."""
    pass_.number_checks = {}  # id(statement) -> the name, which must not hold an array
    checked = not pass_.src.is_mindgrad_code
    aliases = aliasing.Aliases(pass_.fdef, pass_.scalars, pass_.containers, pass_.resolve,
                               pass_.fail if checked else None, mutable_params,
                               lambda s, name: pass_.number_checks.__setitem__(id(s), name))
    aliases.checked = checked
    return aliases


def number_check(pass_, s):
    """Before an in-place operator on what may be the caller's argument: a check that it holds
    a number (rebound), not an array (NumPy would write into the caller's array)."""
    name = pass_.number_checks.get(id(s))
    if name is None:
        return []
    lineno = pass_.src.line_of(s)
    error = UnsupportedSyntaxError(
        f"the in-place operator on {name!r} would write into an array the caller passed in, "
        f"which mindgrad cannot differentiate; write {name} = {name} <op> ... instead",
        pass_.src.filename, lineno, pass_.src.text_of(lineno))
    check = A.call(pass_.helper(runtime.refuse_array), A.load(name),
                   A.load(pass_.bind(error, "in_place_error")))
    return [A.expr_stmt(check, s)]


def refuse_argument_write(pass_, s):
    """In a function a user's function calls, an index assignment into (a view of) an argument
    writes into the caller's array, which the caller's code would not see: refused."""
    base = pass_.aliases.argument_writes.get(id(s))
    if pass_.arguments_shared and base is not None and pass_.aliases.checked:
        pass_.fail(s, f"index assignment into {base!r} writes into an argument of a called "
                    f"function, the caller's array, which mindgrad cannot follow across the "
                    f"call; copy it first ({base} = {base}.copy()) and return it")


class ShapeTokens:
    """Shapes known equal, for both transformations. Within a straight-line block, an
    elementwise operation whose array operands have one shape gives that shape, so unbroadcast
    between them (broadcast in forward mode) is the identity. A "token" names a shape; names
    assigned in a loop or branch get a fresh token after it. Needs ``shapes`` (a dict),
    ``scalars``, ``resolve`` and ``local_names``."""

    def is_scalar(self, node) -> bool:
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (int, float, complex))
        return isinstance(node, gast.Name) and node.id in self.scalars

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

    def same_shape(self, node, out_name) -> bool:
        a, b = self.token(node), self.shapes.get(out_name)
        return a is not None and a is b or (a == "scalar" and self.is_scalar(A.load(out_name)))

    def forget_shapes(self, names):
        for name in names:
            self.shapes.pop(name, None)


@dataclasses.dataclass(frozen=True)
class ReverseInput:
    """What the reverse pass differentiates: a normalized function and the facts it needs."""

    src: source.Source
    fdef: gast.FunctionDef     # normalized; the pass works on a copy
    active_params: list        # the parameters differentiated
    analysis: Analysis
    weights: list              # the Parameters whose gradients are asked for
    weight_reads: dict         # accumulator key (self.w) -> index of a weight read directly
    reads_weights: object      # whether a call reaches a weight (weights.Weights.read_by_call)
    arguments_shared: bool     # the user's code calls it: its arguments are the caller's


class Adjoints:
    """The adjoint variable of each name, made when first asked for: ``d_x`` for ``x``,
    ``d_self_w`` for a weight read as ``self.w``."""

    def __init__(self, fresh, pure):
        self._fresh = fresh
        self._pure = pure
        self.names = {}   # key -> its adjoint variable
        self.labels = {}  # key -> what its variable is named after, for keys that are not names

    def __call__(self, key: str) -> str:
        if key not in self.names:
            self.names[key] = self._fresh(naming.adjoint(self.labels.get(key, key)))
            self._pure.add(self.names[key])
        return self.names[key]


@dataclasses.dataclass
class Sweeps:
    """What the reverse pass wrote for one function, with the facts needed to assemble it into
    functions (see assemble.py)."""

    forward: list              # the forward sweep: the function's statements, with tape pushes
    backward: list             # the backward sweep, from the adjoint of the last statement
    result: gast.expr          # the atom the function returns
    result_active: bool
    fdef: gast.FunctionDef     # the normalized function: its parameters
    active_params: list
    active: set                # names (and weight keys) carrying a gradient
    indexed: set               # names whose gradients are buffers add_at updates in place
    buffers: set               # array arguments whose gradients start as zeros_buffer(x)
    containers: set            # names holding lists, tuples or dicts
    local_names: set
    weight_keys: dict          # accumulator key -> index of its weight
    adjoints: Adjoints
    pure: set                  # names the optimizer may treat as pure: adjoints, temporaries
    impure_calls: set          # callees the optimizer must keep (backward functions)
    tape: str
    uses_tape: bool
    pushed: set                # names pushed before their first assignment: set to None first
    copies: object             # the backward sweep's {id: copy} (a name), or None
    namespace: naming.Namespace

    def reads(self) -> set:
        """The locals the backward sweep reads: the tape must hold their values."""
        return (A.names_in(self.backward, gast.Load) & self.local_names) - self.pure


class ReversePass(Located, ShapeTokens):
    """Builds the forward and backward sweeps of one function for one set of active inputs.

    ``needed`` are the locals the backward sweep reads (None at first): those the forward sweep
    overwrites are saved on the tape. The driver runs the pass again until it holds."""

    def __init__(self, job: ReverseInput, names: naming.NameGen, callees, needed=None):
        src, fdef, analysis = job.src, A.clone(job.fdef), job.analysis
        self.src = src
        self.fdef = fdef
        self.params = [a.id for a in fdef.args.args]
        self.active_params = list(job.active_params)
        self.fresh = names
        self.callees = callees
        self.needed = needed
        self.arguments_shared = job.arguments_shared
        self.local_names = set(self.params) | {a.id for a in fdef.args.kwonlyargs} | \
            A.assigned_names(fdef.body)
        self.namespace = naming.Namespace(src, self.local_names, names)
        self.resolve = Resolver(src, self.local_names, job.reads_weights)
        self.defs, self.scalars = analysis.defs, analysis.scalars
        self.containers, self.numeric = analysis.containers, analysis.numeric
        arrays = analysis.arrays
        # array arguments read element by element get a gradient buffer, updated in place
        self.buffers = {p for p in arrays if p in analysis.indexed and self.defs.get(p) == 1}
        self.active = set(analysis.active)
        self.indexed = set(analysis.indexed)
        self.weights = job.weights            # the Parameters whose gradients are asked for
        self.weight_keys = dict(job.weight_reads)  # accumulator key -> index into weights
        self.active.update(self.weight_keys)
        self.tape = names(naming.TAPE)
        self.adjoint_names = set()
        self.d = Adjoints(names, self.adjoint_names)
        self.impure_calls = set()
        self.uses_tape = False
        self.pushed = set()
        self.seen = set(self.params) | {a.id for a in fdef.args.kwonlyargs}
        self.shapes = {}
        self.copies = None                    # see private()
        self.aliases = check_aliasing(self, (set(self.params) - self.scalars) | set(arrays))
        self.view_reads = _view_reads(fdef, self.containers, self.aliases.sharing_writes) \
            if self.aliases.checked else set()

    def sweeps(self) -> Sweeps:
        body = self.fdef.body
        forward, backward = self.block(body[:-1], False)
        result = body[-1].value
        return Sweeps(forward, backward, result, self.is_active(result), self.fdef,
                      self.active_params, self.active, self.indexed, self.buffers,
                      self.containers, self.local_names, self.weight_keys, self.d,
                      self.adjoint_names, self.impure_calls, self.tape, self.uses_tape,
                      self.pushed, self.copies, self.namespace)

    # ----- names ---------------------------------------------------------------------------

    def key(self, node):
        return self.resolve.key(node)

    def bind(self, obj, preferred: str) -> str:
        return self.namespace.bind(obj, preferred)

    def helper(self, fn) -> gast.Name:
        return self.namespace.helper(fn)

    def reads_a_view_kept(self, name, value) -> bool:
        """Whether ``name = x[idx]`` must copy: the backward sweep reads ``name``, which may be
        a view of an array index-assigned later (the backward restores only private copies)."""
        return isinstance(value, gast.Subscript) and name in self.view_reads and \
            self.needed is not None and name in self.needed

    def index_value(self, index):
        """A subscript's index as an expression that can be passed to a function."""
        index = _as_load(A.clone(index))
        if not _has_slice(index):
            return index
        import numpy

        return A.subscript(A.attr(A.load(self.bind(numpy, "np")), "s_"), index)

    def basic_index(self, index) -> bool:
        """An index of ints, scalars and slices: ``d_x[idx] += g`` adds each element once."""
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        for part in parts:
            if isinstance(part, gast.Slice):
                if not all(p is None or self.is_scalar(p) or isinstance(p, gast.Constant)
                           for p in (part.lower, part.upper, part.step)):
                    return False
            elif not (self.is_scalar(part) or isinstance(part, gast.Constant)):
                return False
        return True

    def is_active(self, node) -> bool:
        key = self.resolve.key(node)
        return key is not None and key in self.active

    def accumulate(self, name, value, like=None):
        if not isinstance(name, str):
            name = self.key(name)
        dn = self.d(name)
        if name in self.indexed or name not in self.numeric:  # may hold a list or a dict
            return A.assign(dn, A.call(self.helper(runtime.add), A.load(dn), value), like)
        return A.assign(dn, A.binop(A.load(dn), gast.Add(), value), like)

    def needs_push(self, name, in_loop) -> bool:
        """Whether assigning ``name`` here overwrites a value the backward sweep reads."""
        if self.needed is None or name not in self.needed:
            return False
        if in_loop:
            return True
        # outside loops, a first definition overwrites nothing
        return name in self.seen and self.defs.get(name, 0) > 1

    def push(self, value, like):
        """``tape.append(value)``, in the forward sweep."""
        self.uses_tape = True
        if isinstance(value, gast.Name) and value.id not in self.seen:
            self.pushed.add(value.id)  # may be pushed before its first assignment: set to None
        return cf.push.fill(self.namespace, like, tape=self.tape, value=value)[0]

    def pop(self, name, like):
        """``name = tape.pop()``, in the backward sweep: the value pushed last."""
        self.uses_tape = True
        return cf.pop.fill(self.namespace, like, tape=self.tape, target=name)[0]

    def popped(self):
        """``tape.pop()``, an expression."""
        self.uses_tape = True
        return cf.popped.fill(self.namespace, tape=self.tape)

    # ----- blocks --------------------------------------------------------------------------

    def block(self, stmts, in_loop):
        fwd, chunks = [], []
        for s in stmts:
            f, b = self.stmt(s, in_loop)
            self.seen |= A.assigned_names(s)
            fwd.extend(f)
            if b:
                chunks.append((getattr(s, "lineno", None), b))
        bwd, last = [], None
        for lineno, chunk in reversed(chunks):
            if lineno is not None and lineno != last:
                text = self.src.text_of(self.src.line_of(_Line(lineno)))
                bwd.append(comment("grad of: " + text.strip(), _Line(lineno)))
            bwd.extend(chunk)
            last = lineno
        return fwd, bwd

    def stmt(self, s, in_loop):
        if isinstance(s, gast.Assign):
            target = s.targets[0]
            if isinstance(target, gast.Name):
                return self.assign(s, target.id, s.value, in_loop)
            return self.setitem(s, target, in_loop)
        if isinstance(s, gast.If):
            return self.if_(s, in_loop)
        if isinstance(s, gast.For):
            return self.for_(s, in_loop)
        if isinstance(s, gast.While):
            return self.while_(s, in_loop)
        if isinstance(s, gast.Expr):
            return self.expr(s, in_loop)
        if isinstance(s, (gast.Break, gast.Assert, gast.Raise, gast.Pass)):
            return [s], []
        self.fail(s, f"{type(s).__name__} statements are not supported here")

    # ----- assignments ---------------------------------------------------------------------

    def assign(self, s, name, value, in_loop):
        fwd, bwd = number_check(self, s), []
        push = self.needs_push(name, in_loop)
        self.shapes[name] = self.result_token(value)
        if push:
            fwd.append(self.push(A.load(name), s))
        if isinstance(value, gast.Call) and (self.weights or self.is_active_call(value)):
            self.check_callee(s, value)
        if self.reads_a_view_kept(name, value):
            s = A.assign(name, A.call(self.helper(runtime.saved_item), A.clone(value.value),
                                      self.index_value(value.slice)), s)
        if isinstance(value, gast.Call) and self.is_active_call(value):
            callee = self.callee_of(value)
            if callee is not None:
                f, b = self.call_user(s, name, value, callee, in_loop)
                fwd.extend(f)
                bwd.extend(b)
            else:
                fwd.append(s)
                bwd.extend(self.adjoint_of(s, name, value))
        else:
            fwd.append(s)
            if name in self.active and activity.value_is_active(value, self.active, self.resolve):
                bwd.extend(self.adjoint_of(s, name, value))
        if name in self.active:
            bwd.append(A.assign(self.d(name), A.const(0), s))
        receiver = self.resolve.receiver(value.func) if isinstance(value, gast.Call) else None
        if receiver is not None and value.func.attr == "pop" and not value.args:
            # undo the pop, so the statements before it see the list as it was
            undo = A.expr_stmt(A.call(A.attr(A.clone(receiver), "append"), A.load(name)), s)
            bwd.extend((self.private(receiver.id, s) if isinstance(receiver, gast.Name)
                        else []) + [undo])
        if push:
            bwd.append(self.pop(name, s))
        return fwd, bwd

    def adjoint_of(self, s, name, value):
        """Adjoint statements of ``name = value``, reading ``d_name``."""
        d_out = self.d(name)
        if isinstance(value, gast.Name) or (isinstance(value, gast.Attribute) and
                                            self.key(value) in self.weight_keys):
            return [self.accumulate(value, A.load(d_out), s)] if self.is_active(value) else []
        if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add) and (
                self.key(value.left) in self.containers or
                self.key(value.right) in self.containers):
            # sequences: x + y concatenates, so x gets the head of d_out and y the tail
            parts = [self.fresh(part) for part in naming.concatenation_parts(name)]
            self.adjoint_names.update(parts)
            stmts = [A.assign(A.tuple_([A.store(p) for p in parts], gast.Store()),
                              A.call(self.helper(runtime.concat_grads), A.load(d_out),
                                     A.clone(value.left), A.clone(value.right)), s)]
            for part, operand in zip(parts, (value.left, value.right)):
                if self.is_active(operand):
                    stmts.append(self.accumulate(operand, A.load(part), s))
            return stmts
        if isinstance(value, gast.BinOp):
            fn = _BINOPS[type(value.op)]
            return self.apply_rule(s, rules.lookup(fn), fn, [value.left, value.right], {}, name)
        if isinstance(value, gast.UnaryOp):
            fn = _UNARYOPS.get(type(value.op))
            return self.apply_rule(s, rules.lookup(fn), fn, [value.operand], {}, name)
        if isinstance(value, gast.Subscript):
            base = value.value
            if not self.is_active(base):
                return []
            key = self.key(base)
            if key in self.buffers and self.basic_index(value.slice):
                target = A.subscript(A.load(self.d(key)), _as_load(A.clone(value.slice)),
                                     gast.Store())
                return [A.located(gast.AugAssign(target=target, op=gast.Add(),
                                                 value=A.load(d_out)), s)]
            add_at = self.helper(runtime.add_at)
            self.indexed.add(key)
            call = A.call(add_at, A.load(self.d(key)), A.clone(base),
                          self.index_value(value.slice), A.load(d_out))
            return [A.assign(self.d(key), call, s)]
        if isinstance(value, (gast.Tuple, gast.List)):
            item = self.helper(runtime.item)
            return [self.accumulate(e, A.call(A.clone(item), A.load(d_out), A.const(i)), s)
                    for i, e in enumerate(value.elts) if self.is_active(e)]
        if isinstance(value, gast.Dict):
            item = self.helper(runtime.item)
            return [self.accumulate(v, A.call(A.clone(item), A.load(d_out), A.clone(k)), s)
                    for k, v in zip(value.keys, value.values) if self.is_active(v)]
        if isinstance(value, gast.Attribute):
            rule = rules.lookup_attr(value.attr)
            if rule is None:
                self.fail(s, no_attribute_rule(
                    self.src, s, value.attr, f"the attribute .{value.attr} of a differentiated "
                    f"value has no gradient rule; register one with @mindgrad.adjoint_attr"
                    f"({value.attr!r})"), NoGradientRuleError)
            return self.apply_rule(s, rule, value.attr, [value.value], {}, name)
        if isinstance(value, gast.Call):
            return self.adjoint_call(s, name, value)
        self.fail(s, f"mindgrad has no adjoint for a {type(value).__name__} expression",
                  NoGradientRuleError)

    def apply_rule(self, s, rule, fn, args, keywords, name):
        if rule is None:
            label = _describe(fn)
            self.fail(s, f"{label} has no gradient rule; register one with "
                         f"@mindgrad.adjoint({label})", NoGradientRuleError)
        try:
            stmts = instantiate(rule, args, keywords, name, self.d(name), self)
        except RuleError as exc:
            self.fail(s, str(exc), NoGradientRuleError)
        stmts = [A.located(st, s) for st in stmts]
        if stmts and (rule.reads_zero_unsafely or self.src.is_mindgrad_code):
            # the gradient may be the symbolic 0 at run time (a value unused on the path
            # taken; in mindgrad's own code, grad of grad, often), which shape rules
            # (np.reshape(d_out, ...)) cannot take. The optimize stage drops the guard where
            # the gradient is known to be an array.
            # is_zero(d_v, v): v tells a number 0 standing for an array (0 * 1.0) from a value
            test = gast.UnaryOp(op=gast.Not(), operand=A.call(self.helper(runtime.is_zero),
                                                              A.load(self.d(name)), A.load(name)))
            return [A.if_(test, stmts, [], s)]
        return stmts

    def is_active_call(self, call) -> bool:
        operands = list(call.args) + [k.value for k in call.keywords]
        receiver = self.resolve.receiver(call.func)
        if receiver is not None:
            operands.append(receiver)
        if any(self.is_active(o) for o in operands):
            return True
        # a call of the user's own code may read weights even with constant arguments
        return self.resolve.reads_weights(call.func)

    def adjoint_call(self, s, name, call):
        func = call.func
        keywords = {k.arg: k.value for k in call.keywords}
        receiver = self.resolve.receiver(func)
        if receiver is not None:
            if func.attr in activity.NONDIFF_METHODS:
                return []
            if func.attr == "pop" and not call.args and not call.keywords:
                # v = xs.pop(): the gradient goes back on the end of the list's gradient
                key = self.key(receiver)
                self.indexed.add(key)
                return [A.assign(self.d(key), A.call(self.helper(runtime.push_grad),
                                                     A.load(self.d(key)), A.load(self.d(name)),
                                                     A.clone(receiver)), s)]
            rule = rules.lookup_method(func.attr)
            if rule is None:
                self.fail(s, f"the method .{func.attr}() has no gradient rule; register one "
                             f"with @mindgrad.adjoint_method({func.attr!r})", NoGradientRuleError)
            return self.apply_rule(s, rule, func.attr, [receiver] + list(call.args),
                                   keywords, name)
        target = self.resolve(func)
        if target is None:
            self.fail(s, f"cannot tell which function {A_text(func)} is; call a module-level "
                         "function, a method of an array, or a local lambda/def", NameError)
        if rules.is_nondifferentiable(target):
            return []
        rule = rules.lookup(target)
        if rule is None and rules.lookup(type(target)) is not None and not isinstance(target, type):
            # a rule for a class of callable objects (ops.MatMul()): the instance comes first
            return self.apply_rule(s, rules.lookup(type(target)), type(target),
                                   [A.clone(func)] + list(call.args), keywords, name)
        if rule is None:
            self.fail(s, f"{_describe(target)} has no gradient rule and no Python source to "
                         f"differentiate; register a rule with @mindgrad.adjoint("
                         f"{_describe(target)})", NoGradientRuleError)
        return self.apply_rule(s, rule, target, list(call.args), keywords, name)

    def check_callee(self, s, call):
        """A call through a local variable holding a function or Cell cannot be followed:
        refuse it, rather than take its result as a constant."""
        func = call.func
        if self.resolve.receiver(func) is not None or self.resolve(func) is not None:
            return
        root = func
        while isinstance(root, (gast.Attribute, gast.Subscript)):
            root = root.value
        if isinstance(root, gast.Name) and root.id in self.local_names:
            self.fail(s, f"cannot tell which function {A_text(func)} is: it is a local variable "
                         "set while the function runs. Call the Cell or function through its "
                         "attribute (self.block(x)) or a global name, or loop over a list of "
                         "Cells stored on the Cell (for layer in self.layers)", NameError)

    def callee_of(self, call):
        """``(function, bound self or None, self expression)`` when ``call`` runs the user's own
        code (a function, a method, a Cell, a callable object); otherwise None."""
        func = call.func
        if self.resolve.receiver(func) is not None:
            return None
        target = self.resolve(func)
        if target is None or rules.lookup(target) is not None or \
                rules.is_nondifferentiable(target) or (
                    not isinstance(target, type) and rules.lookup(type(target)) is not None):
            return None
        # generated code (grad of grad) calls mindgrad's helpers: differentiated from source
        return as_method(self.src, call, user_code(target, func, allow_helpers=True,
                                                   nargs=len(call.args)))

    def call_user(self, s, name, call, callee, in_loop=False):
        """``name = f(...)`` for the user's own code: its forward now, its backward later.

        ``name, name_tape = f_forward(...)``; later ``f_backward(name_tape, d_name)``.
        """
        fn, obj, self_expr = callee
        call = without_receiver(call, self_expr)
        if obj is not None and hasattr(type(obj), "bprop") and _is_cell(obj):
            return self.call_bprop(s, name, call, obj)
        args = bound_arguments(self, s, fn, obj, call)
        mask = tuple(self.is_active(a) for a in args)
        scalar = tuple(self.is_scalar(a) for a in args)
        if name not in self.active:
            return [s], []  # nothing to differentiate: the call as written
        callee = self.callees.names_for(fn, obj, mask, scalar, call_shape(fn, obj, call))
        fwd_name, bwd_name, weights = callee.forward, callee.backward, callee.weights
        head = [A.clone(self_expr)] if obj is not None else []
        ctx = self.fresh(naming.callee_tape(name))
        self.local_names.add(ctx)
        forward = cf.call_forward.fill(self.namespace, s, result=name, result_tape=ctx,
                                       forward=fwd_name, args=head + args)
        restore = []
        if in_loop or self.defs.get(name, 0) > 1:  # each run of the call keeps its own tape
            forward.insert(0, self.push(A.load(ctx), s))
            restore = [self.pop(ctx, s)]
        label = naming.label(fn.__name__, obj)
        active_args = [a for a, m in zip(args, mask) if m]
        parts = [self.fresh(naming.callee_part(self.key(a), label)) for a in active_args]
        weight_parts = [self.fresh(naming.callee_part(naming.object_label(self.weights[i]),
                                                      label)) for i in weights]
        everything = parts + weight_parts
        self.adjoint_names.update(everything)
        bwd = cf.call_backward.fill(self.namespace, s, grads=everything, backward=bwd_name,
                                    result_tape=ctx, d_result=self.d(name))
        self.impure_calls.add(bwd_name)
        for part, arg in zip(parts, active_args):
            bwd.append(self.accumulate(arg, A.load(part), s))
        for part, index in zip(weight_parts, weights):
            bwd.append(self.accumulate(self.weight_accumulator(index), A.load(part), s))
        return forward, bwd + restore

    def weight_accumulator(self, index):
        """The key of the accumulator for weight ``index`` fed by callees."""
        key = f"@weight{index}"
        if key not in self.weight_keys:
            self.weight_keys[key] = index
            self.d.labels[key] = naming.object_label(self.weights[index])
            self.active.add(key)
        return key

    def call_bprop(self, s, name, call, cell):
        """A Cell with its own ``bprop``: run it as written, and call ``bprop`` backwards."""
        args = list(call.args)
        if call.keywords:
            self.fail(s, "a Cell with a custom bprop must be called with positional arguments",
                      TypeError)
        forward = A.assign(name, call, s)
        if name not in self.active:
            return [forward], []
        parts = self.fresh(naming.bprop_part(cell))
        self.adjoint_names.add(parts)
        bwd = cf.call_bprop.fill(self.namespace, s, grads=parts, cell=call.func, args=args,
                                 result=name, d_result=self.d(name))
        self.impure_calls.add(parts)
        for i, arg in enumerate(args):
            if self.is_active(arg):
                bwd.append(self.accumulate(arg, A.subscript(A.load(parts), A.const(i)), s))
        return [forward], bwd

    def setitem(self, s, target, in_loop):
        """``x[idx] = v``: the old value is saved; its gradient is cleared in the backward."""
        base = target.value.id
        refuse_argument_write(self, s)
        read_back = self.aliases.sharing_writes.get(id(s), set()) & (self.needed or set())
        for other in sorted(read_back - self.view_reads) if self.aliases.checked else ():
            self.fail(s, f"index assignment into {base!r} changes {other!r}, which may share its "
                         f"memory (another name for the same array, or a view) and which the "
                         f"gradient reads; make a copy ({other} = {other}.copy())")
        index = self.index_value(target.slice)
        fwd, bwd = [], []
        needed = self.needed is not None and base in self.needed
        if needed:
            saved = A.call(self.helper(runtime.saved_item), A.load(base), A.clone(index))
            fwd.append(self.push(saved, s))
        fwd.append(s)
        if base in self.active:
            v = s.value
            part = self.fresh(naming.assigned_item(base))
            self.adjoint_names.add(part)
            grad = A.call(self.helper(runtime.setitem_grad), A.load(self.d(base)),
                          A.clone(index), A.clone(v))
            bwd.append(A.assign(A.tuple_([A.store(part), A.store(self.d(base))], gast.Store()),
                                grad, s))
            if self.is_active(v):
                bwd.append(self.accumulate(v.id, A.load(part), s))
        if needed:
            restore = A.call(self.helper(runtime.restore_item), A.load(base), A.clone(index),
                             self.popped())
            bwd.extend(self.private(base, s) + [A.expr_stmt(restore, s)])
        return fwd, bwd

    def private(self, name, like):
        """``[name = private_copy(name, copies)]``: before the backward sweep writes into the
        array, list or dict ``name``, a copy it owns (it never writes into one the caller can
        see); ``copies`` is the backward sweep's ``{id: copy}``. Generated code differentiated
        again restores in place: its arrays and lists are its own, and what it shares with
        its caller, the caller's backward sweep expects restored."""
        if not self.aliases.checked:
            return []
        if self.copies is None:
            self.copies = self.fresh(naming.COPIES)
        return [A.assign(name, A.call(self.helper(runtime.private_copy), A.load(name),
                                      A.load(self.copies)), like)]

    def expr(self, s, in_loop):
        call = s.value
        if not isinstance(call, gast.Call):
            return [s], []
        func = call.func
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
                and func.value.id in self.local_names:
            base = func.value.id
            if func.attr == "append" and (base in self.active or (
                    self.needed is not None and base in self.needed)):
                bwd = []
                if base in self.active:
                    part = self.fresh(naming.appended_item(base))
                    self.adjoint_names.add(part)
                    bwd.append(A.assign(A.tuple_([A.store(part), A.store(self.d(base))],
                                                 gast.Store()),
                                        A.call(self.helper(runtime.pop_grad),
                                               A.load(self.d(base))), s))
                    if call.args and self.is_active(call.args[0]):
                        bwd.append(self.accumulate(call.args[0].id, A.load(part), s))
                if self.needed is not None and base in self.needed:
                    bwd.extend(self.private(base, s) +
                               [A.expr_stmt(A.call(A.attr(A.load(base), "pop")), s)])
                return [s], bwd
        problem = in_place_write(call, self.resolve, self.is_active)
        if problem:
            self.fail(s, problem)
        return [s], []

    # ----- control flow --------------------------------------------------------------------

    def if_(self, s, in_loop):
        saved, seen = dict(self.shapes), set(self.seen)
        body_f, body_b = self.block(s.body, in_loop)
        self.shapes, seen_in_body, self.seen = dict(saved), self.seen, set(seen)
        else_f, else_b = self.block(s.orelse, in_loop)
        self.shapes = saved
        self.seen |= seen_in_body
        self.forget_shapes(A.assigned_names(s))
        fwd = cf.if_.fill(self.namespace, s, test=s.test, body=body_f, orelse=else_f)
        if not _has_code(body_b) and not _has_code(else_b):
            return fwd, []
        if not _has_code(body_b):
            return fwd, cf.if_not.fill(self.namespace, s, test=s.test, body=else_b)
        return fwd, cf.if_.fill(self.namespace, s, test=s.test, body=body_b, orelse=else_b)

    def for_(self, s, in_loop):
        target = s.target.id
        self.forget_shapes(A.assigned_names(s))
        body_f, body_b = self.block(s.body, True)
        self.forget_shapes(A.assigned_names(s))
        fwd, bwd = [], []
        count = None
        push = self.needs_push(target, in_loop)
        if push:
            fwd.append(self.push(A.load(target), s))
        if _breaks(s.body):
            count = self.fresh(naming.ITERATIONS)
            self.local_names.add(count)
            if in_loop:  # one count per run of this loop: save the previous run's
                fwd.append(self.push(A.load(count), s))
            fwd += cf.counted_for.fill(self.namespace, s, count=count, target=target,
                                       items=s.iter, body=body_f)
        else:
            fwd += cf.for_.fill(self.namespace, s, target=target, items=s.iter, body=body_f)
        iter_active = self.is_active(s.iter) and target in self.active
        if not _has_code(body_b) and not iter_active:
            if push:
                bwd.append(self.pop(target, s))
            return fwd, bwd
        if iter_active:
            self.indexed.add(s.iter.id)
            bwd += cf.for_adjoint_over_items.fill(
                self.namespace, s, index=self.fresh(naming.INDEX), target=target, items=s.iter,
                counted=[A.load(count)] if count else [], body=body_b,
                d_items=self.d(s.iter.id), d_target=self.d(target))
        elif count:
            bwd += cf.counted_for_adjoint.fill(self.namespace, s, target=target, items=s.iter,
                                               count=count, body=body_b)
        else:
            bwd += cf.for_adjoint.fill(self.namespace, s, target=target, items=s.iter,
                                       body=body_b)
        if count and in_loop:
            bwd.append(self.pop(count, s))
        if push:
            bwd.append(self.pop(target, s))
        return fwd, bwd

    def while_(self, s, in_loop):
        self.forget_shapes(A.assigned_names(s))
        body_f, body_b = self.block(s.body, True)
        self.forget_shapes(A.assigned_names(s))
        if not _has_code(body_b):
            return cf.while_.fill(self.namespace, s, test=s.test, body=body_f), []
        count = self.fresh(naming.ITERATIONS)
        self.local_names.add(count)
        fwd = [self.push(A.load(count), s)] if in_loop else []
        fwd += cf.counted_while.fill(self.namespace, s, count=count, test=s.test, body=body_f)
        bwd = cf.while_adjoint.fill(self.namespace, s, count=count, body=body_b)
        if in_loop:
            bwd.append(self.pop(count, s))
        return fwd, bwd


class _Line:
    def __init__(self, lineno):
        self.lineno = lineno


_BINOPS = {}
_UNARYOPS = {}


def _init_operators():
    import operator

    _BINOPS.update({gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
                    gast.Div: operator.truediv, gast.Pow: operator.pow,
                    gast.MatMult: operator.matmul, gast.Mod: operator.mod,
                    gast.FloorDiv: operator.floordiv})
    _UNARYOPS.update({gast.USub: operator.neg, gast.UAdd: operator.pos})


_init_operators()


def _describe(fn) -> str:
    if isinstance(fn, str):
        return fn
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    if module.startswith("numpy"):
        module = "np" + module[5:]
        if module.startswith(("np._core", "np.core")):
            module = "np"
    if module in ("builtins", "_operator"):
        return ("operator." if module == "_operator" else "") + name
    if module in ("", None):
        return name
    return f"{module}.{name}"


def bound_arguments(pass_, s, fn, obj, call):
    """The call's arguments in the order of ``fn``'s parameters (after the bound ``self``, if
    ``obj``), defaults filled in as constants: what a generated callee is given positionally."""
    signature = inspect.signature(fn)
    params = list(signature.parameters.values())
    if obj is not None:
        signature = signature.replace(parameters=params[1:])
    try:
        bound = signature.bind(*call.args, **{k.arg: k.value for k in call.keywords})
    except TypeError as exc:
        pass_.fail(s, f"the call of {fn.__qualname__} does not fit its signature: {exc}",
                 TypeError)
    bound.apply_defaults()
    values = []
    for param, value in zip(signature.parameters.values(), bound.arguments.values()):
        if param.kind is param.VAR_POSITIONAL:  # see source.specialise
            values.extend(value)
        elif param.kind is param.VAR_KEYWORD:
            values.extend(value[k] for k in sorted(value))
        else:
            values.append(value)
    return [value if isinstance(value, gast.AST) else literal(value, pass_.bind)
            for value in values]


def no_attribute_rule(src, node, attr, message) -> str:
    """``message`` for a read of ``.attr`` that has no rule, unless ``src`` is generated code
    (grad of grad): there such a read is a Cell's or a method's ``self.attr``, carried on the
    tape, which second order does not support yet. That message names the user's line whose
    gradient reads it (the ``# grad of:`` comment above ``node``)."""
    if not src.is_mindgrad_code:
        return message
    origin = ""
    for lineno in range(src.line_of(node), src.first_line - 1, -1):
        text = src.text_of(lineno).strip()
        if text.startswith("# grad of:"):
            origin = f" in the gradient of `{text[len('# grad of:'):].strip()}`"
            break
    return (f"second order (a gradient of a gradient) through a Cell or a method called inside "
            f"the differentiated function is not supported yet: it reads self.{attr}{origin}. "
            f"A gradient of the Cell itself can be differentiated: call mindgrad.grad(net) "
            f"inside the function differentiated again")


def _is_cell(obj) -> bool:
    return objects.is_module(obj)


def _breaks(body) -> bool:
    """Whether a loop body (not counting loops nested in it) contains a break."""
    for stmt in body:
        if isinstance(stmt, gast.Break):
            return True
        if isinstance(stmt, gast.If) and (_breaks(stmt.body) or _breaks(stmt.orelse)):
            return True
    return False


def _has_code(stmts) -> bool:
    from mindgrad.compiler.emit import _COMMENT

    for s in stmts:
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant) and \
                isinstance(s.value.value, str) and s.value.value.startswith(_COMMENT):
            continue
        return True
    return False


def _view_reads(fdef, containers, sharing_writes) -> set:
    """Names that may share memory with an index-assigned array and are only ever assigned
    ``name = x[idx]`` of an array ``x``: the reverse stage can make them copies."""
    shared = set().union(*sharing_writes.values())
    subscripts, others = set(), set()
    for node in A.walk(fdef.body):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            value, name = node.value, node.targets[0].id
            if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and \
                    value.value.id not in containers:
                subscripts.add(name)
            else:
                others.add(name)
        elif isinstance(node, gast.For) and isinstance(node.target, gast.Name):
            others.add(node.target.id)
    return (subscripts - others) & shared


def _as_load(node):
    for sub in A.walk(node):
        if hasattr(sub, "ctx"):
            sub.ctx = gast.Load()
    return node


def _has_slice(node) -> bool:
    return any(isinstance(sub, gast.Slice) for sub in A.walk(node))


def A_text(node) -> str:
    from mindgrad.compiler.emit import unparse

    return unparse([gast.Expr(value=node)]).strip()
