"""A reader of Python literal text (``repr`` of dicts, lists, strings, numbers, ``None``, ``True``,
``False``), for TRACE-OTEL-REPR: an instrumentation that writes a model's message as its Python
``repr`` instead of JSON.

It reads exactly a subset of what ``ast.literal_eval`` reads, and gives the same value for it
(tests/test_traces.py checks both on generated values and on generated texts built from pieces
that Python reads in more than one way); nothing is evaluated. Anything else -- tuples, sets,
bytes, expressions, comments, adjacent strings (``'a' 'b'``; ``''''`` is not two strings in
Python), an integer with a leading zero, characters Python refuses in its source (NUL, a lone
surrogate, a ``\\r`` in a string), nesting deeper than :data:`MAX_DEPTH` -- is ``ValueError``.

How: one regular expression checks that the whole text is a sequence of tokens (atomic groups:
linear time on any text), a second one lists them (both in C), and one loop over the tokens builds
the value; a token's kind is its first character. That is several times faster than
``ast.literal_eval`` (no compilation to a syntax tree) and than a tokenizer loop in Python.
"""

from __future__ import annotations

import re

MAX_DEPTH = 100
#: Between tokens: what Python's tokenizer skips there (inside brackets a line end is a blank too;
#: before or after the literal one is refused, :func:`literal`).
_BLANK = r"[ \t\f\r\n]"
#: A string: the quote, runs of body characters (not the quote, a backslash, a line end, NUL or a
#: lone surrogate) between escapes, the quote. An escape is a backslash and one character that is
#: none of CR, NUL, a surrogate (a backslash before CR is a line continuation in Python but not in
#: the 'unicode_escape' codec). Possessive runs: no backtracking.
_BODY = r"[^{q}\\\n\r\x00\ud800-\udfff]*+"
_ESCAPED = r"\\[^\r\x00\ud800-\udfff]"
_STRING = "|".join(f"{q}{_BODY.format(q=q)}(?:{_ESCAPED}{_BODY.format(q=q)})*+{q}" for q in "'\"")
#: One token: a bracket or separator, a string, a constant, a decimal number (ASCII digits; not
#: followed by a letter, digit, ``_`` or ``.``: ``1x``, ``1.2.3`` and ``1j`` are no tokens). Each
#: alternative reads its token in one way only, so a text is a sequence of tokens in one way only.
_ONE = (
    rf"[{{}}\[\]:,]|{_STRING}|(?:None|True|False)(?![0-9A-Za-z_.])"
    r"|-?(?:[0-9]++(?:\.[0-9]*+)?|\.[0-9]++)(?:[eE][+-]?[0-9]++)?(?![0-9A-Za-z_.])"
)
#: The whole text is tokens and blanks (checked first: on any text in linear time, as every
#: repetition is possessive), then the tokens are listed (contiguous: the search never skips).
_WHOLE = re.compile(rf"(?:{_BLANK}*+(?:{_ONE}))*+{_BLANK}*+")
_TOKEN = re.compile(rf"{_BLANK}*+({_ONE})")
_CONSTANTS: dict[str, object] = {"None": None, "True": True, "False": False}
_END = "\x00"
#: A backslash and an octal number or the character after it, in a string body (read left to
#: right, so an escaped backslash is one pair).
_ESCAPE = re.compile(r"\\([0-7]{1,3}|.)", re.DOTALL)


#: The characters after a backslash that make an escape in Python and in 'unicode_escape' alike.
_ESCAPES = frozenset("\n\\'\"abfnrtv01234567xuUN")


def _unknown_escape(match: re.Match[str]) -> str:
    after = match.group(1)
    if after[0] in "01234567":
        # an octal escape, as Python reads it (up to three digits, to 0o777), written as \uXXXX:
        # the codec warns of one beyond 0o377
        return f"\\u{int(after, 8):04x}"
    # Python keeps the backslash of an unknown escape (\q, \8, \é, \ሴ); so does the codec, with a
    # warning, and not for a character beyond Latin-1 (it would read that one's own \uXXXX
    # escape): the backslash is escaped here instead
    return match.group(0) if after in _ESCAPES else "\\\\" + after


def _string(token: str) -> str:
    body = token[1:-1]
    if "\\" not in body:
        return body
    # Python's escapes (\\ \' \" \n \t \xhh \uhhhh \Uhhhhhhhh \N{...} ...) through 'unicode_escape',
    # with the other characters first written as escapes themselves (the codec reads Latin-1).
    body = _ESCAPE.sub(_unknown_escape, body)
    return body.encode("latin-1", "backslashreplace").decode("unicode_escape")


def _number(token: str) -> int | float:
    if "." in token or "e" in token or "E" in token:
        return float(token)
    digits = token.removeprefix("-")
    if len(digits) > 1 and digits[0] == "0" and digits.strip("0"):
        raise ValueError(f"an integer with a leading zero: {token!r}")
    return int(token)


def _scalar(token: str) -> object:
    first = token[0]
    if first == "'" or first == '"':
        return _string(token)
    if token in _CONSTANTS:
        return _CONSTANTS[token]
    if first in "-.0123456789":
        return _number(token)
    raise ValueError("the literal ends early" if token == _END else f"unexpected {token!r}")


def literal(text: str) -> object:
    """The value of the Python literal ``text`` (``ValueError`` when it is none of the subset)."""
    if _WHOLE.fullmatch(text) is None:
        raise ValueError("not a sequence of Python literal tokens")
    outside = text.strip(" \t\f")
    if outside.startswith(("\n", "\r")) or outside.endswith(("\n", "\r")):
        # a line end outside the brackets: Python then reads the next line's blanks as an indent
        raise ValueError("a line end before or after the literal")
    tokens = _TOKEN.findall(text)
    count = len(tokens)
    if not count:
        raise ValueError("no literal")
    # two tokens no text has (NUL is no token) end the list: reading past the end meets them and
    # fails as any unexpected token does, so no step checks the index against the end
    tokens += (_END, _END)
    opened: list[list[object] | dict[object, object]] = []  # the lists and dicts being read
    keys: list[object] = []  # the key of each open dict, waiting for its value
    index = 0
    while True:
        # a value starts at tokens[index]
        token = tokens[index]
        index += 1
        value: object
        first = token[0]
        if first == "'" or first == '"':  # most tokens: a string
            value = token[1:-1] if "\\" not in token else _string(token)
        elif first == "[" or first == "{":
            if len(opened) >= MAX_DEPTH:
                raise ValueError("nested too deeply")
            if tokens[index] == ("]" if first == "[" else "}"):
                index += 1
                value = [] if first == "[" else {}
            else:
                opened.append([] if first == "[" else {})
                if first == "{":
                    index = _key(tokens, index, keys)
                continue
        else:
            value = _scalar(token)
        # a whole value: into its container, then past what follows it
        while True:
            if not opened:
                if index != count:
                    raise ValueError("text after the literal")
                return value
            top = opened[-1]
            if isinstance(top, list):
                top.append(value)
                close = "]"
            else:
                top[keys.pop()] = value
                close = "}"
            token = tokens[index]
            index += 1
            if token == ",":
                if tokens[index] == close:
                    index += 1  # a trailing comma
                elif close == "}":
                    index = _key(tokens, index, keys)
                    break
                else:
                    break
            elif token != close:
                raise ValueError(f"expected ',' or {close!r}, got {token!r}")
            value = opened.pop()


def _key(tokens: list[str], index: int, keys: list[object]) -> int:
    """A dict key at ``tokens[index]`` and its ``:``; the index after them."""
    token = tokens[index]
    if token == "[" or token == "{":
        raise ValueError("an unhashable dict key")
    keys.append(_scalar(token))
    if tokens[index + 1] != ":":
        raise ValueError("expected ':' in a dict")
    return index + 2
