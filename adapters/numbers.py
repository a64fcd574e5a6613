"""Numbers from untrusted text, at any size (spec: HOSTILE-BIGINT, HOSTILE-DIGITS).

Python refuses to convert an integer of more than 4,300 decimal digits to or from text
(``sys.get_int_max_str_digits()``: the conversion is quadratic), and ``float()`` of an integer
beyond the range of a double raises ``OverflowError``. Input may hold such integers anywhere, and
exact results may grow past the limit (an AUC-PEC over many distinct prime horizons, an exact
McNemar p-value of 1/2^14299). The helpers here are the one place that decides what happens:

* :func:`json_fault` words the ``ValueError`` of a JSON reader (a :class:`json.JSONDecodeError`
  as it is; the integer-conversion limit without its advice to call ``sys.set_int_max_str_digits``);
* :func:`as_float` turns an integer of any size into a double, saturating at +-infinity, so that a
  score of 10**400 compares above every threshold instead of ending in a traceback;
* :func:`exact_text` writes an integer or a :class:`~fractions.Fraction` exactly at any size
  (through :mod:`decimal`, whose conversion has no digit limit and is not quadratic);
* :func:`ascii_digits` is ``str.isdigit()`` for ASCII only: ``"²".isdigit()`` is true, but
  ``int("²")`` raises.
"""

from __future__ import annotations

import decimal
import json
import math
import sys
from fractions import Fraction

#: Python's limit on the decimal digits of an integer converted to or from text.
INT_DIGITS = sys.get_int_max_str_digits() or 4300


def json_fault(exc: Exception) -> str:
    """What is wrong, in one line, for the ``ValueError`` a JSON parser raised."""
    text = str(exc)
    if not isinstance(exc, json.JSONDecodeError) and "integer string conversion" in text:
        return f"an integer of more than {INT_DIGITS} digits (beyond Python's limit for reading numbers)"
    return text


def as_float(value: int | float) -> float:
    """``float(value)``, with an integer beyond the range of a double taken as +-infinity."""
    if isinstance(value, float):
        return value
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _integer_text(value: int) -> str:
    if value.bit_length() < 14_000:  # fewer than 4,300 decimal digits: str() is fine and faster
        return str(value)
    return format(decimal.Decimal(value), "f")


def exact_text(value: Fraction | int) -> str:
    """``str(value)`` at any size: ``"139/200"``, ``"7"``, and a numerator of 5,000 digits too."""
    if isinstance(value, int):
        return _integer_text(value)
    text = _integer_text(value.numerator)
    return text if value.denominator == 1 else f"{text}/{_integer_text(value.denominator)}"


def exact_value(text: str) -> Fraction:
    """The inverse of :func:`exact_text`: ``"a/b"`` or ``"a"`` read back at any size."""
    numerator, _, denominator = text.partition("/")
    return Fraction(_integer(numerator), _integer(denominator) if denominator else 1)


def _integer(text: str) -> int:
    text = text.strip()
    if not (ascii_digits(text.removeprefix("-"))):
        raise ValueError(f"not an integer: {text[:40]!r}")
    return int(text) if len(text) < 4000 else int(decimal.Decimal(text))


def ascii_digits(text: str) -> bool:
    """True when ``text`` is one or more of the ASCII digits 0-9 (what ``int()`` reads as such)."""
    return text.isascii() and text.isdigit()


__all__ = ["INT_DIGITS", "as_float", "ascii_digits", "exact_text", "exact_value", "json_fault"]
