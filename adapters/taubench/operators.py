"""``prefixexec audit --adapter taubench FILE...``: operators and checks (AUDIT-TAU).

The result files hold no environment, so the audit mutates what the environment recorded for
the calls it accepted (operators) and re-counts from the raw JSON what the reader decided
(checks). It also lists the rollouts whose agent wrote calls as text (TAU-TEXT-CALL).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from prefixexec.kernel import Label, Outcome, ToolCall
from prefixexec.kernel.actions import Action

from ..audit import (
    AuditPlan,
    Check,
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
from ..labels import load_label_rules
from .reader import FileRead, ReadRollout, load, read_data, warn
from .semantics import TAU, Exchange, TauTask, id_like, occurs, string_leaves

if TYPE_CHECKING:
    from .. import AdapterOptions

#: An argument value usable as the identifier of a ``<id> not found`` message (operator seen-id).
_ID_TOKEN = re.compile(r"^[A-Za-z0-9_#-]+$")


@attrs.frozen(slots=True)
class _AuditRollout:
    read: ReadRollout
    gold: int | None
    gold_actions: str | None
    recorded_gold: str | None


def _gold_v1(record: Mapping[str, Any]) -> tuple[int, str, str | None]:
    """Non-``respond`` gold actions of a v1 record, and both recorded gold lists as canonical JSON."""
    info = record["info"]
    actions = info["task"]["actions"]
    reward_info = info.get("reward_info")
    recorded = reward_info.get("actions") if isinstance(reward_info, dict) else None
    count = sum(1 for a in actions if a.get("name") != "respond")
    canonical = json.dumps(actions, sort_keys=True)
    return count, canonical, None if recorded is None else json.dumps(recorded, sort_keys=True)


def _audit_rollouts(paths: Sequence[str], options: AdapterOptions) -> tuple[list[_AuditRollout], list[str]]:
    """Every rollout of ``paths`` as the reader reads it, with its gold re-counted from the raw JSON."""
    rules = load_label_rules(options.label_rules, "taubench")
    options = attrs.evolve(options, harness_errors="failure")  # every record, to pair with the raw JSON
    out: list[_AuditRollout] = []
    warnings: list[str] = []
    for path in paths:
        name, data = load(path)
        found: FileRead = read_data(name, data, options, rules)
        warnings.extend(found.warnings)
        if isinstance(data, list):
            for r, record in zip(found.rollouts, data, strict=True):
                if r.crashed:
                    out.append(_AuditRollout(r, None, None, None))
                    continue
                count, canonical, recorded = _gold_v1(record)
                out.append(_AuditRollout(r, count, canonical, recorded))
        else:
            gold = {
                str(t["id"]): sum(
                    1
                    for a in ((t.get("evaluation_criteria") or {}).get("actions") or [])
                    if a.get("requestor", "assistant") != "user"
                )
                for t in data["tasks"]
            }
            for r, sim in zip(found.rollouts, data["simulations"], strict=True):
                out.append(_AuditRollout(r, gold[str(sim["task_id"])], None, None))
    if not out:
        raise InputError(
            ", ".join(paths), "no rollouts found" + (" (every file is empty)" if warnings else "")
        )
    return out, warnings


def _seen_through(task: TauTask, index: int) -> tuple[str, ...]:
    """The conversation the agent had seen when it issued call ``index`` (TAU-ENTITY)."""
    return tuple(text for e in task.exchanges[: index + 1] for text in e.context)


def _tau_mutants(
    task: TauTask,
    actions: tuple[Action, ...],
    outcome: Outcome,
    change: Callable[[TauTask, int], tuple[Exchange, str] | None],
) -> list[Mutant[TauTask]]:
    out = []
    for i in range(min(outcome.fed - 1, len(actions))):
        changed = change(task, i)
        if changed is None:
            continue
        exchange, what = changed
        mutated = attrs.evolve(task, exchanges=replace_at(task.exchanges, i, exchange))
        out.append(Mutant(mutated, replace_at(actions, i, exchange.call), i + 1, what))
    return out


def _unanswered(task: TauTask, i: int) -> tuple[Exchange, str]:
    return attrs.evolve(task.exchanges[i], answered=False, accepted=False, observation=""), "answer removed"


def _unknown_action(task: TauTask, i: int) -> tuple[Exchange, str]:
    call = task.exchanges[i].call
    name = call.name + "_nonexistent"
    renamed = ToolCall(name, call.arguments, call.call_id)
    message = f"Unknown action {name}"
    return attrs.evolve(task.exchanges[i], call=renamed, accepted=False, observation=message), message


def _invented_id(task: TauTask, i: int) -> tuple[Exchange, str]:
    seen = _seen_through(task, i)
    token = f"AUDIT{i + 1}"
    while occurs(token, seen, task.id_prefixes):
        token += "X"
    message = f"Error: {token} not found"
    return attrs.evolve(task.exchanges[i], accepted=False, observation=message), message


def _seen_id(task: TauTask, i: int) -> tuple[Exchange, str] | None:
    seen = _seen_through(task, i)
    exchange = task.exchanges[i]
    for _, value in string_leaves(exchange.call.arguments):
        if _ID_TOKEN.match(value) and id_like(value) and occurs(value, seen, task.id_prefixes):
            message = f"Error: {value} not found"
            return attrs.evolve(exchange, accepted=False, observation=message), message
    return None


def _tau_operator(
    name: str, description: str, label: Label, change: Callable[[TauTask, int], tuple[Exchange, str] | None]
) -> Operator[TauTask]:
    def make(task: TauTask, actions: tuple[Action, ...], outcome: Outcome) -> list[Mutant[TauTask]]:
        return _tau_mutants(task, actions, outcome, change)

    return Operator(name, description, Expect.LABEL, make, label)


def audit_operators() -> tuple[Operator[TauTask], ...]:
    """The tau-bench audit's operators: each rewrites what the environment recorded for a call."""
    return (
        _tau_operator(
            "unanswered", "no tool message answers the call (TAU-UNANSWERED)", Label.SCHEMA, _unanswered
        ),
        _tau_operator(
            "unknown-action",
            "the call names an unknown tool (v1: Unknown action)",
            Label.SCHEMA,
            _unknown_action,
        ),
        _tau_operator(
            "invented-id",
            "'<id> not found' for an id the agent never saw (TAU-ENTITY)",
            Label.INFORMATION,
            _invented_id,
        ),
        _tau_operator(
            "seen-id",
            "'<id> not found' for an argument id the agent had seen (TAU-ENTITY)",
            Label.DEPENDENCY,
            _seen_id,
        ),
    )


def _audit_checks(rollouts: Sequence[_AuditRollout]) -> tuple[Check, ...]:
    no_tool: list[str] = []
    no_tool_checked = 0
    gold_records: list[str] = []
    gold_checked = 0
    first_gold: dict[tuple[str, str], tuple[str, str]] = {}
    recording: list[str] = []
    for a in rollouts:
        r = a.read
        outcome = r.rollout.outcome
        if not r.calls:
            no_tool_checked += 1
            expected = 1 if r.crashed or a.gold else 2
            if outcome.T != 1 or outcome.fed != expected:
                why = "a crashed run" if r.crashed else f"{a.gold} gold action(s)"
                no_tool.append(
                    f"{r.where}: {why}, expected FED {expected}, got T {outcome.T} FED {outcome.fed}"
                )
        if a.gold_actions is not None:
            gold_checked += 1
            if a.recorded_gold is not None and a.recorded_gold != a.gold_actions:
                gold_records.append(f"{r.where}: info.reward_info.actions differ from info.task.actions")
            key = (r.rollout.condition.dataset, r.rollout.task_id)
            first = first_gold.setdefault(key, (r.where, a.gold_actions))
            if first[1] != a.gold_actions:
                gold_records.append(f"{r.where}: gold actions differ from those of {first[0]} (same task)")
        meta = r.rollout.meta
        calls, rejected, unanswered = meta["calls"], meta["rejected_calls"], meta["unanswered_calls"]
        if calls:
            clean = rejected == 0 and unanswered == 0
            if outcome.T != calls or (not clean and outcome.fully_executable):
                recording.append(
                    f"{r.where}: {calls} calls, {rejected} rejected, {unanswered} unanswered, "
                    f"but T {outcome.T} FED {outcome.fed}"
                )
            if clean and not outcome.fully_executable:
                recording.append(f"{r.where}: every call accepted and answered, but FED {outcome.fed}")
    return (
        Check(
            "no-tool-rule",
            "a rollout without calls has FED 2 iff its task has no gold action and the run did not crash "
            "(TAU-NOTOOL, TAU-CRASH)",
            no_tool_checked,
            tuple(no_tool),
        ),
        Check(
            "gold-recording",
            "v1 gold actions: info.reward_info.actions equal info.task.actions, and every trial of a task "
            "has the same gold",
            gold_checked,
            tuple(gold_records),
        ),
        Check(
            "outcome-recording",
            "T is the number of calls, and FED = T + 1 iff every call was answered and accepted (EQ-1)",
            sum(1 for a in rollouts if a.read.calls),
            tuple(recording),
        ),
    )


def text_call_lines(rollouts: Sequence[ReadRollout]) -> tuple[str, ...]:
    """The audit's list of rollouts whose agent wrote calls as text (TAU-TEXT-CALL)."""
    listed = [r for r in rollouts if r.text_calls]
    if not listed:
        return ("calls written as text (TAU-TEXT-CALL): no rollout has one",)
    lines = [
        f"calls written as text (TAU-TEXT-CALL): {len(listed)} rollout(s) wrote "
        f"{sum(len(r.text_calls) for r in listed)} call(s) as text in a reply, never executed"
    ]
    for r in listed:
        names = ", ".join(sorted({name for _, name in r.text_calls}))
        scored = "no tool call, scored by the no-tool rule" if not r.calls else f"{len(r.calls)} tool call(s)"
        lines.append(
            f"calls written as text: task {r.rollout.task_id!r}, trial {r.rollout.trial} "
            f"({r.rollout.condition.dataset} / "
            f"{r.rollout.condition.model}): {len(r.text_calls)} written as text ({names}); {scored}"
        )
    return tuple(lines)


def audit(paths: Sequence[str], options: AdapterOptions) -> GenericAuditReport:
    """``prefixexec audit --adapter taubench FILE...`` (AUDIT-TAU)."""
    if not paths:
        raise InputError("--adapter taubench", "the tau-bench audit reads result files: give FILE...")
    rollouts, warnings = _audit_rollouts(paths, options)
    warn(warnings)
    read = [a.read for a in rollouts]
    items: list[tuple[str, TauTask, tuple[Action, ...]]] = [
        (r.where, r.task, r.calls) for r in read if r.calls
    ]
    bases, first_rejected = accepted_prefixes(TAU, items)
    plan: AuditPlan[TauTask] = AuditPlan(
        adapter="taubench",
        source=f"{', '.join(paths)}: {len(rollouts)} rollouts, {sum(len(r.calls) for r in read)} calls",
        semantics=TAU,
        no_gold="tau-bench's gold actions (v1 info.task.actions, tau2 evaluation_criteria.actions) "
        "need the benchmark's environment (databases and tool code), which is not in the result files",
        bases=bases,
        bases_kind="calls the environment accepted, before each rollout's first rejection",
        operators=audit_operators(),
        checks=_audit_checks(rollouts),
        checked=text_call_lines(read),
        not_checked=(
            "state replay: whether the gold actions execute, and whether the recorded verdicts are the "
            "ones the environment would give, needs tau-bench's environment",
            "labels of the recorded rejections beyond the operators' messages (TAU-LABELS on real text)",
            "Y: the recorded reward is taken as is",
            f"{first_rejected} rollouts whose first call was rejected: no accepted call to mutate",
        ),
    )
    return run_audit(plan, seed_of(options))


__all__ = ["audit", "audit_operators", "text_call_lines"]
