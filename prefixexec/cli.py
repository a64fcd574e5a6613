"""The command line: ``prefixexec score``, ``prefixexec adapters`` (spec: CLI-*)."""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.metadata
import pkgutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, cast

from prefixexec._version import __version__
from prefixexec.adapters import ADAPTERS, AdapterOptions, InputError
from prefixexec.adapters.files import atomic_path, output_directory
from prefixexec.adapters.labels import file_digest, load_label_rules
from prefixexec.kernel import Rollout
from prefixexec.kernel.accumulator import AccumulatorSet
from prefixexec.kernel.bootstrap import BootstrapSettings

from .engine import accumulate_dask, accumulate_input
from .inference import compare, evaluate_accumulators, score_document, table_intervals
from .scoring import dumps, format_comparisons, format_table
from .signature import Signature

EXIT_OK = 0
EXIT_DIFFERENCE = 1
EXIT_INPUT = 2


class Command(Protocol):
    """A subcommand module in ``prefixexec/commands/``: ``NAME``, ``add_parser``, ``run``."""

    NAME: str

    def add_parser(self, sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


def _plugin_commands() -> list[Command]:
    """The subcommand modules of ``prefixexec.commands``, in name order."""
    import prefixexec.commands as package

    found: list[Command] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            found.append(cast(Command, importlib.import_module(f"{package.__name__}.{info.name}")))
    return found


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="prefixexec",
        description="Reference scorer for prefix executability of tool-using agents "
        "(PEC, FED, TER, AUC-PEC, RR).",
    )
    parser.add_argument("--version", action="version", version=f"prefixexec {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    score = sub.add_parser("score", help="score rollouts: one row of metrics per condition")
    score.add_argument("files", nargs="+", metavar="FILE", help="input files ('-' for stdin)")
    add_adapter_options(score)
    add_bootstrap_options(score)
    score.add_argument("--json", action="store_true", help="print the JSON document instead of the table")
    score.add_argument("--output", metavar="PATH", help="write the output to PATH instead of stdout")
    add_engine_options(score)

    compare = sub.add_parser(
        "compare", help="paired differences of every method against a baseline method (same tasks)"
    )
    compare.add_argument("files", nargs="+", metavar="FILE", help="input files ('-' for stdin)")
    compare.add_argument("--baseline", required=True, metavar="METHOD", help="the method to compare against")
    add_adapter_options(compare)
    add_bootstrap_options(compare, allow_unpaired=False)
    compare.add_argument("--json", action="store_true", help="print JSON instead of the table")
    compare.add_argument("--output", metavar="PATH", help="write the output to PATH instead of stdout")
    add_engine_options(compare)

    sub.add_parser("adapters", help="list the adapters and what each reads")
    for command in _plugin_commands():
        command.add_parser(sub)
    return parser


def add_adapter_options(parser: argparse.ArgumentParser) -> None:
    """The input options shared by every command that reads rollouts."""
    parser.add_argument(
        "--adapter", default="records", choices=sorted(ADAPTERS), help="input format (default: records)"
    )
    parser.add_argument("--model", help="model name, for adapters whose input does not carry it")
    parser.add_argument("--method", help="method name, for adapters whose input does not carry it")
    parser.add_argument("--category", help="BFCL: only this category")
    parser.add_argument("--threshold", type=float, help="ToolSandbox/inspect: success threshold")
    parser.add_argument("--scorer", help="inspect: the scorer whose value is the success Y")
    parser.add_argument("--error-pattern", help="chat: regex marking a tool result as an error")
    parser.add_argument(
        "--by",
        choices=("category",),
        help="ToolSandbox: one dataset per scenario category (toolsandbox/<CATEGORY>)",
    )
    parser.add_argument(
        "--label-rules",
        metavar="FILE",
        help="TOML file of ordered regex -> label rules per adapter, tried before the built-in "
        "label families (chat, inspect, taubench, toolsandbox; spec LABEL-RULES)",
    )
    parser.add_argument(
        "--inference-errors",
        choices=("failure", "exclude"),
        default=None,
        help="BFCL: an entry whose result is an inference error is a failed rollout (failure, the "
        "leaderboard's convention; default) or is left out (exclude)",
    )


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text}")
    return value


def _level(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be strictly between 0 and 1: {text}")
    return value


def add_bootstrap_options(parser: argparse.ArgumentParser, allow_unpaired: bool = True) -> None:
    """--bootstrap B, --seed S, --level L (and --unpaired) of the interval protocol."""
    parser.add_argument(
        "--bootstrap",
        type=_positive_int,
        default=10_000,
        metavar="B",
        help="task-level bootstrap resamples (default 10000; 0 turns intervals off)",
    )
    parser.add_argument("--seed", type=_positive_int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--level", type=_level, default=0.95, help="confidence level (default 0.95)")
    if allow_unpaired:
        parser.add_argument(
            "--unpaired",
            action="store_true",
            help="allow conditions of a dataset with different task sets (intervals are then unpaired)",
        )


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """--engine, --scheduler, --workers: where the input is accumulated (DASK-ENGINE)."""
    parser.add_argument(
        "--engine",
        choices=("local", "dask"),
        default="local",
        help="local: stream the input in this process (default); dask: map files or Parquet row "
        "groups to accumulators on a Dask cluster and merge them (same output)",
    )
    parser.add_argument(
        "--scheduler", metavar="ADDRESS", help="dask: a running scheduler (default: start a local cluster)"
    )
    parser.add_argument(
        "--workers",
        type=_positive_int,
        metavar="N",
        help="dask: workers of the local cluster (default: cores)",
    )


def read_accumulators(args: argparse.Namespace) -> AccumulatorSet:
    """Accumulate the input with the chosen engine (STREAM-SCORE, DASK-ENGINE)."""
    options = adapter_options(args)
    if args.engine == "dask":
        return accumulate_dask(args.adapter, args.files, options, args.scheduler, args.workers or None)
    for flag, value in (("--scheduler", args.scheduler), ("--workers", args.workers)):
        if value is not None:
            raise InputError(flag, "only applies with --engine dask")
    return accumulate_input(args.adapter, args.files, options)


def signature_of(args: argparse.Namespace) -> Signature:
    """The signature of the settings on the command line."""
    return Signature(
        adapter=args.adapter,
        adapter_options=signature_options(args),
        bootstrap=args.bootstrap,
        seed=args.seed,
        level=args.level,
        paired=not getattr(args, "unpaired", False),
    )


def signature_options(args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    """The adapter settings that can change the numbers, for the signature (OUT-SIGNATURE)."""
    found: list[tuple[str, str]] = []
    backend = ADAPTERS[args.adapter].backend
    if backend is not None:
        found.append((backend, installed_version(backend)))
    for name in ("category", "threshold", "scorer", "by"):
        value = getattr(args, name, None)
        if value is not None:
            found.append((name, f"{value:g}" if isinstance(value, float) else str(value)))
    pattern = getattr(args, "error_pattern", None)
    if pattern is not None:
        digest = hashlib.sha256(pattern.encode("utf-8")).hexdigest()[:12]
        found.append(("error-pattern", f"sha256:{digest}"))
    rules = getattr(args, "label_rules", None)
    if rules is not None:
        found.append(("label-rules", file_digest(rules)))
    if args.adapter == "bfcl":
        found.append(("inference-errors", getattr(args, "inference_errors", None) or "failure"))
    return tuple(found)


def installed_version(distribution: str) -> str:
    """The installed version of a distribution, or ``missing``."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "missing"


def settings_of(args: argparse.Namespace) -> BootstrapSettings | None:
    """Bootstrap settings, or None when intervals are off (--bootstrap 0)."""
    if args.bootstrap == 0:
        return None
    return BootstrapSettings(B=args.bootstrap, seed=args.seed, level=args.level)


def adapter_options(args: argparse.Namespace) -> AdapterOptions:
    """The adapter options given on the command line."""
    if args.by is not None and args.adapter != "toolsandbox":
        raise InputError("--by", f"only the toolsandbox adapter splits by {args.by}, not {args.adapter!r}")
    inference_errors = getattr(args, "inference_errors", None)
    if inference_errors is not None and args.adapter != "bfcl":
        raise InputError("--inference-errors", f"only applies with --adapter bfcl, not {args.adapter!r}")
    label_rules = getattr(args, "label_rules", None)
    if label_rules is not None:
        load_label_rules(label_rules, args.adapter)  # checks the file before any input is read
    return AdapterOptions(
        model=args.model,
        method=args.method,
        category=args.category,
        threshold=args.threshold,
        scorer=args.scorer,
        error_pattern=args.error_pattern,
        by=args.by,
        label_rules=label_rules,
        inference_errors=inference_errors or "failure",
    )


def read_input(args: argparse.Namespace) -> list[Rollout]:
    """Read every input file with the chosen adapter (all validated before scoring)."""
    return ADAPTERS[args.adapter].read(args.files, adapter_options(args))


def _write(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    output_directory(output)
    with atomic_path(Path(output)) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")


def _score(args: argparse.Namespace) -> int:
    accumulators = read_accumulators(args)
    signature = signature_of(args)
    results = evaluate_accumulators(accumulators, settings_of(args), paired=not args.unpaired)
    if args.json:
        text = dumps(score_document(results, signature))
    else:
        rows = [(r.key, r.metrics, table_intervals(r.intervals)) for r in results]
        text = format_table(rows, str(signature))
    _write(text, args.output)
    return EXIT_OK


def _compare(args: argparse.Namespace) -> int:
    accumulators = read_accumulators(args)
    signature = signature_of(args)
    results = evaluate_accumulators(accumulators, settings_of(args), paired=True)
    comparisons, skipped = compare(results, args.baseline, args.level)
    if args.json:
        text = dumps({"signature": str(signature), "comparisons": comparisons, "skipped": skipped})
    else:
        text = format_comparisons(comparisons, skipped, str(signature))
    _write(text, args.output)
    return EXIT_OK


def _adapters(args: argparse.Namespace) -> int:
    width = max(len(name) for name in ADAPTERS)
    for name, info in sorted(ADAPTERS.items()):
        sys.stdout.write(f"{name.ljust(width)}  {info.description}\n")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 differences found, 2 bad input)."""
    args = build_parser().parse_args(argv)
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {
        "score": _score,
        "compare": _compare,
        "adapters": _adapters,
    }
    for command in _plugin_commands():
        handlers[command.NAME] = command.run
    try:
        return handlers[args.command](args)
    except InputError as exc:
        sys.stderr.write(f"prefixexec: error: {exc}\n")
        return EXIT_INPUT
    except BrokenPipeError:
        return EXIT_OK
