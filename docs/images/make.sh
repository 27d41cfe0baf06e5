#!/usr/bin/env bash
# Remakes the README's two screenshots of examples/tour.ipynb from the code of this checkout:
# runs the notebook (saving it with its outputs), renders the two cells shown (the generated code,
# the error) to HTML with nbconvert, and photographs them with headless Chromium. Needs the
# [test] extra, nbconvert and Chromium (Debian: apt-get install chromium).
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PYTHONPATH=$PWD "$PYTHON" -m jupyter nbconvert --to notebook --execute --inplace \
    examples/tour.ipynb
"$PYTHON" - "$WORK" <<'PY'
import json, sys
path = "examples/tour.ipynb"
notebook = json.load(open(path))
for cell in notebook["cells"]:  # no timings: the file changes only when an output does
    cell.get("metadata", {}).pop("execution", None)
json.dump(notebook, open(path, "w"), indent=1, ensure_ascii=False)
open(path, "a").write("\n")
for marker, name in [("mindgrad.source(g, x, y)", "code"), ("h = inputs @ weights", "error")]:
    cells = [c for c in notebook["cells"] if c["cell_type"] == "code"
             and marker in "".join(c["source"])]
    json.dump({**notebook, "cells": cells}, open(f"{sys.argv[1]}/{name}.ipynb", "w"))
PY
for shot in "code 372" "error 880"; do
    set -- $shot
    "$PYTHON" -m jupyter nbconvert --to html --template classic "$WORK/$1.ipynb"
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1100,$2 \
        --screenshot="docs/images/notebook-$1.png" "file://$WORK/$1.html"
done
