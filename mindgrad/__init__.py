"""mindgrad: source-to-source automatic differentiation for Python and NumPy."""

from mindgrad import rules as _rules

_rules._load_builtin_rules()
