"""The marks a stage leaves in the tree for a later one, all of them here: what each means, who
writes it and who reads it. A mark lives on its node, so that it moves, and is copied
(``astutil.clone``), with the node.

* A comment: a statement ``comment(text)`` that the emit stage prints as ``# text``. The
  transformations write them (``# grad of: <the user's line>``, ``# backward sweep``); the
  optimizer drops those left without code (``is_comment``).
* In place: an assignment ``y = y + v`` the normalize stage made of the in-place operator
  ``y += v`` (``mark_in_place``). NumPy writes ``y += v`` into ``y``'s array, so the aliasing
  facts (``facts/aliasing.py``) treat it as a write into memory another name may share
  (``is_in_place``).
"""

from __future__ import annotations

import ast

import gast

_COMMENT = "__mindgrad_comment__:"
_IN_PLACE = "in_place"

# the attributes astutil.clone copies besides the fields: locations and the marks held as
# attributes
KEPT_BY_CLONE = ("lineno", "col_offset", "end_lineno", "end_col_offset", _IN_PLACE)


def comment(text: str, like=None) -> gast.Expr:
    """A statement that prints as ``# text`` on one line, whatever ``text`` holds."""
    node = gast.Expr(value=gast.Constant(value=_COMMENT + text, kind=None))
    if like is not None:
        node.lineno = getattr(like, "lineno", None)
    return node


def is_comment(node) -> bool:
    """Whether ``node`` (a gast or an ``ast`` statement) is a ``comment(...)`` marker."""
    value = getattr(node, "value", None)
    return isinstance(node, (gast.Expr, ast.Expr)) and \
        isinstance(value, (gast.Constant, ast.Constant)) and isinstance(value.value, str) and \
        value.value.startswith(_COMMENT)


def comment_text(node) -> str:
    """The text of a ``comment(...)`` marker."""
    return node.value.value[len(_COMMENT):]


def mark_in_place(stmt) -> None:
    """Mark the assignment ``stmt`` as made of an in-place operator (``y += v``)."""
    setattr(stmt, _IN_PLACE, True)


def is_in_place(stmt) -> bool:
    """Whether the assignment ``stmt`` was made of an in-place operator."""
    return getattr(stmt, _IN_PLACE, False) is True
