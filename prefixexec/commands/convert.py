"""``prefixexec convert``: write any adapter's input as an outcome table (PARQUET-CONVERT, CONVERT-FORMAT).

The output's extension says its format: ``.parquet`` (pyarrow, the ``[parquet]`` extra), ``.csv``
or ``.jsonl`` (records with an outcome, readable again by the records adapter); any other
extension is refused before the input is read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, TextIO

import attrs

from prefixexec.adapters import parquet
from prefixexec.adapters.text import printable
from prefixexec.cli import add_adapter_options, add_quiet_option, add_rollouts_option, int_at_least
from prefixexec.engine import checked_batches
from prefixexec.kernel.accumulator import RolloutArrays

if TYPE_CHECKING:
    from prefixexec.options import AdapterArguments

NAME = "convert"


@attrs.frozen(slots=True)
class Options:
    """``convert``'s arguments, typed (API-PIPELINE)."""

    arguments: AdapterArguments
    output: str
    stdout: TextIO
    row_group_rows: int | None = None
    json: bool = False
    quiet: bool = False


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


def _counted(batches: Iterable[RolloutArrays], quiet: bool) -> Iterator[RolloutArrays]:
    """The batches, with the rollouts converted so far and their rate on a terminal (PROGRESS-COUNT)."""
    from prefixexec.ttyprogress import Work

    with Work(quiet, "prefixexec convert") as work:
        work.phase("writing", unit="rollouts")  # open-ended: the input's size is not known ahead
        for batch in batches:
            work.advance(len(batch))
            yield batch


def run(options: Options) -> int:
    from prefixexec.adapters import InputError
    from prefixexec.options import adapter_options, input_options
    from prefixexec.pipeline import check_rollouts_path, read_rollouts, write_rollout_rows

    fmt = output_format(options.output)
    if fmt != "parquet" and options.row_group_rows is not None:
        raise InputError("--row-group-rows", f"only applies to a .parquet output, not {fmt}")
    if fmt == "parquet":
        from prefixexec.extras import require

        require("pyarrow", "convert to .parquet")
    arguments = options.arguments
    if arguments.select or arguments.rollouts_path is not None or arguments.given is not None:
        # Every rollout is read and kept (OUT-SELECT, OUT-ROLLOUTS-FILE, the Python API's records).
        if arguments.rollouts_path is not None:
            check_rollouts_path(arguments.rollouts_path)
        rollouts = read_rollouts(input_options(arguments))
        batches: Iterable[RolloutArrays] = [RolloutArrays.from_rollouts(rollouts)]
    else:
        rollouts = None
        batches = checked_batches(arguments.adapter, list(arguments.files), adapter_options(arguments))
    batches = _counted(batches, options.quiet)
    if fmt == "parquet":
        count = parquet.write(batches, options.output, options.row_group_rows or parquet.ROW_GROUP_ROWS)
    else:
        count = write_text(batches, options.output, fmt)
    write_rollout_rows(arguments.rollouts_path, rollouts)
    if options.json:  # CONVERT-JSON
        from prefixexec.scoring import dumps

        options.stdout.write(dumps({"output": options.output, "format": fmt, "rollouts": count}))
    if not options.quiet:
        sys.stderr.write(f"prefixexec: wrote {count} rollouts to {printable(options.output)}\n")
    return 0
