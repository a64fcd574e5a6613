"""The OTLP JSON container (``{"resourceSpans": [...]}``), decoded with typed msgspec structs: the
shared input of the ``otel`` and ``openinference`` adapters (spec: TRACE-OTLP); the forms of a file
(JSON Lines, JSON documents, protobuf) are told apart and read in :mod:`.forms`."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache

import msgspec

from ..errors import InputError
from ..spans import OTHER, Span

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


class ReadEvent(Event, gc=False):
    """An event whose attributes are read already, as :func:`attributes` reads them (the protobuf
    reader's: no struct is made for each value to be read again); not a field of the JSON form."""

    values: dict[str, object] = {}


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


def event_attributes(event: Event) -> dict[str, object]:
    """The attributes of an event as a dict (a :class:`ReadEvent`'s are read already)."""
    return event.values if isinstance(event, ReadEvent) else attributes(event.attributes)


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
