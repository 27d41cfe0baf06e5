"""MindSpore's dtype names, as NumPy types: ``from mindgrad import dtype as mstype``.

``mstype.float32`` is ``np.float32``, so ``x.dtype == mstype.float32`` holds for a float32
array. MindSpore's ``bfloat16`` has no NumPy type and is absent.
"""

import numpy as np

__all__ = ["bool_", "byte", "complex64", "complex128", "double", "dtype_to_nptype",
           "dtype_to_pytype", "float16", "float32", "float64", "half", "int8", "int16", "int32",
           "int64", "intc", "intp", "pytype_to_dtype", "short", "single", "ubyte", "uint8",
           "uint16", "uint32", "uint64", "uintc", "uintp", "ushort"]

float16 = half = np.float16
float32 = single = np.float32
float64 = double = np.float64
int8 = byte = np.int8
int16 = short = np.int16
int32 = intc = np.int32
int64 = intp = np.int64
uint8 = ubyte = np.uint8
uint16 = ushort = np.uint16
uint32 = uintc = np.uint32
uint64 = uintp = np.uint64
bool_ = np.bool_
complex64 = np.complex64
complex128 = np.complex128


def dtype_to_nptype(type_):
    """The NumPy type of a MindSpore dtype (here they are the same)."""
    return np.dtype(type_).type


def dtype_to_pytype(type_):
    """``bool``, ``int``, ``float`` or ``complex``: the Python type of a dtype's values."""
    kind = np.dtype(type_).kind
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[kind]


def pytype_to_dtype(obj):
    """The dtype of a Python type: ``bool`` -> bool_, ``int`` -> int64, ``float`` -> float32."""
    if isinstance(obj, np.dtype) or (isinstance(obj, type) and issubclass(obj, np.generic)):
        return np.dtype(obj).type
    return {bool: bool_, int: int64, float: float32, complex: complex64}[obj]
