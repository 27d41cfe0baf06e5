"""The README shows real output: the tour's code, run, prints the generated adjoint the README
shows after it, line for line."""

import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _tour_blocks():
    text = (ROOT / "README.md").read_text()
    tour = text.split("## A short tour", 1)[1]
    blocks = re.findall(r"```python\n(.*?)```", tour, re.DOTALL)
    return blocks[0], blocks[1]


def test_the_tour_prints_the_adjoint_the_readme_shows(tmp_path):
    code, shown = _tour_blocks()
    script = tmp_path / "tour.py"
    script.write_text(code)
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # this checkout's mindgrad
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, check=False, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == shown.strip()
