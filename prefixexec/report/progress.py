"""A small progress bar on stderr for runs that take more than a moment (spec: REP-PROGRESS).

Nothing is shown until ``delay`` seconds have passed, so quick runs stay silent; then each step
redraws one line in place on a terminal, or prints one line per step otherwise (log files stay
readable). ``enabled=False`` (``--quiet``) never writes anything.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

#: Seconds before the bar first appears.
DELAY = 0.5
#: Width of the bar in characters.
WIDTH = 24


class Progress:
    """Counts ``total`` steps; :meth:`step` announces the next one, :meth:`close` ends the line."""

    def __init__(
        self,
        total: int,
        *,
        enabled: bool = True,
        stream: TextIO | None = None,
        delay: float = DELAY,
        clock: Callable[[], float] = time.monotonic,
        label: str = "prefixexec",
    ) -> None:
        self.total = max(total, 1)
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.clock = clock
        self.label = label
        self.start = clock()
        self.done = 0
        self.shown = False
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def step(self, what: str) -> None:
        """Start the next step, described by ``what``."""
        self.done = min(self.done + 1, self.total)
        if not self.enabled or self.clock() - self.start < self.delay:
            return
        filled = WIDTH * (self.done - 1) // self.total
        bar = "#" * filled + "-" * (WIDTH - filled)
        line = f"{self.label} [{bar}] {self.done}/{self.total} {what}"
        if self.tty:
            self.stream.write("\r\x1b[2K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        """End the bar (a final newline on a terminal)."""
        if self.shown and self.tty:
            self.stream.write("\n")
            self.stream.flush()
