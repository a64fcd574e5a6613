"""Turn-level prefixes: each user turn is one step (spec: TURN-UNIT, TURN-MAP; spec/turns.md).

``--unit turn`` replaces every rollout of a multi-turn adapter by its turn-level rollout: step j is
the j-th user turn, executable when every call in it is (and every earlier turn was). The
call-level replay decides which call fails first; the turn-level FED is the turn that holds it.

An adapter that knows turns records, per rollout, ``meta["action_turns"]`` (the 1-based user turn
of each action, in action order) and ``meta["turns"]`` (the number of user turns). This module
only maps those onto the kernel's outcome; which messages start a turn is each adapter's rule
(TURN-MAP).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from prefixexec.kernel import Outcome, Rollout

from .errors import InputError

#: The adapters whose rollouts carry their turns (TURN-MAP).
TURN_ADAPTERS = ("bfcl", "chat", "inspect", "taubench")
#: ``--unit`` choices: one step per call (the paper's unit) or per user turn.
UNITS = ("call", "turn")


def turn_outcome(outcome: Outcome, action_turns: Sequence[int], turns: int) -> Outcome:
    """TURN-UNIT: the turn-level outcome of a call-level ``outcome``.

    ``T`` is the number of user turns (at least 1, and at least the last turn holding a call); a
    fully executable rollout stays fully executable (FED = T + 1); otherwise FED is the turn of the
    first non-executable call, with its label and the reason prefixed by where it stood. The
    terminal no-tool action (no call at all) belongs to turn 1.
    """
    horizon = max(1, turns, max(action_turns, default=0))
    if outcome.fully_executable:
        return Outcome(T=horizon, fed=horizon + 1)
    if not action_turns:  # the terminal no-tool action (CONV-NOTOOL)
        fed = 1
        where = "turn 1 (the rollout made no call)"
    else:
        fed = action_turns[outcome.fed - 1]
        where = f"turn {fed} (call {outcome.fed} of {outcome.T})"
    reason = where if outcome.reason is None else f"{where}: {outcome.reason}"
    return Outcome(T=horizon, fed=fed, label=outcome.label, reason=reason)


def _turns_of(rollout: Rollout) -> tuple[list[int], int] | None:
    action_turns = rollout.meta.get("action_turns")
    turns = rollout.meta.get("turns")
    if not isinstance(action_turns, list | tuple) or not isinstance(turns, int):
        return None
    if not all(isinstance(t, int) and not isinstance(t, bool) and t >= 1 for t in action_turns):
        return None
    if "harness_error" in rollout.meta and len(action_turns) == rollout.outcome.T - 1:
        # a counted harness error (HARNESS-COUNT) ends the rollout with one more action: the harness
        # lost the run in its last user turn (TURN-MAP)
        action_turns = [*action_turns, max(1, turns, max(action_turns, default=0))]
    # one turn per action; no call: the terminal no-tool action is the only action (T = 1)
    if len(action_turns) != (rollout.outcome.T if action_turns else 0) or (
        not action_turns and rollout.outcome.T != 1
    ):
        return None
    return list(action_turns), turns


def turn_rollouts(rollouts: Sequence[Rollout], adapter: str) -> list[Rollout]:
    """Every rollout at turn level (TURN-UNIT); the call-level outcome stays in ``meta``
    (``call_T``, ``call_fed``, ``call_actions``) so that the failing call can still be shown."""
    out: list[Rollout] = []
    for rollout in rollouts:
        found = _turns_of(rollout)
        if found is None:
            source = rollout.meta.get("source")
            where = source if isinstance(source, str) else f"task {rollout.task_id!r}, trial {rollout.trial}"
            raise InputError(
                where, f"--unit turn: the {adapter} adapter recorded no user turns for this rollout"
            )
        action_turns, turns = found
        outcome = rollout.outcome
        meta = {
            **rollout.meta,
            "unit": "turn",
            "call_T": outcome.T,
            "call_fed": outcome.fed,
            "call_actions": outcome.actions,
        }
        out.append(attrs.evolve(rollout, outcome=turn_outcome(outcome, action_turns, turns), meta=meta))
    return out


def check_unit(unit: str, adapter: str) -> None:
    """``--unit``: a known unit, and ``turn`` only with an adapter that knows turns (CLI-NO-EFFECT)."""
    if unit not in UNITS:
        raise InputError("--unit", f"expected one of {', '.join(UNITS)}, got {unit!r}")
    if unit == "turn" and adapter not in TURN_ADAPTERS:
        raise InputError(
            "--unit turn",
            f"the {adapter} adapter does not know user turns (turn-level prefixes apply with "
            f"{', '.join(TURN_ADAPTERS)})",
        )


__all__ = ["TURN_ADAPTERS", "UNITS", "check_unit", "turn_outcome", "turn_rollouts"]
