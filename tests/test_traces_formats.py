"""MLflow traces and ATIF trajectories written by the real packages (spec TRACE-MLFLOW,
TRACE-ATIF, TRACE-REAL; issue 39).

Test data: tests/data/traces-mlflow/ (MLflow Tracing, ``Trace.to_json()``) and
tests/data/traces-atif/ (Harbor's Strands-to-ATIF converter); each SOURCE.md says how they were
made (tests/make_mlflow_traces.py, tests/make_atif_trajectories.py).

Where the expected numbers come from: :data:`SCENARIOS` is written by hand from the scenario script
in tests/make_otlp_traces.py (the calls the model asked for, which tool raises, the evaluator's
verdict); :func:`raw_counts` counts, per trace and with nothing but ``json`` and each format's own
field names, the tool spans (MLflow ``mlflow.spanType`` TOOL) or tool results (ATIF observation
results that answer a call), how many failed (status ``STATUS_CODE_ERROR``; ``extra.status`` error)
and the recorded success; the first test checks those counts against the hand table, the second
the adapters' rollouts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prefixexec.adapters import ADAPTERS, AdapterOptions, InputError
from prefixexec.adapters.detect import detect
from prefixexec.cli import main
from prefixexec.kernel import Rollout

from conftest import REPO

MLFLOW = REPO / "tests" / "data" / "traces-mlflow"
ATIF = REPO / "tests" / "data" / "traces-atif"

#: scenario -> (T, FED, label, success), by hand from tests/make_otlp_traces.py's script (as in
#: tests/test_traces_otlp.py: the calls asked for; the first that raised or was not offered; its
#: label; the evaluator's verdict).
SCENARIOS: dict[str, tuple[int, int, str | None, bool]] = {
    "unknown-tool": (1, 1, "schema", False),
    "schema-error": (1, 1, "schema", False),
    "invented-id": (1, 1, "dependency", False),
    "recovered": (3, 1, "state_consistency", True),
    "parallel": (2, 2, "dependency", False),
    "no-tool": (1, 2, None, True),
}
#: scenario -> (tool spans or results, failed), by hand: MLflow traces no span for a tool the
#: agent does not have (the loop answers without calling anything); ATIF records the loop's
#: "Unknown tool" answer as the call's result, with status error.
CALLS = {
    "mlflow": {
        "unknown-tool": (0, 0),
        "schema-error": (1, 1),
        "invented-id": (1, 1),
        "recovered": (3, 1),
        "parallel": (2, 1),
        "no-tool": (0, 0),
    },
    "atif": {
        "unknown-tool": (1, 1),
        "schema-error": (1, 1),
        "invented-id": (1, 1),
        "recovered": (3, 1),
        "parallel": (2, 1),
        "no-tool": (0, 0),
    },
}


def _mlflow_counts(paths: list[Path]) -> dict[str, tuple[int, int, bool]]:
    out = {}
    for path in paths:
        text = path.read_text(encoding="utf-8")
        traces = (
            [json.loads(line) for line in text.splitlines()]
            if path.suffix == ".jsonl"
            else [json.loads(text)]
        )
        for trace in traces:
            spans = trace["data"]["spans"]
            tools = [s for s in spans if json.loads(s["attributes"]["mlflow.spanType"]) == "TOOL"]
            failed = [s for s in tools if s["status"]["code"] == "STATUS_CODE_ERROR"]
            scenario = trace["info"]["trace_metadata"]["mlflow.trace.session"]
            out[scenario] = (len(tools), len(failed), trace["info"]["tags"]["success"] == "true")
    return out


def _atif_counts(paths: list[Path]) -> dict[str, tuple[int, int, bool]]:
    out = {}
    for path in paths:
        trajectory = json.loads(path.read_text(encoding="utf-8"))
        calls = results = failed = 0
        for step in trajectory["steps"]:
            ids = {c["tool_call_id"] for c in step.get("tool_calls") or []}
            calls += len(ids)
            for result in (step.get("observation") or {}).get("results", []):
                if result.get("source_call_id") in ids:
                    results += 1
                    failed += (result.get("extra") or {}).get("status") == "error"
        assert calls == results  # every call the model asked for has its result
        out[trajectory["session_id"]] = (results, failed, trajectory["extra"]["success"])
    return out


def raw_counts(adapter: str) -> dict[str, tuple[int, int, bool]]:
    if adapter == "mlflow":
        return _mlflow_counts([MLFLOW / "mlflow-traces.jsonl"])
    return _atif_counts(sorted(ATIF.glob("atif-*.json")))


def inputs(adapter: str) -> list[str]:
    if adapter == "mlflow":
        return [str(MLFLOW / "mlflow-traces.jsonl")]
    return [str(p) for p in sorted(ATIF.glob("atif-*.json"))]


def verdict(r: Rollout) -> tuple[int, int, str | None, bool]:
    return (r.outcome.T, r.outcome.fed, r.outcome.label.value if r.outcome.label else None, r.success)


@pytest.mark.spec("TRACE-REAL", "TRACE-MLFLOW", "TRACE-ATIF")
@pytest.mark.parametrize("adapter", ["mlflow", "atif"])
def test_the_raw_files_agree_with_the_scenario_table(adapter: str) -> None:
    expected = {s: (*CALLS[adapter][s], row[3]) for s, row in SCENARIOS.items()}
    assert raw_counts(adapter) == expected


@pytest.mark.spec("TRACE-REAL", "TRACE-MLFLOW", "TRACE-ATIF", "DETECT-TRACES", "TRACE-KEYS", "TRACE-SUCCESS")
@pytest.mark.parametrize("adapter", ["mlflow", "atif"])
def test_detected_and_scored_as_the_counts_say(adapter: str) -> None:
    paths = inputs(adapter)
    assert {detect(p).adapter for p in paths} == {adapter}
    rollouts = ADAPTERS[adapter].read(paths, AdapterOptions())
    assert {r.task_id: verdict(r) for r in rollouts} == SCENARIOS
    assert {(r.condition.model, r.condition.method) for r in rollouts} == {("scripted-gpt", "orders-agent")}


@pytest.mark.spec("TRACE-MLFLOW")
def test_one_pretty_mlflow_trace_reads_as_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert detect(str(MLFLOW / "mlflow-recovered.json")).adapter == "mlflow"
    (alone,) = ADAPTERS["mlflow"].read([str(MLFLOW / "mlflow-recovered.json")], AdapterOptions())
    assert verdict(alone) == SCENARIOS["recovered"]
    assert main(["explain", "--task", "recovered", str(MLFLOW / "mlflow-recovered.json")]) == 0
    out = capsys.readouterr().out
    assert "refund of 20.0 exceeds the order total 15.5" in out and "T = 3  FED = 1" in out


@pytest.mark.spec("TRACE-ATIF", "TRACE-LABELS")
def test_atif_reasons_quote_the_tools_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--task", "invented-id", *inputs("atif")]) == 0
    out = capsys.readouterr().out
    assert "order ORD-7777 not found" in out and "dependency" in out


@pytest.mark.spec("TRACE-MLFLOW", "TRACE-ATIF", "REC-ERRORS")
def test_wrong_documents_are_one_error(tmp_path: Path) -> None:
    other = tmp_path / "o.json"
    other.write_text(json.dumps({"info": {"trace_id": "tr-1"}}, indent=2), encoding="utf-8")
    with pytest.raises(InputError, match="expected an MLflow trace: a JSON object with 'info' and 'data'"):
        ADAPTERS["mlflow"].read([str(other)], AdapterOptions())
    bad = json.loads((ATIF / "atif-parallel.json").read_text(encoding="utf-8"))
    bad["schema_version"] = "v9"
    other.write_text(json.dumps(bad, indent=2), encoding="utf-8")
    with pytest.raises(InputError, match="not an ATIF version"):
        ADAPTERS["atif"].read([str(other)], AdapterOptions())
    cut = (ATIF / "atif-parallel.json").read_text(encoding="utf-8")
    other.write_text(cut[: len(cut) // 2], encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON"):
        ADAPTERS["atif"].read([str(other)], AdapterOptions())


@pytest.mark.spec("TRACE-EVALUATIONS", "TRACE-MLFLOW")
def test_mlflow_evaluations_name_the_failing_span(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "e.json"
    assert (
        main(["score", "--quiet", "--bootstrap", "0", "--emit-evaluations", str(out), *inputs("mlflow")]) == 0
    )
    capsys.readouterr()
    document: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    records = document["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    by_task = {}
    for record in records:
        attrs = {a["key"]: next(iter(a["value"].values())) for a in record["attributes"]}
        by_task[attrs["prefixexec.task"]] = record
    # MLflow span ids are 8 bytes (base64 in the export): OTLP ids, written in hex
    failing = [s for s in _mlflow_traces() if s[0] == "invented-id"]
    assert by_task["invented-id"]["spanId"] == failing[0][1]


def _mlflow_traces() -> list[tuple[str, str]]:
    """(scenario, the hex id of its first failed TOOL span) from the raw export."""
    import base64

    out = []
    for line in (MLFLOW / "mlflow-traces.jsonl").read_text(encoding="utf-8").splitlines():
        trace = json.loads(line)
        scenario = trace["info"]["trace_metadata"]["mlflow.trace.session"]
        for span in sorted(trace["data"]["spans"], key=lambda s: s["start_time_unix_nano"]):
            if span["status"]["code"] == "STATUS_CODE_ERROR":
                out.append((scenario, base64.b64decode(span["span_id"]).hex()))
                break
    return out
