"""``prefixexec sample``: draw the paper's task subsets (section 2.6; spec: SAMPLE-*).

From the tasks of results (FILE... read with an adapter) or, before a model runs, from a
benchmark's own task list (``--benchmark bfcl``, BFCL data files, a tau2 ``tasks.json``, a
tau-bench v1 task module, a ToolSandbox ``result_summary.json``, or ``--tasks FILE``;
:mod:`prefixexec.tasklists`), written in the form the benchmark's runner takes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

import attrs

from prefixexec.cli import add_adapter_options, add_quiet_option, int_at_least

if TYPE_CHECKING:
    from prefixexec.options import AdapterArguments

NAME = "sample"
#: Output formats (SAMPLE-FORMAT).
FORMATS = ("lines", "bfcl")


@attrs.frozen(slots=True)
class Options:
    """``sample``'s arguments, typed (API-PIPELINE); ``arguments.adapter`` is ``auto`` until the
    files are found to be results, not a task list."""

    arguments: AdapterArguments
    stdout: TextIO
    benchmark: str | None = None
    tasks: str | None = None
    split: str | None = None
    per_category: int | None = None
    size: int | None = None
    seed: int = 0
    output: str | None = None
    format: str | None = None
    json: bool = False
    quiet: bool = False


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        NAME,
        help="draw a stratified task sample (the paper's section 2.6), before or after a model runs",
        description="Draw tasks with a seed, from a benchmark's own task list (--benchmark bfcl; BFCL "
        "data files BFCL_v<N>_multi_turn_<category>.json; a tau2 tasks.json; a tau-bench v1 task module "
        "tasks_<split>.py; a ToolSandbox result_summary.json; --tasks FILE) or from the tasks of result "
        "files read with --adapter. --per-category N takes N tasks of every stratum (BFCL category, "
        "tau-bench domain, ToolSandbox scenario category, any other adapter's dataset); --size N takes N "
        "in all, each stratum in proportion. Writes the ids in the form the benchmark's runner takes "
        "(BFCL: its --run-ids id file; others: one per line), which 'score --select task_id=@FILE' "
        "also reads; a summary and the runner's command go to stderr.",
    )
    parser.add_argument("files", nargs="*", metavar="FILE", help="task lists or result files ('-' for stdin)")
    parser.add_argument(
        "--benchmark",
        choices=("bfcl",),
        help="the installed benchmark's own tasks: bfcl (every multi-turn category of bfcl-eval)",
    )
    parser.add_argument(
        "--tasks",
        metavar="FILE",
        help="a task list: one task a line, ID or ID<TAB>STRATUM[<TAB>STRATUM...]",
    )
    parser.add_argument(
        "--split",
        metavar="NAME",
        help="tau2: the split of split_tasks.json beside tasks.json (default: base, as tau2 run)",
    )
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
    parser.add_argument(
        "--format",
        choices=FORMATS,
        help="lines: one id per line; bfcl: BFCL's test_case_ids_to_generate.json (category -> ids; "
        "default for BFCL task lists)",
    )
    parser.add_argument("--json", action="store_true", help="print the sample and its strata as JSON")
    add_quiet_option(parser)
    parser.set_defaults(detect_in_command=True)  # a task list is not detected as rollouts


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


def _task_list(options: Options) -> Any:
    """The benchmark task list the arguments name, or ``None`` for result files."""
    from prefixexec import tasklists
    from prefixexec.adapters import InputError

    files = list(options.arguments.files)
    given = [name for name, on in (("FILE", bool(files)), ("--benchmark", options.benchmark),
                                   ("--tasks", options.tasks)) if on]  # fmt: skip
    if len(given) != 1:
        one = "give one of FILE..., --benchmark or --tasks"
        raise InputError("sample", f"give only one of {', '.join(given)}" if given else one)
    if options.benchmark == "bfcl":
        return tasklists.bfcl_installed()
    if options.tasks is not None:
        return tasklists.plain_list(options.tasks)
    found = tasklists.read(files, options.split)
    if found is not None and options.arguments.given is None:
        return found
    return None


def _check_task_list_options(arguments: AdapterArguments) -> None:
    """Adapter options and --select have nothing to act on in a benchmark's task list."""
    from prefixexec.adapters import InputError

    for name in ("model", "method", "category", "threshold", "scorer", "error_pattern", "by", "label_rules",
                 "inference_errors", "select"):  # fmt: skip
        if getattr(arguments, name) not in (None, ()):
            flag = "--" + name.replace("_", "-")
            raise InputError(flag, "applies to result files, not to a benchmark's task list")
    if arguments.adapter not in ("auto", None):
        raise InputError("--adapter", "applies to result files, not to a benchmark's task list")


def document(
    drawn: Any, labels: Mapping[str, frozenset[str]], seed: int, source: str, fmt: str, hint: str | None
) -> dict[str, Any]:
    """The ``sample --json`` document (SAMPLE-JSON)."""
    return {
        "source": source,
        "seed": seed,
        "format": fmt,
        "tasks": list(drawn.tasks),
        "available": len(labels),
        "strata": {
            label: {"available": n, "picked": drawn.picked[label]} for label, n in drawn.available.items()
        },
        "runner": hint,
    }


def run(options: Options) -> int:
    from pathlib import Path

    from prefixexec import tasklists
    from prefixexec.adapters import InputError
    from prefixexec.adapters.files import atomic_path, output_directory
    from prefixexec.sampling import sample
    from prefixexec.scoring import dumps

    tasklist = _task_list(options)
    if tasklist is not None:
        _check_task_list_options(options.arguments)
        labels = dict(tasklist.tasks)
        source = tasklist.source
    else:
        from prefixexec.options import input_options
        from prefixexec.pipeline import detect, read_rollouts

        if options.split is not None:
            raise InputError("--split", "only applies to a tau2 tasks.json")
        arguments = detect(options.arguments, options.quiet)
        labels = task_labels(read_rollouts(input_options(arguments)))
        source = f"results ({', '.join(arguments.files)})"
    fmt = options.format or ("bfcl" if tasklist is not None and tasklist.runner == "bfcl" else "lines")
    drawn = sample(labels, seed=options.seed, per_category=options.per_category, size=options.size)
    if fmt == "bfcl":
        from prefixexec.adapters.bfcl.backend import category_of

        outside = [t for t in drawn.tasks if not category_of(t).startswith("multi_turn_")]
        if outside:
            raise InputError("--format bfcl", f"{outside[0]!r} is not a BFCL multi-turn task id")
        text = tasklists.bfcl_id_file(drawn.tasks)
    else:
        text = "".join(f"{task}\n" for task in drawn.tasks)
    hint = None if tasklist is None else tasklists.runner_hint(tasklist, drawn.tasks, options.output, fmt)
    if options.output is not None:
        output_directory(options.output)
        with atomic_path(Path(options.output)) as tmp:
            Path(tmp).write_text(text, encoding="utf-8")
    if options.json:
        options.stdout.write(dumps(document(drawn, labels, options.seed, source, fmt, hint)))
    elif options.output is None:
        options.stdout.write(text)
    if not options.quiet:
        strata = ", ".join(f"{label} {drawn.picked[label]}/{n}" for label, n in drawn.available.items())
        sys.stderr.write(
            f"prefixexec: sampled {len(drawn.tasks)} of {len(labels)} tasks of {source} "
            f"(seed {options.seed}): "
            f"{strata}\n"
        )
        if hint is not None:
            sys.stderr.write(f"prefixexec: run them with: {hint}\n")
    return 0
