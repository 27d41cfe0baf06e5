"""mindgrad's own rules: importing this module registers every topic module of the package.

The registry (``mindgrad.rules``) imports none of them; they import it. Every module of the
package is a topic module (sorted by name, so the order is fixed) but the registry's own
(``NOT_TOPICS``), this one and ``catalog``, which writes the list of rules; one that fails to
import fails ``import mindgrad`` loudly. The topics for optional libraries (``DEFERRED`` of the
registry: SciPy's) are not imported here: the registry loads them once the program has imported
the library.
"""

import importlib
import pkgutil

import mindgrad.rules as _package

# the registry's own modules, the helpers topics share, this module and the catalog
NOT_TOPICS = {"builtin", "catalog", "derivation", "evaluate", "helpers", "markers", "registry",
              "template"}
TOPICS = sorted(m.name for m in pkgutil.iter_modules(_package.__path__)
                if m.name not in NOT_TOPICS and m.name not in _package.DEFERRED.values())

for _name in TOPICS:
    importlib.import_module(f"mindgrad.rules.{_name}")
