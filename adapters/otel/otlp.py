"""The OTLP JSON container (OTLP JSON Lines: one ``{"resourceSpans": [...]}`` document per line), decoded
with typed msgspec structs: the shared input of the ``otel`` and ``openinference`` adapters
(spec: TRACE-OTLP)."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from typing import IO, TextIO, cast

import msgspec

from .. import limits
from ..detect import protobuf_form
from ..errors import InputError
from ..spans import OTHER, STDIN, Span, input_lines, stream_lines, trace_stream
from .document import document_spans, text_blocks

EXPECTED = "an OTLP file of resourceSpans (JSON Lines, JSON or protobuf)"


class ArrayValue(msgspec.Struct, gc=False):
    values: list[AnyValue] = []


class KeyValueList(msgspec.Struct, gc=False):
    values: list[KeyValue] = []


class AnyValue(msgspec.Struct, gc=False):
    stringValue: str | None = None
    boolValue: bool | None = None
    intValue: int | str | None = None
    doubleValue: float | str | None = None
    arrayValue: ArrayValue | None = None
    kvlistValue: KeyValueList | None = None
    bytesValue: str | None = None


class KeyValue(msgspec.Struct, gc=False):
    key: str
    value: AnyValue | None = None


class Status(msgspec.Struct, gc=False):
    code: int | str | None = None
    message: str | None = None


class Event(msgspec.Struct, gc=False):
    name: str = ""
    timeUnixNano: int | str | None = None
    attributes: list[KeyValue] = []


class OtlpSpan(msgspec.Struct, gc=False):
    traceId: str = ""
    spanId: str = ""
    parentSpanId: str | None = None
    name: str = ""
    startTimeUnixNano: int | str | None = None
    endTimeUnixNano: int | str | None = None
    attributes: list[KeyValue] = []
    events: list[Event] = []
    status: Status | None = None


class ScopeSpans(msgspec.Struct, gc=False):
    spans: list[OtlpSpan] = []


class ResourceSpans(msgspec.Struct, gc=False):
    # the resource (service name, SDK version) and the scopes name nothing scoring reads: not
    # decoded (msgspec skips a field a struct does not have without building it)
    scopeSpans: list[ScopeSpans] = []


class Document(msgspec.Struct, gc=False):
    resourceSpans: list[ResourceSpans] | None = None


@cache
def _decoder() -> msgspec.json.Decoder[Document]:
    return msgspec.json.Decoder(Document)


def value_of(value: AnyValue | None) -> object:
    """An OTLP ``AnyValue`` as a Python value (``intValue`` strings as integers)."""
    if value is None:
        return None
    if value.stringValue is not None:
        return value.stringValue
    if value.boolValue is not None:
        return value.boolValue
    if value.intValue is not None:
        try:
            return int(value.intValue)
        except ValueError:
            return value.intValue
    if value.doubleValue is not None:
        try:
            return float(value.doubleValue)
        except ValueError:
            return value.doubleValue
    if value.arrayValue is not None:
        return [value_of(v) for v in value.arrayValue.values]
    if value.kvlistValue is not None:
        return {kv.key: value_of(kv.value) for kv in value.kvlistValue.values}
    return value.bytesValue


def attributes(pairs: Sequence[KeyValue]) -> dict[str, object]:
    """The attributes of a span, event or resource as a dict (a repeated key: the last)."""
    # a string value (most attributes) is read here, anything else by value_of
    return {
        kv.key: v.stringValue if (v := kv.value) is not None and v.stringValue is not None else value_of(v)
        for kv in pairs
    }


def nanoseconds(value: int | str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


#: Span status ERROR: ``2`` or ``STATUS_CODE_ERROR`` (the Collector's file exporter and the SDK's).
ERROR_CODES = (2, "2", "STATUS_CODE_ERROR", "ERROR")


def failed(status: Status | None) -> bool:
    """Span status ERROR."""
    return status is not None and status.code in ERROR_CODES


#: ``interpret(where, span, attributes) -> Span``: a convention's reading of one span.
Interpret = Callable[[str, OtlpSpan, dict[str, object]], Span]


#: The head of a file read to tell its form (JSON Lines, JSON documents, protobuf).
HEAD = 1 << 20


class _Replay:
    """A binary stream that gives ``head`` first, then the rest of ``stream``."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        self._head = memoryview(head)
        self._at = 0
        self._stream = stream

    def read(self, size: int = -1) -> bytes:
        left = len(self._head) - self._at
        if not left:
            return self._stream.read(size)
        if size < 0:
            out = bytes(self._head[self._at :]) + self._stream.read()
            self._at = len(self._head)
            return out
        out = bytes(self._head[self._at : self._at + size])
        self._at += len(out)
        return out + self._stream.read(size - len(out)) if len(out) < size else out


def otlp_form(head: bytes) -> str:
    """TRACE-OTLP-FORMS: ``document`` when the first non-blank line of ``head`` is the cut-off
    start of a JSON value (JSON over several lines), or a line longer than the head; ``lines``
    when it is one whole JSON value or anything else that starts with ``{`` (whose reader names
    what is wrong: lines end at ``\\n`` only); else the protobuf form
    (:func:`..detect.protobuf_form`), else ``lines``."""
    body = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if body[:1] == b"{":
        end = body.find(b"\n")
        if end < 0:
            return "lines" if len(head) < HEAD else "document"
        line = body[:end].rstrip()
        try:
            json.loads(line)
        except RecursionError:
            return "lines"
        except ValueError as exc:  # a JSONDecodeError at the line's end: the value goes on
            return "document" if getattr(exc, "pos", -1) >= len(line) else "lines"
        return "lines"
    return protobuf_form(head) or "lines"


def otlp_spans(paths: Sequence[str], interpret: Interpret) -> Iterator[Span]:
    """Every span of the OTLP files ``paths`` (plain or gzip; JSON Lines, JSON documents or
    protobuf: TRACE-OTLP-FORMS), interpreted."""
    for path in paths:
        if path == STDIN:
            yield from _stdin_spans(interpret)
            continue
        with trace_stream(path, EXPECTED) as stream:
            head = stream.read(HEAD)
            form = otlp_form(head)
            replay = _Replay(head, stream)
            if form == "lines":
                yield from line_spans(stream_lines(cast(IO[bytes], replay), path), interpret)
            elif form == "document":
                yield from document_spans(text_blocks(replay.read, path), path, interpret)
            else:
                from .protobuf import protobuf_spans

                yield from protobuf_spans(replay.read, path, interpret, form == "proto-stream")


def _stdin_spans(interpret: Interpret) -> Iterator[Span]:
    """Standard input, as text: JSON documents when its first line starts one (:func:`otlp_form`),
    else JSON Lines (protobuf is read from files only)."""
    from ..detect import _Prefixed
    from .document import BLOCK

    limits.check_stdin()
    first = sys.stdin.readline(limits.max_line_bytes + 1)
    stream = _Prefixed(first, sys.stdin)
    if otlp_form(first.encode("utf-8", "surrogatepass")) == "document":
        yield from document_spans(lambda: stream.read(BLOCK), "<stdin>", interpret)
    else:
        sys.stdin = cast(TextIO, stream)
        yield from line_spans(input_lines(STDIN, EXPECTED), interpret)


def line_spans(lines: Iterable[tuple[str, bytes]], interpret: Interpret) -> Iterator[Span]:
    """TRACE-OTLP: the spans of OTLP JSON Lines.

    Refused with one error naming the line: a line that is not JSON (a truncated line), not an
    object with ``resourceSpans``, a span without a trace id or span id (TRACE-STRUCTURE).
    """
    decoder = _decoder()
    for where, line in lines:
        try:
            document = decoder.decode(line)
        except msgspec.ValidationError as exc:
            raise InputError(where, f"not an OTLP span document: {exc}") from None
        except msgspec.DecodeError as exc:
            raise InputError(where, f"not valid JSON ({exc}; a truncated line?)") from None
        if document.resourceSpans is None:
            raise InputError(where, "expected an OTLP JSON object with 'resourceSpans'")
        for resource_spans in document.resourceSpans:
            for scope in resource_spans.scopeSpans:
                for span in scope.spans:
                    if not span.traceId or not span.spanId:
                        _without_id(where, document, span)
                    yield interpret(where, span, attributes(span.attributes))


def _without_id(where: str, document: Document, span: OtlpSpan) -> None:
    """TRACE-STRUCTURE: the error for ``span`` of ``document``, which lacks its trace or span id
    (its place is looked up only then: the loop over every span counts nothing)."""
    for r, resource_spans in enumerate(document.resourceSpans or ()):
        for s, scope in enumerate(resource_spans.scopeSpans):
            for n, candidate in enumerate(scope.spans):
                if candidate is span:
                    where = f"{where}: resourceSpans[{r}].scopeSpans[{s}].spans[{n}]"
    without_id(where, span)


def without_id(where: str, span: OtlpSpan) -> None:
    """TRACE-STRUCTURE: a span without its trace or span id is refused, naming its place."""
    missing = "traceId" if not span.traceId else "spanId"
    raise InputError(where, f"span {span.name!r} has no {missing} (TRACE-STRUCTURE)")


@cache
def span_decoder() -> Callable[[object], OtlpSpan]:
    """A decoded JSON span (dicts and lists) checked and converted to :class:`OtlpSpan`."""
    return functools.partial(msgspec.convert, type=OtlpSpan)


def base_span(where: str, span: OtlpSpan, failed: bool, error: str, values: dict[str, object] | None) -> Span:
    """The :class:`Span` with the fields every convention reads the same way (ids, name, times:
    a time that is not an integer counts as none, a span without an end ends where it starts)."""
    start = nanoseconds(span.startTimeUnixNano) or 0
    end = nanoseconds(span.endTimeUnixNano)
    # positional, as Span lists its fields (for every span, faster than keywords: 0.015 s of the
    # benchmark's 0.43): kind OTHER, no tool, call id, arguments, result; failed, error; no requests,
    # offered tools, model or agent; the values
    return Span(
        where,
        span.traceId,
        span.spanId,
        span.parentSpanId or None,
        span.name,
        start,
        start if end is None else end,
        OTHER,
        None,
        None,
        None,
        None,
        failed,
        error,
        (),
        (),
        None,
        None,
        values,
    )
