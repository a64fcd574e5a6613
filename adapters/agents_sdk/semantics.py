"""The OpenAI Agents SDK's own trace export: what a span says about a tool call (spec: TRACE-AGENTS).

Spans are the SDK's ``export()`` payloads (``span_data.type``): ``function`` spans are calls
(``name``, ``input`` = the arguments as JSON text, ``output``), failed when ``error`` (a
``SpanError`` ``{message, data}``) is set; ``generation`` spans name the model and the calls it
asked for (``output`` messages' ``tool_calls``); ``agent`` spans name the agent and the tools it
offered (``tools``, names only); ``custom`` spans whose ``data`` holds
``gen_ai.evaluation.name`` are evaluations, other ``data`` keys attributes. The trace object
(``workflow_name``, ``group_id``, ``metadata``) is the root of its spans. The replay rules are
TRACE-EXEC's.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ..errors import InputError
from ..numbers import as_float
from ..otel.semantics import openai_tool_calls
from ..spans import LLM, SEMANTICS, TOOL, Evaluation, Requested, Span, TraceSemantics, scalar, text_of


def nanoseconds(value: object, where: str, field: str) -> int | None:
    """An ISO 8601 time (``2026-12-03T14:26:53.187897+00:00``) as nanoseconds since the epoch."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(where, f"'{field}' must be an ISO 8601 time, got {value!r}")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(where, f"'{field}' is not an ISO 8601 time: {value!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def _kept(values: Mapping[str, object], keys: frozenset[str]) -> dict[str, object] | None:
    found = {k: scalar(values[k]) for k in keys if k in values and values[k] is not None}
    return found or None


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def trace_root(where: str, record: Mapping[str, Any], keys: frozenset[str]) -> Span:
    """The trace object as the root span of its spans (its ``metadata`` and ``group_id`` are attributes)."""
    trace = record.get("id")
    if not isinstance(trace, str) or not trace:
        raise InputError(where, "a trace object without an 'id' (TRACE-STRUCTURE)")
    metadata = record.get("metadata")
    values: dict[str, object] = dict(metadata) if isinstance(metadata, dict) else {}
    if isinstance(record.get("group_id"), str):
        values["group_id"] = record["group_id"]
    name = record.get("workflow_name")
    return Span(where, trace, trace, None, _text(name), 0, 0, values=_kept(values, keys))


def span_of(where: str, record: Mapping[str, Any], keys: frozenset[str]) -> Span:
    """One exported span (TRACE-AGENTS)."""
    trace, span_id = record.get("trace_id"), record.get("id")
    if not isinstance(trace, str) or not trace:
        raise InputError(where, "a span without a 'trace_id' (TRACE-STRUCTURE)")
    if not isinstance(span_id, str) or not span_id:
        raise InputError(where, "a span without an 'id' (TRACE-STRUCTURE)")
    parent = record.get("parent_id")
    data = record.get("span_data")
    if not isinstance(data, dict):
        raise InputError(where, "a span without 'span_data' (an object)")
    start = nanoseconds(record.get("started_at"), where, "started_at") or 0
    end = nanoseconds(record.get("ended_at"), where, "ended_at") or start
    error = record.get("error")
    kind = data.get("type")
    out = Span(
        where,
        trace,
        span_id,
        parent if isinstance(parent, str) and parent else trace,  # top-level spans: children of the trace
        _text(data.get("name")) or _text(kind),
        start,
        end,
        failed=error is not None,
        error="" if error is None else _error_text(error),
    )
    if kind == "function":
        out.kind = TOOL
        out.tool = _text(data.get("name"))
        out.arguments = data.get("input")
        out.result = None if data.get("output") is None else text_of(data.get("output"))
    elif kind == "generation":
        out.kind = LLM
        out.model = data.get("model") if isinstance(data.get("model"), str) else None
        output = data.get("output")
        if isinstance(output, list):
            calls: list[Requested] = []
            for message in output:
                if isinstance(message, dict):
                    calls.extend(openai_tool_calls(message, len(calls)))
            out.requested = tuple(calls)
    elif kind == "agent":
        out.agent = _text(data.get("name")) or None
        tools = data.get("tools")
        if isinstance(tools, list):
            out.offered = tuple((t, None) for t in tools if isinstance(t, str))
    elif kind == "custom":
        values = data.get("data")
        if isinstance(values, dict):
            out.values = _kept(values, keys)
            name = values.get("gen_ai.evaluation.name")
            if isinstance(name, str):
                label = values.get("gen_ai.evaluation.score.label")
                score = values.get("gen_ai.evaluation.score.value")
                number = (
                    as_float(score)
                    if isinstance(score, int | float) and not isinstance(score, bool)
                    else None
                )
                out.evaluations = (Evaluation(name, label if isinstance(label, str) else None, number, end),)
    return out


def _error_text(error: object) -> str:
    """A ``SpanError`` as text: its message and its data's ``error`` (or the whole data)."""
    if not isinstance(error, dict):
        return text_of(error)
    message = _text(error.get("message"))
    data = error.get("data")
    detail = data.get("error") if isinstance(data, dict) and "error" in data else data
    return ": ".join(t for t in (message, text_of(detail) if detail is not None else "") if t)


__all__ = ["SEMANTICS", "TraceSemantics", "nanoseconds", "span_of", "trace_root"]
