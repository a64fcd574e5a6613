"""Per-rollout rows, `explain` and `--select` (spec/rollouts.md).

Real data: the tau-bench v1 GPT-4o airline run (tests/data/real/tau-bench-v1). The expected
failing calls are read from the raw JSON independently of the adapter (the n-th tool call of the
rollout's assistant messages, counted in the test), not taken from the adapter's output.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from prefixexec import rollouts as rows_module
from prefixexec.adapters import AdapterOptions, taubench
from prefixexec.cli import main
from prefixexec.kernel import ConditionKey, Outcome, Rollout, ToolCall
from prefixexec.kernel.actions import NO_TOOL

from conftest import REAL, REPO

TAU = REAL / "tau-bench-v1" / "gpt-4o-airline.json"
SCHEMA = json.loads((REPO / "spec" / "rollouts.schema.json").read_text(encoding="utf-8"))
EXAMPLE = REPO / "examples" / "demo.jsonl"


def raw_tool_calls(task_id: int, trial: int) -> list[str]:
    """The tool names of one rollout's assistant tool calls, in order, straight from the file."""
    data = json.loads(TAU.read_text(encoding="utf-8"))
    (record,) = [r for r in data if r["task_id"] == task_id and r.get("trial", 0) == trial]
    return [
        call["function"]["name"]
        for message in record["traj"]
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or []
    ]


@pytest.fixture(scope="module")
def tau_rows() -> list[dict[str, Any]]:
    return rows_module.rows(taubench.read([str(TAU)], AdapterOptions()))


@pytest.mark.spec("OUT-ROLLOUTS")
def test_rows_follow_the_schema_and_the_key_order(tau_rows: list[dict[str, Any]]) -> None:
    assert len(tau_rows) == 200  # 50 tasks x 4 trials (SOURCE.md of the fixture)
    for r in tau_rows:
        jsonschema.validate(r, SCHEMA)
        assert tuple(r) == rows_module.ROW_KEYS
        assert r["executable"] == (r["fed"] == r["T"] + 1) == (r["failing"] is None)
        if r["failing"] is not None:
            assert r["failing"]["position"] == r["fed"] and r["reason"]


@pytest.mark.spec("OUT-ROLLOUTS")
def test_the_failing_call_is_the_fed_th_call_of_the_raw_trajectory(tau_rows: list[dict[str, Any]]) -> None:
    checked = 0
    for r in tau_rows:
        failing = r["failing"]
        if failing is None or failing["kind"] != "tool_call":
            continue
        calls = raw_tool_calls(int(r["task_id"]), r["trial"])
        assert len(calls) == r["T"] and failing["tool"] == calls[r["fed"] - 1]
        checked += 1
    # 52 non-executable rollouts (TER 148/200, tests/test_taubench.py), of which 18 ended without a
    # call and 2 of those were allowed: 52 - 16 = 36 failing tool calls.
    assert checked == 36


@pytest.mark.spec("OUT-ROLLOUTS")
def test_the_no_tool_action_is_described(tau_rows: list[dict[str, Any]]) -> None:
    no_tool = [r for r in tau_rows if r["failing"] is not None and r["failing"]["kind"] == "no_tool"]
    assert len(no_tool) == 16
    for r in no_tool:
        assert r["T"] == 1 and r["failing"]["tool"] is None and r["reason"]
        assert raw_tool_calls(int(r["task_id"]), r["trial"]) == []


@pytest.mark.spec("OUT-ROLLOUTS")
def test_a_recorded_outcome_has_only_its_position() -> None:
    rollout = Rollout(ConditionKey("d", "m", "x"), "t", 0, Outcome(T=3, fed=2), False)
    row = rows_module.row(rollout)
    assert row["failing"] == {"position": 2, "kind": "unknown", "tool": None, "arguments": None}
    jsonschema.validate(row, SCHEMA)


def odd_rollout() -> Rollout:
    call = ToolCall("book", {"when": float("nan"), "who": "\ud800", "what": {1, 2}}, "c1")
    outcome = Outcome(T=2, fed=1, reason="bad \ud800", actions=(call, NO_TOOL))
    return Rollout(ConditionKey("d\ud800", "m", "x"), "t", 0, outcome, True, {"source": "f.jsonl:3"})


@pytest.mark.spec("OUT-ROLLOUTS", "OUT-ROLLOUTS-FILE")
def test_values_that_are_not_json_and_lone_surrogates_are_written(tmp_path: Path) -> None:
    row = rows_module.row(odd_rollout())
    assert row["failing"]["arguments"]["when"] == "nan" and row["failing"]["arguments"]["what"] == "{1, 2}"
    assert row["source"] == "f.jsonl:3"
    for suffix in (".jsonl", ".csv", ".parquet"):
        path = tmp_path / f"rows{suffix}"
        rows_module.write(str(path), [row])
        data = path.read_bytes()
        if suffix != ".parquet":
            data.decode("utf-8")  # valid UTF-8
    (line,) = (tmp_path / "rows.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["dataset"] == "d\ud800"  # ASCII escapes keep the value


@pytest.mark.spec("OUT-ROLLOUTS-FILE")
def test_csv_and_parquet_hold_the_same_rows(tmp_path: Path, tau_rows: list[dict[str, Any]]) -> None:
    import pyarrow.parquet as pq

    rows_module.write(str(tmp_path / "r.csv"), tau_rows)
    rows_module.write(str(tmp_path / "r.parquet"), tau_rows)
    table = list(csv.DictReader(io.StringIO((tmp_path / "r.csv").read_text(encoding="utf-8"))))
    parquet = pq.read_table(tmp_path / "r.parquet").to_pylist()
    assert len(table) == len(parquet) == 200
    for expected, from_csv, from_parquet in zip(tau_rows, table, parquet, strict=True):
        assert int(from_csv["fed"]) == from_parquet["fed"] == expected["fed"]
        assert (from_csv["label"] or None) == from_parquet["label"] == expected["label"]
        failing = expected["failing"]
        assert (json.loads(from_csv["failing"]) if from_csv["failing"] else None) == failing
        assert (json.loads(from_parquet["failing"]) if from_parquet["failing"] else None) == failing
        assert from_csv["executable"] in ("true", "false")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.spec("OUT-EXPLAIN")
def test_explain_marks_ok_fail_and_after(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        ["explain", "--adapter", "taubench", str(TAU), "--task", "0", "--trial", "0"], capsys
    )
    assert code == 0 and err == ""
    assert "\x1b[" not in out  # piped: plain text
    lines = out.splitlines()
    calls = raw_tool_calls(0, 0)  # 8 calls; the 5th (book_reservation) fails: see the reason
    steps = [line for line in lines[1 : 1 + len(calls) + 1] if not line.strip().startswith("reason")]
    # each step shows its user turn since the taubench adapter records turns (TURN-MAP)
    marks = [re.sub(r"^\s*\d+\s+turn \d+\s+", "", line).split()[0] for line in steps]
    assert marks == ["ok", "ok", "ok", "ok", "FAIL", "--", "--", "--"]
    fail = next(line for line in lines if " FAIL " in line)
    # the label, then whether the agent recovered (OUT-REJECTIONS: the 8th call, book_reservation
    # again, was accepted: raw_tool_calls and traj[29], a reservation, not an "Error"), then where the
    # call sits (OUT-SOURCE: traj[20], message 21 counting the system message as 1)
    assert calls[4] == calls[7] == "book_reservation"
    assert fail.strip().startswith("5  turn 6  FAIL  book_reservation(") and fail.rstrip().endswith(
        "state_consistency  (recovered: yes (the same tool accepted at action 8))  <message 21>"
    )
    assert sum("[after the first failure (not counted)]" in line for line in lines) == 3
    assert re.search(r"reason: .*payment amount does not add up", out)
    assert lines[-1].strip() == "T = 8  FED = 5  first failure at action 5  success: no"


@pytest.mark.spec("OUT-EXPLAIN", "OUT-SELECT")
def test_explain_json_filters(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["explain", "--adapter", "taubench", str(TAU), "--json", "--failing", "--select", "task_id=1?"],
        capsys,
    )
    assert code == 0
    objects = [json.loads(line) for line in out.splitlines()]
    assert objects and all(re.fullmatch(r"1\d", o["task_id"]) and not o["executable"] for o in objects)
    for o in objects:
        verdicts = [a["verdict"] for a in o["actions"]]
        fed = o["fed"]
        assert verdicts == ["ok"] * (fed - 1) + ["failed"] + ["not_evaluated"] * (o["T"] - fed)


@pytest.mark.spec("OUT-EXPLAIN")
def test_explain_on_a_tty_uses_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefixexec.explain import render

    buffer = io.StringIO()
    render([odd_rollout()], buffer, colour=True)
    assert "\x1b[" in buffer.getvalue()
    plain = io.StringIO()
    render([odd_rollout()], plain, colour=False)
    assert "\x1b[" not in plain.getvalue() and "FAIL" in plain.getvalue()


@pytest.mark.spec("OUT-EXPLAIN")
def test_explain_says_when_actions_are_not_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = {"dataset": "d", "task_id": "t", "model": "m", "method": "x", "success": False,
            "outcome": {"T": 4, "fed": 2, "label": "schema", "reason": "bad call"}}  # fmt: skip
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    code, out, _ = run(["explain", "--adapter", "records", str(path)], capsys)
    assert code == 0 and "actions not recorded" in out and "reason: bad call" in out and "FED = 2" in out


@pytest.mark.spec("OUT-EXPLAIN", "OUT-SELECT")
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--task", "nope"], "no rollout left to explain"),
        (["--select", "colour=red"], "expected KEY=GLOB with KEY one of"),
        (["--select", "task_id"], "expected KEY=GLOB"),
        (["--select", "model=claude*"], "no rollout matches model=claude*"),
        (["--select", "task_id=@/nonexistent/ids.txt"], "not a regular file of ids"),
    ],
)
def test_explain_bad_filters_exit_2(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["explain", "--adapter", "taubench", str(TAU), *extra], capsys)
    assert code == 2 and out == "" and err.startswith("prefixexec: error: ") and message in err
    assert err.count("\n") == 1


@pytest.mark.spec("OUT-SELECT")
def test_select_from_an_id_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = tmp_path / "ids.txt"
    ids.write_text("# sampled\n3\n\n7\n", encoding="utf-8")
    code, out, _ = run(
        ["explain", "--adapter", "taubench", str(TAU), "--json", "--select", f"task_id=@{ids}"], capsys
    )
    assert code == 0
    assert sorted({json.loads(line)["task_id"] for line in out.splitlines()}) == ["3", "7"]
    assert len(out.splitlines()) == 8  # 2 tasks x 4 trials


@pytest.mark.spec("OUT-ROLLOUTS-FILE", "OUT-SELECT", "REP-FILES")
@pytest.mark.usefixtures("figures_not_drawn")  # checks rollouts.jsonl, the Parquet rows and summary.json
def test_report_writes_rows_and_selects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    extra = tmp_path / "rows.parquet"
    argv = ["report", "--adapter", "taubench", str(TAU), "--out", str(out), "--bootstrap", "0", "--quiet"]
    code, _, _ = run([*argv, "--select", "task_id=2?", "--rollouts", str(extra)], capsys)
    assert code == 0
    lines = (out / "rollouts.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 40 and {json.loads(line)["task_id"][0] for line in lines} == {"2"}  # 10 tasks x 4
    import pyarrow.parquet as pq

    assert pq.read_table(extra).num_rows == 40
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["conditions"][0]["N"] == 40


@pytest.mark.spec("OUT-ROLLOUTS-FILE")
def test_a_bad_rollouts_path_stops_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r"
    argv = ["report", "--adapter", "taubench", str(TAU), "--out", str(out), "--quiet"]
    code, stdout, err = run([*argv, "--rollouts", str(tmp_path / "rows.xlsx")], capsys)
    assert code == 2 and stdout == "" and "unknown format '.xlsx'" in err and not out.exists()
