"""A runtime prefix monitor: ask before each call whether the prefix stays executable.

Spec: spec/integrations.md (MON-CHECK, MON-COMMIT, MON-AFTER-FAILURE, MON-OUTCOME, MON-FORK,
MON-REPLAY). :class:`PrefixMonitor` holds the state that an agent's committed actions induced
under an adapter's :class:`~.replay.Semantics`. :meth:`PrefixMonitor.check` steps a candidate
action from that state and reports the verdict without keeping the new state;
:meth:`PrefixMonitor.commit` steps it and keeps it. Committing every action of a trajectory in
order gives the same outcome (T, FED, label, reason) as :func:`~.replay.replay` on it
(MON-REPLAY): the monitor is replay run one action at a time.

Semantics whose ``step`` mutates its state in place (BFCL executes Python objects) give the
monitor a ``fork`` (an argument, or a ``fork`` method of the semantics) that copies a state;
``check`` then steps a fork and the live state is untouched (MON-FORK).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

import attrs

from .actions import NO_TOOL, Action, Label, primary_label
from .replay import Accepted, Outcome, Rejected, Semantics

S = TypeVar("S")
Task = TypeVar("Task")


def _labels(value: tuple[Label, ...] | list[Label]) -> tuple[Label, ...]:
    return tuple(value)


@attrs.frozen(slots=True)
class Verdict:
    """Whether action number ``depth`` of the trajectory is (or would be) executable.

    ``labels`` are every violated check and ``label`` the primary one (CONV-LABEL-ORDER);
    ``reason`` says why it is not executable (``None`` when it is). ``observation`` is what an
    accepted step returned (the tool's output where the semantics runs the tool).
    """

    executable: bool
    depth: int
    labels: tuple[Label, ...] = attrs.field(default=(), converter=_labels)
    reason: str | None = None
    observation: object = attrs.field(default=None, eq=False, repr=False)

    @property
    def label(self) -> Label | None:
        """The primary label (CONV-LABEL-ORDER); ``None`` when executable or unlabelled."""
        return primary_label(self.labels)

    def __bool__(self) -> bool:
        return self.executable


class RejectedCommitError(ValueError):
    """Raised by ``commit(..., strict=True)`` when the committed action is not executable."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(f"action {verdict.depth} is not executable: {verdict.reason}")
        self.verdict = verdict


class PrefixMonitor(Generic[Task, S]):
    """Prefix replay one action at a time, with a side-effect-free look-ahead (MON-*).

    ``check(action)`` answers: if ``action`` ran now, would the prefix stay executable? It
    never changes the monitor (MON-CHECK). ``commit(action)`` records that the agent ran
    ``action``: the state advances when it is executable; when it is not, the monitor records
    the first error (FED, label, reason) exactly as replay does and stops stepping: later
    commits only count towards T (MON-COMMIT, MON-AFTER-FAILURE). ``outcome()`` is the
    :class:`~.replay.Outcome` of what was committed so far (MON-OUTCOME).

    ``fork`` copies a state for ``check``; when not given, the semantics' own ``fork`` method
    is used if it has one, else states are taken as immutable (the :class:`~.replay.Semantics`
    contract: ``step`` does not mutate its state) (MON-FORK).
    """

    def __init__(
        self,
        semantics: Semantics[Task, S],
        task: Task,
        *,
        fork: Callable[[S], S] | None = None,
    ) -> None:
        self.semantics = semantics
        self.task = task
        method = getattr(semantics, "fork", None)
        self._fork: Callable[[S], S] | None = fork if fork is not None else method
        self._state: S = semantics.initial_state(task)
        self._actions: list[Action] = []
        self._failure: Verdict | None = None

    # --- queries -----------------------------------------------------------------------------

    @property
    def state(self) -> S:
        """The state the committed actions induced (stops advancing at the first rejection)."""
        return self._state

    @property
    def actions(self) -> tuple[Action, ...]:
        """The committed actions a_1..a_T."""
        return tuple(self._actions)

    @property
    def failure(self) -> Verdict | None:
        """The verdict of the first committed action that was not executable (a_FED), if any."""
        return self._failure

    def _verdict(self, depth: int, result: Accepted[S] | Rejected) -> Verdict:
        if isinstance(result, Rejected):
            return Verdict(False, depth, result.labels, result.reason)
        return Verdict(True, depth, (), None, result.observation)

    def _after_failure(self, depth: int) -> Verdict:
        failed = self._failure
        assert failed is not None
        return Verdict(
            False,
            depth,
            failed.labels,
            f"the prefix is already not executable: action {failed.depth} was rejected: {failed.reason}",
        )

    def check(self, action: Action) -> Verdict:
        """Would the prefix stay executable if ``action`` ran now? Changes nothing (MON-CHECK)."""
        depth = len(self._actions) + 1
        if self._failure is not None:
            return self._after_failure(depth)
        state = self._fork(self._state) if self._fork is not None else self._state
        return self._verdict(depth, self.semantics.step(state, action))

    def commit(self, action: Action, *, strict: bool = False) -> Verdict:
        """Record that ``action`` ran: advance the state, or record the first error (MON-COMMIT).

        Returns the action's verdict. With ``strict=True`` a non-executable action raises
        :class:`RejectedCommitError` and is not recorded.
        """
        depth = len(self._actions) + 1
        if self._failure is not None:
            verdict = self._after_failure(depth)
            if strict:
                raise RejectedCommitError(verdict)
            self._actions.append(action)
            return verdict
        if strict:
            probe = self.check(action)
            if not probe.executable:
                raise RejectedCommitError(probe)
        result = self.semantics.step(self._state, action)
        verdict = self._verdict(depth, result)
        if isinstance(result, Accepted):
            self._state = result.state
        else:
            self._failure = verdict
        self._actions.append(action)
        return verdict

    def outcome(self) -> Outcome:
        """The outcome of the committed actions, as :func:`~.replay.replay` gives it (MON-OUTCOME).

        With no committed action the trajectory is the terminal no-tool action (CONV-NOTOOL),
        checked without committing it.
        """
        if not self._actions:
            verdict = self.check(NO_TOOL)
            if verdict.executable:
                return Outcome(T=1, fed=2, actions=(NO_TOOL,))
            return Outcome(T=1, fed=1, label=verdict.label, reason=verdict.reason, actions=(NO_TOOL,))
        T = len(self._actions)
        failed = self._failure
        if failed is None:
            return Outcome(T=T, fed=T + 1, actions=self._actions)
        return Outcome(T=T, fed=failed.depth, label=failed.label, reason=failed.reason, actions=self._actions)


__all__ = ["PrefixMonitor", "RejectedCommitError", "Verdict"]
