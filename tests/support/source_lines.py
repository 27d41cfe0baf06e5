"""Helpers of the tests that read source: the line a ``# @marker`` comment ends, and expected
code written indented inside a test."""

import textwrap


def marked_line(path, marker):
    """The line number of the one line of the file ``path`` ending with ``# @marker``."""
    with open(path) as fh:
        hits = [i for i, text in enumerate(fh, 1) if text.rstrip().endswith(f"# @{marker}")]
    assert len(hits) == 1, marker
    return hits[0]


def dedented(expected):
    """``expected`` without its common indentation and surrounding blank lines."""
    return textwrap.dedent(expected).strip()
