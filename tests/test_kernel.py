"""Unit tests of replay, outcomes, labels and hand-computed estimator values."""

from __future__ import annotations

from fractions import Fraction

import attrs
import numpy as np
import pytest

from prefixexec.kernel import (
    NO_TOOL,
    Accepted,
    Action,
    Cohort,
    Label,
    Outcome,
    Rejected,
    ToolCall,
    compute_metrics,
    pec_elig,
    primary_label,
    replay,
)

from strategies import cohort_of


@attrs.frozen
class ToyTask:
    """A task for the toy semantics: which tools exist and whether no tools is allowed."""

    tools: frozenset[str]
    no_tool_allowed: bool = False


class LoginSemantics:
    """Toy benchmark: `login` establishes a session; `book` needs it; unknown tools are schema."""

    def __init__(self) -> None:
        self.steps = 0

    def initial_state(self, task: ToyTask) -> tuple[ToyTask, bool]:
        return (task, False)

    def step(self, state: tuple[ToyTask, bool], action: Action) -> Accepted[tuple[ToyTask, bool]] | Rejected:
        self.steps += 1
        task, logged_in = state
        if action is NO_TOOL:
            return Accepted(state) if task.no_tool_allowed else Rejected((Label.INFORMATION,), "no tool")
        assert isinstance(action, ToolCall)
        if action.name not in task.tools:
            return Rejected((Label.SCHEMA,), f"unknown tool {action.name}")
        if action.name == "login":
            return Accepted((task, True))
        if action.name == "book" and not logged_in:
            return Rejected((Label.STATE_CONSISTENCY, Label.PRECONDITION), "not logged in")
        return Accepted(state)


TASK = ToyTask(frozenset({"login", "book", "search"}))


@pytest.mark.spec("CONV-REPLAY", "EQ-1")
def test_replay_stops_at_first_rejection_and_counts_all_actions() -> None:
    sem = LoginSemantics()
    calls = [ToolCall("search"), ToolCall("book"), ToolCall("login"), ToolCall("book")]
    outcome = replay(sem, TASK, calls)
    # Hand count: a_1 accepted, a_2 rejected (not logged in) -> FED 2; T counts all 4 actions.
    assert (outcome.T, outcome.fed, outcome.reason) == (4, 2, "not logged in")
    assert sem.steps == 2  # replay stopped at the first rejection: linear, no re-replay


@pytest.mark.spec("CONV-REPLAY", "EQ-1")
def test_replay_fully_executable_has_fed_T_plus_1() -> None:
    outcome = replay(LoginSemantics(), TASK, [ToolCall("login"), ToolCall("book")])
    assert (outcome.T, outcome.fed, outcome.label, outcome.fully_executable) == (2, 3, None, True)


@pytest.mark.spec("CONV-LABEL-ORDER")
def test_primary_label_is_first_in_tie_break_order() -> None:
    outcome = replay(LoginSemantics(), TASK, [ToolCall("book")])
    # The rejection names state_consistency and precondition: precondition comes first in the order.
    assert outcome.label is Label.PRECONDITION
    assert primary_label([Label.INFORMATION, Label.SCHEMA, Label.DEPENDENCY]) is Label.SCHEMA
    assert primary_label([]) is None
    assert [label.value for label in Label] == [
        "schema",
        "dependency",
        "precondition",
        "state_consistency",
        "information",
    ]


@pytest.mark.spec("CONV-NOTOOL")
def test_no_tool_rollout_is_one_terminal_action() -> None:
    allowed = replay(LoginSemantics(), ToyTask(frozenset(), no_tool_allowed=True), [])
    refused = replay(LoginSemantics(), ToyTask(frozenset(), no_tool_allowed=False), [])
    assert (allowed.T, allowed.fed) == (1, 2)
    assert (refused.T, refused.fed, refused.label) == (1, 1, Label.INFORMATION)


@pytest.mark.spec("INV-FED-RANGE")
@pytest.mark.parametrize(("T", "fed"), [(0, 1), (3, 0), (3, 5), (1, -1)])
def test_outcome_rejects_fed_outside_range(T: int, fed: int) -> None:
    with pytest.raises(ValueError, match="must be"):
        Outcome(T=T, fed=fed)


@pytest.mark.spec("INV-FED-RANGE", "CONV-LABEL-ORDER")
def test_outcome_rejects_label_on_executable_rollout() -> None:
    with pytest.raises(ValueError, match="fully executable"):
        Outcome(T=2, fed=3, label=Label.SCHEMA)


@pytest.mark.spec("INV-FED-RANGE")
def test_cohort_rejects_fed_outside_range() -> None:
    with pytest.raises(ValueError, match=r"\[1, T\+1\]"):
        Cohort(T=[2], fed=[4], Y=[True], label_code=[-1], task=["a"])


@pytest.mark.spec("INV-IMMUTABLE")
def test_cohort_copies_its_input_and_is_read_only() -> None:
    T = np.array([2, 3])
    c = Cohort(T=T, fed=[3, 1], Y=[True, False], label_code=[-1, 5], task=["a", "b"])
    T[0] = 9
    assert int(c.T[0]) == 2
    with pytest.raises(ValueError, match="read-only"):
        c.T[0] = 1
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        c.task = ("x",)  # type: ignore[misc]  # deliberately writing a frozen attribute


@pytest.mark.spec("CONV-EXACT", "CONV-FIXED-COHORT", "CONV-PEC-RANGE", "CONV-UNDEFINED", "EQ-3")
def test_hand_computed_cohort() -> None:
    # Four rollouts (T, FED, Y), computed by hand:
    #   r1 (3, 4, 1) fully executable; r2 (3, 2, 1) fails at 2; r3 (1, 1, 0) fails at 1;
    #   r4 (2, 3, 0) fully executable.
    items = [
        (Outcome(3, 4), True),
        (Outcome(3, 2, Label.SCHEMA), True),
        (Outcome(1, 1), False),
        (Outcome(2, 3), False),
    ]
    m = compute_metrics(cohort_of(items))
    assert m.N == 4
    # PEC(k) = #{FED > k}/4: k=1: r1,r2,r4 -> 3/4; k=2: r1,r4 -> 2/4; k=3: r1 -> 1/4.
    assert m.PEC == (Fraction(3, 4), Fraction(1, 2), Fraction(1, 4))
    # n_k: k=1: 4; k=2: r1,r2,r4 = 3; k=3: r1,r2 = 2.
    assert m.n_k == (4, 3, 2)
    # PEC_elig: 3/4; 2/3; 1/2.
    assert m.PEC_elig == (Fraction(3, 4), Fraction(2, 3), Fraction(1, 2))
    assert m.TER == Fraction(2, 4)
    # AUC: (3/3 + 1/3 + 0/1 + 2/2) / 4 = (7/3)/4 = 7/12.
    assert m.AUC_PEC == Fraction(7, 12)
    assert m.mean_FED == Fraction(4 + 2 + 1 + 3, 4)
    assert m.success == Fraction(1, 2)
    # RR: eligible r2, r3; recovered r2 -> 1/2.
    assert (m.RR, m.RR_eligible, m.recovered) == (Fraction(1, 2), 2, 1)
    assert m.label_counts == {
        "schema": 1,
        "dependency": 0,
        "precondition": 0,
        "state_consistency": 0,
        "information": 0,
        "unlabelled": 1,
    }
    d = m.decomposition
    # s = successes among executable (r1 of r1, r4) = 1/2; q s + (1-q) r = 1/4 + 1/4 = 1/2.
    assert (d.q, d.s, d.r, d.uninterrupted, d.recovered) == (
        Fraction(1, 2),
        Fraction(1, 2),
        Fraction(1, 2),
        1,
        1,
    )


@pytest.mark.spec("CONV-UNDEFINED")
def test_undefined_values_are_none() -> None:
    c = cohort_of([(Outcome(1, 2), True), (Outcome(2, 1), False)])
    # n_3 = 0 beyond max T = 2: PEC_elig(3) is undefined, not 0.
    assert (pec_elig(c.T, c.fed, 2), pec_elig(c.T, c.fed, 3)) == (Fraction(0), None)
    only_ok = compute_metrics(cohort_of([(Outcome(2, 3), True)]))
    assert only_ok.RR is None and only_ok.RR_eligible == 0
    only_bad = compute_metrics(cohort_of([(Outcome(2, 1), True)]))
    assert only_bad.decomposition.s is None and only_bad.RR == 1
    gap = compute_metrics(cohort_of([(Outcome(3, 4), True), (Outcome(1, 2), True)]))
    assert gap.PEC_elig == (Fraction(1), Fraction(1), Fraction(1))
