"""MON-REPLAY: the monitor run action by action gives replay's outcome, for every adapter.

Trajectories come from each adapter's real fixtures: the trajectories ``prefixexec audit`` builds
for it (captured by replacing the audit's ``run_audit`` with a function that keeps the plan) and
every mutant of the adapter's audit operators, cut at a drawn length (length 0 is the no-tool
action). BFCL trajectories are bfcl-eval's ground-truth calls of real tasks with drawn
mutations (a call dropped, repeated, moved, or replaced by a foreign or broken call), run on the
live instances. For each, committing the actions one by one must give replay's (T, FED, label,
reason); each ``check`` must equal the ``commit`` that follows it; and ``check`` must leave the
state as it found it (for BFCL: the instance snapshot is unchanged).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prefixexec.adapters import AdapterOptions
from prefixexec.adapters import bfcl as bfcl_adapter
from prefixexec.adapters.audit import AuditPlan
from prefixexec.adapters.bfcl.execute import instance_snapshot
from prefixexec.adapters.bfcl.semantics import evaluate, run_from_strings
from prefixexec.integrations.monitors import BfclLiveSemantics
from prefixexec.kernel import Outcome, PrefixMonitor, replay
from prefixexec.kernel.actions import Action

from conftest import REAL, REPO
from strategies import monitor_cuts

CHAT = REPO / "tests" / "data" / "chat" / "transcripts.jsonl"
INSPECT = REPO / "tests" / "data" / "inspect" / "tiny_tools.eval"
TAU = REAL / "tau-bench-v1" / "gpt-4o-airline.json"
DEMO = REPO / "examples" / "demo.jsonl"
TOOLSANDBOX = REPO / "tests" / "data" / "toolsandbox-real"


def _captured(module: ModuleType, name: str, call: Callable[[], Any]) -> AuditPlan[Any]:
    plans: list[AuditPlan[Any]] = []

    def keep(plan: AuditPlan[Any], seed: int = 0) -> None:
        plans.append(plan)

    with mock.patch.object(module, name, keep):
        call()
    assert len(plans) == 1
    return plans[0]


def _fixture(path: Path) -> str:
    assert path.exists(), f"missing fixture {path}"  # fail loudly, never skip
    return str(path)


@cache
def plans() -> dict[str, AuditPlan[Any]]:
    from prefixexec.adapters import audit as audit_module
    from prefixexec.adapters.chat import operators as chat_ops
    from prefixexec.adapters.inspect_logs import operators as inspect_ops
    from prefixexec.adapters.records import audit as records_audit
    from prefixexec.adapters.taubench import operators as tau_ops
    from prefixexec.adapters.toolsandbox import operators as tsb_ops

    options = AdapterOptions()
    runs = sorted(str(p.parent) for p in TOOLSANDBOX.rglob("result_summary.json"))
    assert runs, f"no ToolSandbox runs in {TOOLSANDBOX}"
    return {
        "chat": _captured(chat_ops, "run_audit", lambda: chat_ops.audit([_fixture(CHAT)], options)),
        "inspect": _captured(
            inspect_ops, "run_audit", lambda: inspect_ops.audit([_fixture(INSPECT)], options)
        ),
        "taubench": _captured(tau_ops, "run_audit", lambda: tau_ops.audit([_fixture(TAU)], options)),
        "toolsandbox": _captured(tsb_ops, "run_audit", lambda: tsb_ops.audit(runs, options)),
        "records": _captured(audit_module, "run_audit", lambda: records_audit([_fixture(DEMO)], options)),
    }


@cache
def trajectories(adapter: str) -> tuple[tuple[Any, tuple[Action, ...]], ...]:
    """Every base trajectory of the adapter's audit plan and every mutant of its operators."""
    plan = plans()[adapter]
    bases = plan.bases if plan.bases is not None else plan.gold
    assert bases, f"{adapter}: the audit plan has no trajectories"
    found: list[tuple[Any, tuple[Action, ...]]] = []
    for base in bases:
        found.append((base.task, base.actions))
        outcome = replay(plan.semantics, base.task, base.actions)
        for operator in plan.operators:
            found.extend((m.task, m.actions) for m in operator.make(base.task, base.actions, outcome))
    return tuple(found)


def shape(outcome: Outcome) -> tuple[int, int, object, str | None]:
    return outcome.T, outcome.fed, outcome.label, outcome.reason


def monitored(
    semantics: Any, task: Any, actions: Sequence[Action], snapshot: Callable[[Any], Any]
) -> Outcome:
    monitor: PrefixMonitor[Any, Any] = PrefixMonitor(semantics, task)
    for action in actions:
        before = snapshot(monitor.state)
        probe = monitor.check(action)
        assert monitor.check(action) == probe  # asking twice gives the same answer
        assert snapshot(monitor.state) == before  # check changed nothing (MON-CHECK)
        assert monitor.actions == tuple(actions[: probe.depth - 1])
        assert monitor.commit(action) == probe  # the committed verdict is the one check gave
    return monitor.outcome()


@pytest.mark.spec("MON-REPLAY", "MON-CHECK", "MON-COMMIT", "MON-AFTER-FAILURE", "MON-OUTCOME")
@pytest.mark.parametrize("adapter", ["chat", "inspect", "taubench", "toolsandbox", "records"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_monitor_equals_replay_on_real_trajectories(adapter: str, data: st.DataObject) -> None:
    items = trajectories(adapter)
    task, actions = items[data.draw(st.integers(0, len(items) - 1), label="trajectory")]
    cut = data.draw(monitor_cuts(actions), label="actions")
    plan = plans()[adapter]
    expected = replay(plan.semantics, task, cut)
    # these semantics keep immutable states: the state object itself must be left alone
    got = monitored(plan.semantics, task, cut, lambda state: (id(state), state))
    assert shape(got) == shape(expected)


def test_the_fixtures_give_failing_and_passing_trajectories() -> None:
    """The property above is not vacuous: each adapter's trajectories hold both outcomes."""
    for adapter in plans():
        semantics = plans()[adapter].semantics
        outcomes = [replay(semantics, task, actions) for task, actions in trajectories(adapter)]
        assert any(o.fully_executable for o in outcomes), adapter
        assert any(not o.fully_executable for o in outcomes), adapter


# --- BFCL: live instances, candidate calls, no mutation by check (MON-BFCL) -----------------------

BFCL_TASKS = ("multi_turn_base_0", "multi_turn_base_1", "multi_turn_miss_func_0", "multi_turn_miss_param_1")
#: Calls that are not the ground truth's: a foreign class's method, an unknown function, a
#: broken call, and a call whose argument has the wrong type.
FOREIGN = ("add(a=1, b=2)", "rmrf(path='/')", "cd(folder=", "cd(folder=42)", "ls(a=True)", "pwd()")


@st.composite
def bfcl_turns(draw: st.DrawFn) -> tuple[str, list[list[str]]]:
    task_id = draw(st.sampled_from(BFCL_TASKS))
    turns = [list(turn) for turn in bfcl_adapter.gold_turns(task_id)]
    for _ in range(draw(st.integers(0, 3))):
        t = draw(st.integers(0, len(turns) - 1))
        kind = draw(st.sampled_from(("drop", "repeat", "insert", "move")))
        if kind == "insert":
            turns[t].insert(draw(st.integers(0, len(turns[t]))), draw(st.sampled_from(FOREIGN)))
        elif turns[t]:
            i = draw(st.integers(0, len(turns[t]) - 1))
            call = turns[t].pop(i) if kind in ("drop", "move") else turns[t][i]
            if kind == "repeat":
                turns[t].insert(i, call)
            elif kind == "move":
                turns[draw(st.integers(0, len(turns) - 1))].append(call)
    return task_id, turns


@pytest.mark.spec("MON-REPLAY", "MON-BFCL", "MON-FORK")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=bfcl_turns())
def test_bfcl_monitor_on_live_instances_equals_replay(case: tuple[str, list[list[str]]]) -> None:
    task_id, turns = case
    run = run_from_strings(bfcl_adapter.task(task_id), turns)
    expected = evaluate(run, success=False).outcome
    got = monitored(
        BfclLiveSemantics(), run, run.actions, lambda state: instance_snapshot(state.world.instances)
    )
    assert shape(got) == shape(expected)
