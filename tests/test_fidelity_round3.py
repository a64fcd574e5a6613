"""Issue 38's rules checked on real runs nobody here wrote: several runs of one system pooled as
trials or kept apart (TAU-POOL, TAU-SYSTEM-FILE), and the precondition family (LABEL-PRECONDITION)
over every real tau run the repository holds.

How each number is counted, independently of prefixexec's readers:

- the runs in ``tests/data/real/tau2-runs`` are read with ``json`` from the raw files
  (``conftest.real_text``): the simulations, their trials and their ``reward_info.reward``;
- the share of unlabelled first failures is counted over every file under ``tests/data/real``
  that detection reads as tau-bench (``detect``: the file list is not written here), once with the
  precondition family as it was before issue 38 (the regular expression quoted below, from main
  before d93f12d) and once as it is; every label that changed is checked against the raw
  observation text (one of the issue's quoted messages), and the telecom run's "Line must be
  suspended to resume" is found with ``str.count`` in the raw JSON and its position counted from
  the raw messages.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from prefixexec.adapters import AdapterOptions, InputError
from prefixexec.adapters.detect import detect
from prefixexec.adapters.taubench import reader as tau
from prefixexec.adapters.taubench import semantics as tau_semantics
from prefixexec.cli import main
from prefixexec.kernel import Label, Rollout, ToolCall

from conftest import REAL, REPO, real_text

RUNS = REAL / "tau2-runs"
#: Three runs of one system (xai/grok-3, airline task 24, 10 trials each), in time order.
GROK = [
    RUNS / "2025-10-13T12-29-03.637000_airline_llm_agent_grok-3_user_simulator_grok-3_task_24.json.zst",
    RUNS / "2025-10-13T12-51-16.285465_airline_llm_agent_grok-3_user_simulator_grok-3_task_24_2.json.zst",
    RUNS / "2025-10-13T12-55-31.634034_airline_llm_agent_grok-3_user_simulator_grok-3_task_24_3.json.zst",
]
TELECOM = RUNS / "2025-08-10T02-44-06.496849_telecom_llm_agent_gpt-4o_user_simulator_gpt-4o.json.zst"
#: The tau precondition family before issue 38 (adapters/taubench/semantics.py on main before
#: d93f12d), to count the unlabelled first failures "before".
BEFORE = re.compile(
    r"\bnon-pending\b|\bnon-delivered\b|\bnot pending\b|\bnot delivered\b|\bnot available\b"
    r"|\bnot enough seats\b",
    re.IGNORECASE,
)
#: The precondition-style messages issue 38 quotes.
QUOTED = (
    "Line must be suspended to resume",
    "Certificate cannot be used to update reservation",
    "Non-delivered order cannot be exchanged",
    "Non-delivered order cannot be returned",
    "Payment method should be the original payment method",
)


def _raw(path: Path) -> dict[str, Any]:
    value = json.loads(real_text(path))
    assert isinstance(value, dict)
    return value


def _quiet_read(paths: list[Path], options: AdapterOptions | None = None) -> tuple[list[Rollout], str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rollouts = tau.read([str(p) for p in paths], options or AdapterOptions())
    return rollouts, err.getvalue()


def test_the_three_runs_are_one_system_and_differ() -> None:
    """What makes them several runs of one system, read in the raw JSON: equal ``info`` and
    ``tasks``, one task, trials 0-9 in each, other simulation ids."""
    raw = [_raw(p) for p in GROK]
    assert raw[0]["info"] == raw[1]["info"] == raw[2]["info"]
    assert raw[0]["tasks"] == raw[1]["tasks"] == raw[2]["tasks"]
    for run in raw:
        assert {s["task_id"] for s in run["simulations"]} == {"24"}
        assert sorted(s["trial"] for s in run["simulations"]) == list(range(10))
    ids = [{s["id"] for s in run["simulations"]} for run in raw]
    assert not (ids[0] & ids[1]) and not (ids[0] & ids[2]) and not (ids[1] & ids[2])
    rewards = [sum(s["reward_info"]["reward"] == 1.0 for s in run["simulations"]) for run in raw]
    assert rewards == [5, 2, 3]


@pytest.mark.spec("TAU-POOL")
def test_three_real_runs_of_one_system_are_pooled_as_trials_in_the_order_given() -> None:
    raw = [_raw(p) for p in GROK]
    rollouts, err = _quiet_read(GROK)
    assert len(rollouts) == 30 and len({r.condition for r in rollouts}) == 1
    assert {r.task_id for r in rollouts} == {"24"}
    assert sorted(r.trial for r in rollouts) == list(range(30))
    # run k's trial t is trial 10 k + t, with that simulation's reward (raw JSON)
    success = {(r.trial, r.success) for r in rollouts}
    expected = {
        (10 * k + s["trial"], s["reward_info"]["reward"] == 1.0)
        for k, run in enumerate(raw)
        for s in run["simulations"]
    }
    assert success == expected
    assert sum(r.success for r in rollouts) == 10  # 5 + 2 + 3 in the raw JSON
    pooled = [line for line in err.splitlines() if "pooled as further trials" in line]
    assert len(pooled) == 2
    assert "numbered from 10" in pooled[0] and str(GROK[1]) in pooled[0]
    assert "numbered from 20" in pooled[1] and str(GROK[2]) in pooled[1]
    assert all("--system-from file keeps them apart" in line for line in pooled)
    # in another order the trials follow that order
    again, _ = _quiet_read([GROK[2], GROK[0], GROK[1]])
    assert sorted(r.trial for r in again) == list(range(30))
    assert sum(r.success for r in again if r.trial < 10) == 3  # the third run, given first


@pytest.mark.spec("TAU-SYSTEM-FILE", "TAU-POOL")
def test_system_from_file_keeps_each_run_its_own_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rollouts, err = _quiet_read(GROK, AdapterOptions(system_from="file"))
    by_method: dict[str, list[Rollout]] = {}
    for r in rollouts:
        by_method.setdefault(r.condition.method, []).append(r)
    assert sorted(by_method) == sorted(f"llm_agent@{p}" for p in GROK)
    for path, expected in zip(GROK, (5, 2, 3), strict=True):  # the raw rewards, per run
        mine = by_method[f"llm_agent@{path}"]
        assert sorted(r.trial for r in mine) == list(range(10))
        assert sum(r.success for r in mine) == expected
    assert "pooled as further trials" not in err
    assert err.count("--system-from file: each of the 3 file(s) is its own system") == 1
    # the command: three conditions, one notice line, the choice in the signature
    out = tmp_path / "score.json"
    argv = ["score", "--adapter", "taubench", "--bootstrap", "0", "--json", "--output", str(out)]
    assert main([*argv, "--system-from", "file", *map(str, GROK)]) == 0
    document = json.loads(out.read_text())
    conditions = document["conditions"]
    assert len(conditions) == 3
    assert sorted(c["success"] for c in conditions) == [0.2, 0.3, 0.5]  # 2, 3 and 5 of 10 (raw)
    assert "system-from=file" in document["signature"]
    assert capsys.readouterr().err.count("is its own system") == 1
    assert main([*argv, *map(str, GROK)]) == 0  # pooled (the default): one condition
    pooled = json.loads(out.read_text())
    assert len(pooled["conditions"]) == 1 and "system-from" not in pooled["signature"]
    capsys.readouterr()


@pytest.mark.spec("TAU-SYSTEM-FILE", "CLI-NO-EFFECT")
def test_system_from_is_refused_where_nothing_is_pooled(capsys: pytest.CaptureFixture[str]) -> None:
    bfcl = next(REAL.glob("bfcl-v4/*/BFCL_v4_multi_turn_base_result.json"))
    assert main(["score", "--adapter", "bfcl", "--system-from", "file", str(bfcl)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "--system-from" in err and "taubench" in err


def _tau_files() -> list[Path]:
    """Every real file detection reads as tau-bench (v1 or tau2)."""
    found = []
    for path in sorted(REAL.rglob("*")):
        if not path.is_file() or path.name in ("LICENSE", "LICENSE.txt", "SOURCE.md"):
            continue
        try:
            adapter = detect(str(path)).adapter
        except InputError:
            continue
        if adapter == "taubench":
            found.append(path)
    return found


def _first_call_failures(files: list[Path]) -> dict[tuple[str, str, str, int], tuple[Label | None, str]]:
    """(file, condition, task, trial) -> (label, reason) of every rollout whose first failure is
    a call; a file without a rollout (an empty run, voice ticks only) adds none."""
    found = {}
    for path in files:
        try:
            rollouts, _ = _quiet_read([path])
        except InputError as exc:  # a file read alone that names no domain tau2 has (LB-LISTED)
            assert "no rollouts found" in str(exc) or "does not say the domain" in str(exc), exc
            continue
        for r in rollouts:
            if not r.outcome.fully_executable and isinstance(r.outcome.failing, ToolCall):
                key = (path.name, str(r.condition), r.task_id, r.trial)
                found[key] = (r.outcome.label, r.outcome.reason or "")
    return found


@pytest.mark.spec("LABEL-PRECONDITION", "TAU-LABELS")
def test_unlabelled_first_failures_over_every_real_tau_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before issue 38's family 7 of the 140 rollouts whose first failure is a call were
    unlabelled, after it 3 (5.0% -> 2.1%); the 4 that changed are the issue's quoted messages."""
    files = _tau_files()
    # 28 files: an empty run, a voice run (ticks only) and tau2-submissions' medical run (a domain
    # tau2 has not, refused alone) add none; tau2-submissions repeats four tau2-leaderboard files
    # under their own names, which key the same rollouts (file name, condition, task, trial)
    assert len(files) == 28
    after = _first_call_failures(files)
    families = tuple(
        (label, BEFORE if label is Label.PRECONDITION else pattern)
        for label, pattern in tau_semantics.FAMILIES
    )
    monkeypatch.setattr(tau_semantics, "FAMILIES", families)
    before = _first_call_failures(files)
    assert set(before) == set(after) and len(after) == 140
    unlabelled_before = [k for k, (label, _) in before.items() if label is None]
    unlabelled_after = [k for k, (label, _) in after.items() if label is None]
    assert (len(unlabelled_before), len(unlabelled_after)) == (7, 3)
    changed = {k for k in after if before[k][0] != after[k][0]}
    assert changed == set(unlabelled_before) - set(unlabelled_after)
    for key in changed:  # every change: unlabelled -> precondition on a quoted message
        label, reason = after[key]
        assert before[key][0] is None and label is Label.PRECONDITION
        assert any(message in reason for message in QUOTED), reason
    quoted = sorted(next(m for m in QUOTED if m in after[k][1]) for k in changed)
    assert quoted == [
        "Certificate cannot be used to update reservation",
        "Line must be suspended to resume",
        "Payment method should be the original payment method",
        "Payment method should be the original payment method",
    ]
    left = sorted(after[k][1].split("Error: ", 1)[-1][:30] for k in unlabelled_after)
    assert left == [  # a custom domain's crash (twice), a pydantic error on a payment
        "'NoneType' object has no attri",
        "'NoneType' object has no attri",
        "2 validation errors for Paymen",
    ]


@pytest.mark.spec("LABEL-PRECONDITION", "TAU-LABELS")
def test_line_must_be_suspended_to_resume_in_a_real_telecom_run() -> None:
    text = real_text(TELECOM)
    assert text.count("Line must be suspended to resume") == 1  # str.count, raw JSON
    raw = json.loads(text)
    [(simulation, position)] = [
        (s, sum(len(m.get("tool_calls") or []) for m in s["messages"][:i] if m["role"] == "assistant"))
        for s in raw["simulations"]
        for i, m in enumerate(s["messages"])
        if "Line must be suspended" in (m.get("content") or "")
    ]
    # the raw messages: the error answers the agent's resume_line, its 6th call (the user
    # simulator's own tool calls, on the phone, are not the agent's)
    assert position == 6
    rollouts, _ = _quiet_read([TELECOM])
    [rollout] = [r for r in rollouts if r.task_id == simulation["task_id"] and r.trial == simulation["trial"]]
    assert rollout.outcome.fed == position and rollout.outcome.label is Label.PRECONDITION
    assert "resume_line" in (rollout.outcome.reason or "")


CHAT_BFCL = REPO / "tests" / "data" / "chat-bfcl" / "glyphh-base-error-objects.jsonl"


def _error_object(content: str) -> bool:
    """A tool answer that is a JSON object with a truthy ``error`` (read with ``json`` here)."""
    try:
        value = json.loads(content)
    except ValueError:
        return False
    return isinstance(value, dict) and bool(value.get("error"))


@pytest.mark.spec("CHAT-JSON-ERROR", "CHAT-EXEC")
def test_error_objects_a_real_function_calling_environment_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    """BFCL's own classes answer failed calls with ``{"error": ...}``; the transcripts hold their
    answers to a real agent's calls (tests/data/chat-bfcl/SOURCE.md). The first such answer is
    found in the raw lines with ``json``; the chat adapter, with no --error-pattern, fails the
    rollout at that call. Without the rule no rollout would fail there."""
    import make_bfcl_chat_transcripts as make

    lines = [json.loads(line) for line in CHAT_BFCL.read_text(encoding="utf-8").splitlines()]
    records = {
        json.loads(line)["id"]: json.loads(line)
        for line in make.RESULT.read_text(encoding="utf-8").splitlines()
    }
    invalid = make.invalid_entries()
    for line in lines:  # the file is what BFCL's executor answers today (a child process, per entry)
        assert line == make.transcript(records[line["task_id"]], line["task_id"] not in invalid)
    expected = {}
    for line in lines:
        position, first = 0, None
        names = {}
        for m in line["messages"]:
            for call in m.get("tool_calls") or []:
                position += 1
                names[call["id"]] = position
            if m["role"] == "tool" and first is None and _error_object(m["content"]):
                first = names[m["tool_call_id"]]
        expected[line["task_id"]] = (position, first)
    assert expected == {
        "multi_turn_base_91": (3, 1),
        "multi_turn_base_95": (10, 1),
        "multi_turn_base_183": (7, 5),
    }
    from prefixexec.adapters.chat import reader as chat_reader
    from prefixexec.adapters.chat import semantics as chat_semantics

    rollouts = {r.task_id: r for r in chat_reader.read([str(CHAT_BFCL)], AdapterOptions())}
    for task_id, (calls, first) in expected.items():
        outcome = rollouts[task_id].outcome
        assert (outcome.T, outcome.fed) == (calls, first)
        assert (outcome.reason or "").startswith("tool result is an object with an 'error': ")
    assert rollouts["multi_turn_base_183"].outcome.label is Label.DEPENDENCY  # "Booking not found"
    monkeypatch.setattr(chat_semantics, "json_error", lambda result: None)
    without = chat_reader.read([str(CHAT_BFCL)], AdapterOptions())
    assert all(r.outcome.fully_executable for r in without)


@pytest.mark.spec("TAU-SYSTEM-FILE", "API-SCORE")
def test_the_python_api_takes_system_from() -> None:
    import prefixexec

    apart = prefixexec.score([str(p) for p in GROK], adapter="taubench", bootstrap=0, system_from="file")
    pooled = prefixexec.score([str(p) for p in GROK], adapter="taubench", bootstrap=0)
    assert len(apart.conditions) == 3 and len(pooled.conditions) == 1
    assert "system-from=file" in apart.signature and "system-from" not in pooled.signature


CLAUDE_CODE = REAL / "claude-code" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"


@pytest.mark.spec("DETECT-UNKNOWN")
def test_a_real_claude_code_session_log_is_named_as_such(capsys: pytest.CaptureFixture[str]) -> None:
    """A session file Claude Code 1.0.98 wrote (tests/data/real/claude-code/SOURCE.md): read here
    with ``json``, 29 lines of one session with 12 tool calls; detection says what it is."""
    lines = [json.loads(line) for line in real_text(CLAUDE_CODE).splitlines()]
    assert len(lines) == 29
    assert {line["sessionId"] for line in lines} == {CLAUDE_CODE.stem}
    assert {line["type"] for line in lines} == {"user", "assistant"} and all("uuid" in line for line in lines)
    calls = [
        block
        for line in lines
        if line["type"] == "assistant"
        for block in line["message"]["content"]
        if block.get("type") == "tool_use"
    ]
    assert len(calls) == 12
    assert main(["score", str(CLAUDE_CODE)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"prefixexec: error: {CLAUDE_CODE}: looks like a Claude Code session log")
    assert "records" not in err


@pytest.mark.spec("TAU-POOL", "PASSK-TRIALS")
def test_pooled_runs_give_pass_k_over_every_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """pass^k of the pooled system: n = 30 trials (3 runs of 10), c = 10 rewards of 1.0 in the
    raw JSON, so pass^3 = C(10, 3) / C(30, 3) (math.comb here)."""
    from fractions import Fraction
    from math import comb

    raw = [_raw(p) for p in GROK]
    n = sum(len(run["simulations"]) for run in raw)
    c = sum(s["reward_info"]["reward"] == 1.0 for run in raw for s in run["simulations"])
    out = tmp_path / "board.json"
    argv = ["leaderboard", "--quiet", "--bootstrap", "0", "--trials", "run", "--k", "3", "--format", "json"]
    assert main([*argv, "--output", str(out), *map(str, GROK)]) == 0
    [dataset] = json.loads(out.read_text())["datasets"]
    [system] = dataset["systems"]
    assert (system["N"], system["trials"]["run"]) == (n, n) == (30, 30)
    assert Fraction(system["metrics"]["pass_hat_k"]["exact"]) == Fraction(comb(c, 3), comb(n, 3))
    capsys.readouterr()


@pytest.mark.spec("TAU-SYSTEM-FILE", "LB-SYSTEM-FROM")
def test_leaderboard_system_from_file_ranks_each_run_as_its_own_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """leaderboard shares the adapters' --system-from: on trajectory files, file keeps the three
    runs apart (successes 5, 2 and 3 of 10: the raw rewards of 1.0, counted here), pooled (the
    value given) is the default's one system, and a submission-folder value is refused."""
    raw = [_raw(p) for p in GROK]
    expected = {
        f"xai/grok-3 / llm_agent@{p}": sum(s["reward_info"]["reward"] == 1.0 for s in run["simulations"])
        for p, run in zip(GROK, raw, strict=True)
    }
    assert sorted(expected.values()) == [2, 3, 5]
    argv = ["leaderboard", "--quiet", "--bootstrap", "0", "--format", "json"]
    apart, pooled = tmp_path / "apart.json", tmp_path / "pooled.json"
    assert main([*argv, "--system-from", "file", "--output", str(apart), *map(str, GROK)]) == 0
    [dataset] = json.loads(apart.read_text())["datasets"]
    found = {s["system"]: s for s in dataset["systems"]}
    assert sorted(found) == sorted(expected)
    for name, successes in expected.items():
        assert found[name]["N"] == 10
        assert Fraction(found[name]["metrics"]["success"]["exact"]) == Fraction(successes, 10)
    assert main([*argv, "--system-from", "pooled", "--output", str(pooled), *map(str, GROK)]) == 0
    [dataset] = json.loads(pooled.read_text())["datasets"]
    assert [s["N"] for s in dataset["systems"]] == [30]
    capsys.readouterr()
    assert main([*argv, "--system-from", "folder", *map(str, GROK)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "--system-from" in err
