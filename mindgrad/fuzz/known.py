"""Failure classes already known and owned by open work: each names what it matches.

The CI batch excludes exactly these from its zero-failure assertion and reports them; an
entry is deleted when its fix lands, so the list only ever shrinks.
"""

from __future__ import annotations

import dataclasses
import re


@dataclasses.dataclass(frozen=True)
class KnownIssue:
    name: str
    area: str                 # the piece of work that owns the fix
    pattern: str              # a regex that the program's source must contain
    outcomes: tuple = ("wrong", "crash")
    modes: tuple = ("grad", "jvp", "hvp", "value")

    def matches(self, source, mode, result):
        return (mode in self.modes and result.outcome in self.outcomes
                and re.search(self.pattern, source) is not None)


KNOWN_ISSUES: tuple = ()


def known_issue(source, mode, result):
    """The known issue a failure belongs to, or None."""
    return next((k for k in KNOWN_ISSUES if k.matches(source, mode, result)), None)
