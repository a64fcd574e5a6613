"""Writing output files (spec: REC-ERRORS: no partial output; spec/hostile.md HOSTILE-OUTPUT-*).

* Regular files are written atomically: a temporary file beside the target, renamed over it only
  on success and removed on any exception (including SIGINT/SIGTERM, which the command line turns
  into exceptions), so nothing partial and no ``.prefixexec-XXXX`` file is left.
* Special files (a character device such as ``/dev/null``, a FIFO, ``/dev/stdout``) are written
  directly: renaming over them would replace the device or the link with a regular file.
* An output that is one of the inputs (same device and inode, also through symbolic links) is
  refused, as is an output naming a directory, and the folder is checked for writability
  before any input is read (:func:`check_outputs`).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from .errors import InputError

if TYPE_CHECKING:
    from pathlib import Path

# pathlib and tempfile are imported where they are used: a command that writes no file (score to
# the terminal) does not load them (start-up, #16).

#: (device, inode) of the input files of the running command (set by :func:`set_inputs`).
_INPUTS: dict[tuple[int, int], str] = {}


#: The most files of input directories (a ToolSandbox run) remembered as inputs.
MAX_DIRECTORY_INPUTS = 100_000


def set_inputs(paths: Iterable[str]) -> None:
    """Remember the inputs of this command, which no output may replace (HOSTILE-OUTPUT-INPUT):
    the files it reads and, for a directory, the regular files inside it (a run directory's
    files are read too)."""
    _INPUTS.clear()
    for path in paths:
        if path == "-":
            continue
        try:
            info = os.stat(path)
        except OSError:
            continue  # the reader names a missing or unreadable input
        if stat.S_ISREG(info.st_mode):
            _INPUTS[(info.st_dev, info.st_ino)] = path
        elif stat.S_ISDIR(info.st_mode):
            _directory_inputs(path)


def _directory_inputs(folder: str) -> None:
    seen = 0
    for root, _, names in os.walk(folder):
        for name in names:
            seen += 1
            if seen > MAX_DIRECTORY_INPUTS:
                return
            path = os.path.join(root, name)
            try:
                info = os.stat(path)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                _INPUTS.setdefault((info.st_dev, info.st_ino), path)


def _special(path: str) -> bool:
    """Whether ``path`` exists and is written directly: not a regular file (a device, a FIFO, a
    socket), or a file descriptor's name (``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``)."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode):
        return not stat.S_ISDIR(info.st_mode)
    # /dev/stdout -> /proc/self/fd/1 may be a regular file the shell opened: write through it.
    name = os.path.abspath(path)
    return os.path.realpath(path).startswith("/proc/") or name.startswith(("/dev/std", "/dev/fd/", "/proc/"))


def output_directory(path: str) -> Path:
    """The existing, writable directory ``path`` will be written into; InputError if there is
    none, if ``path`` names a directory, or if it is one of the inputs (HOSTILE-OUTPUT-*)."""
    from pathlib import Path

    if not path:
        raise InputError("--output", "is empty: name a file to write")
    try:
        info: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise InputError(path, f"cannot write: {exc.strerror or exc}") from None
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            raise InputError(path, "is a directory: name a file to write")
        _not_an_input(path)
        if _special(path):
            if not os.access(path, os.W_OK):
                raise InputError(path, "cannot write: permission denied")
            return Path(path).parent
    directory = Path(os.path.realpath(path)).parent
    if not directory.is_dir():
        raise InputError(path, f"cannot write: directory {str(Path(path).parent)!r} does not exist")
    _probe(path, directory)
    return directory


def _probe(path: str, directory: Path) -> None:
    """InputError unless a file can be made in ``directory`` (a real probe: ``os.access`` says
    yes to root on a read-only file system)."""
    import tempfile

    try:
        fd, probe = tempfile.mkstemp(prefix=".prefixexec-", dir=directory)
    except OSError as exc:
        raise InputError(
            path, f"cannot write: directory {str(directory)!r} is not writable ({exc.strerror})"
        ) from None
    os.close(fd)
    os.unlink(probe)


def _not_an_input(path: str) -> None:
    try:
        info = os.stat(path)
    except OSError:
        return
    first = _INPUTS.get((info.st_dev, info.st_ino))
    if first is not None:
        raise InputError(path, f"is the input file {first!r}: refusing to overwrite an input")


def output_identity(path: str) -> tuple[object, ...] | None:
    """What makes two output paths the same file: device and inode of an existing file, else the
    real folder and the name; ``None`` for a special file (a device such as ``/dev/null``, a FIFO,
    ``/dev/stdout``), which is written directly and may take several outputs."""
    if _special(path):
        return None
    try:
        info = os.stat(path)
    except OSError:
        folder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
        return ("new", folder, os.path.basename(os.path.abspath(path)))
    return ("file", info.st_dev, info.st_ino)


def check_distinct(outputs: Iterable[tuple[str, str]]) -> None:
    """Refuse two outputs on one file (HOSTILE-OUTPUT-TWICE): ``(option, path)`` pairs, e.g.
    ``--output same.jsonl --rollouts same.jsonl``, where one output would silently replace the
    other."""
    seen: dict[tuple[object, ...], str] = {}
    for option, path in outputs:
        key = output_identity(path)
        if key is None:
            continue
        if key in seen:
            what = f"is also the file of {seen[key]}: two outputs cannot share one file"
            raise InputError(path, what + " (HOSTILE-OUTPUT-TWICE)")
        seen[key] = option


def check_outputs(paths: Iterable[str | None], folder: str | None = None) -> None:
    """Check every output path given on the command line before any input is read
    (HOSTILE-OUTPUT-EARLY); ``folder``: an output folder (``report --out``), which may be
    missing but must not be a file."""
    for path in paths:
        if path is not None:
            output_directory(path)
    if folder is not None:
        if not folder:
            raise InputError("--out", "is empty: name a folder to write")
        _not_an_input(folder)
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise InputError(folder, "cannot write the report: exists and is not a directory")
        from pathlib import Path

        existing = Path(os.path.abspath(folder))
        while not existing.exists():  # the folder is made if missing: its nearest existing parent
            existing = existing.parent
        _probe(folder, existing)


def check_report_file(path: str) -> None:
    """A file a report will write (HOSTILE-REPORT): not a directory, not an input, not a
    special file (a report's files are regular files, renamed into place)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(path, f"cannot write the report: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(path, "cannot write the report: a directory has this file's name")
    _not_an_input(path)
    if _special(path):
        raise InputError(path, "cannot write the report: not a regular file (a device, FIFO or socket)")


@contextmanager
def _write_faults(path: str) -> Iterator[None]:
    """HOSTILE-ERROR-PATH: a write that the system fails (a full disk: ``/dev/full``) names the
    output, not ``input``; a closed pipe stays a BrokenPipeError (HOSTILE-PIPE)."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise InputError(path, f"cannot write: {exc.strerror or exc}") from None


def _fifo_writer(path: str) -> int | None:
    """A descriptor writing to the FIFO ``path`` (``None`` when it is not one).

    HOSTILE-OUTPUT-SPECIAL: a FIFO is written directly, but opening it to write waits until a
    reader opens it, which may never happen (``leaderboard --output FIFO`` blocked). It is opened
    without waiting: with no reader the run ends with an error instead."""
    try:
        if not stat.S_ISFIFO(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise InputError(
                path, "is a FIFO that no one reads: start its reader first (nothing is waited for)"
            ) from None
        raise InputError(path, f"cannot write: {exc.strerror or exc}") from None
    os.set_blocking(fd, True)
    return fd


@contextmanager
def atomic_path(target: Path, suffix: str = "") -> Iterator[str]:
    """A path to write that replaces ``target`` only on success.

    A regular file (or a new one) is written to a temporary file beside the real target
    (symbolic links are followed, so a link keeps pointing at the new file); on success the
    file gets the usual mode (0666 less the umask; ``mkstemp`` makes it 0600) and is renamed
    over the target; on any exception (also KeyboardInterrupt or SystemExit from a signal) it is
    removed, so nothing partial is left. A special file (device, FIFO, ``/dev/stdout``) is
    written directly (HOSTILE-OUTPUT-SPECIAL).
    """
    if _special(str(target)):
        fifo = _fifo_writer(str(target))
        try:  # a FIFO through the descriptor that found the reader (it keeps the FIFO open)
            with _write_faults(str(target)):
                yield str(target) if fifo is None else f"/dev/fd/{fifo}"
        finally:
            if fifo is not None:
                os.close(fifo)
        return
    import tempfile
    from pathlib import Path

    real = Path(os.path.realpath(target))
    if real.is_dir():
        raise InputError(str(target), "is a directory: name a file to write")
    _not_an_input(str(target))
    fd, tmp = tempfile.mkstemp(prefix=".prefixexec-", suffix=suffix, dir=real.parent)
    os.close(fd)
    try:
        with _write_faults(str(target)):
            yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
