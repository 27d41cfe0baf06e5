"""The checks of the gradient API's arguments, and the array types it takes as ndarrays.

``positions_of`` and ``weights_of`` read ``grad_position`` and ``weights`` as API-SEMANTICS.md
gives them; ``check_argument_types`` refuses an array of another library (a tensor of PyTorch
or JAX) where mindgrad would compute with it as NumPy; ``register_array_type`` declares an
ndarray subclass that computes as ndarray (MindSpore's Tensor), and ``as_plain``/``as_type``
take such arguments in as ndarrays and give the results back in their type.
"""

from __future__ import annotations

import numbers

import numpy as np

from mindgrad.compiler import objects
from mindgrad.runtime import arrays, trees


def positions_of(grad_position, weights):
    if grad_position is None:
        if weights is None:
            raise ValueError("`grad_position` and `weights` can not be None at the same time")
        return ()
    if isinstance(grad_position, bool) or not isinstance(grad_position, (int, tuple)):
        raise TypeError("`grad_position` must be an int or a tuple of ints, "
                        f"got {type(grad_position).__name__}: {grad_position!r}")
    if isinstance(grad_position, int):
        positions = (grad_position,)
    else:
        if len(grad_position) == 0:
            raise ValueError("`grad_position` should not be empty")
        positions = tuple(grad_position)
    for p in positions:
        if isinstance(p, bool) or not isinstance(p, int):
            raise TypeError(f"every element of `grad_position` must be an int, got "
                            f"{type(p).__name__}: {p!r}")
        if p < 0:
            raise ValueError(f"`grad_position` must be >= 0, got {p}")
    if len(set(positions)) != len(positions):
        raise ValueError(f"`grad_position` has duplicate positions: {grad_position!r}")
    return positions



def python_int(value) -> bool:
    """Whether ``value`` is a Python int or bool (NumPy's integers are not)."""
    return isinstance(value, int) and not isinstance(value, np.integer)



def check_bool(name, value):
    if not isinstance(value, bool):
        raise TypeError(f"`{name}` must be a bool, got {type(value).__name__}: {value!r}")



def check_differentiable(position, value):
    for leaf in trees.iter_leaves(value):
        if isinstance(leaf, (bool, np.bool_)) or (
                isinstance(leaf, numbers.Integral) and not isinstance(leaf, np.ndarray)):
            raise TypeError(f"cannot differentiate with respect to input {position}: it is "
                            f"{type(leaf).__name__} {leaf!r}; pass a float (e.g. {float(leaf)!r})")
        if arrays.is_array(leaf) and leaf.dtype.kind not in "fc":
            raise TypeError(f"cannot differentiate with respect to input {position}: it is an "
                            f"array of dtype {leaf.dtype}; convert it with .astype(float)")



# Where an ndarray subclass may change what NumPy code means (np.matrix makes * a matrix
# product, a masked array skips masked entries): a subclass overriding none of these computes
# exactly as ndarray does.
_ARRAY_SEMANTICS = ("__array_ufunc__", "__array_function__", "__array_wrap__",
                    "__array_finalize__", "__array_priority__", "__getitem__", "__setitem__",
                    "__add__", "__sub__", "__mul__", "__rmul__", "__truediv__", "__pow__",
                    "__matmul__", "__iadd__", "__imul__", "__eq__", "__lt__", "__gt__",
                    "sum", "mean", "reshape", "ravel", "dot", "astype")
# the protocols by which an object outside NumPy offers to be read as an array
_ARRAY_PROTOCOLS = ("__array__", "__array_interface__", "__array_struct__",
                    "__array_function__", "__array_ufunc__", "__cuda_array_interface__",
                    "__dlpack__")
_PLAIN = (float, int, bool, complex, str, bytes, type(None))



def _computes_like_ndarray(cls) -> bool:
    if objects.is_weight_class(cls):
        return True  # results of computing with it are plain arrays (Parameter.__array_wrap__)
    if issubclass(cls, REGISTERED.all):
        return True  # declared so by the layer that defines it (register_array_type)
    return all(getattr(cls, name, None) is getattr(np.ndarray, name) for name in _ARRAY_SEMANTICS)



def _foreign_array(value) -> bool:
    """Whether ``value`` is array-like but does not compute as a NumPy array does (a Dask or
    CuPy array computes through NumPy's dispatch, which the generated code follows)."""
    cls = value.__class__
    if cls is np.ndarray or cls in _PLAIN or isinstance(value, np.generic):
        return False
    if arrays.library(cls) is not None:
        return False
    if isinstance(value, np.ndarray):
        return not _computes_like_ndarray(cls)
    return any(hasattr(cls, name) for name in _ARRAY_PROTOCOLS)



def _labelled_leaves(value, label):
    if isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            yield from _labelled_leaves(v, f"{label}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _labelled_leaves(v, f"{label}[{k!r}]")
    else:
        yield value, label



def check_array_types(values, labels):
    """Raise a TypeError naming the first value (or element of a tuple, list or dict) that is
    array-like but not a NumPy array or one of the ndarray subclasses that compute exactly like
    it (a JAX, PyTorch, CuPy or Dask array, pandas data, np.matrix, a masked array): the
    generated code would compute with its own semantics and give wrong numbers or zeros. A
    Dask or CuPy array is taken (``runtime.arrays``), unless its shape is unknown (a Dask array
    whose chunk sizes are not computed yet)."""
    for value, label in zip(values, labels):
        for leaf, where in _labelled_leaves(value, label):
            if arrays.is_dispatching(leaf) and any(n != n for n in leaf.shape):
                raise ValueError(
                    f"{where} is a {arrays.described(leaf)} of unknown shape {leaf.shape}: "
                    "mindgrad builds a gradient for known shapes; compute its chunk sizes "
                    "first (x.compute_chunk_sizes())")
            if _foreign_array(leaf):
                cls = type(leaf)
                raise TypeError(
                    f"{where} is a {cls.__module__}.{cls.__qualname__}: mindgrad differentiates "
                    "NumPy arrays, Python numbers, and the Dask and CuPy arrays that compute "
                    "through NumPy's dispatch; this type computes by rules of its own: "
                    "convert it with np.asarray(...) first")



def check_argument_types(args, kwargs=None):
    """``check_array_types`` for a call's positional (``input i``) and keyword arguments."""
    check_array_types(args, [f"input {i}" for i in range(len(args))])
    if kwargs:
        check_array_types(kwargs.values(), [f"keyword argument {k!r}" for k in kwargs])




class ArrayTypes:
    """The ndarray subclasses that a layer above defines (MindSpore's Tensor) and declares to
    compute exactly as ndarray does (``register_array_type``): gradients see their instances
    as plain arrays, so the generated code runs at NumPy speed, and give the arrays they
    return in that type again."""

    def __init__(self):
        self.all: tuple = ()
        # those of them whose calls follow MindSpore's rules for Tensors
        self.tensor: tuple = ()
        # under Tensor rules, which other arguments are differentiated (MindSpore's mutable
        # containers): predicates of a value
        self.keep: list = []


REGISTERED = ArrayTypes()



def register_array_type(cls, tensor_rules=False, keep_argument=None) -> None:
    """Declare ``cls``, an ndarray subclass, as computing exactly like ndarray. ``grad`` and
    ``value_and_grad`` take its instances as plain arrays; when an argument (or an element of a
    tuple, list or dict argument) is one, every array in the result (the value, the gradients
    and the aux outputs) comes back as ``cls``, as a view.

    With ``tensor_rules`` (MindSpore's Tensor), a call with an instance among its arguments
    follows MindSpore's rules: only the instances at the requested positions are
    differentiated (the gradients of the others are left out of the result), an integer
    instance gets the gradient cast to its dtype, and a call with weights and no array
    argument at all gives its results as ``cls`` too; ``keep_argument(value)`` says which
    other arguments are differentiated (a tuple that MindSpore's ``mutable`` marked)."""
    if not (isinstance(cls, type) and issubclass(cls, np.ndarray)):
        raise TypeError(f"register_array_type takes an ndarray subclass, got {cls!r}")
    if cls not in REGISTERED.all:
        REGISTERED.all += (cls,)
    if tensor_rules and cls not in REGISTERED.tensor:
        REGISTERED.tensor += (cls,)
    if keep_argument is not None and keep_argument not in REGISTERED.keep:
        REGISTERED.keep.append(keep_argument)



def array_type_in(values):
    """The registered array type of the first value (or element) that is one, or None."""
    for value in values:
        cls = value.__class__
        if cls in _PLAIN:  # the common arguments, without a walk of their leaves
            continue
        if cls is tuple or cls is list:
            found = array_type_in(value)
        elif cls is dict:
            found = array_type_in(value.values())
        else:
            found = next((type(leaf) for leaf in trees.iter_leaves(value)
                          if isinstance(leaf, REGISTERED.all) and not objects.is_weight(leaf)),
                         None)
        if found is not None:
            return found
    return None


# classes that are no registered array type and hold no value of one
_PLAIN = frozenset({np.ndarray, float, int, bool, complex, type(None), str, np.float64,
                    np.float32, np.int64, np.complex128})



def result_type(args, kwargs, sens, weights):
    """The array type results come back in: that of an argument (``register_array_type``),
    or, for a call with weights and no array argument, the first type with Tensor rules."""
    if not REGISTERED.all:
        return None
    if not kwargs and sens.__class__ in _PLAIN and _PLAIN.issuperset(map(type, args)):
        found = None  # the common call, without a walk
    else:
        found = array_type_in((args, kwargs, sens))
    if found is None and weights and REGISTERED.tensor and not any(
            isinstance(leaf, np.ndarray) for leaf in trees.iter_leaves((args, kwargs))):
        return REGISTERED.tensor[0]
    return found



def as_plain(value):
    """``value`` with every instance of a registered array type viewed as a plain ndarray."""
    if isinstance(value, REGISTERED.all) and not objects.is_weight(value):
        return value.view(np.ndarray)
    return _map_container(value, as_plain)



def as_type(value, cls):
    """``value`` with every plain array and NumPy number viewed as ``cls``."""
    if value.__class__ is np.ndarray or isinstance(value, np.generic):
        return np.asarray(value).view(cls)
    return _map_container(value, lambda v: as_type(v, cls))



def _map_container(value, fn):
    """``fn`` applied to each element of a tuple, list or dict (its type kept); else ``value``."""
    if value.__class__ in (tuple, list):
        return value.__class__(fn(v) for v in value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
        return value._make(fn(v) for v in value)
    if value.__class__ is dict:
        return {k: fn(v) for k, v in value.items()}
    return value



def weights_of(weights):
    """(list of Parameters, whether the result is bare): a single Parameter gives a bare
    gradient; a list or tuple (ParameterTuple included) always a tuple."""
    if weights is None:
        return [], False
    if objects.is_weight(weights):
        return [weights], True
    if isinstance(weights, (list, tuple)):
        for i, w in enumerate(weights):
            if not objects.is_weight(w):
                raise TypeError(f"`weights` must hold Parameters, but element {i} is a "
                                f"{type(w).__name__}")
        return list(weights), False
    raise TypeError("`weights` must be a Parameter, a list or tuple of Parameters, or None, "
                    f"got {type(weights).__name__}")
