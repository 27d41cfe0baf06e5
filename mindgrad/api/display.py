"""How generated code shows itself: readable in a terminal, highlighted in a notebook.

``Code`` is the text of generated code (a ``str``): its ``repr`` is the code itself, so a REPL
prints it as written, and a notebook shows it highlighted (Pygments, where installed) or in a
plain ``<pre>``. ``Stages`` is the source after each stage of the pipeline, shown stage by
stage. ``described`` is what a transformed function shows: the code compiled for it so far.
"""

from __future__ import annotations

import html
import inspect
import re
from typing import NamedTuple

import numpy as np

from mindgrad.compiler import cache
from mindgrad.runtime import arrays

__all__ = ["Code", "Stage", "Stages", "described", "described_html", "kind", "kinds",
           "signature"]


# ----- highlighted text -------------------------------------------------------------------------


def _html(text: str) -> str:
    """``text`` as Python in HTML: highlighted with inline styles where Pygments imports (no
    stylesheet needed), else escaped in a ``<pre>``."""
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return f'<pre style="{_PRE_STYLE}">{html.escape(text)}</pre>'
    return highlight(text, PythonLexer(), HtmlFormatter(noclasses=True, prestyles=_PRE_STYLE))


# in the notebook's code font: a page's stylesheet (nbconvert's HTML) may set <pre> in its text font
_PRE_STYLE = "font-family: var(--jp-code-font-family, monospace)"


def _markdown(text: str) -> str:
    """``text`` in a Python code fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}python\n{text.rstrip()}\n{fence}"


class Code(str):
    """Generated Python source. A ``str`` (compare it, search it, write it to a file), shown as
    the code itself: ``repr`` gives the text, a notebook highlights it."""

    __slots__ = ()

    def __repr__(self):
        return str(self)

    def _repr_pretty_(self, printer, cycle):  # IPython's plain-text display
        printer.text(str(self))

    def _repr_html_(self):
        return _html(str(self))

    def _repr_markdown_(self):
        return _markdown(str(self))


class Stage(NamedTuple):
    """The source of one function after one stage of the pipeline."""

    stage: str     # "source", "normalize", "reverse", ...
    function: str  # the function it is the source of
    code: Code


class Stages(tuple):
    """The source after every stage of the pipeline, in order: a tuple of ``Stage``. ``str()``
    gives the whole dump as text (and ``"text" in stages`` searches it, as when this was a
    ``str``); a notebook shows each stage under its name."""

    __slots__ = ()

    def __new__(cls, stages=()):
        return super().__new__(cls, (Stage(s, f, Code(t)) for s, f, t in stages))

    def __str__(self):
        return "\n".join(f"# ---- {s.stage}: {s.function} ----\n{s.code.rstrip()}\n"
                         for s in self)

    def __contains__(self, item):
        if isinstance(item, str):  # no Stage equals a str: search the text
            return item in str(self)
        return super().__contains__(item)

    def __repr__(self):
        return str(self)

    def _repr_pretty_(self, printer, cycle):
        printer.text(str(self))

    def _repr_html_(self):
        return "\n".join(f"<p><b>{html.escape(s.stage)}</b>: {html.escape(s.function)}</p>\n"
                         f"{_html(s.code.rstrip())}" for s in self)

    def _repr_markdown_(self):
        return "\n\n".join(f"**{s.stage}**: `{s.function}`\n\n{_markdown(s.code)}" for s in self)


# ----- what a transformed function shows -------------------------------------------------------


def kind(k) -> str:
    """An argument kind (``cache.kind``) in words: ``float64 array (ndim 1)``, ``float``."""
    if isinstance(k, tuple) and len(k) in (3, 4) and k[0] is np.ndarray:
        library = arrays.library(k[3]) if len(k) == 4 and isinstance(k[3], type) else None
        return f"{np.dtype(k[1]).name} {library + ' ' if library else ''}array (ndim {k[2]})"
    if isinstance(k, tuple) and len(k) == 2 and k[0] is dict:
        return "{" + ", ".join(f"{key!r}: {kind(v)}" for key, v in k[1]) + "}"
    if isinstance(k, tuple) and len(k) == 2 and k[0] in (tuple, list):
        inner = ", ".join(kind(v) for v in k[1])
        return f"({inner},)" if k[0] is tuple and len(k[1]) == 1 else \
            (f"({inner})" if k[0] is tuple else f"[{inner}]")
    return getattr(k, "__name__", str(k))


def kinds(args) -> str:
    """The kinds of ``args`` in words, comma-separated."""
    return ", ".join(kind(cache.kind(a)) for a in args)


def signature(fn) -> str:
    """``name(parameters)`` of a compiled function, its defaults included."""
    return f"{fn.__name__}{inspect.signature(fn)}"


def _title(obj, what: str) -> str:
    return f"<mindgrad {getattr(obj, '__name__', type(obj).__name__)}: {what}>"


_NOTHING_YET = ("no code compiled yet: it is written at the first call, or by "
                "mindgrad.source(this, *example_args)")


def described(obj, what: str, compiled) -> str:
    """The text ``repr`` of a transformed function: what it is, then the code compiled so far
    for each argument signature (``compiled``: ``(argument kinds, text)`` pairs)."""
    if not compiled:
        return f"{_title(obj, what)}\n# {_NOTHING_YET}"
    parts = [_title(obj, what)]
    for arg_kinds, text in compiled:
        parts.append(f"# for arguments ({', '.join(kind(k) for k in arg_kinds)}):\n"
                     f"{text.rstrip()}\n")
    return "\n".join(parts).rstrip("\n")


def described_html(obj, what: str, compiled) -> str:
    """``described`` as HTML, the code highlighted."""
    title = f"<p><code>{html.escape(_title(obj, what))}</code></p>"
    if not compiled:
        return f"{title}\n<p>{html.escape(_NOTHING_YET)}</p>"
    return "\n".join([title] + [
        f"<p>for arguments ({html.escape(', '.join(kind(k) for k in arg_kinds))}):</p>\n"
        f"{_html(text.rstrip())}" for arg_kinds, text in compiled])
