"""The forms of an OTLP file, told apart by its first bytes and read span by span (spec:
TRACE-OTLP-FORMS): JSON Lines (:func:`.otlp.line_spans`), JSON documents (:mod:`.document`) and
protobuf (:mod:`.protobuf`), plain or gzip (TRACE-GZIP)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, TextIO, cast

import msgspec

from .. import limits
from ..detect import protobuf_form
from ..errors import InputError
from ..spans import STDIN, Span, input_lines, stream_lines, trace_stream
from .document import document_spans, text_blocks
from .otlp import EXPECTED, Interpret, attributes, line_spans, span_decoder, without_id

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


def otlp_spans(
    paths: Sequence[str], interpret: Interpret, reads: frozenset[str] | None = None
) -> Iterator[Span]:
    """Every span of the OTLP files ``paths`` (plain or gzip; JSON Lines, JSON documents or
    protobuf: TRACE-OTLP-FORMS), interpreted; ``reads``: the attributes ``interpret`` reads (a
    protobuf span's other attributes are not read; ``None``: it may read any)."""
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
                yield from _document_spans(document_spans(text_blocks(replay.read, path), path), interpret)
            else:
                from .protobuf import protobuf_spans

                yield from protobuf_spans(replay.read, path, interpret, form == "proto-stream", reads)


def _stdin_spans(interpret: Interpret) -> Iterator[Span]:
    """Standard input, as text: JSON documents when its first line starts one (:func:`otlp_form`),
    else JSON Lines (protobuf is read from files only)."""
    from ..detect import _Prefixed
    from .document import BLOCK

    limits.check_stdin()
    first = sys.stdin.readline(limits.max_line_bytes + 1)
    stream = _Prefixed(first, sys.stdin)
    if otlp_form(first.encode("utf-8", "surrogatepass")) == "document":
        yield from _document_spans(document_spans(lambda: stream.read(BLOCK), "<stdin>"), interpret)
    else:
        sys.stdin = cast(TextIO, stream)
        yield from line_spans(input_lines(STDIN, EXPECTED), interpret)


def _document_spans(found: Iterable[tuple[str, str, object]], interpret: Interpret) -> Iterator[Span]:
    """TRACE-OTLP-DOCUMENT: each decoded span of a document checked against :class:`OtlpSpan`
    (refused naming its line and place) and interpreted."""
    convert = span_decoder()
    for where, place, value in found:
        try:
            span = convert(value)
        except msgspec.ValidationError as exc:
            raise InputError(where, f"{place}: not an OTLP span: {exc}") from None
        if not span.traceId or not span.spanId:
            without_id(f"{where}: {place}", span)
        yield interpret(where, span, attributes(span.attributes))
