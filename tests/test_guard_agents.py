"""The guard's Python API in real agent frameworks (GUARD-API): examples/guard_agents_sdk.py (the
OpenAI Agents SDK's tool guardrails) and examples/guard_langgraph.py (LangGraph's ToolNode), each
run in a subprocess with a scripted model (no network).

Both examples make the same plan of six calls; what the guard must decide is counted by hand
from it (the plan in each example): list_orders and get_order W1024 run (W1024 and W2048 occur
in list_orders' result); get_order with the integer 1024 breaks the tool's schema (GUARD-SCHEMA,
schema); get_order W9999 names an id that never occurred (GUARD-PROVENANCE, information);
refund_order is no tool of the agent (GUARD-TOOL, schema); get_order W2048 is allowed and the
tool raises "order W2048 not found". So T = 6, FED = 3 (the first blocked call), label schema.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO

EXAMPLES = ["guard_agents_sdk.py", "guard_langgraph.py"]
#: (call, what happened, the rule and label of the reason), by hand from the plan
EXPECTED = [
    ("list_orders {}", "ran", None),
    ('get_order {"order_id": "W1024"}', "ran", None),
    ('get_order {"order_id": 1024}', "blocked", "GUARD-SCHEMA (schema)"),
    ('get_order {"order_id": "W9999"}', "blocked", "GUARD-PROVENANCE (information)"),
    ('refund_order {"order_id": "W1024"}', "blocked", "GUARD-TOOL (schema)"),
    ('get_order {"order_id": "W2048"}', "failed", None),
]
#: the guard's labels of the calls that failed, by position (the trace semantics labels the
#: tool's own "not found" dependency: TRACE-LABELS)
LABELS = [(3, "schema"), (4, "information"), (5, "schema"), (6, "dependency")]


def prefixexec(*args: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "prefixexec", *args], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


@pytest.mark.spec("GUARD-API", "GUARD-TRACE-SAME", "GUARD-REASON")
@pytest.mark.parametrize("example", EXAMPLES)
def test_the_framework_example_blocks_before_the_tool_runs(example: str, tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / example), str(trace)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    lines = done.stdout.splitlines()
    assert len(lines) == len(EXPECTED) + 3, done.stdout
    for line, (call, happened, rule) in zip(lines, EXPECTED, strict=False):
        assert line.startswith(f"{call}: {happened}: "), line
        if rule is not None:
            assert line.startswith(f"{call}: blocked: blocked by prefixexec guard: {rule}: "), line
    assert "not found" in lines[5]  # the tool's own error reached the model and the trace
    assert lines[6] == "answer: Order W1024 has shipped."  # the agent went on to its answer
    # the tool functions ran for the allowed calls only
    ran = "list_orders(), get_order(order_id='W1024'), get_order(order_id='W2048')"
    assert lines[7] == f"tool functions ran: {ran}"
    assert lines[8] == "T = 6, FED = 3, label = schema"

    # the trace, read back by explain and score, says what the guard decided
    row = prefixexec("explain", "--adapter", "otel", "--success-attr", "@ok", "--json", str(trace))
    assert (row["T"], row["fed"], row["label"]) == (6, 3, "schema")
    assert [(r["position"], r["label"]) for r in row["rejections"]] == LABELS
    (condition,) = prefixexec("score", "--adapter", "otel", "--success-attr", "@ok", "--json", str(trace))[
        "conditions"
    ]
    assert (condition["N"], condition["mean_FED"], len(condition["n_k"])) == (1, 3.0, 6)
    assert condition["labels"]["schema"] == 1 and sum(condition["labels"].values()) == 1
    # every call is one tool span, with the guard's decision on it
    spans = [
        span
        for line in trace.read_text(encoding="utf-8").splitlines()
        for span in json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]
        if span["name"].startswith("tools/call ")
    ]
    decisions = [
        next(a["value"]["stringValue"] for a in s["attributes"] if a["key"] == "prefixexec.guard.decision")
        for s in spans
    ]
    assert decisions == ["forwarded", "forwarded", "blocked", "blocked", "blocked", "forwarded"]
