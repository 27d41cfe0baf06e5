"""Stage 4, activity: which local names carry a derivative of the differentiated inputs.

Output guarantee: ``active_names`` returns every name whose value may depend, through a
differentiable operation, on an active parameter (a flow-insensitive fixed point, so a name is
active if any of its assignments is). Comparisons, ``not``, shape queries and functions declared
non-differentiable cut the dependence.
"""

from __future__ import annotations

import gast

from mindgrad import rules, runtime
from mindgrad.compiler import astutil as A
from mindgrad.runtime.origin import Origin, origin, within

# integer and boolean operators: constants (``x // y`` is piecewise constant); ``|`` is not
# among them, it merges dicts, which may hold gradients
CONSTANT_BINOPS = (gast.FloorDiv, gast.BitAnd, gast.BitXor, gast.LShift, gast.RShift)
NONDIFF_ATTRS = frozenset({"shape", "ndim", "dtype", "size", "itemsize", "nbytes", "strides",
                           "flags", "__class__"})
NONDIFF_METHODS = frozenset({"argmax", "argmin", "argsort", "nonzero", "any", "all",
                             "keys", "index", "count", "__len__", "isdigit", "startswith",
                             "endswith", "format", "lower", "upper"})


def value_is_active(value, active, resolve) -> bool:
    """Whether the single operation ``value`` (normalized) gives an active result."""
    if isinstance(value, gast.Name):
        return value.id in active
    if isinstance(value, gast.Attribute) and resolve.key(value) in active:
        return True  # a weight read through a static chain, e.g. self.w
    if isinstance(value, (gast.Constant, gast.Compare, gast.JoinedStr)):
        return False
    if isinstance(value, gast.UnaryOp):
        return not isinstance(value.op, (gast.Not, gast.Invert)) and \
            value_is_active(value.operand, active, resolve)
    if isinstance(value, gast.BinOp):
        if isinstance(value.op, CONSTANT_BINOPS):
            return False
        return value_is_active(value.left, active, resolve) or \
            value_is_active(value.right, active, resolve)
    if isinstance(value, gast.Attribute):
        if value.attr in NONDIFF_ATTRS:
            return False
        return value_is_active(value.value, active, resolve)
    if isinstance(value, gast.Subscript):
        return value_is_active(value.value, active, resolve)
    if isinstance(value, (gast.Tuple, gast.List)):
        return any(value_is_active(e, active, resolve) for e in value.elts)
    if isinstance(value, gast.Dict):
        return any(value_is_active(v, active, resolve) for v in value.values)
    if isinstance(value, gast.Call):
        operands = list(value.args) + [k.value for k in value.keywords]
        func = value.func
        receiver = resolve.receiver(func)
        if receiver is not None:
            if func.attr in NONDIFF_METHODS and resolve.known_value(receiver):
                return False
            operands.append(receiver)
        else:
            target = resolve(func)
            if target is not None and rules.is_nondifferentiable(target):
                return False
            if target is runtime.seed:  # seed(out, sens): out gives only the form of sens
                operands = list(value.args[1:]) + [k.value for k in value.keywords
                                                   if k.arg == "sens"]
            if resolve.reads_weights(func):
                return True
        return any(value_is_active(o, active, resolve) for o in operands)
    if isinstance(value, (gast.Slice, gast.JoinedStr)):
        return False
    # an operation this analysis does not know must never be taken as constant silently
    raise TypeError(f"mindgrad cannot tell whether a {type(value).__name__} carries a gradient")


def active_names(fdef, active_params, resolve) -> set:
    """The fixed point of activity over the normalized function ``fdef``."""
    flows = []  # (name that becomes active, value whose activity decides it)
    for node in A.walk(fdef):
        if isinstance(node, gast.Assign):
            target = node.targets[0]
            if isinstance(target, gast.Name):
                flows.append((target.id, node.value))
            elif isinstance(target, gast.Subscript):
                flows.append((target.value.id, node.value))
        elif isinstance(node, gast.For) and not isinstance(node.iter, gast.Call):
            flows.append((node.target.id, node.iter))
        elif isinstance(node, gast.Call):
            # an active value passed to a callee may reach the weights it reads: nothing
            # to record here; callees are differentiated by their own activity analysis
            pass
        elif isinstance(node, gast.Expr) and isinstance(node.value, gast.Call):
            func = node.value.func
            if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
                    and func.attr in ("append", "extend", "insert"):
                for arg in node.value.args:
                    flows.append((func.value.id, arg))
    active = set(active_params)
    changed = True
    while changed:
        changed = False
        for name, value in flows:
            if name not in active and value_is_active(value, active, resolve):
                active.add(name)
                changed = True
    return active


def defined_names(fdef) -> dict:
    """How many statements define each name (parameters count as one definition)."""
    counts = {a.id: 1 for a in fdef.args.args + fdef.args.kwonlyargs}
    for node in A.walk(fdef):
        targets = []
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            targets = [node.targets[0].id]
        elif isinstance(node, gast.For):
            targets = [node.target.id]
        for t in targets:
            counts[t] = counts.get(t, 0) + 1
    return counts


def indexed_names(fdef) -> set:
    """Names subscripted, index-assigned or appended to: their gradients are owned buffers."""
    found = set()
    for node in A.walk(fdef):
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name):
            found.add(node.value.id)
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and isinstance(node.func.value, gast.Name) and node.func.attr == "append":
            found.add(node.func.value.id)
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name) \
                and isinstance(node.value, (gast.Tuple, gast.List, gast.Dict)):
            found.add(node.targets[0].id)
        if isinstance(node, gast.For) and isinstance(node.iter, gast.Name):
            found.add(node.iter.id)
    return found




_SCALAR_TYPES = (float, int, complex, bool)


def is_scalar_kind(kind) -> bool:
    """Whether an argument kind (from ``cache.kind``) is a scalar: a number or a 0-d array."""
    import numpy as np

    if isinstance(kind, tuple):
        return kind[0] is np.ndarray and kind[2] == 0
    return isinstance(kind, type) and (issubclass(kind, _SCALAR_TYPES) or
                                       issubclass(kind, np.number))


# what lets an object compute as a number, an array or a container, or be called
_VALUE_PROTOCOLS = ("__add__", "__radd__", "__sub__", "__mul__", "__rmul__", "__truediv__",
                    "__matmul__", "__pow__", "__neg__", "__float__", "__complex__", "__int__",
                    "__index__", "__array__", "__array_interface__", "__array_ufunc__",
                    "__array_function__", "__len__", "__iter__", "__getitem__", "__call__")


def is_opaque_kind(kind) -> bool:
    """Whether an argument kind (from ``cache.kind``) is an object that holds nothing to
    differentiate: not a number, an array or a container, and with no operator, conversion
    or call by which its value could enter the computation (a ``Box`` of settings). Its
    gradient is zero, as for an input the function does not use; what the code reads from
    it (``c.value``) is a constant."""
    import numbers

    import numpy as np

    return isinstance(kind, type) and not issubclass(kind, (numbers.Number, np.generic,
                                                            np.ndarray)) and \
        not any(name in vars(cls) for cls in kind.__mro__ for name in _VALUE_PROTOCOLS)


def _assigned_values(fdef, resolve):
    """(parameter names, name -> the values assigned to it); a ``for`` target gets 0 for a
    ``range`` loop and None (anything) for other loops."""
    params = [a.id for a in fdef.args.args + fdef.args.kwonlyargs]
    defs = {}
    for node in A.walk(fdef):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            defs.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, gast.For) and isinstance(node.target, gast.Name):
            is_range = isinstance(node.iter, gast.Call) and resolve(node.iter.func) is range
            defs.setdefault(node.target.id, []).append(
                gast.Constant(value=0, kind=None) if is_range else None)
        elif isinstance(node, gast.For):  # unpacked items: anything
            for name in A.names_in(node.target, gast.Store):
                defs.setdefault(name, []).append(None)
    return params, defs


def scalar_names(fdef, scalar_params, resolve, array_ndims=None, number_call=None) -> set:
    """Names that hold a scalar (Python or NumPy number) at every assignment.

    The greatest fixed point: start from every name, drop those with an assignment that may
    give an array, until nothing changes. Arithmetic on scalars, ``math`` functions, and NumPy
    ufuncs of scalars give scalars; ``range`` loop indices are scalars. ``number_call(fn, call,
    is_scalar)`` may say of other calls that they give a number.
    """
    import math

    import numpy as np

    params, defs = _assigned_values(fdef, resolve)
    scalar = set(defs) | set(scalar_params)
    scalar -= {p for p in params if p not in scalar_params}

    def is_scalar(value):
        if isinstance(value, gast.Constant):
            return isinstance(value.value, _SCALAR_TYPES)
        if isinstance(value, gast.Name):
            return value.id in scalar
        if isinstance(value, gast.BinOp):
            return is_scalar(value.left) and is_scalar(value.right)
        if isinstance(value, gast.UnaryOp):
            return is_scalar(value.operand)
        if isinstance(value, gast.Call):
            fn = resolve(value.func)
            args = list(value.args)
            if origin(fn) is Origin.MATH or fn in (math.sqrt, math.exp):
                return True
            if fn in (float, abs, min, max) or isinstance(fn, np.ufunc):
                return bool(args) and all(is_scalar(a) for a in args) and not value.keywords
            return number_call is not None and number_call(fn, value, is_scalar)
        return False

    array_ndims = {p: n for p, n in (array_ndims or {}).items() if p not in defs}

    def scalar_index(value):
        """``x[i]``/``x[i, j]`` indexing every axis of an argument array with scalars."""
        if not (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name)):
            return False
        ndim = array_ndims.get(value.value.id)
        parts = value.slice.elts if isinstance(value.slice, gast.Tuple) else [value.slice]
        return ndim == len(parts) and all(
            (isinstance(p, gast.Constant) and isinstance(p.value, int)) or
            (isinstance(p, gast.Name) and p.id in scalar) for p in parts)

    while True:
        dropped = {name for name in scalar - set(scalar_params)
                   if any(v is None or not (is_scalar(v) or scalar_index(v))
                          for v in defs.get(name, [None]))}
        if not dropped:
            return scalar
        scalar -= dropped


def container_names(fdef, container_params) -> set:
    """Names that hold a tuple, list or dict at every assignment (``+`` on them concatenates)."""
    defs = {}
    for node in A.walk(fdef):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            defs.setdefault(node.targets[0].id, []).append(node.value)
    params = {a.id for a in fdef.args.args}
    containers = (set(defs) | set(container_params)) - (params - set(container_params))

    def is_container(value):
        if isinstance(value, (gast.Tuple, gast.List, gast.Dict)):
            return True
        if isinstance(value, gast.Name):
            return value.id in containers
        if isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Add, gast.Mult)):
            return is_container(value.left) or is_container(value.right)
        return False

    # a worklist: a name is checked again only when a name its definitions read is dropped
    readers = {}
    for n, values in defs.items():
        for m in A.names_in(values, gast.Load):
            readers.setdefault(m, set()).add(n)
    kept = set(container_params)
    work = [n for n in containers if n not in kept]
    while work:
        n = work.pop()
        if n in containers and n not in kept and \
                not all(is_container(v) for v in defs.get(n, [None])):
            containers.discard(n)
            work.extend(readers.get(n, ()))
    return containers


# NumPy functions that return a tuple or a list of arrays
_CONTAINER_RESULTS = {"split", "array_split", "hsplit", "vsplit", "dsplit", "meshgrid",
                      "broadcast_arrays", "nonzero", "unique", "histogram", "gradient",
                      "atleast_1d", "atleast_2d", "atleast_3d", "svd", "eig", "eigh", "qr",
                      "slogdet", "lstsq", "unstack", "divmod", "frexp", "modf", "unravel_index",
                      "indices", "where", "argwhere", "tolist"}


def numeric_names(fdef, numeric_params, resolve) -> set:
    """Names that hold an array or a number at every assignment, never a tuple, list or dict:
    their gradients may be accumulated with ``+``. A parameter counts only when its argument
    kind says so (``numeric_params``): a callee's parameter may receive a list.

    The greatest fixed point, as for ``scalar_names``: arithmetic with an array or a float,
    NumPy and ``math`` functions (except those returning several arrays), methods, attributes
    and indexing of such values.
    """
    import math

    import numpy as np

    params, defs = _assigned_values(fdef, resolve)
    numeric = (set(defs) | set(numeric_params)) - {p for p in params if p not in numeric_params}

    def is_numeric(value):
        if isinstance(value, gast.Constant):
            return isinstance(value.value, (float, complex))  # 2 * xs repeats a list
        if isinstance(value, gast.Name):
            return value.id in numeric
        if isinstance(value, gast.BinOp):
            return is_numeric(value.left) or is_numeric(value.right)
        if isinstance(value, gast.UnaryOp):
            return is_numeric(value.operand)
        if isinstance(value, (gast.Subscript, gast.Attribute)):
            return is_numeric(value.value)
        if isinstance(value, gast.IfExp):
            return is_numeric(value.body) and is_numeric(value.orelse)
        if isinstance(value, gast.Call):
            if isinstance(value.func, gast.Attribute) and is_numeric(value.func.value):
                return value.func.attr not in _CONTAINER_RESULTS  # x.sum(), x.reshape(...)
            fn = resolve(value.func)
            if isinstance(fn, np.ufunc) or fn in (float, abs, complex):
                return True
            home = origin(fn)
            if home is Origin.MATH or fn in (math.sqrt, math.exp):
                return True
            return home is Origin.NUMPY and \
                getattr(fn, "__name__", "") not in _CONTAINER_RESULTS
        return False

    while True:
        dropped = {name for name in numeric - set(numeric_params)
                   if any(v is None or not is_numeric(v) for v in defs.get(name, [None]))}
        if not dropped:
            return numeric
        numeric -= dropped


def is_real_kind(kind) -> bool:
    """Whether an argument kind (from ``cache.kind``) is a real number or a real array (a
    bool, int or float one): never complex."""
    import numpy as np

    if isinstance(kind, tuple):
        return kind[0] is np.ndarray and kind[1][1] in "biuf"
    return isinstance(kind, type) and (issubclass(kind, (bool, int, float)) or
                                       issubclass(kind, (np.bool_, np.integer, np.floating)))


# NumPy functions that may give a complex value from real operands (or whose dtype argument
# may ask for one): a name they assign is not known to be real
_MAY_GIVE_COMPLEX = {"astype", "view", "eig", "eigvals", "roots", "vectorize", "frompyfunc",
                     "piecewise", "apply_along_axis", "fromiter", "frombuffer", "sort_complex",
                     "poly", "polyval", "choose", "select"}
# creation functions: the position of their dtype argument (real when none is given)
_DTYPE_POSITION = {"array": 1, "asarray": 1, "asanyarray": 1, "ascontiguousarray": 1, "zeros": 1,
                   "ones": 1, "empty": 1, "zeros_like": 1, "ones_like": 1, "empty_like": 1,
                   "full": 2, "full_like": 2, "identity": 1, "eye": 3, "arange": 3,
                   "linspace": 5}
# what gives a real value whatever its operands hold
_ALWAYS_REAL = {"real", "imag", "abs", "absolute", "angle", "iscomplex", "isreal", "isnan",
                "isfinite", "isinf", "shape", "ndim", "size", "len", "argmax", "argmin",
                "argsort", "nonzero", "count_nonzero", "flatnonzero", "argwhere", "var", "std",
                "isclose", "allclose", "array_equal", "iscomplexobj", "isrealobj"}


def real_names(fdef, real_params, resolve) -> set:
    """Names known to hold real values (numbers, arrays or containers of them; never complex)
    at every assignment: the cotangent of a real value is real, so where ``unbroadcast``
    (which also takes the real part for a real operand) is not needed for shape, it is not
    needed at all only where the result is known real.

    The greatest fixed point, as for ``scalar_names``: real parameters (``real_params``, from
    the argument kinds), constants that are not complex, arithmetic, comparisons, indexing,
    attributes and methods of real values, and NumPy's and ``math``'s functions of real values
    except those that may give a complex (``_MAY_GIVE_COMPLEX``, or any ``dtype=`` argument);
    ``np.real``, ``np.abs`` and the like always give real values. Calls of anything else
    (the user's functions, SciPy, FFTs) are not known to be real.
    """

    import numpy as np

    params, defs = _assigned_values(fdef, resolve)
    real = (set(defs) | set(real_params)) - {p for p in params if p not in real_params}

    def numpy_name(fn):
        if isinstance(fn, np.ufunc):
            return fn.__name__
        home = origin(fn)
        if home is Origin.NUMPY and not within(fn, "numpy.fft", "numpy.lib.scimath",
                                                 "numpy.emath"):
            return getattr(fn, "__name__", None)
        if home is Origin.MATH or fn in (len, abs, float, int, bool, round, min, max, sum, range):
            return getattr(fn, "__name__", None)
        return None

    def is_real(value):
        if value is None:
            return False
        if isinstance(value, gast.Constant):
            return not isinstance(value.value, complex)
        if isinstance(value, gast.Name):
            return value.id in real
        if isinstance(value, gast.BinOp):
            return is_real(value.left) and is_real(value.right)
        if isinstance(value, gast.UnaryOp):
            return is_real(value.operand)
        if isinstance(value, (gast.Compare, gast.BoolOp)):
            return True if isinstance(value, gast.Compare) else \
                all(is_real(v) for v in value.values)
        if isinstance(value, gast.IfExp):
            return is_real(value.body) and is_real(value.orelse)
        if isinstance(value, (gast.Tuple, gast.List)):
            return all(is_real(e) for e in value.elts)
        if isinstance(value, gast.Subscript):
            return is_real(value.value)
        if isinstance(value, gast.Attribute):
            return value.attr in ("real", "imag", "shape", "ndim", "size") or \
                value.attr == "T" and is_real(value.value)
        if isinstance(value, gast.Call):
            func = value.func
            if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and \
                    func.value.id in real and func.attr not in _MAY_GIVE_COMPLEX and \
                    resolve(func) is None:  # a method of a real array (not a module's function)
                # x.sum(axis, dtype): a second positional argument may be a dtype
                return all(is_real(a) for a in value.args) and len(value.args) < 2 and \
                    all(is_real(k.value) and k.arg != "dtype" for k in value.keywords)
            name = numpy_name(resolve(func))
            if name is None:
                return False
            if name in _ALWAYS_REAL:
                return True
            if name in _MAY_GIVE_COMPLEX or any(k.arg == "dtype" for k in value.keywords) or \
                    len(value.args) > _DTYPE_POSITION.get(name, len(value.args)):
                return False
            return all(is_real(a) for a in value.args) and \
                all(is_real(k.value) for k in value.keywords)
        return False

    while True:
        dropped = {name for name in real - set(real_params)
                   if not all(is_real(v) for v in defs.get(name, [None]))}
        if not dropped:
            return real
        real -= dropped
