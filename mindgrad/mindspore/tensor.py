"""``Tensor``: MindSpore's constructor, giving a NumPy array (mindgrad has no tensor type)."""

from __future__ import annotations

import numpy as np


def Tensor(input_data=None, dtype=None):
    """A NumPy array of ``input_data``: float32 for Python floats unless ``dtype`` is given."""
    if dtype is None:
        probe = np.asarray(input_data)
        dtype = np.float32 if probe.dtype == np.float64 else probe.dtype
    return np.array(input_data, dtype=dtype)
