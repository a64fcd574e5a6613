"""One formatting path for every printed number (spec: REP-ROUND, API-CONSISTENT).

Every table prefixexec prints (``score``'s text, ``compare``'s, the leaderboard's text, Markdown,
LaTeX, the report's tables and pages, the notebook's HTML) writes a ratio, an interval or a
difference through these functions, so that one exact value gives the same characters
everywhere. A value is rounded half away from zero on its exact value: a ``Fraction`` as it is,
a JSON ``exact`` string (``"1201/200"``) as the ratio it names, a float as the exact rational of
its double (an interval's end is a double: it has no other exact value).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

#: What an undefined value prints (CONV-UNDEFINED: RR without an eligible rollout).
NA = "n/a"
#: Decimals of a printed ratio, and of a printed difference (``compare``).
DIGITS = 2
DIFF_DIGITS = 3

Number = Fraction | float | int | str


def exact_value(value: Number) -> Fraction | float:
    """``value`` as a number: a JSON ``exact`` string (``"11/52"``) as its Fraction."""
    if isinstance(value, str):
        return Fraction(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return Fraction(value)
    return value


def half_up(value: Fraction | float, digits: int) -> str:
    """``value`` rounded half away from zero to ``digits`` decimals, on its exact value (REP-ROUND).

    A float is taken as the exact rational of its double, so 6.625 prints ``6.63`` and 0.125
    prints ``0.13`` (Python's ``format`` rounds the same ties to even: ``6.62``, ``0.12``). A
    value that rounds to zero prints without a sign (never ``-0.00``).
    """
    # floor(|n/d| 10^digits + 1/2) = (2 |n| 10^digits + d) // (2 d), in integers: the exact
    # ratio of a float is as_integer_ratio() (Fraction arithmetic here was most of printing a
    # table of 200,000 conditions, #27).
    num, den = (
        (value.numerator, value.denominator) if isinstance(value, Fraction) else value.as_integer_ratio()
    )
    scale = 10**digits
    units = (2 * abs(num) * scale + den) // (2 * den)
    sign = "-" if num < 0 and units != 0 else ""
    whole, part = divmod(units, scale)
    return f"{sign}{whole}.{part:0{digits}d}" if digits > 0 else f"{sign}{whole}"


def number(value: Number | None, digits: int = DIGITS) -> str:
    """A ratio printed to ``digits`` decimals, ``n/a`` when undefined."""
    return NA if value is None else half_up(exact_value(value), digits)


def interval(pair: Sequence[float | None] | None, digits: int = DIGITS) -> str:
    """``[0.63, 0.76]``, or the empty string without an interval."""
    if pair is None or pair[0] is None or pair[1] is None:
        return ""
    return f"[{half_up(pair[0], digits)}, {half_up(pair[1], digits)}]"


def with_interval(value: Number | None, pair: Sequence[float | None] | None, digits: int = DIGITS) -> str:
    """``0.21 [0.12, 0.34]``: the value and, when both are defined, its interval."""
    text = number(value, digits)
    shown = interval(pair, digits)
    return text if value is None or not shown else f"{text} {shown}"


def signed(value: Number | None, digits: int = DIFF_DIGITS) -> str:
    """A difference with its sign (``+0.125``, ``-0.040``, ``+0.000``), ``n/a`` when undefined."""
    if value is None:
        return NA
    text = half_up(exact_value(value), digits)
    return text if text.startswith("-") else f"+{text}"


def signed_interval(pair: Sequence[float | None] | None, digits: int = DIFF_DIGITS) -> str:
    """``[-0.040, +0.125]``, or the empty string without an interval."""
    if pair is None or pair[0] is None or pair[1] is None:
        return ""
    return f"[{signed(pair[0], digits)}, {signed(pair[1], digits)}]"


def p_value(p: float, resamples: int) -> str:
    """A bootstrap p-value (CMP-PVALUE): ``p=0.034``, or ``p<0.0002`` when no resample of
    ``resamples`` reached the observed difference (the smallest p it can tell, 2/resamples)."""
    return f"p<{2 / resamples:.2g}" if p == 0 else f"p={p:.3f}"


def significant(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits (an exact test's p-value: ``0.00391``)."""
    return f"{value:.{digits}g}"


def shortest(value: float) -> str:
    """A float that has no printed precision of its own (a cell of a ``--json`` document shown
    in a notebook): the shortest text that reads back as the same double, the characters the
    ``--json`` document holds (``0.5416666666666666``, ``NaN``)."""
    import json

    return json.dumps(value)


def count(n: int, singular: str, plural: str | None = None) -> str:
    """``1 system``, ``9 systems``: a count with its noun in the right number."""
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"
