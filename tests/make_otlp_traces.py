"""Make the OTLP traces in tests/data/traces-otlp/ (run by hand; the test suite never imports it).

A scripted tool-calling agent loop (no model service: each scenario's model replies are written
below) runs real tool functions (``lookup_order``, ``refund_order`` of tests/make_agent_traces.py)
and traces itself with the OpenTelemetry SDK (``opentelemetry-sdk``: ``TracerProvider``, spans,
``record_exception``, events) following the GenAI semantic conventions: an ``invoke_agent`` root,
a ``chat`` span per model reply (``gen_ai.output.messages`` tool_call parts,
``gen_ai.tool.definitions``), an ``execute_tool`` span per call. In the ``mcp-is-error`` scenario
the tools are called through MCP, traced on both sides as the GenAI MCP conventions say: a client
span ``tools/call <tool>`` (``mcp.method.name = tools/call``, ``gen_ai.tool.name``,
``jsonrpc.request.id``) and the server's span, its child; a ``CallToolResult`` with ``isError``
sets ``error.type = tool_error`` on both, the result text in ``gen_ai.tool.call.result``.
After each run the script plays the evaluator (the answer holds the expected word) and records a
``gen_ai.evaluation.result`` event named ``success`` on a child of the root.

The finished spans (SDK ``InMemorySpanExporter``) are written by the OpenTelemetry exporters' own
encoders, in every OTLP form prefixexec reads:

* ``genai.pb``: one ``ExportTraceServiceRequest`` (``opentelemetry-exporter-otlp-proto-common``'s
  ``encode_spans``, ``SerializeToString``), as OTLP/HTTP carries it;
* ``genai-stream.pb``: one request per trace, each after its size in 4 bytes big-endian, as the
  Collector's ``file`` exporter writes with ``format: proto``;
* ``genai-pretty.json``: one OTLP JSON document of all spans, indented (the JSON encoder of
  ``opentelemetry-exporter-otlp-json-file``, ``to_dict()``, ``json.dumps(indent=2)``), as trace
  UIs download it;
* ``genai-compact.json.gz``: the same document compact on one line, gzip-compressed.

Usage::

    python3.11 -m venv /tmp/otlp-venv
    /tmp/otlp-venv/bin/pip install opentelemetry-sdk opentelemetry-proto \\
        opentelemetry-exporter-otlp-proto-common opentelemetry-exporter-otlp-json-file
    /tmp/otlp-venv/bin/python tests/make_otlp_traces.py
"""

from __future__ import annotations

import gzip
import json
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_agent_traces import lookup_order, refund_order

OUT = Path(__file__).resolve().parent / "data" / "traces-otlp"
MODEL = "scripted-gpt"
AGENT = "orders-agent"
TOOLS = {"lookup_order": lookup_order, "refund_order": refund_order}
DEFINITIONS = [
    {
        "type": "function",
        "name": "lookup_order",
        "description": "Look up an order by its id.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
            "additionalProperties": False,
        },
    },
    {
        "type": "function",
        "name": "refund_order",
        "description": "Refund part or all of an order's total.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
            "required": ["order_id", "amount"],
            "additionalProperties": False,
        },
    },
]

#: scenario -> the model's replies (a list of calls, several in one reply are parallel, or the
#: final text), the word the answer must hold for success, and whether tools go through MCP.
SCENARIOS: dict[str, dict[str, Any]] = {
    "unknown-tool": {
        "steps": [[("cancel_order", {"order_id": "ORD-1002"})], "I cannot cancel orders, sorry."],
        "expect": "cancelled",
    },
    "schema-error": {
        "steps": [[("refund_order", {"order_id": "ORD-1001", "amount": "ten"})], "The refund failed."],
        "expect": "refunded",
    },
    "invented-id": {
        "steps": [[("lookup_order", {"order_id": "ORD-7777"})], "I could not find that order."],
        "expect": "shipped",
    },
    "recovered": {
        "steps": [
            [("refund_order", {"order_id": "ORD-1002", "amount": 20.0})],
            [("lookup_order", {"order_id": "ORD-1002"})],
            [("refund_order", {"order_id": "ORD-1002", "amount": 15.5})],
            "I refunded 15.5, the full total of order ORD-1002.",
        ],
        "expect": "refunded",
    },
    "parallel": {
        "steps": [
            [("lookup_order", {"order_id": "ORD-1001"}), ("lookup_order", {"order_id": "ORD-1003"})],
            "ORD-1001 was delivered; I found no order ORD-1003.",
        ],
        "expect": "both",
    },
    "mcp-is-error": {
        "steps": [
            [("lookup_order", {"order_id": "ORD-1001"})],
            [("lookup_order", {"order_id": "ORD-7777"})],
            "ORD-1001 was delivered; I found no ORD-7777.",
        ],
        "expect": "both",
        "mcp": True,
    },
    "no-tool": {"steps": ["I can look up and refund your orders."], "expect": "orders"},
}


def _call_tool(tracer: Any, name: str, arguments: dict[str, Any], call_id: str) -> str:
    """One ``execute_tool`` span: the tool runs; an exception is recorded and answered as text."""
    from opentelemetry.trace import Status, StatusCode

    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.arguments": json.dumps(arguments),
    }
    with tracer.start_as_current_span(
        f"execute_tool {name}", attributes=attributes, record_exception=False
    ) as span:
        try:
            result = TOOLS[name](**arguments)
        except Exception as exc:  # the agent answers the model with the error
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, str(exc)))
            span.set_attribute("error.type", type(exc).__name__)
            return f"Error: {exc}"
        span.set_attribute("gen_ai.tool.call.result", result)
        return result


def _call_mcp(tracer: Any, name: str, arguments: dict[str, Any], request_id: int) -> str:
    """A ``tools/call`` through MCP, traced by the client and by the server (its child span)."""
    from opentelemetry.trace import SpanKind

    attributes = {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.arguments": json.dumps(arguments),
        "jsonrpc.request.id": str(request_id),
        "mcp.session.id": "session-1",
    }
    with tracer.start_as_current_span(
        f"tools/call {name}", kind=SpanKind.CLIENT, attributes=attributes
    ) as client:
        with tracer.start_as_current_span(
            f"tools/call {name}", kind=SpanKind.SERVER, attributes=attributes
        ) as server:
            try:  # the server answers a CallToolResult; a tool's exception is isError: true
                content, is_error = TOOLS[name](**arguments), False
            except Exception as exc:
                content, is_error = str(exc), True
            server.set_attribute("gen_ai.tool.call.result", content)
            if is_error:
                server.set_attribute("error.type", "tool_error")
        client.set_attribute("gen_ai.tool.call.result", content)
        if is_error:
            client.set_attribute("error.type", "tool_error")
    return content


def run(provider: Any) -> None:
    tracer = provider.get_tracer("prefixexec.make_otlp_traces")
    for scenario, script in SCENARIOS.items():
        root_attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": AGENT,
            "gen_ai.conversation.id": scenario,
        }
        answer = ""
        with tracer.start_as_current_span(f"invoke_agent {AGENT}", attributes=root_attributes) as root:
            for number, step in enumerate(script["steps"]):
                calls = [] if isinstance(step, str) else step
                parts: list[dict[str, Any]] = [
                    {"type": "tool_call", "id": f"call_{scenario}_{number}_{i}", "name": n, "arguments": a}
                    for i, (n, a) in enumerate(calls)
                ]
                if isinstance(step, str):
                    parts, answer = [{"type": "text", "content": step}], step
                with tracer.start_as_current_span(
                    f"chat {MODEL}",
                    attributes={
                        "gen_ai.operation.name": "chat",
                        "gen_ai.request.model": MODEL,
                        "gen_ai.response.model": MODEL,
                        "gen_ai.tool.definitions": json.dumps(DEFINITIONS),
                        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}]),
                    },
                ):
                    pass
                for i, (name, arguments) in enumerate(calls):
                    call_id = f"call_{scenario}_{number}_{i}"
                    if name not in TOOLS:
                        continue  # the loop answers the model "no such tool": nothing runs
                    if script.get("mcp"):
                        _call_mcp(tracer, name, arguments, number)
                    else:
                        _call_tool(tracer, name, arguments, call_id)
            success = script["expect"] in answer
            with tracer.start_as_current_span(
                "evaluate success", attributes={"gen_ai.conversation.id": scenario}
            ) as ev:
                ev.add_event(
                    "gen_ai.evaluation.result",
                    {
                        "gen_ai.evaluation.name": "success",
                        "gen_ai.evaluation.score.value": 1.0 if success else 0.0,
                        "gen_ai.evaluation.score.label": "pass" if success else "fail",
                    },
                )
            del root


def main() -> int:
    from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans as encode_json
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as encode_proto
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "orders-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    run(provider)
    provider.shutdown()
    spans = list(memory.get_finished_spans())
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "genai.pb").write_bytes(encode_proto(spans).SerializeToString())
    by_trace: dict[int, list[Any]] = {}
    for span in spans:
        by_trace.setdefault(span.context.trace_id, []).append(span)
    frames = b""
    for members in by_trace.values():
        message = encode_proto(members).SerializeToString()
        frames += len(message).to_bytes(4, "big") + message
    (OUT / "genai-stream.pb").write_bytes(frames)
    document = encode_json(spans).to_dict()
    (OUT / "genai-pretty.json").write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    compact = json.dumps(document, separators=(",", ":")).encode("utf-8")
    (OUT / "genai-compact.json.gz").write_bytes(gzip.compress(compact, mtime=0))
    packages = (
        "opentelemetry-sdk",
        "opentelemetry-proto",
        "opentelemetry-exporter-otlp-proto-common",
        "opentelemetry-exporter-otlp-json-file",
        "protobuf",
    )
    versions = [f"Python {sys.version.split()[0]}"] + [f"{p} {metadata.version(p)}" for p in packages]
    (OUT / "versions.txt").write_text("\n".join(versions) + "\n", encoding="utf-8")
    print(f"{len(spans)} spans in {len(by_trace)} traces -> {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
