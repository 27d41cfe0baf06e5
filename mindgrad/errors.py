"""Errors raised by mindgrad. Each one names the argument, or the user's file:line and text."""

from __future__ import annotations


class UnsupportedSyntaxError(SyntaxError):
    """Python that mindgrad cannot differentiate, reported at the user's own source line."""

    def __init__(self, message: str, filename: str, lineno: int, text: str = "", col: int = 0):
        super().__init__(message, (filename, lineno, col + 1, text.rstrip("\n") + "\n"))


class NoGradientRuleError(NotImplementedError):
    """A call to a function that has neither a gradient rule nor Python source to transform."""


class NoSourceError(TypeError):
    """The function to differentiate has no Python source to read."""


def where(src, node) -> str:
    """``file:line: text`` for a gast node of the function described by ``src``."""
    lineno = src.line_of(node)
    return f"{src.filename}:{lineno}: {src.text_of(lineno).strip()}"
