"""mindgrad's own rules: importing this module registers every topic module, in order.

The registry (``mindgrad.rules``) imports none of them; they import it. A topic module that
fails to import fails ``import mindgrad`` loudly.
"""

import importlib

for _name in ("builtins_math", "operators", "numpy_elementwise", "numpy_reductions",
              "numpy_shape", "numpy_linalg", "methods", "nondiff", "forward_operators",
              "forward_builtins_math", "forward_numpy_elementwise", "forward_numpy_reductions",
              "forward_numpy_shape", "forward_numpy_linalg", "forward_methods", "forward_runtime",
              "runtime_rules"):
    importlib.import_module(f"mindgrad.rules.{_name}")
