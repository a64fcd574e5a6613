"""``prefixexec explain FILE...``: which call failed, with what label and why (spec: OUT-EXPLAIN)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, TextIO

import attrs

from prefixexec.cli import add_adapter_options, int_at_least

if TYPE_CHECKING:
    from prefixexec.options import AdapterArguments

NAME = "explain"


@attrs.frozen(slots=True)
class Options:
    """``explain``'s arguments, typed (API-PIPELINE)."""

    arguments: AdapterArguments
    stdout: TextIO
    task: str | None = None
    trial: int | None = None
    failing: bool = False
    json: bool = False


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        NAME,
        help="print each rollout's actions with their verdicts: which call failed, its label and why",
        description="Read FILE... with --adapter and print, per rollout, the numbered actions: "
        "executed ones marked ok, the first failing one with its label and reason, later ones as "
        "'after the first failure (not counted)'; then T, FED and success. Colour on a terminal only.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="input files ('-' for stdin)")
    add_adapter_options(parser)
    parser.add_argument("--task", metavar="ID", help="only this task id")
    parser.add_argument("--trial", type=int_at_least(0), metavar="N", help="only this trial")
    parser.add_argument("--failing", action="store_true", help="only rollouts that are not fully executable")
    parser.add_argument("--json", action="store_true", help="one JSON object per rollout (rows and actions)")


def run(options: Options) -> int:
    from prefixexec.adapters.errors import InputError
    from prefixexec.options import input_options
    from prefixexec.pipeline import read_rollouts

    rollouts = read_rollouts(input_options(options.arguments))
    if options.task is not None:
        rollouts = [r for r in rollouts if r.task_id == options.task]
    if options.trial is not None:
        rollouts = [r for r in rollouts if r.trial == options.trial]
    if options.failing:
        rollouts = [r for r in rollouts if not r.outcome.fully_executable]
    if not rollouts:
        asked = [
            f"--task {options.task}" if options.task is not None else "",
            "--failing" if options.failing else "",
        ]
        if options.trial is not None:
            asked.append(f"--trial {options.trial}")
        filters = " ".join(a for a in asked if a) or "none read"
        raise InputError("explain", f"no rollout left to explain ({filters})")
    from prefixexec.explain import explanation, render
    from prefixexec.rollouts import json_line

    if options.json:
        options.stdout.write("".join(json_line(explanation(r)) for r in rollouts))
    else:
        render(rollouts, sys.stdout, colour=sys.stdout.isatty())
    return 0
