"""MindSpore's object model on NumPy: ``Parameter``, ``ParameterTuple`` and ``Cell``.

A ``Parameter`` is a NumPy array with a name: it works in every expression (arithmetic on it gives
plain arrays) and an optimizer step updates it in place (``p -= lr * g`` or ``p.set_data(v)``).
A ``Cell`` computes in ``construct``; calling the cell calls ``construct``. Parameters and
sub-cells assigned as attributes are registered in definition order, and a sub-cell's
parameters are named by their attribute path (``inner.k``), as MindSpore names them.
"""

from __future__ import annotations

import numpy as np

from mindgrad.compiler import objects

__all__ = [
    "CELU",
    "ELU",
    "GELU",
    "Cell",
    "CellList",
    "Dense",
    "FastGelu",
    "HShrink",
    "HSigmoid",
    "HSwish",
    "Hardtanh",
    "LeakyReLU",
    "LogSigmoid",
    "LogSoftmax",
    "Mish",
    "PReLU",
    "Parameter",
    "ParameterTuple",
    "ReLU",
    "ReLU6",
    "SeLU",
    "SequentialCell",
    "SiLU",
    "Sigmoid",
    "SoftShrink",
    "Softmax",
    "Softmin",
    "Softsign",
    "Tanh",
    "Tanhshrink",
    "get_activation",
]


class Parameter(np.ndarray):
    """A named array whose gradient ``grad(..., weights=...)`` can ask for."""

    def __new__(cls, default_input, name=None, requires_grad=True):
        if isinstance(default_input, np.ma.MaskedArray):
            raise TypeError(f"Parameter {name!r}: a masked array would lose its mask; pass "
                            "np.ma.filled(data, value) or a plain array")
        data = np.array(default_input, copy=True)
        if data.dtype.kind not in "fc":
            data = data.astype(np.float32)
        obj = data.view(cls)
        obj.name = name
        obj.requires_grad = bool(requires_grad)
        return obj

    def __array_finalize__(self, obj):
        self.name = getattr(obj, "name", None)
        self.requires_grad = getattr(obj, "requires_grad", True)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        if array is self:  # an in-place update (p -= lr * g) keeps the Parameter
            return self
        # results of computing with a Parameter are plain arrays, never Parameters
        array = array.view(np.ndarray)
        return array[()] if return_scalar else array

    def __getitem__(self, index):
        item = super().__getitem__(index)
        return item.view(np.ndarray) if isinstance(item, Parameter) else item

    # a Parameter is an object with an identity (weights are looked up by it), not a value
    __hash__ = object.__hash__

    def set_data(self, data):
        """Replace the values in place (same shape), as an optimizer step does."""
        self[...] = data
        return self

    @property
    def data(self):
        return self

    def asnumpy(self) -> np.ndarray:
        return np.array(self.view(np.ndarray))

    def __reduce__(self):
        return (Parameter, (self.view(np.ndarray).copy(), self.name, self.requires_grad))

    def __repr__(self):
        return (f"Parameter (name={self.name}, shape={self.shape}, dtype={self.dtype}, "
                f"requires_grad={self.requires_grad})")

    __str__ = __repr__


class ParameterTuple(tuple):
    """A tuple of Parameters, as ``GradOperation(get_by_list=True)`` takes its weights."""

    def __new__(cls, iterable=()):
        items = tuple(iterable)
        for item in items:
            if not isinstance(item, Parameter):
                raise TypeError(f"ParameterTuple holds Parameters only, got {type(item).__name__}")
        return super().__new__(cls, items)


class Cell:
    """The base class of networks: subclasses define ``construct(self, *inputs)``.

    A subclass may also define ``bprop(self, *inputs, out, dout)`` returning one gradient per
    input; mindgrad then uses it instead of differentiating ``construct``.
    """

    def __init__(self, auto_prefix=True, flags=None):
        object.__setattr__(self, "_params", {})
        object.__setattr__(self, "_cells", {})

    def __setattr__(self, name, value):
        if "_params" not in self.__dict__:
            raise RuntimeError(f"{type(self).__name__}.__init__ must call super().__init__() "
                               f"before setting {name!r}")
        self._params.pop(name, None)
        self._cells.pop(name, None)
        if isinstance(value, Parameter):
            if value.name is None:
                value.name = name
            self._params[name] = value
        elif isinstance(value, Cell):
            # a sub-cell's parameters are named by their attribute path; one this cell already
            # reaches through another path keeps its name
            known = {id(p) for _, p in self.parameters_and_names()}
            for _, param in value.parameters_and_names():
                if id(param) not in known:
                    param.name = f"{name}.{param.name}"
            self._cells[name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        self._params.pop(name, None)
        self._cells.pop(name, None)
        object.__delattr__(self, name)

    def construct(self, *inputs):
        raise NotImplementedError(f"{type(self).__name__} must define construct(self, ...)")

    def __call__(self, *inputs, **kwargs):
        return self.construct(*inputs, **kwargs)

    def parameters_and_names(self):
        """(name, Parameter) pairs: the cell's own first, then each sub-cell's, recursively."""
        seen = set()
        for param in self._params.values():
            if id(param) not in seen:
                seen.add(id(param))
                yield param.name, param
        for cell in self._cells.values():
            for name, param in cell.parameters_and_names():
                if id(param) not in seen:
                    seen.add(id(param))
                    yield name, param

    def get_parameters(self):
        for _, param in self.parameters_and_names():
            yield param

    def trainable_params(self):
        """The parameters with ``requires_grad=True``, in MindSpore's order."""
        return [p for _, p in self.parameters_and_names() if p.requires_grad]

    def untrainable_params(self):
        return [p for _, p in self.parameters_and_names() if not p.requires_grad]

    def cells_and_names(self, prefix=""):
        yield prefix, self
        for name, cell in self._cells.items():
            yield from cell.cells_and_names(f"{prefix}.{name}" if prefix else name)

    def name_cells(self):
        return dict(self._cells)

    def set_train(self, mode=True):
        object.__setattr__(self, "training", mode)
        return self

    def set_grad(self, requires_grad=True):
        return self

    def __repr__(self):
        inner = ", ".join(f"{n}={type(c).__name__}" for n, c in self._cells.items())
        return f"{type(self).__name__}({inner})"


class CellList(Cell):
    """A list of Cells, registered as sub-cells ``0``, ``1``, ...; a loop over it in
    ``construct`` is unrolled, so each call is differentiated through its own Cell."""

    def __init__(self, cells=()):
        super().__init__()
        for cell in cells:
            self.append(cell)

    def append(self, cell):
        if not isinstance(cell, Cell):
            raise TypeError(f"CellList holds Cells, got {type(cell).__name__}")
        setattr(self, str(len(self._cells)), cell)
        return self

    def __getitem__(self, index):
        return list(self._cells.values())[index]

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(list(self._cells.values()))


class SequentialCell(Cell):
    """Cells applied one after another: ``SequentialCell([a, b])(x)`` is ``b(a(x))``."""

    def __init__(self, *cells):
        super().__init__()
        if len(cells) == 1 and isinstance(cells[0], (list, tuple)):
            cells = tuple(cells[0])
        self.cell_list = CellList(cells)

    def construct(self, x):
        for cell in self.cell_list:
            x = cell(x)
        return x

    def __getitem__(self, index):
        return self.cell_list[index]

    def __len__(self):
        return len(self.cell_list)


class Dense(Cell):
    """MindSpore's fully connected layer: ``x @ weight.T + bias``, weight of shape (out, in).

    ``weight_init`` and ``bias_init`` take arrays; by default the weight is drawn from NumPy's
    global generator (``np.random.seed`` makes it repeatable) with variance ``1 / in_channels``,
    and the bias is zero.
    """

    def __new__(cls, in_channels=None, out_channels=None, weight_init=None, bias_init=None,
                has_bias=True, activation=None, dtype=np.float32):
        # with an activation, construct ends in a call of it; without, the code has no such call
        return super().__new__(ActivatedDense if cls is Dense and activation is not None else cls)

    def __init__(self, in_channels, out_channels, weight_init=None, bias_init=None,
                 has_bias=True, activation=None, dtype=np.float32):
        super().__init__()
        if weight_init is None:
            weight_init = np.random.standard_normal((out_channels, in_channels)) / \
                np.sqrt(in_channels)
        self.weight = Parameter(np.asarray(weight_init, dtype=dtype), name="weight")
        self.has_bias = has_bias
        if has_bias:
            bias = np.zeros(out_channels) if bias_init is None else bias_init
            self.bias = Parameter(np.asarray(bias, dtype=dtype), name="bias")
        if isinstance(activation, str):  # a learnable slope takes the layer's dtype
            activation = PReLU(dtype=dtype) if activation.lower() == "prelu" else \
                get_activation(activation)
        elif activation is not None and not callable(activation):
            raise TypeError("Dense's activation must be a name, a Cell or a function, got "
                            f"{type(activation).__name__}")
        self.activation = activation

    def construct(self, x):
        y = x @ self.weight.T
        if self.has_bias:
            y = y + self.bias
        return y


class ActivatedDense(Dense):
    """What ``Dense(..., activation=...)`` makes: the affine map followed by the activation."""

    def construct(self, x):
        y = x @ self.weight.T
        if self.has_bias:
            y = y + self.bias
        return self.activation(y)


# ----- activations: the Cells mindspore.nn.get_activation names ------------------------------


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(0.0, x)


def _relu6(x):
    return np.minimum(np.maximum(x, 0.0), 6.0)


class ReLU(Cell):
    def construct(self, x):
        return np.maximum(x, 0.0)


class ReLU6(Cell):
    def construct(self, x):
        return _relu6(x)


class Tanh(Cell):
    def construct(self, x):
        return np.tanh(x)


class Sigmoid(Cell):
    def construct(self, x):
        return _sigmoid(x)


class GELU(Cell):
    """MindSpore's default is the tanh approximation; the exact form needs erf on arrays, which
    NumPy lacks: ``approximate=False`` is refused."""

    def __init__(self, approximate=True):
        super().__init__()
        if not approximate:
            raise ValueError("GELU(approximate=False) needs an array erf, which NumPy lacks; "
                             "use GELU() (the tanh approximation, MindSpore's default)")

    def construct(self, x):
        return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


class FastGelu(Cell):
    def construct(self, x):
        return x / (1.0 + np.exp(-1.702 * np.abs(x))) * np.exp(0.851 * (x - np.abs(x)))


class ELU(Cell):
    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = float(alpha)

    def construct(self, x):
        return np.where(x > 0, x, self.alpha * np.expm1(np.minimum(x, 0.0)))


class CELU(Cell):
    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = float(alpha)

    def construct(self, x):
        return np.maximum(x, 0.0) + self.alpha * np.expm1(np.minimum(x, 0.0) / self.alpha)


class SeLU(Cell):
    def construct(self, x):
        return 1.0507009873554805 * np.where(
            x > 0, x, 1.6732632423543772 * np.expm1(np.minimum(x, 0.0)))


class Softmax(Cell):
    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        e = np.exp(x - np.max(x, axis=self.axis, keepdims=True))
        return e / np.sum(e, axis=self.axis, keepdims=True)


class Softmin(Softmax):
    def construct(self, x):
        e = np.exp(np.min(x, axis=self.axis, keepdims=True) - x)
        return e / np.sum(e, axis=self.axis, keepdims=True)


class LogSoftmax(Softmax):
    def construct(self, x):
        shifted = x - np.max(x, axis=self.axis, keepdims=True)
        return shifted - np.log(np.sum(np.exp(shifted), axis=self.axis, keepdims=True))


class PReLU(Cell):
    """``max(x, 0) + w * min(x, 0)`` with a learnable slope ``w`` (one, or one per channel of
    axis 1), initialised to 0.25 as in MindSpore."""

    def __init__(self, channel=1, w=0.25, dtype=np.float32):
        super().__init__()
        self.w = Parameter(np.full(channel, w, dtype), name="a")

    def construct(self, x):
        w = self.w if np.ndim(x) < 2 or self.w.size == 1 else \
            np.reshape(self.w, (-1,) + (1,) * (np.ndim(x) - 2))
        return np.maximum(x, 0.0) + w * np.minimum(x, 0.0)


class LeakyReLU(Cell):
    def __init__(self, alpha=0.2):
        super().__init__()
        self.alpha = float(alpha)

    def construct(self, x):
        return np.where(x > 0, x, self.alpha * x)


class HSwish(Cell):
    def construct(self, x):
        return x * _relu6(x + 3.0) / 6.0


class HSigmoid(Cell):
    def construct(self, x):
        return _relu6(x + 3.0) / 6.0


class LogSigmoid(Cell):
    def construct(self, x):
        return -_softplus(-x)


class Softsign(Cell):
    def construct(self, x):
        return x / (1.0 + np.abs(x))


class SiLU(Cell):
    def construct(self, x):
        return x * _sigmoid(x)


class Mish(Cell):
    def construct(self, x):
        return x * np.tanh(_softplus(x))


class Tanhshrink(Cell):
    def construct(self, x):
        return x - np.tanh(x)


class Hardtanh(Cell):
    def __init__(self, min_val=-1.0, max_val=1.0):
        super().__init__()
        self.min_val, self.max_val = float(min_val), float(max_val)

    def construct(self, x):
        return np.clip(x, self.min_val, self.max_val)


class SoftShrink(Cell):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = float(lambd)

    def construct(self, x):
        return np.where(x > self.lambd, x - self.lambd,
                        np.where(x < -self.lambd, x + self.lambd, 0.0 * x))


class HShrink(Cell):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = float(lambd)

    def construct(self, x):
        return np.where(np.abs(x) > self.lambd, x, 0.0 * x)


_ACTIVATIONS = {
    "relu": ReLU, "relu6": ReLU6, "tanh": Tanh, "sigmoid": Sigmoid, "gelu": GELU,
    "fast_gelu": FastGelu, "elu": ELU, "celu": CELU, "selu": SeLU, "softmax": Softmax,
    "softmin": Softmin, "logsoftmax": LogSoftmax, "prelu": PReLU, "leakyrelu": LeakyReLU,
    "hswish": HSwish, "hsigmoid": HSigmoid, "logsigmoid": LogSigmoid, "softsign": Softsign,
    "silu": SiLU, "swish": SiLU, "mish": Mish, "tanhshrink": Tanhshrink, "hardtanh": Hardtanh,
    "softshrink": SoftShrink, "hshrink": HShrink,
}


def get_activation(name, prim_name=None):
    """The activation Cell MindSpore's ``nn.get_activation`` gives for ``name`` (None: None).
    Names mindgrad cannot compute in plain NumPy (``rrelu`` draws at random, ``glu``,
    ``threshold``) and unknown names are a ValueError listing the known ones."""
    if name is None:
        return None
    if not isinstance(name, str):
        raise TypeError(f"an activation name must be a str, got {type(name).__name__}")
    cls = _ACTIVATIONS.get(name.lower())
    if cls is None:
        raise ValueError(f"unknown activation {name!r}; mindgrad knows "
                         f"{', '.join(sorted(_ACTIVATIONS))}, or pass a Cell or a function")
    return cls()


objects.register(module=Cell, module_list=CellList, weight=Parameter)
