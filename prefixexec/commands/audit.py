"""``prefixexec audit --adapter A [FILE...]``: check an adapter against gold and mutants (spec: AUDIT-CLI).

An adapter offers an audit in one of two ways: an ``audit(paths, options)`` function in the
``audit`` field of its :data:`ADAPTERS` entry (the generic audits of spec/audit.md, which read
input files), or a function ``audit`` in its module ``prefixexec.adapters.<name>`` taking
``(options)`` or ``(paths, options)`` (BFCL: the benchmark's own data, and result files when
given; ToolSandbox: run directories). The report has ``passed``, ``render()`` (what was checked,
what was found, what was not checked) and ``to_json()``, and may give its own
``exit_status``. An adapter with no audit gets a report saying that nothing was checked and why
(AUDIT-NOTHING).
Exit status: 0 the audit passes, 1 it finds a failure, 2 nothing was checked or bad input.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

import attrs

from prefixexec.adapters import ADAPTERS, AdapterOptions, InputError
from prefixexec.adapters.audit import UNAUDITED, AuditReport, nothing_checked
from prefixexec.adapters.labels import load_label_rules
from prefixexec.scoring import dumps

NAME = "audit"

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_NOTHING_CHECKED = 2

AuditFunction = Callable[[Sequence[str], AdapterOptions], AuditReport]

if TYPE_CHECKING:
    from prefixexec.options import AdapterArguments


@attrs.frozen(slots=True)
class Options:
    """``audit``'s arguments, typed (API-PIPELINE): the adapter, its files and options in
    ``arguments``."""

    arguments: AdapterArguments
    stdout: TextIO
    seed: int = 0
    cross_check: bool = False
    quiet: bool = False
    json: bool = False


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        NAME,
        help="replay an adapter's gold trajectories and mutants of them; report what was checked",
        description="Replay gold trajectories (the benchmark's, or the calls the adapter accepted in "
        "FILE...) with the adapter's semantics, apply its mutation operators and report how replay "
        "judged them, what was checked and what was not. Exit 0: pass; 1: a check failed; "
        "2: nothing was checked, or bad input.",
    )
    parser.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="input files, for audits that read them (bfcl result files, chat, inspect, records, taubench, "
        "toolsandbox run directories)",
    )
    parser.add_argument("--adapter", required=True, choices=sorted(ADAPTERS), help="the adapter to audit")
    parser.add_argument("--category", help="bfcl: only this category (e.g. multi_turn_base)")
    parser.add_argument(
        "--seed", type=int, default=0, help="seed that picks the mutated positions (default 0)"
    )
    parser.add_argument(
        "--cross-check",
        action="store_true",
        help="bfcl: also compare with the benchmark's own implementation, on trusted inputs only",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr (PROGRESS-QUIET)")
    parser.add_argument("--model", help="model name, for inputs that do not carry it")
    parser.add_argument("--method", help="method name, for inputs that do not carry it")
    parser.add_argument("--threshold", type=float, help="inspect: success threshold")
    parser.add_argument("--scorer", help="inspect: the scorer whose value is the success Y")
    parser.add_argument("--error-pattern", help="chat: regex marking a tool result as an error")
    parser.add_argument(
        "--label-rules", metavar="FILE", help="TOML label rules (see `score --help`; spec LABEL-RULES)"
    )
    parser.add_argument(
        "--harness-errors",
        choices=("failure", "exclude"),
        help="rollouts the harness lost: failed rollouts or left out (default: the benchmark's own "
        "metric code; see `score --help`, spec HARNESS-DEFAULT)",
    )
    parser.add_argument(
        "--inference-errors",
        choices=("failure", "exclude"),
        help="bfcl: the alias of --harness-errors for inference-error entries",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def _module_audit(adapter: str) -> Callable[..., AuditReport] | None:
    try:
        module = importlib.import_module(f"prefixexec.adapters.{adapter}")
    except ImportError:
        return None
    function = getattr(module, "audit", None)
    return function if callable(function) else None


def find_audit(adapter: str) -> AuditFunction | None:
    """The adapter's audit as ``audit(paths, options)``, or ``None`` when it has none.

    The registry's ``audit`` field comes first; a module function ``audit(options)`` (no input
    files) is wrapped so that input files are an error.
    """
    registered = getattr(ADAPTERS[adapter], "audit", None)
    if callable(registered):
        function: AuditFunction = registered
        return function
    found = _module_audit(adapter)
    if found is None:
        return None
    if len(inspect.signature(found).parameters) >= 2:
        return found
    module_audit = found

    def without_files(paths: Sequence[str], options: AdapterOptions) -> AuditReport:
        if paths:
            raise InputError(
                paths[0], f"the {adapter} audit reads the benchmark's own data: it takes no input files"
            )
        report: AuditReport = module_audit(options)
        return report

    return without_files


def auditable() -> list[str]:
    """The adapters that have an audit, sorted."""
    return [name for name in sorted(ADAPTERS) if find_audit(name) is not None]


def exit_status(report: AuditReport) -> int:
    """The report's own ``exit_status`` if it has one, else 0 when it passes and 1 when not."""
    status = getattr(report, "exit_status", None)
    if isinstance(status, int):
        return status
    return EXIT_OK if report.passed else EXIT_FAILED


def run(options: Options) -> int:
    from prefixexec.options import as_given

    arguments = options.arguments
    adapter = arguments.adapter
    adapter_options = as_given(arguments, {"seed": options.seed, "cross_check": options.cross_check})
    load_label_rules(arguments.label_rules, adapter)  # checks the file before any input is read
    function = find_audit(adapter)
    report: Any
    if function is None:
        why = UNAUDITED.get(adapter, ("everything: the adapter declares no audit",))
        report = nothing_checked(adapter, "nothing read", why)
        if not options.quiet:
            sys.stderr.write(
                f"prefixexec: audit: this adapter has no audit, nothing was checked "
                f"(adapters with an audit: {', '.join(auditable()) or 'none'})\n"
            )
    else:
        for flag, value in (("--cross-check", options.cross_check), ("--category", arguments.category)):
            if value and adapter != "bfcl":
                raise InputError(flag, "only applies to --adapter bfcl")
        from prefixexec.ttyprogress import Work

        with Work(options.quiet, f"prefixexec audit: {adapter}") as work:  # PROGRESS-TTY, PROGRESS-COUNT
            work.phase("replaying gold and mutants")

            def tasks_done(done: int, total: int) -> None:
                work.total, work.unit = total, "tasks"
                work.done = done - 1
                work.advance()

            extra = {**adapter_options.extra, "progress": tasks_done}
            adapter_options = attrs.evolve(adapter_options, extra=extra)
            report = function(list(arguments.files), adapter_options)
    status = exit_status(report)
    from prefixexec.adapters.text import printable_lines  # HOSTILE-CONTROL

    options.stdout.write(dumps(report.to_json()) if options.json else printable_lines(report.render()))
    if function is not None and status == EXIT_NOTHING_CHECKED and not options.quiet:
        sys.stderr.write("prefixexec: audit: nothing in this input could be checked (see the report)\n")
    return status
