"""A leaderboard as a static page set a maintainer can publish (spec: spec/site.md, SITE-*).

``prefixexec leaderboard FILE... --site DIR`` (and ``prefixexec.leaderboard(..., site=DIR)``)
writes, from the leaderboard it ranked:

- ``index.html``: every domain with its number of systems and tasks and its leader, links to
  each domain's page and to the claims table (SITE-PAGES);
- ``domain-<d>.html``: the domain's tables sorted by success (values with intervals, ranks with
  rank intervals, Kendall's tau-b, flipped pairs), every number printed by
  :mod:`prefixexec.numbers` as the leaderboard's other outputs print it (SITE-NUMBERS);
- ``system-<d>-<s>.html`` and ``system-<d>-<s>.svg``: one system's values and ranks, its curves
  (PEC(k) over depth k from its rollouts, pass^k and TER^k over k from the leaderboard) and
  every failing rollout: task, trial, FED, the failed call, label and reason, as ``explain``
  shows them (SITE-FAILING);
- ``claims.html``: the claims table (claimed, recomputed, verdict), or a line saying none was
  given;
- ``site.json``: what wrote the folder and the list of its files (SITE-OVERWRITE).

Every page is self-contained: the style sheet is inline, there is no script, font or remote
URL, and links are relative, so the folder reads from ``file://`` with no server (SITE-STATIC).
File names are made of indices, never of names from the input (HOSTILE-PATH).

Input contract (what the command line builds today, and what a per-domain leaderboard passes):

``write_site(directory, domains, claims=None) -> tuple[str, ...]`` (the names written), with

- :class:`DomainBoard` ``(name, board, settings, rollouts)``: ``name`` the domain's printed name;
  ``board`` one entry of the ``leaderboard --json`` document's ``datasets`` list (LB-JSON: its
  ``systems`` best success first, each with ``system``, ``N``, ``metrics`` and ``curves``,
  and ``k``, ``tasks``, ``shown``, ``ranked``, ``kendall``, ``flips``); ``settings`` that
  document's ``settings``; ``rollouts`` each system's rollouts by its ``system`` name (a system
  absent from it has no curve of PEC and no failing list, and its page says so);
- :class:`ClaimRow` ``(system, domain, metric, claimed, recomputed, verdict, note="")``: one
  claimed number beside ours; ``claimed`` and ``recomputed`` are numbers (a ``Fraction``, a
  float or a JSON ``exact`` string, printed by :func:`prefixexec.numbers.number`) or ``None``
  (printed ``n/a``); ``verdict`` is ``crosscheck``'s word for the row.

``claims=None`` writes ``claims.html`` saying that no claims were checked.

Overwrite rule (SITE-OVERWRITE): ``DIR`` may be missing (it is made), empty, or a folder an
earlier ``--site`` wrote (it holds that run's ``site.json``). Anything else that is not empty
is refused, before any input is read. Over an earlier site the new files replace the old ones
all at once (every file is written beside its target first, HOSTILE-REPORT), then the files the
earlier ``site.json`` listed that the new site does not write are removed; other files in the
folder are left alone. No file of the site replaces an input, a directory, a device or a FIFO
(HOSTILE-OUTPUT, HOSTILE-REPORT).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType
from typing import Any

import attrs

from prefixexec.adapters import InputError
from prefixexec.kernel import Rollout

#: ``site.json``'s format name and version: the mark of a folder an earlier ``--site`` wrote.
MANIFEST = "site.json"
FORMAT = "prefixexec-site"
VERSION = 1

Number = Fraction | float | int | str


def _frozen_map(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(value))


def _rollout_map(value: Mapping[str, Sequence[Rollout]]) -> Mapping[str, tuple[Rollout, ...]]:
    return MappingProxyType({str(k): tuple(v) for k, v in value.items()})


@attrs.frozen(slots=True)
class DomainBoard:
    """One domain's leaderboard and its systems' rollouts (see the module's input contract)."""

    name: str
    #: One entry of the ``leaderboard --json`` document's ``datasets`` (LB-JSON).
    board: Mapping[str, Any] = attrs.field(converter=_frozen_map, repr=False)
    #: The document's ``settings`` (bootstrap, level, trials, ...).
    settings: Mapping[str, Any] = attrs.field(converter=_frozen_map, repr=False)
    #: Each system's rollouts by its ``system`` name.
    rollouts: Mapping[str, tuple[Rollout, ...]] = attrs.field(
        factory=dict, converter=_rollout_map, repr=False
    )

    @board.validator
    def _check_board(self, attribute: attrs.Attribute[Mapping[str, Any]], value: Mapping[str, Any]) -> None:
        missing = [key for key in ("systems", "k", "tasks", "shown", "ranked") if key not in value]
        if missing:
            raise ValueError(
                f"'board' must be a leaderboard document's dataset entry; absent: {', '.join(missing)}"
            )


@attrs.frozen(slots=True)
class ClaimRow:
    """One claimed number beside the recomputed one, with ``crosscheck``'s verdict."""

    system: str
    domain: str
    metric: str
    claimed: Number | None
    recomputed: Number | None
    verdict: str
    note: str = ""


def domains_of(document: Mapping[str, Any], rollouts: Sequence[Rollout] | None) -> list[DomainBoard]:
    """Today's leaderboard as domains: one :class:`DomainBoard` per dataset of the
    ``leaderboard --json`` document, each system's rollouts found by its label
    (:func:`prefixexec.ranking.core.system_label`) and kept to the tasks it was scored on."""
    from prefixexec.ranking.core import system_label

    by = document["settings"]["by"]
    grouped: dict[tuple[str, str], list[Rollout]] = {}
    for r in rollouts or ():
        grouped.setdefault((r.condition.dataset, system_label(r.condition, by)), []).append(r)
    out = []
    for ds in document["datasets"]:
        mine = {s["system"]: grouped.get((ds["dataset"], s["system"]), []) for s in ds["systems"]}
        if ds["tasks"].get("dropped"):  # --shared-tasks: the tasks every system has (LB-TASKS)
            shared = set.intersection(*({r.task_id for r in rs} for rs in mine.values()))
            mine = {name: [r for r in rs if r.task_id in shared] for name, rs in mine.items()}
        out.append(DomainBoard(ds["dataset"], ds, document["settings"], mine))
    return out


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


__all__ = ["ClaimRow", "DomainBoard", "check_site_folder", "domains_of", "write_site"]
