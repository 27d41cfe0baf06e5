"""MindSpore's tensor constructors (``ops.ones``, ``ops.zeros_like``, ``ops.arange``,
``ops.randn``, ...). Their results are constants for the gradient.

A constructor from a shape gives a Tensor (float32 unless ``dtype`` says otherwise, as in
MindSpore); one from an array (``ones_like``) gives the array's type, so inside a gradient,
where arrays are plain, it stays plain. Random draws come from NumPy's global generator
(``np.random.seed``, ``ms.set_seed``), or from ``np.random.default_rng(seed)`` when a ``seed`` is
given.
"""

from __future__ import annotations

import numpy as np

from mindgrad.mindspore.tensor import Tensor
from mindgrad.rules import nondifferentiable

__all__ = ["arange", "bernoulli", "eye", "fill", "full", "full_like", "linspace", "logspace",
           "multinomial", "normal", "ones", "ones_like", "rand", "rand_like", "randint",
           "randint_like", "randn", "randn_like", "range", "standard_normal", "uniform", "zeros",
           "zeros_like"]


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):  # randn((2, 3)) as randn(2, 3)
        return tuple(shape[0])
    return tuple(int(s) for s in shape)


def _float(dtype):
    return np.float32 if dtype is None else dtype


def ones(shape, dtype=None):
    return Tensor(np.ones(_shape(shape), _float(dtype)))


def zeros(size, dtype=None):
    return Tensor(np.zeros(_shape(size), _float(dtype)))


def full(size, fill_value, *, dtype=None):
    if dtype is None:
        dtype = np.asarray(Tensor(fill_value)).dtype
    return Tensor(np.full(_shape(size), fill_value, dtype))


def fill(type, shape, value):
    """``fill(type, shape, value)``: a Tensor of ``shape`` and dtype ``type`` full of ``value``."""
    return Tensor(np.full(_shape(shape), value, type))


def ones_like(input, *, dtype=None):
    return np.ones_like(input, dtype=dtype)


def zeros_like(input, *, dtype=None):
    return np.zeros_like(input, dtype=dtype)


def full_like(input, fill_value, *, dtype=None):
    return np.full_like(input, fill_value, dtype=dtype)


def eye(n, m=None, dtype=np.float32):
    return Tensor(np.eye(n, m, dtype=dtype))


def arange(start=0, end=None, step=1, *, dtype=None):
    """``[start, end)`` by ``step``: int64 for ints, float32 for floats (``arange(n)`` counts
    from 0)."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = np.int64 if ints else np.float32
    return Tensor(np.arange(start, end, step), dtype)


def range(start, end, step):
    return arange(start, end, step)


def linspace(start, end, steps):
    return Tensor(np.linspace(start, end, steps, dtype=np.float32))


def logspace(start, end, steps, base=10, *, dtype=np.float32):
    return Tensor(np.logspace(start, end, steps, base=base).astype(dtype))


def _generator(seed):
    return np.random if seed is None else np.random.default_rng(seed)


def standard_normal(shape, seed=None, seed2=None):
    return Tensor(_generator(seed).standard_normal(_shape(shape)).astype(np.float32))


def randn(*size, dtype=None, seed=None):
    return Tensor(_generator(seed).standard_normal(_shape(size)).astype(_float(dtype)))


def rand(*size, dtype=None, seed=None):
    return Tensor(_generator(seed).random(_shape(size)).astype(_float(dtype)))


def randint(low, high, size, seed=None, *, dtype=None):
    draws = _generator(seed).integers(low, high, _shape(size)) if seed is not None else \
        np.random.randint(low, high, _shape(size))
    return Tensor(draws, np.int64 if dtype is None else dtype)


def randn_like(input, seed=None, *, dtype=None):
    return randn(*np.shape(input), dtype=dtype or np.asarray(input).dtype, seed=seed)


def rand_like(input, seed=None, *, dtype=None):
    return rand(*np.shape(input), dtype=dtype or np.asarray(input).dtype, seed=seed)


def randint_like(input, low, high, seed=None, *, dtype=None):
    return randint(low, high, np.shape(input), seed, dtype=dtype or np.asarray(input).dtype)


def normal(shape, mean, stddev, seed=None):
    return Tensor(_generator(seed).normal(mean, stddev, _shape(shape)).astype(np.float32))


def uniform(shape, minval, maxval, seed=None, dtype=np.float32):
    return Tensor(_generator(seed).uniform(minval, maxval, _shape(shape)).astype(dtype))


def bernoulli(input, p=0.5, seed=None):
    """1 with probability ``p`` (a number or an array), else 0, in the shape and dtype of
    ``input``."""
    x = np.asarray(input)
    return Tensor((_generator(seed).random(x.shape) < p).astype(x.dtype))


def multinomial(input, num_samples, replacement=True, seed=None):
    """``num_samples`` class indices drawn per row of the (unnormalised) weights ``input``."""
    weights = np.atleast_2d(np.asarray(input, np.float64))
    draw = _generator(seed)
    rows = [draw.choice(weights.shape[1], num_samples, replace=replacement, p=w / w.sum())
            for w in weights]
    out = np.array(rows, np.int64)
    return Tensor(out if np.ndim(input) > 1 else out[0])


nondifferentiable(*(globals()[name] for name in __all__))
