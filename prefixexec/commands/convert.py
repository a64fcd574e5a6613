"""``prefixexec convert``: write any adapter's input as an outcome table (PARQUET-CONVERT, CONVERT-FORMAT).

The output's extension says its format: ``.parquet`` (pyarrow, the ``[parquet]`` extra), ``.csv``
or ``.jsonl`` (records with an outcome, readable again by the records adapter); any other
extension is refused before the input is read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator

from prefixexec.adapters import parquet
from prefixexec.adapters.text import printable
from prefixexec.cli import (
    adapter_options,
    add_adapter_options,
    add_quiet_option,
    add_rollouts_option,
    check_rollouts_path,
    int_at_least,
    read_input,
    write_rollout_rows,
)
from prefixexec.engine import checked_batches
from prefixexec.kernel.accumulator import RolloutArrays

NAME = "convert"

#: Output extension -> format (CONVERT-FORMAT).
FORMATS = {".parquet": "parquet", ".csv": "csv", ".jsonl": "jsonl"}


def output_format(path: str) -> str:
    """CONVERT-FORMAT: the format the extension of ``--output`` names; InputError for any other."""
    from pathlib import PurePath

    from prefixexec.adapters import InputError

    suffix = PurePath(path).suffix.lower()
    if suffix not in FORMATS:
        shown = f"extension {suffix!r}" if suffix else "no extension"
        raise InputError(
            "--output",
            f"{path} has {shown}: name a .parquet, .csv or .jsonl file (the extension sets the format)",
        )
    return FORMATS[suffix]


def _text_rows(batch: RolloutArrays, fmt: str) -> str:
    """One batch as CSV rows or JSONL records (CONVERT-FORMAT)."""
    import csv
    import io
    import json

    from prefixexec.kernel.accumulator import NO_LABEL
    from prefixexec.kernel.actions import LABEL_ORDER

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for i in range(len(batch)):
        key = batch.conditions[int(batch.condition[i])]
        code = int(batch.label[i])
        label = None if code == NO_LABEL else LABEL_ORDER[code].value
        task, trial, T, fed, y = (
            batch.tasks[int(batch.task[i])],
            int(batch.trial[i]),
            int(batch.T[i]),
            int(batch.fed[i]),
            bool(batch.Y[i]),
        )
        if fmt == "csv":
            writer.writerow(
                [
                    key.dataset,
                    key.model,
                    key.method,
                    task,
                    trial,
                    T,
                    fed,
                    label or "",
                    "true" if y else "false",
                ]
            )
            continue
        outcome: dict[str, object] = {"T": T, "fed": fed}
        if label is not None:
            outcome["label"] = label
        record = {
            "dataset": key.dataset,
            "model": key.model,
            "method": key.method,
            "task_id": task,
            "trial": trial,
            "success": y,
            "outcome": outcome,
        }
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return out.getvalue()


def write_text(batches: Iterable[RolloutArrays], path: str, fmt: str) -> int:
    """Write the batches as CSV (with a header) or JSONL, atomically; returns the row count."""
    from pathlib import Path

    from prefixexec.adapters.files import atomic_path, output_directory

    output_directory(path)
    count = 0
    with atomic_path(Path(path)) as tmp, open(tmp, "w", encoding="utf-8", newline="") as handle:
        if fmt == "csv":
            handle.write(",".join(parquet.COLUMNS) + "\n")
        for batch in batches:
            handle.write(_text_rows(batch, fmt))
            count += len(batch)
    return count


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        NAME,
        help="write rollouts read by any adapter as a Parquet outcome table (one row per rollout)",
        description="Read FILE... with --adapter (checked as 'score' checks it) and write one row per "
        "rollout (dataset, model, method, task_id, trial, T, fed, label, success) to a Parquet file. "
        "JSONL records and Parquet input are streamed; rows keep the order of the input.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="input files ('-' for stdin)")
    add_adapter_options(parser)
    add_rollouts_option(parser)
    parser.add_argument(
        "--output",
        required=True,
        metavar="PATH",
        help="the file to write; its extension sets the format: .parquet, .csv or .jsonl (CONVERT-FORMAT)",
    )
    parser.add_argument(
        "--row-group-rows",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="Parquet: rows per row group, the unit of work of 'score --engine dask' "
        f"(default {parquet.ROW_GROUP_ROWS})",
    )
    parser.add_argument(
        "--json", action="store_true", help="print what was written as JSON: output, format, rollouts"
    )
    add_quiet_option(parser)


def _counted(batches: Iterable[RolloutArrays], args: argparse.Namespace) -> Iterator[RolloutArrays]:
    """The batches, with the rollouts converted so far and their rate on a terminal (PROGRESS-COUNT)."""
    from prefixexec.ttyprogress import Work

    with Work(args.quiet, "prefixexec convert") as work:
        work.phase("writing", unit="rollouts")  # open-ended: the input's size is not known ahead
        for batch in batches:
            work.advance(len(batch))
            yield batch


def run(args: argparse.Namespace) -> int:
    from prefixexec.adapters import InputError

    fmt = output_format(args.output)
    if fmt != "parquet" and args.row_group_rows is not None:
        raise InputError("--row-group-rows", f"only applies to a .parquet output, not {fmt}")
    if fmt == "parquet":
        from prefixexec.extras import require

        require("pyarrow", "convert to .parquet")
    if args.select or args.rollouts is not None:
        # Every rollout is read and kept (OUT-SELECT, OUT-ROLLOUTS-FILE): no streaming.
        if args.rollouts is not None:
            check_rollouts_path(args.rollouts)
        rollouts = read_input(args)
        batches: Iterable[RolloutArrays] = [RolloutArrays.from_rollouts(rollouts)]
    else:
        rollouts = None
        batches = checked_batches(args.adapter, args.files, adapter_options(args))
    batches = _counted(batches, args)
    if fmt == "parquet":
        count = parquet.write(batches, args.output, args.row_group_rows or parquet.ROW_GROUP_ROWS)
    else:
        count = write_text(batches, args.output, fmt)
    write_rollout_rows(args, rollouts)
    if args.json:  # CONVERT-JSON
        from prefixexec.cli import stdout
        from prefixexec.scoring import dumps

        stdout(args).write(dumps({"output": args.output, "format": fmt, "rollouts": count}))
    if not args.quiet:
        sys.stderr.write(f"prefixexec: wrote {count} rollouts to {printable(args.output)}\n")
    return 0
