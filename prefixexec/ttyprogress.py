"""Progress of long commands on a terminal only (spec: PROGRESS-TTY, PROGRESS-QUIET).

A command's progress goes to stderr when stderr is a terminal and ``--quiet`` was not given;
piped or redirected, nothing is written (a log or a caller reading stderr sees only errors and
notices). The bar is :class:`prefixexec.report.progress.Progress` (rich on a terminal), shown
only once a run has taken longer than its delay.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prefixexec.report.progress import Progress


def tty_progress(args: argparse.Namespace, total: int, label: str) -> Progress:
    """A progress bar for ``total`` steps, enabled on a terminal's stderr without ``--quiet``."""
    from prefixexec.report import progress as _progress

    enabled = not getattr(args, "quiet", False) and bool(getattr(sys.stderr, "isatty", lambda: False)())
    return _progress.Progress(total, enabled=enabled, label=label, delay=_progress.DELAY)


@contextlib.contextmanager
def tty_status(args: argparse.Namespace, text: str) -> Iterator[None]:
    """A spinner with ``text`` and the elapsed time on a terminal's stderr while the block runs
    (for a step without countable parts, such as an audit); nothing when piped or ``--quiet``."""
    if getattr(args, "quiet", False) or not bool(getattr(sys.stderr, "isatty", lambda: False)()):
        yield
        return
    from rich.console import Console

    with Console(file=sys.stderr, force_terminal=True, highlight=False).status(text):
        yield


@contextlib.contextmanager
def tty_steps(args: argparse.Namespace, label: str) -> Iterator[Callable[[str], None]]:
    """Like :func:`tty_status`, for a command made of named steps: yields ``step(text)``, which
    shows ``label: text`` with the spinner (a no-op when piped or ``--quiet``)."""
    if getattr(args, "quiet", False) or not bool(getattr(sys.stderr, "isatty", lambda: False)()):
        yield lambda text: None
        return
    from rich.console import Console

    with Console(file=sys.stderr, force_terminal=True, highlight=False).status(label) as status:
        yield lambda text: status.update(f"{label}: {text}")
