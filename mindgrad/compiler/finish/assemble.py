"""What the passes wrote, optimized (the optimize stage) and assembled into the functions that
are compiled.

Reverse mode, from ``reverse.Sweeps``: the gradient entry ``grad`` calls, or the split pair a
caller (or ``vjp``) calls::

    def grad_f(x, *, sens):           def f_forward(x):             def f_backward(tape, d_y):
        <forward sweep>                   tape = []                     <saved> = tape.pop()
        # backward sweep                  <forward sweep>               <backward sweep>
        d_y = seed(y, sens)               tape.append(<saved>)          return d_x
        <backward sweep>                  return (y, tape)
        return (y, (d_x,), (<weights>))

A gradient is the symbolic zero (``runtime.zero``) until one flows into it.

Forward mode, from ``forward.TangentCode``: ``def jvp_f(x, *, t_x): ...; return (y, t_y)``.
The backward sweep is optimized before the locals a split backward function reads are known.
"""

from __future__ import annotations

import dataclasses
import functools

import gast

from mindgrad import runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler import naming
from mindgrad.compiler.finish import emit, optimize
from mindgrad.compiler.transform import control_flow as cf


@dataclasses.dataclass(kw_only=True)
class ReverseCode:
    """What the reverse stage wrote for one request, before it is put into functions: the
    sweeps' statements and what the functions return. The optimize stage rewrites ``back``."""

    fwd: list
    back: list                 # the seed, the adjoints' initial zeros, the backward sweep
    result: gast.expr
    d_res: str | None          # the gradient of the result, when it is active
    returned: list             # one expression per differentiated parameter
    weight_grads: list         # one expression per weight returned
    live_out: set              # the gradients the functions return
    pure: set
    owned: set


class ReverseFunctions:
    """The functions of one reverse-mode request, in three steps the driver runs as stages:
    ``code()`` (the reverse stage's statements), ``optimize(code)`` (the optimize stage) and
    ``assemble(code)`` (the functions compiled). The names made here (``sens``, ...) are made
    once, so the dump of each stage shows the same names."""

    def __init__(self, sweeps, names, split, weight_indices, merge=True):
        self.sweeps = sweeps
        self.merge = merge                     # x = a + b for x = a; x = x + b (optimize)
        self.names = names                     # (entry,) or, split, (forward, backward)
        self.split = split
        self.weight_indices = weight_indices   # the weights whose gradients are returned
        self._made = {}

    def _fresh(self, base):
        if base not in self._made:
            self._made[base] = self.sweeps.namespace.fresh(base)
        return self._made[base]

    def code(self) -> ReverseCode:
        sw = self.sweeps
        d = sw.adjoints
        res_active = sw.result_active
        d_res = d(sw.result_key) if res_active else None
        grads = [d(p) if p in sw.active else None for p in sw.active_params]
        weight_grads = self._weight_returns()
        buffers = {d(p): p for p in sw.buffers if p in sw.active}
        zeros_buffer = sw.namespace.helper
        inits = [A.assign(dn, A.call(zeros_buffer(runtime.zeros_buffer), A.load(buffers[dn]))
                          if dn in buffers else A.zero())
                 for dn in sorted(set(d.names.values()) - {d_res}) if dn is not None]
        if sw.copies is not None:
            inits.append(A.assign(sw.copies, gast.Dict(keys=[], values=[])))
        seed = []
        if not self.split:
            seed_fn = sw.namespace.helper(runtime.seed)
            sens = self._fresh(naming.SENSITIVITY)
            if res_active:
                # a complex output is refused at the user's return, where it has one only
                returns = own_returns(sw.namespace.src.tree)
                seed = [A.assign(d_res, A.call(seed_fn, A.clone(sw.result), A.load(sens)),
                                 sw.fdef.body[-1] if len(returns) == 1 else None)]
        back = seed + inits + sw.backward
        return ReverseCode(fwd=sw.forward, back=back, result=sw.result, d_res=d_res,
                           returned=[A.load(g) if g else A.zero() for g in grads],
                           weight_grads=weight_grads,
                           live_out={g for g in grads if g} | A.names_in(weight_grads, gast.Load),
                           pure=set(sw.pure),
                           owned={d(n) for n in sw.indexed if n in sw.active})

    def optimize(self, code: ReverseCode) -> ReverseCode:
        """The optimize stage: the backward sweep without what is not needed."""
        back = self._optimizer(code.pure, code.owned).run(
            code.back, code.live_out, zero=(), arrays=())
        return dataclasses.replace(code, back=back)

    def assemble(self, code: ReverseCode, copy=False) -> list:
        """The functions compiled; ``copy`` leaves ``code`` intact (the reverse stage's dump)."""
        fwd, back = (A.clone(code.fwd), A.clone(code.back)) if copy else (code.fwd, code.back)
        returned = code.returned + code.weight_grads
        if self.split:
            return self._split(fwd, back, code.result, code.d_res, returned)
        return [self._entry(fwd, back, code.result, code.returned, code.weight_grads)]

    def _optimizer(self, pure, owned):
        sw = self.sweeps
        add = sw.namespace.bind(runtime.add, "add")
        return optimize.Optimizer(pure, sw.impure_calls, owned,
                                  {add, sw.namespace.bind(runtime.add_at, "add_at")}, add,
                                  _zero_test(sw), functools.partial(_array_helper, sw),
                                  self.merge)

    def _weight_returns(self):
        """One expression per weight returned: the sum of its accumulators (0 if none)."""
        sw, out = self.sweeps, []
        for index in self.weight_indices:
            keys = [k for k, i in sw.weight_keys.items() if i == index]
            terms = [A.load(sw.adjoints(k)) for k in keys]
            expr = terms[0] if terms else A.zero()
            for term in terms[1:]:
                expr = A.binop(expr, gast.Add(), term)
            out.append(expr)
        return out

    def _entry(self, fwd, back, result, returned, weight_grads):
        sw = self.sweeps
        params = sw.fdef.args
        arguments = {a.id for a in params.args + params.kwonlyargs}
        prologue = [A.assign(n, A.const(None)) for n in sorted(sw.pushed - arguments)]
        if isinstance(result, gast.Name) and result.id in A.names_in(back, gast.Store):
            # the backward sweep pops or restores this name: return the forward sweep's value
            kept = self._fresh(naming.kept_result(result.id))
            fwd = fwd + [A.assign(kept, A.load(result.id))]
            result = A.load(kept)
        tape = [A.assign(sw.tape, gast.List(elts=[], ctx=gast.Load()))] if sw.uses_tape else []
        args = arguments_of([a.id for a in params.args],
                            [a.id for a in params.kwonlyargs] + [self._fresh(naming.SENSITIVITY)])
        ret = gast.Return(value=A.tuple_([A.clone(result), A.tuple_(returned),
                                          A.tuple_(weight_grads)]))
        body = prologue + tape + fwd + [emit.comment("backward sweep")] + back + [ret]
        return function_def(self.names[0], args, body)

    def _split(self, fwd, back, result, d_res, returned):
        sw = self.sweeps
        saved = sorted((A.names_in(back, gast.Load) & sw.local_names) - sw.pure - {sw.tape})
        always = {t.id for st in sw.fdef.body if isinstance(st, gast.Assign)
                  for t in st.targets if isinstance(t, gast.Name)}
        params = [a.id for a in sw.fdef.args.args + sw.fdef.args.kwonlyargs]
        prologue = [A.assign(n, A.const(None)) for n in
                    sorted(sw.pushed | (set(saved) - always)) if n not in params]
        save, load = [], []
        if saved:
            values = [A.call(sw.namespace.helper(runtime.snapshot), A.load(n))
                      if n in sw.containers else A.load(n) for n in saved]
            packed = A.tuple_(values) if len(values) > 1 else values[0]
            save = cf.push.fill(sw.namespace, tape=sw.tape, value=packed)
            load = cf.pop.fill(sw.namespace, tape=sw.tape, target=saved)
        # Callers pass every argument positionally, keyword-only ones too. The forward function
        # keeps its own tape and returns it: the caller hands it to the backward function, so
        # no list is shared and mutated across calls (grad of grad differentiates through it).
        new_tape = A.assign(sw.tape, gast.List(elts=[], ctx=gast.Load()))
        returned_pair = A.tuple_([A.clone(result), A.load(sw.tape)])
        forward = function_def(self.names[0], arguments_of(params, []), prologue + [new_tape] +
                               fwd + save + [gast.Return(value=returned_pair)])
        d_in = d_res or self._fresh(naming.RESULT_ADJOINT)
        ret = returned[0] if len(returned) == 1 else A.tuple_(returned)
        backward = function_def(self.names[1], arguments_of([sw.tape, d_in], []),
                                load + back + [gast.Return(value=ret)])
        return [forward, backward]


def optimize_tangents(code):
    """The optimize stage of forward mode: the tangent code without what is not needed."""
    add = code.namespace.bound(runtime.add)  # accumulates container tangents
    accumulators = {add} if add else set()
    body = optimize.Optimizer(code.pure, code.impure_calls, set(), accumulators,
                              add).run(code.statements, set())
    return dataclasses.replace(code, statements=body)


def tangent_function(code, name, entry):
    """``name(params..., t_<active>...) -> (result, tangent)`` from ``forward.TangentCode``;
    an entry takes the tangents by keyword (defaulted parameters may be left out)."""
    body = code.statements
    args = code.fdef.args
    params, kwonly = [a.id for a in args.args], [a.id for a in args.kwonlyargs]
    arguments = arguments_of(params, kwonly + code.tangent_params) if entry else \
        arguments_of(params + kwonly + code.tangent_params, [])
    return function_def(name, arguments, body)


def _zero_test(sweeps):
    """The name of ``runtime.is_zero`` in the code, whose guards of zero-unsafe rules the
    optimize stage drops where the gradient is known to hold a value; None in mindgrad's own
    code (grad of grad), where any value may be a symbolic zero: its guards all stay."""
    if sweeps.namespace.src.is_mindgrad_code:
        return None
    return sweeps.namespace.bind(runtime.is_zero, "is_zero")


def _array_helper(sweeps, name):
    """What the helper ``name`` of the code returns: ``"always"`` a value (never the
    symbolic 0), ``"keeps"``: a value when a gradient it is given holds one (helpers marked
    ``runtime.takes_zero``, and ``add_at``: in the user's code the array it indexes is a
    value, never a zero), or None: not known."""
    obj = sweeps.namespace.bindings.get(name)
    if obj is None:
        obj = sweeps.namespace.src.resolve(name, None)
    if obj is runtime.seed or obj is runtime.zeros_buffer:
        return "always"
    if getattr(obj, "keeps_values", False) is True or any(
            obj is f for f in (runtime.unbroadcast, runtime.unreduce, runtime.add,
                               runtime.add_at)):
        return "keeps"
    return None


def own_returns(fdef):
    """The ``return`` statements of ``fdef``'s own body (not of the functions it defines)."""
    found, stack = [], list(fdef.body)
    while stack:
        node = stack.pop()
        if isinstance(node, gast.Return):
            found.append(node)
        elif not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef,
                                   gast.Lambda)):
            stack.extend(gast.iter_child_nodes(node))
    return found


def arguments_of(names, kwonly):
    return gast.arguments(args=[A.store(n) for n in names], posonlyargs=[], vararg=None,
                          kwonlyargs=[A.store(n) for n in kwonly],
                          kw_defaults=[None for _ in kwonly], kwarg=None, defaults=[])


def function_def(name, args, body):
    for n in args.args + args.kwonlyargs:
        n.ctx = gast.Param()
    return gast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None,
                            type_comment=None, type_params=[])
