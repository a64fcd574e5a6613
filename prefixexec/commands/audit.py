"""``prefixexec audit --adapter A``: check an adapter against its benchmark's own gold (spec: AUDIT-CLI).

An adapter that has gold trajectories or replayable semantics offers an audit by defining a
function ``audit(options) -> report``: as an ``audit`` attribute of its :data:`ADAPTERS` entry
if the registry has one, otherwise in its module ``prefixexec.adapters.<name>``. The report
has ``passed`` (bool), ``render() -> str`` (what was checked, what was found, what was not
checked) and ``to_json() -> dict``. Adapters without ``audit`` get a clear message and exit 2.
Exit status: 0 when the audit passes, 1 when it finds a failure, 2 for bad input.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any, Protocol

from prefixexec.adapters import ADAPTERS, AdapterOptions, InputError
from prefixexec.scoring import dumps

NAME = "audit"

EXIT_OK = 0
EXIT_FAILED = 1


class AuditReport(Protocol):
    """What an adapter's ``audit(options)`` returns."""

    @property
    def passed(self) -> bool: ...

    def render(self) -> str: ...

    def to_json(self) -> dict[str, Any]: ...


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        NAME,
        help="replay an adapter's gold trajectories and mutants of them; report what was checked",
        description="Replay the benchmark's own gold trajectories with the adapter's semantics, apply "
        "mutation operators and report how replay judged them (adapters that define audit()).",
    )
    parser.add_argument("--adapter", required=True, choices=sorted(ADAPTERS), help="the adapter to audit")
    parser.add_argument("--category", help="only this category of the benchmark (e.g. multi_turn_base)")
    parser.add_argument(
        "--seed", type=int, default=0, help="seed that picks the mutated positions (default 0)"
    )
    parser.add_argument(
        "--cross-check",
        action="store_true",
        help="also compare with the benchmark's own implementation, on trusted inputs only",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def _find_audit(adapter: str) -> Any:
    """The adapter's audit: an ``audit`` attribute of its registry entry, else of its module."""
    function = getattr(ADAPTERS[adapter], "audit", None)
    if callable(function):
        return function
    try:
        module = importlib.import_module(f"prefixexec.adapters.{adapter}")
    except ImportError:
        return None
    function = getattr(module, "audit", None)
    return function if callable(function) else None


def _audit_function(adapter: str) -> Any:
    function = _find_audit(adapter)
    if function is None:
        auditable = [name for name in sorted(ADAPTERS) if _find_audit(name) is not None]
        raise InputError(
            f"--adapter {adapter}",
            "this adapter has no audit: it has neither gold trajectories nor replayable semantics "
            f"(adapters with an audit: {', '.join(auditable) or 'none'})",
        )
    return function


def run(args: argparse.Namespace) -> int:
    function = _audit_function(args.adapter)
    options = AdapterOptions(
        category=args.category, extra={"seed": args.seed, "cross_check": args.cross_check}
    )
    report: AuditReport = function(options)
    sys.stdout.write(dumps(report.to_json()) if args.json else report.render())
    return EXIT_OK if report.passed else EXIT_FAILED
