"""A small progress bar on stderr for runs that take more than a moment (spec: REP-PROGRESS).

Nothing is shown until ``delay`` seconds have passed, so quick runs stay silent; then on a
terminal a ``rich`` progress bar (bar, steps done of all, elapsed time, time left, the current
step) is redrawn in place;
when stderr is not a terminal nothing is written, and ``enabled=False`` (``--quiet``) never
writes anything either.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

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
        self._bar: Any = None
        self._task: Any = None

    def _rich_step(self, what: str) -> None:
        """Draw the step with a rich progress bar on the terminal (started on first use)."""
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as Bar

        if self._bar is None:
            console = Console(file=self.stream, force_terminal=True, highlight=False)
            self._bar = Bar(
                TextColumn("{task.fields[label]}"),
                BarColumn(bar_width=WIDTH),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("left"),
                TimeRemainingColumn(),
                TextColumn("{task.description}"),
                console=console,
                transient=False,
                auto_refresh=False,
            )
            self._task = self._bar.add_task(what, total=self.total, label=self.label)
            self._bar.start()
        self._bar.update(self._task, completed=self.done, description=what)
        self._bar.refresh()

    def step(self, what: str) -> None:
        """Start the next step, described by ``what``."""
        self.done = min(self.done + 1, self.total)
        if not self.enabled or self.clock() - self.start < self.delay:
            return
        if not self.tty:  # piped or redirected: nothing (PROGRESS-TTY)
            return
        self.shown = True
        self._rich_step(what)

    def close(self) -> None:
        """End the bar (a final newline on a terminal)."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
