"""Progress of long commands on a terminal only (spec: PROGRESS-TTY, PROGRESS-QUIET).

A command's progress goes to stderr when stderr is a terminal and ``--quiet`` was not given;
piped or redirected, nothing is written (a log or a caller reading stderr sees only errors and
notices). Long work is counted (:class:`Work`: rollouts read, datasets bootstrapped, tasks
audited, vectors checked) with the time left once a total is known (PROGRESS-COUNT); the step
bar is :class:`prefixexec.report.progress.Progress` (rich on a terminal), shown only once a run
has taken longer than its delay.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any


def _on_terminal(quiet: bool) -> bool:
    return not quiet and bool(getattr(sys.stderr, "isatty", lambda: False)())


class Work:
    """PROGRESS-COUNT: one command's counted progress on a terminal's stderr, one line redrawn in
    place: ``LABEL: PHASE  DONE/TOTAL  UNIT  elapsed  ~LEFT left`` (the time left once a total is
    known and some work is done; a rate, ``N UNIT/s``, without a total). Nothing is written
    piped, with ``--quiet``, or before ``delay`` seconds have passed; the line is erased at the end.
    """

    def __init__(
        self,
        quiet: bool,
        label: str,
        *,
        delay: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        from prefixexec.report import progress as _progress

        self.enabled = _on_terminal(quiet)
        self.label = label
        self.delay = _progress.DELAY if delay is None else delay
        self.clock = clock
        self.start = clock()
        self.phase_start = self.start
        self.text = ""
        self.unit = ""
        self.total: int | None = None
        self.done = 0
        self.shown = False
        self._width = 0

    def phase(self, text: str, total: int | None = None, unit: str = "") -> None:
        """Start a phase of ``total`` units (``None``: not known ahead)."""
        self.text, self.total, self.unit, self.done = text, total, unit, 0
        self.phase_start = self.clock()
        self._draw()

    def advance(self, n: int = 1) -> None:
        self.done += n
        self._draw()

    def progress(self, done: int, total: int) -> None:
        """``done`` of ``total`` units of the phase (a callback that knows its total: the
        bootstrap's blocks, BOOT-PROGRESS)."""
        self.done, self.total = done, total
        self._draw()

    def line(self) -> str:
        """The text of the progress line now."""
        now = self.clock()
        spent = now - self.phase_start
        parts = [f"{self.label}: {self.text}"]
        unit = f" {self.unit}" if self.unit else ""
        if self.total is not None:
            parts.append(f"{self.done:,}/{self.total:,}{unit}")
            if 0 < self.done < self.total:
                parts.append(f"~{_duration(spent * (self.total - self.done) / self.done)} left")
        elif self.done:
            rate = self.done / spent if spent > 0 else 0.0
            parts.append(f"{self.done:,}{unit}" + (f" ({rate:,.0f}/s)" if rate else ""))
        parts.append(f"{_duration(now - self.start)} elapsed")
        return "  ".join(parts)

    def _draw(self) -> None:
        if not self.enabled or self.clock() - self.start < self.delay:
            return
        text = self.line()
        sys.stderr.write("\r" + text.ljust(self._width))
        sys.stderr.flush()
        self._width = len(text)
        self.shown = True

    def close(self) -> None:
        """Erase the line (nothing was left on the terminal)."""
        if self.shown:
            sys.stderr.write("\r" + " " * self._width + "\r")
            sys.stderr.flush()
            self.shown = False

    def __enter__(self) -> Work:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _duration(seconds: float) -> str:
    """``4 s``, ``2 min 05 s``, ``1 h 03 min``."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"
