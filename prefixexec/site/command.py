"""``leaderboard --site DIR`` on the command line: the checks before any input is read, the read
that keeps the rollouts, and the write (SITE-PAGES, SITE-OVERWRITE). Kept here so that the
leaderboard command holds three calls of it."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from prefixexec.kernel import Rollout
from prefixexec.kernel.accumulator import AccumulatorSet


def site_folder(args: argparse.Namespace) -> str | None:
    """``--site DIR`` checked before any input is read (SITE-OVERWRITE, HOSTILE-OUTPUT-EARLY), or
    ``None`` without it."""
    site: str | None = getattr(args, "site", None)
    if site is None:
        return None
    from prefixexec.adapters import InputError
    from prefixexec.extras import require

    from .write import check_site_folder

    if getattr(args, "engine", "local") == "dask":
        raise InputError(
            "--site", "cannot be combined with --engine dask (the site lists every rollout, read here)"
        )
    require("matplotlib", "--site")
    check_site_folder(site)
    return site


def read_for_site(
    args: argparse.Namespace, on_rows: Callable[[int], None] | None, site: str | None
) -> tuple[AccumulatorSet, list[Rollout] | None]:
    """The input's accumulators, and its rollouts when a site lists them (read and kept here)."""
    import attrs

    from prefixexec.cli import engine_options, input_options
    from prefixexec.pipeline import read

    options = input_options(args)
    return read(
        options if site is None else attrs.evolve(options, keep=True), engine_options(args), None, on_rows
    )


def write_leaderboard_site(
    site: str | None, document: Mapping[str, Any], rollouts: Sequence[Rollout] | None
) -> None:
    """Write the site of a ``leaderboard --json`` document: today a domain is a dataset."""
    if site is None:
        return
    from .model import domains_of
    from .write import write_site

    write_site(site, domains_of(document, rollouts))
