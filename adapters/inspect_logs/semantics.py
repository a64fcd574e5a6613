"""inspect_ai's rules: when a recorded call is executable, its labels, the no-tool action and Y.

Spec: spec/adapters/inspect.md. Each rule names its spec ID: INS-EXEC (a call's checks and the
reason that names the call), INS-LABELS (inspect's tool error types), INS-LABEL-RULES (user
label rules on the masked error text), INS-NOTOOL and INS-NOTOOL-UNKNOWN (the terminal no-tool
action), INS-VALUE (inspect's value-to-float convention) and INS-SUCCESS (Y from a score). The
reader (:mod:`.reader`) turns log files into the :class:`InspectSample` tasks replayed here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from prefixexec.kernel import Accepted, Label, Rejected
from prefixexec.kernel.actions import Action, NoToolAction, ToolCall

from ..labels import NO_RULES, LabelRules, mask_arguments
from ..numbers import as_float

#: Default threshold on a score's float value (INS-SUCCESS).
DEFAULT_THRESHOLD = 1.0

#: Label of each inspect ``ToolCallError.type`` (INS-LABELS). ``None``: rejected, unlabelled.
ERROR_LABELS: Mapping[str, Label | None] = {
    "parsing": Label.SCHEMA,
    "file_not_found": Label.DEPENDENCY,
    "is_a_directory": Label.DEPENDENCY,
    "permission": Label.PRECONDITION,
    "approval": Label.PRECONDITION,
    "timeout": Label.STATE_CONSISTENCY,
    "limit": Label.STATE_CONSISTENCY,
    "output_limit": Label.STATE_CONSISTENCY,
    "cancelled": Label.STATE_CONSISTENCY,
    "sandbox_unavailable": Label.STATE_CONSISTENCY,
    "unknown": None,  # LABEL-UNMATCHED: inspect could not tell what kind of error it was
    "unicode_decode": None,
}

#: inspect's score constants (``inspect_ai.scorer``: CORRECT, PARTIAL, INCORRECT, NOANSWER) and
#: the float ``value_to_float()`` gives each (INS-VALUE).
SCORE_CONSTANTS: Mapping[str, float] = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
#: Strings ``value_to_float()`` reads as booleans, compared in lower case (INS-VALUE).
BOOLEAN_WORDS: Mapping[str, float] = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


# ---------------------------------------------------------------------------------------------
# Tasks


@attrs.frozen(slots=True)
class InspectCall:
    """One assistant tool call and what its tool message recorded.

    ``offered`` is the set of tool names the model was given when it made the call (``None``
    when the log does not record it); ``answered`` is false when no tool message answers it.
    """

    action: ToolCall
    parse_error: str | None = None
    offered: frozenset[str] | None = None
    answered: bool = False
    error_type: str | None = None
    error_message: str | None = None


@attrs.frozen(slots=True)
class NoToolRule:
    """Whether a sample's terminal no-tool action is executable, and what decided it (INS-NOTOOL)."""

    allowed: bool
    why: str
    #: True when the log records nothing about tools and the rule of INS-NOTOOL-UNKNOWN decided.
    unknown: bool = False


@attrs.frozen(slots=True)
class InspectSample:
    """What the inspect semantics needs of one sample."""

    calls: tuple[InspectCall, ...]
    no_tool: NoToolRule

    @property
    def no_tool_allowed(self) -> bool:
        return self.no_tool.allowed


def _names(names: Iterable[str]) -> str:
    listed = sorted(set(names))
    return ", ".join(listed) if listed else "names not recorded"


def no_tool_rule(
    metadata_allowed: bool | None,
    event_tools: frozenset[str] | None,
    answer_functions: tuple[str, ...],
    plan_tools: tuple[str, ...] | None,
) -> NoToolRule:
    """The no-tool action's verdict from what the log says about tools (INS-NOTOOL).

    In this order: the sample's ``metadata.no_tool_allowed``; the union of the tools of its
    model events (``None``: no model event lists tools); the ``function`` of tool messages that
    answer no recorded call (tools were in use); the tools the plan's ``use_tools`` steps give
    (``None``: no such step). When none of these says anything, tools are unknown, and unknown
    is not offered: the action is allowed (INS-NOTOOL-UNKNOWN).
    """
    if metadata_allowed is not None:
        said = "true" if metadata_allowed else "false"
        return NoToolRule(metadata_allowed, f"the sample's metadata.no_tool_allowed is {said}")
    if event_tools is not None:
        if event_tools:
            return NoToolRule(False, f"the model was offered tools ({_names(event_tools)})")
        return NoToolRule(True, "every model event of the sample offered no tools")
    if answer_functions:
        return NoToolRule(
            False,
            f"the sample has {len(answer_functions)} tool message{'s' if len(answer_functions) > 1 else ''} "
            f"({_names(answer_functions)}) "
            "although it records no call: tools were in use",
        )
    if plan_tools is not None:
        return NoToolRule(False, f"the plan's use_tools step gives the model tools ({_names(plan_tools)})")
    return NoToolRule(
        True,
        "the log records nothing about tools (no model event lists tools, no tool message, no "
        "use_tools step in the plan): unknown is taken as not offered (INS-NOTOOL-UNKNOWN)",
        unknown=True,
    )


# ---------------------------------------------------------------------------------------------
# Semantics


@attrs.frozen(slots=True)
class InspectSemantics:
    """inspect_ai's recorded tool execution: the state is the position in the sample's calls.

    Every violated check of a call is a label (the kernel picks the primary one): a
    ``parse_error`` (schema), a tool the model was not offered (schema), and the tool message's
    ``error``, labelled by the first user rule matching its masked text (INS-LABEL-RULES), else
    by its type (:data:`ERROR_LABELS`). The reason names the call and keeps each check's text.
    """

    rules: LabelRules = NO_RULES

    def initial_state(self, task: InspectSample) -> tuple[InspectSample, int]:
        return (task, 0)

    def error_label(self, call: InspectCall) -> Label | None:
        """The label of the call's tool error: a user rule on the masked text, else its type."""
        error_type = call.error_type or ""
        if self.rules.rules:
            masked = mask_arguments(call.error_message or "", dict(call.action.arguments))
            chosen = self.rules.match(f"{error_type}: {masked}")
            if chosen is not None:
                return chosen
        return ERROR_LABELS.get(error_type)

    def step(
        self, state: tuple[InspectSample, int], action: Action
    ) -> Accepted[tuple[InspectSample, int]] | Rejected:
        sample, position = state
        if isinstance(action, NoToolAction):
            if sample.no_tool.allowed:
                return Accepted((sample, position + 1))
            why = sample.no_tool.why
            return Rejected((), f"no tool call (the terminal no-tool action), not allowed: {why}")
        call = sample.calls[position]
        labels: list[Label] = []
        reasons: list[str] = []
        if call.parse_error is not None:
            labels.append(Label.SCHEMA)
            reasons.append(f"parse_error: {call.parse_error}")
        if call.offered is not None and call.action.name not in call.offered:
            labels.append(Label.SCHEMA)
            reasons.append(f"tool {call.action.name!r} was not offered to the model")
        if not call.answered:
            reasons.append("no tool message answers this call (the sample ended first)")
        elif call.error_type is not None:
            label = self.error_label(call)
            if label is not None:
                labels.append(label)
            if call.error_type != "parsing" or call.error_message != call.parse_error:
                reasons.append(f"{call.error_type}: {call.error_message or ''}".rstrip())
        if reasons:
            where = f"call {position + 1} {call.action.name} (id {call.action.call_id})"
            return Rejected(labels, f"{where}: {'; '.join(reasons)}")
        return Accepted((sample, position + 1))


SEMANTICS = InspectSemantics()


# ---------------------------------------------------------------------------------------------
# Success (INS-VALUE, INS-SUCCESS)


class ScoreShapeError(ValueError):
    """A score value that is a list or an object: it has no single float (the reader says where)."""


def value_to_float(value: Any) -> float | None:
    """inspect's ``value_to_float()`` with its default constants (INS-VALUE); ``None``: no value.

    Numbers and booleans as floats; "C" 1, "P" 0.5, "I" and "N" 0; other strings in lower case:
    "yes"/"true" 1, "no"/"false" 0, a finite number as that number, anything else 0. A list or
    an object raises :class:`ScoreShapeError` (inspect would warn and use 0).
    """
    if value is None:
        return None
    if isinstance(value, bool | int | float):
        return as_float(value)  # HOSTILE-BIGINT: 10**400 is +inf (not finite: Y = 0, as "1e400")
    if isinstance(value, str):
        if value in SCORE_CONSTANTS:
            return SCORE_CONSTANTS[value]
        lowered = value.lower()
        if lowered in BOOLEAN_WORDS:
            return BOOLEAN_WORDS[lowered]
        try:
            number = float(lowered)
        except ValueError:
            return 0.0
        return number if math.isfinite(number) else 0.0
    raise ScoreShapeError(type(value).__name__)


def is_success(value: Any, threshold: float) -> bool:
    """Y: the value's float is finite and at least ``threshold`` (INS-SUCCESS); no value is Y = 0."""
    number = value_to_float(value)
    return number is not None and math.isfinite(number) and number >= threshold


__all__ = [
    "DEFAULT_THRESHOLD",
    "ERROR_LABELS",
    "SEMANTICS",
    "InspectCall",
    "InspectSample",
    "InspectSemantics",
    "NoToolRule",
    "ScoreShapeError",
    "is_success",
    "no_tool_rule",
    "value_to_float",
]
