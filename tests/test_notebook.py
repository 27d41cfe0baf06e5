"""examples/tour.ipynb runs in a real Jupyter kernel and shows what it says: numbers that match
closed forms, highlighted generated code, a redefined helper picked up, a Cell's weight
gradients, a Hessian, and an error pointing at the line of the cell. Skipped where the notebook
tools (nbclient, nbformat, ipykernel) are not installed; CI installs them."""

import os
import pathlib
import re

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "tour.ipynb"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def executed():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    for cell in notebook.cells:  # the notebook is kept without outputs
        assert cell.cell_type != "code" or not cell.outputs, "clear the notebook's outputs"
    # the kernel imports this checkout's mindgrad
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = python_path
    try:
        client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                                         resources={"metadata": {"path": str(NOTEBOOK.parent)}})
        client.execute()
    finally:
        if previous is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = previous
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


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
    assert "def grad_rosenbrock_jvp(p, sens, t_p):" in printed.text


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
    assert re.search(r"Cell In\[\d+\], line 2, in layer\(\)", printed), printed
    assert re.search(r"----> 2\s+h = inputs @ weights", printed), printed
    assert re.search(r"Cell In\[\d+\], line 6, in loss\(\)", printed), printed
    # then the generated line it ran, and mindgrad's own frames kept to the one re-raising
    assert re.search(r"File <mindgrad loss #\d+>:\d+, in layer_forward\(", printed), printed
    assert "__mindgrad_bindings__" not in printed
    # no frame of mindgrad's own: the one re-raising is hidden (__tracebackhide__)
    assert not re.search(r"File \S*mindgrad[/\\](?:api|compiler|runtime|rules)", printed), printed
