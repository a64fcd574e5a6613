"""Writing a site's folder (SITE-OVERWRITE; the contract is in :mod:`prefixexec.site`'s docstring)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from prefixexec.adapters import InputError

from .model import ClaimRow, DomainBoard

#: ``site.json``'s format name and version: the mark of a folder an earlier ``--site`` wrote.
MANIFEST = "site.json"
FORMAT = "prefixexec-site"
VERSION = 1


def _manifest(folder: Path) -> list[str] | None:
    """The files an earlier site listed in ``folder/site.json``, or ``None`` when it is not one."""
    try:
        doc = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("files"), list):
        return None
    return [f for f in doc["files"] if isinstance(f, str) and f and "/" not in f and f not in (".", "..")]


def check_site_folder(directory: str) -> list[str]:
    """SITE-OVERWRITE, checked before any input is read: ``directory`` may be written (missing,
    empty, or an earlier site). Returns the files the earlier site listed (empty otherwise)."""
    from prefixexec.adapters.files import check_outputs

    if not directory:
        raise InputError("--site", "is empty: name a folder to write")
    check_outputs([], folder=directory)  # HOSTILE-OUTPUT-EARLY: not a file, not an input
    folder = Path(directory)
    if not folder.exists():
        return []
    try:
        entries = list(os.scandir(folder))
    except OSError as exc:
        raise InputError(directory, f"cannot write the site: {exc.strerror or exc}") from None
    if not entries:
        return []
    earlier = _manifest(folder)
    if earlier is None:
        raise InputError(
            directory,
            f"is not empty and is not a site an earlier --site wrote (no {MANIFEST} of {FORMAT}): "
            "name a new or empty folder",
        )
    return earlier


def write_site(
    directory: str | os.PathLike[str],
    domains: Sequence[DomainBoard],
    claims: Sequence[ClaimRow] | None = None,
) -> tuple[str, ...]:
    """Write the site into ``directory`` (SITE-*; the contract is in the module's docstring) and
    return the names of the files written, ``index.html`` first."""
    from prefixexec.report import write_files

    from .pages import render_site

    target = os.fspath(directory)
    earlier = check_site_folder(target)
    files = render_site(domains, claims)
    names = tuple(files)
    manifest = {"format": FORMAT, "version": VERSION, "files": [*names, MANIFEST]}
    files[MANIFEST] = (json.dumps(manifest, indent=1) + "\n").encode("utf-8")
    write_files(target, files)
    _remove_stale(Path(target), earlier, set(files))
    return names


def _remove_stale(folder: Path, earlier: Sequence[str], written: set[str]) -> None:
    """Remove what the earlier site wrote and this one did not (never an input: HOSTILE-OUTPUT)."""
    from prefixexec.adapters.files import _not_an_input

    for name in earlier:
        if name in written:
            continue
        path = folder / name
        try:
            _not_an_input(str(path))
        except InputError:
            continue
        if path.is_file() and not path.is_symlink():
            path.unlink(missing_ok=True)
