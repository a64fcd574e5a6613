"""Opening input files so that no read blocks or lies (spec/hostile.md HOSTILE-DEVICE, HOSTILE-LOOP,
HOSTILE-FIFO, HOSTILE-PSEUDO, HOSTILE-READ).

Every file a command reads (its inputs, the files inside an input directory, the files its options
name) is opened here. Before anything is read the path is refused when it is

* a symbolic link loop or a dangling link (HOSTILE-LOOP),
* a character or block device (``/dev/zero``; HOSTILE-DEVICE),
* a named pipe or a socket (reading a FIFO waits for a writer that may never come; HOSTILE-FIFO;
  a pipe the shell already opened, ``/dev/fd/N`` of ``<(...)``, is read),
* a file of a pseudo-file system (procfs, sysfs, debugfs, cgroup, ...): such files report a
  size of 0 and may block (``/proc/kmsg``), change, or fail when read (``/proc/self/mem``);
  HOSTILE-PSEUDO.

The checks run on the path and again on the opened descriptor (the file is opened without
blocking, so a path swapped for a FIFO between the two cannot hang the run), and a read that
fails names the file (HOSTILE-READ).
"""

from __future__ import annotations

import io
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

from .errors import InputError, file_faults

#: File system types whose files are not data (Linux names, as in /proc/self/mountinfo).
PSEUDO_FILESYSTEMS = frozenset(
    {
        "proc",
        "sysfs",
        "debugfs",
        "tracefs",
        "securityfs",
        "cgroup",
        "cgroup2",
        "configfs",
        "pstore",
        "bpf",
        "efivarfs",
        "fusectl",
        "binfmt_misc",
        "mqueue",
        "selinuxfs",
        "rpc_pipefs",
        "nfsd",
        "devpts",
    }
)

#: A path that names a descriptor this process already holds (a pipe the shell opened).
_DESCRIPTOR = re.compile(r"^/(?:dev/fd|proc/(?:self|thread-self|\d+)/fd)/\d+$|^/dev/std(?:in|out|err)$")

_pseudo: dict[int, str] | None = None


def pseudo_devices() -> dict[int, str]:
    """``st_dev`` -> file system type of every mounted pseudo-file system (read once from
    ``/proc/self/mountinfo``; without it, the devices of ``/proc`` and ``/sys``)."""
    global _pseudo
    if _pseudo is not None:
        return _pseudo
    found: dict[int, str] = {}
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            text = handle.read(1 << 22)
    except OSError:
        text = ""
    for line in text.split("\n"):
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if not sep or len(fields) < 3 or not right:
            continue
        kind = right.split()[0]
        major, _, minor = fields[2].partition(":")
        if kind in PSEUDO_FILESYSTEMS and major.isdigit() and minor.isdigit():
            found[os.makedev(int(major), int(minor))] = kind
    for path, kind in (("/proc/self", "proc"), ("/sys/kernel", "sysfs")):
        try:
            found.setdefault(os.stat(path).st_dev, kind)
        except OSError:
            pass
    _pseudo = found
    return found


def descriptor_name(path: str) -> bool:
    """Whether ``path`` names a descriptor of this process (``/dev/fd/N``, ``/dev/stdin``)."""
    return _DESCRIPTOR.match(os.path.abspath(path)) is not None


def fault(path: str, info: os.stat_result) -> str | None:
    """What makes the file ``info`` describes unfit to read, or None (HOSTILE-DEVICE, -FIFO, -PSEUDO)."""
    mode = info.st_mode
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a file that ends (HOSTILE-DEVICE)"
    if stat.S_ISFIFO(mode) and not descriptor_name(path):
        return (
            "is a named pipe (FIFO): reading it waits for a writer that may never come; "
            "give its data on standard input ('-') instead (HOSTILE-FIFO)"
        )
    if stat.S_ISSOCK(mode):
        return "is a socket, not a file (HOSTILE-FIFO)"
    if stat.S_ISDIR(mode):
        return None
    kind = pseudo_devices().get(info.st_dev)
    if kind is not None:
        return (
            f"is a file of {kind}, a pseudo-file system: its files have no real size and may "
            "block or fail when read; copy it to a regular file first (HOSTILE-PSEUDO)"
        )
    return None


def check_input_file(path: str) -> None:
    """Refuse an input path that cannot be read to its end without blocking (HOSTILE-LOOP,
    HOSTILE-DEVICE, HOSTILE-FIFO, HOSTILE-PSEUDO); a missing file is left to the reader, which
    names it. Directories pass (for the adapters that read them)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        try:
            os.lstat(path)
        except OSError:
            return  # missing: the reader says "no such file"
        raise InputError(path, "is a dangling symbolic link") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    problem = fault(path, info)
    if problem is not None:
        raise InputError(path, problem)


_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


def open_binary(path: str, expected: str = "a file") -> IO[bytes]:
    """``path`` opened for reading in binary, after the checks of :func:`check_input_file` on the
    path and on the opened descriptor; InputError when the file is unfit or cannot be opened."""
    with reading(path, expected):
        check_input_file(path)
        fd = os.open(path, _FLAGS)
        try:
            info = os.fstat(fd)
            problem = fault(path, info)
            if problem is not None:
                raise InputError(path, problem)
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(path)
            if hasattr(os, "set_blocking"):
                os.set_blocking(fd, True)  # opened without blocking only to be safe against a FIFO
            return os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise


def open_text(path: str, expected: str = "a file", newline: str | None = "\n") -> IO[str]:
    """``path`` as UTF-8 text (:func:`open_binary`); lines end at ``\\n`` only (HOSTILE-LINES):
    U+2028, U+0085, form feeds and a lone ``\\r`` are characters of a line, as in JSON."""
    return io.TextIOWrapper(open_binary(path, expected), encoding="utf-8", newline=newline)


def read_bytes(path: str, expected: str = "a file") -> bytes:
    """All of a checked input file (:func:`open_binary`), read faults naming the file."""
    with reading(path, expected), open_binary(path, expected) as handle:
        return handle.read()


def read_text(path: str, expected: str = "a file") -> str:
    """All of a checked input file as UTF-8 text, line breaks kept as they are."""
    data = read_bytes(path, expected)
    with reading(path, expected):
        return data.decode("utf-8")


@contextmanager
def reading(path: str, expected: str = "a file") -> Iterator[None]:
    """Faults of opening or reading ``path`` as one InputError naming the file (HOSTILE-READ):
    the words of :func:`file_faults`, and ``cannot read: <why>`` for any other system error
    (``Input/output error`` from a file the kernel cannot read)."""
    try:
        with file_faults(path, expected):
            yield
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None


__all__ = [
    "PSEUDO_FILESYSTEMS",
    "check_input_file",
    "descriptor_name",
    "fault",
    "open_binary",
    "open_text",
    "pseudo_devices",
    "read_bytes",
    "read_text",
    "reading",
]
