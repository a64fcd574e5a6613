"""Regular expressions from untrusted text, matched in linear time (spec/hostile.md HOSTILE-REGEX).

A pattern written in a log (a tool schema's ``pattern`` or ``patternProperties``) or given by a
user (``--label-rules``, ``--error-pattern``) is compiled with RE2 (``google-re2``), whose matching
time is linear in the text and whose memory is bounded, instead of Python's backtracking ``re``:
``^(a+)+$`` on forty ``a``s and a ``!`` takes microseconds, not minutes.

RE2 reads Python's syntax except the features that need backtracking: lookahead and lookbehind
(``(?=``, ``(?!``, ``(?<=``, ``(?<!``), backreferences (``\\1``, ``(?P=name)``), possessive and
atomic groups, ``\\Z`` (write ``\\z``), and repetition counts above 1,000. A pattern that uses one
is refused with one line naming it and RE2's reason. ``\\d``, ``\\w``, ``\\s`` and ``\\b`` are
ASCII classes in RE2 (as in JSON Schema's ECMA-262 dialect); ``(?i)`` folds case in Unicode.
"""

from __future__ import annotations

from typing import Any

import attrs
import re2  # google-re2: typed here, the package ships no stubs

from .errors import InputError

#: The memory RE2 may use for one compiled pattern (its default, 8 MiB): a pattern that needs
#: more is refused ("pattern too large").
MAX_PATTERN_MEMORY = 8 << 20


class PatternError(ValueError):
    """A pattern RE2 cannot compile: the message says why."""


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would write its own line to stderr
    options.max_mem = MAX_PATTERN_MEMORY
    return options


@attrs.frozen(slots=True)
class Pattern:
    """A compiled linear-time pattern: ``search(text)`` says whether it occurs in ``text``."""

    pattern: str
    _compiled: Any = attrs.field(repr=False, eq=False)

    def search(self, text: str) -> bool:
        try:
            return self._compiled.search(text) is not None
        except UnicodeEncodeError:  # a lone surrogate: matched as its escape, as HOSTILE-TEXT keeps it
            escaped = text.encode("utf-8", "backslashreplace").decode("utf-8")
            return self._compiled.search(escaped) is not None


def compile_pattern(text: str) -> Pattern:
    """``text`` compiled with RE2; :class:`PatternError` saying why when it cannot be."""
    try:
        compiled = re2.compile(text, _options())
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "not a valid pattern"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "backslashreplace")
        raise PatternError(
            f"{reason} (patterns are matched in linear time with RE2: no lookaround, "
            "backreferences or possessive repetition; HOSTILE-REGEX)"
        ) from None
    except (TypeError, ValueError) as exc:  # a lone surrogate cannot be given to RE2 as UTF-8
        raise PatternError(f"not a valid pattern: {exc}") from None
    return Pattern(text, compiled)


def checked_pattern(text: str, where: str, what: str) -> Pattern:
    """:func:`compile_pattern`, with an :class:`InputError` ``WHERE: WHAT is not a valid regular
    expression: <why>`` for a pattern RE2 cannot compile."""
    try:
        return compile_pattern(text)
    except PatternError as exc:
        raise InputError(where, f"{what} is not a valid regular expression: {exc}") from None


__all__ = ["MAX_PATTERN_MEMORY", "Pattern", "PatternError", "checked_pattern", "compile_pattern"]
