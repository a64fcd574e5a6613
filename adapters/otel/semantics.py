"""OpenTelemetry GenAI semantic conventions: what a span says about a tool call (spec: TRACE-OTEL).

A span with ``gen_ai.operation.name = execute_tool`` is a tool call (``gen_ai.tool.name``,
``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``); it failed
when its status is ERROR, ``error.type`` is set or it holds an ``exception`` event. A model span
(``chat``, ``text_completion``, ``generate_content``) names the model and the calls it asked for
(``gen_ai.output.messages`` parts of type ``tool_call``) and the tools offered
(``gen_ai.tool.definitions``). ``invoke_agent`` / ``create_agent`` spans name the agent.
Evaluations are ``gen_ai.evaluation.result`` events. The replay rules are TRACE-EXEC's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from ..numbers import as_float
from ..spans import LLM, OTHER, SEMANTICS, TOOL, Evaluation, Requested, Span, TraceSemantics, scalar, text_of
from .otlp import ERROR_CODES, Event, OtlpSpan, base_span, event_attributes, failed, nanoseconds
from .pyliteral import literal

MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
AGENT_OPERATIONS = frozenset({"invoke_agent", "create_agent"})
#: TRACE-MCP: ``error.type`` of an MCP ``tools/call`` whose result has ``isError: true``.
MCP_TOOL_ERROR = "tool_error"
#: The longest Python-literal text read by TRACE-OTEL-REPR (larger: not read).
REPR_LIMIT = 1 << 20
#: Every span attribute :func:`interpret` reads, besides TRACE-KEYS's (``keys``): the protobuf
#: reader reads the value of no other attribute (tests/test_traces_otlp.py checks the list against
#: the keys this module's source reads).
READS = frozenset(
    {
        "gen_ai.operation.name",
        "error.type",
        "mcp.method.name",
        "gen_ai.tool.name",
        "gen_ai.tool.call.id",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "gen_ai.response.model",
        "gen_ai.request.model",
        "gen_ai.output.messages",
        "gen_ai.tool.definitions",
        "gen_ai.agent.name",
    }
)


def loads(value: object) -> object:
    """A JSON string attribute as its value (``None`` when it is not JSON); other values as they are."""
    if not isinstance(value, str):
        return value
    try:
        return msgspec.json.decode(value)
    except (msgspec.DecodeError, RecursionError):
        return None


def _literal(text: str) -> object:
    """TRACE-OTEL-REPR: the ``tool_calls`` of a message written as its Python ``repr``
    (``{'content': None, ..., 'tool_calls': [...]}``), read as literals only (:mod:`.pyliteral`)."""
    if len(text) > REPR_LIMIT or not text.startswith("{") or not text.endswith("]}"):
        return None
    start = text.find("'tool_calls': [")
    if start < 0:
        return None
    try:  # only the list of calls (the message's last key)
        calls = literal(text[start + len("'tool_calls': ") : -1])
    except (ValueError, UnicodeDecodeError):
        return None
    return {"tool_calls": calls}


def openai_tool_calls(message: Mapping[str, Any], start: int = 0) -> list[Requested]:
    """The ``tool_calls`` of an OpenAI chat message (``{"id", "function": {"name", "arguments"}}``)."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return []
    found: list[Requested] = []
    for position, call in enumerate(calls, start):
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            call_id = call.get("id")
            found.append(
                Requested(
                    call_id if isinstance(call_id, str) else None,
                    function["name"],
                    function.get("arguments"),
                    position,
                )
            )
    return found


def requested_calls(messages: object) -> tuple[Requested, ...]:
    """TRACE-OTEL: the tool calls of ``gen_ai.output.messages`` (parts of type
    ``tool_call``; an OpenAI ``tool_calls`` list; a text part holding a Python-literal message)."""
    found: list[Requested] = []
    if not isinstance(messages, list):
        return ()
    for message in messages:
        if not isinstance(message, dict):
            continue
        if "tool_calls" in message:
            found.extend(openai_tool_calls(message, len(found)))
        parts = message.get("parts")
        if not isinstance(parts, list):
            continue
        for part in parts:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "tool_call" and isinstance(part.get("name"), str):
                call_id = part.get("id")
                found.append(
                    Requested(
                        call_id if isinstance(call_id, str) else None,
                        part["name"],
                        part.get("arguments"),
                        len(found),
                    )
                )
            elif kind == "text" and isinstance(part.get("content"), str):
                literal = _literal(part["content"])
                if isinstance(literal, dict):
                    found.extend(openai_tool_calls(literal, len(found)))
    return tuple(found)


def tool_definitions(value: object) -> tuple[tuple[str, object], ...]:
    """TRACE-TOOLS: ``(name, parameter schema)`` of tool definitions (OpenAI ``{"type":
    "function", "function": {...}}`` or flat ``{"name", "parameters"}``)."""
    if not isinstance(value, list):
        return ()
    out: list[tuple[str, object]] = []
    for entry in value:
        spec = (
            entry.get("function")
            if isinstance(entry, dict) and isinstance(entry.get("function"), dict)
            else entry
        )
        if isinstance(spec, dict) and isinstance(spec.get("name"), str):
            schema = next((spec[k] for k in ("parameters", "input_schema", "inputSchema") if k in spec), None)
            out.append((spec["name"], schema if isinstance(schema, dict) else None))
    return tuple(out)


def evaluations(events: list[Event], start: int) -> tuple[Evaluation, ...]:
    """TRACE-SUCCESS: ``gen_ai.evaluation.result`` events."""
    out: list[Evaluation] = []
    for event in events:
        if event.name != "gen_ai.evaluation.result":
            continue
        values = event_attributes(event)
        name = values.get("gen_ai.evaluation.name")
        if not isinstance(name, str):
            continue
        label = values.get("gen_ai.evaluation.score.label")
        score = values.get("gen_ai.evaluation.score.value")
        out.append(
            Evaluation(
                name,
                label if isinstance(label, str) else None,
                as_float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None,
                nanoseconds(event.timeUnixNano) or start,
            )
        )
    return tuple(out)


def exception_text(events: list[Event]) -> str:
    """The ``exception.type: exception.message`` of a span's exception events."""
    texts = []
    for event in events:
        if event.name == "exception":
            values = event_attributes(event)
            kind, message = values.get("exception.type"), values.get("exception.message")
            texts.append(": ".join(text_of(v) for v in (kind, message) if v is not None))
    return "; ".join(t for t in texts if t)


def failure(span: OtlpSpan, values: Mapping[str, object]) -> tuple[bool, str]:
    """TRACE-OTEL: status ERROR, ``error.type`` or an exception event, and their text."""
    error_type = values.get("error.type")
    if not span.events and error_type is None and not failed(span.status):
        return False, ""
    exceptions = exception_text(span.events)
    is_failed = failed(span.status) or error_type is not None or bool(exceptions)
    status = span.status.message if span.status is not None and span.status.message else ""
    # the exception events' messages first: a status message may hold a whole traceback
    texts = [exceptions or status, f"error.type {text_of(error_type)}" if error_type is not None else ""]
    return is_failed, "; ".join(t for t in texts if t)


def kept(values: Mapping[str, object], keys: frozenset[str]) -> dict[str, object] | None:
    """The attributes TRACE-KEYS and TRACE-SUCCESS may read (``None``: the span has none)."""
    if keys.isdisjoint(values):
        return None
    return {k: scalar(values[k]) for k in keys if k in values}


def interpret(keys: frozenset[str]) -> Any:
    """The GenAI reading of one OTLP span (TRACE-OTEL)."""

    def read(where: str, span: OtlpSpan, values: dict[str, object]) -> Span:
        operation = values.get("gen_ai.operation.name")
        status = span.status
        if span.events or "error.type" in values or (status is not None and status.code in ERROR_CODES):
            is_failed, error = failure(span, values)
        else:  # most spans: nothing that could say they failed (failure's own first test)
            is_failed, error = False, ""
        found = None if keys.isdisjoint(values) else kept(values, keys)
        out = base_span(where, span, is_failed, error, found)
        if span.events:
            out.evaluations = evaluations(span.events, out.start)
        mcp = values.get("mcp.method.name") == "tools/call"
        if operation == "execute_tool" or mcp:
            out.kind = TOOL
            name = values.get("gen_ai.tool.name")
            out.tool = (
                name
                if isinstance(name, str) and name
                else span.name.removeprefix("execute_tool ").removeprefix("tools/call ").strip()
            )
            call_id = values.get("gen_ai.tool.call.id")
            out.call_id = call_id if isinstance(call_id, str) and call_id else None
            out.arguments = values.get("gen_ai.tool.call.arguments")
            result = values.get("gen_ai.tool.call.result")
            out.result = None if result is None else text_of(result)
            if mcp:
                out.mcp = True
                if values.get("error.type") == MCP_TOOL_ERROR and out.result:
                    # TRACE-MCP: a CallToolResult with isError: the tool's own text is the error
                    out.error = out.result
        elif operation in MODEL_OPERATIONS:
            out.kind = LLM
            model = values.get("gen_ai.response.model") or values.get("gen_ai.request.model")
            out.model = model if isinstance(model, str) else None
            out.requested = requested_calls(loads(values.get("gen_ai.output.messages")))
            out.offered = tool_definitions(loads(values.get("gen_ai.tool.definitions")))
        else:
            out.kind = OTHER
            agent = values.get("gen_ai.agent.name")
            if operation in AGENT_OPERATIONS and isinstance(agent, str) and agent:
                out.agent = agent
            if operation in AGENT_OPERATIONS:  # TRACE-AGENT-MODEL: the agent span's model
                model = values.get("gen_ai.request.model") or values.get("gen_ai.response.model")
                out.model = model if isinstance(model, str) and model else None
        return out

    return read


__all__ = ["SEMANTICS", "TraceSemantics", "interpret", "requested_calls", "tool_definitions"]
