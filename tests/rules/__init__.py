"""mindgrad.rules: the registry, and every rule checked numerically in both directions."""
