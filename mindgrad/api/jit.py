"""``jit=True``: the generated gradient compiled by Numba, where Numba accepts it.

The compiler's code is rewritten for Numba's typed world, then compiled with ``numba.njit``:

* one typed stack per variable the tape saves (``tape.append(h)`` becomes
  ``tape_h.append(h)``), in place of one list of mixed values;
* a variable ``None`` before the loop that saves it is pushed only once it holds a value, and
  popped back to ``None`` once its stack is empty: what the Python code holds at every step;
* ``reversed(range(...))`` as a range counting down, ``del`` statements dropped (they free
  memory only), the sensitivity a positional parameter;
* the runtime's helpers replaced by the Numba implementations of ``jit_runtime``, which
  refuse the cases they do not implement; the symbolic zero as ``0.0`` where it is only added;
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
from mindgrad.rules import numpy_reductions

__all__ = ["JitUnsupportedError", "build", "compiled"]


class JitUnsupportedError(NotImplementedError):
    """``jit=True`` met code it does not compile: the message names the construct and the
    function; without ``jit=True`` the gradient runs as Python."""


# the runtime's helpers Numba has an implementation of (jit_runtime.HELPERS), by name
_HELPERS = {"seed": runtime.seed, "unbroadcast": runtime.unbroadcast,
            "zeros_buffer": runtime.zeros_buffer,
            "reduce_sum_grad": numpy_reductions.reduce_sum_grad,
            "reduce_mean_grad": numpy_reductions.reduce_mean_grad}
_BUILTINS = {"range", "len", "abs", "min", "max", "float", "int", "bool"}
_MODULES = {"numpy", "math"}


def _refuse(name, what):
    return JitUnsupportedError(f"jit=True: the gradient of {name} {what}, which the Numba "
                               f"path does not compile; drop jit=True to run it as Python")


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


# ----- rewriting the generated function --------------------------------------------------------


def _is_call(node, obj_name, method, nargs):
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
        isinstance(node.func.value, ast.Name) and node.func.value.id == obj_name and \
        node.func.attr == method and len(node.args) == nargs and not node.keywords


def _tapes(fn_name, entry):
    """The tape lists of ``entry``: ``{tape: names pushed}``. A tape is a local list made
    empty once and used only as ``tape.append(name)`` and ``name = tape.pop()``."""
    made = {s.targets[0].id for s in entry.body if isinstance(s, ast.Assign) and
            len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and
            isinstance(s.value, ast.List) and not s.value.elts}
    pushed = {t: [] for t in made}
    popped = {t: [] for t in made}
    allowed = set()
    for node in ast.walk(entry):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            for t in made:
                if _is_call(node.value, t, "append", 1) and isinstance(node.value.args[0],
                                                                      ast.Name):
                    pushed[t].append(node.value.args[0].id)
                    allowed.add(id(node.value.func.value))
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            for t in made:
                if _is_call(node.value, t, "pop", 0):
                    popped[t].append(node.targets[0].id)
                    allowed.add(id(node.value.func.value))
    tapes = {}
    for t in made:
        if not popped[t]:
            continue  # a list of the user's, not a tape
        uses = [n for n in ast.walk(entry) if isinstance(n, ast.Name) and n.id == t and
                isinstance(n.ctx, ast.Load)]
        if any(id(n) not in allowed for n in uses) or set(pushed[t]) != set(popped[t]):
            raise _refuse(fn_name, f"uses its tape {t!r} other than by pushing and popping "
                                   f"named values")
        tapes[t] = sorted(set(pushed[t]))
    return tapes


def _zero_names(entry, zero_name):
    """Whether every variable assigned the symbolic zero is only added, assigned or returned
    (where ``0.0`` gives what the symbolic zero gives)."""
    names = {s.targets[0].id for s in ast.walk(entry) if isinstance(s, ast.Assign) and
             isinstance(s.value, ast.Name) and s.value.id == zero_name and
             len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)}
    parents = {}
    for node in ast.walk(entry):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    for node in ast.walk(entry):
        if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
            continue
        if node.id not in names and node.id != zero_name:
            continue
        parent = parents.get(id(node))
        if node.id == zero_name:
            if not (isinstance(parent, ast.Assign) and parent.value is node):
                return False
            continue
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add) or \
                isinstance(parent, ast.AugAssign) and isinstance(parent.op, ast.Add) or \
                isinstance(parent, ast.Assign) and parent.value is node and \
                all(isinstance(t, ast.Name) for t in parent.targets):
            continue
        if isinstance(parent, ast.Tuple) and isinstance(parents.get(id(parent)),
                                                         (ast.Return, ast.Tuple)):
            continue
        return False
    return True


class _Rewrite(ast.NodeTransformer):
    def __init__(self, fn_name, tapes, none_init, stack_names, some):
        self.fn_name, self.tapes, self.none_init = fn_name, tapes, none_init
        self.stack = stack_names  # pushed name -> its stack's name
        self.some = some  # the name of jit_runtime.some

    def visit_Name(self, node):
        if node.id in self.none_init and isinstance(node.ctx, ast.Load):
            return ast.Call(ast.Name(self.some, ast.Load()), [node], [])
        return node

    def visit_Delete(self, node):
        return ast.Pass()

    def visit_Assign(self, node):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
            if target in self.tapes:
                return [ast.parse(f"{self.stack[v]} = []").body[0] for v in self.tapes[target]]
            if isinstance(node.value, ast.Call) and any(
                    _is_call(node.value, t, "pop", 0) for t in self.tapes):
                stack = self.stack[target]
                if target in self.none_init:
                    return ast.parse(f"if len({stack}) > 0:\n    {target} = {stack}.pop()\n"
                                     f"else:\n    {target} = None").body[0]
                return ast.parse(f"{target} = {stack}.pop()").body[0]
        return self.generic_visit(node)

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Call) and any(
                _is_call(node.value, t, "append", 1) for t in self.tapes):
            name = node.value.args[0].id
            stack = self.stack[name]
            if name in self.none_init:
                return ast.parse(f"if {name} is not None:\n"
                                 f"    {stack}.append({self.some}({name}))").body[0]
            return ast.parse(f"{stack}.append({name})").body[0]
        return self.generic_visit(node)

    def visit_For(self, node):
        self.generic_visit(node)
        it = node.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and \
                it.func.id == "reversed":
            inner = it.args[0] if len(it.args) == 1 and not it.keywords else None
            if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and
                    inner.func.id == "range" and 1 <= len(inner.args) <= 2 and
                    not inner.keywords):
                raise _refuse(self.fn_name, "loops over reversed() of something other than "
                                            "range(stop) or range(start, stop)")
            start = _minus_one(inner.args[0]) if len(inner.args) == 2 else "-1"
            node.iter = ast.parse(f"range({_minus_one(inner.args[-1])}, {start}, -1)",
                                  mode="eval").body
        return node


def _minus_one(node) -> str:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return str(node.value - 1)
    return f"{ast.unparse(node)} - 1" if isinstance(node, ast.Name) else \
        f"({ast.unparse(node)}) - 1"


def _rewrite(fn_name, entry, code_names):
    """The entry function rewritten for Numba, and the names it reads from outside."""
    for node in ast.walk(entry):
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                             ast.Try, ast.With, ast.Yield, ast.YieldFrom, ast.Global,
                             ast.Nonlocal, ast.Dict, ast.Set, ast.DictComp, ast.SetComp,
                             ast.ListComp, ast.GeneratorExp, ast.Starred)) and node is not entry:
            raise _refuse(fn_name, f"has a {type(node).__name__} "
                                   f"(line {getattr(node, 'lineno', '?')}: "
                                   f"{ast.unparse(node).splitlines()[0][:60]})")
        if isinstance(node, ast.Compare) and any(isinstance(o, (ast.Is, ast.IsNot))
                                                 for o in node.ops):
            raise _refuse(fn_name, f"tests identity ({ast.unparse(node)[:60]})")
    a = entry.args
    if a.vararg or a.kwarg or a.posonlyargs or len(a.kwonlyargs) != 1:
        raise _refuse(fn_name, "has a signature other than positional inputs and the sens")
    tapes = _tapes(fn_name, entry)
    none_init = {s.targets[0].id for s in entry.body if isinstance(s, ast.Assign) and
                 len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and
                 isinstance(s.value, ast.Constant) and s.value.value is None}
    local = {n.id for n in ast.walk(entry) if isinstance(n, ast.Name) and
             isinstance(n.ctx, (ast.Store, ast.Del))} | {p.arg for p in a.args + a.kwonlyargs}
    stack_names, taken = {}, set(local) | set(code_names)
    for names in tapes.values():
        for v in names:
            s = f"tape_{v}"
            while s in taken:
                s += "_"
            taken.add(s)
            stack_names[v] = s
    some = "some"
    while some in taken:
        some += "_"
    entry = _Rewrite(fn_name, tapes, none_init, stack_names, some).visit(entry)
    a.args = a.args + a.kwonlyargs
    a.kwonlyargs, a.kw_defaults = [], []
    entry.decorator_list = []
    ast.fix_missing_locations(entry)
    loaded = {n.id for n in ast.walk(entry) if isinstance(n, ast.Name) and
              isinstance(n.ctx, ast.Load)}
    return entry, loaded - local - set(stack_names.values()) - {some}, some


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
    return build(grad_fn._build(args, keywords), name, args)


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


def build(generated, fn_name, args) -> JitDerivative:
    """The gradient ``generated`` (the compiler's, for ``args``) compiled by Numba, checked
    against it on ``args``; a JitUnsupportedError where the code is not compiled."""
    python = generated.function
    tree = ast.parse(generated.text)
    entries = [s for s in tree.body if isinstance(s, ast.FunctionDef) and
               s.name == python.__name__]
    if len(tree.body) != 1 or len(entries) != 1:
        raise _refuse(fn_name, "calls other generated code (a gradient inside the function, "
                               "or code built for its calls at run time)")
    zero_name = next((n for n, c in zip(python.__code__.co_freevars, python.__closure__ or ())
                      if c.cell_contents is runtime.zero), None)
    zero_ok = zero_name is None or _zero_names(entries[0], zero_name)
    entry, outside, some = _rewrite(fn_name, entries[0], set(python.__code__.co_freevars))
    space = _resolve(fn_name, python, outside, zero_ok)
    from mindgrad.api import jit_runtime

    space.frozen[some] = jit_runtime.some
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
