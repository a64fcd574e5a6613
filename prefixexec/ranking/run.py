"""``leaderboard``'s pipeline on typed options (spec: API-PIPELINE, LB-FOLDER, LB-CLAIMS).

The command line turns its arguments into a :class:`LeaderboardRun` once, at its boundary
(``prefixexec/commands/leaderboard.py``); :func:`leaderboard` reads, ranks per dataset (a tau2
domain, a BFCL category) and checks the claims of every submission in the same run;
:func:`render` prints the document as the command prints it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from prefixexec.options import EngineOptions, InputOptions

from .core import LeaderboardOptions, leaderboard_document

if TYPE_CHECKING:
    from prefixexec.kernel import Rollout
    from prefixexec.kernel.accumulator import AccumulatorSet
    from prefixexec.kernel.bootstrap import BootstrapSettings
    from prefixexec.signature import Signature
    from prefixexec.submissions import Submission


def _submissions(value: Any) -> tuple[Submission, ...] | None:
    return None if value is None else tuple(value)


@attrs.frozen(slots=True)
class LeaderboardRun:
    """Everything ``leaderboard`` needs (API-PIPELINE): the input (``submissions``: the
    submissions the paths name, LB-FOLDER; ``None``: trajectory files only, read as ``score``
    reads them), what is ranked and how (:class:`~.core.LeaderboardOptions`), the bootstrap
    (``None``: intervals off), the signature, what a system is (``system_from``,
    LB-SYSTEM-FROM) and the output."""

    input: InputOptions
    ranking: LeaderboardOptions
    bootstrap: BootstrapSettings | None
    signature: Signature
    engine: EngineOptions = attrs.field(factory=EngineOptions)
    submissions: tuple[Submission, ...] | None = attrs.field(default=None, converter=_submissions)
    system_from: str = "submission"
    #: text, md, tex, csv (:data:`~.tables.WRITERS`) or json
    format: str = "text"
    quiet: bool = False


def _accumulators(rollouts: Any) -> AccumulatorSet:
    from prefixexec.adapters import InputError
    from prefixexec.kernel.accumulator import AccumulatorSet, DuplicateRollout

    try:
        return AccumulatorSet.from_rollouts(rollouts)
    except DuplicateRollout as exc:
        raise InputError(
            "--system-from",
            f"{exc}: two submissions give the same system (--system-from submission ranks each "
            "submission as its own system)",
        ) from None


def leaderboard(
    options: LeaderboardRun,
    on_rows: Callable[[int], None] | None = None,
    on_phase: Callable[[str], None] | None = None,
    on_rollouts: Callable[[list[Rollout]], None] | None = None,
) -> dict[str, Any]:
    """The ``leaderboard --json`` document (LB-JSON): per dataset the systems ranked, and with
    submissions (LB-FOLDER) the claims of every submission checked against its trajectories
    (LB-CLAIMS) and the submissions whose claims cannot be (LB-NOT-CHECKABLE). ``on_rollouts``
    is given every rollout read (kept for it: ``--site`` lists them, SITE-FAILING)."""
    from prefixexec.pipeline import read

    signature = str(options.signature)
    if options.submissions is None:
        given = options.input if on_rollouts is None else attrs.evolve(options.input, keep=True)
        accumulators, kept = read(given, options.engine, None, on_rows)
        if on_rollouts is not None:
            on_rollouts(list(kept or ()))
        if on_phase is not None:
            on_phase("ranking")
        return leaderboard_document(accumulators, options.bootstrap, options.ranking, signature)
    from prefixexec.submissions import claim_rows, claims_json, read_submissions

    read_ = read_submissions(
        options.submissions, options.input.adapter, options.input.adapter_options, options.system_from
    )
    rollouts = [r for item in read_ for r in item.rollouts]
    if on_rollouts is not None:
        on_rollouts(rollouts)
    if on_rows is not None:
        on_rows(len(rollouts))
    if on_phase is not None:
        on_phase("ranking and checking claims")
    ranking = attrs.evolve(options.ranking, by="condition" if options.system_from == "model" else "model")
    if rollouts:
        document = leaderboard_document(_accumulators(rollouts), options.bootstrap, ranking, signature)
    else:
        document = leaderboard_document_empty(options, ranking, signature)
    rows, absent = claim_rows(read_)
    document["settings"]["system_from"] = options.system_from
    document["submissions"] = [
        {
            "submission": item.submission.name,
            "folder": item.submission.folder,
            "layout": item.submission.layout,
            "system": item.submission.label,
            "files": list(item.submission.files),
            "claims_files": list(item.submission.claims),
            "rollouts": len(item.rollouts),
            "unlisted": list(item.submission.unlisted),
            "missing": list(item.submission.missing),
        }
        for item in read_
    ]
    document["claims"] = claims_json(rows, absent)
    return document


def leaderboard_document_empty(
    options: LeaderboardRun, ranking: LeaderboardOptions, signature: str
) -> dict[str, Any]:
    """The document of submissions none of which has trajectories: no dataset ranked, the
    claims listed as not checkable (LB-NOT-CHECKABLE)."""
    from .core import document_head

    return {**document_head(options.bootstrap, ranking, signature), "datasets": []}


def render(document: dict[str, Any], fmt: str) -> str:
    """The document printed in ``fmt`` (LB-OUTPUT): the tables of every dataset, then with
    submissions the claims table and the submissions whose claims are not checkable."""
    from prefixexec.scoring import dumps

    from .tables import WRITERS

    return dumps(document) if fmt == "json" else WRITERS[fmt](document)
