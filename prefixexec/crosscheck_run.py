"""``crosscheck``'s pipeline on typed options (spec: API-PIPELINE, XCHK-*, CLAIM-*, CLAIM-MANY).

The command line turns its arguments into a :class:`CrosscheckRun` once, at its boundary
(``prefixexec/commands/crosscheck.py``); :func:`run` checks and returns the printed output and
the exit status. Three inputs: another tool's metrics (our ``score --json`` shape or a CSV:
XCHK-*), one claims file against trajectory files (CLAIM-*), or many submissions at once, each
claims file against its own submission's trajectories (CLAIM-MANY).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import attrs

from prefixexec.adapters import InputError
from prefixexec.adapters.text import printable_lines

if TYPE_CHECKING:
    from prefixexec.kernel.bootstrap import BootstrapSettings
    from prefixexec.options import InputOptions
    from prefixexec.signature import Signature
    from prefixexec.submissions import Submission

#: What is checked: another tool's metrics, one claims file, or many submissions.
MODES = ("theirs", "claims", "submissions")


def _submission_tuple(value: Iterable[Submission]) -> tuple[Submission, ...]:
    return tuple(value)


@attrs.frozen(slots=True)
class CrosscheckRun:
    """Everything ``crosscheck`` needs (API-PIPELINE).

    ``mode``: ``theirs`` (``theirs`` is our ``score --json`` shape or a CSV in ``format``),
    ``claims`` (``theirs`` is a claims file in ``format``, checked against ``input``'s files) or
    ``submissions`` (``submissions``: each claims file against its own trajectories).
    """

    mode: str = attrs.field(validator=attrs.validators.in_(MODES))
    theirs: str
    input: InputOptions
    signature: Signature
    format: str | None = None
    tolerance: Fraction | None = None
    best_of: bool = False
    mapping: Mapping[str, str] = attrs.field(factory=dict)
    their_rollouts: str | None = None
    bootstrap: BootstrapSettings | None = None
    paired: bool = True
    submissions: tuple[Submission, ...] = attrs.field(default=(), converter=_submission_tuple)
    as_json: bool = False


def run(options: CrosscheckRun) -> tuple[str, int]:
    """The printed output and the exit status (0, or 1 when a value or a claim differs)."""
    if options.mode == "submissions":
        return _submissions(options)
    if options.mode == "claims":
        return _claims(options)
    return _theirs(options)


def _claims(options: CrosscheckRun) -> tuple[str, int]:
    from prefixexec.claims import check, checks_json, format_checks, read_claims, read_runs

    assert options.format is not None
    claims = read_claims(options.theirs, options.format, options.tolerance)
    runs = read_runs(list(options.input.files), options.input.adapter, options.input.adapter_options)
    checks = check(claims, runs, options.best_of)
    signature = str(options.signature)
    if options.as_json:
        document = checks_json(claims, checks, signature, options.best_of)
        text = json.dumps(document, indent=2, allow_nan=False) + "\n"
    else:
        text = printable_lines(format_checks(claims, checks, signature))
    return text, 1 if any(c.verdict == "differs" for c in checks) else 0


def _submissions(options: CrosscheckRun) -> tuple[str, int]:
    """CLAIM-MANY: every submission's claims against its own trajectories, one paragraph each
    (``crosscheck``'s text, CLAIM-OUTPUT), then the totals; a submission without trajectories has
    its claims not checkable, saying so."""
    from prefixexec.claims import VERDICTS, ClaimCheck, Reason, checks_json, format_checks, read_claims
    from prefixexec.submissions import check_submission, read_submission

    signature = str(options.signature)
    parts: list[str] = []
    documents: list[dict[str, Any]] = []
    totals = dict.fromkeys(VERDICTS, 0)
    for submission in options.submissions:
        if not submission.claims:
            raise InputError(submission.folder, "no claims file (submission.json or BFCL score file) in it")
        if submission.files:
            item = read_submission(
                submission,
                options.input.adapter,
                options.input.adapter_options,
                "submission",
                options.tolerance,
            )
            found = check_submission(item, True if options.best_of else None)
        else:
            why = Reason(
                "no_trajectories",
                "the submission's folder holds no trajectories"
                + (" (trajectories_available: false)" if submission.available is False else ""),
            )
            found = []
            for path in submission.claims:
                claims = read_claims(path, submission.claims_format, options.tolerance)
                found.append(
                    (
                        claims,
                        [
                            ClaimCheck(c, "not_checkable", reasons=(why,))
                            if c.value is not None
                            else ClaimCheck(
                                c, "not_reported", reasons=(Reason("not_reported", "null: not run"),)
                            )
                            for c in claims.claims
                        ],
                    )
                )
        for claims, checks in found:
            for c in checks:
                totals[c.verdict] += 1
            if options.as_json:
                documents.append(checks_json(claims, checks, signature, options.best_of))
            else:
                parts.append(format_checks(claims, checks, signature).rsplit("signature: ", 1)[0])
    differ = totals["differs"]
    if options.as_json:
        document = {"signature": signature, "submissions": documents, "summary": totals, "differ": differ}
        return json.dumps(document, indent=2, allow_nan=False) + "\n", 1 if differ else 0
    from prefixexec.numbers import count

    shown = sum(totals.values())
    parts.append(
        f"{count(len(options.submissions), 'submission')}, {count(shown, 'claim')}: {totals['reproduced']} "
        f"reproduced, {totals['reproduced_best_of']} reproduced as best-of-K, "
        f"{count(differ, 'differs', 'differ')}, "
        f"{totals['not_checkable']} not checkable, {totals['not_reported']} not reported\n"
        f"signature: {signature}\n"
    )
    return printable_lines("".join(parts)), 1 if differ else 0


def _theirs(options: CrosscheckRun) -> tuple[str, int]:
    from prefixexec.crosscheck import (
        attach_rollouts,
        checks_json,
        crosscheck,
        format_checks,
        read_their_csv,
        read_their_json,
        read_their_rollouts_csv,
    )
    from prefixexec.inference import evaluate
    from prefixexec.pipeline import read_rollouts
    from prefixexec.scale import available_memory

    if options.format == "json":
        theirs = read_their_json(options.theirs, options.tolerance)
    else:
        theirs = read_their_csv(options.theirs, options.mapping, options.tolerance)
    if options.their_rollouts:
        theirs = attach_rollouts(theirs, read_their_rollouts_csv(options.their_rollouts, options.mapping))
    rollouts = read_rollouts(options.input)
    results = evaluate(  # intervals only, in bounded memory (BOOT-BLOCK, BOOT-MEMORY)
        rollouts,
        options.bootstrap,
        paired=options.paired,
        keep_replicates=False,
        memory_limit=available_memory(),
    )
    checks = crosscheck(theirs, results, rollouts)
    signature = str(options.signature)
    if options.as_json:
        text = json.dumps(checks_json(checks, signature), indent=2, allow_nan=False) + "\n"
    else:
        text = printable_lines(format_checks(checks, signature))
    return text, 1 if any(c.differs for c in checks) else 0


def all_claims_inputs(paths: Sequence[str]) -> bool:
    """CLAIM-MANY: every path is a folder or a ``submission.json``: many submissions at once."""
    import os

    from prefixexec.adapters.inputs import plain_name
    from prefixexec.submissions import SUBMISSION_JSON, is_run_folder

    return all(
        p != "-"
        and (
            (os.path.isdir(p) and not is_run_folder(p)) or plain_name(os.path.basename(p)) == SUBMISSION_JSON
        )
        for p in paths
    )
