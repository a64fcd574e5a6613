"""What `explain` and the per-rollout rows show, on real output (spec: OUT-EXPLAIN, OUT-ROLLOUTS,
BFCL-TURNS, BFCL-REASON).

Real runs: tau2's leaderboard run of a LangChain agent (tests/data/real/tau2-leaderboard, MIT),
whose pydantic errors span several indented lines, and gpt-oss-20b's BFCL results
(tests/data/real/bfcl-gpt-oss-20b, Apache-2.0). Counts are made here from the raw JSON with their own loops.
No real prompting BFCL file is at hand (every real one is function-calling output, whose
arguments are all keywords): a crafted file shows positional arguments.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from prefixexec.cli import main
from prefixexec.explain import reason_text

from conftest import REAL, real_text

LANGCHAIN = REAL / "tau2-leaderboard" / "langchain_agent_airline_2025-11-26_00-37-06.json.zst"
GPT_OSS = (
    REAL
    / "bfcl-gpt-oss-20b"
    / "openai_gpt-oss-20b"
    / "multi_turn"
    / "BFCL_v4_multi_turn_base_result.json"
)


def explain(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["explain", *argv]) == 0
    return capsys.readouterr().out


@pytest.mark.spec("OUT-EXPLAIN")
def test_multi_line_reasons_keep_their_indentation(capsys: pytest.CaptureFixture[str]) -> None:
    document = json.loads(real_text(LANGCHAIN))
    multi = {
        (s["task_id"], s["trial"]): m["content"]
        for s in document["simulations"]
        for m in s["messages"]
        if m["role"] == "tool" and m.get("error") and "\n" in (m.get("content") or "")
    }
    # The loop: 3 error messages span several lines, tasks 8, 20 and 42 (each its task's first).
    assert sorted(multi) == [("20", 0), ("42", 0), ("8", 0)]
    for (task, trial), content in multi.items():
        out = explain(
            ["--adapter", "taubench", "--task", task, "--trial", str(trial), str(LANGCHAIN)], capsys
        )
        lines = out.splitlines()
        start = next(i for i, line in enumerate(lines) if "reason: " in line)
        column = lines[start].index("reason: ") + len("reason: ")
        shown = content.splitlines()
        # Each later line of the message (as far as the reason keeps it) starts at the reason's
        # column and keeps its own leading spaces: "  Field required ..." stays indented.
        for k, line in enumerate(shown[1:3], start=1):
            assert lines[start + k] == " " * column + line[: len(lines[start + k]) - column], (task, k)
            assert lines[start + k][column:].startswith(line[:20])
    # a tab stands for the spaces up to the next multiple of 8 (12 + tab: column 16); ESC is escaped
    assert reason_text(4, "a\n  b\n\tc\x1b") == "    reason: a\n              b\n" + " " * 16 + "c\\x1b"


def _raw_turn_of_each_call(entry: dict[str, Any]) -> list[int]:
    """The 1-based turn of every call of a function-calling entry, in order (raw JSON)."""
    return [t + 1 for t, turn in enumerate(entry["result"]) for step in turn for item in step for _ in item]


@pytest.mark.spec("BFCL-TURNS", "BFCL-REASON", "OUT-ROLLOUTS")
def test_one_turn_numbering_in_reasons_rows_and_explain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = {e["id"]: e for e in map(json.loads, GPT_OSS.read_text(encoding="utf-8").splitlines()) if e}
    rows_path = tmp_path / "rows.jsonl"
    assert (
        main(["score", "--adapter", "bfcl", "--bootstrap", "0", "--rollouts", str(rows_path), str(GPT_OSS)])
        == 0
    )
    capsys.readouterr()
    rows = [json.loads(line) for line in rows_path.read_text(encoding="utf-8").splitlines()]
    failing = [r for r in rows if not r["executable"]]
    assert len(rows) == len(entries) == 15 and failing  # 15 lines in the file
    pattern = re.compile(r"^call (\d+) \(turn (\d+)\) ")
    for row in failing:
        match = pattern.match(row["reason"])
        assert match is not None, row["reason"]
        position, turn = int(match[1]), int(match[2])
        raw = _raw_turn_of_each_call(entries[row["task_id"]])[position - 1]
        # The reason's turn, the row's failing.turn and the raw count agree: turns from 1.
        assert turn == row["failing"]["turn"] == raw, row["task_id"]
    out = explain(["--adapter", "bfcl", "--task", "multi_turn_base_2", str(GPT_OSS)], capsys)
    (fail,) = [line for line in out.splitlines() if " FAIL " in line]
    reason = next(line for line in out.splitlines() if "reason: " in line)
    assert re.search(r"turn (\d+)", fail)[1] == re.search(r"\(turn (\d+)\)", reason)[1] == "1"  # type: ignore[index]


@pytest.mark.spec("BFCL-REASON", "OUT-EXPLAIN", "OUT-ROLLOUTS")
def test_positional_arguments_are_shown_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "demo" / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"
    path.parent.mkdir(parents=True)
    # multi_turn_base_0's gold (BFCL_v4_multi_turn_base.json): document/ holds final_report.pdf;
    # the third turn's sort('final_report.pdf') is written with a positional argument.
    first = (
        "[cd(folder='document'), mkdir(dir_name='temp'), mv(source='final_report.pdf', destination='temp')]"
    )
    turns = [[first], ["[cd(folder='temp')]"], ["[sort('final_report.pdf')]"], ["[ls()]"]]
    path.write_text(json.dumps({"id": "multi_turn_base_0", "result": turns}) + "\n", encoding="utf-8")
    out = explain(["--adapter", "bfcl", str(path)], capsys)
    assert "FAIL  sort('final_report.pdf')  schema" in out and "sort()" not in out
    rows_path = tmp_path / "rows.jsonl"
    assert (
        main(["score", "--adapter", "bfcl", "--bootstrap", "0", "--rollouts", str(rows_path), str(path)]) == 0
    )
    capsys.readouterr()
    (row,) = [json.loads(line) for line in rows_path.read_text(encoding="utf-8").splitlines()]
    assert row["failing"]["text"] == "sort('final_report.pdf')" and row["failing"]["turn"] == 3
    assert main(["explain", "--adapter", "bfcl", "--json", str(path)]) == 0
    (document,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [a["text"] for a in document["actions"]][4] == "sort('final_report.pdf')"  # the fifth call
