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

from .model import ClaimRow, DomainBoard, domains_of
from .write import FORMAT, MANIFEST, check_site_folder, write_site

__all__ = ["FORMAT", "MANIFEST", "ClaimRow", "DomainBoard", "check_site_folder", "domains_of", "write_site"]
