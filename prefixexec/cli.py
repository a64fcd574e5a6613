"""The command line: ``prefixexec score``, ``prefixexec adapters`` (spec: CLI-*).

Start-up is kept short: this module imports only ``argparse``; ``--version`` answers before
anything else is imported, and a command imports what it needs when it runs (the adapters,
the engine, plugin commands other than the one asked for, ``importlib.metadata``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, TextIO, TypeVar, cast

from prefixexec._version import __version__

if TYPE_CHECKING:
    from distributed import Client

    from prefixexec.adapters import AdapterOptions
    from prefixexec.adapters.limits import Guarding
    from prefixexec.kernel import Rollout
    from prefixexec.kernel.accumulator import AccumulatorSet
    from prefixexec.kernel.bootstrap import BootstrapSettings
    from prefixexec.report.model import ReportOptions

    from .options import AdapterArguments, EngineOptions, InputOptions, Resampling, ScoreOptions
    from .signature import Signature

#: A command's typed options (a frozen attrs class).
T = TypeVar("T")

#: Names this module used to import at the top, still importable from it (PEP 562, on first use).
_LAZY_NAMES = {
    "ADAPTERS": "prefixexec.adapters",
    "AdapterOptions": "prefixexec.adapters",
    "InputError": "prefixexec.adapters",
    "atomic_path": "prefixexec.adapters.files",
    "output_directory": "prefixexec.adapters.files",
    "file_digest": "prefixexec.adapters.labels",
    "load_label_rules": "prefixexec.adapters.labels",
    "Rollout": "prefixexec.kernel",
    "AccumulatorSet": "prefixexec.kernel.accumulator",
    "BootstrapSettings": "prefixexec.kernel.bootstrap",
    "accumulate_dask": "prefixexec.engine",
    "accumulate_input": "prefixexec.engine",
    "compare": "prefixexec.inference",
    "evaluate_accumulators": "prefixexec.inference",
    "score_document": "prefixexec.inference",
    "table_intervals": "prefixexec.inference",
    "dumps": "prefixexec.scoring",
    "format_comparisons": "prefixexec.scoring",
    "format_table": "prefixexec.scoring",
    "Signature": "prefixexec.signature",
    "OPTION_ADAPTERS": "prefixexec.options",
    "TRACE_ADAPTERS": "prefixexec.options",
    "installed_version": "prefixexec.options",
}


def __getattr__(name: str) -> object:
    if name in _LAZY_NAMES:
        import importlib

        return getattr(importlib.import_module(_LAZY_NAMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


EXIT_OK = 0
EXIT_DIFFERENCE = 1
EXIT_INPUT = 2


class Command(Protocol):
    """A subcommand module in ``prefixexec/commands/``: ``NAME``, ``add_parser``, ``Options``
    (a frozen attrs class: the command's typed options, made here by :func:`typed`) and
    ``run(options) -> int`` (API-PIPELINE)."""

    NAME: str

    def add_parser(self, sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None: ...

    def run(self, options: Any) -> int: ...


#: The commands defined in this module (the others are plugin modules in prefixexec/commands/).
BUILTIN = ("score", "compare", "adapters")


def _plugin_commands(only: str | None = None) -> list[Command]:
    """The subcommand modules of ``prefixexec.commands``, in name order.

    ``only``: just the module of that command (``audit-table`` is ``audit_table.py``) when there
    is one whose ``NAME`` it is; a built-in command needs none.
    """
    if only in BUILTIN:
        return []
    import importlib
    import pkgutil

    import prefixexec.commands as package

    names = sorted(i.name for i in pkgutil.iter_modules(package.__path__) if not i.name.startswith("_"))
    if only is not None and only.replace("-", "_") in names:
        module = cast(Command, importlib.import_module(f"{package.__name__}.{only.replace('-', '_')}"))
        if module.NAME == only:
            return [module]
    return [cast(Command, importlib.import_module(f"{package.__name__}.{name}")) for name in names]


def _command_of(argv: Sequence[str]) -> str | None:
    """The command word of an argument list (its first word), or ``None`` when it starts with
    an option (``--help``, ...): then every command is loaded."""
    return argv[0] if argv and not argv[0].startswith("-") else None


class Parser(argparse.ArgumentParser):
    """The argument parser of every command (subcommands are made of the same class).

    CLI-USAGE: a usage error is one line, ``prefixexec COMMAND: what is wrong; see prefixexec
    COMMAND --help``, with exit status 2, not argparse's usage block; an unknown option names
    the closest known one.
    """

    #: The command word of the arguments being parsed (set on the top-level parser by ``main``).
    command: str | None = None

    def error(self, message: str) -> NoReturn:
        prog = self.prog
        sub = self._command_parser()
        if sub is not None:
            prog = sub.prog
        text = _usage_message(message, sub or self)
        self.exit(EXIT_INPUT, f"{prog}: {text}; see {prog} --help\n")

    def _command_parser(self) -> argparse.ArgumentParser | None:
        """The subcommand's parser, when this is the top-level parser and the command is known."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction) and self.command in action.choices:
                found: argparse.ArgumentParser = action.choices[self.command]
                return found
        return None


def _usage_message(message: str, parser: argparse.ArgumentParser) -> str:
    """argparse's message in this command line's words (CLI-USAGE)."""
    import difflib

    head = "unrecognized arguments: "
    if message.startswith(head):
        words = message[len(head) :].split()
        options = [w for w in words if w.startswith("-")]
        if options and len(options) == len(words):
            known = [o for a in parser._actions for o in a.option_strings]
            close = difflib.get_close_matches(options[0].split("=")[0], known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            return f"unknown option{'s' if len(options) > 1 else ''} {' '.join(options)}{hint}"
        return f"unexpected argument{'s' if len(words) > 1 else ''} {' '.join(words)}"
    if message.startswith("argument COMMAND: invalid choice: "):
        word = message.split("invalid choice: ", 1)[1].split(" (choose from", 1)[0]
        return f"unknown command {word}"
    if message == "the following arguments are required: COMMAND":
        return "a command is required"
    return message


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; with ``command``, of that command only (faster start-up:
    the other commands' modules are not imported nor their options built; ``main`` passes the
    command it was given)."""
    parser = Parser(
        prog="prefixexec",
        description="Reference scorer for prefix executability of tool-using agents "
        "(PEC, FED, TER, AUC-PEC, RR).",
    )
    parser.add_argument("--version", action="version", version=f"prefixexec {__version__}")
    # The subcommands are Parsers too (argparse makes them of the parser's class).
    sub = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", required=True, metavar="COMMAND"),
    )
    builtins = {"score": _add_score, "compare": _add_compare, "adapters": _add_adapters}
    for name, add in builtins.items():
        if command not in BUILTIN or command == name:
            add(sub)
    for plugin in _plugin_commands(command):
        plugin.add_parser(sub)
    parser.command = command
    for each in sub.choices.values():  # PROGRESS-QUIET: every command takes --quiet
        add_quiet_option(each)
    return parser


def _add_score(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    score = sub.add_parser("score", help="score rollouts: one row of metrics per condition")
    score.add_argument("files", nargs="+", metavar="FILE", help="input files ('-' for stdin)")
    add_adapter_options(score)
    add_bootstrap_options(score)
    score.add_argument("--json", action="store_true", help="print the JSON document instead of the table")
    score.add_argument("--output", metavar="PATH", help="write the output to PATH instead of stdout")
    add_engine_options(score)
    add_rollouts_option(score)
    score.add_argument(
        "--emit-evaluations",
        metavar="PATH",
        help="traces: also write per rollout gen_ai.evaluation.result events (prefixexec.fed, "
        "prefixexec.executable) parented to the failing or root span, with the evaluator, signature and "
        "rule-set hash, to PATH as OTLP logs: protobuf for .pb/.binpb, else OTLP JSON "
        "(spec TRACE-EVALUATIONS)",
    )
    add_quiet_option(score)


def _add_compare(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    compare = sub.add_parser(
        "compare", help="paired differences of conditions against a baseline condition, on shared tasks"
    )
    compare.add_argument("files", nargs="+", metavar="FILE", help="input files ('-' for stdin)")
    compare.add_argument(
        "--baseline",
        required=True,
        metavar="KEY=VALUE",
        help="the baseline: KEY=VALUE with KEY dataset, model or method (e.g. model=gpt-4o), or a method "
        "name; each other condition is paired with the baseline condition that shares its other keys, "
        "on the tasks both have",
    )
    compare.add_argument(
        "--match",
        metavar="task_id[,KEY...]",
        help="what a condition shares with its baseline condition: task_id only (the other keys free, "
        "e.g. one model run by two harnesses), or with dataset, model or method (default: the two "
        "keys other than the baseline's; CMP-MATCH)",
    )
    compare.add_argument(
        "--adjust",
        choices=("holm", "none"),
        default="holm",
        help="adjust the p-values of each metric over the comparisons (default holm; CMP-HOLM)",
    )
    add_adapter_options(compare)
    add_bootstrap_options(compare, allow_unpaired=False)
    compare.add_argument("--json", action="store_true", help="print JSON instead of the table")
    compare.add_argument("--output", metavar="PATH", help="write the output to PATH instead of stdout")
    add_engine_options(compare)
    add_rollouts_option(compare)
    add_quiet_option(compare)


def _add_adapters(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sub.add_parser("adapters", help="list the adapters and what each reads")


def add_adapter_options(parser: argparse.ArgumentParser) -> None:
    """The input options shared by every command that reads rollouts."""
    from prefixexec.adapters import ADAPTERS

    parser.add_argument(
        "--adapter",
        default="auto",
        choices=["auto", *sorted(ADAPTERS)],
        help="input format (default: auto, detected from each file's name and first bytes; DETECT-*)",
    )
    parser.add_argument("--model", help="model name, for adapters whose input does not carry it")
    parser.add_argument("--method", help="method name, for adapters whose input does not carry it")
    parser.add_argument("--category", help="BFCL: only this category")
    parser.add_argument(
        "--bfcl-decoder",
        metavar="NAME",
        help="BFCL: the model handler's decoder that reads the result files (xlam, llama-3.1, "
        "tool-call-tags, ..., or a BFCL handler class); default auto: the handler BFCL's model map "
        "gives the result folder's model, else BFCL's API rules (spec BFCL-HANDLERS)",
    )
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
        "--harness-errors",
        choices=("failure", "exclude"),
        default=None,
        help="rollouts the harness lost (BFCL inference errors, crashed tau-bench runs, tau2 "
        "infrastructure errors, ToolSandbox aborts, errored inspect samples): count them as failed "
        "rollouts (failure) or leave them out (exclude); default: each benchmark's own metric code "
        "(spec HARNESS-DEFAULT)",
    )
    parser.add_argument(
        "--inference-errors",
        choices=("failure", "exclude"),
        default=None,
        help="BFCL: the alias of --harness-errors for entries whose result is an inference error",
    )
    parser.add_argument(
        "--select",
        action="append",
        metavar="KEY=GLOB",
        help="keep rollouts whose KEY (dataset, model, method, task_id) matches GLOB, or is listed in "
        "@FILE (one per line); repeatable (spec OUT-SELECT)",
    )
    parser.add_argument(
        "--task-attr",
        metavar="NAME",
        help="traces: the attribute that names a trace's task (default: gen_ai.conversation.id, "
        "session.id, thread_id or group_id, else the trace id; spec TRACE-KEYS)",
    )
    parser.add_argument(
        "--success-attr",
        metavar="NAME",
        help="traces: the gen_ai.evaluation.name or attribute that gives success (default: success; "
        "@ok: a trace whose root spans did not fail; spec TRACE-SUCCESS)",
    )
    parser.add_argument(
        "--unit",
        choices=("call", "turn"),
        default=None,
        help="step of a prefix: call (one per tool call, default) or turn (one per user turn, executable "
        "when every call in it is; bfcl, chat, inspect, taubench; spec TURN-UNIT)",
    )
    parser.add_argument(
        "--system-from",
        choices=("pooled", "file"),
        default=None,
        help="taubench: several runs of one system (the same task ids): pooled as its trials in the "
        "order given (default; spec TAU-POOL) or file: each file its own system, method '<method>@<file>' "
        "(spec TAU-SYSTEM-FILE)",
    )
    parser.add_argument(
        "--max-line-bytes",
        type=_positive_int,
        metavar="N",
        help="refuse a JSONL line longer than N bytes (default 67108864 = 64 MiB; spec HOSTILE-LINE)",
    )


def add_quiet_option(parser: argparse.ArgumentParser) -> None:
    """``--quiet``: no progress and no notices on stderr (errors are still written; PROGRESS-QUIET).
    A parser that has it already is left as it is."""
    if "--quiet" not in parser._option_string_actions:
        parser.add_argument("--quiet", action="store_true", help="no progress bar or notices on stderr")


def add_rollouts_option(parser: argparse.ArgumentParser) -> None:
    """``--rollouts PATH``: one row per rollout, where and why it failed (OUT-ROLLOUTS-FILE)."""
    parser.add_argument(
        "--rollouts",
        metavar="PATH",
        help="also write one row per rollout (where and why it failed) to PATH: .jsonl, .csv or .parquet",
    )


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``minimum``, or one message naming the bound and the value."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}: {text}")
        return value

    return parse


_positive_int = int_at_least(0)


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
    parser.add_argument(
        "--bootstrap-block",
        type=int_at_least(1),
        metavar="N",
        help="resamples drawn and reduced at a time (default: as many as fit in about 256 MiB; "
        "the intervals are the same for every block size; spec BOOT-BLOCK)",
    )
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
        "--scheduler",
        "--dask-scheduler",
        dest="scheduler",
        metavar="ADDRESS",
        help="dask: a running scheduler (default: start a local cluster)",
    )
    parser.add_argument(
        "--workers",
        type=_positive_int,
        metavar="N",
        help="dask: workers of the local cluster (default: cores)",
    )


# ---------------------------------------------------------------------------------------------
# Typed options, made once here: the Namespace stays in this module (API-PIPELINE)


def arguments_of(args: argparse.Namespace) -> AdapterArguments:
    """The input a command names, as given (:class:`~prefixexec.options.AdapterArguments`;
    checked later by :func:`prefixexec.options.input_options`)."""
    from .options import ADAPTER_ARGUMENTS, AdapterArguments

    given = {name: getattr(args, name, None) for name in ADAPTER_ARGUMENTS}
    return AdapterArguments(
        adapter=getattr(args, "adapter", None) or "auto",
        files=list(getattr(args, "files", None) or []),
        select=getattr(args, "select", None) or (),
        rollouts_path=getattr(args, "rollouts", None),
        emit_evaluations=getattr(args, "emit_evaluations", None),
        given=getattr(args, "_rollouts", None),  # rollouts the Python API read (API-SOURCES)
        **given,  # each option as argparse's type made it
    )


def resampling_of(args: argparse.Namespace) -> Resampling:
    """``--bootstrap``, ``--seed``, ``--level`` (:class:`~prefixexec.options.Resampling`)."""
    from .options import Resampling

    return Resampling(bootstrap=args.bootstrap, seed=args.seed, level=args.level)


def report_view(args: argparse.Namespace) -> ReportOptions:
    """What ``report`` and ``demo`` show (:class:`~prefixexec.report.ReportOptions`)."""
    from prefixexec.report.model import ReportOptions

    return ReportOptions(
        checkpoints=args.checkpoints,
        max_depth=args.max_depth,
        eligible=args.eligible,
        bands=not args.no_bands,
        label_shares=args.label_shares,
        tex_compact=args.tex_compact,
        panel=args.panel,
        figure_size=args.figure_size,
    )


def input_options(args: argparse.Namespace) -> InputOptions:
    """What the command reads, checked (CLI-NO-EFFECT, HARNESS-OPTION, ...) before any input is."""
    from .options import input_options as checked

    return checked(arguments_of(args))


def engine_options(args: argparse.Namespace) -> EngineOptions:
    """``--engine``, ``--scheduler``, ``--workers`` and ``--bootstrap-block`` (DASK-ENGINE, BOOT-BLOCK)."""
    from .options import EngineOptions

    return EngineOptions(
        engine=getattr(args, "engine", None) or "local",
        scheduler=getattr(args, "scheduler", None),
        workers=getattr(args, "workers", None),
        bootstrap_block=getattr(args, "bootstrap_block", None),
    )


def score_options(args: argparse.Namespace) -> ScoreOptions:
    """``score``'s arguments as :class:`~prefixexec.options.ScoreOptions`."""
    from .options import ScoreOptions

    return ScoreOptions(
        input=input_options(args),
        bootstrap=settings_of(args),
        signature=signature_of(args),
        engine=engine_options(args),
        paired=not getattr(args, "unpaired", False),
        quiet=bool(getattr(args, "quiet", False)),
    )


#: Fields of a command's options made from several arguments (the others are one argument each,
#: the field named as its ``dest``).
BUILDERS: dict[str, Callable[[argparse.Namespace], object]] = {
    "arguments": arguments_of,
    "resampling": resampling_of,
    "engine": engine_options,
    "view": report_view,
    "stdout": lambda args: stdout(args),  # (defined below)
}


def typed(cls: type[T], args: argparse.Namespace) -> T:
    """A command's typed options (a frozen attrs class, ``Options`` of its module) from its
    arguments: each field from the argument of its name (a list as a tuple; a field whose
    argument the command has not keeps its default), or from :data:`BUILDERS` (API-PIPELINE)."""
    import attrs

    values: dict[str, object] = {}
    for field in attrs.fields(cls):  # type: ignore[arg-type]  # T is an attrs class
        if field.name in BUILDERS:
            values[field.name] = BUILDERS[field.name](args)
        elif hasattr(args, field.name):
            value = getattr(args, field.name)
            values[field.name] = tuple(value) if isinstance(value, list) else value
    return cls(**values)


def command_handler(command: str) -> Callable[[argparse.Namespace], int]:
    """What runs ``command`` on its parsed arguments: a built-in's function, or the plugin's
    ``run`` on its typed ``Options`` (made here, inside :func:`guarded`'s error handling)."""
    builtin: dict[str, Callable[[argparse.Namespace], int]] = {
        "score": _score,
        "compare": _compare,
        "adapters": _adapters,
    }
    if command in builtin:
        return builtin[command]
    plugin = _command_module(command)
    options_class = cast(Any, plugin).Options
    return lambda args: plugin.run(typed(options_class, args))


def run_values(
    command: str,
    values: Mapping[str, object],
    handler: Callable[[Any], int] | None = None,
    output: TextIO | None = None,
) -> int:
    """Run ``command`` on its arguments given as values by ``dest`` (the Python API, API-COMMANDS):
    the adapter detected, output checks and signals as on the command line (:func:`guarded`),
    the typed options made here; ``handler`` (default: the command's) takes the typed options,
    ``output`` is where the command writes what it prints."""
    from prefixexec.adapters.limits import guarded

    args = argparse.Namespace(command=command, **values)
    args._stdout = output
    resolve_adapter(args)
    if handler is None:
        run = command_handler(command)
        return guarded(lambda: run(args), guarding_of(args))
    options_class = cast(Any, _command_module(command)).Options
    chosen = handler  # (mypy keeps no narrowing inside the lambda)
    return guarded(lambda: chosen(typed(options_class, args)), guarding_of(args))


#: Options that name a file the command reads (HOSTILE-OPTION-FILE: inputs like the positional ones).
INPUT_OPTIONS = ("label_rules", "theirs", "their_rollouts", "table")
#: Options that name a file the command writes (HOSTILE-OUTPUT-EARLY), each one path or a list.
OUTPUT_OPTIONS = ("output", "rollouts", "emit_evaluations", "figure")


def option_files(args: argparse.Namespace) -> list[str]:
    """The files a command's options read: ``--label-rules``, ``--select KEY=@FILE``, the table
    of ``audit-table``, the reports of ``crosscheck``, ``--vectors`` (HOSTILE-OPTION-FILE: no
    output may replace them)."""
    found = [value for name in INPUT_OPTIONS if isinstance(value := getattr(args, name, None), str)]
    found += [v for v in getattr(args, "vectors", None) or [] if isinstance(v, str)]
    for item in getattr(args, "select", None) or []:
        if isinstance(item, str) and "=@" in item:
            found.append(item.partition("=@")[2])
    return found


def guarding_of(args: argparse.Namespace) -> Guarding:
    """What :func:`~prefixexec.adapters.limits.guarded` needs of the arguments (HOSTILE-*): the
    files read, the outputs by option (one path, a repeated option's list, or none), the report
    folder, the line bound and ``--quiet``."""
    from prefixexec.adapters.limits import Guarding

    files = getattr(args, "files", None) or []
    outputs: list[tuple[str, str | None]] = []
    for name in OUTPUT_OPTIONS:
        value = getattr(args, name, None)
        paths = [v for v in value if isinstance(v, str)] if isinstance(value, list | tuple) else [value]
        option = f"--{name.replace('_', '-')}"
        outputs += [(option, path if isinstance(path, str) else None) for path in paths]
    folder = getattr(args, "out", None)
    return Guarding(
        inputs=(*(f for f in files if isinstance(f, str)), *option_files(args)),
        outputs=tuple(outputs),
        folder=folder if isinstance(folder, str) else None,
        max_line_bytes=getattr(args, "max_line_bytes", None),
        quiet=bool(getattr(args, "quiet", False)),
    )


def _command_module(command: str) -> Command:
    """The plugin module of ``command`` (found by its ``NAME``)."""
    (module,) = [m for m in _plugin_commands(command) if m.NAME == command]
    return module


def adapter_options(args: argparse.Namespace) -> AdapterOptions:
    """The adapter options given on the command line (:func:`prefixexec.options.adapter_options`)."""
    from .options import adapter_options as checked

    return checked(arguments_of(args))


def check_harness_errors(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """``--harness-errors`` and its BFCL alias ``--inference-errors``, checked (HARNESS-OPTION)."""
    from .options import check_harness_errors as check

    return check(arguments_of(args))


def read_input(args: argparse.Namespace) -> list[Rollout]:
    """Read every input file with the chosen adapter (all validated before scoring), keeping the
    rollouts that ``--select`` selects (OUT-SELECT; :func:`prefixexec.pipeline.read_rollouts`)."""
    from .pipeline import read_rollouts

    return read_rollouts(input_options(args))


def read_scored_input(
    args: argparse.Namespace,
    client: Client | None = None,
    on_rows: Callable[[int], None] | None = None,
) -> tuple[AccumulatorSet, list[Rollout] | None]:
    """The accumulators of the input, and its rollouts when ``--select`` or ``--rollouts`` needs
    them (:func:`prefixexec.pipeline.read` with this command's typed options)."""
    from .pipeline import read

    return read(input_options(args), engine_options(args), client, on_rows)


def check_rollouts_path(path: str) -> None:
    """``--rollouts PATH`` checked before any input is read (:mod:`prefixexec.pipeline`)."""
    from .pipeline import check_rollouts_path as check

    check(path)


def write_rollout_rows(args: argparse.Namespace, rollouts: Sequence[Rollout] | None) -> None:
    """Write ``--rollouts PATH`` when it was given (after the main output)."""
    from .pipeline import write_rollout_rows as write

    write(getattr(args, "rollouts", None), rollouts)


def signature_of(args: argparse.Namespace) -> Signature:
    """The signature of the settings on the command line."""
    from .options import signature_of as signature

    paired = not getattr(args, "unpaired", False)
    return signature(arguments_of(args), args.bootstrap, args.seed, args.level, paired)


def signature_options(args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    """The adapter settings that can change the numbers, for the signature (OUT-SIGNATURE)."""
    from .options import signature_options as found

    return found(arguments_of(args))


def settings_of(args: argparse.Namespace) -> BootstrapSettings | None:
    """Bootstrap settings, or None when intervals are off (--bootstrap 0)."""
    from .options import bootstrap_settings

    return bootstrap_settings(args.bootstrap, args.seed, args.level)


def stdout(args: argparse.Namespace) -> TextIO:
    """Where a command writes its result: standard output, or the stream the Python API gives
    (``args._stdout``: the API reads the ``--json`` document from it, API-COMMANDS)."""
    stream: TextIO | None = getattr(args, "_stdout", None)
    return stream if stream is not None else sys.stdout


def _write(text: str, output: str | None, args: argparse.Namespace | None = None) -> None:
    from .pipeline import write_output

    write_output(text, output, sys.stdout if args is None else stdout(args))


def _datasets(accumulators: AccumulatorSet) -> int:
    return len({key.dataset for key in accumulators.as_dict()})


def _score(args: argparse.Namespace) -> int:
    from .pipeline import render_score, score
    from .ttyprogress import Work

    options = score_options(args)  # the Namespace ends here (API-PIPELINE)
    with Work(options.quiet, "prefixexec score") as work:  # PROGRESS-TTY, -COUNT
        work.phase("reading input", unit="rollouts")
        scored = score(
            options,
            on_rows=work.advance,
            on_phase=lambda what: work.phase(what, None, "blocks"),
            progress=work.progress,
        )
    # HOSTILE-ERROR-PATH: the files first, so a failed run prints no table
    write_rollout_rows(args, scored.rollouts)
    if options.input.emit_evaluations is not None and scored.rollouts is not None:
        from prefixexec.adapters.evaluations import Provenance, write_evaluations

        from .options import evaluation_rules

        provenance = Provenance(__version__, scored.signature, evaluation_rules(arguments_of(args)))
        write_evaluations(options.input.emit_evaluations, scored.rollouts, provenance)
    _write(render_score(scored, args.json), args.output, args)
    return EXIT_OK


def _compare(args: argparse.Namespace) -> int:
    from .options import CompareOptions
    from .pipeline import compare

    options = typed(CompareOptions, args)  # the Namespace ends here (API-PIPELINE)
    rollouts, text = compare(options)
    _write(text, options.output, args)
    write_rollout_rows(args, rollouts)
    return EXIT_OK


def _adapters(args: argparse.Namespace) -> int:
    from prefixexec.adapters import ADAPTERS

    width = max(len(name) for name in ADAPTERS)
    for name, info in sorted(ADAPTERS.items()):
        sys.stdout.write(f"{name.ljust(width)}  {info.description}\n")
    return EXIT_OK


def resolve_adapter(args: argparse.Namespace) -> None:
    """``--adapter auto``: the adapter detected from the input files, said on stderr (DETECT-ONE;
    :func:`prefixexec.pipeline.detect`).

    A command that may read other inputs than rollouts (``sample``: benchmark task lists) sets
    ``detect_in_command`` and detects itself when it reads rollouts; rollouts given by the
    Python API (``args._rollouts``) need no detection.
    """
    if getattr(args, "adapter", None) != "auto" or not hasattr(args, "files"):
        return
    if getattr(args, "detect_in_command", False) or getattr(args, "_rollouts", None) is not None:
        return
    from .pipeline import detect

    quiet = bool(getattr(args, "quiet", False))
    args.adapter = detect(arguments_of(args), quiet, getattr(args, "engine", "local")).adapter
    args.adapter_detected = True


def adapter_hint(args: argparse.Namespace, found_input: tuple[str, tuple[str, ...]] | None = None) -> str:
    """After an input error with a chosen adapter: what the file looks like instead (DETECT-HINT).
    ``found_input``: the adapter and files the command found itself (``InputError.hint_input``),
    looked at instead of the arguments'."""
    adapter = getattr(args, "adapter", None)
    files = getattr(args, "files", None)
    detected = getattr(args, "adapter_detected", False)
    if found_input is not None:
        (adapter, files), detected = found_input, False
    if adapter in (None, "auto") or detected:
        return ""
    if not files:
        return ""
    from prefixexec.adapters.detect import hint

    found = hint(adapter, files)
    return "" if found is None else f"; {found}"


def run() -> None:
    """The ``prefixexec`` console script and ``python -m prefixexec``: :func:`main`, then exit.

    When nothing is left for the interpreter to clean up, the process ends at once after its
    standard streams are flushed, instead of tearing down every imported module (numpy's
    teardown alone is about 25 ms, a fifth of scoring a small file: #16). See :func:`leave`.
    """
    leave(main())


def leave(status: int) -> NoReturn:
    """End the process with ``status``: at once (``os._exit``) when that loses nothing, else as
    usual (``SystemExit``).

    At once only when standard output and error flushed without error (a broken pipe ends with
    :data:`EXIT_PIPE`, HOSTILE-PIPE), no thread but the main one is alive (a non-daemon thread would be
    waited for) and no ``atexit`` callback is registered (whatever wants to clean up at exit
    registers one: ``weakref.finalize``, ``tempfile`` directories, logging, matplotlib, Dask).
    Every file this package writes is closed before its command returns (atomic writers).
    """
    import atexit
    import os
    import threading

    count = getattr(atexit, "_ncallbacks", None)  # CPython's count of registered callbacks
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except BrokenPipeError:  # HOSTILE-PIPE: the reader of standard output went away
        raise SystemExit(closed_pipe()) from None
    except (OSError, ValueError):  # a closed stream: Python's own exit reports it
        raise SystemExit(status) from None
    if count is not None and count() == 0 and threading.active_count() == 1:
        os._exit(status)
    raise SystemExit(status)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 differences found, 2 bad input)."""
    words = sys.argv[1:] if argv is None else list(argv)
    if words[:1] == ["--version"]:  # what argparse's version action prints, without the imports
        sys.stdout.write(f"prefixexec {__version__}\n")
        raise SystemExit(0)
    command = _command_of(words)
    args = build_parser(command).parse_args(words)
    from prefixexec.adapters import InputError

    try:
        from prefixexec.adapters.limits import guarded  # HOSTILE-*: no traceback, outputs checked first

        stdin_lines_end_at_newline()
        resolve_adapter(args)
        run = command_handler(args.command)
        return guarded(lambda: run(args), guarding_of(args))
    except InputError as exc:
        error_line(f"{str(exc).strip()}{adapter_hint(args, exc.hint_input)}")
        return EXIT_INPUT
    except ImportError as exc:  # an optional dependency's extra is not installed (API-EXTRAS)
        from prefixexec.extras import missing_extra_message

        message = missing_extra_message(exc)
        if message is None:
            raise
        error_line(message)
        return EXIT_INPUT
    except BrokenPipeError:  # HOSTILE-PIPE: the reader of standard output went away
        return closed_pipe()


def stdin_lines_end_at_newline() -> None:
    """Standard input's lines end at ``\n`` only, as a file's do (HOSTILE-LINES): not at a lone
    ``\r``, which Python's text mode takes for a line break by default."""
    reconfigure = getattr(sys.stdin, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(newline="\n")
        except (ValueError, OSError):  # already read from, or not a text stream
            pass


def error_line(message: str) -> None:
    """``prefixexec: error: MESSAGE`` on stderr, always one line with nothing a terminal acts on
    (HOSTILE-CONTROL: file names and text from the input are escaped)."""
    from prefixexec.adapters.text import printable

    sys.stderr.write(f"prefixexec: error: {printable(message)}\n")


#: HOSTILE-PIPE: the status of a command whose standard output was closed before it finished
#: (``prefixexec explain FILE | head``): 128 + SIGPIPE, as a Unix tool killed by SIGPIPE reports.
EXIT_PIPE = 141


def closed_pipe() -> int:
    """End a command whose standard output was closed (HOSTILE-PIPE): nothing more is written,
    nothing on stderr, status :data:`EXIT_PIPE`. Standard output is pointed at ``/dev/null``
    so that the interpreter's last flush does not fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # not a file descriptor (a test's StringIO)
        pass
    return EXIT_PIPE
