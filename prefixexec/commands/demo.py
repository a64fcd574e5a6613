"""``prefixexec demo --out DIR``: the full report on BFCL gold and simulated agents (spec: REP-DEMO)."""

from __future__ import annotations

import argparse
import sys

from prefixexec.cli import add_bootstrap_options, installed_version, settings_of
from prefixexec.commands.report import add_report_options
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


def run(args: argparse.Namespace) -> int:
    from prefixexec import demo
    from prefixexec.report import (
        RENDER_STEPS,
        Progress,
        ReportOptions,
        evaluate_by_dataset,
        prepare_folder,
        publish,
    )

    prepare_folder(args.out)
    steps = 1 + (1 + len(demo.AGENTS)) + 1 + RENDER_STEPS + 1
    progress = Progress(steps, enabled=not args.quiet, label="prefixexec demo")
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
    options = ReportOptions(
        checkpoints=args.checkpoints,
        max_depth=args.max_depth,
        eligible=args.eligible,
        title=demo.TITLE,
        note=demo.NOTE,
        bands=not args.no_bands,
        label_shares=args.label_shares,
        tex_compact=args.tex_compact,
    )
    extra = {
        "agents.md": demo.agents_markdown().encode("utf-8"),
        "records.jsonl": demo.records_jsonl(replayed).encode("utf-8"),
    }
    target, files = publish(args.out, rollouts, results, str(signature), options, settings, progress, extra)
    sys.stdout.write(files["table.md"].decode("utf-8"))
    sys.stdout.write(
        f"\nThe agents are simulated (see {target / 'agents.md'}).\n"
        f"Full report ({len(files)} files) in {target}; open {target / 'report.html'}\n"
    )
    return 0
