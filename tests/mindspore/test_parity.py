"""MindSpore's own gradient programs on mindgrad: each program of ``parity_programs.py``, with
``mindspore`` renamed to ``mindgrad`` and nothing else changed, must give what MindSpore 2.10
gave (``golden/``, written by ``record_golden.py`` under MindSpore): the same types, structure,
dtypes, shapes and values, or an error of the same type, in GRAPH and in PYNATIVE mode.

Where mindgrad still answers otherwise, ``DIFFERENCES`` says why, and the test expects the
difference (strictly: it fails once the answers agree, so the entry must go)."""

import json
import pathlib

import numpy as np
import pytest

import mindgrad
from tests.mindspore import parity_encode, parity_programs

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"

# (program, mode): why mindgrad's answer still differs from MindSpore's
DIFFERENCES = {
    **dict.fromkeys(
        [("gradop_int_output", m) for m in parity_programs.MODES],
        "MindSpore passes the gradient through a cast to int32 (ones); mindgrad holds an integer "
        "output constant and refuses to differentiate a function with no float output"),
    **dict.fromkeys(
        [("numpy_inputs_only", m) for m in parity_programs.MODES],
        "mindgrad differentiates NumPy arrays and Python floats (its NumPy-level API); "
        "MindSpore differentiates Tensors only and gives ()"),
}


def differences(expected, actual, where="result"):
    """The differences between two encoded answers, as readable lines."""
    if expected["kind"] != actual["kind"]:
        return [f"{where}: MindSpore gives {_show(expected)}, mindgrad {_show(actual)}"]
    kind = expected["kind"]
    if kind == "error":  # mindgrad's error may be a subclass of MindSpore's
        if expected["type"] not in actual.get("is_a", [actual["type"]]):
            return [f"{where}: MindSpore raises {expected['type']}: {expected['message']!r}, "
                    f"mindgrad {actual['type']}: {actual['message']!r}"]
        return []
    if kind in ("tuple", "list"):
        if len(expected["items"]) != len(actual["items"]):
            return [f"{where}: MindSpore gives {_show(expected)}, mindgrad {_show(actual)}"]
        return [line for i, (e, a) in enumerate(zip(expected["items"], actual["items"]))
                for line in differences(e, a, f"{where}[{i}]")]
    if kind == "dict":
        if set(expected["items"]) != set(actual["items"]):
            return [f"{where}: keys {sorted(expected['items'])} vs {sorted(actual['items'])}"]
        return [line for k in expected["items"]
                for line in differences(expected["items"][k], actual["items"][k],
                                        f"{where}[{k!r}]")]
    if kind in ("tensor", "ndarray"):
        found = []
        for key in ("class", "dtype", "shape"):
            if expected[key] != actual[key]:
                found.append(f"{where}: {key} {expected[key]} in MindSpore, {actual[key]} in "
                             "mindgrad")
        # float32 rounding: relative 1e-5, and absolute 1e-5 of the array's largest value
        scale = max(1.0, float(np.max(np.abs(expected["value"])))) \
            if expected["value"] is not None and np.size(expected["value"]) else 1.0
        if not found and expected["value"] is not None and not np.allclose(
                expected["value"], actual["value"], rtol=1e-5, atol=1e-5 * scale):
            found.append(f"{where}: values {expected['value']} in MindSpore, "
                         f"{actual['value']} in mindgrad")
        return found
    if expected != actual:
        return [f"{where}: MindSpore gives {_show(expected)}, mindgrad {_show(actual)}"]
    return []


def _show(node):
    if node["kind"] == "error":
        return f"{node['type']}: {node['message']!r}"
    return json.dumps(node)[:200]


CASES = [(name, mode) for name in parity_programs.PROGRAMS for mode in parity_programs.MODES]


@pytest.fixture(autouse=True)
def _restore_context():
    saved = dict(mindgrad.mindspore.context._context)
    yield
    mindgrad.mindspore.context._context.clear()
    mindgrad.mindspore.context._context.update(saved)


@pytest.mark.parametrize(("name", "mode"), CASES, ids=[f"{n}-{m}" for n, m in CASES])
def test_program_answers_as_mindspore(name, mode, tmp_path):
    expected = json.loads((GOLDEN / f"{name}.json").read_text())[mode]
    text = parity_programs.program(name, mode, "mindgrad")
    actual = parity_encode.run(text, tmp_path / f"prog_{name}_{mode.lower()}.py")
    found = differences(expected, actual)
    if (name, mode) in DIFFERENCES:
        assert found, f"{name} in {mode} now answers as MindSpore does: drop it from DIFFERENCES"
        return
    assert not found, "\n".join(found)


def test_every_program_has_its_golden_answers():
    recorded = {path.stem for path in GOLDEN.glob("*.json")}
    assert set(parity_programs.PROGRAMS) <= recorded, \
        sorted(set(parity_programs.PROGRAMS) - recorded)


def test_the_comparison_sees_a_difference():
    tensor = {"kind": "tensor", "class": "Tensor", "dtype": "Float32", "shape": [2],
              "value": [1.0, 2.0]}
    assert differences(tensor, tensor) == []
    assert differences(tensor, dict(tensor, value=[1.0, 2.5]))
    assert differences(tensor, dict(tensor, dtype="Int32"))
    assert differences(tensor, dict(tensor, **{"class": "ndarray"}))
    assert differences({"kind": "tuple", "items": [tensor]}, tensor)
    assert differences({"kind": "error", "type": "RuntimeError", "message": ""},
                       {"kind": "error", "type": "ValueError", "message": ""})
    assert not differences({"kind": "error", "type": "TypeError", "message": ""},
                           {"kind": "error", "type": "BpropResultError", "message": "",
                            "is_a": ["BpropResultError", "ValueError", "TypeError"]})
