"""``prefixexec demo --out DIR``: the full report on BFCL gold and simulated agents (spec: REP-DEMO)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

import attrs

from prefixexec.cli import add_bootstrap_options
from prefixexec.commands.report import add_report_options
from prefixexec.signature import Signature

if TYPE_CHECKING:
    from prefixexec.options import Resampling
    from prefixexec.report import ReportOptions

NAME = "demo"
#: The signature's adapter field for the demo's outcomes (BFCL adapter replays of the demo agents).
ADAPTER = "bfcl-demo"


@attrs.frozen(slots=True)
class Options:
    """``demo``'s arguments, typed (API-PIPELINE): the interval protocol, what the report shows
    (``view``: the demo's title and note are set when it renders) and where it goes."""

    resampling: Resampling
    view: ReportOptions
    stdout: TextIO
    out: str | None = None
    quiet: bool = False


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        NAME,
        help="run the report on BFCL multi-turn gold trajectories and simulated agents (needs bfcl-eval)",
        description="Replay 200 BFCL multi-turn tasks (from the installed bfcl-eval) for the gold calls and "
        "four SIMULATED agents (deterministic perturbations of the gold calls), write the full report "
        "into DIR and print the table. Install the benchmark with: "
        "pip install --no-deps bfcl-eval==2026.3.23 mpmath",
    )
    add_bootstrap_options(parser, allow_unpaired=False)
    add_report_options(parser)


def render(options: Options, progress: Any) -> tuple[Any, dict[str, bytes]]:
    """The demo's report, rendered in memory (the command and ``prefixexec.demo()``)."""
    from prefixexec import demo
    from prefixexec.options import installed_version
    from prefixexec.report import assemble, evaluate_by_dataset

    progress.step("loading BFCL tasks")
    tasks = demo.sample_tasks()
    replayed = demo.simulate(tasks, progress.step)
    rollouts = [d.rollout for d in replayed]
    resampling = options.resampling
    settings = resampling.settings
    results = evaluate_by_dataset(rollouts, settings, paired=True, progress=progress)
    signature = Signature(
        ADAPTER,
        resampling.bootstrap,
        resampling.seed,
        resampling.level,
        paired=True,
        adapter_options=(("bfcl-eval", installed_version("bfcl-eval")),),
    )
    view = attrs.evolve(options.view, title=demo.TITLE, note=demo.NOTE)
    extra = {
        "agents.md": demo.agents_markdown().encode("utf-8"),
        "records.jsonl": demo.records_jsonl(replayed).encode("utf-8"),
    }
    return assemble(rollouts, results, str(signature), view, settings, progress, extra)


def steps() -> int:
    """The steps the demo announces to its progress bar."""
    from prefixexec import demo
    from prefixexec.report import RENDER_STEPS

    return 1 + (1 + len(demo.AGENTS)) + 1 + RENDER_STEPS + 1


def write(options: Options, out: str, report: Any, files: dict[str, bytes]) -> Any:
    """Write the rendered folder; returns it."""
    from prefixexec.report import prepare_folder, write_files

    prepare_folder(out)
    return write_files(out, files)


def run(options: Options) -> int:
    from prefixexec.report import Progress, prepare_folder

    out = options.out
    if out is None:  # the command line requires --out; the Python function renders in memory
        from prefixexec.adapters import InputError

        raise InputError("--out", "the demo command needs a folder")
    prepare_folder(out)
    progress = Progress(steps(), enabled=not options.quiet, label="prefixexec demo")
    report, files = render(options, progress)
    progress.step("writing files")
    target = write(options, out, report, files)
    progress.close()
    stream = options.stdout
    stream.write(files["table.md"].decode("utf-8"))
    stream.write(
        f"\nThe agents are simulated (see {target / 'agents.md'}).\n"
        f"Full report ({len(files)} files) in {target}; open {target / 'report.html'}\n"
    )
    return 0
