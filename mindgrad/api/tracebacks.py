"""Tracebacks that point at the user's code, not at mindgrad's.

An exception leaving a public entry point (a gradient function's call, ``jvp``, ``vjp`` and
its ``vjp_fn``, a Jacobian's call, ``check_grads``) has its ``__traceback__`` rewritten by
``user_frames``: mindgrad's own frames (api, compiler, runtime, rules) are dropped, and before
each frame of generated code comes a frame at the user's line it was generated from, in the
user's function, so every printer (Python's default excepthook, ``traceback``, IPython and
Jupyter, which read the line from the file or from ``linecache``) shows the user's file, line
and text. On Python 3.11+ a note names the user's line and the generated line the error was
raised at. The exception keeps its type, message, cause and context.

``MINDGRAD_TRACEBACK_FILTERING=off`` in the environment leaves tracebacks as they are.
"""

from __future__ import annotations

import ast
import functools
import linecache
import os
import sys
import types

from mindgrad.compiler import emit

__all__ = ["FILTERING_VARIABLE", "filtering", "user_frames"]

FILTERING_VARIABLE = "MINDGRAD_TRACEBACK_FILTERING"
_NOTE = "mindgrad: "  # how the note this module adds begins
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def filtering() -> bool:
    """Whether tracebacks are rewritten: unless ``MINDGRAD_TRACEBACK_FILTERING`` is off."""
    return os.environ.get(FILTERING_VARIABLE, "on").strip().lower() not in (
        "off", "0", "false", "no")


def user_frames(fn):
    """``fn`` (a public entry point) raising what it raises with the traceback rewritten."""

    @functools.wraps(fn)
    def entry_point(*args, **kwargs):
        __tracebackhide__ = True  # IPython, Jupyter and pytest leave this frame out
        try:
            return fn(*args, **kwargs)
        except Exception as caught:
            if not filtering():
                raise
            error = caught
        try:
            frames = _rewritten(error)
        except Exception:  # pragma: no cover (a traceback as it was beats none)
            frames = error.__traceback__
        # the frames below: the user's lines, each above the generated code run for it
        raise error.with_traceback(frames)  # MINDGRAD_TRACEBACK_FILTERING=off shows all

    return entry_point


class _UserLine(Exception):
    """Raised by the code standing for a user's line, to make a frame of it."""


# (filename, line, function name) -> the code object of the frame standing for that line
_codes: dict = {}
_code_set: set = set()


def _rewritten(error):
    """``error``'s traceback without mindgrad's frames, each generated frame preceded by a
    frame at the user's line it comes from; the innermost such line is noted on the error."""
    kept, innermost = [], None
    tb = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        filename = code.co_filename
        if code in _code_set:  # a user's line, put there by an entry point called inside
            kept.append(tb)
        elif emit.is_generated(filename):
            where = emit.origin(filename, tb.tb_lineno)
            if where is not None:  # else a wrapper of mindgrad's own: dropped
                standing = _code_for(*where)
                previous = kept[-1] if kept else None
                # none between repeats of one generated line (recursion), which printers fold
                if previous is None or previous.tb_frame.f_code is not standing and not (
                        previous.tb_frame.f_code is code and previous.tb_lineno == tb.tb_lineno):
                    kept.append(_user_tb(standing))
                kept.append(tb)
                innermost = (where, filename, tb.tb_lineno, code.co_name)
        elif not filename.startswith(_PACKAGE):
            kept.append(tb)
        tb = tb.tb_next
    if innermost is not None:
        _note(error, *innermost)
    chain = None
    for tb in reversed(kept):
        chain = types.TracebackType(chain, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    return chain


def _code_for(filename, lineno, name):
    """A code object that raises at ``filename:lineno`` in a function called ``name``; its
    columns span the line's text, so no printer underlines a part of it."""
    key = (filename, lineno, name)
    if key not in _codes:
        line = linecache.getline(filename, lineno).rstrip()
        start = len(line.encode()) - len(line.lstrip().encode())
        end = max(len(line.encode()), start)
        place = dict(lineno=lineno, end_lineno=lineno, col_offset=start, end_col_offset=end)
        raise_ = ast.Raise(exc=ast.Name(id="__mindgrad_user_line__", ctx=ast.Load(), **place),
                           cause=None, **place)
        code = compile(ast.Module(body=[raise_], type_ignores=[]), filename, "exec")
        code = code.replace(co_name=name)
        if sys.version_info >= (3, 11):
            code = code.replace(co_qualname=name)
        _codes[key] = code
        _code_set.add(code)
    return _codes[key]


def _user_tb(code):
    """A traceback entry of a frame running ``code`` at the line it raises from."""
    try:
        exec(code, {"__name__": "__mindgrad__", "__mindgrad_user_line__": _UserLine})  # noqa: S102
    except _UserLine as raised:
        return raised.__traceback__.tb_next
    raise AssertionError("a user's line frame did not raise")  # pragma: no cover


def _note(error, where, generated_file, generated_line, generated_name):
    """On Python 3.11+, note the user's line and the generated line the error comes from (the
    default printer of 3.11 and 3.12 shows no text for generated code); once."""
    if sys.version_info < (3, 11):
        return
    if any(str(n).startswith(_NOTE) for n in getattr(error, "__notes__", ())):
        return
    filename, lineno, name = where
    user_text = linecache.getline(filename, lineno).strip()
    generated_text = linecache.getline(generated_file, generated_line).strip()
    error.add_note(f"{_NOTE}raised at {filename}:{lineno} in {name}: {user_text}\n"
                   f"  generated code: {generated_file}:{generated_line} in {generated_name}: "
                   f"{generated_text}")
