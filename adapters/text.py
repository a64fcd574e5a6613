"""Text from input shown to a person: escaped so that it cannot steer a terminal or split a line
(spec/hostile.md HOSTILE-CONTROL, HOSTILE-ONE-LINE).

Names, reasons and file names come from untrusted files. Printed raw, an escape sequence in a
model name (``ESC ] 0 ; ... BEL``, ``ESC [ 2 J``) sets the terminal's title or clears the screen,
a bidi override reorders what a reader sees, and a newline splits an error or a table row in
two. :func:`printable` writes every such character as a visible escape; :func:`one_line` turns a
message from another library (pyarrow, zipfile, jsonschema) into one line.
"""

from __future__ import annotations

#: Characters escaped by :func:`printable`: C0 controls (including tab and newline), DEL, C1
#: controls, the bidirectional formatting characters (marks, embeddings, overrides, isolates) and
#: the Unicode line and paragraph separators.
CONTROL = frozenset(
    [
        *range(0x00, 0x20),
        0x7F,
        *range(0x80, 0xA0),
        0x061C,
        0x200E,
        0x200F,
        0x2028,
        0x2029,
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
    ]
)

_ESCAPES = {c: (f"\\x{c:02x}" if c <= 0xFF else f"\\u{c:04x}") for c in CONTROL}


def printable(text: str) -> str:
    """``text`` with every :data:`CONTROL` character written as ``\\xNN`` or ``\\uNNNN``
    (Python's escapes): one line, nothing a terminal acts on (HOSTILE-CONTROL)."""
    if text.isascii() and text.isprintable():
        return text
    return text.translate(_ESCAPES)


def printable_lines(text: str) -> str:
    """A text of several lines (a rendered report) with each line made :func:`printable`: its
    line breaks are kept, every other control character is escaped (HOSTILE-CONTROL)."""
    if text.isascii() and text.replace("\n", "").isprintable():
        return text
    return "\n".join(printable(line) for line in text.split("\n"))


def one_line(text: str) -> str:
    """A message from another library as one line: runs of white space (newlines included)
    become one space, and the ends are stripped (HOSTILE-ONE-LINE)."""
    return " ".join(text.split())


__all__ = ["CONTROL", "one_line", "printable", "printable_lines"]
