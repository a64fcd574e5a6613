"""OTLP in every form: JSON documents, protobuf requests and streams, compressed, and MCP tool
calls (spec TRACE-OTLP-FORMS, TRACE-OTLP-DOCUMENT, TRACE-OTLP-PROTOBUF, TRACE-MCP; issue 39).

Test data: tests/data/traces-otlp/ (SOURCE.md), made by tests/make_otlp_traces.py with the
OpenTelemetry SDK and its own OTLP encoders: the same 41 spans of 7 traces in four forms.

Where the expected numbers come from: :data:`SCENARIOS` is written by hand from the scenario
script in tests/make_otlp_traces.py (the calls the model asked for, which tool raises or answers
isError, the evaluator's verdict); :func:`raw_counts` counts, per trace and with nothing but
``json`` (JSON forms) or the OpenTelemetry proto classes (protobuf forms) and the conventions'
field names, the calls (``execute_tool`` / ``tools/call`` spans that are not an MCP server's span,
kind SERVER), the failed calls (status ERROR or ``error.type``) and the recorded success; the first
test checks those counts against the hand table. Only then are the adapter's rollouts compared.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixexec.adapters import ADAPTERS, AdapterOptions, InputError, limits
from prefixexec.adapters.detect import detect
from prefixexec.cli import main
from prefixexec.kernel import Rollout

from conftest import REPO

DATA = REPO / "tests" / "data" / "traces-otlp"
FILES = ("genai.pb", "genai-stream.pb", "genai-pretty.json", "genai-compact.json.gz")

#: scenario -> (T, FED, label, success, calls, failed calls), by hand from tests/make_otlp_traces.py:
#: T the calls the model asked for (a run without one: T = 1); FED the first call that raised or
#: answered isError, or was not offered (T + 1 when none); its label (a tool not offered and an
#: argument against the schema: schema; "not found": dependency; "exceeds": state_consistency);
#: the evaluator's verdict; the calls that ran (an MCP call once, not once per side) and failed.
SCENARIOS: dict[str, tuple[int, int, str | None, bool, int, int]] = {
    "unknown-tool": (1, 1, "schema", False, 0, 0),
    "schema-error": (1, 1, "schema", False, 1, 1),
    "invented-id": (1, 1, "dependency", False, 1, 1),
    "recovered": (3, 1, "state_consistency", True, 3, 1),
    "parallel": (2, 2, "dependency", False, 2, 1),
    "mcp-is-error": (2, 2, "dependency", False, 2, 1),
    "no-tool": (1, 2, None, True, 0, 0),
}
#: OTLP ``SPAN_KIND_SERVER`` (the proto enum; the JSON encoder writes it as the number).
SERVER = 2


# ---------------------------------------------------------------------------------------------
# The independent count: plain json or the proto classes, no adapter code.


def _json_spans(path: Path) -> list[dict[str, Any]]:
    data = path.read_bytes()
    document = json.loads(gzip.decompress(data) if path.suffix == ".gz" else data)
    return [s for r in document["resourceSpans"] for sc in r["scopeSpans"] for s in sc["spans"]]


def _json_attrs(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}


def _proto_spans(path: Path) -> list[dict[str, Any]]:
    """The spans of a protobuf file as the counter's dicts (the proto classes decode)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    data = path.read_bytes()
    messages = []
    if "stream" in path.name:
        while data:
            size = int.from_bytes(data[:4], "big")
            messages.append(ExportTraceServiceRequest.FromString(data[4 : 4 + size]))
            data = data[4 + size :]
    else:
        messages.append(ExportTraceServiceRequest.FromString(data))
    out = []
    for message in messages:
        for r in message.resource_spans:
            for sc in r.scope_spans:
                for s in sc.spans:
                    out.append(
                        {
                            "traceId": s.trace_id.hex(),
                            "kind": s.kind,
                            "status": {"code": s.status.code},
                            "attributes": [
                                {"key": a.key, "value": {"v": getattr(a.value, a.value.WhichOneof("value"))}}
                                for a in s.attributes
                            ],
                            "events": [
                                {
                                    "name": e.name,
                                    "attributes": [
                                        {
                                            "key": a.key,
                                            "value": {"v": getattr(a.value, a.value.WhichOneof("value"))},
                                        }
                                        for a in e.attributes
                                    ],
                                }
                                for e in s.events
                            ],
                        }
                    )
    return out


def raw_counts(path: Path) -> dict[str, tuple[int, int, bool]]:
    """scenario -> (calls, failed calls, recorded success) of each trace in ``path``."""
    spans = _proto_spans(path) if path.suffix == ".pb" else _json_spans(path)
    per_trace: dict[str, dict[str, Any]] = {}
    for span in spans:
        entry = per_trace.setdefault(
            span["traceId"], {"calls": 0, "failed": 0, "scenario": None, "success": None}
        )
        attrs = _json_attrs(span)
        is_call = (
            attrs.get("gen_ai.operation.name") == "execute_tool"
            or attrs.get("mcp.method.name") == "tools/call"
        )
        if is_call and span.get("kind") != SERVER:
            entry["calls"] += 1
            entry["failed"] += span.get("status", {}).get("code") == 2 or "error.type" in attrs
        if "gen_ai.conversation.id" in attrs:
            entry["scenario"] = attrs["gen_ai.conversation.id"]
        for event in span.get("events", []):
            if event["name"] == "gen_ai.evaluation.result":
                entry["success"] = _json_attrs(event)["gen_ai.evaluation.score.label"] == "pass"
    return {e["scenario"]: (e["calls"], e["failed"], e["success"]) for e in per_trace.values()}


def verdict(r: Rollout) -> tuple[int, int, str | None, bool]:
    return (r.outcome.T, r.outcome.fed, r.outcome.label.value if r.outcome.label else None, r.success)


def read(path: Path | str, model: str | None = None, **extra: Any) -> list[Rollout]:
    return ADAPTERS["otel"].read([str(path)], AdapterOptions(model=model, extra=extra))


def one_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ---------------------------------------------------------------------------------------------
# The real files


@pytest.mark.spec("TRACE-REAL", "TRACE-MCP")
@pytest.mark.parametrize("name", FILES)
def test_the_raw_spans_agree_with_the_scenario_table(name: str) -> None:
    assert raw_counts(DATA / name) == {s: (row[4], row[5], row[3]) for s, row in SCENARIOS.items()}


@pytest.mark.spec(
    "TRACE-REAL",
    "TRACE-OTLP-FORMS",
    "TRACE-OTLP-DOCUMENT",
    "TRACE-OTLP-PROTOBUF",
    "TRACE-GZIP",
    "TRACE-MCP",
    "DETECT-TRACES",
)
@pytest.mark.parametrize("name", FILES)
def test_every_form_is_detected_and_scored_as_the_counts_say(name: str) -> None:
    path = DATA / name
    assert detect(str(path)).adapter == "otel"
    rollouts = {r.task_id: r for r in read(path)}
    assert {task: verdict(r) for task, r in rollouts.items()} == {s: row[:4] for s, row in SCENARIOS.items()}
    # every form names the same failing spans
    assert {t: r.meta["action_spans"] for t, r in rollouts.items()} == {
        r.task_id: r.meta["action_spans"] for r in read(DATA / "genai.pb")
    }


@pytest.mark.spec("TRACE-MCP")
def test_an_mcp_error_is_the_tools_own_text_and_one_call(tmp_path: Path) -> None:
    (r,) = [r for r in read(DATA / "genai-pretty.json") if r.task_id == "mcp-is-error"]
    # the reason quotes the tool's own error text, not only "error.type tool_error"
    assert (
        r.outcome.reason is not None and "the tool span failed: order ORD-7777 not found" in r.outcome.reason
    )
    # four tools/call spans (client and server for each call), two calls
    spans = [s for s in _json_spans(DATA / "genai-pretty.json") if _json_attrs(s).get("mcp.method.name")]
    assert len(spans) == 4 and len(r.meta["action_spans"]) == 2
    # without the server's span (only the client instrumented) the verdict is the same
    document = json.loads((DATA / "genai-pretty.json").read_text(encoding="utf-8"))
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            scope["spans"] = [s for s in scope["spans"] if s.get("kind") != SERVER]
    client_only = tmp_path / "client.json"
    client_only.write_text(json.dumps(document), encoding="utf-8")
    (again,) = [x for x in read(client_only) if x.task_id == "mcp-is-error"]
    assert verdict(again) == verdict(r)


# ---------------------------------------------------------------------------------------------
# JSON documents: streamed, errors named


def _doc(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {}, "spans": spans}]}]
    }


def _tool_span(i: int, payload: str = "") -> dict[str, Any]:
    return {
        "traceId": "ab" * 16,
        "spanId": f"{i:016x}",
        "name": "execute_tool t",
        "startTimeUnixNano": str(1000 + i),
        "endTimeUnixNano": str(1001 + i),
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.tool.name", "value": {"stringValue": "t"}},
            {"key": "gen_ai.tool.call.result", "value": {"stringValue": "ok" + payload}},
        ],
    }


@pytest.mark.spec("TRACE-OTLP-DOCUMENT", "HOSTILE-LINE")
def test_a_document_larger_than_the_line_limit_is_read_span_by_span(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # 400 spans of about 3 KB: a 1.2 MB document, compact on one line and pretty; the limit on one
    # value (HOSTILE-LINE) lowered to 64 KiB: reading holds a span at a time, not the document
    monkeypatch.setattr(limits, "max_line_bytes", 1 << 16)
    spans = [_tool_span(i, "x" * 3000) for i in range(400)]
    for name, text in (
        ("compact.json", json.dumps(_doc(spans))),
        ("pretty.json", json.dumps(_doc(spans), indent=2)),
    ):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        assert path.stat().st_size > 1 << 20
        (r,) = read(path, success_attr="@ok", model="m")
        assert (r.outcome.T, r.outcome.fed) == (400, 401)  # 400 tool spans, none failed
    # one span larger than the limit: refused, naming where it starts
    path = tmp_path / "big.json"
    path.write_text(
        json.dumps(_doc([_tool_span(0), _tool_span(1, "y" * 70_000)]), indent=2), encoding="utf-8"
    )
    argv = [
        "score",
        "--adapter",
        "otel",
        "--model",
        "m",
        "--success-attr",
        "@ok",
        "--max-line-bytes",
        "65536",
    ]
    err = one_error([*argv, str(path)], capsys)
    assert f"{path}:" in err and "HOSTILE-LINE" in err


@pytest.mark.spec("TRACE-OTLP-DOCUMENT", "REC-ERRORS")
def test_document_faults_are_one_error_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.json"
    text = json.dumps(_doc([_tool_span(0), _tool_span(1)]), indent=2)
    path.write_text(text[: len(text) // 2], encoding="utf-8")  # cut off in the second half
    err = one_error(["score", "--adapter", "otel", str(path)], capsys)
    assert f"{path}:" in err and "truncated document" in err
    no_id = _tool_span(0)
    del no_id["spanId"]
    text = json.dumps(_doc([_tool_span(1), no_id]), indent=2)
    path.write_text(text, encoding="utf-8")
    err = one_error(["score", "--adapter", "otel", str(path)], capsys)
    # the second span's "{" is the line before its second "traceId" (1-based: that line's index)
    line = [i for i, text_line in enumerate(text.splitlines()) if '"traceId"' in text_line][1]
    assert (
        err.startswith(f"prefixexec: error: {path}:{line}: ") and "spans[1]" in err and "has no spanId" in err
    )
    path.write_text(json.dumps({"data": [], "status": "ok"}, indent=2), encoding="utf-8")
    err = one_error(["score", "--adapter", "otel", str(path)], capsys)
    assert "expected an OTLP JSON object with 'resourceSpans' (its keys: 'data', 'status')" in err
    path.write_text(
        '{\n "resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": 7}]}]}]\n}\n', encoding="utf-8"
    )
    assert "not an OTLP span" in one_error(["score", "--adapter", "otel", str(path)], capsys)
    path.write_text('{\n "resourceSpans": [], "x": NaN\n}\n', encoding="utf-8")
    assert "not valid JSON" in one_error(["score", "--adapter", "otel", str(path)], capsys)


@pytest.mark.spec("TRACE-OTLP-DOCUMENT", "DETECT-STDIN")
def test_a_pretty_document_on_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    text = (DATA / "genai-pretty.json").read_text(encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    rollouts = ADAPTERS["otel"].read(["-"], AdapterOptions())
    assert {r.task_id: verdict(r) for r in rollouts} == {s: row[:4] for s, row in SCENARIOS.items()}


# ---------------------------------------------------------------------------------------------
# Detection and its refusals


@pytest.mark.spec("DETECT-TRACES", "DETECT-UNKNOWN")
def test_detection_names_resource_spans_and_the_keys_it_saw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pretty = tmp_path / "t.json"
    pretty.write_text(json.dumps(_doc([_tool_span(0)]), indent=2), encoding="utf-8")
    assert "resourceSpans" in detect(str(pretty)).why
    packed = tmp_path / "t.json.gz"
    packed.write_bytes(gzip.compress(pretty.read_bytes()))
    found = detect(str(packed))
    assert found.adapter == "otel" and found.why.startswith("gzip-compressed")
    other = tmp_path / "o.json"
    other.write_text(json.dumps({"spans": [], "meta": {}}, indent=2), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        detect(str(other))
    assert (
        "its keys: 'spans', 'meta'" in caught.value.what
        and "OTLP traces 'resourceSpans'" in caught.value.what
    )


# ---------------------------------------------------------------------------------------------
# Protobuf: faults, the missing extra


@pytest.mark.spec("TRACE-OTLP-PROTOBUF", "REC-ERRORS")
def test_protobuf_faults_are_one_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = (DATA / "genai-stream.pb").read_bytes()
    first = int.from_bytes(data[:4], "big")
    cut = tmp_path / "cut.pb"
    cut.write_bytes(data[: 4 + first + 4 + 10])  # the second message cut off after 10 bytes
    err = one_error(["score", "--adapter", "otel", str(cut)], capsys)
    assert f"{cut}: message 2 (byte {4 + first})" in err and "cut off" in err
    broken = tmp_path / "broken.pb"
    single = (DATA / "genai.pb").read_bytes()
    broken.write_bytes(single[: len(single) - 7])  # the request cut off
    err = one_error(["score", "--adapter", "otel", str(broken)], capsys)
    assert str(broken) in err and "ExportTraceServiceRequest" in err


@pytest.mark.spec("TRACE-OTLP-PROTOBUF", "HOSTILE-LINE")
@pytest.mark.parametrize("block", [1, 3, 4, 5, 97, 4096])
def test_a_stream_read_in_blocks_of_any_size_reads_as_in_one(
    block: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the stream is read a block at a time, messages handed on as views of the block: blocks that
    # end inside a size, inside a message or on a boundary give the same spans and the same errors
    from prefixexec.adapters.otel import protobuf

    whole = read(DATA / "genai-stream.pb")
    monkeypatch.setattr(protobuf, "BLOCK", block)
    assert [(r.task_id, verdict(r), r.meta["action_spans"]) for r in read(DATA / "genai-stream.pb")] == [
        (r.task_id, verdict(r), r.meta["action_spans"]) for r in whole
    ]
    data = (DATA / "genai-stream.pb").read_bytes()
    first = int.from_bytes(data[:4], "big")
    cut = tmp_path / "cut.pb"
    cut.write_bytes(data[: 4 + first + 4 + 10])
    err = one_error(["score", "--adapter", "otel", str(cut)], capsys)
    assert f"{cut}: message 2 (byte {4 + first})" in err and "cut off: 10 of" in err
    cut.write_bytes(data[: 4 + first + 2])
    err = one_error(["score", "--adapter", "otel", str(cut)], capsys)
    assert f"{cut}: message 2 (byte {4 + first})" in err and "inside a message size" in err


@pytest.mark.spec("TRACE-OTLP-PROTOBUF", "TRACE-OTEL", "TRACE-KEYS")
def test_the_protobuf_reader_reads_every_attribute_the_conventions_read() -> None:
    # a protobuf span's attribute values are read only for the keys semantics.READS lists and the
    # TRACE-KEYS ones: every key the module's source reads from a span's values must be listed
    import inspect
    import re

    from prefixexec.adapters.otel import semantics

    # the functions that get a span's attribute values (evaluations and exception_text read an
    # event's, which are all read); each literal key they look up
    source = "".join(inspect.getsource(f) for f in (semantics.interpret, semantics.failure, semantics.kept))
    read_keys = set(re.findall(r"values(?:\.get\(|\[)\"([^\"]+)\"", source))
    assert {"gen_ai.operation.name", "error.type", "gen_ai.agent.name"} <= read_keys  # the scan finds them
    assert "values[k]" in source  # kept reads the TRACE-KEYS attributes, given apart (keys)
    assert read_keys <= semantics.READS
    # an attribute outside READS named by --task-attr is read too: the protobuf forms give the
    # tasks the JSON form gives (mcp.session.id: the MCP scenario's spans carry it)
    by_json = {(r.task_id, verdict(r)) for r in read(DATA / "genai-pretty.json", task_attr="mcp.session.id")}
    assert any(
        task != r
        for task, r in {
            (r.task_id, r.meta["trace_id"]) for r in read(DATA / "genai.pb", task_attr="mcp.session.id")
        }
    )
    for name in ("genai.pb", "genai-stream.pb"):
        assert {(r.task_id, verdict(r)) for r in read(DATA / name, task_attr="mcp.session.id")} == by_json


@pytest.mark.spec("TRACE-OTLP-PROTOBUF")
def test_without_the_extra_protobuf_is_a_one_line_hint(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the import of the proto classes fails as it does without opentelemetry-proto
    monkeypatch.setitem(sys.modules, "opentelemetry.proto.collector.trace.v1.trace_service_pb2", None)
    err = one_error(["score", "--adapter", "otel", str(DATA / "genai.pb")], capsys)
    assert "pip install 'prefix-executability[otlp]'" in err


@pytest.mark.spec("TRACE-OTLP-PROTOBUF")
def test_the_core_does_not_import_protobuf_for_json() -> None:
    import subprocess

    code = (
        "import sys; from prefixexec.adapters import ADAPTERS, AdapterOptions; "
        f"ADAPTERS['otel'].read([{str(DATA / 'genai-pretty.json')!r}], AdapterOptions()); "
        "print(sorted(m for m in sys.modules if m.startswith(('google.protobuf', 'opentelemetry'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ---------------------------------------------------------------------------------------------
# Evaluations back into the backend, with provenance, as OTLP JSON and protobuf


def _expected_parents() -> dict[str, str]:
    """scenario -> the span id each scenario's events must name, from the raw spans: the first
    failed call (a tool's span, the MCP client's) by start time; for a call no span answers, the
    chat span that asked for it; for a trace whose calls all ran, the root (no parent)."""
    spans = _json_spans(DATA / "genai-pretty.json")
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        by_trace.setdefault(span["traceId"], []).append(span)
    out = {}
    for members in by_trace.values():
        members.sort(key=lambda s: int(s["startTimeUnixNano"]))
        scenario = next(
            _json_attrs(s)["gen_ai.conversation.id"] for s in members if not s.get("parentSpanId")
        )
        failed = [
            s
            for s in members
            if s.get("kind") != SERVER
            and (_json_attrs(s).get("gen_ai.operation.name") == "execute_tool")
            and (s.get("status", {}).get("code") == 2 or "error.type" in _json_attrs(s))
        ]
        asked_unknown = [
            s for s in members if "cancel_order" in _json_attrs(s).get("gen_ai.output.messages", "")
        ]
        root = next(s for s in members if not s.get("parentSpanId"))
        out[scenario] = (failed or asked_unknown or [root])[0]["spanId"]
    return out


@pytest.mark.spec("TRACE-EVALUATIONS", "TRACE-REAL")
def test_evaluations_as_otlp_json_and_protobuf_decode_with_the_proto_classes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import base64

    from google.protobuf import json_format
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    source = str(DATA / "genai.pb")
    as_json, as_proto = tmp_path / "e.json", tmp_path / "e.pb"
    for out in (as_json, as_proto):
        assert main(["score", "--quiet", "--bootstrap", "0", "--emit-evaluations", str(out), source]) == 0
    capsys.readouterr()
    message = ExportLogsServiceRequest.FromString(as_proto.read_bytes())
    # the JSON: OTLP JSON (hex ids), read by the protobuf JSON mapping once the ids are base64
    document = json.loads(as_json.read_text(encoding="utf-8"))
    for resource in document["resourceLogs"]:
        for scope in resource["scopeLogs"]:
            for record in scope["logRecords"]:
                for key in ("traceId", "spanId"):
                    record[key] = base64.b64encode(bytes.fromhex(record[key])).decode()
    from_json = json_format.ParseDict(document, ExportLogsServiceRequest())
    seen: list[list[tuple[str, str, str]]] = []
    for decoded in (message, from_json):
        (resource,) = decoded.resource_logs
        assert {a.key: a.value.string_value for a in resource.resource.attributes}[
            "service.name"
        ] == "prefixexec"
        (scope,) = resource.scope_logs
        assert scope.scope.name == "prefixexec"
        records = list(scope.log_records)
        assert len(records) == 2 * len(SCENARIOS)
        parents = _expected_parents()
        for record in records:
            attrs = {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in record.attributes}
            scenario = attrs["prefixexec.task"]
            T, fed, label, *_ = SCENARIOS[scenario]
            assert record.event_name == "gen_ai.evaluation.result"
            assert record.span_id.hex() == parents[scenario]  # the failing span, else the root
            assert (attrs["prefixexec.T"], attrs["prefixexec.fed"]) == (T, fed)
            assert attrs["prefixexec.label"] == (label or "executable")
            assert (
                attrs["prefixexec.evaluator.name"] == "prefixexec" and attrs["prefixexec.evaluator.version"]
            )
            assert attrs["prefixexec.signature"].startswith("prefixexec:")
            assert attrs["prefixexec.rule_set.hash"].startswith("sha256:")
            if fed <= T:
                assert (
                    attrs["prefixexec.reason"] and f"span {parents[scenario]}" in attrs["prefixexec.reason"]
                )
        seen.append(
            sorted((r.trace_id.hex(), r.span_id.hex(), str(sorted(r.attributes, key=str))) for r in records)
        )
    assert seen[0] == seen[1]  # the two forms hold the same events (their times differ: two runs)


@pytest.mark.spec("TRACE-EVALUATIONS")
def test_two_runs_with_other_rules_are_told_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = str(DATA / "genai-pretty.json")
    rules = tmp_path / "rules.toml"
    rules.write_text('[[otel]]\npattern = "not found"\nlabel = "precondition"\n', encoding="utf-8")
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["score", "--quiet", "--bootstrap", "0", "--emit-evaluations", str(first), source]) == 0
    argv = [
        "score",
        "--quiet",
        "--bootstrap",
        "0",
        "--label-rules",
        str(rules),
        "--emit-evaluations",
        str(second),
    ]
    assert main([*argv, source]) == 0
    capsys.readouterr()

    def provenance(path: Path) -> set[tuple[str, str]]:
        records = json.loads(path.read_text(encoding="utf-8"))["resourceLogs"][0]["scopeLogs"][0][
            "logRecords"
        ]
        found = set()
        for record in records:
            attrs = {a["key"]: next(iter(a["value"].values())) for a in record["attributes"]}
            found.add((attrs["prefixexec.signature"], attrs["prefixexec.rule_set.hash"]))
        return found

    (one,), (other,) = provenance(first), provenance(second)
    assert one[0] != other[0] and one[1] != other[1]


@pytest.mark.spec("TRACE-EVALUATIONS", "TRACE-OTLP-PROTOBUF")
def test_protobuf_evaluations_without_the_extra_are_a_hint_before_any_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.proto.collector.logs.v1.logs_service_pb2", None)
    out = tmp_path / "e.pb"
    argv = ["score", "--adapter", "otel", "--emit-evaluations", str(out), str(DATA / "genai-pretty.json")]
    err = one_error(argv, capsys)
    assert "pip install 'prefix-executability[otlp]'" in err and not out.exists()


@pytest.mark.spec("TRACE-GZIP", "TRACE-OTLP-PROTOBUF", "DETECT-TRACES")
def test_a_gzip_protobuf_stream_is_detected_and_read(tmp_path: Path) -> None:
    packed = tmp_path / "genai-stream.pb.gz"
    packed.write_bytes(gzip.compress((DATA / "genai-stream.pb").read_bytes()))
    found = detect(str(packed))
    assert found.adapter == "otel" and found.why.startswith("gzip-compressed OTLP protobuf")
    assert {r.task_id: verdict(r) for r in read(packed)} == {s: row[:4] for s, row in SCENARIOS.items()}


@pytest.mark.spec("TRACE-OTLP-DOCUMENT", "HOSTILE-FUZZ")
@settings(max_examples=120, deadline=None)
@given(
    st.recursive(
        st.none() | st.integers() | st.text(max_size=4) | st.booleans(),
        lambda c: (
            st.lists(c, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    ["resourceSpans", "scopeSpans", "spans", "traceId", "spanId", "attributes", "x"]
                ),
                c,
                max_size=3,
            )
        ),
        max_leaves=10,
    ),
    st.integers(min_value=0, max_value=40),
)
def test_any_document_is_rollouts_or_one_input_error(
    tmp_path_factory: pytest.TempPathFactory, value: object, cut: int
) -> None:
    path = tmp_path_factory.mktemp("doc") / "t.json"
    text = "{\n" + json.dumps({"resourceSpans": value}, indent=1)[1:]
    path.write_text(text[: len(text) - cut] if cut % 3 == 0 else text, encoding="utf-8")
    try:
        rollouts = read(path, model="m", success_attr="@ok")
    except InputError:
        return
    assert all(r.outcome.T >= 1 for r in rollouts)


@pytest.mark.spec("TRACE-OTLP-PROTOBUF", "TRACE-SUCCESS")
def test_an_event_attribute_of_every_kind_reads_as_the_json_form_reads_it(tmp_path: Path) -> None:
    # a protobuf event's attributes are read straight from the messages (no JSON-form struct is
    # made to be read again): each value as the JSON reader reads the library's own JSON mapping
    # of the same event (bytes apart: hex in the protobuf reading, base64 in the JSON mapping)
    import msgspec
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans
    from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanMessage

    from prefixexec.adapters.otel import otlp
    from prefixexec.adapters.otel.forms import otlp_spans
    from prefixexec.adapters.spans import Span

    nested = KeyValueList(
        values=[
            KeyValue(key="a", value=AnyValue(int_value=-3)),
            KeyValue(key="a", value=AnyValue(string_value="last")),  # a repeated key: the last
            KeyValue(key="b", value=AnyValue(array_value=ArrayValue(values=[AnyValue(bool_value=False)]))),
        ]
    )
    values = [
        AnyValue(string_value="text"),
        AnyValue(string_value=""),
        AnyValue(bool_value=True),
        AnyValue(int_value=2**63 - 1),
        AnyValue(double_value=0.5),
        AnyValue(bytes_value=b"\x00\xff"),
        AnyValue(),
        AnyValue(array_value=ArrayValue(values=[AnyValue(double_value=1.0), AnyValue()])),
        AnyValue(kvlist_value=nested),
    ]
    event = SpanMessage.Event(
        name="gen_ai.evaluation.result",
        time_unix_nano=5,
        attributes=[KeyValue(key=f"k{i}", value=v) for i, v in enumerate(values)],
    )
    span = SpanMessage(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="s", events=[event])
    scope = ScopeSpans(spans=[span])
    request = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[scope])])
    path = tmp_path / "event.pb"
    path.write_bytes(request.SerializeToString())
    seen: list[otlp.OtlpSpan] = []

    def keep(where: str, read: otlp.OtlpSpan, attributes: dict[str, object]) -> Span:
        seen.append(read)
        return otlp.base_span(where, read, False, "", None)

    assert len(list(otlp_spans([str(path)], keep))) == 1
    (read_event,) = seen[0].events
    by_protobuf = otlp.event_attributes(read_event)
    by_json = otlp.attributes(msgspec.convert(json_format.MessageToDict(event), otlp.Event).attributes)
    assert (by_protobuf.pop("k5"), by_json.pop("k5")) == ("00ff", "AP8=")  # b"\x00\xff" by hand
    assert by_protobuf == by_json
    assert by_protobuf["k3"] == 2**63 - 1 and by_protobuf["k8"] == {"a": "last", "b": [False]}  # by hand
    assert (read_event.name, read_event.timeUnixNano) == ("gen_ai.evaluation.result", 5)


def _as_protobuf(lines: Path, single: Path, stream: Path) -> None:
    """OTLP JSON Lines -> one protobuf request and a 4-byte-size stream, with the library's own
    ``json_format`` (the protobuf JSON mapping writes ids in base64 where OTLP JSON writes hex)."""
    import base64

    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    def mapped(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: base64.b64encode(bytes.fromhex(v)).decode()
                if k.endswith(("traceId", "spanId"))
                else mapped(v)
                for k, v in value.items()
            }
        return [mapped(v) for v in value] if isinstance(value, list) else value

    everything = ExportTraceServiceRequest()
    with stream.open("wb") as out:
        for line in lines.read_text(encoding="utf-8").splitlines():
            message = json_format.ParseDict(mapped(json.loads(line)), ExportTraceServiceRequest())
            data = message.SerializeToString()
            out.write(len(data).to_bytes(4, "big") + data)
            everything.resource_spans.extend(message.resource_spans)
    single.write_bytes(everything.SerializeToString())


@pytest.mark.spec("DETECT-TRACES", "TRACE-OTLP-PROTOBUF", "TRACE-OI", "TRACE-REAL")
@pytest.mark.parametrize("name", ["agents-openinference.jsonl", "langgraph-openinference.jsonl"])
def test_openinference_as_protobuf_is_detected_and_scored_as_its_json_lines(
    name: str, tmp_path: Path
) -> None:
    # the real OpenInference spans of tests/data/traces/, converted to protobuf by the library:
    # detected as OpenInference (not as GenAI spans, which would find no model) and scored as the
    # hand table of tests/test_traces_real.py says (checked there against the raw JSON's counts)
    from test_traces_real import DATA as REAL
    from test_traces_real import SCENARIOS as REAL_SCENARIOS

    single, stream = tmp_path / "oi.pb", tmp_path / "oi-stream.pb"
    _as_protobuf(REAL / name, single, stream)
    for path in (single, stream):
        found = detect(str(path))
        assert found.adapter == "openinference" and "OpenInference" in found.why, found
        rollouts = ADAPTERS["openinference"].read([str(path)], AdapterOptions())
        assert {r.task_id: verdict(r) for r in rollouts} == {s: row[:4] for s, row in REAL_SCENARIOS.items()}
