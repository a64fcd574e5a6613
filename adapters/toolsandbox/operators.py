"""``prefixexec audit --adapter toolsandbox RUN_DIR...``: operators and checks (TSB-AUDIT).

A run directory holds recorded executions only (ToolSandbox's gold milestones need its own
environment), so the audit mutates what the execution environment recorded for the calls it
accepted (operators) and re-counts from the raw files what the reader decided (checks): the calls
of each scenario, ToolSandbox's own similarity rule, the agreement of conversation.json with
execution_context.json, and ToolSandbox's own category summary.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from prefixexec.kernel import ConditionKey, Label, Outcome, Rollout, ToolCall
from prefixexec.kernel.actions import Action

from ..audit import (
    AuditPlan,
    Check,
    Expect,
    GenericAuditReport,
    Mutant,
    Operator,
    Trajectory,
    run_audit,
    seed_of,
)
from ..errors import InputError
from ..labels import load_label_rules
from .reader import (
    CONTEXT,
    CONVERSATION,
    DATASET,
    DEFAULT_METHOD,
    SUMMARY,
    ScenarioRun,
    calls_from_context,
    calls_from_conversation,
    model_from_run,
    read_scenarios,
    run_directory,
    similarity_threshold,
    split_by_category,
    to_rollout,
)
from .semantics import SEMANTICS, SandboxCall, Scenario

if TYPE_CHECKING:
    from .. import AdapterOptions

#: Exception lines as ToolSandbox's tools raise them, one per label family (operator -> label).
RECORDED_FAILURES: tuple[tuple[str, str, Label], ...] = (
    (
        "type-error",
        "TypeError: Parameter 'on' is of type '<class 'str'>', but expected '<class 'bool'>'.",
        Label.SCHEMA,
    ),
    (
        "no-data",
        "polars.exceptions.NoDataError: No db entry matching person_id='audit' found",
        Label.DEPENDENCY,
    ),
    ("cellular-off", "ConnectionError: Cellular service is not enabled", Label.PRECONDITION),
    ("already-enabled", "ValueError: wifi already enabled", Label.STATE_CONSISTENCY),
)


@attrs.frozen(slots=True)
class _AuditScenario:
    run: ScenarioRun
    rollout: Rollout
    directory: Path


def _scenarios(paths: Sequence[str], options: AdapterOptions) -> list[_AuditScenario]:
    """Every scenario of ``paths`` as the reader reads it (same validation, same rollouts)."""
    threshold = similarity_threshold(options.threshold)
    rules = load_label_rules(options.label_rules, "toolsandbox")
    out: list[_AuditScenario] = []
    for path in paths:
        directory = run_directory(path)
        key = ConditionKey(
            DATASET, options.model or model_from_run(directory), options.method or DEFAULT_METHOD
        )
        for run in read_scenarios(directory, rules):
            out.append(_AuditScenario(run, to_rollout(run, key, 0, threshold, directory), directory))
    if not out:
        raise InputError(", ".join(paths), "no scenarios found")
    return out


def _mutants(
    task: Scenario,
    actions: tuple[Action, ...],
    outcome: Outcome,
    change: Callable[[Scenario, int], tuple[Scenario, tuple[Action, ...], str]],
) -> list[Mutant[Scenario]]:
    out = []
    for i in range(min(outcome.fed - 1, len(actions))):
        mutated, mutated_actions, what = change(task, i)
        out.append(Mutant(mutated, mutated_actions, i + 1, what))
    return out


def _with_call(task: Scenario, i: int, call: SandboxCall) -> Scenario:
    calls = list(task.calls)
    calls[i] = call
    return attrs.evolve(task, calls=tuple(calls))


def _operator(name: str, exception: str, label: Label) -> Operator[Scenario]:
    def change(task: Scenario, i: int) -> tuple[Scenario, tuple[Action, ...], str]:
        call = attrs.evolve(task.calls[i], exception=exception, reply=exception)
        return _with_call(task, i, call), tuple(c.action for c in task.calls), exception

    def make(task: Scenario, actions: tuple[Action, ...], outcome: Outcome) -> list[Mutant[Scenario]]:
        return _mutants(task, actions, outcome, change)

    return Operator(
        name, f"the reply records {exception!r} (TSB-EXEC, TSB-LABELS)", Expect.LABEL, make, label
    )


def _unanswered(task: Scenario, i: int) -> tuple[Scenario, tuple[Action, ...], str]:
    call = attrs.evolve(task.calls[i], answered=False, exception=None, reply=None)
    return _with_call(task, i, call), tuple(c.action for c in task.calls), "reply removed"


def _unknown_tool(task: Scenario, i: int) -> tuple[Scenario, tuple[Action, ...], str]:
    # ToolSandbox aborts on the unknown tool: nothing after it is recorded (TSB-ABORT).
    old = task.calls[i].action
    action = ToolCall(old.name + "_not_allowed", old.arguments, None)
    calls = (*task.calls[:i], SandboxCall(action, answered=False, aborted=True))
    return attrs.evolve(task, calls=calls), tuple(c.action for c in calls), f"unknown tool {action.name}"


def audit_operators() -> tuple[Operator[Scenario], ...]:
    """The ToolSandbox audit's operators: each rewrites what was recorded for one accepted call."""

    def unanswered(task: Scenario, actions: tuple[Action, ...], outcome: Outcome) -> list[Mutant[Scenario]]:
        return _mutants(task, actions, outcome, _unanswered)

    def unknown(task: Scenario, actions: tuple[Action, ...], outcome: Outcome) -> list[Mutant[Scenario]]:
        return _mutants(task, actions, outcome, _unknown_tool)

    return (
        *(_operator(name, exception, label) for name, exception, label in RECORDED_FAILURES),
        Operator(
            "unanswered",
            "no execution_environment reply to the call (TSB-UNANSWERED)",
            Expect.AT_OR_AFTER,
            unanswered,
        ),
        Operator(
            "unknown-tool",
            "the call names a tool that is not allowed and ToolSandbox aborts (TSB-ABORT)",
            Expect.LABEL,
            unknown,
            Label.SCHEMA,
        ),
    )


def _raw_calls(path: Path) -> int:
    """AGENT -> EXECUTION_ENVIRONMENT rows of an execution_context.json, counted on the raw JSON."""
    document = json.loads(path.read_text(encoding="utf-8"))
    rows = next(v for k, v in document["_dbs"].items() if str(k).upper() == "SANDBOX")
    return sum(
        1
        for r in rows
        if isinstance(r, dict)
        and str(r.get("sender")).upper() == "AGENT"
        and str(r.get("recipient")).upper() == "EXECUTION_ENVIRONMENT"
    )


def _view(calls: Sequence[SandboxCall]) -> list[tuple[Any, ...]]:
    return [
        (c.action.name, dict(c.action.arguments), c.action.call_id, c.answered, c.exception) for c in calls
    ]


def _audit_checks(scenarios: Sequence[_AuditScenario]) -> tuple[Check, ...]:
    counts: list[str] = []
    similarity: list[str] = []
    similarity_checked = 0
    conversation: list[str] = []
    conversation_checked = 0
    for s in scenarios:
        entry, outcome = s.run.entry, s.rollout.outcome
        folder = s.directory / "trajectories" / entry.name
        where = f"{s.directory}: {entry.name}"
        if s.run.source == CONTEXT:
            raw = _raw_calls(folder / CONTEXT) + (1 if entry.exception_type == "KeyError" else 0)
            # No call: the one no-tool action (TSB-NOTOOL).
            if outcome.T != max(raw, 1):
                counts.append(f"{where}: {raw} call rows (with the abort), but T {outcome.T}")
            if (folder / CONVERSATION).is_file():
                conversation_checked += 1
                ours = _view(calls_from_context(folder / CONTEXT))
                theirs = _view(calls_from_conversation(folder / CONVERSATION))
                if ours != theirs:
                    conversation.append(
                        f"{where}: conversation.json's calls differ from execution_context.json's"
                    )
        if entry.milestone_similarity is not None and entry.minefield_similarity is not None:
            similarity_checked += 1
            expected = int(entry.minefield_similarity == 0) * entry.milestone_similarity
            if entry.similarity != expected:
                similarity.append(
                    f"{where}: similarity {entry.similarity} is not "
                    f"1{{minefield == 0}} * milestone ({expected})"
                )
    category: list[str] = []
    category_checked = 0
    for directory in dict.fromkeys(s.directory for s in scenarios):
        document = json.loads((directory / SUMMARY).read_text(encoding="utf-8"))
        aggregated = document.get("category_aggregated_results")
        if not isinstance(aggregated, dict):
            continue
        sums: dict[str, list[float]] = {}
        for rollout in split_by_category([s.rollout for s in scenarios if s.directory == directory]):
            value = rollout.meta["similarity"]
            assert isinstance(value, float)
            sums.setdefault(rollout.condition.dataset.split("/", 1)[1], []).append(value)
        for name, values in sorted(sums.items()):
            category_checked += 1
            stated = aggregated.get(name)
            summary_mean = stated.get("similarity") if isinstance(stated, dict) else None
            split_mean = sum(values) / len(values)
            # The same float sum in the same (summary) order as ToolSandbox: compared exactly.
            if not isinstance(summary_mean, int | float) or split_mean != summary_mean:
                category.append(
                    f"{directory}: category {name}: mean similarity {split_mean}, summary says {summary_mean}"
                )
        extra = sorted(set(aggregated) - set(sums) - {"ALL_CATEGORIES"})
        category.extend(f"{directory}: category {name} is in the summary only" for name in extra)
    return (
        Check(
            "call-count",
            "T is the number of AGENT -> EXECUTION_ENVIRONMENT rows (+1 for a KeyError abort), counted on "
            "the raw JSON (TSB-CALLS, TSB-ABORT)",
            sum(1 for s in scenarios if s.run.source == CONTEXT),
            tuple(counts),
        ),
        Check(
            "similarity-rule",
            "ToolSandbox's similarity is 1{minefield_similarity == 0} * milestone_similarity (TSB-SUCCESS)",
            similarity_checked,
            tuple(similarity),
        ),
        Check(
            "conversation-agrees",
            "conversation.json gives the same calls, ids, replies and exceptions as execution_context.json "
            "(TSB-FALLBACK)",
            conversation_checked,
            tuple(conversation),
        ),
        Check(
            "category-summary",
            "mean similarity per category of the split equals ToolSandbox's category_aggregated_results "
            "(TSB-CATEGORY)",
            category_checked,
            tuple(category),
        ),
    )


def audit(paths: Sequence[str], options: AdapterOptions) -> GenericAuditReport:
    """``prefixexec audit --adapter toolsandbox RUN_DIR...`` (TSB-AUDIT)."""
    if not paths:
        raise InputError(
            "--adapter toolsandbox", "the ToolSandbox audit reads run directories: give RUN_DIR..."
        )
    scenarios = _scenarios(paths, options)
    bases = tuple(_trajectory(s) for s in scenarios if s.run.scenario.calls and s.rollout.outcome.fed > 1)
    without = sum(1 for s in scenarios if not s.run.scenario.calls)
    first_rejected = sum(1 for s in scenarios if s.run.scenario.calls and s.rollout.outcome.fed == 1)
    plan: AuditPlan[Scenario] = AuditPlan(
        adapter="toolsandbox",
        source=f"{', '.join(paths)}: {len(scenarios)} scenarios, "
        f"{sum(len(s.run.scenario.calls) for s in scenarios)} calls",
        semantics=SEMANTICS,
        no_gold="ToolSandbox's gold milestones need its own environment (databases, tools and "
        "evaluation), which prefixexec does not run",
        bases=bases,
        bases_kind="calls the execution environment accepted, before each scenario's first rejection",
        operators=audit_operators(),
        checks=_audit_checks(scenarios),
        not_checked=(
            "whether the recorded replies are the ones ToolSandbox's tools would give: that needs "
            "ToolSandbox's environment",
            "labels of the recorded exceptions beyond the operators' exception lines (TSB-LABELS)",
            f"{first_rejected} scenarios whose first call was rejected, and {without} without calls: no "
            "accepted call to mutate",
        ),
    )
    return run_audit(plan, seed_of(options))


def _trajectory(s: _AuditScenario) -> Trajectory[Scenario]:
    scenario = s.run.scenario
    fed = s.rollout.outcome.fed
    actions = tuple(c.action for c in scenario.calls)[: fed - 1]
    return Trajectory(f"{s.directory.name}/{scenario.name}", scenario, actions)


__all__ = ["RECORDED_FAILURES", "audit", "audit_operators"]
