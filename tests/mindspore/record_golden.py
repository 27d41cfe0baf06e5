"""Records MindSpore's answers to the parity programs (``parity_programs.py``) in ``golden/``:
one JSON file per program, with each mode's result (types, dtypes, shapes, values) or error.

Run with MindSpore installed (its own virtual environment; it needs numpy<2), from the
repository root:
    /work/msenv/bin/python tests/mindspore/record_golden.py [NAME ...]
"""

import json
import os
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import mindspore  # noqa: E402
import parity_encode  # noqa: E402
import parity_programs  # noqa: E402


def main(names):
    golden = HERE / "golden"
    golden.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # MindSpore writes its graph dumps (rank_0/) in the working directory
        for name in names or parity_programs.PROGRAMS:
            answers = {"mindspore": mindspore.__version__}
            for mode in parity_programs.MODES:
                text = parity_programs.program(name, mode)
                path = pathlib.Path(tmp) / f"prog_{name}_{mode.lower()}.py"
                answers[mode] = parity_encode.run(text, path)
            (golden / f"{name}.json").write_text(json.dumps(answers, indent=1) + "\n")
            print(name, json.dumps(answers)[:230])


if __name__ == "__main__":
    main(sys.argv[1:])
