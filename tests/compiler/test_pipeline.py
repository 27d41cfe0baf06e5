"""The pipeline: every stage run in order, each one's source dumped, and the code it compiles."""

import inspect
import os
import traceback

import numpy as np
import pytest

import mindgrad
from mindgrad.compiler import driver
from tests.support.source_lines import dedented as _text

HERE = os.path.realpath(__file__)


# ----- the pipeline ------------------------------------------------------------------------------


def simple(x, y):
    z = x * y
    return np.sin(z)


def _pipeline_helper(a):
    return a * a


def with_callee(x, y):
    z = _pipeline_helper(x) * y
    return np.sin(z)


def _dumped(fn, positions=(0,)):
    lines = []
    generated = driver.run(fn, positions, dump=lines.append)
    headers = [line.splitlines()[0] for line in lines]
    stages = [(h.split()[2].rstrip(":"), h.split()[3]) for h in headers]
    return generated, lines, stages


def test_pipeline_dumps_its_stages_in_order():
    _, lines, stages = _dumped(simple)
    names = [s for s, _ in stages]
    order = [driver.STAGES.index(s) for s in names]
    assert order == sorted(order)
    assert len(set(names)) == len(names)
    assert all(line.startswith("# ---- ") for line in lines)


def test_pipeline_dumps_every_stage():
    _, _, stages = _dumped(simple)
    assert [s for s, _ in stages] == list(driver.STAGES)


def test_pipeline_dumps_callee_stages_in_order_per_function():
    _, _, stages = _dumped(with_callee)
    for name in ("with_callee", "_pipeline_helper"):
        mine = [s for s, fn in stages if fn == name]
        assert mine[:6] == ["source", "fence", "normalize", "activity", "reverse", "optimize"]
    assert [s for s, _ in stages[-2:]] == ["emit", "compile"]


def test_pipeline_dump_texts():
    generated, lines, _ = _dumped(simple)
    by_stage = {line.splitlines()[0].split()[2].rstrip(":"): line for line in lines}
    assert "def simple(x, y):" in by_stage["source"]
    assert "mul" not in by_stage["fence"]
    assert _text("""
        # ---- normalize: simple ----
        def simple(x, y):
            z = x * y
            sin = np.sin(z)
            return sin
    """) == by_stage["normalize"].strip()
    assert by_stage["activity"].strip().endswith("active: sin, x, z")
    assert "def grad_simple(x, y, *, sens):" in by_stage["reverse"]
    assert generated.text.strip() in by_stage["emit"]


def test_pipeline_generated_code_reads_well():
    generated = driver.run(simple, (0,))
    assert generated.text.strip() == _text("""
        def grad_simple(x, y, *, sens):
            z = x * y
            sin = np.sin(z)
            # backward sweep
            d_sin = seed(sin, sens)
            # grad of: return np.sin(z)
            d_z = d_sin * np.cos(z)
            # grad of: z = x * y
            d_x = unbroadcast(d_z * y, x)
            return (sin, (d_x,), ())
    """)


def test_generated_function_is_in_linecache():
    generated = driver.run(with_callee, (0,))
    fn = generated.function
    assert fn.__code__.co_filename.startswith("<mindgrad")
    assert all(f.startswith("<mindgrad") for f in generated.files)
    text = inspect.getsource(fn)
    assert "def grad_with_callee(" in text
    assert "_pipeline_helper_backward(" in text


def test_grad_function_source_matches_the_pipeline():
    g = mindgrad.grad(simple)
    x, y = np.ones(2), np.ones(2)
    assert g.source(x, y) == mindgrad.source(g, x, y)
    assert g.source(x, y).strip() == driver.run(simple, (0,)).text.strip()
    assert "# ---- normalize: simple ----" in g.stages(x, y)


def index_error(x):
    return x[5] * 2.0


def test_runtime_error_traceback_points_into_generated_code():
    with pytest.raises(IndexError) as info:
        mindgrad.grad(index_error)(np.ones(2))
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].filename.startswith("<mindgrad")
    assert "x[5]" in frames[-1].line  # the generated line is shown, from linecache


def pass_only_loop(x):
    for v in x:
        pass
    return x * 2.0


def test_loop_with_only_pass_compiles():
    np.testing.assert_allclose(mindgrad.grad(pass_only_loop)(np.ones(2)), [2, 2])


def test_the_pipeline_is_its_list_of_stages():
    from mindgrad.compiler import pipeline

    assert driver.STAGES == tuple(s.name for s in pipeline.PARSE + pipeline.REVERSE +
                                  pipeline.FINISH)
    assert [s.name for s in pipeline.FORWARD] == ["activity", "forward", "optimize"]
    assert all(callable(s.run) and callable(s.show) for s in
               pipeline.PARSE + pipeline.REVERSE + pipeline.FORWARD + pipeline.FINISH)


def test_the_parse_stages_run_one_by_one_leave_what_the_dump_shows():
    from mindgrad.compiler import pipeline
    from mindgrad.compiler.front import specialise

    build = driver.Build()
    state = pipeline.Parsed(simple, None, specialise.call_shape(simple, 0, 2, ()))
    shown = {}
    for stage in pipeline.PARSE:
        stage.run(build, state)
        shown[stage.name] = stage.show(state)
    _, lines, _ = _dumped(simple)
    dumped = {line.splitlines()[0].split()[2].rstrip(":"): line for line in lines}
    for name, text in shown.items():
        assert dumped[name].strip() == f"# ---- {name}: simple ----\n{text.rstrip()}"


def test_forward_mode_dumps_its_own_stages():
    lines = []
    driver.run_forward(simple, (0,), dump=lines.append, nargs=2)
    stages = [line.splitlines()[0].split()[2].rstrip(":") for line in lines]
    assert stages == ["source", "fence", "normalize", "activity", "forward", "optimize", "emit",
                      "compile"]
