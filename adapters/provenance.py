"""Provenance: whether a value occurred earlier in what the agent saw (TAU-ENTITY-NORM, BFCL-MISS-PARAM).

One rule serves every adapter that asks where an argument value came from: a value is grounded
when it occurs, as a whole token after normalisation, in a text the agent saw before the call
(the user's messages and the results of its earlier tool calls). tau-bench uses it to tell an
invented identifier from a missing one (TAU-ENTITY); BFCL uses it for the withheld parameter of
miss_param and for placeholder values (BFCL-MISS-PARAM, BFCL-PLACEHOLDER).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

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


__all__ = ["normalise", "occurs"]
