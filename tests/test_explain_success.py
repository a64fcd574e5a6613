"""``explain`` on a BFCL entry whose calls all ran but that BFCL judged invalid shows BFCL's own
reason: which check failed (state or response), at which turn, and what differed
(spec: OUT-EXPLAIN-SUCCESS, BFCL-SUCCESS, BFCL-TURNS).

Real runs: glyphh-ada-1.1's 200 multi_turn_base entries and DeepSeek-V3.1-Terminus-FC's two, each
beside the score file BFCL wrote for it. The expected reasons are read from those score files with
the standard library (conftest.real_text): per invalid entry its ``error_type``, the turn in its
``error_message`` (BFCL counts turns from 0; explain from 1), the class in a state mismatch's
message and the attributes in its ``details.differences``, and the first of a response mismatch's
``details.missing_items``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from prefixexec.cli import main

from conftest import REAL, real_text

GLYPHH = REAL / "bfcl-glyphh-ada"
RUNS = [
    (
        GLYPHH / "result" / "glyphh-ada-1.1" / "multi_turn" / "BFCL_v4_multi_turn_base_result.json",
        GLYPHH / "score" / "glyphh-ada-1.1" / "multi_turn" / "BFCL_v4_multi_turn_base_score.json.zst",
        31,  # executable yet invalid, as explain finds them (a regression pin: the score file has 79
        # invalid entries, 121 of 200 correct, but does not say which ran every call); each is checked
    ),
    (
        REAL / "bfcl-v4" / "deepseek-v3.1-terminus-FC" / "BFCL_v4_multi_turn_base_result.json",
        REAL / "bfcl-v4" / "deepseek-v3.1-terminus-FC" / "BFCL_v4_multi_turn_base_score.json",
        1,  # entry 0 (the score file: 1 of 2 correct, entry 0 invalid)
    ),
]


def invalid_entries(score: Path) -> dict[str, dict[str, Any]]:
    """BFCL's score file: a summary line, then one line per invalid entry with its error."""
    lines = real_text(score).splitlines()
    return {e["id"]: e["error"] for e in map(json.loads, lines[1:])}


def explained(capsys: pytest.CaptureFixture[str], result: Path) -> list[dict[str, Any]]:
    assert main(["explain", "--adapter", "bfcl", str(result), "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


@pytest.mark.spec("OUT-EXPLAIN-SUCCESS", "BFCL-SUCCESS", "BFCL-TURNS")
@pytest.mark.parametrize("run", RUNS, ids=["glyphh-ada-1.1", "deepseek-v3.1-terminus"])
def test_bfcl_reason_of_an_executable_entry_that_failed(
    capsys: pytest.CaptureFixture[str], run: tuple[Path, Path, int]
) -> None:
    result, score, count = run
    theirs = invalid_entries(score)
    rows = explained(capsys, result)
    executable_failed = [r for r in rows if r["executable"] and not r["success"]]
    assert len(executable_failed) == count
    for row in executable_failed:
        error = theirs[row["task_id"]]  # BFCL judged it invalid too
        check = row["success_check"]
        kind, turn, what = check.split(": ", 2)
        assert error["error_type"] == f"multi_turn:{kind}", (row["task_id"], check)
        if kind == "execution_response_mismatch":
            found = re.search(r"for turn (\d+)\.", error["error_message"])
            assert found is not None and turn == f"turn {int(found.group(1)) + 1}"
            first = error["details"]["missing_items"][0]
            shown = what.split(", the first: ", 1)[1]
            assert first.startswith(shown.removesuffix("...")) and len(shown) <= 160
        else:
            assert kind == "instance_state_mismatch"
            name, attribute = what.removesuffix(" differs").split(".")
            assert error["error_message"].startswith(f"Model instance for {name} does not match")
            assert attribute in error["details"]["differences"]
    # Every success is valid in BFCL's score file, and every rollout it lists is unsuccessful.
    assert {r["task_id"] for r in rows if not r["success"]} == set(theirs)
    assert all(r["success_check"] is None for r in rows if r["success"])


@pytest.mark.spec("OUT-EXPLAIN-SUCCESS")
def test_the_text_shows_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    result, score, _ = RUNS[1]
    error = invalid_entries(score)["multi_turn_base_0"]
    assert "for turn 3." in error["error_message"]  # BFCL's turn 3 from 0: the fourth turn
    assert main(["explain", "--adapter", "bfcl", str(result), "--task", "multi_turn_base_0"]) == 0
    out = capsys.readouterr().out
    assert "  T = 17  FED = 18  fully executable  success: no\n" in out
    assert "  not a success: execution_response_mismatch: turn 4: 1 ground-truth result(s) missing" in out
    assert 'the first: {"diff_lines": "- Year2024 This is the final report' in out
