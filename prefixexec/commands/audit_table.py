"""``prefixexec audit-table TABLE.csv``: could integer counts produce a reported table? (AUDIT-TABLE-*)"""

from __future__ import annotations

import argparse
import json
from typing import TextIO

import attrs

from prefixexec.adapters.text import printable_lines
from prefixexec.audit_table import audit, format_verdicts, read_table, verdict_json

NAME = "audit-table"


@attrs.frozen(slots=True)
class Options:
    """``audit-table``'s arguments, typed (API-PIPELINE)."""

    table: str
    stdout: TextIO
    max_n: int = 1000
    json: bool = False


def _max_n(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1: {text}")
    return value


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        NAME,
        help="check that integer counts can produce every row of a reported (rounded) table",
        description="For each row (dataset, model, method, N, TER, mean_FED, AUC_PEC, RR_eligible, RR, "
        "success; empty cells allowed) search integer counts consistent with every printed value at its "
        "precision and with the exact identities. Exit 0 when every row is consistent, 1 otherwise.",
    )
    p.add_argument("table", metavar="TABLE.csv", help="the table as CSV with a header row")
    p.add_argument(
        "--max-n", type=_max_n, default=1000, help="largest N searched when a row has no N (default 1000)"
    )
    p.add_argument("--json", action="store_true", help="print one verdict per row as JSON")


def run(options: Options) -> int:
    verdicts = audit(read_table(options.table), options.max_n)
    if options.json:
        doc = {"table": options.table, "rows": [verdict_json(v) for v in verdicts]}
        options.stdout.write(json.dumps(doc, indent=2, allow_nan=False, ensure_ascii=False) + "\n")
    else:
        options.stdout.write(printable_lines(format_verdicts(verdicts)))
    return 0 if all(v.consistent for v in verdicts) else 1
