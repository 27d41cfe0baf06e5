"""MindSpore's layers on NumPy: ``Dense``, ``Flatten``, ``Dropout``, ``Identity``,
``LayerNorm``, ``Embedding`` and the activation Cells ``nn.get_activation`` names.

Each layer's ``construct`` calls the functional operator of ``functional`` (``ReLU`` is
``relu(x)``), so one piece of NumPy code serves the Cell, ``ops.relu`` and Tensor methods,
and mindgrad differentiates it from its source.
"""

from __future__ import annotations

import numpy as np

from mindgrad.mindspore import functional as F
from mindgrad.mindspore import nn_functional as NF
from mindgrad.mindspore.cell import Cell, Parameter
from mindgrad.mindspore.initializer import initializer


class Dense(Cell):
    """MindSpore's fully connected layer: ``x @ weight.T + bias``, weight of shape (out, in).

    ``weight_init`` and ``bias_init`` take arrays, numbers or initializer names (``"normal"``,
    ``"zeros"``, ``"HeUniform"``, ...: ``initializer``). By default the weight is drawn from
    NumPy's global generator (``np.random.seed`` makes it repeatable) with variance
    ``1 / in_channels``, and the bias is zero (MindSpore draws both from HeUniform).
    """

    def __new__(cls, in_channels=None, out_channels=None, weight_init=None, bias_init=None,
                has_bias=True, activation=None, dtype=np.float32):
        # with an activation, construct ends in a call of it; without, the code has no such call
        return super().__new__(ActivatedDense if cls is Dense and activation is not None else cls)

    def __init__(self, in_channels, out_channels, weight_init=None, bias_init=None,
                 has_bias=True, activation=None, dtype=np.float32):
        super().__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        if weight_init is None:
            weight_init = np.random.standard_normal((out_channels, in_channels)) / \
                np.sqrt(in_channels)
        weight = initializer(weight_init, (out_channels, in_channels), dtype)
        self.weight = Parameter(weight, name="weight")
        self.has_bias = has_bias
        if has_bias:
            bias = initializer("zeros" if bias_init is None else bias_init, (out_channels,),
                               dtype)
            self.bias = Parameter(bias, name="bias")
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

    def extend_repr(self):
        text = (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"has_bias={self.has_bias}")
        if self.activation is not None:
            text += f", activation={self.activation!r}"
        return text


class ActivatedDense(Dense):
    """What ``Dense(..., activation=...)`` makes: the affine map followed by the activation."""

    def construct(self, x):
        y = x @ self.weight.T
        if self.has_bias:
            y = y + self.bias
        return self.activation(y)


# ----- activations: the Cells mindspore.nn.get_activation names ------------------------------


class ReLU(Cell):
    def construct(self, x):
        return NF.relu(x)


class ReLU6(Cell):
    def construct(self, x):
        return NF.relu6(x)


class Tanh(Cell):
    def construct(self, x):
        return F.tanh(x)


class Sigmoid(Cell):
    def construct(self, x):
        return NF.sigmoid(x)


class GELU(Cell):
    """``GELU(approximate=True)``: MindSpore's default is the tanh approximation;
    ``approximate=False`` is the exact ``x * Phi(x)`` (with erf)."""

    def __init__(self, approximate=True):
        super().__init__()
        self.approximate = "tanh" if approximate else "none"

    def construct(self, x):
        return NF.gelu(x, self.approximate)


class FastGelu(Cell):
    def construct(self, x):
        return NF.fast_gelu(x)


class ELU(Cell):
    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = float(alpha)

    def construct(self, x):
        return NF.elu(x, self.alpha)


class CELU(Cell):
    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = float(alpha)

    def construct(self, x):
        return NF.celu(x, self.alpha)


class SeLU(Cell):
    def construct(self, x):
        return NF.selu(x)


class Softmax(Cell):
    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return NF.softmax(x, self.axis)


class Softmin(Softmax):
    def construct(self, x):
        return NF.softmin(x, self.axis)


class LogSoftmax(Softmax):
    def construct(self, x):
        return NF.log_softmax(x, self.axis)


class PReLU(Cell):
    """``max(x, 0) + w * min(x, 0)`` with a learnable slope ``w`` (one, or one per channel of
    axis 1), initialised to 0.25 as in MindSpore."""

    def __init__(self, channel=1, w=0.25, dtype=np.float32):
        super().__init__()
        self.w = Parameter(np.full(channel, w, dtype), name="a")

    def construct(self, x):
        return NF.prelu(x, self.w)


class LeakyReLU(Cell):
    def __init__(self, alpha=0.2):
        super().__init__()
        self.alpha = float(alpha)

    def construct(self, x):
        return NF.leaky_relu(x, self.alpha)


class HSwish(Cell):
    def construct(self, x):
        return NF.hardswish(x)


class HSigmoid(Cell):
    def construct(self, x):
        return NF.hardsigmoid(x)


class LogSigmoid(Cell):
    def construct(self, x):
        return NF.logsigmoid(x)


class Softsign(Cell):
    def construct(self, x):
        return NF.softsign(x)


class SiLU(Cell):
    def construct(self, x):
        return NF.silu(x)


class Mish(Cell):
    def construct(self, x):
        return NF.mish(x)


class Tanhshrink(Cell):
    def construct(self, x):
        return NF.tanhshrink(x)


class Hardtanh(Cell):
    def __init__(self, min_val=-1.0, max_val=1.0):
        super().__init__()
        self.min_val, self.max_val = float(min_val), float(max_val)

    def construct(self, x):
        return NF.hardtanh(x, self.min_val, self.max_val)


class SoftShrink(Cell):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = float(lambd)

    def construct(self, x):
        return NF.softshrink(x, self.lambd)


class HShrink(Cell):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = float(lambd)

    def construct(self, x):
        return NF.hardshrink(x, self.lambd)


class Threshold(Cell):
    def __init__(self, threshold, value):
        super().__init__()
        self.threshold, self.value = threshold, value

    def construct(self, x):
        return NF.threshold(x, self.threshold, self.value)


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



# ----- other layers ---------------------------------------------------------------------------


class Flatten(Cell):
    """``Flatten(start_dim=1, end_dim=-1)``: the axes from ``start_dim`` to ``end_dim`` merged."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, x):
        return F.flatten(x, start_dim=self.start_dim, end_dim=self.end_dim)


class Identity(Cell):
    def construct(self, x):
        return x


class Dropout(Cell):
    """``Dropout(keep_prob=None, p=None)``: in training (``set_train()``), each element is zeroed
    with probability ``p`` (``1 - keep_prob``; 0.5 when neither is given) and the rest scaled by
    ``1 / (1 - p)``; out of training, the identity. The masks come from NumPy's global
    generator (``np.random.seed``), and are constants for the gradient."""

    def __init__(self, keep_prob=None, p=None, dtype=np.float32):
        super().__init__()
        if keep_prob is not None and p is not None:
            raise ValueError("Dropout: give keep_prob or p, not both")
        if p is None:
            p = 0.5 if keep_prob is None else 1.0 - keep_prob
        if not 0.0 <= p < 1.0 and keep_prob is not None:
            raise ValueError(f"Dropout: keep_prob must be in (0, 1], got {keep_prob}")
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1], got {p}")
        self.p = float(p)
        self.keep_prob = 1.0 - self.p

    def construct(self, x):
        return NF.dropout(x, self.p, self.training)

    def extend_repr(self):
        return f"p={self.p}"


class LayerNorm(Cell):
    """``LayerNorm(normalized_shape, begin_norm_axis=-1, begin_params_axis=-1, gamma_init="ones",
    beta_init="zeros", epsilon=1e-7)``: ``(x - mean) / sqrt(var + epsilon) * gamma + beta`` over
    the axes from ``begin_norm_axis`` on."""

    def __init__(self, normalized_shape, begin_norm_axis=-1, begin_params_axis=-1,
                 gamma_init="ones", beta_init="zeros", epsilon=1e-7, dtype=np.float32):
        super().__init__()
        shape = tuple(normalized_shape)
        self.begin_norm_axis = begin_norm_axis
        self.epsilon = epsilon
        self.gamma = Parameter(initializer(gamma_init, shape, dtype), name="gamma")
        self.beta = Parameter(initializer(beta_init, shape, dtype), name="beta")

    def construct(self, x):
        axes = tuple(range(self.begin_norm_axis % np.ndim(x), np.ndim(x)))
        mean = np.mean(x, axis=axes, keepdims=True)
        centred = x - mean
        var = np.mean(centred * centred, axis=axes, keepdims=True)
        return centred / np.sqrt(var + self.epsilon) * self.gamma + self.beta


class Embedding(Cell):
    """``Embedding(vocab_size, embedding_size, use_one_hot=False, embedding_table="normal",
    dtype=int32, padding_idx=None)``: rows of the table at integer indices."""

    def __init__(self, vocab_size, embedding_size, use_one_hot=False, embedding_table="normal",
                 dtype=np.int32, padding_idx=None):
        super().__init__()
        table = initializer(embedding_table, (vocab_size, embedding_size), np.float32)
        if padding_idx is not None:
            table[padding_idx] = 0.0
        self.embedding_table = Parameter(table, name="embedding_table")
        self.padding_idx = padding_idx

    def construct(self, ids):
        return np.take(self.embedding_table, ids, axis=0)
