"""``prefixexec report FILE... --out DIR``: tables, figures and a page (spec: spec/report.md)."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any, TextIO

import attrs

from prefixexec.adapters.text import printable
from prefixexec.cli import (
    add_adapter_options,
    add_bootstrap_options,
    add_quiet_option,
    add_rollouts_option,
    int_at_least,
)
from prefixexec.report.model import DEFAULT_CHECKPOINTS, FIGURE_SIZES

if TYPE_CHECKING:
    from prefixexec.options import AdapterArguments, Resampling
    from prefixexec.report import ReportOptions

NAME = "report"


@attrs.frozen(slots=True)
class Options:
    """``report``'s arguments, typed (API-PIPELINE): the input, the interval protocol, what the
    report shows (``view``) and where it goes (``out``: ``None`` in memory, the Python API)."""

    arguments: AdapterArguments
    resampling: Resampling
    view: ReportOptions
    stdout: TextIO
    out: str | None = None
    unpaired: bool = False
    quiet: bool = False


def checkpoint_list(text: str) -> tuple[int, ...]:
    """``1,2,4,8`` -> (1, 2, 4, 8); every depth an integer >= 1."""
    depths: list[int] = []
    for part in text.split(","):
        try:
            k = int(part.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected depths such as 1,2,4,8: {text!r}") from None
        if k < 1:
            raise argparse.ArgumentTypeError(f"depths must be >= 1: {text!r}")
        depths.append(k)
    return tuple(sorted(set(depths)))


#: A depth k >= 1.
depth = int_at_least(1)


def add_report_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``report`` and ``demo``: what the report shows and where it goes."""
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the report (made if missing)")
    parser.add_argument(
        "--checkpoints",
        type=checkpoint_list,
        default=DEFAULT_CHECKPOINTS,
        metavar="K,K,...",
        help="depths of the PEC checkpoint table (default 1,2,4,8)",
    )
    parser.add_argument("--max-depth", type=depth, metavar="K", help="deepest k drawn in the PEC figure")
    parser.add_argument("--eligible", action="store_true", help="also draw PEC_elig(k) as dashed lines")
    add_quiet_option(parser)
    parser.add_argument(
        "--no-bands", action="store_true", help="draw the curves without their interval bands"
    )
    parser.add_argument(
        "--label-shares",
        action="store_true",
        help="the labels figure shows shares of RR-Eligible instead of counts",
    )
    parser.add_argument(
        "--panel",
        choices=("dataset", "model"),
        default="dataset",
        help="one figure panel per dataset, the models of a dataset in it (default), or one per "
        "dataset and model (REP-PANEL)",
    )
    parser.add_argument(
        "--figure-size",
        choices=FIGURE_SIZES,
        default="double",
        help="figure width: single (one column of a two-column paper, 3.4 in) or double (a page, "
        "7 in; default); fonts are sized for print at that width (REP-FIG-SIZE)",
    )
    parser.add_argument(
        "--tex-compact",
        action="store_true",
        help="table.tex fits one column of a two-column paper (intervals on a second line)",
    )


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        NAME,
        help="write tables (md, tex, csv), PEC and label figures, an HTML page and summary.json",
        description="Write the paper's Table 2, PEC curves, checkpoints, first-failure labels and the "
        "decomposition of final success for every dataset x model into a folder.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="input files ('-' for stdin)")
    add_adapter_options(parser)
    add_bootstrap_options(parser)
    add_report_options(parser)
    add_rollouts_option(parser)


def render(options: Options, progress: Any) -> tuple[Any, dict[str, bytes]]:
    """The report of the arguments' input, rendered in memory (the command and ``prefixexec.report()``)."""
    from prefixexec.adapters import harness
    from prefixexec.options import input_options, signature_of
    from prefixexec.pipeline import check_rollouts_path, read_rollouts
    from prefixexec.report import assemble, evaluate_by_dataset
    from prefixexec.selection import parse

    arguments, resampling = options.arguments, options.resampling
    parse(arguments.select)  # a bad --select stops here, before anything is read
    if arguments.rollouts_path is not None:
        check_rollouts_path(arguments.rollouts_path)
    progress.step("reading input")
    with harness.collecting() as log:  # HARNESS-REPORT
        rollouts = read_rollouts(input_options(arguments))
    datasets = len({r.condition.dataset for r in rollouts})
    progress.total += datasets - 1
    settings = resampling.settings
    paired = not options.unpaired
    results = evaluate_by_dataset(rollouts, settings, paired=paired, progress=progress)
    signed = str(signature_of(arguments, resampling.bootstrap, resampling.seed, resampling.level, paired))
    found = log if arguments.adapter in harness.ADAPTERS else None
    return assemble(rollouts, results, signed, options.view, settings, progress, harness=found)


def steps() -> int:
    """The steps the report announces to its progress bar (more with more datasets)."""
    from prefixexec.report import RENDER_STEPS

    return 2 + RENDER_STEPS + 1


def check_paths(options: Options, out: str) -> None:
    """Every file the report will write, checked before anything is read (HOSTILE-REPORT), and
    ``--rollouts`` not one of them (HOSTILE-OUTPUT-TWICE)."""
    from prefixexec.report import prepare_folder

    prepare_folder(out)
    path = options.arguments.rollouts_path
    if path is not None:
        from prefixexec.adapters.files import check_distinct
        from prefixexec.report import FILES

        report_files = [(f"the report file {name}", os.path.join(out, name)) for name in FILES]
        check_distinct([*report_files, ("--rollouts", path)])


def write(options: Options, out: str, report: Any, files: dict[str, bytes]) -> Any:
    """Write the rendered folder, and ``--rollouts`` when given; returns the folder."""
    from prefixexec import rollouts as rollout_rows
    from prefixexec.report import prepare_folder, write_files

    prepare_folder(out)
    target = write_files(out, files)
    path = options.arguments.rollouts_path
    if path is not None:
        rollout_rows.write(path, rollout_rows.rows(report.rollouts))
    return target


def run(options: Options) -> int:
    from prefixexec.report import Progress

    out = options.out
    if out is None:  # the command line requires --out; the Python function renders in memory
        from prefixexec.adapters import InputError

        raise InputError("--out", "the report command needs a folder")
    check_paths(options, out)  # every file the report writes, checked before anything is read
    progress = Progress(steps(), enabled=not options.quiet, label="prefixexec report")
    report, files = render(options, progress)
    progress.step("writing files")
    target = write(options, out, report, files)
    progress.close()
    written = f"wrote {len(files)} files to {target}; open {target / 'report.html'}"
    options.stdout.write(printable(written) + "\n")
    return 0
