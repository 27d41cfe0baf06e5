"""Random inputs for numerical checks, each table drawing from its own seeded generator (so its
inputs do not depend on which other tables were built first).

Entries are kept inside the functions' smooth domains: ``r`` away from 0 (the kinks of abs, max,
sign), ``pos`` positive (logs, roots), ``unit`` inside (-1, 1) (arcsin, arctanh), ``big`` above 1
(arccosh); ``well_conditioned``, ``separated`` and ``symmetric_in`` make matrices whose inverse,
singular vectors or eigenvectors are well defined (see linalg_inputs.py).
"""

import numpy as np

from tests.support import linalg_inputs


class Draw:
    """Input makers sharing one generator: ``draw = Draw(seed); r = draw.r; r(2, 3)``."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def normal(self, *shape):
        return self.rng.standard_normal(shape)

    def r(self, *shape):
        """Standard normal; ``r()`` is a 0-d array. Entries are kept away from 0 (kinks)."""
        x = self.rng.standard_normal(shape)
        return np.where(np.abs(x) < 0.1, 0.1 + np.abs(x), x)

    def pos(self, *shape):
        return self.rng.uniform(0.5, 2.0, shape)

    def unit(self, *shape):
        return self.rng.uniform(-0.8, 0.8, shape)

    def big(self, *shape):
        return self.rng.uniform(1.5, 3.0, shape)

    def f(self, gen=None):
        """A Python float from ``gen`` (``r`` by default)."""
        return float((gen or self.r)())

    def x32(self, *shape, gen=None):
        """float32 entries from ``gen`` (``r`` by default)."""
        return (gen or self.r)(*shape).astype(np.float32)

    def mask(self, *shape):
        """A random boolean mask whose first column is all True (no empty row)."""
        m = self.rng.random(shape) > 0.3
        m[..., 0] = True
        return m

    def well_conditioned(self, *shape):
        return 3.0 * np.eye(shape[-1]) + 0.4 * self.rng.standard_normal(shape)

    def separated(self, *shape):
        return linalg_inputs.separated(self.rng, *shape)

    def symmetric_in(self, uplo, *shape):
        return linalg_inputs.symmetric_in(self.rng, uplo, *shape)
