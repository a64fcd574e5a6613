"""Formats read right (issue 38): a bare list of tau2 simulations, tau2's directory format, OpenAI
fine-tuning lines, absent fields, and what an unknown log is called.

Every count is made from the raw JSON with the standard library (``conftest.real_text``), as each
comment says; the directory-format run with messages is made in the test from a real tau2 results
file the way tau2's ``Results.save(format="dir")`` writes it (``results.json`` without
``simulations``, one ``simulations/<id>.json`` per simulation).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefixexec.adapters import AdapterOptions
from prefixexec.adapters.chat import reader as chat
from prefixexec.adapters.taubench import reader as tau
from prefixexec.cli import main

from conftest import REAL, real_text

BARE = REAL / "tau2-leaderboard" / "adaptive-agent_airline_claude-opus-4-6_1trial.json.zst"
VOICE = REAL / "tau2-voice" / "experiment"
SFT = REAL / "tau2-sft" / "test_sft-v1-small.jsonl.zst"
TELECOM = REAL / "tau2" / "2025-10-05T07-52-52.930199_telecom_llm_agent_grok-3_user_simulator_grok-3.json"


@pytest.mark.spec("TAU-BARE-LIST")
def test_a_bare_list_of_tau2_simulations_is_read_as_tau2(capsys: pytest.CaptureFixture[str]) -> None:
    raw = json.loads(real_text(BARE))
    assert isinstance(raw, list) and all("traj" not in s and "messages" in s for s in raw)
    rewards = [s["reward_info"]["reward"] for s in raw]
    calls = sum(
        len(m.get("tool_calls") or []) for s in raw for m in s["messages"] if m["role"] == "assistant"
    )
    rollouts = tau.read([str(BARE)], AdapterOptions())
    assert len(rollouts) == len(raw) == 50
    assert (
        sum(r.success for r in rollouts) == sum(x == 1.0 for x in rewards) == 49
    )  # reward_info, counted raw
    assert sum(r.outcome.T for r in rollouts if r.outcome.actions) >= 1
    assert sum(int(r.meta["calls"]) for r in rollouts) == calls
    assert {(r.condition.dataset, r.condition.model) for r in rollouts} == {
        ("tau-bench/airline", "claude-opus-4-6")
    }
    assert "a bare list of tau2 simulations (no 'info', no 'tasks')" in capsys.readouterr().err


@pytest.mark.spec("TAU-BARE-LIST")
def test_v1_and_tau2_lists_are_told_by_their_fields() -> None:
    assert tau._looks_tau2([{"task_id": "1", "termination_reason": "user_stop", "messages": []}])
    assert not tau._looks_tau2([{"task_id": 1, "reward": 1.0, "traj": [], "info": {}}])


def _split(results: Path, folder: Path) -> None:
    """``results`` written as tau2's dir format (``Results.save(format='dir')``) under ``folder``."""
    data = json.loads(real_text(results))
    (folder / "simulations").mkdir(parents=True)
    for sim in data.pop("simulations"):
        (folder / "simulations" / f"{sim['id']}.json").write_text(json.dumps(sim))
    (folder / "results.json").write_text(json.dumps(data))


@pytest.mark.spec("TAU-DIR")
def test_a_directory_format_run_is_read_as_one_run(tmp_path: Path) -> None:
    _split(TELECOM, tmp_path / "run")
    whole = tau.read([str(TELECOM)], AdapterOptions())
    folder = tau.read([str(tmp_path / "run")], AdapterOptions())
    by_file = tau.read([str(tmp_path / "run" / "results.json")], AdapterOptions())
    key = lambda r: (r.task_id, r.trial)  # noqa: E731
    assert sorted((key(r), r.outcome, r.success) for r in folder) == sorted(
        (key(r), r.outcome, r.success) for r in whole
    )
    assert len(by_file) == len(folder) == len(json.loads(real_text(TELECOM))["simulations"])


@pytest.mark.spec("TAU-DIR", "DETECT-TAU2-DIR")
def test_voice_simulations_without_messages_are_said_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    sims = sorted((VOICE / "simulations").iterdir())
    raw = [json.loads(real_text(p)) for p in sims]
    assert len(raw) == 3 and all("messages" not in s and s["ticks"] for s in raw)  # counted raw
    assert main(["score", str(VOICE)]) == 2
    err = capsys.readouterr().err
    assert "3 simulation(s) have no messages (full-duplex voice runs keep ticks only)" in err
    assert len(err.strip().splitlines()) == 2  # the detection line and the one error line
    assert main(["score", str(sims[0])]) == 2
    err = capsys.readouterr().err
    assert "one simulation of a tau2 directory-format run" in err and "records" not in err
    assert main(["score", "--adapter", "taubench", str(sims[0])]) == 2
    err = capsys.readouterr().err
    assert "one simulation of a tau2 directory-format run" in err and "JSONL records" not in err


@pytest.mark.spec("CHAT-FINETUNE")
def test_openai_fine_tuning_lines_are_scored_without_task_ids_and_success(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = [json.loads(line) for line in real_text(SFT).splitlines()]
    assert all(set(line) == {"messages", "tools", "parallel_tool_calls"} for line in lines)
    calls = sum(len(m.get("tool_calls") or []) for line in lines for m in line["messages"])
    assert (len(lines), calls) == (24, 225)  # counted raw
    rollouts = chat.read([str(SFT)], AdapterOptions(model="sft-v1-small", method="sft"))
    assert [r.task_id for r in rollouts] == [str(n) for n in range(1, 25)]  # the line numbers
    assert sum(r.outcome.T for r in rollouts) == 225
    assert not any(r.success for r in rollouts)
    err = capsys.readouterr().err
    assert "24 of 24 transcript(s) give no 'success'" in err and "TER, FED and AUC-PEC are scored" in err


@pytest.mark.spec("REC-ERRORS")
def test_a_missing_field_is_called_absent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = json.loads(real_text(TELECOM))
    del raw["info"]["environment_info"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(raw))
    assert main(["score", "--adapter", "taubench", str(path)]) == 2
    err = capsys.readouterr().err
    assert "'info.environment_info' must be a JSON object, got absent" in err and "null" not in err


@pytest.mark.spec("DETECT-UNKNOWN")
def test_a_claude_code_session_log_is_not_called_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The shape of a line of ~/.claude/projects/<project>/<session>.jsonl (Claude Code's own log).
    line = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/repo",
        "sessionId": "4f1c",
        "version": "1.0.0",
        "type": "user",
        "message": {"role": "user", "content": "hi"},
        "uuid": "u1",
        "timestamp": "2025-01-01T00:00:00Z",
    }
    path = tmp_path / "session.jsonl"
    path.write_text(json.dumps(line) + "\n")
    assert main(["score", str(path)]) == 2
    err = capsys.readouterr().err
    assert "looks like a Claude Code session log" in err and "records" not in err


@pytest.mark.spec("TAU-POOL")
def test_several_runs_of_one_system_are_pooled_as_trials(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs, one results.json each (how tau2 writes a run per folder), with the same task ids:
    here the same real run copied into two run folders, so each task has trials 0 and 1."""
    text = real_text(TELECOM)
    raw = json.loads(text)
    runs = []
    for name in ("run1", "run2"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(text)
        runs.append(str(tmp_path / name / "results.json"))
    rollouts = tau.read(runs, AdapterOptions())
    n = len(raw["simulations"])
    assert len(rollouts) == 2 * n
    assert sorted(r.trial for r in rollouts) == sorted([0] * n + [1] * n)  # every trial of the file is 0
    first, second = rollouts[:n], rollouts[n:]
    assert [(r.task_id, r.outcome) for r in first] == [(r.task_id, r.outcome) for r in second]
    err = capsys.readouterr().err
    assert err.count("pooled as further trials of the same system, numbered from 1") == 1
    assert main(["score", "--adapter", "taubench", runs[0], runs[0]]) == 2
    assert "given twice" in capsys.readouterr().err
