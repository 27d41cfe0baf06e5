"""Part of stage 5, reverse: the adjoints of single statements (see reverse.py).

``y = <op>``, classified once (operations.py), adds to the adjoints of the operation's active
operands from ``d_y`` (the operation's adjoint: reverse_operations.py), then clears ``d_y``; an
assignment that overwrites a value the backward sweep reads saves it on the tape first.
``x[i] = v``, ``xs.append(v)`` and ``xs.pop()`` change a value in place: their adjoints restore
it (in a copy the backward sweep owns) and split the gradient of the whole into its parts.

A call of the user's own code (a function, a method, a Cell, a callable object) runs its
forward function in the forward sweep and its backward function in the backward sweep; the
pass asks ``callees.Callees`` for their names, the driver builds them. A Cell with its own
``bprop`` runs as written and its ``bprop`` backwards.
"""

from __future__ import annotations

import gast

from mindgrad import runtime
from mindgrad.compiler import astutil as A
from mindgrad.compiler import expansions, naming, objects
from mindgrad.compiler.facts import activity
from mindgrad.compiler.facts.analysis import call_shape, without_receiver
from mindgrad.compiler.transform import control_flow as cf
from mindgrad.compiler.transform import operations as ops
from mindgrad.compiler.transform.messages import source_text
from mindgrad.compiler.transform.operations import starred_call
from mindgrad.compiler.transform.reverse_context import ReverseContext
from mindgrad.compiler.transform.reverse_operations import AdjointWriter
from mindgrad.errors import NoGradientRuleError


class StatementAdjoints:
    """The forward and backward sweeps' statements for one assignment or expression statement,
    written in the context ``cx``: ``assign``, ``setitem`` and ``expr`` each return
    ``(forward statements, backward statements)``."""

    def __init__(self, cx: ReverseContext):
        self.cx = cx
        self.operations = AdjointWriter(cx)

    def assign(self, s, name, value, in_loop):
        cx = self.cx
        s, value = cx.strict_zero_test(s, name, value)
        cx.refuse_argument_method(s)
        fwd, bwd = cx.number_check(s), []
        push = cx.needs_push(name, in_loop)
        cx.shapes[name] = cx.result_token(value)
        if push:
            fwd.append(cx.push(A.load(name), s))
        if isinstance(value, gast.Call) and (cx.weights or cx.is_active_call(value)):
            refused = self.check_callee(s, value)
            if refused:  # raised where the call runs: no gradient goes through it
                return fwd + refused + [s], []
        if cx.reads_a_view_kept(name, value):
            s = A.assign(name, A.call(cx.helper(runtime.saved_item), A.clone(value.value),
                                      cx.index_value(value.slice)), s)
        op = ops.classify(value, cx.resolve, cx.containers, cx.weight_keys)
        if isinstance(value, gast.Call) and cx.is_active_call(value):
            callee = None if starred_call(value, cx.resolve) else cx.callee_of(value)
            if starred_call(value, cx.resolve):
                f, b = self.call_dynamic(s, name, value, in_loop)
                fwd.extend(f)
                bwd.extend(b)
            elif callee is not None:
                f, b = self.call_user(s, name, value, callee, in_loop)
                fwd.extend(f)
                bwd.extend(b)
            elif isinstance(op, ops.UnknownFunction):
                f, b = self.call_dynamic(s, name, value, in_loop)
                fwd.extend(f)
                bwd.extend(b)
            else:
                fwd.append(s)
                bwd.extend(self.operations.write(op, s, name, value))
        else:
            fwd.append(s)
            if name in cx.active and activity.value_is_active(value, cx.active, cx.resolve):
                bwd.extend(self.operations.write(op, s, name, value))
        if name in cx.active:
            bwd.append(A.assign(cx.d(name), A.zero(), s))
        if isinstance(op, ops.ListPop):
            # undo the pop, so the statements before it see the list as it was
            receiver = op.receiver
            undo = A.expr_stmt(A.call(A.attr(A.clone(receiver), "append"), A.load(name)), s)
            bwd.extend((cx.private(receiver.id, s) if isinstance(receiver, gast.Name)
                        else []) + [undo])
        elif isinstance(op, ops.TangentPop):
            tangents = op.receiver.id  # forward-mode code: the tangent list popped in step
            undo = A.expr_stmt(A.call(cx.helper(runtime.tangent_unpop), A.load(tangents),
                                      A.load(name)), s)
            bwd.extend(cx.private(tangents, s) + [undo])
        if push:
            bwd.append(cx.pop(name, s))
        return fwd, bwd

    def setitem(self, s, target, in_loop):
        """``x[idx] = v``: the old value is saved; its gradient is cleared in the backward."""
        cx = self.cx
        base = target.value.id
        cx.refuse_argument_write(s)
        read_back = cx.aliases.sharing_writes.get(id(s), set()) & (cx.needed or set())
        for other in sorted(read_back - cx.view_reads) if cx.aliases.checked else ():
            cx.fail(s, f"index assignment into {base!r} changes {other!r}, which may share its "
                       f"memory (another name for the same array, or a view) and which the "
                       f"gradient reads; make a copy ({other} = {other}.copy())")
        index = cx.index_value(target.slice)
        fwd, bwd = [], []
        needed = cx.needed is not None and base in cx.needed
        if needed:
            saved = A.call(cx.helper(runtime.saved_item), A.load(base), A.clone(index))
            fwd.append(cx.push(saved, s))
        fwd.append(s)
        if base in cx.active:
            v = s.value
            part = cx.fresh(naming.assigned_item(base))
            cx.pure.add(part)
            grad = A.call(cx.helper(runtime.setitem_grad), A.load(cx.d(base)),
                          A.clone(index), A.clone(v))
            bwd.append(A.assign(A.tuple_([A.store(part), A.store(cx.d(base))], gast.Store()),
                                grad, s))
            if cx.is_active(v):
                bwd.append(cx.accumulate(v.id, A.load(part), s))
        if needed:
            restore = A.call(cx.helper(runtime.restore_item), A.load(base), A.clone(index),
                             cx.popped())
            bwd.extend(cx.private(base, s) + [A.expr_stmt(restore, s)])
        return fwd, bwd

    def expr(self, s, in_loop):
        cx = self.cx
        call = s.value
        if not isinstance(call, gast.Call):
            return [s], []
        cx.refuse_argument_method(s)
        func = call.func
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
                and func.value.id in cx.local_names:
            base = func.value.id
            # the list may be the caller's (taken from a tape at a higher order): another
            # function's backward sweep sees it, so the append is undone as a pop would be
            restore = id(s) in cx.aliases.argument_methods or (
                cx.needed is not None and base in cx.needed)
            if func.attr == "append" and (base in cx.active or restore):
                bwd = []
                if base in cx.active:
                    part = cx.fresh(naming.appended_item(base))
                    cx.pure.add(part)
                    bwd.append(A.assign(A.tuple_([A.store(part), A.store(cx.d(base))],
                                                 gast.Store()),
                                        A.call(cx.helper(runtime.pop_grad),
                                               A.load(cx.d(base))), s))
                    if call.args and cx.is_active(call.args[0]):
                        bwd.append(cx.accumulate(call.args[0].id, A.load(part), s))
                if restore:
                    bwd.extend(cx.private(base, s) +
                               [A.expr_stmt(A.call(A.attr(A.load(base), "pop")), s)])
                return [s], bwd
        cx.refuse_lost_write(s, call)
        return [s], []

    # ----- calls of the user's code --------------------------------------------------------

    def check_callee(self, s, call):
        """A call through a local variable holding a function or Cell cannot be followed:
        the statements refusing it where it runs, before it (a branch the arguments never
        take may hold it: ``if callable(c): c(x)``), rather than take its result as a
        constant; else none."""
        cx = self.cx
        func = call.func
        if cx.resolve.receiver(func) is not None and cx.weights and \
                not cx.is_active_call(call):
            # a method of a Cell held in a local may read the weights asked for
            return cx.check_receiver(s, func, NoGradientRuleError)
        if cx.resolve.receiver(func) is not None or cx.resolve(func) is not None:
            return []
        root = func
        while isinstance(root, (gast.Attribute, gast.Subscript)):
            root = root.value
        if isinstance(root, gast.Name) and root.id in cx.local_names and cx.weights:
            return cx.fail_when_run(
                s, f"cannot tell which function {source_text(func)} is: it is a local "
                   "variable set while the function runs. Call the Cell or function through "
                   "its attribute (self.block(x)) or a global name, or loop over a list of "
                   "Cells stored on the Cell (for layer in self.layers): the weights it reads "
                   "are differentiated", NameError, "unknown_function")
        return []

    def call_dynamic(self, s, name, call, in_loop=False):
        """``name = f(...)`` for a function ``f`` the code reaches only when it runs (a
        parameter, an item of a container): the run-time dispatcher gives its generated code
        for the kinds of the arguments (``expansions.dynamic_split``).

        ``(f_forward, f_backward) = call_split(f, positions, ...)`` and ``name, name_tape =
        f_forward(...)`` now; later ``f_backward(name_tape, d_name)``."""
        cx = self.cx
        if name not in cx.active:
            return [s], []
        active, label, split, passed = cx.dispatched(call, expansions.dynamic_split)
        if not active:
            return [s], []
        forward_fn = cx.fresh(f"{label}_forward")
        backward_fn = cx.fresh(f"{label}_backward")
        ctx = cx.fresh(naming.callee_tape(name))
        cx.local_names.update((forward_fn, backward_fn, ctx))
        run = A.call(A.load(forward_fn), *passed)
        forward = [A.assign(A.tuple_([A.store(forward_fn), A.store(backward_fn)], gast.Store()),
                            split, s),
                   A.assign(A.tuple_([A.store(name), A.store(ctx)], gast.Store()), run, s)]
        restore = []
        if in_loop or cx.defs.get(name, 0) > 1:  # each run of the call keeps its own tape
            forward[:0] = [cx.push(A.load(ctx), s), cx.push(A.load(backward_fn), s)]
            restore = [cx.pop(backward_fn, s), cx.pop(ctx, s)]
        parts = [cx.fresh(naming.callee_part(cx.key(a), label)) for _, a in active]
        cx.pure.update(parts)
        target = A.store(parts[0]) if len(parts) == 1 else \
            A.tuple_([A.store(p) for p in parts], gast.Store())
        bwd = [A.assign(target, A.call(A.load(backward_fn), A.load(ctx), A.load(cx.d(name))), s)]
        cx.impure_calls.add(backward_fn)
        for part, (_, arg) in zip(parts, active):
            bwd.append(cx.accumulate(arg, A.load(part), s))
        return forward, bwd + restore

    def call_user(self, s, name, call, callee, in_loop=False):
        """``name = f(...)`` for the user's own code: its forward now, its backward later.

        ``name, name_tape = f_forward(...)``; later ``f_backward(name_tape, d_name)``.
        """
        cx = self.cx
        fn, obj, self_expr = callee
        call = without_receiver(call, self_expr)
        if obj is not None and hasattr(type(obj), "bprop") and objects.is_module(obj):
            return self.call_bprop(s, name, call, obj)
        args = cx.bound_arguments(s, fn, obj, call)
        mask = tuple(cx.is_active(a) for a in args)
        scalar = tuple(cx.is_scalar(a) for a in args)
        if name not in cx.active:
            return [s], []  # nothing to differentiate: the call as written
        real = tuple(cx.is_real(a) for a in args)
        names = cx.callees.names_for(fn, obj, mask, scalar, call_shape(fn, obj, call), real)
        head = [A.clone(self_expr)] if obj is not None else []
        ctx = cx.fresh(naming.callee_tape(name))
        cx.local_names.add(ctx)
        forward = cf.call_forward.fill(cx.namespace, s, result=name, result_tape=ctx,
                                       forward=names.forward, args=head + args)
        restore = []
        if in_loop or cx.defs.get(name, 0) > 1:  # each run of the call keeps its own tape
            forward.insert(0, cx.push(A.load(ctx), s))
            restore = [cx.pop(ctx, s)]
        label = naming.label(fn.__name__, obj)
        active_args = [a for a, m in zip(args, mask) if m]
        parts = [cx.fresh(naming.callee_part(cx.key(a), label)) for a in active_args]
        weight_parts = [cx.fresh(naming.callee_part(naming.object_label(cx.weights[i]), label))
                        for i in names.weights]
        everything = parts + weight_parts
        cx.pure.update(everything)
        bwd = cf.call_backward.fill(cx.namespace, s, grads=everything,
                                    backward=names.backward, result_tape=ctx,
                                    d_result=cx.d(name))
        cx.impure_calls.add(names.backward)
        for part, arg in zip(parts, active_args):
            bwd.append(cx.accumulate(arg, A.load(part), s))
        for part, index in zip(weight_parts, names.weights):
            bwd.append(cx.accumulate(cx.weight_accumulator(index), A.load(part), s))
        return forward, bwd + restore

    def call_bprop(self, s, name, call, cell):
        """A Cell with its own ``bprop``: run it as written, and call ``bprop`` backwards."""
        cx = self.cx
        args = list(call.args)
        if call.keywords:
            cx.fail(s, "a Cell with a custom bprop must be called with positional arguments",
                    TypeError)
        forward = A.assign(name, call, s)
        if name not in cx.active:
            return [forward], []
        parts = cx.fresh(naming.bprop_part(cell))
        cx.pure.add(parts)
        bwd = cf.call_bprop.fill(cx.namespace, s, grads=parts, cell=call.func, args=args,
                                 result=name, d_result=cx.d(name))
        cx.impure_calls.add(parts)
        for i, arg in enumerate(args):
            if cx.is_active(arg):
                bwd.append(cx.accumulate(arg, A.subscript(A.load(parts), A.const(i)), s))
        return [forward], bwd
