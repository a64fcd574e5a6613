"""The inspect audit (spec: AUDIT-INSPECT in spec/audit.md): operators and the audit plan.

The calls the adapter accepted are the gold; each mutant records what inspect_ai records for a
faulty call (INS-EXEC, INS-LABELS) and must be rejected at that call with that fault's label.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from prefixexec.kernel import Label, Outcome, ToolCall
from prefixexec.kernel.actions import Action

from ..audit import (
    AuditPlan,
    Expect,
    GenericAuditReport,
    Mutant,
    Operator,
    accepted_prefixes,
    replace_at,
    run_audit,
    seed_of,
)
from ..errors import InputError
from .reader import read_items, semantics_for
from .semantics import InspectCall, InspectSample

if TYPE_CHECKING:
    from .. import AdapterOptions


def _inspect_mutants(
    sample: InspectSample,
    actions: tuple[Action, ...],
    outcome: Outcome,
    change: Callable[[InspectCall], tuple[InspectCall, str] | None],
) -> list[Mutant[InspectSample]]:
    out = []
    for i in range(min(outcome.fed - 1, len(actions))):
        changed = change(sample.calls[i])
        if changed is None:
            continue
        call, what = changed
        mutated = attrs.evolve(sample, calls=replace_at(sample.calls, i, call))
        out.append(Mutant(mutated, replace_at(actions, i, call.action), i + 1, what))
    return out


def _rename(call: InspectCall) -> tuple[InspectCall, str] | None:
    if call.offered is None:
        return None
    name = call.action.name + "_nonexistent"
    while name in call.offered:
        name += "_"
    action = ToolCall(name, call.action.arguments, call.action.call_id)
    return attrs.evolve(call, action=action), f"tool renamed to {name!r}"


def _parse_error(call: InspectCall) -> tuple[InspectCall, str]:
    raw = json.dumps(dict(call.action.arguments))[:-1]  # the closing brace cut off
    try:
        json.loads(raw)
        details = "no error"
    except ValueError as exc:
        details = str(exc)
    error = f"Error parsing the following tool call arguments:\n\n{raw}\n\nError details: {details}"
    action = ToolCall(call.action.name, {}, call.action.call_id)
    return attrs.evolve(call, action=action, parse_error=error), f"arguments {raw!r} not parsed"


def _tool_error(error_type: str, message: str) -> Callable[[InspectCall], tuple[InspectCall, str]]:
    def change(call: InspectCall) -> tuple[InspectCall, str]:
        new = attrs.evolve(call, answered=True, error_type=error_type, error_message=message)
        return new, f"tool message error {error_type!r}"

    return change


def _operator(
    name: str,
    description: str,
    label: Label,
    change: Callable[[InspectCall], tuple[InspectCall, str] | None],
) -> Operator[InspectSample]:
    def make(
        sample: InspectSample, actions: tuple[Action, ...], outcome: Outcome
    ) -> list[Mutant[InspectSample]]:
        return _inspect_mutants(sample, actions, outcome, change)

    return Operator(name, description, Expect.LABEL, make, label)


#: The inspect audit's operators and the label each mutant must be rejected with (INS-EXEC, INS-LABELS).
AUDIT_OPERATORS: tuple[Operator[InspectSample], ...] = (
    _operator("unknown-tool", "call a tool that was not offered", Label.SCHEMA, _rename),
    _operator("arguments-not-json", "arguments inspect could not parse", Label.SCHEMA, _parse_error),
    _operator(
        "validation-error",
        "arguments that fail the tool's schema (inspect: a 'parsing' error)",
        Label.SCHEMA,
        _tool_error("parsing", "Found 1 validation errors parsing tool input arguments: required property"),
    ),
    _operator(
        "file-not-found",
        "the tool reports a missing file",
        Label.DEPENDENCY,
        _tool_error("file_not_found", "File not found: missing.txt"),
    ),
    _operator(
        "permission",
        "the tool reports a permission error",
        Label.PRECONDITION,
        _tool_error("permission", "Permission denied: /root"),
    ),
    _operator(
        "timeout",
        "the tool times out",
        Label.STATE_CONSISTENCY,
        _tool_error("timeout", "Command timed out before completing."),
    ),
)


def audit(paths: Sequence[str], options: AdapterOptions) -> GenericAuditReport:
    """``prefixexec audit --adapter inspect FILE...`` (AUDIT-INSPECT)."""
    if not paths:
        raise InputError("--adapter inspect", "the inspect audit reads logs: give FILE...")
    semantics = semantics_for(options)
    options = attrs.evolve(options, harness_errors="failure")  # every sample, errored ones too
    items: list[tuple[str, InspectSample, tuple[Action, ...]]] = [
        (item.place, item.task, tuple(c.action for c in item.task.calls))
        for item in read_items(paths, options, semantics)
    ]
    gold, first_rejected = accepted_prefixes(semantics, items)
    without_calls = sum(1 for _, _, actions in items if not actions)
    unknown_tools = sum(1 for _, task, actions in items if not actions and task.no_tool.unknown)
    unknown_offer = sum(1 for t in gold for c in t.task.calls[: len(t.actions)] if c.offered is None)
    not_checked = [
        "whether the recorded tool messages are right: they are taken as given, nothing is executed",
        "argument schemas: the adapter does not validate arguments itself; inspect_ai records its "
        "own validation failures as 'parsing' errors, which operator validation-error writes",
        f"unknown-tool for the {unknown_offer} accepted calls whose log records no offered tools",
        "calls after each sample's first rejection (replay stops there: CONV-REPLAY)",
        f"{first_rejected} samples whose first call was rejected and {without_calls} without a "
        "call: no accepted call to mutate",
    ]
    if unknown_tools:
        not_checked.append(
            f"whether tools were offered in the {unknown_tools} samples without a call whose log records "
            "nothing about tools: their no-tool action was taken as allowed (INS-NOTOOL-UNKNOWN)"
        )
    plan: AuditPlan[InspectSample] = AuditPlan(
        adapter="inspect",
        source=f"{', '.join(paths)}: {len(items)} samples, {sum(len(a) for _, _, a in items)} calls",
        semantics=semantics,
        gold=gold,
        gold_kind="calls the adapter accepted, before each sample's first rejection",
        operators=AUDIT_OPERATORS,
        not_checked=tuple(not_checked),
    )
    return run_audit(plan, seed_of(options))


__all__ = ["AUDIT_OPERATORS", "audit"]
