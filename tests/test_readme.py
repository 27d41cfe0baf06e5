"""The README and the pages of docs/ run as written.

Every ```python block runs. The blocks of one section (a ``## `` heading) build on each other:
they run in order, as one script, in a fresh process importing this checkout's mindgrad. A
block shown as output is compared with what runs, line for line. An HTML comment on the line
before a block's fence says which kind it is (the comment does not show on the rendered page):

- ``<!-- output -->``: what the section's blocks above it print (since the previous output
  block), exactly;
- ``<!-- output of examples/NAME.py, excerpt -->``: what that script prints; ``of PATH`` and
  ``excerpt`` are each optional. An excerpt's lines appear in that order in the output, a line
  ``...`` standing for any lines left out;
- ``<!-- not run: REASON -->``: a block that cannot run on its own, with the reason. Rare: a
  block that needs a definition gets it written into the block instead.
"""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)
_MARKER = re.compile(r"<!--\s*(.*?)\s*-->\s*\Z")
_OUTPUT = re.compile(r"output(?: of (?P<path>\S+?))?(?P<excerpt>, excerpt)?")
_NOT_RUN = re.compile(r"not run: \S.*")
_SEPARATOR = "@@ readme block {} @@"


class Block:
    """One ```python block: its page, line, section, text and kind (code, output, not run)."""

    def __init__(self, page, line, section, text, marker):
        self.page, self.line, self.section, self.text = page, line, section, text
        self.kind, self.path, self.excerpt = "code", None, False
        if marker is None:
            return
        output = _OUTPUT.fullmatch(marker)
        if output:
            self.kind, self.path = "output", output["path"]
            self.excerpt = bool(output["excerpt"])
        elif _NOT_RUN.fullmatch(marker):
            self.kind = "not run"
        else:
            raise ValueError(f"{page}:{line}: unknown marker <!-- {marker} -->")

    def __repr__(self):
        return f"{self.page}:{self.line}"


def blocks_of(page):
    text = (ROOT / page).read_text()
    headings = [(m.start(), m.group(1)) for m in re.finditer(r"^## (.*)$", text, re.MULTILINE)]
    found = []
    for m in _FENCE.finditer(text):
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = _MARKER.search(before)
        section = next((h for start, h in reversed(headings) if start < m.start()), "(top)")
        found.append(Block(page, text.count("\n", 0, m.start()) + 1, section,
                           m.group(1), marker and marker.group(1)))
    return found


def sections():
    """(page, section) -> its blocks, for every section with a block to run or compare."""
    out = {}
    for page in PAGES:
        for block in blocks_of(page):
            out.setdefault((page, block.section), []).append(block)
    return {key: blocks for key, blocks in out.items()
            if any(b.kind != "not run" for b in blocks)}


def run_python(args, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # this checkout's mindgrad
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300,
                          check=False, env=env, cwd=tmp_path)


def run_section(blocks, tmp_path):
    """Runs the section's code blocks as one script; the output of each, by block."""
    parts = []
    for i, block in enumerate(blocks):
        if block.kind == "code":
            parts.append(f"print({_SEPARATOR.format(i)!r}, flush=True)\n{block.text}")
    script = tmp_path / "section.py"
    script.write_text("\n".join(parts))
    run = run_python([str(script)], tmp_path)
    printed = re.split(r"^@@ readme block (\d+) @@\n", run.stdout, flags=re.MULTILINE)
    by_block = {int(i): out for i, out in zip(printed[1::2], printed[2::2])}
    if run.returncode != 0:
        last = max(by_block, default=None)
        where = blocks[last] if last is not None else blocks[0]
        pytest.fail(f"the block at {where!r} fails:\n{run.stderr}")
    return by_block


def matches_excerpt(shown, printed):
    """The shown lines appear in order in ``printed``, consecutive except at a ``...`` line."""
    lines, pieces, piece = printed.splitlines(), [], []
    for line in shown.splitlines():
        if line.strip() == "...":
            pieces.append(piece)
            piece = []
        else:
            piece.append(line)
    pieces.append(piece)
    at = 0
    for piece in filter(None, pieces):
        at = next((i + len(piece) for i in range(at, len(lines) - len(piece) + 1)
                   if lines[i:i + len(piece)] == piece), None)
        if at is None:
            return False
    return True


SECTIONS = sections()


@pytest.mark.parametrize("key", list(SECTIONS), ids=lambda key: f"{key[0]}::{key[1]}")
def test_the_python_blocks_run_and_show_what_they_print(key, tmp_path):
    blocks = SECTIONS[key]
    by_block = run_section(blocks, tmp_path)
    printed = ""
    for i, block in enumerate(blocks):
        if block.kind == "code":
            printed += by_block.get(i, "")
        elif block.kind == "output":
            if block.path is not None:
                run = run_python([str(ROOT / block.path)], tmp_path)
                assert run.returncode == 0, f"{block.path} fails:\n{run.stderr}"
                source = run.stdout
            else:
                source, printed = printed, ""
            if block.excerpt:
                assert matches_excerpt(block.text, source), \
                    f"{block!r}: the excerpt is not in what runs prints:\n{source}"
            else:
                assert source.strip() == block.text.strip(), f"{block!r} shows other output"


def test_the_readme_and_the_api_page_are_checked_and_few_blocks_are_not_run():
    blocks = [b for page in PAGES for b in blocks_of(page)]
    assert {"README.md", "docs/api.md"} <= {b.page for b in blocks if b.kind == "code"}
    not_run = [b for b in blocks if b.kind == "not run"]
    assert len(not_run) <= 2, f"more blocks marked not run than the few justified: {not_run}"


def test_the_tour_is_checked_against_its_generated_adjoint():
    tour = SECTIONS[("README.md", "A short tour")]
    kinds = [b.kind for b in tour]
    assert kinds[:2] == ["code", "output"] and "def grad_f(" in tour[1].text


def test_an_excerpt_keeps_its_lines_in_order():
    printed = "a\nb\nc\nd\n"
    assert matches_excerpt("a\nb\n...\nd", printed)
    assert matches_excerpt("b\nc", printed)
    assert not matches_excerpt("a\nc", printed)
    assert not matches_excerpt("c\n...\nb", printed)


def test_an_unknown_marker_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="unknown marker"):
        Block("page.md", 3, "s", "x = 1\n", "not run")


def test_the_setup_commands_work_in_a_virtual_environment():
    # `python3 -m pip install .` failed on Debian's Python (externally-managed-environment)
    text = (ROOT / "README.md").read_text()
    block = re.search(r"^```bash\n(.*?)^```$", text, re.DOTALL | re.MULTILINE).group(1)
    setup, tests = block.splitlines()
    for command in (setup, tests):  # each makes the venv it needs, on a fresh clone too
        assert command.startswith("python3 -m venv .venv && .venv/bin/pip install "), command
    for command in (setup, tests):  # every step runs in the venv
        steps = [step.strip() for step in command.split("&&")]
        assert all(step.startswith((".venv/bin/", "python3 -m venv")) for step in steps), command
    assert re.fullmatch(r'python3 -m venv \.venv && \.venv/bin/pip install .*"\.\[test\]" && '
                        r"\.venv/bin/python -m pytest -n auto", tests), tests
    # CI runs them as written: it reads them from the README, it has no copy of them
    ci = (ROOT / ".ci" / "run").read_text()
    assert "README.md" in ci and setup not in ci and tests not in ci
