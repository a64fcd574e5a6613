"""ATIF, Harbor's Agent Trajectory Interchange Format: what a trajectory says about tool calls
(spec: TRACE-ATIF).

A trajectory is ``{"schema_version": "ATIF-v1.x", "session_id", "trajectory_id", "agent": {"name",
"model_name", "tool_definitions"}, "steps": [...], "extra"}``; a step ``{"step_id", "source",
"model_name", "tool_calls": [{"tool_call_id", "function_name", "arguments"}], "observation":
{"results": [{"source_call_id", "content", "extra"}]}}``. Read as spans: the trajectory is the
root (the agent's name; ``extra`` and ``session_id`` as attributes: TRACE-KEYS, TRACE-SUCCESS);
each agent step with tool calls is a model call asking for them (the step's or the agent's model,
the agent's tool definitions offered); each observation result answering a call is that call's
tool span (the result: ``content``; failed when ``extra.status`` is ``error`` or ``extra.is_error``
is true, the error text the content). ATIF records no times every producer fills in: spans are
ordered by step and position. Embedded ``subagent_trajectories`` are not read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import InputError
from ..otel.semantics import tool_definitions
from ..spans import LLM, SEMANTICS, TOOL, Requested, Span, TraceSemantics, scalar, text_of


def _dict(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _content(value: object) -> str:
    """An observation's content: text, or the text parts of a list of content parts."""
    if isinstance(value, list):
        return "\n".join(text_of(_dict(p).get("text", p)) for p in value)
    return text_of(value)


def _failed(result: Mapping[str, Any]) -> bool:
    extra = _dict(result.get("extra"))
    status = extra.get("status")
    return (isinstance(status, str) and status.lower() == "error") or extra.get("is_error") is True


def trajectory(where: str, document: object, keys: frozenset[str]) -> Iterator[Span]:
    """The spans of one ATIF trajectory (TRACE-ATIF, TRACE-STRUCTURE)."""
    if not isinstance(document, dict) or not isinstance(document.get("steps"), list):
        shown = (
            ", ".join(repr(k) for k in list(document)[:8])
            if isinstance(document, dict)
            else type(document).__name__
        )
        raise InputError(where, f"expected an ATIF trajectory: a JSON object with 'steps' (found: {shown})")
    version = document.get("schema_version")
    if not (isinstance(version, str) and version.startswith("ATIF-")):
        raise InputError(where, f"'schema_version' is {version!r}, not an ATIF version (ATIF-v1.x)")
    agent = _dict(document.get("agent"))
    session = document.get("session_id")
    trace = document.get("trajectory_id") or session or where
    trace = str(trace)
    values: dict[str, object] = {k: scalar(v) for k, v in _dict(document.get("extra")).items()}
    if isinstance(session, str):
        values.setdefault("session.id", session)
    name = agent.get("name") if isinstance(agent.get("name"), str) else ""
    root = Span(where, trace, "trajectory", None, name or "trajectory", 0, 0, values=values or None)
    root.agent = name or None
    default_model = agent.get("model_name") if isinstance(agent.get("model_name"), str) else None
    root.model = default_model  # the model of a trajectory without a call too
    yield root
    offered = tool_definitions(agent.get("tool_definitions"))
    for index, raw in enumerate(document["steps"]):
        step = _dict(raw)
        step_id = step.get("step_id", index + 1)
        here = f"{where}: steps[{index}]"
        calls = step.get("tool_calls")
        calls = calls if isinstance(calls, list) else []
        if step.get("source") != "agent" or not calls:
            continue
        start = (index + 1) * 1_000_000
        model = step.get("model_name") if isinstance(step.get("model_name"), str) else default_model
        requested: list[Requested] = []
        names: dict[str, tuple[str, object]] = {}
        for position, call in enumerate(calls):
            call = _dict(call)
            function = call.get("function_name")
            if not isinstance(function, str):
                raise InputError(f"{here}.tool_calls[{position}]", "a tool call without 'function_name'")
            call_id = call.get("tool_call_id") if isinstance(call.get("tool_call_id"), str) else None
            requested.append(Requested(call_id, function, call.get("arguments"), position))
            if call_id is not None:
                names[call_id] = (function, call.get("arguments"))
        llm = Span(here, trace, f"step{step_id}", root.span, f"step {step_id}", start, start + 1, kind=LLM)
        llm.model, llm.requested, llm.offered = model, tuple(requested), offered
        yield llm
        results = _dict(step.get("observation")).get("results")
        for position, raw_result in enumerate(results if isinstance(results, list) else []):
            result = _dict(raw_result)
            call_id = result.get("source_call_id")
            if not isinstance(call_id, str) or call_id not in names:
                continue  # an observation that answers no call of the step: context only
            function, arguments = names[call_id]
            text = _content(result.get("content"))
            failed = _failed(result)
            span = Span(
                f"{here}.observation.results[{position}]",
                trace,
                f"step{step_id}.{position}",
                llm.span,
                function,
                start + 2 + position,
                start + 2 + position,
                kind=TOOL,
                tool=function,
                call_id=call_id,
                arguments=arguments,
                result=text,
                failed=failed,
                error=text if failed else "",
            )
            yield span


__all__ = ["SEMANTICS", "TraceSemantics", "trajectory"]
