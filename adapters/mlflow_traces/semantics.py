"""MLflow Tracing: what a span of ``Trace.to_json()`` says about a tool call (spec: TRACE-MLFLOW).

A trace is ``{"info": {"trace_id", "trace_metadata", "tags", "assessments"}, "data": {"spans":
[...]}}``; a span has ``span_id`` / ``parent_span_id`` (base64), ``name``, ``start_time_unix_nano``,
``end_time_unix_nano``, ``status.code``, ``events`` and ``attributes`` whose values are JSON texts.
The span type ``mlflow.spanType`` says what it is: ``TOOL`` spans are calls (the tool is the span's
name, the arguments ``mlflow.spanInputs``, the result ``mlflow.spanOutputs``; failed when the status
is ``STATUS_CODE_ERROR`` or an ``exception`` event is there, whose ``exception.type:
exception.message`` is the error); ``CHAT_MODEL`` and ``LLM`` spans are model calls (the model:
the inputs' or outputs' ``model``; the calls asked for: the OpenAI ``tool_calls`` of the outputs'
``choices[].message``, of an output message or list of messages; the tools offered:
``mlflow.chat.tools``, else the inputs' ``tools``); ``AGENT`` spans name the agent. The trace's
``trace_metadata`` and ``tags`` are attributes of its root span (``mlflow.trace.session`` also as
``session.id``: TRACE-KEYS), and each ``assessments`` feedback an evaluation (TRACE-SUCCESS).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import InputError
from ..otel.semantics import loads, openai_tool_calls, tool_definitions
from ..spans import LLM, OTHER, SEMANTICS, TOOL, Evaluation, Requested, Span, TraceSemantics, scalar, text_of

MODEL_TYPES = frozenset({"CHAT_MODEL", "LLM"})
ERROR = "STATUS_CODE_ERROR"
#: TRACE-KEYS: MLflow's session metadata, also read as ``session.id``.
SESSION = "mlflow.trace.session"


def _dict(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _hex(value: object, where: str, what: str) -> str | None:
    """A base64 id (MLflow's JSON) as hex; None when absent."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InputError(where, f"{what} is not a string: {value!r} (TRACE-STRUCTURE)")
    try:
        return base64.b64decode(value, validate=True).hex()
    except (binascii.Error, ValueError):
        return value  # an id that is not base64: kept as written


def _time(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return 0


def _requested(outputs: object) -> tuple[Requested, ...]:
    """TRACE-MLFLOW: the OpenAI tool calls of a model span's outputs."""
    found: list[Requested] = []
    messages: list[Mapping[str, Any]] = []
    if isinstance(outputs, dict):
        choices = outputs.get("choices")
        if isinstance(choices, list):
            messages.extend(_dict(_dict(c).get("message")) for c in choices)
        elif "tool_calls" in outputs:
            messages.append(outputs)
    elif isinstance(outputs, list):
        messages.extend(_dict(m) for m in outputs)
    for message in messages:
        found.extend(openai_tool_calls(message, len(found)))
    return tuple(found)


def _error(span: Mapping[str, Any]) -> tuple[bool, str]:
    status = _dict(span.get("status"))
    texts = []
    events = span.get("events")
    for event in events if isinstance(events, list) else []:
        event = _dict(event)
        if event.get("name") == "exception":
            values = _dict(event.get("attributes"))
            parts = [
                text_of(values[k])
                for k in ("exception.type", "exception.message")
                if values.get(k) is not None
            ]
            texts.append(": ".join(parts))
    message = status.get("message")
    failed = status.get("code") == ERROR or bool(texts)
    return failed, "; ".join(t for t in texts if t) or (message if isinstance(message, str) else "")


def _evaluations(info: Mapping[str, Any], start: int) -> tuple[Evaluation, ...]:
    """TRACE-SUCCESS: the trace's ``assessments`` with a feedback value."""
    out = []
    assessments = info.get("assessments")
    for assessment in assessments if isinstance(assessments, list) else []:
        assessment = _dict(assessment)
        name = assessment.get("assessment_name") or assessment.get("name")
        value = _dict(assessment.get("feedback")).get("value")
        if not isinstance(name, str):
            continue
        if isinstance(value, bool):
            out.append(Evaluation(name, "true" if value else "false", None, start))
        elif isinstance(value, int | float):
            out.append(Evaluation(name, None, float(value), start))
        elif isinstance(value, str):
            out.append(Evaluation(name, value, None, start))
    return tuple(out)


def trace_document(where: str, trace: object, keys: frozenset[str]) -> Iterator[Span]:
    """The spans of one ``Trace.to_json()`` document (TRACE-MLFLOW, TRACE-STRUCTURE)."""
    if (
        not isinstance(trace, dict)
        or not isinstance(trace.get("info"), dict)
        or not isinstance(trace.get("data"), dict)
    ):
        shown = (
            ", ".join(repr(k) for k in list(trace)[:8]) if isinstance(trace, dict) else type(trace).__name__
        )
        raise InputError(
            where, f"expected an MLflow trace: a JSON object with 'info' and 'data' (found: {shown})"
        )
    info, data = trace["info"], trace["data"]
    trace_id = info.get("trace_id") or info.get("request_id")
    if not isinstance(trace_id, str) or not trace_id:
        raise InputError(where, "an MLflow trace without 'info.trace_id' (TRACE-STRUCTURE)")
    spans = data.get("spans")
    if not isinstance(spans, list):
        raise InputError(where, f"trace {trace_id}: 'data.spans' is absent or not a list")
    trace_values: dict[str, object] = {}
    for field in ("trace_metadata", "tags", "request_metadata"):
        for key, value in _dict(info.get(field)).items():
            trace_values[str(key)] = scalar(value)
    if SESSION in trace_values:
        trace_values.setdefault("session.id", trace_values[SESSION])
    for index, raw in enumerate(spans):
        here = f"{where}: spans[{index}]"
        span = _dict(raw)
        span_id = _hex(span.get("span_id"), here, "span_id")
        if span_id is None:
            raise InputError(here, f"span {span.get('name')!r} has no span_id (TRACE-STRUCTURE)")
        parent = _hex(span.get("parent_span_id"), here, "parent_span_id")
        attributes = {str(k): loads(v) for k, v in _dict(span.get("attributes")).items()}
        kind = attributes.get("mlflow.spanType")
        raw_name = span.get("name")
        name = raw_name if isinstance(raw_name, str) else ""
        start = _time(span.get("start_time_unix_nano"))
        end = _time(span.get("end_time_unix_nano")) or start
        failed, error = _error(span)
        values = {k: scalar(v) for k, v in attributes.items() if k in keys} or None
        out = Span(
            here, trace_id, span_id, parent, name, start, end, failed=failed, error=error, values=values
        )
        if parent is None:
            out.values = {**trace_values, **(values or {})}
            out.evaluations = _evaluations(info, start)
        inputs = attributes.get("mlflow.spanInputs")
        outputs = attributes.get("mlflow.spanOutputs")
        if kind == "TOOL":
            out.kind = TOOL
            out.tool = name
            out.arguments = inputs
            out.result = None if outputs is None else text_of(outputs)
        elif kind in MODEL_TYPES:
            out.kind = LLM
            model = _dict(inputs).get("model") or _dict(outputs).get("model")
            out.model = model if isinstance(model, str) else None
            out.requested = _requested(outputs)
            tools = attributes.get("mlflow.chat.tools")
            out.offered = tool_definitions(tools if tools is not None else _dict(inputs).get("tools"))
        else:
            out.kind = OTHER
            if kind == "AGENT" and name:
                out.agent = name
        yield out


__all__ = ["SEMANTICS", "TraceSemantics", "trace_document"]
