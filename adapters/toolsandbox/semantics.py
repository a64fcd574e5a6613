"""ToolSandbox's rules: executability of recorded calls and their labels (spec/adapters/toolsandbox.md).

Each scenario becomes a :class:`Scenario` (its recorded calls with what ToolSandbox's execution
environment answered), replayed by the kernel through :data:`SEMANTICS`. Rules and their spec IDs:

- TSB-EXEC: a call is executable iff its reply carries no exception;
- TSB-UNANSWERED: a call no reply answers is rejected, unlabelled;
- TSB-ABORT: the unknown tool that made ToolSandbox abort the scenario is a ``schema`` failure;
- TSB-LABELS (with LABEL-MASK, LABEL-RULES): label families matched on the recorded exception,
  its type by name and its message with the call's own argument values masked, on word
  boundaries; the user's rules first;
- TSB-NOTOOL: the terminal no-tool action is executable only in INSUFFICIENT_INFORMATION scenarios;
- TSB-REASON: every rejection says which call failed and why.

Nothing here reads files; :mod:`.reader` builds the scenarios.
"""

from __future__ import annotations

import re

import attrs

from prefixexec.kernel import Accepted, Label, Rejected, ToolCall
from prefixexec.kernel.actions import Action, NoToolAction

from ..labels import NO_RULES, LabelRules, mask_arguments

#: Categories whose scenarios may be completed without any tool call (TSB-NOTOOL).
NO_TOOL_CATEGORIES = frozenset({"INSUFFICIENT_INFORMATION"})

#: The last line of a Python exception as the execution environment records it: ``Type: message``.
_EXCEPTION_LINE = re.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)(?::\s?(?P<message>.*))?$")
#: The execution environment's reply to code that does not compile completely.
INCOMPLETE_CODE = "Error: The given code was incomplete"


# ---------------------------------------------------------------------------------------------
# Labels (TSB-LABELS)


@attrs.frozen(slots=True)
class ExceptionRule:
    """A label family: exception types (last dotted component) and an optional message pattern.

    The message pattern is searched in the exception's message with the call's own argument
    values masked (LABEL-MASK), so a value the caller passed can never select a family.
    """

    label: Label
    types: re.Pattern[str]
    message: re.Pattern[str] | None = None


#: Every rule that matches an exception contributes its label; the primary label is then chosen
#: by the paper's tie-break order (CONV-LABEL-ORDER). No rule matching: unlabelled.
EXCEPTION_RULES: tuple[ExceptionRule, ...] = (
    # Malformed calls: code that does not compile, unknown names, wrong argument binding or type,
    # an unknown keyword (KeyError from the type checker), unparsable phone numbers.
    ExceptionRule(
        Label.SCHEMA,
        re.compile(
            r"SyntaxError|IndentationError|TabError|NameError|TypeError|TypeCheckError|KeyError"
            r"|AttributeError|NumberParseException|IncompleteCode"
        ),
    ),
    # Validators: out-of-range timestamps/coordinates, unknown currency codes, no field given.
    ExceptionRule(
        Label.SCHEMA,
        re.compile(r"ValueError"),
        re.compile(
            r"\b(?:valid range|ISO 4217|currency code|phone number|timestamp|latitude|longitude"
            r"|No update information given|not a valid)\b",
            re.IGNORECASE,
        ),
    ),
    # A referenced entity that is not in the database.
    ExceptionRule(Label.DEPENDENCY, re.compile(r"NoDataError")),
    ExceptionRule(Label.DEPENDENCY, re.compile(r".+"), re.compile(r"\b(?:No db entry matching|not found)\b")),
    # The device is not in a state that allows the call (cellular/wifi off, location service off,
    # low battery mode).
    ExceptionRule(Label.PRECONDITION, re.compile(r"ConnectionError|PermissionError")),
    # The call would duplicate or repeat a state change.
    ExceptionRule(Label.STATE_CONSISTENCY, re.compile(r"DuplicateError")),
    ExceptionRule(
        Label.STATE_CONSISTENCY,
        re.compile(r"ValueError"),
        re.compile(r"\balready (?:enabled|disabled|exists?)\b", re.IGNORECASE),
    ),
)


def split_exception(text: str) -> tuple[str, str]:
    """``(type, message)`` of a recorded exception: its last non-empty line, ``Type: message``.

    The incomplete-code reply of the execution environment has type ``IncompleteCode``; a text
    of another shape has type ``""`` and the whole last line as message.
    """
    if text.startswith(INCOMPLETE_CODE):
        return "IncompleteCode", text
    lines = [line for line in text.strip().split("\n") if line.strip()]
    last = lines[-1].strip() if lines else ""
    match = _EXCEPTION_LINE.match(last)
    if match is None:
        return "", last
    return match.group("type"), match.group("message") or ""


def masked_exception(text: str, arguments: object = None) -> str:
    """The recorded exception line with the call's argument values masked in its message.

    This is the text the user's ``--label-rules`` patterns are searched in (LABEL-RULES): the
    exception type stays as recorded, so a rule can name it.
    """
    exc_type, message = split_exception(text)
    masked = mask_arguments(message, arguments)
    if exc_type in ("", "IncompleteCode"):
        return masked
    return f"{exc_type}: {masked}" if message else exc_type


def exception_labels(text: str, arguments: object = None, rules: LabelRules = NO_RULES) -> tuple[Label, ...]:
    """Every label whose family matches the recorded exception ``text`` (TSB-LABELS).

    ``arguments`` are the call's arguments: their values are masked in the message first
    (LABEL-MASK). A user rule that matches decides alone (LABEL-RULES).
    """
    chosen = rules.match(masked_exception(text, arguments))
    if chosen is not None:
        return (chosen,)
    exc_type, message = split_exception(text)
    masked = mask_arguments(message, arguments)
    short = exc_type.rsplit(".", 1)[-1]
    labels: list[Label] = []
    for rule in EXCEPTION_RULES:
        if not rule.types.fullmatch(short):
            continue
        if rule.message is not None and not rule.message.search(masked):
            continue
        if rule.label not in labels:
            labels.append(rule.label)
    return tuple(labels)


# ---------------------------------------------------------------------------------------------
# Semantics (TSB-EXEC, TSB-UNANSWERED, TSB-ABORT, TSB-NOTOOL, TSB-REASON)


@attrs.frozen(slots=True)
class SandboxCall:
    """One recorded call and what the execution environment answered.

    ``exception`` is the reply's ``tool_call_exception`` (``None``: the call executed);
    ``answered`` is false when no reply was recorded; ``aborted`` marks the unknown-tool call that
    made ToolSandbox abort the scenario (it has no row of its own).
    """

    action: ToolCall
    answered: bool
    exception: str | None = None
    reply: str | None = None
    aborted: bool = False
    problem: str | None = None


@attrs.frozen(slots=True)
class Scenario:
    """What the ToolSandbox semantics needs of one scenario run (and the user's label rules)."""

    name: str
    calls: tuple[SandboxCall, ...]
    no_tool_allowed: bool
    rules: LabelRules = NO_RULES


def call_name(position: int, action: ToolCall) -> str:
    """How a reason names a call: ``call 2 send_message_with_phone_number (id call_1)`` (TSB-REASON)."""
    ident = f" (id {action.call_id})" if action.call_id else ""
    return f"call {position} {action.name}{ident}"


class ToolSandboxSemantics:
    """The recorded ToolSandbox execution: the state is the position in the scenario's calls."""

    def initial_state(self, task: Scenario) -> tuple[Scenario, int]:
        return (task, 0)

    def step(self, state: tuple[Scenario, int], action: Action) -> Accepted[tuple[Scenario, int]] | Rejected:
        scenario, position = state
        if isinstance(action, NoToolAction):
            if scenario.no_tool_allowed:
                return Accepted((scenario, position + 1))
            return Rejected(
                (), "no tool call: the agent made no tool call in a scenario that requires tools"
            )
        call = scenario.calls[position]
        name = call_name(position + 1, call.action)
        if call.aborted:
            return Rejected(
                (Label.SCHEMA,), f"{name}: not an allowed tool, ToolSandbox aborted the scenario (KeyError)"
            )
        if not call.answered:
            return Rejected((), f"{name}: no execution_environment reply (the run ended before it)")
        if call.exception is None:
            return Accepted((scenario, position + 1), call.reply)
        labels = exception_labels(call.exception, call.action.arguments, scenario.rules)
        return Rejected(labels, f"{name}: {call.exception}")


SEMANTICS = ToolSandboxSemantics()

__all__ = [
    "EXCEPTION_RULES",
    "INCOMPLETE_CODE",
    "NO_TOOL_CATEGORIES",
    "SEMANTICS",
    "ExceptionRule",
    "SandboxCall",
    "Scenario",
    "ToolSandboxSemantics",
    "call_name",
    "exception_labels",
    "masked_exception",
    "split_exception",
]
