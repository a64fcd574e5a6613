"""Chat transcripts, one rollout per JSONL line: messages -> calls -> rollouts (CHAT-FORMAT,
CHAT-CALLS, CHAT-SUCCESS, CHAT-ERRORS)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from prefixexec.kernel import ConditionKey, Rollout, ToolCall, replay

from .. import harness
from ..errors import InputError
from ..labels import NO_RULES, LabelRules, load_label_rules
from ..limits import notice
from ..records import json_lines, parse_json_line, unique_rollouts
from ..regex import Pattern, PatternError, compile_pattern
from ..rejections import SOURCES_KEY, VERDICTS_KEY, Verdicts, next_position
from ..shape import need_bool
from .semantics import SEMANTICS, ChatCall, ChatTask, ChatTool, _excerpt, compile_schema

if TYPE_CHECKING:
    from .. import AdapterOptions

DEFAULT_DATASET = "chat"
STDIN = "-"


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
    return need_bool(value, where, f"'{key}'")


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
        #: User turns so far and the 1-based turn of each call (TURN-MAP).
        self.turn = 0
        self.turns: list[int] = []
        #: The 1-based index of each call's message in 'messages' (OUT-SOURCE).
        self.messages: list[int] = []
        self.message = 0

    def call(self, where: str, call_id: Any, name: Any, raw_arguments: Any) -> None:
        if not isinstance(call_id, str) or not call_id:
            raise InputError(where, f"a tool call needs an 'id' (a non-empty string), got {call_id!r}")
        if not isinstance(name, str) or not name:
            raise InputError(where, f"a tool call needs a tool name (a non-empty string), got {name!r}")
        arguments, problem = parse_arguments(raw_arguments)
        self.pending.setdefault(call_id, []).append(len(self.calls))
        self.calls.append(ChatCall(where, ToolCall(name, arguments, call_id), problem))
        self.turns.append(max(self.turn, 1))
        self.messages.append(self.message)

    def result(self, where: str, call_id: Any, flagged: bool, text: str) -> None:
        queue = self.pending.get(call_id) if isinstance(call_id, str) else None
        if not queue:
            raise InputError(where, f"a tool result for call id {call_id!r}, which has no unanswered call")
        index = queue.pop(0)
        self.calls[index] = attrs.evolve(self.calls[index], answered=True, flagged=flagged, result=text)


def is_user_turn(message: Mapping[str, Any]) -> bool:
    """TURN-MAP: a ``user`` message starts a turn unless all it holds is tool results (Anthropic
    sends results in user messages)."""
    if message.get("role") != "user":
        return False
    content = message.get("content")
    if not isinstance(content, list):
        return True
    return not content or any(not isinstance(b, dict) or b.get("type") != "tool_result" for b in content)


def read_calls(messages: Any, where: str) -> list[ChatCall]:
    """The calls of a transcript in order, each with its result (CHAT-CALLS)."""
    return read_calls_and_turns(messages, where)[0]


def read_calls_and_turns(messages: Any, where: str) -> tuple[list[ChatCall], list[int], int]:
    """:func:`read_calls`, with the 1-based user turn of each call and the number of turns (TURN-MAP)."""
    found = _read(messages, where)
    return found.calls, found.turns, found.turn


def _read(messages: Any, where: str) -> _Calls:
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
        if is_user_turn(message):
            found.turn += 1
        found.message = index + 1
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
    return found


def read_calls_turns_messages(messages: Any, where: str) -> tuple[list[ChatCall], list[int], int, list[int]]:
    """:func:`read_calls_and_turns`, with the 1-based index in ``messages`` of each call's message
    (OUT-SOURCE)."""
    found = _read(messages, where)
    return found.calls, found.turns, found.turn, found.messages


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
    record: Any,
    where: str,
    options: AdapterOptions,
    pattern: Pattern | None,
    rules: LabelRules = NO_RULES,
) -> Rollout:
    """Validate one line and replay its transcript through the kernel (CHAT-FORMAT, CHAT-EXEC)."""
    if not isinstance(record, dict):
        raise InputError(where, f"expected a JSON object, got {type(record).__name__}")
    for field in ("messages", "tools"):
        if field not in record:
            raise InputError(where, f"missing field {field!r}")
    # CHAT-FINETUNE: an OpenAI fine-tuning line ({"messages", "tools"}) has no task id and no
    # success: its line number is its task id, and success is not given (read as 0, noted).
    task_id = record.get("task_id", line_number(where))
    if isinstance(task_id, bool) or not isinstance(task_id, str | int):
        raise InputError(where, f"'task_id' must be a string or an integer, got {task_id!r}")
    given = "success" in record
    success = need_bool(record["success"], where, "'success'") if given else False
    trial = record.get("trial", 0)
    if isinstance(trial, bool) or not isinstance(trial, int) or trial < 0:
        raise InputError(where, f"'trial' must be an integer >= 0, got {trial!r}")
    key = ConditionKey(
        _text_field(record, "dataset", DEFAULT_DATASET, where),
        _text_field(record, "model", options.model, where),
        _text_field(record, "method", options.method, where),
    )
    tools = read_tools(record["tools"], where)
    calls, call_turns, turns, messages = read_calls_turns_messages(record["messages"], where)
    no_tool = record.get("no_tool_allowed", not tools)
    need_bool(no_tool, where, "'no_tool_allowed'")
    task = ChatTask(tuple(calls), tools, no_tool, pattern, rules)
    actions = [c.action for c in calls]
    outcome = replay(SEMANTICS, task, actions)
    meta: dict[str, object] = {
        "tools": len(tools),
        "action_turns": call_turns,  # TURN-MAP
        "turns": turns,
        VERDICTS_KEY: Verdicts(SEMANTICS, task, actions, next_position, outcome),  # OUT-REJECTIONS
        SOURCES_KEY: [{"message": m} for m in messages],  # OUT-SOURCE
    }
    if not given:
        meta["success_given"] = False
    rollout = Rollout(key, str(task_id), trial, outcome, success, meta)
    lost = record.get("harness_error")  # CHAT-HARNESS: the harness ended the rollout
    if lost is None:
        return rollout
    if not isinstance(lost, str) or not lost.strip():
        raise InputError(where, f"'harness_error' must be a non-empty string, got {lost!r}")
    return harness.counted_rollout(rollout, harness.shorten(lost), len(calls))


def error_pattern(text: str | None) -> Pattern | None:
    """The compiled ``--error-pattern`` (``None`` when not given), matched in linear time
    (HOSTILE-REGEX)."""
    if text is None:
        return None
    try:
        return compile_pattern(text)
    except PatternError as exc:
        raise InputError("--error-pattern", f"not a valid regular expression: {exc}") from None


def read(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
    """Read chat-transcript JSONL files; ``(dataset, model, method, task_id, trial)`` must be unique."""
    pattern = error_pattern(options.error_pattern)
    rules = load_label_rules(options.label_rules, "chat")
    exclude = harness.policy(options, "chat") == "exclude"
    errors: list[harness.HarnessError] = []

    def kept(where: str, rollout: Rollout) -> bool:
        message = rollout.meta.get("harness_error")
        if message is None:
            return True
        c = rollout.condition
        lost = harness.HarnessError(where, c, rollout.task_id, rollout.trial, str(message), not exclude)
        errors.append(lost)
        return not exclude

    located = [
        (where, rollout)
        for path in paths
        for where, record in json_lines(path)
        if kept(where, rollout := line_rollout(record, where, options, pattern, rules))
    ]
    if not located and errors:
        raise harness.none_left(", ".join(paths), len(errors))
    rollouts = unique_rollouts(
        paths,
        located,
        lambda r, first: f"repeats task {r.task_id!r} trial {r.trial} of {first}",
        "no transcripts found",
    )
    harness.report("chat", errors)
    missing = sum(1 for r in rollouts if r.meta.get("success_given") is False)
    if missing:
        notice(
            f"prefixexec: warning: {missing} of {len(rollouts)} transcript(s) give no 'success' (e.g. "
            "OpenAI fine-tuning lines): success is not given, read as 0, so success and RR say "
            "nothing; TER, FED and AUC-PEC are scored (CHAT-FINETUNE)"
        )
    return rollouts


def line_number(where: str) -> str:
    """The line number of ``where`` (``file:line``), the task id of a line without one (CHAT-FINETUNE)."""
    tail = where.rsplit(":", 1)[-1]
    return tail if tail.isdigit() else where
