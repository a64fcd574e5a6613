"""Provenance: whether a value occurred earlier in what the agent saw (TAU-ENTITY-NORM, BFCL-MISS-PARAM).

One rule serves every adapter that asks where an argument value came from: a value is grounded
when it occurs, as a whole token after normalisation, in a text the agent saw before the call
(the user's messages and the results of its earlier tool calls). tau-bench uses it to tell an
invented identifier from a missing one (TAU-ENTITY); BFCL uses it for the withheld parameter of
miss_param and for placeholder values (BFCL-MISS-PARAM, BFCL-PLACEHOLDER); the MCP guard asks it
of every identifier argument, over a session that keeps growing, through :class:`SeenIndex`
(GUARD-PROVENANCE-INDEX).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

# Characters that NFKC keeps but that are invisible or a variant of the hyphen (TAU-ENTITY-NORM).
_INVISIBLE = {ord(c): None for c in "\u00ad\u200b\u200c\u200d\u2060\ufeff"}
_HYPHENS = {ord(c): "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"}
_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    """``text`` as identifiers are compared (TAU-ENTITY-NORM).

    Unicode NFKC (a non-breaking or full-width character becomes its plain form), invisible
    characters (soft hyphen, zero-width space and joiners, BOM) removed, hyphen and dash variants
    written ``-``, every run of white space one space, case folded.
    """
    text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE).translate(_HYPHENS)
    return _SPACES.sub(" ", text).casefold()


def _strip_prefix(identifier: str, prefixes: Sequence[str]) -> str:
    """The normalised identifier without a leading ``#`` and without one domain prefix."""
    core = normalise(identifier).strip().lstrip("#")
    for prefix in prefixes:
        bare = normalise(prefix).lstrip("#")
        if bare and core.startswith(bare) and len(core) > len(bare):
            return core[len(bare) :]
    return core


def _occurrence(identifier: str, prefixes: Sequence[str]) -> re.Pattern[str] | None:
    core = _strip_prefix(identifier, prefixes)
    if not core:
        return None
    optional = "".join(
        f"(?:{re.escape(b)})?" for b in sorted({normalise(p).lstrip("#") for p in prefixes} - {""})
    )
    return re.compile(r"(?<!\w)#?" + optional + re.escape(core) + r"(?!\w)")


def occurs(identifier: str, texts: Sequence[str], prefixes: Sequence[str] = ()) -> bool:
    """``identifier`` occurs in one of ``texts`` as a whole token, after normalisation (TAU-ENTITY-NORM).

    Both sides are normalised (:func:`normalise`); a leading ``#`` and a domain prefix
    (``prefixes``, e.g. retail's ``#W``) are optional on either side, so the user's ``9502126``
    and the agent's ``#W9502126`` are the same identifier. A whole token is not glued to a
    letter, digit or ``_`` on either side.
    """
    pattern = _occurrence(identifier, prefixes)
    return pattern is not None and any(pattern.search(normalise(text)) for text in texts)


_WORDS = re.compile(r"\w+")
_GAPS = re.compile(r"\W+")
_WORD_CHAR = re.compile(r"\w")


def _bounded(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` is not glued to a word character on either side (``(?<!\\w)``, ``(?!\\w)``)."""
    return (start == 0 or _WORD_CHAR.match(text, start - 1) is None) and (
        end == len(text) or _WORD_CHAR.match(text, end) is None
    )


class SeenIndex:
    """The texts an agent has seen, indexed so that :meth:`occurs` answers :func:`occurs` (without
    domain prefixes) at a cost set by the identifier, not by how much was seen (GUARD-PROVENANCE-INDEX).

    :meth:`add` normalises a text once and records where each maximal run of word characters
    (``\\w+``) starts, and each distinct run of other characters. An identifier whose normalised
    core (:func:`normalise`, stripped, a leading ``#`` removed) is one word is found by one
    dictionary look-up: in any occurrence as a whole token, each word of the core is a whole
    word of the text (the core's own non-word characters or ``occurs``' boundaries delimit it). A
    core of several words is checked in place at the occurrences of its rarest word; a core with
    no word character against the distinct non-word runs. ``probes`` counts the places compared
    (the work beyond the look-ups), for the tests.
    """

    def __init__(self, texts: Iterable[str] = ()) -> None:
        self._texts: list[str] = []
        self._words: dict[str, list[tuple[int, int]]] = {}
        #: distinct non-word runs: (run, at the text's start, at its end)
        self._gaps: set[tuple[str, bool, bool]] = set()
        self.probes = 0
        for text in texts:
            self.add(text)

    def add(self, text: str) -> None:
        """A text the agent has seen (its cost: the text's length)."""
        normal = normalise(text)
        number = len(self._texts)
        self._texts.append(normal)
        for match in _WORDS.finditer(normal):
            self._words.setdefault(match.group(), []).append((number, match.start()))
        for match in _GAPS.finditer(normal):
            self._gaps.add((match.group(), match.start() == 0, match.end() == len(normal)))

    def __len__(self) -> int:
        return len(self._texts)

    def occurs(self, identifier: str) -> bool:
        """``occurs(identifier, texts)`` over every text added so far."""
        core = _strip_prefix(identifier, ())
        if not core:
            return False
        words = list(_WORDS.finditer(core))
        if not words:
            return self._in_gaps(core)
        if len(words) == 1 and words[0].group() == core:
            return core in self._words
        rarest = min(words, key=lambda m: len(self._words.get(m.group(), ())))
        for number, offset in self._words.get(rarest.group(), ()):
            self.probes += 1
            start = offset - rarest.start()
            text = self._texts[number]
            if start >= 0 and text.startswith(core, start) and _bounded(text, start, start + len(core)):
                return True
        return False

    def _in_gaps(self, core: str) -> bool:
        """A core of non-word characters only: inside one non-word run, not at an edge that a
        word character touches."""
        for gap, first, last in self._gaps:
            self.probes += 1
            at = gap.find(core)
            while at >= 0:
                if (at > 0 or first) and (at + len(core) < len(gap) or last):
                    return True
                at = gap.find(core, at + 1)
        return False


__all__ = ["SeenIndex", "normalise", "occurs"]
