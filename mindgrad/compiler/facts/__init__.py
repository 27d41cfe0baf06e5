"""The activity stage: what carries a gradient (``analysis``, ``activity``) and which names may
share memory (``aliasing``)."""
