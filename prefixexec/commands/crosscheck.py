"""``prefixexec crosscheck THEIRS FILE...``: another tool's metrics next to ours (XCHK-*)."""

from __future__ import annotations

import argparse
import json
import sys
from fractions import Fraction
from pathlib import Path

from prefixexec.adapters import InputError
from prefixexec.cli import (
    add_adapter_options,
    add_bootstrap_options,
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
    p.add_argument("--format", choices=("json", "csv"), help="format of THEIRS (default: from its extension)")
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


def run(args: argparse.Namespace) -> int:
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
    rollouts = read_input(args)
    results = evaluate(rollouts, settings_of(args), paired=not args.unpaired)
    checks = crosscheck(theirs, results, rollouts)
    signature = str(signature_of(args))
    if args.json:
        stdout(args).write(json.dumps(checks_json(checks, signature), indent=2, allow_nan=False) + "\n")
    else:
        sys.stdout.write(format_checks(checks, signature))
    return 1 if any(c.differs for c in checks) else 0
