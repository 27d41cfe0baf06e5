"""``save_checkpoint``, ``load_checkpoint`` and ``load_param_into_net`` over NumPy's ``.npz``.

The file is a NumPy ``.npz`` archive (a zip of ``.npy`` files), written under the name given
(``.ckpt`` appended when it has no such suffix, as MindSpore does): one array per parameter,
under the parameter's name, and one entry ``__mindgrad_checkpoint__`` holding JSON metadata::

    {"format": "mindgrad.checkpoint", "version": 1,
     "requires_grad": {"dense.weight": true, ...},     # per array entry
     "values": {"epoch": 3, "note": "..."}}             # append_dict entries that are no arrays

It is read with ``allow_pickle=False``. MindSpore's own protobuf ``.ckpt`` files are a different
format, which mindgrad does not read (nor write).
"""

from __future__ import annotations

import json
import numbers
import os
import zipfile

import numpy as np

from mindgrad.mindspore.cell import Cell, Parameter

__all__ = ["load_checkpoint", "load_param_into_net", "save_checkpoint"]

_META = "__mindgrad_checkpoint__"
_FORMAT = "mindgrad.checkpoint"


def _checkpoint_path(name) -> str:
    name = os.fspath(name)
    return name if name.endswith(".ckpt") else name + ".ckpt"


def _entries(save_obj):
    """``[(name, array, requires_grad)]`` of a Cell, a list of Parameters or of
    ``{"name": ..., "data": ...}`` dicts, or a dict of name -> value."""
    if isinstance(save_obj, Cell):
        return [(name, p, p.requires_grad) for name, p in save_obj.parameters_and_names()]
    if isinstance(save_obj, dict):
        return [(name, value, getattr(value, "requires_grad", True))
                for name, value in save_obj.items()]
    if isinstance(save_obj, (list, tuple)):
        entries = []
        for item in save_obj:
            if isinstance(item, Parameter):
                entries.append((item.name, item, item.requires_grad))
            elif isinstance(item, dict) and "name" in item and "data" in item:
                data = item["data"]
                entries.append((item["name"], data, getattr(data, "requires_grad", True)))
            else:
                raise TypeError("save_checkpoint: a list holds Parameters or "
                                f"{{'name': ..., 'data': ...}} dicts, got {type(item).__name__}")
        return entries
    raise TypeError("save_checkpoint saves a Cell, a list of Parameters or of "
                    f"{{'name', 'data'}} dicts, or a dict; got {type(save_obj).__name__}")


def save_checkpoint(save_obj, ckpt_file_name, integrated_save=True, async_save=False,
                    append_dict=None, enc_key=None, enc_mode="AES-GCM", choice_func=None,
                    **kwargs):
    """Save the parameters of ``save_obj`` (a Cell, a list of Parameters or of
    ``{"name": ..., "data": ...}`` dicts, or the dict ``load_checkpoint`` returns) to
    ``ckpt_file_name``, plus the ``append_dict`` entries (numbers, strings, arrays).
    ``choice_func(name)`` picks which to save. Encryption (``enc_key``) is not supported."""
    if enc_key is not None:
        raise NotImplementedError("save_checkpoint: mindgrad checkpoints are not encrypted "
                                  "(enc_key)")
    arrays, requires_grad, values = {}, {}, {}
    items = _entries(save_obj) + [(k, v, False) for k, v in (append_dict or {}).items()]
    for name, value, trainable in items:
        if not isinstance(name, str) or name == _META:
            raise ValueError(f"save_checkpoint: bad parameter name {name!r}")
        if choice_func is not None and not choice_func(name):
            continue
        if isinstance(value, str) or (isinstance(value, numbers.Number) and
                                      not isinstance(value, np.generic)):
            values[name] = value
            continue
        arrays[name] = np.array(value)
        requires_grad[name] = bool(trainable)
    meta = {"format": _FORMAT, "version": 1, "requires_grad": requires_grad, "values": values}
    arrays[_META] = np.array(json.dumps(meta))
    # what np.savez writes, without its keyword arguments (a parameter may be named "file")
    with zipfile.ZipFile(_checkpoint_path(ckpt_file_name), "w") as archive:
        for name, array in arrays.items():
            with archive.open(name + ".npy", "w") as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def load_checkpoint(ckpt_file_name, net=None, strict_load=False, filter_prefix=None,
                    dec_key=None, dec_mode="AES-GCM", specify_prefix=None, choice_func=None,
                    crc_check=False, remove_redundancy=False, format="ckpt"):
    """The dict name -> Parameter saved in ``ckpt_file_name`` (appended numbers and strings
    come back as they were saved). ``filter_prefix`` drops names with a prefix,
    ``specify_prefix`` keeps only those with one, ``choice_func(name)`` picks; with ``net``,
    the parameters are also loaded into it (``load_param_into_net``)."""
    path = os.fspath(ckpt_file_name)
    try:
        archive = np.load(path, allow_pickle=False)
    except (ValueError, OSError, zipfile.BadZipFile) as err:
        raise ValueError(f"{path} is not a mindgrad checkpoint (a NumPy .npz archive); "
                         f"MindSpore's protobuf .ckpt files are not read: {err}") from None
    with archive:
        if _META not in archive.files:
            raise ValueError(f"{path} is a .npz archive but not a mindgrad checkpoint (no "
                             f"{_META} entry)")
        meta = json.loads(str(archive[_META]))
        if meta.get("format") != _FORMAT:
            raise ValueError(f"{path}: unknown checkpoint format {meta.get('format')!r}")
        names = [n for n in archive.files if n != _META] + list(meta["values"])
        loaded = {}
        for name in names:
            if not _wanted(name, filter_prefix, specify_prefix, choice_func):
                continue
            if name in meta["values"]:
                value = meta["values"][name]
                loaded[name] = value if isinstance(value, str) else \
                    Parameter(np.array(value), name, requires_grad=False)
            else:
                loaded[name] = Parameter(archive[name], name,
                                         requires_grad=meta["requires_grad"].get(name, True))
    if net is not None:
        load_param_into_net(net, loaded, strict_load)
    return loaded


def _prefixes(prefix):
    if prefix is None:
        return ()
    return (prefix,) if isinstance(prefix, str) else tuple(prefix)


def _wanted(name, filter_prefix, specify_prefix, choice_func):
    if any(name.startswith(p) for p in _prefixes(filter_prefix)):
        return False
    keep = _prefixes(specify_prefix)
    if keep and not any(name.startswith(p) for p in keep):
        return False
    return choice_func is None or bool(choice_func(name))


def load_param_into_net(net, parameter_dict, strict_load=False, remove_redundancy=False):
    """Copy the values of ``parameter_dict`` into ``net``'s parameters of the same name, in
    place. Returns ``(param_not_load, ckpt_not_load)``: the names of ``net``'s parameters that
    got no value, and of the entries no parameter took. Without ``strict_load``, an entry named
    ``prefix.name`` also fills a parameter ``name`` (or the reverse) when that match is unique,
    and values are cast to the parameter's dtype; with it, names and dtypes must match."""
    if not isinstance(net, Cell):
        raise TypeError(f"load_param_into_net loads into a Cell, got {type(net).__name__}")
    if not isinstance(parameter_dict, dict):
        raise TypeError("load_param_into_net takes a dict of name -> Parameter, got "
                        f"{type(parameter_dict).__name__}")
    used, param_not_load = set(), []
    for name, param in net.parameters_and_names():
        key = name if name in parameter_dict else \
            (None if strict_load else _suffix_match(name, parameter_dict))
        if key is None:
            param_not_load.append(name)
            continue
        value = np.asarray(parameter_dict[key])
        if value.shape != param.shape:
            raise RuntimeError(f"load_param_into_net: {name!r} has shape {param.shape}, the "
                               f"checkpoint's {key!r} has shape {value.shape}")
        if strict_load and value.dtype != param.dtype:
            raise TypeError(f"load_param_into_net(strict_load=True): {name!r} is {param.dtype}, "
                            f"the checkpoint's {key!r} is {value.dtype}")
        param.set_data(value.astype(param.dtype, copy=False))
        used.add(key)
    ckpt_not_load = [k for k in parameter_dict if k not in used]
    return param_not_load, ckpt_not_load


def _suffix_match(name, parameter_dict):
    """The one key that is ``name`` with a prefix, or a suffix of it, else None."""
    found = [k for k in parameter_dict
             if isinstance(k, str) and (k.endswith("." + name) or name.endswith("." + k))]
    return found[0] if len(found) == 1 else None
