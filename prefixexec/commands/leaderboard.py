"""``prefixexec leaderboard FILE...``: rank systems by success and by executability (LB-*)."""

from __future__ import annotations

import argparse

from prefixexec.cli import (
    add_adapter_options,
    add_bootstrap_options,
    add_engine_options,
    add_quiet_option,
    int_at_least,
)

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
    p.add_argument("files", nargs="+", metavar="FILE", help="input files ('-' for stdin)")
    add_adapter_options(p)
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
        help="score every system on the tasks all systems of its dataset share (says how many were "
        "dropped); without it, systems that do not share their tasks are refused",
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
    p.add_argument(
        "--site",
        metavar="DIR",
        help="also write a static page set to DIR: an index, a page per domain and per system (curves, "
        "failing rollouts), the claims table; DIR is new, empty or an earlier site (spec/site.md)",
    )
    add_engine_options(p)
    add_quiet_option(p)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from prefixexec.adapters import InputError
    from prefixexec.adapters.files import check_outputs
    from prefixexec.cli import _write, settings_of, signature_of
    from prefixexec.ranking import LeaderboardOptions, leaderboard_document
    from prefixexec.ranking.tables import WRITERS
    from prefixexec.scoring import dumps
    from prefixexec.site.command import read_for_site, site_folder, write_leaderboard_site
    from prefixexec.ttyprogress import Work

    system_by = "condition"
    if args.by in SYSTEM_BY:
        system_by, args.by = args.by, None
    figures = list(args.figure or [])
    check_outputs(figures)  # HOSTILE-OUTPUT-EARLY: before any input is read
    for path in figures:
        if Path(path).suffix.lower().lstrip(".") not in ("png", "svg", "pdf"):
            raise InputError(path, "--figure must end in .png, .svg or .pdf")
    if figures:
        from prefixexec.extras import require

        require("matplotlib", "--figure")
    options = LeaderboardOptions(
        by=system_by,
        metrics=args.metric or LeaderboardOptions().metrics,
        k=args.k,
        trials=args.trials,
        shared_tasks=args.shared_tasks,
    )
    site = site_folder(args)  # SITE-OVERWRITE: before any input is read
    with Work(args.quiet, "prefixexec leaderboard") as work:  # PROGRESS-TTY, PROGRESS-COUNT
        work.phase("reading input", unit="rollouts")
        accumulators, rollouts = read_for_site(args, work.advance, site)
        work.phase(f"ranking ({args.bootstrap} resamples)" if args.bootstrap else "ranking")
        document = leaderboard_document(accumulators, settings_of(args), options, str(signature_of(args)))
    fmt = "json" if args.json else args.format
    text = dumps(document) if fmt == "json" else WRITERS[fmt](document)
    rendered = {}
    if figures:
        from prefixexec.ranking.figure import figure_bytes

        rendered = {path: figure_bytes(document, Path(path).suffix.lower().lstrip(".")) for path in figures}
    _write(text, args.output, args)
    for path, data in rendered.items():
        _write_bytes(path, data)
    write_leaderboard_site(site, document, rollouts)  # SITE-PAGES: a domain is a dataset today
    return 0


def _write_bytes(path: str, data: bytes) -> None:
    from pathlib import Path

    from prefixexec.adapters.files import atomic_path

    with atomic_path(Path(path)) as tmp:
        Path(tmp).write_bytes(data)
