"""A stage or pass that can be left out while a block runs: ``with gather.off(): ...`` builds
gradients without it (to compare against, or for code another compiler reads again). The
caller keeps what it builds in the block apart from the cache of gradients built with it."""

from __future__ import annotations

import contextlib


class Switch:
    """Truthy while the stage runs; ``off()`` is a context manager that turns it off."""

    def __init__(self):
        self.on = True

    def __bool__(self) -> bool:
        return self.on

    @contextlib.contextmanager
    def off(self):
        was, self.on = self.on, False
        try:
            yield
        finally:
            self.on = was
