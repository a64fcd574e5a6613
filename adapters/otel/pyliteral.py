"""A reader of Python literal text (``repr`` of dicts, lists, strings, numbers, ``None``, ``True``,
``False``), for TRACE-OTEL-REPR: an instrumentation that writes a model's message as its Python
``repr`` instead of JSON. It accepts a subset of what ``ast.literal_eval`` accepts and gives the
same value for it (tests/test_traces.py checks both on generated values), nothing is evaluated,
and it is several times faster than ``ast.literal_eval`` (no compilation to a syntax tree).
Anything else -- tuples, sets, bytes, expressions, nesting deeper than :data:`MAX_DEPTH` -- is
``ValueError``.
"""

from __future__ import annotations

import re

MAX_DEPTH = 100
_TOKEN = re.compile(
    r"""\s*(?:
        (?P<s>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
      | (?P<p>[{}\[\]:,])
      | (?P<c>None|True|False)(?![\w.])
      | (?P<n>-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)(?![\w.])
    )""",
    re.VERBOSE | re.DOTALL,
)
_CONSTANTS = {"None": None, "True": True, "False": False}


def _string(token: str) -> str:
    body = token[1:-1]
    if "\\" not in body:
        return body
    # Python's escapes (\\ \' \" \n \t \xhh \uhhhh \Uhhhhhhhh ...) through 'unicode_escape', with
    # the other characters first written as escapes themselves (the codec reads Latin-1).
    return body.encode("latin-1", "backslashreplace").decode("unicode_escape")


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    position = 0
    end = len(text.rstrip())
    while position < end:
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise ValueError(f"not a Python literal at character {position}")
        kind = match.lastgroup
        assert kind is not None
        out.append((kind, match.group(kind)))
        position = match.end()
    return out


def literal(text: str) -> object:
    """The value of the Python literal ``text`` (``ValueError`` when it is none of the subset)."""
    tokens = _tokens(text)
    value, index = _value(tokens, 0, 0)
    if index != len(tokens):
        raise ValueError("text after the literal")
    return value


def _value(tokens: list[tuple[str, str]], index: int, depth: int) -> tuple[object, int]:
    if index >= len(tokens):
        raise ValueError("the literal ends early")
    kind, text = tokens[index]
    if kind == "s":
        # adjacent strings are one string, as in Python ('a' 'b' == 'ab')
        parts = [_string(text)]
        index += 1
        while index < len(tokens) and tokens[index][0] == "s":
            parts.append(_string(tokens[index][1]))
            index += 1
        return "".join(parts), index
    if kind == "c":
        return _CONSTANTS[text], index + 1
    if kind == "n":
        is_float = any(c in text for c in ".eE")
        return (float(text) if is_float else int(text)), index + 1
    if depth >= MAX_DEPTH:
        raise ValueError("nested too deeply")
    if text == "[":
        items: list[object] = []
        index += 1
        while True:
            if index < len(tokens) and tokens[index] == ("p", "]"):
                return items, index + 1
            item, index = _value(tokens, index, depth + 1)
            items.append(item)
            index = _separator(tokens, index, "]")
    if text == "{":
        mapping: dict[object, object] = {}
        index += 1
        while True:
            if index < len(tokens) and tokens[index] == ("p", "}"):
                return mapping, index + 1
            key, index = _value(tokens, index, depth + 1)
            if isinstance(key, list | dict):
                raise ValueError("an unhashable dict key")
            if index >= len(tokens) or tokens[index] != ("p", ":"):
                raise ValueError("expected ':' in a dict")
            mapping[key], index = _value(tokens, index + 1, depth + 1)
            index = _separator(tokens, index, "}")
    raise ValueError(f"unexpected {text!r}")


def _separator(tokens: list[tuple[str, str]], index: int, close: str) -> int:
    """After an item: ``,`` (the next item, or the closing bracket) or the closing bracket."""
    if index < len(tokens) and tokens[index] == ("p", ","):
        return index + 1
    if index < len(tokens) and tokens[index] == ("p", close):
        return index
    raise ValueError(f"expected ',' or {close!r}")
