"""What generated gradient code calls at run time.

Conventions shared by every helper here and by the generated code:

* The zero gradient is ``zero``, a ``Zero`` (module ``symbolic_zero``): it costs nothing to
  create, adding it is the identity, linear operations on it give it back, and
  ``Zero.like(x)`` knows the shape and dtype of ``x``. Gradients are materialised as arrays
  only where a value flows; ``is_zero`` recognises it (and the int 0 or None a user's
  ``bprop`` may return). The functions here take it, and so do the rules' helpers: their first
  test is ``is_zero``, ``is_any_zero`` (``takes_zero``) or ``zero_in`` (``zero_in_zero_out``).
* Helpers never mutate their arguments, except ``add_at`` and ``setitem_grad``, which update
  a gradient buffer that the generated code owns (it was created by ``add_at`` itself or by an
  ``a + b`` expression, never aliased).

The helpers live in five modules and are all read from this package: ``symbolic_zero`` (the
zero), ``core`` (its tests and the arithmetic of gradients), ``buffers`` (index writes, the
tape's saved items, sequences), ``forward`` (tangents of values that are not arrays;
``tangents`` holds the tangent types) and ``outputs`` (the output checked and the backward sweep
seeded).
"""

from __future__ import annotations

from mindgrad.runtime.buffers import (
    Closure,
    add_at,
    add_or_concat_grads,
    as_sequence,
    call_starred,
    concat_grads,
    item,
    pop_grad,
    private_copy,
    push_grad,
    refuse_array,
    refuse_dict,
    repeated_grads,
    restore_item,
    reversed_items,
    saved_item,
    setitem_grad,
    snapshot,
    tangent_push_grad,
    zeros_buffer,
)
from mindgrad.runtime.core import (
    GradientError,
    add,
    inexact,
    is_any_zero,
    is_zero,
    real_grad,
    takes_zero,
    times_slope,
    unbroadcast,
    unreduce,
    user_method,
    zero_in,
    zero_in_zero_out,
)
from mindgrad.runtime.forward import (
    adds_elementwise,
    concat_tangents,
    tangent_append,
    tangent_of_item,
    tangent_pop,
    tangent_setitem,
    tangent_unpop,
    zero_tangent,
)
from mindgrad.runtime.outputs import (
    AuxSens,
    as_grad,
    bprop_grads,
    check_output_differentiable,
    complex_output_error,
    holds_complex,
    holds_float,
    independent,
    output_is_differentiable,
    seed,
    seed_passed,
)
from mindgrad.runtime.symbolic_zero import Zero, zero
from mindgrad.runtime.trees import rebuild

__all__ = [
    "AuxSens",
    "Closure",
    "Zero",
    "GradientError",
    "add",
    "add_at",
    "adds_elementwise",
    "as_grad",
    "as_sequence",
    "bprop_grads",
    "call_starred",
    "check_output_differentiable",
    "complex_output_error",
    "concat_grads",
    "add_or_concat_grads",
    "repeated_grads",
    "concat_tangents",
    "holds_float",
    "independent",
    "inexact",
    "is_any_zero",
    "is_zero",
    "item",
    "holds_complex",
    "output_is_differentiable",
    "pop_grad",
    "private_copy",
    "push_grad",
    "real_grad",
    "rebuild",
    "refuse_array",
    "refuse_dict",
    "restore_item",
    "reversed_items",
    "saved_item",
    "seed",
    "seed_passed",
    "setitem_grad",
    "snapshot",
    "takes_zero",
    "tangent_append",
    "tangent_of_item",
    "tangent_pop",
    "tangent_push_grad",
    "tangent_setitem",
    "tangent_unpop",
    "times_slope",
    "unbroadcast",
    "unreduce",
    "user_method",
    "zero",
    "zero_in",
    "zero_in_zero_out",
    "zero_tangent",
    "zeros_buffer",
]

# Their public home is this package, as NumPy's functions are numpy's: a standalone module of
# generated code imports them from here (``from mindgrad.runtime import seed``), whichever of
# the modules above holds them
for _name in __all__:
    if _name != "zero":  # an instance: its class says where it comes from
        globals()[_name].__module__ = __name__
del _name
