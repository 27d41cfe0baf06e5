"""The registry: the tables of adjoint and tangent rules and of constants, the decorators that
fill them (``adjoint``, ``tangent``, ``elementwise``, ``linear``, ``linear_in``, ``diagonal``,
``nondifferentiable``, and the ``_method``/``_attr`` forms for arrays), the lookups the compiler
makes, the version that cached gradients are checked against, and the topics of optional
libraries loaded once the program imports them (``DEFERRED``).
"""

from __future__ import annotations

import importlib
import inspect
import sys
import threading

from mindgrad.rules.markers import Attr, Method
from mindgrad.rules.template import Rule
from mindgrad.runtime import zero_in_zero_out
from mindgrad.runtime.origin import origin

_RULES: dict = {}
_TANGENTS: dict = {}
_TRANSPOSES: dict = {}  # a tangent helper -> its transpose in its tangent (``transpose_of``)
_NONDIFF: set = set()
_DECLARED_IN: dict = {}  # a constant's key -> the module that declared it (the catalog's topic)
_version = 0
_version_lock = threading.Lock()
_quiet = threading.local()  # the registrations of deferred topics (``_load_deferred``)


# Rules for optional libraries, by the module they are for: a topic module of this package
# imported only once the program itself has imported that library. A lookup that finds no rule
# loads the topics of the libraries now in sys.modules (``_load_deferred``), so `import
# mindgrad` imports none of them, and mindgrad works where they are not installed.
DEFERRED = {"scipy.special": "scipy_special", "scipy.stats": "scipy_stats",
            "scipy.linalg": "scipy_linalg", "scipy.signal": "scipy_signal",
            "scipy.integrate": "scipy_integrate"}
_pending = dict(DEFERRED)


def _load_deferred() -> bool:
    """Register the rules of the optional libraries imported since the last call; whether any
    were.

    Their registrations leave the registry's version as it was: code built before could not
    reach these functions (looking one up would have missed and loaded them), so it stays
    valid, and the build that triggers the load is not rebuilt at its next call. Only this
    thread's registrations are quiet: one another thread makes meanwhile still counts."""
    loaded = False
    for library, topic in list(_pending.items()):
        if library in sys.modules:
            _quiet.loading = getattr(_quiet, "loading", 0) + 1
            try:
                importlib.import_module(f"mindgrad.rules.{topic}")
            finally:
                _quiet.loading -= 1
            _pending.pop(library, None)
            loaded = True
    return loaded


def _find(table, fn):
    """``table``'s entry for ``fn``, loading the deferred rules when it has none yet."""
    def get():
        try:
            return table.get(_key(fn))
        except TypeError:
            return None

    found = get()
    if found is None and _pending and _load_deferred():
        found = get()
    return found


def registry_version() -> int:
    """Bumped by every registration, so cached gradients built before it are rebuilt."""
    return _version


def _bump():
    global _version
    if getattr(_quiet, "loading", 0):
        return
    with _version_lock:
        _version += 1


def _key(fn):
    try:
        hash(fn)
        return fn
    except TypeError:
        return id(fn)


def elementwise(*fns, singular=False):
    """Register the adjoint and the tangent of elementwise functions from their slopes, one
    per argument, ``dout/dx``::

        @elementwise(np.tanh, math.tanh)
        def _(out, x):
            slope[x] = 1.0 - out * out

    gives ``d[x] = d[out] * (1.0 - out * out)`` (reverse mode) and ``d[out] = d[x] * (1.0 -
    out * out)`` (forward mode). A template may assign temporaries before its slopes. For a
    function of several arguments (``np.arctan2``) the gradients are summed back to each
    argument's shape, and the tangents broadcast to the output's (see ``from_slopes_body``); an
    argument without a slope (the sign of ``np.copysign``) gets no gradient.

    ``singular=True`` for a function whose slope is inf or NaN on part of its domain (a pole,
    or outside the domain: ``np.log``, ``np.sqrt``, ``x / y``): its gradient is
    ``times_slope(d[out], s)``, 0 wherever ``d[out]`` is 0, so that the branch ``np.where``
    did not take gives no NaN; so are its results' (``compiler.expand.unbounded_names``). A
    slope finite wherever its operands are (``np.tanh``, ``2 * x`` for ``x ** 2``) reading
    none of those is the plain product. A function finite at a pole of its slope (``np.sqrt``
    at 0) writes the slope with ``rules.helpers.quotient`` or ``power``
    (``slope[x] = quotient(0.5, out)``): no NumPy warning there, where the user's function
    gave none, and its tangent is ``times_slope`` too.
    """
    if not fns:
        raise TypeError("elementwise() needs at least one function to register a rule for")

    def decorate(template):
        _register(fns, template, "adjoint", from_slopes=True, singular=singular)
        _register(fns, template, "tangent", from_slopes=True)
        return template

    return decorate


def _register(keys, template, kind="adjoint", **derive):
    table = _TANGENTS if kind == "tangent" else _RULES
    # a user's rule is checked when registered, so a malformed one fails at its decorator;
    # mindgrad's own are tested, and parsed when first used
    lazy = origin(template).is_mindgrad
    for key in keys:
        table[_key(key)] = Rule(key, template, kind, lazy=lazy, **derive)
        if kind == "adjoint":  # a tangent alone does not make a function differentiable
            _NONDIFF.discard(_key(key))
    _bump()
    return template


def linear(*fns, wrt=None, via=None, added=()):
    """Derive the tangent of functions linear in some of their arguments from a template's
    signature: the function applied to the tangent. Stack it on the hand-written adjoint::

        @linear(np.reshape)                  # d[out] = np.reshape(d[a], shape, order)
        @adjoint(np.reshape)
        def _(out, a, shape=None, order="C", *, copy=None):
            d[a] = np.reshape(d[out], np.shape(a))

    ``wrt`` names the parameters the function is linear in (the first one by default); naming
    several makes it multilinear, one term per parameter: ``@linear(np.dot, wrt=("a", "b"))``
    gives ``d[out] = np.dot(d[a], b)`` and ``d[out] = np.dot(a, d[b])``. Keys made by
    ``adjoint_method``/``adjoint_attr`` names work too: ``linear(("method", "ravel"))``.
    ``via`` is the function the tangent applies where it is not each key itself: the one that
    implements an operator or a method (``@linear(operator.matmul, np.matmul, via=np.matmul)``
    gives ``np.matmul(d[x], y)`` for both; a method's receiver is then passed first).
    ``added`` names parameters whose value the function adds to its result, as ``np.sum``'s
    ``initial``: affine, not linear, in them. The call applied to a tangent leaves them at
    their defaults, and each adds its own tangent, broadcast to the result:
    ``@linear(np.sum, added=("initial",))`` gives ``d[out] = np.sum(d[a], axis, ...)`` and
    ``d[out] = broadcast_tangent(d[initial], out)``.
    """
    if not fns:
        raise TypeError("linear() needs at least one function to register a rule for")
    if isinstance(wrt, str):
        wrt = (wrt,)

    def decorate(template):
        params = list(inspect.signature(template).parameters)[1:]
        names = tuple(wrt) if wrt is not None else tuple(params[:1])
        return _register(fns, template, "tangent", linear_in=names, via=via,
                         added=tuple(added))

    return decorate


def linear_method(*names, wrt=None, via=None):
    """``@linear(Method(name), ...)`` for each of the array methods ``names``."""
    return linear(*map(Method, names), wrt=wrt, via=via)


def linear_attr(*names):
    """``@linear(Attr(name), ...)`` for each of the array attributes ``names``."""
    return linear(*map(Attr, names))


def linear_in(*names, keeps_values=False, any_number=False):
    """Declare a helper of gradient code linear in its arguments ``names`` (its gradient, and
    the factors of a product) and constant in the others, which it reads for shapes, dtypes,
    masks or orders::

        @linear_in("g", "y")
        def matmul_grad_x(g, x, y):
            ...

    Two things follow, and neither is written again. Its tangent (forward mode over gradient
    code) is derived from its own signature: ``d[out] = matmul_grad_x(d[g], x, y)`` and
    ``d[out] = matmul_grad_x(g, x, d[y])``. And a symbolic zero in any of ``names`` gives the
    symbolic zero, which the helper does not test for: ``runtime.zero_in_zero_out`` says who
    does. A helper that also moves with another argument (``norm_grad`` with ``x``) declares
    only its zero (``runtime.zero_in_zero_out``) and has its tangent written out.
    ``keeps_values``: given values, it returns a value, never the 0 (as
    ``runtime.takes_zero``), which lets the optimizer drop later guards. ``any_number``: its
    first test is ``runtime.is_any_zero`` of its gradient (the first of ``names``), so a rule
    passing ``d[out]`` to it needs no guard (as ``takes_zero(any_number=True)``); one that
    also keeps values returns ``runtime.zero_for(g, x)`` there, a value for a number 0.
    """
    def decorate(fn):
        lazy = origin(fn).is_mindgrad
        zero_in_zero_out(*names, keeps_values=keeps_values)(fn)
        if any_number:
            fn.takes_any_zero = True
        _TANGENTS[_key(fn)] = Rule(fn, fn, "tangent", lazy=lazy, linear_in=names)
        _bump()
        return fn

    return decorate


def diagonal(*fns):
    """Derive the tangent of elementwise functions whose derivative is applied by a helper or a
    mask rather than a slope (``np.maximum``, ``np.where``) from the adjoint template below it::

        @diagonal(np.maximum)
        @adjoint(np.maximum)
        def _(out, x, y):
            d[x] = unbroadcast(maximum_grad(d[out], x, y), x)
            ...

    gives ``d[out] = broadcast_tangent(maximum_grad(d[x], x, y), out)``. An elementwise
    function has a diagonal (real) Jacobian: the map an adjoint applies to ``d[out]`` is its
    own transpose, so the tangent applies it to ``d[x]``; ``unbroadcast(e, x)``, the transpose
    of broadcasting, becomes ``broadcast_tangent(e, out)``.
    """
    if not fns:
        raise TypeError("diagonal() needs at least one function to register a rule for")

    def decorate(template):
        return _register(fns, template, "tangent", diagonal=True)

    return decorate


def transpose(*fns):
    """Derive the adjoint of ``fns`` from the tangent template below it, by transposing it::

        @transpose(np.reshape)
        @tangent(np.reshape)
        def _(out, a, shape=None, order="C", *, copy=None):
            d[out] = reshape_tangent(d[a], a, out, order)

    gives ``d[a] = reshape_grad(d[out], a, order)``: each ``d[out] = h(..., d[x], ...)`` calls
    a function linear in the tangent it takes, and ``h``'s own adjoint rule, the transpose of
    that linear map, gives ``d[x]`` from ``d[out]`` (``derivation.transposed_body``). The
    nonlinear math is written once, in the tangent; only the linear helper has its transpose
    written, once for every function whose tangent calls it.
    """
    if not fns:
        raise TypeError("transpose() needs at least one function to register a rule for")

    def decorate(template):
        return _register(fns, template, "adjoint", transposed=lookup_transpose)

    return decorate


def transpose_of(*helpers):
    """Register the transpose of tangent helpers in their tangent argument, for ``@transpose``
    to read, where the helper is linear in that tangent but moves with its other arguments too
    (``prod_tangent(t, a, ...)``, a product of ``t`` with slopes of ``a``)::

        @transpose_of(prod_tangent)
        def _(out, t, a, ans, axis=None, keepdims=False, initial=1, where=True):
            d[t] = prod_grad(d[out], a, axis, keepdims, initial, where)

    It is not the helper's adjoint rule: it says nothing of ``a``, so reverse mode over tangent
    code still differentiates the helper from its source, whole. A helper constant in its other
    arguments (a mask, a shape) registers a full adjoint rule instead (``@adjoint`` with
    ``@linear_in``), which ``@transpose`` reads too.
    """
    if not helpers:
        raise TypeError("transpose_of() needs at least one helper to register a transpose for")

    def decorate(template):
        lazy = origin(template).is_mindgrad
        for helper in helpers:
            _TRANSPOSES[_key(helper)] = Rule(helper, template, "adjoint", lazy=lazy)
        _bump()
        return template

    return decorate


def lookup_transpose(fn):
    """The transpose of a tangent helper ``fn`` (``transpose_of``), or else its adjoint rule."""
    found = _find(_TRANSPOSES, fn)
    return found if found is not None else lookup(fn)


def tangent(*fns):
    """Register a forward-mode (tangent) rule template for ``fns``::

        @tangent(np.tanh)
        def _(out, x):
            d[out] = d[x] * (1.0 - out * out)

    ``d[x]`` is the tangent of argument ``x``; each ``d[out] = ...`` adds one input's
    contribution to the output's tangent.
    """
    if not fns:
        raise TypeError("tangent() needs at least one function to register a rule for")

    def decorate(template):
        return _register(fns, template, "tangent")

    return decorate


def tangent_method(*names):
    """``@tangent(Method(name), ...)`` for each of the array methods ``names``."""
    return tangent(*map(Method, names))


def tangent_attr(*names):
    """``@tangent(Attr(name), ...)`` for each of the array attributes ``names``."""
    return tangent(*map(Attr, names))


def lookup_tangent(fn):
    return _find(_TANGENTS, fn)


def lookup_tangent_method(name):
    return _TANGENTS.get(Method(name))


def lookup_tangent_attr(name):
    return _TANGENTS.get(Attr(name))


def adjoint(*fns, singular=False):
    """Register a gradient-rule template for the functions ``fns`` (see the module docstring).
    ``singular``: as for ``@elementwise``, the functions' results may be inf or NaN where their
    arguments are finite (``np.float_power(x, 0.5)`` below 0), and the products with slopes
    reading them are ``times_slope``."""
    if not fns:
        raise TypeError("adjoint() needs at least one function to register a rule for")

    def decorate(template):
        return _register(fns, template, singular=singular)

    return decorate


def adjoint_method(*names):
    """``@adjoint(Method(name), ...)`` for each of the array methods ``names`` (the receiver
    follows ``out``)."""
    return adjoint(*map(Method, names))


def adjoint_attr(*names):
    """``@adjoint(Attr(name), ...)`` for each of the array attributes ``names``:
    ``def _(out, x)``."""
    return adjoint(*map(Attr, names))


def nondifferentiable(*fns):
    """Declare ``fns`` as having no gradient: their results are constants."""
    module = inspect.currentframe().f_back.f_globals.get("__name__")
    for fn in fns:
        _NONDIFF.add(_key(fn))
        _DECLARED_IN[_key(fn)] = module
        _RULES.pop(_key(fn), None)
        _TANGENTS.pop(_key(fn), None)
    _bump()


_INDEXED: dict = {}  # an object whose obj[...] computes (np.r_) -> the function computing it


def indexed_as_call(obj, fn):
    """Declare that ``obj[a, b, ...]`` computes ``fn(a, b, ...)`` (a slice ``i:j`` passed as
    ``slice(i, j)``): the transformer writes the call, and ``fn``'s rules differentiate it."""
    _INDEXED[id(obj)] = (obj, fn)
    _bump()


def index_call(obj):
    """The function ``obj[...]`` computes as a call (``indexed_as_call``), or None."""
    found = _INDEXED.get(id(obj))
    return found[1] if found is not None and found[0] is obj else None


def lookup(fn):
    """The rule for ``fn``, or None."""
    return _find(_RULES, fn)


def lookup_method(name):
    return _RULES.get(Method(name))


def lookup_attr(name):
    return _RULES.get(Attr(name))


def is_nondifferentiable(fn) -> bool:
    def get():
        try:
            return _key(fn) in _NONDIFF
        except TypeError:
            return False

    return get() or bool(_pending) and _load_deferred() and get()
