"""``prefixexec demo --out DIR``: the full report on BFCL gold and simulated agents (spec: REP-DEMO)."""

from __future__ import annotations

import argparse
from typing import Any

from prefixexec.cli import add_bootstrap_options, installed_version, settings_of, stdout
from prefixexec.commands.report import add_report_options, options_of
from prefixexec.signature import Signature

NAME = "demo"
#: The signature's adapter field for the demo's outcomes (BFCL adapter replays of the demo agents).
ADAPTER = "bfcl-demo"


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


def render(args: argparse.Namespace, progress: Any) -> tuple[Any, dict[str, bytes]]:
    """The demo's report, rendered in memory (the command and ``prefixexec.demo()``)."""
    from prefixexec import demo
    from prefixexec.report import assemble, evaluate_by_dataset

    progress.step("loading BFCL tasks")
    tasks = demo.sample_tasks()
    replayed = demo.simulate(tasks, progress.step)
    rollouts = [d.rollout for d in replayed]
    settings = settings_of(args)
    results = evaluate_by_dataset(rollouts, settings, paired=True, progress=progress)
    signature = Signature(
        ADAPTER,
        args.bootstrap,
        args.seed,
        args.level,
        paired=True,
        adapter_options=(("bfcl-eval", installed_version("bfcl-eval")),),
    )
    options = options_of(args, title=demo.TITLE, note=demo.NOTE)
    extra = {
        "agents.md": demo.agents_markdown().encode("utf-8"),
        "records.jsonl": demo.records_jsonl(replayed).encode("utf-8"),
    }
    return assemble(rollouts, results, str(signature), options, settings, progress, extra)


def steps() -> int:
    """The steps the demo announces to its progress bar."""
    from prefixexec import demo
    from prefixexec.report import RENDER_STEPS

    return 1 + (1 + len(demo.AGENTS)) + 1 + RENDER_STEPS + 1


def write(args: argparse.Namespace, out: str, report: Any, files: dict[str, bytes]) -> Any:
    """Write the rendered folder; returns it."""
    from prefixexec.report import prepare_folder, write_files

    prepare_folder(out)
    return write_files(out, files)


def run(args: argparse.Namespace) -> int:
    from prefixexec.report import Progress, prepare_folder

    prepare_folder(args.out)
    progress = Progress(steps(), enabled=not args.quiet, label="prefixexec demo")
    report, files = render(args, progress)
    progress.step("writing files")
    target = write(args, args.out, report, files)
    progress.close()
    out = stdout(args)
    out.write(files["table.md"].decode("utf-8"))
    out.write(
        f"\nThe agents are simulated (see {target / 'agents.md'}).\n"
        f"Full report ({len(files)} files) in {target}; open {target / 'report.html'}\n"
    )
    return 0
