"""The symbolic zero: ``Zero``, the gradient or tangent of a value that receives none.

Generated code starts every gradient at ``zero`` (``d_x = zero``) and the helpers return a
``Zero`` where no gradient flows. It costs nothing to make and it is linear: ``zero + g`` is
``g``, ``zero * y``, ``-zero``, ``zero @ y``, ``zero[i]``, ``zero.T`` and the linear NumPy
functions of it (``np.sum``, ``np.reshape``, ``np.transpose``, ``np.tensordot``, ...) are zeros
again, so a rule linear in its gradient gives the zero for the zero without a test, and
arithmetic never turns it into a number that stands for an array (``0 * 1.0`` is ``0.0``; a
``Zero`` times ``1.0`` is a ``Zero``). A ``Zero`` made from a value (``Zero.like(x)``) knows the
shape and dtype it stands for, and the view-like functions of it keep them. Where a value is
required (a nonlinear ufunc, ``np.concatenate``, ``np.asarray``, an index write into an array)
it becomes ``np.zeros`` of its shape, or the number 0 where its shape is not known; the user
never receives one (``outputs.as_grad`` gives zeros of the input's shape).
"""

from __future__ import annotations

import numpy as np

from mindgrad.runtime.arrays import as_array


def _present(module, *names):
    """The functions of ``module`` among ``names`` that this NumPy has."""
    return {getattr(module, n) for n in names if hasattr(module, n)}


# ufuncs f with f(0) = 0, linear: the zero in gives the zero out (as do multiply, matmul and
# divide with a zero numerator, below)
_UNARY_LINEAR = frozenset({np.negative, np.positive, np.conjugate})
# NumPy functions linear in their first argument that give a view-like result: a typed zero
# keeps its type through them (the result's shape is found on a broadcast zero, no copy)
VIEWS = frozenset({np.reshape, np.transpose, np.swapaxes, np.moveaxis, np.expand_dims,
                   np.squeeze, np.broadcast_to, np.ravel, np.flip, np.real, np.imag,
                   np.conj, np.conjugate, np.diagonal, np.atleast_1d, np.atleast_2d,
                   np.negative, np.rot90, np.fliplr, np.flipud} |
                  {np.rollaxis} | _present(np, "matrix_transpose") |
                  _present(np.linalg, "matrix_transpose", "diagonal"))
# NumPy functions linear in their first argument with a computed result: an untyped zero
LINEAR_FIRST = frozenset({np.sum, np.mean, np.cumsum, np.trace, np.diff, np.tril, np.triu,
                          np.roll, np.repeat, np.tile, np.take, np.nansum, np.fft.fft,
                          np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.fft2, np.fft.ifft2,
                          np.fft.fftn, np.fft.ifftn, np.fft.rfftn, np.fft.irfftn,
                          np.fft.hfft, np.fft.ihfft, np.fft.fftshift, np.fft.ifftshift,
                          np.copy, np.ascontiguousarray, np.diag, np.diagflat, np.delete,
                          np.resize, np.take_along_axis, np.polyder, np.polyval,
                          np.fft.rfft2, np.fft.irfft2, np.split, np.array_split, np.hsplit,
                          np.vsplit, np.dsplit, np.block} | _present(np, "unstack") |
                         _present(np.linalg, "trace"))
# NumPy functions linear in their second argument (a condition or a matrix first)
LINEAR_SECOND = frozenset({np.compress, np.extract, np.linalg.solve})
# np.pad is linear in the array where what it pads with is 0 (its default)
PAD_VALUES = ("constant_values", "end_values")
# NumPy functions linear in each of their array arguments (bilinear products): a zero factor
# gives a zero product
PRODUCTS = frozenset({np.dot, np.vdot, np.inner, np.outer, np.tensordot, np.kron, np.matmul,
                      np.cross, np.einsum, np.multiply, np.convolve, np.correlate, np.polymul} |
                     _present(np.linalg, "cross", "matmul", "outer", "tensordot"))
# ufuncs bilinear in their two arguments: a zero factor gives a zero product
PRODUCT_UFUNCS = frozenset({np.matmul, np.multiply} |
                            _present(np, "vecdot", "matvec", "vecmat"))


class Zero:
    """The symbolic zero gradient (or tangent), optionally of a known ``shape`` and ``dtype``.

    ``zero`` (this module's instance) is the untyped one generated code starts gradients at;
    ``Zero.like(x)`` is the zero standing for ``x``'s gradient. Instances are immutable."""

    __slots__ = ("_shape", "_dtype")
    __array_priority__ = 1000  # its arithmetic wins over ndarray's

    def __init__(self, shape=None, dtype=None):
        object.__setattr__(self, "_shape", None if shape is None else tuple(shape))
        object.__setattr__(self, "_dtype", None if dtype is None else np.dtype(dtype))

    def __setattr__(self, name, value):
        raise AttributeError("the symbolic zero is immutable")

    @classmethod
    def like(cls, x):
        """The zero standing for the gradient of ``x``: typed for an array or a number."""
        if isinstance(x, Zero):
            return x
        if isinstance(x, np.ndarray | np.generic):
            kind = x.dtype.kind
            return cls(x.shape, x.dtype if kind in "fc" else np.float64)
        if isinstance(x, float | complex):
            return cls((), type(x))
        return zero

    # -- what it stands for

    @property
    def shape(self):
        if self._shape is None:
            return ()  # the number 0: broadcasts to anything
        return self._shape

    @property
    def dtype(self):
        return self._dtype if self._dtype is not None else np.dtype(np.float64)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))

    @property
    def typed(self) -> bool:
        return self._shape is not None

    def value(self):
        """A real zero: ``np.zeros`` of the shape and dtype, or the number 0 if not known."""
        if self._shape is None:
            return 0
        return np.zeros(self._shape, self.dtype)

    def __array__(self, dtype=None, copy=None):
        return np.zeros(self.shape, self.dtype if dtype is None else dtype)

    def __repr__(self):
        if self._shape is None:
            return "zero"
        return f"Zero(shape={self._shape}, dtype={self.dtype})"

    def __bool__(self):
        return False

    def __float__(self):
        return 0.0

    def __int__(self):
        return 0

    def __complex__(self):
        return 0j

    def __eq__(self, other):
        if isinstance(other, Zero):
            return True
        if isinstance(other, np.ndarray):
            return as_array(self) == other
        try:
            return other == 0
        except Exception:  # noqa: BLE001 - a value that does not compare with 0
            return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else np.logical_not(eq) \
            if isinstance(eq, np.ndarray) else not eq

    def __hash__(self):
        return 0

    def __reduce__(self):
        return (Zero, (self._shape, self._dtype))

    # -- linear arithmetic

    def _with(self, other, shape_of=None):
        """The zero of a product with ``other``: typed where both shapes are known."""
        if self._shape is None:
            return zero
        if isinstance(other, Zero):
            if other._shape is None:
                return zero
            oshape, odtype = other._shape, other.dtype
        elif isinstance(other, np.ndarray | np.generic):
            oshape, odtype = other.shape, other.dtype
        elif isinstance(other, int | float | complex):
            oshape, odtype = (), None
        else:
            return zero
        try:
            shape = shape_of(self._shape, oshape) if shape_of else \
                np.broadcast_shapes(self._shape, oshape)
        except ValueError:
            return zero
        dtype = self.dtype if odtype is None or odtype.kind not in "fc" else \
            np.result_type(self.dtype, odtype)
        return Zero(shape, dtype)

    def __add__(self, other):
        if isinstance(other, Zero):
            return self if self._shape is not None else other
        if isinstance(other, np.ndarray):
            if self._shape is not None and other.shape != self._shape:
                return other + np.zeros(self._shape, other.dtype if other.dtype.kind in "fc"
                                        else self.dtype)
            return other.copy()  # a gradient of its own: add_at may update it in place
        # a container of gradients, or a number: immutable (other + 0 would promote a float32
        # number on NumPy 1)
        return other

    __radd__ = __add__

    def __sub__(self, other):
        if isinstance(other, Zero):
            return self if self._shape is not None else other
        if isinstance(other, np.ndarray) and (self._shape is None or other.shape == self._shape):
            return np.negative(other)  # fresh already: no copy of the copy
        return self.__add__(np.negative(other) if isinstance(other, np.generic) else -other)

    def __rsub__(self, other):
        return self.__add__(other)

    def __neg__(self):
        return self

    def __pos__(self):
        return self

    def __abs__(self):
        return self

    def __mul__(self, other):
        return self._with(other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self._with(other)

    def __rtruediv__(self, other):
        return other / self.value()

    def __floordiv__(self, other):
        return self._with(other)

    def __matmul__(self, other):
        return self._with(other, _matmul_shape)

    def __rmatmul__(self, other):
        return self._with(other, lambda a, b: _matmul_shape(b, a))

    def __pow__(self, other):
        return self.value() ** other

    def __rpow__(self, other):
        return other ** self.value()

    def __getitem__(self, index):
        if self._shape is None:
            return zero
        try:
            return Zero(np.broadcast_to(np.zeros((), self.dtype), self._shape)[index].shape,
                        self.dtype)
        except (IndexError, TypeError, ValueError):
            return zero

    def __iter__(self):
        # not the legacy protocol of __getitem__, which an untyped zero never ends
        if not self._shape:
            raise TypeError("the symbolic zero of a number is not iterable")
        item = Zero(self._shape[1:], self._dtype)
        return iter([item] * self._shape[0])

    def __len__(self):
        if self._shape:
            return self._shape[0]
        raise TypeError("the symbolic zero of a number has no len()")

    # -- the methods of arrays that rules call on a gradient

    @property
    def T(self):  # noqa: N802 - numpy's name
        return Zero(self._shape[::-1], self._dtype) if self._shape is not None else zero

    @property
    def mT(self):  # noqa: N802 - numpy's name
        return self.swapaxes(-1, -2)

    @property
    def real(self):
        if self._shape is None:
            return zero
        return Zero(self._shape, np.empty(0, self.dtype).real.dtype)

    @property
    def imag(self):
        return self.real

    def conj(self):
        return self

    conjugate = conj

    def copy(self, *args, **kwargs):
        return self

    def astype(self, dtype, *args, **kwargs):
        if self._shape is None:
            return zero
        return Zero(self._shape, dtype)

    def _view(self, func, *args, **kwargs):
        if self._shape is None:
            return zero
        return Zero(func(np.broadcast_to(np.zeros((), self.dtype), self._shape), *args,
                         **kwargs).shape, self.dtype)

    def reshape(self, *shape, **kwargs):
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        return self._view(np.reshape, shape, **kwargs)

    def transpose(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = axes[0]
        return self._view(np.transpose, axes or None)

    def swapaxes(self, a, b):
        return self._view(np.swapaxes, a, b)

    def ravel(self, *args, **kwargs):
        return self._view(np.ravel)

    flatten = ravel

    def squeeze(self, *args, **kwargs):
        return self._view(np.squeeze, *args, **kwargs)

    def diagonal(self, *args, **kwargs):
        return self._view(np.diagonal, *args, **kwargs)

    def sum(self, *args, **kwargs):
        return zero

    mean = sum
    cumsum = sum

    # -- NumPy's protocols

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and not kwargs.get("out"):
            zeros = [isinstance(x, Zero) for x in inputs]
            if ufunc in _UNARY_LINEAR:
                return inputs[0]
            if ufunc is np.add:  # never through +, which would come back here
                return inputs[0].__add__(inputs[1]) if zeros[0] else inputs[1].__add__(inputs[0])
            if ufunc is np.subtract:
                if zeros[1]:
                    return inputs[1].__add__(inputs[0])
                return inputs[0].__sub__(inputs[1])
            if ufunc is np.multiply:
                return inputs[0]._with(inputs[1]) if zeros[0] else inputs[1]._with(inputs[0])
            if ufunc is np.matmul:
                return inputs[0].__matmul__(inputs[1]) if zeros[0] else \
                    inputs[1].__rmatmul__(inputs[0])
            if ufunc in (np.divide, np.true_divide) and zeros[0]:
                return inputs[0]._with(inputs[1])
            if ufunc in PRODUCT_UFUNCS:  # vecdot, matvec, vecmat
                return zero
        if method == "outer" and ufunc is np.multiply and not kwargs:
            return zero
        values = [x.value() if isinstance(x, Zero) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(x.value() if isinstance(x, Zero) else x
                                  for x in kwargs["out"])
        return getattr(ufunc, method)(*values, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if args and isinstance(args[0], Zero):
            first = args[0]
            if func in VIEWS:
                if first._shape is None:
                    return zero
                try:
                    return first._view(func, *args[1:], **kwargs)
                except Exception:  # noqa: BLE001 - NumPy's own error, on the value
                    return func(first.__array__(), *args[1:], **kwargs)
            if func in LINEAR_FIRST or func is np.pad and not any(
                    np.any(kwargs.get(k, 0)) for k in PAD_VALUES) or \
                    func is np.polyint and len(args) < 3 and "k" not in kwargs:
                return zero
        if func in LINEAR_SECOND and len(args) > 1 and isinstance(args[1], Zero) and \
                not isinstance(args[0], Zero):
            return zero
        if func in PRODUCTS and any(isinstance(a, Zero) for a in args):
            return zero
        if func is np.shape:
            return args[0].shape
        if func is np.ndim:
            return args[0].ndim
        if func is np.iscomplexobj:
            return args[0].dtype.kind == "c"
        return func(*_values(args), **{k: _values(v) if isinstance(v, (list, tuple)) else
                                       (v.value() if isinstance(v, Zero) else v)
                                       for k, v in kwargs.items()})


def _values(args):
    """``args`` with each zero (also inside a list or tuple, as ``np.concatenate`` takes) a
    value."""
    out = []
    for a in args:
        if isinstance(a, Zero):
            a = a.value()
        elif isinstance(a, (list, tuple)) and any(isinstance(b, Zero) for b in a):
            a = type(a)(b.value() if isinstance(b, Zero) else b for b in a)
        out.append(a)
    return out


def _matmul_shape(a, b):
    """The shape of ``x @ y`` for operands of shapes ``a`` and ``b``."""
    if not a or not b:
        raise ValueError("matmul of a 0-d operand")
    a1, b1 = len(a) == 1, len(b) == 1
    a2 = (1,) + a if a1 else a
    b2 = b + (1,) if b1 else b
    batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    shape = batch + (a2[-2], b2[-1])
    if a1:
        shape = shape[:-2] + shape[-1:]
    if b1:
        shape = shape[:-1]
    return shape


zero = Zero()
