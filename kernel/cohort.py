"""Rollouts, conditions and cohorts (spec: CONV-CONDITION, CONV-FIXED-COHORT, INV-IMMUTABLE)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs
import numpy as np
import numpy.typing as npt

from .actions import LABEL_ORDER, Label
from .replay import Outcome

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: Label code of a fully executable rollout in :attr:`Cohort.label_code`.
CODE_NONE = -1
#: Label code of a failing rollout without a label.
CODE_UNLABELLED = len(LABEL_ORDER)


def label_code(outcome: Outcome) -> int:
    """The integer code of an outcome's label (-1 none, 0..4 in tie-break order, 5 unlabelled)."""
    if outcome.fully_executable:
        return CODE_NONE
    return CODE_UNLABELLED if outcome.label is None else outcome.label.rank


@attrs.frozen(slots=True, order=True)
class ConditionKey:
    """A condition of the paper's grid: (dataset, model, method); sorts in that order."""

    dataset: str
    model: str
    method: str


@attrs.frozen(slots=True)
class Rollout:
    """One evaluated rollout i: its condition, task, trial, outcome and final success Y_i."""

    condition: ConditionKey
    task_id: str
    trial: int
    outcome: Outcome
    success: bool
    meta: Mapping[str, object] = attrs.field(factory=dict, eq=False, hash=False)


def _readonly_int(value: npt.ArrayLike) -> IntArray:
    array = np.array(value, dtype=np.int64, copy=True).reshape(-1)
    array.flags.writeable = False
    return array


def _readonly_bool(value: npt.ArrayLike) -> BoolArray:
    array = np.array(value, dtype=np.bool_, copy=True).reshape(-1)
    array.flags.writeable = False
    return array


def _str_tuple(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


_ARRAY_EQ = attrs.cmp_using(eq=np.array_equal)


@attrs.frozen(slots=True)
class Cohort:
    """The N evaluated rollouts of one condition, as read-only arrays indexed by i.

    ``T`` horizons (>= 1), ``fed`` first-error depths (1 <= fed <= T+1), ``Y`` final
    success, ``label_code`` (see :func:`label_code`) and ``task`` the task id of each rollout.
    """

    T: IntArray = attrs.field(converter=_readonly_int, eq=_ARRAY_EQ)
    fed: IntArray = attrs.field(converter=_readonly_int, eq=_ARRAY_EQ)
    Y: BoolArray = attrs.field(converter=_readonly_bool, eq=_ARRAY_EQ)
    label_code: IntArray = attrs.field(converter=_readonly_int, eq=_ARRAY_EQ)
    task: tuple[str, ...] = attrs.field(converter=_str_tuple)

    def __attrs_post_init__(self) -> None:
        n = self.T.shape[0]
        for name in ("fed", "Y", "label_code"):
            if getattr(self, name).shape[0] != n:
                raise ValueError(f"'{name}' has {getattr(self, name).shape[0]} entries, 'T' has {n}")
        if len(self.task) != n:
            raise ValueError(f"'task' has {len(self.task)} entries, 'T' has {n}")
        if n == 0:
            raise ValueError("a cohort needs at least one rollout (N >= 1)")
        if np.any(self.T < 1):
            raise ValueError(f"'T' must be >= 1: {int(self.T.min())}")
        if np.any(self.fed < 1) or np.any(self.fed > self.T + 1):
            bad = int(np.flatnonzero((self.fed < 1) | (self.fed > self.T + 1))[0])
            raise ValueError(
                f"'fed' must be in [1, T+1]: rollout {bad} has T={int(self.T[bad])}, fed={int(self.fed[bad])}"
            )
        full = self.fed == self.T + 1
        if np.any(full != (self.label_code == CODE_NONE)) or np.any(
            (self.label_code < CODE_NONE) | (self.label_code > CODE_UNLABELLED)
        ):
            raise ValueError("'label_code' must be -1 exactly for fully executable rollouts, else 0..5")

    @property
    def N(self) -> int:
        """Number of evaluated rollouts (the fixed-cohort denominator, CONV-FIXED-COHORT)."""
        return int(self.T.shape[0])

    @classmethod
    def from_outcomes(cls, outcomes: Iterable[tuple[str, Outcome, bool]]) -> Cohort:
        """Build from ``(task_id, outcome, Y)`` triples."""
        items = list(outcomes)
        return cls(
            T=[o.T for _, o, _ in items],
            fed=[o.fed for _, o, _ in items],
            Y=[y for _, _, y in items],
            label_code=[label_code(o) for _, o, _ in items],
            task=[t for t, _, _ in items],
        )

    @classmethod
    def from_rollouts(cls, rollouts: Iterable[Rollout]) -> Cohort:
        """Build from rollouts (of one condition)."""
        return cls.from_outcomes((r.task_id, r.outcome, r.success) for r in rollouts)


def group_by_condition(rollouts: Iterable[Rollout]) -> dict[ConditionKey, Cohort]:
    """Split rollouts into one cohort per condition, sorted by (dataset, model, method).

    Within a condition rollouts are ordered by (task_id, trial), so that the result does not
    depend on the order of the input (INV-PERM).
    """
    groups: dict[ConditionKey, list[Rollout]] = {}
    for rollout in rollouts:
        groups.setdefault(rollout.condition, []).append(rollout)
    return {
        key: Cohort.from_rollouts(sorted(groups[key], key=lambda r: (r.task_id, r.trial)))
        for key in sorted(groups)
    }


__all__ = [
    "CODE_NONE",
    "CODE_UNLABELLED",
    "Cohort",
    "ConditionKey",
    "Label",
    "Rollout",
    "group_by_condition",
    "label_code",
]
