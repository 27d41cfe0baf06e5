"""How many NumPy and SciPy functions mindgrad, HIPS autograd and JAX differentiate, side by
side, and the ones autograd or JAX differentiate that mindgrad does not, with why.

Run: ``python benchmarks/coverage.py`` (it counts this checkout's ``mindgrad``). autograd and
JAX are not dependencies of mindgrad: install them in a throwaway environment to compare
(``python -m venv /tmp/peers && /tmp/peers/bin/pip install autograd jax numpy scipy gast
astunparse``, then ``/tmp/peers/bin/python benchmarks/coverage.py``); a peer that is not
importable gets a column of ``-``. mindgrad's SciPy rules are loaded as a program importing
SciPy would load them. Nothing is timed: it takes a few seconds.

What is counted, the same way for every library:

- A *name* is a public function of NumPy (``numpy``, ``numpy.linalg``, ``numpy.fft``) or SciPy
  (``scipy.special``, ``scipy.linalg``, ``scipy.signal``, and the methods of the distributions
  of ``scipy.stats``: ``scipy.stats.norm.logpdf``) as NumPy and SciPy installed here define it,
  written as a user writes it (``np.linalg.solve``). A library's function counts only under a
  name NumPy or SciPy has (``jnp.linalg.solve`` as ``np.linalg.solve``); its own extras do not.
  Names of one object count once (``np.abs`` is ``np.absolute``, ``scipy.special.psi`` is
  ``digamma``); ``np.matmul`` and ``np.linalg.matmul``, two objects, count twice. Classes and
  dtypes (``np.float64``), constants, array methods, operators, ``np.random`` and ufunc methods
  (``np.add.reduce``) are not names here.
- A name is left out of every count when its result has no meaningful derivative: the functions
  mindgrad declares constants (index-valued, comparisons, rounding, shapes, constructors from
  shapes: ``np.argmax``, ``np.floor``, ``np.zeros``), ufuncs whose floating-point loops all give
  integers or booleans (``np.isnan``), and ``NO_DERIVATIVE`` below (I/O, printing, integer and
  bit functions, windows and frequencies made from sizes).
- mindgrad differentiates a name when the registry has a gradient (reverse-mode) rule for it.
- autograd differentiates a name when its wrapper in ``autograd.numpy``/``autograd.scipy`` is a
  primitive with a VJP in ``autograd.core.primitive_vjps`` (the ``defvjp`` registry) that is not
  zero for every argument, or is a Python function autograd writes from its primitives
  (``anp.vstack``, ``anp.column_stack``).
- JAX differentiates a name when ``jax.numpy`` (``.linalg``, ``.fft``), ``jax.scipy.special``,
  ``jax.scipy.linalg``, ``jax.scipy.signal`` or ``jax.scipy.stats.<distribution>`` has it: JAX
  has no per-function registry, and differentiates its floating-point functions (a few only
  for some arguments, which this does not tell apart).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import pathlib
import sys
import types
import warnings

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # this checkout's mindgrad

NUMPY = {"np": "numpy", "np.linalg": "numpy.linalg", "np.fft": "numpy.fft"}
SCIPY = {"scipy.special": "scipy.special", "scipy.linalg": "scipy.linalg",
         "scipy.signal": "scipy.signal"}

# names whose results have no meaningful derivative, beyond mindgrad's constants, by why
NO_DERIVATIVE = {
    "integers, bits and indices": [
        "np.bitwise_count", "np.packbits", "np.unpackbits", "np.diag_indices_from",
        "np.tril_indices_from", "np.triu_indices_from", "np.ix_", "np.gcd", "np.lcm",
        "np.isdtype", "np.iterable", "np.einsum_path", "np.linalg.matrix_rank",
        "scipy.special.bernoulli", "scipy.special.gammasgn"],
    "made from sizes, not values": [
        "np.bartlett", "np.blackman", "np.hamming", "np.hanning", "np.fft.fftfreq",
        "np.fft.rfftfreq", "scipy.linalg.dft", "scipy.linalg.hadamard", "scipy.linalg.helmert",
        "scipy.linalg.hilbert", "scipy.linalg.invhilbert", "scipy.linalg.pascal",
        "scipy.linalg.invpascal"],
    "input, output and printing": [
        "np.array_repr", "np.array_str", "np.array2string", "np.get_printoptions",
        "np.set_printoptions", "np.printoptions", "np.load", "np.save", "np.savez",
        "np.savez_compressed", "np.loadtxt", "np.savetxt", "np.genfromtxt", "np.frombuffer",
        "np.fromfile", "np.fromiter", "np.fromstring", "np.from_dlpack", "np.frompyfunc"],
}

# why some names left for later have no rule yet, where it is not just work to do
LATER = {
    "np.apply_along_axis": "takes a Python function",
    "np.apply_over_axes": "takes a Python function",
    "np.fromfunction": "takes a Python function",
    "np.piecewise": "takes Python functions",
    "np.vectorize": "takes a Python function",
    "np.fill_diagonal": "writes into its argument",
    "np.place": "writes into its argument",
    "np.put": "writes into its argument",
    "np.put_along_axis": "writes into its argument",
    "np.copyto": "writes into its argument",
    "np.frexp": "kept without a rule: the error tests use it as the function without one",
    "np.roots": "eigenvalues of the companion matrix: complex results",
    "np.intersect1d": "selects values, as np.unique, which mindgrad treats as a constant",
    "np.setdiff1d": "selects values, as np.unique, which mindgrad treats as a constant",
    "np.setxor1d": "selects values, as np.unique, which mindgrad treats as a constant",
    "np.union1d": "selects values, as np.unique, which mindgrad treats as a constant",
}


def _public(obj):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for attr in dir(obj):
            if not attr.startswith("_"):
                try:
                    yield attr, getattr(obj, attr)
                except Exception:
                    continue


def _is_function(obj):
    return callable(obj) and not isinstance(obj, (type, types.ModuleType))


def _distributions():
    """``{name: distribution}`` of ``scipy.stats``."""
    import scipy.stats

    kinds = (scipy.stats.rv_continuous, scipy.stats.rv_discrete)
    return {name: obj for name, obj in _public(scipy.stats) if isinstance(obj, kinds)}


class Names:
    """The NumPy and SciPy names, each with its canonical spelling: one per object."""

    def __init__(self):
        self.canonical = {}  # any name -> the one name of its object
        by_object = {}
        for prefix, module_name in {**NUMPY, **SCIPY}.items():
            module = importlib.import_module(module_name)
            for attr, obj in _public(module):
                if _is_function(obj):
                    by_object.setdefault(self._key(obj), (obj, []))[1].append(f"{prefix}.{attr}")
        for obj, names in by_object.values():
            own = getattr(obj, "__name__", None)
            first = min(names, key=lambda n: (n.count("."), n.rpartition(".")[2] != own,
                                              len(n), n))
            for name in names:
                self.canonical[name] = first
        for dist_name, dist in _distributions().items():
            for attr, obj in _public(dist):
                if _is_function(obj):
                    name = f"scipy.stats.{dist_name}.{attr}"
                    self.canonical[name] = name

    @staticmethod
    def _key(obj):
        try:
            hash(obj)
            return obj
        except TypeError:
            return id(obj)

    def of(self, name):
        """The canonical name, or None for a name NumPy and SciPy do not have."""
        return self.canonical.get(name)

    def namespace(self, name):
        head = name.rpartition(".")[0]
        return "scipy.stats" if head.startswith("scipy.stats.") else head


def no_derivative(names, mindgrad_constants):
    """The canonical names left out of the counts, with why."""
    why = {name: "mindgrad treats it as a constant" for name in mindgrad_constants}
    for prefix, module_name in NUMPY.items():
        for attr, obj in _public(importlib.import_module(module_name)):
            if isinstance(obj, np.ufunc) and _integer_valued(obj) and names.of(f"{prefix}.{attr}"):
                why.setdefault(names.of(f"{prefix}.{attr}"), "integer or boolean values")
    for reason, listed in NO_DERIVATIVE.items():
        for name in listed:
            if names.of(name):
                why.setdefault(names.of(name), reason)
    return why


def _integer_valued(ufunc):
    """Whether each loop of ``ufunc`` on floating-point inputs gives integers or booleans."""
    floating = [t.split("->") for t in ufunc.types
                if all(c in "efdg" for c in t.split("->")[0])]
    return bool(floating) and all(all(c in "?bBhHiIlLqQ" for c in out) for _, out in floating)


def mindgrad_sets(names):
    """(differentiable, constants): canonical names with a gradient rule, and the constants."""
    from mindgrad.rules import catalog

    catalog.load()
    import scipy.signal  # noqa: F401  (a name space the catalog does not list)

    found, _ = catalog.entries()
    differentiable, constants = set(), set()
    for entry in found:
        for name in entry.names:
            canonical = names.of(name)
            if canonical is None:
                continue
            if entry.constant:
                constants.add(canonical)
            elif entry.adjoint is not None:
                differentiable.add(canonical)
    return differentiable, constants


def autograd_set(names):
    """Canonical names autograd differentiates, or None where it is not installed."""
    try:
        import autograd.numpy as anp
        import autograd.numpy.fft
        import autograd.numpy.linalg
        import autograd.scipy.linalg
        import autograd.scipy.signal
        import autograd.scipy.special
        import autograd.scipy.stats
        from autograd.core import primitive_vjps
    except ImportError:
        return None
    spaces = {"np": anp, "np.linalg": autograd.numpy.linalg, "np.fft": autograd.numpy.fft,
              "scipy.special": autograd.scipy.special, "scipy.linalg": autograd.scipy.linalg,
              "scipy.signal": autograd.scipy.signal}
    found = set()
    for canonical, obj in _functions(names, spaces, autograd.scipy.stats):
        if obj in primitive_vjps:
            if not _zero_vjp(primitive_vjps[obj]):
                found.add(canonical)
        elif isinstance(obj, types.FunctionType) and "<locals>" not in obj.__qualname__ \
                and (obj.__module__ or "").startswith(("autograd.numpy", "autograd.scipy")):
            found.add(canonical)  # written from autograd's primitives (not a wrapper)
    return found


def _functions(names, spaces, stats):
    """``(canonical name, function)`` of a library's name spaces (``{"np.linalg": module}``)
    and of its ``stats`` module's distributions, for the NumPy and SciPy names they have."""
    spaces = dict(spaces)
    for dist, module in _public(stats):
        if isinstance(module, types.ModuleType):
            spaces[f"scipy.stats.{dist}"] = module
    for prefix, module in spaces.items():
        for attr, obj in _public(module):
            canonical = names.of(f"{prefix}.{attr}")
            if canonical is not None and _is_function(obj):
                yield canonical, obj


def _zero_vjp(vjp_argnums):
    """Whether a ``defvjp`` registration gives zero for every argument (``defvjp(f, None)``)."""
    for cell in vjp_argnums.__closure__ or ():
        value = cell.cell_contents
        if isinstance(value, dict) and value:
            return all(getattr(v, "__qualname__", "").startswith("translate_vjp.")
                       for v in value.values())
    return False


def jax_set(names):
    """Canonical names JAX has (and so differentiates), or None where it is not installed."""
    try:
        import jax.numpy as jnp
        import jax.scipy.linalg
        import jax.scipy.signal
        import jax.scipy.special
        import jax.scipy.stats
    except ImportError:
        return None
    spaces = {"np": jnp, "np.linalg": jnp.linalg, "np.fft": jnp.fft,
              "scipy.special": jax.scipy.special, "scipy.linalg": jax.scipy.linalg,
              "scipy.signal": jax.scipy.signal}
    found = {canonical for canonical, _ in _functions(names, spaces, jax.scipy.stats)}
    return found


GROUPS = ["np", "np.linalg", "np.fft", "scipy.special", "scipy.stats", "scipy.linalg",
          "scipy.signal"]


def main():
    import scipy

    names = Names()
    mindgrad, constants = mindgrad_sets(names)
    excluded = no_derivative(names, constants)
    peers = {"mindgrad": mindgrad, "autograd": autograd_set(names), "JAX": jax_set(names)}
    counted = {lib: None if s is None else s - set(excluded) for lib, s in peers.items()}

    versions = [f"NumPy {np.__version__}", f"SciPy {scipy.__version__}"]
    for lib in ("autograd", "jax"):
        if lib in sys.modules:
            versions.append(f"{lib} {importlib.metadata.version(lib)}")
    print("Differentiable NumPy and SciPy names (" + ", ".join(versions) + ")\n")
    print(f"{'':24}" + "".join(f"{lib:>10}" for lib in counted))

    def row(label, keep):
        cells = ["-" if s is None else str(sum(1 for n in s if keep(n))) for s in counted.values()]
        print(f"{label:24}" + "".join(f"{c:>10}" for c in cells))

    row("NumPy names", lambda n: n.startswith("np"))
    for group in GROUPS[:3]:
        row(f"  {group}", lambda n, g=group: names.namespace(n) == g)
    row("SciPy names", lambda n: n.startswith("scipy"))
    for group in GROUPS[3:]:
        row(f"  {group}", lambda n, g=group: names.namespace(n) == g)
    row("  scipy.stats.norm", lambda n: n.startswith("scipy.stats.norm."))
    print(f"\nLeft out of every count, as having no meaningful derivative: {len(excluded)} names "
          f"({len(constants)} of them mindgrad's constants).")
    if all(s is None for lib, s in peers.items() if lib != "mindgrad"):
        return
    others = set().union(*(s for lib, s in counted.items() if lib != "mindgrad" and s))
    print(f"mindgrad differentiates {len(counted['mindgrad'] - others)} names that neither "
          "autograd nor JAX does (of those installed).")

    missing = sorted(set().union(*(s for lib, s in peers.items() if lib != "mindgrad" and s))
                     - mindgrad - constants)
    if not missing:
        return
    print("\nNames autograd or JAX have that mindgrad neither differentiates nor treats as a "
          "constant\n(A: autograd differentiates it, J: JAX has it):")
    for title, chosen in (("left for later", [n for n in missing if n not in excluded]),
                          ("no meaningful derivative, not counted",
                           [n for n in missing if n in excluded])):
        if not chosen:
            continue
        print(f"\n{title} ({len(chosen)}):")
        for group in GROUPS:
            in_group = [n for n in chosen if names.namespace(n) == group]
            if not in_group:
                continue
            print(f"  {group} ({len(in_group)}):")
            for name in in_group:
                marks = "".join(m for m, lib in (("A", "autograd"), ("J", "JAX"))
                                if peers[lib] and name in peers[lib])
                note = excluded.get(name) or LATER.get(name, "")
                print(f"    {name:40} {marks:3} {note}".rstrip())


if __name__ == "__main__":
    main()
