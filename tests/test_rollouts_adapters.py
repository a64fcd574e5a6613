"""Every adapter explains every non-executable rollout (OUT-ROLLOUTS): a reason, the failing
action and where the rollout was read, on real third-party runs and the crafted fixtures.

The counts of non-executable rollouts are not restated here: each adapter's own tests pin them
against independent counts; this test checks that none of them lacks its evidence, and that
the failing action is the FED-th action the adapter replayed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prefixexec.adapters import ADAPTERS, AdapterOptions, harness
from prefixexec.rollouts import rows

from conftest import REAL, REPO

FIXTURES = REAL
TSB = REPO / "tests" / "data" / "toolsandbox-real"
CASES: list[tuple[str, list[Path]]] = [
    ("taubench", [FIXTURES / "tau-bench-v1" / "gpt-4o-airline.json"]),
    ("taubench", sorted((FIXTURES / "tau-bench-v1-retail").glob("*.json*"))),
    ("taubench", sorted((FIXTURES / "tau2").glob("*.json"))),
    ("chat", [REPO / "tests" / "data" / "chat" / "transcripts.jsonl"]),
    ("inspect", [next((FIXTURES / "inspect").glob("inst-logs_*.json"))]),
    ("inspect", [FIXTURES / "inspect_ai" / "log_message_deduplication.eval"]),
    ("inspect", [REPO / "tests" / "data" / "inspect" / "tiny_tools.eval"]),
    ("records", [REPO / "examples" / "demo.jsonl"]),
    ("toolsandbox", sorted(p for p in TSB.rglob("result_summary.json"))),
    ("bfcl", sorted((FIXTURES / "bfcl-gpt-oss-20b").rglob("*_result.json"))),
]


@pytest.mark.spec("OUT-ROLLOUTS")
@pytest.mark.parametrize(("adapter", "paths"), CASES, ids=[f"{a}-{p[0].name}" for a, p in CASES])
def test_every_failing_rollout_has_its_evidence(adapter: str, paths: list[Path]) -> None:
    assert paths and all(p.exists() for p in paths), paths
    rollouts = ADAPTERS[adapter].read([str(p) for p in paths], AdapterOptions())
    failing = 0
    for rollout, row in zip(rollouts, rows(rollouts), strict=True):
        assert row["source"], (adapter, row["task_id"])
        if row["executable"]:
            continue
        failing += 1
        assert row["reason"], (adapter, row["task_id"], row["trial"])
        assert row["failing"] is not None and row["failing"]["position"] == row["fed"]
        if not rollout.outcome.actions:  # an outcome recorded without its actions (records)
            assert row["failing"]["kind"] == "unknown"
            continue
        action = rollout.outcome.actions[row["fed"] - 1]
        if isinstance(action, harness.HarnessFault):  # HARNESS-COUNT: never "no_tool"
            assert row["failing"]["kind"] == "harness_error" and row["reason"].startswith("harness error: ")
            continue
        assert row["failing"]["kind"] == ("no_tool" if row["failing"]["tool"] is None else "tool_call")
        assert row["failing"]["tool"] == getattr(action, "name", None)
        if adapter == "bfcl":
            assert isinstance(row["failing"].get("turn"), int) and row["failing"]["turn"] >= 1
    # Every input but the two real inspect logs with calls (all their calls executed) has failures.
    real_inspect_without_failures = adapter == "inspect" and paths[0].name != "tiny_tools.eval"
    assert (failing > 0) != real_inspect_without_failures
