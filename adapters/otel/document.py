"""OTLP JSON as whole documents (``{"resourceSpans": [...]}`` over any number of lines, compact or
pretty-printed, as trace UIs download it), read span by span (spec: TRACE-OTLP-DOCUMENT).

Memory is bounded by the largest single span (or other member value), not by the document: the
text is read in blocks; the reader walks the few levels of structure above the spans itself
(``resourceSpans[].scopeSpans[].spans[]``, every other member decoded and dropped) and hands
each span's text to the standard library's C decoder (``json.JSONDecoder.raw_decode``); the
caller (:mod:`.forms`) checks its answer against the span struct with ``msgspec.convert``. A
value that does not end in the text read so far is read again with twice the text, up to the line
limit (HOSTILE-LINE), so reading is linear.
A file may hold several documents one after another (JSON Lines is the special case); a place
is named ``FILE:LINE`` of where it starts.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterator

from .. import limits
from ..errors import InputError

#: Text read at a time.
BLOCK = 1 << 20
_BLANK = re.compile(r"[ \t\r\n]*")
_BLANKS = " \t\r\n"
#: A key without escapes or control characters (the JSON decoder reads any other).
_SIMPLE_KEY = re.compile(r'"([^"\\\x00-\x1f]*)"')
#: An error this far before the end of the text read is the text's own, not a cut-off value.
_MARGIN = 16


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_no_constant)


class _Window:
    """The part of a text stream being read: ``buf[pos:]`` not read yet, with the line number
    of ``buf[counted]`` kept up to date (newlines counted once each)."""

    def __init__(self, read: Callable[[], str], name: str) -> None:
        self.read = read
        self.name = name
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.line = 1
        self.counted = 0

    def more(self) -> bool:
        """Append the next block (the text before ``pos`` dropped); False at the end."""
        if self.eof:
            return False
        if self.pos:
            self.line += self.buf.count("\n", self.counted, self.pos)
            self.buf = self.buf[self.pos :]
            self.pos = self.counted = 0
        chunk = self.read()
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def where(self, at: int | None = None) -> str:
        """``FILE:LINE`` of ``buf[at]`` (default: ``pos``; never before the last place asked)."""
        at = self.pos if at is None else at
        if at > self.counted:
            self.line += self.buf.count("\n", self.counted, at)
            self.counted = at
        return f"{self.name}:{self.line}"

    def peek(self) -> str:
        """The next character that is not a JSON blank (``""`` at the end)."""
        buf, pos = self.buf, self.pos
        if pos < len(buf) and buf[pos] not in _BLANKS:  # most often: no blank to skip
            return buf[pos]
        while True:
            match = _BLANK.match(self.buf, self.pos)
            assert match is not None  # the pattern matches the empty text
            self.pos = match.end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def expect(self, chars: str, what: str) -> str:
        """Past the next character, which must be one of ``chars`` (else an error naming ``what``)."""
        found = self.peek()
        if not found or found not in chars:
            shown = repr(found) if found else "the end of the file"
            raise InputError(self.where(), f"expected {what}, found {shown} (a truncated document?)")
        self.pos += 1
        return found

    def _too_long(self, size: int) -> None:
        """HOSTILE-LINE: a value of ``size`` characters at ``pos`` is refused beyond the limit."""
        limit = limits.max_line_bytes
        if size > limit:
            raise InputError(
                self.where(),
                f"a value longer than {limit} characters (HOSTILE-LINE; raise it with --max-line-bytes)",
            )

    def _grow(self) -> bool:
        """Read until the unread text is twice as long (or the input ends): False at the end. A
        value that goes on past the limit is refused first (HOSTILE-LINE)."""
        self._too_long(len(self.buf) - self.pos)
        wanted = 2 * max(len(self.buf) - self.pos, BLOCK)
        grew = False
        while len(self.buf) - self.pos < wanted and self.more():
            grew = True
        return grew

    def value(self) -> object:
        """The JSON value at ``pos`` (a blank first is skipped), ``pos`` moved past it."""
        if not self.peek():
            raise InputError(
                self.where(), "expected a value, found the end of the file (a truncated document?)"
            )
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                cut = exc.pos + _MARGIN >= len(self.buf) or exc.msg.startswith("Unterminated string")
                if cut and self._grow():
                    continue
                raise InputError(
                    self.where(exc.pos), f"not valid JSON ({exc.msg}; a truncated document?)"
                ) from None
            except RecursionError:
                raise limits.too_deep(self.where()) from None
            except ValueError as exc:  # NaN, Infinity; an integer of too many digits
                raise InputError(self.where(), f"not valid JSON ({exc})") from None
            if end == len(self.buf) and self._grow():
                continue  # a number may go on in the next block
            self._too_long(end - self.pos)
            self.pos = end
            return value

    def members(self, what: str) -> Iterator[str]:
        """The keys of the object at ``pos``; the caller reads each key's value before the next."""
        self.expect("{", what)
        if self.peek() == "}":
            self.pos += 1
            return
        while True:
            if self.peek() != '"':
                self.expect('"', f"a key in {what}")
            simple = _SIMPLE_KEY.match(self.buf, self.pos)
            if simple is not None:  # most keys: no escape, read without the decoder
                key: object = simple.group(1)
                self.pos = simple.end()
            else:
                key = self.value()
            assert isinstance(key, str)
            self.expect(":", f"':' after the key {key!r}")
            yield key
            if self.expect(",}", f"',' or '}}' in {what}") == "}":
                return

    def items(self, what: str) -> Iterator[int]:
        """The indexes of the list at ``pos``; the caller reads each element before the next."""
        self.expect("[", f"{what} to be a list")
        if self.peek() == "]":
            self.pos += 1
            return
        index = 0
        while True:
            yield index
            index += 1
            if self.expect(",]", f"',' or ']' in {what}") == "]":
                return


def text_blocks(read: Callable[[int], bytes], name: str) -> Callable[[], str]:
    """Blocks of a binary stream as UTF-8 text (a character split between blocks joined)."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    first = True

    def block() -> str:
        nonlocal first
        data = read(BLOCK)
        try:
            text = decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise InputError(name, f"not UTF-8 text ({exc.reason})") from None
        if first:
            text, first = text.removeprefix("\ufeff"), False
        return text

    return block


def document_spans(blocks: Callable[[], str], name: str) -> Iterator[tuple[str, str, object]]:
    """``(FILE:LINE, place, span)`` of every span of the OTLP JSON documents in a text (``blocks()``:
    its next block, ``""`` at the end): the span as decoded JSON, its place
    (``resourceSpans[r].scopeSpans[s].spans[n]``) and the line where it starts
    (TRACE-OTLP-DOCUMENT); the caller checks and interprets it."""
    window = _Window(blocks, name)
    while window.peek():
        start = window.where()
        found = False
        seen: list[str] = []
        for key in window.members("an OTLP JSON object with 'resourceSpans'"):
            if key != "resourceSpans":
                seen.append(key)
                window.value()
                continue
            found = True
            for r in window.items("'resourceSpans'"):
                for key in window.members(f"resourceSpans[{r}]"):
                    if key != "scopeSpans":
                        window.value()  # the resource: not read (TRACE-OTLP)
                        continue
                    for s in window.items(f"resourceSpans[{r}].{key}"):
                        for key2 in window.members(f"resourceSpans[{r}].scopeSpans[{s}]"):
                            if key2 != "spans":
                                window.value()
                                continue
                            for n in window.items(f"resourceSpans[{r}].scopeSpans[{s}].spans"):
                                window.peek()  # the span's first character: its line
                                where = window.where()
                                yield where, f"resourceSpans[{r}].scopeSpans[{s}].spans[{n}]", window.value()
        if not found:
            keys = ", ".join(repr(k) for k in seen[:8]) + (", ..." if len(seen) > 8 else "") or "none"
            raise InputError(start, f"expected an OTLP JSON object with 'resourceSpans' (its keys: {keys})")
