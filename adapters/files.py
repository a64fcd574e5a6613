"""Writing output files atomically (spec: REC-ERRORS: no partial output)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import InputError


def output_directory(path: str) -> Path:
    """The existing directory ``path`` will be written into; InputError if there is none."""
    directory = Path(path).parent
    if not directory.is_dir():
        raise InputError(path, f"cannot write: directory {str(directory)!r} does not exist")
    return directory


@contextmanager
def atomic_path(target: Path, suffix: str = "") -> Iterator[str]:
    """A temporary file beside ``target`` to write; it replaces ``target`` only on success.

    On success the file gets the usual mode (0666 less the umask; ``mkstemp`` makes it 0600) and
    is renamed over ``target``; on any exception it is removed, so nothing partial is left.
    """
    fd, tmp = tempfile.mkstemp(prefix=".prefixexec-", suffix=suffix, dir=target.parent)
    os.close(fd)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
