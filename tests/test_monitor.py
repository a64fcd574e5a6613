"""The runtime prefix monitor (spec/integrations.md, MON-*): check, commit, outcome, fork,
JSON-Schema checks and BFCL's live instances."""

from __future__ import annotations

import attrs
import pytest

from prefixexec.adapters import bfcl as bfcl_adapter
from prefixexec.adapters.bfcl.execute import instance_snapshot
from prefixexec.adapters.bfcl.semantics import NO_TOOL_REASON, evaluate, run_from_strings
from prefixexec.adapters.records import RECORDED, RecordedTask, RecordedVerdict
from prefixexec.integrations.monitors import (
    SCHEMA,
    BfclLiveSemantics,
    bfcl_action,
    live_run,
    schema_task,
)
from prefixexec.kernel import NO_TOOL, Accepted, Label, PrefixMonitor, Rejected, ToolCall, Verdict, replay
from prefixexec.kernel.actions import Action
from prefixexec.kernel.monitor import RejectedCommitError

CALL = ToolCall("f", {}, None)
OK = RecordedVerdict(True)
BAD = RecordedVerdict(False, (Label.INFORMATION, Label.DEPENDENCY), "no such file")


def recorded(*verdicts: RecordedVerdict, no_tool: bool = False) -> PrefixMonitor[RecordedTask, object]:
    return PrefixMonitor(RECORDED, RecordedTask(tuple(verdicts), no_tool))


@pytest.mark.spec("MON-CHECK")
def test_check_reports_without_changing_the_monitor() -> None:
    monitor = recorded(OK, BAD)
    state = monitor.state
    assert monitor.check(CALL) == Verdict(True, 1)
    assert monitor.check(CALL) == Verdict(True, 1)
    assert monitor.state is state and monitor.actions == ()
    monitor.commit(CALL)
    verdict = monitor.check(CALL)
    # the primary label is dependency (CONV-LABEL-ORDER: dependency before information)
    assert (verdict.executable, verdict.depth, verdict.label, verdict.reason) == (
        False,
        2,
        Label.DEPENDENCY,
        "no such file",
    )
    assert not verdict and len(monitor.actions) == 1


@pytest.mark.spec("MON-COMMIT", "MON-AFTER-FAILURE", "MON-OUTCOME")
def test_committing_a_rejected_action_records_the_first_error_like_replay() -> None:
    verdicts = (OK, BAD, OK, BAD)
    monitor = recorded(*verdicts)
    results = [monitor.commit(CALL) for _ in verdicts]
    assert [v.executable for v in results] == [True, False, False, False]
    # after the first error every later action is reported as already failed, at its own depth
    assert [v.depth for v in results] == [1, 2, 3, 4]
    assert results[2].reason == "the prefix is already not executable: action 2 was rejected: no such file"
    assert monitor.failure == results[1]
    outcome = monitor.outcome()
    expected = replay(RECORDED, RecordedTask(verdicts, False), [CALL] * 4)
    assert (outcome.T, outcome.fed, outcome.label, outcome.reason) == (4, 2, Label.DEPENDENCY, "no such file")
    assert (outcome.T, outcome.fed, outcome.label, outcome.reason) == (
        expected.T,
        expected.fed,
        expected.label,
        expected.reason,
    )


@pytest.mark.spec("MON-COMMIT")
def test_strict_commit_refuses_a_rejected_action_and_records_nothing() -> None:
    monitor = recorded(BAD)
    with pytest.raises(RejectedCommitError, match="action 1 is not executable: no such file"):
        monitor.commit(CALL, strict=True)
    assert monitor.actions == () and monitor.failure is None


@pytest.mark.spec("MON-OUTCOME")
@pytest.mark.parametrize("allowed", [True, False])
def test_outcome_without_commits_is_the_no_tool_action(allowed: bool) -> None:
    monitor = recorded(no_tool=allowed)
    expected = replay(RECORDED, RecordedTask((), allowed), [])
    got = monitor.outcome()
    assert (got.T, got.fed, got.reason) == (expected.T, expected.fed, expected.reason)
    assert got.fed == (2 if allowed else 1)
    assert monitor.actions == ()


@attrs.define
class Counter:
    value: int


class Mutating:
    """A semantics whose step mutates its state in place (as BFCL's does): accepts while < 2."""

    def initial_state(self, task: None) -> Counter:
        return Counter(0)

    def step(self, state: Counter, action: Action) -> Accepted[Counter] | Rejected:
        state.value += 1
        return Accepted(state) if state.value <= 2 else Rejected((Label.STATE_CONSISTENCY,), "full")


@pytest.mark.spec("MON-FORK")
def test_check_steps_a_fork_when_the_semantics_mutates() -> None:
    monitor = PrefixMonitor(Mutating(), None, fork=lambda s: Counter(s.value))
    for _ in range(5):
        assert monitor.check(CALL).executable
    assert monitor.state.value == 0
    monitor.commit(CALL)
    monitor.commit(CALL)
    assert not monitor.check(CALL) and monitor.state.value == 2
    # without a fork the same checks would have used up the state: the fork is what protects it
    unprotected = PrefixMonitor(Mutating(), None)
    unprotected.check(CALL)
    unprotected.check(CALL)
    assert not unprotected.check(CALL)


# --- JSON-Schema tools (MON-SCHEMA) --------------------------------------------------------------

ADD = {
    "name": "add",
    "description": "Add two integers.",
    "parameters": {
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x", "y"],
        "additionalProperties": False,
    },
}


@pytest.mark.spec("MON-SCHEMA")
@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (ToolCall("add", {"x": 1, "y": 2}, "c1"), None),
        (
            ToolCall("add", {"x": "one", "y": 2}, "c1"),
            "call add (id c1): arguments violate the schema of 'add' at arguments.x: 'one' is not of type "
            "'integer'",
        ),
        (
            ToolCall("add", {"x": 1}, None),
            "call add: arguments violate the schema of 'add' at arguments: 'y' is a required property",
        ),
        (
            ToolCall("rm", {}, "c2"),
            "call rm (id c2): tool 'rm' was not offered to the model (offered: add)",
        ),
    ],
)
def test_schema_check_of_a_candidate_call(call: ToolCall, reason: str | None) -> None:
    for spec in (ADD, {"type": "function", "function": ADD}):  # inspect/MCP form and OpenAI's
        monitor = PrefixMonitor(SCHEMA, schema_task([spec]))
        verdict = monitor.check(call)
        assert verdict.reason == reason
        assert verdict.label == (None if reason is None else Label.SCHEMA)


@pytest.mark.spec("MON-SCHEMA")
def test_schema_no_tool_action_is_allowed_only_without_tools() -> None:
    assert PrefixMonitor(SCHEMA, schema_task([])).check(NO_TOOL)
    refused = PrefixMonitor(SCHEMA, schema_task([ADD])).check(NO_TOOL)
    assert not refused and refused.reason == "no tool call, but the model was offered tools (add)"
    assert PrefixMonitor(SCHEMA, schema_task([ADD], no_tool_allowed=True)).check(NO_TOOL)


@pytest.mark.spec("MON-SCHEMA")
def test_schema_task_rejects_a_bad_schema() -> None:
    with pytest.raises(ValueError, match="tool 'bad': not a valid JSON Schema"):
        schema_task([{"name": "bad", "parameters": {"type": "no-such-type"}}])


# --- BFCL's live instances (MON-BFCL) ------------------------------------------------------------


@pytest.mark.spec("MON-BFCL", "MON-FORK")
def test_bfcl_check_runs_a_candidate_on_a_copy_and_commit_on_the_live_instances() -> None:
    task = bfcl_adapter.task("multi_turn_base_1")
    monitor = PrefixMonitor(BfclLiveSemantics(), live_run(task))
    first = bfcl_action("mkdir(dir_name='made_by_the_agent')", turn=0)
    start = instance_snapshot(monitor.state.world.instances)
    assert monitor.check(first).executable
    assert instance_snapshot(monitor.state.world.instances) == start  # the check ran on a copy
    assert monitor.commit(first).executable
    moved = instance_snapshot(monitor.state.world.instances)
    assert moved != start  # the committed mkdir added a directory to the live file system
    # a candidate whose argument has the wrong type: rejected with BFCL-EXEC's label and reason
    wrong = monitor.check(bfcl_action("cd(folder=42)", turn=0))
    assert (wrong.executable, wrong.label) == (False, Label.SCHEMA)
    # BFCL-TURNS: the first turn (index 0) is turn 1 in the reason
    assert wrong.reason is not None and wrong.reason.startswith("call 2 (turn 1) cd(folder=42) [schema]: ")
    broken = monitor.check(bfcl_action("cd(folder=", turn=0))
    assert (broken.executable, broken.label) == (False, Label.SCHEMA)
    assert instance_snapshot(monitor.state.world.instances) == moved
    assert not monitor.check(NO_TOOL) and monitor.check(NO_TOOL).reason == NO_TOOL_REASON


@pytest.mark.spec("MON-REPLAY", "MON-BFCL")
def test_bfcl_monitor_matches_replay_on_gold_and_on_a_failing_mutant() -> None:
    # multi_turn_base_1's gold is fully executable (its BFCL evaluation replays it to FED = T+1);
    # prefixing turn 0 with cd into a missing folder fails at call 1
    for turns, fully in (
        (bfcl_adapter.gold_turns("multi_turn_base_1"), True),
        ([["cd(folder='no_such_folder')"], *bfcl_adapter.gold_turns("multi_turn_base_1")[1:]], False),
    ):
        run = run_from_strings(bfcl_adapter.task("multi_turn_base_1"), turns)
        expected = evaluate(run, success=False).outcome
        monitor = PrefixMonitor(BfclLiveSemantics(), run)
        for action in run.actions:
            monitor.commit(action)
        got = monitor.outcome()
        assert (got.T, got.fed, got.label, got.reason) == (
            expected.T,
            expected.fed,
            expected.label,
            expected.reason,
        )
        assert got.fully_executable is fully


@pytest.mark.spec("MON-BFCL")
def test_bfcl_live_semantics_serves_one_rollout() -> None:
    semantics = BfclLiveSemantics()
    PrefixMonitor(semantics, live_run(bfcl_adapter.task("multi_turn_base_1")))
    with pytest.raises(RuntimeError, match="serves one rollout"):
        PrefixMonitor(semantics, live_run(bfcl_adapter.task("multi_turn_base_0")))
