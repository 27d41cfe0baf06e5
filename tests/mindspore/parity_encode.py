"""How the parity suite writes down what a program returned, the same under MindSpore and under
mindgrad: a tree of ``{"kind": ..., ...}`` nodes with every type, dtype, shape and value, or the
error's type and message. Imports neither library (the recorder runs it with MindSpore)."""

from __future__ import annotations

import pathlib
import runpy
import traceback

import numpy as np


def encode(value):
    """``value`` as JSON: tensors with their class, dtype, shape and values; containers with
    their kind; Python scalars with their type."""
    kind = type(value).__name__
    if isinstance(value, (tuple, list)):
        return {"kind": "tuple" if isinstance(value, tuple) else "list",
                "items": [encode(v) for v in value]}
    if isinstance(value, dict):
        return {"kind": "dict", "items": {str(k): encode(v) for k, v in value.items()}}
    if isinstance(value, (bool, int, float, str, type(None))):
        return {"kind": kind, "value": value}
    if isinstance(value, np.generic):
        return {"kind": "numpy_scalar", "dtype": str(value.dtype), "value": value.item()}
    if hasattr(value, "asnumpy") or isinstance(value, np.ndarray):
        array = value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)
        dtype = value.dtype if hasattr(value, "asnumpy") else array.dtype
        return {"kind": "tensor" if hasattr(value, "asnumpy") else "ndarray", "class": kind,
                "dtype": dtype_name(dtype), "shape": list(array.shape),
                "value": np.asarray(array, np.float64).tolist()
                if array.dtype.kind in "fiub" else None}
    return {"kind": "object", "class": kind}


def dtype_name(dtype):
    """``Float32``, ``Int32``: MindSpore's name of a dtype (MindSpore's own str of it, or
    NumPy's name written as MindSpore writes it)."""
    text = str(dtype)
    names = {"float16": "Float16", "float32": "Float32", "float64": "Float64", "int8": "Int8",
             "int16": "Int16", "int32": "Int32", "int64": "Int64", "uint8": "UInt8",
             "bool": "Bool", "complex64": "Complex64", "complex128": "Complex128"}
    return names.get(text, text)


def run(text: str, path: pathlib.Path):
    """Run the program ``text`` from the file ``path`` (both libraries read functions'
    source) and encode its ``result``, or the error it raised."""
    path.write_text(text)
    try:
        result = runpy.run_path(str(path), run_name=path.stem)["result"]
    except Exception as exc:  # noqa: BLE001  (the error is the answer recorded)
        last = traceback.extract_tb(exc.__traceback__)[-1]
        lines = [line.strip() for line in str(exc).splitlines()
                 if line.strip() and not set(line.strip()) <= set("-=")]
        return {"kind": "error", "type": type(exc).__name__,
                "is_a": [cls.__name__ for cls in type(exc).__mro__
                         if issubclass(cls, Exception) and cls is not Exception],
                "message": lines[0][:300] if lines else "",
                "raised_in": pathlib.Path(last.filename).name}
    return encode(result)
