"""The stages optimize, emit and compile: what the code does not need removed (``optimize``),
the functions assembled (``assemble``), printed and compiled (``emit``)."""
