"""Harness errors apart from agent failures, on real runs and on the edge cases (spec/harness.md).

Real runs: the tau-bench v1 retail run of the assertions-agent (tests/data/real, MIT), 34 of
whose 100 records crashed in the harness, and the ToolSandbox runs under tests/data/toolsandbox-real
(two scenarios ToolSandbox itself aborted). Every count pinned here is made in this file from the
raw JSON with its own loop (``json`` only), as each comment says. tau2's ``infrastructure_error``
and chat's ``harness_error`` have no real run here: crafted records cover them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_taubench import assistant, call, run, sim, tau2, tool, user

from prefixexec.adapters import AdapterOptions, InputError, chat, harness, taubench, toolsandbox
from prefixexec.kernel import Cohort, compute_metrics

from conftest import REAL, REPO, real_text

ASSERTIONS = (
    REAL / "tau-bench-v1-retail" / "assertions-agent-none-0.1_range_0-100_6_18_2025.json.zst"
)
TSB_REAL = REPO / "tests" / "data" / "toolsandbox-real"
CLI_RUN = TSB_REAL / "agent_cli_agent_user_cli_user_12_03_2026_02_03_36"
HERMES_RUN = TSB_REAL / "agent_NousResearch" / "Hermes-2-Pro-Mistral-7B_user_cli_user_12_03_2026_02_02_51"


def _records() -> list[dict[str, Any]]:
    return list(json.loads(real_text(ASSERTIONS)))


def _crashed(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if "error" in r["info"] and r["traj"] == []]


# --- tau-bench v1: the assertions-agent run -----------------------------------------------------


@pytest.mark.spec("HARNESS-WHICH", "HARNESS-DEFAULT", "HARNESS-COUNT", "TAU-CRASH", "TAU-HARNESS")
def test_crashed_v1_runs_are_counted_harness_errors_by_default() -> None:
    records = _records()
    crashed = _crashed(records)
    # The loop above: 34 records hold info.error with an empty traj, all with reward 0.
    assert len(records) == 100 and len(crashed) == 34 and all(r["reward"] == 0.0 for r in crashed)
    rollouts = taubench.read([str(ASSERTIONS)], AdapterOptions())
    lost = {(str(r["task_id"]), r["trial"]) for r in crashed}
    mine = [r for r in rollouts if (r.task_id, r.trial) in lost]
    assert len(rollouts) == 100 and len(mine) == 34
    for r in mine:
        assert (r.outcome.T, r.outcome.fed, r.outcome.label, r.success) == (1, 1, None, False)
        assert isinstance(r.outcome.actions[0], harness.HarnessFault)
        assert str(r.outcome.reason).startswith("harness error: the run crashed")
        assert "before any action" not in str(r.outcome.reason) and "no tool call" not in str(
            r.outcome.reason
        )
    # TER as before this change: 49 of the 100 (TAU-REAL-FIXTURES pins it with the oracle).
    assert compute_metrics(Cohort.from_rollouts(rollouts)).TER == pytest.approx(0.49)


@pytest.mark.spec("HARNESS-WHERE", "TAU-CRASH")
def test_a_crash_inside_env_step_says_so() -> None:
    crashed = _crashed(_records())
    # The loop: 17 tracebacks have a frame whose code calls env.step( (the pydantic error that
    # tau_bench/envs/base.py raised building its response, after the agent's action ran).
    in_step = {(str(r["task_id"]), r["trial"]) for r in crashed if "env.step(" in r["info"]["traceback"]}
    assert len(in_step) == 17
    rollouts = {(r.task_id, r.trial): r for r in taubench.read([str(ASSERTIONS)], AdapterOptions())}
    said = {
        k
        for k in rollouts
        if "during env.step, in step (envs/base.py:120)" in str(rollouts[k].outcome.reason)
    }
    assert said == in_step


@pytest.mark.spec("HARNESS-OPTION", "HARNESS-REPORT", "HARNESS-SIGNATURE", "OUT-TABLE")
def test_exclude_scores_the_rest_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    records = _records()
    kept = [r for r in records if not ("error" in r["info"] and r["traj"] == [])]
    successes = sum(r["reward"] == 1.0 for r in kept)
    assert (len(kept), successes) == (66, 35)  # the loop above
    code, out, err = run(["score", "--adapter", "taubench", "--json", "--bootstrap", "0",
                          "--harness-errors", "exclude", str(ASSERTIONS)], capsys)  # fmt: skip
    assert code == 0
    document = json.loads(out)
    (cond,) = document["conditions"]
    # The 66 others score as they did: the 49 fully executable rollouts are all among them.
    assert (cond["N"], cond["exact"]["TER"], cond["exact"]["success"]) == (66, "49/66", "35/66")
    assert cond["harness_errors"] == {"counted": 0, "excluded": 34}
    assert len(document["harness_errors"]) == 34 and not any(e["counted"] for e in document["harness_errors"])
    assert "harness-errors=exclude" in document["signature"]
    assert "taubench: 34 harness error(s) are left out (--harness-errors failure to change)" in err
    # The default, in the table: counted, in N, and said in the footer above the signature.
    code, out, err = run(["score", "--adapter", "taubench", "--bootstrap", "0", str(ASSERTIONS)], capsys)
    lines = out.splitlines()
    assert code == 0 and lines[-1].startswith("signature: ") and "harness-errors=benchmark" in lines[-1]
    assert lines[-2] == (
        "harness errors: tau-bench/retail / none / assertions-agent: 34 counted as failed rollouts "
        "(in N = 100)"
    )
    assert "34 harness error(s) count as failed rollouts" in err


@pytest.mark.spec("HARNESS-COUNT", "OUT-EXPLAIN", "OUT-ROLLOUTS")
def test_explain_and_rows_never_call_a_lost_trajectory_no_tool_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Record 1 (task 1, trial 1) is one of the 34 (the loop of _crashed).
    assert (1, 1) in {(r["task_id"], r["trial"]) for r in _crashed(_records())}
    code, out, _ = run(
        ["explain", "--adapter", "taubench", "--task", "1", "--trial", "1", str(ASSERTIONS)], capsys
    )
    assert code == 0
    assert "(harness error: the harness ended the rollout here; not an action of the agent)" in out
    assert "no tool call" not in out and "before any action" not in out
    rows = tmp_path / "rows.jsonl"
    code, _, _ = run(["score", "--adapter", "taubench", "--bootstrap", "0", "--rollouts", str(rows),
                      str(ASSERTIONS)], capsys)  # fmt: skip
    failing = [json.loads(line)["failing"] for line in rows.read_text(encoding="utf-8").splitlines()]
    assert sum(1 for f in failing if f and f["kind"] == "harness_error") == 34


# --- tau2: infrastructure_error (crafted: no real run has one) ----------------------------------


def _tau2_file(tmp_path: Path) -> Path:
    lost = sim(
        "gold",
        1,
        [
            user("hi"),
            assistant(call("c1", "get_user_details", user_id="u1")),
            tool("c1", '{"user_id": "u1"}'),
        ],
        termination="infrastructure_error",
        reward=0.0,
    )
    ok = sim("gold", 0, [user("hi"), assistant(content="bye")], reward=0.0)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(tau2([ok, lost])), encoding="utf-8")
    return path


@pytest.mark.spec("TAU-HARNESS", "HARNESS-DEFAULT", "HARNESS-COUNT")
def test_tau2_infrastructure_errors_are_left_out_as_tau2_does(tmp_path: Path) -> None:
    path = _tau2_file(tmp_path)
    rollouts = taubench.read([str(path)], AdapterOptions())
    assert [(r.task_id, r.trial) for r in rollouts] == [("gold", 0)]
    (counted,) = [
        r for r in taubench.read([str(path)], AdapterOptions(harness_errors="failure")) if r.trial == 1
    ]
    # Its one executable call, then the harness-error action: T = 2, FED = 2, unlabelled.
    assert (counted.outcome.T, counted.outcome.fed, counted.outcome.label) == (2, 2, None)
    assert counted.outcome.reason == (
        "harness error: the simulation ended with termination_reason infrastructure_error"
    )


# --- ToolSandbox: its own aborts ------------------------------------------------------------------


@pytest.mark.spec("TSB-HARNESS", "HARNESS-WHICH", "HARNESS-WHERE")
def test_toolsandbox_aborts_other_than_unknown_tools_are_harness_errors() -> None:
    for run_dir in (CLI_RUN, HERMES_RUN):
        summary = json.loads((run_dir / "result_summary.json").read_text(encoding="utf-8"))
        aborted = {
            e["name"]: e["exception_type"]
            for e in summary["per_scenario_results"]
            if e["exception_type"] not in (None, "KeyError")
        }
        # The loop: the cli run's cellular_off and get_wifi raised AssertionError; Hermes's
        # get_cellular raised ValueError (SOURCE.md there).
        assert aborted == (
            {"cellular_off": "AssertionError", "get_wifi": "AssertionError"}
            if run_dir == CLI_RUN
            else {"get_cellular": "ValueError"}
        )
        counted = {r.task_id: r for r in toolsandbox.read([str(run_dir)], AdapterOptions())}
        for name, kind in aborted.items():
            assert str(counted[name].meta["harness_error"]).startswith(
                f"ToolSandbox aborted the scenario with {kind}"
            )
            assert isinstance(counted[name].outcome.actions[-1], harness.HarnessFault)
        if set(aborted) == set(counted):  # the cli run: its 2 scenarios both aborted
            with pytest.raises(InputError, match="all 2 rollouts are harness errors, left out"):
                toolsandbox.read([str(run_dir)], AdapterOptions(harness_errors="exclude"))
            continue
        left = {r.task_id for r in toolsandbox.read([str(run_dir)], AdapterOptions(harness_errors="exclude"))}
        assert left == set(counted) - set(aborted)
    # Where it crashed, from the traceback: ToolSandbox's own message conversion.
    (get_wifi,) = [r for r in toolsandbox.read([str(CLI_RUN)], AdapterOptions()) if r.task_id == "get_wifi"]
    assert "in python_code_to_openai_tool_call (common/message_conversion.py:121)" in str(
        get_wifi.outcome.reason
    )


# --- chat ------------------------------------------------------------------------------------------


@pytest.mark.spec("CHAT-HARNESS", "HARNESS-COUNT", "HARNESS-OPTION")
def test_a_chat_line_may_say_the_harness_ended_it(tmp_path: Path) -> None:
    called = {"role": "assistant", "tool_calls": [{"id": "1", "function": {"name": "f", "arguments": "{}"}}]}
    answered = {"role": "tool", "tool_call_id": "1", "content": "ok"}
    line = {
        "task_id": "t",
        "model": "m",
        "method": "x",
        "success": False,
        "tools": [{"name": "f"}],
        "messages": [called, answered],
        "harness_error": "the model API timed out",
    }
    other = {**line, "task_id": "u"}
    del other["harness_error"]
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(line) + "\n" + json.dumps(other) + "\n", encoding="utf-8")
    counted = {r.task_id: r for r in chat.read([str(path)], AdapterOptions())}
    assert (counted["t"].outcome.T, counted["t"].outcome.fed, counted["t"].outcome.label) == (2, 2, None)
    assert counted["t"].outcome.reason == "harness error: the model API timed out"
    assert counted["u"].outcome.fully_executable
    assert [r.task_id for r in chat.read([str(path)], AdapterOptions(harness_errors="exclude"))] == ["u"]
    path.write_text(json.dumps({**line, "harness_error": ""}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="'harness_error' must be a non-empty string"):
        chat.read([str(path)], AdapterOptions())
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="all 1 rollouts are harness errors, left out"):
        chat.read([str(path)], AdapterOptions(harness_errors="exclude"))


# --- the option and the report -------------------------------------------------------------------


@pytest.mark.spec("HARNESS-OPTION", "CLI-NO-EFFECT")
def test_the_option_is_refused_where_it_has_no_effect(capsys: pytest.CaptureFixture[str]) -> None:
    demo = REPO / "examples" / "demo.jsonl"
    code, out, err = run(["score", "--harness-errors", "exclude", str(demo)], capsys)
    assert (code, out) == (2, "") and "--harness-errors: has no effect with --adapter records" in err
    code, _, err = run(
        ["score", "--adapter", "taubench", "--inference-errors", "exclude", str(ASSERTIONS)], capsys
    )
    assert code == 2 and "--inference-errors: only applies with --adapter bfcl" in err


@pytest.mark.spec("HARNESS-REPORT", "REP-SUMMARY")
def test_the_report_counts_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report"
    code, _, _ = run(["report", "--adapter", "taubench", "--bootstrap", "0", "--quiet", "--out", str(out),
                      str(ASSERTIONS)], capsys)  # fmt: skip
    assert code == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    (cond,) = summary["conditions"]
    assert cond["harness_errors"] == {"counted": 34, "excluded": 0} and len(summary["harness_errors"]) == 34
    line = (
        "harness errors: tau-bench/retail / none / assertions-agent: 34 counted as failed rollouts "
        "(in N = 100)"
    )
    assert line in (out / "table.md").read_text(encoding="utf-8")
    assert line in (out / "report.html").read_text(encoding="utf-8")


@pytest.mark.spec("HARNESS-WHERE")
def test_traceback_summary() -> None:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/tau-bench/tau_bench/agents/a.py", line 265, in execute_action\n'
        "    env_response = env.step(action)\n"
        '  File "/home/u/tau-bench/tau_bench/envs/base.py", line 120, in step\n'
        "    return EnvResponse(observation=observation)\n"
        '  File "/usr/lib/python3.11/site-packages/pydantic/main.py", line 214, in __init__\n'
        "    validated = validate(data)\n"
        "ValidationError: 1 validation error\n"
    )
    assert harness.traceback_summary(trace) == "during env.step, in step (envs/base.py:120)"
    assert harness.traceback_summary("no frames here") is None
    windows = 'File "C:\\Users\\x\\run.py", line 9, in _run\n    agent.solve()\n'
    assert harness.traceback_summary(windows) == "in _run (x/run.py:9)"
