"""Actions and first-failure labels (spec: CONV-NOTOOL, CONV-LABEL-ORDER)."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import attrs


class Label(enum.Enum):
    """First-failure labels of section 2.4, declared in the paper's tie-break order."""

    SCHEMA = "schema"
    DEPENDENCY = "dependency"
    PRECONDITION = "precondition"
    STATE_CONSISTENCY = "state_consistency"
    INFORMATION = "information"

    @property
    def rank(self) -> int:
        """Position in the tie-break order (0 = first)."""
        return LABEL_ORDER.index(self)


#: The paper's deterministic tie-break order (section 2.4), CONV-LABEL-ORDER.
LABEL_ORDER: tuple[Label, ...] = tuple(Label)

#: Name used for failing rollouts that carry no label.
UNLABELLED = "unlabelled"

#: Keys of the label-count mapping, in report order.
LABEL_KEYS: tuple[str, ...] = (*(label.value for label in LABEL_ORDER), UNLABELLED)


def primary_label(labels: Iterable[Label]) -> Label | None:
    """The primary label of a rejection: the first of its labels in tie-break order.

    Returns ``None`` for an empty collection (an unlabelled rejection).
    """
    chosen: Label | None = None
    for label in labels:
        if chosen is None or label.rank < chosen.rank:
            chosen = label
    return chosen


def parse_label(name: str) -> Label:
    """The label called ``name``; raises ``ValueError`` naming the accepted values."""
    try:
        return Label(name)
    except ValueError:
        accepted = ", ".join(label.value for label in LABEL_ORDER)
        raise ValueError(f"unknown label {name!r} (expected one of: {accepted})") from None


def _freeze_arguments(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(value))


@attrs.frozen(slots=True)
class ToolCall:
    """One ordinary action a_t: a tool call with named arguments and an optional call id."""

    name: str = attrs.field(validator=attrs.validators.instance_of(str))
    arguments: Mapping[str, Any] = attrs.field(
        factory=dict, converter=_freeze_arguments, eq=False, hash=False
    )
    call_id: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.instance_of(str))
    )


@attrs.frozen(slots=True)
class NoToolAction:
    """The terminal no-tool action of CONV-NOTOOL.

    A rollout that ends before any tool call is represented by this single action (T = 1);
    it is executable iff the benchmark allows the task to be completed without tools.
    """


#: The single instance of the terminal no-tool action.
NO_TOOL = NoToolAction()

Action = ToolCall | NoToolAction
