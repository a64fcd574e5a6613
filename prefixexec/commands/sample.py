"""``prefixexec sample FILE...``: draw the paper's task subsets (section 2.6; spec: SAMPLE-*)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from prefixexec.cli import add_adapter_options, add_quiet_option, int_at_least, read_input

NAME = "sample"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        NAME,
        help="draw a stratified task sample (the paper's section 2.6) for --select task_id=@FILE",
        description="Read FILE... with --adapter and draw tasks with a seed: --per-category N tasks of "
        "every stratum (BFCL category, tau-bench domain, any other adapter's dataset), or greedy "
        "multi-label coverage of ToolSandbox scenario categories; --size N draws N tasks in all, "
        "each stratum in proportion. Prints the task ids, one per line (or writes them to --output), "
        "for 'score --select task_id=@FILE'; a summary per stratum goes to stderr.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="input files ('-' for stdin)")
    add_adapter_options(parser)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument(
        "--per-category", type=int_at_least(1), metavar="N", help="N tasks per stratum (SAMPLE-PER-CATEGORY)"
    )
    group.add_argument(
        "--size", type=int_at_least(1), metavar="N", help="N tasks in all, stratified (SAMPLE-SIZE)"
    )
    parser.add_argument("--seed", type=int_at_least(0), default=0, help="sampling seed (default 0)")
    parser.add_argument("--output", metavar="PATH", help="write the task ids to PATH instead of stdout")
    add_quiet_option(parser)


def task_labels(rollouts: Sequence[object]) -> dict[str, frozenset[str]]:
    """SAMPLE-STRATA: task id -> its labels (ToolSandbox: scenario categories; else the dataset)."""
    from prefixexec.adapters import InputError
    from prefixexec.kernel import Rollout

    labels: dict[str, set[str]] = {}
    datasets: dict[str, str] = {}
    for r in rollouts:
        assert isinstance(r, Rollout)
        categories = r.meta.get("categories") if r.condition.dataset.startswith("toolsandbox") else None
        own = (
            {str(c) for c in categories}
            if isinstance(categories, list) and categories
            else {r.condition.dataset}
        )
        first = datasets.setdefault(r.task_id, r.condition.dataset)
        if first != r.condition.dataset and not isinstance(categories, list):
            raise InputError(
                "input",
                f"task id {r.task_id!r} is in datasets {first!r} and {r.condition.dataset!r}: a sample "
                "of task ids would select both; sample one dataset at a time (--select dataset=GLOB)",
            )
        labels.setdefault(r.task_id, set()).update(own)
    return {task: frozenset(ls) for task, ls in labels.items()}


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from prefixexec.adapters.files import atomic_path, output_directory
    from prefixexec.sampling import sample

    labels = task_labels(read_input(args))
    drawn = sample(labels, seed=args.seed, per_category=args.per_category, size=args.size)
    text = "".join(f"{task}\n" for task in drawn.tasks)
    if args.output is None:
        sys.stdout.write(text)
    else:
        output_directory(args.output)
        with atomic_path(Path(args.output)) as tmp:
            Path(tmp).write_text(text, encoding="utf-8")
    if not args.quiet:
        strata = ", ".join(f"{label} {drawn.picked[label]}/{n}" for label, n in drawn.available.items())
        sys.stderr.write(
            f"prefixexec: sampled {len(drawn.tasks)} of {len(labels)} tasks (seed {args.seed}): {strata}\n"
        )
    return 0
