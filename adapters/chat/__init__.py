"""Chat transcripts, one rollout per JSONL line (spec: spec/adapters/chat.md, CHAT-*).

A line is ``{"task_id", "model", "method", "success", "messages", "tools"}`` with the messages in
OpenAI chat format; Anthropic ``tool_use`` / ``tool_result`` blocks and MCP ``isError`` results
are read too. A call is not executable when its arguments are not valid JSON, it names a tool not
in ``tools``, its arguments violate the tool's JSON Schema (checked with ``jsonschema``), its
result is flagged ``is_error`` / ``isError``, or its result matches ``--error-pattern``.
Arguments are JSON data: nothing of a transcript is evaluated or executed.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import attrs
import jsonschema
import jsonschema.exceptions
import jsonschema.protocols
import referencing.exceptions

from prefixexec.kernel import Accepted, ConditionKey, Label, Outcome, Rejected, Rollout, ToolCall, replay
from prefixexec.kernel.actions import Action, NoToolAction

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
from ..records import json_lines, parse_json_line, unique_rollouts

if TYPE_CHECKING:
    from .. import AdapterOptions

DEFAULT_DATASET = "chat"
STDIN = "-"
#: Longest excerpt of a tool result quoted in a rejection reason.
REASON_EXCERPT = 200

# ---------------------------------------------------------------------------------------------
# Labels of error results (CHAT-LABELS)

#: Families of error texts, matched case-insensitively; every matching family is a label and the
#: kernel picks the primary one (CONV-LABEL-ORDER). No match: unlabelled.
ERROR_FAMILIES: tuple[tuple[Label, re.Pattern[str]], ...] = (
    (
        Label.SCHEMA,
        re.compile(
            r"\binvalid\b|missing (?:\d+ )?required|unexpected (?:keyword )?argument|validation error"
            r"|unknown (?:tool|function|action|parameter|argument)|is not a valid|wrong type",
            re.IGNORECASE,
        ),
    ),
    (
        Label.DEPENDENCY,
        re.compile(r"not found|no such (?:file|directory)|does not exist|doesn't exist", re.IGNORECASE),
    ),
    (
        Label.PRECONDITION,
        re.compile(
            r"permission|forbidden|denied|unauthori[sz]ed"
            r"|not (?:allowed|permitted|authori[sz]ed|authenticated|logged in|enabled)",
            re.IGNORECASE,
        ),
    ),
    (
        Label.STATE_CONSISTENCY,
        re.compile(
            r"already (?:exists?|done|enabled|disabled|closed|booked|cancell?ed|in use)|conflict|duplicate"
            r"|insufficient|not enough|exceed|timed out|timeout",
            re.IGNORECASE,
        ),
    ),
    (
        Label.INFORMATION,
        re.compile(
            r"\bno (?:results?|matches|match|route)\b|ambiguous|could not (?:determine|resolve)",
            re.IGNORECASE,
        ),
    ),
)


def error_labels(text: str) -> tuple[Label, ...]:
    """Every label family whose pattern occurs in an error result ``text`` (CHAT-LABELS)."""
    return tuple(label for label, pattern in ERROR_FAMILIES if pattern.search(text))


# ---------------------------------------------------------------------------------------------
# Tools and their schemas (CHAT-TOOLS)


def _validator_class(schema: Mapping[str, Any]) -> type[jsonschema.protocols.Validator]:
    """The validator of the draft ``$schema`` names; draft 2020-12 when absent or unknown."""
    with warnings.catch_warnings():
        # Older jsonschema releases warn (DeprecationWarning) on an unknown $schema.
        warnings.simplefilter("ignore", DeprecationWarning)
        cls: type[jsonschema.protocols.Validator] = jsonschema.validators.validator_for(
            schema, default=jsonschema.Draft202012Validator
        )
    return cls


@lru_cache(maxsize=256)
def _validator(canonical: str) -> jsonschema.protocols.Validator:
    schema = json.loads(canonical)
    cls = _validator_class(schema)
    cls.check_schema(schema)
    return cls(schema)


def compile_schema(schema: Any) -> jsonschema.protocols.Validator:
    """A validator for a tool's parameter schema (cached by its canonical JSON text).

    Raises ``ValueError`` when the schema is not a valid JSON Schema.
    """
    if not isinstance(schema, dict | bool):
        raise ValueError(f"the parameter schema must be an object, got {type(schema).__name__}")
    try:
        return _validator(json.dumps(schema, sort_keys=True))
    except jsonschema.exceptions.SchemaError as exc:
        raise ValueError(f"not a valid JSON Schema: {exc.message}") from None


def _path(parts: Sequence[object]) -> str:
    out = "arguments"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


@attrs.frozen(slots=True)
class ChatTool:
    """A tool offered in the transcript: its name and its parameter validator (``None``: any)."""

    name: str
    validator: jsonschema.protocols.Validator | None = attrs.field(eq=False)


def read_tools(tools: Any, where: str) -> dict[str, ChatTool]:
    """The tools of a line: OpenAI ``{"type": "function", "function": {"name", "parameters"}}``,
    flat ``{"name", "parameters"}``, Anthropic ``{"name", "input_schema"}`` or MCP
    ``{"name", "inputSchema"}`` entries."""
    if not isinstance(tools, list):
        raise InputError(where, f"'tools' must be a list, got {type(tools).__name__}")
    out: dict[str, ChatTool] = {}
    for index, entry in enumerate(tools):
        here = f"{where}: tools[{index}]"
        spec = (
            entry.get("function")
            if isinstance(entry, dict) and isinstance(entry.get("function"), dict)
            else entry
        )
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not spec["name"]:
            raise InputError(here, "expected a tool with a 'name' (OpenAI, Anthropic or MCP form)")
        name = spec["name"]
        if name in out:
            raise InputError(here, f"tool {name!r} is listed twice")
        schema = next((spec[k] for k in ("parameters", "input_schema", "inputSchema") if k in spec), None)
        validator = None
        if schema is not None:
            try:
                validator = compile_schema(schema)
            except ValueError as exc:
                raise InputError(here, f"tool {name!r}: {exc}") from None
        out[name] = ChatTool(name, validator)
    return out


# ---------------------------------------------------------------------------------------------
# Semantics (CHAT-EXEC, CHAT-NOTOOL)


@attrs.frozen(slots=True)
class ChatCall:
    """One assistant tool call and its result as the transcript records them."""

    where: str
    action: ToolCall
    arguments_error: str | None = None
    answered: bool = False
    flagged: bool = False
    result: str = ""


@attrs.frozen(slots=True)
class ChatTask:
    """What the chat semantics needs of one transcript."""

    calls: tuple[ChatCall, ...]
    tools: Mapping[str, ChatTool] = attrs.field(eq=False)
    no_tool_allowed: bool
    error_pattern: re.Pattern[str] | None = None


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= REASON_EXCERPT else flat[: REASON_EXCERPT - 3] + "..."


def schema_violation(tool: ChatTool, arguments: Mapping[str, Any], where: str) -> str | None:
    """The best-matching violation of the tool's schema by ``arguments``, or ``None``."""
    if tool.validator is None:
        return None
    try:
        error = jsonschema.exceptions.best_match(tool.validator.iter_errors(dict(arguments)))
    except referencing.exceptions.Unresolvable as exc:
        raise InputError(where, f"the schema of tool {tool.name!r} has an unresolvable $ref: {exc}") from None
    if error is None:
        return None
    return f"at {_path(list(error.absolute_path))}: {error.message}"


class ChatSemantics:
    """The transcript's recorded execution checked against its tools: the state is the position.

    Every violated check of a call is a label (CONV-LABEL-ORDER picks the primary one) and the
    reason joins their texts: arguments not valid JSON (schema), a tool not in ``tools``
    (schema), a schema violation (schema), a result flagged as an error or matching the error
    pattern (labelled by :func:`error_labels`), no result (unlabelled).
    """

    def initial_state(self, task: ChatTask) -> tuple[ChatTask, int]:
        return (task, 0)

    def step(self, state: tuple[ChatTask, int], action: Action) -> Accepted[tuple[ChatTask, int]] | Rejected:
        task, position = state
        if isinstance(action, NoToolAction):
            if task.no_tool_allowed:
                return Accepted((task, position + 1))
            return Rejected((), "no tool call in a transcript whose task needs tools")
        call = task.calls[position]
        name = call.action.name
        labels: list[Label] = []
        reasons: list[str] = []
        if call.arguments_error is not None:
            labels.append(Label.SCHEMA)
            reasons.append(call.arguments_error)
        tool = task.tools.get(name)
        if tool is None:
            labels.append(Label.SCHEMA)
            reasons.append(f"tool {name!r} is not in 'tools'")
        elif call.arguments_error is None:
            violation = schema_violation(tool, call.action.arguments, call.where)
            if violation is not None:
                labels.append(Label.SCHEMA)
                reasons.append(f"arguments violate the schema of {name!r} {violation}")
        if not call.answered:
            reasons.append(f"no tool result answers call {call.action.call_id!r}")
        elif call.flagged:
            labels.extend(error_labels(call.result))
            reasons.append(f"tool result is an error: {_excerpt(call.result)}")
        elif task.error_pattern is not None and task.error_pattern.search(call.result):
            labels.extend(error_labels(call.result))
            reasons.append(f"tool result matches --error-pattern: {_excerpt(call.result)}")
        if reasons:
            return Rejected(labels, "; ".join(reasons))
        return Accepted((task, position + 1), call.result)


SEMANTICS = ChatSemantics()


# ---------------------------------------------------------------------------------------------
# Messages (CHAT-CALLS)


def result_text(content: Any) -> str:
    """The text of a tool result: a string, text blocks, or an MCP ``CallToolResult``'s blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        if "content" in content:
            return result_text(content["content"])
        text = content.get("text")
        return text if isinstance(text, str) else json.dumps(content, sort_keys=True)
    if isinstance(content, list):
        parts = [result_text(part) for part in content]
        return "\n".join(p for p in parts if p)
    return "" if content is None else json.dumps(content)


def _flag(value: Any, where: str, key: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InputError(where, f"'{key}' must be a boolean, got {value!r}")
    return value


def is_error_flag(container: Mapping[str, Any], where: str) -> bool:
    """``is_error`` (Anthropic) or ``isError`` (MCP) on a result or on its content object."""
    flagged = _flag(container.get("is_error"), where, "is_error") or _flag(
        container.get("isError"), where, "isError"
    )
    content = container.get("content")
    if isinstance(content, dict):
        flagged = flagged or _flag(content.get("isError"), where, "content.isError")
        flagged = flagged or _flag(content.get("is_error"), where, "content.is_error")
    return flagged


def parse_arguments(raw: Any) -> tuple[Mapping[str, Any], str | None]:
    """``(arguments, problem)``: the JSON object of a call's arguments, strictly parsed."""
    if isinstance(raw, dict):
        return raw, None
    if not isinstance(raw, str):
        return {}, f"arguments are not valid JSON: expected a JSON string, got {type(raw).__name__}"
    try:
        value = parse_json_line(raw)
    except ValueError as exc:
        return {}, f"arguments are not valid JSON: {exc}"
    if not isinstance(value, dict):
        return {}, f"arguments are not a JSON object: {_excerpt(raw)}"
    return value, None


class _Calls:
    def __init__(self) -> None:
        self.calls: list[ChatCall] = []
        self.pending: dict[str, list[int]] = {}

    def call(self, where: str, call_id: Any, name: Any, raw_arguments: Any) -> None:
        if not isinstance(call_id, str) or not call_id:
            raise InputError(where, f"a tool call needs an 'id' (a non-empty string), got {call_id!r}")
        if not isinstance(name, str) or not name:
            raise InputError(where, f"a tool call needs a tool name (a non-empty string), got {name!r}")
        arguments, problem = parse_arguments(raw_arguments)
        self.pending.setdefault(call_id, []).append(len(self.calls))
        self.calls.append(ChatCall(where, ToolCall(name, arguments, call_id), problem))

    def result(self, where: str, call_id: Any, flagged: bool, text: str) -> None:
        queue = self.pending.get(call_id) if isinstance(call_id, str) else None
        if not queue:
            raise InputError(where, f"a tool result for call id {call_id!r}, which has no unanswered call")
        index = queue.pop(0)
        self.calls[index] = attrs.evolve(self.calls[index], answered=True, flagged=flagged, result=text)


def read_calls(messages: Any, where: str) -> list[ChatCall]:
    """The calls of a transcript in order, each with its result (CHAT-CALLS)."""
    if not isinstance(messages, list):
        raise InputError(where, f"'messages' must be a list, got {type(messages).__name__}")
    found = _Calls()
    for index, message in enumerate(messages):
        here = f"{where}: messages[{index}]"
        if not isinstance(message, dict):
            raise InputError(here, f"expected a message object, got {type(message).__name__}")
        role = message.get("role")
        if not isinstance(role, str):
            raise InputError(here, f"'role' must be a string, got {role!r}")
        if role == "assistant" and message.get("function_call") is not None:
            raise InputError(here, "legacy 'function_call' messages are not read: give 'tool_calls'")
        if role == "assistant" and message.get("tool_calls") is not None:
            tool_calls = message["tool_calls"]
            if not isinstance(tool_calls, list):
                raise InputError(here, "'tool_calls' must be a list")
            for n, call in enumerate(tool_calls):
                call_where = f"{here}.tool_calls[{n}]"
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict):
                    raise InputError(call_where, "expected {'id', 'function': {'name', 'arguments'}}")
                found.call(call_where, call.get("id"), function.get("name"), function.get("arguments"))
        if role == "tool":
            found.result(
                here,
                message.get("tool_call_id"),
                is_error_flag(message, here),
                result_text(message.get("content")),
            )
        content = message.get("content")
        if isinstance(content, list):
            for n, block in enumerate(content):
                if not isinstance(block, dict):
                    continue
                block_where = f"{here}.content[{n}]"
                if block.get("type") == "tool_use" and role == "assistant":
                    found.call(block_where, block.get("id"), block.get("name"), block.get("input", {}))
                elif block.get("type") == "tool_result":
                    found.result(
                        block_where,
                        block.get("tool_use_id"),
                        is_error_flag(block, block_where),
                        result_text(block.get("content")),
                    )
    return found.calls


# ---------------------------------------------------------------------------------------------
# Lines -> rollouts


def _text_field(record: Mapping[str, Any], key: str, fallback: str | None, where: str) -> str:
    value = record.get(key, fallback)
    if value is None:
        raise InputError(where, f"missing field {key!r} (give it in the line or with --{key})")
    if not isinstance(value, str) or not value:
        raise InputError(where, f"{key!r} must be a non-empty string, got {value!r}")
    return value


def line_rollout(
    record: Any, where: str, options: AdapterOptions, pattern: re.Pattern[str] | None
) -> Rollout:
    """Validate one line and replay its transcript through the kernel (CHAT-FORMAT, CHAT-EXEC)."""
    if not isinstance(record, dict):
        raise InputError(where, f"expected a JSON object, got {type(record).__name__}")
    for field in ("task_id", "success", "messages", "tools"):
        if field not in record:
            raise InputError(where, f"missing field {field!r}")
    task_id = record["task_id"]
    if isinstance(task_id, bool) or not isinstance(task_id, str | int):
        raise InputError(where, f"'task_id' must be a string or an integer, got {task_id!r}")
    if not isinstance(record["success"], bool):
        raise InputError(where, f"'success' must be a boolean, got {record['success']!r}")
    trial = record.get("trial", 0)
    if isinstance(trial, bool) or not isinstance(trial, int) or trial < 0:
        raise InputError(where, f"'trial' must be an integer >= 0, got {trial!r}")
    key = ConditionKey(
        _text_field(record, "dataset", DEFAULT_DATASET, where),
        _text_field(record, "model", options.model, where),
        _text_field(record, "method", options.method, where),
    )
    tools = read_tools(record["tools"], where)
    calls = read_calls(record["messages"], where)
    no_tool = record.get("no_tool_allowed", not tools)
    if not isinstance(no_tool, bool):
        raise InputError(where, f"'no_tool_allowed' must be a boolean, got {no_tool!r}")
    task = ChatTask(tuple(calls), tools, no_tool, pattern)
    outcome = replay(SEMANTICS, task, [c.action for c in calls])
    return Rollout(key, str(task_id), trial, outcome, record["success"], {"tools": len(tools)})


def error_pattern(text: str | None) -> re.Pattern[str] | None:
    """The compiled ``--error-pattern`` (``None`` when not given)."""
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as exc:
        raise InputError("--error-pattern", f"not a valid regular expression: {exc}") from None


def read(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
    """Read chat-transcript JSONL files; ``(dataset, model, method, task_id, trial)`` must be unique."""
    pattern = error_pattern(options.error_pattern)
    located = (
        (where, line_rollout(record, where, options, pattern))
        for path in paths
        for where, record in json_lines(path)
    )
    return unique_rollouts(
        paths,
        located,
        lambda r, first: f"repeats task {r.task_id!r} trial {r.trial} of {first}",
        "no transcripts found",
    )


__all__ = [
    "ERROR_FAMILIES",
    "SEMANTICS",
    "ChatCall",
    "ChatSemantics",
    "ChatTask",
    "ChatTool",
    "compile_schema",
    "error_labels",
    "read",
    "read_calls",
    "read_tools",
]


# ---------------------------------------------------------------------------------------------
# Audit (AUDIT-CHAT): the calls the adapter accepted are the gold; mutants of them must be schema


def _audit_items(
    paths: Sequence[str], options: AdapterOptions
) -> list[tuple[str, ChatTask, tuple[Action, ...]]]:
    """Every transcript of ``paths`` as ``(where, task, calls)``, validated as ``read`` does."""
    pattern = error_pattern(options.error_pattern)
    items: list[tuple[str, ChatTask, tuple[Action, ...]]] = []
    for path in paths:
        for where, record in json_lines(path):
            rollout = line_rollout(record, where, options, pattern)
            tools = read_tools(record["tools"], where)
            calls = tuple(read_calls(record["messages"], where))
            task = ChatTask(calls, tools, record.get("no_tool_allowed", not tools), pattern)
            label = f"{where} (task {rollout.task_id}, trial {rollout.trial})"
            items.append((label, task, tuple(c.action for c in calls)))
    if not items:
        raise InputError(", ".join(paths), "no transcripts found")
    return items


def _with_call(
    task: ChatTask, actions: tuple[Action, ...], index: int, call: ChatCall, change: str
) -> Mutant[ChatTask]:
    calls = replace_at(task.calls, index, call)
    return Mutant(attrs.evolve(task, calls=calls), replace_at(actions, index, call.action), index + 1, change)


def _accepted(task: ChatTask, actions: tuple[Action, ...], outcome: Outcome) -> range:
    return range(min(outcome.fed - 1, len(actions)))


def _schema_of(task: ChatTask, call: ChatCall) -> Mapping[str, Any] | None:
    tool = task.tools.get(call.action.name)
    schema = tool.validator.schema if tool is not None and tool.validator is not None else None
    return schema if isinstance(schema, Mapping) else None


def _unknown_tool(task: ChatTask, actions: tuple[Action, ...], outcome: Outcome) -> list[Mutant[ChatTask]]:
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


def _arguments_not_json(
    task: ChatTask, actions: tuple[Action, ...], outcome: Outcome
) -> list[Mutant[ChatTask]]:
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


def _drop_required(task: ChatTask, actions: tuple[Action, ...], outcome: Outcome) -> list[Mutant[ChatTask]]:
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


def _wrong_type(task: ChatTask, actions: tuple[Action, ...], outcome: Outcome) -> list[Mutant[ChatTask]]:
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
    Operator("unknown-tool", "call a tool that is not offered", Expect.LABEL, _unknown_tool, Label.SCHEMA),
    Operator(
        "arguments-not-json",
        "arguments that are not valid JSON",
        Expect.LABEL,
        _arguments_not_json,
        Label.SCHEMA,
    ),
    Operator(
        "drop-required", "drop a required argument (schema)", Expect.LABEL, _drop_required, Label.SCHEMA
    ),
    Operator(
        "wrong-type", "an argument of another JSON type (schema)", Expect.LABEL, _wrong_type, Label.SCHEMA
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


__all__ += ["AUDIT_OPERATORS", "audit"]
