"""The guard: every tool call checked with the scorer's own rules before it runs (spec: spec/guard.md).

:class:`Guard` is the whole decision, shared by the MCP stdio proxy (:mod:`.proxy`) and agent
loops that call tools themselves. A call is checked (GUARD-CHECKS) with

- the chat adapter's tool and schema checks (:func:`~prefixexec.adapters.chat.semantics.schema_checks`,
  the bounded offline validator: CHAT-TOOLS) against the server's own ``tools/list``;
- the tau-bench adapter's provenance rule (:func:`~prefixexec.adapters.provenance.occurs`,
  ``id_like``: TAU-ENTITY-NORM) for identifier arguments (GUARD-PROVENANCE), asked of an index
  of what the session has seen (:class:`~prefixexec.adapters.provenance.SeenIndex`), so that a
  call's check costs by its own size, not the session's (GUARD-PROVENANCE-INDEX);
- the user's TOML rules (:mod:`.rules`: GUARD-REQUIRES, GUARD-ARGUMENT).

Every call, forwarded or blocked, becomes one OTLP span (GenAI and MCP conventions) in the trace;
the span is read back online by the ``otel`` adapter's own reader
(:func:`~prefixexec.adapters.otel.interpret`) and judged by the trace semantics (TRACE-EXEC)
in a :class:`~prefixexec.kernel.PrefixMonitor`, so ``prefixexec score --adapter otel`` on the
trace file gives the FED and labels the guard decided
(GUARD-TRACE-SAME).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import IO, Any, Literal

import attrs
import msgspec

from prefixexec.adapters.chat.semantics import schema_checks
from prefixexec.adapters.labels import NO_RULES, LabelRules
from prefixexec.adapters.otel.otlp import OtlpSpan
from prefixexec.adapters.otel.semantics import interpret
from prefixexec.adapters.provenance import SeenIndex
from prefixexec.adapters.spans import SEMANTICS as TRACE_SEMANTICS
from prefixexec.adapters.spans import (
    Span,
    TraceCall,
    TraceTask,
    offered_tools,  # TRACE-TOOLS, exactly as the reader builds the tools
    span_tool_call,  # TRACE-ORDER's reading of one tool span, as the reader does
    text_of,
)
from prefixexec.adapters.text import printable
from prefixexec.kernel import Accepted, Label, Outcome, PrefixMonitor, Rejected, ToolCall
from prefixexec.kernel.actions import Action, NoToolAction

from .rules import ANY, NO_GUARD_RULES, GuardRules, checked_values

Mode = Literal["block", "warn"]
MODES: tuple[Mode, ...] = ("block", "warn")

#: GUARD-REASON: a phrase per label that the label families (CHAT-LABELS, TRACE-LABELS) read as
#: that label and as no label before it, so the blocked call's span scores with the rule's label.
PHRASES: Mapping[Label, str] = {
    Label.SCHEMA: "validation error",
    Label.DEPENDENCY: "what it needs does not exist",
    Label.PRECONDITION: "not allowed now",
    Label.STATE_CONSISTENCY: "a conflict with the session's state",
    Label.INFORMATION: "could not resolve where it came from",
}
#: GUARD-REASON: every reason starts with this.
PREFIX = "blocked by prefixexec guard"
#: The ``error.type`` of a failed call (the MCP conventions' value for a tool result with isError).
TOOL_ERROR = "tool_error"
#: ``error.type`` of a call forwarded in warn mode that broke a rule: the guard's reason (the span's
#: status message) is its failure, not the server's answer (which TRACE-MCP reads for tool_error).
GUARD_VIOLATION = "prefixexec.guard.violation"
#: The attributes of the guard's own verdict on each tool span.
DECISION, RULE, LABEL = "prefixexec.guard.decision", "prefixexec.guard.rule", "prefixexec.guard.label"
#: The task attribute the guard writes (TRACE-KEYS reads it first).
TASK_ATTR = "gen_ai.conversation.id"


@attrs.frozen(slots=True)
class Violation:
    """One failed check: the rule's spec ID, its label and what is wrong (without the phrase)."""

    rule: str
    label: Label
    detail: str


@attrs.frozen(slots=True)
class Decision:
    """The guard's answer for one call before it runs.

    ``violations`` are the failed checks, the first (in label order) named by ``reason``;
    ``forward`` says whether the call runs (always in ``warn`` mode). ``reason`` is ``None``
    for a call that passed every check.
    """

    name: str
    arguments: object
    call_id: str | None
    violations: tuple[Violation, ...]
    forward: bool
    reason: str | None

    @property
    def blocked(self) -> bool:
        return not self.forward

    @property
    def rule(self) -> str | None:
        return self.violations[0].rule if self.violations else None

    @property
    def label(self) -> Label | None:
        return self.violations[0].label if self.violations else None


@attrs.frozen(slots=True)
class Pending:
    """A call the guard decided and is waiting to record: its decision, start time and span id."""

    decision: Decision
    start: int
    span_id: str
    order: int


def _hex(n: int) -> str:
    return os.urandom(n).hex()


def reason_text(violation: Violation, *, with_detail: bool = True) -> str:
    """GUARD-REASON: one line naming the rule and the label, then what is wrong and the label's phrase."""
    head = f"{PREFIX}: {violation.rule} ({violation.label.value})"
    phrase = PHRASES[violation.label]
    if not with_detail:
        return f"{head}: {phrase}"
    return printable(" ".join(f"{head}: {violation.detail}; {phrase}".split()))


def _string(value: str) -> dict[str, Any]:
    return {"stringValue": value}


def _attributes(values: Mapping[str, str]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _string(v)} for k, v in values.items()]


def _result_text(result: object) -> str:
    """The text of an MCP ``CallToolResult``: its text contents joined by a newline, any other
    content as its JSON; ``structuredContent`` only when there is no content."""
    if not isinstance(result, Mapping):
        return text_of(result)
    content = result.get("content")
    parts: list[str] = []
    if isinstance(content, list):
        for item in content:
            if isinstance(item, Mapping) and item.get("type") == "text" and isinstance(item.get("text"), str):
                parts.append(item["text"])
            else:
                parts.append(json.dumps(item, sort_keys=True, ensure_ascii=False))
    if not parts and "structuredContent" in result:
        parts.append(json.dumps(result["structuredContent"], sort_keys=True, ensure_ascii=False))
    return "\n".join(parts)


class _Calls:
    """The semantics of the guard's monitor: the trace semantics (TRACE-EXEC) on each recorded
    call, one at a time (the state is the position; the calls are the guard's, in order)."""

    def __init__(self, guard: Guard) -> None:
        self.guard = guard

    def initial_state(self, task: None) -> int:
        return 0

    def step(self, state: int, action: Action) -> Accepted[int] | Rejected:
        guard = self.guard
        if isinstance(action, NoToolAction):
            return Accepted(state + 1)  # TRACE-NOTOOL
        result = guard._judged or guard._own(guard._calls[state])
        if isinstance(result, Rejected):
            return result
        return Accepted(state + 1, result.observation)


class Guard:
    """Check tool calls before they run, with the scorer's rules, and record them (GUARD-API).

    ``tools``: the tools offered (MCP ``tools/list`` entries ``{"name", "inputSchema"}`` or
    OpenAI function specs); ``None`` until :meth:`set_tools`. ``mode``: ``block`` (a call that
    fails a check does not run) or ``warn`` (it runs and is recorded). ``trace``: a path (lines
    appended) or a text stream for the OTLP JSON lines; ``None`` keeps no file. ``model``,
    ``method`` and ``task`` name the rollout in the trace (TRACE-KEYS).

    Use :meth:`run` around a tool function, or :meth:`begin` / :meth:`finish` / :meth:`block`
    when the call runs elsewhere. The guard is thread-safe.
    """

    def __init__(
        self,
        tools: Iterable[Mapping[str, Any]] | None = None,
        *,
        rules: GuardRules = NO_GUARD_RULES,
        label_rules: LabelRules = NO_RULES,
        mode: Mode = "block",
        trace: str | IO[str] | None = None,
        model: str = "mcp-client",
        method: str = "prefixexec-guard",
        task: str | None = None,
        context: Sequence[str] = (),
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"`mode` must be one of {', '.join(MODES)}: {mode!r}")
        self.rules = rules
        self.label_rules = label_rules
        self.mode: Mode = mode
        self.model = model
        self.method = method
        self.trace_id = _hex(16)
        self.task = task or self.trace_id
        self._lock = threading.RLock()
        self._owned = isinstance(trace, str)
        self._stream: IO[str] | None = open(trace, "a", encoding="utf-8") if isinstance(trace, str) else trace
        self._last = 0
        self._spans: list[Span] = []
        self._tools: dict[str, Any] | None = None
        self._calls: list[TraceCall] = []
        #: what the session has seen (GUARD-PROVENANCE), indexed (GUARD-PROVENANCE-INDEX)
        self.seen = SeenIndex(context)
        self._succeeded: set[str] = set()
        self._order = 0
        self._done: dict[int, tuple[Pending, str, bool, str]] = {}
        self._next_commit = 0
        self._judged: Accepted[tuple[TraceTask, int]] | Rejected | None = None
        self.monitor: PrefixMonitor[None, int] = PrefixMonitor(_Calls(self), None)
        self.root_id = _hex(8)
        self._root_start = self._now()
        self._write(
            self._span(
                self.root_id,
                None,
                f"invoke_agent {method}",
                self._root_start,
                self._root_start,
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": method, TASK_ATTR: self.task},
            )
        )
        if tools is not None:
            self.set_tools(tools)

    # --- the trace ---------------------------------------------------------------------------

    def _now(self) -> int:
        """Nanoseconds, strictly increasing (TRACE-ORDER sorts the calls by their start)."""
        now = max(time.time_ns(), self._last + 1)
        self._last = now
        return now

    def _span(
        self,
        span_id: str,
        parent: str | None,
        name: str,
        start: int,
        end: int,
        values: Mapping[str, str],
        error: str | None = None,
        status: str = "",
    ) -> dict[str, Any]:
        span: dict[str, Any] = {
            "traceId": self.trace_id,
            "spanId": span_id,
            "name": name,
            "kind": 1 if parent is None else 3,
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(end),
            "attributes": _attributes(values),
        }
        if parent is not None:
            span["parentSpanId"] = parent
        if error is not None:
            span["attributes"].append({"key": "error.type", "value": _string(error)})
            span["status"] = {"code": 2, "message": status} if status else {"code": 2}
        return span

    def _write(self, span: dict[str, Any]) -> Span:
        """Append ``span`` to the trace (one OTLP JSON line, flushed) and read it back as the
        ``otel`` adapter reads it."""
        read = _read(span)
        self._spans.append(read)
        self._flush_span(span)
        return read

    # --- what the session has seen ------------------------------------------------------------

    def set_tools(self, tools: Iterable[Mapping[str, Any]]) -> None:
        """The tools offered (a ``tools/list``): recorded as a model span's ``gen_ai.tool.definitions``
        (TRACE-TOOLS) and checked against from now on."""
        listed = [dict(t) for t in tools]
        with self._lock:
            start = self._now()
            self._write(
                self._span(
                    _hex(8),
                    self.root_id,
                    f"chat {self.model}",
                    start,
                    start,
                    {
                        "gen_ai.operation.name": "chat",
                        "gen_ai.request.model": self.model,
                        "gen_ai.tool.definitions": json.dumps(listed, ensure_ascii=False),
                    },
                )
            )
            self._tools = offered_tools(self._spans)

    @property
    def tools_known(self) -> bool:
        return self._tools is not None

    def observe(self, text: str) -> None:
        """A text the agent has seen (a user message, a document): identifiers in it may be used."""
        with self._lock:
            self.seen.add(text)

    # --- checks (GUARD-CHECKS) ----------------------------------------------------------------

    def _violations(self, name: str, arguments: object, call_id: str | None) -> list[Violation]:
        found: list[Violation] = []
        where = f"call {name}" + (f" (id {call_id})" if call_id is not None else "")
        parsed: Mapping[str, Any] = arguments if isinstance(arguments, Mapping) else {}
        problem = None if isinstance(arguments, Mapping) else "arguments are not a JSON object"
        action = ToolCall(name, parsed, call_id)
        not_offered = f"unknown tool {name!r}: it is not in the server's tools/list"
        _, reasons = schema_checks(action, problem, where, self._tools, not_offered)
        for text in reasons:
            rule = "GUARD-TOOL" if text == not_offered else "GUARD-SCHEMA"
            found.append(Violation(rule, Label.SCHEMA, text))
        for requires in self.rules.requires:
            if requires.tool in (name, ANY) and requires.after not in self._succeeded:
                detail = f"{name!r} runs only after a successful {requires.after!r} earlier in the session"
                found.append(Violation("GUARD-REQUIRES", requires.label, detail))
        for constraint in self.rules.arguments:
            if constraint.tool not in (name, ANY) or constraint.argument not in parsed:
                continue
            value = parsed[constraint.argument]
            if not isinstance(value, str) or not constraint.pattern.search(value):
                key = constraint.argument
                detail = f"argument {key!r} of {name!r} must match {constraint.text!r}: {value!r}"
                found.append(Violation("GUARD-ARGUMENT", constraint.label, detail))
        for key, value in parsed.items():
            provenance = self.rules.provenance_of(name, key)
            if provenance is None:
                continue
            for text in checked_values(value, provenance):
                if not self.seen.occurs(text):
                    detail = (
                        f"argument {key!r} = {text!r} never occurred earlier in the session "
                        "(the client's messages or an earlier result)"
                    )
                    found.append(Violation("GUARD-PROVENANCE", provenance.label, detail))
                    break
        found.sort(key=lambda v: v.label.rank)
        return found

    def reads_history(self, name: str, arguments: object) -> bool:
        """Whether the checks of this call read what the session did before (a ``[[requires]]``
        rule for its tool, an argument under GUARD-PROVENANCE); the schema checks do not."""
        if any(r.tool in (name, ANY) for r in self.rules.requires):
            return True
        if not isinstance(arguments, Mapping):
            return False
        for key, value in arguments.items():
            provenance = self.rules.provenance_of(name, key)
            if provenance is not None and next(checked_values(value, provenance), None) is not None:
                return True
        return False

    def check(self, name: str, arguments: object, call_id: str | None = None) -> Decision:
        """The decision for a call, changing nothing (GUARD-CHECKS)."""
        with self._lock:
            found = self._violations(name, arguments, call_id)
        reason = reason_text(found[0]) if found else None
        return Decision(name, arguments, call_id, tuple(found), not found or self.mode == "warn", reason)

    # --- recording ----------------------------------------------------------------------------

    def begin(self, name: str, arguments: object, call_id: str | None = None) -> Pending:
        """Decide a call and reserve its place in the session (its start time)."""
        with self._lock:
            decision = self.check(name, arguments, call_id)
            pending = Pending(decision, self._now(), _hex(8), self._order)
            self._order += 1
            first = decision.violations[0] if decision.violations else None
            if decision.blocked and first is not None and decision.reason is not None:
                if self._own_label(pending, decision.reason) is not first.label:
                    # GUARD-REASON: a detail the families read as another label: the phrase alone
                    short = reason_text(first, with_detail=False)
                    pending = attrs.evolve(pending, decision=attrs.evolve(decision, reason=short))
            return pending

    def _tool_span(
        self, pending: Pending, result: str, failed: bool, status: str, reason: str | None
    ) -> dict[str, Any]:
        decision = pending.decision
        values = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": decision.name,
            "mcp.method.name": "tools/call",
            "gen_ai.tool.call.arguments": _ENCODE(decision.arguments).decode(),
            "gen_ai.tool.call.result": result,
            DECISION: "blocked" if decision.blocked else ("warned" if decision.violations else "forwarded"),
        }
        if decision.call_id is not None:
            values["gen_ai.tool.call.id"] = decision.call_id
        if decision.rule is not None and decision.label is not None:
            values[RULE] = decision.rule
            values[LABEL] = decision.label.value
        if reason and status != reason:
            status = f"{reason}; {status}" if status else reason
        return self._span(
            pending.span_id,
            self.root_id,
            f"tools/call {decision.name}",
            pending.start,
            self._now(),
            values,
            GUARD_VIOLATION if reason else (TOOL_ERROR if failed else None),
            status,
        )

    def _record(self, pending: Pending, result: str, failed: bool, status: str) -> None:
        """Queue a finished call; commit the finished calls in start order (TRACE-ORDER)."""
        self._done[pending.order] = (pending, result, failed, status)
        while self._next_commit in self._done:
            done, text, is_error, said = self._done.pop(self._next_commit)
            self._next_commit += 1
            self._commit(done, text, is_error, said)

    def _commit(self, pending: Pending, result: str, failed: bool, status: str) -> None:
        decision = pending.decision
        warned = reason_text(decision.violations[0]) if decision.violations and decision.forward else None
        span = self._tool_span(pending, result, failed, status, warned)
        call = span_tool_call(_read(span), None)
        self._calls.append(call)
        # the call's own verdict (the prefix may already have failed, MON-AFTER-FAILURE), judged
        # once: the monitor's step takes it from here
        schema_failed = any(v.label is Label.SCHEMA for v in decision.violations)
        own = self._judged = self._own(call, schema_failed)
        self.monitor.commit(call.action)
        self._judged = None
        self._flush_span(span)
        if decision.forward and isinstance(own, Accepted):
            self._succeeded.add(decision.name)
            self.seen.add(result)

    def _own(self, call: TraceCall, schema: bool = True) -> Accepted[tuple[TraceTask, int]] | Rejected:
        """The trace semantics' verdict on one call on its own (TRACE-EXEC). ``schema=False``: the
        guard's check found the call's tool offered and its arguments valid with the same function
        (``schema_checks``) on the same tools and arguments, so they are not validated again."""
        task = TraceTask(self.trace_id, (call,), self._tools if schema else None, None, self.label_rules)
        return TRACE_SEMANTICS.step((task, 0), call.action)

    def _own_label(self, pending: Pending, result: str) -> Label | None:
        """The label the trace semantics gives a blocked call's span on its own (TRACE-EXEC)."""
        judged = self._own(span_tool_call(_read(self._tool_span(pending, result, True, result, None)), None))
        return judged.label if isinstance(judged, Rejected) else None

    def _flush_span(self, span: dict[str, Any]) -> None:
        if self._stream is None:
            return
        document = {
            "resourceSpans": [
                {
                    "resource": {"attributes": _attributes({"service.name": "prefixexec-guard"})},
                    "scopeSpans": [{"scope": {"name": "prefixexec.guard"}, "spans": [span]}],
                }
            ]
        }
        self._stream.write(_ENCODE(document).decode() + "\n")
        self._stream.flush()

    def finish(self, pending: Pending, result: object, *, is_error: bool = False, error: str = "") -> None:
        """Record a call that ran: its MCP result (a ``CallToolResult`` mapping, failed when its
        ``isError`` is true, or a text) and whether it failed; ``error`` says why when it never
        answered (a crash, a timeout)."""
        text = result if isinstance(result, str) else _result_text(result)
        is_error = is_error or (isinstance(result, Mapping) and result.get("isError") is True)
        with self._lock:
            self._record(pending, text, is_error or bool(error), error)

    def block(self, pending: Pending) -> str:
        """Record a call that was not forwarded; returns the reason for the client (GUARD-REASON)."""
        reason = pending.decision.reason
        assert reason is not None
        with self._lock:
            self._record(pending, reason, True, reason)
        return reason

    def run(
        self, name: str, arguments: Mapping[str, Any], tool: Callable[..., object], call_id: str | None = None
    ) -> tuple[bool, str]:
        """Check a call and run ``tool(**arguments)`` when it may run; returns ``(ok, text)``: the
        tool's result as text, or the reason it was blocked. An exception of the tool is recorded
        as a failed call (its type and message) and raised again."""
        pending = self.begin(name, arguments, call_id)
        if pending.decision.blocked:
            return False, self.block(pending)
        try:
            result = tool(**arguments)
        except Exception as exc:
            self.finish(pending, f"{type(exc).__name__}: {exc}", is_error=True)
            raise
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
        self.finish(pending, text)
        return True, text

    def outcome(self) -> Outcome:
        """The outcome of the recorded calls (T, FED, label, reason), as ``score`` reads the trace."""
        with self._lock:
            return self.monitor.outcome()

    def close(self) -> None:
        """Close the trace file (when the guard opened it)."""
        with self._lock:
            if self._owned and self._stream is not None:
                self._stream.close()
            self._stream = None


def _read(span: dict[str, Any]) -> Span:
    """``span`` as the ``otel`` adapter reads it (TRACE-OTEL)."""
    values = {a["key"]: a["value"]["stringValue"] for a in span["attributes"]}
    read: Span = _INTERPRET("guard", msgspec.convert(span, OtlpSpan), values)
    return read


_INTERPRET = interpret(frozenset((TASK_ATTR,)))
#: JSON text of a span line or of a call's arguments (a value JSON cannot hold: its ``str``).
_ENCODE = msgspec.json.Encoder(enc_hook=str).encode


__all__ = ["MODES", "PHRASES", "Decision", "Guard", "Mode", "Pending", "Violation", "reason_text"]
