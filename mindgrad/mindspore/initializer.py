"""``mindspore.common.initializer`` on NumPy: ``initializer(init, shape, dtype)`` and the
initializer classes (``Normal``, ``HeUniform``, ...). Random draws come from NumPy's global
generator, so ``np.random.seed`` (or ``ms.set_seed``) makes them repeatable."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Constant", "HeNormal", "HeUniform", "Initializer", "Normal", "One",
           "TruncatedNormal", "Uniform", "XavierNormal", "XavierUniform", "Zero", "initializer"]


def _fans(shape):
    """(fan_in, fan_out) of a weight of ``shape`` (out, in, *kernel), as MindSpore counts them."""
    if len(shape) < 2:
        return (shape[0] if shape else 1), (shape[0] if shape else 1)
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


class Initializer:
    """Values of a given shape: ``init(shape)`` gives a float64 array, cast by ``initializer``."""

    def __call__(self, shape):
        return self.values(tuple(shape))

    def values(self, shape):
        raise NotImplementedError


class Constant(Initializer):
    def __init__(self, value):
        self.value = value

    def values(self, shape):
        return np.full(shape, self.value, dtype=np.float64)


class Zero(Constant):
    def __init__(self):
        super().__init__(0.0)


class One(Constant):
    def __init__(self):
        super().__init__(1.0)


class Normal(Initializer):
    def __init__(self, sigma=0.01, mean=0.0):
        self.sigma, self.mean = sigma, mean

    def values(self, shape):
        return np.random.normal(self.mean, self.sigma, shape)


class TruncatedNormal(Initializer):
    """Normal draws with ``sigma``, redrawn beyond two sigmas."""

    def __init__(self, sigma=0.01):
        self.sigma = sigma

    def values(self, shape):
        draws = np.random.standard_normal(shape)
        outside = np.abs(draws) > 2.0
        while np.any(outside):
            draws[outside] = np.random.standard_normal(int(np.sum(outside)))
            outside = np.abs(draws) > 2.0
        return draws * self.sigma


class Uniform(Initializer):
    def __init__(self, scale=0.07):
        self.scale = scale

    def values(self, shape):
        return np.random.uniform(-self.scale, self.scale, shape)


def _gain(nonlinearity, negative_slope):
    if nonlinearity == "leaky_relu":
        return math.sqrt(2.0 / (1.0 + negative_slope ** 2))
    return {"relu": math.sqrt(2.0), "tanh": 5.0 / 3.0}.get(nonlinearity, 1.0)


class HeUniform(Initializer):
    """Uniform in ``+-gain * sqrt(3 / fan)`` (Kaiming uniform)."""

    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def values(self, shape):
        fan = _fans(shape)[0 if self.mode == "fan_in" else 1]
        bound = _gain(self.nonlinearity, self.negative_slope) * math.sqrt(3.0 / fan)
        return np.random.uniform(-bound, bound, shape)


class HeNormal(HeUniform):
    """Normal with ``gain / sqrt(fan)`` (Kaiming normal)."""

    def values(self, shape):
        fan = _fans(shape)[0 if self.mode == "fan_in" else 1]
        return np.random.normal(0.0, _gain(self.nonlinearity, self.negative_slope) /
                                math.sqrt(fan), shape)


class XavierUniform(Initializer):
    """Uniform in ``+-gain * sqrt(6 / (fan_in + fan_out))`` (Glorot uniform)."""

    def __init__(self, gain=1):
        self.gain = gain

    def values(self, shape):
        fan_in, fan_out = _fans(shape)
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return np.random.uniform(-bound, bound, shape)


class XavierNormal(XavierUniform):
    def values(self, shape):
        fan_in, fan_out = _fans(shape)
        return np.random.normal(0.0, self.gain * math.sqrt(2.0 / (fan_in + fan_out)), shape)


_NAMED = {"zeros": Zero, "zero": Zero, "ones": One, "one": One, "normal": Normal,
          "truncatednormal": TruncatedNormal, "uniform": Uniform, "heuniform": HeUniform,
          "henormal": HeNormal, "xavieruniform": XavierUniform, "xaviernormal": XavierNormal}


def initializer(init, shape=None, dtype=np.float32):
    """An array of ``shape`` and ``dtype`` from ``init``: an array or number (its values), an
    ``Initializer``, or an initializer's name (``"normal"``, ``"zeros"``, ``"HeUniform"``,
    ``"xavier_uniform"``, ...; case and underscores do not matter)."""
    shape = () if shape is None else ((shape,) if isinstance(shape, int) else tuple(shape))
    if isinstance(init, str):
        cls = _NAMED.get(init.lower().replace("_", ""))
        if cls is None:
            raise ValueError(f"unknown initializer {init!r}; mindgrad knows "
                             f"{', '.join(sorted(_NAMED))}")
        init = cls()
    if isinstance(init, Initializer):
        return np.asarray(init(shape), dtype=dtype)
    values = np.array(init, dtype=dtype)
    if values.ndim == 0 and shape:
        return np.full(shape, values, dtype=dtype)
    if shape and values.shape != shape:
        raise ValueError(f"initial values of shape {values.shape} for a parameter of shape "
                         f"{shape}")
    return values
