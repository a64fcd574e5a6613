"""The OTLP JSON container (OTLP JSON Lines: one ``{"resourceSpans": [...]}`` document per line), decoded
with typed msgspec structs: the shared input of the ``otel`` and ``openinference`` adapters
(spec: TRACE-OTLP)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import cache

import msgspec

from ..errors import InputError
from ..spans import Span, input_lines

EXPECTED = "an OTLP JSON Lines file of resourceSpans"


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


class Resource(msgspec.Struct, gc=False):
    attributes: list[KeyValue] = []


class ResourceSpans(msgspec.Struct, gc=False):
    resource: Resource | None = None
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


def failed(status: Status | None) -> bool:
    """Span status ERROR (``2`` or ``STATUS_CODE_ERROR``)."""
    return status is not None and status.code in (2, "2", "STATUS_CODE_ERROR", "ERROR")


#: ``interpret(where, span, attributes, resource attributes) -> Span``: a convention's reading.
Interpret = Callable[[str, OtlpSpan, dict[str, object], dict[str, object]], Span]


def otlp_spans(paths: Sequence[str], interpret: Interpret) -> Iterator[Span]:
    """Every span of the OTLP JSON Lines files ``paths`` (plain or gzip), interpreted.

    Refused with one error naming the line: a line that is not JSON (a truncated line), not an
    object with ``resourceSpans``, a span without a trace id or span id (TRACE-STRUCTURE).
    """
    decoder = _decoder()
    for path in paths:
        for where, line in input_lines(path, EXPECTED):
            try:
                document = decoder.decode(line)
            except msgspec.ValidationError as exc:
                raise InputError(where, f"not an OTLP span document: {exc}") from None
            except msgspec.DecodeError as exc:
                raise InputError(where, f"not valid JSON ({exc}; a truncated line?)") from None
            if document.resourceSpans is None:
                raise InputError(where, "expected an OTLP JSON object with 'resourceSpans'")
            for r, resource_spans in enumerate(document.resourceSpans):
                resource = attributes(resource_spans.resource.attributes) if resource_spans.resource else {}
                for s, scope in enumerate(resource_spans.scopeSpans):
                    for n, span in enumerate(scope.spans):
                        if not span.traceId or not span.spanId:
                            here = f"{where}: resourceSpans[{r}].scopeSpans[{s}].spans[{n}]"
                            missing = "traceId" if not span.traceId else "spanId"
                            raise InputError(here, f"span {span.name!r} has no {missing} (TRACE-STRUCTURE)")
                        yield interpret(where, span, attributes(span.attributes), resource)


def base_span(where: str, span: OtlpSpan, failed: bool, error: str, values: dict[str, object] | None) -> Span:
    """The :class:`Span` with the fields every convention reads the same way (ids, name, times)."""
    start = nanoseconds(span.startTimeUnixNano) or 0
    end = nanoseconds(span.endTimeUnixNano)
    return Span(
        where,
        span.traceId,
        span.spanId,
        span.parentSpanId or None,
        span.name,
        start,
        start if end is None else end,
        failed=failed,
        error=error,
        values=values,
    )
