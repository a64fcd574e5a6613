"""``leaderboard --site DIR`` on the command line: the checks before any input is read and the
write (SITE-PAGES, SITE-OVERWRITE, LB-SITE-HOOK). Kept here so that the leaderboard command holds
two calls of it; the rollouts are the ones ``leaderboard`` read (its ``on_rollouts``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from prefixexec.kernel import Rollout


def site_folder(site: str | None, engine: str = "local") -> str | None:
    """``--site DIR`` checked before any input is read (SITE-OVERWRITE, HOSTILE-OUTPUT-EARLY), or
    ``None`` without it."""
    if site is None:
        return None
    from prefixexec.adapters import InputError
    from prefixexec.extras import require

    from .write import check_site_folder

    if engine == "dask":
        raise InputError(
            "--site", "cannot be combined with --engine dask (the site lists every rollout, read here)"
        )
    require("matplotlib", "--site")
    check_site_folder(site)
    return site


def claim_rows(document: Mapping[str, Any]) -> list[Any] | None:
    """The claims table of a ``leaderboard --json`` document (LB-CLAIMS) as the site's rows, or
    ``None`` when no submission was read (trajectory files only: no claims checked)."""
    from .model import ClaimRow

    claims = document.get("claims")
    if claims is None:
        return None
    return [
        ClaimRow(
            system=row["system"],
            domain=row["dataset"],
            metric=row["metric"],
            claimed=_exact(row.get("claimed_exact"), row.get("claimed")),
            recomputed=_exact(row.get("ours_exact"), row.get("ours")),
            verdict=row["verdict"],
            note="; ".join(reason["text"] for reason in row.get("reasons") or ()),
        )
        for row in claims["claims"]
    ]


def _exact(exact: object, shown: object) -> Fraction | None:
    """A claims row's number, exact where the document gives it; ``None`` where the claim is not a
    number (a claim reported as null: not run) or nothing was recomputed."""
    from fractions import Fraction

    for value in (exact, shown):
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float | str):
            try:
                return Fraction(value)
            except (ValueError, ZeroDivisionError, OverflowError):
                continue
    return None


def write_leaderboard_site(
    site: str | None, document: Mapping[str, Any], rollouts: Sequence[Rollout] | None
) -> None:
    """Write the site of a ``leaderboard --json`` document: a domain is a dataset (a tau2
    domain, a BFCL category), the claims are the document's (LB-CLAIMS)."""
    if site is None:
        return
    from .model import domains_of
    from .write import write_site

    write_site(site, domains_of(document, rollouts), claim_rows(document))
