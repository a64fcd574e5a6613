"""``prefixexec crosscheck THEIRS FILE...``: another tool's metrics next to ours (XCHK-*), or a
leaderboard's published claims against their trajectories (CLAIM-*)."""

from __future__ import annotations

import argparse
import contextlib
from contextlib import AbstractContextManager
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import attrs

from prefixexec.adapters import InputError
from prefixexec.claims import FORMATS as CLAIM_FORMATS
from prefixexec.claims import detect_format
from prefixexec.cli import (
    add_adapter_options,
    add_bootstrap_options,
    add_quiet_option,
)
from prefixexec.crosscheck import CONDITION_COLUMNS, ROLLOUT_COLUMNS, parse_mapping
from prefixexec.crosscheck_run import CrosscheckRun, all_claims_inputs

if TYPE_CHECKING:
    from prefixexec.options import AdapterArguments, Resampling
    from prefixexec.signature import Signature

NAME = "crosscheck"


@attrs.frozen(slots=True)
class Options:
    """``crosscheck``'s arguments, typed (API-PIPELINE): THEIRS, the rollouts (``arguments``;
    none when THEIRS... are submissions, CLAIM-MANY), the interval protocol and how THEIRS is
    read and compared; :func:`run_options` checks them into a
    :class:`~prefixexec.crosscheck_run.CrosscheckRun`."""

    arguments: AdapterArguments
    resampling: Resampling
    stdout: TextIO
    theirs: str
    format: str | None = None
    best_of: bool = False
    map: tuple[str, ...] = ()
    their_rollouts: str | None = None
    tolerance: Fraction | None = None
    unpaired: bool = False
    json: bool = False
    quiet: bool = False


def _tolerance(text: str) -> Fraction:
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"not a number: {text}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text}")
    return value


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        NAME,
        help="compare another tool's per-condition metrics (and per-rollout FED) with ours",
        description="Recompute our metrics from the rollouts FILE... and compare every value THEIRS "
        "reports (our score --json shape, or a CSV with one row per condition). Exit 1 on any difference.",
    )
    p.add_argument(
        "theirs",
        metavar="THEIRS",
        help="their report: .json (score --json shape) or .csv, a claims file, or a submission folder",
    )
    p.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="the rollouts ('-' for stdin); none when THEIRS... are submission folders, a folder of them "
        "or their submission.json files: each submission's claims are checked against its own "
        "trajectories (CLAIM-MANY)",
    )
    p.set_defaults(detect_in_command=True)  # submissions are detected per folder (CLAIM-MANY)
    add_adapter_options(p)
    add_bootstrap_options(p)
    p.set_defaults(bootstrap=0)  # point estimates only unless intervals are asked for
    p.add_argument(
        "--format",
        choices=("json", "csv", *CLAIM_FORMATS),
        help="format of THEIRS (default: detected: a tau2 submission.json, BFCL's data_multi_turn.csv or "
        "score file are claims (CLAIM-INPUT), else our score --json shape or a CSV by its extension)",
    )
    p.add_argument(
        "--best-of",
        action="store_true",
        help="claims: check a tau2 pass_1 as best-of-K over the files (a task passes if any run succeeds)",
    )
    p.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="OURS=THEIRS",
        help="CSV column THEIRS holds our OURS (repeatable); ours: "
        + ", ".join(dict.fromkeys(CONDITION_COLUMNS + ROLLOUT_COLUMNS)),
    )
    p.add_argument(
        "--their-rollouts",
        metavar="CSV",
        help="their per-rollout FED: dataset, model, method, task_id, trial, fed, T, label",
    )
    p.add_argument(
        "--tolerance",
        type=_tolerance,
        help="largest absolute difference of a ratio (default: 1e-9 for JSON numbers, half a unit "
        "of the last printed digit for CSV cells); counts and exact rationals must be equal",
    )
    p.add_argument("--json", action="store_true", help="print a JSON report")
    add_quiet_option(p)


def _claims_format(options: Options) -> str | None:
    """The claim format of THEIRS, or ``None`` for our own shapes (CLAIM-INPUT)."""
    if options.format is not None:
        return options.format if options.format in CLAIM_FORMATS else None
    if Path(options.theirs).suffix.lower() not in (".json", ".csv"):
        return None  # claims files are .json or .csv; anything else gets our own formats' error
    from prefixexec.adapters.inputs import read_text

    text = read_text(options.theirs, "a file")  # the checks of every input (HOSTILE-*)
    return detect_format(options.theirs, text)


def run_options(options: Options) -> CrosscheckRun:
    """The typed options as :class:`~prefixexec.crosscheck_run.CrosscheckRun`, checked before
    any input is read: the submissions THEIRS... name and the adapter of their files
    (CLAIM-MANY), or the rollouts' adapter detected as ``score`` detects it."""
    from prefixexec.options import input_options, signature_of
    from prefixexec.pipeline import detect, hint_input

    arguments, resampling = options.arguments, options.resampling
    paired = not options.unpaired

    def signed(checked: AdapterArguments) -> Signature:
        return signature_of(checked, resampling.bootstrap, resampling.seed, resampling.level, paired)

    given = [options.theirs, *arguments.files]
    if all_claims_inputs(given):  # CLAIM-MANY: submission folders or their submission.json files
        from prefixexec.submissions import discover

        for flag, value in (("--map", options.map), ("--their-rollouts", options.their_rollouts)):
            if value:
                raise InputError(flag, "has no effect on claims files")
        if options.format is not None:
            raise InputError(
                "--format", "submissions are read as their folders say (submission.json, BFCL score)"
            )
        submissions = discover(given)
        files = [f for s in submissions for f in s.files]
        adapter = arguments.adapter
        if adapter == "auto":
            from prefixexec.adapters.detect import resolve

            adapter = resolve(files)[0] if files else "taubench"
        arguments = attrs.evolve(arguments, adapter=adapter, files=files)
        with hint_input(adapter, files):  # DETECT-HINT: the submissions' files
            return CrosscheckRun(
                mode="submissions",
                theirs=options.theirs,
                input=input_options(arguments),
                signature=signed(arguments),
                tolerance=options.tolerance,
                best_of=options.best_of,
                submissions=submissions,
                as_json=options.json,
            )
    if not arguments.files:
        raise InputError(
            "FILE",
            "required: the rollouts to check THEIRS against (or give only submission folders or their "
            "submission.json files: each is checked against its own trajectories)",
        )
    arguments = detect(arguments, options.quiet)
    claims_format = _claims_format(options)
    if claims_format is not None:
        for flag, value in (("--map", options.map), ("--their-rollouts", options.their_rollouts)):
            if value:
                raise InputError(flag, f"has no effect on a claims file ({claims_format})")
        return CrosscheckRun(
            mode="claims",
            theirs=options.theirs,
            input=input_options(arguments),
            signature=signed(arguments),
            format=claims_format,
            tolerance=options.tolerance,
            best_of=options.best_of,
            as_json=options.json,
        )
    if options.best_of:
        raise InputError("--best-of", "applies to claims files only (a tau2 submission.json)")
    fmt = options.format or Path(options.theirs).suffix.lower().lstrip(".")
    if fmt not in ("json", "csv"):
        raise InputError(
            options.theirs, "cannot tell the format from the extension; give --format json or csv"
        )
    mapping = parse_mapping(list(options.map), tuple(dict.fromkeys(CONDITION_COLUMNS + ROLLOUT_COLUMNS)))
    return CrosscheckRun(
        mode="theirs",
        theirs=options.theirs,
        input=input_options(arguments),
        signature=signed(arguments),
        format=fmt,
        tolerance=options.tolerance,
        mapping=mapping,
        their_rollouts=options.their_rollouts,
        bootstrap=resampling.settings,
        paired=paired,
        as_json=options.json,
    )


def run(options: Options) -> int:
    from prefixexec.crosscheck_run import run as check

    checked = run_options(options)
    hinted: AbstractContextManager[None] = contextlib.nullcontext()
    if checked.mode == "submissions":  # DETECT-HINT: the submissions' files
        from prefixexec.pipeline import hint_input

        hinted = hint_input(checked.input.adapter, checked.input.files)
    with hinted:
        text, status = check(checked)
    options.stdout.write(text)
    return status
