"""The stages of ``vmap``: a function's batched source, built once per kind of arguments.

    PARSE    source -> fence -> normalize        as for the derivatives
    BATCH    batch                               batch.py: the batched function
             (or taylor                          taylor.py: jet's Taylor function)
    FINISH   emit -> compile

``build(fn, obj, examples, batched)`` runs them; ``Compiled.fits()`` says whether what the
build read of the globals (their kinds and dimensions) still holds.
"""

from __future__ import annotations

import dataclasses

from mindgrad.compiler import naming
from mindgrad.compiler.driver import Build, Unit, without_cycle_collection
from mindgrad.compiler.finish import emit
from mindgrad.compiler.transform import batch, taylor
from mindgrad.compiler.transform import batch_facts as F


@dataclasses.dataclass
class Compiled:
    function: object       # (params..., batch_size) -> the result, batch axis first
    text: str
    looped: list           # (line, why) of each statement run once per example
    read: list             # (resolve, node, Info) of each global value the build read
    stages: list
    result: F.Info         # the result of one example
    writes: bool = False   # whether it writes into arrays (so takes copies of the arguments)
    gradients: dict = dataclasses.field(default_factory=dict)  # the API's, of this code

    def fits(self) -> bool:
        return all(F.info_of_value(resolve(node)) == info for resolve, node, info in self.read)


def _looped_text(written, first_line, taylor_mode=False):
    if taylor_mode:
        return "every operation carries its Taylor series"
    if not written.looped:
        return "every statement computes all the examples at once"
    return "\n".join(f"line {first_line + line - 1}: run once per example ({why})"
                     for line, why in written.looped)


@without_cycle_collection
def build(fn, obj, examples, batched, dump=None, taylor_mode=False) -> Compiled:
    """The batched function of ``fn`` (bound to ``obj`` for a Cell's construct): ``examples``
    holds one example of each argument (``obj`` first, when given), ``batched`` the positions
    of the arguments that carry the batch axis. Raises ``batch.Unbatchable`` (or the parse's
    own error) where the function cannot be written batched. With ``taylor_mode``, the Taylor
    function instead (stage "taylor"), every argument a series."""
    made = Build(dump or (lambda _: None))  # the stages are kept for ``stages()``
    src, fdef, taken = made.parse(fn, obj)
    params = [a.id for a in fdef.args.args]
    if len(params) != len(examples):
        raise batch.Unbatchable("the call does not give each parameter by position")
    infos = {p: F.info_of_value(v) for p, v in zip(params, examples)}
    label = naming.label(src.name, obj)
    name = ("taylor_" if taylor_mode else "vmap_") + label
    names = naming.NameGen(set(taken) | {name})
    writer = (taylor.TaylorWriter if taylor_mode else batch.BatchWriter)(
        src, fdef, infos, {params[i] for i in batched}, names, name, examples)
    written = writer.write()
    made.record("taylor" if taylor_mode else "batch", src.name,
                lambda: _looped_text(written, src.first_line, taylor_mode) + "\n\n" +
                emit.unparse(written.fdef))
    made.units.append(Unit(src, [written.fdef], written.namespace.bindings))
    functions, _, text = made.compile(name)
    result = writer.facts.of(fdef.body[-1].value) or F.UNKNOWN
    return Compiled(functions[name], text, written.looped, writer.facts.read, made.stages,
                    result, bool(writer.written))
