"""Per-rollout outcome and prefix replay (spec: EQ-1, EQ-2, CONV-REPLAY, CONV-NOTOOL)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Generic, Protocol, TypeVar

import attrs

from .actions import NO_TOOL, Action, Label, primary_label

S = TypeVar("S")
Task_contra = TypeVar("Task_contra", contravariant=True)


@attrs.frozen(slots=True)
class Accepted(Generic[S]):
    """The benchmark accepted the action: the state advances."""

    state: S
    observation: object = None


def _label_tuple(value: Iterable[Label]) -> tuple[Label, ...]:
    return tuple(value)


@attrs.frozen(slots=True)
class Rejected:
    """The benchmark rejected the action; ``labels`` are every violated check."""

    labels: tuple[Label, ...] = attrs.field(converter=_label_tuple, default=())
    reason: str | None = None

    @property
    def label(self) -> Label | None:
        """The primary label (CONV-LABEL-ORDER)."""
        return primary_label(self.labels)


Verdict = Accepted[S] | Rejected


class Semantics(Protocol[Task_contra, S]):
    """The adapter contract: how one benchmark decides whether an action is executable."""

    def initial_state(self, task: Task_contra) -> S:
        """A fresh state s_1 for ``task``."""
        ...

    def step(self, state: S, action: Action) -> Accepted[S] | Rejected:
        """Execute ``action`` in ``state`` without mutating ``state``."""
        ...


def _check_t(instance: Outcome, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"'T' must be an integer >= 1: {value!r}")


def _check_fed(instance: Outcome, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"'fed' must be an integer: {value!r}")
    if not 1 <= value <= instance.T + 1:
        raise ValueError(f"'fed' must be in [1, T+1] = [1, {instance.T + 1}]: {value}")


def _action_tuple(value: Iterable[Action]) -> tuple[Action, ...]:
    return tuple(value)


@attrs.frozen(slots=True)
class Outcome:
    """What prefix replay yields for one rollout: horizon T, first-error depth, label.

    ``fed == T + 1`` means every prefix is executable (EQ-1); then ``label`` and
    ``reason`` are ``None``. A failing rollout may be unlabelled (``label is None``).
    ``actions`` holds a_1..a_T when :func:`replay` produced the outcome (empty for an outcome
    recorded without its actions); it is evidence for explanations (OUT-ROLLOUTS) and takes no
    part in equality or in any metric.
    """

    T: int = attrs.field(validator=_check_t)
    fed: int = attrs.field(validator=_check_fed)
    label: Label | None = attrs.field(default=None)
    reason: str | None = attrs.field(default=None)
    actions: tuple[Action, ...] = attrs.field(default=(), converter=_action_tuple, eq=False, repr=False)

    @actions.validator
    def _check_actions(
        self, attribute: attrs.Attribute[tuple[Action, ...]], value: tuple[Action, ...]
    ) -> None:
        if value and len(value) != self.T:
            raise ValueError(f"'actions' must hold T = {self.T} actions or none: {len(value)}")

    @property
    def failing(self) -> Action | None:
        """The first non-executable action a_FED, when the actions are known and one failed."""
        if self.fully_executable or not self.actions:
            return None
        return self.actions[self.fed - 1]

    @label.validator
    def _check_label(self, attribute: attrs.Attribute[Label | None], value: Label | None) -> None:
        if value is not None and not isinstance(value, Label):
            raise ValueError(f"'label' must be a Label or None: {value!r}")
        if self.fully_executable and value is not None:
            raise ValueError(f"'label' given for a fully executable rollout (fed = T+1): {value.value}")

    @property
    def fully_executable(self) -> bool:
        """FED = T + 1: the whole predicted trajectory is executable (EQ-8 event)."""
        return self.fed == self.T + 1

    def prefix_executable(self, k: int) -> bool:
        """EQ-2: for 1 <= k <= T, the prefix of length k is executable iff FED > k."""
        if not 1 <= k <= self.T:
            raise ValueError(f"'k' must be in [1, T] = [1, {self.T}]: {k}")
        return self.fed > k


def first_error_depth(verdicts: Sequence[bool]) -> int:
    """EQ-1: FED = min{k in 1..T : prefix k is not executable}, or T + 1 if none is.

    ``verdicts[t-1]`` says whether action a_t was accepted in the state induced by the
    earlier actions; the prefix of length k is executable iff a_1..a_k all were.
    """
    if len(verdicts) == 0:
        raise ValueError("'verdicts' must hold at least one action (T >= 1)")
    for k, accepted in enumerate(verdicts, start=1):
        if not accepted:
            return k
    return len(verdicts) + 1


def replay(semantics: Semantics[Task_contra, S], task: Task_contra, actions: Iterable[Action]) -> Outcome:
    """Replay ``actions`` prefix by prefix under ``semantics`` (CONV-REPLAY).

    Each action is stepped from the state its predecessors induced; the first rejection
    fixes FED and its primary label, and replay stops there (later actions still count
    towards T). An empty action sequence is the terminal no-tool action (CONV-NOTOOL).
    Each action is executed once: the cost is linear in T.
    """
    sequence: tuple[Action, ...] = tuple(actions) or (NO_TOOL,)
    state = semantics.initial_state(task)
    for k, action in enumerate(sequence, start=1):
        verdict = semantics.step(state, action)
        if isinstance(verdict, Rejected):
            return Outcome(
                T=len(sequence), fed=k, label=verdict.label, reason=verdict.reason, actions=sequence
            )
        state = verdict.state
    return Outcome(T=len(sequence), fed=len(sequence) + 1, actions=sequence)
