"""A folder format given as one archive (INPUT-COMPRESSED, HOSTILE-TAR): a ToolSandbox run folder
as ``run.tar``, ``run.tar.gz`` / ``run.tgz`` or ``run.tar.zst``.

The archive is read as a stream (decompressed by :mod:`adapters.inputs`, with its bounds) and its
regular files and folders are written to a temporary folder, which the reader then reads as it
reads the folder itself; the folder is removed when the reader is done. Nothing else of the
archive is written: a member that is a link, a device or a FIFO, whose path is absolute or leaves
the archive (``..``), or that would go beyond :data:`MAX_MEMBERS` members is refused with one
error naming the archive and the member. Places inside the temporary folder in error messages
and in the rollouts' sources are shown as ``ARCHIVE/member`` (:func:`shown`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from .errors import InputError
from .files import MAX_DIRECTORY_INPUTS
from .inputs import open_binary, plain_name, reading

#: The names of an archive of a folder, after its compression suffix (``.gz``, ``.zst``).
TAR_SUFFIXES = (".tar", ".tgz")
#: HOSTILE-TAR: the most members of one archive (as many files as an input folder may have).
MAX_MEMBERS = MAX_DIRECTORY_INPUTS


def is_archive(path: str) -> bool:
    """Whether ``path`` names an archive of a folder (by its name: ``.tar``, ``.tar.gz``,
    ``.tgz``, ``.tar.zst``) and is a file."""
    return plain_name(os.path.basename(path)).endswith(TAR_SUFFIXES) and os.path.isfile(path)


def _member_path(archive: str, name: str) -> list[str]:
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if name.startswith("/") or ".." in parts or not parts:
        raise InputError(f"{archive}: {name}", "a member outside the archive's folder (HOSTILE-TAR)")
    return parts


@contextmanager
def extracted(archive: str, expected: str) -> Iterator[str]:
    """The folder the archive ``archive`` holds, written to a temporary folder for the time of
    the ``with`` block (HOSTILE-TAR)."""
    import shutil  # imported here: detection imports this module (start-up, #16)
    import tarfile
    import tempfile

    folder = tempfile.mkdtemp(prefix="prefixexec-archive-")
    # Written under the archive's own name (run.tar.gz -> run/): a run folder at the archive's top
    # is named as the archive is.
    stem = plain_name(os.path.basename(archive))
    for suffix in TAR_SUFFIXES:
        stem = stem.removesuffix(suffix)
    root = os.path.join(folder, stem or "archive")
    os.mkdir(root)
    try:
        with reading(archive, expected), open_binary(archive, expected) as stream:
            try:
                tar = tarfile.open(fileobj=stream, mode="r|")
            except tarfile.TarError as exc:
                raise InputError(archive, f"not a tar archive ({exc})") from None
            with tar:
                count = 0
                try:
                    for member in tar:
                        count += 1
                        if count > MAX_MEMBERS:
                            raise InputError(archive, f"more than {MAX_MEMBERS} members (HOSTILE-TAR)")
                        target = os.path.join(root, *_member_path(archive, member.name))
                        if member.isdir():
                            os.makedirs(target, exist_ok=True)
                            continue
                        if not member.isfile():
                            raise InputError(
                                f"{archive}: {member.name}",
                                "a member that is not a file or a folder (a link, a device or a FIFO; "
                                "HOSTILE-TAR)",
                            )
                        os.makedirs(os.path.dirname(target), exist_ok=True)
                        source = tar.extractfile(member)
                        assert source is not None  # a regular file has data
                        try:
                            out = open(target, "xb")  # closed below
                        except FileExistsError:
                            raise InputError(
                                f"{archive}: {member.name}", "a member twice in the archive (HOSTILE-TAR)"
                            ) from None
                        with out:
                            shutil.copyfileobj(source, out, 1 << 20)
                except tarfile.TarError as exc:
                    raise InputError(archive, f"a corrupt tar archive ({exc})") from None
        yield root
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def shown(text: str, folder: str, archive: str) -> str:
    """``text`` with the temporary ``folder`` shown as the archive it came from."""
    return text.replace(folder, archive)


def run_folder(folder: str, marker: str) -> str:
    """The folder inside an extracted archive that holds ``marker`` (a ToolSandbox run's
    ``result_summary.json``): the archive's top, or the one folder below it that does, at any
    depth (ToolSandbox nests a run whose model name has a ``/``); the top when none or several
    do (the reader then names what is missing)."""
    found = sorted(root for root, _, names in os.walk(folder) if marker in names)
    if len(found) == 1:
        return found[0]
    return folder


__all__ = ["MAX_MEMBERS", "TAR_SUFFIXES", "extracted", "is_archive", "run_folder", "shown"]
