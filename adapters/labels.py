"""Label families shared by the adapters (spec: LABEL-MASK, LABEL-RULES).

An adapter that labels a rejected call from the text the environment returned (tau-bench,
chat, inspect_ai, ToolSandbox) matches its families on that text with the call's own
argument values masked (LABEL-MASK): an id such as ``U-INVALID`` in ``Usuario U-INVALID no
existe`` is the caller's value, not the environment's verdict, so it can never make the call
a schema failure. Users bring their own families with ``--label-rules FILE`` (LABEL-RULES):
a TOML file of ordered ``pattern -> label`` rules per adapter, tried before the adapter's
built-in families; the first rule whose pattern matches decides the label. The file's
SHA-256 enters the signature.

TOML layout::

    [[taubench]]                # the adapter's name, as given to --adapter
    pattern = "no existe"       # a regular expression (RE2, searched in the masked text)
    label = "dependency"        # schema | dependency | precondition | state_consistency | information

    [[taubench]]
    pattern = "(?i)no disponible"
    label = "precondition"
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache

import attrs

from prefixexec.kernel import Label

from .errors import InputError
from .regex import Pattern, checked_pattern

#: The precondition family shared by the tau-bench, chat and trace adapters (LABEL-PRECONDITION,
#: issue 38): an entity not in the state an action needs (``non-delivered``, ``not pending``), a
#: state the action requires first (``Line must be suspended to resume``), an object that cannot
#: serve the action (``Certificate cannot be used to update reservation``), a policy on what the
#: action may use (``Payment method should be the original payment method``). Matched on the
#: masked text, case-insensitively, on word boundaries. Kept apart from the argument-error
#: (schema) families.
PRECONDITION_FAMILY = re.compile(
    r"\bnon-pending\b|\bnon-delivered\b|\bnot pending\b|\bnot delivered\b|\bnot available\b"
    r"|\bnot enough seats\b"
    r"|\bmust be [a-z-]+ (?:to|before|in order to)\b"
    r"|\bcannot be (?:used|exchanged|returned|modified|cancell?ed|changed|updated|resumed|refunded)\b"
    r"|\bshould be (?:either )?the original\b",
    re.IGNORECASE,
)

#: What a masked argument value becomes in the text the families are matched on (LABEL-MASK).
MASK = "\u2039arg\u203a"
#: Adapters whose rejections are labelled from text, and so accept ``--label-rules``.
TEXT_LABELLED = (
    "chat",
    "inspect",
    "taubench",
    "toolsandbox",
    "otel",
    "openinference",
    "agents",
    "langsmith",
    "mlflow",
    "atif",
)
_LABELS = {label.value: label for label in Label}


def argument_values(arguments: object) -> Iterator[str]:
    """Every scalar inside an argument value, as text (strings as they are, numbers by ``str``;
    an integer beyond Python's digit limit cannot occur in a message and is skipped)."""
    if isinstance(arguments, str):
        yield arguments
    elif isinstance(arguments, bool) or arguments is None:
        return
    elif isinstance(arguments, int | float):
        try:
            yield str(arguments)
        except ValueError:  # more digits than int -> str converts
            return
    elif isinstance(arguments, Mapping):
        for value in arguments.values():
            yield from argument_values(value)
    elif isinstance(arguments, list | tuple):
        for value in arguments:
            yield from argument_values(value)


#: A token of a text: a run of word characters (Python's ``\w``) or one other character.
_TOKEN = re.compile(r"\w+|\W")
#: Markers between tokens: an occurrence may start (``_START``) or end (``_END``) here.
_START, _END = -1, -2


def _fold(text: str) -> str:
    """``text`` lower-cased character by character (the same length: a character whose lower
    case is longer, such as 'İ', is kept)."""
    folded = text.lower()
    if len(folded) == len(text):
        return folded
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def _word(token: str) -> bool:
    return len(token) > 1 or token.isalnum() or token == "_"  # what \w+ matches


def _units(tokens: Sequence[tuple[int, bool]], owner: list[int] | None = None) -> list[int]:
    """Token ids with the markers: ``_START`` before a token where an occurrence may begin (a word
    run, the first token, or a token after a non-word character) and ``_END`` after a token where
    one may end. A value's units occur in a text's units exactly where the value occurs in the
    text not glued to a letter, digit or ``_`` on either side (LABEL-MASK). ``owner`` gets, for
    each unit, the index of its token (a marker's: the token it stands before or after)."""
    units: list[int] = []
    last = len(tokens) - 1
    for i, (token, word) in enumerate(tokens):
        if word or i == 0 or not tokens[i - 1][1]:
            units.append(_START)
            if owner is not None:
                owner.append(i)
        units.append(token)
        if owner is not None:
            owner.append(i)
        if word or i == last or not tokens[i + 1][1]:
            units.append(_END)
            if owner is not None:
                owner.append(i)
    return units


#: Up to this many values (each a part of the message), each is looked for with ``str.find``: a
#: scan of the message per value. More values: one automaton for all, one pass (LABEL-MASK).
FEW_VALUES = 8


def mask_arguments(message: str, arguments: object) -> str:
    """``message`` with every whole-token occurrence of an argument value replaced by :data:`MASK`.

    Values are stripped and matched case-insensitively, each occurrence only where it is not glued
    to a letter, digit or ``_`` on either side; where occurrences overlap or nest, the characters
    they cover together become one mask (LABEL-MASK). A few values are each found with
    ``str.find`` (:func:`_few_occurrences`); many are found in one pass over the message with one
    automaton (Aho-Corasick over its tokens, :func:`_occurrences`): linear in the message and the
    values, however many values there are. Both give the same masks (tests/test_labels.py).
    """
    if not message:
        return message
    values = {v.strip() for v in argument_values(arguments)}
    values.discard("")
    if not values:
        return message
    folded = _fold(message)
    if len(values) <= FEW_VALUES:
        # a value occurs only where its folded text is a part of the folded message
        found = [f for f in map(_fold, values) if f in folded]
        return _masked(message, _few_occurrences(folded, found)) if found else message
    return _masked(message, _token_occurrences(folded, values))


def _masked(message: str, covered: Sequence[tuple[int, int]]) -> str:
    """``message`` with the disjoint character ranges ``covered`` (in order) replaced by MASK."""
    if not covered:
        return message
    parts: list[str] = []
    at = 0
    for start, stop in covered:
        parts.append(message[at:start])
        parts.append(MASK)
        at = stop
    parts.append(message[at:])
    return "".join(parts)


def _is_word(character: str) -> bool:
    return character.isalnum() or character == "_"  # what \w matches


def _few_occurrences(folded: str, values: Sequence[str]) -> list[tuple[int, int]]:
    """The union of the whole-token occurrences of the folded ``values`` in ``folded``, as
    disjoint ``(start, stop)`` character ranges in order: an occurrence neither follows nor is
    followed by a letter, digit or ``_``."""
    size = len(folded)
    found: list[tuple[int, int]] = []
    for value in values:
        at = folded.find(value)
        while at >= 0:
            stop = at + len(value)
            if (at == 0 or not _is_word(folded[at - 1])) and (stop == size or not _is_word(folded[stop])):
                found.append((at, stop))
            at = folded.find(value, at + 1)
    found.sort()
    merged: list[tuple[int, int]] = []
    for start, stop in found:
        if merged and start < merged[-1][1]:  # overlapping or nested: one range
            if stop > merged[-1][1]:
                merged[-1] = (merged[-1][0], stop)
        else:
            merged.append((start, stop))
    return merged


def _token_occurrences(folded: str, values: set[str]) -> list[tuple[int, int]]:
    """What :func:`_few_occurrences` finds, with one automaton over the message's tokens."""
    words = _TOKEN.findall(folded)
    ids: dict[str, int] = {}
    tokens = [(ids.setdefault(w, len(ids)), _word(w)) for w in words]
    patterns: list[list[int]] = []
    for value in values:
        value_tokens: list[tuple[int, bool]] = []
        for word in _TOKEN.findall(_fold(value)):
            token_id = ids.get(word)
            if token_id is None:
                break  # a token the message does not hold: the value does not occur in it
            value_tokens.append((token_id, _word(word)))
        else:
            patterns.append(_units(value_tokens))
    if not patterns:
        return []
    owner: list[int] = []
    covered = _occurrences(_units(tokens, owner), patterns)
    starts = [0]
    for word in words:
        starts.append(starts[-1] + len(word))
    # a start marker and an end marker: the characters of their tokens
    return [(starts[owner[first]], starts[owner[last] + 1]) for first, last in covered]


def _occurrences(units: Sequence[int], patterns: Sequence[Sequence[int]]) -> list[tuple[int, int]]:
    """The union of every occurrence of a pattern in ``units``, as disjoint ``(first, last)``
    unit index ranges in order (Aho-Corasick: the longest pattern ending at each unit)."""
    goto: list[dict[int, int]] = [{}]
    longest: list[int] = [0]
    for pattern in patterns:
        node = 0
        for symbol in pattern:
            child = goto[node].get(symbol)
            if child is None:
                child = len(goto)
                goto.append({})
                longest.append(0)
                goto[node][symbol] = child
            node = child
        longest[node] = max(longest[node], len(pattern))
    fail = [0] * len(goto)
    queue = deque(goto[0].values())
    while queue:
        node = queue.popleft()
        for symbol, child in goto[node].items():
            queue.append(child)
            back = fail[node]
            while back and symbol not in goto[back]:
                back = fail[back]
            fail[child] = goto[back].get(symbol, 0)
            longest[child] = max(longest[child], longest[fail[child]])
    merged: list[tuple[int, int]] = []
    state = 0
    for position, symbol in enumerate(units):
        step = goto[state].get(symbol)
        while step is None and state:
            state = fail[state]
            step = goto[state].get(symbol)
        state = step or 0
        length = longest[state]
        if length:
            first = position - length + 1
            while merged and merged[-1][1] >= first:
                first = min(first, merged.pop()[0])
            merged.append((first, position))
    return merged


@attrs.frozen(slots=True)
class LabelRule:
    """One user rule: the first rule whose ``pattern`` matches the masked text gives ``label``."""

    pattern: Pattern
    label: Label


@attrs.frozen(slots=True)
class LabelRules:
    """The rules of one ``--label-rules`` file for one adapter, and the file's digest."""

    rules: tuple[LabelRule, ...] = ()
    digest: str = ""

    def match(self, masked: str) -> Label | None:
        """The label of the first rule whose pattern matches ``masked`` (already masked)."""
        for rule in self.rules:
            if rule.pattern.search(masked):
                return rule.label
        return None


NO_RULES = LabelRules()


def file_digest(path: str) -> str:
    """``sha256:`` and the first 12 hex digits of the file's bytes, for the signature."""
    return "sha256:" + hashlib.sha256(rules_file_bytes(path)).hexdigest()[:12]


#: The largest label-rules file read (a TOML file of a few rules; HOSTILE-OPTION-FILE).
MAX_RULES_BYTES = 1 << 20


def rules_file_bytes(path: str) -> bytes:
    """The bytes of a TOML rules file (``--label-rules``; the guard's ``--rules``, GUARD-RULES-FILE),
    opened with the checks of every input (no FIFO, device or pseudo-file: HOSTILE-FIFO,
    HOSTILE-PSEUDO) and read up to :data:`MAX_RULES_BYTES`; one :class:`InputError` naming the
    file when it cannot be read or is larger."""
    from .inputs import open_binary

    try:
        with open_binary(path, "a TOML file of label rules") as handle:
            data = handle.read(MAX_RULES_BYTES + 1)
    except InputError as exc:
        raise InputError(path, f"cannot read the label rules: {exc.what}") from None
    except OSError as exc:
        raise InputError(path, f"cannot read the label rules: {exc.strerror or exc}") from None
    if len(data) > MAX_RULES_BYTES:
        raise InputError(path, f"label rules larger than {MAX_RULES_BYTES} bytes")
    return data


def load_label_rules(path: str | None, adapter: str) -> LabelRules:
    """The rules for ``adapter`` in the TOML file ``path`` (none when ``path`` is None)."""
    if path is None:
        return NO_RULES
    if adapter not in TEXT_LABELLED:
        raise InputError(
            "--label-rules",
            f"the {adapter} adapter does not label calls from message text "
            f"(label rules apply to: {', '.join(TEXT_LABELLED)})",
        )
    data = rules_file_bytes(path)
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(path, "label rules are not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, f"label rules are not valid TOML: {exc}") from None
    unknown = sorted(set(document) - set(TEXT_LABELLED))
    if unknown:
        raise InputError(
            path, f"unknown adapter {unknown[0]!r} in the label rules (known: {', '.join(TEXT_LABELLED)})"
        )
    entries = document.get(adapter, [])
    if not isinstance(entries, list):
        raise InputError(path, f"[{adapter}] must be an array of tables ([[{adapter}]]), one per rule")
    rules = tuple(_rule(entry, path, f"{adapter} rule {i}") for i, entry in enumerate(entries, 1))
    if not rules:
        raise InputError(path, f"the label rules hold no rule for the {adapter} adapter")
    return LabelRules(rules, "sha256:" + hashlib.sha256(data).hexdigest()[:12])


def _rule(entry: object, path: str, where: str) -> LabelRule:
    if not isinstance(entry, dict):
        raise InputError(path, f"{where}: must be a table with 'pattern' and 'label'")
    extra = sorted(set(entry) - {"pattern", "label"})
    if extra:
        raise InputError(path, f"{where}: unknown key {extra[0]!r} (a rule has 'pattern' and 'label')")
    pattern, label = entry.get("pattern"), entry.get("label")
    if not isinstance(pattern, str) or not pattern:
        raise InputError(path, f"{where}: 'pattern' must be a non-empty string")
    if not isinstance(label, str) or label not in _LABELS:
        raise InputError(path, f"{where}: 'label' must be one of {', '.join(_LABELS)}: {label!r}")
    # Linear-time matching (HOSTILE-REGEX): a rule like "(a+)+$" cannot make a message cost minutes.
    return LabelRule(checked_pattern(pattern, path, f"{where}: 'pattern'"), _LABELS[label])


# --- argument-constraint families (issue 42, LABEL-ARGUMENTS) -----------------------------------------
# Kept apart from the other adapters' families so that other additions merge cleanly. A tool that
# checks a constraint between its own arguments and refuses the call says so in words no schema
# family knew: tau-bench retail's exchange and modify tools ("Error: the number of items to be
# exchanged should match", item_ids and new_item_ids of different lengths), its return tool ("Error:
# payment method should be either the original payment method or a gift card"), the payment
# change ("Error: the new payment method should be different from the current one"), and the
# airline passenger update ("Error: the number of passengers does not match"). Each is a malformed
# call, whatever the state: ``schema``. Matched on the masked text (LABEL-MASK), on word bounds.
ARGUMENT_FAMILY = re.compile(
    r"\bnumber of [a-z][a-z ]{0,60}? (?:should|must) (?:match|be the same)\b"
    r"|\bnumber of [a-z][a-z ]{0,60}? (?:does not|doesn't) match\b"
    r"|\bshould be either\b|\bmust be either\b"
    r"|\bshould be different from\b|\bmust be different from\b"
    r"|\bthere should be exactly\b",
    re.IGNORECASE,
)
#: The argument-constraint families, shared by the tau-bench, chat and trace adapters (LABEL-ARGUMENTS).
ARGUMENT_FAMILIES: tuple[tuple[Label, re.Pattern[str]], ...] = ((Label.SCHEMA, ARGUMENT_FAMILY),)


def family_labels(
    message: str,
    arguments: object,
    families: Sequence[tuple[Label, re.Pattern[str]]],
    rules: LabelRules = NO_RULES,
) -> tuple[Label, ...]:
    """Labels of a rejection text: a user rule's label, else every built-in family that matches.

    Both are matched on ``message`` with the call's argument values masked (LABEL-MASK,
    LABEL-RULES). An empty result means no family matched; the adapter applies its default.
    An ASCII text (masks apart) is searched in lower case with the family's :func:`ascii_twin`
    where it has one (the same matches, two to six times faster than ignoring case).
    """
    masked = mask_arguments(message, arguments)
    chosen = rules.match(masked)
    if chosen is not None:
        return (chosen,)
    # ASCII apart from the masks ('‹' and '›' have no case and match no letter either way)
    if not masked.isascii() and not masked.replace(MASK, "").isascii():
        return tuple(label for label, pattern in families if pattern.search(masked))
    lowered = masked.lower()
    found: list[Label] = []
    for label, pattern in families:
        twin = ascii_twin(pattern)
        if (twin.search(lowered) if twin is not None else pattern.search(masked)) is not None:
            found.append(label)
    return tuple(found)


#: What makes a pattern's match depend on more than its letters' case: an upper-case letter, an
#: escape that names a character by number or name, a back reference, inline flags.
_CASE_BOUND = re.compile(r"[A-Z]|\\[0-9xuUN]|\(\?[a-zA-Z-]")


@lru_cache(maxsize=1024)
def ascii_twin(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """``pattern`` without ``IGNORECASE``, for ASCII text in lower case: on an ASCII text ``t``,
    ``ascii_twin(p).search(t.lower())`` matches exactly when ``p.search(t)`` does, for a pattern
    that ignores case and whose letters are all lower case outside escapes. ``None`` for any
    other pattern (searched as it is)."""
    if not pattern.flags & re.IGNORECASE:
        return None
    letters = re.sub(r"\\[^0-9xuUN]", "", pattern.pattern)  # \b \d \W ... match whatever the case
    if _CASE_BOUND.search(letters):
        return None
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)
