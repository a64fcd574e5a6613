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

Compressed input (INPUT-COMPRESSED): a file that starts with the gzip (``1f 8b``) or zstd
(``28 b5 2f fd``) magic is decompressed as it is read, whatever its name, so every reader takes
``.gz`` and ``.zst`` files as it takes the plain file; a corrupt or truncated stream is one error
naming the compressed file, and the decompressed bytes are bounded by :data:`MAX_RATIO` times the
compressed bytes read so far plus :data:`COMPRESSED_FLOOR` (HOSTILE-COMPRESSED).
"""

from __future__ import annotations

import io
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any, cast

from .errors import InputError, file_faults
from .numbers import ascii_digits

#: The magic numbers of the compressed formats every reader takes (INPUT-COMPRESSED).
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
#: The suffixes a compressed file's name may end with; its format is the plain name's.
COMPRESSED_SUFFIXES = (".gz", ".zst")
#: HOSTILE-COMPRESSED: the most decompressed bytes per compressed byte read (deflate's own limit
#: is about 1,032; the same ratio as HOSTILE-ZIP's), beyond a floor of COMPRESSED_FLOOR bytes.
MAX_RATIO = 1000
COMPRESSED_FLOOR = 64 << 20

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
        if kind in PSEUDO_FILESYSTEMS and ascii_digits(major) and ascii_digits(minor):
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


def plain_name(name: str) -> str:
    """A file name without the suffix of its compression (``x_result.json.gz`` ->
    ``x_result.json``): names that carry meaning (BFCL's categories, tau-bench's models) are read
    from it (INPUT-COMPRESSED)."""
    for suffix in COMPRESSED_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def compression(head: bytes) -> str | None:
    """``"gzip"``, ``"zstd"`` or None, from a file's first bytes (INPUT-COMPRESSED)."""
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    return None


class _Counted(io.RawIOBase):
    """The compressed bytes, counted as the decompressor reads them."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.raw.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        self.count += n
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


class _Decompressed(io.RawIOBase):
    """The decompressed bytes of a gzip or zstd file: faults of the stream name the file, and
    the output is bounded by the compressed bytes read (HOSTILE-COMPRESSED)."""

    def __init__(self, raw: IO[bytes], kind: str, path: str) -> None:
        self.counted = _Counted(raw)
        self.kind = kind
        self.path = path
        self.out = 0
        self.stream: Any
        #: What the decompressor raises for a corrupt stream (an OSError with an errno is a read
        #: fault of the file itself, left to :func:`reading`); imported once, not per read.
        self.faults: tuple[type[BaseException], ...]
        if kind == "gzip":
            import gzip
            import zlib

            self.stream = gzip.GzipFile(fileobj=self.counted, mode="rb")
            self.faults = (OSError, zlib.error)
        else:
            import zstandard

            counted = cast(IO[bytes], self.counted)  # a RawIOBase is a binary stream
            self.stream = zstandard.ZstdDecompressor().stream_reader(counted, read_across_frames=True)
            self.faults = (OSError, zstandard.ZstdError)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            data = self.stream.read(len(buffer))
        except EOFError:
            raise InputError(self.path, f"the {self.kind} stream ends early (a truncated file)") from None
        except self.faults as exc:
            if isinstance(exc, OSError) and exc.errno is not None:
                raise
            raise InputError(self.path, f"not a valid {self.kind} stream ({exc})") from None
        n = len(data)
        buffer[:n] = data
        self.out += n
        if self.out > MAX_RATIO * self.counted.count + COMPRESSED_FLOOR:
            raise InputError(
                self.path,
                f"decompresses to more than {MAX_RATIO} times its size (a compression bomb?) "
                "(HOSTILE-COMPRESSED)",
            )
        return n

    def close(self) -> None:
        try:
            self.stream.close()
        finally:
            self.counted.close()
            super().close()


def _decompressing(handle: io.BufferedReader, path: str) -> IO[bytes]:
    """``handle`` itself, or a reader of its decompressed bytes when it starts with a
    compression magic (INPUT-COMPRESSED)."""
    kind = compression(handle.peek(4)[:4])
    if kind is None:
        return handle
    return io.BufferedReader(_Decompressed(handle, kind, path), buffer_size=1 << 16)


def compressed_as(stream: IO[bytes]) -> str | None:
    """``"gzip"`` or ``"zstd"`` when ``stream`` (from :func:`open_binary`) is being
    decompressed, else None: what a reader that cannot take a stream needs to know, without
    opening the file again."""
    raw = stream.raw if isinstance(stream, io.BufferedReader) else None
    return raw.kind if isinstance(raw, _Decompressed) else None


def open_binary(path: str, expected: str = "a file") -> IO[bytes]:
    """``path`` opened for reading in binary, after the checks of :func:`check_input_file` on the
    path and on the opened descriptor; InputError when the file is unfit or cannot be opened.
    A gzip or zstd file is decompressed as it is read (INPUT-COMPRESSED; :func:`compressed_as`
    says which)."""
    handle = _open_checked(path, expected)
    try:
        with reading(path, expected):
            return _decompressing(handle, path)
    except BaseException:
        handle.close()
        raise


def open_seekable(path: str, expected: str = "a file") -> IO[bytes]:
    """:func:`open_binary` for a reader that seeks (an ``.eval`` ZIP archive): a compressed
    file is decompressed into a temporary file first (bounded as HOSTILE-COMPRESSED says)."""
    handle = open_binary(path, expected)
    if compressed_as(handle) is not None:
        import shutil
        import tempfile

        spool = tempfile.SpooledTemporaryFile(max_size=COMPRESSED_FLOOR)  # returned
        try:
            with reading(path, expected), handle:
                shutil.copyfileobj(handle, spool, 1 << 20)
            spool.seek(0)
        except BaseException:
            spool.close()
            raise
        return cast(IO[bytes], spool)
    return handle


def _open_checked(path: str, expected: str) -> io.BufferedReader:
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
    "COMPRESSED_SUFFIXES",
    "GZIP_MAGIC",
    "PSEUDO_FILESYSTEMS",
    "ZSTD_MAGIC",
    "check_input_file",
    "compressed_as",
    "compression",
    "descriptor_name",
    "fault",
    "open_binary",
    "open_seekable",
    "open_text",
    "plain_name",
    "pseudo_devices",
    "read_bytes",
    "read_text",
    "reading",
]
