"""Tracebacks that point at the user's code, not at mindgrad's.

An exception leaving a public entry point (a gradient function's call, ``jvp``, ``vjp`` and
its ``vjp_fn``, a Jacobian's call, ``check_grads``) has its ``__traceback__`` rewritten by
``user_frames``: mindgrad's own frames (api, compiler, runtime, rules) are dropped, and before
each frame of generated code comes a frame at the user's line it was generated from, in the
user's function, so every printer (Python's default excepthook, ``traceback``, IPython and
Jupyter, which read the line from the file or from ``linecache``) shows the user's file, line
and text. On Python 3.11+ a note names the user's line and the generated line the error was
raised at. The exception keeps its type, message, cause and context. A warning raised in
generated code (NumPy's ``invalid value encountered in log``) names the user's file, line and
text too: ``warnings._showwarnmsg``, through which every warning passing the filters is shown
or recorded, is wrapped to move it there.

``MINDGRAD_TRACEBACK_FILTERING=off`` in the environment leaves tracebacks and warnings as they
are.
"""

from __future__ import annotations

import ast
import functools
import linecache
import os
import sys
import types
import warnings

from mindgrad.compiler.finish import emit

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


_MARK = "__mindgrad_user_line__"  # the global a frame standing for a user's line raises
# a function definition's type parameters, on Python 3.12+
_TYPE_PARAMS = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
# (filename, line, function name, first line, local names) -> the code of the frame standing
# for that line
_codes: dict = {}


def _is_standing(frame) -> bool:
    """Whether ``frame`` stands for a user's line (made by ``_user_tb``)."""
    return frame.f_globals.get(_MARK) is _UserLine


def _rewritten(error):
    """``error``'s traceback without mindgrad's frames, each generated frame preceded by a
    frame at the user's line it comes from; the innermost such line is noted on the error."""
    kept, innermost = [], None  # (traceback entry, the user's line it stands for or None)
    tb = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        filename = code.co_filename
        if _is_standing(tb.tb_frame):  # a user's line, put there by an entry point inside
            kept.append((tb, None))
        elif emit.is_generated(filename):
            where = emit.origin(filename, tb.tb_lineno)
            if where is not None:  # else a wrapper of mindgrad's own: dropped
                previous, standing_for = kept[-1] if kept else (None, None)
                # none between repeats of one generated line (recursion), which printers fold
                if previous is None or standing_for != where and not (
                        previous.tb_frame.f_code is code and previous.tb_lineno == tb.tb_lineno):
                    kept.append((_user_tb(where, tb.tb_frame), where))
                kept.append((tb, None))
                innermost = (where, filename, tb.tb_lineno, code.co_name)
        elif not filename.startswith(_PACKAGE):
            kept.append((tb, None))
        tb = tb.tb_next
    if innermost is not None:
        _note(error, *innermost)
    chain = None
    for tb, _ in reversed(kept):
        chain = types.TracebackType(chain, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    return chain


def _function_node(filename, lineno, name):
    """The innermost function (``def`` or ``lambda``) of ``filename``'s text around line
    ``lineno``, the one called ``name`` where several are; None where the text does not parse."""
    tree = _parsed("".join(linecache.getlines(filename)))
    if tree is None:
        return None
    around = [node for node in ast.walk(tree)
              if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
              and node.lineno <= lineno <= (node.end_lineno or node.lineno)]
    named = [node for node in around if getattr(node, "name", "<lambda>") == name]
    found = sorted(named or around, key=lambda node: node.lineno)
    return found[-1] if found else None


@functools.lru_cache(maxsize=16)
def _parsed(text):
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _code_for(filename, lineno, name, node, names):
    """A function's code that raises at ``filename:lineno``, called ``name``, with the
    parameters ``names``, starting where the user's function does: a printer that reads the
    function's lines from its first one (IPython's, for a notebook cell's) shows the user's
    function with the arrow at ``lineno``. Its columns span the line's text, so no printer
    underlines a part of it. ``node`` is the user's function, where it was found."""
    first = lineno
    if node is not None:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
    key = (filename, lineno, name, first, names)
    if key not in _codes:
        line = linecache.getline(filename, lineno).rstrip()
        start = len(line.encode()) - len(line.lstrip().encode())
        end = max(len(line.encode()), start)
        place = dict(lineno=lineno, end_lineno=lineno, col_offset=start, end_col_offset=end)
        raise_ = ast.Raise(exc=ast.Name(id=_MARK, ctx=ast.Load(), **place), cause=None, **place)
        arguments = ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in names],
                                  vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                                  defaults=[])
        define = ast.FunctionDef(name="standing", args=arguments, body=[raise_],
                                 decorator_list=[], returns=None, lineno=first, col_offset=0,
                                 end_lineno=lineno, end_col_offset=end,
                                 **_TYPE_PARAMS)
        module = ast.fix_missing_locations(ast.Module(body=[define], type_ignores=[]))
        code = next(c for c in compile(module, filename, "exec").co_consts
                    if isinstance(c, types.CodeType))
        code = code.replace(co_name=name)
        if sys.version_info >= (3, 11):
            code = code.replace(co_qualname=name)
        _codes[key] = code
    return _codes[key]


def _user_tb(where, generated):
    """A traceback entry of a frame at the user's line ``where`` (filename, line, function
    name), whose variables are those of the ``generated`` frame run for it that have the names
    the user's function uses: pdb's ``p y`` there shows ``y``'s value in the generated code."""
    node = _function_node(*where)
    used = set()
    if node is not None:
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        used |= {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    values = {name: value for name, value in generated.f_locals.items()
              if name in used and name.isidentifier() and name != _MARK}
    code = _code_for(*where, node, tuple(values))
    # the module's globals as they are now, so ``p np.sum(y)`` works there too
    namespace = {**generated.f_globals, _MARK: _UserLine}
    try:
        types.FunctionType(code, namespace)(**values)
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
    error.add_note(f"{_NOTE}raised at {_place(filename, lineno)} in {name}: {user_text}\n"
                   f"  generated code: {generated_file}:{generated_line} in {generated_name}: "
                   f"{generated_text}")


def _place(filename, lineno):
    """Where the user's line is, as the traceback above says it: ``Cell In[9], line 2`` for a
    line of an IPython or Jupyter cell (whose file is the kernel's temporary one), else
    ``filename:lineno``."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    try:
        label = shell.compile.format_code_name(filename) if shell is not None else None
    except Exception:  # pragma: no cover (an IPython without the cell names of 8 and 9)
        label = None
    return f"{label[0]} {label[1]}, line {lineno}" if label else f"{filename}:{lineno}"



def _shown_at_user_line(show):
    """``warnings._showwarnmsg`` (through which every warning that passed the filters is shown
    or recorded) that first moves a warning raised in generated code to the user's line it was
    generated from: NumPy's ``invalid value encountered in log`` names the user's file, line
    and text, in the printed warning, ``pytest.warns`` and ``catch_warnings(record=True)``."""

    @functools.wraps(show)
    def shown(message):
        if emit.is_generated(str(message.filename)) and filtering():
            where = emit.origin(message.filename, message.lineno)
            if where is not None:
                message.filename, message.lineno = where[:2]
        return show(message)

    shown.__mindgrad__ = True
    return shown


if hasattr(warnings, "_showwarnmsg") and not hasattr(warnings._showwarnmsg, "__mindgrad__"):
    warnings._showwarnmsg = _shown_at_user_line(warnings._showwarnmsg)
