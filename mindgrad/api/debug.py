"""``debug``: run a call under pdb, stopping at the first line of the generated code it runs.

A breakpoint set on a line of the user's function (``b model.py:5``) never fires while a
gradient runs: the function running then is the generated code, compiled from its own text
(shown by ``mindgrad.source``). ``debug(grad_fn, x)`` stops where that code starts; from there
``next``, ``step``, ``p name``, ``where`` and ``continue`` work as usual.
"""

from __future__ import annotations

import pdb

from mindgrad.compiler.finish import emit

__all__ = ["debug"]


class _Debugger(pdb.Pdb):
    """pdb that runs freely until a frame of generated code (made from a user's line) starts,
    then stops at its first line and steps as pdb does."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.entered = None  # the first frame of generated code, once it has started

    def stop_here(self, frame):
        if self.entered is None:
            code = frame.f_code
            if not emit.is_generated(code.co_filename) or \
                    emit.origin(code.co_filename, code.co_firstlineno) is None:
                return False
            self.entered = frame
            self.set_step()
        return super().stop_here(frame)

    def user_call(self, frame, argument_list):
        if frame is self.entered:
            return  # its call event: stop at its first line instead
        super().user_call(frame, argument_list)


def debug(fn, *args, **kwargs):
    """Call ``fn(*args, **kwargs)`` (a gradient function, ``mindgrad.jvp``, anything that runs
    generated code) under pdb, stopping at the first line of the generated code it runs;
    returns what ``fn`` returns. ``debug(mindgrad.grad(f), x)`` stops in ``grad_f``;
    ``debug(mindgrad.jvp, f, (x,), (v,))`` in ``jvp_f``."""
    return _Debugger().runcall(fn, *args, **kwargs)
