"""The compiler: source in, a derivative's Python out. ``driver`` runs the stages in order
(``driver.STAGES``), ``cache`` keeps what it built per call signature."""
