"""The tau-bench adapter (spec/adapters/taubench.md): v1 result lists and tau2/tau^3 results.json.

Real data: tests/data/real/tau-bench-v1/gpt-4o-airline.json (200 GPT-4o rollouts, MIT). Every
number pinned for it below was obtained once by an independent loop over the raw JSON that
shares no code with the adapter (quoted in the comments), and the first-failure labels by
reading the 36 first error messages and the arguments of their calls by hand.
tau2/tau^3 files are built here following tau2-bench's data model (src/tau2/data_model/
simulation.py, message.py, tasks.py): tool messages carry `error: true`, several trials,
non-stop terminations, a call without tool message and a tool message answering no call.
"""

from __future__ import annotations

import io
import json
import tempfile
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefixexec.adapters import AdapterOptions, InputError, taubench
from prefixexec.cli import main
from prefixexec.kernel import Cohort, Label, Rollout, compute_metrics

from conftest import REAL

FIXTURE = REAL / "tau-bench-v1" / "gpt-4o-airline.json"
NONE = AdapterOptions()


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def by_key(rollouts: list[Rollout]) -> dict[tuple[str, int], Rollout]:
    return {(r.task_id, r.trial): r for r in rollouts}


def counts(r: Rollout) -> tuple[int, int, int]:
    """The adapter's report of a rollout's recording: calls, rejected calls, unanswered calls."""
    values = (r.meta["calls"], r.meta["rejected_calls"], r.meta["unanswered_calls"])
    assert all(isinstance(v, int) for v in values)
    return (int(str(values[0])), int(str(values[1])), int(str(values[2])))


def shape(r: Rollout) -> tuple[int, int, str | None, bool]:
    """(T, FED, primary label, Y) of a rollout."""
    return (r.outcome.T, r.outcome.fed, None if r.outcome.label is None else r.outcome.label.value, r.success)


# ============================================================================ v1 builders

SYSTEM = {"role": "system", "content": "# Airline Agent Policy\n\nThe current time is 2024-05-15."}


def v1_call(call_id: str, name: str, arguments: object, *more: tuple[str, str]) -> dict[str, Any]:
    """An assistant message with tool_calls; ``more`` adds (id, name) calls v1 never executes."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    calls = [{"function": {"name": name, "arguments": raw}, "id": call_id, "type": "function"}]
    calls += [{"function": {"name": n, "arguments": "{}"}, "id": i, "type": "function"} for i, n in more]
    return {"content": None, "role": "assistant", "tool_calls": calls}


def v1_tool(call_id: str, name: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def v1_user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def v1_record(
    task_id: int, trial: int, traj: list[dict[str, Any]], reward: float = 1.0, gold: tuple[str, ...] = ()
) -> dict[str, Any]:
    task = {
        "user_id": "u",
        "actions": [{"name": n, "kwargs": {}} for n in gold],
        "instruction": "",
        "outputs": [],
    }
    info = {"task": task, "source": "user", "user_cost": 0.0, "reward_info": None}
    return {"task_id": task_id, "reward": reward, "info": info, "traj": [SYSTEM, *traj], "trial": trial}


# ============================================================================ tau2 builders

TAU2_TASKS: list[dict[str, Any]] = [
    {
        "id": "gold",
        "evaluation_criteria": {
            "actions": [
                {
                    "action_id": "a1",
                    "requestor": "assistant",
                    "name": "cancel_reservation",
                    "arguments": {"reservation_id": "ZFA04Y"},
                }
            ],
            "reward_basis": ["DB"],
        },
    },
    {"id": "free", "evaluation_criteria": None},
    {
        "id": "user_only",
        "evaluation_criteria": {
            "actions": [
                {"action_id": "u1", "requestor": "user", "name": "toggle_airplane_mode", "arguments": {}}
            ]
        },
    },
]
TAU2_INFO: dict[str, Any] = {
    "git_commit": "0" * 40,
    "num_trials": 5,
    "max_steps": 100,
    "max_errors": 10,
    "user_info": {"implementation": "user_simulator", "llm": "gpt-4.1"},
    "agent_info": {"implementation": "llm_agent", "llm": "gpt-4.1"},
    "environment_info": {"domain_name": "airline", "policy": "# Airline Agent Policy"},
}


def user(text: str, *calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": text, "tool_calls": list(calls) or None}


def assistant(*calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls) or None}


def call(call_id: str, name: str, requestor: str = "assistant", **arguments: object) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments, "requestor": requestor}


def tool(call_id: str, content: str, error: bool = False, requestor: str = "assistant") -> dict[str, Any]:
    return {"id": call_id, "role": "tool", "content": content, "requestor": requestor, "error": error}


def sim(
    task_id: str,
    trial: int,
    messages: list[dict[str, Any]],
    termination: str = "user_stop",
    reward: float = 1.0,
) -> dict[str, Any]:
    return {
        "id": f"{task_id}-{trial}",
        "task_id": task_id,
        "trial": trial,
        "start_time": "2025-01-01T00:00:00",
        "end_time": "2025-01-01T00:01:00",
        "duration": 60.0,
        "termination_reason": termination,
        "reward_info": {"reward": reward, "db_check": {"db_match": reward == 1.0, "db_reward": reward}},
        "messages": messages,
    }


def tau2(simulations: list[dict[str, Any]], **info: Any) -> dict[str, Any]:
    return {"info": {**TAU2_INFO, **info}, "tasks": TAU2_TASKS, "simulations": simulations}


#: Nine simulations covering the rules; the expected (T, FED, label, Y) of each is in EXPECTED.
SIMULATIONS: list[dict[str, Any]] = [
    # S1: the missing reservation XYZ999 was listed by an earlier tool output -> dependency; recovered.
    sim(
        "gold",
        0,
        [
            {"role": "system", "content": "policy"},
            user("Hi, I am sara_doe_496."),
            assistant(call("c1", "get_user_details", user_id="sara_doe_496")),
            tool("c1", '{"user_id": "sara_doe_496", "reservations": ["ZFA04Y", "XYZ999"]}'),
            assistant(call("c2", "cancel_reservation", reservation_id="XYZ999")),
            tool("c2", "Error: Reservation XYZ999 not found", error=True),
            assistant(call("c3", "cancel_reservation", reservation_id="ZFA04Y")),
            tool("c3", '{"reservation_id": "ZFA04Y", "status": "cancelled"}'),
            assistant(content="Done."),
        ],
    ),
    # S2: two calls in one message; QQQ222 only appears in the first call's output, which the
    # agent had not seen when it issued the second call -> information; agent_stop, reward 0.
    sim(
        "gold",
        1,
        [
            user("Please look at reservation ABC123."),
            assistant(
                call("c1", "get_reservation_details", reservation_id="ABC123"),
                call("c2", "get_reservation_details", reservation_id="QQQ222"),
            ),
            tool("c1", '{"reservation_id": "ABC123", "linked": "QQQ222"}'),
            tool("c2", "Error: Reservation QQQ222 not found", error=True),
        ],
        termination="agent_stop",
        reward=0.0,
    ),
    # S3: a MultiToolMessage, every call accepted, but max_steps: Y = 0 whatever reward_info says
    # (tau2 itself writes reward 0.0 here; 1.0 shows the adapter does not rely on it).
    sim(
        "gold",
        2,
        [
            user("Cancel ZFA04Y please"),
            assistant(
                call("c1", "get_reservation_details", reservation_id="ZFA04Y"),
                call("c2", "get_flight_status", flight_number="HAT001", date="2024-05-15"),
            ),
            {"role": "tool", "tool_messages": [tool("c1", '{"status": "active"}'), tool("c2", "available")]},
        ],
        termination="max_steps",
        reward=1.0,
    ),
    # S4: the second call has no tool message -> schema failure of the recording at depth 2.
    sim(
        "gold",
        3,
        [
            user("Cancel ZFA04Y"),
            assistant(call("c1", "get_reservation_details", reservation_id="ZFA04Y")),
            tool("c1", '{"status": "active"}'),
            assistant(call("c2", "cancel_reservation", reservation_id="ZFA04Y")),
        ],
        reward=0.0,
    ),
    # S5: no call, the task has no gold actions -> executable no-tool action.
    sim("free", 0, [user("Hello"), assistant(content="Hi, how can I help?")]),
    # S6: no call on a task with a gold action -> rejected no-tool action, unlabelled.
    sim("gold", 4, [user("Hello"), assistant(content="Bye")], termination="agent_stop", reward=0.0),
    # S7: telecom style: the user calls a tool; not an action of the agent, gold only user-requested.
    sim(
        "user_only",
        0,
        [
            user("I turned it off", call("u1", "toggle_airplane_mode", requestor="user")),
            tool("u1", "Airplane mode is now OFF", requestor="user"),
            assistant(content="Great."),
        ],
    ),
    # S8: an unknown tool (tau2's text), then a good call; too_many_errors.
    sim(
        "free",
        1,
        [
            user("Book me a flight"),
            assistant(call("c1", "book_flight", origin="JFK")),
            tool("c1", "Error: Tool 'book_flight' not found.", error=True),
            assistant(call("c2", "list_all_airports")),
            tool("c2", '["JFK", "LAX"]'),
        ],
        termination="too_many_errors",
        reward=0.0,
    ),
    # S9: an error text of no family -> state_consistency with the message kept.
    sim(
        "free",
        2,
        [
            user("Pay with my certificate"),
            assistant(call("c1", "update_reservation_flights", payment_id="certificate_1")),
            tool("c1", "Error: Certificate cannot be used to update reservation", error=True),
        ],
        reward=0.0,
    ),
]

#: (T, FED, label, Y) per (task, trial), read off the simulations above by hand.
EXPECTED: dict[tuple[str, int], tuple[int, int, str | None, bool]] = {
    ("gold", 0): (3, 2, "dependency", True),
    ("gold", 1): (2, 2, "information", False),
    ("gold", 2): (2, 3, None, False),
    ("gold", 3): (2, 2, "schema", False),
    ("free", 0): (1, 2, None, True),
    ("gold", 4): (1, 1, None, False),
    ("user_only", 0): (1, 2, None, True),
    ("free", 1): (2, 1, "schema", False),
    ("free", 2): (1, 1, "precondition", False),  # "Certificate cannot be used" (LABEL-PRECONDITION)
}


@pytest.fixture(scope="module")
def fixture_rollouts() -> list[Rollout]:
    return taubench.read([str(FIXTURE)], NONE)


# ============================================================================ real v1 data


@pytest.mark.spec("TAU-V1-FIXTURE", "TAU-CALLS", "TAU-TRIALS", "TAU-DATASET")
def test_v1_fixture_shape(fixture_rollouts: list[Rollout]) -> None:
    rollouts = fixture_rollouts
    # len(json) = 200; {task_id} has 50 ids, trials 0..3 each 50 times (Counter over the JSON).
    assert len(rollouts) == 200
    assert len({r.task_id for r in rollouts}) == 50
    assert Counter(r.trial for r in rollouts) == {0: 50, 1: 50, 2: 50, 3: 50}
    # File name gpt-4o-airline.json -> model gpt-4o, domain airline; default method tool-calling.
    assert {(r.condition.dataset, r.condition.model, r.condition.method) for r in rollouts} == {
        ("tau-bench/airline", "gpt-4o", "tool-calling")
    }
    # Loop: for r in json: for m in r["traj"]: count assistant messages with tool_calls -> 1164,
    # tool messages -> 1164 (every assistant message of the file has exactly one call), tool
    # contents starting with "Error" or "Unknown action" -> 73. The note's three figures agree.
    assert sum(counts(r)[0] for r in rollouts) == 1164
    assert sum(counts(r)[1] for r in rollouts) == 73
    assert sum(counts(r)[2] for r in rollouts) == 0


@pytest.mark.spec("TAU-V1-FIXTURE", "TAU-EXEC", "TAU-NOTOOL", "TAU-SUCCESS")
def test_v1_fixture_per_rollout_sample(fixture_rollouts: list[Rollout]) -> None:
    got = by_key(fixture_rollouts)
    # Independent loop: v = [not c.startswith(("Error", "Unknown action")) for tool messages];
    # T = len(v) (or 1 without calls), FED = first k with v[k-1] false (else T+1; without calls
    # 2 if the task's gold actions are empty else 1); Y = reward == 1.0. Printed once:
    # (0,0) 8 5, (1,0) 1 1, (2,0) 7 8, (3,0) 20 14, (21,1) 1 2, (26,0) 8 6 reward 1,
    # (29,0) 1 1 reward 1, (46,3) 18 9, (49,3) 2 3. Labels from the messages, by hand:
    # (0,0) "payment amount does not add up" (state), (3,0) "not enough seats on flight HAT229"
    # (precondition), (26,0) "payment method not found" for payment_id credit_card_7334, which
    # no user message or earlier tool output contains (information), (46,3) "does not add up".
    assert shape(got[("0", 0)]) == (8, 5, "state_consistency", False)
    assert shape(got[("1", 0)]) == (1, 1, None, False)
    assert shape(got[("2", 0)]) == (7, 8, None, False)
    assert shape(got[("3", 0)]) == (20, 14, "precondition", False)
    assert shape(got[("21", 1)]) == (1, 2, None, True)
    assert shape(got[("26", 0)]) == (8, 6, "information", True)
    assert shape(got[("29", 0)]) == (1, 1, None, True)
    assert shape(got[("46", 3)]) == (18, 9, "state_consistency", False)
    assert shape(got[("49", 3)]) == (2, 3, None, True)
    reason = got[("26", 0)].outcome.reason or ""
    assert "update_reservation_flights" in reason and "payment method not found" in reason
    assert "credit_card_7334" in reason


@pytest.mark.spec("TAU-V1-FIXTURE", "TAU-NOTOOL")
def test_v1_fixture_no_tool_rollouts(fixture_rollouts: list[Rollout]) -> None:
    no_tool = sorted(
        ((int(r.task_id), r.trial), r.outcome.fed == 2, r.success)
        for r in fixture_rollouts
        if r.meta["calls"] == 0
    )
    # Independent loop: rollouts whose traj has no tool message, with allowed = no gold action
    # other than "respond" in info.task.actions, and reward == 1.0. Printed once (18 rollouts):
    expected = [
        ((1, 0), False, False), ((8, 0), False, False), ((9, 0), False, False), ((16, 0), False, False),
        ((29, 0), False, True), ((4, 1), False, False), ((7, 1), False, False), ((9, 1), False, False),
        ((16, 1), False, False), ((21, 1), True, True), ((47, 1), False, True), ((8, 2), False, False),
        ((16, 2), False, False), ((1, 3), False, False), ((5, 3), False, False), ((8, 3), False, False),
        ((12, 3), True, True), ((44, 3), False, False),
    ]  # fmt: skip
    assert no_tool == sorted(expected)
    assert all(r.outcome.T == 1 for r in fixture_rollouts if r.meta["calls"] == 0)


@pytest.mark.spec("TAU-V1-FIXTURE", "TAU-LABELS", "TAU-ENTITY", "MET-LABELS")
def test_v1_fixture_metrics(fixture_rollouts: list[Rollout]) -> None:
    m = compute_metrics(Cohort.from_rollouts(fixture_rollouts))
    # Independent loop over the JSON (T, FED, Y as in the per-rollout test):
    # full = #{FED = T+1} = 148 -> TER 148/200 = 37/50; sum (FED-1)/T as Fractions / 200 =
    # 131988661/157872000 (0.8360...); sum FED = 1201; eligible = 52, of which Y=1: 11;
    # sum Y = 84 -> 84/200 = 21/50 (the note's mean reward 0.42).
    assert m.N == 200
    assert m.TER == Fraction(37, 50)
    assert m.AUC_PEC == Fraction(131988661, 157872000)
    assert m.mean_FED == Fraction(1201, 200)
    assert (m.RR_eligible, m.recovered, m.RR) == (52, 11, Fraction(11, 52))
    assert m.success == Fraction(21, 50)
    # By hand from the 36 first error messages (listed once with their call arguments):
    # 13 "payment amount does not add up" + 5 "gift card balance is not enough" + 1 "not enough
    # balance in payment method" = 19 state_consistency; 8 "not enough seats" + 5 "flight ... not
    # available" = 13 precondition; 4 "payment method not found" whose payment_id
    # (credit_card_7334 twice, credit_card_5634230 twice) never occurs in an earlier user or
    # tool message = 4 information; plus 16 refused no-tool actions (18 minus 2 allowed).
    assert m.label_counts == {
        "schema": 0,
        "dependency": 0,
        "precondition": 13,
        "state_consistency": 19,
        "information": 4,
        "unlabelled": 16,
    }


@pytest.mark.spec("TAU-V1-FIXTURE", "TAU-DATASET")
def test_v1_fixture_cli_end_to_end(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(["score", "--adapter", "taubench", str(FIXTURE)], capsys)
    assert code == 0 and err == ""
    assert "tau-bench/airline / gpt-4o" in out and "tool-calling" in out
    code, out, err = run(["score", "--adapter", "taubench", "--json", str(FIXTURE)], capsys)
    assert code == 0 and err == ""
    (cond,) = json.loads(out)["conditions"]
    # The same independent figures as test_v1_fixture_metrics, through the CLI's JSON contract.
    assert (cond["dataset"], cond["model"], cond["method"], cond["N"]) == (
        "tau-bench/airline",
        "gpt-4o",
        "tool-calling",
        200,
    )
    assert cond["exact"]["TER"] == "37/50" and cond["exact"]["RR"] == "11/52"
    assert cond["exact"]["success"] == "21/50" and cond["RR_eligible"] == 52
    assert "adapter:taubench" in json.loads(out)["signature"]
    # --model and --method override the file name.
    code, out, _ = run(
        ["score", "--adapter", "taubench", "--json", "--model", "m", "--method", "x", str(FIXTURE)], capsys
    )
    assert code == 0
    (cond,) = json.loads(out)["conditions"]
    assert (cond["model"], cond["method"]) == ("m", "x")


# ============================================================================ tau2 / tau^3


@pytest.mark.spec("TAU-FORMAT", "TAU-CALLS", "TAU-EXEC", "TAU-SUCCESS", "TAU-TRIALS", "TAU-DATASET")
def test_tau2_outcomes(tmp_path: Path) -> None:
    rollouts = taubench.read([str(write(tmp_path / "results.json", tau2(SIMULATIONS)))], NONE)
    assert {k: shape(r) for k, r in by_key(rollouts).items()} == EXPECTED
    assert {(r.condition.dataset, r.condition.model, r.condition.method) for r in rollouts} == {
        ("tau-bench/airline", "gpt-4.1", "llm_agent")
    }
    got = by_key(rollouts)
    assert got[("gold", 3)].meta["unanswered_calls"] == 1
    assert got[("free", 1)].meta["rejected_calls"] == 1


@pytest.mark.spec("TAU-SUCCESS", "EQ-8", "EQ-9", "EQ-11", "MET-LABELS")
def test_tau2_metrics(tmp_path: Path) -> None:
    rollouts = taubench.read([str(write(tmp_path / "results.json", tau2(SIMULATIONS)))], NONE)
    m = compute_metrics(Cohort.from_rollouts(rollouts))
    # From EXPECTED by hand: fully executable (FED = T+1): (gold,2), (free,0), (user_only,0) -> 3/9;
    # (FED-1)/T: 1/3, 1/2, 1, 1/2, 1, 0, 1, 0, 0 -> 13/3 / 9 = 13/27; sum FED = 16;
    # failing 6, successful among them only (gold,0) -> RR 1/6; successes 3 -> 1/3.
    assert (m.N, m.TER, m.AUC_PEC, m.mean_FED) == (9, Fraction(1, 3), Fraction(13, 27), Fraction(16, 9))
    assert (m.RR_eligible, m.RR, m.success) == (6, Fraction(1, 6), Fraction(1, 3))
    assert m.label_counts == {
        "schema": 2,
        "dependency": 1,
        "precondition": 1,  # (free, 2): "Certificate cannot be used" (LABEL-PRECONDITION)
        "state_consistency": 0,
        "information": 1,
        "unlabelled": 1,  # (gold, 4): no family matches its message
    }


@pytest.mark.spec("TAU-UNANSWERED", "TAU-LABELS")
def test_tau2_reasons(tmp_path: Path) -> None:
    got = by_key(taubench.read([str(write(tmp_path / "r.json", tau2(SIMULATIONS)))], NONE))
    assert got[("gold", 3)].outcome.reason == (
        "call 2 cancel_reservation (id c2): no tool message answers this call (incomplete recording)"
    )
    assert got[("free", 2)].outcome.reason == (
        "call 1 update_reservation_flights (id c1): Error: Certificate cannot be used to update "
        "reservation"
    )
    assert "never occurred" in (got[("gold", 1)].outcome.reason or "")
    assert (
        got[("gold", 4)].outcome.reason
        == "terminal no-tool action: the rollout made no tool call, which the task does not allow "
        "(it has 1 gold assistant action(s))"
    )


@pytest.mark.spec("TAU-ENTITY")
def test_entity_seen_in_a_later_message_is_a_dependency(tmp_path: Path) -> None:
    # S2 with the second call moved to its own message after the first call's output: now the
    # agent had seen QQQ222 when it issued the call, so the failure is a dependency failure.
    messages = [
        user("Please look at reservation ABC123."),
        assistant(call("c1", "get_reservation_details", reservation_id="ABC123")),
        tool("c1", '{"reservation_id": "ABC123", "linked": "QQQ222"}'),
        assistant(call("c2", "get_reservation_details", reservation_id="QQQ222")),
        tool("c2", "Error: Reservation QQQ222 not found", error=True),
    ]
    (r,) = taubench.read([str(write(tmp_path / "r.json", tau2([sim("gold", 0, messages)])))], NONE)
    assert shape(r) == (2, 2, "dependency", True)
    # The id only in the agent's own text does not count as seen.
    messages[2] = tool("c1", '{"reservation_id": "ABC123"}')
    messages.insert(3, assistant(content="There is also QQQ222."))
    (r,) = taubench.read([str(write(tmp_path / "r.json", tau2([sim("gold", 0, messages)])))], NONE)
    assert r.outcome.label is Label.INFORMATION


@pytest.mark.spec("TAU-ENTITY")
def test_the_seen_conversation_accumulates(tmp_path: Path) -> None:
    # XYZ999 was said by the user two calls before the failing one: still seen -> dependency.
    messages = [
        user("My other booking is XYZ999."),
        assistant(call("c1", "get_user_details", user_id="sara_doe_496")),
        tool("c1", '{"user_id": "sara_doe_496"}'),
        user("And please hurry."),
        assistant(call("c2", "list_all_airports")),
        tool("c2", '["JFK"]'),
        assistant(call("c3", "cancel_reservation", reservation_id="XYZ999")),
        tool("c3", "Error: Reservation XYZ999 not found", error=True),
    ]
    (r,) = taubench.read([str(write(tmp_path / "r.json", tau2([sim("gold", 0, messages)])))], NONE)
    assert shape(r) == (3, 3, "dependency", True)


@pytest.mark.spec("TAU-ENTITY")
def test_missing_entity_ids() -> None:
    f = taubench.missing_entity_ids
    assert f("Error: flight HAT030 not found on date 2024-05-13", {}) == ("HAT030",)
    assert f("Error: Reservation ZZZZZZ not found", {"reservation_id": "ZZZZZZ"}) == ("ZZZZZZ",)
    assert f("Error: payment method certificate_7504069 not found", {}) == ("certificate_7504069",)
    args = {"reservation_id": "M20IZO", "payment_id": "credit_card_7334", "cabin": "business"}
    assert f("Error: payment method not found", args) == ("credit_card_7334",)
    assert f("Error: Order not found", {"order_id": "#W1", "reason": "no longer needed"}) == ("#W1",)
    # No key shares a word with "User": every string argument is a candidate.
    assert f("Error: User not found", {"email": "a@b.c", "n": 3}) == ("a@b.c",)
    assert f("Error: nothing", {"x": "y"}) == ()


@pytest.mark.spec("TAU-ENTITY")
def test_occurrence_is_a_whole_token_ignoring_case() -> None:
    labels, _ = taubench.classify("Error: Reservation ABC12 not found", {}, ["see ABC123"])
    assert labels == (Label.INFORMATION,)
    labels, _ = taubench.classify("Error: Reservation ABC12 not found", {}, ["see XABC12"])
    assert labels == (Label.INFORMATION,)
    labels, _ = taubench.classify("Error: Reservation ABC12 not found", {}, ["code abc12."])
    assert labels == (Label.DEPENDENCY,)


@pytest.mark.spec("TAU-LABELS")
@pytest.mark.parametrize(
    ("message", "primary"),
    [
        ("Unknown action book_flight", Label.SCHEMA),
        ("Error: Tool 'x' not found.", Label.SCHEMA),
        ("Error: book() missing 1 required positional argument: 'cabin'", Label.SCHEMA),
        ("Error: book() got an unexpected keyword argument 'seat'", Label.SCHEMA),
        ("Error: Invalid reason", Label.SCHEMA),
        ("Error: non-pending order cannot be modified", Label.PRECONDITION),
        ("Error: Non-delivered order cannot be exchanged", Label.PRECONDITION),
        ("Error: flight HAT030 not available on date 2024-05-13", Label.PRECONDITION),
        ("Error: not enough seats on flight HAT229", Label.PRECONDITION),
        ("Error: payment amount does not add up, total price is 305, but paid 255", Label.STATE_CONSISTENCY),
        ("Error: gift card balance is not enough", Label.STATE_CONSISTENCY),
        ("Error: insufficient gift card balance to pay for the new item", Label.STATE_CONSISTENCY),
    ],
)
def test_label_families(message: str, primary: Label) -> None:
    labels, _ = taubench.classify(message, {}, [])
    assert labels[0] is primary


@pytest.mark.spec("LABEL-UNMATCHED", "TAU-LABELS")
def test_a_message_no_family_matches_is_unlabelled() -> None:
    assert taubench.classify("Error: something else entirely", {}, []) == ((), " [no label family matched]")


@pytest.mark.spec("TAU-LABELS", "CONV-LABEL-ORDER")
def test_several_families_keep_the_tie_break_order(tmp_path: Path) -> None:
    # "Tool 'x' not found" is schema and (x never seen) information: the kernel keeps schema.
    labels, _ = taubench.classify("Error: Tool 'x' not found.", {"q": "x"}, [])
    assert labels == (Label.SCHEMA, Label.INFORMATION)
    messages = [user("hi"), assistant(call("c1", "x", q="x")), tool("c1", "Error: Tool 'x' not found.", True)]
    (r,) = taubench.read([str(write(tmp_path / "r.json", tau2([sim("free", 0, messages)])))], NONE)
    assert r.outcome.label is Label.SCHEMA


@pytest.mark.spec("TAU-DATASET")
def test_tau2_model_and_method_options(tmp_path: Path) -> None:
    path = str(write(tmp_path / "r.json", tau2(SIMULATIONS[:1])))
    (r,) = taubench.read([path], AdapterOptions(model="M", method="dual-loop"))
    assert (r.condition.model, r.condition.method) == ("M", "dual-loop")
    bare = {"implementation": "llm_agent", "llm": None}
    with pytest.raises(InputError, match="pass --model"):
        taubench.read([str(write(tmp_path / "b.json", tau2(SIMULATIONS[:1], agent_info=bare)))], NONE)


# ============================================================================ v1 rules on small files


@pytest.mark.spec("TAU-CALLS", "TAU-EXEC", "TAU-LABELS")
def test_v1_first_call_of_a_message_and_unknown_action(tmp_path: Path) -> None:
    traj = [
        v1_user("I am mia_li_3668"),
        # Two calls in one message: only the first is executed and is an action.
        v1_call("a", "get_user_details", {"user_id": "mia_li_3668"}, ("b", "think")),
        v1_tool("a", "get_user_details", '{"name": "Mia"}'),
        v1_call("c", "fly", {}),
        v1_tool("c", "fly", "Unknown action fly"),
        # A Python literal is not JSON: the arguments are not evaluated, the call keeps none.
        v1_call("d", "get_user_details", "{'user_id': __import__('os').getpid()}"),
        v1_tool("d", "get_user_details", "Error: user not found"),
    ]
    (r,) = taubench.read([str(write(tmp_path / "gpt-4o-airline.json", [v1_record(0, 0, traj)]))], NONE)
    assert shape(r) == (3, 2, "schema", True)
    assert r.meta["rejected_calls"] == 2


@pytest.mark.spec("TAU-CALLS", "TAU-EXEC")
def test_open_calls_with_one_id_are_answered_in_order(tmp_path: Path) -> None:
    # Two open calls share the id "x" (tau2 ids default to ""): the first tool message answers
    # the first call, so the rejection is at depth 1, not 2.
    messages = [
        user("hi"),
        assistant(call("x", "get_user_details", user_id="u1"), call("x", "get_user_details", user_id="u2")),
        tool("x", "Error: User u1 not found", error=True),
        tool("x", '{"user_id": "u2"}'),
    ]
    (r,) = taubench.read([str(write(tmp_path / "r.json", tau2([sim("free", 0, messages)])))], NONE)
    assert shape(r) == (2, 1, "information", True)


@pytest.mark.spec("TAU-NOTOOL")
def test_v1_respond_is_not_a_gold_action(tmp_path: Path) -> None:
    # tau-bench v1 drops "respond" from the gold actions when it scores; so does the no-tool rule.
    only_respond = v1_record(0, 0, [v1_user("hi")], gold=("respond",))
    with_tool = v1_record(1, 0, [v1_user("hi")], gold=("respond", "get_user_details"))
    got = by_key(taubench.read([str(write(tmp_path / "m-airline.json", [only_respond, with_tool]))], NONE))
    assert (got[("0", 0)].outcome.fed, got[("1", 0)].outcome.fed) == (2, 1)
    assert got[("1", 0)].outcome.reason == (
        "terminal no-tool action: the rollout made no tool call, which the task does not allow "
        "(it has 1 gold action(s))"
    )


@pytest.mark.spec("TAU-CRASH", "HARNESS-COUNT", "HARNESS-WHERE")
def test_v1_crashed_run_is_a_counted_harness_error(tmp_path: Path) -> None:
    crash = {
        "task_id": 7,
        "reward": 0.0,
        "info": {"error": "rate limit", "traceback": "..."},
        "traj": [],
        "trial": 0,
    }
    ok = v1_record(7, 1, [v1_user("hi"), {"role": "assistant", "content": "bye"}])
    ok["traj"] = ok["traj"][1:]  # no system prompt: the domain comes from the file name alone
    rollouts = taubench.read([str(write(tmp_path / "gpt-4o-retail.json", [crash, ok]))], NONE)
    got = by_key(rollouts)
    assert shape(got[("7", 0)]) == (1, 1, None, False)
    # No frame in the traceback: it says where nothing; never "before any action" (HARNESS-WHERE)
    assert got[("7", 0)].outcome.reason == (
        "harness error: the run crashed: rate limit; its trajectory was not recorded (traj: [])"
    )
    assert shape(got[("7", 1)]) == (1, 2, None, True)
    assert {r.condition.dataset for r in rollouts} == {"tau-bench/retail"}


@pytest.mark.spec("TAU-SUCCESS")
def test_success_is_reward_one(tmp_path: Path) -> None:
    records = [v1_record(0, 0, [v1_user("hi")], reward=r) for r in (1.0, 0.99, 0.0)]
    for trial, record in enumerate(records):
        record["trial"] = trial
    got = by_key(taubench.read([str(write(tmp_path / "m-airline.json", records))], NONE))
    assert [got[("0", t)].success for t in range(3)] == [True, False, False]
    sims = [sim("free", t, [], reward=r) for t, r in enumerate((1.0, 0.5, 0.0))]
    got = by_key(taubench.read([str(write(tmp_path / "r.json", tau2(sims)))], NONE))
    assert [got[("free", t)].success for t in range(3)] == [True, False, False]


@pytest.mark.spec("TAU-DATASET")
def test_v1_names() -> None:
    checkpoint = "tool-calling-gpt-4o-0.0_range_0--1_user-gpt-4o-llm_1216112233.json"
    n = taubench.v1_naming(f"/x/{checkpoint}")
    assert (n.model, n.strategy, n.domain) == ("gpt-4o", "tool-calling", None)
    n = taubench.v1_naming("react-claude-3-5-sonnet-20241022-0.0_range_0-50_user-gpt-4o-llm_0101.json")
    assert (n.model, n.strategy) == ("claude-3-5-sonnet-20241022", "react")
    n = taubench.v1_naming("sonnet-35-new-retail.json")
    assert (n.model, n.domain, n.strategy) == ("sonnet-35-new", "retail", None)
    n = taubench.v1_naming("results.json")
    assert (n.model, n.domain, n.strategy) == (None, None, None)


@pytest.mark.spec("TAU-DATASET")
def test_v1_domain_from_system_prompt(tmp_path: Path) -> None:
    name = "few-shot-gpt-4o-0.0_range_0-2_user-gpt-4o-llm_0101.json"
    retail = {"role": "system", "content": "# Retail agent policy\n..."}
    record = v1_record(0, 0, [v1_user("hi")])
    record["traj"][0] = retail
    (r,) = taubench.read([str(write(tmp_path / name, [record]))], NONE)
    assert (r.condition.dataset, r.condition.model, r.condition.method) == (
        "tau-bench/retail",
        "gpt-4o",
        "few-shot",
    )
    # The file name says airline, the system prompt retail: refused.
    with pytest.raises(InputError, match="system prompt says domain 'retail', the file name says 'airline'"):
        taubench.read([str(write(tmp_path / "m-airline.json", [record]))], NONE)
    # Neither a name nor a prompt: the model is the file's stem (TAU-V1-MODEL-STEM), the domain
    # cannot be told: refused, with or without --model.
    record["traj"] = [v1_user("hi")]
    with pytest.raises(InputError, match="cannot tell the domain"):
        taubench.read([str(write(tmp_path / "out.json", [record]))], NONE)
    with pytest.raises(InputError, match="cannot tell the domain"):
        taubench.read([str(write(tmp_path / "out.json", [record]))], AdapterOptions(model="m"))


# ============================================================================ property: v1 FED


@st.composite
def v1_trajectories(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[str]]:
    """A v1 trajectory of calls answered 'ok', 'Error', 'Unknown action' or not at all."""
    kinds = draw(st.lists(st.sampled_from(["ok", "error", "unknown", "unanswered"]), max_size=8))
    traj: list[dict[str, Any]] = [v1_user("hi")]
    for i, kind in enumerate(kinds):
        traj.append(v1_call(f"id{i}", "tool", {}))
        if kind != "unanswered":
            text = {"ok": "{}", "error": "Error: no", "unknown": "Unknown action tool"}[kind]
            traj.append(v1_tool(f"id{i}", "tool", text))
    return traj, kinds


@pytest.mark.spec("TAU-EXEC", "TAU-UNANSWERED", "TAU-NOTOOL", "EQ-1")
@given(v1_trajectories(), st.booleans())
def test_v1_fed_is_the_first_rejected_call(case: tuple[list[dict[str, Any]], list[str]], free: bool) -> None:
    traj, kinds = case
    gold = () if free else ("book_reservation",)
    with tempfile.TemporaryDirectory() as folder:
        (r,) = taubench.read(
            [str(write(Path(folder) / "m-airline.json", [v1_record(0, 0, traj, gold=gold)]))], NONE
        )
    if not kinds:
        assert (r.outcome.T, r.outcome.fed) == (1, 2 if free else 1)
    else:
        bad = [k for k, kind in enumerate(kinds, start=1) if kind != "ok"]
        assert (r.outcome.T, r.outcome.fed) == (len(kinds), bad[0] if bad else len(kinds) + 1)


# ============================================================================ bad input (CLI)


def score_fails(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run `score --adapter taubench`; it must exit 2 with one error line and no output."""
    code, out, err = run(["score", "--adapter", "taubench", *argv], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("prefixexec: error: ") and err.count("\n") == 1
    return err


@pytest.mark.spec("TAU-ERRORS", "TAU-FORMAT")
def test_wrong_shape(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path / "r.json", {"results": []})
    err = score_fails([str(path)], capsys)
    assert f"{path}: not a tau-bench results file: expected a JSON list (v1) or an object with" in err
    path = write(
        tmp_path / "gpt-4o-airline.json", [v1_record(0, 0, []), {"task_id": 5, "reward": 1.0, "info": {}}]
    )
    err = score_fails([str(path)], capsys)
    assert f"{path}: record 1 (task 5, trial 0): 'traj' must be a JSON list, got absent" in err
    bad = tau2([sim("nope", 2, [])])
    err = score_fails([str(write(tmp_path / "t.json", bad))], capsys)
    assert "simulations[0] (task 'nope', trial 2): task 'nope' is not in 'tasks'" in err
    (tmp_path / "x.json").write_text("[{]", encoding="utf-8")
    assert "x.json: not valid JSON" in score_fails([str(tmp_path / "x.json")], capsys)
    assert "no such file" in score_fails([str(tmp_path / "missing.json")], capsys)


@pytest.mark.spec("TAU-ERRORS", "TAU-FORMAT")
def test_unsupported_variants_are_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    react = v1_record(0, 0, [v1_user("hi"), {"role": "assistant", "content": 'Action: {"name": "x"}'}])
    react["traj"].append(v1_user("API output: {}"))
    err = score_fails([str(write(tmp_path / "m-airline.json", [react]))], capsys)
    assert "(act/react strategy)" in err
    ticks = sim("free", 0, [])
    ticks["messages"], ticks["ticks"] = None, [{"tick_id": 0}]
    assert "full-duplex" in score_fails([str(write(tmp_path / "t.json", tau2([ticks])))], capsys)
    folder = {"info": TAU2_INFO, "tasks": TAU2_TASKS, "simulations": [], "simulation_index": [{"id": "a"}]}
    assert "dir-format" in score_fails([str(write(tmp_path / "d.json", folder))], capsys)


@pytest.mark.spec("TAU-ERRORS", "TAU-CALLS")
def test_tool_message_answering_no_call(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    traj = [
        v1_user("hi"),
        v1_call("a", "x", {}, ("b", "y")),
        v1_tool("a", "x", "{}"),
        v1_tool("b", "y", "{}"),
    ]
    path = write(tmp_path / "gpt-4o-airline.json", [v1_record(3, 1, traj)])
    err = score_fails([str(path)], capsys)
    # The second call of the message is never executed in v1, so nothing can answer it.
    assert f"{path}: record 0 (task 3, trial 1): traj[4]: tool message answers no call" in err
    messages = [user("hi"), assistant(call("c1", "x")), tool("c1", "{}"), tool("c1", "{}")]
    path = write(tmp_path / "results.json", tau2([sim("free", 4, messages)]))
    err = score_fails([str(path)], capsys)
    assert f"{path}: simulations[0] (task 'free', trial 4): messages[3]: tool message answers no call" in err
    assert "no earlier unanswered call has id 'c1'" in err


@pytest.mark.spec("TAU-ERRORS", "TAU-TRIALS")
def test_duplicate_task_and_trial(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(
        tmp_path / "results.json", tau2([sim("free", 1, []), sim("gold", 1, []), sim("free", 1, [])])
    )
    err = score_fails([str(path)], capsys)
    assert f"{path}: simulations[2] (task 'free', trial 1): duplicate rollout: task 'free', trial 1" in err
    assert f"first read at {path}: simulations[0]" in err
    # The same v1 file name in two folders is the same condition: a duplicate across files.
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = write(tmp_path / "a" / "gpt-4o-airline.json", [v1_record(0, 0, [v1_user("hi")])])
    two = write(tmp_path / "b" / "gpt-4o-airline.json", [v1_record(0, 0, [v1_user("hi")])])
    err = score_fails([str(one), str(two)], capsys)
    assert f"{two}: record 0 (task 0, trial 0): duplicate rollout: task '0', trial 0" in err
    assert f"first read at {one}: record 0" in err


@pytest.mark.spec("TAU-ERRORS")
def test_nothing_is_written_on_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = write(tmp_path / "results.json", tau2(SIMULATIONS))
    bad = write(tmp_path / "bad.json", tau2([sim("gold", 0, [tool("zz", "{}")])]))
    target = tmp_path / "out.json"
    score_fails(["--output", str(target), str(good), str(bad)], capsys)
    assert not target.exists()
    assert main(["score", "--adapter", "taubench", "--output", str(target), str(good)]) == 0
    assert "tau-bench/airline / gpt-4.1" in target.read_text(encoding="utf-8")


@pytest.mark.spec("TAU-V1-NAME", "TAU-V1-MODEL-STEM")
def test_a_renamed_file_reports_its_real_defect_before_the_missing_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 30: a renamed copy of the real run with a broken record said "cannot tell the model"
    # and hid the record's fault, which --model then revealed.
    data = json.loads(
        (REAL / "tau-bench-v1" / "gpt-4o-airline.json").read_text(encoding="utf-8")
    )
    data[3]["traj"] = 5
    renamed = tmp_path / "run.json"
    renamed.write_text(json.dumps(data), encoding="utf-8")
    assert main(["score", "--quiet", "--bootstrap", "0", str(renamed)]) == 2
    assert (
        f"{renamed}: record 3 (task 3, trial 0): 'traj' must be a JSON list, got int"
        in capsys.readouterr().err
    )
    # Mended, the renamed file names no model: read with the model named after its stem, said in
    # one line (TAU-V1-MODEL-STEM); --model silences it.
    data[3]["traj"] = []
    renamed.write_text(json.dumps(data), encoding="utf-8")
    assert main(["score", "--bootstrap", "0", "--json", str(renamed)]) == 0
    out, err = capsys.readouterr()
    assert [c["model"] for c in json.loads(out)["conditions"]] == ["run"]
    notice = (
        f"prefixexec: warning: {renamed}: neither the records nor the file name (<model>-<domain>.json) "
        "name the model: read as model 'run', the file's stem (TAU-V1-MODEL-STEM); pass --model to set it"
    )
    assert err.splitlines()[1:] == [notice]  # after "reading ... as taubench (detected ...)"
    # --quiet silences the notice (PROGRESS-QUIET), and so does --model (it is not needed).
    assert main(["score", "--quiet", "--bootstrap", "0", str(renamed)]) == 0
    assert capsys.readouterr().err == ""
    assert main(["score", "--bootstrap", "0", "--model", "m", str(renamed)]) == 0
    assert "TAU-V1-MODEL-STEM" not in capsys.readouterr().err
    # Standard input has no stem: refused, after every record was checked.
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(data)))
    assert main(["score", "--quiet", "--bootstrap", "0", "--adapter", "taubench", "-"]) == 2
    assert "cannot tell the model from the records (stdin has no file name); pass --model" in (
        capsys.readouterr().err
    )
