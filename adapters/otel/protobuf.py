"""OTLP protobuf trace files (spec: TRACE-OTLP-PROTOBUF): one ``ExportTraceServiceRequest`` (what
OTLP/HTTP carries, and a ``.pb`` file saved from it), or a stream of them each preceded by its size
in 4 bytes, big-endian (the Collector's ``file`` exporter with ``format: proto``).

Decoded with the OpenTelemetry project's own classes (``opentelemetry-proto``, the extra
``prefix-executability[otlp]``), imported only when a protobuf file is read; nothing here
parses the wire format beyond the 4-byte sizes of the stream (and, to tell the form from a file's
first bytes, its first field's tag). A message of the stream is decoded on its own: memory holds
one message (at most the line limit, HOSTILE-LINE); a single-message file is decoded whole, as
protobuf decodes a message (at most the line limit too).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .. import limits
from ..errors import InputError
from .otlp import Event, OtlpSpan, ReadEvent, Status

if TYPE_CHECKING:
    from ..spans import Span
    from .otlp import Interpret

#: What a missing ``opentelemetry-proto`` is told (one line).
INSTALL = "reading OTLP protobuf needs opentelemetry-proto: pip install 'prefix-executability[otlp]'"


def _classes() -> Any:
    import importlib

    try:
        module = importlib.import_module("opentelemetry.proto.collector.trace.v1.trace_service_pb2")
    except ImportError:
        return None
    return module.ExportTraceServiceRequest


def _decode_error() -> type[Exception]:
    from google.protobuf.message import DecodeError

    return DecodeError


def request_class(where: str) -> Any:
    """``ExportTraceServiceRequest``, or the one-line install hint naming ``where``."""
    found = _classes()
    if found is None:
        raise InputError(where, INSTALL)
    return found


def any_value(value: Any) -> object:
    """An ``AnyValue`` message as a Python value (as :func:`.otlp.value_of` reads the JSON form)."""
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return value.string_value
    if kind == "bool_value":
        return value.bool_value
    if kind == "int_value":
        return value.int_value
    if kind == "double_value":
        return value.double_value
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return _values(value.kvlist_value.values)
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return None


def _values(pairs: Any) -> dict[str, object]:
    """Key-value messages as a dict (a repeated key: the last)."""
    # most values are non-empty strings: read without asking which field is set
    return {kv.key: (value := kv.value).string_value or any_value(value) for kv in pairs}


def _events(events: Any) -> list[Event]:
    return [ReadEvent(event.name, event.time_unix_nano, [], _values(event.attributes)) for event in events]


def _spans(
    requests: Iterable[tuple[str, Any]], interpret: Interpret, wanted: frozenset[str] | None
) -> Iterator[Span]:
    """The spans of ``(place, request)`` pairs, interpreted: each span's ids, name, times, status
    and events, and of its attributes only the keys in ``wanted`` (all when it is ``None``): upb
    makes a Python object of a field only when it is read, and an attribute's value is read only
    when its key is wanted. One generator for all the messages (a stream may hold one span each)."""
    from .otlp import without_id

    for where, request in requests:
        for resource_spans in request.resource_spans:
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    trace_id = span.trace_id.hex()
                    span_id = span.span_id.hex()
                    status = span.status
                    code = status.code
                    events = span.events
                    converted = OtlpSpan(
                        trace_id,
                        span_id,
                        span.parent_span_id.hex() or None,
                        span.name,
                        span.start_time_unix_nano or None,
                        span.end_time_unix_nano or None,
                        [],
                        _events(events) if events else [],
                        Status(code, status.message or None) if code else None,
                    )
                    if not trace_id or not span_id:
                        without_id(where, converted)
                    values: dict[str, object]
                    if wanted is None:
                        values = _values(span.attributes)
                    else:
                        values = {}
                        for kv in span.attributes:
                            key = kv.key
                            if key in wanted:
                                value = kv.value
                                values[key] = value.string_value or any_value(value)
                    yield interpret(where, converted, values)


def _parse(cls: Any, data: bytes | memoryview, where: str) -> Any:
    try:
        return cls.FromString(data)
    except _decode_error() as exc:
        raise InputError(where, f"not an OTLP ExportTraceServiceRequest ({exc}; a truncated file?)") from None
    except RecursionError:
        raise limits.too_deep(where) from None


def _exactly(read: Callable[[int], bytes], size: int) -> bytes:
    """``size`` bytes (fewer only at the end of the input: a stream may return less at a time)."""
    data = read(size)
    if len(data) == size or not data:
        return data
    parts = [data]
    got = len(data)
    while got < size:
        more = read(size - got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


#: Bytes read at a time from a stream of messages (a message longer than a block is read whole).
BLOCK = 1 << 20


def _messages(read: Callable[[int], bytes], path: str, cls: Any) -> Iterator[tuple[str, Any]]:
    """``(place, request)`` of every message of a stream (each after its size in 4 bytes,
    big-endian), read a block at a time and decoded from views of the block (not copied); a size
    beyond the line limit (HOSTILE-LINE), a size or message cut off is one error naming it."""
    limit = limits.max_line_bytes
    data = b""
    view = memoryview(data)
    at = number = offset = 0
    while True:
        if len(data) - at < 4:  # the next size is (partly) in the next block
            data = data[at:] + _exactly(read, max(BLOCK, 4))
            view, at = memoryview(data), 0
            if not data:
                return
        number += 1
        where = f"{path}: message {number} (byte {offset})"
        if len(data) < 4:
            raise InputError(where, "the file ends inside a message size (a truncated file?)")
        size = int.from_bytes(view[at : at + 4], "big")
        if size > limit:
            raise limits.too_long(where, limit)
        at += 4
        end = at + size
        if end > len(data):  # the message goes on in the next block(s): read the rest of it
            data = data[at:] + _exactly(read, max(end - len(data), BLOCK))
            view, at, end = memoryview(data), 0, size
            if len(data) < size:
                raise InputError(
                    where, f"the message is cut off: {len(data)} of {size} bytes (a truncated file?)"
                )
        offset += 4 + size
        yield where, _parse(cls, view[at:end], where)
        at = end


def protobuf_spans(
    read: Callable[[int], bytes],
    path: str,
    interpret: Interpret,
    stream: bool,
    wanted: frozenset[str] | None = None,
) -> Iterator[Span]:
    """TRACE-OTLP-PROTOBUF: every span of a protobuf file (``stream``: 4-byte sizes between
    messages), interpreted (of the attributes, the keys in ``wanted``; ``None``: all); a message
    cut off, too large or not of the schema is one error naming the file and the message (a
    single request is read and decoded here, a stream's messages as the spans are read)."""
    cls = request_class(path)
    if stream:
        return _spans(_messages(read, path, cls), interpret, wanted)
    limit = limits.max_line_bytes
    data = _exactly(read, limit + 1)
    if len(data) > limit:
        raise limits.too_long(path, limit)
    return _spans([(path, _parse(cls, data, path))], interpret, wanted)
