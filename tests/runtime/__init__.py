"""mindgrad.runtime: the helpers generated code calls."""
