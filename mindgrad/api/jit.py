"""``jit=True``: the generated gradient compiled by Numba, where Numba accepts it.

The compiler's code is rewritten for Numba's typed world, then compiled with ``numba.njit``:

* one typed stack per variable the tape saves (``tape.append(h)`` becomes
  ``tape_h.append(h)``), in place of one list of mixed values;
* a variable ``None`` before the loop that saves it is pushed only once it holds a value, and
  popped back to ``None`` once its stack is empty: what the Python code holds at every step;
* ``reversed(range(...))`` as a range counting down, ``del`` statements dropped (they free
  memory only), the sensitivity a positional parameter;
* the runtime's helpers replaced by the Numba implementations of ``jit_runtime``, which
  refuse the cases they do not implement; the symbolic zero as ``0.0`` where it is only added,
  and as zeros of the input's shape and dtype where an input's gradient starts from it and a
  loop adds to it (``jit_rewrite``);
* the gradient built with no array marked large: no reuse stage (writes into dead buffers);
* a number or array the code reads from a global or a closure, a parameter read at each call,
  so a changed value is seen as the Python code sees it; a module or function it calls is
  fixed at compile time, and the cache entry depends on it.

Everything else the code reads (another generated function, a Python helper, a Python object)
is refused when the gradient is built, with ``JitUnsupportedError`` naming it, and so is what
Numba itself does not compile. The first call of each argument signature also runs the Python
gradient and compares the two, refusing the compiled code if they disagree. The rewritten
source is written to a cache folder (``MINDGRAD_JIT_CACHE``, else ``~/.cache/mindgrad/jit``)
so that ``numba.njit(cache=True)`` reuses its compilation in later processes.

Numba is imported here only when such a gradient is built: ``import mindgrad`` never needs it.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import os
import sys
import types as pytypes

import numpy as np

from mindgrad import runtime
from mindgrad.api.jit_rewrite import JitUnsupportedError, rewrite, zero_names
from mindgrad.api.jit_rewrite import refuse as _refuse
from mindgrad.rules import numpy_reductions, operators

__all__ = ["JitUnsupportedError", "build", "compiled"]


# the runtime's helpers Numba has an implementation of (jit_runtime.HELPERS), by name
_HELPERS = {"seed": runtime.seed, "unbroadcast": runtime.unbroadcast,
            "zeros_buffer": runtime.zeros_buffer,
            "reduce_sum_grad": numpy_reductions.reduce_sum_grad,
            "reduce_mean_grad": numpy_reductions.reduce_mean_grad,
            "sum_number": numpy_reductions.sum_number,
            "mean_number": numpy_reductions.mean_number,
            "matmul_grad_x": operators.matmul_grad_x, "matmul_grad_y": operators.matmul_grad_y,
            "matmul_grad_x_sum": operators.matmul_grad_x_sum,
            "matmul_grad_y_sum": operators.matmul_grad_y_sum}
_BUILTINS = {"range", "len", "abs", "min", "max", "float", "int", "bool"}
_MODULES = {"numpy", "math"}


# ----- reading what the generated code reads ---------------------------------------------------


class _Namespace:
    """What the rewritten code reads: ``frozen`` (name -> object fixed at compile time),
    ``live`` (names read at each call, with a callable giving the value), ``depends`` (the
    cache's dependencies on the globals frozen)."""

    def __init__(self):
        self.frozen, self.live, self.depends, self.described = {}, {}, [], []


def _resolve(fn_name, function, names, zero_names_ok) -> _Namespace:
    cells = dict(zip(function.__code__.co_freevars, function.__closure__ or ()))
    space = _Namespace()
    glob = function.__globals__
    for name in sorted(names):
        if name in cells:
            cell = cells[name]
            obj, read = cell.cell_contents, (lambda c=cell: c.cell_contents)
        elif name in glob:
            obj, read = glob[name], (lambda g=glob, n=name: g[n])
        elif name in _BUILTINS:
            continue
        elif hasattr(builtins, name):
            raise _refuse(fn_name, f"calls the builtin {name!r}")
        else:
            raise _refuse(fn_name, f"reads {name!r}, which is not defined")
        helper = next((h for h, o in _HELPERS.items() if o is obj), None)
        if helper is not None:
            from mindgrad.api import jit_runtime

            space.frozen[name] = jit_runtime.HELPERS[helper]
            space.described.append(f"{name}: mindgrad.api.jit_runtime.{helper}")
        elif obj is runtime.zero:
            if not zero_names_ok:
                raise _refuse(fn_name, "uses the symbolic zero other than in a sum")
            space.frozen[name] = 0.0
            space.described.append(f"{name}: 0.0 (the symbolic zero, only added)")
        elif isinstance(obj, pytypes.ModuleType):
            if obj.__name__ not in _MODULES:
                raise _refuse(fn_name, f"reads the module {obj.__name__} (as {name!r})")
            space.frozen[name] = obj
            space.described.append(f"{name}: module {obj.__name__}")
        elif isinstance(obj, (bool, int, float, np.generic, np.ndarray)):
            if isinstance(obj, np.ndarray) and obj.dtype.kind not in "biuf":
                raise _refuse(fn_name, f"reads {name!r}, an array of dtype {obj.dtype}")
            space.live[name] = read
            continue
        elif callable(obj) and (getattr(obj, "__module__", None) or "").split(".")[0] in \
                ("numpy", "math") or isinstance(obj, np.ufunc):
            space.frozen[name] = obj
            space.described.append(f"{name}: {getattr(obj, '__module__', 'numpy')}."
                                   f"{getattr(obj, '__name__', name)}")
        else:
            what = getattr(obj, "__qualname__", None) or type(obj).__name__
            raise _refuse(fn_name, f"calls or reads {name!r} ({what})")
        if name in glob and name not in cells:
            space.depends.append(("global", glob, (name,), obj))
    return space


# ----- compiling and running ---------------------------------------------------------------------


def _cache_folder():
    folder = os.environ.get("MINDGRAD_JIT_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "mindgrad", "jit")
    try:
        os.makedirs(folder, exist_ok=True)
        return folder if os.access(folder, os.W_OK) else None
    except OSError:
        return None


def _compile(fn_name, text, name, frozen):
    """``numba.njit`` of the function ``name`` in ``text``, from a file named by the text's
    hash in the cache folder (Numba then caches its compilation beside it)."""
    try:
        import numba
    except ImportError as exc:
        raise JitUnsupportedError("jit=True needs Numba (pip install 'mindgrad[jit]'); "
                                  f"without it drop jit=True ({exc})") from None
    digest = hashlib.sha1(text.encode()).hexdigest()[:20]
    module = f"mindgrad_jit_{digest}"
    folder = _cache_folder()
    path = f"<mindgrad jit {fn_name}>"
    if folder is not None:
        path = os.path.join(folder, module + ".py")
        if not os.path.exists(path):  # never rewritten: Numba's cache is keyed on its stamp
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w") as f:
                f.write(text)
            os.replace(tmp, path)
    # a module of its own in sys.modules: Numba's cache finds the function's globals there
    made = sys.modules.get(module)
    if made is None:
        made = pytypes.ModuleType(module)
        made.__file__ = path
        made.__dict__.update(frozen)
        exec(compile(text, path, "exec"), made.__dict__)
        sys.modules[module] = made
    return numba.njit(cache=folder is not None)(getattr(made, name))


def _numba_error(fn_name, exc, helpers_refused):
    """A JitUnsupportedError for Numba's compile error ``exc``."""
    first = next((line.strip() for line in str(exc).splitlines()
                  if line.strip() and not line.startswith("Failed in")), type(exc).__name__)
    first = first.replace("\x1b[1m", "").replace("\x1b[0m", "")
    what = f"is code Numba does not compile ({first[:200]})"
    if helpers_refused:
        cases = "; ".join(f"{h}{tuple(t)}" for h, t in dict.fromkeys(helpers_refused))
        what = f"calls a runtime helper for types its Numba version does not implement: {cases}"
    return _refuse(fn_name, what)


class JitDerivative:
    """The compiled gradient in the form the gradient API calls (``function``, ``text``,
    ``files``, ``bound``, ``keyword_params``, ``dependencies``, like the compiler's)."""

    def __init__(self, function, text, files, dependencies):
        self.function, self.text, self.files = function, text, files
        self.dependencies = dependencies
        self.bound, self.keyword_params, self.stages = None, {}, ()


def _plain(value):
    """A 0-d array as its number (Numba's arithmetic on 0-d arrays gives numbers, as NumPy's
    does, and a variable must keep one type)."""
    return value[()] if value.__class__ is np.ndarray and value.ndim == 0 else value


def _leaves(value):
    if isinstance(value, tuple):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _agree(a, b, tol) -> bool:
    a, b = _leaves(a), _leaves(b)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        if x.shape != y.shape and x.size != y.size:
            return False
        x, y = x.reshape(-1), y.reshape(-1)
        both_nan = np.isnan(x) & np.isnan(y)
        if not np.array_equal(np.isfinite(x), np.isfinite(y)) or \
                not np.array_equal(x[~np.isfinite(x) & ~both_nan],
                                   y[~np.isfinite(y) & ~both_nan]):
            return False
        finite = np.isfinite(x)
        scale = max(float(np.max(np.abs(y[finite]), initial=0.0)), 1e-300)
        if np.max(np.abs(x[finite] - y[finite]), initial=0.0) > tol * scale:
            return False
    return True


def compiled(grad_fn, args, keywords):
    """The gradient of the GradFunction ``grad_fn`` for ``args``, compiled by Numba; a
    JitUnsupportedError for what the Numba path does not take."""
    from mindgrad.compiler.front import source

    fn = grad_fn.fn
    name = getattr(fn, "__name__", None) or type(fn).__name__
    refused = ("has_aux=True" if grad_fn.has_aux else "weights" if grad_fn.weights else
               "arguments given by keyword" if keywords else
               "a Cell or a bound method" if source.unbind(fn)[1] is not None else
               "a Cell with its own bprop" if grad_fn.custom_bprop else None)
    if refused is not None:
        raise JitUnsupportedError(f"jit=True: the gradient of {name} with {refused} is not "
                                  f"compiled by the Numba path; drop jit=True")
    return build(_generated(grad_fn, args), name, args, grad_fn.positions)


def _small(kind):
    """The argument kind ``kind`` (``cache.kind``) with no array marked large."""
    if isinstance(kind, tuple) and len(kind) == 4 and kind[3] == "large":
        return kind[:3]
    if isinstance(kind, tuple) and len(kind) == 2 and kind[0] in (list, tuple):
        return (kind[0], tuple(_small(k) for k in kind[1]))
    if isinstance(kind, tuple) and len(kind) == 2 and kind[0] is dict:
        return (dict, tuple((key, _small(k)) for key, k in kind[1]))
    return kind


def _generated(grad_fn, args):
    """The compiler's gradient for ``args`` as ``GradFunction._build`` builds it, but with no
    array marked large: the reuse stage (writes into dead buffers, ``spare``) is left out,
    as Numba's typed code does not take it. The non-jit cache is not touched."""
    from mindgrad.compiler import cache
    from mindgrad.compiler.finish import gather

    with gather.off():  # the steps' matmul gradients one by one, as Numba's loop takes them
        return grad_fn._build(args, kind=lambda a: _small(cache.kind(a)))


def _steady(call, expected):
    """The function the gradient API calls: ``call`` with its output in the type (or dtype)
    of the Python gradient's output ``expected``, nothing else done per call."""
    if isinstance(expected, np.ndarray):
        dtype = expected.dtype

        def function(*call_args, sens=None):
            out, grads, wgrads = call(*call_args, sens=sens)
            return (out if out.dtype == dtype else out.astype(dtype)), grads, wgrads
        return function
    out_type = type(expected)

    def function(*call_args, sens=None):
        out, grads, wgrads = call(*call_args, sens=sens)
        return (out if out.__class__ is out_type else out_type(out)), grads, wgrads
    return function


def build(generated, fn_name, args, positions=None) -> JitDerivative:
    """The gradient ``generated`` (the compiler's, for ``args``, with respect to the inputs at
    ``positions``) compiled by Numba, checked against it on ``args``; a JitUnsupportedError
    where the code is not compiled."""
    python = generated.function
    tree = ast.parse(generated.text)
    entries = [s for s in tree.body if isinstance(s, ast.FunctionDef) and
               s.name == python.__name__]
    if len(tree.body) != 1 or len(entries) != 1:
        raise _refuse(fn_name, "calls other generated code (a gradient inside the function, "
                               "or code built for its calls at run time)")
    zero_name = next((n for n, c in zip(python.__code__.co_freevars, python.__closure__ or ())
                      if c.cell_contents is runtime.zero), None)
    zero_ok = zero_name is None or zero_names(entries[0], zero_name)
    entry, outside, named = rewrite(fn_name, entries[0], set(python.__code__.co_freevars),
                                    zero_name, positions)
    space = _resolve(fn_name, python, outside, zero_ok)
    from mindgrad.api import jit_runtime

    for role, helper_name in named.items():
        space.frozen[helper_name] = getattr(jit_runtime, role)
    live = sorted(space.live)
    entry.args.args += [ast.arg(arg=n) for n in live]
    header = "".join(f"# {d}\n" for d in space.described)
    text = (f"# the gradient of {fn_name}, compiled by Numba (jit=True)\n{header}"
            f"{ast.unparse(entry)}\n")
    compiled = _compile(fn_name, text, entry.name, space.frozen)
    reads = tuple(space.live[n] for n in live)
    plain = tuple(i for i, a in enumerate(args) if a.__class__ is np.ndarray and a.ndim == 0)

    def call(*call_args, sens=None):
        if plain:
            call_args = tuple(_plain(a) if i in plain else a for i, a in enumerate(call_args))
        if sens is not None:
            sens = np.asarray(sens) if isinstance(sens, (list, tuple)) else _plain(sens)
        try:
            if reads:
                return compiled(*call_args, sens, *[read() for read in reads])
            return compiled(*call_args, sens)
        except Exception as exc:  # a new argument signature Numba does not compile
            if type(exc).__module__.startswith("numba"):
                raise _numba_error(fn_name, exc, jit_runtime.REFUSED) from None
            raise

    jit_runtime.REFUSED.clear()
    got = call(*args)
    expected = python(*args, **{python.sens_name: None})
    low = any(np.result_type(leaf) == np.float32 or np.result_type(leaf) == np.float16
              for leaf in _leaves(expected) if isinstance(leaf, (np.ndarray, np.generic)))
    if not _agree(got, expected, 1e-3 if low else 1e-7):
        raise _refuse(fn_name, "gave a result other than the Python gradient's on its first "
                               "call (a case the rewrite does not cover)")
    function = _steady(call, expected[0])
    function.sens_name = "sens"
    function.__name__ = entry.name
    return JitDerivative(function, text, list(generated.files),
                         list(generated.dependencies) + space.depends)
