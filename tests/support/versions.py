"""Tests of what the oldest supported NumPy (1.22, see pyproject.toml) lacks, or the newest has
removed: skipped there, with a reason naming the version, never left out of the collection
without a word.

- ``needs_numpy((2, 0), "np.vecdot")``: a skip mark for a test or a ``pytest.param``;
  ``numpy_before((2, 5), "np.cross of 2-vectors")`` one for what a newer NumPy removed;
- ``numpy_function("vecdot", (2, 0))``: NumPy's function, or where the installed NumPy lacks it
  a stand-in that a case table (``rule_check.Cases``) turns into a skipped case.
"""

import numpy as np
import pytest

NUMPY = tuple(int(part) for part in np.__version__.split(".")[:2])


def _reason(version, what):
    return f"{what} needs NumPy >= {version[0]}.{version[1]}; this is NumPy {np.__version__}"


def needs_numpy(version, what):
    """Skips the test (or param) where the installed NumPy is older than ``version``."""
    return pytest.mark.skipif(NUMPY < version, reason=_reason(version, what))


def numpy_before(version, what):
    """Skips the test (or param) where the installed NumPy no longer has ``what`` (removed in
    ``version``)."""
    return pytest.mark.skipif(NUMPY >= version, reason=f"{what} was removed in NumPy "
                              f"{version[0]}.{version[1]}; this is NumPy {np.__version__}")


class Missing:
    """Stands for a NumPy function the installed NumPy lacks; calling it is an error."""

    def __init__(self, path, version):
        self.path, self.version = path, version
        self.__name__ = path.rsplit(".", 1)[-1]
        self.skip = pytest.mark.skip(reason=_reason(version, f"np.{path}"))

    def __call__(self, *args, **kwargs):
        raise AttributeError(_reason(self.version, f"np.{self.path}"))

    def __repr__(self):
        return f"np.{self.path} (NumPy >= {self.version[0]}.{self.version[1]})"


def numpy_function(path, version):
    """``np.<path>`` (``"linalg.vecdot"`` for ``np.linalg.vecdot``), or ``Missing``."""
    value = np
    for name in path.split("."):
        value = getattr(value, name, None)
        if value is None:
            return Missing(path, version)
    return value
