"""``prefixexec leaderboard FILE...``: rank systems by success and by executability (LB-*)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from prefixexec.adapters import InputError
from prefixexec.cli import (
    add_adapter_options,
    add_bootstrap_options,
    add_engine_options,
    add_quiet_option,
    int_at_least,
)
from prefixexec.submissions import SYSTEM_FROM

if TYPE_CHECKING:
    from prefixexec.ranking.run import LeaderboardRun

NAME = "leaderboard"

#: ``--format`` choices; ``--json`` is ``--format json``.
FORMATS = ("text", "md", "tex", "csv", "json")
#: What ``--by`` names a system (the adapter option ``--by category`` keeps its meaning).
SYSTEM_BY = ("condition", "model", "method")


def _metric_list(text: str) -> list[str]:
    from prefixexec.ranking import PREFIX_METRICS

    names = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in names if m not in PREFIX_METRICS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"expected metrics among {', '.join(PREFIX_METRICS)} (success is always ranked): {text!r}"
        )
    return names


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        NAME,
        help="rank systems by success and by prefix executability, with rank intervals and pass^k",
        description="One row per system of each dataset (success, TER, AUC-PEC, mean FED, RR, pass^k, "
        "TER^k with intervals), each system's rank per metric with a bootstrap rank interval, Kendall's "
        "tau-b between the success ranking and each other metric's, and the pairs the two order "
        "differently (spec/leaderboard.md).",
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="PATH",
        help="submission folders (tau2: submission.json + trajectories/), a folder of them, BFCL's "
        "result/ (+ score/) folder, or trajectory files ('-' for stdin)",
    )
    p.set_defaults(detect_in_command=True)  # each submission's files are detected (LB-FOLDER)
    add_adapter_options(p)
    system_from = next(a for a in p._actions if a.dest == "system_from")  # the adapters' option, extended
    system_from.choices = (*SYSTEM_FROM, "pooled")
    system_from.default = "submission"
    system_from.help = (
        "what one system is: of submissions, submission (default: named from its submission.json: model, "
        "organisation, type, date), folder (its folder's name), file (each trajectory file) or model (the "
        "model / agent the trajectories name); of tau-bench trajectory files, pooled (several runs of one "
        "system are its trials, TAU-POOL) or file (each file its own system, TAU-SYSTEM-FILE)"
    )
    by = next(a for a in p._actions if a.dest == "by")
    by.choices = (*SYSTEM_BY, *(by.choices or ()))
    by.help = (
        "what one system is: condition (model / method, default), model or method; "
        "category keeps its ToolSandbox meaning (one dataset per scenario category)"
    )
    add_bootstrap_options(p, allow_unpaired=False)
    p.add_argument(
        "--metric",
        type=_metric_list,
        action="extend",
        metavar="M[,M...]",
        help="the metrics ranked beside success (repeatable; default all: TER, AUC_PEC, mean_FED, RR, "
        "pass_hat_k, ter_hat_k)",
    )
    p.add_argument(
        "--k",
        type=int_at_least(1),
        metavar="K",
        help="k of pass^k and TER^k (default: the largest k every system allows, PASSK-TRIALS)",
    )
    p.add_argument(
        "--trials",
        choices=("tau2", "run"),
        default="tau2",
        help="a task's n for pass^k: tau2 = its own trials, k up to the smallest (default); run = the run's "
        "distinct trial numbers for every task (tau-bench v1)",
    )
    p.add_argument(
        "--shared-tasks",
        action="store_true",
        help="score every system on the tasks all systems of its dataset share, paired (says how many "
        "were dropped; warns below 20); without it, systems that do not share their tasks are each "
        "ranked on their own tasks with unpaired intervals",
    )
    p.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    p.add_argument("--json", action="store_true", help="print the JSON document (same as --format json)")
    p.add_argument("--output", metavar="PATH", help="write the table or document to PATH instead of stdout")
    p.add_argument(
        "--figure",
        action="append",
        metavar="PATH",
        help="also draw success against TER and AUC-PEC to PATH (.png, .svg or .pdf; repeatable)",
    )
    add_engine_options(p)
    add_quiet_option(p)


def options(args: argparse.Namespace) -> LeaderboardRun:
    """The command line's arguments as :class:`~prefixexec.ranking.run.LeaderboardRun`
    (API-PIPELINE: the ``Namespace`` ends here), checked before any input is read."""
    from prefixexec.cli import engine_options, input_options, resolve_adapter, settings_of, signature_of
    from prefixexec.ranking import LeaderboardOptions
    from prefixexec.ranking.run import LeaderboardRun
    from prefixexec.submissions import discover, is_folder_input

    system_by = "condition"
    if args.by in SYSTEM_BY:
        system_by, args.by = args.by, None
    submissions = None
    system_from = args.system_from
    args.system_from = system_from if system_from in ("pooled", "file") else None  # the adapter's (TAU-POOL)
    if is_folder_input(args.files):
        if system_from == "pooled":
            raise InputError(
                "--system-from", "pooled applies to tau-bench trajectory files, not to submission folders"
            )
        args.system_from = None
        submissions = discover(args.files)
        for flag, given in (("--select", args.select), ("--engine dask", args.engine == "dask")):
            if given:
                raise InputError(flag, "applies to trajectory files, not to submission folders")
        files = [f for s in submissions for f in s.files]
        if args.adapter == "auto" and files:
            from prefixexec.adapters.detect import resolve

            args.adapter = resolve(files)[0]
        elif args.adapter == "auto":
            args.adapter = "taubench"  # no trajectories: only claims, listed as not checkable
    else:
        if system_from not in ("submission", "pooled", "file"):
            raise InputError(
                "--system-from", f"{system_from} applies to submission folders (give --by for files)"
            )
        system_from = "submission"
        args.detect_in_command = False
        resolve_adapter(args)
    return LeaderboardRun(
        input=input_options(args),
        ranking=LeaderboardOptions(
            by=system_by,
            metrics=args.metric or LeaderboardOptions().metrics,
            k=args.k,
            trials=args.trials,
            shared_tasks=args.shared_tasks,
        ),
        bootstrap=settings_of(args),
        signature=signature_of(args),
        engine=engine_options(args),
        submissions=submissions,
        system_from=system_from,
        format="json" if args.json else args.format,
        quiet=bool(args.quiet),
    )


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from prefixexec.adapters.files import check_outputs
    from prefixexec.cli import _write
    from prefixexec.ranking.run import leaderboard, render
    from prefixexec.ttyprogress import Work

    figures = list(args.figure or [])
    check_outputs(figures)  # HOSTILE-OUTPUT-EARLY: before any input is read
    for path in figures:
        if Path(path).suffix.lower().lstrip(".") not in ("png", "svg", "pdf"):
            raise InputError(path, "--figure must end in .png, .svg or .pdf")
    if figures:
        from prefixexec.extras import require

        require("matplotlib", "--figure")
    typed = options(args)
    with Work(typed.quiet, "prefixexec leaderboard") as work:  # PROGRESS-TTY, PROGRESS-COUNT
        work.phase("reading input", unit="rollouts")
        document = leaderboard(typed, on_rows=work.advance, on_phase=work.phase)
    text = render(document, typed.format)
    rendered = {}
    if figures:
        from prefixexec.ranking.figure import figure_bytes

        rendered = {path: figure_bytes(document, Path(path).suffix.lower().lstrip(".")) for path in figures}
    _write(text, args.output, args)
    for path, data in rendered.items():
        _write_bytes(path, data)
    return 0


def _write_bytes(path: str, data: bytes) -> None:
    from pathlib import Path

    from prefixexec.adapters.files import atomic_path

    with atomic_path(Path(path)) as tmp:
        Path(tmp).write_bytes(data)
