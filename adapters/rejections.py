"""Every rejected call of a rollout, not only the first (spec: OUT-REJECTIONS).

FED stops at the first action the benchmark rejects (CONV-REPLAY), and so does the kernel's replay.
A reader of one rollout also wants the later rejections: did the agent hit the same wall again,
and did it recover? Adapters whose verdicts are recorded in the input (tau-bench, chat transcripts,
traces) can judge every action, because a verdict does not depend on the state a rejected action
would have left: :func:`every_verdict` steps the adapter's own semantics over all actions and, past
a rejected action, moves on with ``past(state, action)``, the state after the action as the
recording has it. The verdicts are evidence kept in ``Rollout.meta["action_verdicts"]``; they take
no part in FED or in any metric, and the first rejected one is always a_FED (checked).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

import attrs

from prefixexec.kernel import Outcome, Rejected
from prefixexec.kernel.actions import NO_TOOL, Action
from prefixexec.kernel.replay import Semantics

S = TypeVar("S")
T = TypeVar("T")

#: ``Rollout.meta`` key of the per-action verdicts: ``None`` (accepted) or the :class:`Rejected`.
VERDICTS_KEY = "action_verdicts"
#: ``Rollout.meta`` key of the per-action source positions (OUT-SOURCE): one mapping per action.
SOURCES_KEY = "action_sources"


def every_verdict(
    semantics: Semantics[T, S],
    task: T,
    actions: Sequence[Action],
    past: Callable[[S, Action], S],
    outcome: Outcome,
) -> tuple[Rejected | None, ...]:
    """The verdict on every action a_1..a_T: ``None`` when accepted, the :class:`Rejected` otherwise.

    Each action is stepped from the state the earlier actions left as recorded: the accepted
    state, or ``past(state, action)`` after a rejected one. The first rejection must be the
    kernel's (position FED, same primary label and reason); a mismatch is a programming error.
    """
    sequence: tuple[Action, ...] = tuple(actions) or (NO_TOOL,)
    state = semantics.initial_state(task)
    out: list[Rejected | None] = []
    for action in sequence:
        verdict = semantics.step(state, action)
        if isinstance(verdict, Rejected):
            out.append(verdict)
            state = past(state, action)
        else:
            out.append(None)
            state = verdict.state
    first = next((k for k, v in enumerate(out, start=1) if v is not None), len(out) + 1)
    rejected = out[first - 1] if first <= len(out) else None
    if first != outcome.fed or (
        rejected is not None and (rejected.label, rejected.reason) != (outcome.label, outcome.reason)
    ):
        raise AssertionError(
            f"every_verdict disagrees with replay: first rejection {first}, FED {outcome.fed}"
        )
    return tuple(out)


@attrs.define(eq=False)
class Verdicts(Generic[T, S]):
    """Every verdict of one rollout, computed on first use (``score`` never pays for it): the value
    of ``Rollout.meta["action_verdicts"]``; :func:`verdicts_of` reads it."""

    semantics: Semantics[T, S]
    task: T
    actions: Sequence[Action]
    past: Callable[[S, Action], S]
    outcome: Outcome
    _done: tuple[Rejected | None, ...] | None = None

    def __call__(self) -> tuple[Rejected | None, ...]:
        if self._done is None:
            self._done = every_verdict(self.semantics, self.task, self.actions, self.past, self.outcome)
        return self._done


def verdicts_of(meta: Mapping[str, Any], outcome: Outcome) -> tuple[Rejected | None, ...] | None:
    """The verdicts an adapter kept for every action of ``outcome``, or ``None`` when it kept none
    (or they are not this outcome's: a harness fault replaced it, HARNESS-COUNT)."""
    kept = meta.get(VERDICTS_KEY)
    if not isinstance(kept, Verdicts) or kept.outcome is not outcome:
        return None
    found = kept()
    return found if len(found) == len(outcome.actions) else None


def next_position(state: tuple[T, int], action: Action) -> tuple[T, int]:
    """``past`` for a semantics whose state is ``(task, position)``: the next recorded call."""
    task, position = state
    return (task, position + 1)


__all__ = ["SOURCES_KEY", "VERDICTS_KEY", "Verdicts", "every_verdict", "next_position", "verdicts_of"]
