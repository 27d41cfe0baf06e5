"""Writes mindgrad/mindspore/mindspore_names.py: the public names of the MindSpore modules that
mindgrad mirrors, so that a MindSpore name mindgrad lacks is refused as MindSpore's.

Run with MindSpore installed (its own virtual environment; it needs numpy<2):
    /work/msenv/bin/python tests/mindspore/record_names.py
"""

import __future__

import importlib
import inspect
import pathlib
import pprint

import mindspore

MODULES = ["mindspore", "mindspore.context", "mindspore.common", "mindspore.common.dtype",
           "mindspore.common.tensor", "mindspore.common.parameter",
           "mindspore.common.initializer", "mindspore.common.api", "mindspore.ops",
           "mindspore.ops.operations", "mindspore.ops.composite", "mindspore.ops.functional",
           "mindspore.ops.function", "mindspore.ops.primitive", "mindspore.nn"]

TARGET = pathlib.Path(__file__).resolve().parents[2] / "mindgrad" / "mindspore" / \
    "mindspore_names.py"


def public_names(module):
    """The public names of ``module``, less the modules it merely imports (os, json, ...) and
    ``from __future__`` features."""
    names = []
    for name in dir(module):
        value = getattr(module, name)
        if name.startswith("_") or isinstance(value, __future__._Feature):
            continue
        if inspect.ismodule(value) and not value.__name__.startswith("mindspore."):
            continue
        names.append(name)
    return sorted(names)


def main():
    names = {}
    for path in MODULES:
        names[path] = public_names(importlib.import_module(path))
    text = ('"""The public names of MindSpore ' + mindspore.__version__ + "'s modules that "
            "mindgrad mirrors,\nwritten by tests/mindspore/record_names.py (do not edit): a "
            'name here that mindgrad lacks\nis refused as MindSpore\'s, not supported."""\n\n'
            "# ruff: noqa: E501\nNAMES = " + pprint.pformat(names, width=99, compact=True) + "\n")
    TARGET.write_text(text)
    print(f"wrote {TARGET} ({sum(map(len, names.values()))} names)")


if __name__ == "__main__":
    main()
