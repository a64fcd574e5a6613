"""``prefixexec crosscheck THEIRS FILE...``: another tool's metrics next to ours (XCHK-*), or a
leaderboard's published claims against their trajectories (CLAIM-*)."""

from __future__ import annotations

import argparse
import json
from fractions import Fraction
from pathlib import Path

from prefixexec.adapters import InputError
from prefixexec.adapters.text import printable_lines
from prefixexec.claims import FORMATS as CLAIM_FORMATS
from prefixexec.claims import check, detect_format, read_claims, read_runs
from prefixexec.claims import checks_json as claims_json
from prefixexec.claims import format_checks as format_claims
from prefixexec.cli import (
    adapter_options,
    add_adapter_options,
    add_bootstrap_options,
    add_quiet_option,
    read_input,
    settings_of,
    signature_of,
    stdout,
)
from prefixexec.crosscheck import (
    CONDITION_COLUMNS,
    ROLLOUT_COLUMNS,
    attach_rollouts,
    checks_json,
    crosscheck,
    format_checks,
    parse_mapping,
    read_their_csv,
    read_their_json,
    read_their_rollouts_csv,
)
from prefixexec.inference import evaluate

NAME = "crosscheck"


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
    p.add_argument("theirs", metavar="THEIRS", help="their report: .json (score --json shape) or .csv")
    p.add_argument("files", nargs="+", metavar="FILE", help="the rollouts ('-' for stdin)")
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


def _claims_format(args: argparse.Namespace) -> str | None:
    """The claim format of THEIRS, or ``None`` for our own shapes (CLAIM-INPUT)."""
    if args.format is not None:
        return args.format if args.format in CLAIM_FORMATS else None
    if Path(args.theirs).suffix.lower() not in (".json", ".csv"):
        return None  # claims files are .json or .csv; anything else gets our own formats' error
    from prefixexec.adapters.inputs import read_text

    text = read_text(args.theirs, "a file")  # the checks of every input (HOSTILE-*)
    return detect_format(args.theirs, text)


def _run_claims(args: argparse.Namespace, fmt: str) -> int:
    for flag, given in (("--map", args.map), ("--their-rollouts", args.their_rollouts)):
        if given:
            raise InputError(flag, f"has no effect on a claims file ({fmt})")
    claims = read_claims(args.theirs, fmt, args.tolerance)
    runs = read_runs(args.files, args.adapter, adapter_options(args))
    checks = check(claims, runs, args.best_of)
    signature = str(signature_of(args))
    if args.json:
        document = claims_json(claims, checks, signature, args.best_of)
        stdout(args).write(json.dumps(document, indent=2, allow_nan=False) + "\n")
    else:
        stdout(args).write(printable_lines(format_claims(claims, checks, signature)))
    return 1 if any(c.verdict == "differs" for c in checks) else 0


def run(args: argparse.Namespace) -> int:
    claims_format = _claims_format(args)
    if claims_format is not None:
        return _run_claims(args, claims_format)
    if args.best_of:
        raise InputError("--best-of", "applies to claims files only (a tau2 submission.json)")
    fmt = args.format or Path(args.theirs).suffix.lower().lstrip(".")
    if fmt not in ("json", "csv"):
        raise InputError(args.theirs, "cannot tell the format from the extension; give --format json or csv")
    mapping = parse_mapping(args.map, tuple(dict.fromkeys(CONDITION_COLUMNS + ROLLOUT_COLUMNS)))
    if fmt == "json":
        theirs = read_their_json(args.theirs, args.tolerance)
    else:
        theirs = read_their_csv(args.theirs, mapping, args.tolerance)
    if args.their_rollouts:
        theirs = attach_rollouts(theirs, read_their_rollouts_csv(args.their_rollouts, mapping))
    from prefixexec.scale import available_memory

    rollouts = read_input(args)
    results = evaluate(  # intervals only, in bounded memory (BOOT-BLOCK, BOOT-MEMORY)
        rollouts,
        settings_of(args),
        paired=not args.unpaired,
        keep_replicates=False,
        memory_limit=available_memory(),
    )
    checks = crosscheck(theirs, results, rollouts)
    signature = str(signature_of(args))
    if args.json:
        stdout(args).write(json.dumps(checks_json(checks, signature), indent=2, allow_nan=False) + "\n")
    else:
        stdout(args).write(printable_lines(format_checks(checks, signature)))
    return 1 if any(c.differs for c in checks) else 0
