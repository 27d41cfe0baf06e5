"""MindSpore's functional operators (``mindspore.ops.exp``, ``ops.sum``, ``ops.split``, ...) on
NumPy; the activations and losses are in ``nn_functional``.

Each is either a NumPy function under MindSpore's name (``exp = np.exp``: its gradient rule is
NumPy's) or a few lines of NumPy that mindgrad differentiates from source, in both directions.
Nothing here knows MindSpore's Tensor: given Tensors, NumPy keeps the subclass in the results;
inside a gradient, where the arguments are plain arrays, they compute at NumPy speed.

Argument names and defaults are MindSpore 2.x's (``mean(input, axis=None, keep_dims=False)``,
``sum(input, dim=None, keepdim=False)``); where mindgrad differs, the docstring says so.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from mindgrad.rules import elementwise, nondifferentiable, slope

builtins_slice = builtins.slice  # ``slice`` below is MindSpore's operator

# ----- elementwise math: NumPy's functions under MindSpore's names ----------------------------

abs = np.abs
absolute = np.absolute
acos = arccos = np.arccos
acosh = arccosh = np.arccosh
asin = arcsin = np.arcsin
asinh = arcsinh = np.arcsinh
atan = arctan = np.arctan
atanh = arctanh = np.arctanh
atan2 = arctan2 = np.arctan2
add = np.add
sub = subtract = np.subtract
mul = multiply = np.multiply
true_divide = np.true_divide
neg = negative = np.negative
positive = np.positive
pow = np.power
exp = np.exp
exp2 = np.exp2
expm1 = np.expm1
log = np.log
log2 = np.log2
log10 = np.log10
log1p = np.log1p
logaddexp = np.logaddexp
logaddexp2 = np.logaddexp2
sqrt = np.sqrt
square = np.square
reciprocal = np.reciprocal
sign = sgn = np.sign
floor = np.floor
ceil = np.ceil
trunc = fix = np.trunc
sin = np.sin
cos = np.cos
tan = np.tan
sinh = np.sinh
cosh = np.cosh
tanh = np.tanh
sinc = np.sinc
deg2rad = np.deg2rad
rad2deg = np.rad2deg
hypot = np.hypot
copysign = np.copysign
heaviside = np.heaviside
remainder = floor_mod = np.remainder
floor_div = floor_divide = np.floor_divide
maximum = np.maximum
minimum = np.minimum
fmax = np.fmax
fmin = np.fmin
conj = np.conj
real = np.real
imag = np.imag
angle = np.angle

# comparisons and logic: their results are constants
equal = eq = np.equal
not_equal = ne = np.not_equal
greater = gt = np.greater
greater_equal = ge = np.greater_equal
less = lt = np.less
less_equal = le = np.less_equal
isclose = np.isclose
isfinite = np.isfinite
isinf = np.isinf
isnan = np.isnan
isneginf = np.isneginf
isposinf = np.isposinf
logical_and = np.logical_and
logical_or = np.logical_or
logical_not = np.logical_not
logical_xor = np.logical_xor
bitwise_and = np.bitwise_and
bitwise_or = np.bitwise_or
bitwise_xor = np.bitwise_xor


def div(input, other, *, rounding_mode=None):
    """``input / other``; ``rounding_mode`` ``"floor"`` or ``"trunc"`` rounds the quotient."""
    if rounding_mode is None:
        return np.true_divide(input, other)
    if rounding_mode == "floor":
        return np.floor_divide(input, other)
    if rounding_mode == "trunc":
        return np.trunc(np.true_divide(input, other))
    raise ValueError(f"div: rounding_mode must be None, 'floor' or 'trunc', got {rounding_mode!r}")


divide = div


def rsqrt(input):
    return 1.0 / np.sqrt(input)


def round(input, *, decimals=0):
    return np.round(input, decimals)


def clamp(input, min=None, max=None):
    """``input`` limited to ``[min, max]``; either bound may be None."""
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    if min is None:
        return np.minimum(input, max)
    if max is None:
        return np.maximum(input, min)
    return np.clip(input, min, max)


clip = clamp


def float_power(input, exponent):
    """``input ** exponent`` computed in float64, as MindSpore does."""
    return np.power(np.asarray(input, np.float64), exponent)


def fmod(input, other):
    """The remainder of ``input / other`` with the sign of ``input``."""
    return input - np.trunc(input / other) * other


def truncate_div(x, y):
    return np.trunc(x / y)


def truncate_mod(x, y):
    return fmod(x, y)


def lerp(input, end, weight):
    """``input + weight * (end - input)``."""
    return input + weight * (end - input)


def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0."""
    return np.where(input == 0, 0.0, input * np.log(np.where(input == 0, 1.0, other)))


def xdivy(x, y):
    """``x / y``, 0 where ``x`` is 0."""
    return np.where(x == 0, 0.0, x / np.where(x == 0, 1.0, y))


def logit(input, eps=None):
    """``log(p / (1 - p))``, with ``p`` clipped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    if eps is not None:
        input = np.clip(input, eps, 1.0 - eps)
    return np.log(input / (1.0 - input))


def addcdiv(input, tensor1, tensor2, value=1):
    return input + value * tensor1 / tensor2


def addcmul(input, tensor1, tensor2, value=1):
    return input + value * tensor1 * tensor2


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    return beta * input + alpha * np.matmul(mat1, mat2)


def baddbmm(input, batch1, batch2, beta=1, alpha=1):
    return beta * input + alpha * np.matmul(batch1, batch2)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    return beta * input + alpha * np.matmul(mat, vec)


def addn(x):
    """The sum of a list or tuple of arrays."""
    total = x[0]
    for item in x[1:]:
        total = total + item
    return total


accumulate_n = addn


def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    """``<x1, x2> / max(|x1| |x2|, eps)`` along ``dim``."""
    dot = np.sum(x1 * x2, axis=dim)
    norms = np.sqrt(np.sum(x1 * x1, axis=dim)) * np.sqrt(np.sum(x2 * x2, axis=dim))
    return dot / np.maximum(norms, eps)


# ----- erf: NumPy has none -------------------------------------------------------------------

_erf_elementwise = np.frompyfunc(math.erf, 1, 1)
_erfc_elementwise = np.frompyfunc(math.erfc, 1, 1)


def _float_result(values, input):
    x = np.asanyarray(input)
    dtype = x.dtype if x.dtype.kind == "f" else np.float32
    return x.__array_wrap__(np.asarray(values.astype(dtype)))


def erf(input):
    """The error function, elementwise (by ``math.erf``, exact in float64)."""
    return _float_result(_erf_elementwise(input), input)


def erfc(input):
    """``1 - erf(input)``, elementwise (by ``math.erfc``)."""
    return _float_result(_erfc_elementwise(input), input)


@elementwise(erf)
def _(out, x):
    slope[x] = 1.1283791670955126 * np.exp(-(x * x))  # 2 / sqrt(pi) * exp(-x^2)


@elementwise(erfc)
def _(out, x):
    slope[x] = -1.1283791670955126 * np.exp(-(x * x))


# ----- reductions ------------------------------------------------------------------------------


def _axis(axis):
    """MindSpore's "all axes": None or ``()``."""
    if axis is None or axis == ():
        return None
    return tuple(axis) if isinstance(axis, list) else axis


def sum(input, dim=None, keepdim=False, *, dtype=None):
    return np.sum(input, axis=_axis(dim), dtype=dtype, keepdims=keepdim)


def mean(input, axis=None, keep_dims=False):
    return np.mean(input, axis=_axis(axis), keepdims=keep_dims)


def prod(input, axis=None, keep_dims=False):
    return np.prod(input, axis=_axis(axis), keepdims=keep_dims)


def amax(input, axis=None, keepdims=False, *, initial=None, where=None):
    if initial is None and where is None:
        return np.max(input, axis=_axis(axis), keepdims=keepdims)
    return np.max(input, axis=_axis(axis), keepdims=keepdims, initial=initial,
                  where=True if where is None else where)


def amin(input, axis=None, keepdims=False, *, initial=None, where=None):
    if initial is None and where is None:
        return np.min(input, axis=_axis(axis), keepdims=keepdims)
    return np.min(input, axis=_axis(axis), keepdims=keepdims, initial=initial,
                  where=True if where is None else where)


def max(input, axis=None, keepdims=False, *, initial=None, where=None):
    """``(values, indices)`` of the maximum along ``axis`` (all axes for None: the index is
    then into the flattened array)."""
    values = amax(input, axis, keepdims, initial=initial, where=where)
    return values, argmax(input, axis, keepdims)


def min(input, axis=None, keepdims=False, *, initial=None, where=None):
    """``(values, indices)`` of the minimum along ``axis``."""
    values = amin(input, axis, keepdims, initial=initial, where=where)
    return values, argmin(input, axis, keepdims)


def argmax(input, dim=None, keepdim=False):
    return np.argmax(input, axis=dim, keepdims=keepdim)


def argmin(input, axis=None, keepdims=False):
    return np.argmin(input, axis=axis, keepdims=keepdims)


def all(input, axis=None, keep_dims=False):
    return np.all(input, axis=_axis(axis), keepdims=keep_dims)


def any(input, axis=None, keep_dims=False):
    return np.any(input, axis=_axis(axis), keepdims=keep_dims)


def cumsum(x, axis, dtype=None):
    return np.cumsum(x, axis=axis, dtype=dtype)


def cumprod(input, dim, dtype=None):
    return np.cumprod(input, axis=dim, dtype=dtype)


def logsumexp(input, axis, keep_dims=False):
    """``log(sum(exp(input)))`` along ``axis``, computed without overflow."""
    top = np.max(input, axis=_axis(axis), keepdims=True)
    shifted = np.log(np.sum(np.exp(input - top), axis=_axis(axis), keepdims=True)) + top
    if keep_dims:
        return shifted
    return np.squeeze(shifted, axis=_axis(axis))


def std(input, axis=None, ddof=0, keepdims=False):
    return np.std(input, axis=_axis(axis), ddof=ddof, keepdims=keepdims)


def var(input, axis=None, ddof=0, keepdims=False):
    return np.var(input, axis=_axis(axis), ddof=ddof, keepdims=keepdims)


def std_mean(input, axis=None, ddof=0, keepdims=False):
    return std(input, axis, ddof, keepdims), mean(input, axis, keepdims)


def var_mean(input, axis=None, ddof=0, keepdims=False):
    return var(input, axis, ddof, keepdims), mean(input, axis, keepdims)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """The vector or matrix norm (``np.linalg.norm``), optionally cast to ``dtype`` first."""
    if dtype is not None:
        A = A.astype(dtype)
    return np.linalg.norm(A, ord=ord, axis=dim, keepdims=keepdim)


def count_nonzero(x, axis=(), keep_dims=False, dtype=np.int32):
    return np.count_nonzero(x, axis=_axis(axis), keepdims=keep_dims).astype(dtype)


# ----- linear algebra -------------------------------------------------------------------------

matmul = np.matmul
mm = np.matmul
bmm = np.matmul
mv = np.matmul
dot = np.dot
inner = np.inner
outer = ger = np.outer
einsum = np.einsum
trace = np.trace
det = matrix_determinant = np.linalg.det
inverse = inv = np.linalg.inv
slogdet = np.linalg.slogdet


def tensor_dot(x1, x2, axes):
    return np.tensordot(x1, x2, axes)


def t(input):
    """The transpose of a matrix (a vector is returned as it is)."""
    if np.ndim(input) < 2:
        return input
    return np.transpose(input)


def adjoint(x):
    """The conjugate transpose of the last two axes."""
    return np.conj(np.swapaxes(x, -1, -2))


def diag(input):
    return np.diag(input)


def diagonal(input, offset=0, dim1=0, dim2=1):
    return np.diagonal(input, offset, dim1, dim2)


def tril(input, diagonal=0):
    return np.tril(input, diagonal)


def triu(input, diagonal=0):
    return np.triu(input, diagonal)


def logdet(input):
    sign, logabs = np.linalg.slogdet(input)
    return np.where(sign > 0, logabs, np.nan)


# ----- shape and indexing ---------------------------------------------------------------------

reshape = np.reshape
transpose = np.transpose
expand_dims = np.expand_dims
unsqueeze = np.expand_dims
squeeze = np.squeeze
broadcast_to = np.broadcast_to
tile = np.tile
flip = np.flip
fliplr = np.fliplr
flipud = np.flipud
roll = np.roll
swapaxes = swapdims = np.swapaxes
moveaxis = movedim = np.moveaxis
ravel = np.ravel
hstack = np.hstack
vstack = np.vstack
column_stack = np.column_stack
meshgrid = np.meshgrid
where = np.where
select = np.where
diff = np.diff
cross = np.cross


def concat(tensors, axis=0):
    return np.concatenate(tensors, axis=axis)


cat = concat


def stack(tensors, axis=0):
    return np.stack(tensors, axis=axis)


def permute(input, axis):
    return np.transpose(input, axis)


def flatten(input, order="C", *, start_dim=1, end_dim=-1):
    """``input`` with the axes ``start_dim`` to ``end_dim`` merged into one."""
    shape = np.shape(input)
    if len(shape) == 0:
        return np.reshape(input, (1,))
    start = start_dim % len(shape)
    end = end_dim % len(shape)
    merged = shape[:start] + (-1,) + shape[end + 1:]
    return np.reshape(input, merged, order=order)


def _split_points(size, split_size_or_sections):
    """Where ``split`` cuts an axis of ``size``: an int is the size of each part (the last may
    be smaller), a list or tuple the sizes of the parts."""
    if isinstance(split_size_or_sections, int):
        return list(range(split_size_or_sections, size, split_size_or_sections))
    points, at = [], 0
    for part in split_size_or_sections[:-1]:
        at += part
        points.append(at)
    return points


def split(tensor, split_size_or_sections, axis=0):
    """Parts of ``tensor`` along ``axis``: of ``split_size_or_sections`` elements each (an int),
    or of the sizes listed."""
    return tuple(np.split(tensor, _split_points(np.shape(tensor)[axis], split_size_or_sections),
                          axis=axis))


def tensor_split(input, indices_or_sections, axis=0):
    return tuple(np.array_split(input, indices_or_sections, axis=axis))


def chunk(input, chunks, axis=0):
    """``chunks`` parts of ``input`` along ``axis``, each of ``ceil(size / chunks)`` elements but
    the last."""
    size = np.shape(input)[axis]
    return split(input, -(-size // chunks), axis)


def unbind(input, dim=0):
    """The slices of ``input`` along ``dim``, as a tuple."""
    return tuple(np.moveaxis(input, dim, 0))


def unstack(input_x, axis=0):
    return unbind(input_x, axis)


def narrow(input, axis, start, length):
    """``length`` elements of ``input`` along ``axis`` from ``start``."""
    return np.take(input, np.arange(start, start + length), axis=axis)


def gather(input_params, input_indices, axis, batch_dims=0):
    """``input_params`` indexed by ``input_indices`` along ``axis`` (``batch_dims`` 0 only)."""
    if batch_dims != 0:
        raise NotImplementedError("gather: mindgrad supports batch_dims=0 only")
    return np.take(input_params, input_indices, axis=axis)


def index_select(input, axis, index):
    return np.take(input, index, axis=axis)


def gather_elements(input, dim, index):
    return np.take_along_axis(input, index, axis=dim)


gather_d = gather_elements


def gather_nd(input_x, indices):
    """``input_x`` at the index tuples on the last axis of ``indices``."""
    return input_x[tuple(np.moveaxis(indices, -1, 0))]


def masked_fill(input_x, mask, value):
    return np.where(mask, value, input_x)


def masked_select(input, mask):
    return input[np.broadcast_to(mask, np.shape(input))]


def repeat_elements(x, rep, axis=0):
    return np.repeat(x, rep, axis=axis)


def repeat_interleave(input, repeats, axis=None):
    return np.repeat(input, repeats, axis=axis)


def rot90(input, k, dims):
    return np.rot90(input, k, dims)


def pad(input_x, padding, mode="constant", value=None):
    """Pad the last axes: ``padding`` is ``(left, right)`` of the last axis, then of the one
    before, ... (MindSpore's and PyTorch's order). Modes ``constant``, ``reflect``, ``replicate``
    (NumPy's ``edge``) and ``circular`` (``wrap``)."""
    ndim = np.ndim(input_x)
    widths = [(0, 0)] * ndim
    for i in range(len(padding) // 2):
        widths[ndim - 1 - i] = (padding[2 * i], padding[2 * i + 1])
    if mode == "constant":
        fill = 0 if value is None else value
        return np.pad(input_x, widths, mode="constant", constant_values=fill)
    numpy_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}.get(mode)
    if numpy_mode is None:
        raise ValueError(f"pad: unknown mode {mode!r}")
    return np.pad(input_x, widths, mode=numpy_mode)


def shape(input_x):
    return np.shape(input_x)


def rank(input_x):
    return np.ndim(input_x)


def numel(input):
    return np.size(input)


size = numel
dyn_shape = shape


def is_floating_point(input):
    return np.issubdtype(np.asarray(input).dtype, np.floating)


def is_complex(input):
    return np.iscomplexobj(input)


def cast(input, dtype):
    return np.asanyarray(input).astype(dtype)


def one_hot(indices, depth, on_value=1, off_value=0, axis=-1):
    """``on_value`` where ``indices`` points, ``off_value`` elsewhere, along a new ``axis``."""
    hot = np.expand_dims(indices, -1) == np.arange(depth)
    if axis != -1:
        hot = np.moveaxis(hot, -1, axis)
    return np.where(hot, on_value, off_value)


def topk(input, k, dim=None, largest=True, sorted=True):
    """``(values, indices)`` of the ``k`` largest (smallest) elements along ``dim`` (the last
    axis for None), largest first."""
    axis = -1 if dim is None else dim
    order = np.argsort(-input if largest else input, axis=axis, kind="stable")
    indices = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(input, indices, axis=axis), indices


def sort(input_x, axis=-1, descending=False):
    """``(values, indices)`` of ``input_x`` sorted along ``axis``."""
    order = np.argsort(-input_x if descending else input_x, axis=axis, kind="stable")
    return np.take_along_axis(input_x, order, axis=axis), order


def argsort(input, axis=-1, descending=False):
    return np.argsort(-input if descending else input, axis=axis, kind="stable")


def nonzero(input, *, as_tuple=False):
    found = np.nonzero(input)
    return found if as_tuple else np.stack(found, axis=-1)


def argwhere(input):
    return np.argwhere(input)


def unique(input):
    """``(unique values, index of each input element in them)``."""
    values, inverse = np.unique(input, return_inverse=True)
    return values, np.reshape(inverse, np.shape(input))


# ----- more math and array operators -----------------------------------------------------------

signbit = np.signbit
invert = np.invert
lcm = np.lcm
gcd = np.gcd
hsplit = np.hsplit
vsplit = np.vsplit
dsplit = np.dsplit
reverse = np.flip


def frac(input):
    """The fractional part, with the sign of ``input``."""
    return input - np.trunc(input)


def isreal(input):
    return np.isreal(input)


def ldexp(x, other):
    """``x * 2 ** other``."""
    return x * np.power(2.0, other)


def approximate_equal(x, y, tolerance=1e-05):
    return np.abs(x - y) < tolerance


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced (by 0 and the dtype's largest and smallest values)."""
    info = np.finfo(np.asarray(input).dtype)
    top = info.max if posinf is None else posinf
    bottom = info.min if neginf is None else neginf
    out = np.where(np.isnan(input), nan, input)
    out = np.where(out == np.inf, top, out)
    return np.where(out == -np.inf, bottom, out)


def trapz(y, x=None, *, dx=None, dim=-1):
    """The trapezoid rule along ``dim``, at sample points ``x`` or with spacing ``dx``."""
    y = np.moveaxis(y, dim, -1)
    mids = (y[..., 1:] + y[..., :-1]) / 2.0
    if x is not None:
        return np.sum(mids * np.diff(np.moveaxis(x, dim, -1), axis=-1), axis=-1)
    return np.sum(mids, axis=-1) * (1.0 if dx is None else dx)


def msort(input):
    return np.sort(input, axis=0)


def median(input, axis=-1, keepdims=False):
    """``(values, indices)`` of the median along ``axis`` (the lower one for an even count)."""
    order = np.argsort(input, axis=axis, kind="stable")
    middle = (np.shape(input)[axis] - 1) // 2
    indices = np.take(order, [middle], axis=axis)
    values = np.take_along_axis(input, indices, axis=axis)
    if keepdims:
        return values, indices
    return np.squeeze(values, axis=axis), np.squeeze(indices, axis=axis)


def kron(input, other):
    """The Kronecker product of two matrices."""
    rows = np.shape(input)[0] * np.shape(other)[0]
    cols = np.shape(input)[1] * np.shape(other)[1]
    return np.reshape(np.einsum("ij,kl->ikjl", input, other), (rows, cols))


def addr(x, vec1, vec2, *, beta=1, alpha=1):
    return beta * x + alpha * np.outer(vec1, vec2)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return beta * input + alpha * np.sum(np.matmul(batch1, batch2), axis=0)


def svd(input, full_matrices=False, compute_uv=True):
    """``(s, u, v)`` with ``input = u @ diag(s) @ v.T`` (MindSpore's order; ``v`` not
    transposed), or ``s`` alone without ``compute_uv``."""
    if not compute_uv:
        return np.linalg.svd(input, full_matrices=full_matrices, compute_uv=False)
    u, s, vh = np.linalg.svd(input, full_matrices=full_matrices)
    return s, u, np.conj(np.swapaxes(vh, -1, -2))


def matrix_solve(matrix, rhs, adjoint=False):
    if adjoint:
        matrix = np.conj(np.swapaxes(matrix, -1, -2))
    return np.linalg.solve(matrix, rhs)


def log_matrix_determinant(input):
    """``(sign, log |det|)``."""
    return np.linalg.slogdet(input)


def block_diag(*inputs):
    """The matrices on the diagonal of a block matrix, zeros elsewhere."""
    rows = [np.atleast_2d(m) for m in inputs]
    total = 0
    for m in rows:
        total += np.shape(m)[1]
    out, at = [], 0
    for m in rows:
        width = np.shape(m)[1]
        out.append(np.pad(m, ((0, 0), (at, total - at - width))))
        at += width
    return np.concatenate(out, axis=0)


def expand(input_x, size):
    return np.broadcast_to(input_x, size)


def slice(input_x, begin, size):
    """``input_x[begin[0]:begin[0] + size[0], ...]``; a size of -1 runs to the end."""
    index = tuple(builtins_slice(b, None if n == -1 else b + n) for b, n in zip(begin, size))
    return input_x[index]


def strided_slice(input_x, begin, end, strides):
    index = tuple(builtins_slice(b, e, s) for b, e, s in zip(begin, end, strides))
    return input_x[index]


def clip_by_value(x, clip_value_min=None, clip_value_max=None):
    """``x`` (or each array of a tuple or list) limited to the bounds."""
    if isinstance(x, (tuple, list)):
        return type(x)(clamp(item, clip_value_min, clip_value_max) for item in x)
    return clamp(x, clip_value_min, clip_value_max)


def clip_by_global_norm(x, clip_norm=1.0, use_norm=None):
    """The arrays ``x`` scaled by ``clip_norm / max(global_norm, clip_norm)``, where the global
    norm is that of all of them together (``use_norm`` if given)."""
    if use_norm is None:
        squares = 0.0
        for item in x:
            squares = squares + np.sum(item * item)
        use_norm = np.sqrt(squares)
    scale = clip_norm / np.maximum(use_norm, clip_norm)
    return tuple(item * scale for item in x)


def is_tensor(obj):
    return isinstance(obj, np.ndarray)


def scalar_to_tensor(input_x, dtype=np.float32):
    return np.asarray(input_x, dtype)


def tuple_to_array(input_x):
    return np.asarray(input_x)


def assign(variable, value):
    """Write ``value`` into the Parameter ``variable`` in place; returns it."""
    variable[...] = value
    return variable


def assign_add(variable, value):
    variable += value
    return variable


def assign_sub(variable, value):
    variable -= value
    return variable


def print_(*input_x):
    print(*input_x)


# ----- differentiation helpers ---------------------------------------------------------------


def depend(value, expr):
    """``value``, once ``expr`` has run (in MindSpore a graph-order hint; here the call order
    already is the order)."""
    return value


# functions of this module whose results are constants (indices, shapes, axes, masks)
nondifferentiable(argmax, argmin, argsort, count_nonzero, one_hot, shape, rank, numel,
                  is_floating_point, is_complex, nonzero, argwhere, unique, _axis, _split_points,
                  approximate_equal, isreal, is_tensor, print_, assign,
                  assign_add, assign_sub)


# what ``from functional import *`` (``mindgrad.ops``) gives: the operators, not the imports
__all__ = sorted(name for name, value in list(globals().items())
                 if not name.startswith("_") and name not in
                 ("annotations", "builtins", "builtins_slice", "math", "np", "elementwise",
                  "nondifferentiable", "slope"))
