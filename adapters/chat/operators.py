"""The chat audit (AUDIT-CHAT): the calls the adapter accepted are the gold; mutants of them
must be rejected as ``schema`` at the mutated call."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import attrs

from prefixexec.kernel import Label, Outcome, ToolCall
from prefixexec.kernel.actions import Action

from ..audit import (
    WRONG_JSON_TYPE,
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
from ..labels import load_label_rules
from ..records import json_lines
from .reader import error_pattern, line_rollout, parse_arguments, read_calls, read_tools
from .semantics import SEMANTICS, ChatTask, ChatTool, _excerpt

if TYPE_CHECKING:
    from .. import AdapterOptions


def _audit_items(
    paths: Sequence[str], options: AdapterOptions
) -> list[tuple[str, ChatTask, tuple[Action, ...]]]:
    """Every transcript of ``paths`` as ``(where, task, calls)``, validated as ``read`` does."""
    pattern = error_pattern(options.error_pattern)
    rules = load_label_rules(options.label_rules, "chat")
    items: list[tuple[str, ChatTask, tuple[Action, ...]]] = []
    for path in paths:
        for where, record in json_lines(path):
            rollout = line_rollout(record, where, options, pattern, rules)
            tools = read_tools(record["tools"], where)
            calls = tuple(read_calls(record["messages"], where))
            task = ChatTask(calls, tools, record.get("no_tool_allowed", not tools), pattern, rules)
            label = f"{where} (task {rollout.task_id}, trial {rollout.trial})"
            items.append((label, task, tuple(c.action for c in calls)))
    if not items:
        raise InputError(", ".join(paths), "no transcripts found")
    return items


class _Call(Protocol):
    """A call of a task the operators mutate (a chat call, a trace call): its action."""

    @property
    def action(self) -> ToolCall: ...


class _Task(Protocol):
    """What the operators need of a task (chat transcripts, traces): its calls and offered tools
    (``None``: the input does not say which tools were offered)."""

    @property
    def calls(self) -> tuple[Any, ...]: ...

    @property
    def tools(self) -> Mapping[str, ChatTool] | None: ...


T = TypeVar("T", bound=_Task)


def _with_call(task: T, actions: tuple[Action, ...], index: int, call: _Call, change: str) -> Mutant[T]:
    calls = replace_at(task.calls, index, call)
    mutated: T = attrs.evolve(task, calls=calls)  # type: ignore[misc]  # T is an attrs class, typed by a Protocol
    return Mutant(mutated, replace_at(actions, index, call.action), index + 1, change)


def _accepted(task: _Task, actions: tuple[Action, ...], outcome: Outcome) -> range:
    return range(min(outcome.fed - 1, len(actions)))


def _schema_of(task: _Task, call: _Call) -> Mapping[str, Any] | None:
    tool = None if task.tools is None else task.tools.get(call.action.name)
    schema = tool.validator.schema if tool is not None and tool.validator is not None else None
    return schema if isinstance(schema, Mapping) else None


def unknown_tool(task: T, actions: tuple[Action, ...], outcome: Outcome) -> list[Mutant[T]]:
    """Mutants that rename an accepted call's tool to one not offered (none when the task does
    not say which tools were offered)."""
    if task.tools is None:
        return []
    out = []
    for i in _accepted(task, actions, outcome):
        call = task.calls[i]
        name = call.action.name + "_nonexistent"
        while name in task.tools:
            name += "_"
        renamed = ToolCall(name, call.action.arguments, call.action.call_id)
        out.append(
            _with_call(task, actions, i, attrs.evolve(call, action=renamed), f"tool renamed to {name!r}")
        )
    return out


def arguments_not_json(task: T, actions: tuple[Action, ...], outcome: Outcome) -> list[Mutant[T]]:
    """Mutants whose accepted call's arguments are cut JSON text."""
    out = []
    for i in _accepted(task, actions, outcome):
        call = task.calls[i]
        raw = json.dumps(dict(call.action.arguments))[:-1]  # the closing brace cut off
        arguments, problem = parse_arguments(raw)
        if problem is None:
            continue
        action = ToolCall(call.action.name, arguments, call.action.call_id)
        new = attrs.evolve(call, action=action, arguments_error=problem)
        out.append(_with_call(task, actions, i, new, f"arguments {_excerpt(raw)!r}"))
    return out


def drop_required(task: T, actions: tuple[Action, ...], outcome: Outcome) -> list[Mutant[T]]:
    """Mutants that drop a required argument the tool's schema names."""
    out = []
    for i in _accepted(task, actions, outcome):
        call = task.calls[i]
        schema = _schema_of(task, call)
        required = schema.get("required") if schema is not None else None
        if not isinstance(required, list):
            continue
        present = [k for k in required if isinstance(k, str) and k in call.action.arguments]
        if not present:
            continue
        key = present[-1]
        arguments = {k: v for k, v in call.action.arguments.items() if k != key}
        action = ToolCall(call.action.name, arguments, call.action.call_id)
        out.append(
            _with_call(task, actions, i, attrs.evolve(call, action=action), f"required {key!r} dropped")
        )
    return out


def wrong_type(task: T, actions: tuple[Action, ...], outcome: Outcome) -> list[Mutant[T]]:
    """Mutants that give an argument a value of another JSON type than its schema says."""
    out = []
    for i in _accepted(task, actions, outcome):
        call = task.calls[i]
        schema = _schema_of(task, call)
        properties = schema.get("properties") if schema is not None else None
        if not isinstance(properties, Mapping):
            continue
        for key in call.action.arguments:
            spec = properties.get(key)
            kind = spec.get("type") if isinstance(spec, Mapping) else None
            if isinstance(kind, str) and kind in WRONG_JSON_TYPE:
                value = WRONG_JSON_TYPE[kind]
                arguments = {**call.action.arguments, key: value}
                action = ToolCall(call.action.name, arguments, call.action.call_id)
                change = f"{key!r} ({kind}) set to {value!r}"
                out.append(_with_call(task, actions, i, attrs.evolve(call, action=action), change))
                break
    return out


#: The chat audit's mutation operators: each must be rejected as ``schema`` at the mutated call.
AUDIT_OPERATORS: tuple[Operator[ChatTask], ...] = (
    Operator("unknown-tool", "call a tool that is not offered", Expect.LABEL, unknown_tool, Label.SCHEMA),
    Operator(
        "arguments-not-json",
        "arguments that are not valid JSON",
        Expect.LABEL,
        arguments_not_json,
        Label.SCHEMA,
    ),
    Operator(
        "drop-required", "drop a required argument (schema)", Expect.LABEL, drop_required, Label.SCHEMA
    ),
    Operator(
        "wrong-type", "an argument of another JSON type (schema)", Expect.LABEL, wrong_type, Label.SCHEMA
    ),
)


def audit(paths: Sequence[str], options: AdapterOptions) -> GenericAuditReport:
    """``prefixexec audit --adapter chat FILE...`` (AUDIT-CHAT)."""
    if not paths:
        raise InputError("--adapter chat", "the chat audit reads transcripts: give FILE...")
    items = _audit_items(paths, options)
    gold, first_rejected = accepted_prefixes(SEMANTICS, items)
    without_calls = sum(1 for _, _, actions in items if not actions)
    plan: AuditPlan[ChatTask] = AuditPlan(
        adapter="chat",
        source=f"{', '.join(paths)}: {len(items)} transcripts, {sum(len(a) for _, _, a in items)} calls",
        semantics=SEMANTICS,
        gold=gold,
        gold_kind="calls the adapter accepted, before each transcript's first rejection",
        operators=AUDIT_OPERATORS,
        not_checked=(
            "whether the recorded tool results are right: they are taken as given, nothing is executed",
            "calls after each transcript's first rejection (replay stops there: CONV-REPLAY)",
            f"{first_rejected} transcripts whose first call was rejected and {without_calls} without a "
            "call: no accepted call to mutate",
            "labels of error results (CHAT-LABELS) and --error-pattern: no operator writes a tool result",
        ),
    )
    return run_audit(plan, seed_of(options))

