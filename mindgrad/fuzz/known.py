"""Failure classes already known and owned by open work: each names what it matches.

The runner counts a failure matching one of these as ``known`` (not as a failure) and the
CI batch reports them. Only a crash can be known: a wrong number is never excused, whatever
its cause. An entry is deleted when its fix lands, so the list only ever shrinks.
"""

from __future__ import annotations

import dataclasses
import re


@dataclasses.dataclass(frozen=True)
class KnownIssue:
    """A failure class: the program's source matches ``source`` and the failure's detail
    matches ``detail`` (both regexes; empty matches anything), in one of ``modes``."""

    name: str
    area: str                 # the piece of work that owns the fix
    source: str = ""
    detail: str = ""
    outcomes: tuple = ("crash",)
    modes: tuple = ("grad", "jvp", "hvp", "value", "third", "forward3", "rfr")

    def __post_init__(self):
        if "wrong" in self.outcomes:
            raise ValueError(f"{self.name}: a wrong number is never a known issue")

    def matches(self, source, mode, result):
        return (mode in self.modes and result.outcome in self.outcomes
                and re.search(self.source, source, re.MULTILINE | re.DOTALL) is not None
                and re.search(self.detail, result.detail) is not None)


#: jvp over jvp transforms the code the first jvp generated, with its runtime helpers: the
#: tangents of containers built as TangentDict/TangentList/TangentTuple, and the int 0 that
#: stands for a zero tangent. Where mindgrad refuses them it raises (never a number).
_SECOND_STEP = "Architecture, second step"

KNOWN_ISSUES = (
    KnownIssue("third order through the containers of tangents", _SECOND_STEP,
               detail=r"^NoTangentRuleError: mindgrad\.runtime\.tangents\.Tangent(Dict|List|Tuple)"
                      r" has no tangent", modes=("third", "forward3", "rfr")),
    KnownIssue("third order through the zero tangent of a container", _SECOND_STEP,
               detail=r"^UnsupportedSyntaxError: .*\(tangents\.py, line \d+\)",
               modes=("third", "forward3", "rfr")),
    KnownIssue("third order through the int 0 standing for a zero tangent", _SECOND_STEP,
               detail=r"^TypeError: second_\d+ returned .*, which holds no float",
               modes=("third", "forward3", "rfr")),
)


def known_issue(source, mode, result):
    """The known issue a failure belongs to, or None."""
    return next((k for k in KNOWN_ISSUES if k.matches(source, mode, result)), None)
