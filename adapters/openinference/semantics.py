"""OpenInference (Arize) conventions: what a span says about a tool call (spec: TRACE-OI).

``openinference.span.kind``: ``TOOL`` spans are calls (``tool.name``, ``tool_call.id``, the
arguments in ``input.value``, the result in ``output.value``, the tool's parameter schema in
``tool.parameters``); ``LLM`` spans name the model (``llm.model_name``), the calls asked for
(``llm.output_messages.<i>.message.tool_calls.<j>.tool_call.*``) and the tools offered
(``llm.tools.<i>.tool.json_schema``); ``AGENT`` spans name the agent (``agent.name``). A span
failed when its status is ERROR or it holds an ``exception`` event. ``metadata`` (a JSON object)
and ``session.id`` are attributes for TRACE-KEYS. The replay rules are TRACE-EXEC's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..otel.otlp import OtlpSpan, base_span
from ..otel.semantics import evaluations, failure, loads, tool_definitions
from ..spans import LLM, OTHER, SEMANTICS, TOOL, Requested, Span, TraceSemantics, scalar, text_of

_CALL = re.compile(
    r"^llm\.output_messages\.(\d+)\.message\.tool_calls\.(\d+)\.tool_call\.(id|function\.name|function\.arguments)$"
)
_TOOLS = re.compile(r"^llm\.tools\.(\d+)\.tool\.json_schema$")


def requested(values: Mapping[str, object]) -> tuple[Requested, ...]:
    """TRACE-OI: the flattened ``llm.output_messages`` tool calls, in message and call order."""
    found: dict[tuple[int, int], dict[str, object]] = {}
    for key, value in values.items():
        if not key.startswith("llm.output_messages."):
            continue
        match = _CALL.match(key)
        if match is not None:
            found.setdefault((int(match.group(1)), int(match.group(2))), {})[match.group(3)] = value
    out: list[Requested] = []
    for position, slot in enumerate(sorted(found)):
        call = found[slot]
        name = call.get("function.name")
        if isinstance(name, str) and name:
            call_id = call.get("id")
            out.append(
                Requested(
                    call_id if isinstance(call_id, str) else None,
                    name,
                    call.get("function.arguments"),
                    position,
                )
            )
    return tuple(out)


def offered(values: Mapping[str, object]) -> tuple[tuple[str, object], ...]:
    """TRACE-TOOLS: ``llm.tools.<i>.tool.json_schema`` definitions, in index order."""
    entries = sorted((int(m.group(1)), v) for k, v in values.items() if (m := _TOOLS.match(k)) is not None)
    return tool_definitions([loads(v) for _, v in entries])


def _schema(value: object) -> object:
    parsed = loads(value)
    return parsed if isinstance(parsed, dict) and ("properties" in parsed or "type" in parsed) else None


def _result(value: object) -> tuple[str | None, str | None, bool]:
    """``(text, call id, error)`` of ``output.value``: a LangChain ToolMessage's content, id and
    status, or the text as it is."""
    if value is None:
        return None, None, False
    parsed = loads(value)
    if isinstance(parsed, dict) and isinstance(parsed.get("data"), dict) and parsed.get("type") == "tool":
        parsed = parsed["data"]
    if isinstance(parsed, dict) and "content" in parsed and ("tool_call_id" in parsed or "status" in parsed):
        call_id = parsed.get("tool_call_id")
        return (
            text_of(parsed.get("content")),
            call_id if isinstance(call_id, str) and call_id else None,
            parsed.get("status") == "error",
        )
    return text_of(value), None, False


def _metadata(values: Mapping[str, object], keys: frozenset[str]) -> dict[str, object] | None:
    found = {k: scalar(values[k]) for k in keys if k in values}
    metadata = loads(values.get("metadata"))
    if isinstance(metadata, dict):
        for k in keys:
            if k not in found and k in metadata:
                found[k] = scalar(metadata[k])
    return found or None


def interpret(keys: frozenset[str]) -> Any:
    """The OpenInference reading of one OTLP span (TRACE-OI)."""

    def read(where: str, span: OtlpSpan, values: dict[str, object]) -> Span:
        kind = values.get("openinference.span.kind")
        is_failed, error = failure(span, values)
        out = base_span(where, span, is_failed, error, _metadata(values, keys))
        out.evaluations = evaluations(span.events, out.start)
        if kind == "TOOL":
            out.kind = TOOL
            name = values.get("tool.name")
            out.tool = name if isinstance(name, str) and name else span.name
            result, result_id, result_error = _result(values.get("output.value"))
            call_id = values.get("tool_call.id")
            out.call_id = call_id if isinstance(call_id, str) and call_id else result_id
            out.arguments = values.get("input.value")
            out.result = result
            if result_error and not out.failed:
                out.failed = True
                out.error = result or ""
            schema = _schema(values.get("tool.parameters"))
            if schema is not None:
                out.offered = ((out.tool, schema),)
        elif kind == "LLM":
            out.kind = LLM
            model = values.get("llm.model_name")
            out.model = model if isinstance(model, str) and model else None
            out.requested = requested(values)
            out.offered = offered(values)
        else:
            out.kind = OTHER
            agent = values.get("agent.name")
            if kind == "AGENT" and isinstance(agent, str) and agent:
                out.agent = agent
            if kind == "AGENT":  # TRACE-AGENT-MODEL: the agent span's model
                model = values.get("llm.model_name")
                out.model = model if isinstance(model, str) and model else None
        return out

    return read


__all__ = ["SEMANTICS", "TraceSemantics", "interpret", "offered", "requested"]
