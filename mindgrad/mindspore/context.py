"""MindSpore's context and compilation decorators: ``set_context``, ``GRAPH_MODE``,
``PYNATIVE_MODE``, ``jit``, ``mutable``, ``set_seed``.

mindgrad has one way to run a program: as the Python it is, its gradients as generated Python.
So both modes (and every device target) are accepted and recorded, and run the same code; ``jit``
returns the function itself, so mindgrad reads and differentiates it as written.
"""

from __future__ import annotations

import numpy as np

from mindgrad.rules import nondifferentiable

__all__ = ["GRAPH_MODE", "PYNATIVE_MODE", "JitConfig", "constexpr", "get_context", "get_seed",
           "jit", "jit_class", "ms_class", "ms_function", "mutable", "set_context", "set_seed"]

GRAPH_MODE = 0
PYNATIVE_MODE = 1

_DEVICES = ("CPU", "GPU", "Ascend")
_context = {"mode": PYNATIVE_MODE, "device_target": "CPU", "device_id": 0,
            "jit_level": "O0", "save_graphs": False, "max_call_depth": 1000}
_seed = [None]


def set_context(**kwargs):
    """Record MindSpore context settings: ``mode`` (``GRAPH_MODE`` or ``PYNATIVE_MODE``),
    ``device_target`` (``"CPU"``, ``"GPU"``, ``"Ascend"``), and any other key. Both modes run
    the same code here."""
    if "mode" in kwargs and kwargs["mode"] not in (GRAPH_MODE, PYNATIVE_MODE):
        raise ValueError(f"mode must be GRAPH_MODE (0) or PYNATIVE_MODE (1), got "
                         f"{kwargs['mode']!r}")
    if "device_target" in kwargs and kwargs["device_target"] not in _DEVICES:
        raise ValueError(f"device_target must be one of {', '.join(_DEVICES)}, got "
                         f"{kwargs['device_target']!r}")
    _context.update(kwargs)


def get_context(attr_key):
    """The value ``set_context`` recorded for ``attr_key`` (or its default)."""
    if attr_key not in _context:
        raise ValueError(f"get_context: unknown key {attr_key!r}; known: "
                         f"{', '.join(sorted(_context))}")
    return _context[attr_key]


def set_seed(seed):
    """Seed NumPy's global generator, from which parameter initializers, dropout masks and
    ``ops`` random functions draw."""
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"set_seed takes an int >= 0, got {seed!r}")
    _seed[0] = seed
    np.random.seed(seed)


def get_seed():
    return _seed[0]


def jit(function=None, *args, **kwargs):
    """``@jit`` or ``@jit(...)``: the function itself, unchanged (mindgrad reads its source)."""
    if function is None or not callable(function):
        return lambda fn: fn
    return function


ms_function = jit


def jit_class(cls):
    return cls


ms_class = jit_class


def constexpr(fn=None, get_instance=True, name=None, reuse_result=True, check=True):
    """``@constexpr``: the function itself (its calls are simply run)."""
    if fn is None:
        return lambda f: f
    return fn


# the containers mutable() marked, by id (with the object, so that the id stays its own)
_mutables: dict = {}
_MUTABLES_KEPT = 256


def mutable(input_data, dynamic_len=False):
    """``input_data`` itself, marked: in GRAPH mode, a tuple, list or dict that ``mutable``
    marked is differentiated beside Tensors (as MindSpore's graph mode does); unmarked, or in
    PYNATIVE mode, it is a constant."""
    _mark_mutable(input_data)
    return input_data


def _mark_mutable(input_data):
    if isinstance(input_data, (tuple, list, dict)):
        if len(_mutables) >= _MUTABLES_KEPT:
            _mutables.pop(next(iter(_mutables)))
        _mutables[id(input_data)] = input_data


def is_marked_mutable(value) -> bool:
    """Whether ``value`` is a container ``mutable`` marked, in GRAPH mode."""
    return _context["mode"] == GRAPH_MODE and _mutables.get(id(value)) is value


nondifferentiable(_mark_mutable)  # mutable(x) inside differentiated code: x passes through


class JitConfig:
    """Accepted for ``Cell.set_jit_config``; nothing to configure."""

    def __init__(self, jit_level="", exc_mode="auto", jit_syntax_level="", debug_level="",
                 infer_boost="", **kwargs):
        self.jit_config_dict = dict(jit_level=jit_level, exc_mode=exc_mode,
                                    jit_syntax_level=jit_syntax_level, **kwargs)
