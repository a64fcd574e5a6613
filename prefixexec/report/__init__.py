"""``prefixexec report``: tables, figures and a page people read (spec: spec/report.md).

The pipeline is pure until the last step: :func:`build_report` arranges scored conditions,
:func:`render_files` renders every file to bytes in memory, and only then :func:`write_files`
writes them, so bad input never leaves a partial report behind (REP-FILES).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prefixexec.adapters import InputError
from prefixexec.adapters.files import atomic_path
from prefixexec.adapters.harness import HarnessLog
from prefixexec.inference import ConditionResult, evaluate
from prefixexec.kernel import Rollout
from prefixexec.kernel.bootstrap import BootstrapSettings
from prefixexec.rollouts import jsonl_text, rows
from prefixexec.scoring import dumps

from .model import DEFAULT_CHECKPOINTS, Block, Report, ReportOptions, build_report
from .progress import Progress

#: Every file a report folder holds, in the order they are written (REP-FILES).
FILES: tuple[str, ...] = (
    "table.md",
    "table.tex",
    "table.csv",
    "pec.png",
    "pec.svg",
    "pec.pdf",
    "pec_elig.png",
    "pec_elig.svg",
    "pec_elig.pdf",
    "checkpoints.md",
    "checkpoints.csv",
    "labels.md",
    "labels.csv",
    "labels.png",
    "labels.svg",
    "labels.pdf",
    "decomposition.md",
    "leaderboard.md",
    "leaderboard.tex",
    "leaderboard.csv",
    "leaderboard.json",
    "leaderboard.png",
    "leaderboard.svg",
    "leaderboard.pdf",
    "rollouts.jsonl",
    "report.html",
    "summary.json",
)

#: Steps :func:`render_files` announces to a progress bar.
RENDER_STEPS = 5


def evaluate_by_dataset(
    rollouts: Sequence[Rollout],
    settings: BootstrapSettings | None,
    paired: bool = True,
    progress: Progress | None = None,
) -> list[ConditionResult]:
    """:func:`prefixexec.inference.evaluate`, one dataset at a time (to show progress).

    The bootstrap draws one matrix per dataset (BOOT-DRAW), so evaluating the datasets apart
    gives the same results as evaluating them together; the order is the condition order.
    """
    datasets: dict[str, list[Rollout]] = {}
    for r in rollouts:
        datasets.setdefault(r.condition.dataset, []).append(r)
    results: list[ConditionResult] = []
    for name in sorted(datasets):
        if progress is not None:
            progress.step(f"scoring {name}")
        from prefixexec.scale import available_memory

        results += evaluate(  # intervals only, in bounded memory (BOOT-BLOCK, BOOT-MEMORY)
            datasets[name], settings, paired=paired, keep_replicates=False, memory_limit=available_memory()
        )
    return sorted(results, key=lambda r: r.key)


def render_files(
    report: Report, progress: Progress | None = None, extra: Mapping[str, bytes] | None = None
) -> dict[str, bytes]:
    """Every file of the report folder, rendered in memory (name -> bytes).

    ``extra`` files (e.g. the demo's ``rollouts.jsonl``) are added after :data:`FILES` and listed
    in the page and the summary.
    """
    from prefixexec.ranking.figure import leaderboard_figure
    from prefixexec.ranking.tables import leaderboard_csv, leaderboard_md, leaderboard_tex

    from . import figures, html, summary, tables

    board_writers = {"md": leaderboard_md, "tex": leaderboard_tex, "csv": leaderboard_csv, "json": dumps}

    extra = dict(extra or {})
    names = FILES + tuple(n for n in extra if n not in FILES)

    def step(what: str) -> None:
        if progress is not None:
            progress.step(what)

    step("tables")
    text: dict[str, str] = {
        "table.md": tables.table_md(report),
        "table.tex": tables.table_tex(report),
        "table.csv": tables.table_csv(report),
        "checkpoints.md": tables.checkpoints_md(report),
        "checkpoints.csv": tables.checkpoints_csv(report),
        "labels.md": tables.labels_md(report),
        "labels.csv": tables.labels_csv(report),
        "decomposition.md": tables.decomposition_md(report),
    }
    step("PEC figures")
    binary: dict[str, bytes] = figures.render_all(figures.pec_figure(report), "pec")
    binary |= figures.render_all(figures.elig_figure(report), "pec_elig")
    step("label figure")
    binary |= figures.render_all(figures.labels_figure(report), "labels")
    board = _leaderboard(report)  # LB-REPORT
    text |= {f"leaderboard.{ext}": write(board) for ext, write in board_writers.items()}
    binary |= figures.render_all(leaderboard_figure(board), "leaderboard")
    text["rollouts.jsonl"] = jsonl_text(rows(report.rollouts))
    step("HTML page")
    text["report.html"] = html.report_html(report, binary, names, board)
    step("summary")
    text["summary.json"] = dumps(summary.summary_document(report, names))
    files = {name: data.encode("utf-8") for name, data in text.items()} | binary | extra
    return {name: files[name] for name in names}


def _leaderboard(report: Report) -> dict[str, Any]:
    """LB-REPORT: the leaderboard of the report's rollouts, on the tasks each dataset's systems
    share, with the report's bootstrap settings."""
    from prefixexec.kernel.accumulator import AccumulatorSet
    from prefixexec.ranking import LeaderboardOptions, leaderboard_document

    settings = None if report.bootstrap is None else BootstrapSettings(*report.bootstrap)
    return leaderboard_document(
        AccumulatorSet.from_rollouts(report.rollouts),
        settings,
        LeaderboardOptions(shared_tasks=True),
        report.signature,
        skip_unshared=True,
    )


def assemble(
    rollouts: Sequence[Rollout],
    results: Sequence[ConditionResult],
    signature: str,
    options: ReportOptions,
    settings: BootstrapSettings | None,
    progress: Progress | None = None,
    extra: Mapping[str, bytes] | None = None,
    harness: HarnessLog | None = None,
) -> tuple[Report, dict[str, bytes]]:
    """Build and render a report in memory (``report``, ``demo`` and ``prefixexec.report()``);
    ``harness``: the harness errors of an adapter that reads them (HARNESS-REPORT)."""
    boot = None if settings is None else (settings.B, settings.seed, settings.level)
    report = build_report(rollouts, results, signature, options, boot, harness)
    return report, render_files(report, progress, extra)


def publish(
    out: str,
    rollouts: Sequence[Rollout],
    results: Sequence[ConditionResult],
    signature: str,
    options: ReportOptions,
    settings: BootstrapSettings | None,
    progress: Progress,
    extra: Mapping[str, bytes] | None = None,
    harness: HarnessLog | None = None,
) -> tuple[Path, dict[str, bytes]]:
    """Build, render and write a report folder: the last steps of ``report`` and ``demo``."""
    _, files = assemble(rollouts, results, signature, options, settings, progress, extra, harness)
    progress.step("writing files")
    target = write_files(out, files)
    progress.close()
    return target, files


def prepare_folder(out: str, names: Sequence[str] = FILES) -> Path:
    """Check that ``out`` can be a report folder, and every file the report will write in it
    (``names``), before anything is read; raises :class:`InputError` otherwise (HOSTILE-REPORT:
    a file of the report that is an input, a directory or a special file is refused at once).

    Nothing is created here: the folder is made only when the files are written.
    """
    from prefixexec.adapters.files import check_report_file

    target = Path(out)
    if target.exists() and not target.is_dir():
        raise InputError(out, "cannot write the report: exists and is not a directory")
    for name in names:
        check_report_file(str(target / name))
    return target


def write_files(out: str, files: Mapping[str, bytes]) -> Path:
    """Write the rendered files into ``out`` (made if missing), all or none (HOSTILE-REPORT):
    every file is written to a temporary file beside its target first, and the temporary files
    are renamed over the targets only when all of them were written; on any fault they are
    removed, and a folder made for the report is removed again."""
    target = prepare_folder(out, tuple(files))
    made = not target.exists()
    try:
        target.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as stack:
            for name, data in files.items():
                tmp = stack.enter_context(atomic_path(target / name))
                Path(tmp).write_bytes(data)
    except OSError as exc:
        _remove_if_made(target, made)
        raise InputError(out, f"cannot write the report: {exc.strerror or exc}") from None
    except BaseException:
        _remove_if_made(target, made)
        raise
    return target


def _remove_if_made(target: Path, made: bool) -> None:
    if made:
        with contextlib.suppress(OSError):
            target.rmdir()  # only when empty: the files were not written


__all__ = [
    "DEFAULT_CHECKPOINTS",
    "FILES",
    "Block",
    "Progress",
    "Report",
    "ReportOptions",
    "assemble",
    "build_report",
    "evaluate_by_dataset",
    "prepare_folder",
    "publish",
    "render_files",
    "write_files",
]


from prefixexec._callable import make_callable  # noqa: E402  # API-COMMANDS: prefixexec.report(...) runs the command

make_callable(__name__)
