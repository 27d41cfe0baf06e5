"""The catalog of the functions mindgrad differentiates, written from the rule registry.

    python -m mindgrad.rules.catalog            # writes docs/functions.md
    python -m mindgrad.rules.catalog --check    # exits 1 if docs/functions.md is out of date

The page lists, topic by topic (one topic per module of ``mindgrad/rules``), every public
function that has a rule, by the name a user writes (``np.fft.rfft``, ``scipy.special.gammaln``,
``x.sum``, ``x.T``, ``a + b``), whether it has a gradient (reverse mode), a tangent (forward
mode) or is a constant, and the assumptions of its rule. Nothing in it is written by hand, so
it cannot fall behind the registry. Generating it needs the optional libraries whose topics the
registry loads on demand (``DEFERRED``: SciPy), since the page lists their rules too.

What rule authors write for it:

- A rule whose result is right only under some assumption (a matrix of full rank, distinct
  eigenvalues, real inputs, some modes of an argument) says so in its template's docstring: the
  first paragraph, a sentence or two naming the conditions (``np.linalg.eigh``'s: Real ``a``
  with distinct eigenvalues; the ``UPLO`` triangle gets the gradient). The adjoint's docstring
  is used, else the tangent's. A template without a docstring assumes nothing beyond the
  function's own domain.
- A topic is the module that registers the rule (``nondifferentiable`` remembers the module that
  declares a constant). Its heading is its entry in ``TITLES``, else the first line of its
  docstring; the conventions every rule of a topic shares (what a slope is at a kink, infinite
  derivatives at a domain's edge) belong in that docstring, which the page links to.
- A function is listed under its public names in ``NAMESPACES`` and the libraries of
  ``DEFERRED`` (and the methods of the public objects there: ``np.add.reduce``,
  ``scipy.stats.norm.logpdf``); mindgrad's own helpers, which have none, are left out, and so
  are the rules for the runtime (``runtime_rules``), which are for differentiating generated
  code.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import pathlib
import sys
import types
import warnings

from mindgrad.rules import registry
from mindgrad.runtime.origin import Origin, module_name_of
from mindgrad.runtime.origin import origin as home

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "functions.md"
COMMAND = "python -m mindgrad.rules.catalog"

# where public names are looked for (then in the libraries of DEFERRED), in order of preference:
# a function reachable by several names is listed under its own name (``__name__``) in the first
# of these that has it, the others as aliases
NAMESPACES = [
    ("np", "numpy"),
    ("np.linalg", "numpy.linalg"),
    ("np.fft", "numpy.fft"),
    ("np.random", "numpy.random"),
    ("", "builtins"),
    ("math", "math"),
    ("operator", "operator"),
    ("scipy.special", "scipy.special"),
    ("scipy.stats", "scipy.stats"),
    ("scipy.linalg", "scipy.linalg"),
    ("scipy.signal", "scipy.signal"),
    ("scipy.integrate", "scipy.integrate"),
]

# the topics in the order a reader meets them, with their headings; a topic not named here comes
# after them, headed by the first line of its module's docstring
TITLES = {
    "operators": "Python operators",
    "numpy_elementwise": "NumPy: elementwise functions, constructors and casts",
    "numpy_reductions": "NumPy: reductions and cumulative operations",
    "numpy_averages": "NumPy: weighted averages",
    "numpy_statistics": "NumPy: variance, order statistics and covariance",
    "numpy_shape": "NumPy: shape, indexing and reordering",
    "numpy_joining": "NumPy: joining and splitting",
    "numpy_grids": "NumPy: padding, differences, grids and samples",
    "numpy_products": "NumPy: products",
    "numpy_linalg": "NumPy: linear algebra",
    "numpy_decompositions": "NumPy: matrix decompositions",
    "numpy_pinv": "NumPy: the pseudo-inverse",
    "numpy_polynomial": "NumPy: convolutions and polynomials",
    "numpy_callables": "NumPy: functions that call the user's function",
    "numpy_fft": "NumPy: discrete Fourier transforms",
    "methods": "Array methods and attributes",
    "builtins_math": "Python builtins and the math module",
    "nondiff": "NumPy: constants, scalar casts and random draws",
    "scipy_special": "SciPy: special functions",
    "scipy_stats": "SciPy: statistical distributions",
    "scipy_linalg": "SciPy: linear algebra",
    "scipy_signal": "SciPy: signal processing",
    "scipy_integrate": "SciPy: integration of ODEs",
}

INTERNAL = {"runtime_rules"}  # rules for the helpers generated code calls, not user functions

OPERATORS = {  # the syntax a user writes for the operator module's functions
    "add": "a + b", "sub": "a - b", "mul": "a * b", "truediv": "a / b", "floordiv": "a // b",
    "mod": "a % b", "pow": "a ** b", "matmul": "a @ b", "neg": "-a", "pos": "+a",
    "getitem": "a[i]", "abs": "abs(a)", "lt": "a < b", "le": "a <= b", "gt": "a > b",
    "ge": "a >= b", "eq": "a == b", "ne": "a != b", "not_": "not a", "invert": "~a",
    "and_": "a & b", "or_": "a | b", "xor": "a ^ b", "lshift": "a << b", "rshift": "a >> b",
}


def load():
    """Register every rule mindgrad has: the built-in topics and those loaded on demand, whose
    libraries are imported here. Raises ImportError naming the library if one is missing."""
    from mindgrad.rules import builtin  # noqa: F401  (registers the topics)

    for library in registry.DEFERRED:
        try:
            importlib.import_module(library)
        except ImportError as exc:
            raise ImportError(f"the catalog lists the rules for {library}, which is not "
                              f"installed: install it to generate {PAGE.name} ({exc})") from None
    registry._load_deferred()


def public_names():
    """``{key: [name, ...]}``: the registry key of each public function (and of the public
    methods of public objects, ``np.add.reduce``) and the names it is reachable by, the
    preferred one first."""
    names: dict = {}

    def add(obj, name):
        try:
            key = registry._key(obj)
        except Exception:  # an object whose hash or equality raises is no function
            return
        if name not in names.setdefault(key, []):
            names[key].append(name)
            objects[key] = obj

    objects = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated aliases warn when read
        for prefix, module_name in namespaces():
            module = sys.modules.get(module_name)
            if module is None:
                continue
            for attr in _public(module):
                obj = getattr(module, attr, None)
                if obj is None or isinstance(obj, types.ModuleType):
                    continue
                name = f"{prefix}.{attr}" if prefix else attr
                add(obj, OPERATORS.get(attr, name) if module_name == "operator" else name)
                if not isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
                    for method in _public(obj):  # np.add.reduce, scipy.stats.norm.pdf
                        try:
                            add(getattr(obj, method), f"{name}.{method}")
                        except Exception:  # a property that raises when read
                            continue
    # np.r_[a, b] computes r_(a, b) (``registry.indexed_as_call``): listed as written
    for obj, fn in registry._INDEXED.values():
        for name in names.get(registry._key(obj), []):
            add(fn, f"{name}[...]")
    return {key: _aliases(objects[key], found) for key, found in names.items()}


def namespaces():
    """``NAMESPACES`` and the libraries whose topics the registry loads on demand."""
    listed = [module for _, module in NAMESPACES]
    return NAMESPACES + [(library, library) for library in registry.DEFERRED
                         if library not in listed]


def _public(obj):
    try:
        return [a for a in dir(obj) if not a.startswith("_")]
    except Exception:
        return []


def _preference(name):
    """Sort key of a function's names: Python syntax (``a + b``) first, then by namespace
    (``NAMESPACES``' order), a function before a method of an object, then alphabetically."""
    if not name.replace(".", "").replace("_", "").isalnum():
        return -1, 0, name
    prefixes = [p for p, _ in namespaces()]
    head = name.rsplit(".", 1)[0] if "." in name else ""
    rank = prefixes.index(head) if head in prefixes else len(prefixes)
    return rank, name.count("."), name.lower()


def _aliases(obj, names):
    """``names`` with the one that is ``obj``'s own name (``np.absolute``, not ``np.abs``)
    first, then by ``_preference``."""
    own = getattr(obj, "__name__", None)
    return sorted(names, key=lambda n: (_preference(n)[0], n.rpartition(".")[2] != own,
                                        len(n), n))


class Entry:
    """One function of the catalog: its names, its rules, its topic."""

    def __init__(self, names, adjoint, tangent, constant, topic):
        self.names, self.adjoint, self.tangent = names, adjoint, tangent
        self.constant, self.topic = constant, topic

    @property
    def name(self):
        return self.names[0]

    @property
    def directions(self):
        if self.constant:
            return "constant"
        if self.adjoint and self.tangent:
            return "both"
        return "reverse only" if self.adjoint else "forward only"

    @property
    def adjoint_origin(self):
        """How the gradient is had: ``written`` (an ``@adjoint`` template), ``slopes`` (derived
        from an ``@elementwise`` template's slopes, with the tangent), ``transposed``
        (``@transpose``: the tangent template transposed), or None (no gradient)."""
        return origin(self.adjoint)

    @property
    def tangent_origin(self):
        """How the tangent is had: ``written`` (a ``@tangent`` template), ``slopes`` (from an
        ``@elementwise`` template), ``linear`` (``@linear``: the function applied to the
        tangent), ``diagonal`` (``@diagonal``: the adjoint template read forwards), or None."""
        return origin(self.tangent)

    @property
    def written_twice(self):
        """Whether the adjoint and the tangent are both written by hand: the math twice."""
        return self.adjoint_origin == "written" and self.tangent_origin == "written"

    @property
    def assumptions(self):
        for rule in (self.adjoint, self.tangent):
            if rule is not None:
                text = first_paragraph(rule.template)
                if text:
                    return text
        return ""


def origin(rule):
    """``written``, ``slopes``, ``linear``, ``diagonal`` or ``transposed`` (see ``Entry``), or
    None."""
    if rule is None:
        return None
    if rule.from_slopes:
        return "slopes"
    if rule.kind == "tangent" and rule.linear_in is not None:
        return "linear"
    if rule.kind == "tangent" and rule.diagonal:
        return "diagonal"
    if rule.kind == "adjoint" and rule.transposed:
        return "transposed"
    return "written"


#: how the page shows an origin in the Adjoint and Tangent columns
SHOWN = {"written": "written", "slopes": "from slopes", "linear": "derived: linear",
         "diagonal": "derived: diagonal", "transposed": "derived: transposed", None: "-"}


def first_paragraph(template):
    """The first paragraph of a template's docstring, on one line."""
    doc = inspect.getdoc(template) or ""
    return " ".join(doc.split("\n\n")[0].split())


def topic_of(rule):
    if home(rule.template) is not Origin.RULES:
        return None
    return module_name_of(rule.template).rpartition(".")[2]


def entries():
    """Every public function with a rule, as ``Entry`` objects, and the keys of mindgrad's
    topics that have no public name (helpers, or names missing from ``NAMESPACES``)."""
    names = public_names()
    declared = registry._DECLARED_IN
    found, unnamed = [], []
    keys = list(dict.fromkeys([*registry._RULES, *registry._TANGENTS, *registry._NONDIFF]))
    for key in keys:
        adjoint, tangent = registry._RULES.get(key), registry._TANGENTS.get(key)
        constant = key in registry._NONDIFF
        if constant:
            module = declared.get(key, "")
            topic = module.rpartition(".")[2] if module.startswith("mindgrad.rules.") else None
        else:
            topic = topic_of(adjoint or tangent)
        if topic is None or topic in INTERNAL:
            continue
        if isinstance(key, tuple):  # Method("sum"), Attr("T")
            key_names = [f"x.{key[1]}"]
        else:
            key_names = names.get(key)
        if not key_names:
            unnamed.append((topic, key))
            continue
        found.append(Entry(key_names, adjoint, tangent, constant, topic))
    return found, unnamed


INTRO = """\
# Functions mindgrad differentiates

Every function below has a rule in `mindgrad/rules/`, listed by topic under the name you write
in your code. The *Derivatives* column says which modes the rule gives:

- **both**: a gradient (reverse mode: `grad`, `value_and_grad`, `vjp`, `jacrev`) and a tangent
  (forward mode: `jvp`, `jacfwd`, and the forward-over-reverse `hessian`);
- **reverse only** or **forward only**: the rule gives one of the two modes;
- **constant**: the result carries no gradient (shapes, indices, comparisons, rounding, random
  draws): nothing flows back through it, as in JAX.

*Assumptions* are the conditions under which a rule's derivative is right, from the first
paragraph of the rule's docstring. Outside them a rule raises where it can tell (a mode it does
not support, a rank it needs); the rules module linked under each heading gives the conventions
its whole topic shares (the slope at a kink, infinite derivatives at the edge of a domain). An
array method is written `x.name` (`x` an array, or a dict where the assumptions say so).
Differentiating a call of a NumPy or SciPy function missing here raises an error at your line
that names it and the rule to register (`@mindgrad.adjoint(fn)`; see the README's tour).

The *Adjoint* and *Tangent* columns say how each mode's rule is had:

- **written**: a template written by hand for that mode (`@adjoint`, `@tangent`);
- **from slopes**: an `@elementwise` template gives the slope `dout/dx` once, and both modes
  are derived from it (`d[x] = d[out] * slope`, `d[out] = d[x] * slope`);
- **derived: linear**: `@linear`, for a function linear in the arguments named: its tangent is
  the function applied to the tangent (`np.reshape(d[a], shape)`);
- **derived: diagonal**: `@diagonal`, for an elementwise function whose adjoint applies a mask
  or a helper (`np.maximum`): the adjoint template read forwards;
- **derived: transposed**: `@transpose`, for a function whose tangent calls a helper linear in
  the tangent (`reshape_tangent(d[a], a, out, order)`): the adjoint is that helper's transpose,
  its own adjoint rule (`reshape_grad(d[out], a, order)`), so the math is written once.

This page is generated from the registry by `{command}`; do not edit it
by hand. `tests/rules/test_catalog.py` fails when it is out of date.

Generated with {versions}.
"""


def versions():
    """The libraries whose names the page lists, with their versions: ``[("NumPy", "2.1.0")]``."""
    import numpy

    found = [("NumPy", numpy.__version__)]
    for library in sorted({lib.split(".")[0] for lib in registry.DEFERRED}):
        module = sys.modules.get(library)
        if module is not None:
            found.append((library.capitalize() if library != "scipy" else "SciPy",
                          getattr(module, "__version__", "?")))
    return found


def render():
    """The page, as text."""
    load()
    found, _ = entries()
    by_topic: dict = {}
    for entry in found:
        by_topic.setdefault(entry.topic, []).append(entry)
    order = [t for t in TITLES if t in by_topic] + sorted(set(by_topic) - set(TITLES))
    listed = " and ".join(f"{name} {version}" for name, version in versions())
    lines = [INTRO.format(command=COMMAND, versions=listed)]
    counted = {t: (sum(not e.constant for e in by_topic[t]), sum(e.constant for e in by_topic[t]))
               for t in order}
    for topic in order:
        differentiable, constant = counted[topic]
        parts = [f"{differentiable} differentiable"] * bool(differentiable) + \
            [f"{constant} constant"] * bool(constant)
        lines.append(f"- [{title(topic)}](#{anchor(title(topic))}): {', '.join(parts)}")
    lines.append("")
    lines += origins_section(found)
    for topic in order:
        lines += section(topic, by_topic[topic])
    return "\n".join(lines).rstrip() + "\n"


def origin_counts(found):
    """``{(mode, origin): count}`` over the differentiable entries, mode ``adjoint`` or
    ``tangent``."""
    counts: dict = {}
    for e in found:
        if e.constant:
            continue
        for mode, how in (("adjoint", e.adjoint_origin), ("tangent", e.tangent_origin)):
            if how is not None:
                counts[mode, how] = counts.get((mode, how), 0) + 1
    return counts


def origins_section(found):
    """The counts of written and derived rules, and the functions written twice."""
    counts = origin_counts(found)

    def derived(mode):
        return sum(n for (m, how), n in counts.items() if m == mode and how != "written")

    def detail(mode):
        parts = [f"{counts[mode, how]} {SHOWN[how]}"
                 for how in ("slopes", "linear", "diagonal", "transposed")
                 if counts.get((mode, how))]
        return f" ({', '.join(parts)})" if parts else ""

    twice = sorted((e for e in found if not e.constant and e.written_twice),
                   key=lambda e: (list(TITLES).index(e.topic) if e.topic in TITLES
                                  else len(TITLES), _preference(e.name)))
    lines = ["## Written and derived rules", "",
             f"- Adjoints: {counts.get(('adjoint', 'written'), 0)} written, "
             f"{derived('adjoint')} derived{detail('adjoint')}.",
             f"- Tangents: {counts.get(('tangent', 'written'), 0)} written, "
             f"{derived('tangent')} derived{detail('tangent')}.",
             f"- Functions whose adjoint and tangent are both written by hand: {len(twice)}.", ""]
    if twice:
        lines += ["Written twice: " + ", ".join(f"`{e.name}`".replace("|", "\\|")
                                                for e in twice), ""]
    return lines


def title(topic):
    if topic in TITLES:
        return TITLES[topic]
    module = sys.modules.get(f"mindgrad.rules.{topic}")
    doc = inspect.getdoc(module) or topic
    return doc.split("\n")[0].rstrip(".")


def anchor(text):
    """GitHub's anchor of a heading."""
    kept = "".join(c for c in text.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def section(topic, found):
    path = f"mindgrad/rules/{topic}.py"
    lines = [f"## {title(topic)}", "", f"Rules and their conventions: [{path}](../{path})", ""]
    ordered = sorted(found, key=lambda e: _preference(e.name))
    differentiable = [e for e in ordered if not e.constant]
    constants = [e for e in ordered if e.constant]
    if differentiable:
        lines += ["| Function | Derivatives | Adjoint | Tangent | Assumptions |",
                  "|---|---|---|---|---|"]
        for e in differentiable:
            lines.append(f"| {cell_names(e.names)} | {e.directions} | "
                         f"{SHOWN[e.adjoint_origin]} | {SHOWN[e.tangent_origin]} | "
                         f"{markdown(e.assumptions)} |")
        lines.append("")
    if constants:
        listed = ", ".join(cell_names(e.names) for e in constants)
        lines += [f"Constants (no gradient): {listed}", ""]
    return lines


def cell_names(names):
    """``np.absolute`` (also ``np.abs``), escaped for a table cell."""
    shown = [f"`{n}`".replace("|", "\\|") for n in names]
    return shown[0] + (f" (also {', '.join(shown[1:])})" if len(shown) > 1 else "")


def markdown(text):
    """A docstring's reStructuredText literals as Markdown code, escaped for a table cell."""
    return text.replace("``", "`").replace("|", "\\|")


def main(argv=None):
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help=f"exit 1 if {PAGE} differs from what the registry gives")
    parser.add_argument("--output", type=pathlib.Path, default=PAGE, help="where to write")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is out of date: run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
