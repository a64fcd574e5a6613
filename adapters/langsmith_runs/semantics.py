"""LangSmith runs: what a run says about a tool call (spec: TRACE-LANGSMITH).

A run (LangSmith's Run schema: ``id``, ``trace_id``, ``parent_run_id``, ``dotted_order``,
``run_type``, ``name``, ``start_time``, ``end_time``, ``inputs``, ``outputs``, ``error``,
``extra``) is one span. ``run_type = tool`` runs are calls (arguments ``inputs``, result the
``outputs.output`` ToolMessage's ``content``, call id ``extra.tool_call_id`` or the ToolMessage's
``tool_call_id``), failed when ``error`` is set or the ToolMessage's ``status`` is ``error``;
``llm`` runs name the model (``extra.invocation_params.model``, ``extra.metadata.ls_model_name``),
the calls asked for (``outputs.generations`` messages' ``tool_calls``) and the tools offered
(``extra.invocation_params.tools``); the root run's name is the agent; ``extra.metadata`` keys
are attributes (TRACE-KEYS, TRACE-SUCCESS). The replay rules are TRACE-EXEC's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..agents_sdk.semantics import nanoseconds
from ..errors import InputError
from ..otel.semantics import openai_tool_calls, tool_definitions
from ..spans import LLM, OTHER, SEMANTICS, TOOL, Requested, Span, TraceSemantics, scalar, text_of


def _dict(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _message(value: object) -> Mapping[str, Any]:
    """A LangChain message as its fields (a serialised ``{"lc", "kwargs"}`` constructor or plain)."""
    message = _dict(value)
    kwargs = message.get("kwargs")
    return kwargs if isinstance(kwargs, dict) else message


def _langchain_calls(message: Mapping[str, Any], start: int) -> Iterator[Requested]:
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls and isinstance(calls[0], dict) and "args" in calls[0]:
        for position, call in enumerate(calls, start):
            if isinstance(call, dict) and isinstance(call.get("name"), str):
                call_id = call.get("id")
                yield Requested(
                    call_id if isinstance(call_id, str) else None, call["name"], call.get("args"), position
                )
    else:
        yield from openai_tool_calls(message, start)
        yield from openai_tool_calls(_dict(message.get("additional_kwargs")), start)


def requested(outputs: Mapping[str, Any]) -> tuple[Requested, ...]:
    """TRACE-LANGSMITH: the tool calls of an llm run's generations."""
    found: list[Requested] = []
    generations = outputs.get("generations")
    if not isinstance(generations, list):
        return ()
    for group in generations:
        for generation in group if isinstance(group, list) else [group]:
            message = _message(_dict(generation).get("message"))
            found.extend(_langchain_calls(message, len(found)))
    return tuple(found)


def _tool_message(outputs: Mapping[str, Any]) -> Mapping[str, Any]:
    return _message(outputs.get("output")) if "output" in outputs else _dict(outputs)


def run_span(where: str, run: Mapping[str, Any], keys: frozenset[str]) -> Span:
    """One run (TRACE-LANGSMITH)."""
    run_id, trace = run.get("id"), run.get("trace_id")
    if not isinstance(run_id, str) or not run_id:
        raise InputError(where, "a run without an 'id' (TRACE-STRUCTURE)")
    if not isinstance(trace, str) or not trace:
        raise InputError(where, f"run {run_id} has no 'trace_id' (TRACE-STRUCTURE)")
    parent = run.get("parent_run_id")
    start = nanoseconds(run.get("start_time"), where, "start_time") or 0
    end = nanoseconds(run.get("end_time"), where, "end_time") or start
    error = run.get("error")
    extra = _dict(run.get("extra"))
    metadata = _dict(extra.get("metadata"))
    raw_name = run.get("name")
    name = raw_name if isinstance(raw_name, str) else ""
    values = {k: scalar(metadata[k]) for k in keys if metadata.get(k) is not None}
    out = Span(
        where,
        trace,
        run_id,
        parent if isinstance(parent, str) and parent else None,
        name,
        start,
        end,
        failed=error is not None,
        error="" if error is None else text_of(error),
        values=values or None,
    )
    if out.parent is None:
        out.agent = name or None
    kind = run.get("run_type")
    outputs = _dict(run.get("outputs"))
    if kind == "tool":
        out.kind = TOOL
        out.tool = name
        out.arguments = run.get("inputs")
        message = _tool_message(outputs)
        content = message.get("content", outputs.get("output") if outputs else None)
        out.result = None if content is None else text_of(content)
        call_id = extra.get("tool_call_id") or message.get("tool_call_id")
        out.call_id = call_id if isinstance(call_id, str) and call_id else None
        if message.get("status") == "error" and not out.failed:
            out.failed, out.error = True, out.result or ""
    elif kind == "llm":
        out.kind = LLM
        invocation = _dict(extra.get("invocation_params"))
        model = invocation.get("model") or invocation.get("model_name") or metadata.get("ls_model_name")
        out.model = model if isinstance(model, str) and model else None
        out.requested = requested(outputs)
        out.offered = tool_definitions(invocation.get("tools"))
    else:
        out.kind = OTHER
    return out


__all__ = ["SEMANTICS", "TraceSemantics", "requested", "run_span"]
