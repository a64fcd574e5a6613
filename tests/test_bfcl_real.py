"""The BFCL adapter on a real, published result file (tests/data/real/bfcl-gpt-oss-20b/SOURCE.md).

The fixture is the first 15 entries of gpt-oss-20b's BFCL_v4_multi_turn_base_result.json from
aaronwu901225main/gorilla (Apache-2.0), copied byte for byte. Every number pinned here is
counted in this file from the raw JSON with its own loop (``json.loads`` and
``str.isidentifier``, no adapter code) or read by hand in the data, as each comment says.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from prefixexec.adapters import AdapterOptions, bfcl
from prefixexec.adapters.bfcl import backend
from prefixexec.cli import main
from prefixexec.kernel import Label

from conftest import REPO

REAL = REPO / "tests" / "data" / "real" / "bfcl-gpt-oss-20b"
GPT_OSS = REAL / "openai_gpt-oss-20b" / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"


def _entries(path: Path) -> list[dict[str, Any]]:
    assert path.is_file(), f"missing fixture {path}"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


@pytest.fixture(scope="module")
def read() -> bfcl.ReadResult:
    return bfcl.read_results([str(GPT_OSS)], AdapterOptions())


@pytest.mark.spec("BFCL-DROPPED", "BFCL-STEP", "BFCL-INPUT")
def test_counts_agree_with_an_independent_count(read: bfcl.ReadResult) -> None:
    # Independent count over the raw JSON: a step is an element of a turn; a call step is a
    # non-empty list of {name: arguments} objects (an empty list is the model's reply); a call is
    # decodable when its name is an identifier and its arguments are a JSON object; a step is
    # dropped by BFCL's loop when some call's arguments are not a JSON object.
    entries = _entries(GPT_OSS)
    steps = [step for e in entries if isinstance(e["result"], list) for turn in e["result"] for step in turn]
    call_steps = [step for step in steps if isinstance(step, list) and step]
    calls = [(name, args) for step in call_steps for item in step for name, args in item.items()]
    decodable = [c for c in calls if c[0].isidentifier() and _json_object(c[1])]
    dropped = [s for s in call_steps if not all(_json_object(a) for item in s for a in item.values())]
    bad_names = [s for s in call_steps if any(not name.isidentifier() for item in s for name in item)]
    errors = [e for e in entries if isinstance(e["result"], str)]
    counted = (len(entries), len(errors), len(steps), len(call_steps), len(calls), len(decodable))
    # The loop above gives 15 entries, 0 inference errors, 265 steps, 215 call steps, 215 calls,
    # 112 decodable calls, 3 dropped steps and 103 steps with a non-identifier name.
    assert counted == (15, 0, 265, 215, 215, 112)
    assert (len(dropped), len(bad_names)) == (3, 103)
    (summary,) = read.files
    assert (
        summary.entries,
        summary.inference_errors,
        summary.steps,
        summary.call_steps,
        summary.calls,
        summary.decodable_calls,
    ) == counted
    assert (summary.dropped_steps, summary.bad_name_steps) == (len(dropped), len(bad_names))
    assert [r.task_id for r in read.rollouts] == [e["id"] for e in entries]
    assert {r.condition.model for r in read.rollouts} == {"openai_gpt-oss-20b"}


@pytest.mark.spec("BFCL-PARSE", "BFCL-REASON", "BFCL-EXEC")
def test_chat_template_names_fail_as_schema_where_they_stand(read: bfcl.ReadResult) -> None:
    # For each entry, the 1-based position of its first call whose name is not an identifier,
    # counted over the raw JSON: replay must have failed there or earlier, and where it failed
    # exactly there the label is schema with the name in the reason.
    first_bad: dict[str, int] = {}
    for entry in _entries(GPT_OSS):
        names = [name for turn in entry["result"] for step in turn for item in step for name in item]
        bad = [i for i, name in enumerate(names, start=1) if not name.isidentifier()]
        if bad:
            first_bad[entry["id"]] = bad[0]
    at_the_name = 0
    for rollout in read.rollouts:
        if rollout.task_id not in first_bad:
            continue
        position = first_bad[rollout.task_id]
        assert rollout.outcome.fed <= position, rollout.task_id
        if rollout.outcome.fed == position:
            at_the_name += 1
            assert rollout.outcome.label is Label.SCHEMA
            assert "is not a plain function name" in str(rollout.outcome.reason)
    # 10 entries contain such a name (the loop above); in at least the three read by hand below
    # every earlier call names an existing folder or lists one, so replay fails at the name.
    assert len(first_bad) == 10 and at_the_name >= 3
    by_id = {r.task_id: r for r in read.rollouts}
    # Hand read: base_9 = ls, cd(Documentation), ls<|channel|>; base_13 = cd(documents),
    # ls<|channel|>commentary; base_14 = cd(ResearchDocs), find<|channel|> (each task's root
    # folder holds the folder named, BFCL_v4_multi_turn_base.json).
    for task_id, fed in (("multi_turn_base_9", 3), ("multi_turn_base_13", 2), ("multi_turn_base_14", 2)):
        assert (by_id[task_id].outcome.fed, by_id[task_id].outcome.label) == (fed, Label.SCHEMA), task_id


@pytest.mark.spec("BFCL-LABELS", "BFCL-REASON")
def test_hand_read_dependency_failures(read: bfcl.ReadResult) -> None:
    # base_2's first call is cd(folder='document'); the task's root folder `simona` holds only
    # `documents`. base_4's first call is cd(folder='tmp'); the root folder is itself `tmp` and
    # holds only `report.txt` (initial_config in BFCL_v4_multi_turn_base.json).
    for task_id, folder in (("multi_turn_base_2", "document"), ("multi_turn_base_4", "tmp")):
        root = backend.entry(task_id).initial_config["GorillaFileSystem"]["root"]
        (contents,) = [v["contents"] for v in root.values()]
        assert folder not in contents
        rollout = next(r for r in read.rollouts if r.task_id == task_id)
        assert (rollout.outcome.fed, rollout.outcome.label) == (1, Label.DEPENDENCY)
        assert rollout.outcome.reason == (
            f"call 1 (turn 1) cd(folder='{folder}') [dependency]: cd: '{folder}': No such file or directory"
        )


@pytest.mark.spec("BFCL-REASON")
def test_every_non_executable_real_rollout_names_its_call_label_and_why(read: bfcl.ReadResult) -> None:
    pattern = re.compile(r"^call (\d+) \(turn \d+\) .+ \[([a-z_]+)\]: .+", re.S)
    failing = [r for r in read.rollouts if not r.outcome.fully_executable]
    assert failing
    for rollout in failing:
        match = pattern.match(str(rollout.outcome.reason))
        assert match is not None, rollout.outcome.reason
        assert rollout.outcome.label is not None and match[2] == rollout.outcome.label.value
        assert int(match[1]) == rollout.outcome.fed


@pytest.mark.spec("BFCL-DROPPED", "BFCL-AUDIT", "AUDIT-CLI")
def test_audit_on_the_real_file_passes_and_lists_its_counts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--adapter", "bfcl", "--category", "base", str(GPT_OSS)]) == 0
    out = capsys.readouterr().out
    # The independent counts of test_counts_agree_with_an_independent_count.
    assert "entries 15, inference errors 0, steps 265, call steps 215, calls 215, decodable calls 112" in out
    assert "(undecodable: invalid JSON, arguments not an object, ...): 3 (3 calls)" in out
    assert "executed by BFCL as errors: 103" in out and "no inference_log in the file" in out
    assert out.rstrip().endswith("Result: PASS")


@pytest.mark.spec("BFCL-INPUT")
def test_score_reads_the_real_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--adapter", "bfcl", "--json", "--bootstrap", "0", str(GPT_OSS)]) == 0
    (condition,) = json.loads(capsys.readouterr().out)["conditions"]
    # 15 entries (lines of the file), model from the directory above multi_turn/.
    assert (condition["N"], condition["model"], condition["dataset"]) == (
        15,
        "openai_gpt-oss-20b",
        "bfcl-multi-turn/multi_turn_base",
    )
