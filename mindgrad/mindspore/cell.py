"""MindSpore's object model on NumPy: ``Parameter``, ``ParameterTuple``, ``Cell``, ``CellList``
and ``SequentialCell``.

A ``Parameter`` is a NumPy array with a name: it works in every expression (arithmetic on it gives
plain arrays, or Tensors when a Tensor takes part) and an optimizer step updates it in place
(``p -= lr * g`` or ``p.set_data(v)``). A ``Cell`` computes in ``construct``; calling the cell
calls ``construct``. Parameters and sub-cells assigned as attributes are registered in
definition order, and a sub-cell's parameters are named by their attribute path (``inner.k``,
``layers.0.weight``), as MindSpore names them.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from collections import OrderedDict

import numpy as np

from mindgrad.compiler import objects
from mindgrad.mindspore import context
from mindgrad.mindspore.tensor import Tensor, dtype_name

__all__ = ["Cell", "CellList", "Parameter", "ParameterTuple", "SequentialCell"]


class Parameter(np.ndarray):
    """``Parameter(default_input, name=None, requires_grad=True)``: a named array whose gradient
    ``grad(..., weights=...)`` can ask for.

    Floating and complex data keep their dtype. Integer and boolean data keep theirs with
    ``requires_grad=False``; a trainable integer Parameter becomes float32 (mindgrad
    differentiates floats only).
    """

    def __new__(cls, default_input, name=None, requires_grad=True, layerwise_parallel=False,
                parallel_optimizer=True):
        if isinstance(default_input, np.ma.MaskedArray):
            raise TypeError(f"Parameter {name!r}: a masked array would lose its mask; pass "
                            "np.ma.filled(data, value) or a plain array")
        data = np.array(default_input, copy=True)
        if data.dtype.kind not in "fc" and requires_grad:
            data = data.astype(np.float32)
        obj = data.view(cls)
        obj.name = name
        obj.requires_grad = bool(requires_grad)
        obj.layerwise_parallel = layerwise_parallel
        obj.parallel_optimizer = parallel_optimizer
        return obj

    def __array_finalize__(self, obj):
        self.name = getattr(obj, "name", None)
        self.requires_grad = getattr(obj, "requires_grad", True)
        self.layerwise_parallel = getattr(obj, "layerwise_parallel", False)
        self.parallel_optimizer = getattr(obj, "parallel_optimizer", True)

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

    def set_data(self, data, slice_shape=False):
        """Replace the values in place, as an optimizer step does: ``data`` has this
        Parameter's shape (or is one number)."""
        if np.shape(data) != self.shape and np.size(data) != 1 and not slice_shape:
            raise ValueError(f"Parameter {self.name!r}: set_data of shape {np.shape(data)} into "
                             f"shape {self.shape}")
        self[...] = data
        return self

    @property
    def data(self):
        return self

    def value(self):
        """The values, as a Tensor (a view), as MindSpore's ``Parameter.value()``."""
        return self.view(Tensor)

    def init_data(self, layout=None, set_sliced=False):
        return self

    def asnumpy(self) -> np.ndarray:
        return np.array(self.view(np.ndarray))

    def clone(self, init="same"):
        """A new Parameter of the same name, shape, dtype and ``requires_grad``: a copy of the
        values (``init="same"``), or filled with ``init`` (a number, ``"zeros"``, ``"ones"``)."""
        if isinstance(init, str) and init == "same":
            values = self.view(np.ndarray)
        elif isinstance(init, str) and init in ("zeros", "ones"):
            values = (np.zeros if init == "zeros" else np.ones)(self.shape, self.dtype)
        elif np.ndim(init) == 0:
            values = np.full(self.shape, init, self.dtype)
        else:
            values = np.broadcast_to(np.asarray(init, self.dtype), self.shape)
        return Parameter(values, self.name, self.requires_grad, self.layerwise_parallel,
                         self.parallel_optimizer)

    def __reduce__(self):
        return (Parameter, (self.view(np.ndarray).copy(), self.name, self.requires_grad))

    def __repr__(self):
        return (f"Parameter (name={self.name}, shape={self.shape}, "
                f"dtype={dtype_name(self.dtype)}, requires_grad={self.requires_grad})")

    __str__ = __repr__


class ParameterTuple(tuple):
    """A tuple of Parameters, as ``GradOperation(get_by_list=True)`` takes its weights."""

    def __new__(cls, iterable=()):
        items = tuple(iterable)
        for item in items:
            if not isinstance(item, Parameter):
                raise TypeError(f"ParameterTuple holds Parameters only, got {type(item).__name__}")
        return super().__new__(cls, items)

    def clone(self, prefix, init="same"):
        """New Parameters named ``prefix.name``, as optimizers make their moments
        (``params.clone(prefix="moments", init="zeros")``)."""
        clones = []
        for param in self:
            clone = param.clone(init)
            clone.name = f"{prefix}.{param.name}"
            clones.append(clone)
        return ParameterTuple(clones)


class Cell:
    """The base class of networks: subclasses define ``construct(self, *inputs)``.

    A subclass may also define ``bprop(self, *inputs, out, dout)`` returning one gradient per
    input; mindgrad then uses it instead of differentiating ``construct``. ``training`` is
    False until ``set_train()``.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        bprop = cls.__dict__.get("bprop")
        if callable(bprop) and not getattr(bprop, "_checked", False):
            cls.bprop = _checked_bprop(bprop)

    def __init__(self, auto_prefix=True, flags=None):
        object.__setattr__(self, "_params", OrderedDict())
        object.__setattr__(self, "_cells", OrderedDict())
        object.__setattr__(self, "training", False)
        object.__setattr__(self, "_auto_prefix", auto_prefix)
        object.__setattr__(self, "_flags", dict(flags or {}))

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
            if self._auto_prefix:
                # a sub-cell's parameters are named by their attribute path; one this cell
                # already reaches through another path keeps its name
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

    def construct(self, *inputs, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define construct(self, ...)")

    def __call__(self, *inputs, **kwargs):
        return self.construct(*inputs, **kwargs)

    # ----- children ----------------------------------------------------------------------------

    def insert_child_to_cell(self, child_name, child_cell):
        """Add ``child_cell`` as the sub-cell ``child_name`` (as an attribute assignment does)."""
        if not isinstance(child_name, str) or not child_name or "." in child_name:
            raise KeyError(f"a child cell's name must be a non-empty str without '.', got "
                           f"{child_name!r}")
        if hasattr(self, child_name) and child_name not in self._cells:
            raise KeyError(f"{type(self).__name__} already has an attribute {child_name!r}")
        if not isinstance(child_cell, Cell) and child_cell is not None:
            raise TypeError(f"a child cell must be a Cell, got {type(child_cell).__name__}")
        setattr(self, child_name, child_cell)

    def insert_param_to_cell(self, param_name, param, check_name_contain_dot=True):
        """Add ``param`` as the Parameter ``param_name``."""
        if not isinstance(param_name, str) or not param_name or \
                (check_name_contain_dot and "." in param_name):
            raise KeyError(f"a parameter's name must be a non-empty str without '.', got "
                           f"{param_name!r}")
        if not isinstance(param, Parameter):
            raise TypeError(f"insert_param_to_cell takes a Parameter, got {type(param).__name__}")
        setattr(self, param_name, param)

    def cells(self):
        """The direct sub-cells."""
        return iter(list(self._cells.values()))

    def name_cells(self):
        """The direct sub-cells by name (an OrderedDict)."""
        return OrderedDict(self._cells)

    def cells_and_names(self, cells=None, name_prefix=""):
        """``(name, cell)`` for this cell and every sub-cell below it, each cell once."""
        seen = set() if cells is None else cells
        if id(self) not in seen:
            seen.add(id(self))
            yield name_prefix, self
        for name, cell in self._cells.items():
            if cell is not None:
                yield from cell.cells_and_names(seen, f"{name_prefix}.{name}" if name_prefix
                                                else name)

    def apply(self, fn):
        """Call ``fn(cell)`` on every sub-cell, then on this cell."""
        for cell in self._cells.values():
            cell.apply(fn)
        fn(self)
        return self

    # ----- parameters -------------------------------------------------------------------------

    def parameters_and_names(self, name_prefix="", expand=True):
        """(name, Parameter) pairs: the cell's own first, then each sub-cell's, recursively."""
        seen = set()
        cells = [self] if not expand else [cell for _, cell in self.cells_and_names()]
        for cell in cells:
            for param in cell._params.values():
                if id(param) not in seen:
                    seen.add(id(param))
                    yield (f"{name_prefix}.{param.name}" if name_prefix else param.name), param

    def get_parameters(self, expand=True):
        for _, param in self.parameters_and_names(expand=expand):
            yield param

    def parameters_dict(self, recurse=True):
        """An OrderedDict of name -> Parameter."""
        return OrderedDict((p.name, p) for p in self.get_parameters(expand=recurse))

    def init_parameters_data(self, auto_parallel_mode=False):
        """``{Parameter: Parameter}``, each Parameter to itself: their data is made when they
        are (MindSpore replaces lazily initialized Parameters here)."""
        return {param: param for param in self.get_parameters()}

    def trainable_params(self, recurse=True):
        """The parameters with ``requires_grad=True``, in MindSpore's order."""
        return [p for p in self.get_parameters(expand=recurse) if p.requires_grad]

    def untrainable_params(self, recurse=True):
        return [p for p in self.get_parameters(expand=recurse) if not p.requires_grad]

    def update_parameters_name(self, prefix="", recurse=True):
        """Put ``prefix`` in front of every parameter's name."""
        for param in self.get_parameters(expand=recurse):
            param.name = prefix + param.name

    def check_names(self):
        names = [p.name for p in self.get_parameters()]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate parameter names: {duplicates}")

    # ----- modes and flags --------------------------------------------------------------------

    def set_train(self, mode=True):
        """Training mode (``Dropout`` drops) for this cell and every sub-cell."""
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "training", mode)
        return self

    def set_grad(self, requires_grad=True):
        object.__setattr__(self, "requires_grad", requires_grad)
        return self

    def add_flags(self, **flags):
        self._flags.update(flags)
        return self

    def add_flags_recursive(self, **flags):
        for _, cell in self.cells_and_names():
            cell.add_flags(**flags)
        return self

    def get_flags(self):
        return self._flags

    # accepted for MindSpore programs; one mode of execution here, so nothing to configure:
    # to_float (mixed precision) is recorded, and the computation keeps the dtypes it is given
    def to_float(self, dst_type):
        object.__setattr__(self, "_float_dtype", dst_type)
        return self

    def set_jit_config(self, jit_config):
        return self

    def recompute(self, **kwargs):
        return self

    def set_boost(self, boost_type):
        return self

    def set_inputs(self, *inputs):
        object.__setattr__(self, "_inputs", inputs)
        return self

    def get_inputs(self):
        return getattr(self, "_inputs", None)

    def compile(self, *inputs):
        """Nothing to compile ahead: mindgrad builds a gradient when it is first needed."""

    def compile_and_run(self, *inputs):
        return self(*inputs)

    def run_construct(self, cast_inputs, kwargs):
        return self.construct(*cast_inputs, **kwargs)

    def cast_inputs(self, inputs, dst_type):
        """The floating arrays of ``inputs`` cast to ``dst_type``, the rest as they are."""
        return tuple(np.asanyarray(x).astype(dst_type) if np.asanyarray(x).dtype.kind == "f"
                     else x for x in inputs)

    def cast_param(self, param):
        return param

    def extend_repr(self):
        return ""

    def __repr__(self):
        extra = self.extend_repr()
        if not self._cells:
            return f"{type(self).__name__}<{extra}>"
        lines = [f"{type(self).__name__}<{extra}"]
        for name, cell in self._cells.items():
            inner = repr(cell).replace("\n", "\n  ")
            lines.append(f"  ({name}): {inner}")
        return "\n".join(lines) + "\n  >"


class BpropResultError(ValueError, TypeError):
    """A custom ``bprop`` returned a wrong number of gradients: MindSpore raises a ValueError
    in GRAPH mode and a TypeError in PYNATIVE mode; this is both."""


def _checked_bprop(bprop):
    """``bprop`` checked as MindSpore checks it: one gradient per input (always); with
    ``set_context(check_bprop=True)`` a Tensor for each Tensor input, of its shape and dtype;
    in GRAPH mode, no Parameter read (MindSpore's graph compiler refuses it)."""

    @functools.wraps(bprop)
    def checked(self, *args):
        inputs, name = args[:-2], type(self).__name__
        if context.get_context("mode") == context.GRAPH_MODE and \
                _bprop_reads_parameter(self, bprop):
            raise RuntimeError(f"The user defined 'bprop' function of {name} does not support "
                               "using Parameter (in GRAPH_MODE); pass the value in as an "
                               "input, or use PYNATIVE_MODE")
        grads = bprop(self, *args)
        found = grads if isinstance(grads, (tuple, list)) else (grads,)
        if len(found) != len(inputs):
            raise BpropResultError(
                f"For user defined method 'bprop' of net '{name}', the number of return "
                f"values (gradients) should be equal to the number of input arguments except "
                f"'out' and 'dout', which is: {len(inputs)}, but got: {len(found)}.")
        if context._context.get("check_bprop"):
            for i, (g, x) in enumerate(zip(found, inputs)):
                _check_bprop_result(name, i, g, x)
        return grads

    checked._checked = True
    return checked


def _check_bprop_result(name, i, g, x):
    where = f"For user defined method 'bprop' of net '{name}', the {i}th return value " \
            f"(gradient of the {i}th argument)"
    if not isinstance(x, np.ndarray):
        return
    if not isinstance(g, np.ndarray):
        raise TypeError(f"{where} should be Tensor, but got {type(g).__name__}")
    if g.shape != x.shape:
        raise ValueError(f"{where} should have the same shape as the {i}th argument, which "
                         f"is: {list(x.shape)}, but got: {list(g.shape)}.")
    if g.dtype != x.dtype:
        raise TypeError(f"{where} should have the same dtype as the {i}th argument, which "
                        f"is: {dtype_name(x.dtype)}, but got: {dtype_name(g.dtype)}.")


def _bprop_reads_parameter(cell, bprop) -> bool:
    """Whether ``bprop``'s source reads ``self.<name>`` where that is a Parameter."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(bprop)))
    except (OSError, TypeError, SyntaxError):
        return False
    self_name = next(iter(inspect.signature(bprop).parameters), "self")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id == self_name and \
                isinstance(cell.__dict__.get("_params", {}).get(node.attr), Parameter):
            return True
    return False


class CellList(Cell):
    """A list of Cells, registered as sub-cells ``0``, ``1``, ...; a loop over it in
    ``construct`` is unrolled, so each call is differentiated through its own Cell."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        cells = args[0] if len(args) == 1 else args
        for cell in cells:
            self.append(cell)

    def append(self, cell):
        if not isinstance(cell, Cell):
            raise TypeError(f"{type(self).__name__} holds Cells, got {type(cell).__name__}")
        setattr(self, str(len(self._cells)), cell)
        return self

    def extend(self, cells):
        for cell in cells:
            self.append(cell)
        return self

    def insert(self, index, cell):
        cells = list(self._cells.values())
        cells.insert(index, cell)
        self._reset(cells)

    def _reset(self, cells):
        for name in list(self._cells):
            object.__delattr__(self, name)
        self._cells.clear()
        for cell in cells:
            self.append(cell)

    def __getitem__(self, index):
        return list(self._cells.values())[index]

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(list(self._cells.values()))


class SequentialCell(CellList):
    """Cells applied one after another: ``SequentialCell([a, b])(x)`` is ``b(a(x))``. Its
    cells are its sub-cells ``0``, ``1``, ... (parameters ``0.weight``, as in MindSpore); a
    dict (OrderedDict) names them."""

    def __init__(self, *args):
        Cell.__init__(self)
        cells = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple, dict)) else args
        if isinstance(cells, dict):
            for name, cell in cells.items():
                self.insert_child_to_cell(name, cell)
        else:
            for cell in cells:
                self.append(cell)

    def construct(self, input_data):
        for cell in self:
            input_data = cell(input_data)
        return input_data


objects.register(module=Cell, module_list=CellList, weight=Parameter)
