"""``prefixexec leaderboard FILE...``: rank systems by success and by executability (LB-*)."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, TextIO

import attrs

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
    from prefixexec.kernel import Rollout
    from prefixexec.kernel.passk import Convention
    from prefixexec.options import AdapterArguments, EngineOptions, Resampling
    from prefixexec.ranking.run import LeaderboardRun

NAME = "leaderboard"

#: ``--format`` choices; ``--json`` is ``--format json``.
FORMATS = ("text", "md", "tex", "csv", "json")
#: What ``--by`` names a system (the adapter option ``--by category`` keeps its meaning).
SYSTEM_BY = ("condition", "model", "method")


@attrs.frozen(slots=True)
class Options:
    """``leaderboard``'s arguments, typed (API-PIPELINE): the input (``arguments.by`` may name
    what a system is, :data:`SYSTEM_BY`), the interval protocol, the engine, what is ranked and
    where the table goes; :func:`run_options` checks them into a
    :class:`~prefixexec.ranking.run.LeaderboardRun`."""

    arguments: AdapterArguments
    resampling: Resampling
    engine: EngineOptions
    stdout: TextIO
    system_from: str = "submission"
    metric: tuple[str, ...] | None = None
    k: int | None = None
    trials: Convention = "tau2"
    shared_tasks: bool = False
    format: str = "text"
    json: bool = False
    output: str | None = None
    figure: tuple[str, ...] | None = None
    site: str | None = None
    quiet: bool = False


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
    p.add_argument(
        "--site",
        metavar="DIR",
        help="also write a static page set to DIR: an index, a page per domain and per system (curves, "
        "failing rollouts), the claims table; DIR is new, empty or an earlier site (spec/site.md)",
    )
    add_engine_options(p)
    add_quiet_option(p)


def run_options(options: Options) -> LeaderboardRun:
    """The typed options as :class:`~prefixexec.ranking.run.LeaderboardRun`, checked before any
    input is read: the submissions the paths name (LB-FOLDER) and the adapter of their files,
    or the trajectory files' adapter detected as ``score`` detects it."""
    from prefixexec.options import input_options, signature_of
    from prefixexec.pipeline import detect
    from prefixexec.ranking import LeaderboardOptions
    from prefixexec.ranking.run import LeaderboardRun
    from prefixexec.submissions import discover, is_folder_input

    arguments, resampling = options.arguments, options.resampling
    system_by = "condition"
    if arguments.by in SYSTEM_BY:  # what a system is, not the ToolSandbox split (--by category)
        system_by, arguments = arguments.by, attrs.evolve(arguments, by=None)
    submissions = None
    system_from = options.system_from
    # pooled / file are the tau-bench adapter's (TAU-POOL, TAU-SYSTEM-FILE); the others name submissions
    adapter_system = system_from if system_from in ("pooled", "file") else None
    arguments = attrs.evolve(arguments, system_from=adapter_system)
    if is_folder_input(arguments.files):
        if system_from == "pooled":
            raise InputError(
                "--system-from", "pooled applies to tau-bench trajectory files, not to submission folders"
            )
        arguments = attrs.evolve(arguments, system_from=None)
        submissions = discover(arguments.files)
        for flag, given in (
            ("--select", arguments.select),
            ("--engine dask", options.engine.engine == "dask"),
        ):
            if given:
                raise InputError(flag, "applies to trajectory files, not to submission folders")
        files = [f for s in submissions for f in s.files]
        if arguments.adapter == "auto" and files:
            from prefixexec.adapters.detect import resolve

            arguments = attrs.evolve(arguments, adapter=resolve(files)[0])
        elif arguments.adapter == "auto":
            arguments = attrs.evolve(arguments, adapter="taubench")  # no trajectories: only claims
    else:
        if system_from not in ("submission", "pooled", "file"):
            raise InputError(
                "--system-from", f"{system_from} applies to submission folders (give --by for files)"
            )
        system_from = "submission"
        arguments = detect(arguments, options.quiet, options.engine.engine)
    with _hinted(arguments.adapter, arguments.files, submissions):
        return LeaderboardRun(
            input=input_options(arguments),
            ranking=LeaderboardOptions(
                by=system_by,
                metrics=options.metric or LeaderboardOptions().metrics,
                k=options.k,
                trials=options.trials,
                shared_tasks=options.shared_tasks,
            ),
            bootstrap=resampling.settings,
            signature=signature_of(arguments, resampling.bootstrap, resampling.seed, resampling.level),
            engine=options.engine,
            submissions=submissions,
            system_from=system_from,
            format="json" if options.json else options.format,
            quiet=options.quiet,
        )


def _hinted(adapter: str, paths: Sequence[str], submissions: object) -> AbstractContextManager[None]:
    """DETECT-HINT: with submission folders, an input error names the adapter found for their
    files, the hint looking at the paths given; trajectory files are the command line's."""
    if submissions is None:
        return contextlib.nullcontext()
    from prefixexec.pipeline import hint_input

    return hint_input(adapter, paths)


def run(options: Options) -> int:
    from pathlib import Path

    from prefixexec.adapters.files import check_outputs
    from prefixexec.pipeline import write_output
    from prefixexec.ranking.run import leaderboard, render
    from prefixexec.site.command import site_folder, write_leaderboard_site
    from prefixexec.ttyprogress import Work

    figures = list(options.figure or ())
    check_outputs(figures)  # HOSTILE-OUTPUT-EARLY: before any input is read
    for path in figures:
        if Path(path).suffix.lower().lstrip(".") not in ("png", "svg", "pdf"):
            raise InputError(path, "--figure must end in .png, .svg or .pdf")
    if figures:
        from prefixexec.extras import require

        require("matplotlib", "--figure")
    site = site_folder(options.site, options.engine.engine)  # SITE-OVERWRITE: before any input is read
    typed = run_options(options)
    kept: list[Rollout] = []
    hinted = _hinted(typed.input.adapter, options.arguments.files, typed.submissions)
    with Work(typed.quiet, "prefixexec leaderboard") as work, hinted:
        work.phase("reading input", unit="rollouts")  # PROGRESS-TTY, PROGRESS-COUNT
        document = leaderboard(
            typed, on_rows=work.advance, on_phase=work.phase, on_rollouts=kept.extend if site else None
        )
    text = render(document, typed.format)
    rendered = {}
    if figures:
        from prefixexec.ranking.figure import figure_bytes

        rendered = {path: figure_bytes(document, Path(path).suffix.lower().lstrip(".")) for path in figures}
    # SITE-PAGES: a domain is a dataset, the claims the document's; written (all pages or none)
    # before the table, so that a site that cannot be written leaves only its error (HOSTILE-ERROR-PATH)
    write_leaderboard_site(site, document, kept)
    write_output(text, options.output, options.stdout)
    for path, data in rendered.items():
        _write_bytes(path, data)
    return 0


def _write_bytes(path: str, data: bytes) -> None:
    from pathlib import Path

    from prefixexec.adapters.files import atomic_path

    with atomic_path(Path(path)) as tmp:
        Path(tmp).write_bytes(data)
