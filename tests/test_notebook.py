"""examples/tour.ipynb runs in a real Jupyter kernel and shows what it says: numbers that match
closed forms, highlighted generated code, a redefined helper picked up, a Cell's weight
gradients, a Hessian, and an error pointing at the line of the cell. Skipped where the notebook
tools (nbclient, nbformat, ipykernel) are not installed; CI installs them."""

import os
import pathlib
import re
import sys

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
IPython = pytest.importorskip("IPython")

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "tour.ipynb"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def execute(notebook, allow_errors=False):
    """Run ``notebook`` in a fresh kernel importing this checkout's mindgrad; its code cells."""
    for cell in notebook.cells:  # the outputs the notebook was committed with go
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = python_path
    try:
        client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                                         allow_errors=allow_errors,
                                         resources={"metadata": {"path": str(NOTEBOOK.parent)}})
        client.execute()
    finally:
        if previous is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = previous
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


@pytest.fixture(scope="module")
def executed():
    return execute(nbformat.read(NOTEBOOK, as_version=4))


def _result(cell):
    (shown,) = [o for o in cell.outputs if o.output_type == "execute_result"]
    return shown.data


def _cell(cells, text):
    (found,) = [cell for cell in cells if text in cell.source]
    return found


def test_every_cell_runs_and_the_checks_against_closed_forms_hold(executed):
    errors = [cell.source for cell in executed
              if any(o.output_type == "error" for o in cell.outputs)
              and "raises-exception" not in cell.metadata.get("tags", [])]
    assert not errors, errors
    # each cell comparing with a closed form ends in a tuple of True (or an array and True)
    for marker in ("np.allclose(dx, 2 * t", "np.allclose(grad_w", "np.allclose(H, exact)"):
        assert _result(_cell(executed, marker))["text/plain"].rstrip().endswith("True)"), marker


def test_generated_code_shows_highlighted(executed):
    shown = _result(_cell(executed, "mindgrad.source(g, x, y)"))
    assert shown["text/plain"].startswith("def grad_f(x, y, *, sens):")
    html = shown["text/html"]
    assert "grad_f" in html and "d_z" in html
    try:
        import pygments  # noqa: F401
    except ImportError:
        assert html.startswith("<pre>")
    else:
        assert "<span style=" in html  # highlighted with inline styles
    (printed,) = _cell(executed, "mindgrad.source(mindgrad.hessian").outputs
    assert "def grad_vmap_rosenbrock_jvp(p, batch_size, sens, t_p):" in printed.text


def test_a_redefined_helper_is_read_again(executed):
    x = [0.5, -1.0, 2.0]
    first = _result(_cell(executed, "# 2 x"))["text/plain"]
    again = _result(_cell(executed, "# now 3 x**2"))["text/plain"]
    numbers = [float(v) for v in re.findall(r"-?\d+\.?\d*", first)]
    assert numbers == pytest.approx([2 * v for v in x])
    numbers = [float(v) for v in re.findall(r"-?\d+\.?\d*", again)]
    assert numbers == pytest.approx([3 * v * v for v in x])


def test_the_error_points_at_the_line_of_the_cell(executed):
    cell = _cell(executed, "h = inputs @ weights")
    (error,) = [o for o in cell.outputs if o.output_type == "error"]
    assert error.ename == "ValueError"
    printed = ANSI.sub("", "\n".join(error.traceback))
    # the cell's own lines, with the arrow at the line that raised
    assert re.search(r"Cell In\[\d+\], line 2, in layer\(inputs, weights\)", printed), printed
    assert re.search(r"----> 2\s+h = inputs @ weights", printed), printed
    assert re.search(r"Cell In\[\d+\], line 6, in loss\(inputs, weights\)", printed), printed
    # then the generated line it ran, and mindgrad's own frames kept to the one re-raising
    assert re.search(r"File <mindgrad loss #\d+>:\d+, in layer_forward\(", printed), printed
    assert "__mindgrad_bindings__" not in printed
    # the note under it names the cell as IPython does, not the kernel's temporary file
    # (IPython shows notes from 9 on; the kernel runs the IPython of this environment)
    notes = re.findall(r"^mindgrad: raised at .*$", printed, re.M)
    assert all(re.fullmatch(r"mindgrad: raised at Cell In\[\d+\], line 2 in layer: "
                            r"h = inputs @ weights", note) for note in notes), printed
    assert "ipykernel_" not in printed, printed
    if sys.version_info >= (3, 11) and int(IPython.__version__.split(".")[0]) >= 9:
        assert len(notes) == 1, printed
    # no frame of mindgrad's own: the one re-raising is hidden (__tracebackhide__)
    assert not re.search(r"File \S*mindgrad[/\\](?:api|compiler|runtime|rules)", printed), printed


def test_the_committed_notebook_shows_its_outputs():
    """examples/tour.ipynb is committed executed, so a code host shows what it prints."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.outputs for cell in code), "run the notebook and save it with its outputs"
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1))


# ----- a failing gradient's frames, wherever its functions are written in a notebook ----------

# each case: cells run in order; the last one fails inside a gradient. ``frames`` are the user's
# frames the traceback must show after the failing call's, innermost last: the function each
# names and the text of the line its arrow marks
CASES = {
    "callee defined after its caller": dict(cells=[
        "def outer(inputs, weights):\n"
        "    return np.sum(inner(inputs, weights) ** 2)\n"
        "\n"
        "def inner(inputs, weights):\n"
        "    h = inputs @ weights\n"
        "    return np.tanh(h)\n"
        "\n"
        "mindgrad.grad(outer, 1)(np.ones((3, 4)), np.ones((5, 2)))",
    ], frames=[("outer", "return np.sum(inner(inputs, weights) ** 2)"),
               ("inner", "h = inputs @ weights")]),
    "callee defined first": dict(cells=[
        "def inner(inputs, weights):\n"
        "    h = inputs @ weights\n"
        "    return np.tanh(h)\n"
        "\n"
        "def outer(inputs, weights):\n"
        "    y = inner(inputs, weights)\n"
        "    return np.sum(y ** 2)\n"
        "\n"
        "mindgrad.grad(outer, 1)(np.ones((3, 4)), np.ones((5, 2)))",
    ], frames=[("outer", "y = inner(inputs, weights)"), ("inner", "h = inputs @ weights")]),
    "an unrelated function first": dict(cells=[
        "def unrelated(a):\n"
        "    return a + 1\n"
        "\n"
        "def caller(inputs, weights):\n"
        "    s = np.sin(inputs)\n"
        "    return np.sum(helper(s, weights))\n"
        "\n"
        "def helper(inputs, weights):\n"
        "    return inputs @ weights\n"
        "\n"
        "mindgrad.grad(caller, 1)(np.ones((3, 4)), np.ones((5, 2)))",
    ], frames=[("caller", "return np.sum(helper(s, weights))"),
               ("helper", "return inputs @ weights")]),
    "a helper in another cell": dict(cells=[
        "def helper(inputs, weights):\n"
        "    scaled = 2.0 * inputs\n"
        "    return scaled @ weights",
        "def caller(inputs, weights):\n"
        "    return np.sum(np.tanh(helper(inputs, weights)))\n"
        "\n"
        "mindgrad.grad(caller, 1)(np.ones((3, 4)), np.ones((5, 2)))",
    ], frames=[("caller", "return np.sum(np.tanh(helper(inputs, weights)))"),
               ("helper", "return scaled @ weights")]),
    "a method of a Cell": dict(cells=[
        "from mindgrad import nn, Parameter\n"
        "\n"
        "class Net(nn.Cell):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.w = Parameter(np.ones((5, 2)), name='w')\n"
        "\n"
        "    def project(self, x):\n"
        "        return x @ self.w\n"
        "\n"
        "    def construct(self, x):\n"
        "        h = self.project(x)\n"
        "        return np.sum(h ** 2)\n"
        "\n"
        "net = Net()\n"
        "mindgrad.grad(net, 0)(np.ones((3, 4)))",
    ], frames=[("construct", "h = self.project(x)"), ("project", "return x @ self.w")]),
    "a lambda": dict(cells=[
        "def unrelated(a):\n"
        "    return a - 1\n"
        "\n"
        "square_of = lambda inputs, weights: np.sum((inputs @ weights) ** 2)\n"
        "\n"
        "mindgrad.grad(square_of, 1)(np.ones((3, 4)), np.ones((5, 2)))",
    ], frames=[("<lambda>",
                "square_of = lambda inputs, weights: np.sum((inputs @ weights) ** 2)")]),
}


@pytest.fixture(scope="module")
def failed():
    """Each case run in one kernel: the case's name -> (its cells' sources, the error shown)."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell("import numpy as np\nimport mindgrad"))
    ranges = {}
    for name, case in CASES.items():
        start = len(notebook.cells)
        notebook.cells.extend(nbformat.v4.new_code_cell(source) for source in case["cells"])
        ranges[name] = (start, len(notebook.cells))
    cells = execute(notebook, allow_errors=True)
    shown = {}
    for name, (start, stop) in ranges.items():
        errors = [o for o in cells[stop - 1].outputs if o.output_type == "error"]
        assert len(errors) == 1, (name, cells[stop - 1].outputs)
        shown[name] = ([cell.execution_count for cell in cells[start:stop]],
                       [cell.source for cell in cells[start:stop]], errors[0])
    return shown


def user_frames_shown(error):
    """The frames of the notebook's cells in an IPython traceback, outermost first: for each,
    the number of the cell, the line, the function its header names, and the line the arrow
    marks (its number and text), or None where no line is marked."""
    frames = []
    for block in error.traceback[1:]:  # the first is the header naming the exception
        text = ANSI.sub("", block)
        header = re.match(r"Cell In\[(\d+)\], line (\d+)(?:, in (\S+?)\(.*\))?\n", text)
        if header is None:
            continue
        arrow = re.search(r"^-*> *(\d+) (.*)$", text, re.M)
        marked = (int(arrow.group(1)), arrow.group(2).strip()) if arrow else None
        frames.append((int(header.group(1)), int(header.group(2)), header.group(3), marked))
    return frames


@pytest.mark.parametrize("case", list(CASES))
def test_every_frame_of_a_failing_gradient_shows_its_functions_line(failed, case):
    counts, sources, error = failed[case]
    frames = user_frames_shown(error)
    assert frames, error.traceback
    # the first: the cell's line that called the gradient, at module level
    count, lineno, function, marked = frames[0]
    last_line = sources[-1].splitlines()[-1]
    assert (count, function, marked) == (counts[-1], None, (lineno, last_line)), frames[0]
    expected = []
    for function, text in CASES[case]["frames"]:
        (where,) = [(count, number) for count, source in zip(counts, sources)
                    for number, line in enumerate(source.splitlines(), 1)
                    if line.strip() == text]
        expected.append((*where, function, (where[1], text)))
    printed = ANSI.sub("", "\n".join(error.traceback))
    # a method's header may name its class too (Net.construct), as IPython 8 does
    shown = [(count, number, function and function.rsplit(".", 1)[-1], marked)
             for count, number, function, marked in frames[1:]]
    assert shown == expected, printed
    assert error.ename == "ValueError" and "matmul" in error.evalue, printed
