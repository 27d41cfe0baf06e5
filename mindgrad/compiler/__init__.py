"""The compiler: source in, a derivative's Python out. ``pipeline`` holds the stages, executable
and in order (``pipeline.PARSE``, ``REVERSE`` or ``FORWARD``, ``FINISH``); ``driver`` runs them
for a function and every function it calls; ``cache`` keeps what it built per call signature."""
