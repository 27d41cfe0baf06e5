"""MindSpore's ``Tensor``: an ndarray subclass with MindSpore's constructor and methods.

Computing with Tensors gives Tensors (NumPy's ufuncs keep the subclass, ``__array_priority__``
makes a Tensor win over a Parameter in a mixed expression, and ``__array_function__`` turns the
plain arrays of NumPy's other functions into Tensors), so ``net(x).asnumpy()`` and
``loss.asnumpy()`` work. ``grad`` and ``value_and_grad`` compute on plain views of Tensor
arguments, at NumPy speed, and give their results back as Tensors (``register_array_type``).

Methods that NumPy arrays also have keep NumPy's keyword names and add MindSpore's positional
order (``t.mean(0, True)`` is ``keep_dims=True``); MindSpore's own methods (``exp``, ``pow``,
``expand_dims``, ``view(*shape)``, ...) call the functional operators of ``functional`` and
``nn_functional``.
"""

from __future__ import annotations

import numpy as np

from mindgrad.api.gradients import register_array_type
from mindgrad.mindspore import context
from mindgrad.mindspore import functional as F
from mindgrad.mindspore import nn_functional as NF

__all__ = ["Tensor", "tensor"]

# MindSpore's names of the dtypes, as its Tensor prints them
_DTYPE_NAMES = {
    "bool": "Bool", "int8": "Int8", "int16": "Int16", "int32": "Int32", "int64": "Int64",
    "uint8": "UInt8", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
    "float16": "Float16", "float32": "Float32", "float64": "Float64",
    "complex64": "Complex64", "complex128": "Complex128",
}


def dtype_name(dtype) -> str:
    """``Float32`` for float32: how MindSpore prints a dtype."""
    name = np.dtype(dtype).name
    return _DTYPE_NAMES.get(name, name)


def _has_numpy_data(data) -> bool:
    """Whether ``data`` is (or holds) NumPy data, whose dtype a Tensor keeps."""
    if isinstance(data, (np.ndarray, np.generic)):
        return True
    if isinstance(data, (list, tuple)):
        return any(_has_numpy_data(item) for item in data)
    return False


def _data_of(input_data, dtype, shape, init):
    if input_data is None:
        if shape is None:
            raise ValueError("Tensor(): give input_data, or shape with init")
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        dtype = np.float32 if dtype is None else dtype
        if init is None or init == "zeros":
            return np.zeros(shape, dtype)
        if init == "ones":
            return np.ones(shape, dtype)
        if callable(init):  # an initializer: init(shape) gives the values
            return np.asarray(init(shape), dtype)
        raise ValueError(f"Tensor(): unknown init {init!r}; use 'zeros', 'ones' or a function of "
                         "the shape")
    if dtype is not None:
        return np.array(input_data, dtype=dtype)
    data = np.array(input_data)
    # Python floats are float32 and Python ints int64 in MindSpore; NumPy data keeps its dtype
    if not _has_numpy_data(input_data):
        if data.dtype == np.float64:
            data = data.astype(np.float32)
        elif data.dtype.kind == "i":
            data = data.astype(np.int64)
    return data


class Tensor(np.ndarray):
    """``Tensor(input_data=None, dtype=None, shape=None, init=None)``.

    ``input_data`` is a number, a (nested) list or tuple, a NumPy array or a Tensor. Python
    floats give float32 and Python ints int64, as in MindSpore; NumPy data keeps its dtype
    (``Tensor(np.ones(2))`` is float64). The data is copied.
    """

    __array_priority__ = 1.0  # a Tensor in an expression makes the result a Tensor

    def __new__(cls, input_data=None, dtype=None, shape=None, init=None, internal=False,
                const_arg=False):
        return _data_of(input_data, dtype, shape, init).view(cls)

    # ----- MindSpore's own -------------------------------------------------------------------

    def asnumpy(self) -> np.ndarray:
        """A NumPy array (a copy) of the values."""
        return np.array(self.view(np.ndarray))

    @staticmethod
    def from_numpy(array) -> Tensor:
        """A Tensor sharing ``array``'s memory."""
        return np.asarray(array).view(Tensor)

    def __getitem__(self, index):
        item = super().__getitem__(index)
        if isinstance(item, np.generic):  # an element is a 0-d Tensor in MindSpore
            return np.asarray(item).view(Tensor)
        return item

    def __array_function__(self, func, types, args, kwargs):
        # NumPy's functions that are no ufuncs (np.where, np.concatenate, np.linalg.norm, ...)
        # give plain arrays; MindSpore's operators give Tensors
        return _as_tensor(super().__array_function__(func, types, args, kwargs))

    def __repr__(self):
        values = np.array2string(self.view(np.ndarray), separator=" ")
        sep = "\n" if self.ndim > 1 else " "
        return (f"Tensor(shape={list(self.shape)}, dtype={dtype_name(self.dtype)}, "
                f"value={sep}{values})")

    def __str__(self):
        return str(self.view(np.ndarray))

    def dim(self) -> int:
        return self.ndim

    ndimension = dim

    def numel(self) -> int:
        return self.size

    nelement = numel

    def has_init(self) -> bool:
        return False

    def init_data(self, slice_index=None, shape=None, opt_shard_group=None):
        return self

    def set_const_arg(self, const_arg=True):
        return self

    def assign_value(self, value):
        """Replace the values in place."""
        self[...] = value
        return self

    def to(self, dtype):
        return self.astype(dtype)

    def float(self):
        return self.astype(np.float32)

    def half(self):
        return self.astype(np.float16)

    def double(self):
        return self.astype(np.float64)

    def int(self):
        return self.astype(np.int32)

    def long(self):
        return self.astype(np.int64)

    def short(self):
        return self.astype(np.int16)

    def bool(self):
        return self.astype(np.bool_)

    def view(self, *shape):
        """``view(*shape)`` reshapes, as MindSpore's does; ``view(dtype or type)`` is NumPy's."""
        if len(shape) == 1 and (shape[0] is None or isinstance(shape[0], type) or
                                isinstance(shape[0], np.dtype) or isinstance(shape[0], str)):
            return super().view(shape[0])
        if not shape:
            return super().view()
        return self.reshape(*shape)

    def reshape_as(self, other):
        return self.reshape(np.shape(other))

    def expand_as(self, other):
        return np.broadcast_to(self, np.shape(other))

    def flatten(self, order="C", *, start_dim=0, end_dim=-1):
        if self.ndim == 0:
            return self.reshape(1)
        return F.flatten(self, order, start_dim=start_dim, end_dim=end_dim)

    def permute(self, *axis):
        return np.transpose(self, axis[0] if len(axis) == 1 and not isinstance(axis[0], int)
                            else axis)

    def top_k(self, k, sorted=True):
        return F.topk(self, k, sorted=sorted)

    def argmax_with_value(self, axis=0, keep_dims=False):
        """``(index, value)`` of the maximum along ``axis``."""
        return F.argmax(self, axis, keep_dims), F.amax(self, axis, keep_dims)

    def argmin_with_value(self, axis=0, keep_dims=False):
        return F.argmin(self, axis, keep_dims), F.amin(self, axis, keep_dims)

    def ptp(self, axis=None, keepdims=False):
        return F.amax(self, axis, keepdims) - F.amin(self, axis, keepdims)

    def is_signed(self) -> bool:
        return self.dtype.kind in "ifc"

    def itemset(self, *args):
        """``itemset(value)`` for one element, ``itemset(index, value)``."""
        if len(args) == 1:
            self[...] = args[0]
        else:
            self[args[0]] = args[1]
        return self

    # ----- NumPy's methods with MindSpore's positional order -----------------------------------

    def mean(self, axis=None, keep_dims=False, *, dtype=None, out=None, keepdims=None,
             where=True):
        keep = keep_dims if keepdims is None else keepdims
        return super().mean(axis=F._axis(axis), dtype=dtype, out=out, keepdims=keep,
                            where=where)

    def prod(self, axis=None, keep_dims=False, dtype=None, *, out=None, keepdims=None,
             initial=1, where=True):
        keep = keep_dims if keepdims is None else keepdims
        return super().prod(axis=F._axis(axis), dtype=dtype, out=out, keepdims=keep,
                            initial=initial, where=where)

    def sum(self, axis=None, dtype=None, keepdims=False, initial=0, *, out=None, where=True):
        return super().sum(axis=F._axis(axis), dtype=dtype, out=out, keepdims=keepdims,
                           initial=initial, where=where)

    def all(self, axis=None, keep_dims=False, *, out=None, keepdims=None, where=True):
        keep = keep_dims if keepdims is None else keepdims
        return super().all(axis=F._axis(axis), out=out, keepdims=keep, where=where)

    def any(self, axis=None, keep_dims=False, *, out=None, keepdims=None, where=True):
        keep = keep_dims if keepdims is None else keepdims
        return super().any(axis=F._axis(axis), out=out, keepdims=keep, where=where)

    def max(self, axis=None, keepdims=False, *, initial=np._NoValue, where=True, out=None,
            return_indices=False):
        values = super().max(axis=F._axis(axis), out=out, keepdims=keepdims, initial=initial,
                             where=where)
        if return_indices:
            return values, self.argmax(axis, keepdims)
        return values

    def min(self, axis=None, keepdims=False, *, initial=np._NoValue, where=True, out=None,
            return_indices=False):
        values = super().min(axis=F._axis(axis), out=out, keepdims=keepdims, initial=initial,
                             where=where)
        if return_indices:
            return values, self.argmin(axis, keepdims)
        return values

    def argmax(self, axis=None, keepdims=False, *, out=None):
        return super().argmax(axis=axis, out=out, keepdims=keepdims)

    def argmin(self, axis=None, keepdims=False, *, out=None):
        return super().argmin(axis=axis, out=out, keepdims=keepdims)

    def std(self, axis=None, ddof=0, keepdims=False, *, dtype=None, out=None, **kwargs):
        return super().std(axis=F._axis(axis), dtype=dtype, out=out, ddof=ddof,
                           keepdims=keepdims, **kwargs)

    def var(self, axis=None, ddof=0, keepdims=False, *, dtype=None, out=None, **kwargs):
        return super().var(axis=F._axis(axis), dtype=dtype, out=out, ddof=ddof,
                           keepdims=keepdims, **kwargs)


def _as_tensor(value):
    """Plain arrays and NumPy numbers in ``value`` (or in a tuple or list of them) as Tensors."""
    if value.__class__ is np.ndarray or (isinstance(value, np.generic) and
                                         value.dtype.kind in "biufc"):
        return np.asarray(value).view(Tensor)
    if value.__class__ in (tuple, list):
        return value.__class__(_as_tensor(item) for item in value)
    return value


def _method(fn, name):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``ops.{name}(self, ...)``."
    return method


# MindSpore's methods that NumPy arrays lack: each is the functional operator of its name
_FUNCTIONAL_METHODS = (
    "abs", "absolute", "acos", "arccos", "acosh", "arccosh", "adjoint", "asin", "arcsin",
    "asinh", "arcsinh", "atan", "arctan", "atanh", "arctanh", "atan2", "arctan2", "add",
    "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr", "amax", "amin", "angle",
    "approximate_equal", "argsort", "baddbmm", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bmm", "broadcast_to", "ceil", "chunk", "clamp", "copysign", "cosh", "cos", "cross",
    "cumprod", "deg2rad", "det", "diag", "div", "divide", "equal", "eq", "erf", "erfc", "exp",
    "exp2", "expand", "expand_dims", "expm1", "flip", "fliplr", "flipud", "floor",
    "floor_divide", "fmod", "gather", "gather_elements", "gather_nd", "gcd", "ge", "ger",
    "greater", "greater_equal", "gt", "hardshrink", "heaviside", "hypot", "index_select",
    "inner", "inv", "inverse", "invert", "isclose", "isfinite", "isinf", "isnan",
    "is_floating_point", "lcm", "ldexp", "le", "lerp", "less", "less_equal", "log", "log10",
    "log1p", "log2", "logaddexp", "logaddexp2", "logdet", "logical_and", "logical_not",
    "logical_or", "logical_xor", "logit", "logsumexp", "lt", "masked_fill", "masked_select",
    "matmul", "maximum", "median", "minimum", "mm", "moveaxis", "movedim", "mul", "multiply",
    "mv", "narrow", "ne", "neg", "negative", "nonzero", "norm", "not_equal", "outer",
    "positive", "pow", "rad2deg", "reciprocal", "remainder", "repeat_interleave", "reverse",
    "roll", "rot90", "rsqrt", "sigmoid", "sign", "sgn", "sin", "sinc", "sinh", "slogdet",
    "soft_shrink", "softmax", "split", "sqrt", "square", "sub", "subtract", "svd", "swapdims",
    "tan", "tanh", "tensor_split", "tile", "topk", "tril", "triu", "true_divide", "trunc",
    "unbind", "unsqueeze", "xdivy", "xlogy",
)

for _name in _FUNCTIONAL_METHODS:
    setattr(Tensor, _name, _method(getattr(F, _name, None) or getattr(NF, _name), _name))
del _name


def tensor(input_data=None, dtype=None, shape=None, init=None, internal=False, const_arg=False):
    """``mindspore.tensor``: the same as ``Tensor(...)``."""
    return Tensor(input_data, dtype, shape, init, internal, const_arg)


register_array_type(Tensor, tensor_rules=True, keep_argument=context.is_marked_mutable)
