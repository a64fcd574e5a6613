"""Agent traces as rollouts: the span model shared by the trace adapters (spec: spec/adapters/traces.md).

The trace readers (``otel``, ``openinference``, ``agents``, ``langsmith``) turn their files into
:class:`Span` values; this module groups them into traces (one trace is one rollout), checks
the trace structure (TRACE-STRUCTURE), orders the calls (TRACE-ORDER), reads the task, trial,
model, method and success (TRACE-KEYS, TRACE-SUCCESS) and replays the calls under
:class:`TraceSemantics` (TRACE-EXEC). Nothing of a trace is executed: the recorded verdicts of
the tools (span status, errors, results) are checked, with the chat adapter's JSON Schema
checks and label families (CHAT-TOOLS, CHAT-LABELS).
"""

from __future__ import annotations

import io
import json
import operator
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import IO, TYPE_CHECKING, Any, cast

import attrs

from prefixexec.kernel import Accepted, ConditionKey, Label, Outcome, Rejected, Rollout, ToolCall, replay
from prefixexec.kernel.actions import Action, NoToolAction

from . import limits
from .chat.reader import parse_arguments
from .chat.semantics import ERROR_FAMILIES, ChatTool, compile_schema, schema_checks
from .chat.semantics import _excerpt as _chat_excerpt
from .errors import InputError
from .inputs import open_binary, reading
from .labels import NO_RULES, LabelRules, family_labels
from .numbers import as_float
from .regex import Pattern
from .rejections import VERDICTS_KEY, Verdicts, next_position
from .text import printable

if TYPE_CHECKING:
    from . import AdapterOptions
    from .audit import GenericAuditReport

STDIN = "-"

#: Span kinds (TRACE-SPANS): a tool call, a model call (its requested calls and offered tools),
#: anything else (agents, chains, handoffs: context only).
TOOL, LLM, OTHER = 0, 1, 2

#: TRACE-KEYS: the attributes that name the task of a trace, tried in order (``--task-attr``
#: replaces them); a trace that has none is its own task (its trace id).
TASK_ATTRS = ("gen_ai.conversation.id", "session.id", "thread_id", "group_id")
#: TRACE-SUCCESS: the evaluation name or attribute that gives the success (``--success-attr``).
SUCCESS_ATTR = "success"
#: TRACE-SUCCESS: ``--success-attr @ok``: a trace succeeded when none of its root spans failed.
SUCCESS_OK = "@ok"
#: Evaluation labels read as success / failure (TRACE-SUCCESS), compared case-insensitively.
PASS_WORDS = frozenset({"pass", "passed", "true", "yes", "success", "succeeded", "correct", "1"})
FAIL_WORDS = frozenset({"fail", "failed", "false", "no", "failure", "incorrect", "0"})
#: TRACE-STRUCTURE: the most spans of one trace (a bounded answer for any input: beyond it the
#: trace is refused, as a rollout beyond HOSTILE-HORIZON is).
MAX_TRACE_SPANS = 1 << 21
#: TRACE-RESULT-ERROR: a tool result that starts like an error message is a failed call even when
#: the span is not marked (the conventions tell instrumentations not to mark handled errors).
RESULT_ERROR = re.compile(r"\A\s*(?:error\b|exception\b|traceback \(most recent call last\))", re.IGNORECASE)
#: TRACE-LABELS: trace-specific schema words, tried with the chat families.
TRACE_FAMILIES = (
    (
        Label.SCHEMA,
        # "tool not found", "tool <name> (was |is )not (found|available)" with "tool" a whole word,
        # written to start with a literal ("tool", then the word edge looked back at: a search that
        # skips ahead to each "tool", four times faster than a leading \b; tests/test_labels.py
        # checks it matches where the plain form does)
        re.compile(
            r"tool(?<!\wtool) (?:not found\b|['\"]?[\w.-]+['\"]? (?:was |is )?not (?:found|available))"
            r"|not a valid tool|no such tool",
            re.IGNORECASE,
        ),
    ),
)


@attrs.frozen(slots=True)
class Requested:
    """A call a model span asked for: its id, tool, raw arguments and position in the answer."""

    call_id: str | None
    name: str
    arguments: object
    position: int


@attrs.frozen(slots=True)
class Evaluation:
    """A ``gen_ai.evaluation.result`` (or the format's equivalent) found in a trace."""

    name: str
    label: str | None
    value: float | None
    time: int


@attrs.define(slots=True)
class Span:
    """One span (or run) of a trace, reduced to what scoring needs (TRACE-SPANS)."""

    where: str
    trace: str
    span: str
    parent: str | None
    name: str
    start: int
    end: int
    kind: int = OTHER
    tool: str | None = None
    call_id: str | None = None
    arguments: object = None
    result: str | None = None
    failed: bool = False
    error: str = ""
    requested: tuple[Requested, ...] = ()
    offered: tuple[tuple[str, object], ...] = ()
    model: str | None = None
    agent: str | None = None
    values: dict[str, object] | None = None
    evaluations: tuple[Evaluation, ...] = ()
    #: An MCP ``tools/call`` span (TRACE-MCP): a server's span under the client's is the same call.
    mcp: bool = False


@attrs.frozen(slots=True)
class TraceOptions:
    """What the trace adapters take from the command line (TRACE-KEYS, TRACE-SUCCESS)."""

    task_attrs: tuple[str, ...] = TASK_ATTRS
    success_attr: str = SUCCESS_ATTR
    threshold: float | None = None
    model: str | None = None
    method: str | None = None
    error_pattern: Pattern | None = None
    label_rules: LabelRules = attrs.field(default=NO_RULES, eq=False)

    @property
    def keys(self) -> frozenset[str]:
        """The attribute names a reader keeps on each span."""
        return frozenset((*self.task_attrs, self.success_attr))


def trace_options(options: AdapterOptions, adapter: str) -> TraceOptions:
    """The trace settings of ``options`` (``--task-attr``, ``--success-attr``, ...)."""
    from .chat.reader import error_pattern
    from .labels import load_label_rules

    extra = options.extra
    task = extra.get("task_attr")
    success = extra.get("success_attr")
    return TraceOptions(
        task_attrs=(task,) if isinstance(task, str) and task else TASK_ATTRS,
        success_attr=success if isinstance(success, str) and success else SUCCESS_ATTR,
        threshold=options.threshold,
        model=options.model,
        method=options.method,
        error_pattern=error_pattern(options.error_pattern),
        label_rules=load_label_rules(options.label_rules, adapter),
    )


# ---------------------------------------------------------------------------------------------
# Reading lines: split at "\n" only, bounded, plain or gzip (HOSTILE-LINE)


#: Bytes read at a time; lines are split in C (``bytes.split``), only ``\n`` ends a line.
BLOCK = 1 << 20


def _binary_lines(stream: IO[bytes], name: str) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` of a binary stream, without the ``\n``; a line longer than the
    limit is refused once that many bytes of it are read (HOSTILE-LINE)."""
    limit = limits.max_line_bytes
    number = 0
    pending: list[bytes] = []  # the start of a line that continues in the next block
    pending_size = 0
    while True:
        block = stream.read(BLOCK)
        if not block:
            break
        lines = block.split(b"\n")
        if len(lines) == 1:
            pending.append(block)
            pending_size += len(block)
            if pending_size > limit:
                raise limits.too_long(f"{name}:{number + 1}", limit)
            continue
        if pending:
            lines[0] = b"".join([*pending, lines[0]])
        last = lines.pop()
        for line in lines:
            number += 1
            if len(line) > limit:
                raise limits.too_long(f"{name}:{number}", limit)
            yield number, line
        pending, pending_size = ([last], len(last)) if last else ([], 0)
        if pending_size > limit:
            raise limits.too_long(f"{name}:{number + 1}", limit)
    if pending:
        yield number + 1, b"".join(pending)


@contextmanager
def trace_stream(path: str, expected: str) -> Iterator[IO[bytes]]:
    """``path`` as a binary stream, decompressed when it is gzip or zstd (INPUT-COMPRESSED,
    TRACE-GZIP): a stream that is cut off or corrupt is one error naming the file, raised where
    it is read (adapters.inputs)."""
    with reading(path, expected), open_binary(path, expected) as stream:  # HOSTILE-PSEUDO, HOSTILE-READ
        yield stream


def stream_lines(stream: IO[bytes], path: str) -> Iterator[tuple[str, bytes]]:
    """``("FILE:LINE", bytes)`` of every non-blank line of a binary stream (HOSTILE-LINE)."""
    for number, line in _binary_lines(stream, path):
        if line and not line.isspace():  # not blank (no copy of the line, as strip() makes)
            yield f"{path}:{number}", line


def input_lines(path: str, expected: str) -> Iterator[tuple[str, bytes]]:
    """``("FILE:LINE", bytes)`` of every non-blank line of ``path`` (``-``: stdin), gzip or plain.

    Lines end at ``\\n`` only; a line longer than the limit is refused (HOSTILE-LINE); a gzip
    stream that is cut off or corrupt is one error naming the file (TRACE-GZIP).
    """
    if path == STDIN:
        limits.check_stdin()
        for number, text in limits.bounded_lines(sys.stdin, "<stdin>"):
            if text.strip():
                yield f"<stdin>:{number}", text.encode("utf-8", "surrogatepass")
        return
    with trace_stream(path, expected) as stream:
        yield from stream_lines(stream, path)


def _whole_line(line: bytes) -> bool:
    """The first non-blank line of a file is one whole JSON value (the file is JSON Lines)."""
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


def json_documents(path: str, expected: str) -> Iterator[tuple[str, Any]]:
    """``(place, value)`` of the JSON values of ``path``: one per line of JSON Lines (``FILE:LINE``),
    or the file's one JSON document over several lines (``FILE``, read whole: at most the line
    limit, HOSTILE-LINE); plain or gzip (TRACE-GZIP); ``-`` reads standard input."""
    if path == STDIN:
        limits.check_stdin()
        text = sys.stdin.read(limits.max_line_bytes + 1)
        data = text.encode("utf-8", "surrogatepass")
        yield from _documents_of(data, "<stdin>", expected)
        return
    with trace_stream(path, expected) as stream:
        data = stream.read(limits.max_line_bytes + 1)
        if len(data) > limits.max_line_bytes:
            first = data.lstrip().split(b"\n", 1)[0]
            if not _whole_line(first):
                raise limits.too_long(path, limits.max_line_bytes)
            head = io.BytesIO(data)
            rest = cast(IO[bytes], _Chain(head, stream))
            for where, line in stream_lines(rest, path):
                yield where, decode_line(where, line)
            return
    yield from _documents_of(data, path, expected)


class _Chain(io.RawIOBase):
    """Two binary streams read one after the other."""

    def __init__(self, first: IO[bytes], second: IO[bytes]) -> None:
        self._streams = [first, second]

    def read(self, size: int = -1) -> bytes:
        while self._streams:
            data = self._streams[0].read(size)
            if data:
                return data
            self._streams.pop(0)
        return b""


def _documents_of(data: bytes, path: str, expected: str) -> Iterator[tuple[str, Any]]:
    body = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not body:
        raise InputError(path, f"is empty: expected {expected}")
    first = body.split(b"\n", 1)[0]
    if _whole_line(first):
        for where, line in stream_lines(io.BytesIO(data), path):
            yield where, decode_line(where, line)
        return
    yield path, decode_line(path, body)


def decode_line(where: str, line: bytes) -> Any:
    """One JSON value, strictly (no NaN, no repeated key is left to the reader: msgspec keeps the
    last); a line that is not JSON names its place and says it may be cut off."""
    import msgspec

    try:
        return msgspec.json.decode(line)
    except msgspec.DecodeError as exc:
        raise InputError(where, f"not valid JSON ({exc}; a truncated line?)") from None
    except RecursionError:
        raise limits.too_deep(where) from None


# ---------------------------------------------------------------------------------------------
# Text of values


def text_of(value: object) -> str:
    """A result or error value as text: strings as they are, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):
        return str(value)


def scalar(value: object) -> object:
    """An attribute value kept for TRACE-KEYS: str, bool, int or float (anything else: its text)."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    return text_of(value)


# ---------------------------------------------------------------------------------------------
# Semantics (TRACE-EXEC)


@attrs.frozen(slots=True)
class TraceCall:
    """One call of a trace: the tool span (or the model's request no span answered)."""

    where: str
    span: str
    action: ToolCall
    arguments_error: str | None
    executed: bool
    failed: bool
    error: str
    result: str


@attrs.frozen(slots=True)
class TraceTask:
    """What the trace semantics needs of one trace."""

    trace: str
    calls: tuple[TraceCall, ...]
    #: The tools the trace says were offered (``None``: the trace does not say).
    tools: Mapping[str, ChatTool] | None = attrs.field(eq=False)
    error_pattern: Pattern | None = None
    label_rules: LabelRules = attrs.field(default=NO_RULES, eq=False)


def _excerpt(text: str) -> str:
    """A text of the trace as quoted in a reason: white space runs as one space, cut to the chat
    excerpt's length, and any other control character escaped (HOSTILE-CONTROL: a tool's error
    must not reach the terminal as an escape sequence)."""
    return printable(_chat_excerpt(text))


def trace_labels(text: str, arguments: object, rules: LabelRules) -> tuple[Label, ...]:
    """TRACE-LABELS: a label rule's label, else every chat family and trace family that matches
    (the call's argument values masked, LABEL-MASK)."""
    return family_labels(text, arguments, ERROR_FAMILIES + TRACE_FAMILIES, rules)


class TraceSemantics:
    """A trace's recorded calls checked in order; the state is the position (TRACE-EXEC).

    Every violated check is a label and the reason joins their texts, each naming the span.
    """

    def initial_state(self, task: TraceTask) -> tuple[TraceTask, int]:
        return (task, 0)

    def step(
        self, state: tuple[TraceTask, int], action: Action
    ) -> Accepted[tuple[TraceTask, int]] | Rejected:
        task, position = state
        if isinstance(action, NoToolAction):
            return Accepted((task, position + 1))  # TRACE-NOTOOL: an answer without a call
        call = task.calls[position]
        tools = task.tools
        not_offered = ""  # written only for a call of a tool the trace did not offer
        if tools is not None and call.action.name not in tools:
            offered = ", ".join(sorted(tools)) or "none"
            not_offered = f"tool {call.action.name!r} is not offered in the trace (offered: {offered})"
        labels, reasons = schema_checks(call.action, call.arguments_error, call.where, tools, not_offered)
        rules = task.label_rules
        if not call.executed:
            reasons.append(f"no tool span answers the requested call {call.action.call_id!r}")
            if call.failed:
                labels.extend(trace_labels(call.error, call.action.arguments, rules))
                reasons.append(f"the trace says: {_excerpt(call.error)}")
        elif call.failed:
            text = call.error or call.result
            labels.extend(trace_labels(f"{call.error}\n{call.result}", call.action.arguments, rules))
            reasons.append(f"the tool span failed: {_excerpt(text) or '(no message)'}")
        elif RESULT_ERROR.search(call.result):
            labels.extend(trace_labels(call.result, call.action.arguments, rules))
            reasons.append(f"the tool result is an error: {_excerpt(call.result)}")
        elif task.error_pattern is not None and task.error_pattern.search(call.result):
            labels.extend(trace_labels(call.result, call.action.arguments, rules))
            reasons.append(f"the tool result matches --error-pattern: {_excerpt(call.result)}")
        if reasons:
            return Rejected(labels, f"span {call.span} ({call.where}): " + "; ".join(reasons))
        return Accepted((task, position + 1), call.result)


SEMANTICS = TraceSemantics()


# ---------------------------------------------------------------------------------------------
# Traces -> rollouts


def _check_structure(trace: str, spans: list[Span]) -> dict[str, str | None]:
    """TRACE-STRUCTURE: span ids unique in the trace, no cycle of parent ids, bounded size; the
    parent of each span id."""
    if len(spans) > MAX_TRACE_SPANS:
        raise InputError(
            spans[0].where,
            f"trace {trace} holds more than {MAX_TRACE_SPANS} spans (TRACE-STRUCTURE): split the export",
        )
    parents: dict[str, str | None] = {}
    for span in spans:
        if span.span in parents:
            raise InputError(span.where, f"span id {span.span} appears twice in trace {trace}")
        parents[span.span] = span.parent
    done: set[str] = set()  # spans whose way up ends at a root: each span is walked once
    for span in spans:
        node: str | None = span.span
        if node in done:
            continue
        parent = span.parent
        if parent is None or parent in done or parent not in parents:  # most spans: one step up
            done.add(span.span)
            continue
        path: dict[str, None] = {}  # the walk up from this span, in order
        while node is not None and node in parents and node not in done:
            if node in path:
                walked = list(path)
                cycle = [*walked[walked.index(node) :], node]
                raise InputError(
                    span.where,
                    f"trace {trace}: the parent ids form a cycle ({' -> '.join(cycle)}): not a tree of spans",
                )
            path[node] = None
            node = parents[node]
        done.update(path)
    return parents


@lru_cache(maxsize=4096)
def _parsed_text(raw: str) -> tuple[Mapping[str, Any], str | None]:
    return parse_arguments(raw)


def _arguments(raw: object) -> tuple[Mapping[str, Any], str | None]:
    """:func:`parse_arguments`, each argument text parsed once (a request and the span that
    answers it carry the same text; the result is read, never changed)."""
    return _parsed_text(raw) if isinstance(raw, str) else parse_arguments(raw)


@lru_cache(maxsize=4096)
def _canonical_text(arguments: str) -> str:
    parsed, problem = _arguments(arguments)
    return arguments if problem is not None else json.dumps(parsed, sort_keys=True)


def _canonical(arguments: object) -> str:
    """The arguments of a call as canonical JSON (a text that is not a JSON object: as it is)."""
    return _canonical_text(arguments) if isinstance(arguments, str) else text_of(arguments)


def _single(arguments: object) -> str | None:
    """The one argument value of a call, as text (a tool span that records its only input bare)."""
    parsed, problem = _arguments(arguments) if arguments is not None else ({}, "none")
    if problem is None and len(parsed) == 1:
        return text_of(next(iter(parsed.values())))
    return None


def _one_per_mcp_call(spans: list[Span]) -> list[Span]:
    """TRACE-MCP: an MCP ``tools/call`` span whose parent is an MCP ``tools/call`` span of the same
    tool is the server's side of the client's call: one call, counted once. The client's span
    stays (its failure, error text and result completed from the server's where it has none)."""
    calls = {span.span: span for span in spans if span.mcp and span.kind == TOOL}
    if not calls:
        return spans
    merged: dict[str, Span] = {}
    served: set[str] = set()
    for span in spans:
        client = calls.get(span.parent) if span.mcp and span.parent is not None else None
        if client is None or client.tool != span.tool or span.span not in calls:
            continue
        served.add(span.span)
        done = merged.get(client.span, client)
        merged[client.span] = attrs.evolve(
            done,
            failed=done.failed or span.failed,
            error=done.error or span.error,
            result=done.result if done.result is not None else span.result,
        )
    return [merged.get(span.span, span) for span in spans if span.span not in served]


def _calls(spans: list[Span]) -> list[TraceCall]:
    """TRACE-ORDER: every tool span and every requested call no span answers, in call order.

    A tool span answers the request with its call id; a span without one answers the first
    unanswered request of the same tool with the same arguments (canonical JSON, or the bare
    value of a one-argument call), else of the same tool.
    """
    requests: list[tuple[tuple[int, int, int], Requested, Span]] = []
    tools: list[tuple[int, Span]] = []  # (position in the trace, tool span)
    spans = _one_per_mcp_call(spans)
    failures: list[str] = []  # the errors of the failed spans that are not tool spans
    for order, span in enumerate(spans):
        kind = span.kind
        if kind == TOOL:
            tools.append((order, span))
            continue
        if kind == LLM:
            for asked in span.requested:
                requests.append(((span.end, asked.position, span.end), asked, span))
        if span.failed and span.error:
            failures.append(span.error)
    by_id: dict[str, int] = {}
    for index, (_, asked, _) in enumerate(requests):
        if asked.call_id is not None and asked.call_id not in by_id:
            by_id[asked.call_id] = index
    carried = {s.call_id for _, s in tools if s.call_id is not None}
    answered: set[int] = set()
    keyed: list[tuple[tuple[int, int, int, int], TraceCall]] = []

    def free(index: int) -> bool:
        return index not in answered and requests[index][1].call_id not in carried

    # HOSTILE-COUNT-COST: the requests of a tool, and of a tool with given arguments, in queues
    # whose heads skip the requests that are no longer free (a request once answered stays so):
    # matching costs one look-up per span, where scanning every request of the tool for every span
    # cost calls^2 (5,000 calls without ids: 48 s). Built on the first span without a call id.
    queues: _Queues | None = None
    for order, span in tools:
        name = span.tool or ""
        if span.call_id is not None:
            match = by_id.get(span.call_id)
        else:  # no call id on the span (OpenInference's spans): the same tool and arguments
            if queues is None:
                queues = _Queues(requests, free)
            match = queues.same_arguments(name, span.arguments)
            if match is None:
                match = queues.first(("name", name))
        request: Requested | None = None
        if match is not None and match not in answered:
            answered.add(match)
            anchor, request, _ = requests[match]
            key = (anchor[0], anchor[1], span.start, order)
        else:
            key = (span.start, 0, span.start, order)
        keyed.append((key, span_tool_call(span, request)))
    said_of: dict[str, str] = {}  # one text per tool name (HOSTILE-COUNT-COST: not one per request)
    for index, (anchor, request, llm) in enumerate(requests):
        if index in answered:
            continue
        arguments, problem = _arguments(request.arguments)
        action = ToolCall(request.name, arguments, request.call_id)
        # TRACE-UNANSWERED: a failed span of the trace whose error names the tool says why
        said = said_of.get(request.name)
        if said is None:
            said = said_of[request.name] = _said(request.name, failures)
        call = TraceCall(llm.where, llm.span, action, problem, False, bool(said), said, "")
        keyed.append(((anchor[0], anchor[1], anchor[2], len(spans) + index), call))
    keyed.sort(key=lambda item: item[0])
    return [call for _, call in keyed]


#: TRACE-UNANSWERED: at most this many failed spans' errors say why a request went unanswered,
#: each at most MAX_SAID characters (HOSTILE-COUNT-COST: the text is kept per call).
MAX_SAID_ERRORS = 3
MAX_SAID = 2000


def _said(name: str, failures: Sequence[str]) -> str:
    """The errors of the failed spans that name tool ``name``, joined (bounded)."""
    said: list[str] = []
    for text in failures:
        if name in text:
            said.append(text if len(text) <= MAX_SAID else text[:MAX_SAID] + "...")
            if len(said) == MAX_SAID_ERRORS:
                break
    return "; ".join(said)


class _Queues:
    """The free requests by tool name and by (tool name, arguments), first in call order.

    A span without a call id answers the first free request of its tool whose canonical
    arguments are the span's, or whose one argument's bare value is (TRACE-ORDER); else the first
    free request of its tool. Each queue's head moves past requests that are no longer free."""

    def __init__(
        self, requests: Sequence[tuple[tuple[int, int, int], Requested, Span]], free: Callable[[int], bool]
    ):
        self.free = free
        self.lists: dict[tuple[str, ...], list[int]] = {}
        self.heads: dict[tuple[str, ...], int] = {}
        for index, (_, asked, _) in enumerate(requests):
            self.lists.setdefault(("name", asked.name), []).append(index)
            self.lists.setdefault(("args", asked.name, _canonical(asked.arguments)), []).append(index)
            single = _single(asked.arguments)
            if single is not None:
                self.lists.setdefault(("single", asked.name, single), []).append(index)

    def first(self, key: tuple[str, ...]) -> int | None:
        """The first free request of queue ``key``."""
        items = self.lists.get(key)
        if items is None:
            return None
        head = self.heads.get(key, 0)
        while head < len(items) and not self.free(items[head]):
            head += 1
        self.heads[key] = head
        return items[head] if head < len(items) else None

    def same_arguments(self, name: str, arguments: object) -> int | None:
        """The first free request of tool ``name`` with the same arguments as a tool span's: the
        same canonical JSON, or a one-argument request whose bare value is the span's text."""
        wanted = _canonical(arguments)
        found = [
            i
            for i in (self.first(("args", name, wanted)), self.first(("single", name, wanted)))
            if i is not None
        ]
        return min(found) if found else None


def span_tool_call(span: Span, request: Requested | None) -> TraceCall:
    """The call of a tool span: its own arguments when it records them as a JSON object, else
    the arguments the model asked for (``request``: the model's request that the span answers,
    ``None`` when none does; TRACE-ORDER).

    This is how every trace reader turns a tool span into the call the trace semantics judges;
    the guard (:mod:`prefixexec.guard`) reads its own spans back with it (GUARD-TRACE-SAME)."""
    arguments, problem = _arguments(span.arguments if span.arguments is not None else {})
    if request is not None and (span.arguments is None or problem is not None):
        arguments, problem = _arguments(request.arguments)
    call_id = span.call_id or (request.call_id if request is not None else None)
    action = ToolCall(span.tool or span.name, arguments, call_id)
    return TraceCall(span.where, span.span, action, problem, True, span.failed, span.error, span.result or "")


def offered_tools(spans: Sequence[Span]) -> dict[str, ChatTool] | None:
    """TRACE-TOOLS: the tools the trace's spans say were offered (``None`` when none says).

    The first schema a tool is offered with counts; a schema that does not compile checks
    nothing. The guard builds its tools with it from its own ``chat`` spans (GUARD-CHECKS)."""
    found: dict[str, object] = {}
    said = False
    for span in spans:
        for name, schema in span.offered:
            said = True
            if found.get(name) is None:
                found[name] = schema
    if not said:
        return None
    tools: dict[str, ChatTool] = {}
    for name, schema in found.items():
        validator = None
        if schema is not None:
            try:
                validator = compile_schema(schema)
            except ValueError:
                validator = None  # a schema the trace garbled checks nothing (TRACE-TOOLS)
        tools[name] = ChatTool(name, validator)
    return tools


def _value(spans: list[Span], names: Sequence[str]) -> tuple[object, Span] | None:
    """The first span's value of the first of ``names`` that any span has (spans in start order)."""
    holding = [span for span in spans if span.values is not None]
    for name in names:
        for span in holding:
            assert span.values is not None
            if span.values.get(name) is not None:
                return span.values[name], span
    return None


def _success_word(value: object, where: str, what: str, threshold: float | None) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        if threshold is not None:
            return as_float(value) >= threshold  # HOSTILE-BIGINT: 10**400 is +inf, above it
        if value in (0, 1):
            return bool(value)
        raise InputError(where, f"{what} = {value!r} is neither 0 nor 1: give --threshold to compare it")
    if isinstance(value, str):
        word = value.strip().lower()
        if word in PASS_WORDS:
            return True
        if word in FAIL_WORDS:
            return False
    raise InputError(where, f"{what} = {value!r} is not a success value (true/false, pass/fail, 0/1)")


def _success(spans: list[Span], roots: list[Span], trace: str, options: TraceOptions) -> bool:
    """TRACE-SUCCESS: the last evaluation named ``--success-attr``, else its attribute, else an error."""
    name = options.success_attr
    if name == SUCCESS_OK:
        return not any(root.failed for root in roots)
    evaluations = [(e.time, i, e, s) for i, s in enumerate(spans) for e in s.evaluations if e.name == name]
    if evaluations:
        _, _, last, span = max(evaluations, key=lambda item: (item[0], item[1]))
        what = f"evaluation {name!r}"
        if last.label is not None and last.label.strip().lower() in PASS_WORDS | FAIL_WORDS:
            return last.label.strip().lower() in PASS_WORDS
        if last.value is not None:
            return _success_word(last.value, span.where, f"{what} score", options.threshold)
        return _success_word(last.label, span.where, f"{what} label", options.threshold)
    found = _value(spans, (name,))
    if found is not None:
        value, span = found
        return _success_word(value, span.where, f"attribute {name!r}", options.threshold)
    raise InputError(
        roots[0].where if roots else spans[0].where,
        f"trace {trace}: no success: no evaluation or attribute {name!r} (name one with --success-attr "
        f"NAME, or --success-attr {SUCCESS_OK} to count a trace whose root spans did not fail as a success)",
    )


def _name(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def trace_task(trace: str, members: list[Span], options: TraceOptions) -> tuple[TraceTask, list[Span]]:
    """The replayable task of one trace and its root spans (TRACE-STRUCTURE, TRACE-ORDER, TRACE-TOOLS)."""
    ids = _check_structure(trace, members)
    roots = [s for s in members if s.parent is None or s.parent not in ids]
    task = TraceTask(
        trace, tuple(_calls(members)), offered_tools(members), options.error_pattern, options.label_rules
    )
    return task, roots


def read_traces(
    spans: Iterable[Span], options: TraceOptions, dataset: str, paths: Sequence[str]
) -> list[Rollout]:
    """The rollouts of every span a reader yields (the cyclic garbage collector paused meanwhile:
    the spans hold no cycles, and a collection would scan them again and again as they are made)."""
    from .records import _collector_paused

    with _collector_paused():
        return trace_rollouts(list(spans), options, dataset, paths)


_START = operator.attrgetter("start")


def trace_rollouts(
    spans: Sequence[Span], options: TraceOptions, dataset: str, paths: Sequence[str]
) -> list[Rollout]:
    """Group ``spans`` into traces and replay each as one rollout (TRACE-*)."""
    traces: dict[str, list[Span]] = {}
    for span in spans:
        traces.setdefault(span.trace, []).append(span)
    if not traces:
        raise InputError(", ".join(paths) or "<no input>", "no spans found")
    built: list[tuple[int, str, ConditionKey, str, Outcome, bool, dict[str, object]]] = []
    for trace, members in traces.items():
        task, roots = trace_task(trace, members, options)
        calls = task.calls
        members_by_start = sorted(members, key=_START)
        actions = [c.action for c in calls]
        outcome = replay(SEMANTICS, task, actions)
        # in start order: the first model and agent named, the first time
        model = agent = None
        first = 0  # a trace object has no time
        for span in members_by_start:
            if model is None and span.model and span.kind == LLM:
                model = span.model
            if agent is None and span.agent:
                agent = span.agent
            if not first and span.start > 0:
                first = span.start
        found_task = _value(members_by_start, options.task_attrs)
        task_id = str(found_task[0]) if found_task is not None else trace
        # TRACE-AGENT-MODEL: no model span names it: the first agent span that does
        model = model or next((s.model for s in members_by_start if s.model), None) or options.model
        method = agent or options.method
        root = min(roots, key=_START) if roots else members_by_start[0]
        if model is None:
            raise InputError(root.where, f"trace {trace}: no model span names the model: give --model")
        method = method or root.name or None  # TRACE-KEYS: the root span's name (a workflow, a graph)
        if method is None:
            raise InputError(root.where, f"trace {trace}: no span names the agent: give --method")
        success = _success(members_by_start, roots, trace, options)
        meta: dict[str, object] = {
            "source": root.where,
            "trace_id": trace,
            "root_span": root.span,
            "action_spans": [c.span for c in calls],  # OUT-SOURCE: each action's span id
            VERDICTS_KEY: Verdicts(SEMANTICS, task, actions, next_position, outcome),  # OUT-REJECTIONS
        }
        key = ConditionKey(dataset, model, method)
        built.append((first, trace, key, task_id, outcome, success, meta))
    built.sort(key=lambda item: (item[0], item[1]))
    # the traces of one condition and task are its trials, in start order (TRACE-KEYS)
    trials: dict[tuple[ConditionKey, str], int] = {}
    out: list[Rollout] = []
    for _, _, key, task_id, outcome, success, meta in built:
        trial = trials.get((key, task_id), 0)
        trials[key, task_id] = trial + 1
        out.append(Rollout(key, task_id, trial, outcome, success, meta))
    return out


# ---------------------------------------------------------------------------------------------
# The trace audit (AUDIT-TRACES): calls the adapter accepted are the gold; mutants must be
# rejected as schema at the mutated call.


def _operators() -> tuple[Any, ...]:
    """The chat audit's operators, on trace calls (a trace call has the same action and tools)."""
    from .audit import Expect, Operator
    from .chat.operators import arguments_not_json, drop_required, unknown_tool, wrong_type

    schema = Label.SCHEMA
    return (
        Operator("unknown-tool", "call a tool the trace did not offer", Expect.LABEL, unknown_tool, schema),
        Operator("arguments-not-json", "arguments not valid JSON", Expect.LABEL, arguments_not_json, schema),
        Operator("drop-required", "drop a required argument (schema)", Expect.LABEL, drop_required, schema),
        Operator("wrong-type", "an argument of another JSON type (schema)", Expect.LABEL, wrong_type, schema),
    )


AUDIT_OPERATORS = ("unknown-tool", "arguments-not-json", "drop-required", "wrong-type")


def audit_traces(
    paths: Sequence[str], options: AdapterOptions, adapter: str, read_spans: Any
) -> GenericAuditReport:
    """``prefixexec audit --adapter <trace adapter> FILE...`` (AUDIT-TRACES)."""
    from .audit import AuditPlan, accepted_prefixes, run_audit, seed_of

    if not paths:
        raise InputError(f"--adapter {adapter}", "the trace audit reads trace files: give FILE...")
    settings = trace_options(options, adapter)
    traces: dict[str, list[Span]] = {}
    for span in read_spans(settings.keys):
        traces.setdefault(span.trace, []).append(span)
    items = []
    for trace, members in traces.items():
        task, roots = trace_task(trace, members, settings)
        where = (min(roots, key=lambda s: s.start) if roots else members[0]).where
        items.append((f"{where} (trace {trace})", task, tuple(c.action for c in task.calls)))
    if not items:
        raise InputError(", ".join(paths), "no spans found")
    gold, first_rejected = accepted_prefixes(SEMANTICS, items)
    without_calls = sum(1 for _, _, actions in items if not actions)
    plan: Any = AuditPlan(
        adapter=adapter,
        source=f"{', '.join(paths)}: {len(items)} traces, {sum(len(a) for _, _, a in items)} calls",
        semantics=SEMANTICS,
        gold=gold,
        gold_kind="calls the adapter accepted, before each trace's first rejection",
        operators=_operators(),
        not_checked=(
            "whether the recorded tool results are right: they are taken as given, nothing is executed",
            "calls after each trace's first rejection (replay stops there: CONV-REPLAY)",
            f"{first_rejected} traces whose first call was rejected and {without_calls} without a call",
            "unknown-tool in traces that do not say which tools were offered; schema operators for tools "
            "without a parameter schema in the trace",
        ),
    )
    return run_audit(plan, seed_of(options))
