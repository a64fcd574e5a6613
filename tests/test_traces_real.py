"""The trace adapters on traces the real SDKs wrote (spec TRACE-REAL, issue 29).

Test data: tests/data/traces/ (SOURCE.md: the package versions and commands), made by
tests/make_agent_traces.py: the OpenAI Agents SDK traced three ways at once (OpenTelemetry GenAI
instrumentation and OpenInference into OTLP JSON Lines, and the SDK's own export through
``JsonlTraceProcessor``) and a LangGraph ReAct agent traced two ways (LangSmith runs,
OpenInference), eight scenarios each, against a scripted loopback model.

Where the expected numbers come from: :data:`SCENARIOS` is written by hand from the scenario
script and the tools' code in tests/make_agent_traces.py (what the model asked, which call must
raise and with what message, what the evaluator decided); :func:`raw_counts` then counts, per
trace and with nothing but ``json`` and each format's own field names, the tool spans, the
failed tool spans and the recorded success, and the first test checks those raw counts against
the hand table. Only then are the adapters' rollouts compared with the table.
"""

from __future__ import annotations

import gzip
import json
import shutil
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from prefixexec.adapters import ADAPTERS, AdapterOptions
from prefixexec.adapters.detect import detect
from prefixexec.cli import main
from prefixexec.kernel import Rollout

from conftest import REPO

DATA = REPO / "tests" / "data" / "traces"

#: scenario -> (T, FED, label, success, tool spans, failed tool spans), by hand from
#: tests/make_agent_traces.py: the scripted calls (T; a run without a call is T = 1), the first
#: call whose tool raises (FED; T + 1 when none does), the label its message gets
#: ("Tool not found" / a call of a tool not offered, "Invalid ..." / "validation error":
#: schema; "not found": dependency; "exceeds": state_consistency), the evaluator's verdict, how
#: many tool spans ran (the unknown tool never runs) and how many raised.
SCENARIOS: dict[str, tuple[int, int, str | None, bool, int, int]] = {
    "lookup": (1, 2, None, True, 1, 0),
    "unknown-tool": (1, 1, "schema", False, 0, 0),
    "schema-error": (1, 1, "schema", False, 1, 1),
    "invented-id": (1, 1, "dependency", False, 1, 1),
    "recovered": (3, 1, "state_consistency", True, 3, 1),
    "parallel": (2, 2, "dependency", False, 2, 1),
    "parallel-ok": (2, 3, None, True, 2, 0),
    "no-tool": (1, 2, None, True, 0, 0),
}

#: file -> (adapter, options, how the raw counter reads it)
FILES: dict[str, tuple[str, dict[str, Any], str]] = {
    "agents-otel-genai.jsonl": ("otel", {}, "otlp-genai"),
    "agents-openinference.jsonl": ("openinference", {}, "otlp-openinference"),
    "agents-sdk.jsonl": ("agents", {}, "agents"),
    "langgraph-openinference.jsonl": ("openinference", {}, "otlp-openinference"),
    "langgraph-langsmith.jsonl": ("langsmith", {"task_attr": "scenario"}, "langsmith"),
}


# ---------------------------------------------------------------------------------------------
# The independent count: plain json and each format's field names, no adapter code.


def _otlp_value(value: dict[str, Any]) -> Any:
    ((kind, inner),) = value.items()
    return int(inner) if kind == "intValue" else inner


def _otlp_attrs(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    return {p["key"]: _otlp_value(p["value"]) for p in pairs}


def raw_counts(path: Path, how: str) -> dict[str, tuple[int, int, bool]]:
    """scenario -> (tool spans, failed tool spans, recorded success) of each trace in ``path``."""
    per_trace: dict[str, dict[str, Any]] = {}

    def slot(trace: str) -> dict[str, Any]:
        return per_trace.setdefault(trace, {"tools": 0, "failed": 0, "scenario": None, "success": None})

    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if how.startswith("otlp"):
            for resource in record["resourceSpans"]:
                for scope in resource["scopeSpans"]:
                    for span in scope["spans"]:
                        entry = slot(span["traceId"])
                        attrs = _otlp_attrs(span.get("attributes", []))
                        tool = (
                            attrs.get("gen_ai.operation.name") == "execute_tool"
                            if how == "otlp-genai"
                            else attrs.get("openinference.span.kind") == "TOOL"
                        )
                        if tool:
                            entry["tools"] += 1
                            entry["failed"] += span.get("status", {}).get("code") == 2
                        if "gen_ai.conversation.id" in attrs:
                            entry["scenario"] = attrs["gen_ai.conversation.id"]
                        for event in span.get("events", []):
                            if event["name"] == "gen_ai.evaluation.result":
                                label = _otlp_attrs(event["attributes"])["gen_ai.evaluation.score.label"]
                                entry["success"] = label == "pass"
        elif how == "agents":
            entry = slot(record["trace_id"] if record["object"] == "trace.span" else record["id"])
            if record["object"] == "trace":
                entry["scenario"] = record["group_id"]
            elif record["span_data"]["type"] == "function":
                entry["tools"] += 1
                entry["failed"] += record["error"] is not None
            elif record["span_data"].get("name") == "evaluation":
                entry["success"] = record["span_data"]["data"]["gen_ai.evaluation.score.label"] == "pass"
        else:  # LangSmith runs
            entry = slot(record["trace_id"])
            metadata = record["extra"]["metadata"]
            entry["scenario"] = metadata["scenario"]
            if record["run_type"] == "tool":
                entry["tools"] += 1
                entry["failed"] += record.get("error") is not None
            if record["parent_run_id"] is None:
                entry["success"] = metadata["success"]
    return {e["scenario"]: (e["tools"], e["failed"], e["success"]) for e in per_trace.values()}


def verdict(r: Rollout) -> tuple[int, int, str | None, bool]:
    """What a rollout says: T, FED, label, success (the reason names the file and span)."""
    return (r.outcome.T, r.outcome.fed, r.outcome.label.value if r.outcome.label else None, r.success)


def read(name: str) -> dict[str, Rollout]:
    adapter, extra, _ = FILES[name]
    rollouts = ADAPTERS[adapter].read([str(DATA / name)], AdapterOptions(extra=extra))
    return {r.task_id: r for r in rollouts}


@pytest.mark.spec("TRACE-REAL")
@pytest.mark.parametrize("name", sorted(FILES))
def test_the_raw_spans_agree_with_the_scenario_table(name: str) -> None:
    counts = raw_counts(DATA / name, FILES[name][2])
    assert counts == {s: (row[4], row[5], row[3]) for s, row in SCENARIOS.items()}


@pytest.mark.spec(
    "TRACE-REAL",
    "TRACE-SPANS",
    "TRACE-OTEL",
    "TRACE-OI",
    "TRACE-AGENTS",
    "TRACE-LANGSMITH",
    "TRACE-EXEC",
    "TRACE-KEYS",
    "TRACE-SUCCESS",
    "TRACE-NOTOOL",
    "TRACE-UNANSWERED",
    "TRACE-LABELS",
    "TRACE-ORDER",
)
@pytest.mark.parametrize("name", sorted(FILES))
def test_each_file_scores_as_the_scenarios_say(name: str) -> None:
    rollouts = read(name)
    assert sorted(rollouts) == sorted(SCENARIOS)
    for scenario, (T, fed, label, success, _, _) in SCENARIOS.items():
        assert verdict(rollouts[scenario]) == (T, fed, label, success), scenario
        r = rollouts[scenario]
        assert r.trial == 0 and r.condition.model == "scripted-gpt"
    methods = {r.condition.method for r in rollouts.values()}
    # the agent's name (Agents SDK), the LangGraph root's run name
    assert methods == ({"shop-assistant"} if name.startswith("agents") else {"shop-graph"})


@pytest.mark.spec("TRACE-REAL", "OUT-JSON")
@pytest.mark.parametrize("name", sorted(FILES))
def test_the_score_document_of_each_file(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    _, extra, _ = FILES[name]
    argv = ["score", "--json", "--bootstrap", "0", "--quiet", str(DATA / name)]
    argv += [f"--{k.replace('_', '-')}={v}" for k, v in extra.items()]
    assert main(argv) == 0
    (condition,) = json.loads(capsys.readouterr().out)["conditions"]
    # expected values from the hand table, by the paper's definitions
    rows = SCENARIOS.values()
    executable = sum(1 for T, fed, *_ in rows if fed == T + 1)
    eligible = [row for row in rows if row[1] <= row[0]]
    recovered = sum(1 for row in eligible if row[3])
    labels = Counter(row[2] for row in eligible)
    exact = condition["exact"]
    assert condition["N"] == len(SCENARIOS) == 8
    assert Fraction(exact["TER"]) == Fraction(executable, 8) == Fraction(3, 8)
    assert Fraction(exact["success"]) == Fraction(sum(row[3] for row in rows), 8)
    assert condition["RR_eligible"] == len(eligible) == 5
    assert Fraction(exact["RR"]) == Fraction(recovered, len(eligible)) == Fraction(1, 5)
    assert condition["labels"] == {
        key: labels.get(key, 0)
        for key in ("schema", "dependency", "precondition", "state_consistency", "information")
    } | {"unlabelled": 0}


@pytest.mark.spec("TRACE-REAL")
def test_the_three_agents_sdk_exports_agree() -> None:
    runs = [read(n) for n in ("agents-otel-genai.jsonl", "agents-openinference.jsonl", "agents-sdk.jsonl")]
    for scenario in SCENARIOS:
        assert len({verdict(r[scenario]) for r in runs}) == 1, scenario


@pytest.mark.spec("TRACE-REAL", "OUT-EXPLAIN")
def test_explain_names_the_span_that_failed_and_why(capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "agents-sdk.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    group = {r["id"]: r["group_id"] for r in records if r["object"] == "trace"}
    failed = [
        r
        for r in records
        if r["object"] == "trace.span" and r["span_data"]["type"] == "function" and r["error"]
    ]
    schema = next(r for r in failed if group[r["trace_id"]] == "schema-error")
    assert main(["explain", "--task", "schema-error", str(path)]) == 0
    out = capsys.readouterr().out
    assert 'FAIL  refund_order(order_id="ORD-1001", amount="ten")  schema' in out
    assert f"span {schema['id']}" in out and schema["error"]["data"]["error"] in out
    assert "T = 1  FED = 1" in out


def _log_records(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The log records of an OTLP JSON ExportLogsServiceRequest, attributes as a dict."""
    out = []
    for resource in document["resourceLogs"]:
        for scope in resource["scopeLogs"]:
            for record in scope["logRecords"]:
                attrs = {a["key"]: next(iter(a["value"].values())) for a in record["attributes"]}
                out.append({**record, "attributes": attrs})
    return out


@pytest.mark.spec("TRACE-REAL", "TRACE-EVALUATIONS")
def test_emitted_evaluations_go_back_to_the_spans(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "agents-sdk.jsonl"
    out = tmp_path / "evaluations.json"
    assert main(["score", "--quiet", "--bootstrap", "0", "--emit-evaluations", str(out), str(path)]) == 0
    (line,) = out.read_text(encoding="utf-8").splitlines()  # one OTLP JSON document on one line
    events = _log_records(json.loads(line))
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    group = {r["id"]: r["group_id"] for r in records if r["object"] == "trace"}
    first_failed: dict[str, str] = {}
    for r in sorted((r for r in records if r["object"] == "trace.span"), key=lambda r: r["started_at"]):
        if r["span_data"]["type"] == "function" and r["error"] is not None:
            first_failed.setdefault(r["trace_id"], r["id"])
    assert len(events) == 2 * len(SCENARIOS)
    for event in events:
        attrs = event["attributes"]
        trace = attrs["prefixexec.trace_id"]
        scenario = group[trace]
        T, fed, label, *_ = SCENARIOS[scenario]
        assert event["eventName"] == "gen_ai.evaluation.result"
        # the Agents SDK's ids ("trace_" + 32 hex digits; "span_" + 24) as OTLP ids where they are ones
        assert event["traceId"] == trace.removeprefix("trace_") and "spanId" not in event
        assert attrs["prefixexec.evaluator.name"] == "prefixexec" and attrs["prefixexec.fed"] == str(fed)
        assert attrs["prefixexec.signature"].startswith("prefixexec:") and attrs["prefixexec.rule_set.hash"]
        if attrs["gen_ai.evaluation.name"] == "prefixexec.fed":
            assert attrs["gen_ai.evaluation.score.value"] == fed
            assert attrs["gen_ai.evaluation.score.label"] == (label or "executable")
        else:
            assert attrs["gen_ai.evaluation.name"] == "prefixexec.executable"
            assert attrs["gen_ai.evaluation.score.value"] == (1 if fed == T + 1 else 0)
        if trace in first_failed:  # the span the verdict is about
            assert attrs["prefixexec.span_id"] == first_failed[trace]
            assert "span " + first_failed[trace] in attrs["gen_ai.evaluation.explanation"]

@pytest.mark.spec("TRACE-GZIP", "DETECT-TRACES")
def test_gzip_otlp_reads_like_the_plain_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = DATA / "agents-otel-genai.jsonl"
    packed = tmp_path / "traces.jsonl.gz"
    with plain.open("rb") as source, gzip.open(packed, "wb") as target:
        shutil.copyfileobj(source, target)
    assert detect(str(packed)).adapter == "otel"
    assert {k: verdict(r) for k, r in read("agents-otel-genai.jsonl").items()} == {
        r.task_id: verdict(r) for r in ADAPTERS["otel"].read([str(packed)], AdapterOptions())
    }


@pytest.mark.spec("DETECT-TRACES")
@pytest.mark.parametrize("name", sorted(FILES))
def test_detection_picks_each_format(name: str) -> None:
    assert detect(str(DATA / name)).adapter == FILES[name][0]


@pytest.mark.spec("AUDIT-TRACES")
@pytest.mark.parametrize("name", sorted(FILES))
def test_the_trace_audit_passes_on_real_traces(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["audit", "--adapter", FILES[name][0], str(DATA / name)])
    out = capsys.readouterr().out
    assert code == 0 and out.rstrip().endswith("Result: PASS"), out
    # the accepted calls before each first rejection (SCENARIOS): lookup 1, parallel 1 (its
    # second call fails), parallel-ok 2; every other trace fails at its first call or has none
    assert "trajectories 3, actions 4" in out
