"""Errors raised by mindgrad. Each one names the argument, or the user's file:line and text.

An error about a line of the user's code carries it as fields too: ``filename``, ``lineno``
and ``source_line`` (the line's text), for tools that show it (an editor, a notebook).
"""

from __future__ import annotations


class UnsupportedSyntaxError(SyntaxError):
    """Python that mindgrad cannot differentiate, reported at the user's own source line."""

    def __init__(self, message: str, filename: str, lineno: int, text: str = "", col: int = 0):
        super().__init__(message, (filename, lineno, col + 1, text.rstrip("\n") + "\n"))
        self.source_line = text.strip()


class NoGradientRuleError(NotImplementedError):
    """A call to a function that has neither a gradient rule nor Python source to transform."""

    filename = lineno = source_line = None


class NoTangentRuleError(NoGradientRuleError):
    """A call that forward mode (``jvp``, ``jacfwd``) has no tangent rule for."""


class NoSourceError(TypeError):
    """The function to differentiate has no Python source to read."""


class Located:
    """``fail`` for a pass over the user's code: it holds ``src`` (a ``source.Source``)."""

    def fail(self, node, message, error=UnsupportedSyntaxError):
        """Raise ``error`` for ``message`` at the line of ``node`` in the user's source."""
        lineno = self.src.line_of(node)
        raise located(error, message, self.src.filename, lineno, self.src.text_of(lineno),
                      getattr(node, "col_offset", 0))


def located(error, message, filename, lineno, text, col=0):
    """The exception of class ``error`` for ``message`` at the user's ``filename:lineno``,
    whose text is ``text``: what ``fail`` raises."""
    if issubclass(error, UnsupportedSyntaxError):
        return error(message, filename, lineno, text, col)
    exc = error(f"{message}\n  at {filename}:{lineno}: {text.strip()}")
    exc.filename, exc.lineno, exc.source_line = filename, lineno, text.strip()
    return exc
