"""Reading the generated code: ``Code`` and ``Stages`` in a terminal and a notebook, the
``repr`` of transformed functions, ``source``/``stages`` of every transformation, and the
standalone module, run in a subprocess against ``grad`` and central finite differences."""

import builtins
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import mindgrad as mg
from mindgrad.api import display
from mindgrad.api.display import Code, Stage, Stages
from mindgrad.compiler import driver
from mindgrad.compiler.driver import STAGES

ROOT = pathlib.Path(__file__).resolve().parents[2]

SCALE = np.array([0.5, -1.5, 2.0])  # a module-level array the generated code imports


def f(x, y):
    z = x * y
    if np.sum(z) > 0:
        z = np.tanh(z)
    return np.sum(z ** 2)


def scaled(x):
    return np.sum(np.sin(x) * SCALE)


def energy(w):
    return np.sum(np.log1p(np.exp(w))) + 0.5 * np.sum(w * w * w)


def vector(x):
    return np.sin(x) * x[0] + x


def numeric_jacobian(fn, x, eps=1e-6):
    """Central differences in float64: column k is the derivative along unit vector k."""
    columns = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = eps
        columns.append((np.asarray(fn(x + e)) - np.asarray(fn(x - e))) / (2 * eps))
    return np.stack(columns, axis=-1)


X = np.array([0.3, -0.7, 1.1])
Y = np.array([1.2, 0.4, -0.9])


def _no_pygments(monkeypatch):
    real = builtins.__import__

    def refuse(name, *args, **kwargs):
        if name == "pygments" or name.startswith("pygments."):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)


# ----- Code and Stages ------------------------------------------------------------------------


def test_code_is_the_text_and_its_repr_is_the_code():
    text = mg.source(mg.grad(f), X, Y)
    assert isinstance(text, Code) and isinstance(text, str)
    assert repr(text) == str(text)
    assert "\\n" not in repr(text) and repr(text).count("\n") == str(text).count("\n")
    assert text.startswith("def grad_f(x, y, *, sens):")


def test_code_html_is_highlighted_with_pygments_and_escaped():
    pytest.importorskip("pygments")
    page = mg.source(mg.grad(f), X, Y)._repr_html_()
    assert "<span style=" in page                # highlighted, styles inline (no stylesheet)
    assert "&gt;" in page and " > 0" not in page  # `sum_ > 0` escaped
    assert "grad_f" in page


def test_code_html_without_pygments_is_an_escaped_pre(monkeypatch):
    code = Code("if a < b and c > 0:\n    s = '<b>&'\n")
    _no_pygments(monkeypatch)
    page = code._repr_html_()
    assert page == (f'<pre style="{display._PRE_STYLE}">'
                    "if a &lt; b and c &gt; 0:\n    s = &#x27;&lt;b&gt;&amp;&#x27;\n</pre>")
    assert "<span" not in page


def test_import_without_pygments_works_and_shows_pre(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text("import sys; sys.modules['pygments'] = None\n"
              "import numpy as np, mindgrad\n"
              "def f(x):\n    return np.sum(x < 1.0) + np.sum(x * x)\n"
              "print(mindgrad.source(mindgrad.grad(f), np.ones(2))._repr_html_()[:5])\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, check=False, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "<pre"


def test_code_markdown_fence_outlasts_backticks_inside():
    assert Code("x = 1\n")._repr_markdown_() == "```python\nx = 1\n```"
    fenced = Code("s = '````'\n")._repr_markdown_()
    assert fenced.startswith("`````python\n") and fenced.endswith("\n`````")


def test_code_shows_as_code_in_ipython():
    pretty = pytest.importorskip("IPython.lib.pretty")
    text = mg.source(mg.grad(f), X, Y)
    assert pretty.pretty(text) == str(text)


def test_notebook_display_offers_html_and_readable_text():
    formatters = pytest.importorskip("IPython.core.formatters")
    pytest.importorskip("pygments")
    g = mg.grad(scaled)
    g(X)
    display = formatters.DisplayFormatter()
    for obj in (g, mg.source(g, X), g.stages(X), mg.jacrev(scaled)):
        data, _ = display.format(obj)
        assert "<span style=" in data["text/html"] or "no code compiled yet" in data["text/html"]
        shown = data["text/plain"]
        assert shown.rstrip("\n") == repr(obj).rstrip("\n") and "\\n" not in shown
    data, _ = display.format(mg.source(g, X))
    assert data["text/markdown"].startswith("```python\ndef grad_scaled(x, *, sens):")


def test_stages_str_is_the_dump_and_items_are_stages():
    g = mg.grad(f)
    stages = g.stages(X, Y)
    lines = []
    driver.run(f, (0,), dump=lines.append, kinds=[(np.ndarray, "<f8", 1)] * 2)
    # the same dump, up to the number in the compiled file's name
    assert str(stages).rsplit("#", 1)[0] == "\n".join(lines).rsplit("#", 1)[0]
    assert repr(stages) == str(stages)
    assert [s.stage for s in stages] == ["source", "fence", "normalize", "activity", "reverse",
                                         "optimize", "emit", "compile"]
    assert all(isinstance(s, Stage) and isinstance(s.code, Code) for s in stages)
    assert stages[0].code.startswith("def f(x, y):")
    assert "# ---- normalize: f ----" in stages and "# ---- nothing: f" not in stages
    assert stages[0] in stages
    assert stages[-2].code.strip() == g.source(X, Y).strip()  # emit is the code source shows


def test_stages_html_shows_each_stage_under_its_name(monkeypatch):
    stages = mg.grad(f).stages(X, Y)
    _no_pygments(monkeypatch)
    page = stages._repr_html_()
    for name in ("source", "normalize", "reverse", "optimize", "emit"):
        assert f"<p><b>{name}</b>: " in page
    assert page.count("<pre ") == len(stages)
    assert "&gt; 0" in page
    markdown = stages._repr_markdown_()
    assert markdown.count("```python") == len(stages) and "**reverse**: `f`" in markdown


def test_stages_of_an_empty_dump():
    assert str(Stages()) == "" and len(Stages()) == 0


# ----- transformed functions show their code -------------------------------------------------


def test_grad_function_repr_says_how_to_get_code_then_shows_it():
    mg.clear_cache()  # no code compiled for `scaled` by another test
    g = mg.grad(scaled)
    assert repr(g).startswith("<mindgrad grad_scaled: the gradient of scaled with respect to")
    assert "no code compiled yet" in repr(g) and "mindgrad.source" in repr(g)
    g(X)
    g(0.5)
    shown = repr(g)
    assert "# for arguments (float64 array (ndim 1)):" in shown
    assert "# for arguments (float):" in shown
    assert mg.source(g, X).rstrip() in shown and mg.source(g, 0.5).rstrip() in shown


def test_grad_function_html_shows_highlighted_code():
    pytest.importorskip("pygments")
    def shown(x):
        return np.sum(x * x < 1.0) * np.sum(x)

    g = mg.value_and_grad(shown)
    assert "no code compiled yet" in g._repr_html_()
    g(X)
    page = g._repr_html_()
    assert "the value and gradient of shown" in page and "&lt;" in page
    assert "<span style=" in page and "float64 array (ndim 1)" in page


def test_jacobian_repr_shows_the_code_it_ran():
    mg.clear_cache()
    # jacrev and jacfwd run the batched code: every row (column) at once
    for jac, name in ((mg.jacrev(vector), "grad_vmap_vector"),
                      (mg.jacfwd(vector), "jvp_vmap_vector"),
                      (mg.hessian(energy), "grad_vmap_energy_jvp")):
        assert "no code compiled yet" in repr(jac)
        jac(X)
        shown = repr(jac)
        assert "no code compiled yet" not in shown and f"def {name}(" in shown
        assert mg.source(jac, X).rstrip() in shown


# ----- source() of every transformation -------------------------------------------------------


def _compiles(text):
    compile(text, "<source>", "exec")
    return text


def test_source_of_every_transformation_names_its_functions():
    assert "def grad_f(" in _compiles(mg.source(mg.grad(f), X, Y))
    assert "def grad_f(" in _compiles(mg.source(mg.value_and_grad(f, (0, 1)), X, Y))
    jvp_text = _compiles(mg.source(mg.jvp, f, (X, Y), (np.ones(3), None)))
    assert jvp_text.startswith("def jvp_f(x, y, *, t_x):")
    vjp_text = _compiles(mg.source(mg.vjp, f, X, Y))
    assert "def f_forward(x, y):" in vjp_text and "def f_backward(tape, " in vjp_text
    # every row (column) at once: the derivative of vmap's batched code
    assert "def grad_vmap_vector(x, batch_size, *, sens):" in \
        _compiles(mg.source(mg.jacrev(vector), X))
    assert "def jvp_vmap_vector(x, batch_size, *, t_x):" in \
        _compiles(mg.source(mg.jacfwd(vector), X))
    hessian_text = _compiles(mg.source(mg.hessian(energy), X))
    assert "def grad_vmap_energy_jvp(" in hessian_text and \
        "def jvp_grad_vmap_energy_value(" in hessian_text
    both = _compiles(mg.source(mg.jacfwd(f, (0, 1)), X, Y))
    assert "t_x" in both and "t_y" in both


def test_source_is_the_code_that_runs():
    v = np.array([1.0, 0.5, -2.0])
    out, along = mg.jvp(f, (X, Y), (v, None))
    namespace = {}
    exec(mg.source(mg.jvp, f, (X, Y), (v, None), standalone=True), namespace)  # noqa: S102
    assert namespace["jvp_f"](X, Y, t_x=v) == (out, along)


def test_stages_of_every_transformation():
    assert [s.stage for s in mg.stages(mg.jvp, f, (X, Y), (X, None))][4] == "forward"
    assert "def f_backward(" in str(mg.stages(mg.vjp, f, X, Y)[-2].code)
    assert "def grad_vmap_energy_jvp(" in str(mg.stages(mg.hessian(energy), X))
    # the batched build of vector, then the stages of its gradient
    jac_stages = mg.stages(mg.jacrev(vector), X)
    assert [s.stage for s in jac_stages][:6] == ["source", "fence", "normalize", "batch",
                                                 "emit", "compile"]
    assert [s.stage for s in jac_stages][6:] == list(STAGES)
    assert jac_stages[6].code.strip() == jac_stages[4].code.strip()  # the batched source
    assert "def grad_vmap_vector(" in jac_stages[-2].code


def test_stages_of_a_gradient_of_a_gradient_transform_its_code():
    def cubic(t):
        return t ** 3 - 2.0 * t

    second = mg.grad(mg.grad(cubic))
    stages = second.stages(1.5)
    assert stages[0].stage == "source" and "def grad_cubic_value(" in stages[0].code
    assert stages[-2].code.strip() == second.source(1.5).strip()
    assert second(1.5) == pytest.approx(6 * 1.5, rel=1e-12)


def test_source_refuses_what_it_cannot_show():
    with pytest.raises(TypeError, match=r"source\(mindgrad.jvp, f, inputs, v\)"):
        mg.source(f, X)
    with pytest.raises(TypeError, match="jvp's three arguments"):
        mg.source(mg.jvp, f, (X, Y))
    with pytest.raises(ValueError, match="`inputs` has 2"):
        mg.source(mg.jvp, f, (X, Y), (X,))
    with pytest.raises(TypeError, match="needs f's arguments"):
        mg.source(mg.grad(f))


# ----- the standalone module ------------------------------------------------------------------


def _run_standalone(tmp_path, module_text, call, arrays):
    """Write ``module_text`` to a file, run ``call`` (an expression on the module's names and
    ``arrays``, loaded from .npy files) in a subprocess, and return its result, saved as .npy
    (exact numbers)."""
    (tmp_path / "generated.py").write_text(module_text)
    for name, value in arrays.items():
        np.save(tmp_path / f"{name}.npy", value)
    loads = "".join(f"{name} = np.load({str(tmp_path / (name + '.npy'))!r})\n" for name in arrays)
    script = ("import sys\nimport numpy as np\n"
              f"sys.path.insert(0, {str(tmp_path)!r})\n"
              "from generated import *\n" + loads +
              f"result = {call}\n"
              f"np.save({str(tmp_path / 'result.npy')!r}, np.asarray(result, dtype=float))\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, check=False, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                         cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    return np.load(tmp_path / "result.npy")


def test_standalone_gradient_runs_and_matches_grad(tmp_path):
    text = mg.source(mg.grad(f, (0, 1)), X, Y, standalone=True)
    head = text.split("\ndef ", 1)[0]
    assert "import numpy as np" in head
    assert "from mindgrad.runtime import " in head and "seed" in head
    dx, dy = _run_standalone(tmp_path, text, "grad_f(x, y)[1]", {"x": X, "y": Y})
    want = mg.grad(f, (0, 1))(X, Y)
    np.testing.assert_array_equal(dx, want[0])
    np.testing.assert_array_equal(dy, want[1])
    np.testing.assert_allclose(dx, numeric_jacobian(lambda x: f(x, Y), X), rtol=1e-7)
    np.testing.assert_allclose(dy, numeric_jacobian(lambda y: f(X, y), Y), rtol=1e-7)


def test_standalone_imports_a_module_level_array(tmp_path):
    text = mg.source(mg.grad(scaled), X, standalone=True)
    assert "from tests.api.test_display import SCALE" in text
    got = _run_standalone(tmp_path, text, "grad_scaled(x)[1][0]", {"x": X})
    np.testing.assert_array_equal(got, mg.grad(scaled)(X))
    np.testing.assert_allclose(got, numeric_jacobian(scaled, X), rtol=1e-7)


def test_standalone_jacobians_and_hessian_run(tmp_path):
    jacrev = mg.source(mg.jacrev(vector), X, standalone=True)
    rows = _run_standalone(tmp_path, jacrev,
                           "[grad_vector(x, sens=e)[1][0] for e in np.eye(3)]", {"x": X})
    np.testing.assert_allclose(rows, numeric_jacobian(vector, X), rtol=1e-7, atol=1e-9)
    np.testing.assert_array_equal(rows, mg.jacrev(vector)(X))

    jacfwd = mg.source(mg.jacfwd(vector), X, standalone=True)
    columns = _run_standalone(tmp_path, jacfwd, "[jvp_vector(x, t_x=e)[1] for e in np.eye(3)]",
                              {"x": X})
    np.testing.assert_allclose(np.transpose(columns), numeric_jacobian(vector, X), rtol=1e-7,
                               atol=1e-9)

    hessian = mg.source(mg.hessian(energy), X, standalone=True)
    columns = _run_standalone(tmp_path, hessian,
                              "[jvp_grad_energy_value(x, t_x0=e)[1] for e in np.eye(3)]",
                              {"x": X})
    np.testing.assert_allclose(np.transpose(columns), mg.hessian(energy)(X), rtol=1e-12)
    np.testing.assert_allclose(np.transpose(columns), numeric_jacobian(mg.grad(energy), X),
                               rtol=1e-6)


def test_standalone_jvp_and_vjp_run(tmp_path):
    v = np.array([1.0, -2.0, 0.5])
    text = mg.source(mg.jvp, vector, (X,), (v,), standalone=True)
    got = _run_standalone(tmp_path, text, "jvp_vector(x, t_x=v)[1]", {"x": X, "v": v})
    np.testing.assert_allclose(got, numeric_jacobian(vector, X) @ v, rtol=1e-7)
    np.testing.assert_array_equal(got, mg.jvp(vector, (X,), (v,))[1])

    text = mg.source(mg.vjp, vector, X, standalone=True)
    got = _run_standalone(tmp_path, text, "vector_backward(vector_forward(x)[1], v)",
                          {"x": X, "v": v})
    np.testing.assert_allclose(got, v @ numeric_jacobian(vector, X), rtol=1e-7)
    np.testing.assert_array_equal(got, mg.vjp(vector, X)[1](v)[0])


def test_standalone_writes_a_closure_number_and_names_a_closure_array():
    def make(k, w, low=float("-inf")):
        def inner(x):
            return np.sum(np.maximum(np.sin(x), low) * w) * k
        return inner

    text = mg.source(mg.grad(make(2.5, 3.0)), X, standalone=True)
    assert "\nk = 2.5\n" in text and "\nw = 3.0\n" in text
    assert '\nlow = float("-inf")\n' in text
    namespace = {}
    exec(text, namespace)  # noqa: S102
    np.testing.assert_array_equal(namespace["grad_inner"](X)[1][0], mg.grad(make(2.5, 3.0))(X))
    with pytest.raises(ValueError, match=r"w \(a numpy.ndarray of shape \(3,\) and dtype "
                                         r"float64\).*importable module"):
        mg.source(mg.grad(make(2.5, np.ones(3))), X, standalone=True)


def test_standalone_of_jacfwd_at_several_positions_asks_for_one():
    with pytest.raises(ValueError, match="one position at a time"):
        mg.source(mg.jacfwd(f, (0, 1)), X, Y, standalone=True)


def test_standalone_names_a_function_it_cannot_import():
    def clip(v):
        return np.minimum(v, 1.0)

    mg.nondifferentiable(clip)

    def loss(x):
        return np.sum(x * clip(x))

    assert "clip(x)" in mg.source(mg.grad(loss), X)
    with pytest.raises(ValueError, match=r"clip \(function tests\.api\.test_display\."
                                         r"test_standalone_names_a_function_it_cannot_import"
                                         r"\.<locals>\.clip\)"):
        mg.source(mg.grad(loss), X, standalone=True)


def test_standalone_gradient_of_a_cell_with_weights():
    class Net(mg.nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = mg.Parameter(np.array([1.0, 2.0, 3.0]), name="w")

        def construct(self, x):
            return np.sum(np.tanh(self.w * x))

    net = Net()
    g = mg.grad(net, grad_position=0, weights=net.trainable_params())
    text = mg.source(g, X, standalone=True)
    assert "Its first argument is the Net" in text
    namespace = {}
    exec(text, namespace)  # noqa: S102
    _, (dx,), (dw,) = namespace["grad_Net"](net, X)
    want_dx, (want_dw,) = g(X)
    np.testing.assert_array_equal(dx, want_dx)
    np.testing.assert_array_equal(dw, want_dw)
    np.testing.assert_allclose(dx, numeric_jacobian(lambda x: net(x), X), rtol=1e-7)


def test_the_readme_section_runs_as_written(tmp_path):
    import re

    text = (ROOT / "README.md").read_text()
    section = text.split("## Reading the generated code", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 2
    script = tmp_path / "reading.py"
    script.write_text("\n".join(blocks))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, check=False, cwd=tmp_path,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert run.returncode == 0, run.stderr
    assert "def grad_f(x, y, *, sens):" in run.stdout and "def jvp_f(x, y, *, t_x):" in run.stdout
    assert "def f_backward(" in run.stdout and "\nreverse f\n" in run.stdout
    assert (tmp_path / "grad_f.py").read_text().startswith('"""The gradient of f')


def test_standalone_gradient_with_aux_differentiates_the_first_output_only():
    def with_aux(x):
        return np.sum(np.sin(x)), np.sum(x ** 3)

    g = mg.grad(with_aux, has_aux=True)
    text = mg.source(g, X, standalone=True)
    assert "from mindgrad.runtime import AuxSens" in text
    namespace = {}
    exec(text, namespace)  # noqa: S102
    _, (dx,), _ = namespace["grad_with_aux"](X)
    np.testing.assert_array_equal(dx, g(X)[0])
    np.testing.assert_allclose(dx, numeric_jacobian(lambda x: with_aux(x)[0], X), rtol=1e-7)
