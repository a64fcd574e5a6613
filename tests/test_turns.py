"""Turn-level prefixes, --unit turn (TURN-UNIT, TURN-MAP).

The laws of TURN-UNIT are property tests over arbitrary call-level outcomes and turn maps. On
real runs the turn of every call is recounted here from the raw JSON with loops of this file
(json only, no adapter code): tau2 and v1 user turns are user messages with non-empty text, an
inspect turn is a user message, a BFCL turn is an element of ``result`` whose call steps are
the non-empty lists of ``{name: arguments}`` objects. The call-level (T, FED) comes from the
independent oracles of tests/test_taubench_real.py for tau-bench, and from the adapter for BFCL
and inspect, whose call-level outcomes their own real-fixture tests pin.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import attrs
import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_rollouts import SCHEMA
from test_taubench_real import AIRLINE_V1, TELECOM, oracle_tau2, oracle_v1

import prefixexec
from prefixexec.adapters import AdapterOptions, InputError, bfcl, chat, inspect_logs
from prefixexec.adapters.turns import turn_outcome, turn_rollouts
from prefixexec.cli import main
from prefixexec.kernel import Cohort, Label, Outcome, compute_metrics

from conftest import REAL, real_text

LEADERBOARD = REAL / "tau2-leaderboard"
RETAIL = LEADERBOARD / "gpt-4.1_retail_defautl_gpt-4.1_1trials.json.zst"
BFCL_REAL = REAL / "bfcl-gpt-oss-20b" / "openai_gpt-oss-20b" / "multi_turn"
BFCL_FILE = BFCL_REAL / "BFCL_v4_multi_turn_base_result.json"
INSPECT = REAL / "inspect"
ARITHMETIC = INSPECT / "inst-logs_2025-04-07T11-00-30-05-00_arithmetic-with-tool_gKECTBvzvzgtPqQCd3cirF.json"
TOOL_CALL_ERROR = INSPECT / "log_tool_call_error.json"


# ---------------------------------------------------------------------------------------------
# Laws (TURN-UNIT)


@st.composite
def call_outcomes(draw: st.DrawFn) -> tuple[Outcome, list[int], int]:
    """A call-level outcome, a non-decreasing turn per action, and the number of user turns."""
    calls = draw(st.integers(0, 12))
    turns = sorted(draw(st.lists(st.integers(1, 8), min_size=calls, max_size=calls)))
    U = draw(st.integers(0, 9))
    T = max(calls, 1)
    fed = draw(st.integers(1, T + 1))
    label = None if fed == T + 1 else draw(st.sampled_from([None, *Label]))
    return Outcome(T=T, fed=fed, label=label, reason=None if fed == T + 1 else "why"), turns, U


@pytest.mark.spec("TURN-UNIT")
@given(call_outcomes())
def test_turn_outcome_laws(case: tuple[Outcome, list[int], int]) -> None:
    outcome, turns, U = case
    turned = turn_outcome(outcome, turns, U)
    assert turned.T == max(1, U, *turns)
    assert turned.fully_executable == outcome.fully_executable
    assert turned.label == outcome.label
    if outcome.fully_executable:
        return
    if not turns:  # the no-tool action: turn 1
        assert turned.fed == 1
        return
    assert turned.fed == turns[outcome.fed - 1]
    # every call of an earlier turn replayed; the failing call sits in turn FED'
    assert all(k < outcome.fed for k, t in enumerate(turns, start=1) if t < turned.fed)
    assert turned.reason is not None and turned.reason.startswith(f"turn {turned.fed} (call {outcome.fed} of")


@pytest.mark.spec("TURN-UNIT")
@given(st.integers(1, 10), st.data())
def test_one_call_per_turn_is_the_identity(T: int, data: st.DataObject) -> None:
    fed = data.draw(st.integers(1, T + 1))
    outcome = Outcome(T=T, fed=fed, label=None if fed == T + 1 else Label.SCHEMA)
    turned = turn_outcome(outcome, list(range(1, T + 1)), T)
    assert (turned.T, turned.fed, turned.label) == (outcome.T, outcome.fed, outcome.label)


@pytest.mark.spec("TURN-UNIT")
@given(st.lists(call_outcomes(), min_size=1, max_size=8), st.lists(st.booleans(), min_size=8, max_size=8))
def test_ter_rr_labels_and_success_do_not_change(cases: list[Any], ys: list[bool]) -> None:
    calls = [(str(i), o, ys[i]) for i, (o, _, _) in enumerate(cases)]
    turned = [(str(i), turn_outcome(o, t, u), ys[i]) for i, (o, t, u) in enumerate(cases)]
    a, b = compute_metrics(Cohort.from_outcomes(calls)), compute_metrics(Cohort.from_outcomes(turned))
    assert (a.TER, a.RR, a.RR_eligible, a.recovered, a.success, a.labels) == (
        b.TER, b.RR, b.RR_eligible, b.recovered, b.success, b.labels)  # fmt: skip


@pytest.mark.spec("TURN-UNIT")
@given(call_outcomes(), st.integers(1, 12))
def test_a_later_first_failure_never_moves_to_an_earlier_turn(case: Any, shift: int) -> None:
    outcome, turns, U = case
    if outcome.fully_executable or not turns:
        return
    later = Outcome(T=outcome.T, fed=min(outcome.fed + shift, outcome.T + 1))
    assert turn_outcome(later, turns, U).fed >= turn_outcome(outcome, turns, U).fed


# ---------------------------------------------------------------------------------------------
# Real runs (TURN-MAP), against independent counts


def _said(message: dict[str, Any]) -> bool:
    return isinstance(message.get("content"), str) and bool(message["content"].strip())


def tau2_turns(path: Path) -> dict[tuple[str, int], tuple[list[int], int]]:
    """(task, trial) -> (turn of each assistant call, user turns), from the raw tau2 JSON."""
    out: dict[tuple[str, int], tuple[list[int], int]] = {}
    for sim in json.loads(real_text(path))["simulations"]:
        turn, calls = 0, []
        for m in sim["messages"] or []:
            if m["role"] == "user" and _said(m):
                turn += 1
            if m["role"] == "assistant":
                mine = [c for c in m.get("tool_calls") or [] if c.get("requestor", "assistant") != "user"]
                calls += [max(turn, 1)] * len(mine)
        out[(sim["task_id"], sim["trial"])] = (calls, turn)
    return out


def v1_turns(path: Path) -> dict[tuple[str, int], tuple[list[int], int]]:
    out: dict[tuple[str, int], tuple[list[int], int]] = {}
    for r in json.loads(real_text(path)):
        turn, calls = 0, []
        for m in r["traj"]:
            if m["role"] == "user" and _said(m):
                turn += 1
            if m["role"] == "assistant" and m.get("tool_calls"):
                calls.append(max(turn, 1))
        out[(str(r["task_id"]), r["trial"])] = (calls, turn)
    return out


def expected(turns: list[int], U: int, T: int, fed: int) -> tuple[int, int]:
    """The turn-level (T', FED') of TURN-UNIT, from the call-level (T, FED) and the turns."""
    horizon = max([1, U, *turns])
    if fed == T + 1:
        return horizon, horizon + 1
    return horizon, (turns[fed - 1] if turns else 1)


@pytest.mark.spec("TURN-MAP", "TURN-UNIT")
@pytest.mark.parametrize(
    ("path", "count", "oracle"),
    [
        (RETAIL, tau2_turns, oracle_tau2),
        (TELECOM, tau2_turns, oracle_tau2),
        (AIRLINE_V1, v1_turns, oracle_v1),
    ],
    ids=["tau2-retail", "tau2-telecom", "v1-airline"],
)
def test_taubench_turns_against_an_independent_count(path: Path, count: Any, oracle: Any) -> None:
    turns, calls = count(path), oracle(path)
    rollouts = prefixexec.read("taubench", str(path), unit="turn")
    assert len(rollouts) == len(turns) == len(calls)
    for r in rollouts:
        call_turns, U = turns[(r.task_id, r.trial)]
        T, fed = calls[(r.task_id, r.trial)][:2]
        assert (r.outcome.T, r.outcome.fed) == expected(call_turns, U, T, fed), (r.task_id, r.trial)
        assert (r.meta["call_T"], r.meta["call_fed"]) == (T, fed)


@pytest.mark.spec("TURN-MAP", "TURN-UNIT")
def test_retail_turn_level_figures() -> None:
    turns, calls = tau2_turns(RETAIL), oracle_tau2(RETAIL)
    outcomes = {k: expected(*turns[k], *calls[k][:2]) for k in turns}
    # From the independent counts: 40 rollouts, 32 fully executable (as at call level), and
    # these turn-level totals of FED and T.
    fed_sum, full = sum(f for _, f in outcomes.values()), sum(f == t + 1 for t, f in outcomes.values())
    assert (len(outcomes), full) == (40, 32)
    scores = prefixexec.score(str(RETAIL), bootstrap=0, unit="turn")
    (cond,) = scores.conditions
    assert cond.mean_FED == Fraction(fed_sum, 40)
    assert cond.TER == Fraction(32, 40)
    call_level = prefixexec.score(str(RETAIL), bootstrap=0)
    assert call_level.conditions[0].TER == cond.TER  # TER does not change
    assert "unit=turn" in scores.signature and "unit" not in call_level.signature


def bfcl_turns(path: Path) -> dict[str, tuple[list[int], int]]:
    """task -> (turn of each call, turns): a call is an item of a non-empty list step."""
    out: dict[str, tuple[list[int], int]] = {}
    for line in real_text(path).splitlines():
        e = json.loads(line)
        calls = [t + 1 for t, turn in enumerate(e["result"]) for step in turn
                 if isinstance(step, list) for item in step for _ in item]  # fmt: skip
        out[e["id"]] = (calls, len(e["result"]))
    return out


@pytest.mark.spec("TURN-MAP", "TURN-UNIT")
def test_bfcl_turns_against_an_independent_count() -> None:
    turns = bfcl_turns(BFCL_FILE)
    call_level = {r.task_id: r.outcome for r in bfcl.read([str(BFCL_FILE)], AdapterOptions())}
    turned = bfcl.read([str(BFCL_FILE)], AdapterOptions())  # the adapter's own read, then:
    rollouts = turn_rollouts(turned, "bfcl")
    assert {r.task_id: r.outcome for r in prefixexec.read("bfcl", str(BFCL_FILE), unit="turn")} == {
        r.task_id: r.outcome for r in rollouts
    }
    failing_in_later_turns = 0
    for r in rollouts:
        o, (call_turns, U) = call_level[r.task_id], turns[r.task_id]
        assert len(call_turns) == o.T or (not call_turns and o.T == 1)
        assert (r.outcome.T, r.outcome.fed) == expected(call_turns, U, o.T, o.fed)
        failing_in_later_turns += not o.fully_executable and r.outcome.fed > 1
    # 5 of the 15 entries fail after a wholly executable first turn (multi_turn_base_0, 1, 6, 8,
    # 10: their first failing call sits in turn 2, 3, 2, 2, 4 by the loop above): BFCL's
    # all-or-nothing check hides those good turns, the turn-level PEC shows them
    assert failing_in_later_turns == 5


@pytest.mark.spec("TURN-MAP")
@pytest.mark.parametrize("path", [ARITHMETIC, TOOL_CALL_ERROR], ids=["arithmetic", "tool-call-error"])
def test_inspect_turns_against_an_independent_count(path: Path) -> None:
    log = json.loads(real_text(path))
    raw: dict[tuple[str, int], tuple[list[int], int]] = {}
    for s in log["samples"]:
        turn, calls = 0, []
        for m in s["messages"]:
            turn += m["role"] == "user"
            if m["role"] == "assistant":
                calls += [max(turn, 1)] * len(m.get("tool_calls") or [])
        raw[(str(s["id"]), s.get("epoch", 1))] = (calls, turn)
    turned = prefixexec.read("inspect", str(path), unit="turn")
    for call_r, turn_r in zip(inspect_logs.read([str(path)], AdapterOptions()), turned, strict=True):
        call_turns, U = raw[(call_r.task_id, call_r.trial)]
        o = call_r.outcome
        assert (turn_r.outcome.T, turn_r.outcome.fed) == expected(call_turns, U, o.T, o.fed)


@pytest.mark.spec("TURN-MAP")
def test_chat_tool_results_in_user_messages_are_not_turns(tmp_path: Path) -> None:
    line = {
        "task_id": "a", "success": True, "tools": [{"name": "f"}],
        "messages": [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "1", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "1", "content": "ok"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "2", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "2", "content": "boom",
                                          "is_error": True}]},
            {"role": "user", "content": [{"type": "text", "text": "second"}]},
            {"role": "assistant", "content": "done"},
            {"role": "user", "content": "third"},
        ],
    }  # fmt: skip
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    options = AdapterOptions(model="m", method="x")
    (call,) = chat.read([str(path)], options)
    assert call.meta["action_turns"] == [1, 1] and call.meta["turns"] == 3
    (turned,) = turn_rollouts([call], "chat")
    # call 2 fails in turn 1; the turn-level horizon is the 3 user turns
    assert (call.outcome.T, call.outcome.fed) == (2, 2)
    assert (turned.outcome.T, turned.outcome.fed) == (3, 1)
    assert turned.outcome.reason is not None and turned.outcome.reason.startswith("turn 1 (call 2 of 2)")


@pytest.mark.spec("TURN-UNIT")
def test_rows_name_the_failing_turn_and_its_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rows.jsonl"
    code = main(["score", str(RETAIL), "--unit", "turn", "--bootstrap", "0", "--quiet",
                 "--rollouts", str(out)])  # fmt: skip
    assert code == 0
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    failing = [r for r in rows if not r["executable"]]
    assert len(failing) == 8  # 40 - 32 fully executable (independent count above)
    for r in rows:
        jsonschema.validate(r, SCHEMA)  # OUT-ROLLOUTS' schema holds the turn rows too
    for r in failing:
        f = r["failing"]
        assert f["kind"] == "turn" and f["turn"] == f["position"] == r["fed"]
        assert (f["tool"], f["arguments"]) == (f["call"]["tool"], f["call"]["arguments"])
        assert f["call"]["kind"] == "tool_call" and f["call"]["turn"] == r["fed"]
        assert r["reason"].startswith(f"turn {r['fed']} (call {f['call']['position']} of ")
    assert "unit=turn" in capsys.readouterr().out


@pytest.mark.spec("TURN-UNIT")
@pytest.mark.parametrize("adapter", ["records", "toolsandbox", "parquet"])
def test_adapters_without_turns_refuse_the_turn_unit(
    adapter: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text("", encoding="utf-8")
    code = main(["score", "--adapter", adapter, str(path), "--unit", "turn", "--bootstrap", "0"])
    err = capsys.readouterr().err
    assert code == 2 and f"the {adapter} adapter does not know user turns" in err


@pytest.mark.spec("TURN-UNIT")
def test_a_rollout_without_recorded_turns_is_an_input_error() -> None:
    from prefixexec.kernel import ConditionKey, Rollout

    bare = Rollout(ConditionKey("d", "m", "x"), "t", 0, Outcome(T=1, fed=2), True, {"source": "f.jsonl:3"})
    with pytest.raises(InputError, match=r"f.jsonl:3: --unit turn: the chat adapter recorded no user turns"):
        turn_rollouts([bare], "chat")


ASSERTIONS = (
    REAL / "tau-bench-v1-retail" / "assertions-agent-none-0.1_range_0-100_6_18_2025.json.zst"
)


@pytest.mark.spec("TURN-MAP", "TURN-UNIT", "HARNESS-COUNT")
def test_a_counted_harness_error_fails_in_the_last_turn() -> None:
    # The assertions-agent run (tau-bench v1 retail): counted from the raw list, 34 rollouts have
    # `traj: []` and `info.error` (crashed in the harness); with `traj` empty they have no user turn
    # and no call, so at turn level each is T = 1, FED = 1 (the harness action in turn 1).
    raw = json.loads(real_text(ASSERTIONS))
    crashed = {(str(r["task_id"]), r["trial"]) for r in raw if not r["traj"] and r["info"].get("error")}
    assert len(crashed) == 34
    rollouts = prefixexec.read(
        "taubench", str(ASSERTIONS), model="none", method="assertions-agent", unit="turn"
    )
    lost = [r for r in rollouts if "harness_error" in r.meta]
    assert {(r.task_id, r.trial) for r in lost} == crashed
    assert {(r.outcome.T, r.outcome.fed, r.outcome.label) for r in lost} == {(1, 1, None)}
    # A harness error after calls: its action belongs to the last user turn.
    crafted = attrs.evolve(
        lost[0], outcome=Outcome(T=3, fed=3), meta={**lost[0].meta, "action_turns": [1, 2], "turns": 3}
    )
    (turned,) = turn_rollouts([crafted], "taubench")
    assert (turned.outcome.T, turned.outcome.fed) == (3, 3)
