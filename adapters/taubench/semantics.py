"""tau-bench's rules: executability of recorded calls, labels, provenance (spec/adapters/taubench.md).

Each rollout becomes a :class:`TauTask` (the calls with the verdicts the benchmark's environment
recorded and the conversation around them), replayed by the kernel through :data:`TAU`.
Rules and their spec IDs:

- TAU-EXEC: a call is executable iff the environment accepted it (the reader decides the
  recorded verdict; the semantics replays it);
- TAU-UNANSWERED: a call no tool message answers is a ``schema`` failure of the recording;
- TAU-LABELS (with LABEL-MASK, LABEL-RULES): label families matched on the tool message with the
  call's own argument values masked, on word boundaries; user rules first;
- TAU-ENTITY, TAU-ENTITY-NORM: ``not found`` is ``dependency`` when the entity occurred earlier in
  the conversation the agent had seen (after normalisation), ``information`` otherwise;
- TAU-NOTOOL, TAU-CRASH, TAU-TEXT-CALL: the terminal no-tool action and its reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from prefixexec.kernel import Accepted, Label, Rejected, ToolCall
from prefixexec.kernel.actions import Action, NoToolAction

from ..labels import ARGUMENT_FAMILIES, MASK, NO_RULES, PRECONDITION_FAMILY, LabelRules, mask_arguments
from ..provenance import normalise, occurs

#: Longest observation text kept in a rejection reason.
REASON_LIMIT = 300

# --- label families (TAU-LABELS): matched on the masked tool message (LABEL-MASK), case-insensitively,
# each on word boundaries. ``MASK`` stands where the call's own argument value was (a count such as
# ``missing 1 required`` may be masked when an argument's value is 1).
_NUMBER = r"(?:\d+|" + re.escape(MASK) + r")"
SCHEMA_FAMILY = re.compile(
    r"^unknown action\b|\btool '[^']*' not found|\bmissing " + _NUMBER + r" required\b"
    r"|\bunexpected keyword argument\b|\bgot multiple values for\b|\btakes " + _NUMBER + r" positional\b"
    r"|\bvalidation error\b|\binvalid\b",
    re.IGNORECASE,
)
NOT_FOUND_FAMILY = re.compile(r"\bnot found\b", re.IGNORECASE)
STATE_FAMILY = re.compile(
    r"\bdoes not add up\b|\bbalance is not enough\b|\bnot enough balance\b|\binsufficient\b", re.IGNORECASE
)
#: The built-in families in CONV-LABEL-ORDER; ``not found`` is resolved by TAU-ENTITY.
FAMILIES: tuple[tuple[Label, re.Pattern[str]], ...] = (
    (Label.SCHEMA, SCHEMA_FAMILY),
    *ARGUMENT_FAMILIES,  # LABEL-ARGUMENTS
    (Label.DEPENDENCY, NOT_FOUND_FAMILY),
    (Label.PRECONDITION, PRECONDITION_FAMILY),
    (Label.STATE_CONSISTENCY, STATE_FAMILY),
)

_ID_CHARS = re.compile(r"[0-9_#]")
_WORD = re.compile(r"[a-z]+")
_STRIP = "'\".,:;()[]{}"
_QUOTED_TAIL = re.compile(r"""(?:'([^']+)'|"([^"]+)")\s*$""")

#: Identifier prefixes of a tau-bench domain's entities (TAU-ENTITY-NORM): retail order ids are
#: ``#W`` and seven digits, and users quote them as ``#W9502126``, ``W9502126`` or ``9502126``.
DOMAIN_ID_PREFIXES: Mapping[str, tuple[str, ...]] = {"retail": ("#W",)}



# ================================================================================ the task


@attrs.frozen(slots=True)
class Exchange:
    """One call of the predicted trajectory with what the environment recorded for it.

    ``context`` holds the texts the agent saw for the first time just before issuing the
    call (user messages, observations of its earlier calls), in order; ``answered`` is false
    when no tool message answers the call (TAU-UNANSWERED).
    """

    call: ToolCall
    answered: bool
    accepted: bool
    observation: str
    context: tuple[str, ...]


@attrs.frozen(slots=True)
class TauTask:
    """What the semantics needs of one rollout: its exchanges, the no-tool rule and the label rules.

    ``rules`` are the user's label families (LABEL-RULES); ``id_prefixes`` the domain's
    identifier prefixes (TAU-ENTITY-NORM).
    """

    exchanges: tuple[Exchange, ...]
    no_tool_allowed: bool
    no_tool_reason: str
    rules: LabelRules = NO_RULES
    id_prefixes: tuple[str, ...] = ()


@attrs.frozen(slots=True)
class TauState:
    """Position in the trajectory and the conversation the agent has seen so far."""

    task: TauTask
    position: int
    seen: tuple[str, ...]


# ================================================================ identifiers (provenance: ..provenance)


def string_leaves(value: object, key: str = "") -> Iterator[tuple[str, str]]:
    """``(key, string)`` for every string inside an argument value (list items keep their key)."""
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from string_leaves(v, str(k))
    elif isinstance(value, list | tuple):
        for v in value:
            yield from string_leaves(v, key)


def id_like(token: str) -> bool:
    """A token that looks like an identifier: it holds a digit, ``_`` or ``#``, or is upper case."""
    return bool(_ID_CHARS.search(token)) or (len(token) >= 2 and token.isupper())


def missing_entity_ids(message: str, arguments: Mapping[str, Any]) -> tuple[str, ...]:
    """The identifiers a "not found" message is about (TAU-ENTITY).

    A quoted string just before ``not found`` (``Reservation 'X Y' not found``); else the token
    just before it if it looks like an identifier (:func:`id_like`); otherwise the call's string
    arguments whose key shares a word with the words before ``not found`` (``payment method`` ->
    ``payment_id``); otherwise every string argument.
    """
    match = NOT_FOUND_FAMILY.search(message)
    if match is None:
        return ()
    before = message[: match.start()]
    before = before.split(":", 1)[1] if before.lower().startswith("error:") else before
    quoted = _QUOTED_TAIL.search(before)
    if quoted and (quoted[1] or quoted[2]).strip():
        return ((quoted[1] or quoted[2]).strip(),)
    tokens = [t.strip(_STRIP) for t in before.split()]
    tokens = [t for t in tokens if t]
    if tokens and id_like(tokens[-1]):
        return (tokens[-1],)
    nouns = set(_WORD.findall(before.lower())) - {"error", "of", "the", "a", "an", "number", "new"}
    leaves = [(k, v) for k, v in string_leaves(arguments) if v.strip()]
    related = tuple(v for k, v in leaves if nouns & (set(_WORD.findall(k.lower())) - {"id", "ids"}))
    return related or tuple(v for _, v in leaves)


def classify(
    message: str,
    arguments: Mapping[str, Any],
    seen: Sequence[str],
    rules: LabelRules = NO_RULES,
    id_prefixes: Sequence[str] = (),
    tool: str | None = None,
) -> tuple[tuple[Label, ...], str]:
    """Labels of a rejected call from its tool message, and a note for the reason.

    The message is matched with the call's argument values masked (LABEL-MASK). The first user
    rule that matches gives the only label (LABEL-RULES); otherwise every built-in family that
    matches (TAU-LABELS), ``not found`` being ``information`` when an identifier it is about never
    occurred in ``seen`` and ``dependency`` otherwise (TAU-ENTITY, TAU-ENTITY-NORM). A message
    that matches no family is unlabelled (LABEL-UNMATCHED), its reason noting it. tau-bench v1's
    own ``Unknown action <tool>`` (the whole message, ``tool`` the call's name) holds no argument
    value and is matched unmasked (TAU-UNKNOWN-ACTION): an argument ``'Unknown'`` must not hide it.
    """
    unmasked = tool is not None and message.strip() == f"Unknown action {tool}"
    masked = message if unmasked else mask_arguments(message, arguments)
    for rule in rules.rules:
        if rule.pattern.search(masked):
            return (rule.label,), f" [label rule {rule.pattern.pattern!r}]"
    labels: list[Label] = []
    note = ""
    for label, pattern in FAMILIES:
        if not pattern.search(masked):
            continue
        if label is Label.DEPENDENCY:
            ids = missing_entity_ids(message, arguments)
            invented = [i for i in ids if not occurs(i, seen, id_prefixes)]
            if invented:
                label = Label.INFORMATION
                note = f" [{invented[0]!r} never occurred earlier in the conversation]"
        labels.append(label)
    if not labels:  # LABEL-UNMATCHED: unlabelled, the reason says so
        note = " [no label family matched]"
    return tuple(labels), note


def shorten(text: str) -> str:
    """``text`` cut to :data:`REASON_LIMIT` characters."""
    return text if len(text) <= REASON_LIMIT else text[: REASON_LIMIT - 3] + "..."


def call_name(position: int, call: ToolCall) -> str:
    """``call <k> <tool> (id <id>)`` as reasons name a call (the id only when the call has one)."""
    return f"call {position} {call.name}" + (f" (id {call.call_id})" if call.call_id else "")


# ================================================================================ the semantics


class TauSemantics:
    """Recorded tau-bench verdicts; the state carries the conversation seen so far.

    A call is accepted iff the environment accepted it (TAU-EXEC); a rejected call is
    labelled from its tool message, using the conversation seen before the call to tell a
    dependency failure from an information failure (TAU-ENTITY).
    """

    def initial_state(self, task: TauTask) -> TauState:
        return TauState(task, 0, ())

    def step(self, state: TauState, action: Action) -> Accepted[TauState] | Rejected:
        task = state.task
        if isinstance(action, NoToolAction):  # TAU-NOTOOL, TAU-CRASH, TAU-TEXT-CALL
            if task.no_tool_allowed:
                return Accepted(TauState(task, state.position + 1, state.seen))
            return Rejected((), task.no_tool_reason)
        exchange = task.exchanges[state.position]
        seen = state.seen + exchange.context
        call = exchange.call
        name = call_name(state.position + 1, call)
        if not exchange.answered:  # TAU-UNANSWERED
            return Rejected(
                (Label.SCHEMA,), f"{name}: no tool message answers this call (incomplete recording)"
            )
        if exchange.accepted:  # TAU-EXEC
            return Accepted(TauState(task, state.position + 1, seen), exchange.observation)
        labels, note = classify(
            exchange.observation, call.arguments, seen, task.rules, task.id_prefixes, call.name
        )
        return Rejected(labels, shorten(f"{name}: {exchange.observation}") + note)


TAU = TauSemantics()


def past_call(state: TauState, action: Action) -> TauState:
    """The state after ``action`` whatever its verdict (OUT-REJECTIONS): the next recorded call, the
    agent having seen the call's context and its tool message (an error text too)."""
    if isinstance(action, NoToolAction):
        return TauState(state.task, state.position + 1, state.seen)
    exchange = state.task.exchanges[state.position]
    seen = state.seen + exchange.context
    return TauState(state.task, state.position + 1, seen)


__all__ = [
    "DOMAIN_ID_PREFIXES",
    "FAMILIES",
    "REASON_LIMIT",
    "TAU",
    "Exchange",
    "TauSemantics",
    "TauState",
    "TauTask",
    "call_name",
    "classify",
    "id_like",
    "missing_entity_ids",
    "normalise",
    "occurs",
    "past_call",
    "shorten",
    "string_leaves",
]
