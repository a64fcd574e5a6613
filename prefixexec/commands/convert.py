"""``prefixexec convert``: write any adapter's input as a Parquet outcome table (PARQUET-CONVERT)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable

from prefixexec.adapters import parquet
from prefixexec.cli import (
    adapter_options,
    add_adapter_options,
    add_rollouts_option,
    read_input,
    write_rollout_rows,
)
from prefixexec.engine import checked_batches
from prefixexec.kernel.accumulator import RolloutArrays
from prefixexec.rollouts import check_path

NAME = "convert"


def _rows(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1: {text}")
    return value


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
    parser.add_argument("--output", required=True, metavar="PATH", help="the Parquet file to write")
    parser.add_argument(
        "--row-group-rows",
        type=_rows,
        default=parquet.ROW_GROUP_ROWS,
        metavar="N",
        help="rows per row group, the unit of work of 'score --engine dask' "
        f"(default {parquet.ROW_GROUP_ROWS})",
    )


def run(args: argparse.Namespace) -> int:
    if args.select or args.rollouts is not None:
        # Every rollout is read and kept (OUT-SELECT, OUT-ROLLOUTS-FILE): no streaming.
        if args.rollouts is not None:
            check_path(args.rollouts)
        rollouts = read_input(args)
        batches: Iterable[RolloutArrays] = [RolloutArrays.from_rollouts(rollouts)]
    else:
        rollouts = None
        batches = checked_batches(args.adapter, args.files, adapter_options(args))
    count = parquet.write(batches, args.output, args.row_group_rows)
    write_rollout_rows(args, rollouts)
    sys.stderr.write(f"prefixexec: wrote {count} rollouts to {args.output}\n")
    return 0
